"""`ct capacity` against a real ct_local server: every type, --hardware, --breakdown, --table, errors."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from ct_testing import wait_until
from ct_testing.plugin import FAST_SETTINGS, LocalServer

from ct_cli.main import main
from ct_core.client import CortexTrainingClient

DB = "CAP_DB"
KNOWN = ("H200", "B200", "B300")
# B200 is left out on purpose: the account "does not support" it, so the server answers 409 517604.
SETTINGS = {
    "capacity": {
        "H200": {"max_total_gpus": 16, "has_reservation": True},
        "B300": {"max_total_gpus": -1, "has_reservation": False},
    }
}
SIX_KEYS = {
    "has_reservation",
    "max_total_gpus",
    "reserved_gpus",
    "in_use_gpus",
    "pending_gpus",
    "available_gpus",
}


def job_body(n_gpus: int, *, sampling_gpus: int | None = None, hardware: str = "H200") -> dict[str, Any]:
    sub_jobs: list[dict[str, Any]] = [
        {
            "job_type": "training",
            "model_name": "Qwen/Qwen3-0.6B",
            "training_config": {
                "optimizer": {"name": "AdamW", "lr": 1e-4},
                "max_seq_len": 256,
                "train_batch_size": 2,
                "n_gpus": n_gpus,
            },
        }
    ]
    if sampling_gpus is not None:
        sub_jobs.append(
            {
                "job_type": "sampling",
                "model_name": "Qwen/Qwen3-0.6B",
                "inference_config": {"max_seq_len": 256, "n_gpus": sampling_gpus},
            }
        )
    return {"sub_job_configs": sub_jobs, "hardware": hardware}


def wait_status(client: CortexTrainingClient, job_id: str, wanted: str) -> None:
    # Waits on the server's own lifecycle (a state change), never on a wall-clock assertion; the
    # limit only ends a wait that would never succeed (a loaded machine may take seconds).
    wait_until(
        lambda: client.get_job(job_id)["status"] == wanted,
        timeout=120,
        message=f"job {job_id} never reached {wanted}",
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """One server for this module, holding a running 4+2 GPU job and a pending 32 GPU job.

    The pending job asks for more than the 16 GPU ceiling, so it stays pending. Tests here only
    read capacity (or fault it for one request), so they can share the server.
    """
    server = LocalServer(
        state_dir=tmp_path_factory.mktemp("ct-capacity") / "state", settings={**FAST_SETTINGS, **SETTINGS}
    )
    server.start()
    try:
        with CortexTrainingClient(base_url=server.base_url, database=DB, schema="PUBLIC") as client:
            running = client.create_job_from_body(job_body(4, sampling_gpus=2))["job_id"]
            waiting = client.create_job_from_body(job_body(32))["job_id"]
            wait_status(client, running, "running")
            wait_status(client, waiting, "pending")
        yield server
    finally:
        server.stop()


@pytest.fixture
def busy_server(server: LocalServer) -> LocalServer:
    return server


def cli(run_ct: Any, server: Any, *args: str) -> Any:
    return run_ct("--base-url", server.base_url, "--database", DB, "capacity", *args)


def test_every_type_with_an_unsupported_one_listed(run_ct: Any, server: Any) -> None:
    result = cli(run_ct, server)
    assert result.returncode == 0, result
    shown = result.json
    assert sorted(shown) == ["capacity_by_hardware", "unsupported_hardware"]
    assert shown["unsupported_hardware"] == ["B200"]
    assert sorted(shown["capacity_by_hardware"]) == ["B300", "H200"]
    for capacity in shown["capacity_by_hardware"].values():
        assert set(capacity) == SIX_KEYS
    assert shown["capacity_by_hardware"]["B300"]["max_total_gpus"] == -1
    assert shown["capacity_by_hardware"]["B300"]["has_reservation"] is False


def test_no_unsupported_key_when_every_type_answers(run_ct: Any, local_server: Any) -> None:
    result = cli(run_ct, local_server)
    assert result.returncode == 0, result
    assert list(result.json) == ["capacity_by_hardware"]
    assert sorted(result.json["capacity_by_hardware"]) == sorted(KNOWN)


def test_one_hardware_type(run_ct: Any, busy_server: Any) -> None:
    result = cli(run_ct, busy_server, "--hardware", "H200")
    assert result.returncode == 0, result
    assert result.json == {
        "has_reservation": True,
        "max_total_gpus": 16,
        "reserved_gpus": 16,
        "in_use_gpus": 6,
        "pending_gpus": 32,
        "available_gpus": 0,
    }


def test_a_hardware_type_in_any_case_is_sent_upper_case(run_ct: Any, busy_server: Any) -> None:
    upper = cli(run_ct, busy_server, "--hardware", "H200")
    lower = cli(run_ct, busy_server, "--hardware", " h200")
    assert lower.returncode == 0, lower
    assert lower.json == upper.json


def test_an_unsupported_type_asked_for_by_name_fails(run_ct: Any, server: Any) -> None:
    result = cli(run_ct, server, "--hardware", "B200")
    assert result.returncode == 1
    assert "517604" in result.stderr and 'unsupported hardware "B200"' in result.stderr
    assert result.stdout == ""


def test_an_unknown_type_is_a_usage_error(run_ct: Any, server: Any) -> None:
    result = cli(run_ct, server, "--hardware", "A100")
    assert result.returncode == 2


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, {"message": "boom"}),
        (409, {"code": "517999", "message": "some other conflict"}),
    ],
)
def test_any_other_error_fails_the_command(
    run_ct: Any, server: Any, status: int, body: dict[str, Any]
) -> None:
    # The second capacity request (B200) gets the fault; it must not be read as "unsupported".
    server.set_faults({"path": "/capacity$", "status": status, "body": body, "skip": 1, "count": 1})
    try:
        result = cli(run_ct, server)
    finally:
        server.clear_faults()
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert result.stderr.startswith("error:")


def test_breakdown_defaults_to_both_dimensions(run_ct: Any, busy_server: Any) -> None:
    result = cli(run_ct, busy_server, "--hardware", "H200", "--breakdown")
    assert result.returncode == 0, result
    breakdown = result.json["breakdown"]
    assert breakdown["unsupported_dimensions"] == []
    assert breakdown["job_count"] == 2 and breakdown["truncated"] is False
    by_type = breakdown["by_job_type"]
    assert by_type["status"] == "OK"
    assert by_type["groups"] == [
        {"job_type": "TRAINING", "in_use_gpus": 4, "pending_gpus": 32, "sub_job_count": 2},
        {"job_type": "SAMPLING", "in_use_gpus": 2, "pending_gpus": 0, "sub_job_count": 1},
        {"job_type": "LOG_PROBABILITY", "in_use_gpus": 0, "pending_gpus": 0, "sub_job_count": 0},
    ]
    by_user = breakdown["by_submitted_by"]
    assert by_user["status"] == "OK"
    (me,) = [group for group in by_user["groups"] if group.get("is_caller")]
    assert me == {
        "kind": "USER",
        "submitted_by": me["submitted_by"],
        "is_caller": True,
        "in_use_gpus": 6,
        "pending_gpus": 32,
        "job_count": 2,
    }
    assert [group["kind"] for group in by_user["groups"]] == ["USER", "OTHER", "UNATTRIBUTED"]
    # OK means the groups add up to the totals.
    for split in (by_type, by_user):
        assert sum(group["in_use_gpus"] for group in split["groups"]) == result.json["in_use_gpus"]
        assert sum(group["pending_gpus"] for group in split["groups"]) == result.json["pending_gpus"]


def test_breakdown_with_named_and_unknown_dimensions(run_ct: Any, busy_server: Any) -> None:
    result = cli(run_ct, busy_server, "--hardware", "H200", "--breakdown", "Job_Type, ,future_dim,job_type")
    assert result.returncode == 0, result
    breakdown = result.json["breakdown"]
    assert breakdown["unsupported_dimensions"] == ["future_dim"]
    assert "by_job_type" in breakdown and "by_submitted_by" not in breakdown


def test_breakdown_over_every_type(run_ct: Any, server: Any) -> None:
    result = cli(run_ct, server, "--breakdown=submitted_by")
    assert result.returncode == 0, result
    assert result.json["unsupported_hardware"] == ["B200"]
    for capacity in result.json["capacity_by_hardware"].values():
        assert capacity["breakdown"]["by_submitted_by"]["status"] == "OK"
        assert "by_job_type" not in capacity["breakdown"]


@pytest.mark.parametrize(
    ("value", "message"), [("bad-name!", "breakdown dimension must match"), (",", "--breakdown")]
)
def test_malformed_breakdown_names_fail_before_sending(
    run_ct: Any, server: Any, value: str, message: str
) -> None:
    result = cli(run_ct, server, "--hardware", "H200", "--breakdown", value)
    assert result.returncode == 1
    assert message in result.stderr


def test_too_many_dimensions_is_the_servers_400(run_ct: Any, server: Any) -> None:
    names = ",".join(f"dim_{letter}" for letter in "abcdefghi")
    result = cli(run_ct, server, "--hardware", "H200", "--breakdown", names)
    assert result.returncode == 1
    assert "400" in result.stderr


def test_table(run_ct: Any, busy_server: Any) -> None:
    result = run_ct(
        "--base-url", busy_server.base_url, "--database", DB, "capacity", "--breakdown", "--table"
    )
    assert result.returncode == 0, result
    text = result.stdout
    for expected in ("GPU capacity", "H200", "B300", "B200", "unsupported", "no ceiling", "up to"):
        assert expected in text
    assert "H200 by job_type" in text and "TRAINING" in text and "LOG_PROBABILITY" in text
    assert "H200 by submitted_by" in text and "(you)" in text
    assert not text.lstrip().startswith("{")


def test_table_for_one_type(run_ct: Any, busy_server: Any) -> None:
    result = cli(run_ct, busy_server, "--hardware", "H200", "--table")
    assert result.returncode == 0, result
    assert "H200" in result.stdout and "B300" not in result.stdout


def run_in_process(argv: list[str], client: CortexTrainingClient) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, client_factory=lambda options: client, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_other_roles_jobs_count_as_other(local_server_factory: Any) -> None:
    server = local_server_factory(tokens={"tok-alice": "ROLE_A", "tok-bob": "ROLE_B"}, settings=SETTINGS)

    def client(token: str) -> CortexTrainingClient:
        return CortexTrainingClient(
            base_url=server.base_url,
            database=DB,
            schema="PUBLIC",
            headers={"Authorization": f"Bearer {token}"},
        )

    with client("tok-alice") as alice, client("tok-bob") as bob:
        mine = alice.create_job_from_body(job_body(2))["job_id"]
        theirs = bob.create_job_from_body(job_body(3))["job_id"]
        wait_status(alice, mine, "running")
        wait_status(bob, theirs, "running")
        code, out, err = run_in_process(
            ["capacity", "--hardware", "H200", "--breakdown", "submitted_by"], alice
        )
    assert code == 0, err
    groups = json.loads(out)["breakdown"]["by_submitted_by"]["groups"]
    assert [(g["kind"], g.get("is_caller"), g["in_use_gpus"], g["job_count"]) for g in groups] == [
        ("USER", True, 2, 1),
        ("OTHER", None, 3, 1),
        ("UNATTRIBUTED", None, 0, 0),
    ]
    assert "submitted_by" not in groups[1]


def test_the_plugin_owns_the_capacity_command(run_ct: Any) -> None:
    plugins = run_ct("plugins")
    assert plugins.returncode == 0, plugins
    assert plugins.json["errors"] == []
    (entry,) = [p for p in plugins.json["plugins"] if p["name"] == "capacity"]
    assert entry["distribution"] == "ct-capacity"
    assert plugins.stderr == ""
    help_text = run_ct("capacity", "--help")
    assert help_text.returncode == 0
    assert "--table" in help_text.stdout and "--breakdown" in help_text.stdout


# --- account switches of the local server: DISABLED, UNAVAILABLE, truncated ---------------------


def _client(server: Any, token: str) -> CortexTrainingClient:
    return CortexTrainingClient(
        base_url=server.base_url, database=DB, schema="PUBLIC", headers={"Authorization": f"Bearer {token}"}
    )


def _table(server: Any, token: str, *args: str) -> str:
    # `ct` closes the client it was given when the command ends, so each run gets a fresh one.
    code, out, err = run_in_process(["capacity", "--breakdown", *args, "--table"], _client(server, token))
    assert code == 0, err
    return out


def test_disabled_and_unavailable_dimensions_from_the_server(local_server_factory: Any) -> None:
    disabled = local_server_factory(
        tokens={"tok-me": "ROLE_A"},
        settings={
            "capacity": {"H200": {"max_total_gpus": 0, "has_reservation": False}},
            "breakdown_enabled": False,
        },
    )
    text = _table(disabled, "tok-me", "job_type,submitted_by,region", "--hardware", "H200")
    assert "H200 by job_type: DISABLED" in text
    assert "H200 by submitted_by: DISABLED" in text
    assert "dimensions the service does not know: region" in text
    # A zero ceiling is a real quota of zero, not "no ceiling".
    assert "no ceiling" not in text and "up to 0" in text

    unavailable = local_server_factory(
        tokens={"tok-me": "ROLE_A"}, settings={"breakdown_unavailable": ["job_type"]}
    )
    text = _table(unavailable, "tok-me", "job_type,submitted_by", "--hardware", "H200")
    assert "H200 by job_type: UNAVAILABLE" in text
    assert "H200 by submitted_by" in text and "(you)" not in text  # OK, but the caller has no jobs


def test_truncated_and_user_rows_from_the_server(local_server_factory: Any) -> None:
    server = local_server_factory(
        # tok-me and tok-ana share a role (they see each other's jobs); tok-bob does not.
        tokens={"tok-me": "ROLE_A", "tok-ana": "ROLE_A", "tok-bob": "ROLE_B"},
        settings={**SETTINGS, "breakdown_attribution_limit": 3},
    )
    with (
        _client(server, "tok-me") as me,
        _client(server, "tok-ana") as ana,
        _client(server, "tok-bob") as bob,
    ):
        created = [
            (ana, ana.create_job_from_body(job_body(3))["job_id"]),
            (me, me.create_job_from_body(job_body(1))["job_id"]),
            (bob, bob.create_job_from_body(job_body(2))["job_id"]),
            (me, me.create_job_from_body(job_body(1))["job_id"]),  # past the limit of 3
        ]
        for client, job_id in created:
            wait_status(client, job_id, "running")
    code, out, err = run_in_process(
        ["capacity", "--hardware", "H200", "--breakdown"], _client(server, "tok-me")
    )
    text = _table(server, "tok-me", "submitted_by", "--hardware", "H200")
    assert code == 0, err
    breakdown = json.loads(out)["breakdown"]
    assert breakdown["truncated"] is True and breakdown["job_count"] == 4
    groups = breakdown["by_submitted_by"]["groups"]
    assert [(g["kind"], g.get("is_caller"), g["in_use_gpus"]) for g in groups] == [
        ("USER", False, 3),
        ("USER", True, 1),
        ("OTHER", None, 2),
        ("UNATTRIBUTED", None, 1),
    ]
    assert "(you)" in text and "others (jobs you cannot see)" in text and "unattributed" in text
    assert "the rest are unattributed" in " ".join(text.split())

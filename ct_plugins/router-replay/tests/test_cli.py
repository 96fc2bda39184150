"""`ct router-replay plan | bootstrap | discard`.

bootstrap and discard go through the SDK methods `bootstrap_router_replay` and
`router_replay_discard`. They run end to end against the real local server (which implements both
operations); a recording client checks the exact arguments, and a client without the methods must
fail with a clear message.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from ct_cli.main import main
from ct_core.client import CortexTrainingClient


def test_plan_prints_the_size_and_formula(run_ct: Any) -> None:
    result = run_ct(
        "router-replay",
        "plan",
        "--experts",
        "512",
        "--seq-len",
        "8192",
        "--moe-layers",
        "40",
        "--top-k",
        "10",
    )
    assert result.returncode == 0, result
    shown = result.json
    assert shown["expert_id_dtype"] == "uint16"
    assert shown["max_cache_bytes"] == 8192 * 40 * 10 * 2
    assert shown["formula"] == (
        "max_cache_bytes = sequences x seq_len x moe_layers x top_k x id_bytes = "
        "1 x 8192 x 40 x 10 x 2 = 6553600"
    )


def test_plan_rejects_bad_input(run_ct: Any) -> None:
    result = run_ct(
        "router-replay", "plan", "--experts", "8", "--seq-len", "0", "--moe-layers", "2", "--top-k", "2"
    )
    assert result.returncode == 1
    assert "error: --seq-len must be a positive integer, got 0" in result.stderr
    missing = run_ct("router-replay", "plan", "--experts", "8")
    assert missing.returncode == 2


def test_bootstrap_and_discard_need_a_job(run_ct: Any, local_server: Any) -> None:
    result = run_ct("--base-url", local_server.base_url, "--database", "RR", "router-replay", "discard", "s1")
    assert result.returncode == 1
    assert "error: provide --job JOB_ID for router-replay discard" in result.stderr


class OlderClient:
    """A client from before the data plane: none of the router replay methods exist."""

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    ("args", "method"),
    [
        (
            ["bootstrap", "--source-sub-job-id", "j:sampling:0", "--target-sub-job-id", "j:training:0"],
            "bootstrap_router_replay",
        ),
        (["discard", "s1", "s2"], "router_replay_discard"),
    ],
)
def test_operations_fail_clearly_when_the_sdk_lacks_them(args: list[str], method: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["--job", "j", "router-replay", *args],
        client_factory=lambda options: OlderClient(),
        stdout=out,
        stderr=err,
    )
    assert code == 1
    assert f"error: this ct SDK has no OlderClient.{method}()" in err.getvalue()
    assert out.getvalue() == ""


def test_todays_client_has_the_methods_the_commands_call() -> None:
    for name in ("bootstrap_router_replay", "router_replay_discard", "poll_request"):
        assert callable(getattr(CortexTrainingClient, name, None)), name


class RecordingClient(CortexTrainingClient):
    """The real client plus the two data-plane methods, answering like the service's bootstrap and discard."""

    def __init__(self, *args: Any, bootstrap_answer: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.bootstrap_answer = bootstrap_answer

    def bootstrap_router_replay(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("bootstrap_router_replay", args, kwargs))
        return dict(self.bootstrap_answer)

    def router_replay_discard(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("router_replay_discard", args, kwargs))
        return {"discarded": len(args[1])}

    def poll_request(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("poll_request", args, kwargs))
        return {"sampling_job_id": "zone-7"}


def run_in_process(argv: list[str], client: RecordingClient) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, client_factory=lambda options: client, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def make_client(local_server: Any) -> Any:
    def make(answer: dict[str, Any]) -> RecordingClient:
        return RecordingClient(
            base_url=local_server.base_url, database="RR", schema="PUBLIC", bootstrap_answer=answer
        )

    return make


def test_bootstrap_routes_to_the_target_by_default(make_client: Any) -> None:
    client = make_client({"sampling_job_id": "zone-1"})
    code, out, err = run_in_process(
        [
            "--job",
            "JOB",
            "router-replay",
            "bootstrap",
            "--source-sub-job-id",
            "JOB:sampling:0",
            "--target-sub-job-id",
            "JOB:training:0",
            "--max-cache-bytes",
            "4096",
        ],
        client,
    )
    assert code == 0, err
    assert json.loads(out) == {"sampling_job_id": "zone-1"}
    assert client.calls == [
        (
            "bootstrap_router_replay",
            ("JOB", "JOB:sampling:0", "JOB:training:0"),
            {"max_cache_bytes": 4096, "sub_job_id": "JOB:training:0", "sub_job_type": None},
        )
    ]


def test_bootstrap_polls_a_returned_request(make_client: Any) -> None:
    client = make_client({"request_id": "r-1"})
    argv = [
        "--job",
        "JOB",
        "router-replay",
        "bootstrap",
        "--source-sub-job-id",
        "s",
        "--target-sub-job-id",
        "t",
    ]
    code, out, err = run_in_process([*argv, "--operation-sub-job-type", "training"], client)
    assert code == 0, err
    assert json.loads(out) == {"sampling_job_id": "zone-7"}
    assert [call[0] for call in client.calls] == ["bootstrap_router_replay", "poll_request"]
    assert client.calls[0][2] == {"max_cache_bytes": None, "sub_job_id": None, "sub_job_type": "training"}
    assert client.calls[1][1] == ("JOB", "r-1")
    assert "waiting for its result" in err

    client = make_client({"request_id": "r-2"})
    code, out, _ = run_in_process([*argv, "--no-poll"], client)
    assert code == 0 and json.loads(out) == {"request_id": "r-2"}
    assert [call[0] for call in client.calls] == ["bootstrap_router_replay"]


def test_bootstrap_rejects_a_bad_cap(make_client: Any) -> None:
    client = make_client({})
    argv = [
        "--job",
        "J",
        "router-replay",
        "bootstrap",
        "--source-sub-job-id",
        "s",
        "--target-sub-job-id",
        "t",
    ]
    code, _, err = run_in_process([*argv, "--max-cache-bytes", "0"], client)
    assert code == 1
    assert "--max-cache-bytes must be a positive integer" in err
    assert client.calls == []


def test_discard_defaults_to_the_sampling_sub_job(make_client: Any) -> None:
    client = make_client({})
    code, out, err = run_in_process(["--job", "JOB", "router-replay", "discard", "a", "b"], client)
    assert code == 0, err
    assert json.loads(out) == {"discarded": 2}
    assert client.calls == [
        ("router_replay_discard", ("JOB", ["a", "b"]), {"sub_job_id": None, "sub_job_type": "sampling"})
    ]
    client = make_client({})
    code, _, _ = run_in_process(
        ["--job", "JOB", "router-replay", "discard", "a", "--sub-job-id", "JOB:sampling:1"], client
    )
    assert code == 0
    assert client.calls[0][2] == {"sub_job_id": "JOB:sampling:1", "sub_job_type": None}


def test_discard_needs_sample_ids(make_client: Any) -> None:
    client = make_client({})
    code, _, err = run_in_process(["--job", "JOB", "router-replay", "discard"], client)
    assert code == 1
    assert "give at least one SAMPLE_ID" in err


def _job_commands(server: Any, model: str, running_pair: Any) -> tuple[str, dict[str, str], tuple[str, ...]]:
    """A running training + sampling job on ``model``: its id, its sub-job ids by type, and the
    start of a `ct ... router-replay` command line aimed at it."""
    with CortexTrainingClient(base_url=server.base_url, database="RR", schema="PUBLIC") as client:
        job_id, training, sampling = running_pair(client, model)
    base = ("--base-url", server.base_url, "--database", "RR", "--job", job_id, "router-replay")
    return job_id, {"training": training, "sampling": sampling}, base


def test_bootstrap_and_discard_against_the_moe_server(
    run_ct: Any, moe_server: Any, running_pair: Any
) -> None:
    """On the mixture-of-experts model of `moe_server` (conftest), each command does what it says."""
    job_id, ids, base = _job_commands(moe_server, "tiny-moe", running_pair)
    pair = ("--source-sub-job-id", ids["sampling"], "--target-sub-job-id", ids["training"])
    boot = run_ct(*base, "bootstrap", *pair, "--max-cache-bytes", "4096")
    assert boot.returncode == 0, boot
    answer = boot.json
    # The zone id to put in replay metadata is the server's own, not the public sampling sub-job id.
    assert answer["sampling_job_id"].startswith("rrz-") and answer["sampling_job_id"] != ids["sampling"]
    assert (answer["sub_job_id"], answer["max_cache_bytes"]) == (ids["training"], 4096)
    # Routed by type instead of id, the same pair answers the same zone.
    again = run_ct(*base, "bootstrap", *pair, "--operation-sub-job-type", "training")
    assert again.returncode == 0, again
    assert again.json["sampling_job_id"] == answer["sampling_job_id"]
    # The server refuses a pair the wrong way round, and the command fails with its message.
    swapped = run_ct(
        *base, "bootstrap", "--source-sub-job-id", ids["training"], "--target-sub-job-id", ids["sampling"]
    )
    assert swapped.returncode == 1
    assert "is a training sub-job, not sampling" in swapped.stderr

    discard = run_ct(*base, "discard", "s-1", "s-2")
    assert discard.returncode == 0, discard
    assert discard.json == {"job_id": job_id, "sub_job_id": ids["sampling"], "requested": 2, "discarded": 0}
    wrong = run_ct(*base, "discard", "s-1", "--sub-job-id", ids["training"])
    assert wrong.returncode == 1
    assert "runs on a sampling sub-job" in wrong.stderr


def test_bootstrap_and_discard_against_the_local_servers_dense_model(
    run_ct: Any, local_server: Any, running_pair: Any
) -> None:
    """The local server's built-in model has no experts: each command fails with the server's reason."""
    _, ids, base = _job_commands(local_server, "Qwen/Qwen3-0.6B", running_pair)
    pair = ("--source-sub-job-id", ids["sampling"], "--target-sub-job-id", ids["training"])
    dense = "router replay needs a mixture-of-experts model, and Qwen/Qwen3-0.6B is dense"
    boot = run_ct(*base, "bootstrap", *pair, "--max-cache-bytes", "4096")
    assert boot.returncode == 1, boot
    assert dense in boot.stderr and "the built-in tiny model has no experts" in boot.stderr
    assert "Traceback" not in boot.stderr
    discard = run_ct(*base, "discard", "s-1", "s-2")
    assert discard.returncode == 1, discard
    assert dense in discard.stderr

"""Who may see what: artifact and admin job routes follow job ownership, admin routes need a token.

Every test runs a real `ct local serve` with two roles. A caller of the other role, or a run no job
owns, gets the same 404; admin levers under ``/_ct/`` answer 401 without a token of the server, the
levers on a job answer another role as if the job did not exist, and a forced checkpoint id cannot
name a folder outside the state dir.
"""

from __future__ import annotations

import gzip
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from ct_local.http.artifacts import run_root

TOKENS = {"tok-a": "ROLE_A", "tok-b": "ROLE_B"}
TRAINING = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 1}}


@pytest.fixture(scope="module")
def two_roles(module_local_server_factory: Any) -> Any:
    # The uploader is slowed down so the only artifacts are the ones a test stages.
    return module_local_server_factory(tokens=TOKENS, settings={"artifact_upload_interval_s": 3600})


def _job_of_a(server: Any) -> tuple[str, dict[str, str]]:
    with server.http("tok-a") as a:
        job_id = (
            a.post(server.prefix(), json={"sub_job_configs": [TRAINING]}).raise_for_status().json()["job_id"]
        )
        run = a.get(f"{server.prefix()}/{job_id}/experiment-run").raise_for_status().json()
    return job_id, run


def _stage_artifacts(server: Any, job_id: str, run: dict[str, str]) -> list[str]:
    """One console chunk, one metrics chunk and the execution log of the job's training sub-job."""
    root = run_root(Path(server.state_dir), run["experiment_name"], run["experiment_run_name"])
    sub = f"{job_id}:training:0"
    objects = {
        f"_stdout/{sub}/console.20260101-000000.0000.gz": gzip.compress(b"secret console line\n"),
        f"_metrics/{sub}/training.20260101-000000.0000.gz": gzip.compress(b'{"loss": 1.0}\n'),
        f"_logs/{sub}/execution.jsonl": b'{"message": "secret log line"}\n',
    }
    for rel, data in objects.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return list(objects)


def test_artifact_routes_answer_another_role_as_a_missing_run(two_roles: Any) -> None:
    job_id, run = _job_of_a(two_roles)
    objects = _stage_artifacts(two_roles, job_id, run)
    base = f"/_artifacts/{run['experiment_name']}/{run['experiment_run_name']}"
    missing = f"/_artifacts/{run['experiment_name']}/RUN_0000000000000000"
    calls = [(base, {"prefix": root + "/"}) for root in ("_stdout", "_metrics", "_logs")]
    calls += [(base, {})] + [(f"{base}/{rel}", {}) for rel in objects]
    with two_roles.http("tok-a") as a, two_roles.http("tok-b") as b:
        for path, params in calls:
            assert a.get(path, params=params).status_code == 200, path
            refused = b.get(path, params=params)
            assert refused.status_code == 404, path
            assert refused.json()["code"] == "517601"
            assert b"secret" not in refused.content
            # Another role's run and a run no job owns answer alike: nothing says the run exists.
            unknown = b.get(missing + path[len(base) :], params=params)
            assert unknown.status_code == 404
            named = unknown.json()["message"].replace("RUN_0000000000000000", run["experiment_run_name"])
            assert {**unknown.json(), "message": named} == refused.json()
        # The owner's listing holds every staged object.
        names = [f["name"] for f in a.get(base, params={"prefix": "_stdout/"}).json()["files"]]
        assert names == [f"/versions/{run['experiment_run_name']}/{objects[0]}"]
    # Without a token the artifact routes answer 401, as every REST route does.
    assert httpx.get(f"{two_roles.base_url}{base}", params={"prefix": "_stdout/"}).status_code == 401


def test_the_sdk_of_another_role_cannot_read_the_logs(two_roles: Any, tmp_path: Path) -> None:
    from ct_core import CortexTrainingClient
    from ct_core.downloads.artifacts import LocalArtifactStore
    from ct_core.errors import APIError

    job_id, run = _job_of_a(two_roles)
    _stage_artifacts(two_roles, job_id, run)
    with CortexTrainingClient(
        base_url=two_roles.base_url, database="CT_TEST_DB", schema="PUBLIC", token="tok-b"
    ) as other:
        store = LocalArtifactStore(other, run)
        with pytest.raises(APIError) as caught:
            store.list(f"_stdout/{job_id}:training:0")
        assert caught.value.status_code == 404
        with pytest.raises(APIError):
            store.get(f"_logs/{job_id}:training:0/execution.jsonl", tmp_path)


ADMIN_CALLS = [
    ("GET", "/_ct/faults", None),
    ("POST", "/_ct/faults", []),
    ("DELETE", "/_ct/faults", None),
    ("POST", "/_ct/jobs/{job}/status", {"status": "running"}),
    ("POST", "/_ct/jobs/{job}/checkpoints", {"checkpoint_id": "cp_admin"}),
    ("GET", "/_ct/jobs/{job}/executions", None),
    ("POST", "/_ct/page-token-key:rotate", None),
]


def test_admin_routes_need_a_token_of_the_server(two_roles: Any) -> None:
    job_id, _ = _job_of_a(two_roles)
    for method, template, body in ADMIN_CALLS:
        url = two_roles.base_url + template.format(job=job_id)
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            refused = httpx.request(method, url, json=body, headers=headers)
            assert refused.status_code == 401, (method, url, refused.text)
        # The job's own role may use every lever; the server-wide ones take any role's token.
        for token in ("tok-a",) if "{job}" in template else ("tok-a", "tok-b"):
            allowed = httpx.request(method, url, json=body, headers={"Authorization": f"Bearer {token}"})
            assert allowed.status_code == 200, (method, url, token, allowed.text)


JOB_ADMIN_CALLS = [call for call in ADMIN_CALLS if "{job}" in call[1]]


def test_admin_job_routes_answer_another_role_as_a_missing_job(two_roles: Any) -> None:
    """A role token once forced any role's job to failed: the job levers follow job ownership."""
    job_id, _ = _job_of_a(two_roles)
    missing = "00000000-0000-0000-0000-000000000000"
    for method, template, body in JOB_ADMIN_CALLS:
        refused = httpx.request(
            method,
            two_roles.base_url + template.format(job=job_id),
            json=body,
            headers={"Authorization": "Bearer tok-b"},
        )
        assert refused.status_code == 404, (method, template, refused.text)
        assert refused.json()["code"] == "517601"
        # Another role's job and a job that does not exist answer alike.
        unknown = httpx.request(
            method,
            two_roles.base_url + template.format(job=missing),
            json=body,
            headers={"Authorization": "Bearer tok-b"},
        )
        assert unknown.status_code == 404
        assert unknown.json()["message"].replace(missing, job_id) == refused.json()["message"]
    with two_roles.http("tok-b") as b:
        assert b.post(f"/_ct/jobs/{job_id}/status", json={"status": "failed"}).status_code == 404
    with two_roles.http("tok-a") as a:
        assert a.get(f"{two_roles.prefix()}/{job_id}").raise_for_status().json()["status"] != "failed"
        assert a.get(f"{two_roles.prefix()}/{job_id}/checkpoints").json()["checkpoints"] == []
        # The owner's own token works.
        forced = a.post(f"/_ct/jobs/{job_id}/status", json={"status": "failed", "reason": "by the owner"})
        assert forced.status_code == 200, forced.text
        assert a.get(f"{two_roles.prefix()}/{job_id}").json()["status"] == "failed"


def test_fixture_levers_work_on_a_server_with_tokens(two_roles: Any) -> None:
    job_id, _ = _job_of_a(two_roles)
    two_roles.set_faults({"path": "/nothing-matches$", "status": 503})
    two_roles.clear_faults()
    assert two_roles.force_status(job_id, "failed", reason="forced")["status"] == "failed"
    assert two_roles.add_checkpoint(job_id, checkpoint_id="cp_fixture")["checkpoint_id"] == "cp_fixture"
    # A job of another role than the first token's: the levers sign as its owner when told to.
    with two_roles.http("tok-b") as b:
        other = b.post(two_roles.prefix(), json={"sub_job_configs": [TRAINING]}).raise_for_status().json()
    with pytest.raises(httpx.HTTPStatusError):
        two_roles.force_status(other["job_id"], "failed")
    assert two_roles.force_status(other["job_id"], "failed", token="tok-b")["status"] == "failed"
    added = two_roles.add_checkpoint(other["job_id"], checkpoint_id="cp_b", token="tok-b")
    assert added["checkpoint_id"] == "cp_b"


@pytest.mark.parametrize(
    "checkpoint_id", ["../../../../tmp/x", "..", "a/b", "a\\b", "%2e%2e/x", ".", "x" * 300, "a\x00b"]
)
def test_forced_checkpoint_ids_cannot_leave_the_state_dir(two_roles: Any, checkpoint_id: str) -> None:
    job_id, _ = _job_of_a(two_roles)
    state_dir = Path(two_roles.state_dir)
    outside = (state_dir / "checkpoints" / job_id / checkpoint_id.replace("\x00", "")).resolve()
    before = outside.exists()
    with two_roles.http("tok-a") as a:
        response = a.post(
            f"/_ct/jobs/{job_id}/checkpoints", json={"checkpoint_id": checkpoint_id, "files": {"f.txt": "x"}}
        )
        assert response.status_code == 400, response.text
        assert "checkpoint_id" in response.json()["message"]
        listed = a.get(f"{two_roles.prefix()}/{job_id}/checkpoints").json()["checkpoints"]
    assert listed == []
    assert outside.exists() == before
    assert not (outside / "f.txt").exists()


def _non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_admin_routes_stay_loopback_only(local_server_factory: Any) -> None:
    address = _non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    server = local_server_factory(tokens=TOKENS, start=False)
    server.host = "0.0.0.0"
    server.start()
    remote = f"http://{address}:{server.port}"
    auth = {"Authorization": "Bearer tok-a"}
    assert httpx.get(f"{remote}/api/v2/cortex-training/models", headers=auth).status_code == 200
    for method, template, body in ADMIN_CALLS:
        url = remote + template.format(job="any")
        assert httpx.request(method, url, json=body, headers=auth).status_code == 404, url

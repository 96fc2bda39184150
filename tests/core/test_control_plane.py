"""Control-plane methods end to end against a running ct_local server (real HTTP over loopback)."""

from __future__ import annotations

import uuid

import pytest

from ct_core import errors
from ct_core.client import CortexTrainingClient
from ct_core.config.typed import Hardware, SubJobConfig
from ct_core.control.shaping import create_job_body_from_job, normalize_capacity_breakdown

DB = "CT_TEST_DB"


@pytest.fixture
def client(local_server):
    # A schema of its own per test keeps list results independent of other tests.
    schema = f"S_{uuid.uuid4().hex[:8].upper()}"
    with CortexTrainingClient(
        base_url=local_server.base_url, database=DB, schema=schema, poll_interval=0.02, poll_timeout=30
    ) as c:
        yield c


def training():
    return SubJobConfig.training_job(
        "Qwen/Qwen3-0.6B",
        optimizer={"type": "AdamW", "lr": 1e-4, "beta2": 0.95},
        max_seq_len=64,
        train_batch_size=1,
        n_gpus=1,
    )


def sampling():
    return SubJobConfig.sampling_job("Qwen/Qwen3-0.6B", max_seq_len=64, n_gpus=1)


def test_create_wait_get_list_cancel(client):
    job_id = client.create_job(
        [training(), sampling()], hardware=Hardware.H200, idle_timeout_seconds=0, pending_timeout_seconds=300
    )
    job = client.wait_for_job(job_id)
    assert job["status"] == "running" and job["job_id"] == job_id
    assert [s["job_type"] for s in job["sub_jobs"]] == ["training", "sampling"]
    assert job["sub_jobs"][0]["training_config"]["optimizer"] == {
        "name": "AdamW",
        "lr": 1e-4,
        "betas": [0.9, 0.95],
    }
    assert job["idle_timeout_seconds"] == 0 and job["pending_timeout_seconds"] == 300
    assert [j["job_id"] for j in client.list_jobs()] == [job_id]
    assert [j["job_id"] for j in client.list_jobs(status="running")] == [job_id]
    assert client.list_jobs(status="failed") == []
    assert client.cancel_job(job_id) is None
    assert client.cancel_job(job_id) is None  # idempotent while cancelling or cancelled
    with pytest.raises(errors.JobTerminalError, match=f"Job {job_id} reached terminal state 'cancel"):
        client.wait_for_job(job_id)


@pytest.mark.parametrize("status", ["failed", "terminated"])
def test_wait_for_job_raises_at_once_on_terminal_states(client, local_server, status):
    job_id = client.create_job_from_body({"sub_job_configs": [sampling().to_dict()]})["job_id"]
    local_server.force_status(job_id, status, reason="boom")
    with pytest.raises(errors.JobTerminalError) as caught:
        client.wait_for_job(job_id)
    assert (
        caught.value.status == status
        and str(caught.value) == f"Job {job_id} reached terminal state '{status}': boom"
    )
    assert isinstance(caught.value, RuntimeError)


def _recorded_client(client, local_server, relay, no_sleep):
    """A client of the same schema that talks through a recording relay and never really sleeps, so
    a test can count the requests a call made and the waits it took (a retried call would still end
    in the same error, only after many requests and about a minute of backoff)."""
    recorder = relay(local_server.base_url)
    recorded = CortexTrainingClient(
        base_url=recorder.base_url, database=DB, schema=client.schema, sleep=no_sleep
    )
    return recorder, recorded


def test_cancel_of_a_failed_job_is_a_conflict(client, local_server, relay, no_sleep):
    job_id = client.create_job([sampling()])
    local_server.force_status(job_id, "failed")
    recorder, recorded = _recorded_client(client, local_server, relay, no_sleep)
    with recorded, pytest.raises(errors.APIError) as caught:
        recorded.cancel_job(job_id)
    assert caught.value.status_code == 409
    # The conflict is the job's state, not a restarting zone: one request, no retry, no wait.
    assert [seen.method for seen in recorder.requests] == ["POST"]
    assert no_sleep.calls == []


def test_unknown_job_fails_at_once(client, local_server, relay, no_sleep):
    recorder, recorded = _recorded_client(client, local_server, relay, no_sleep)
    with recorded, pytest.raises(errors.NotFoundError) as caught:
        recorded.get_job("no-such-job")
    assert caught.value.code == "517601"
    # A job this client did not just create is not retried: one request, no wait.
    assert [seen.method for seen in recorder.requests] == ["GET"]
    assert no_sleep.calls == []


def test_experiment_run_is_cached(client, local_server):
    job_id = client.create_job([sampling()], experiment_name="EXP")
    run = client.get_experiment_run(job_id)
    assert set(run) >= {"experiment_name", "experiment_run_name"}
    local_server.set_faults({"path": "experiment-run", "action": "respond", "status": 500, "count": 50})
    try:
        assert client.get_experiment_run(job_id) == run  # served from the cache, no request
    finally:
        local_server.clear_faults()


def test_checkpoints_export_and_delete(client, local_server):
    job_id = client.create_job([training()])
    local_server.add_checkpoint(job_id, checkpoint_id="global_step1", global_steps=1, files={"a.txt": "hi"})
    checkpoints = client.list_checkpoints(job_id)
    assert [c["checkpoint_id"] for c in checkpoints] == ["global_step1"]
    exported = client.export_checkpoint(job_id, "global_step1")
    assert exported["checkpoint_id"] == "global_step1" and exported["files"][0]["filename"] == "a.txt"
    assert client.delete_checkpoint(job_id, "global_step1") is None
    assert client.list_checkpoints(job_id) == []
    with pytest.raises(errors.NotFoundError):
        client.delete_checkpoint(job_id, "global_step1")


def test_models_and_capacity(client):
    models = client.list_models()
    assert models and all("name" in m for m in models)
    capacity = client.get_capacity()
    assert set(capacity) == {
        "has_reservation",
        "max_total_gpus",
        "reserved_gpus",
        "in_use_gpus",
        "pending_gpus",
        "available_gpus",
    }
    assert client.get_capacity(Hardware.H200) == client.get_capacity("H200")
    with pytest.raises(ValueError, match="hardware must be one of H200, B200, B300, got 'h100'"):
        client.get_capacity("h100")
    breakdown = client.get_capacity_breakdown()["breakdown"]
    assert "unsupported_dimensions" in breakdown
    assert set(breakdown) >= {"by_job_type", "by_submitted_by"}


def test_unsupported_hardware_capacity_raises_conflict(local_server_factory):
    server = local_server_factory(
        settings={"capacity": {"H200": {"max_total_gpus": 8}, "B300": {"max_total_gpus": 8}}}
    )
    client = CortexTrainingClient(base_url=server.base_url, database=DB, schema="PUBLIC")
    with client, pytest.raises(errors.ConflictError) as caught:
        client.get_capacity("B200")
    assert caught.value.code == "517604"


def test_account_listing_pages_and_for_job(local_server):
    schema = f"S_{uuid.uuid4().hex[:8].upper()}"
    with CortexTrainingClient(base_url=local_server.base_url, database=DB, schema=schema) as c:
        created = {c.create_job([sampling()]) for _ in range(3)}
        listed = [j for j in c.iter_jobs(database=DB, schema=schema, page_size=1)]
        assert {j["job_id"] for j in listed} == created
        page = c.list_jobs_page(database=DB, schema=schema, page_size=2)
        assert len(page["jobs"]) <= 2 and page["next_page_token"]
        bound = c.for_job(listed[0])
        assert (bound.database, bound.schema) == (DB, schema)
        assert bound.get_job(listed[0]["job_id"])["job_id"] == listed[0]["job_id"]
        bound.close()  # closes nothing shared
        assert c.list_jobs()
        with pytest.raises(errors.InvalidPageToken):
            c.list_jobs_page(database=DB, schema=schema, page_token="garbage")


def test_iter_jobs_checks_arguments_before_any_request(closed_port):
    with CortexTrainingClient(base_url=f"http://127.0.0.1:{closed_port}", database=DB, schema="S") as c:
        with pytest.raises(ValueError, match="schema requires database"):
            c.iter_jobs(schema="S")
        with pytest.raises(ValueError, match="page_size"):
            c.iter_jobs(page_size=0)


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (403, {"message": "not enabled"}, "forbidden"),
        (404, None, "not_deployed"),
        (404, {"message": "Account-level job listing is not enabled for this account"}, "disabled"),
        (405, None, "rest_disabled"),
    ],
)
def test_account_list_unavailable(misbehaving_server, act, no_sleep, status, body, reason):
    misbehaving_server.script(act(status, body))
    client = CortexTrainingClient(
        base_url=misbehaving_server.base_url, database=DB, schema="S", sleep=no_sleep
    )
    with client, pytest.raises(errors.AccountJobListUnavailable) as caught:
        list(client.iter_jobs())
    assert caught.value.reason == reason and len(misbehaving_server.requests) == 1


def test_null_lists_become_empty(misbehaving_server, act):
    misbehaving_server.script(
        act(200, {"jobs": None}), act(200, {"checkpoints": None}), act(200, {"models": None}), act(200, {})
    )
    with CortexTrainingClient(base_url=misbehaving_server.base_url, database=DB, schema="S") as c:
        assert c.list_jobs() == [] and c.list_checkpoints("j") == [] and c.list_models() == []
        assert c.get_capacity() == {
            "has_reservation": False,
            "max_total_gpus": 0,
            "reserved_gpus": 0,
            "in_use_gpus": 0,
            "pending_gpus": 0,
            "available_gpus": 0,
        }


def test_breakdown_normalization():
    body = {
        "in_use_gpus": 4,
        "breakdown": {
            "by_job_type": {"groups": [{"job_type": "SAMPLING", "in_use_gpus": 4}, {"job_type": "UNKNOWN"}]},
            "by_submitted_by": {"status": "DISABLED"},
        },
    }
    shaped = normalize_capacity_breakdown(body, ["job_type", "submitted_by", "zone"])
    by_type = shaped["breakdown"]["by_job_type"]
    assert by_type["status"] == "OK"
    assert [g["job_type"] for g in by_type["groups"]] == [
        "TRAINING",
        "SAMPLING",
        "LOG_PROBABILITY",
        "UNKNOWN",
    ]
    assert by_type["groups"][0] == {
        "job_type": "TRAINING",
        "in_use_gpus": 0,
        "pending_gpus": 0,
        "sub_job_count": 0,
    }
    assert shaped["breakdown"]["by_submitted_by"] == {"status": "DISABLED", "groups": []}
    assert shaped["breakdown"]["by_zone"] == {"status": "UNAVAILABLE", "groups": []}
    assert shaped["breakdown"]["job_count"] == 0 and shaped["breakdown"]["truncated"] is False
    assert shaped["breakdown"]["unsupported_dimensions"] == []
    assert "job_count" not in normalize_capacity_breakdown({}, ["job_type"])["breakdown"]


def test_create_job_body_from_job_round_trips(client):
    job_id = client.create_job([training(), sampling()], experiment_name="EXP", hardware="B300")
    record = client.get_job(job_id)
    body = create_job_body_from_job(record, experiment_name="EXP")
    assert body["hardware"] == "B300" and body["experiment_name"] == "EXP"
    assert body["idle_timeout_seconds"] == 1800 and body["pending_timeout_seconds"] == 86400
    assert all(set(s) >= {"dtype", "seed", "source_checkpoint_info"} for s in body["sub_job_configs"])
    assert all("status" not in s and "sub_job_id" not in s for s in body["sub_job_configs"])
    new_id = client.create_job_from_body(body)["job_id"]
    assert new_id != job_id


def test_create_job_body_from_job_rules():
    record = {"hardware": "H200", "sub_jobs": [{"job_type": "sampling", "inference_config": {"n_gpus": 4.0}}]}
    body = create_job_body_from_job(record)
    assert body["sub_job_configs"][0]["inference_config"]["n_gpus"] == 4
    assert isinstance(body["sub_job_configs"][0]["inference_config"]["n_gpus"], int)
    with pytest.raises(ValueError, match="no sub_jobs"):
        create_job_body_from_job({"hardware": "H200", "sub_jobs": []})
    with pytest.raises(ValueError, match="no hardware"):
        create_job_body_from_job({"sub_jobs": [{}]})


def test_hardware_is_accepted_in_any_case_and_sent_upper_case(client, local_server, relay):
    import json

    recorder = relay(local_server.base_url)
    with CortexTrainingClient(base_url=recorder.base_url, database=DB, schema=client.schema) as recorded:
        typed = recorded.create_job([sampling()], hardware="b300")
        raw = recorded.create_job_from_body({"hardware": "h200", "sub_job_configs": [sampling().to_dict()]})
        assert recorded.get_capacity("b300") == recorded.get_capacity(Hardware.B300)
    sent = [json.loads(seen.body)["hardware"] for seen in recorder.requests if seen.method == "POST"]
    assert sent == ["B300", "H200"]
    queries = [seen.path.split("?", 1)[1] for seen in recorder.requests if "/capacity?" in seen.path]
    assert queries == ["hardware=B300", "hardware=B300"]
    assert client.get_job(typed)["hardware"] == "B300"
    assert client.get_job(raw["job_id"])["hardware"] == "H200"

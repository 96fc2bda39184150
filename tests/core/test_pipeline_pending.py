"""TrainingPipeline's back-pressure helpers (`pending`, `wait_pending`) against a small real server."""

from __future__ import annotations

import itertools
import json

import pytest

from ct_core.client import CortexTrainingClient


@pytest.fixture
def counting_server(misbehaving_server, act):
    """Each step gets a fresh request id; every poll answers done with the global step of that id."""
    numbers = itertools.count(1)

    def respond(seen):
        if seen.method == "POST":
            return act(200, {"request_id": f"r{next(numbers)}"})
        request_id = seen.path.rsplit("/", 1)[-1]
        return act(200, {"status": "done", "result": {"global_steps": int(request_id[1:])}})

    misbehaving_server.responder = respond
    return misbehaving_server


@pytest.mark.parametrize("workers", [0, 2])
def test_wait_pending_collects_oldest_first(counting_server, workers):
    with (
        CortexTrainingClient(base_url=counting_server.base_url, database="DB", schema="S") as client,
        client.pipeline("job", workers=workers) as pipe,
    ):
        handles = [pipe.step() for _ in range(5)]
        assert pipe.pending == 5
        assert pipe.wait_pending(2) == [{"global_steps": 1}, {"global_steps": 2}, {"global_steps": 3}]
        assert pipe.pending == 2
        assert pipe.wait_pending(5) == []
        # Collected handles keep their outcome; the rest are drained on exit.
        assert handles[0].result() == {"global_steps": 1} and handles[0].done()
    assert pipe.pending == 0
    assert handles[4].result() == {"global_steps": 5}
    posts = [seen for seen in counting_server.requests if seen.method == "POST"]
    assert [json.loads(seen.body) for seen in posts] == [{}] * 5


@pytest.mark.parametrize("limit", [-1, 1.5, True])
def test_wait_pending_rejects_a_bad_limit(counting_server, limit):
    with CortexTrainingClient(base_url=counting_server.base_url, database="DB", schema="S") as client:
        pipe = client.pipeline("job")
        with pytest.raises(ValueError, match="limit"):
            pipe.wait_pending(limit)
        pipe.close()


def test_pipeline_calls_send_what_the_client_methods_send(counting_server):
    """The pipeline's save/load take the same options as the client's (load's target sub-job too)."""
    with (
        CortexTrainingClient(base_url=counting_server.base_url, database="DB", schema="S") as client,
        client.pipeline("job") as pipe,
    ):
        pipe.save("Weights-Only")
        pipe.load("cp_1", "other", target_sub_job_id="job:training:0")
        pipe.step(learning_rate=0.5)
    posts = [
        (seen.path.rsplit("/", 1)[-1], json.loads(seen.body))
        for seen in counting_server.requests
        if seen.method == "POST"
    ]
    assert posts == [
        ("save", {"checkpoint_type": "weights-only"}),
        ("load", {"checkpoint_id": "cp_1", "source_job_id": "other", "target_sub_job_id": "job:training:0"}),
        ("step", {"learning_rate": 0.5}),
    ]


def test_background_polls_follow_the_order_requests_run_in(misbehaving_server, act):
    """A sub-job runs its requests in arrival order: a request is not polled before the one ahead of
    it is done (those polls could only answer "running", and each costs the server a request)."""
    numbers = itertools.count(1)
    done: set[int] = set()
    polls_while_behind: list[int] = []
    polls: dict[int, int] = {}

    def respond(seen):
        if seen.method == "POST":
            return act(200, {"request_id": f"r{next(numbers)}"})
        number = int(seen.path.rsplit("/", 1)[-1][1:])
        if number > 1 and number - 1 not in done:
            polls_while_behind.append(number)
            return act(200, {"status": "running"})
        polls[number] = polls.get(number, 0) + 1
        if polls[number] < 3:  # each request runs for two polls once it is at the head
            return act(200, {"status": "running"})
        done.add(number)
        return act(200, {"status": "done", "result": {"global_steps": number}})

    misbehaving_server.responder = respond
    with (
        CortexTrainingClient(
            base_url=misbehaving_server.base_url, database="DB", schema="S", poll_interval=0.001
        ) as client,
        client.pipeline("job", workers=2) as pipe,
    ):
        handles = [pipe.step() for _ in range(6)]
        assert [handle.result() for handle in handles] == [{"global_steps": n} for n in range(1, 7)]
    assert polls_while_behind == []
    assert polls == {n: 3 for n in range(1, 7)}

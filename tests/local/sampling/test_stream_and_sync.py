"""Streaming generation and its polls, cancelling a generation, weight sync, and the prefix cache."""

from __future__ import annotations

from typing import Any

import httpx
from ct_testing import wait_until

from ct_core import wire
from ct_local.model import tinylm

POLL_LIMIT_S = 120.0


def drain(sp: Any, request_id: str, max_events: int | None = None) -> list[dict[str, Any]]:
    """Poll a generate-stream request until its done event; returns every event in order."""
    events: list[dict[str, Any]] = []
    params = {} if max_events is None else {"max_events": max_events}

    def done() -> bool:
        page = sp.status(request_id, **params)
        assert len(page["events"]) <= (max_events or 16)
        events.extend(page["events"])
        if events and events[-1]["type"] == "done":
            return True
        assert page["status"] in {"pending", "running", "done"}, page
        return False

    wait_until(done, timeout=POLL_LIMIT_S, message=lambda: f"no done event; events so far: {events}")
    return events


def test_stream_events_arrive_once_and_end_with_done(sp) -> None:
    sp.start()
    response = sp.post(
        "generate-stream",
        {"prompts": ["a", [98, 99], "c"], "sampling_params": {"max_tokens": 3, "temperature": 0}},
    )
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 3 and body["job_id"] == sp.job_id
    events = drain(sp, body["request_id"], max_events=1)
    results = [e for e in events if e["type"] == "result"]
    assert sorted(e["index"] for e in results) == [0, 1, 2]
    assert events[-1] == {"type": "done", "completed": 3, "failed": 0}
    # Drained destructively: nothing comes back a second time.
    assert sp.status(body["request_id"])["events"] == []
    same = sp.generate(["a"], max_tokens=3, temperature=0)[0]
    assert results[0]["result"] == same


def test_stream_max_events_bounds(sp) -> None:
    sp.start()
    request_id = sp.submit({"prompts": ["a"] * 20, "sampling_params": {"max_tokens": 1}}, "generate-stream")
    events = drain(sp, request_id)  # server default page: at most 16 (checked in drain)
    assert len(events) == 21 and events[-1] == {"type": "done", "completed": 20, "failed": 0}
    request_id = sp.submit({"prompts": ["a"] * 20, "sampling_params": {"max_tokens": 1}}, "generate-stream")
    assert len(drain(sp, request_id, max_events=512)) == 21
    assert sp.http.get(f"{sp.url}/requests/{request_id}", params={"max_events": 0}).status_code in (400, 422)


def test_max_events_is_capped_at_512(sp) -> None:
    """A page larger than the cap is cut to 512 events; the rest wait for the next poll."""
    sp.start()
    request_id = sp.submit({"prompts": ["a"] * 600, "sampling_params": {"max_tokens": 1}}, "generate-stream")
    # Polling the stream would drain it, so wait on a request queued behind it on the same worker.
    assert len(sp.generate(["b"], max_tokens=1)) == 1
    first = sp.status(request_id, max_events=100000)["events"]
    assert len(first) == 512 and [e["index"] for e in first] == list(range(512))
    rest = sp.status(request_id, max_events=100000)["events"]
    assert len(rest) == 89 and rest[-1] == {"type": "done", "completed": 600, "failed": 0}
    assert sp.status(request_id, max_events=100000)["events"] == []


def test_a_json_body_is_refused(sp) -> None:
    """generate-stream (and generate) take a DSSST1 frame only, never a UTF-8 JSON body."""
    sp.start()
    body = b'{"prompts": ["a"], "sampling_params": {"max_tokens": 1}}'
    for action in ("generate-stream", "generate"):
        response = sp.http.post(
            f"{sp.url}/{action}", content=body, headers={"content-type": "application/octet-stream"}
        )
        assert response.status_code == 422, response.text
        assert "not a valid DSSST1 frame" in response.text


def test_stream_refuses_request_chunks(sp) -> None:
    sp.start()
    chunks = wire.encode_byte_chunks(
        wire.dumps({"prompts": ["a"]}), kind="request", operation="generate", max_bytes=0, force_chunk=True
    )
    response = sp.http.post(f"{sp.url}/generate-stream", content=chunks[0])
    assert response.status_code == 400
    assert "not request chunks" in response.text


def test_generate_accepts_request_chunks(sp) -> None:
    sp.start()
    chunks = wire.encode_byte_chunks(
        wire.dumps({"prompts": ["ab"], "sampling_params": {"max_tokens": 2}}),
        kind="request",
        operation="generate",
        max_bytes=0,
        force_chunk=True,
    )
    response: Any = None
    for chunk in chunks:
        response = sp.http.post(f"{sp.url}/generate", content=chunk)
        assert response.status_code == 200, response.text
    assert len(sp.result(response.json()["request_id"])["results"]) == 1


def held_generations(server: Any) -> list[str]:
    """The request ids the server's hold rules park right now (GET /_ct/faults)."""
    rules = httpx.get(f"{server.base_url}/_ct/faults", headers=server.admin_headers, timeout=30.0).json()
    return [request_id for rule in rules["rules"] for request_id in rule.get("held", [])]


def test_cancel_stops_a_running_generation(sp, sampling_server) -> None:
    sp.start()
    long = {"prompts": [[1, 2]] * 50, "sampling_params": {"max_tokens": 60, "ignore_eos": True}}
    # The generation submitted next parks at a decoding step until the faults are cleared, so the
    # cancel below certainly lands while it runs, however fast the machine is.
    sampling_server.set_faults({"path": f"/{sp.job_id}/generate-stream$", "method": "POST", "action": "hold"})
    try:
        request_id = sp.submit(long, "generate-stream")
        wait_until(
            lambda: request_id in held_generations(sampling_server),
            timeout=POLL_LIMIT_S,
            message="the generation never reached its hold",
        )
        assert sp.status(request_id, max_events=1)["status"] == "running"
        answer = sp.operation("cancel-request", {"request_id": request_id}).json()
    finally:
        sampling_server.clear_faults()
    assert answer == {"request_id": request_id, "cancelled": True, "status": "cancelled"}
    status = sp.wait(request_id)
    assert status["status"] == "cancelled"
    # The worker is free again and the request's state stays cancelled.
    assert len(sp.generate(["a"], max_tokens=1)) == 1
    assert sp.status(request_id)["status"] == "cancelled"


def test_a_released_hold_lets_the_generation_finish(sp, sampling_server) -> None:
    sp.start()
    sampling_server.set_faults({"path": f"/{sp.job_id}/generate$", "method": "POST", "action": "hold"})
    try:
        request_id = sp.submit({"prompts": ["ab"], "sampling_params": {"max_tokens": 3, "temperature": 0}})
        wait_until(
            lambda: request_id in held_generations(sampling_server),
            timeout=POLL_LIMIT_S,
            message="the generation never reached its hold",
        )
        assert sp.status(request_id)["status"] == "running"
    finally:
        sampling_server.clear_faults()
    assert held_generations(sampling_server) == []
    (result,) = sp.result(request_id)["results"]
    assert result == sp.generate(["ab"], max_tokens=3, temperature=0)[0]


def test_a_server_stops_cleanly_while_a_generation_is_held(local_server_factory, sampling_driver) -> None:
    """A hold nobody released does not outlast a graceful stop: the stop releases it first."""
    server = local_server_factory(extra_args=["--hardware", "H200=1000"])
    with server.http() as http:
        driver = sampling_driver(http, server.prefix()).start()
        server.set_faults({"path": f"/{driver.job_id}/generate$", "method": "POST", "action": "hold"})
        request_id = driver.submit({"prompts": ["ab"], "sampling_params": {"max_tokens": 2}})
        wait_until(
            lambda: request_id in held_generations(server),
            timeout=POLL_LIMIT_S,
            message="the generation never reached its hold",
        )
    assert server.stop() == 0, server.log()
    # The stop released the hold and waited for the generation, so it was stored as done, not left
    # running for the next start to fail as interrupted.
    server.start()
    with server.http() as http:
        assert sampling_driver(http, server.prefix(), driver.job_id).status(request_id)["status"] == "done"


def _train_on(sp: Any, text: bytes, steps: int) -> None:
    import torch

    ids = torch.tensor([list(text)], dtype=torch.long)
    labels = torch.roll(ids, -1, dims=1)
    labels[:, -1] = -100
    frame = wire.dumps({"args": (), "kwargs": {"input_ids": ids, "labels": labels}})
    for _ in range(steps):
        chunks = wire.encode_byte_chunks(
            frame, kind="request", operation="fwd-bwd", max_bytes=0, force_chunk=True
        )
        for chunk in chunks:
            response = sp.http.post(f"{sp.url}/forward-backward", content=chunk)
        sp.result(response.json()["request_id"])
        sp.result(sp.http.post(f"{sp.url}/step", json={}).json()["request_id"])


def test_weight_sync_changes_what_the_sampler_says(sp) -> None:
    sp.start()
    greedy = {"max_tokens": 6, "temperature": 0, "ignore_eos": True}
    before = sp.generate([list(b"abcab")], **greedy)[0]["token_ids"]
    _train_on(sp, b"abcabcabcabcabcabc", steps=8)
    # Training alone does not touch the sampler.
    assert sp.generate([list(b"abcab")], **greedy)[0]["token_ids"] == before
    response = sp.operation(
        "weight-sync",
        {"source_sub_job_id": f"{sp.job_id}:training:0", "weight_format": "hf"},
        sub_job_type="training",
    )
    assert response.status_code == 200, response.text
    result = sp.result(response.json()["request_id"])
    assert result["weight_format"] == "hf"
    assert result["targets"][0]["sub_job_id"] == f"{sp.job_id}:sampling:0"
    assert result["targets"][0]["recv"]["recv"]["clear_cache"] is True
    after = sp.generate([list(b"abcab")], **greedy)[0]["token_ids"]
    assert after != before
    assert set(after) <= set(b"abc")  # the alphabet it was trained on


def test_weight_sync_reports_the_clear_cache_opt_out(sp, sampling_sub_job, training_sub_job) -> None:
    sp.start(training_sub_job(), sampling_sub_job(vllm_config={"clear_cache_on_weight_sync": False}))
    response = sp.operation("weight-sync", {})
    result = sp.result(response.json()["request_id"])
    assert result["weight_format"] == "vllm"
    assert result["targets"][0]["recv"]["recv"]["clear_cache"] is False


def test_weight_sync_errors(sp, sampling_sub_job, training_sub_job) -> None:
    sp.start()
    bad_format = sp.operation("weight-sync", {"weight_format": "onnx"})
    assert bad_format.status_code == 422
    bad_target = sp.operation("weight-sync", {"target_sub_job_ids": [f"{sp.job_id}:training:0"]})
    assert bad_target.status_code == 400 and "not a sampling sub-job" in bad_target.text
    bad_source = sp.operation("weight-sync", {"source_sub_job_id": f"{sp.job_id}:sampling:0"})
    assert bad_source.status_code == 400 and "not a training sub-job" in bad_source.text
    lora = sp.operation("weight-sync", {"weight_format": "lora"})
    assert lora.status_code == 400
    assert "peft_config" in lora.text and f"{sp.job_id}:training:0" in lora.text


def test_lora_sync_with_peft_on_both_sides_is_accepted(sp, sampling_sub_job, training_sub_job) -> None:
    # More on adapter-only sync in test_lora_sync.py.
    peft = {"peft_type": "Lora", "r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj"]}
    training = training_sub_job()
    training["training_config"]["peft_config"] = peft
    sp.start(training, sampling_sub_job(peft_config=peft))
    response = sp.operation("weight-sync", {"weight_format": "lora"})
    assert response.status_code == 200, response.text
    result = sp.result(response.json()["request_id"])
    assert result["weight_format"] == "lora"
    assert result["num_tensors"] == 2 * 2 * tinylm.NUM_LAYERS  # A and B of q_proj and v_proj per layer


def test_reset_prefix_cache(sp) -> None:
    sp.start()
    payload = {"drain": True, "timeout_s": 60.0, "retry_interval_s": 0.1}
    answer = sp.operation(
        "reset-prefix-cache", payload, sub_job_id=f"{sp.job_id}:sampling:0", sub_job_type="sampling"
    )
    assert answer.status_code == 200
    assert answer.json() == {
        "job_id": sp.job_id,
        "sub_job_id": f"{sp.job_id}:sampling:0",
        "success": True,
        "drain": True,
    }
    implicit = sp.operation("reset-prefix-cache", {"drain": False})
    assert implicit.status_code == 200 and implicit.json()["drain"] is False
    on_training = sp.operation("reset-prefix-cache", {}, sub_job_id=f"{sp.job_id}:training:0")
    assert on_training.status_code == 400


def test_synced_weights_survive_a_graceful_restart(local_server_factory, sampling_driver) -> None:
    server = local_server_factory()
    with server.http() as http:
        sp = sampling_driver(http, server.prefix(schema="RESTART")).start()
        greedy = {"max_tokens": 6, "temperature": 0, "ignore_eos": True}
        before = sp.generate([list(b"abcab")], **greedy)[0]["token_ids"]
        _train_on(sp, b"abcabcabcabcabcabc", steps=4)
        sp.result(sp.operation("weight-sync", {}).json()["request_id"])
        synced = sp.generate([list(b"abcab")], **greedy)[0]["token_ids"]
        assert synced != before
    for _ in range(2):  # a second restart keeps them too
        server.restart()
        with server.http() as http:
            sp.http = http
            assert sp.generate([list(b"abcab")], **greedy)[0]["token_ids"] == synced


def test_the_event_board_keeps_running_streams_and_drops_old_finished_ones() -> None:
    from ct_local.dataplane.boards import EventBoard

    board = EventBoard(limit=2)
    board.open("running")
    board.push("running", {"type": "result", "index": 0})
    board.open("finished")
    board.push("finished", {"type": "done", "completed": 1, "failed": 0})
    board.open("idle")  # a third queue: the oldest finished one ("finished") goes, the running one stays
    assert len(board) == 2
    assert board.drain("finished", 16) == []
    assert board.drain("running", 16) == [{"type": "result", "index": 0}]
    # An empty queue may go as well; a later push opens it again, so nothing is lost.
    board.open("fourth")
    board.open("fifth")
    assert len(board) <= 3
    board.push("idle", {"type": "done", "completed": 0, "failed": 0})
    assert board.drain("idle", 16) == [{"type": "done", "completed": 0, "failed": 0}]

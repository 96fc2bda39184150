"""Request-chunk groups: reassembly, at-most-once execution and the 409 answers."""

from __future__ import annotations

import uuid

import httpx
from ct_testing import wait_until

# Chunk frames this small split a text batch into several chunks (8 KiB is header allowance).
SMALL_CHUNKS = 8192 + 600


def _code(response: httpx.Response) -> str:
    return response.json().get("code", "")


def test_a_multi_chunk_frame_runs_once_and_only_the_last_answer_has_a_request_id(
    dp, text_batch, frame_of, training_server
) -> None:
    dp.start()
    chunks = dp.chunks(frame_of(text_batch(rows=4)), max_bytes=SMALL_CHUNKS)
    assert len(chunks) >= 3
    answers = [dp.post_chunk(c) for c in chunks]
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    assert all("request_id" not in a.json() for a in answers[:-1])
    assert answers[0].json()["received_chunks"] == 1
    request_id = answers[-1].json()["request_id"]
    assert dp.poll(request_id)["metrics"]["num_sequences"] == 4
    assert dp.executions(training_server.base_url) == {"forward-backward": 1}


def test_an_interrupted_upload_replayed_from_chunk_0_runs_once(
    dp, text_batch, frame_of, training_server
) -> None:
    dp.start()
    chunks = dp.chunks(frame_of(text_batch(rows=4)), max_bytes=SMALL_CHUNKS)
    # The connection "drops" after chunk 1; the client replays the whole group from chunk 0.
    for chunk in chunks[:2]:
        assert dp.post_chunk(chunk).status_code == 200
    answers = [dp.post_chunk(c) for c in chunks]
    request_id = answers[-1].json()["request_id"]
    first = dp.poll(request_id)
    # The final answer was lost too: replaying the complete group returns the same execution.
    replayed = [dp.post_chunk(c) for c in chunks]
    assert all(a.status_code == 200 for a in replayed)
    assert replayed[-1].json()["request_id"] == request_id
    assert all("request_id" not in a.json() for a in replayed[:-1])
    assert dp.poll(request_id) == first
    assert dp.executions(training_server.base_url) == {"forward-backward": 1}


def test_unknown_group_must_start_at_chunk_0(dp, text_batch, frame_of) -> None:
    dp.start()
    chunks = dp.chunks(frame_of(text_batch(rows=4)), max_bytes=SMALL_CHUNKS)
    response = dp.post_chunk(chunks[1])
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "chunk_group_restart_required"
    assert body["chunk_group_id"]
    # The client's one replay from chunk 0 then succeeds.
    answers = [dp.post_chunk(c) for c in chunks]
    assert answers[-1].status_code == 200
    assert dp.poll(answers[-1].json()["request_id"])["avg_loss"] > 0


def test_reusing_a_group_for_another_frame_is_a_conflict(dp, text_batch, frame_of) -> None:
    dp.start()
    group = str(uuid.uuid4())
    first = dp.chunks(frame_of(text_batch(rows=2)), group_id=group)
    request_id = dp.post_chunk(first[0]).json()["request_id"]
    other = dp.chunks(frame_of(text_batch(text="another text", rows=2)), group_id=group)
    response = dp.post_chunk(other[0])
    assert response.status_code == 409
    assert _code(response) == "chunk_group_conflict"
    assert response.json()["chunk_group_id"] == group
    assert dp.poll(request_id)["avg_loss"] > 0


def test_a_changed_chunk_payload_is_a_conflict(dp, text_batch, frame_of) -> None:
    from ct_core import wire

    dp.start()
    group = str(uuid.uuid4())
    chunks = dp.chunks(frame_of(text_batch(rows=4)), max_bytes=SMALL_CHUNKS, group_id=group)
    assert dp.post_chunk(chunks[0]).status_code == 200
    # Same descriptor (hash, size, count) but other bytes for chunk 0.
    desc = wire.read_byte_chunk_metadata(chunks[0])
    assert desc is not None
    payload = wire.loads(chunks[0], backend="numpy")["payload"].copy()
    payload[0] ^= 0xFF
    forged = wire.dumps(
        {"payload": payload}, metadata={"request_chunk": {k: v for k, v in desc.items() if k != "kind"}}
    )
    response = dp.post_chunk(forged)
    assert response.status_code == 409
    assert _code(response) == "chunk_group_conflict"


def test_a_final_chunk_with_holes_reports_missing_chunks(dp, text_batch, frame_of) -> None:
    dp.start()
    chunks = dp.chunks(frame_of(text_batch(rows=4)), max_bytes=SMALL_CHUNKS)
    assert dp.post_chunk(chunks[0]).status_code == 200
    response = dp.post_chunk(chunks[-1])
    assert response.status_code == 409
    assert _code(response) == "chunk_group_missing_chunks"
    assert response.json()["message"] == "request chunk group is missing chunks"


def test_plain_frames_and_garbage(dp, text_batch, frame_of) -> None:
    dp.start()
    # An unwrapped frame is accepted too (no idempotency identity, runs once per POST).
    response = dp.http.post(f"{dp.url}/forward-backward", content=frame_of(text_batch()))
    assert dp.poll(response.json()["request_id"])["avg_loss"] > 0
    garbage = dp.http.post(f"{dp.url}/forward-backward", content=b"\x80\x02not a frame")
    rid = garbage.json()["request_id"]
    status = wait_until(
        lambda: (status := dp.status(rid))["status"] not in {"pending", "running"} and status,
        message=f"request {rid} never finished",
    )
    assert status["status"] == "failed"
    assert "not a valid DSSST1 frame" in status["error"]


def test_data_plane_calls_need_a_running_job(dp, text_batch, frame_of) -> None:
    # A job too large for the account stays pending.
    dp.create({"n_gpus": 1000})
    response = dp.post_chunk(dp.chunks(frame_of(text_batch()))[0])
    assert response.status_code == 409
    assert "pending" in response.json()["message"]
    assert dp.http.post(f"{dp.url}/step", json={}).status_code == 409


def test_racing_final_chunks_schedule_one_execution(dp, text_batch, frame_of, training_server) -> None:
    from concurrent.futures import ThreadPoolExecutor

    dp.start()
    chunks = dp.chunks(frame_of(text_batch(rows=4)), max_bytes=SMALL_CHUNKS)
    for chunk in chunks[:-1]:
        assert dp.post_chunk(chunk).status_code == 200

    def post_last(_: int) -> httpx.Response:
        with httpx.Client(timeout=60.0) as client:
            return client.post(f"{dp.url}/forward-backward", content=chunks[-1])

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(post_last, range(4)))
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    assert len({a.json()["request_id"] for a in answers}) == 1
    dp.poll(answers[0].json()["request_id"])
    assert dp.executions(training_server.base_url) == {"forward-backward": 1}

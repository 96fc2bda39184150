"""forward_backward over real HTTP: the request-chunk envelope, chunk groups, replay and conflicts.

The service is tests/core/conftest.py's FakeDataPlane behind a real loopback server; chunk sizes are
made small by lowering the client's chunk limit, so several-chunk groups stay cheap.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

import numpy as np
import pytest

from ct_core import wire
from ct_core.errors import ChunkGroupConflictError, ChunkGroupError, ChunkGroupRestartError, ServerError

SMALL_CHUNK = 24 * 1024


def _frame(n: int = 1000) -> bytes:
    return wire.dumps({"args": (), "kwargs": {"input_ids": np.arange(n, dtype=np.int64).reshape(1, n)}})


def _fwd_bwd_descs(service: Any) -> list[dict[str, Any]]:
    return [body for kind, body in service.bodies if kind == "forward-backward"]


def test_small_frame_is_still_one_request_chunk(dp_client: Any, dataplane: Any) -> None:
    server, service = dataplane
    frame = _frame(10)
    request_id = dp_client.forward_backward("job1", frame)
    assert request_id.startswith("req-fwd-bwd-")
    descs = _fwd_bwd_descs(service)
    assert len(descs) == 1
    assert descs[0]["chunk_idx"] == 0 and descs[0]["total_chunks"] == 1
    assert descs[0]["operation"] == "fwd-bwd"
    assert descs[0]["frame_sha256"] == hashlib.sha256(frame).hexdigest()
    assert service.frames == [frame]
    seen = next(r for r in server.requests if r.path.endswith("/forward-backward"))
    assert seen.path == "/api/v2/databases/DB/schemas/PUBLIC/cortex-training/job1/forward-backward"
    assert seen.headers["Content-Type"] == "application/octet-stream"
    assert int(seen.headers["Content-Length"]) == len(seen.body)


def test_each_call_gets_its_own_group_id(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    dp_client.forward_backward("job1", _frame(10))
    dp_client.forward_backward("job1", _frame(10))
    ids = {desc["chunk_group_id"] for desc in _fwd_bwd_descs(service)}
    assert len(ids) == 2


def test_large_frame_is_split_and_reassembled(make_dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    client = make_dp_client(max_request_chunk_bytes=SMALL_CHUNK)
    frame = _frame(20_000)
    client.forward_backward("job1", frame)
    descs = _fwd_bwd_descs(service)
    assert len(descs) > 3
    assert [d["chunk_idx"] for d in descs] == list(range(len(descs)))
    assert len({d["chunk_group_id"] for d in descs}) == 1
    assert service.frames == [frame]
    # Every chunk frame respects the limit and the peer's decoder agrees with ours.
    import cortex_training.wire as reference

    assert reference.loads(service.frames[0])["kwargs"]["input_ids"].shape == (1, 20_000)


def test_memoryview_and_bytearray_frames(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    frame = _frame(50)
    dp_client.forward_backward("job1", memoryview(frame))
    dp_client.forward_backward("job1", bytearray(frame))
    assert service.frames == [frame, frame]


def test_not_bytes_is_refused(dp_client: Any) -> None:
    with pytest.raises(TypeError, match="DSSST1 frame bytes"):
        dp_client.forward_backward("job1", {"input_ids": [1, 2]})


def test_restart_required_replays_once_from_chunk_zero(
    make_dp_client: Any, dataplane: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _, service = dataplane
    client = make_dp_client(max_request_chunk_bytes=SMALL_CHUNK)
    service.forget_at = [2]
    frame = _frame(20_000)
    with caplog.at_level(logging.WARNING, logger="ct_core"):
        request_id = client.forward_backward("job1", frame)
    assert request_id
    descs = _fwd_bwd_descs(service)
    indexes = [d["chunk_idx"] for d in descs]
    total = descs[0]["total_chunks"]
    # 0, 1, 2 (refused), then the whole group again from 0 under the same id.
    assert indexes == [0, 1, 2, *range(total)]
    assert len({d["chunk_group_id"] for d in descs}) == 1
    assert service.frames == [frame]
    assert sum(service.executions.values()) == 1
    assert "replaying once from chunk 0" in caplog.text


def test_second_restart_raises(make_dp_client: Any, dataplane: Any) -> None:
    _server, service = dataplane
    client = make_dp_client(max_request_chunk_bytes=SMALL_CHUNK)
    service.always_forget_at = 1
    with pytest.raises(ChunkGroupRestartError) as info:
        client.forward_backward("job1", _frame(20_000))
    assert info.value.detail["code"] == "chunk_group_restart_required"
    assert info.value.status_code == 409
    assert isinstance(info.value, ChunkGroupError)
    # Exactly two passes (0, 1) and (0, 1): a chunk-group 409 is never retried blindly.
    assert [d["chunk_idx"] for d in _fwd_bwd_descs(service)] == [0, 1, 0, 1]


def test_conflict_is_raised_at_once(dp_client: Any, dataplane: Any, act: Any) -> None:
    server, _service = dataplane
    body = {"error": json.dumps({"code": "chunk_group_conflict", "message": "group reused with other bytes"})}
    server.script(act(409, body))
    with pytest.raises(ChunkGroupConflictError, match="group reused with other bytes") as info:
        dp_client.forward_backward("job1", _frame(10))
    assert info.value.detail["code"] == "chunk_group_conflict"
    assert len(server.requests) == 1


def test_missing_chunks_message_counts_as_a_chunk_group_error(
    dp_client: Any, dataplane: Any, act: Any
) -> None:
    server, _ = dataplane
    server.script(act(400, {"message": "request chunk group is missing chunks", "chunk_group_id": "g"}))
    with pytest.raises(ChunkGroupConflictError) as info:
        dp_client.forward_backward("job1", _frame(10))
    assert info.value.detail["code"] == "chunk_group_missing_chunks"


def test_transient_failures_of_a_chunk_are_retried_with_the_same_bytes(
    dp_client: Any, dataplane: Any, act: Any, no_sleep: Any
) -> None:
    server, service = dataplane
    frame = _frame(10)
    server.script(act(503, {"message": "busy"}), act(reset=True))
    dp_client.forward_backward("job1", frame)
    posts = [r for r in server.requests if r.path.endswith("/forward-backward")]
    assert len(posts) == 3
    assert posts[0].body == posts[2].body
    assert service.frames == [frame]
    assert len(no_sleep.calls) == 2


def test_a_request_id_before_the_last_chunk_is_an_error(
    make_dp_client: Any, dataplane: Any, act: Any
) -> None:
    server, _ = dataplane
    client = make_dp_client(max_request_chunk_bytes=SMALL_CHUNK)
    server.script(act(200, {"request_id": "early"}))
    with pytest.raises(RuntimeError, match="fwd-bwd chunk 0 unexpectedly returned request_id"):
        client.forward_backward("job1", _frame(20_000))


def test_final_chunk_without_body(dp_client: Any, dataplane: Any, act: Any) -> None:
    server, _ = dataplane
    server.script(act(200, b""))
    with pytest.raises(RuntimeError, match="fwd-bwd produced no request body"):
        dp_client.forward_backward("job1", _frame(10))


def test_persistent_server_error_surfaces(dp_client: Any, dataplane: Any, act: Any) -> None:
    server, _ = dataplane
    server.script(*[act(500, {"message": "boom"}) for _ in range(4)])
    with pytest.raises(ServerError, match="boom"):
        dp_client.forward_backward("job1", _frame(10))


def test_reference_server_side_decoder_reads_our_chunks(dp_client: Any, dataplane: Any) -> None:
    import cortex_training.wire as reference

    server, _ = dataplane
    dp_client.forward_backward("job1", _frame(10))
    body = next(r for r in server.requests if r.path.endswith("/forward-backward")).body
    restored = reference.decode_byte_chunks([body], kind="request")
    assert reference.loads(restored)["kwargs"]["input_ids"].shape == (1, 10)


@pytest.mark.slow
def test_frame_over_60_mib_uses_two_chunks(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    frame = wire.dumps({"x": np.zeros(61 * 1024 * 1024, dtype=np.uint8)})
    dp_client.forward_backward("job1", frame)
    descs = _fwd_bwd_descs(service)
    assert [d["chunk_idx"] for d in descs] == [0, 1]
    assert service.frames[0] == frame


# --- the same chunk-group rules on the other chunked routes (forward, generate) -----------------------


def test_chunk_group_answers_are_never_retried_on_forward_and_generate(
    make_dp_client: Any, dataplane: Any, act: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk-group 409 is an answer about the group: forward and generate chunks raise it at once."""
    server, _service = dataplane
    conflict = {"code": "chunk_group_conflict", "message": "group reused with other bytes"}
    monkeypatch.setenv("CORTEX_TRAINING_FORWARD_OPERATION_MAX_JSON_BYTES", str(16 * 1024))
    server.script(act(409, conflict))
    with pytest.raises(ChunkGroupConflictError, match="group reused"):
        make_dp_client().forward("job1", _frame(8_000))
    assert len(server.requests) == 1

    server.script(act(409, conflict))
    with pytest.raises(ChunkGroupConflictError, match="group reused"):
        make_dp_client(max_request_chunk_bytes=SMALL_CHUNK).generate("job1", ["x" * 60_000])
    assert len(server.requests) == 2
    first_generate_chunk = wire.read_byte_chunk_metadata(server.requests[1].body)
    assert first_generate_chunk is not None and first_generate_chunk["operation"] == "generate"


def test_forward_chunks_replay_once_after_a_lost_group(
    dp_client: Any, dataplane: Any, act: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64

    _server, service = dataplane
    lost = act(409, {"code": "chunk_group_restart_required", "message": "unknown group"})
    seen: list[dict[str, Any]] = []
    lose_at: list[int] = [1]

    def forward_chunk(body: dict[str, Any]) -> Any:
        desc = wire.read_byte_chunk_metadata(base64.b64decode(body["payload"]["payload_b64"]))
        assert desc is not None
        seen.append(desc)
        if lose_at and desc["chunk_idx"] == lose_at[0]:
            lose_at.pop(0)
            return lost
        if desc["chunk_idx"] < desc["total_chunks"] - 1:
            return {"accepted": desc["chunk_idx"]}
        return {"request_id": "req-forward-final", "job_id": "job1"}

    service.operation_answers["forward"] = forward_chunk
    monkeypatch.setenv("CORTEX_TRAINING_FORWARD_OPERATION_MAX_JSON_BYTES", str(16 * 1024))
    frame = _frame(8_000)
    assert dp_client.forward("job1", frame)["request_id"] == "req-forward-final"
    total = seen[0]["total_chunks"]
    assert total > 2
    # 0, 1 (lost), then the whole group again from chunk 0 under the same id.
    assert [d["chunk_idx"] for d in seen] == [0, 1, *range(total)]
    assert len({d["chunk_group_id"] for d in seen}) == 1
    # A second loss of the same group raises instead of looping.
    seen.clear()
    lose_at[:] = [1, 1]
    with pytest.raises(ChunkGroupRestartError):
        dp_client.forward("job1", frame)
    assert [d["chunk_idx"] for d in seen] == [0, 1, 0, 1]

"""poll_request and get_request_status over real HTTP: backoff, result envelopes and result chunks."""

from __future__ import annotations

import base64
import hashlib
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from ct_core import CortexTrainingClient, wire
from ct_core.data.results import (
    MAX_TRACKED_REQUESTS,
    RequestFailedError,
    RequestRegistry,
    RequestTimeoutError,
    ResultDecodeError,
)


def _envelope(value: Any, **extra: Any) -> dict[str, Any]:
    frame = wire.dumps(value)
    return {
        "content_type": "application/octet-stream",
        "encoding": "base64",
        "wire_format": "DSSST1",
        "payload_b64": base64.b64encode(frame).decode(),
        **extra,
    }


def _chunk_events(value: Any, max_bytes: int = 9000) -> list[dict[str, Any]]:
    events = []
    for frame in wire.encode_result_chunks(value, max_bytes=max_bytes):
        events.append(
            {
                "type": "result_chunk",
                "payload_b64": base64.b64encode(frame).decode(),
                "payload_sha256": hashlib.sha256(frame).hexdigest(),
            }
        )
    return events


def _page(status: str, **fields: Any) -> dict[str, Any]:
    return {"request_id": "r", "status": status, "events": [], "next_cursor": "", **fields}


def _polls(server: Any) -> list[dict[str, list[str]]]:
    return [parse_qs(urlsplit(r.path).query) for r in server.requests if "/requests/" in r.path]


def test_backoff_then_done(dp_client: Any, dataplane: Any, no_sleep: Any) -> None:
    _, service = dataplane
    service.pages["r1"] = [
        _page("pending"),
        _page("REQUEST_STATE_RUNNING"),
        _page(None),
        _page("done", result={"x": 1}),
    ]
    assert dp_client.poll_request("job", "r1") == {"x": 1}
    assert no_sleep.calls == pytest.approx([0.5, 0.625, 0.78125])


def test_backoff_is_capped(dataplane: Any, no_sleep: Any) -> None:
    server, service = dataplane
    client = CortexTrainingClient(
        base_url=server.base_url,
        database="D",
        schema="S",
        poll_interval=1.0,
        poll_max_interval=1.5,
        sleep=no_sleep,
    )
    service.pages["r"] = [_page("pending")] * 4 + [_page("succeeded", result={})]
    client.poll_request("job", "r")
    assert no_sleep.calls == pytest.approx([1.0, 1.25, 1.5, 1.5])


@pytest.mark.parametrize("state", ["done", "completed", "succeeded", "REQUEST_STATE_DONE"])
def test_success_without_result_is_empty_dict(dp_client: Any, dataplane: Any, state: str) -> None:
    _, service = dataplane
    service.pages["r"] = [_page(state, result=None)]
    assert dp_client.poll_request("job", "r") == {}


@pytest.mark.parametrize("state", ["failed", "cancelled", "canceled", "REQUEST_STATE_FAILED"])
def test_failed_and_cancelled_raise(dp_client: Any, dataplane: Any, state: str) -> None:
    _, service = dataplane
    service.pages["r9"] = [_page(state, error="CUDA out of memory")]
    with pytest.raises(RuntimeError, match=r"Request r9 ended with state '.*': CUDA out of memory") as info:
        dp_client.poll_request("job", "r9")
    assert isinstance(info.value, RequestFailedError)
    assert info.value.state in ("failed", "cancelled", "canceled")


def test_deadline_raises_timeout(dataplane: Any) -> None:
    server, service = dataplane
    client = CortexTrainingClient(
        base_url=server.base_url, database="D", schema="S", poll_interval=0.01, poll_timeout=0.2
    )
    service.pages["slow"] = [_page("running")]
    with pytest.raises(TimeoutError, match=r"Request slow did not complete within 0\.2s") as info:
        client.poll_request("job", "slow")
    assert isinstance(info.value, RequestTimeoutError)


def test_dssst1_envelope_is_decoded_and_metrics_merged(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    inner = {
        "avg_loss": 2.5,
        "metrics": {"tokens": 10, "shared": "payload"},
        "logits": np.ones((2, 3), np.float32),
    }
    service.pages["r"] = [_page("done", result=_envelope(inner, metrics={"shared": "envelope", "extra": 1}))]
    result = dp_client.poll_request("job", "r")
    assert result["avg_loss"] == 2.5
    assert result["metrics"] == {"tokens": 10, "shared": "envelope", "extra": 1}
    assert tuple(result["logits"].shape) == (2, 3)


def test_payload_metrics_kept_when_envelope_has_none(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    service.pages["r"] = [_page("done", result=_envelope({"metrics": {"a": 1}}))]
    assert dp_client.poll_request("job", "r")["metrics"] == {"a": 1}


def test_bad_envelopes(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    service.pages["a"] = [_page("done", result={**_envelope({}), "encoding": "hex"})]
    service.pages["b"] = [_page("done", result={"wire_format": "DSSST1", "payload_b64": ""})]
    service.pages["c"] = [_page("done", result=_envelope([1, 2]))]
    with pytest.raises(ResultDecodeError, match="must use base64 encoding"):
        dp_client.poll_request("job", "a")
    with pytest.raises(ResultDecodeError, match="missing payload_b64"):
        dp_client.poll_request("job", "b")
    with pytest.raises(ResultDecodeError, match="did not decode to a dict"):
        dp_client.poll_request("job", "c")


def test_result_chunks_drained_through_cursors(dp_client: Any, dataplane: Any, no_sleep: Any) -> None:
    server, service = dataplane
    value = {"avg_loss": 1.0, "metrics": {"m": 1, "k": "payload"}, "big": np.arange(6000, dtype=np.int32)}
    events = _chunk_events(value)
    assert len(events) >= 3
    service.pages["r"] = [
        _page("running"),
        _page("done", events=events[:1], next_cursor="c1"),
        _page("done", events=events[1:2] + events[:1], next_cursor="c2"),  # a duplicate chunk 0
        _page("done", events=events[2:], next_cursor="", result={"metrics": {"k": "envelope"}}),
    ]
    result = dp_client.poll_request("job", "r")
    assert np.array_equal(np.asarray(result["big"]), np.arange(6000, dtype=np.int32))
    assert result["metrics"] == {"m": 1, "k": "envelope"}
    cursors = [query.get("cursor") for query in _polls(server)]
    assert cursors == [None, None, ["c1"], ["c2"]]
    # One backoff sleep after "running"; the draining pages follow at once.
    assert len(no_sleep.calls) == 1


def test_stuck_cursor_backs_off(dp_client: Any, dataplane: Any, no_sleep: Any) -> None:
    _, service = dataplane
    events = _chunk_events({"v": np.arange(4000, dtype=np.int64)})
    service.pages["r"] = [
        _page("running", events=events[:1], next_cursor="same"),
        _page("running", next_cursor="same"),
        _page("running", next_cursor="same"),
        _page("done", events=events[1:], next_cursor=""),
    ]
    result = dp_client.poll_request("job", "r")
    assert len(result["v"]) == 4000
    assert len(no_sleep.calls) == 2  # the two pages that brought nothing new


def test_chunk_checksum_mismatch(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    events = _chunk_events({"v": np.arange(4000, dtype=np.int64)})
    events[0]["payload_sha256"] = "0" * 64
    service.pages["r"] = [_page("done", events=events)]
    with pytest.raises(ResultDecodeError, match="payload_sha256 mismatch"):
        dp_client.poll_request("job", "r")


def test_chunk_without_payload(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    service.pages["r"] = [_page("done", events=[{"type": "result_chunk"}])]
    with pytest.raises(ResultDecodeError, match="result_chunk event missing payload_b64"):
        dp_client.poll_request("job", "r")


def test_reference_encoded_result_chunks_decode(dp_client: Any, dataplane: Any) -> None:
    import torch
    from cortex_training import wire as reference

    _, service = dataplane
    frames = reference.encode_result_chunks({"t": torch.arange(3000)}, max_bytes=9000)
    events = [
        {
            "type": "result_chunk",
            "payload_b64": base64.b64encode(f).decode(),
            "payload_sha256": hashlib.sha256(f).hexdigest(),
        }
        for f in frames
    ]
    service.pages["r"] = [_page("done", events=events)]
    assert dp_client.poll_request("job", "r")["t"].tolist() == list(range(3000))


def test_forward_blob_decoded_only_for_our_requests(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    blob = {"payload_b64": base64.b64encode(wire.dumps({"logprobs": [0.5]})).decode(), "metrics": {"n": 1}}
    service.operation_answers["forward"] = {"request_id": "fw-1"}
    answer = dp_client.forward("job", {"input": 1})
    assert answer == {"request_id": "fw-1"}
    service.pages["fw-1"] = [_page("done", result=dict(blob))]
    service.pages["other"] = [_page("done", result=dict(blob))]
    assert dp_client.poll_request("job", "fw-1") == {"logprobs": [0.5], "metrics": {"n": 1}}
    assert dp_client.poll_request("job", "other") == blob


def test_generate_results_become_lists(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    results = {"results": [{"token_ids": np.array([1, 2], dtype=np.int32), "text": "hi"}]}
    service.pages["g"] = [_page("done", result=_envelope(results))]
    dp_client._ctx.requests.add("g", "generate")
    assert dp_client.poll_request("job", "g") == {"results": [{"token_ids": [1, 2], "text": "hi"}]}


def test_bookkeeping_is_bounded_and_cleared() -> None:
    registry = RequestRegistry(max_entries=3)
    for i in range(10):
        registry.add(f"r{i}", "forward")
    assert len(registry) == 3
    assert registry.kind("r0") is None and registry.kind("r9") == "forward"
    assert MAX_TRACKED_REQUESTS >= 1024


def test_poll_forgets_the_request(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    request_id = dp_client.step("job")
    assert dp_client._ctx.requests.kind(request_id) is None
    fb = dp_client.forward_backward("job", wire.dumps({"x": 1}))
    assert dp_client._ctx.requests.kind(fb) == "fwd-bwd"
    service.pages[fb] = [_page("failed", error="nope")]
    with pytest.raises(RequestFailedError):
        dp_client.poll_request("job", fb)
    assert dp_client._ctx.requests.kind(fb) is None


def test_get_request_status_query_and_event_decoding(dp_client: Any, dataplane: Any) -> None:
    server, service = dataplane
    events = [
        {"type": "result", "index": 0, "result": _envelope({"token_ids": np.array([7, 8])})},
        {"type": "error", "index": 1, "error": "bad prompt"},
    ]
    service.pages["s"] = [_page("streaming", events=events)]
    status = dp_client.get_request_status("job", "s", max_events=64, cursor="abc")
    assert status["events"][0]["result"] == {"token_ids": [7, 8]}
    assert status["events"][1] == {"type": "error", "index": 1, "error": "bad prompt"}
    assert _polls(server)[-1] == {"max_events": ["64"], "cursor": ["abc"]}
    dp_client.get_request_status("job", "s", cursor="")
    assert _polls(server)[-1] == {}
    with pytest.raises(ValueError, match="max_events"):
        dp_client.get_request_status("job", "s", max_events=0)


def test_poll_retries_transient_errors(dp_client: Any, dataplane: Any, act: Any) -> None:
    server, service = dataplane
    service.pages["r"] = [_page("done", result={"ok": 1})]
    server.script(act(502), act(reset=True))
    assert dp_client.poll_request("job", "r") == {"ok": 1}


def test_poll_timing_uses_monotonic_deadline(dataplane: Any) -> None:
    # A done page is returned even when the deadline has passed before the first poll.
    server, service = dataplane
    client = CortexTrainingClient(base_url=server.base_url, database="D", schema="S", poll_timeout=0.001)
    time.sleep(0.01)
    service.pages["r"] = [_page("done", result={"v": 1})]
    assert client.poll_request("job", "r") == {"v": 1}


class ScriptedWaiter:
    """A request waiter (see CortexTrainingClient's `request_waiter`) answering from a script."""

    def __init__(self, *answers: bool) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, float]] = []

    def __call__(self, request_id: str, seconds: float) -> bool:
        self.calls.append((request_id, seconds))
        return self.answers.pop(0)


def _waiting_client(
    server: Any, waiter: ScriptedWaiter, sleep: Any, interval: float = 0.5, max_interval: float = 2.0
) -> CortexTrainingClient:
    return CortexTrainingClient(
        base_url=server.base_url,
        database="D",
        schema="S",
        poll_interval=interval,
        poll_max_interval=max_interval,
        sleep=sleep,
        request_waiter=waiter,
    )


def test_a_waiter_is_asked_before_the_first_read_and_one_read_follows(dataplane: Any, no_sleep: Any) -> None:
    server, service = dataplane
    waiter = ScriptedWaiter(True)
    service.pages["w1"] = [_page("done", result={"x": 1})]
    with _waiting_client(server, waiter, no_sleep) as client:
        assert client.poll_request("job", "w1") == {"x": 1}
    assert waiter.calls == [("w1", 2.0)] and no_sleep.calls == []
    assert len(_polls(server)) == 1


def test_a_waiter_that_times_out_is_asked_again_after_each_read(dataplane: Any, no_sleep: Any) -> None:
    server, service = dataplane
    waiter = ScriptedWaiter(False, False, True)
    service.pages["w2"] = [_page("running"), _page("running"), _page("done", result={})]
    with _waiting_client(server, waiter, no_sleep) as client:
        client.poll_request("job", "w2")
    # Each wait is one call of up to the longest interval; nothing sleeps in between.
    assert waiter.calls == [("w2", 2.0)] * 3 and no_sleep.calls == []
    assert len(_polls(server)) == 3


def test_a_waiter_that_answers_early_is_not_trusted_twice(dataplane: Any, no_sleep: Any) -> None:
    """A waiter that says the request ended while the server still runs it (it does not know the
    request, say) is asked once: the reads that follow keep the sleep schedule, never a busy loop."""
    server, service = dataplane
    waiter = ScriptedWaiter(True)
    service.pages["w3"] = [_page("running"), _page("running"), _page("done", result={})]
    with _waiting_client(server, waiter, no_sleep) as client:
        client.poll_request("job", "w3")
    assert waiter.calls == [("w3", 2.0)]
    assert no_sleep.calls == pytest.approx([0.5, 0.625])


def test_a_waiter_waits_a_second_at_least_however_short_the_polling(dataplane: Any, no_sleep: Any) -> None:
    """A request that runs for seconds is not read every `poll_max_interval`: the waiter ends its
    wait when the request ends, so the reads in between would only cost the server."""
    from ct_core.control.polling import SIGNALLED_RECHECK_S

    server, service = dataplane
    waiter = ScriptedWaiter(False, True)
    service.pages["w4"] = [_page("running"), _page("done", result={})]
    with _waiting_client(server, waiter, no_sleep, interval=0.01, max_interval=0.05) as client:
        client.poll_request("job", "w4")
    assert waiter.calls == [("w4", SIGNALLED_RECHECK_S)] * 2 and SIGNALLED_RECHECK_S == 1.0
    assert len(_polls(server)) == 2

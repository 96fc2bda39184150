"""Client-side rules of generation with no server: prompt shapes, packing, the sampling window."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ct_core import wire
from ct_core.data.generate import (
    build_logical_request,
    normalize_prompts,
    sampling_max_seq_len,
    tensor_prompts_enabled,
)


def _plain(prompts: list[object]) -> list[object]:
    return [p if isinstance(p, str) else p.tolist() for p in prompts]  # type: ignore[attr-defined]


def test_prompt_shapes() -> None:
    assert _plain(normalize_prompts([1, 2, 3])) == [[1, 2, 3]]
    assert _plain(normalize_prompts(np.array([1, 2], dtype=np.int64))) == [[1, 2]]
    assert _plain(normalize_prompts([[1, 2], [3]])) == [[1, 2], [3]]
    assert _plain(normalize_prompts(["a", [1], np.array([2, 3]), (4, 5)])) == ["a", [1], [2, 3], [4, 5]]
    with pytest.raises(TypeError):
        normalize_prompts([[2**70]])
    with pytest.raises(TypeError):
        normalize_prompts([b"bytes"])
    with pytest.raises(TypeError, match="wrap a single string"):
        normalize_prompts("hello")
    with pytest.raises(ValueError, match="non-empty"):
        normalize_prompts([])
    with pytest.raises(ValueError, match="empty"):
        normalize_prompts([[]])
    with pytest.raises(ValueError, match="1-D"):
        normalize_prompts([np.zeros((2, 2), dtype=np.int32)])
    with pytest.raises(TypeError, match="token ids"):
        normalize_prompts([[1.5]])
    # int32 when every id fits, int64 otherwise.
    assert normalize_prompts([[1, 2]])[0].dtype == np.int32
    assert normalize_prompts([[1, 2**40]])[0].dtype == np.int64


def test_packing_int32_then_int64_and_json_lists() -> None:
    logical = build_logical_request([[1, 2], [2**31], "s"], {"max_tokens": 3}, "k", False, tensors=True)
    assert logical["prompts"][0].dtype == np.int32
    assert logical["prompts"][1].dtype == np.int64
    assert logical == {**logical, "sampling_params": {"max_tokens": 3}, "routing_key": "k", "strict": False}
    frame = wire.dumps(logical)
    back = wire.loads(frame, backend="numpy")
    assert back["prompts"][0].tolist() == [1, 2] and back["prompts"][2] == "s"
    plain = build_logical_request([[1, 2]], None, None, None, tensors=False)
    assert plain == {"prompts": [[1, 2]]}
    with pytest.raises(ValueError, match="2 entries for 1 prompts"):
        build_logical_request([[1]], [{}, {}], None, None, tensors=True)
    with pytest.raises(ValueError, match="routing_key has 3 entries"):
        build_logical_request([[1]], None, ["a", "b", "c"], None, tensors=True)


@pytest.mark.parametrize(
    ("value", "enabled"), [("", True), ("0", True), ("1", False), ("TRUE", False), ("yes", False)]
)
def test_disable_env(monkeypatch: pytest.MonkeyPatch, value: str, enabled: bool) -> None:
    monkeypatch.setenv("CORTEX_TRAINING_DISABLE_TENSOR_PROMPTS", value)
    assert tensor_prompts_enabled() is enabled


def test_window_comes_from_the_sampling_sub_job() -> None:
    # A log-probability sub-job carrying an inference_config is listed first; it must not count.
    job = {
        "sub_jobs": [
            {
                "sub_job_id": "j:log_probability:0",
                "job_type": "log_probability",
                "inference_config": {"max_seq_len": 8},
            },
            {
                "sub_job_id": "j:sampling:0",
                "job_type": "sampling",
                "inference_config": {"max_seq_len": 2048.0},
            },
            {"sub_job_id": "j:sampling:1", "job_type": "SAMPLING", "inference_config": {"max_seq_len": 16}},
        ]
    }
    assert sampling_max_seq_len(job, None) == 2048
    assert sampling_max_seq_len(job, "j:sampling:1") == 16
    assert sampling_max_seq_len(job, "j:other") is None
    assert sampling_max_seq_len({"sub_jobs": []}, None) is None


def test_remembered_windows_are_bounded(
    monkeypatch: pytest.MonkeyPatch, misbehaving_server: Any, act: Any
) -> None:
    # A client that samples from many jobs keeps only the most recent sampling windows.
    from ct_core import CortexTrainingClient
    from ct_core.data import generate as _generate

    monkeypatch.setattr(_generate, "MAX_CACHED_WINDOWS", 2)
    sampler = {"job_type": "sampling", "inference_config": {"max_seq_len": 32}}
    misbehaving_server.responder = lambda seen: act(200, {"status": "running", "sub_jobs": [sampler]})
    with CortexTrainingClient(base_url=misbehaving_server.base_url, database="D", schema="S") as client:
        for job_id in ("a", "b", "a", "c", "a", "b"):
            # The window (32) refuses a 32-token prompt before anything is posted.
            with pytest.raises(ValueError, match="max_seq_len of 32"):
                client.generate(job_id, [[1] * 32])
    looked_up = [seen.path.rsplit("/", 1)[-1] for seen in misbehaving_server.requests]
    assert all(seen.method == "GET" for seen in misbehaving_server.requests)
    # "a" stays (used again before "c" arrived); "b" was the least recent one when "c" came in.
    assert looked_up == ["a", "b", "c", "b"]


def test_what_goes_on_the_wire(misbehaving_server: Any, act: Any) -> None:
    """Both calls post one DSSST1 frame (never JSON); sub_job_id rides in the query only."""
    from urllib.parse import parse_qs, urlsplit

    from ct_core import CortexTrainingClient

    server = misbehaving_server
    sampler = {"sub_job_id": "j:sampling:1", "job_type": "sampling", "inference_config": {"max_seq_len": 8}}
    server.script(
        act(200, {"job_id": "j", "status": "running", "sub_jobs": [sampler]}),
        act(200, {"request_id": "r1", "job_id": "j"}),
        act(200, {"request_id": "r2", "job_id": "j", "count": 2}),
    )
    with CortexTrainingClient(base_url=server.base_url, database="D", schema="S") as client:
        assert (
            client.generate("j", [[1, 2]], {"max_tokens": 2}, "key", True, sub_job_id="j:sampling:1") == "r1"
        )
        started = client.generate_stream("j", ["a", [3]], sub_job_id="j:sampling:1")
        assert started == {"request_id": "r2", "job_id": "j", "count": 2}
        # The cached window (8, from the named sampler) refuses a long prompt without another lookup.
        with pytest.raises(ValueError, match="max_seq_len of 8"):
            client.generate("j", [list(range(8))], sub_job_id="j:sampling:1")
    lookup, plain, stream = server.requests
    assert lookup.method == "GET" and len(server.requests) == 3
    for seen, tail in ((plain, "/j/generate"), (stream, "/j/generate-stream")):
        url = urlsplit(seen.path)
        assert url.path.endswith(tail)
        assert parse_qs(url.query) == {"sub_job_id": ["j:sampling:1"]}
        assert seen.headers["Content-Type"] == "application/octet-stream"
        assert wire.read_byte_chunk_metadata(seen.body) is None  # small frames travel unwrapped
        assert wire.read_metadata(seen.body)["response_options"] == {
            "format": "dssst1",
            "delivery": "chunked",
        }
    logical = wire.loads(plain.body, backend="numpy")
    assert set(logical) == {"prompts", "sampling_params", "routing_key", "strict"}
    assert logical["prompts"][0].dtype == np.int32 and logical["routing_key"] == "key"
    streamed = wire.loads(stream.body, backend="numpy")
    assert set(streamed) == {"prompts"} and streamed["prompts"][0] == "a"
    assert streamed["prompts"][1].tolist() == [3]


def _stream_page(
    status: str, events: list[dict[str, object]] | None = None, error: str = ""
) -> dict[str, object]:
    return {"request_id": "s", "status": status, "events": events or [], "next_cursor": "", "error": error}


def test_stream_iterator_ends_on_a_drained_finished_request(dp_client: Any, dataplane: Any) -> None:
    """An earlier poll took the done event: a finished, empty stream ends instead of waiting 30 min."""
    _, service = dataplane
    result = {"type": "result", "index": 0, "result": {"text": "a"}}
    service.pages["s"] = [_stream_page("running", [result]), _stream_page("REQUEST_STATE_DONE")]
    assert list(dp_client.iter_generate_events("job", "s")) == [result]
    # The done event ends the iteration even when the request still reads running.
    done = {"type": "done", "completed": 1, "failed": 0}
    service.pages["t"] = [_stream_page("running", [result, done]), _stream_page("running")]
    assert list(dp_client.iter_generate_events("job", "t")) == [result, done]


@pytest.mark.parametrize("state", ["failed", "CANCELED", "REQUEST_STATE_CANCELLED"])
def test_stream_iterator_raises_for_a_failed_stream(dp_client: Any, dataplane: Any, state: str) -> None:
    from ct_core.data.results import RequestFailedError

    _, service = dataplane
    service.pages["s"] = [_stream_page("pending"), _stream_page(state, error="worker lost")]
    with pytest.raises(RequestFailedError, match="worker lost") as failed:
        list(dp_client.iter_generate_events("job", "s"))
    assert failed.value.state in {"failed", "canceled", "cancelled"}


@pytest.mark.parametrize("call", ["generate", "generate_stream"])
def test_a_generate_post_is_resent_only_when_it_surely_did_not_run(
    dp_client: Any, dataplane: Any, act: Any, call: str
) -> None:
    """A 503 proves nothing ran and is retried; a 502 may have run and is raised."""
    from ct_core.errors import APIError

    server, _ = dataplane
    server.script(act(503), act(200, {"request_id": "r1", "job_id": "job", "count": 1}))
    answer = getattr(dp_client, call)("job", ["a"])
    assert answer in ("r1", {"request_id": "r1", "job_id": "job", "count": 1})
    sent = [seen for seen in server.requests if seen.method == "POST"]
    assert len(sent) == 2 and sent[0].body == sent[1].body
    server.requests.clear()
    server.script(act(502), act(200, {"request_id": "r2", "job_id": "job", "count": 1}))
    with pytest.raises(APIError) as refused:
        getattr(dp_client, call)("job", ["a"])
    assert refused.value.status_code == 502
    assert len([seen for seen in server.requests if seen.method == "POST"]) == 1

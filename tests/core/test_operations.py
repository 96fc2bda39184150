"""step/save/load bodies, the generic operation envelope and live logs, over real HTTP."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
import pytest

from ct_core import wire
from ct_core.data import operations as _operations
from ct_core.data.logs import LogsUnavailableError, UnknownSubJobError
from ct_core.data.plane import checkpoint_id_from_save_result, normalize_checkpoint_type
from ct_core.errors import ConfigError, ServerError


def _bodies(service: Any, kind: str) -> list[Any]:
    return [body for name, body in service.bodies if name == kind]


def _ops(service: Any) -> list[dict[str, Any]]:
    return _bodies(service, "operation")


# --- step, save, load --------------------------------------------------------------------------


def test_step_bodies(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    assert dp_client.step("job").startswith("req-step-")
    dp_client.step("job", learning_rate=2e-5)
    dp_client.step("job", 0)
    assert _bodies(service, "step") == [{}, {"learning_rate": 2e-5}, {"learning_rate": 0.0}]
    for bad in (-1.0, float("nan"), True, "0.1"):
        with pytest.raises(ValueError, match="learning_rate"):
            dp_client.step("job", bad)


def test_save_normalizes_type_and_never_sends_checkpoint_id(
    dp_client: Any, dataplane: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _, service = dataplane
    dp_client.save("job")
    dp_client.save("job", checkpoint_type=" Weights-Only ")
    with caplog.at_level("WARNING", logger="ct_core"):
        dp_client.save("job", checkpoint_id="mine", checkpoint_type="RESUMABLE")
    assert _bodies(service, "save") == [
        {},
        {"checkpoint_type": "weights-only"},
        {"checkpoint_type": "resumable"},
    ]
    assert "ignores this one" in caplog.text
    for bad in ("full", 3, None.__class__):
        with pytest.raises(ValueError, match="checkpoint_type must be 'resumable' or 'weights-only'"):
            normalize_checkpoint_type(bad)


def test_checkpoint_id_from_save_result() -> None:
    result = {
        "job_id": "job:training:0",
        "stage_path": "s3://stage/x/checkpoints/cp_00000000-0000-4000-8000-000000000001/global_step1/",
        "checkpoint_tag": "global_step1",
    }
    assert checkpoint_id_from_save_result(result) == "cp_00000000-0000-4000-8000-000000000001"
    assert checkpoint_id_from_save_result({"checkpoint_id": "cp_1"}) == "cp_1"
    with pytest.raises(ValueError, match="list_checkpoints"):
        checkpoint_id_from_save_result({"stage_path": "/tmp/x"})


def test_load_bodies(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    dp_client.load("job", "cp_1")
    dp_client.load("job", "cp_2", "other-job", target_sub_job_id="job:training:0")
    assert _bodies(service, "load") == [
        {"checkpoint_id": "cp_1"},
        {"checkpoint_id": "cp_2", "source_job_id": "other-job", "target_sub_job_id": "job:training:0"},
    ]
    with pytest.raises(ValueError):
        dp_client.load("job", "")


def test_non_idempotent_posts_are_not_repeated_after_a_server_error(
    dp_client: Any, dataplane: Any, act: Any
) -> None:
    server, _service = dataplane
    server.script(act(500, {"message": "boom"}))
    with pytest.raises(ServerError):
        dp_client.step("job")
    assert len([r for r in server.requests if r.path.endswith("/step")]) == 1
    # 503 and 429 prove nothing ran: those are retried.
    server.script(act(503), act(429))
    assert dp_client.step("job")
    assert len([r for r in server.requests if r.path.endswith("/step")]) == 4


def test_scheduling_answer_without_request_id(dp_client: Any, dataplane: Any, act: Any) -> None:
    server, _ = dataplane
    server.script(act(200, {"job_id": "job"}))
    with pytest.raises(RuntimeError, match="no request_id"):
        dp_client.save("job")


# --- the operation envelope ----------------------------------------------------------------------


def test_forward_dict_and_small_frame(
    dp_client: Any, dataplane: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _, service = dataplane
    dp_client.forward("job", {"a": 1}, sub_job_id="job:training:0", sub_job_type="training")
    frame = wire.dumps({"x": [1, 2, 3]})
    answer = dp_client.fwd_no_grad("job", frame)
    dp_client.fwd("job")
    first, second, third = _ops(service)
    assert first == {
        "operation_type": "forward",
        "sub_job_id": "job:training:0",
        "sub_job_type": "training",
        "payload": {"a": 1},
    }
    assert second["operation_type"] == "forward"
    assert base64.b64decode(second["payload"]["payload_b64"]) == frame
    assert second["payload"]["content_type"] == "application/octet-stream"
    assert third == {"operation_type": "forward"}
    assert answer["request_id"].startswith("req-forward-")
    assert capsys.readouterr().out == ""  # nothing printed


def test_forward_frame_above_ceiling_is_chunked(
    dp_client: Any, dataplane: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, service = dataplane
    monkeypatch.setenv(_operations.ENV_FORWARD_MAX_JSON_BYTES, str(16 * 1024))
    frame = wire.dumps({"blob": np.arange(60_000, dtype=np.uint8)})
    service.operation_answers["forward"] = _forward_chunk_answer
    answer = dp_client.forward("job", frame, sub_job_id="job:training:0")
    posts = [r for r in server.requests if r.path.endswith("/operation")]
    assert len(posts) > 2
    assert all(len(r.body) <= 16 * 1024 for r in posts)
    chunks = [base64.b64decode(json.loads(r.body)["payload"]["payload_b64"]) for r in posts]
    metas = [wire.read_byte_chunk_metadata(c) for c in chunks]
    assert {m["operation"] for m in metas} == {"forward"}
    assert wire.decode_byte_chunks(chunks, kind="request") == frame
    assert answer["request_id"] == "fwd-final"


def _forward_chunk_answer(body: dict[str, Any]) -> dict[str, Any]:
    chunk = base64.b64decode(body["payload"]["payload_b64"])
    desc = wire.read_byte_chunk_metadata(chunk)
    assert desc is not None
    last = desc["chunk_idx"] == desc["total_chunks"] - 1
    return {"request_id": "fwd-final"} if last else {"accepted": desc["chunk_idx"]}


def test_forward_ceiling_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_operations.ENV_FORWARD_MAX_JSON_BYTES, raising=False)
    assert _operations.forward_max_json_bytes() == 16 * 1024 * 1024
    monkeypatch.setenv(_operations.ENV_FORWARD_MAX_JSON_BYTES, "  ")
    assert _operations.forward_max_json_bytes() == 16 * 1024 * 1024
    monkeypatch.setenv(_operations.ENV_FORWARD_MAX_JSON_BYTES, "100")
    with pytest.raises(ConfigError, match="at least 16384"):
        _operations.forward_max_json_bytes()
    monkeypatch.setenv(_operations.ENV_FORWARD_MAX_JSON_BYTES, "lots")
    with pytest.raises(ConfigError, match="whole number"):
        _operations.forward_max_json_bytes()


def test_forward_fit_arithmetic() -> None:
    for ceiling in (16 * 1024, 100_000, 16 * 1024 * 1024):
        biggest = _operations.max_frame_bytes_for(ceiling, sub_job_id="j:training:0", sub_job_type=None)
        body = _operations.envelope("forward", b"x" * biggest, sub_job_id="j:training:0")
        assert _operations.json_size(body) <= ceiling
        assert _operations.forward_fits(biggest, ceiling, sub_job_id="j:training:0", sub_job_type=None)


def test_weight_sync(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    request_id = dp_client.weight_sync("job", "job:training:0", ["job:sampling:0"], weight_format="LoRA")
    assert request_id.startswith("req-weight-sync-")
    dp_client.weight_sync(
        "job", "job:training:0", "job:sampling:1", sub_job_id="x", sub_job_type="training", bucket_size=1024
    )
    first, second = _ops(service)
    assert first == {
        "operation_type": "weight-sync",
        "sub_job_id": "job:training:0",
        "sub_job_type": "training",
        "payload": {
            "source_sub_job_id": "job:training:0",
            "target_sub_job_ids": ["job:sampling:0"],
            "weight_format": "lora",
        },
    }
    assert second["sub_job_id"] == "x"
    assert second["payload"]["target_sub_job_ids"] == ["job:sampling:1"]
    assert second["payload"]["bucket_size"] == 1024
    with pytest.raises(ValueError, match="weight_format"):
        dp_client.weight_sync("job", "s", ["t"], weight_format="onnx")
    with pytest.raises(ValueError, match="bucket_size must be positive"):
        dp_client.weight_sync("job", "s", ["t"], bucket_size=0)
    service.operation_answers["weight-sync"] = {"targets": [], "done": True}
    assert dp_client.weight_sync("job", "s", ["t"]) == {"targets": [], "done": True}


def test_router_replay_and_prefix_cache_payloads(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    service.operation_answers.update(
        {
            "bootstrap-router-replay": {"sampling_job_id": "zone-7"},
            "router-replay-discard": {"discarded": 2},
            "reset-prefix-cache": {"reset": True},
            "cancel-request": {"cancelled": True},
        }
    )
    assert dp_client.bootstrap_router_replay(
        "job", "job:sampling:0", "job:training:0", max_cache_bytes=4096, sub_job_id="job:training:0"
    ) == {"sampling_job_id": "zone-7"}
    dp_client.bootstrap_router_replay("job", "job:sampling:0", "job:training:0")
    dp_client.router_replay_discard("job", ["a", "b"], sub_job_id="job:sampling:0", sub_job_type="sampling")
    dp_client.router_replay_discard("job", ["a"], extra={"sample_ids": ["z"], "future": 1})
    dp_client.router_replay_discard("job")
    dp_client.reset_prefix_cache("job", sub_job_id="job:sampling:0")
    dp_client.reset_prefix_cache("job", extra={"drain": False, "new_field": 3})
    assert dp_client.cancel_request("job", "req-1") == {"cancelled": True}
    ops = _ops(service)
    assert ops[0]["payload"] == {
        "source_sub_job_id": "job:sampling:0",
        "target_sub_job_id": "job:training:0",
        "max_cache_bytes": 4096,
    }
    assert ops[0]["sub_job_id"] == "job:training:0"
    assert "max_cache_bytes" not in ops[1]["payload"] and "sub_job_id" not in ops[1]
    assert ops[2]["payload"] == {"sample_ids": ["a", "b"]}
    assert ops[3]["payload"] == {"sample_ids": ["z"], "future": 1}
    assert ops[4]["payload"] == {"sample_ids": []}
    assert ops[5] == {
        "operation_type": "reset-prefix-cache",
        "sub_job_id": "job:sampling:0",
        "sub_job_type": "sampling",
        "payload": {"drain": True, "timeout_s": 60.0, "retry_interval_s": 0.1},
    }
    assert ops[6]["payload"] == {"drain": False, "new_field": 3, "timeout_s": 60.0, "retry_interval_s": 0.1}
    assert ops[7] == {"operation_type": "cancel-request", "payload": {"request_id": "req-1"}}


# --- live logs -----------------------------------------------------------------------------------


class _Tail:
    """tail-logs answers: pages in order, then `after` (an Action or a page) forever."""

    def __init__(self, pages: list[Any], after: Any) -> None:
        self.pages = list(pages)
        self.after = after
        self.payloads: list[Any] = []

    def __call__(self, body: dict[str, Any]) -> Any:
        self.payloads.append(body.get("payload"))
        return self.pages.pop(0) if self.pages else self.after


def _entries(*lines: str) -> list[dict[str, str]]:
    return [{"_raw": f"2026-01-01T00:00:00.000000000Z {line}"} for line in lines]


def test_tail_logs_payloads(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    tail = _Tail([], {"entries": _entries("a"), "next_cursor": "c1", "eof": False})
    service.operation_answers["tail-logs"] = tail
    page = dp_client.tail_logs("job", max_lines=50, sub_job_id="job:training:0")
    assert page["next_cursor"] == "c1"
    dp_client.tail_logs("job", cursor="c1")
    assert tail.payloads == [{"max_lines": 50}, {"cursor": "c1"}]
    assert _ops(service)[0]["sub_job_id"] == "job:training:0"
    with pytest.raises(ValueError, match="max_lines"):
        dp_client.tail_logs("job", max_lines=0)


@pytest.mark.parametrize("status", [404, 409, 410])
def test_tail_logs_after_the_job_ended(dp_client: Any, dataplane: Any, act: Any, status: int) -> None:
    server, service = dataplane
    service.job["status"] = "JOB_STATE_CANCELLED"
    service.operation_answers["tail-logs"] = _Tail([], act(status, {"message": "pod gone"}))
    with pytest.raises(LogsUnavailableError, match=r"download-log job --log-type stdout"):
        dp_client.tail_logs("job")
    assert len([r for r in server.requests if r.path.endswith("/operation")]) == 1
    # One read chooses the training sub-job (the job has two), one explains the refused tail.
    assert service.job_reads == 2
    assert _ops(service)[0]["sub_job_id"] == "job:training:0"


def test_tail_logs_unknown_sub_job_lists_the_real_ones(dp_client: Any, dataplane: Any, act: Any) -> None:
    _, service = dataplane
    service.operation_answers["tail-logs"] = _Tail([], act(404, {"message": "no such sub-job"}))
    with pytest.raises(UnknownSubJobError, match="job:training:0, job:sampling:0") as info:
        dp_client.tail_logs("job", sub_job_id="job:training:9")
    assert info.value.sub_job_ids == ["job:training:0", "job:sampling:0"]


def test_tail_logs_while_starting_keeps_retrying(dp_client: Any, dataplane: Any, act: Any) -> None:
    _, service = dataplane
    service.job["status"] = "placing"
    ok = {"entries": [], "next_cursor": "", "eof": False}
    service.operation_answers["tail-logs"] = _Tail([act(404, {}), act(409, {})], ok)
    assert dp_client.tail_logs("job") == ok
    # One read chooses the training sub-job, one on the first refused tail; none after.
    assert service.job_reads == 2


def test_stream_logs_follow_false_stops_when_caught_up(dp_client: Any, dataplane: Any, no_sleep: Any) -> None:
    _, service = dataplane
    tail = _Tail(
        [
            {"entries": _entries("one", "two"), "next_cursor": "c1", "eof": False},
            {"entries": _entries("three"), "next_cursor": "", "eof": False},  # an empty cursor is ignored
        ],
        {"entries": [], "next_cursor": "c9", "eof": False},
    )
    service.operation_answers["tail-logs"] = tail
    stream = dp_client.stream_logs("job", follow=False, max_lines=10)
    assert tail.payloads == []  # lazy: nothing is read before iteration
    lines = [entry["_raw"].split(" ", 1)[1] for entry in stream]
    assert lines == ["one", "two", "three"]
    assert tail.payloads == [
        {"max_lines": 10},
        {"cursor": "c1", "max_lines": 10},
        {"cursor": "c1", "max_lines": 10},
    ]
    assert no_sleep.calls == []


def test_stream_logs_follow_backs_off_and_stops_at_eof(dp_client: Any, dataplane: Any, no_sleep: Any) -> None:
    _, service = dataplane
    empty = {"entries": [], "next_cursor": "c1", "eof": False}
    tail = _Tail(
        [
            {"entries": _entries("a"), "next_cursor": "c1"},
            empty,
            empty,
            empty,
            {"entries": _entries("b")},
            empty,
        ],
        {"entries": [], "eof": True},
    )
    service.operation_answers["tail-logs"] = tail
    assert len(list(dp_client.stream_logs("job", poll_interval=1.0))) == 2
    assert no_sleep.calls == pytest.approx([1.0, 1.25, 1.5625, 1.0])


def test_stream_logs_ends_quietly_when_the_job_ends(dp_client: Any, dataplane: Any, act: Any) -> None:
    _, service = dataplane
    gone = act(410, {"message": "gone"})
    service.operation_answers["tail-logs"] = _Tail(
        [{"entries": _entries("last words"), "next_cursor": "c"}], gone
    )
    service.job["status"] = "terminated"
    assert len(list(dp_client.stream_logs("job"))) == 1


def test_stream_logs_on_an_ended_job_raises_before_reading(dp_client: Any, dataplane: Any, act: Any) -> None:
    _, service = dataplane
    service.job["status"] = "failed"
    service.operation_answers["tail-logs"] = _Tail([], act(404, {}))
    with pytest.raises(LogsUnavailableError):
        next(dp_client.stream_logs("job"))


def test_stream_logs_can_be_closed(dp_client: Any, dataplane: Any) -> None:
    _, service = dataplane
    service.operation_answers["tail-logs"] = _Tail([], {"entries": _entries("x", "y"), "next_cursor": "c"})
    stream = dp_client.stream_logs("job")
    assert next(stream)["_raw"].endswith("x")
    stream.close()
    with pytest.raises(StopIteration):
        next(stream)


# --- zone events: gated behind CORTEX_TRAINING_EXPERIMENTAL ------------------------------------------


def test_zone_events_are_refused_without_the_opt_in(
    dp_client: Any, dataplane: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ct_core.errors import ExperimentalFeatureError

    _, service = dataplane
    for value in (None, "", "tail_logs,custom_code"):
        if value is None:
            monkeypatch.delenv("CORTEX_TRAINING_EXPERIMENTAL", raising=False)
        else:
            monkeypatch.setenv("CORTEX_TRAINING_EXPERIMENTAL", value)
        with pytest.raises(ExperimentalFeatureError) as info:
            dp_client.tail_events("job")
        assert info.value.feature == "zone_events"
        assert str(info.value) == (
            "tail_events() is experimental and not supported. To use it anyway (internal use only), "
            "set CORTEX_TRAINING_EXPERIMENTAL=zone_events"
        )
        # The stream refuses when it is created, before any iteration.
        with pytest.raises(ExperimentalFeatureError, match=r"^stream_events\(\) is experimental"):
            dp_client.stream_events("job")
    assert _ops(service) == []


def test_tail_events_with_the_opt_in_sends_zmd_events(
    dp_client: Any, dataplane: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, service = dataplane
    page = {"events": [{"type": "placed"}], "next_cursor": "e1", "eof": False}
    tail = _Tail([], page)
    service.operation_answers["zmd-events"] = tail
    for value in ("zone_events", " Other , ZONE_EVENTS ", "all", "*"):
        monkeypatch.setenv("CORTEX_TRAINING_EXPERIMENTAL", value)
        assert dp_client.tail_events("job") == page
    dp_client.tail_events("job", cursor="e1", max_events=5, sub_job_id="job:training:0")
    assert tail.payloads == [None, None, None, None, {"cursor": "e1", "max_events": 5}]
    assert _ops(service)[0] == {"operation_type": "zmd-events"}
    assert _ops(service)[-1]["sub_job_id"] == "job:training:0"
    for bad in (0, -1, True, "5"):
        with pytest.raises(ValueError, match="max_events must be a positive integer"):
            dp_client.tail_events("job", max_events=bad)


def test_stream_events_pages_through_cursors(
    dp_client: Any, dataplane: Any, monkeypatch: pytest.MonkeyPatch, no_sleep: Any
) -> None:
    _, service = dataplane
    monkeypatch.setenv("CORTEX_TRAINING_EXPERIMENTAL", "zone_events")
    tail = _Tail(
        [
            {"events": [{"n": 1}, {"n": 2}], "next_cursor": "e1", "eof": False},
            {"events": [{"n": 3}], "next_cursor": "", "eof": False},
        ],
        {"events": [], "next_cursor": "e9", "eof": False},
    )
    service.operation_answers["zmd-events"] = tail
    assert [event["n"] for event in dp_client.stream_events("job", follow=False, max_events=2)] == [1, 2, 3]
    assert tail.payloads == [
        {"max_events": 2},
        {"cursor": "e1", "max_events": 2},
        {"cursor": "e1", "max_events": 2},
    ]
    assert no_sleep.calls == []
    with pytest.raises(ValueError, match="poll_interval"):
        dp_client.stream_events("job", poll_interval=0)


def test_experimental_feature_names_are_checked() -> None:
    from ct_core.config.experimental import experimental_enabled

    for bad in ("Zone", "all", "*", "9x", ""):
        with pytest.raises(ValueError, match="lower_snake_case"):
            experimental_enabled(bad)


def test_no_operation_prints_anything(
    dp_client: Any, dataplane: Any, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """The reference printed every operation body to stdout; ours log at DEBUG without payloads."""
    _, service = dataplane
    service.operation_answers["tail-logs"] = {"entries": [], "next_cursor": "", "eof": True}
    secret_frame = wire.dumps({"secret": "do-not-log-me"})
    with caplog.at_level("DEBUG", logger="ct_core"):
        dp_client.forward("job", secret_frame)
        dp_client.weight_sync("job", "job:training:0", ["job:sampling:0"])
        dp_client.bootstrap_router_replay("job", "job:sampling:0", "job:training:0")
        dp_client.router_replay_discard("job", ["s"])
        dp_client.reset_prefix_cache("job")
        dp_client.cancel_request("job", "r1")
        dp_client.tail_logs("job")
        list(dp_client.stream_logs("job", follow=False))
        dp_client.step("job")
        dp_client.forward_backward("job", secret_frame)
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""
    assert base64.b64encode(secret_frame).decode() not in caplog.text
    assert "do-not-log-me" not in caplog.text

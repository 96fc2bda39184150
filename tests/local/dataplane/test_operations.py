"""The operation envelope: tail-logs pages, cancel-request, routing hints, unsupported types."""

from __future__ import annotations

from ct_testing import wait_until
from ct_testing.plugin import wait_for_job_status

# Upper bound on any wait; only a hang (or a very loaded machine) gets near it.
LIMIT_S = 120.0


def _tail(dp, **payload):
    response = dp.operation("tail-logs", payload)
    assert response.status_code == 200, response.text
    return response.json()


def _tail_with_steps_done(dp, steps: int, **payload):
    """A tail-logs page once it holds ``steps`` "step done" lines.

    The worker writes a request's "done" line just after it stores the result, so a page read
    right after a poll answered done may not hold that line yet.
    """
    last: dict = {}

    def every_line_written() -> dict | None:
        nonlocal last
        last = _tail(dp, **payload)
        return last if sum("step done" in e["line"] for e in last["entries"]) >= steps else None

    return wait_until(every_line_written, timeout=LIMIT_S, message=lambda: f"lines missing: {last}")


def test_tail_logs_pages_with_cursor_and_max_lines(dp) -> None:
    dp.start()
    for _ in range(3):
        dp.poll(dp.step())
    page = _tail_with_steps_done(dp, 3)
    lines = [e["line"] for e in page["entries"]]
    assert any("ready for requests" in line for line in lines)
    assert sum("step done" in line for line in lines) == 3
    assert page["eof"] is False
    entry = page["entries"][0]
    assert entry["_raw"] == f"{entry['ts']} {entry['line']}"
    assert entry["ts"].endswith("Z") and len(entry["ts"].split(".")[1]) == 10  # nanoseconds + Z
    # Nothing new since: an empty page that keeps the cursor.
    empty = _tail(dp, cursor=page["next_cursor"])
    assert empty["entries"] == [] and empty["next_cursor"] == page["next_cursor"]
    # New lines appear after the cursor.
    dp.poll(dp.step())
    fresh = _tail_with_steps_done(dp, 1, cursor=page["next_cursor"])
    # max_lines without a cursor: the newest N lines.
    newest = _tail(dp, max_lines=2)
    assert [e["_raw"] for e in newest["entries"]] == [e["_raw"] for e in fresh["entries"][-2:]]
    # max_lines with a cursor: at most N lines from there.
    two = _tail(dp, cursor="ln-0", max_lines=2)
    assert [e["_raw"] for e in two["entries"]] == [e["_raw"] for e in page["entries"][:2]]
    assert two["next_cursor"] == "ln-2"


def test_tail_logs_refusals(dp) -> None:
    dp.start()
    assert dp.operation("tail-logs", {"cursor": "bogus"}).status_code == 400
    assert dp.operation("tail-logs", {"max_lines": 0}).status_code == 422
    unknown = dp.operation("tail-logs", {}, sub_job_id=f"{dp.job_id}:training:7")
    assert unknown.status_code == 404
    assert f"{dp.job_id}:training:0" in unknown.json()["message"]
    mismatch = dp.operation("tail-logs", {}, sub_job_id=f"{dp.job_id}:training:0", sub_job_type="sampling")
    assert mismatch.status_code == 400


def test_tail_logs_after_the_job_ended_answers_410(dp, training_server) -> None:
    dp.start()
    dp.http.post(f"{dp.url}:cancel").raise_for_status()
    # While cancelling the log is still readable; once cancelled the live log is gone.
    wait_for_job_status(dp.http, dp.url, {"cancelled"}, limit_s=LIMIT_S)
    response = dp.operation("tail-logs", {})
    assert response.status_code == 410
    assert "is cancelled" in response.json()["message"]


def test_tail_logs_while_pending_is_a_409(dp) -> None:
    dp.create({"n_gpus": 1000})  # never fits: stays pending
    assert dp.operation("tail-logs", {}).status_code == 409


def test_cancel_request_cancels_only_what_has_not_started(dp, text_batch) -> None:
    dp.start()
    first = dp.forward_backward(text_batch(rows=16))
    queued = [dp.step() for _ in range(3)]
    response = dp.operation("cancel-request", {"request_id": queued[-1]})
    assert response.status_code == 200
    body = response.json()
    assert body["request_id"] == queued[-1]
    if body["cancelled"]:
        assert dp.status(queued[-1])["status"] == "cancelled"
    dp.poll(first)
    done = dp.poll(queued[0])
    assert done["global_steps"] == 1
    late = dp.operation("cancel-request", {"request_id": queued[0]}).json()
    assert late == {"request_id": queued[0], "cancelled": False, "status": "done"}
    assert dp.operation("cancel-request", {"request_id": "nope"}).status_code == 404
    assert dp.operation("cancel-request", {}).status_code == 422


def test_unknown_operation_and_bad_envelopes(dp) -> None:
    dp.start()
    assert dp.operation("zmd-events").status_code == 400
    assert dp.http.post(f"{dp.url}/operation", json={"payload": {}}).status_code == 422
    assert (
        dp.http.post(f"{dp.url}/operation", json={"operation_type": "forward", "payload": [1]}).status_code
        == 422
    )
    bad_b64 = dp.operation("forward", {"payload_b64": "***"})
    assert bad_b64.status_code == 422


def test_forward_with_a_json_payload(dp) -> None:
    dp.start()
    response = dp.operation("forward", {"input_ids": [[104, 105, 33, 10]]}, sub_job_type="training")
    assert response.status_code == 200
    result = dp.poll(response.json()["request_id"])
    assert tuple(result["logprobs"].shape) == (1, 3)

"""Result delivery of request polls: inline JSON, base64 DSSST1 envelopes and result-chunk pages."""

from __future__ import annotations

import base64
import hashlib

import pytest
from ct_testing import wait_until

from ct_core import wire

# Upper bound on waiting for a request; only a hang (or a very loaded machine) gets near it.
LIMIT_S = 120.0


def _done(dp, request_id: str, **params) -> dict:
    def finished() -> dict | None:
        status = dp.status(request_id, **params)
        return None if status["status"] in {"pending", "running"} else status

    return wait_until(finished, timeout=LIMIT_S, message=f"request {request_id} never finished")


def test_status_body_has_every_field(dp) -> None:
    dp.start()
    request_id = dp.step()
    status = _done(dp, request_id)
    assert set(status) == {
        "request_id",
        "status",
        "created_at",
        "updated_at",
        "result",
        "error",
        "events",
        "next_cursor",
    }
    assert status["status"] == "done"
    assert status["result"] == {"global_steps": 1, "last_lr": pytest.approx(1e-2)}
    assert status["error"] == "" and status["events"] == [] and status["next_cursor"] == ""
    assert status["created_at"].endswith("Z")


def test_dssst1_response_options_give_an_envelope(dp, text_batch, frame_of) -> None:
    dp.start()
    request_id = dp.forward_backward(text_batch())
    result = _done(dp, request_id)["result"]
    assert result["wire_format"] == "DSSST1"
    assert result["encoding"] == "base64"
    assert result["content_type"] == "application/octet-stream"
    decoded = wire.loads(base64.b64decode(result["payload_b64"]))
    assert decoded["avg_loss"] > 0
    # Without response options a JSON-only result stays JSON.
    plain = wire.encode_byte_chunks(
        frame_of(text_batch(), dssst1=False), kind="request", operation="fwd-bwd", force_chunk=True
    )
    rid = dp.post_chunk(plain[0]).json()["request_id"]
    assert _done(dp, rid)["result"]["avg_loss"] > 0


def test_large_results_arrive_as_result_chunks_with_cursors(dp, text_batch) -> None:
    dp.start()
    batch = text_batch(rows=16)
    request_id = dp.forward(batch)
    result = dp.poll(request_id, max_events=2)
    pages = dp.polls
    chunked = [p for p in pages if p["events"]]
    assert len(chunked) >= 2, "the result should take several pages of two chunks"
    assert all(len(p["events"]) <= 2 for p in pages)
    assert all(p["next_cursor"] for p in chunked[:-1])
    assert chunked[-1]["next_cursor"] == ""
    assert chunked[0]["result"] == {}
    expected_shape = (16, batch["kwargs"]["input_ids"].shape[1] - 1)
    assert tuple(result["logprobs"].shape) == expected_shape
    # Every event carries its own sha256, and a cursor can be replayed (the same bytes again).
    event = chunked[0]["events"][0]
    assert hashlib.sha256(base64.b64decode(event["payload_b64"])).hexdigest() == event["payload_sha256"]
    again = dp.status(request_id, max_events=2)
    assert again["events"] == chunked[0]["events"]
    page_two = dp.status(request_id, max_events=2, cursor=again["next_cursor"])
    assert page_two["events"] == chunked[1]["events"]


def test_max_events_and_cursor_validation(dp) -> None:
    dp.start()
    request_id = dp.step()
    _done(dp, request_id)
    for params in ({"max_events": "0"}, {"max_events": "many"}, {"cursor": "garbage"}):
        response = dp.http.get(f"{dp.url}/requests/{request_id}", params=params)
        assert response.status_code == 400, params
    assert dp.http.get(f"{dp.url}/requests/{request_id}", params={"max_events": 100000}).status_code == 200


def test_unknown_request_is_a_404_with_the_not_found_code(dp, new_driver) -> None:
    dp.start()
    response = dp.http.get(f"{dp.url}/requests/nope")
    assert response.status_code == 404
    assert response.json()["code"] == "517601"
    # A request of another job is not visible through this one.
    other = new_driver(dp.prefix).start()
    request_id = other.step()
    assert dp.http.get(f"{dp.url}/requests/{request_id}").status_code == 404


def test_reference_client_decodes_chunked_and_enveloped_results(
    dp, text_batch, frame_of, training_server
) -> None:
    pytest.importorskip("cortex_training")
    from cortex_training import CortexTrainingClient

    dp.start()
    database, schema = dp.prefix.split("/databases/")[1].split("/schemas/")
    client = CortexTrainingClient(
        base_url=training_server.base_url, database=database, schema=schema.split("/")[0], poll_interval=0.02
    )
    big = client.poll_request(dp.job_id, dp.forward(text_batch(rows=16)))
    assert big["logprobs"].shape[0] == 16
    small = client.poll_request(dp.job_id, dp.forward_backward(text_batch()))
    assert small["avg_loss"] > 0

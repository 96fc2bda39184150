"""Service error codes found wherever the body nests them, counted in requests at a scripted server.

A gateway or the service itself may put a plain `message` at the top and the real error object
(with its `code`) inside: the code still decides the retry (a job-not-found is final at once) and
the message suffix, and the outer message is used only when no object carries one of its own.
"""

from __future__ import annotations

import json

import pytest

from ct_core import errors
from ct_core.client import CortexTrainingClient

NESTED_NOT_FOUND = {
    "message": "Not Found",
    "error": {"code": "517601", "message": "Training job nope not found in S"},
}


def make_client(server, sleep, **kwargs) -> CortexTrainingClient:
    return CortexTrainingClient(base_url=server.base_url, database="DB", schema="S", sleep=sleep, **kwargs)


def test_nested_job_not_found_fails_on_the_first_request(misbehaving_server, no_sleep, act):
    misbehaving_server.script(*[act(404, NESTED_NOT_FOUND) for _ in range(12)])
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.NotFoundError) as caught:
        client.get_job("nope")
    assert len(misbehaving_server.requests) == 1 and no_sleep.calls == []
    assert caught.value.code == "517601"
    assert str(caught.value).startswith("Training job nope not found in S (517601); HTTP 404")


def test_code_deep_in_a_string_field_is_found(misbehaving_server, no_sleep, act):
    inner = json.dumps({"data": {"code": "517601", "message": "Training job x not found"}})
    misbehaving_server.script(*[act(404, {"message": "Not Found", "detail": inner}) for _ in range(12)])
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.NotFoundError) as caught:
        client.get_job("x")
    assert len(misbehaving_server.requests) == 1
    assert caught.value.code == "517601"


def test_outer_message_kept_when_the_coded_object_has_none(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(400, {"message": "Bad Request", "error": {"code": "517602"}}))
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.BadRequestError) as caught:
        client.list_jobs()
    assert caught.value.code == "517602"
    assert str(caught.value).startswith("Bad Request (517602); HTTP 400")


def test_message_without_any_code_is_still_a_retried_gateway_404(misbehaving_server, no_sleep, act):
    misbehaving_server.script(
        act(404, {"message": "Not Found", "error": {"detail": "x"}}), act(200, {"jobs": []})
    )
    with make_client(misbehaving_server, no_sleep) as client:
        assert client.list_jobs() == []
    assert len(misbehaving_server.requests) == 2

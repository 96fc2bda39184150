"""Code ported from the reference client catches ct's HTTP errors as `requests.HTTPError`.

The reference raised `requests.HTTPError` (and subclasses) for every error answer; scripts catch
that and read `.response.status_code`, `.response.json()`, `.response.headers` and `.response.text`.
ct's `APIError` family (account-list refusals, page tokens and chunk-group errors included) is both a
`CTError` and a `requests.HTTPError`, with `.response` the service's answer.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import requests

from ct_core import CTError, errors, wire
from ct_core.client import CortexTrainingClient


def _caught(call: Any) -> requests.HTTPError:
    try:
        call()
    except requests.HTTPError as error:  # the way ported code catches it
        return error
    raise AssertionError("no requests.HTTPError was raised")


def test_not_found_from_a_real_server_is_a_requests_http_error(local_server):
    with CortexTrainingClient(base_url=local_server.base_url, database="DB", schema="PUBLIC") as client:
        error = _caught(lambda: client.get_job("no-such-job"))
    assert isinstance(error, errors.NotFoundError) and isinstance(error, CTError)
    assert error.response is not None and error.response.status_code == 404
    assert error.response.json()["code"] == "517601"
    assert "517601" in error.response.text
    assert error.request is not None and error.request.url == error.response.request.url
    assert "(517601); HTTP 404 Not Found for GET " in str(error)


def test_invalid_page_token_is_a_requests_http_error(local_server):
    with CortexTrainingClient(base_url=local_server.base_url, database="DB", schema="PUBLIC") as client:
        error = _caught(lambda: client.list_jobs_page(page_token="not-a-token"))
    assert isinstance(error, errors.InvalidPageToken)
    assert error.response is not None and error.response.status_code == 400


def test_account_list_unavailable_is_a_requests_http_error(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(405, {"message": "REST API is disabled"}))
    with CortexTrainingClient(
        base_url=misbehaving_server.base_url, database="DB", schema="S", sleep=no_sleep
    ) as client:
        error = _caught(client.list_jobs_page)
    assert isinstance(error, errors.AccountJobListUnavailable) and error.reason == "rest_disabled"
    assert error.response is not None and error.response.status_code == 405
    assert error.response.json() == {"message": "REST API is disabled"}


def test_chunk_group_conflict_is_a_requests_http_error(dp_client, dataplane, act):
    server, _ = dataplane
    body = {"error": json.dumps({"code": "chunk_group_conflict", "message": "group reused"})}
    server.script(act(409, body))
    frame = wire.dumps({"args": (), "kwargs": {"input_ids": np.arange(4, dtype=np.int64).reshape(1, 4)}})
    error = _caught(lambda: dp_client.forward_backward("job1", frame))
    assert isinstance(error, errors.ChunkGroupConflictError)
    assert error.response is not None and error.response.status_code == 409
    assert json.loads(error.response.json()["error"])["code"] == "chunk_group_conflict"


def test_api_error_built_without_a_response_is_still_catchable():
    error = errors.ServerError("boom", status_code=503)
    assert isinstance(error, requests.HTTPError)
    assert error.response is None and error.status_code == 503 and str(error) == "boom"

"""The answer an `APIError` carries and the error's text, as ported `requests` code and people read them.

Code written for the reference client catches `requests.HTTPError` and reads `e.response` as a
`requests.Response`: `.ok`, `.reason`, `.headers["content-type"]`, `.json()`, `.iter_content()`,
`.elapsed`, `.raise_for_status()`. ct's errors carry a small response object of its own that offers
the same, built without httpx. The message leads with what the service said (its message, then its
code), then the request that got the answer; the service's reason is never lost, whatever shape its
body has (a 422's validation list included), and no Python repr reaches the text.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from typing import Any

import pytest
import requests

from ct_core import errors
from ct_core.client import CortexTrainingClient

DATABASE = "ERRDB"


def _caught(call: Any) -> requests.HTTPError:
    try:
        call()
    except requests.HTTPError as error:  # the way ported code catches it
        return error
    raise AssertionError("no requests.HTTPError was raised")


def _client(base_url: str, **kwargs: Any) -> CortexTrainingClient:
    return CortexTrainingClient(base_url=base_url, database=DATABASE, schema="PUBLIC", **kwargs)


# --------------------------------------------------------------------------------------------------
# The response, as a requests.Response reader expects it
# --------------------------------------------------------------------------------------------------


def test_a_real_404_reads_like_a_requests_response(local_server: Any) -> None:
    with _client(local_server.base_url) as client:
        error = _caught(lambda: client.get_job("no-such-job"))
        url = client.url_for("getJob", job_id="no-such-job")
    response = error.response
    assert response is not None
    # What reference-client scripts read first.
    assert response.status_code == 404
    assert response.ok is False and not response
    assert response.reason == "Not Found"
    assert response.url == url
    # Headers by any spelling, as requests' case-insensitive dict.
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.headers["content-type"] == response.headers["CONTENT-TYPE"]
    assert "x-snowflake-request-id" in response.headers
    # The body, four ways.
    assert response.json()["code"] == "517601"
    assert json.loads(response.content) == response.json()
    assert response.text == response.content.decode("utf-8")
    assert b"".join(response.iter_content(7)) == response.content
    assert all(len(piece) <= 7 for piece in response.iter_content(7))
    assert "".join(response.iter_content(5, decode_unicode=True)) == response.text
    assert b"".join(response.iter_content(None)) == response.content
    # How long the request took, as a timedelta.
    assert isinstance(response.elapsed, datetime.timedelta)
    assert response.elapsed >= datetime.timedelta(0)
    # The request that got it: method and URL.
    assert response.request is not None and response.request.method == "GET"
    assert response.request.url == url
    assert error.request is response.request
    # raise_for_status raises again, as an HTTPError of the same status.
    with pytest.raises(requests.HTTPError) as again:
        response.raise_for_status()
    assert isinstance(again.value, errors.NotFoundError)
    assert again.value.response is not None and again.value.response.status_code == 404


def test_reference_style_handler_runs_unchanged(local_server: Any) -> None:
    """A handler as reference-client users write it, over a real refused request."""
    with _client(local_server.base_url) as client:
        try:
            client.get_job("still-no-such-job")
        except requests.HTTPError as e:
            seen = {
                "status": e.response.status_code,
                "ok": e.response.ok,
                "reason": e.response.reason,
                "code": e.response.json().get("code"),
                "request_id": e.response.headers.get("X-Snowflake-Request-Id"),
                "url": e.response.url,
                "slow": e.response.elapsed.total_seconds() > 3600,
            }
        else:
            raise AssertionError("the lookup of a missing job succeeded")
    assert seen["status"] == 404 and seen["ok"] is False and seen["reason"] == "Not Found"
    assert seen["code"] == "517601" and seen["request_id"]
    assert str(seen["url"]).endswith("/still-no-such-job") and seen["slow"] is False


def test_json_of_a_body_that_is_not_json_raises_requests_decode_error(
    misbehaving_server: Any, act: Any
) -> None:
    misbehaving_server.script(
        act(400, b"<html>bad gateway page</html>", headers={"Content-Type": "text/html"})
    )
    with _client(misbehaving_server.base_url, max_retries=0) as client:
        error = _caught(client.list_jobs)
    assert error.response is not None
    assert error.response.text == "<html>bad gateway page</html>"
    with pytest.raises(requests.JSONDecodeError):
        error.response.json()
    with pytest.raises(ValueError):  # what older ported code catches
        error.response.json()


def test_text_follows_the_charset_and_a_set_encoding(misbehaving_server: Any, act: Any) -> None:
    body = "caf\u00e9 ferm\u00e9\nrevenez demain".encode("latin-1")
    misbehaving_server.script(act(503, body, headers={"Content-Type": "text/plain; charset=latin-1"}))
    with _client(misbehaving_server.base_url, max_retries=0) as client:
        error = _caught(client.list_jobs)
    response = error.response
    assert response is not None and response.encoding == "latin-1"
    assert response.text == "caf\u00e9 ferm\u00e9\nrevenez demain"
    assert list(response.iter_lines(decode_unicode=True)) == ["caf\u00e9 ferm\u00e9", "revenez demain"]
    response.encoding = "ascii"  # as ported code may set it on a requests.Response
    assert response.text.startswith("caf\ufffd")


def test_no_httpx_is_imported_on_the_error_path(local_server: Any) -> None:
    """A refused request over the standard-library road imports neither httpx nor httpcore."""
    script = (
        "import sys, json\n"
        "from ct_core.client import CortexTrainingClient\n"
        "from ct_core.errors import APIError\n"
        f"client = CortexTrainingClient(base_url={local_server.base_url!r}, database='DB', schema='PUBLIC')\n"
        "try:\n"
        "    client.get_job('no-such-job')\n"
        "except APIError as error:\n"
        "    seen = (error.response.status_code, error.response.ok, str(error))\n"
        "json.dump({'seen': seen, 'modules': sorted(sys.modules)}, sys.stdout)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["seen"][0] == 404 and report["seen"][1] is False
    loaded = [m for m in report["modules"] if m.split(".")[0] in ("httpx", "httpcore", "h11")]
    assert loaded == []


# --------------------------------------------------------------------------------------------------
# The message: the service's reason first, then the request; never a repr
# --------------------------------------------------------------------------------------------------


def test_the_message_leads_with_the_service_reason_then_the_request(local_server: Any) -> None:
    with _client(local_server.base_url) as client:
        error = _caught(lambda: client.get_job("no-such-job"))
        url = client.url_for("getJob", job_id="no-such-job")
    assert isinstance(error, errors.APIError)
    text = str(error)
    assert text.startswith("Training job no-such-job not found in ")
    assert "(517601)" in text
    assert text.index("(517601)") < text.index(f"GET {url}")
    assert "404 Not Found" in text and f"[snowflake request id: {error.request_id}]" in text
    assert "Client Error" not in text and "{" not in text


def test_a_422_carries_its_validation_reason(local_server: Any) -> None:
    body = {"sub_job_configs": [], "experiment_name": 5, "comment": ["not", "text"]}
    with _client(local_server.base_url, max_retries=0) as client:
        error = _caught(lambda: client.request("createJob", json_body=body))
    assert isinstance(error, errors.APIError) and error.status_code == 422
    assert error.server_message is not None
    assert "experiment_name: experiment_name must be a string" in error.server_message
    assert "comment: comment must be a string" in error.server_message
    text = str(error)
    assert text.startswith("sub_job_configs: sub_job_configs must be a non-empty list; experiment_name: ")
    assert "422 Unprocessable" in text and "POST " in text
    assert "'loc'" not in text and "{" not in text


@pytest.mark.parametrize(
    ("status", "body", "lead", "code"),
    [
        # The service's usual body, with a numeric code.
        (
            409,
            {"message": "Job is already terminated", "code": 409},
            "Job is already terminated (409)",
            "409",
        ),
        # A validation list: each problem with where it is.
        (
            422,
            {"detail": [{"loc": ["body", "hardware"], "msg": "unknown hardware", "type": "value_error"}]},
            "hardware: unknown hardware",
            None,
        ),
        # A framework's plain detail text.
        (400, {"detail": "Invalid page_token"}, "Invalid page_token", None),
        # The OpenAI-style error object of the inference routes.
        (
            400,
            {
                "error": {
                    "message": "max_tokens is not supported",
                    "type": "invalid_request_error",
                    "code": "x1",
                }
            },
            "max_tokens is not supported (x1)",
            "x1",
        ),
        # An error object without a message: its code is the reason.
        (
            400,
            {
                "error": {
                    "type": "invalid_request_error",
                    "param": "max_tokens",
                    "code": "unsupported_parameter",
                }
            },
            "unsupported_parameter",
            "unsupported_parameter",
        ),
        # A plain error string.
        (403, {"error": "Cortex Training is not enabled"}, "Cortex Training is not enabled", None),
        # A gateway's wrapper around the service's coded error.
        (
            404,
            {"message": "Not Found", "error": {"code": "517601", "message": "Training job x not found in S"}},
            "Training job x not found in S (517601)",
            "517601",
        ),
    ],
)
def test_every_body_shape_gives_its_reason_first(
    misbehaving_server: Any, act: Any, status: int, body: Any, lead: str, code: str | None
) -> None:
    misbehaving_server.script(act(status, body))
    with _client(misbehaving_server.base_url, max_retries=0) as client:
        error = _caught(lambda: client.get_job("x"))
    assert isinstance(error, errors.APIError)
    text = str(error)
    assert text.startswith(lead), text
    assert error.code == code
    # The reason is the service's message; a body with only a code has none, and shows its code.
    assert (error.server_message is None) == (lead == code)
    assert f"{status} " in text and f"GET {misbehaving_server.base_url}/" in text
    assert "{" not in text and "Client Error" not in text


@pytest.mark.parametrize(
    ("status", "body"), [(502, b"<html>Bad Gateway</html>"), (404, b""), (400, {"x": 1})]
)
def test_an_answer_without_a_reason_leads_with_its_status(
    misbehaving_server: Any, act: Any, status: int, body: Any
) -> None:
    misbehaving_server.script(*[act(status, body) for _ in range(3)])
    with _client(misbehaving_server.base_url, max_retries=0) as client:
        error = _caught(lambda: client.get_job("x"))
    assert isinstance(error, errors.APIError)
    assert error.server_message is None
    text = str(error)
    assert text.startswith(f"HTTP {status} "), text
    assert f"GET {misbehaving_server.base_url}/" in text and "<html>" not in text


def test_the_url_in_the_message_shows_no_credential() -> None:
    response = errors.ErrorResponse(
        400,
        headers=[("Content-Type", "application/json")],
        content=b'{"message": "refused", "code": "517602"}',
        request=errors.ErrorRequest("GET", "https://user:pw@h.example/x?token=abc123&limit=5"),
    )
    text = str(errors.api_error_from_response(response))
    assert text.startswith("refused (517602)")
    assert "pw" not in text and "abc123" not in text
    assert "limit=5" in text and "https://h.example/x" in text


def test_a_failed_request_names_its_error_in_words() -> None:
    failed = errors.RequestFailedError("r1", "failed", {"code": "oom", "message": "CUDA out of memory"})
    assert str(failed) == "Request r1 ended with state 'failed': CUDA out of memory (oom)"
    assert failed.error == {"code": "oom", "message": "CUDA out of memory"}
    assert str(errors.RequestFailedError("r2", "cancelled", "")) == "Request r2 ended with state 'cancelled'"
    worker_lost = errors.RequestFailedError("r3", "failed", "worker lost")
    assert str(worker_lost) == "Request r3 ended with state 'failed': worker lost"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ({"code": "leakage", "message": "3 violations"}, "3 violations (leakage)"),
        ({"code": "leakage"}, "leakage"),
        ("plain text", "plain text"),
        ([{"message": "a"}, {"message": "b", "code": 2}], "a; b (2)"),
        ({"detail": [{"loc": ["body", "x"], "msg": "bad"}]}, "x: bad"),
        ({"weird": {"nested": 1}}, '{"weird": {"nested": 1}}'),
    ],
)
def test_describe_service_error_never_shows_a_repr(value: Any, words: str) -> None:
    assert errors.describe_service_error(value) == words

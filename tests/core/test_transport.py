"""Retry decisions, timeouts, redirects, TLS and error messages over real sockets (no httpx mocks)."""

from __future__ import annotations

import json
import logging

import pytest

from ct_core import errors
from ct_core.client import CortexTrainingClient
from ct_core.http.retry import RecentJobs, RetryPolicy

JOB_BODY = {"sub_job_configs": [{"job_type": "sampling", "model_name": "m", "inference_config": {}}]}


def make_client(server, sleep, **kwargs) -> CortexTrainingClient:
    return CortexTrainingClient(
        base_url=kwargs.pop("base_url", server.base_url), database="DB", schema="S", sleep=sleep, **kwargs
    )


# --- statuses ------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [307, 308, 404, 409, 429, 500, 502, 503, 504])
def test_retryable_statuses_are_retried_then_succeed(misbehaving_server, no_sleep, act, status):
    headers = {"Location": "http://elsewhere.invalid/"} if status in (307, 308) else {}
    misbehaving_server.script(act(status, {"message": "busy"}, headers=headers), act(200, {"job_id": "j1"}))
    with make_client(misbehaving_server, no_sleep) as client:
        assert client.get_job("j1") == {"job_id": "j1"}
    # A redirect is retried on the original URL, never followed.
    assert [r.path for r in misbehaving_server.requests] == [
        "/api/v2/databases/DB/schemas/S/cortex-training/j1"
    ] * 2
    assert len(no_sleep.calls) == 1


@pytest.mark.parametrize("status", [400, 401, 403, 405, 422])
def test_other_client_errors_are_final(misbehaving_server, no_sleep, act, status):
    misbehaving_server.script(act(status, {"message": "nope", "code": "1"}))
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.APIError) as caught:
        client.get_job("j1")
    assert caught.value.status_code == status
    assert len(misbehaving_server.requests) == 1 and no_sleep.calls == []


def test_retries_exhausted_reraise_last_error(misbehaving_server, no_sleep, act):
    misbehaving_server.script(*[act(503, {"message": "down"}) for _ in range(4)])
    with (
        make_client(misbehaving_server, no_sleep, max_retries=3) as client,
        pytest.raises(errors.ServerError) as caught,
    ):
        client.list_jobs()
    assert len(misbehaving_server.requests) == 4
    assert caught.value.status_code == 503


def test_redirect_left_after_retries_is_unexpected_redirect(misbehaving_server, no_sleep, act):
    misbehaving_server.script(*[act(308, None, headers={"Location": "/x"}) for _ in range(2)])
    with (
        make_client(misbehaving_server, no_sleep, max_retries=1) as client,
        pytest.raises(errors.UnexpectedRedirectError) as caught,
    ):
        client.get_job("abc")
    url = f"{misbehaving_server.base_url}/api/v2/databases/DB/schemas/S/cortex-training/abc"
    assert str(caught.value) == f"Unexpected redirect 308 for url: {url}"


def test_job_not_found_fails_at_once(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(404, {"code": "517601", "message": "Training job nope not found in S"}))
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.NotFoundError) as caught:
        client.get_job("nope")
    assert caught.value.code == "517601"
    assert len(misbehaving_server.requests) == 1


def test_job_not_found_retried_for_a_job_this_client_just_created(misbehaving_server, no_sleep, act):
    misbehaving_server.script(
        act(200, {"job_id": "fresh"}),
        act(404, {"code": "517601", "message": "Training job fresh not found"}),
        act(200, {"job_id": "fresh", "status": "pending"}),
    )
    with make_client(misbehaving_server, no_sleep) as client:
        assert client.create_job_from_body(JOB_BODY) == {"job_id": "fresh"}
        assert client.get_job("fresh")["status"] == "pending"
    assert len(misbehaving_server.requests) == 3


def test_gateway_404_without_code_is_retried(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(404, b"<html>not here</html>"), act(200, {"jobs": []}))
    with make_client(misbehaving_server, no_sleep) as client:
        assert client.list_jobs() == []


def test_recent_jobs_window_expires():
    now = [0.0]
    recent = RecentJobs(window=120.0, max_entries=2, clock=lambda: now[0])
    recent.add("a")
    assert "a" in recent
    now[0] = 121.0
    assert "a" not in recent
    recent.add("b"), recent.add("c"), recent.add("d")
    assert "b" not in recent and "d" in recent


def test_backoff_without_retry_after_is_jittered_and_capped():
    policy = RetryPolicy(max_retries=3)
    assert 0.5 <= policy.wait_before(1) <= 1.5
    assert policy.wait_before(10) == 10.0


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured_and_capped(misbehaving_server, no_sleep, act, status):
    # The first advice is under the cap and is waited as given (the backoff would be 0.5-1.5 s); the
    # second names a delay far over the cap and waits only the cap (10 s), not 3600 s.
    misbehaving_server.script(
        act(status, {"message": "slow down"}, headers={"Retry-After": "7"}),
        act(status, {"message": "slow down"}, headers={"Retry-After": "3600"}),
        act(200, {"job_id": "j1"}),
    )
    with make_client(misbehaving_server, no_sleep) as client:
        assert client.get_job("j1") == {"job_id": "j1"}
    assert len(misbehaving_server.requests) == 3
    assert no_sleep.calls == [7.0, 10.0]


# --- transport failures --------------------------------------------------------------------------


def test_connection_reset_is_retried(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(reset=True), act(200, {"jobs": [{"job_id": "a"}]}))
    with make_client(misbehaving_server, no_sleep) as client:
        assert client.list_jobs() == [{"job_id": "a"}]
    assert len(misbehaving_server.requests) == 2


#: An answer held back this long comes only when the test's server closes: its timeout always fires.
HELD_S = 60.0


def test_slow_answer_times_out_and_is_retried(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(200, {"jobs": []}, delay=HELD_S), act(200, {"jobs": [{"job_id": "b"}]}))
    # The retried answer must come within the same timeout, so it is not cut fine for a busy machine.
    with make_client(misbehaving_server, no_sleep, request_timeout=2.0) as client:
        assert client.list_jobs() == [{"job_id": "b"}]
    assert len(misbehaving_server.requests) == 2


def test_timeout_after_retries_raises_timeout_error(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(200, {}, delay=HELD_S), act(200, {}, delay=HELD_S))
    with (
        make_client(misbehaving_server, no_sleep, request_timeout=0.2, max_retries=1) as client,
        pytest.raises(errors.CTTimeoutError) as caught,
    ):
        client.list_jobs()
    assert isinstance(caught.value, TimeoutError) and not caught.value.never_sent


def test_create_job_not_retried_after_the_request_reached_the_server(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(reset=True), act(200, {"job_id": "second"}))
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.CTConnectionError):
        client.create_job_from_body(JOB_BODY)
    assert len(misbehaving_server.requests) == 1


@pytest.mark.parametrize("status", [500, 503, 409, 404])
def test_create_job_not_retried_on_any_status(misbehaving_server, no_sleep, act, status):
    misbehaving_server.script(act(status, {"message": "x"}), act(200, {"job_id": "second"}))
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.APIError):
        client.create_job_from_body(JOB_BODY)
    assert len(misbehaving_server.requests) == 1


def test_create_job_not_retried_after_read_timeout(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(200, {"job_id": "slow"}, delay=HELD_S))
    with (
        make_client(misbehaving_server, no_sleep, request_timeout=0.2) as client,
        pytest.raises(errors.CTTimeoutError),
    ):
        client.create_job_from_body(JOB_BODY)
    assert len(misbehaving_server.requests) == 1


def test_create_job_retried_when_connection_refused(closed_port, no_sleep):
    client = CortexTrainingClient(
        base_url=f"http://127.0.0.1:{closed_port}", database="D", schema="S", max_retries=2, sleep=no_sleep
    )
    with client, pytest.raises(errors.CTConnectionError) as caught:
        client.create_job_from_body(JOB_BODY)
    assert caught.value.never_sent
    assert len(no_sleep.calls) == 2


def test_capacity_is_attempted_once(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(503, {"message": "busy"}), act(200, {}))
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.ServerError):
        client.get_capacity()
    assert len(misbehaving_server.requests) == 1


# --- TLS -----------------------------------------------------------------------------------------


def test_certificate_failure_raised_immediately(tls_server, no_sleep):
    server, _ = tls_server
    with make_client(server, no_sleep) as client, pytest.raises(errors.TLSVerificationError):
        client.list_jobs()
    assert no_sleep.calls == []


def test_tls_verification_can_be_disabled_or_pinned(tls_server, no_sleep, act):
    server, cert = tls_server
    server.script(act(200, {"jobs": [{"job_id": "t"}]}), act(200, {"jobs": []}))
    with make_client(server, no_sleep, verify_ssl=False) as client:
        assert client.list_jobs() == [{"job_id": "t"}]
    with make_client(server, no_sleep, verify_ssl=str(cert)) as client:
        assert client.list_jobs() == []


# --- error messages ------------------------------------------------------------------------------


def test_error_message_has_request_id_code_and_message(misbehaving_server, no_sleep, act):
    body = {"code": "003001", "message": "Your primary role R must have USE CORTEX TRAINING granted"}
    misbehaving_server.script(act(403, body, headers={"x-snowflake-request-id": "rid-1"}))
    with (
        make_client(misbehaving_server, no_sleep) as client,
        pytest.raises(errors.PermissionDeniedError) as caught,
    ):
        client.create_job_from_body(JOB_BODY)
    url = f"{misbehaving_server.base_url}/api/v2/databases/DB/schemas/S/cortex-training"
    # The service's reason and code first, then the status and the request, then the request id.
    assert str(caught.value) == (
        f"{body['message']} (003001); HTTP 403 Forbidden for POST {url} [snowflake request id: rid-1]"
    )
    assert caught.value.request_id == "rid-1" and caught.value.code == "003001"
    assert caught.value.response.json() == body


def test_error_message_is_cut_and_redacted(misbehaving_server, no_sleep, act):
    message = "token=abc123 Bearer sekrit " + "x" * 2000
    misbehaving_server.script(act(400, {"error": json.dumps({"code": 7, "message": message})}))
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.BadRequestError) as caught:
        client.list_jobs()
    text = str(caught.value)
    assert "abc123" not in text and "sekrit" not in text and "<redacted>" in text
    reason = text.split(" (7); HTTP 400 Bad Request for GET ", 1)[0]
    assert reason.endswith("...") and len(reason) == 1000


def test_non_json_error_body_keeps_the_plain_message(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(400, b"plain text"))
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.BadRequestError) as caught:
        client.list_jobs()
    url = f"{misbehaving_server.base_url}/api/v2/databases/DB/schemas/S/cortex-training"
    assert str(caught.value) == f"HTTP 400 Bad Request for GET {url}"


def test_server_error_wording(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(500, {"message": "boom"}))
    with (
        make_client(misbehaving_server, no_sleep, max_retries=0) as client,
        pytest.raises(errors.ServerError) as e,
    ):
        client.list_jobs()
    assert str(e.value).startswith("boom; HTTP 500 Internal Server Error for GET ")


def test_database_access_error_has_own_explanation(misbehaving_server, no_sleep, act):
    body = {"code": "517602", "message": "Schema DB.S is not found or not authorized"}
    misbehaving_server.script(act(400, body))
    with (
        make_client(misbehaving_server, no_sleep) as client,
        pytest.raises(errors.DatabaseAccessError) as caught,
    ):
        client.list_jobs()
    assert "DB.S" in str(caught.value) and "never creates" in str(caught.value)
    assert isinstance(caught.value, errors.BadRequestError)


def test_request_id_debug_log(misbehaving_server, no_sleep, act, caplog):
    misbehaving_server.script(act(200, {"jobs": []}, headers={"x-snowflake-request-id": "rid-9"}))
    with (
        caplog.at_level(logging.DEBUG, logger="ct_core.transport"),
        make_client(misbehaving_server, no_sleep) as c,
    ):
        c.list_jobs()
    assert (
        "snowflake request_id=rid-9  GET /api/v2/databases/DB/schemas/S/cortex-training  status=200"
        in caplog.text
    )


def test_pat_host_is_rewritten_for_rest_calls():
    client = CortexTrainingClient.from_pat(
        host="https://myorg-my_acct.snowflakecomputing.com/", pat="p", database="D", schema="S"
    )
    with client:
        assert client.base_url == "https://myorg-my-acct.snowflakecomputing.com"


def test_pat_client_sends_the_token_and_its_type(tls_server, act):
    server, _ = tls_server
    server.script(act(200, {"jobs": []}))
    host = server.base_url.removeprefix("https://")
    with CortexTrainingClient.from_pat(host=host, pat="p", database="D", schema="S", verify_ssl=False) as c:
        assert c.list_jobs() == []
    # What arrived at the server, not what the client meant to send.
    headers = {key.lower(): value for key, value in server.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer p"
    assert headers["x-snowflake-authorization-token-type"] == "PROGRAMMATIC_ACCESS_TOKEN"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"poll_interval": 0}, "poll_interval must be > 0"),
        ({"poll_timeout": 0}, "poll_timeout must be > 0"),
        ({"poll_backoff_multiplier": 0.5}, "poll_backoff_multiplier must be >= 1.0"),
        ({"poll_max_interval": 0.1}, "poll_max_interval must be >= poll_interval"),
        ({"pool_maxsize": 0}, "pool_maxsize must be > 0"),
        ({"max_retries": -1}, "max_retries must be >= 0"),
        ({"request_timeout": True}, "request_timeout must be a positive finite number"),
        ({"request_timeout": (1, 2, 3)}, "request_timeout must be a positive finite number"),
        ({"request_timeout": float("nan")}, "request_timeout must be a positive finite number"),
    ],
)
def test_constructor_rejects_bad_tuning(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        CortexTrainingClient(base_url="http://x", database="D", schema="S", **kwargs)

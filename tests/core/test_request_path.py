"""The one request path of a client, seen from the server, over real sockets (no mocks).

Step, save, load, operations, request polls and chunk uploads go over the client's own connection
pool, like every other call, whichever way the client signs and whether or not a proxy sits between.
These tests check what arrives (method, path, query, headers, body) and that the policy holds: retries,
timeouts, TLS checks, error mapping and the request-id debug log.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from ct_core import errors, wire
from ct_core.client import CortexTrainingClient
from ct_core.constants import PAT_TOKEN_TYPE, TOKEN_TYPE_HEADER

PREFIX = "/api/v2/databases/DB/schemas/S/cortex-training"


def make_client(server, sleep, **kwargs) -> CortexTrainingClient:
    return CortexTrainingClient(
        base_url=kwargs.pop("base_url", server.base_url), database="DB", schema="S", sleep=sleep, **kwargs
    )


def test_step_and_poll_send_method_path_headers_and_body(misbehaving_server, no_sleep, act):
    misbehaving_server.script(
        act(200, {"request_id": "r1"}),
        act(200, {"request_id": "r1", "status": "REQUEST_STATE_DONE", "result": {"global_steps": 3}}),
    )
    with make_client(misbehaving_server, no_sleep, headers={"X-Extra": "yes"}) as client:
        request_id = client.step("job/1", learning_rate=0.5)
        assert client.poll_request("job/1", request_id) == {"global_steps": 3}
    post, get = misbehaving_server.requests
    assert (post.method, post.path) == ("POST", f"{PREFIX}/job%2F1/step")
    assert json.loads(post.body) == {"learning_rate": 0.5}
    assert post.headers["Content-Type"] == "application/json"
    assert post.headers["X-Extra"] == "yes" and post.headers["User-Agent"]
    # The pool does not decode compressed answers, so no request asks for them.
    assert "gzip" not in post.headers.get("Accept-Encoding", "")
    assert post.headers["Host"] == misbehaving_server.base_url.removeprefix("http://")
    assert (get.method, get.path) == ("GET", f"{PREFIX}/job%2F1/requests/r1")


def test_base_url_path_and_query_string(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(200, {"status": "running", "events": []}))
    base_url = misbehaving_server.base_url + "/gateway/"
    with make_client(misbehaving_server, no_sleep, base_url=base_url) as client:
        page = client.get_request_status("j", "r 1", max_events=5, cursor="a b/c")
    assert page["status"] == "running"
    (seen,) = misbehaving_server.requests
    assert seen.path == f"/gateway{PREFIX}/j/requests/r%201?max_events=5&cursor=a%20b%2Fc"


def test_fixed_authorization_header_is_sent_with_a_save(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(200, {"request_id": "s"}))
    with make_client(misbehaving_server, no_sleep, headers={"Authorization": "Bearer tok"}) as client:
        assert client.save("j", checkpoint_type="Weights-Only") == "s"
    (seen,) = misbehaving_server.requests
    assert seen.headers["Authorization"] == "Bearer tok"
    assert json.loads(seen.body) == {"checkpoint_type": "weights-only"}


def test_step_503_is_retried_but_500_is_final(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(503, {"message": "busy"}), act(200, {"request_id": "r"}))
    with make_client(misbehaving_server, no_sleep) as client:
        assert client.step("j") == "r"
        assert len(misbehaving_server.requests) == 2
        misbehaving_server.script(act(500, {"message": "boom", "code": "x"}))
        with pytest.raises(errors.ServerError) as caught:
            client.step("j")
    assert caught.value.status_code == 500 and "boom" in str(caught.value)
    assert len(misbehaving_server.requests) == 3


def test_client_error_answer_is_mapped(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(400, {"message": "bad lr", "code": "390"}))
    with make_client(misbehaving_server, no_sleep) as client, pytest.raises(errors.APIError) as caught:
        client.load("j", "cp_1")
    assert caught.value.status_code == 400 and "bad lr" in str(caught.value)


def test_poll_survives_a_connection_reset(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(reset=True), act(200, {"status": "done", "result": {"ok": 1}}))
    with make_client(misbehaving_server, no_sleep) as client:
        assert client.poll_request("j", "r") == {"ok": 1}
    assert len(misbehaving_server.requests) == 2


def test_step_read_timeout_is_raised_not_replayed(misbehaving_server, no_sleep, act):
    # Held back until the server closes: the read timeout fires however slowly the client reads.
    misbehaving_server.script(act(200, {"request_id": "late"}, delay=60.0))
    with (
        make_client(misbehaving_server, no_sleep, request_timeout=0.2) as client,
        pytest.raises(errors.CTTimeoutError) as caught,
    ):
        client.step("j")
    assert not caught.value.never_sent and "/step" in str(caught.value)
    assert len(misbehaving_server.requests) == 1


def test_refused_connection_is_a_connection_error(closed_port, no_sleep):
    with (
        CortexTrainingClient(
            base_url=f"http://127.0.0.1:{closed_port}",
            database="DB",
            schema="S",
            max_retries=1,
            sleep=no_sleep,
        ) as client,
        pytest.raises(errors.CTConnectionError) as caught,
    ):
        client.poll_request("j", "r")
    assert caught.value.never_sent and len(no_sleep.calls) == 1


def test_tls_is_verified_for_a_step(tls_server, no_sleep, act):
    server, cert = tls_server
    with make_client(server, no_sleep) as client, pytest.raises(errors.TLSVerificationError):
        client.step("j")
    assert no_sleep.calls == []
    server.script(act(200, {"request_id": "t"}))
    with make_client(server, no_sleep, verify_ssl=str(cert)) as client:
        assert client.step("j") == "t"


def test_chunk_upload_body_arrives_intact(misbehaving_server, no_sleep, act):
    frame = wire.dumps({"x": np.arange(20000, dtype=np.int32)})
    misbehaving_server.script(act(200, {"request_id": "fb"}))
    with make_client(misbehaving_server, no_sleep) as client:
        assert client.forward_backward("j", memoryview(frame)) == "fb"
    (seen,) = misbehaving_server.requests
    assert seen.headers["Content-Type"] == "application/octet-stream"
    assert int(seen.headers["Content-Length"]) == len(seen.body)
    assert wire.decode_byte_chunks([seen.body]) == frame


def test_request_id_is_logged_at_debug(misbehaving_server, no_sleep, act, caplog):
    misbehaving_server.script(act(200, {"request_id": "r"}, headers={"X-Snowflake-Request-Id": "sf-42"}))
    with (
        caplog.at_level(logging.DEBUG, logger="ct_core.transport"),
        make_client(misbehaving_server, no_sleep) as client,
    ):
        client.step("j")
    assert "sf-42" in caplog.text


def test_borrowed_transport_uses_its_own_database(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(200, {"request_id": "a"}), act(200, {"request_id": "b"}))
    with make_client(misbehaving_server, no_sleep) as client:
        client.step("j")
        other = client.for_job({"database_name": "D2", "schema_name": "S2"})
        other.step("j")
    assert [seen.path for seen in misbehaving_server.requests] == [
        f"{PREFIX}/j/step",
        "/api/v2/databases/D2/schemas/S2/cortex-training/j/step",
    ]


def test_refused_pat_gets_its_hint_on_a_step(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(401, {"message": "Invalid token"}))
    pat_headers = {"Authorization": "Bearer pat", TOKEN_TYPE_HEADER: PAT_TOKEN_TYPE}
    with (
        make_client(misbehaving_server, no_sleep, headers=pat_headers) as client,
        pytest.raises(errors.PATRejectedError) as caught,
    ):
        client.step("j")
    assert caught.value.status_code == 401


class _SessionAuth:
    """An auth provider that signs every request itself (like a Snowflake profile session)."""

    def __init__(self) -> None:
        self.signed = 0

    def authorization(self) -> str:
        self.signed += 1
        return 'Snowflake Token="live"'

    def refresh_after(self, error, signed_with=None) -> bool:
        return False


def test_a_signing_auth_provider_signs_every_attempt_on_the_same_path(misbehaving_server, no_sleep, act):
    misbehaving_server.script(act(200, {"request_id": "a"}), act(503, {}), act(200, {"status": "done"}))
    auth = _SessionAuth()
    with make_client(misbehaving_server, no_sleep, auth=auth) as client:
        assert client.poll_request("j", client.step("j", learning_rate=1)) == {}
    first, *_ = misbehaving_server.requests
    assert first.headers["Authorization"] == 'Snowflake Token="live"'
    assert json.loads(first.body) == {"learning_rate": 1.0}
    # The step, the poll answered 503 and its retry: each attempt signed afresh and sent.
    assert len(misbehaving_server.requests) == 3 and auth.signed == 3
    assert all(
        seen.headers["Authorization"] == 'Snowflake Token="live"' for seen in misbehaving_server.requests
    )
    assert len(no_sleep.calls) == 1


def test_a_proxied_client_with_an_auth_provider_sends_through_the_proxy(
    misbehaving_server, no_sleep, act, monkeypatch
):
    # The scripted server plays the HTTP proxy named by the environment: a plain-http request through a
    # proxy arrives there with the absolute URL as its target.
    monkeypatch.setenv("HTTP_PROXY", misbehaving_server.base_url)
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.delenv("http_proxy", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    misbehaving_server.script(act(200, {"request_id": "a"}), act(503, {}), act(200, {"status": "done"}))
    origin = "http://cortex.invalid:8084"
    with make_client(misbehaving_server, no_sleep, base_url=origin, auth=_SessionAuth()) as client:
        assert client.poll_request("j", client.step("j", learning_rate=1)) == {}
    step, poll, retried = misbehaving_server.requests
    assert (step.method, step.path) == ("POST", f"{origin}{PREFIX}/j/step")
    assert json.loads(step.body) == {"learning_rate": 1.0}
    assert poll.path == retried.path == f"{origin}{PREFIX}/j/requests/a"
    for seen in (step, poll, retried):
        assert seen.headers["Authorization"] == 'Snowflake Token="live"'
        assert seen.headers["Host"] == "cortex.invalid:8084"
    assert len(no_sleep.calls) == 1

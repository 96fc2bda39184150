"""A base-URL client signed with a bearer token (`token=`), and that token kept out of error text.

The token reaches a real ct_local server that requires it; a scripted server that echoes secrets
back in its error bodies shows that the client's own credential is removed by value from the
message of every `APIError` (whatever words surround it), not only where it follows `token=`.
"""

from __future__ import annotations

import pytest

from ct_core import errors
from ct_core.client import CortexTrainingClient
from ct_core.constants import PAT_TOKEN_TYPE, TOKEN_TYPE_HEADER

SECRET = "zq9-Qx7kLm2pR4vT8wY1"


def test_base_url_client_sends_its_token_as_a_bearer_header(local_server_factory):
    server = local_server_factory(tokens={SECRET: "ANALYST"})
    with CortexTrainingClient(
        base_url=server.base_url, database="DB", schema="PUBLIC", token=SECRET
    ) as client:
        assert client.list_jobs() == []
    with (
        CortexTrainingClient(base_url=server.base_url, database="DB", schema="PUBLIC") as anonymous,
        pytest.raises(errors.AuthenticationError),
    ):
        anonymous.list_jobs()


def test_token_header_is_exactly_bearer(misbehaving_server, act):
    misbehaving_server.script(act(200, {"jobs": []}))
    with CortexTrainingClient(
        base_url=misbehaving_server.base_url, database="DB", schema="S", token=SECRET
    ) as client:
        client.list_jobs()
    assert misbehaving_server.requests[0].header("Authorization") == f"Bearer {SECRET}"


@pytest.mark.parametrize("bad", ["", 5])
def test_token_must_be_a_non_empty_string(bad):
    with pytest.raises(ValueError, match="token"):
        CortexTrainingClient(base_url="http://127.0.0.1:1", database="DB", schema="S", token=bad)


def test_token_and_auth_provider_together_are_refused():
    class Auth:
        def authorization(self) -> str:
            return 'Snowflake Token="x"'

        def refresh_after(self, error, signed_with=None) -> bool:
            return False

    with pytest.raises(ValueError, match="token"):
        CortexTrainingClient(base_url="http://127.0.0.1:1", database="DB", schema="S", token="t", auth=Auth())


def test_client_token_is_redacted_by_value_from_error_messages(misbehaving_server, no_sleep, act):
    # The secret appears bare, inside other words and in a nested object: no credential-looking
    # prefix precedes it, so only redaction by value can find it.
    body = {"error": {"code": "390100", "message": f"user presented {SECRET} which is unknown ({SECRET})"}}
    misbehaving_server.script(act(401, body))
    with (
        CortexTrainingClient(
            base_url=misbehaving_server.base_url, database="DB", schema="S", token=SECRET, sleep=no_sleep
        ) as client,
        pytest.raises(errors.AuthenticationError) as caught,
    ):
        client.list_jobs()
    assert SECRET not in str(caught.value)
    assert SECRET not in (caught.value.server_message or "")
    assert "user presented <redacted> which is unknown" in str(caught.value)


def test_pat_header_token_is_redacted_by_value_from_error_messages(misbehaving_server, no_sleep, act):
    # The headers from_pat sends, on a loopback server: the same value redaction applies.
    misbehaving_server.script(act(403, {"code": "003001", "message": f"denied for {SECRET}"}))
    headers = {"Authorization": f"Bearer {SECRET}", TOKEN_TYPE_HEADER: PAT_TOKEN_TYPE}
    with (
        CortexTrainingClient(
            base_url=misbehaving_server.base_url, database="DB", schema="S", headers=headers, sleep=no_sleep
        ) as client,
        pytest.raises(errors.PermissionDeniedError) as caught,
    ):
        client.list_jobs()
    assert SECRET not in str(caught.value)
    assert str(caught.value).startswith("denied for <redacted> (003001); HTTP 403")

"""A programmatic access token that the service refuses gets next steps; other 401s do not.

Direct-PAT requests are tested against ct_local started with tokens (the same headers `from_pat`
sends, over plain HTTP) and against a TLS test server through `from_pat` itself and the `ct` CLI.
The Connector side (errno 394400 for a profile) is in test_snowflake_profile.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ct_core import errors
from ct_core.client import CortexTrainingClient
from ct_core.constants import PAT_TOKEN_TYPE, TOKEN_TYPE_HEADER

GOOD = "good-token-1234"
BAD = "stale-token-9876"
CT_SCRIPT = str(Path(sys.executable).with_name("ct"))


@pytest.fixture(scope="module")
def token_server(module_local_server_factory):
    return module_local_server_factory(tokens={GOOD: "TRAINER"})


def _pat_client(server, token: str) -> CortexTrainingClient:
    # What from_pat sends, pointed at the plain-HTTP local server.
    headers = {"Authorization": f"Bearer {token}", TOKEN_TYPE_HEADER: PAT_TOKEN_TYPE}
    return CortexTrainingClient(
        base_url=server.base_url, database="CT_TEST_DB", schema="PUBLIC", headers=headers, max_retries=0
    )


def test_refused_pat_keeps_the_error_and_appends_next_steps(token_server) -> None:
    with _pat_client(token_server, BAD) as client, pytest.raises(errors.PATRejectedError) as caught:
        client.list_jobs()
    error = caught.value
    text = str(error)
    first_line = text.splitlines()[0]
    # The original error comes first, unchanged: the service's reason, the request, the request id.
    assert first_line.startswith("Authentication required")
    assert "(401); HTTP 401 Unauthorized for GET " in first_line
    assert "[snowflake request id: " in first_line
    assert text.endswith(errors.PAT_REJECTED_HINT)
    assert "Missing network policy" in text and "Bypass requirement for network policy" in text
    assert "expired" in text and "another user" in text
    assert errors.PAT_AUTH_DOC_URL in text
    assert error.hint == errors.PAT_REJECTED_HINT
    assert error.status_code == 401 and isinstance(error, errors.AuthenticationError)
    assert BAD not in text


def test_accepted_pat_works_and_other_errors_get_no_hint(token_server) -> None:
    with _pat_client(token_server, GOOD) as client:
        assert client.list_jobs() == []
        with pytest.raises(errors.NotFoundError) as caught:
            client.get_job("no-such-job")
    assert "network policy" not in str(caught.value)


def test_a_401_without_a_pat_gets_no_hint(token_server) -> None:
    # Bearer without the PAT token type: some other credential, so the PAT advice does not apply.
    client = CortexTrainingClient(
        base_url=token_server.base_url,
        database="CT_TEST_DB",
        schema="PUBLIC",
        headers={"Authorization": f"Bearer {BAD}"},
        max_retries=0,
    )
    with client, pytest.raises(errors.AuthenticationError) as caught:
        client.list_jobs()
    assert not isinstance(caught.value, errors.PATRejectedError)
    assert "network policy" not in str(caught.value)


def test_from_pat_gets_the_hint(tls_server, act) -> None:
    server, cert = tls_server
    server.script(act(401, {"code": "390303", "message": "Invalid OAuth access token."}))
    host = server.base_url.removeprefix("https://")
    client = CortexTrainingClient.from_pat(
        host=host, pat=BAD, database="D", schema="S", verify_ssl=str(cert), max_retries=0
    )
    with client, pytest.raises(errors.PATRejectedError) as caught:
        client.list_jobs()
    assert str(caught.value).splitlines()[0].startswith("Invalid OAuth access token. (390303); HTTP 401")
    assert server.requests[0].headers["X-Snowflake-Authorization-Token-Type"] == PAT_TOKEN_TYPE


def test_cli_prints_the_next_steps_on_stderr(tls_server, act, ct_home) -> None:
    server, _ = tls_server
    server.script(act(401, {"code": "390303", "message": "Invalid OAuth access token."}))
    host = server.base_url.removeprefix("https://")
    completed = subprocess.run(
        [CT_SCRIPT, "--host", host, "--pat", BAD, "--database", "D", "--no-verify-ssl", "list"],
        capture_output=True,
        text=True,
        env={**os.environ, "CT_PLUGINS": ""},
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout == ""
    assert completed.stderr.startswith("error: Invalid OAuth access token. (390303); HTTP 401")
    assert "Missing network policy" in completed.stderr
    assert errors.PAT_AUTH_DOC_URL in completed.stderr
    assert BAD not in completed.stderr

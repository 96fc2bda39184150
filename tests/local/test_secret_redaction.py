"""The client's own token never reaches the terminal, whatever the server echoes back.

The server runs with one token and, through fault rules, answers with bodies that repeat it: in an
error message, a validation detail, a plain-text body, a failed job's reason and a failed request's
error. The real `ct` command must print none of them, neither plainly nor with ``CT_DEBUG=1`` (the
traceback with its exception chain), and the SDK's exceptions must not carry it in their text.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

import pytest
from ct_testing.plugin import run_ct

from ct_core import CortexTrainingClient
from ct_core.errors import CTError

SECRET = "tokA-SECRET"
DATABASE = "CT_REDACT_DB"
TRAINING = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 1}}


@pytest.fixture(scope="module")
def echoing(module_local_server_factory: Any) -> Any:
    return module_local_server_factory(tokens={SECRET: "ROLE_A"})


@pytest.fixture
def echo(echoing: Any) -> Any:
    yield echoing
    echoing.clear_faults()


def _job(server: Any) -> str:
    with server.http(SECRET) as http:
        body = {"sub_job_configs": [TRAINING]}
        return str(http.post(server.prefix(database=DATABASE), json=body).raise_for_status().json()["job_id"])


def _ct(server: Any, *args: str, debug: bool) -> Any:
    env = {"CT_DEBUG": "1" if debug else "0", "CORTEX_TRAINING_PAT": SECRET}
    return run_ct("--base-url", server.base_url, "--database", DATABASE, *args, env=env, timeout=120)


def _rule(path: str, status: int, body: Any, method: str = "GET", **extra: Any) -> dict[str, Any]:
    return {"path": path, "method": method, "status": status, "body": body, "count": None, **extra}


ECHOES = {
    "error message": lambda job: (
        _rule(r"/cortex-training$", 401, {"message": f"rejected token {SECRET} for user", "code": "390303"}),
        ["list"],
    ),
    "nested error": lambda job: (
        _rule(r"/cortex-training$", 400, {"error": {"message": f"Bearer {SECRET} refused", "code": "x"}}),
        ["list"],
    ),
    "validation detail": lambda job: (
        _rule(
            r"/cortex-training$",
            422,
            {"detail": [{"loc": ["body", "x"], "msg": f"{SECRET} is not allowed", "type": "value_error"}]},
            method="POST",
        ),
        ["submit", "{job_file}"],
    ),
    # A status ct does not retry: a 500 would be tried 11 times over about a minute of backoff
    # before the same message is printed.
    "plain text body": lambda job: (
        _rule(rf"/{job}$", 400, f"upstream saw token {SECRET} and gave up"),
        ["get", job, "--raw"],
    ),
    "failed job reason": lambda job: (
        _rule(
            rf"/{job}$",
            200,
            {
                "job_id": job,
                "status": "failed",
                "reason": f"token {SECRET} expired",
                "reason_details": SECRET,
            },
        ),
        ["wait", job],
    ),
}


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "CT_DEBUG"])
@pytest.mark.parametrize("case", sorted(ECHOES))
def test_ct_never_prints_its_token_echoed_by_the_server(
    echo: Any, ct_home: Path, tmp_path: Path, case: str, debug: bool
) -> None:
    job_id = _job(echo)
    rule, args = ECHOES[case](job_id)
    job_file = tmp_path / "job.json"
    job_file.write_text('{"sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}]}')
    args = [a.replace("{job_file}", str(job_file)) for a in args]
    echo.set_faults(rule)
    result = _ct(echo, *args, debug=debug)
    assert result.returncode == 1, result
    assert SECRET not in result.stdout + result.stderr, result
    if case != "plain text body":  # a body that is not JSON is not shown at all
        assert "<redacted>" in result.stderr, result
    if debug:
        assert "Traceback" in result.stderr, result


def test_a_failed_request_error_is_redacted(echo: Any, ct_home: Path) -> None:
    job_id = _job(echo)
    with echo.http(SECRET) as http:
        from ct_testing.plugin import wait_for_job_status

        wait_for_job_status(http, f"{echo.prefix(database=DATABASE)}/{job_id}", {"running"})
    echo.set_faults(
        _rule(
            r"/requests/", 200, {"status": "failed", "error": f"worker rejected {SECRET}", "request_id": "r"}
        )
    )
    for debug in (False, True):
        result = _ct(echo, "--job", job_id, "step", debug=debug)
        assert result.returncode == 1, result
        assert SECRET not in result.stdout + result.stderr, result


def test_sdk_exceptions_do_not_carry_the_token(echo: Any) -> None:
    job_id = _job(echo)
    echo.set_faults(ECHOES["error message"](job_id)[0], ECHOES["failed job reason"](job_id)[0])
    with CortexTrainingClient(
        base_url=echo.base_url, database=DATABASE, schema="PUBLIC", token=SECRET
    ) as client:
        for call in (client.list_jobs, lambda: client.wait_for_job(job_id)):
            with pytest.raises(CTError) as caught:
                call()
            shown = "".join(traceback.format_exception(caught.value))
            assert SECRET not in shown
            assert SECRET not in repr(caught.value.args)


def test_a_traceback_hides_the_token_of_every_request_in_its_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception chain can hold text the SDK never built (an httpx error, a ValueError): the CLI
    removes the credential of any request in the chain from everything it prints."""
    import io

    import httpx

    from ct_cli import output
    from ct_core.errors import APIError

    secret = "chain-SECRET-only-here"
    request = httpx.Request("GET", "http://127.0.0.1:9/x", headers={"Authorization": f"Bearer {secret}"})
    refused = APIError("refused", response=httpx.Response(401, request=request))
    refused.__context__ = ValueError(f"inner text with {secret}")
    outer = RuntimeError(f"outer text with {secret}")
    outer.__cause__ = refused
    monkeypatch.setenv(output.DEBUG_ENV_VAR, "1")
    stderr = io.StringIO()
    with output.using(output.Streams(stdout=io.StringIO(), stderr=stderr)):
        output.error(f"message with {secret}", hint=f"hint with {secret}", exc=outer)
    printed = stderr.getvalue()
    assert "ValueError: inner text with <redacted>" in printed
    assert secret not in printed

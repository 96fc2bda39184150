"""Exit codes and error lines of `ct`: what a user sees when something is wrong."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ct_cli.main import main

CtRunner = Any


def _body(*sub_jobs: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"sub_job_configs": list(sub_jobs), **extra})


SAMPLING = {"job_type": "sampling", "model_name": "Qwen/Qwen3-0.6B", "inference_config": {"n_gpus": 1}}
TRAINING = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 1}}


def test_dry_run_needs_no_connection_and_prints_the_normalized_body(ct: CtRunner, ct_home: Path) -> None:
    # No flags, no env, no login: a dry run must not even look for a connection.
    body = {
        "sub_job_configs": [
            {**TRAINING, "training_config": {"n_gpus": 1, "model_provider": "arctic"}},
            SAMPLING,
        ],
        "idle_timeout_seconds": 0,
    }
    result = ct("submit", "-", "--dry-run", input=json.dumps(body))
    assert result.returncode == 0, result
    printed = result.json
    # The server takes the arctic provider only under its older name, so the body says prime_rl.
    assert printed["sub_job_configs"][0]["training_config"]["model_provider"] == "prime_rl"
    assert printed["idle_timeout_seconds"] == 0
    assert "error" not in result.stderr


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[1, 2]", "error: job JSON must be an object"),
        ("{not json", "error: invalid JSON in -: "),
        (
            json.dumps({"sub_job_configs": []}),
            "error: job JSON must contain a non-empty sub_job_configs list",
        ),
        (_body(TRAINING, TRAINING), "at most one training sub-job is supported per job"),
        (
            _body({**SAMPLING, "job_type": "log_prob"}),
            "sub_job_configs[0].job_type: log_probability sub-jobs are not currently supported",
        ),
        (_body(SAMPLING, idle_timeout_seconds=5), "idle_timeout_seconds"),
        (
            _body({**TRAINING, "training_config": {"ds_config": {"zero_optimization": {"stage": 3}}}}),
            "ZeRO-3",
        ),
    ],
)
def test_dry_run_refuses_bad_bodies_offline(ct: CtRunner, body: str, message: str) -> None:
    result = ct("submit", "-", "--dry-run", input=body)
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert message in result.stderr
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr


def test_dry_run_lists_every_problem(ct: CtRunner) -> None:
    body = _body(TRAINING, TRAINING, {**SAMPLING, "job_type": "log_probability"}, pending_timeout_seconds=0)
    result = ct("submit", "-", "--dry-run", input=body)
    assert result.returncode == 1
    assert "at most one training sub-job" in result.stderr
    assert "log_probability sub-jobs are not currently supported" in result.stderr
    assert "pending_timeout_seconds" in result.stderr


def test_missing_file_is_one_error_line(ct: CtRunner, tmp_path: Path) -> None:
    result = ct("submit", str(tmp_path / "nope.json"), "--dry-run")
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and "nope.json" in result.stderr


def test_a_stray_argument_is_named_in_plain_words(ct: CtRunner) -> None:
    result = ct("cancel", "JOB_A", "JOB_B")
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == "error: unexpected argument(s): JOB_B"
    assert "Unused Tokens" not in result.stderr


def test_no_connection_configured(ct: CtRunner) -> None:
    result = ct("list")
    assert result.returncode == 2  # a usage error, as the reference's argparse check
    assert result.stdout == ""
    assert "provide --base-url" in result.stderr
    assert "hint: run 'ct login'" in result.stderr


def test_unknown_job_shows_the_request_id_and_a_hint(ct: CtRunner, server_args: list[str]) -> None:
    result = ct(*server_args, "get", "no-such-job")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    # The service's reason and code lead, then the status and the request, then the request id.
    assert lines[0].startswith(
        "error: Training job no-such-job not found in PUBLIC (517601); HTTP 404 Not Found"
    )
    assert f"for GET {server_args[1]}/api/v2/databases/" in lines[0]
    assert lines[0].endswith("]") and " [snowflake request id: " in lines[0]
    assert "Client Error" not in result.stderr
    assert lines[1].startswith("hint: ")
    assert len(lines) == 2


REFUSED_IN_A_CHILD = """
import json, sys
from ct_cli.main import main
code = main(json.loads(sys.argv[1]))
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("httpx", "httpcore", "h11"))
sys.stdout.write(json.dumps({"code": code, "heavy": heavy}))
"""


def test_a_refused_request_is_reported_without_httpx(ct_home: Path, server_args: list[str]) -> None:
    # The error's answer is ct's own object, built from what the connection read: no HTTP library
    # beyond the standard one is imported to report a 404.
    done = subprocess.run(
        [sys.executable, "-c", REFUSED_IN_A_CHILD, json.dumps([*server_args, "get", "no-such-job"])],
        capture_output=True,
        text=True,
        env={**os.environ, "CT_PLUGINS": ""},
        timeout=120,
        check=False,
    )
    report = json.loads(done.stdout)
    assert report["code"] == 1 and "(517601); HTTP 404 Not Found" in done.stderr
    assert report["heavy"] == []


def test_a_refused_body_leads_with_the_validation_reason(
    ct: CtRunner, server_args: list[str], job_body: dict[str, Any], tmp_path: Path
) -> None:
    # Client and server check a body by the same rules, so ct refuses a mistyped comment before
    # sending it, in the words the server's 422 would use.
    path = tmp_path / "job.json"
    path.write_text(json.dumps({**job_body, "comment": ["not", "text"]}))
    result = ct(*server_args, "submit", str(path))
    assert result.returncode == 1, result
    lines = result.stderr.splitlines()
    assert lines[0] == "error: comment must be a string, got ['not', 'text']", lines
    assert "HTTP 422" not in result.stderr
    # Said once: the reason is in the message, so no hint repeats it; no Python repr anywhere.
    assert result.stderr.count("comment must be a string") == 1
    assert "{" not in result.stderr and "'loc'" not in result.stderr


def test_pat_is_never_printed(ct: CtRunner) -> None:
    secret = "ver:1-hint:1234-SECRETVALUE"
    # Incomplete connections are refused before any request; the messages must not echo the token.
    for argv in (
        ["--pat", secret, "--database", "DB", "list"],
        ["--host", "h.example", "--pat", secret, "list"],
    ):
        result = ct(*argv)
        assert result.returncode == 2, result
        assert result.stderr.startswith("error: ")
        assert secret not in result.stderr and secret not in result.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--bogus"],
        ["no-such-command"],
        ["cancel"],  # missing JOB_ID
        ["--poll-interval", "soon", "list"],
        ["list", "--compact"],  # global options belong before the command
    ],
)
def test_usage_errors_exit_2(ct: CtRunner, argv: list[str]) -> None:
    result = ct(*argv)
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")


def test_no_command_prints_help_on_stderr_and_exits_2(ct: CtRunner) -> None:
    result = ct("--compact")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Usage: ct" in result.stderr and "error: a command is required" in result.stderr


def test_command_options_are_not_global_options(ct: CtRunner, server_args: list[str]) -> None:
    # After the command, --database is list's own account-level filter, which needs --all.
    result = ct(*server_args, "list", "--database", "OTHER")
    assert result.returncode == 1
    assert "--database only apply with --all" in result.stderr


def test_ct_debug_shows_the_traceback(ct: CtRunner, server_args: list[str]) -> None:
    quiet = ct(*server_args, "get", "no-such-job")
    loud = ct(*server_args, "get", "no-such-job", env={"CT_DEBUG": "1"})
    assert "Traceback" not in quiet.stderr
    assert "Traceback (most recent call last)" in loud.stderr
    assert loud.returncode == 1


class _InterruptingClient:
    def list_models(self) -> list[dict[str, Any]]:
        raise KeyboardInterrupt

    def get_job(self, job_id: str) -> dict[str, Any]:
        raise KeyError("request_id")

    def close(self) -> None:
        pass


@pytest.fixture
def no_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In-process runs share the plugin manager; load none, so installed plugins cannot add warnings."""
    from ct_core.plugins import reset_plugin_manager

    monkeypatch.setenv("CT_PLUGINS", "")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def test_in_process_main_maps_interrupts_and_unexpected_errors(no_plugins: None) -> None:
    """main() with injected streams and client: 130 on Ctrl+C, a clean line for a KeyError."""
    out, err = io.StringIO(), io.StringIO()
    code = main(["models"], client_factory=lambda options: _InterruptingClient(), stdout=out, stderr=err)
    assert code == 130
    assert out.getvalue() == "" and err.getvalue() == "error: interrupted\n"

    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["get", "--raw", "j1"], client_factory=lambda options: _InterruptingClient(), stdout=out, stderr=err
    )
    assert code == 1
    assert err.getvalue().startswith("error: KeyError: 'request_id'\nhint: set CT_DEBUG=1")


def test_in_process_global_options_reach_the_client_factory(no_plugins: None) -> None:
    seen: list[Any] = []

    class Client:
        def list_models(self) -> list[dict[str, str]]:
            return [{"name": "m"}]

    def factory(options: Any) -> Client:
        seen.append(options)
        return Client()

    out = io.StringIO()
    argv = ["--base-url", "http://x", "--database", "D", "--schema", "S", "--no-verify-ssl", "--compact"]
    argv += ["--poll-interval", "0.25", "--job-id", "J", "models"]
    assert main(argv, client_factory=factory, stdout=out, stderr=io.StringIO()) == 0
    assert out.getvalue() == '{"models":[{"name":"m"}]}\n'
    (options,) = seen
    assert (options.base_url, options.database, options.schema, options.job) == ("http://x", "D", "S", "J")
    assert options.no_verify_ssl is True and options.poll_interval == 0.25
    connection = options.connection_options()
    assert connection.verify_ssl is False and connection.base_url == "http://x"
    assert "pat=None" in repr(options)


def test_in_process_client_factory_gets_the_resolved_connection(
    no_plugins: None, ct_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the reference's main did: the factory sees the connection after config, login and env."""
    from ct_core.connect.resolve import save_login_config_path

    config = tmp_path / "remembered.json"
    config.write_text(json.dumps({"base_url": "http://cfg:1", "database": "CFGDB", "pat": "cfg-token"}))
    save_login_config_path(config)
    monkeypatch.setenv("CORTEX_TRAINING_SCHEMA", "ENV_SCHEMA")
    seen: list[Any] = []

    class Client:
        def list_models(self) -> list[dict[str, str]]:
            return []

    def factory(options: Any) -> Client:
        seen.append(options)
        return Client()

    argv = ["--poll-timeout", "7", "models"]
    assert main(argv, client_factory=factory, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    (options,) = seen
    assert (options.base_url, options.database, options.schema, options.endpoint) == (
        "http://cfg:1",
        "CFGDB",
        "ENV_SCHEMA",
        "cortex-training",
    )
    assert (options.poll_interval, options.poll_timeout, options.no_verify_ssl) == (0.5, 7.0, False)
    assert options.config == str(config.resolve()) and options.pat == "cfg-token"
    assert options.resolved is not None and options.resolved.mode == "base_url"
    assert "cfg-token" not in repr(options)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_while_waiting_exits_130(ct_home: Path, local_server_factory: Any, job_file: Path) -> None:
    # A server whose jobs stay pending for a long time, so `ct wait` is still polling when interrupted.
    server = local_server_factory(settings={"pending_delay_s": 600})
    args = ["--base-url", server.base_url, "--database", "DB"]
    ct_script = str(Path(sys.executable).with_name("ct"))
    env = {**os.environ, "CT_PLUGINS": ""}
    created = subprocess.run(
        [ct_script, *args, "submit", str(job_file)], capture_output=True, text=True, env=env, check=True
    )
    job_id = json.loads(created.stdout)["job_id"]
    process = subprocess.Popen(
        [ct_script, *args, "wait", job_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # A shell starts background jobs with SIGINT ignored and children inherit that; a person's
        # terminal gives ct the default disposition, which is what this test is about.
        preexec_fn=_default_sigint,
    )
    assert process.stderr is not None
    first_line = process.stderr.readline()  # printed once the command is polling
    assert "waiting until job" in first_line
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert stdout == ""
    assert "Traceback" not in stderr and "error: interrupted" in stderr


def test_validation_details_become_the_hint() -> None:
    import httpx

    from ct_cli.main import describe_error
    from ct_core.errors import APIError

    def refused(body: object) -> APIError:
        request = httpx.Request("POST", "http://h/x")
        response = httpx.Response(422, json=body, request=request)
        return APIError("422 Client Error: Unprocessable Entity for url: http://h/x", response=response)

    details = [{"loc": ["body", "sampling_params", "temperature"], "msg": "must be >= 0", "type": "v"}]
    assert describe_error(refused({"detail": details})) == (
        "422 Client Error: Unprocessable Entity for url: http://h/x",
        "sampling_params.temperature: must be >= 0",
    )
    many = [{"loc": ["body", f"f{i}"], "msg": "bad"} for i in range(7)] + ["not a detail"]
    hint = describe_error(refused({"detail": many}))[1]
    assert hint is not None and hint.startswith("f0: bad; f1: bad") and hint.endswith("(and 2 more)")
    # Bodies without details keep the plain message and no hint.
    assert describe_error(refused({"message": "nope"}))[1] is None
    assert describe_error(refused({"detail": "text"}))[1] is None

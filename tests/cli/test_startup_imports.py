"""What a `ct` start imports, with every installed plugin loaded (checked in sys.modules, not timed).

`ct --help` needs neither cyclopts nor rich nor the HTTP stack; a command imports cyclopts and
its own module, and the SDK's client only when it talks to the service; rich only when something
is printed through it. The runs plugin's command groups stay unimported until they run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ct_core import plugins

#: Never imported by any of the start-ups below: each costs from tens of milliseconds to seconds.
NEVER = (
    "torch",
    "numpy",
    "transformers",
    "snowflake.connector",
    "starlette",
    "uvicorn",
    "textual",
    "dbos",
    "sqlalchemy",
    "ct_local",
    "ct_runs.cli",
    "ct_runs.service",
)
#: Not imported by `ct --help` either.
NOT_FOR_HELP = (
    *NEVER,
    "cyclopts",
    "rich",
    "attrs",
    "docstring_parser",
    "httpx",
    "httpcore",
    "requests",
    "urllib3",
    "ct_api",
    "ct_core.client",
    "ct_core.errors",
)

SCRIPT = """
import json, sys
from ct_cli.main import main
code = main(json.loads(sys.argv[1]))
with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""


def start(
    argv: list[str], tmp_path: Path, **env: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run `ct ARGV` in a fresh interpreter with every installed plugin; its output and sys.modules."""
    environment = {**os.environ, "COLUMNS": "100", **env}
    environment.pop(plugins.ALLOW_ENV_VAR, None)
    report = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(argv), str(report)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done, json.loads(report.read_text(encoding="utf-8"))


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    """Which of `names` (packages or modules) were imported."""
    return sorted(name for name in names if any(m == name or m.startswith(name + ".") for m in modules))


def test_help_imports_no_heavy_module_with_every_plugin(ct_home: Path, tmp_path: Path) -> None:
    done, report = start(["--help"], tmp_path)
    assert report["code"] == 0
    assert loaded(report["modules"], NOT_FOR_HELP) == []
    # The plugins were loaded and their commands listed, not skipped.
    for ep in plugins.discover_entry_points():
        assert any(module == ep.value.partition(":")[0] for module in report["modules"]), ep
    assert " capacity " in done.stdout and " lora " in done.stdout


def test_version_imports_no_parser(ct_home: Path, tmp_path: Path) -> None:
    _, report = start(["--version"], tmp_path)
    assert loaded(report["modules"], ("cyclopts", "rich", "httpx")) == []


def test_a_command_that_prints_only_json_imports_no_rich(ct_home: Path, tmp_path: Path) -> None:
    done, report = start(["plugins"], tmp_path)
    assert report["code"] == 0
    assert "plugins" in json.loads(done.stdout)
    assert "cyclopts" in report["modules"]
    assert loaded(report["modules"], ("rich", "httpx", "httpcore", "ct_core.client", *NEVER)) == []


INJECTED_STREAMS = """
import io, json, sys
from ct_cli.main import main
out, err = io.StringIO(), io.StringIO()
code = main(["list", "--help"], stdout=out, stderr=err)
json.dump({"code": code, "out": out.getvalue(), "err": err.getvalue()}, sys.stdout)
"""


def test_command_help_still_goes_to_the_invocations_stdout(ct_home: Path, tmp_path: Path) -> None:
    # In a child process: main() installs ct's log handler, which would outlive this test here.
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", INJECTED_STREAMS],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["code"] == 0 and report["err"] == ""
    assert "Usage: ct list [OPTIONS]" in report["out"]
    assert "--status" in report["out"] and "Global options (before the command)" in report["out"]


#: Not imported by a command whose requests all succeed over plain HTTP: the standard library
#: speaks to the service; httpx builds only the `response` of an APIError, requests only its base
#: class (with `ct_core.errors.api`), httpcore only a proxied connection, and the modules that
#: download only a download. The schemas (`ct_api.models`) are types for a checker, never imported.
#: `urllib.request` (with tempfile, shutil and the compressors) only reads the proxy settings when
#: the environment names a proxy; `hashlib` only checks a chunked result; generation loads with
#: the first generate call, the create-body rules with the first create; the idna codec only
#: a host name that is not ASCII (or a TLS handshake).
NOT_FOR_A_REQUEST = (
    *NEVER,
    "urllib.request",
    "encodings.idna",
    "ct_core.config.validation",
    "ct_core.config.bodies",
    "hashlib",
    "ct_core.data.generate",
    "httpx",
    "httpcore",
    "h11",
    "requests",
    "urllib3",
    "certifi",
    "ct_api.models",
    "ct_core.errors.api",
    "ct_core.downloads.checkpoint",
    "ct_core.downloads.link_client",
    "ct_core.downloads.logs",
    "ct_core.downloads.chunks",
)


def plugin_packages() -> tuple[str, ...]:
    """The top-level packages of every installed plugin (`ct_runs`, `ct_lora`, ...)."""
    packages = {ep.value.partition(":")[0].split(".")[0].strip() for ep in plugins.discover_entry_points()}
    assert packages, "no plugin is installed: the test would pass vacuously"
    return tuple(sorted(packages))


def test_get_and_list_import_only_what_a_request_needs(
    ct_home: Path, tmp_path: Path, server_args: list[str], submitted_job: str
) -> None:
    # A core command imports no plugin: which command a plugin serves is read from its metadata.
    not_imported = (*NOT_FOR_A_REQUEST, *plugin_packages())
    done, report = start([*server_args, "get", submitted_job, "--raw"], tmp_path)
    assert report["code"] == 0, done.stderr
    assert json.loads(done.stdout)["job_id"] == submitted_job
    assert loaded(report["modules"], not_imported) == []
    body, report = start([*server_args, "get", submitted_job], tmp_path)
    assert report["code"] == 0, body.stderr
    assert "sub_job_configs" in json.loads(body.stdout)
    assert loaded(report["modules"], not_imported) == []
    listing, report = start([*server_args, "list"], tmp_path)
    assert report["code"] == 0, listing.stderr
    assert submitted_job in {job["job_id"] for job in json.loads(listing.stdout)["jobs"]}
    assert loaded(report["modules"], not_imported) == []


def test_a_plugin_command_imports_only_its_own_plugin(ct_home: Path, tmp_path: Path) -> None:
    done, report = start(["capacity", "--help"], tmp_path)
    assert report["code"] == 0, done.stderr
    assert "ct_capacity" in report["modules"]
    others = tuple(package for package in plugin_packages() if package != "ct_capacity")
    assert loaded(report["modules"], others) == []


def test_a_refused_request_loads_the_api_errors_and_reports_them(
    ct_home: Path, tmp_path: Path, server_args: list[str]
) -> None:
    # The lazy imports load on the error path: the CLI reports the 404 as usual.
    done, report = start([*server_args, "get", "no-such-job"], tmp_path)
    assert report["code"] == 1
    assert "404" in done.stderr and "no-such-job" in done.stderr
    assert "Traceback" not in done.stderr
    assert "ct_core.errors.api" in report["modules"] and "requests" in report["modules"]

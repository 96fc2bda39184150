"""`ct login --convert-legacy-config` against ct_local started with a token.

The legacy config points at the local server with `base_url` (plain HTTP) and carries the old
PAT; the server answers the SQL API statements the conversion runs. The last test verifies the new
profile end to end through a stand-in Snowflake Connector (tests/core/fake_snowflake).
"""

from __future__ import annotations

import json
import os
import pty
import stat
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path
from typing import Any

import pytest

from ct_core.client import CortexTrainingClient
from ct_core.config.typed import SubJobConfig
from ct_core.constants import PAT_TOKEN_TYPE, TOKEN_TYPE_HEADER
from ct_local.settings import default_user_for_token

CtRunner = Any
PAT = "legacy-pat-0123456789"
ROLE = "TRAINER"
FAKE_CONNECTOR = Path(__file__).resolve().parents[1] / "core" / "fake_snowflake"
CT_SCRIPT = str(Path(sys.executable).with_name("ct"))


@pytest.fixture(scope="module")
def server(module_local_server_factory: Any) -> Any:
    return module_local_server_factory(tokens={PAT: ROLE})


@pytest.fixture(scope="module")
def existing_location(server: Any) -> tuple[str, str]:
    """A database and schema the server knows (it has a job there), so SHOW lists them."""
    database, schema = "LEGACY_EXISTING_DB", "TEAM_A"
    headers = {"Authorization": f"Bearer {PAT}", TOKEN_TYPE_HEADER: PAT_TOKEN_TYPE}
    with CortexTrainingClient(
        base_url=server.base_url, database=database, schema=schema, headers=headers
    ) as c:
        sampling = SubJobConfig.sampling_job("Qwen/Qwen3-0.6B", max_seq_len=64, n_gpus=1)
        job_id = c.create_job([sampling])
        c.cancel_job(job_id)
    return database, schema


def _legacy_config(tmp_path: Path, server: Any, **fields: Any) -> Path:
    path = tmp_path / f"legacy-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps({"base_url": server.base_url, "pat": PAT, **fields}), encoding="utf-8")
    path.chmod(0o600)
    return path


def _connections(home: Path) -> Path:
    return home / ".snowflake" / "connections.toml"


def _remembered(home: Path) -> Path:
    return home / ".snowflake" / "cortex-training" / "config.json"


def test_missing_database_is_not_created_without_a_yes(
    ct: CtRunner, ct_home: Path, server: Any, tmp_path: Path
) -> None:
    config = _legacy_config(tmp_path, server, database="NEW_DB_1")
    result = ct("login", "--convert-legacy-config", str(config), "--no-verify", input="")
    assert result.returncode == 1, result
    assert "  CREATE DATABASE IF NOT EXISTS NEW_DB_1;" in result.stderr  # the SQL is shown first
    assert "pass --yes" in result.stderr
    assert result.stdout == ""
    assert not _connections(ct_home).exists() and not _remembered(ct_home).exists()
    assert PAT not in result.stderr


def test_conversion_with_yes_creates_the_database_and_the_profile(
    ct: CtRunner, ct_home: Path, server: Any, tmp_path: Path
) -> None:
    config = _legacy_config(tmp_path, server, database="NEW_DB_2")
    args = ["login", "--convert-legacy-config", str(config), "--connection", "converted", "--yes"]
    result = ct(*args, "--no-verify")
    assert result.returncode == 0, result
    summary = result.json
    user = default_user_for_token(PAT)
    assert summary["user"] == user and summary["role"] == ROLE
    assert summary["database"] == "NEW_DB_2" and summary["schema"] == "PUBLIC"
    assert summary["database_created"] is True and summary["profile_created"] is True
    assert summary["connection"] == "converted" and summary["converted_from"] == str(config)
    assert "CREATE DATABASE IF NOT EXISTS NEW_DB_2;" in result.stderr
    assert "still holds the token in plain text" in result.stderr
    assert PAT not in result.stdout + result.stderr

    connections = _connections(ct_home)
    assert stat.S_IMODE(connections.stat().st_mode) == 0o600
    profile = tomllib.loads(connections.read_text())["converted"]
    assert profile == {
        "account": summary["host"].split(".", 1)[0],
        "host": summary["host"],
        "user": user,
        "role": ROLE,
        "authenticator": "programmatic_access_token",
        "token": PAT,
        "database": "NEW_DB_2",
        "schema": "PUBLIC",
    }
    assert json.loads(_remembered(ct_home).read_text()) == {"profile": "converted"}

    # A second conversion to the same name is refused before any SQL runs, unless forced.
    again = ct(*args, "--no-verify")
    assert again.returncode == 1 and "--force" in again.stderr
    forced = ct(*args, "--no-verify", "--force")
    assert forced.returncode == 0, forced


def test_an_existing_database_and_schema_need_no_question(
    ct: CtRunner, ct_home: Path, server: Any, tmp_path: Path, existing_location: tuple[str, str]
) -> None:
    database, schema = existing_location
    config = _legacy_config(tmp_path, server, database=database.lower(), schema=schema)
    result = ct("login", "--convert-legacy-config", str(config), "--no-verify", input="")
    assert result.returncode == 0, result
    assert result.json["database_created"] is False
    assert result.json["connection"] == "cortex-training"  # the default profile name
    assert "CREATE DATABASE" not in result.stderr


def test_a_missing_schema_is_an_error_naming_the_sql(
    ct: CtRunner, ct_home: Path, server: Any, tmp_path: Path, existing_location: tuple[str, str]
) -> None:
    database, _ = existing_location
    config = _legacy_config(tmp_path, server, database=database)
    result = ct("login", "--convert-legacy-config", str(config), "--schema", "NOPE", "--no-verify")
    assert result.returncode == 1, result
    assert f"schema {database}.NOPE does not exist" in result.stderr
    assert f"CREATE SCHEMA IF NOT EXISTS {database}.NOPE" in result.stderr
    assert not _connections(ct_home).exists()


def test_a_refused_token_gets_the_pat_hint_and_changes_nothing(
    ct: CtRunner, ct_home: Path, server: Any, tmp_path: Path
) -> None:
    config = tmp_path / "stale.json"
    config.write_text(json.dumps({"base_url": server.base_url, "pat": "stale-token"}), encoding="utf-8")
    result = ct("login", "--convert-legacy-config", str(config), "--no-verify")
    assert result.returncode == 1, result
    assert "HTTP 401 Unauthorized" in result.stderr and "Missing network policy" in result.stderr
    assert "stale-token" not in result.stderr
    assert not _connections(ct_home).exists()


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        ({"host": "acct.snowflakecomputing.com", "database": "D"}, [], "has no pat"),
        ({"pat": "x", "database": "D"}, [], "names no host"),
        ({"host": "h", "pat": "x", "database": "D; DROP TABLE T"}, [], "not a plain Snowflake identifier"),
        ({"host": "h", "pat": "x"}, ["--connection", "bad name"], "may only use letters"),
        ({"host": "h", "pat": "x"}, ["--host", "h"], "cannot be combined"),
    ],
)
def test_unusable_inputs_are_refused_offline(
    ct: CtRunner, tmp_path: Path, content: dict[str, Any], extra: list[str], message: str
) -> None:
    config = tmp_path / "legacy.json"
    config.write_text(json.dumps(content), encoding="utf-8")
    result = ct("login", "--convert-legacy-config", str(config), *extra, "--no-verify")
    # Two login forms at once is a usage error (exit 2); an unusable file is an error (exit 1).
    assert result.returncode == (2 if message == "cannot be combined" else 1), result
    assert message in result.stderr


def test_yes_alone_is_a_usage_error(ct: CtRunner) -> None:
    result = ct("login", "--yes", "--no-verify")
    assert result.returncode == 2 and "--yes only applies to --convert-legacy-config" in result.stderr


def _run_on_a_terminal(args: list[str], answer: str) -> tuple[int, str, str]:
    """Run ct with a pseudo-terminal as stdin (so it may ask) and type `answer`."""
    primary, secondary = pty.openpty()
    try:
        process = subprocess.Popen(
            [CT_SCRIPT, *args],
            stdin=secondary,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "CT_PLUGINS": ""},
        )
        os.close(secondary)
        secondary = -1
        os.write(primary, answer.encode() + b"\n")
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if secondary >= 0:
            os.close(secondary)
        os.close(primary)
    return process.returncode, stdout, stderr


@pytest.mark.parametrize(("answer", "created"), [("y", True), ("n", False)])
def test_on_a_terminal_the_user_is_asked(
    ct_home: Path, server: Any, tmp_path: Path, answer: str, created: bool
) -> None:
    config = _legacy_config(tmp_path, server, database=f"ASKED_DB_{answer.upper()}")
    code, stdout, stderr = _run_on_a_terminal(
        ["login", "--convert-legacy-config", str(config), "--no-verify"], answer
    )
    assert f"CREATE DATABASE IF NOT EXISTS ASKED_DB_{answer.upper()};" in stderr
    assert "run it now? [y/N]" in stderr
    if created:
        assert code == 0, stderr
        assert json.loads(stdout)["database_created"] is True
    else:
        assert code == 1, stderr
        assert "not converted" in stderr
        assert not _connections(ct_home).exists()


def test_the_new_profile_is_verified_and_used_by_later_commands(
    ct: CtRunner, ct_home: Path, server: Any, tmp_path: Path
) -> None:
    # The stand-in Connector signs in with the profile's token and reports the local server.
    env = {"PYTHONPATH": str(FAKE_CONNECTOR), "CT_FAKE_SNOWFLAKE_SERVER_URL": server.base_url}
    config = _legacy_config(tmp_path, server, database="VERIFIED_DB")
    result = ct("login", "--convert-legacy-config", str(config), "--yes", env=env)
    assert result.returncode == 0, result
    assert result.json["verified"] is True
    listed = ct("list", env=env)
    assert listed.returncode == 0, listed
    assert listed.json["jobs"] == []

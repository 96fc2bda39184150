"""`ct login` in its three forms, in an isolated home: what is remembered, and what is printed."""

from __future__ import annotations

import json
import stat
import tomllib
from pathlib import Path
from typing import Any

CtRunner = Any


def test_login_with_a_config_file_is_remembered(
    ct: CtRunner, ct_home: Path, local_server: Any, tmp_path: Path
) -> None:
    config = tmp_path / "ct.json"
    config.write_text(json.dumps({"base_url": local_server.base_url, "database": "CT_CLI_LOGIN"}))
    config.chmod(0o600)
    result = ct("login", str(config))
    assert result.returncode == 0, result
    assert result.json == {"config_path": str(config.resolve()), "logged_in": True, "verified": True}
    state = ct_home / ".config" / "cortex-training" / "login.json"
    assert json.loads(state.read_text()) == {"config_path": str(config.resolve())}
    # Later commands use it with no connection flags at all.
    listed = ct("list")
    assert listed.returncode == 0, listed
    assert "jobs" in listed.json


def test_login_config_option_form_and_bad_config(ct: CtRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"base_url": "http://127.0.0.1:9", "colour": "blue"}))
    result = ct("login", "--config", str(bad), "--no-verify")
    assert result.returncode == 1
    assert "error: unknown config key(s): colour" in result.stderr
    both = ct("login", str(bad), "--config", str(bad))
    assert both.returncode == 2 and "once" in both.stderr  # a usage error, as the reference's


def test_login_warns_about_a_readable_config_and_failed_verification(ct: CtRunner, tmp_path: Path) -> None:
    config = tmp_path / "open.json"
    config.write_text(json.dumps({"base_url": "http://127.0.0.1:9", "database": "DB", "pat": "s3cr3t-token"}))
    config.chmod(0o644)
    result = ct("login", str(config), env={"CORTEX_TRAINING_DISABLE_TELEMETRY": "1"}, timeout=300)
    assert result.returncode == 0, result
    assert result.json["verified"] is False
    assert "readable by other users" in result.stderr
    assert "could not be verified" in result.stderr
    assert "s3cr3t-token" not in result.stderr + result.stdout


def test_login_creates_a_pat_profile_without_printing_the_token(ct: CtRunner, ct_home: Path) -> None:
    token = "pat-token-value-123"
    args = ["login", "--host", "https://app.snowflake.com/myorg/myacct", "--user", "ALICE", "--pat-stdin"]
    result = ct(*args, "--database", "ML", "--connection", "training", "--no-verify", input=token + "\n")
    assert result.returncode == 0, result
    summary = result.json
    assert summary["host"] == "myorg-myacct.snowflakecomputing.com"
    assert summary["profile_created"] is True and summary["connection"] == "training"
    assert summary["schema"] == "PUBLIC"
    assert token not in result.stdout + result.stderr
    connections = ct_home / ".snowflake" / "connections.toml"
    assert stat.S_IMODE(connections.stat().st_mode) == 0o600
    profile = tomllib.loads(connections.read_text())["training"]
    assert profile["token"] == token
    assert profile["account"] == "myorg-myacct"
    assert profile["authenticator"] == "programmatic_access_token"
    remembered = ct_home / ".snowflake" / "cortex-training" / "config.json"
    assert json.loads(remembered.read_text()) == {"profile": "training"}

    again = ct(*args, "--connection", "training", "--no-verify", input=token + "\n")
    assert again.returncode == 1 and "--force" in again.stderr
    forced = ct(*args, "--connection", "training", "--no-verify", "--force", input="other\n")
    assert forced.returncode == 0, forced


def test_login_with_an_existing_profile_and_reset(ct: CtRunner, ct_home: Path) -> None:
    connections = ct_home / ".snowflake" / "connections.toml"
    connections.write_text('# my profiles\n[work]\naccount = "acct"\nuser = "BOB"\ndatabase = "D1"\n')
    missing = ct("login", "--connection", "nope", "--no-verify")
    assert missing.returncode == 1 and "not found" in missing.stderr
    result = ct("login", "--connection", "work", "--schema", "S2", "--no-verify")
    assert result.returncode == 0, result
    assert result.json["connection"] == "work"
    assert result.json["schema"] == "S2" and result.json["profile_updated"] is True
    assert tomllib.loads(connections.read_text())["work"]["user"] == "BOB"

    reset = ct("login", "--reset")
    assert reset.returncode == 0
    assert reset.json["logged_in"] is False and reset.json["removed_profile"] is None  # not confirmed
    assert not (ct_home / ".snowflake" / "cortex-training" / "config.json").exists()
    assert "work" in tomllib.loads(connections.read_text())


def test_login_without_anything_to_log_in_with_is_a_usage_error(ct: CtRunner) -> None:
    result = ct("login", input="")
    assert result.returncode == 2
    assert "nothing to log in with" in result.stderr
    needs_user = ct("login", "--host", "acct.snowflakecomputing.com", "--no-verify", input="")
    assert needs_user.returncode == 1
    assert "user is required: pass --user" in needs_user.stderr


def test_login_with_two_forms_at_once_is_a_usage_error(ct: CtRunner, tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"base_url": "http://127.0.0.1:9", "database": "D"}))
    for argv in (
        ["login", str(config), "--connection", "work"],
        ["login", "--reset", "--connection", "work"],
        ["login", "--convert-legacy-config", str(config), "--host", "h.example.com"],
    ):
        result = ct(*argv, "--no-verify")
        assert result.returncode == 2, result
        assert result.stderr.startswith("error: ")

"""`ct login` in its three forms, in an isolated home: what is remembered, and what is printed."""

from __future__ import annotations

import json
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

CtRunner = Any


@pytest.fixture(scope="module")
def token_server(module_local_server_factory: Any) -> Any:
    """A local server that refuses every request without the test's token."""
    return module_local_server_factory(tokens={TOKEN: "TRAINER"})


def state_path(home: Path) -> Path:
    return home / ".config" / "cortex-training" / "login.json"


def test_login_with_a_config_file_is_remembered(
    ct: CtRunner, ct_home: Path, local_server: Any, tmp_path: Path
) -> None:
    config = tmp_path / "ct.json"
    config.write_text(json.dumps({"base_url": local_server.base_url, "database": "CT_CLI_LOGIN"}))
    config.chmod(0o600)
    result = ct("login", str(config))
    assert result.returncode == 0, result
    summary = result.json
    assert {key: summary[key] for key in ("config_path", "logged_in", "verified")} == {
        "config_path": str(config.resolve()),
        "logged_in": True,
        "verified": True,
    }
    # Nothing else competes: the remembered config is what later commands use.
    assert summary["ignored"] == []
    assert summary["in_effect"] == {
        "base_url": local_server.base_url,
        "config_path": str(config.resolve()),
        "database": "CT_CLI_LOGIN",
        "endpoint": "cortex-training",
        "mode": "base_url",
        "schema": "PUBLIC",
        "source": f"login {state_path(ct_home)}",
        "token": None,
    }
    assert "current setup: none" in result.stderr
    state = state_path(ct_home)
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


TOKEN = "login-test-token-0123456789"
LOGIN_STATE = Path(".snowflake") / "cortex-training" / "config.json"
LEGACY_STATE = Path(".config") / "cortex-training" / "login.json"


def _config(path: Path, **values: Any) -> Path:
    path.write_text(json.dumps(values))
    path.chmod(0o600)
    return path


def test_a_new_login_replaces_the_other_remembered_form(
    ct: CtRunner, ct_home: Path, local_server: Any, tmp_path: Path
) -> None:
    (ct_home / ".snowflake" / "connections.toml").write_text('[work]\naccount = "acct"\nuser = "BOB"\n')
    assert ct("login", "--connection", "work", "--no-verify").returncode == 0
    config = _config(tmp_path / "local.json", base_url=local_server.base_url, database="CT_CLI_LOGIN")
    result = ct("login", str(config), "--no-verify")
    assert result.returncode == 0, result
    # The profile remembered before is forgotten: it would otherwise still win over the new login.
    assert not (ct_home / LOGIN_STATE).exists()
    assert result.json["in_effect"]["config_path"] == str(config.resolve())
    listed = ct("list")
    assert listed.returncode == 0, listed
    # And the other way round: a profile login forgets the remembered config file.
    assert ct("login", "--connection", "work", "--no-verify").returncode == 0
    assert not (ct_home / LEGACY_STATE).exists()


def test_login_reports_the_setup_in_effect_and_what_is_ignored(
    ct: CtRunner, ct_home: Path, local_server: Any, tmp_path: Path
) -> None:
    (ct_home / ".snowflake" / "connections.toml").write_text('[spare]\naccount = "acct"\nuser = "BOB"\n')
    chosen = _config(tmp_path / "env.json", base_url=local_server.base_url, database="CT_FROM_ENV")
    remembered = _config(tmp_path / "login.json", base_url=local_server.base_url, database="CT_REMEMBERED")
    env = {"CORTEX_TRAINING_CONFIG": str(chosen), "SNOWFLAKE_DATABASE": "UNUSED_DB"}
    result = ct("login", str(remembered), env=env)
    assert result.returncode == 0, result
    # Before anything changes: the setup commands use today, checked with a capacity call.
    assert "current setup: CORTEX_TRAINING_CONFIG" in result.stderr, result.stderr
    assert "current setup works" in result.stderr, result.stderr
    assert "also present, not used: profile spare" in result.stderr, result.stderr
    # After: the login is saved and checked, but the environment's config still comes first.
    summary = result.json
    assert summary["verified"] is True
    effect = summary["in_effect"]
    assert effect["source"].startswith("CORTEX_TRAINING_CONFIG") and effect["database"] == "CT_FROM_ENV"
    assert effect["config_path"] == str(chosen)
    ignored = "\n".join(summary["ignored"])
    assert str(remembered.resolve()) in ignored and "remembered login" in ignored
    assert "profile spare" in ignored
    assert "SNOWFLAKE_DATABASE" in ignored
    assert "later commands use CORTEX_TRAINING_CONFIG" in result.stderr, result.stderr


def test_login_removes_a_stale_or_failing_remembered_login_first(
    ct: CtRunner, ct_home: Path, token_server: Any, tmp_path: Path
) -> None:
    refused = _config(
        tmp_path / "refused.json", base_url=token_server.base_url, database="D", pat="wrong-token"
    )
    assert ct("login", str(refused), "--no-verify").returncode == 0
    assert (ct_home / LEGACY_STATE).exists()
    # The remembered login fails its check (401), so it is forgotten before the new login is tried,
    # even though the new one then fails too.
    result = ct("login", "--connection", "nope")
    assert result.returncode == 1 and "not found" in result.stderr, result
    assert not (ct_home / LEGACY_STATE).exists()
    assert "removed the remembered login" in result.stderr and "401" in result.stderr, result.stderr
    assert "wrong-token" not in result.stderr

    # A remembered config file that was deleted is stale: removed without any check.
    gone = _config(tmp_path / "gone.json", base_url=token_server.base_url, database="D", pat=TOKEN)
    assert ct("login", str(gone), "--no-verify").returncode == 0
    gone.unlink()
    stale = ct("login", "--connection", "nope", "--no-verify")
    assert stale.returncode == 1
    assert not (ct_home / LEGACY_STATE).exists()
    assert "removed the remembered login" in stale.stderr and "no longer exists" in stale.stderr

"""How the real `ct` picks its connection: profiles without a database, explicit options over a remembered
config, bearer tokens for a token-protected local server, and exit code 2 when there is no connection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

CtRunner = Any
TOKEN = "local-serve-token-0123456789"
FAKE_CONNECTOR = Path(__file__).resolve().parents[1] / "core" / "fake_snowflake"


@pytest.fixture(scope="module")
def token_server(module_local_server_factory: Any) -> Any:
    """A local server that, like `ct local serve --token TOKEN`, refuses requests without the token."""
    return module_local_server_factory(tokens={TOKEN: "TRAINER"})


def _jobs_in(server: Any, database: str) -> list[str]:
    with server.http(TOKEN) as http:
        answer = http.get(server.prefix(database=database)).raise_for_status().json()
    return [job["job_id"] for job in answer["jobs"]]


def test_a_profile_without_a_database_uses_cortex_training_db(
    ct: CtRunner, ct_home: Path, token_server: Any, job_file: Path
) -> None:
    (ct_home / ".snowflake" / "connections.toml").write_text(
        f'[bare]\naccount = "acct"\nuser = "ALICE"\ntoken = "{TOKEN}"\n', encoding="utf-8"
    )
    # The stand-in Connector signs in with the profile's token and reports the local server.
    env = {"PYTHONPATH": str(FAKE_CONNECTOR), "CT_FAKE_SNOWFLAKE_SERVER_URL": token_server.base_url}
    listed = ct("--connection", "bare", "list", env=env)
    assert listed.returncode == 0, listed
    submitted = ct("--connection", "bare", "submit", str(job_file), env=env)
    assert submitted.returncode == 0, submitted
    assert submitted.json["job_id"] in _jobs_in(token_server, "CORTEX_TRAINING_DB")


def test_an_explicit_base_url_keeps_the_rest_of_the_remembered_config(
    ct: CtRunner, local_server: Any, tmp_path: Path, job_file: Path
) -> None:
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"base_url": "http://127.0.0.1:9", "database": "CT_REMEMBERED_DB"}))
    config.chmod(0o600)
    assert ct("login", str(config), "--no-verify").returncode == 0
    # The remembered base URL is dead; the explicit one replaces it, the database still comes from the file.
    submitted = ct("--base-url", local_server.base_url, "submit", str(job_file))
    assert submitted.returncode == 0, submitted
    with local_server.http() as http:
        job = http.get(f"{local_server.prefix(database='CT_REMEMBERED_DB')}/{submitted.json['job_id']}")
    assert job.status_code == 200, job.text


def test_base_url_with_pat_sends_a_bearer_token(ct: CtRunner, token_server: Any) -> None:
    args = ["--base-url", token_server.base_url, "--database", "CT_TOKEN_DB"]
    refused = ct(*args, "list")
    assert refused.returncode == 1 and "401" in refused.stderr, refused
    listed = ct(*args, "--pat", TOKEN, "list")
    assert listed.returncode == 0, listed
    assert listed.json == {"jobs": []}
    from_env = ct(*args, "list", env={"CORTEX_TRAINING_PAT": TOKEN})
    assert from_env.returncode == 0, from_env


def test_a_refused_token_is_never_printed(ct: CtRunner, token_server: Any) -> None:
    wrong = "wrong-secret-token-123456"
    result = ct("--base-url", token_server.base_url, "--database", "D", "--pat", wrong, "list")
    assert result.returncode == 1, result
    assert wrong not in result.stderr + result.stdout


def test_a_config_file_can_carry_the_token_of_its_base_url(
    ct: CtRunner, token_server: Any, tmp_path: Path
) -> None:
    config = tmp_path / "token.json"
    config.write_text(
        json.dumps({"base_url": token_server.base_url, "database": "CT_TOKEN_DB", "pat": TOKEN})
    )
    config.chmod(0o600)
    result = ct("--config", str(config), "list")
    assert result.returncode == 0, result
    assert TOKEN not in result.stderr + result.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["--base-url", "http://127.0.0.1:9", "list"],
        ["--host", "acct.snowflakecomputing.com", "--database", "D", "list"],
        ["--connection", "p", "--base-url", "http://127.0.0.1:9", "list"],
    ],
)
def test_a_missing_or_incomplete_connection_exits_2(ct: CtRunner, argv: list[str]) -> None:
    result = ct(*argv)
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")


def test_a_bad_config_file_is_still_exit_1(ct: CtRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = ct("--config", str(bad), "list")
    assert result.returncode == 1, result
    assert "invalid JSON in config" in result.stderr


def test_a_profile_keeps_its_database_and_schema_over_exported_snowflake_variables(
    ct: CtRunner, ct_home: Path, token_server: Any, job_file: Path
) -> None:
    (ct_home / ".snowflake" / "connections.toml").write_text(
        f'[own]\naccount = "acct"\nuser = "ALICE"\ntoken = "{TOKEN}"\n'
        'database = "CT_PROFILE_DB"\nschema = "PROFILE_SCHEMA"\n',
        encoding="utf-8",
    )
    env = {
        "PYTHONPATH": str(FAKE_CONNECTOR),
        "CT_FAKE_SNOWFLAKE_SERVER_URL": token_server.base_url,
        # Exported for some other Snowflake tool: a profile that names its own database and schema wins.
        "SNOWFLAKE_DATABASE": "SOME_OTHER_DB",
        "SNOWFLAKE_SCHEMA": "SOME_OTHER_SCHEMA",
    }
    submitted = ct("--connection", "own", "submit", str(job_file), env=env)
    assert submitted.returncode == 0, submitted
    with token_server.http(TOKEN) as http:
        prefix = token_server.prefix(database="CT_PROFILE_DB", schema="PROFILE_SCHEMA")
        job = http.get(f"{prefix}/{submitted.json['job_id']}")
    assert job.status_code == 200, job.text
    # ct's own variables still beat the profile, as documented.
    env["CORTEX_TRAINING_DATABASE"] = "CT_CHOSEN_DB"
    chosen = ct("--connection", "own", "submit", str(job_file), env=env)
    assert chosen.returncode == 0, chosen
    with token_server.http(TOKEN) as http:
        prefix = token_server.prefix(database="CT_CHOSEN_DB", schema="PROFILE_SCHEMA")
        assert http.get(f"{prefix}/{chosen.json['job_id']}").status_code == 200

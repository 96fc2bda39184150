"""Connection resolution: options, env vars, JSON configs, the remembered login and connections.toml
profiles, each in an isolated HOME (`ct_home`)."""

from __future__ import annotations

import importlib
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from ct_core.client import CortexTrainingClient
from ct_core.connect import resolve as conn
from ct_core.errors import AuthenticationError, ConfigError


def write_config(path, **values):
    path.write_text(json.dumps(values), encoding="utf-8")
    return str(path)


def write_profiles(ct_home, text):
    path = ct_home / ".snowflake" / "connections.toml"
    path.write_text(text, encoding="utf-8")
    return path


PROFILES = """
# my profiles
[training]
account = "myorg-my_acct"
user = "me"
database = "PROFILE_DB"
schema = "PROFILE_SCHEMA"

[default]
host = "default.snowflakecomputing.com"
database = "DEFAULT_DB"
"""


def test_explicit_base_url(ct_home):
    resolved = conn.resolve_connection(conn.ConnectionOptions(base_url="http://127.0.0.1:9/", database="D"))
    assert (resolved.mode, resolved.base_url, resolved.schema, resolved.endpoint) == (
        "base_url",
        "http://127.0.0.1:9",
        "PUBLIC",
        "cortex-training",
    )
    assert resolved.verify_ssl is True


def test_env_vars_fill_a_direct_connection(ct_home, monkeypatch):
    monkeypatch.setenv("CORTEX_TRAINING_HOST", "https://acct.snowflakecomputing.com/")
    monkeypatch.setenv("SNOWFLAKE_PAT", "secret-pat")
    monkeypatch.setenv("SNOWFLAKE_DATABASE", "ENVDB")
    monkeypatch.setenv("CORTEX_TRAINING_SCHEMA", "")  # empty means unset
    resolved = conn.resolve_connection()
    assert (resolved.mode, resolved.host, resolved.pat, resolved.database, resolved.schema) == (
        "pat",
        "acct.snowflakecomputing.com",
        "secret-pat",
        "ENVDB",
        "PUBLIC",
    )
    assert resolved.describe()["pat"] == "<redacted>"


def test_env_never_switches_base_url_to_pat(ct_home, monkeypatch):
    monkeypatch.setenv("CORTEX_TRAINING_HOST", "h.example.com")
    monkeypatch.setenv("CORTEX_TRAINING_PAT", "p")
    resolved = conn.resolve_connection(conn.ConnectionOptions(base_url="http://local:1", database="D"))
    # Still a base-URL connection (no host, no HTTPS forced); CORTEX_TRAINING_PAT is its bearer token.
    assert (resolved.mode, resolved.host, resolved.pat) == ("base_url", None, "p")


def test_a_base_url_takes_its_token_from_pat_but_never_from_snowflake_pat(ct_home, monkeypatch):
    options = conn.ConnectionOptions(base_url="http://local:1", database="D")
    monkeypatch.setenv("SNOWFLAKE_PAT", "snowflake-only")
    assert conn.resolve_connection(options).pat is None
    explicit = conn.resolve_connection(
        conn.ConnectionOptions(base_url="http://local:1", pat="t", database="D")
    )
    assert (explicit.mode, explicit.pat) == ("base_url", "t")
    assert "'t'" not in repr(explicit) and explicit.describe()["pat"] == "<redacted>"


def test_config_file_beats_env_and_flags_beat_config(ct_home, monkeypatch, tmp_path):
    monkeypatch.setenv("CORTEX_TRAINING_DATABASE", "ENVDB")
    monkeypatch.setenv("CORTEX_TRAINING_ENDPOINT", "env-endpoint")
    path = write_config(
        tmp_path / "c.json", url="http://cfg:1", db="CFGDB", poll_interval=2, no_verify_ssl=True
    )
    resolved = conn.resolve_connection(conn.ConnectionOptions(config=path, schema="FLAG"))
    assert (resolved.base_url, resolved.database, resolved.schema, resolved.endpoint) == (
        "http://cfg:1",
        "CFGDB",
        "FLAG",
        "env-endpoint",
    )
    assert resolved.poll_interval == 2.0 and resolved.verify_ssl is False


def test_config_env_var_and_wrapper(ct_home, monkeypatch, tmp_path):
    path = tmp_path / "wrapped.json"
    path.write_text(json.dumps({"connection": {"base_url": "http://w:1", "database": "W"}}))
    monkeypatch.setenv("CORTEX_TRAINING_CONFIG", str(path))
    assert conn.resolve_connection().database == "W"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON in config"),
        ("[]", "config JSON must be an object"),
        ('{"connection": 3}', "config connection must be an object"),
        ('{"zeta": 1, "alpha": 2}', "unknown config key(s): alpha, zeta"),
        ('{"database": 3}', "config database must be a string"),
        ('{"poll_timeout": true}', "config poll_timeout must be a number"),
        ('{"verify_ssl": "no"}', "config verify_ssl must be a boolean"),
    ],
)
def test_config_file_errors(ct_home, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        conn.resolve_connection(conn.ConnectionOptions(config=str(path)))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"host": "h"}, "host was provided without pat"),
        ({"pat": "p"}, "pat was provided without host"),
        ({"base_url": "h.example.com", "database": "D"}, "base_url must start with http:// or https://"),
        ({"base_url": "http://x"}, "provide --database or set CORTEX_TRAINING_DATABASE/SNOWFLAKE_DATABASE"),
        ({"connection": "p", "base_url": "http://x"}, "cannot be combined with a config file"),
        ({}, "provide --base-url for local/mock use, or both --host and --pat"),
    ],
)
def test_incomplete_connections(ct_home, options, message):
    with pytest.raises(ConfigError, match=message):
        conn.resolve_connection(conn.ConnectionOptions(**options))


@pytest.mark.parametrize(
    ("options", "usage"),
    [
        ({"host": "h"}, True),
        ({"pat": "p"}, True),
        ({"base_url": "http://x"}, True),
        ({"connection": "p", "base_url": "http://x"}, True),
        ({}, True),
        # A value that is wrong (rather than missing) stays a plain configuration error.
        ({"base_url": "h.example.com", "database": "D"}, False),
        ({"connection": "nope"}, False),
    ],
)
def test_a_missing_or_incomplete_connection_is_its_own_error(ct_home, options, usage):
    with pytest.raises(ConfigError) as caught:
        conn.resolve_connection(conn.ConnectionOptions(**options))
    assert isinstance(caught.value, conn.IncompleteConnectionError) is usage


def test_base_url_without_scheme_with_pat_is_a_host(ct_home):
    resolved = conn.resolve_connection(
        conn.ConnectionOptions(base_url="acct.example.com", pat="p", database="D")
    )
    assert (resolved.mode, resolved.host) == ("pat", "acct.example.com")


def test_profile_database_order(ct_home, monkeypatch):
    write_profiles(ct_home, PROFILES)
    resolved = conn.resolve_connection(conn.ConnectionOptions(connection="training"))
    assert (resolved.mode, resolved.profile, resolved.database, resolved.schema) == (
        "profile",
        "training",
        "PROFILE_DB",
        "PROFILE_SCHEMA",
    )
    assert resolved.host == "myorg-my_acct.snowflakecomputing.com"
    monkeypatch.setenv("CORTEX_TRAINING_DATABASE", "ENVDB")
    assert conn.resolve_connection(conn.ConnectionOptions(connection="training")).database == "ENVDB"
    assert (
        conn.resolve_connection(conn.ConnectionOptions(connection="training", database="X")).database == "X"
    )


def test_profile_without_a_database_uses_the_default_database_name(ct_home, monkeypatch):
    write_profiles(ct_home, '[bare]\nhost = "b.snowflakecomputing.com"\n')
    assert conn.resolve_connection(conn.ConnectionOptions(connection="bare")).database == "CORTEX_TRAINING_DB"
    # CORTEX_TRAINING_DB is the name of that database, not an environment variable.
    monkeypatch.setenv("CORTEX_TRAINING_DB", "ELSEWHERE")
    assert conn.resolve_connection(conn.ConnectionOptions(connection="bare")).database == "CORTEX_TRAINING_DB"
    with pytest.raises(ConfigError, match="'nope' not found"):
        conn.resolve_connection(conn.ConnectionOptions(connection="nope"))


def test_a_direct_connection_never_reads_cortex_training_db(ct_home, monkeypatch):
    monkeypatch.setenv("CORTEX_TRAINING_DB", "ELSEWHERE")
    with pytest.raises(conn.IncompleteConnectionError, match="provide --database"):
        conn.resolve_connection(conn.ConnectionOptions(base_url="http://x"))


def test_connection_env_var_and_default_profile(ct_home, monkeypatch):
    write_profiles(ct_home, PROFILES)
    assert conn.resolve_connection().profile == "default"
    (ct_home / ".snowflake" / "config.toml").write_text('default_connection_name = "training"\n')
    assert conn.resolve_connection().profile == "training"
    monkeypatch.setenv("SNOWFLAKE_DEFAULT_CONNECTION_NAME", "default")
    assert conn.resolve_connection().profile == "default"
    monkeypatch.setenv("CORTEX_TRAINING_CONNECTION", "training")
    assert conn.resolve_connection().source == "CORTEX_TRAINING_CONNECTION"


def test_env_direct_with_database_beats_login_but_login_beats_env_without(ct_home, monkeypatch, tmp_path):
    write_profiles(ct_home, PROFILES)
    path = conn.save_login_profile("training")
    assert path == ct_home / ".snowflake" / "cortex-training" / "config.json"
    assert json.loads(path.read_text()) == {"profile": "training"}
    monkeypatch.setenv("CORTEX_TRAINING_BASE_URL", "http://env:1")
    assert conn.resolve_connection().profile == "training"
    monkeypatch.setenv("CORTEX_TRAINING_DATABASE", "D")
    assert conn.resolve_connection().mode == "base_url"


def test_legacy_login_state(ct_home, tmp_path, monkeypatch):
    config = write_config(tmp_path / "legacy.json", base_url="http://legacy:1", database="L")
    state = conn.save_login_config_path(config)
    assert state == ct_home / ".config" / "cortex-training" / "login.json"
    assert state.read_text().endswith("\n") and json.loads(state.read_text())["config_path"] == config
    resolved = conn.resolve_connection()
    assert (resolved.base_url, resolved.database, resolved.config_path) == ("http://legacy:1", "L", config)
    os.unlink(config)  # a remembered config that no longer exists is ignored
    with pytest.raises(ConfigError, match="provide --base-url"):
        conn.resolve_connection()
    custom = tmp_path / "state.json"
    custom.write_text('{"connection": "training"}')
    monkeypatch.setenv("CORTEX_TRAINING_LOGIN_FILE", str(custom))
    write_profiles(ct_home, PROFILES)
    assert conn.resolve_connection().profile == "training"
    custom.write_text("[1]")
    with pytest.raises(ConfigError, match="expected object"):
        conn.resolve_connection()


def test_an_explicit_field_overrides_only_itself_in_the_remembered_config(ct_home, tmp_path):
    config = write_config(
        tmp_path / "remembered.json", base_url="http://cfg:1", database="CFGDB", schema="S", pat="cfg-token"
    )
    conn.save_login_config_path(config)
    moved = conn.resolve_connection(conn.ConnectionOptions(base_url="http://moved:2"))
    assert (moved.mode, moved.base_url, moved.database, moved.schema, moved.pat) == (
        "base_url",
        "http://moved:2",
        "CFGDB",
        "S",
        "cfg-token",
    )
    assert moved.config_path == config
    token = conn.resolve_connection(conn.ConnectionOptions(pat="flag-token"))
    assert (token.base_url, token.database, token.pat) == ("http://cfg:1", "CFGDB", "flag-token")
    # An explicit host makes it a PAT connection; the config's database stays.
    host = conn.resolve_connection(conn.ConnectionOptions(host="acct.snowflakecomputing.com"))
    assert (host.mode, host.host, host.base_url, host.pat, host.database) == (
        "pat",
        "acct.snowflakecomputing.com",
        None,
        "cfg-token",
        "CFGDB",
    )


def test_explicit_fields_are_completed_by_cortex_training_config(ct_home, tmp_path, monkeypatch):
    config = write_config(tmp_path / "env.json", host="acct.snowflakecomputing.com", pat="p", database="E")
    monkeypatch.setenv("CORTEX_TRAINING_CONFIG", config)
    resolved = conn.resolve_connection(conn.ConnectionOptions(host="other.snowflakecomputing.com"))
    assert (resolved.mode, resolved.host, resolved.pat, resolved.database) == (
        "pat",
        "other.snowflakecomputing.com",
        "p",
        "E",
    )


def test_explicit_fields_complete_with_env_skip_the_remembered_config(ct_home, tmp_path, monkeypatch):
    conn.save_login_config_path(write_config(tmp_path / "r.json", base_url="http://cfg:1", database="R"))
    monkeypatch.setenv("CORTEX_TRAINING_DATABASE", "ENVDB")
    resolved = conn.resolve_connection(conn.ConnectionOptions(base_url="http://flag:1"))
    assert (resolved.base_url, resolved.database, resolved.config_path) == ("http://flag:1", "ENVDB", None)


def _remember_both(tmp_path):
    # `ct login` keeps one form at a time; both files exist when an older ct or the reference wrote one.
    conn.save_login_config_path(write_config(tmp_path / "c.json", base_url="http://x:1"))
    conn.login_state_path().parent.mkdir(parents=True, exist_ok=True)
    conn.login_state_path().write_text(json.dumps({"profile": "p"}))


def test_forget_login(ct_home, tmp_path):
    _remember_both(tmp_path)
    removed = conn.forget_login()
    assert len(removed) == 2 and conn.read_login_state() is None


def test_a_login_state_removed_by_another_process_meanwhile_is_simply_gone(ct_home, tmp_path, monkeypatch):
    # Another `ct logout` may remove the files between this process's look at them and its act.
    from ct_core.connect import files

    def remember() -> None:
        _remember_both(tmp_path)

    remember()
    state_files = {files.login_state_path(), files.legacy_login_state_path()}
    real_exists = Path.exists

    def exists_then_removed(self: Path, *args: object, **kwargs: object) -> bool:
        found = real_exists(self, *args, **kwargs)
        if found and self in state_files:
            self.unlink()  # another `ct logout`, between this process's look and its read or unlink
        return found

    with monkeypatch.context() as patch:
        patch.setattr(Path, "exists", exists_then_removed)
        # Read before or after the other logout: either way a state or nothing, never an error.
        state = conn.read_login_state()
    assert state is None or state.profile == "p"
    remember()
    with monkeypatch.context() as patch:
        patch.setattr(Path, "exists", exists_then_removed)
        removed = conn.forget_login()
    # Whichever logout removed a file, none is left and this one did not fail.
    assert set(removed) <= state_files
    assert not any(path.exists() for path in state_files)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_write_connection_profile_keeps_others_and_comments(ct_home):
    path = write_profiles(ct_home, PROFILES)
    conn.write_connection_profile("new", {"account": "a", "authenticator": "programmatic_access_token"})
    text = path.read_text()
    assert "# my profiles" in text and "[training]" in text and "[new]" in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(ConfigError, match="already exists"):
        conn.write_connection_profile("new", {"account": "b"})
    conn.write_connection_profile("new", {"account": "b"}, force=True)
    assert conn.read_connection_profiles()["new"] == {"account": "b"}
    assert conn.remove_connection_profile("new") and not conn.remove_connection_profile("new")


def test_host_helpers():
    assert conn.normalize_host("https://a.example.com/") == "a.example.com"
    assert conn.rest_host("myorg-my_acct.snowflakecomputing.com") == "myorg-my-acct.snowflakecomputing.com"
    assert conn.rest_host("a_b.snowflakecomputing.cn") == "a-b.snowflakecomputing.cn"
    assert conn.rest_host("ml_team.example.com") == "ml_team.example.com"


def test_resolving_a_profile_imports_neither_connector_nor_torch(ct_home):
    import subprocess

    write_profiles(ct_home, PROFILES)
    code = (
        "import sys; import ct_core.client; "
        "from ct_core.connect.resolve import ConnectionOptions, resolve_connection; "
        "resolve_connection(ConnectionOptions(connection='training')); "
        "print(sorted(m for m in ('snowflake.connector', 'torch', 'transformers') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_client_from_options_builds_a_working_client(ct_home, local_server):
    client = CortexTrainingClient.from_options(
        conn.ConnectionOptions(base_url=local_server.base_url, database="CT_TEST_DB", poll_timeout=5)
    )
    with client:
        assert client.poll_timeout == 5.0
        assert isinstance(client.list_jobs(), list)


# --- the one resolver behind from_configs, and tokens for a base URL ----------------------------------

FAKE_CONNECTOR = Path(__file__).parent / "fake_snowflake"


@pytest.fixture
def fake_connector(monkeypatch):
    """`snowflake.connector` is the stand-in of tests/core/fake_snowflake for this test only."""
    for name in [n for n in sys.modules if n == "snowflake" or n.startswith("snowflake.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(FAKE_CONNECTOR))
    module = importlib.import_module("snowflake.connector")
    assert Path(module.__file__ or "").is_relative_to(FAKE_CONNECTOR)
    yield module
    for name in [n for n in sys.modules if n == "snowflake" or n.startswith("snowflake.")]:
        del sys.modules[name]


def test_from_configs_honours_cortex_training_connection_like_the_cli(
    ct_home, fake_connector, local_server_factory, monkeypatch
):
    # Only the `other` profile's token opens the server; the remembered `training` one would be refused.
    server = local_server_factory(tokens={"tok-other": "TRAINER"})
    write_profiles(
        ct_home,
        '[training]\naccount = "a"\ntoken = "tok-training"\ndatabase = "DB_T"\n'
        '[other]\naccount = "a"\ntoken = "tok-other"\ndatabase = "DB_O"\n',
    )
    monkeypatch.setenv("CT_FAKE_SNOWFLAKE_SERVER_URL", server.base_url)
    conn.save_login_profile("training")
    monkeypatch.setenv("CORTEX_TRAINING_CONNECTION", "other")
    assert conn.resolve_connection().profile == "other"
    with CortexTrainingClient.from_configs(max_retries=0) as client:
        assert client.database == "DB_O"
        assert client.list_jobs() == []
    assert [call["connection_name"] for call in fake_connector.CALLS] == ["other"]


def test_from_configs_with_a_profile_without_a_database(ct_home, fake_connector, local_server, monkeypatch):
    write_profiles(ct_home, '[bare]\naccount = "a"\ntoken = "t"\n')
    monkeypatch.setenv("CT_FAKE_SNOWFLAKE_SERVER_URL", local_server.base_url)
    with CortexTrainingClient.from_configs(connection="bare", max_retries=0) as client:
        assert (client.database, client.schema) == ("CORTEX_TRAINING_DB", "PUBLIC")
        assert isinstance(client.list_jobs(), list)


def test_a_token_protected_local_server_through_the_sdk(ct_home, local_server_factory, monkeypatch):
    token = "local-token-0123456789"
    server = local_server_factory(tokens={token: "TRAINER"})
    with CortexTrainingClient(base_url=server.base_url, database="D", schema="PUBLIC", token=token) as direct:
        assert direct.list_jobs() == []
    options = conn.ConnectionOptions(base_url=server.base_url, pat=token, database="D")
    with CortexTrainingClient.from_options(options, max_retries=0) as client:
        assert client.list_jobs() == []
    monkeypatch.setenv("CORTEX_TRAINING_PAT", token)
    with CortexTrainingClient.from_options(
        conn.ConnectionOptions(base_url=server.base_url, database="D"), max_retries=0
    ) as client:
        assert client.list_jobs() == []
    monkeypatch.delenv("CORTEX_TRAINING_PAT")
    wrong = "wrong-token-9876543210"
    options = conn.ConnectionOptions(base_url=server.base_url, pat=wrong, database="D")
    with (
        CortexTrainingClient.from_options(options, max_retries=0) as client,
        pytest.raises(AuthenticationError) as caught,
    ):
        client.list_jobs()
    assert wrong not in str(caught.value)


def test_from_configs_takes_a_remembered_profile_before_the_environments_pat(
    ct_home, fake_connector, local_server_factory, monkeypatch
):
    # The contract's order for from_configs(): a profile when one exists; the environment's host and
    # PAT only when none does. (The CLI's order puts a complete environment first.)
    server = local_server_factory(tokens={"tok-training": "TRAINER"})
    write_profiles(ct_home, '[training]\naccount = "a"\ntoken = "tok-training"\ndatabase = "DB_T"\n')
    monkeypatch.setenv("CT_FAKE_SNOWFLAKE_SERVER_URL", server.base_url)
    conn.save_login_profile("training")
    monkeypatch.setenv("CORTEX_TRAINING_HOST", "myorg-acct.snowflakecomputing.com")
    monkeypatch.setenv("CORTEX_TRAINING_PAT", "env-pat-0123456789")
    monkeypatch.setenv("CORTEX_TRAINING_DATABASE", "DB_ENV")
    assert conn.resolve_connection().mode == "pat"
    assert conn.resolve_connection(profiles_first=True).profile == "training"
    with CortexTrainingClient.from_configs(max_retries=0) as client:
        assert client.credential.kind == "profile"
        assert client.database == "DB_ENV"  # CORTEX_TRAINING_DATABASE still names the database
        assert client.list_jobs() == []
    assert [call["connection_name"] for call in fake_connector.CALLS] == ["training"]


def test_from_configs_without_any_profile_uses_the_environments_pat(ct_home, monkeypatch):
    monkeypatch.setenv("CORTEX_TRAINING_HOST", "myorg-acct.snowflakecomputing.com")
    monkeypatch.setenv("CORTEX_TRAINING_PAT", "env-pat-0123456789")
    monkeypatch.setenv("CORTEX_TRAINING_DATABASE", "DB_ENV")
    resolved = conn.resolve_connection(profiles_first=True)
    assert (resolved.mode, resolved.database) == ("pat", "DB_ENV")

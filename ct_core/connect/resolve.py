"""Which service to talk to, as whom: the one connection resolver for the CLI, the SDK and plugins.

`resolve_connection(opts)` picks a source, first match wins:

1. explicit options: a profile (`connection`), else a JSON config (`config`), else a direct
   connection (`base_url`, or `host` + `pat`);
2. `CORTEX_TRAINING_CONNECTION` (a profile), then `CORTEX_TRAINING_CONFIG` (a JSON config);
3. a complete direct connection from environment variables that also names a database;
4. the remembered login (`ct login`): a profile, or a legacy config path;
5. a complete direct connection from environment variables without a database;
6. the Snowflake Connector's default profile, when connections.toml has it.

Field by field, an explicit option beats the chosen source, which beats environment variables,
which beat the built-in defaults (schema PUBLIC, endpoint cortex-training). Environment variables
only fill what is unset and never switch a base_url connection to PAT auth or back. For a profile,
the database is the option, else CORTEX_TRAINING_DATABASE, else the profile's, else
CORTEX_TRAINING_DB. Empty environment variables count as unset.

`CortexTrainingClient.from_options(opts)` / `.from_resolved(resolved)` build the client from what
this module resolves (the client imports this module, never the other way round). The login helpers
`ct login` needs are re-exported here from `ct_core.connect.files`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from ct_core.connect.files import (
    LoginState,
    connections_toml_path,
    default_connection_name,
    env_value,
    forget_login,
    legacy_login_state_path,
    load_config_file,
    login_state_path,
    read_connection_profiles,
    read_login_state,
    remove_connection_profile,
    save_login_config_path,
    save_login_profile,
    snowflake_home,
    write_connection_profile,
)
from ct_core.constants import (
    DEFAULT_ENDPOINT,
    DEFAULT_POLL_INTERVAL,
    DEFAULT_POLL_TIMEOUT,
    DEFAULT_SCHEMA,
    ENV_BASE_URL,
    ENV_CONFIG,
    ENV_CONNECTION,
    ENV_DATABASE,
    ENV_DB_FALLBACK,
    ENV_ENDPOINT,
    ENV_HOST,
    ENV_PAT,
    ENV_SCHEMA,
    SNOWFLAKE_HOST_SUFFIXES,
)
from ct_core.errors import ConfigError

__all__ = [
    "ConnectionOptions",
    "LoginState",
    "ResolvedConnection",
    "connections_toml_path",
    "default_connection_name",
    "forget_login",
    "legacy_login_state_path",
    "load_config_file",
    "login_state_path",
    "normalize_host",
    "read_connection_profiles",
    "read_login_state",
    "remove_connection_profile",
    "resolve_connection",
    "rest_host",
    "save_login_config_path",
    "save_login_profile",
    "snowflake_home",
    "write_connection_profile",
]

PROFILE_CONFLICT = (
    "a connection profile (--connection / connection_name) cannot be combined with a config file, "
    "base_url, host, or pat"
)
MISSING_DATABASE = "provide --database or set CORTEX_TRAINING_DATABASE/SNOWFLAKE_DATABASE"
MISSING_CONNECTION = (
    "provide --base-url for local/mock use, or both --host and --pat, or a Snowflake connection "
    "profile (--connection, or `ct login`)"
)


@dataclass
class ConnectionOptions:
    """Connection settings as the caller gave them (CLI global options or keyword arguments)."""

    config: str | None = None
    connection: str | None = None
    base_url: str | None = None
    host: str | None = None
    pat: str | None = None
    database: str | None = None
    schema: str | None = None
    endpoint: str | None = None
    verify_ssl: bool = True
    poll_interval: float | None = None
    poll_timeout: float | None = None


@dataclass(frozen=True)
class ResolvedConnection:
    """The outcome of resolution: one mode, every field filled, and where it came from."""

    mode: Literal["base_url", "pat", "profile"]
    source: str
    database: str
    schema: str
    endpoint: str
    verify_ssl: bool = True
    base_url: str | None = None
    host: str | None = None
    pat: str | None = None
    profile: str | None = None
    config_path: str | None = None
    poll_interval: float = DEFAULT_POLL_INTERVAL
    poll_timeout: float = DEFAULT_POLL_TIMEOUT

    def describe(self) -> dict[str, Any]:
        """A printable summary with the token replaced by `<redacted>` (never print a secret)."""
        summary = asdict(self)
        if summary.get("pat"):
            summary["pat"] = "<redacted>"
        return summary


# --------------------------------------------------------------------------------------------------
# Hosts: scheme and slash trimming, the `_` to `-` account rewrite
# --------------------------------------------------------------------------------------------------


def normalize_host(host: str) -> str:
    """Drop a leading `https://` / `http://` and trailing slashes from a user-supplied host."""
    text = host.strip()
    for scheme in ("https://", "http://"):
        if text.lower().startswith(scheme):
            text = text[len(scheme) :]
            break
    return text.rstrip("/")


def rest_host(host: str) -> str:
    """The host REST calls go to: `_` becomes `-` in the account label of a Snowflake host.

    Snowflake's wildcard certificates cannot match a name with `_`; other hosts are left alone.
    The Connector's own sign-in keeps the host as given.
    """
    hostname, colon, port = host.partition(":")
    if not hostname.lower().endswith(SNOWFLAKE_HOST_SUFFIXES):
        return host
    account, dot, rest = hostname.partition(".")
    return account.replace("_", "-") + dot + rest + colon + port


def _has_scheme(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


# --------------------------------------------------------------------------------------------------
# Resolution
# --------------------------------------------------------------------------------------------------


def _first(*values: Any) -> Any:
    for value in values:
        if value is not None and value != "":
            return value
    return None


def _env_direct() -> dict[str, Any]:
    return {
        "base_url": env_value(ENV_BASE_URL),
        "host": env_value(*ENV_HOST),
        "pat": env_value(*ENV_PAT),
        "database": env_value(*ENV_DATABASE),
    }


def _env_direct_complete(fields: dict[str, Any], *, with_database: bool) -> bool:
    reachable = bool(fields["base_url"] or (fields["host"] and fields["pat"]))
    return reachable and (bool(fields["database"]) or not with_database)


def _direct(opts: ConnectionOptions, config: dict[str, Any], source: str, config_path: str | None = None):
    env = _env_direct()
    flag_or_config = {key: _first(getattr(opts, key), config.get(key)) for key in ("base_url", "host", "pat")}
    if flag_or_config["base_url"]:
        mode_fields = {"base_url": flag_or_config["base_url"], "host": None, "pat": None}
    elif flag_or_config["host"] or flag_or_config["pat"]:
        # Env may complete a PAT connection, but never turns it into a base_url one.
        mode_fields = {
            "base_url": None,
            "host": _first(flag_or_config["host"], env["host"]),
            "pat": _first(flag_or_config["pat"], env["pat"]),
        }
    elif env["base_url"]:
        mode_fields = {"base_url": env["base_url"], "host": None, "pat": None}
    else:
        mode_fields = {"base_url": None, "host": env["host"], "pat": env["pat"]}

    base_url, host, pat = mode_fields["base_url"], mode_fields["host"], mode_fields["pat"]
    if base_url and not _has_scheme(base_url):
        # The 0.0.3 CLI read a scheme-less base_url given with a PAT (and no host) as the host.
        pat = _first(flag_or_config["pat"], env["pat"])
        if pat and not _first(flag_or_config["host"], env["host"]):
            base_url, host = None, base_url
        else:
            raise ConfigError(
                "base_url must start with http:// or https://. For Snowflake PAT auth, use host instead of "
                "base_url."
            )
    if not base_url:
        if host and not pat:
            raise ConfigError(
                "host was provided without pat. Supply both, or omit both to use a connections.toml profile."
            )
        if pat and not host:
            raise ConfigError(
                "pat was provided without host. Supply both, or omit both to use a connections.toml profile."
            )
        if not host:
            raise ConfigError(MISSING_CONNECTION)

    database = _first(opts.database, config.get("database"), env["database"], env_value(ENV_DB_FALLBACK))
    if not database:
        raise ConfigError(MISSING_DATABASE)
    verify = opts.verify_ssl
    if verify:
        if config.get("no_verify_ssl") is not None:
            verify = not config["no_verify_ssl"]
        elif config.get("verify_ssl") is not None:
            verify = bool(config["verify_ssl"])
    return ResolvedConnection(
        mode="base_url" if base_url else "pat",
        source=source,
        base_url=base_url.rstrip("/") if base_url else None,
        host=normalize_host(host) if host else None,
        pat=pat,
        database=database,
        schema=_first(opts.schema, config.get("schema"), env_value(*ENV_SCHEMA), DEFAULT_SCHEMA),
        endpoint=_first(opts.endpoint, config.get("endpoint"), env_value(ENV_ENDPOINT), DEFAULT_ENDPOINT),
        verify_ssl=verify,
        config_path=config_path,
        poll_interval=float(_first(opts.poll_interval, config.get("poll_interval"), DEFAULT_POLL_INTERVAL)),
        poll_timeout=float(_first(opts.poll_timeout, config.get("poll_timeout"), DEFAULT_POLL_TIMEOUT)),
    )


def _profile(opts: ConnectionOptions, name: str, source: str) -> ResolvedConnection:
    profiles = read_connection_profiles()
    if name not in profiles:
        raise ConfigError(f"connection profile {name!r} not found in {connections_toml_path()}")
    profile = profiles[name]
    database = _first(
        opts.database, env_value(*ENV_DATABASE), profile.get("database"), env_value(ENV_DB_FALLBACK)
    )
    if not database:
        raise ConfigError(
            "provide --database, set CORTEX_TRAINING_DATABASE, or set database in connection profile "
            f"{name!r}"
        )
    host = profile.get("host") or (
        f"{profile['account']}.snowflakecomputing.com" if profile.get("account") else None
    )
    return ResolvedConnection(
        mode="profile",
        source=source,
        profile=name,
        host=normalize_host(str(host)) if host else None,
        database=str(database),
        schema=str(_first(opts.schema, env_value(*ENV_SCHEMA), profile.get("schema"), DEFAULT_SCHEMA)),
        endpoint=_first(opts.endpoint, env_value(ENV_ENDPOINT), DEFAULT_ENDPOINT),
        verify_ssl=opts.verify_ssl,
        poll_interval=float(_first(opts.poll_interval, DEFAULT_POLL_INTERVAL)),
        poll_timeout=float(_first(opts.poll_timeout, DEFAULT_POLL_TIMEOUT)),
    )


def _config_source(opts: ConnectionOptions, path: str, source: str) -> ResolvedConnection:
    return _direct(opts, load_config_file(path), source, config_path=str(Path(path).expanduser()))


def resolve_connection(opts: ConnectionOptions | None = None) -> ResolvedConnection:
    """Pick the connection to use (see the module docstring for the order); raise ConfigError."""
    opts = opts or ConnectionOptions()
    explicit_direct = any(_first(value) for value in (opts.base_url, opts.host, opts.pat))
    if opts.connection:
        if opts.config or explicit_direct:
            raise ConfigError(PROFILE_CONFLICT)
        return _profile(opts, opts.connection, "--connection")
    if opts.config:
        return _config_source(opts, opts.config, f"config file {opts.config}")
    if explicit_direct:
        return _direct(opts, {}, "options")

    profile_env = env_value(ENV_CONNECTION)
    if profile_env:
        return _profile(opts, profile_env, ENV_CONNECTION)
    config_env = env_value(ENV_CONFIG)
    if config_env:
        return _config_source(opts, config_env, f"{ENV_CONFIG}={config_env}")

    env = _env_direct()
    if opts.database:
        env["database"] = opts.database
    if _env_direct_complete(env, with_database=True):
        return _direct(opts, {}, "environment")

    login = read_login_state()
    if login is not None:
        if login.profile:
            return _profile(opts, login.profile, f"login {login.path}")
        if login.config_path:
            return _config_source(opts, login.config_path, f"login {login.path}")

    if _env_direct_complete(env, with_database=False):
        return _direct(opts, {}, "environment")

    default = default_connection_name()
    if default in read_connection_profiles():
        return _profile(opts, default, "default profile")
    raise ConfigError(MISSING_CONNECTION)

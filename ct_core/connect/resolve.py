"""Which service to talk to, as whom: the one connection resolver for the CLI, the SDK and plugins.

`resolve_connection(opts)` picks a source, first match wins:

1. explicit options: a profile (`connection`), else a JSON config (`config`), else a direct
   connection (`base_url`, or `host` + `pat`). Explicit direct fields are laid over a JSON config,
   field by field: the one `CORTEX_TRAINING_CONFIG` names, else the remembered one when the options
   and the environment do not already make a connection with a database. So `ct login cfg.json`
   then `ct --base-url URL list` keeps the file's database;
2. `CORTEX_TRAINING_CONNECTION` (a profile), then `CORTEX_TRAINING_CONFIG` (a JSON config);
3. a complete direct connection from environment variables that also names a database;
4. the remembered login (`ct login`): a profile, or a legacy config path;
5. a complete direct connection from environment variables without a database;
6. the Snowflake Connector's default profile, when connections.toml has it.

Field by field, an explicit option beats the chosen source, which beats environment variables,
which beat the built-in defaults (schema PUBLIC, endpoint cortex-training). An explicit `base_url` or
`host` also decides the kind of connection (an explicit host over a config's base_url is PAT auth).
Environment variables only fill what is unset and never switch a base_url connection to PAT auth or
back. A base_url connection with a token (`pat`, or CORTEX_TRAINING_PAT; never SNOWFLAKE_PAT, a
Snowflake credential) sends it as a plain bearer token, as a token-protected `ct local serve` wants.
For a profile, the database is the option, else CORTEX_TRAINING_DATABASE, else the profile's, else
the database named CORTEX_TRAINING_DB (a name, not a variable); the schema likewise with
CORTEX_TRAINING_SCHEMA and PUBLIC. SNOWFLAKE_DATABASE / SNOWFLAKE_SCHEMA never apply to a profile.
A direct connection has no default database. Empty environment variables count as unset.

A connection that is missing, incomplete or contradictory raises `IncompleteConnectionError` (the CLI
exits 2, a usage error); a value that is wrong (a config file that cannot be read, a base_url without
a scheme, an unknown profile) raises a plain `ConfigError`.

`CortexTrainingClient.from_options(opts)` / `.from_resolved(resolved)` build the client from what
this module resolves (the client imports this module, never the other way round). The login helpers
`ct login` needs are re-exported here from `ct_core.connect.files`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
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
    DEFAULT_PROFILE_DATABASE,
    DEFAULT_SCHEMA,
    ENV_BASE_URL,
    ENV_CONFIG,
    ENV_CONNECTION,
    ENV_DATABASE,
    ENV_ENDPOINT,
    ENV_HOST,
    ENV_PAT,
    ENV_SCHEMA,
    SNOWFLAKE_HOST_SUFFIXES,
)
from ct_core.errors import ConfigError, IncompleteConnectionError

__all__ = [
    "DEFAULT_PROFILE_DATABASE",
    "ConnectionOptions",
    "IncompleteConnectionError",
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

#: The one environment variable whose token a base_url connection sends (SNOWFLAKE_PAT never is).
_ENV_BASE_URL_TOKEN = ENV_PAT[0]

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
    #: The token: a PAT for `host` (mode "pat"), or the bearer token of a base_url server; not in the repr.
    pat: str | None = field(default=None, repr=False)
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


def _address(
    opts: ConnectionOptions, config: dict[str, Any], env: dict[str, Any]
) -> tuple[str | None, str | None]:
    """(base_url, host) of a direct connection; exactly one is set unless nothing names an address.

    An explicit option decides the kind over the config, the config over the environment. A token
    without an address (`--pat` alone) goes where the environment points: its host first, as PAT
    auth, else its base_url, as that server's bearer token.
    """
    for base_url, host in ((opts.base_url, opts.host), (config.get("base_url"), config.get("host"))):
        if base_url:
            return base_url, None
        if host:
            return None, host
    if _first(opts.pat, config.get("pat")) and env["host"]:
        return None, env["host"]
    if env["base_url"]:
        return env["base_url"], None
    return None, env["host"]


def _direct(opts: ConnectionOptions, config: dict[str, Any], source: str, config_path: str | None = None):
    env = _env_direct()
    base_url, host = _address(opts, config, env)
    explicit_pat = _first(opts.pat, config.get("pat"))
    if base_url and not _has_scheme(base_url):
        # The 0.0.3 CLI read a scheme-less base_url given with a PAT (and no host) as the host.
        if _first(explicit_pat, env["pat"]) and not _first(opts.host, config.get("host"), env["host"]):
            base_url, host = None, base_url
        else:
            raise ConfigError(
                "base_url must start with http:// or https://. For Snowflake PAT auth, use host instead of "
                "base_url."
            )
    if base_url:
        # A base_url server is not Snowflake: only a token meant for ct (never SNOWFLAKE_PAT) goes to it.
        pat = _first(explicit_pat, env_value(_ENV_BASE_URL_TOKEN))
    else:
        pat = _first(explicit_pat, env["pat"])
        if host and not pat:
            raise IncompleteConnectionError(
                "host was provided without pat. Supply both, or omit both to use a connections.toml profile."
            )
        if pat and not host:
            raise IncompleteConnectionError(
                "pat was provided without host. Supply both, or omit both to use a connections.toml profile."
            )
        if not host:
            raise IncompleteConnectionError(MISSING_CONNECTION)

    database = _first(opts.database, config.get("database"), env["database"])
    if not database:
        raise IncompleteConnectionError(MISSING_DATABASE)
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
    # Only ct's own variables beat the profile: SNOWFLAKE_DATABASE / SNOWFLAKE_SCHEMA are exported for
    # other Snowflake tools and never override what a profile names.
    database = _first(
        opts.database, env_value(ENV_DATABASE[0]), profile.get("database"), DEFAULT_PROFILE_DATABASE
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
        schema=str(_first(opts.schema, env_value(ENV_SCHEMA[0]), profile.get("schema"), DEFAULT_SCHEMA)),
        endpoint=_first(opts.endpoint, env_value(ENV_ENDPOINT), DEFAULT_ENDPOINT),
        verify_ssl=opts.verify_ssl,
        poll_interval=float(_first(opts.poll_interval, DEFAULT_POLL_INTERVAL)),
        poll_timeout=float(_first(opts.poll_timeout, DEFAULT_POLL_TIMEOUT)),
    )


def _config_source(opts: ConnectionOptions, path: str, source: str) -> ResolvedConnection:
    return _direct(opts, load_config_file(path), source, config_path=str(Path(path).expanduser()))


def _explicit_direct(opts: ConnectionOptions) -> ResolvedConnection:
    """Explicit base_url / host / pat, each field completed from a config file where they leave gaps.

    The config is CORTEX_TRAINING_CONFIG's, else the remembered one; the remembered one only when the
    options and the environment together do not already make a connection with a database (a
    remembered profile cannot complete a direct connection and is left alone).
    """
    config_env = env_value(ENV_CONFIG)
    if config_env:
        return _config_source(opts, config_env, f"options over {ENV_CONFIG}={config_env}")
    env = _env_direct()
    merged = {key: _first(getattr(opts, key), env[key]) for key in ("base_url", "host", "pat", "database")}
    if not _env_direct_complete(merged, with_database=True):
        login = read_login_state()
        if login is not None and login.config_path:
            return _config_source(opts, login.config_path, f"options over login {login.path}")
    return _direct(opts, {}, "options")


def _profile_or_ci(opts: ConnectionOptions) -> ResolvedConnection:
    """A profile when one exists (remembered, else the Connector's default), else the environment."""
    login = read_login_state()
    if login is not None and login.profile:
        return _profile(opts, login.profile, f"login {login.path}")
    default = default_connection_name()
    if default in read_connection_profiles():
        return _profile(opts, default, "default profile")
    env = _env_direct()
    if opts.database:
        env["database"] = opts.database
    if _env_direct_complete(env, with_database=False):
        return _direct(opts, {}, "environment")
    raise IncompleteConnectionError(MISSING_CONNECTION)


def resolve_connection(
    opts: ConnectionOptions | None = None, *, profiles_first: bool = False
) -> ResolvedConnection:
    """Pick the connection to use (see the module docstring for the order).

    `profiles_first` is the order of `CortexTrainingClient.from_configs()`, which asks for a
    profile: after an explicit one and CORTEX_TRAINING_CONNECTION come the remembered profile and
    the Connector's default, and only when no profile exists the environment's host and PAT (CI).

    Raises IncompleteConnectionError when there is none or it lacks a piece, ConfigError when a
    setting is wrong.
    """
    opts = opts or ConnectionOptions()
    explicit_direct = any(_first(value) for value in (opts.base_url, opts.host, opts.pat))
    if opts.connection:
        if opts.config or explicit_direct:
            raise IncompleteConnectionError(PROFILE_CONFLICT)
        return _profile(opts, opts.connection, "--connection")
    if opts.config:
        return _config_source(opts, opts.config, f"config file {opts.config}")
    if explicit_direct:
        return _explicit_direct(opts)

    profile_env = env_value(ENV_CONNECTION)
    if profile_env:
        return _profile(opts, profile_env, ENV_CONNECTION)
    if profiles_first:
        return _profile_or_ci(opts)
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
    raise IncompleteConnectionError(MISSING_CONNECTION)

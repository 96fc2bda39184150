"""`ct login`: remember which connection later commands use.

Three forms:

- `ct login CONFIG` / `ct login --config CONFIG`: the reference's legacy form. The JSON config
  is checked and its absolute path remembered (under the XDG config dir).
- `ct login --connection NAME`: remember an existing Snowflake connection profile (written
  as `{"profile": NAME}` in `<Snowflake folder>/cortex-training/config.json`).
- `ct login --host HOST --user USER ...`: create a PAT profile in connections.toml (atomic
  write, mode 0600, other profiles kept) and remember it. Missing values are prompted for on
  stderr when stdin is a terminal; otherwise they must be passed as flags.
- `ct login --convert-legacy-config FILE`: turn an old host/PAT JSON config into such a profile.
  With the old token it asks Snowflake's SQL API who the token belongs to and whether the
  database and schema exist; a missing database is created only after the SQL is shown and the
  user agrees (`--yes` agrees in advance; without a terminal and without `--yes` it stops).

Every form (not `--reset`) first says on stderr which setup commands use today and checks it with
a capacity call; a remembered login that is stale (its config file or profile is gone) or fails that
check is forgotten before anything else. The form then remembers its connection (forgetting the
login of the other form: one login is remembered at a time), checks it with one capacity call, and
prints a JSON summary that adds `in_effect` (the setup later commands will use, which an environment
variable may still override: a warning says so) and `ignored` (setups that exist but are not used).
`--no-verify` skips both calls. No form ever prints the token.
"""

from __future__ import annotations

import getpass
import os
import re
import stat
from pathlib import Path
from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output
from ct_core.constants import DEFAULT_PROFILE_DATABASE

#: Defaults of a new profile.
DEFAULT_PROFILE_NAME = "cortex-training"
DEFAULT_SCHEMA = "PUBLIC"
PROFILE_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
#: A pasted Snowsight address `app.snowflake.com/ORG/ACCOUNT` names host `ORG-ACCOUNT...`.
_SNOWSIGHT_RE = re.compile(r"^(?:https?://)?app\.snowflake\.com/([^/\s]+)/([^/\s#?]+)", re.IGNORECASE)
_PAT_ENV_VARS = ("CORTEX_TRAINING_PAT", "SNOWFLAKE_PAT")


def host_from_input(text: str) -> str:
    """Accept a host, a URL, or a pasted Snowsight address, and return the bare host name."""
    from ct_core.connect.resolve import normalize_host

    value = text.strip()
    match = _SNOWSIGHT_RE.match(value)
    if match:
        return f"{match.group(1)}-{match.group(2)}.snowflakecomputing.com".lower()
    return normalize_host(value)


def _interactive() -> bool:
    stdin = context.current().stdin
    isatty = getattr(stdin, "isatty", None)
    return bool(isatty and isatty())


def _ask(label: str, flag: str, default: str | None = None, *, secret: bool = False) -> str:
    """Prompt on stderr (never stdout, which carries the JSON result) or fail when not interactive."""
    if not _interactive():
        if default is not None:
            return default
        raise ValueError(f"{label} is required: pass {flag}")
    stream = output.current().stderr
    prompt = f"{label}" + (f" [{default}]" if default else "") + ": "
    if secret:
        answer = getpass.getpass(prompt, stream=stream)
    else:
        stream.write(prompt)
        stream.flush()
        answer = context.current().stdin.readline().strip()
    answer = answer.strip()
    if not answer and default is not None:
        return default
    if not answer:
        raise ValueError(f"{label} is required: pass {flag}")
    return answer


def _confirm(question: str) -> bool:
    if not _interactive():
        return False
    stream = output.current().stderr
    stream.write(f"{question} [y/N]: ")
    stream.flush()
    return context.current().stdin.readline().strip().lower() in ("y", "yes")


def _warn_if_readable_by_others(path: Path) -> None:
    # A legacy config holds a plaintext PAT; say so when others can read it.
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        output.warn(f"{path} is readable by other users; it may hold a token: chmod 600 {path}")


def _check(options: context.GlobalOptions) -> str | None:
    """One capacity call through `options`' connection: None when it answers, else what went wrong."""
    try:
        client = context.default_client_factory(options)
        try:
            client.get_capacity()
        finally:
            close = getattr(client, "close", None)
            if callable(close):
                close()
    except Exception as exc:
        return str(exc) or type(exc).__name__
    return None


def _verify(options: context.GlobalOptions) -> bool:
    """One capacity call through the connection just remembered; a failure is a warning."""
    problem = _check(options)
    if problem is not None:
        output.warn(f"the connection could not be verified: {problem}")
        return False
    return True


# --- which setup later commands use ---------------------------------------------------------------


def _plain_options() -> Any:
    """The connection options of a later `ct COMMAND` given no connection flags (only --no-verify-ssl)."""
    from ct_core.connect.resolve import ConnectionOptions

    return ConnectionOptions(verify_ssl=not context.current().options.no_verify_ssl)


def _token_location(resolved: Any) -> str | None:
    """Where the setup's token lives (never the token itself)."""
    from ct_core.connect.resolve import connections_toml_path, load_config_file, read_connection_profiles

    if resolved.mode == "profile":
        profile = read_connection_profiles().get(resolved.profile or "", {})
        if profile.get("token") or profile.get("password"):
            return f"profile {resolved.profile} in {connections_toml_path()}"
        authenticator = profile.get("authenticator") or "the Connector's default"
        return f"the Snowflake Connector's sign-in for profile {resolved.profile} ({authenticator})"
    if not resolved.pat:
        return None
    if resolved.config_path:
        try:
            if load_config_file(resolved.config_path).get("pat") == resolved.pat:
                return f"config file {resolved.config_path}"
        except Exception:
            pass  # the file was read a moment ago; if it changed meanwhile, look at the environment
    for name in _PAT_ENV_VARS:
        if os.environ.get(name) == resolved.pat:
            return f"${name}"
    return "the command line"


def _setup_summary(resolved: Any) -> dict[str, Any]:
    """A printable description of a resolved connection: where it comes from, where it goes, no secret."""
    summary: dict[str, Any] = {
        "source": resolved.source,
        "mode": resolved.mode,
        "database": resolved.database,
        "schema": resolved.schema,
        "endpoint": resolved.endpoint,
        "token": _token_location(resolved),
    }
    for key in ("profile", "config_path", "base_url", "host"):
        if getattr(resolved, key):
            summary[key] = getattr(resolved, key)
    return summary


def _setup_line(summary: dict[str, Any]) -> str:
    where = summary.get("base_url") or summary.get("host") or "?"
    parts = [f"{summary['source']} ({summary['mode']}, {where})"]
    parts.append(
        f"database {summary['database']}, schema {summary['schema']}, endpoint {summary['endpoint']}"
    )
    parts.append(f"token: {summary['token'] or 'none'}")
    return "; ".join(parts)


#: Environment variables that take part in resolution, and the field of the connection each fills.
_ENV_FIELDS = (
    ("CORTEX_TRAINING_BASE_URL", "base_url"),
    ("CORTEX_TRAINING_HOST", "host"),
    ("SNOWFLAKE_HOST", "host"),
    ("CORTEX_TRAINING_PAT", "pat"),
    ("SNOWFLAKE_PAT", "pat"),
    ("CORTEX_TRAINING_DATABASE", "database"),
    ("SNOWFLAKE_DATABASE", "database"),
    ("CORTEX_TRAINING_SCHEMA", "schema"),
    ("SNOWFLAKE_SCHEMA", "schema"),
    ("CORTEX_TRAINING_ENDPOINT", "endpoint"),
)


def _ignored_setups(resolved: Any) -> list[str]:
    """Setups that exist but are not the one in effect, each as a sentence (no secret in any)."""
    from ct_core.connect.resolve import (
        connections_toml_path,
        normalize_host,
        read_connection_profiles,
        read_login_state,
    )

    first = f"{resolved.source} comes first"
    ignored: list[str] = []
    for name in ("CORTEX_TRAINING_CONNECTION", "CORTEX_TRAINING_CONFIG"):
        value = os.environ.get(name, "").strip()
        if value and not resolved.source.startswith(name):
            ignored.append(f"${name}={value}: {first}")
    for name, field in _ENV_FIELDS:
        value = os.environ.get(name, "").strip()
        if not value:
            continue
        used = getattr(resolved, field)
        if field == "host" and used:
            value, used = normalize_host(value), normalize_host(str(used))
        if value != used:
            ignored.append(
                f"${name}" + ("" if field == "pat" else f"={value}") + f": not used by {resolved.source}"
            )
    try:
        login = read_login_state()
    except Exception:
        login = None
    if login is not None and not resolved.source.startswith("login "):
        what = f"profile {login.profile}" if login.profile else f"config file {login.config_path}"
        ignored.append(f"the remembered login {login.path} ({what}): {first}")
    try:
        profiles = read_connection_profiles()
    except Exception:
        profiles = {}
    for name in profiles:
        if name != resolved.profile:
            ignored.append(f"profile {name} in {connections_toml_path()}: not the one in use")
    return ignored


def _current_setup(verify: bool) -> None:
    """Before anything else: say which setup commands use today, check it, drop a stale or failing login.

    Everything goes to stderr; a remembered login that is stale (its file or profile is gone) or fails
    the capacity call is forgotten, so a broken login never outlives this command.
    """
    from ct_core.connect.files import stale_login
    from ct_core.connect.resolve import forget_login, resolve_connection
    from ct_core.errors import ConfigError

    stale = stale_login()
    if stale is not None:
        forget_login()
        output.warn(f"removed the remembered login {stale[0]}: {stale[1]}")
    try:
        resolved = resolve_connection(_plain_options())
    except ConfigError as exc:
        output.progress(f"current setup: none ({exc})")
        return
    output.progress(f"current setup: {_setup_line(_setup_summary(resolved))}")
    for unused in _ignored_setups(resolved):
        output.progress(f"  also present, not used: {unused}")
    if not verify:
        return
    problem = _check(context.GlobalOptions(resolved=resolved))
    if problem is None:
        output.progress("current setup works (a capacity call answered)")
    elif resolved.source.startswith("login "):
        forget_login()
        output.warn(
            f"removed the remembered login {resolved.source[len('login ') :]}: it failed the check: {problem}"
        )
    else:
        output.warn(f"current setup failed the check: {problem}")


def _in_effect(result: dict[str, Any]) -> dict[str, Any]:
    """`result` with the setup later commands will use (`in_effect`) and the ones they ignore."""
    from ct_core.connect.resolve import resolve_connection
    from ct_core.errors import ConfigError

    try:
        resolved = resolve_connection(_plain_options())
    except ConfigError as exc:
        output.warn(f"later commands find no whole connection: {exc}")
        return {**result, "ignored": [], "in_effect": None}
    if not resolved.source.startswith("login "):
        output.warn(
            f"the login is remembered, but later commands use {resolved.source}, which comes first; "
            "unset it (or pass options) to use the login"
        )
    return {**result, "ignored": _ignored_setups(resolved), "in_effect": _setup_summary(resolved)}


def _remembered_options(**changes: Any) -> context.GlobalOptions:
    # The global options the user gave still apply (e.g. --no-verify-ssl), minus the source.
    base = context.current().options
    fields = {name: getattr(base, name) for name in vars(base)}
    fields.update(config=None, connection=None, base_url=None, host=None, pat=None)
    fields.update(changes)
    return context.GlobalOptions(**fields)


def _read_pat(pat_stdin: bool) -> str:
    if pat_stdin:
        token = context.current().stdin.readline().strip()
        if not token:
            raise ValueError("no token on stdin (--pat-stdin)")
        return token
    for name in _PAT_ENV_VARS:
        value = os.environ.get(name)
        if value and (not _interactive() or _confirm(f"use the token in ${name}?")):
            return value
    return _ask("programmatic access token", "--pat-stdin", secret=True)


def _login_config(path_text: str, verify: bool) -> dict[str, Any]:
    from ct_core.connect.resolve import save_login_config_path

    path = Path(path_text).expanduser().resolve()
    save_login_config_path(path)
    _warn_if_readable_by_others(path)
    result: dict[str, Any] = {"config_path": str(path), "logged_in": True}
    if verify:
        result["verified"] = _verify(_remembered_options(config=str(path)))
    return result


def _login_profile(name: str, *, database: str | None, schema: str | None, verify: bool) -> dict[str, Any]:
    from ct_core.connect.resolve import (
        connections_toml_path,
        read_connection_profiles,
        save_login_profile,
        write_connection_profile,
    )

    profiles = read_connection_profiles()
    if name not in profiles:
        raise ValueError(
            f"connection profile {name!r} not found in {connections_toml_path()}; "
            "create it with ct login --host HOST --user USER"
        )
    updated = False
    if database or schema:
        values = dict(profiles[name])
        values.update({k: v for k, v in (("database", database), ("schema", schema)) if v})
        write_connection_profile(name, values, force=True)
        updated = True
    state = save_login_profile(name)
    profile = read_connection_profiles()[name]
    result: dict[str, Any] = {
        "connection": name,
        "connections_file": str(connections_toml_path()),
        "database": profile.get("database"),
        "logged_in": True,
        "login_file": str(state),
        "profile_created": False,
        "profile_updated": updated,
        "schema": profile.get("schema"),
    }
    if verify:
        result["verified"] = _verify(_remembered_options(connection=name))
    return result


def _create_profile(
    *,
    host: str | None,
    user: str | None,
    database: str | None,
    schema: str | None,
    name: str | None,
    pat_stdin: bool,
    force: bool,
    verify: bool,
) -> dict[str, Any]:
    from ct_core.connect.resolve import save_login_profile, write_connection_profile

    host_name = host_from_input(host or _ask("account host (or Snowsight URL)", "--host"))
    user_name = user or _ask("user", "--user")
    token = _read_pat(pat_stdin)
    database_name = database or _ask("database", "--database", DEFAULT_PROFILE_DATABASE)
    schema_name = schema or _ask("schema", "--schema", DEFAULT_SCHEMA)
    profile = name or _ask("profile name", "--connection", DEFAULT_PROFILE_NAME)
    if not PROFILE_NAME_RE.match(profile):
        raise ValueError(f"profile name {profile!r} may only use letters, digits, '_', '.' and '-'")
    path = write_connection_profile(
        profile,
        {
            "account": host_name.split(".", 1)[0],
            "host": host_name,
            "user": user_name,
            "authenticator": "programmatic_access_token",
            "token": token,
            "database": database_name,
            "schema": schema_name,
        },
        force=force,
    )
    save_login_profile(profile)
    result: dict[str, Any] = {
        "connection": profile,
        "connections_file": str(path),
        "database": database_name,
        "host": host_name,
        "logged_in": True,
        "profile_created": True,
        "schema": schema_name,
        "user": user_name,
    }
    if verify:
        result["verified"] = _verify(_remembered_options(connection=profile))
    return result


def _sql_origin(config: dict[str, Any], path: Path) -> tuple[str, str]:
    """(where statements go, the host the profile names) for a legacy config.

    A `base_url` (a compatible or local server) is talked to as it is; a Snowflake host over https
    at its REST name (an `_` in the account label becomes `-`), as every PAT request is.
    """
    from urllib.parse import urlsplit

    from ct_core.connect.resolve import normalize_host, rest_host

    base_url, host = config.get("base_url"), config.get("host")
    if host:
        name = normalize_host(str(host))
        return (str(base_url) if base_url else f"https://{rest_host(name)}"), name
    if base_url:
        return str(base_url), urlsplit(str(base_url)).netloc
    raise ValueError(f"{path} names no host: --convert-legacy-config needs a config with host and pat")


def _database_exists(sql: Any, database: str) -> bool:
    from ct_core.connect.snowflake import run_statement

    # Unquoted identifiers are stored upper-case; a quoted name is compared as written.
    wanted = database[1:-1] if database.startswith('"') else database.upper()
    names = run_statement(sql, "SHOW DATABASES").column("name")
    return any(name == wanted or (name or "").upper() == wanted for name in names)


def _schema_exists(sql: Any, database: str, schema: str) -> bool:
    from ct_core.connect.snowflake import run_statement

    wanted = schema[1:-1] if schema.startswith('"') else schema.upper()
    names = run_statement(sql, f"SHOW SCHEMAS IN DATABASE {database}").column("name")
    return any(name == wanted or (name or "").upper() == wanted for name in names)


def _agree_to_create(statement: str, database: str, role: str | None, yes: bool) -> None:
    """Show the SQL and get a yes (a database is never created silently)."""
    as_role = f" for role {role}" if role else ""
    output.progress(f"database {database} does not exist or is not visible{as_role}. ct can create it with:")
    output.progress(f"  {statement};")
    if yes:
        return
    if not _interactive():
        raise ValueError(
            f"database {database} was not found and ct will not create it without asking: pass --yes "
            f"to run {statement!r}, or have it created and run this command again"
        )
    if not _confirm("run it now?"):
        raise ValueError(
            f"not converted: database {database} does not exist. Create it (or pass --database with one "
            "that exists) and run this command again"
        )


def _convert_legacy_config(
    path_text: str,
    *,
    name: str | None,
    database: str | None,
    schema: str | None,
    force: bool,
    yes: bool,
    verify: bool,
) -> dict[str, Any]:
    from ct_core.connect.resolve import (
        load_config_file,
        read_connection_profiles,
        save_login_profile,
        write_connection_profile,
    )
    from ct_core.connect.snowflake import (
        checked_identifier,
        current_identity,
        pat_statements_transport,
        run_statement,
    )

    path = Path(path_text).expanduser().resolve()
    config = load_config_file(path)
    pat = config.get("pat")
    if not pat:
        raise ValueError(f"{path} has no pat: --convert-legacy-config converts a config with host and pat")
    origin, host = _sql_origin(config, path)
    profile = name or DEFAULT_PROFILE_NAME
    if not PROFILE_NAME_RE.match(profile):
        raise ValueError(f"profile name {profile!r} may only use letters, digits, '_', '.' and '-'")
    # Refuse before running any SQL, so a refused conversion changes nothing anywhere.
    if profile in read_connection_profiles() and not force:
        from ct_core.connect.resolve import connections_toml_path

        raise ValueError(
            f"profile {profile!r} already exists in {connections_toml_path()}; pass --force to replace it, "
            "or --connection NAME for another name"
        )
    database_name = checked_identifier(
        database or config.get("database") or DEFAULT_PROFILE_DATABASE, "database"
    )
    schema_name = checked_identifier(schema or config.get("schema") or DEFAULT_SCHEMA, "schema")
    verify_ssl = not context.current().options.no_verify_ssl
    if verify_ssl and config.get("no_verify_ssl") is not None:
        verify_ssl = not config["no_verify_ssl"]
    elif verify_ssl and config.get("verify_ssl") is not None:
        verify_ssl = bool(config["verify_ssl"])

    sql = pat_statements_transport(origin, str(pat), verify=verify_ssl)
    try:
        # No database or schema context on these calls: they may not exist yet.
        user, role = current_identity(sql)
        output.progress(f"the token in {path} belongs to user {user}" + (f" (role {role})" if role else ""))
        created = False
        if not _database_exists(sql, database_name):
            statement = f"CREATE DATABASE IF NOT EXISTS {database_name}"
            _agree_to_create(statement, database_name, role, yes)
            run_statement(sql, statement)
            created = True
        if not _schema_exists(sql, database_name, schema_name):
            raise ValueError(
                f"schema {database_name}.{schema_name} does not exist or is not visible"
                + (f" for role {role}" if role else "")
                + f"; create it (CREATE SCHEMA IF NOT EXISTS {database_name}.{schema_name}) or pass "
                "--schema with one that exists"
            )
    finally:
        sql.close()

    values = {
        "account": host.split(".", 1)[0],
        "host": host,
        "user": user,
        "role": role,
        "authenticator": "programmatic_access_token",
        "token": str(pat),
        "database": database_name,
        "schema": schema_name,
    }
    connections_file = write_connection_profile(profile, values, force=force)
    state = save_login_profile(profile)
    output.warn(f"{path} still holds the token in plain text; delete it once the new profile works")
    result: dict[str, Any] = {
        "connection": profile,
        "connections_file": str(connections_file),
        "converted_from": str(path),
        "database": database_name,
        "database_created": created,
        "host": host,
        "logged_in": True,
        "login_file": str(state),
        "profile_created": True,
        "role": role,
        "schema": schema_name,
        "user": user,
    }
    if verify:
        result["verified"] = _verify(_remembered_options(connection=profile))
    return result


def _reset() -> dict[str, Any]:
    from ct_core.connect.resolve import forget_login, read_login_state, remove_connection_profile

    try:
        state = read_login_state()
    except Exception:
        state = None  # a broken state file is exactly what a reset should clear
    removed_profile = None
    confirmed = state is not None and state.profile and _confirm(f"also remove profile {state.profile!r}?")
    if confirmed and state is not None and state.profile and remove_connection_profile(state.profile):
        removed_profile = state.profile
    forgotten = forget_login()
    return {
        "forgotten": [str(path) for path in forgotten],
        "logged_in": False,
        "removed_profile": removed_profile,
    }


def login(
    config: Annotated[
        str | None, Parameter(help="Legacy JSON config file to remember (same as --config).")
    ] = None,
    /,
    *,
    config_option: Annotated[
        str | None, Parameter(name="--config", help="Legacy JSON config file to remember.")
    ] = None,
    connection: Annotated[
        str | None,
        Parameter(help="Profile to remember; with --host, the name of the profile to create."),
    ] = None,
    host: Annotated[
        str | None, Parameter(help="Account host (or Snowsight URL): create a PAT profile for it.")
    ] = None,
    user: Annotated[str | None, Parameter(help="Snowflake user of the new profile.")] = None,
    database: Annotated[
        str | None, Parameter(help=f"Database of the profile (new: {DEFAULT_PROFILE_DATABASE}).")
    ] = None,
    schema: Annotated[str | None, Parameter(help=f"Schema of the profile (new: {DEFAULT_SCHEMA}).")] = None,
    pat_stdin: Annotated[bool, Parameter(help="Read the token from stdin instead of a prompt.")] = False,
    convert_legacy_config: Annotated[
        str | None,
        Parameter(help="Turn an old host/PAT JSON config into a connection profile and remember it."),
    ] = None,
    yes: Annotated[
        bool,
        Parameter(help="With --convert-legacy-config: create a missing database without asking."),
    ] = False,
    force: Annotated[bool, Parameter(help="Replace a profile of the same name.")] = False,
    reset: Annotated[
        bool, Parameter(help="Forget the remembered login (and, if confirmed, its profile).")
    ] = False,
    no_verify: Annotated[bool, Parameter(help="Do not check the connection with a capacity call.")] = False,
) -> None:
    """Remember the connection later commands use, and check that it works.

    Use one of: a legacy JSON config (ct login CONFIG), an existing Snowflake connection
    profile (ct login --connection NAME), a new PAT profile (ct login --host HOST --user
    USER --pat-stdin), or a conversion of an old host/PAT config into a profile
    (ct login --convert-legacy-config FILE [--connection NAME] [--yes]). Prints a JSON summary;
    the token is never printed.
    """
    # Naming no form, or two forms at once, is a usage error (exit 2), as the reference's argparse group.
    from ct_cli.app import UsageError

    verify = not no_verify
    if config is not None and config_option is not None:
        raise UsageError("give the config file once: ct login CONFIG or ct login --config CONFIG")
    config_path = config if config is not None else config_option
    if convert_legacy_config is not None:
        if config_path or host or user or reset or pat_stdin:
            raise UsageError(
                "--convert-legacy-config takes the token and host from the file; it cannot be combined "
                "with a config file, --host, --user, --pat-stdin or --reset"
            )
        _current_setup(verify)
        converted = _convert_legacy_config(
            convert_legacy_config,
            name=connection,
            database=database,
            schema=schema,
            force=force,
            yes=yes,
            verify=verify,
        )
        output.emit(_in_effect(converted))
        return
    if yes:
        raise UsageError("--yes only applies to --convert-legacy-config")
    if reset:
        if config_path or connection or host:
            raise UsageError("--reset cannot be combined with a config file, --connection or --host")
        output.emit(_reset())
        return
    if config_path is not None:
        if connection or host or user:
            raise UsageError("a config file cannot be combined with --connection, --host or --user")
        _current_setup(verify)
        output.emit(_in_effect(_login_config(config_path, verify)))
        return
    if connection and not host and not user:
        _current_setup(verify)
        output.emit(_in_effect(_login_profile(connection, database=database, schema=schema, verify=verify)))
        return
    if not host and not _interactive():
        raise UsageError(
            "nothing to log in with: pass a config file (ct login CONFIG), a profile "
            "(--connection NAME), or --host and --user to create a profile"
        )
    _current_setup(verify)
    created = _create_profile(
        host=host,
        user=user,
        database=database,
        schema=schema,
        name=connection,
        pat_stdin=pat_stdin,
        force=force,
        verify=verify,
    )
    output.emit(_in_effect(created))

"""`ct login`: remember which connection later commands use (CLI-22, CFG-19, CFG-20).

Three forms:

- `ct login CONFIG` / `ct login --config CONFIG`: the reference's legacy form. The JSON config
  is checked and its absolute path remembered (under the XDG config dir).
- `ct login --connection NAME`: remember an existing Snowflake connection profile (written
  as `{"profile": NAME}` in `<Snowflake folder>/cortex-training/config.json`).
- `ct login --host HOST --user USER ...`: create a PAT profile in connections.toml (atomic
  write, mode 0600, other profiles kept) and remember it. Missing values are prompted for on
  stderr when stdin is a terminal; otherwise they must be passed as flags.

Each form then checks the connection with one capacity call (skip with `--no-verify`) and
prints a JSON summary. No form ever prints the token.
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

#: Defaults of a new profile (CFG-20).
DEFAULT_PROFILE_NAME = "cortex-training"
DEFAULT_DATABASE = "CORTEX_TRAINING_DB"
DEFAULT_SCHEMA = "PUBLIC"
PROFILE_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
#: A pasted Snowsight address `app.snowflake.com/ORG/ACCOUNT` names host `ORG-ACCOUNT...`.
_SNOWSIGHT_RE = re.compile(r"^(?:https?://)?app\.snowflake\.com/([^/\s]+)/([^/\s#?]+)", re.IGNORECASE)
_PAT_ENV_VARS = ("CORTEX_TRAINING_PAT", "SNOWFLAKE_PAT")


def host_from_input(text: str) -> str:
    """Accept a host, a URL, or a pasted Snowsight address, and return the bare host name."""
    from ct_core.connection import normalize_host

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
    # A legacy config holds a plaintext PAT; say so when others can read it (BUG-41).
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        output.warn(f"{path} is readable by other users; it may hold a token: chmod 600 {path}")


def _verify(options: context.GlobalOptions) -> bool:
    """One capacity call through the connection just remembered; a failure is a warning."""
    try:
        client = context.default_client_factory(options)
        try:
            client.get_capacity()
        finally:
            close = getattr(client, "close", None)
            if callable(close):
                close()
    except Exception as exc:
        output.warn(f"the connection could not be verified: {exc}")
        return False
    return True


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
    from ct_core.connection import save_login_config_path

    path = Path(path_text).expanduser().resolve()
    save_login_config_path(path)
    _warn_if_readable_by_others(path)
    result: dict[str, Any] = {"config_path": str(path), "logged_in": True}
    if verify:
        result["verified"] = _verify(_remembered_options(config=str(path)))
    return result


def _login_profile(name: str, *, database: str | None, schema: str | None, verify: bool) -> dict[str, Any]:
    from ct_core.connection import (
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
    from ct_core.connection import save_login_profile, write_connection_profile

    host_name = host_from_input(host or _ask("account host (or Snowsight URL)", "--host"))
    user_name = user or _ask("user", "--user")
    token = _read_pat(pat_stdin)
    database_name = database or _ask("database", "--database", DEFAULT_DATABASE)
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


def _reset() -> dict[str, Any]:
    from ct_core.connection import forget_login, read_login_state, remove_connection_profile

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
        str | None, Parameter(help=f"Database of the profile (new: {DEFAULT_DATABASE}).")
    ] = None,
    schema: Annotated[str | None, Parameter(help=f"Schema of the profile (new: {DEFAULT_SCHEMA}).")] = None,
    pat_stdin: Annotated[bool, Parameter(help="Read the token from stdin instead of a prompt.")] = False,
    force: Annotated[bool, Parameter(help="Replace a profile of the same name.")] = False,
    reset: Annotated[
        bool, Parameter(help="Forget the remembered login (and, if confirmed, its profile).")
    ] = False,
    no_verify: Annotated[bool, Parameter(help="Do not check the connection with a capacity call.")] = False,
) -> None:
    """Remember the connection later commands use, and check that it works.

    Use one of: a legacy JSON config (ct login CONFIG), an existing Snowflake connection
    profile (ct login --connection NAME), or a new PAT profile (ct login --host HOST --user
    USER --pat-stdin). Prints a JSON summary; the token is never printed.
    """
    verify = not no_verify
    if config is not None and config_option is not None:
        raise ValueError("give the config file once: ct login CONFIG or ct login --config CONFIG")
    config_path = config if config is not None else config_option
    if reset:
        if config_path or connection or host:
            raise ValueError("--reset cannot be combined with a config file, --connection or --host")
        output.emit(_reset())
        return
    if config_path is not None:
        if connection or host or user:
            raise ValueError("a config file cannot be combined with --connection, --host or --user")
        output.emit(_login_config(config_path, verify))
        return
    if connection and not host and not user:
        output.emit(_login_profile(connection, database=database, schema=schema, verify=verify))
        return
    if not host and not _interactive():
        raise ValueError(
            "nothing to log in with: pass a config file (ct login CONFIG), a profile "
            "(--connection NAME), or --host and --user to create a profile"
        )
    output.emit(
        _create_profile(
            host=host,
            user=user,
            database=database,
            schema=schema,
            name=connection,
            pat_stdin=pat_stdin,
            force=force,
            verify=verify,
        )
    )

"""Files that hold connection settings: the legacy JSON config, the remembered login, and Snowflake's
connections.toml profiles. Reading and writing only; choosing among them is `ct_core.connect.resolve`.

Locations:

- Snowflake folder: `$SNOWFLAKE_HOME`, else `~/.snowflake` (where the Connector keeps
  connections.toml and config.toml). When neither is set and `~/.snowflake` does not exist, the
  Connector falls back to `$XDG_CONFIG_HOME/snowflake` (or `~/.config/snowflake`); so do we.
- Remembered login (what `ct login` writes): `<Snowflake folder>/cortex-training/config.json`,
  `{"profile": "<name>"}`.
- Legacy login state (read, and written only for a remembered config file):
  `$CORTEX_TRAINING_LOGIN_FILE`, else `$XDG_CONFIG_HOME/cortex-training/login.json`, else
  `~/.config/cortex-training/login.json`, holding `{"config_path": ...}` or `{"connection": ...}`.

Writes are atomic and durable (`ct_core.fs.atomic_write`: a temporary file in the same folder, then a
rename) with mode 0600, because connections.toml can hold a token.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ct_core import fs
from ct_core.constants import ENV_LOGIN_FILE, ENV_SNOWFLAKE_HOME, ENV_XDG_CONFIG_HOME
from ct_core.errors import ConfigError

CONFIG_KEYS = frozenset(
    {
        "base_url",
        "host",
        "pat",
        "database",
        "schema",
        "endpoint",
        "poll_interval",
        "poll_timeout",
        "no_verify_ssl",
        "verify_ssl",
    }
)
CONFIG_ALIASES = {"url": "base_url", "db": "database"}
_STRING_KEYS = ("base_url", "host", "pat", "database", "schema", "endpoint")
_NUMBER_KEYS = ("poll_interval", "poll_timeout")
_BOOL_KEYS = ("no_verify_ssl", "verify_ssl")


def env_value(*names: str) -> str | None:
    """The first of `names` set in the environment; an empty string counts as unset."""
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


# --------------------------------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------------------------------


def _xdg_config_home() -> Path:
    configured = env_value(ENV_XDG_CONFIG_HOME)
    return Path(configured).expanduser() if configured else Path.home() / ".config"


def snowflake_home() -> Path:
    """The folder holding connections.toml and config.toml."""
    configured = env_value(ENV_SNOWFLAKE_HOME)
    if configured:
        return Path(configured).expanduser()
    dot_folder = Path.home() / ".snowflake"
    if dot_folder.exists():
        return dot_folder
    return _xdg_config_home() / "snowflake"


def connections_toml_path() -> Path:
    return snowflake_home() / "connections.toml"


def login_state_path() -> Path:
    """Where `ct login` remembers the profile: `<Snowflake folder>/cortex-training/config.json`."""
    return snowflake_home() / "cortex-training" / "config.json"


def legacy_login_state_path() -> Path:
    """The 0.0.3 login state file (a remembered config path)."""
    configured = env_value(ENV_LOGIN_FILE)
    if configured:
        return Path(configured).expanduser()
    return _xdg_config_home() / "cortex-training" / "login.json"


# --------------------------------------------------------------------------------------------------
# Atomic writes
# --------------------------------------------------------------------------------------------------


def write_private_file(path: Path, text: str) -> None:
    """Write `text` to `path` atomically with mode 0600, creating the folder when needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fs.atomic_write(path, text, mode=0o600)


def _write_json(path: Path, value: dict[str, Any]) -> None:
    write_private_file(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


# --------------------------------------------------------------------------------------------------
# Legacy JSON config (a file named by --config or CORTEX_TRAINING_CONFIG)
# --------------------------------------------------------------------------------------------------


def load_config_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a legacy JSON connection config; keys come back under their canonical names."""
    location = Path(path).expanduser()
    try:
        text = location.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read config {path}: {error.strerror or error}") from None
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"invalid JSON in config {path}: {error}") from None
    if not isinstance(parsed, dict):
        raise ConfigError("config JSON must be an object")
    if "connection" in parsed:
        parsed = parsed["connection"]
        if not isinstance(parsed, dict):
            raise ConfigError("config connection must be an object")
    config: dict[str, Any] = {}
    unknown = []
    for key, value in parsed.items():
        name = CONFIG_ALIASES.get(key, key)
        if name in CONFIG_KEYS:
            config[name] = value
        else:
            unknown.append(key)
    if unknown:
        raise ConfigError(f"unknown config key(s): {', '.join(sorted(unknown))}")
    for key in _STRING_KEYS:
        if config.get(key) is not None and not isinstance(config[key], str):
            raise ConfigError(f"config {key} must be a string")
    for key in _NUMBER_KEYS:
        value = config.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ConfigError(f"config {key} must be a number")
    for key in _BOOL_KEYS:
        if config.get(key) is not None and not isinstance(config[key], bool):
            raise ConfigError(f"config {key} must be a boolean")
    # Blank strings count as unset, like blank environment variables.
    return {key: value for key, value in config.items() if value is not None and value != ""}


# --------------------------------------------------------------------------------------------------
# Remembered login (what `ct login` writes and later commands read)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoginState:
    """What a previous `ct login` remembered: a profile name or a config-file path."""

    path: Path
    profile: str | None = None
    config_path: str | None = None


def _read_state_file(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        # Never written, or removed meanwhile by another process's `ct logout`: nothing remembered.
        return None
    try:
        parsed = json.loads(text)
    except (OSError, json.JSONDecodeError) as error:
        raise ConfigError(f"invalid cortex-training login state {path}: {error}") from None
    if not isinstance(parsed, dict):
        raise ConfigError(f"invalid cortex-training login state {path}: expected object")
    return parsed


def read_login_state() -> LoginState | None:
    """The remembered login, newest form first; None when nothing (usable) is remembered.

    A remembered config file that no longer exists is ignored.
    """
    current = login_state_path()
    parsed = _read_state_file(current)
    if parsed is not None:
        profile = parsed.get("profile")
        if isinstance(profile, str) and profile:
            return LoginState(path=current, profile=profile)
        raise ConfigError(f"invalid cortex-training login state {current}: missing profile")
    legacy = legacy_login_state_path()
    parsed = _read_state_file(legacy)
    if parsed is None:
        return None
    connection = parsed.get("connection")
    if isinstance(connection, str) and connection:
        return LoginState(path=legacy, profile=connection)
    config_path = parsed.get("config_path")
    if not isinstance(config_path, str) or not config_path:
        raise ConfigError(f"invalid cortex-training login state {legacy}: missing config_path")
    if not Path(config_path).expanduser().exists():
        return None
    return LoginState(path=legacy, config_path=config_path)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass  # never written, or removed meanwhile by another process


def save_login_profile(profile: str) -> Path:
    """Remember `profile` as the default connection; returns the file.

    A config file remembered before (the legacy form) is forgotten: one login is remembered at a time.
    """
    if not profile:
        raise ConfigError("a profile name is required")
    path = login_state_path()
    _write_json(path, {"profile": profile})
    _remove(legacy_login_state_path())
    return path


def save_login_config_path(config_path: str | os.PathLike[str]) -> Path:
    """Remember a legacy JSON config file (checked first) under the XDG config dir; returns the file.

    A profile remembered before is forgotten: it is read first and would still win over the config.
    """
    resolved = Path(config_path).expanduser().resolve()
    load_config_file(resolved)
    path = legacy_login_state_path()
    _write_json(path, {"config_path": str(resolved)})
    _remove(login_state_path())
    return path


def stale_login() -> tuple[Path, str] | None:
    """A remembered login that can no longer work, as (its file, why); None when there is none.

    Stale is what needs no request to tell: a state file that cannot be read, a remembered config
    file that was deleted, a remembered profile no longer in connections.toml / config.toml.
    """
    for path in (login_state_path(), legacy_login_state_path()):
        try:
            parsed = _read_state_file(path)
        except ConfigError as error:
            return path, str(error)
        if parsed is None:
            continue
        profile = parsed.get("profile") if path == login_state_path() else parsed.get("connection")
        config_path = parsed.get("config_path")
        if isinstance(profile, str) and profile:
            try:
                known = read_connection_profiles()
            except ConfigError:
                return None  # the profiles file is what is broken; the login itself may be fine
            if profile not in known:
                return path, f"its profile {profile!r} is no longer in {connections_toml_path()}"
        elif isinstance(config_path, str) and config_path:
            if not Path(config_path).expanduser().exists():
                return path, f"its config file {config_path} no longer exists"
        else:
            return path, f"invalid cortex-training login state {path}: names no profile or config file"
        return None  # the file read first is the one in use
    return None


def forget_login() -> list[Path]:
    """Remove every remembered login file; returns the files removed."""
    removed = []
    for path in (login_state_path(), legacy_login_state_path()):
        try:
            path.unlink()
        except FileNotFoundError:
            continue  # never written, or another process's `ct logout` removed it meanwhile
        removed.append(path)
    return removed


# --------------------------------------------------------------------------------------------------
# connections.toml profiles
# --------------------------------------------------------------------------------------------------


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    import tomllib  # only when there is a file to read

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None


def read_connection_profiles() -> dict[str, dict[str, Any]]:
    """Every profile: the `[connections.*]` tables of config.toml, overridden by connections.toml."""
    home = snowflake_home()
    profiles: dict[str, dict[str, Any]] = {}
    config_connections = _read_toml(home / "config.toml").get("connections", {})
    if isinstance(config_connections, dict):
        profiles.update({k: dict(v) for k, v in config_connections.items() if isinstance(v, dict)})
    for name, table in _read_toml(home / "connections.toml").items():
        if isinstance(table, dict):
            profiles[name] = dict(table)
    return profiles


def default_connection_name() -> str:
    """The Connector's default profile: SNOWFLAKE_DEFAULT_CONNECTION_NAME, config.toml, then `default`."""
    from ct_core.constants import ENV_SNOWFLAKE_DEFAULT_CONNECTION

    configured = env_value(ENV_SNOWFLAKE_DEFAULT_CONNECTION)
    if configured:
        return configured
    name = _read_toml(snowflake_home() / "config.toml").get("default_connection_name")
    return name if isinstance(name, str) and name else "default"


def write_connection_profile(name: str, values: dict[str, Any], *, force: bool = False) -> Path:
    """Add or (with `force`) replace one profile in connections.toml, keeping the others and comments."""
    import tomlkit

    path = connections_toml_path()
    document = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
    if name in document and not force:
        raise ConfigError(f"profile {name!r} already exists in {path}; pass --force to replace it")
    table = tomlkit.table()
    for key, value in values.items():
        if value is not None:
            table[key] = value
    document[name] = table
    write_private_file(path, tomlkit.dumps(document))
    return path


def remove_connection_profile(name: str) -> bool:
    """Delete one profile from connections.toml; False when it was not there."""
    import tomlkit

    path = connections_toml_path()
    if not path.exists():
        return False
    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    if name not in document:
        return False
    del document[name]
    write_private_file(path, tomlkit.dumps(document))
    return True

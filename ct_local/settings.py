"""Settings of the embedded local server: limits, lifecycle delays, capacity and access rules.

One frozen :class:`ServerSettings` value describes a server run. It is built from the `ct local
serve` flags, optionally layered over a JSON document (``--settings-json`` or the
``CT_LOCAL_SETTINGS`` environment variable), so tests can start a server shaped exactly as they
need without a flag for every knob. The service's defaults and limits are named constants, each
with a comment saying what it bounds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ct_core import constants

# GPU hardware: the accepted values of the create-job ``hardware`` field; H200 when omitted.
KNOWN_HARDWARE: tuple[str, ...] = ("H200", "B200", "B300")
DEFAULT_HARDWARE = "H200"

# Limits of the contract that the client checks too are ct_core.constants' own (one number, one
# rule); what only the server decides stays here.

# Create-job idle_timeout_seconds / pending_timeout_seconds: the defaults (the spec's schema holds the
# accepted range, checked by ct_core.config.bodies on both sides).
DEFAULT_IDLE_TIMEOUT_S = constants.DEFAULT_IDLE_TIMEOUT_SECONDS
DEFAULT_PENDING_TIMEOUT_S = constants.DEFAULT_PENDING_TIMEOUT_SECONDS

# Create-job names and values (ct_local.control.jobs). An experiment name is one to three
# dot-separated parts (NAME, SCHEMA.NAME or DB.SCHEMA.NAME) of ASCII letters, digits, "_" and "-",
# each at most Snowflake's identifier length; a one-part name is prefixed with the path's database
# and schema, which then follow the same part rule.
MAX_NAME_PART_CHARS = 255
EXPERIMENT_NAME_MAX_PARTS = 3
# max_seq_len of a sub-job: no model of the catalog comes near a window this long.
MAX_SEQ_LEN = 1 << 20
# A seed is what torch.manual_seed takes: an integer from 0 to 2**64 - 1.
MAX_SEED = 2**64 - 1

# Account-level job list: the page size when none is asked for (the server's choice) and the
# largest one (the contract's).
ACCOUNT_LIST_DEFAULT_LIMIT = 100
ACCOUNT_LIST_MAX_LIMIT = constants.ACCOUNT_LIST_MAX_PAGE_SIZE

# Capacity breakdown: at most this many dimension names per request.
BREAKDOWN_MAX_DIMENSIONS = 8

# Statement results the server keeps for getStatementStatus, newest first: a client reads a
# statement's result right after it ran, so a few hundred cover every caller at once.
STATEMENT_RESULTS_KEPT = 256

# Request chunks are at most 60 MiB; a body may carry one chunk frame plus its header.
MAX_BODY_BYTES = constants.MAX_REQUEST_CHUNK_BYTES + 4 * 1024 * 1024
# Every request body must arrive within this many seconds of the request's start; a client that
# promises more bytes than it sends is answered 408 and disconnected (ct_local.http.limits).
DEFAULT_BODY_TIMEOUT_S = 30.0
# JSON bodies nested deeper than this are refused with 400 before any parser sees them: Python's
# parser recurses once per level. The deepest body of the contract has fewer than ten levels.
MAX_JSON_DEPTH = 64
# Encoded results above this size are delivered as result_chunk events...
RESULT_CHUNK_THRESHOLD_BYTES = 4 * 1024 * 1024
# ...each chunk frame at most this large (it must exceed the chunk header allowance of 8 KiB).
RESULT_CHUNK_MAX_BYTES = 4 * 1024 * 1024
RESULT_CHUNK_MIN_BYTES = 8192 + 64

# The environment variable holding a JSON object of settings (same keys as the dataclass fields).
SETTINGS_ENV = "CT_LOCAL_SETTINGS"

# Models the local server lists when no model catalog can be found (an installed wheel without a
# checkout); otherwise the catalog (ct_core.catalog) names them.
BUILTIN_MODELS: tuple[str, ...] = (
    "Qwen/Qwen3-0.6B",
    "Qwen/Qwen3-1.7B",
    "Qwen/Qwen3-8B",
)


def _catalog_models() -> tuple[str, ...]:
    """The models the catalog supports (the catalog is the source of truth)."""
    from ct_core.catalog import CatalogError, model_names

    try:
        return tuple(model_names()) or BUILTIN_MODELS
    except (CatalogError, OSError):
        return BUILTIN_MODELS


# The identity reported when the server runs without tokens (no auth).
ANONYMOUS_ROLE = "LOCAL_ROLE"
ANONYMOUS_USER = "LOCAL_USER"
ACCOUNT_NAME = "LOCAL"


@dataclass(frozen=True)
class HardwareCapacity:
    """The account's GPU allowance for one hardware type, as the capacity route reports it.

    ``max_total_gpus`` of -1 means no ceiling. ``schedulable_gpus`` models what the cluster could
    place right now; ``None`` means "as much as the ceiling allows".
    """

    max_total_gpus: int = 64
    has_reservation: bool = True
    schedulable_gpus: int | None = None


@dataclass(frozen=True)
class Identity:
    """Who signs a request: the role owning what it creates and the user recorded as submitter."""

    role: str
    user: str


#: The application folder name under the platform's user data folder, and the local server's
#: subfolder in it.
DATA_APP_NAME = "ct"
DEFAULT_STATE_SUBDIR = "local-server"


def default_state_dir() -> Path:
    """Where the local server keeps its state when no state dir is given: ``ct/local-server`` in
    the platform's user data folder (``$XDG_DATA_HOME`` or ``~/.local/share`` on Linux,
    ``~/Library/Application Support`` on macOS, ``%LOCALAPPDATA%`` on Windows), never the current
    folder."""
    import platformdirs

    return platformdirs.user_data_path(DATA_APP_NAME, appauthor=False) / DEFAULT_STATE_SUBDIR


def _default_capacity() -> dict[str, HardwareCapacity]:
    return {name: HardwareCapacity() for name in KNOWN_HARDWARE}


@dataclass(frozen=True)
class ServerSettings:
    """Everything that shapes one local server run. Durations are seconds."""

    state_dir: Path = field(default_factory=default_state_dir)
    host: str = "127.0.0.1"
    port: int = 0
    # token -> role; empty means no authentication at all.
    tokens: Mapping[str, str] = field(default_factory=dict)
    # Lifecycle: time spent in each transient state before the next (DESIGN.md: well under 1 s total).
    pending_delay_s: float = 0.05
    placing_delay_s: float = 0.05
    initializing_delay_s: float = 0.05
    cancelling_delay_s: float = 0.05
    # Multiplies idle and pending timeouts so tests can see a 300 s timeout fire in 0.3 s.
    timeout_scale: float = 1.0
    # The least pause between two passes of the lifecycle loop (it passes when a job is due or
    # when woken: ct_local.control.lifecycle).
    tick_s: float = 0.02
    capacity: Mapping[str, HardwareCapacity] = field(default_factory=_default_capacity)
    # Capacity breakdown switches (see ct_local.control.capacity): False reports every dimension DISABLED for
    # the account; dimensions named in breakdown_unavailable report UNAVAILABLE; past
    # breakdown_attribution_limit jobs (oldest first kept; None: no limit) the answer is truncated.
    breakdown_enabled: bool = True
    breakdown_unavailable: tuple[str, ...] = ()
    breakdown_attribution_limit: int | None = None
    models: tuple[str, ...] = field(default_factory=_catalog_models)
    # Roles refused job creation with 403 003001 (no USE CORTEX TRAINING).
    roles_without_create: tuple[str, ...] = ()
    # "DB.SCHEMA" pairs (case-insensitive) answered 400 517602 as not found or not authorized.
    hidden_schemas: tuple[str, ...] = ()
    # When False the account-level list answers 404 "not enabled for this account".
    account_list_enabled: bool = True
    # Fault rules applied from start-up (see ct_local.http.faults).
    faults: tuple[Mapping[str, Any], ...] = ()
    # Admin routes under /_ct (faults, forced states); loopback callers only.
    admin_enabled: bool = True
    # Data plane: result delivery (inline envelope or result chunks), body limit, and torch intra-op
    # threads per process.
    result_chunk_threshold_bytes: int = RESULT_CHUNK_THRESHOLD_BYTES
    result_chunk_max_bytes: int = RESULT_CHUNK_MAX_BYTES
    max_body_bytes: int = MAX_BODY_BYTES
    torch_threads: int = 1
    # Request bodies on every route (ct_local.http.limits): the time a whole body may take to
    # arrive, and how deeply a JSON body may nest.
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S
    max_json_depth: int = MAX_JSON_DEPTH
    # How often each active sub-job's console, metrics and training rows are staged
    # (ct_local.http.artifacts).
    artifact_upload_interval_s: float = 3.0
    # Services plugins add through the ct_local_services hook (the runs service of ct_plugins/runs):
    # on by default; `runs_service: false` leaves them out. The runs service's run.completed
    # webhook receivers (HMAC secret from CT_RUNS_WEBHOOK_SECRET) and how many runs train at once.
    runs_service: bool = True
    runs_webhook_urls: tuple[str, ...] = ()
    runs_concurrency: int = 1

    @property
    def auth_required(self) -> bool:
        return bool(self.tokens)

    def identity_for_token(self, token: str) -> Identity | None:
        role = self.tokens.get(token)
        if role is None:
            return None
        return Identity(role=role, user=default_user_for_token(token))

    def with_overrides(self, overrides: Mapping[str, Any]) -> ServerSettings:
        """Return a copy with ``overrides`` (JSON-shaped values) applied, rejecting unknown keys."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise ValueError(f"unknown local server setting(s): {', '.join(unknown)}")
        changes: dict[str, Any] = {}
        for key, value in overrides.items():
            changes[key] = _coerce(key, value)
        return dataclasses.replace(self, **changes)


def default_role_for_token(token: str) -> str:
    """Derive a stable role name from a token so two unnamed tokens own different jobs."""
    return "ROLE_" + hashlib.sha256(token.encode()).hexdigest()[:8].upper()


def default_user_for_token(token: str) -> str:
    return "USER_" + hashlib.sha256(b"user:" + token.encode()).hexdigest()[:8].upper()


def parse_token_specs(specs: Iterable[str]) -> dict[str, str]:
    """Parse ``TOKEN`` or ``TOKEN=ROLE`` strings into a token -> role mapping."""
    tokens: dict[str, str] = {}
    for spec in specs:
        token, sep, role = spec.partition("=")
        token = token.strip()
        if not token:
            raise ValueError("a --token value must not be empty")
        role = role.strip() if sep else ""
        tokens[token] = role or default_role_for_token(token)
    return tokens


def parse_hardware_spec(spec: str) -> tuple[str, HardwareCapacity]:
    """Parse ``NAME=MAX[:best-effort][:schedulable=N]`` into a hardware capacity entry."""
    name, sep, rest = spec.partition("=")
    name = name.strip().upper()
    if name not in KNOWN_HARDWARE or not sep:
        raise ValueError(f"--hardware expects NAME=MAX_GPUS with NAME one of {', '.join(KNOWN_HARDWARE)}")
    parts = rest.split(":")
    try:
        max_total = int(parts[0])
    except ValueError as exc:
        raise ValueError(f"--hardware {spec!r}: MAX_GPUS must be an integer") from exc
    has_reservation = True
    schedulable: int | None = None
    for extra in parts[1:]:
        if extra == "best-effort":
            has_reservation = False
        elif extra.startswith("schedulable="):
            schedulable = int(extra.removeprefix("schedulable="))
        else:
            raise ValueError(f"--hardware {spec!r}: unknown option {extra!r}")
    return name, HardwareCapacity(max_total, has_reservation, schedulable)


def _coerce(key: str, value: Any) -> Any:
    if key == "state_dir":
        return Path(value)
    if key == "tokens":
        if isinstance(value, Mapping):
            return {str(k): str(v) for k, v in value.items()}
        return parse_token_specs(value)
    if key == "capacity":
        result: dict[str, HardwareCapacity] = {}
        for name, entry in dict(value).items():
            upper = str(name).upper()
            if upper not in KNOWN_HARDWARE:
                raise ValueError(f"capacity: unknown hardware {name!r}")
            result[upper] = entry if isinstance(entry, HardwareCapacity) else HardwareCapacity(**entry)
        return result
    if key in {
        "models",
        "roles_without_create",
        "hidden_schemas",
        "breakdown_unavailable",
        "runs_webhook_urls",
    }:
        return tuple(str(v) for v in value)
    if key == "faults":
        return tuple(dict(v) for v in value)
    if key == "result_chunk_max_bytes" and int(value) < RESULT_CHUNK_MIN_BYTES:
        raise ValueError(f"result_chunk_max_bytes must be at least {RESULT_CHUNK_MIN_BYTES}")
    if key == "body_timeout_s":
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise ValueError("body_timeout_s must be a number of seconds above 0")
        return float(value)
    if key == "max_json_depth" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError("max_json_depth must be an integer of at least 1")
    return value


def load_settings(base: ServerSettings, settings_json: str | None = None) -> ServerSettings:
    """Layer the environment's JSON settings, then ``settings_json``, over ``base``."""
    result = base
    for source in (os.environ.get(SETTINGS_ENV), settings_json):
        if not source:
            continue
        text = source
        if not source.lstrip().startswith("{"):
            text = Path(source).read_text(encoding="utf-8")
        overrides = json.loads(text)
        if not isinstance(overrides, dict):
            raise ValueError("local server settings must be a JSON object")
        result = result.with_overrides(overrides)
    return result

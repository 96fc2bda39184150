"""Bodies of the generic operation envelope (the `submitOperation` REST operation).

`POST /{job_id}/operation` takes `{"operation_type", "sub_job_id"?, "sub_job_type"?, "payload"?}`.
This module builds those bodies (the payload shape of each operation type — forward, weight sync,
router replay, prefix-cache reset, live logs and events — with their client defaults) and sizes the
byte payloads of `forward` against the JSON ceiling. It sends nothing; `ct_core.data.plane` does.
"""

from __future__ import annotations

import base64
import json
import math
import os
from typing import Any

from ct_core.errors import ConfigError

# --- operation types of submitOperation -------------------------------------------------------------
OP_FORWARD = "forward"
OP_WEIGHT_SYNC = "weight-sync"
OP_BOOTSTRAP_ROUTER_REPLAY = "bootstrap-router-replay"
OP_ROUTER_REPLAY_DISCARD = "router-replay-discard"
OP_RESET_PREFIX_CACHE = "reset-prefix-cache"
OP_CANCEL_REQUEST = "cancel-request"
OP_TAIL_LOGS = "tail-logs"
#: Zone scheduling events: the service does not accept this type yet, so the SDK gates it.
OP_ZONE_EVENTS = "zmd-events"

#: Environment variable bounding the JSON body of one byte-payload `forward` POST.
ENV_FORWARD_MAX_JSON_BYTES = "CORTEX_TRAINING_FORWARD_OPERATION_MAX_JSON_BYTES"
DEFAULT_FORWARD_MAX_JSON_BYTES = 16 * 1024 * 1024
MIN_FORWARD_MAX_JSON_BYTES = 16 * 1024
OCTET_STREAM = "application/octet-stream"

WEIGHT_FORMATS = ("vllm", "hf", "lora")


def forward_max_json_bytes() -> int:
    """The JSON ceiling of one forward POST, from the environment (default 16 MiB, at least 16 KiB)."""
    raw = os.environ.get(ENV_FORWARD_MAX_JSON_BYTES, "").strip()
    if not raw:
        return DEFAULT_FORWARD_MAX_JSON_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(
            f"{ENV_FORWARD_MAX_JSON_BYTES} must be a whole number of bytes, got {raw!r}"
        ) from None
    if value < MIN_FORWARD_MAX_JSON_BYTES:
        raise ConfigError(
            f"{ENV_FORWARD_MAX_JSON_BYTES} must be at least {MIN_FORWARD_MAX_JSON_BYTES} bytes, got {value}"
        )
    return value


def present(*pairs: tuple[str, Any]) -> dict[str, Any]:
    """The `(key, value)` pairs whose value is not None, as a dict: a body's optional fields."""
    return {key: value for key, value in pairs if value is not None}


def envelope(
    operation_type: str,
    payload: Any = None,
    *,
    sub_job_id: str | None = None,
    sub_job_type: str | None = None,
) -> dict[str, Any]:
    """An operation body; routing hints and payload appear only when given. Bytes become payload_b64."""
    body: dict[str, Any] = {"operation_type": operation_type}
    body.update(present(("sub_job_id", sub_job_id), ("sub_job_type", sub_job_type)))
    if isinstance(payload, (bytes, bytearray, memoryview)):
        payload = bytes_payload(payload)
    if payload is not None:
        body["payload"] = payload
    return body


def bytes_payload(data: bytes | bytearray | memoryview) -> dict[str, str]:
    return {"payload_b64": base64.b64encode(data).decode("ascii"), "content_type": OCTET_STREAM}


def json_size(body: dict[str, Any]) -> int:
    """Bytes of `body` as the transport sends it (compact JSON)."""
    return len(json.dumps(body, separators=(",", ":")).encode("utf-8"))


def max_frame_bytes_for(ceiling: int, *, sub_job_id: str | None, sub_job_type: str | None) -> int:
    """The largest frame whose forward envelope (base64 inside JSON) stays within `ceiling` bytes."""
    empty = envelope(
        OP_FORWARD,
        {"payload_b64": "", "content_type": OCTET_STREAM},
        sub_job_id=sub_job_id,
        sub_job_type=sub_job_type,
    )
    room = ceiling - json_size(empty)
    # base64 turns every 3 bytes into 4 characters (the last group padded).
    return max(0, (room // 4) * 3)


def forward_fits(size: int, ceiling: int, *, sub_job_id: str | None, sub_job_type: str | None) -> bool:
    encoded = 4 * math.ceil(size / 3)
    empty = envelope(
        OP_FORWARD,
        {"payload_b64": "", "content_type": OCTET_STREAM},
        sub_job_id=sub_job_id,
        sub_job_type=sub_job_type,
    )
    return json_size(empty) + encoded <= ceiling


# --- payloads of the operation types --------------------------------------------------------------


def weight_sync_payload(
    source_sub_job_id: str,
    target_sub_job_ids: list[str] | tuple[str, ...] | str,
    *,
    weight_format: str | None,
    bucket_size: int | None,
) -> dict[str, Any]:
    if isinstance(target_sub_job_ids, str):
        targets = [target_sub_job_ids]
    else:
        targets = [str(target) for target in target_sub_job_ids]
    if not source_sub_job_id:
        raise ValueError("weight_sync needs a source_sub_job_id (the training sub-job)")
    if not targets:
        raise ValueError("weight_sync needs at least one target sub-job id")
    payload: dict[str, Any] = {"source_sub_job_id": source_sub_job_id, "target_sub_job_ids": targets}
    if weight_format is not None:
        fmt = str(weight_format).strip().lower()
        if fmt not in WEIGHT_FORMATS:
            raise ValueError(
                f"weight_format must be one of {', '.join(WEIGHT_FORMATS)}, got {weight_format!r}"
            )
        payload["weight_format"] = fmt
    if bucket_size is not None:
        if isinstance(bucket_size, bool) or not isinstance(bucket_size, int) or bucket_size <= 0:
            raise ValueError("bucket_size must be positive")
        payload["bucket_size"] = bucket_size
    return payload


def router_replay_discard_payload(sample_ids: Any, extra: dict[str, Any] | None) -> dict[str, Any]:
    """`extra` first; `sample_ids` only where extra does not name its own."""
    payload = dict(extra or {})
    payload.setdefault("sample_ids", list(sample_ids) if sample_ids is not None else [])
    return payload


def reset_prefix_cache_payload(
    *, drain: bool, timeout_s: float, retry_interval_s: float, extra: dict[str, Any] | None
) -> dict[str, Any]:
    """`extra` first; the three defaults fill only what extra leaves out."""
    payload = dict(extra or {})
    for key, default in (("drain", drain), ("timeout_s", timeout_s), ("retry_interval_s", retry_interval_s)):
        payload.setdefault(key, default)
    return payload


def tail_logs_payload(cursor: str | None, max_lines: int | None) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    if cursor:
        payload["cursor"] = cursor
    if max_lines is not None:
        if isinstance(max_lines, bool) or not isinstance(max_lines, int) or max_lines <= 0:
            raise ValueError("max_lines must be a positive integer")
        payload["max_lines"] = max_lines
    return payload


def tail_events_payload(cursor: str | None, max_events: int | None) -> dict[str, Any] | None:
    """`{cursor?, max_events?}` of a zmd-events operation; None when neither is set."""
    payload: dict[str, Any] = {}
    if cursor:
        payload["cursor"] = cursor
    if max_events is not None:
        if isinstance(max_events, bool) or not isinstance(max_events, int) or max_events <= 0:
            raise ValueError("max_events must be a positive integer")
        payload["max_events"] = max_events
    return payload or None

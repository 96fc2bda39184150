"""How the deployments and runs screens word their records; plain functions, no Textual.

A model deployment is shown as the SDK's metadata gives it (`list_model_deployments`): its id,
status, the reason the service gives for that status, and the base URL it answers on. A run of
the runs service (`client.runs`) is shown by its status, progress, best checkpoint and
early-stop facts, its metrics series and its structured log entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ct_cli.tui import format as fmt
from ct_cli.tui import metrics

MISSING = metrics.MISSING
#: Run statuses that still change (the screen keeps polling the selected run while in one).
ACTIVE_RUN_STATUSES = frozenset({"queued", "running"})


# --- model deployments --------------------------------------------------------------------------


def deployment_reason(record: Mapping[str, Any]) -> str:
    """The service's reason for the status: a failure's code and message, or the status reason."""
    failure = record.get("failure")
    if isinstance(failure, Mapping):
        parts = [str(failure.get(key)) for key in ("code", "message") if failure.get(key)]
        return ": ".join(parts) or MISSING
    parts = [str(record.get(key)) for key in ("status_reason", "status_details") if record.get(key)]
    return ": ".join(parts) or MISSING


def deployment_source(record: Mapping[str, Any]) -> str:
    source = record.get("source")
    if not isinstance(source, Mapping):
        return MISSING
    if source.get("type") == "checkpoint":
        return f"checkpoint {source.get('checkpoint_id')} of job {source.get('job_id')}"
    return f"base model {source.get('model') or record.get('model') or MISSING}"


DEPLOYMENT_COLUMNS = ("deployment", "status", "reason", "model", "gpus", "created", "base_url")
#: The table cuts a long reason to this many characters (the detail panel has all of it).
REASON_CELL = 60


def deployment_row(record: Mapping[str, Any]) -> tuple[str, ...]:
    """One table row: `deployment │ status │ reason │ model │ gpus │ created │ base_url`."""
    gpus = record.get("n_gpus")
    gpu_type = record.get("gpu_type")
    reason = deployment_reason(record)
    if len(reason) > REASON_CELL:
        reason = reason[: REASON_CELL - 1] + "…"
    return (
        str(record.get("deployment") or MISSING),
        str(record.get("status") or MISSING),
        reason,
        str(record.get("model") or MISSING),
        f"{gpus} x {gpu_type}" if gpus and gpu_type else str(gpus or MISSING),
        fmt.created_label(record.get("created_at")),
        str(record.get("base_url") or MISSING),
    )


def deployment_details(record: Mapping[str, Any]) -> list[str]:
    """The facts of one deployment for the detail panel."""
    lines = [
        f"{record.get('deployment')}  ·  {record.get('status')}",
        f"source: {deployment_source(record)}",
        f"replicas: {record.get('min_replicas', MISSING)}  ·  GPUs per replica: "
        f"{record.get('gpus_per_replica', MISSING)}  ·  GPU type: {record.get('gpu_type') or MISSING}  ·  "
        f"max_seq_len: {record.get('max_seq_len', MISSING)}",
        f"base_url: {record.get('base_url') or '(not serving)'}",
        f"reason: {deployment_reason(record)}",
        f"created {fmt.created_label(record.get('created_at'))}  ·  "
        f"updated {fmt.created_label(record.get('updated_at'))}",
    ]
    return lines


# --- runs --------------------------------------------------------------------------------------


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return metrics.metric_text(float(value))


def run_progress(run: Mapping[str, Any]) -> str:
    step, total = run.get("step"), run.get("total_steps")
    if isinstance(step, int) and isinstance(total, int) and total > 0:
        return f"{step}/{total}"
    return str(step) if isinstance(step, int) else MISSING


def run_row(run: Mapping[str, Any]) -> tuple[str, str]:
    """A run's list row as (status word, rest): `status │ run_id │ tier │ step │ best val_loss`."""
    status = str(run.get("status") or "?")
    rest = (
        f" │ {run.get('run_id') or '?'} │ {run.get('model_config_tier') or MISSING}"
        f" │ {run_progress(run):>9} │ best {_number(run.get('best_val_loss'))}"
    )
    return f"{status:<10}", rest


def run_status_style(status: Any) -> str:
    return "green" if str(status or "").lower() in ACTIVE_RUN_STATUSES else ""


def best_checkpoint(run: Mapping[str, Any]) -> Mapping[str, Any] | None:
    wanted = run.get("best_checkpoint_id")
    for checkpoint in run.get("checkpoints") or []:
        if isinstance(checkpoint, Mapping) and wanted and checkpoint.get("checkpoint_id") == wanted:
            return checkpoint
    return None


def early_stop_text(run: Mapping[str, Any]) -> str:
    stop = run.get("early_stop")
    raw = run.get("trainer")
    trainer: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if isinstance(stop, Mapping):
        return f"stopped early at step {stop.get('step', MISSING)}: {stop.get('reason') or 'no reason given'}"
    if trainer.get("early_stopping"):
        return (
            f"on (patience {trainer.get('patience', MISSING)}, "
            f"min_delta {trainer.get('min_delta', MISSING)}); not triggered"
        )
    return "off"


def run_facts(run: Mapping[str, Any]) -> list[str]:
    """The facts of one run for its detail panel."""
    lines = [
        f"{run.get('run_id')}  ·  {run.get('status')}  ·  tier {run.get('model_config_tier') or MISSING}"
        f"  ·  {run.get('model_name') or MISSING}  ·  created {fmt.created_label(run.get('created_at'))}",
        f"step {run_progress(run)}  ·  epoch {run.get('epoch', MISSING)}  ·  "
        f"GPU-seconds {_number(run.get('gpu_seconds'))}  ·  dataset {run.get('dataset_id') or MISSING}",
        f"best val_loss {_number(run.get('best_val_loss'))} at step {run.get('best_step', MISSING)}",
    ]
    best = best_checkpoint(run)
    if best is not None:
        lines.append(
            f"best checkpoint {best.get('checkpoint_id')} (step {best.get('step', MISSING)}, "
            f"val_loss {_number(best.get('val_loss'))}, job {best.get('job_id') or MISSING})"
        )
    elif run.get("best_checkpoint_id"):
        lines.append(f"best checkpoint {run.get('best_checkpoint_id')}")
    else:
        lines.append("best checkpoint: none yet")
    checkpoints = [c for c in run.get("checkpoints") or [] if isinstance(c, Mapping)]
    if checkpoints:
        reasons: dict[str, int] = {}
        for checkpoint in checkpoints:
            for reason in checkpoint.get("reasons") or []:
                reasons[str(reason)] = reasons.get(str(reason), 0) + 1
        counted = ", ".join(f"{name} {count}" for name, count in sorted(reasons.items()))
        lines.append(f"checkpoints: {len(checkpoints)}" + (f" ({counted})" if counted else ""))
    lines.append(f"early stop: {early_stop_text(run)}")
    if run.get("model_id"):
        lines.append(f"registered model: {run.get('model_id')}")
    if run.get("error"):
        lines.append(f"error: {run.get('error')}")
    return lines


def merge_series(
    known: dict[str, list[tuple[float, float]]], answer: Mapping[str, Any]
) -> dict[str, list[tuple[float, float]]]:
    """Add a metrics answer's `{"series": {name: [[step, value], ...]}}` to what is known (steps
    already known are replaced, so a repeated answer changes nothing)."""
    series = answer.get("series") if isinstance(answer, Mapping) else None
    merged = {name: list(points) for name, points in known.items()}
    for name, points in (series or {}).items() if isinstance(series, Mapping) else ():
        by_step = dict(merged.get(str(name), []))
        for point in points or []:
            if (
                isinstance(point, list | tuple)
                and len(point) == 2
                and all(isinstance(v, int | float) and not isinstance(v, bool) for v in point)
            ):
                by_step[float(point[0])] = float(point[1])
        merged[str(name)] = sorted(by_step.items())
    return merged


def log_line(entry: Mapping[str, Any]) -> str:
    """A structured run log entry: `ts SEVERITY [step N] event: message  key=value ...`."""
    parts = [str(entry.get("timestamp") or ""), f"{entry.get('severity') or ''!s:<7}"]
    if entry.get("step") is not None:
        parts.append(f"step {entry.get('step')}")
    if entry.get("event"):
        parts.append(f"{entry.get('event')}:")
    parts.append(str(entry.get("message") or ""))
    extras = [
        f"{key}={_number(entry[key]) if key != 'checkpoint_id' else entry[key]}"
        for key in ("train_loss", "val_loss", "lr", "tokens_per_s", "checkpoint_id")
        if entry.get(key) is not None
    ]
    if entry.get("early_stop"):
        extras.append(f"early_stop={entry.get('early_stop')}")
    line = " ".join(part for part in parts if part.strip())
    return line + ("  " + " ".join(extras) if extras else "")


def runs_of(answer: Any) -> list[dict[str, Any]]:
    """The runs of a list answer (`{"runs": [...]}` or a plain list)."""
    runs = answer.get("runs") if isinstance(answer, Mapping) else answer
    return [run for run in runs or [] if isinstance(run, dict)] if isinstance(runs, Iterable) else []

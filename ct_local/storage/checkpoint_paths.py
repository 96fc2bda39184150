"""Where checkpoints live in the state dir, and how a checkpoint id is looked up.

Torch-free, so the HTTP side can validate loads and create-time sources without loading a model.
A checkpoint's files sit in ``<state_dir>/jobs/<job_id>/checkpoints/<cp id>/<tag>/``: the path
carries ``/checkpoints/cp_<uuid>/`` exactly like the service's stage paths, so the SDK resolves
the durable id from a save result's ``stage_path`` the same way.
"""

from __future__ import annotations

from pathlib import Path

from ct_local.storage.store import CheckpointRow, Store


def checkpoint_folder(state_dir: Path, job_id: str, checkpoint_id: str, tag: str) -> Path:
    return state_dir / "jobs" / job_id / "checkpoints" / checkpoint_id / tag


def live_folder(state_dir: Path, job_id: str, sub_job_id: str) -> Path:
    """The training state a sub-job leaves behind at a graceful shutdown."""
    return state_dir / "jobs" / job_id / "live" / sub_job_id.replace(":", "_")


def resolve_checkpoint(store: Store, job_id: str, checkpoint_id: str) -> CheckpointRow | None:
    """A checkpoint of ``job_id`` by its ``cp_<uuid>`` id, or by a ``global_stepN`` tag (newest first)."""
    row = store.get_checkpoint(job_id, checkpoint_id)
    if row is not None:
        return row
    if checkpoint_id.startswith("global_step"):
        for candidate in reversed(store.checkpoints(job_id)):
            if candidate.path and Path(candidate.path).name == checkpoint_id:
                return candidate
    return None

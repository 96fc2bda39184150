"""Where a training sub-job's state snapshot lives, what it says it holds, and start-up cleaning.

After every request that changes a training sub-job's state (forward-backward, step, load) its
worker writes the whole state (weights, optimizer, gradients, step count) to one safetensors file,
``<state_dir>/jobs/<job_id>/live/<sub_job_id>/state.safetensors``, in one atomic rename. The
file's metadata carries a *marker*: which request the state is the result of, and that request's
encoded result, so a request that was applied but whose row still says ``running`` when the
server was killed is finished from it. A state larger than the snapshot limit is not written;
its marker alone is (``skipped``), so start-up knows why nothing can be restored.

Everything here is torch-free: the HTTP side reads markers at start-up without importing a model
(the marker sits in the safetensors header, which is plain JSON).
"""

from __future__ import annotations

import json
import logging
import shutil
import struct
from pathlib import Path
from typing import Any

from ct_local.storage.checkpoint_paths import live_folder

log = logging.getLogger(__name__)

#: Requests whose effect is a training sub-job's state; each one is followed by a state snapshot.
STATE_KINDS = ("forward-backward", "step", "load")
SNAPSHOT_FILE = "state.safetensors"
#: The safetensors metadata key holding the snapshot's JSON description.
METADATA_KEY = "ct_state"
#: A state above this many bytes is not snapshotted after each request (``--state-snapshot-max-bytes``):
#: the tiny model's is about 2 MB, a Hugging Face model's several GB.
STATE_SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024
#: The file a sampling sub-job keeps its synced weights in across a graceful restart
#: (written and read by ct_local.model.sampler).
SYNCED_WEIGHTS_FILE = "synced.safetensors"
# A safetensors header larger than this is not one of ours (ours hold a few KB of JSON).
_MAX_HEADER_BYTES = 64 * 1024 * 1024


def snapshot_path(state_dir: Path, job_id: str, sub_job_id: str) -> Path:
    return live_folder(state_dir, job_id, sub_job_id) / SNAPSHOT_FILE


def synced_weights_path(state_dir: Path, job_id: str, sub_job_id: str) -> Path:
    return live_folder(state_dir, job_id, sub_job_id) / SYNCED_WEIGHTS_FILE


def read_description(path: Path) -> dict[str, Any] | None:
    """The JSON description in a snapshot's header, or None when there is no readable snapshot."""
    try:
        with path.open("rb") as f:
            (size,) = struct.unpack("<Q", f.read(8))
            if size > _MAX_HEADER_BYTES:
                return None
            header = json.loads(f.read(size))
        value = json.loads(header.get("__metadata__", {}).get(METADATA_KEY, "null"))
    except (OSError, ValueError, struct.error, AttributeError):
        return None
    return value if isinstance(value, dict) else None


def remove_staging_leftovers(state_dir: Path) -> list[Path]:
    """Remove what interrupted writes left: checkpoint staging folders (``.<tag>.<hex>.partial``) and
    temporary files of atomic writes in the live folders. Only while no server uses the state dir.

    A checkpoint id folder left empty by it goes too (the save that made it never finished).
    """
    removed: list[Path] = []
    jobs = state_dir / "jobs"
    patterns = ("*/checkpoints/*/.*.partial", "*/live/.*.partial", "*/live/*/.*.tmp")
    for pattern in patterns:
        for leftover in sorted(jobs.glob(pattern)):
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
            removed.append(leftover)
            parent = leftover.parent
            if parent.parent.name == "checkpoints" and not any(parent.iterdir()):
                parent.rmdir()
    for path in removed:
        log.warning("removed %s, left by an interrupted write", path)
    return removed

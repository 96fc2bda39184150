"""One server per state dir: the lock is ct_core.fs.exclusive_lock, held for the server's life.

A second server process on a served dir is in test_crash_safety.py; here the lock itself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ct_local.runtime import LOCK_FILE, StateDirInUse, state_dir_lock


def test_a_held_state_dir_is_refused_at_once_naming_its_holder(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    with state_dir_lock(state_dir):
        assert (state_dir / LOCK_FILE).read_text().strip() == str(os.getpid())
        # Every taker opens its own descriptor, so a second taker in this process is refused too.
        with pytest.raises(StateDirInUse) as refused, state_dir_lock(state_dir):
            pass
        assert refused.value.holder == os.getpid()
        assert f"pid {os.getpid()}" in str(refused.value)
    # Released with the block: the next taker gets it.
    with state_dir_lock(state_dir):
        pass

"""One server per state dir: the lock is ct_core.fs.exclusive_lock, held for the server's life."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ct_local.runtime import LOCK_FILE, StateDirInUse, state_dir_lock

#: Bounds a hang only: a refused server exits before it binds or loads anything heavy.
REFUSAL_TIMEOUT_S = 120


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


def test_a_second_server_on_a_served_state_dir_exits_2(local_server_factory, tmp_path: Path) -> None:
    server = local_server_factory(state_dir=tmp_path / "served")
    assert server.process is not None
    second = subprocess.run(
        [sys.executable, "-m", "ct_local", "serve", "--port", "0", "--state-dir", str(server.state_dir)],
        capture_output=True,
        text=True,
        timeout=REFUSAL_TIMEOUT_S,
    )
    assert second.returncode == 2, second.stderr
    assert f"is in use by another ct local server (pid {server.process.pid})" in second.stderr
    # The first server still answers.
    with server.http() as client:
        assert client.get("/healthz").status_code == 200

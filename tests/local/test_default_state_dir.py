"""`ct local serve` without --state-dir keeps its state in the platform's data folder, and says where.

It once wrote `.ct-local/` into whatever folder it was started from. The server here runs as a real
subprocess with HOME and the XDG folders pointed at a temporary home (the `ct_home` fixture).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import platformdirs
from ct_testing import wait_until
from ct_testing.plugin import START_TIMEOUT_S, STOP_TIMEOUT_S


def _serve_without_state_dir(cwd: Path, ready: Path, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "ct_local", "serve", "--port", "0", "--ready-file", str(ready)]
    env = {k: v for k, v in os.environ.items() if k != "CT_LOCAL_SETTINGS"}
    with log.open("wb") as sink:
        return subprocess.Popen(command, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT, env=env)


def test_serve_without_a_state_dir_uses_the_platform_data_folder(ct_home: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    ready, log = tmp_path / "ready.json", tmp_path / "server.log"
    expected = platformdirs.user_data_path("ct", appauthor=False) / "local-server"
    assert expected.is_relative_to(ct_home)  # the fixture's home, never the developer's
    process = _serve_without_state_dir(cwd, ready, log)
    try:

        def started() -> bool:
            assert process.poll() is None, log.read_text(errors="replace")
            return ready.exists()

        wait_until(
            started, timeout=START_TIMEOUT_S, interval=0.05, message=lambda: log.read_text(errors="replace")
        )
        base_url = json.loads(ready.read_text())["base_url"]
        assert httpx.get(f"{base_url}/healthz", timeout=30).status_code == 200
        assert (expected / "server.lock").is_file()
        assert (expected / "state.sqlite3").is_file()
        assert list(cwd.iterdir()) == []  # nothing written where it was started
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    # The start-up line names the folder in full.
    assert f"(state dir {expected})" in log.read_text(errors="replace")

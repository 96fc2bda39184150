"""The real `ct tui` in a real terminal (tmux): pick the job, follow its log, see another client's work, quit.

tmux runs on a socket of its own (`-L`), so the test never touches a tmux server of the user.
Every step waits for text to appear on the captured screen, with generous limits.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ct_testing.plugin import CT_SCRIPT, run_ct

from tests.tui.conftest import BATCH, DATABASE, make_running_job

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
LIMIT_S = 90.0


class Terminal:
    def __init__(self, socket: str, session: str) -> None:
        self.socket = socket
        self.session = session

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False)
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.session, *keys)

    def wait_for(self, text: str, limit_s: float = LIMIT_S) -> str:
        deadline = time.monotonic() + limit_s
        while True:
            shown = self.screen()
            if text in shown:
                return shown
            if time.monotonic() > deadline:
                pytest.fail(f"{text!r} never appeared on the screen:\n{shown}")
            time.sleep(0.1)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(f"ct-tui-test-{os.getpid()}-{tmp_path.name}", "tui")
    yield term
    term.tmux("kill-server")


def test_ct_tui_in_a_real_terminal(
    terminal: Terminal, local_server: Any, ct_home: Path, tmp_path: Path
) -> None:
    job_id = make_running_job(local_server.base_url)
    exit_file = tmp_path / "exit-code"
    command = " ".join(
        shlex.quote(part)
        for part in [CT_SCRIPT, "--base-url", local_server.base_url, "--database", DATABASE, "tui"]
    )
    shell = f"{command}; echo $? > {shlex.quote(str(exit_file))}; sleep 60"
    environment = {"CT_PLUGINS": "", "HOME": str(ct_home), "XDG_CACHE_HOME": str(ct_home / ".cache")}
    exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in environment.items())
    launch = f"env -u COLUMNS -u LINES {exports} {shell}"
    terminal.tmux("new-session", "-d", "-s", terminal.session, "-x", "160", "-y", "45", launch)

    terminal.wait_for(job_id)
    terminal.wait_for("last refreshed")
    assert terminal.screen().index(job_id) < terminal.screen().index("training, sampling")
    terminal.keys("Enter")  # the newest job is the first row, where the cursor starts
    terminal.wait_for("— live —")
    terminal.wait_for(f"tailing {job_id}:training:0")

    result = run_ct(
        "--base-url", local_server.base_url, "--database", DATABASE, "--job", job_id, "fwd-bwd", "-",
        input=json.dumps(BATCH),
    )  # fmt: skip
    assert result.returncode == 0, result
    request_id = str(result.json["request_id"])
    terminal.wait_for(request_id)

    terminal.keys("q")
    deadline = time.monotonic() + LIMIT_S
    while not exit_file.exists() or not exit_file.read_text().strip():
        if time.monotonic() > deadline:
            pytest.fail(f"ct tui did not exit on q:\n{terminal.screen()}")
        time.sleep(0.1)
    assert exit_file.read_text().strip() == "0"

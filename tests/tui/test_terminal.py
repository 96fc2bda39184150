"""The real `ct tui` in a real terminal (tmux), against a real ct_local: the picker shows the job,
Enter opens its logs, a `ct fwd-bwd` from another process appears on screen, the job trains (the
fwd-bwd and a `ct step`), the Training tab (`3`) and the Resources tab (`2`) show its rows, and `q`
exits 0.

tmux runs on a socket of its own (`-L`), so the test never touches a tmux server of the user.
Every step waits for text to appear on the captured screen, with generous limits; nothing is timed.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ct_testing import wait_until
from ct_testing.plugin import CT_SCRIPT, run_ct

from tests.tui.conftest import BATCH, DATABASE, SCHEMA, make_running_job

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
#: Generous: the first request of a job loads the tiny model, and other tests may share the CPUs.
LIMIT_S = 90.0
#: How often the server stages each sub-job's metrics files (the default is a few seconds).
UPLOAD_INTERVAL_S = 0.5
#: How often a condition is looked at again while waiting for it (a poll, not a synchronisation).
POLL_S = 0.1


@pytest.fixture(scope="module")
def local_server(module_local_server_factory: Any) -> Any:
    """A server of this module's own that stages metrics files every half second, as the demo's does."""
    return module_local_server_factory(settings={"artifact_upload_interval_s": UPLOAD_INTERVAL_S})


def _wait(condition: Callable[[], Any], what: str, limit_s: float = LIMIT_S) -> Any:
    return wait_until(condition, timeout=limit_s, interval=POLL_S, message=f"timed out waiting for {what}")


class Terminal:
    def __init__(self, socket: str, session: str) -> None:
        self.socket = socket
        self.session = session

    def tmux(self, *args: str) -> str:
        # No configuration file (the system's could change the pane's size, shell or keys) and a
        # POSIX shell for the pane's command line, whatever the login shell is.
        command = ["tmux", "-f", os.devnull, "-L", self.socket, *args]
        environment = {**os.environ, "SHELL": "/bin/sh"}
        done = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.session, *keys)

    def wait_for(self, *texts: str, limit_s: float = LIMIT_S) -> str:
        """The screen once every one of `texts` is on it at the same time."""
        last = ""

        def everything_shown() -> str | None:
            nonlocal last
            last = self.screen()
            return last if all(text in last for text in texts) else None

        def missing() -> str:
            return f"{[text for text in texts if text not in last]!r} never appeared on the screen:\n{last}"

        return str(wait_until(everything_shown, timeout=limit_s, interval=POLL_S, message=missing))


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(f"ct-tui-test-{os.getpid()}-{tmp_path.name}", "tui")
    yield term
    term.tmux("kill-server")


def _staged_rows(client: Any, download: str, job_id: str, sub: str, folder: Path) -> list[dict[str, Any]]:
    """The rows of `sub` that the server has staged so far for one metrics download (none: [])."""
    from ct_core.errors import NoChunksError

    try:
        entries = getattr(client, download)(job_id, folder, sub_job_ids=[sub], resume=True)
    except NoChunksError:
        return []
    rows: list[dict[str, Any]] = []
    for entry in entries:
        text = Path(entry["saved_path"]).read_text(encoding="utf-8")
        rows += [json.loads(line) for line in text.splitlines() if line.strip()]
    return rows


def test_ct_tui_in_a_real_terminal(
    terminal: Terminal, local_server: Any, ct_home: Path, tmp_path: Path
) -> None:
    from ct_cli.tui import metrics
    from ct_core import CortexTrainingClient

    job_id = make_running_job(local_server.base_url)
    sub = f"{job_id}:training:0"
    exit_file = tmp_path / "exit-code"
    command = " ".join(
        shlex.quote(part)
        for part in [CT_SCRIPT, "--base-url", local_server.base_url, "--database", DATABASE, "tui"]
    )
    # The shell stays after `ct tui` ends so the pane (and the exit code written beside it) stays.
    shell = f"{command}; echo $? > {shlex.quote(str(exit_file))}; sleep 600"
    environment = {"CT_PLUGINS": "", "HOME": str(ct_home), "XDG_CACHE_HOME": str(ct_home / ".cache")}
    exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in environment.items())
    launch = f"env -u COLUMNS -u LINES {exports} {shell}"
    terminal.tmux("new-session", "-d", "-s", terminal.session, "-x", "160", "-y", "45", launch)

    # The picker shows the job: newest first, its sub-job types on its row.
    shown = terminal.wait_for(job_id, "last refreshed")
    row = next(line for line in shown.splitlines() if job_id in line)
    assert "running" in row and row.index(job_id) < row.index("training, sampling"), row

    # Enter opens its logs (the newest job is the first row, where the cursor starts).
    terminal.keys("Enter")
    terminal.wait_for(f"tailing {sub}", "— live —", "training #0", "sampling #0", "opt=AdamW/lr=0.001")

    # A `ct fwd-bwd` from another process shows up in the live log.
    globals_ = ["--base-url", local_server.base_url, "--database", DATABASE, "--job", job_id]
    fwd_bwd = run_ct(*globals_, "fwd-bwd", "-", input=json.dumps(BATCH))
    assert fwd_bwd.returncode == 0, fwd_bwd
    request_id = str(fwd_bwd.json["request_id"])
    loss = float(fwd_bwd.json["result"]["avg_loss"])
    terminal.wait_for(request_id)

    # The job trains one step; wait until the server has staged its training and host rows, so the
    # tabs' first download finds them.
    step = run_ct(*globals_, "step", "--lr", "0.001")
    assert step.returncode == 0, step
    with CortexTrainingClient(base_url=local_server.base_url, database=DATABASE, schema=SCHEMA) as sdk:
        _wait(
            lambda: any(
                row.get("op") == "step"
                for row in _staged_rows(sdk, "download_training_metrics", job_id, sub, tmp_path / "training")
            ),
            "the step's training row to be staged",
        )
        _wait(
            lambda: any(
                row.get("kind") == "system"
                for row in _staged_rows(sdk, "download_metrics", job_id, sub, tmp_path / "resources")
            ),
            "the host rows to be staged",
        )

    # 3: the Training tab shows the step, its loss (the fwd-bwd's) and learning rate, as charts and rows.
    terminal.keys("3")
    terminal.wait_for(
        "1 step(s)",
        f"loss (mean of the step's calls)  last {metrics.metric_text(loss)}",
        "learning rate  last 0.001",
        "grad_norm",
    )

    # 2: the Resources tab shows the server's own host rows for the training sub-job.
    terminal.keys("2")
    terminal.wait_for("host CPU utilisation", "worker 0", "CPUs", sub)

    # 1 goes back to the log, which is still live; q quits with exit code 0.
    terminal.keys("1")
    terminal.wait_for(request_id)
    terminal.keys("q")
    code = _wait(lambda: exit_file.exists() and exit_file.read_text().strip(), "ct tui to exit on q")
    assert code == "0", terminal.screen()


def test_ct_tui_takes_the_connection_options_after_tui_and_its_poll_interval(
    terminal: Terminal, local_server: Any, ct_home: Path, tmp_path: Path
) -> None:
    job_id = make_running_job(local_server.base_url)
    sub = f"{job_id}:training:0"
    exit_file = tmp_path / "exit-code"
    # The reference's form: every connection option after `tui`, with the job and the poll interval.
    argv = [CT_SCRIPT, "tui", job_id, "--base-url", local_server.base_url, "--database", DATABASE]
    argv += ["--schema", SCHEMA, "--poll-interval", "2.5", "--sub-job-id", sub]
    command = " ".join(shlex.quote(part) for part in argv)
    shell = f"{command} 2>&1; echo $? > {shlex.quote(str(exit_file))}; sleep 600"
    environment = {"CT_PLUGINS": "", "HOME": str(ct_home), "XDG_CACHE_HOME": str(ct_home / ".cache")}
    exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in environment.items())
    launch = f"env -u COLUMNS -u LINES {exports} {shell}"
    terminal.tmux("new-session", "-d", "-s", terminal.session, "-x", "160", "-y", "45", launch)

    # The job's log opens on the server those options name, and says how often it polls.
    terminal.wait_for(f"tailing {sub}", "— live —", "polls every 2.5 s")
    terminal.keys("q")
    code = _wait(lambda: exit_file.exists() and exit_file.read_text().strip(), "ct tui to exit on q")
    assert code == "0", terminal.screen()


def test_ct_tui_refuses_a_poll_interval_that_is_not_positive(ct_home: Path) -> None:
    result = run_ct("tui", "--base-url", "http://127.0.0.1:9", "--database", DATABASE, "--poll-interval", "0")
    assert result.returncode == 2, result
    assert "--poll-interval" in result.stderr and "Unknown option" not in result.stderr

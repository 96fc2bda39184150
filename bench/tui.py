"""`ct tui` benchmarks: launch to a drawn picker with 200 jobs, and a 2,000 lines/s live tail.

1. Launch: a ct_local server (its own state dir, in a process of its own) holds 200 jobs. Each
   run starts the real `ct --base-url URL --database DB tui` in a pseudo-terminal (160 x 45) and
   reads what it draws until the newest job's id is on screen: the time from the process start
   to that is the launch time (interpreter, imports, connection, the list request, the first
   frame). `q` then quits it. Target: at most 1 s (the median of `--repeat` runs). As an anchor
   for the machine's load, a fresh interpreter importing `textual.app` is timed between runs.
2. Tail: the job screen follows a log that grows by 2,000 lines a second (a stand-in client
   produces them, since no server here writes that fast), for `--seconds`. Meanwhile a key (`p`,
   pause and resume) is pressed every 250 ms, and the time until the screen shows its effect is
   the input lag. Textual runs headless (its whole layout and rendering, no terminal output).
   Targets: every produced line reaches the screen's buffer, and the input lag's 95th
   percentile is at most 100 ms.

    python bench/tui.py                  # both, 5 launches, 8 s of tail
    python bench/tui.py --only launch --repeat 9
    python bench/tui.py --json bench/results/tui.json

Timings are informative only; nothing here asserts on them.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import pty
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

import httpx
from verdict import report

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

JOBS = 200
DATABASE = "CT_TUI_BENCH"
SCHEMA = "PUBLIC"
COLUMNS, ROWS = 160, 45
LAUNCH_TARGET_S = 1.0
TAIL_RATE = 2000
LAG_TARGET_S = 0.100
KEY_EVERY_S = 0.25
LAUNCH_LIMIT_S = 30.0
#: Escape sequences (CSI, OSC, and single-character ones) stripped from the terminal output.
_ESCAPES = re.compile(
    rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b."
)


# --- 1. launch ----------------------------------------------------------------------------------


def start_server(root: Path) -> Any:
    from ct_testing.plugin import FAST_SETTINGS, LocalServer

    # Enough GPUs that no job waits for capacity: every job is listed as running, as on a busy account.
    capacity = {"H200": {"max_total_gpus": 4 * JOBS}}
    return LocalServer(state_dir=root / "state", settings={**FAST_SETTINGS, "capacity": capacity}).start()


def create_jobs(base_url: str, count: int) -> list[str]:
    prefix = f"{base_url}/api/v2/databases/{DATABASE}/schemas/{SCHEMA}/cortex-training"
    body = {
        "sub_job_configs": [
            {
                "job_type": "training",
                "model_name": "Qwen/Qwen3-0.6B",
                "training_config": {"n_gpus": 1, "max_seq_len": 128, "train_batch_size": 1},
            }
        ]
    }
    made = []
    with httpx.Client(timeout=60) as http:
        for _ in range(count):
            answer = http.post(prefix, json=body)
            answer.raise_for_status()
            made.append(str(answer.json()["job_id"]))
    return made


def launch_once(command: list[str], env: dict[str, str], needle: bytes) -> float:
    """Seconds from the process start until `needle` is on its screen; the process is then quit."""
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of the benchmark's size, then `ct tui`
        fcntl.ioctl(sys.stdout.fileno(), termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        os.execve(command[0], command, env)
    seen = b""
    elapsed: float | None = None
    deadline = start + LAUNCH_LIMIT_S
    try:
        while elapsed is None:
            if time.perf_counter() > deadline:
                raise SystemExit(f"the picker never showed the newest job within {LAUNCH_LIMIT_S} s")
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                raise SystemExit(f"`ct tui` ended before drawing the picker:\n{seen[-2000:]!r}") from None
            seen = (seen + chunk)[-(1 << 20) :]
            if needle in _ESCAPES.sub(b"", seen):
                elapsed = time.perf_counter() - start
        os.write(fd, b"q")
        quit_by = time.monotonic() + 10
        while time.monotonic() < quit_by:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    os.read(fd, 1 << 16)
                except OSError:
                    pass
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    finally:
        os.close(fd)
    return elapsed


def bench_launch(repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ct-bench-tui-") as folder:
        root = Path(folder)
        server = start_server(root)
        try:
            jobs = create_jobs(server.base_url, JOBS)
            home = root / "home"
            (home / ".cache").mkdir(parents=True)
            env = {
                key: value
                for key, value in os.environ.items()
                if not key.startswith(("CORTEX_TRAINING_", "SNOWFLAKE_", "CT_"))
            }
            env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), TERM="xterm-256color")
            env.update(COLUMNS=str(COLUMNS), LINES=str(ROWS))
            ct = str(Path(sys.executable).parent / "ct")
            command = [ct, "--base-url", server.base_url, "--database", DATABASE, "tui"]
            newest = jobs[-1].encode()
            launch_once(command, env, newest)  # warm-up: page cache, .pyc files
            times: list[float] = []
            floors: list[float] = []
            for _ in range(repeat):  # interleaved, so load on the machine hits both alike
                times.append(launch_once(command, env, newest))
                floors.append(import_textual_once(env))
        finally:
            server.stop()
    median = statistics.median(times)
    floor = statistics.median(floors)
    shown = " ".join(f"{t:.3f}" for t in times)
    print(f"tui launch to the picker with {JOBS} jobs: median {median:.3f} s over {repeat} runs ({shown})")
    report(
        f"tui launch to the picker with {JOBS} jobs (median {median:.3f} s)",
        median / LAUNCH_TARGET_S,
        f"the {LAUNCH_TARGET_S:g} s budget",
        1.0,
        at_most=True,
    )
    print(
        f"    anchor: `python -c 'import textual.app'` alone takes {floor:.3f} s (median) on this machine now"
    )
    return {
        "jobs": JOBS,
        "runs_s": times,
        "median_s": median,
        "target_s": LAUNCH_TARGET_S,
        "import_textual_median_s": floor,
    }


def import_textual_once(env: dict[str, str]) -> float:
    """The floor of any Textual program: a fresh interpreter importing `textual.app`."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import textual.app"], env=env, check=True)
    return time.perf_counter() - start


# --- 2. tail ------------------------------------------------------------------------------------

JOB = "bench-0000-4000-8000-000000000001"
SUB = f"{JOB}:training:0"


class Firehose:
    """The reads the job screen makes, with a live log that grows by `rate` lines a second."""

    database, schema = DATABASE, SCHEMA

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.started = time.monotonic()
        self.produced = 0
        self.keep_artifact_sessions = False

    def get_job(self, job_id: str) -> dict[str, Any]:
        sub = {"sub_job_id": SUB, "job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}
        return {"job_id": JOB, "status": "running", "sub_jobs": [sub]}

    def list_jobs(self, status: str | None = None) -> list[dict[str, Any]]:
        return [self.get_job(JOB)]

    def warm_artifact_session(self, job_id: str) -> None:
        return None

    def tail_logs(self, job_id: str, *, cursor: str | None = None, **_: Any) -> dict[str, Any]:
        due = int((time.monotonic() - self.started) * self.rate) if self.rate else self.produced
        first = self.produced
        self.produced = max(due, first)
        entries = [
            {
                "ts": f"2026-01-01T00:00:{(n // self.rate) % 60:02d}Z",
                "level": "INFO",
                "logger": "bench",
                "msg": f"line {n} of the firehose, with a tail of text to wrap on narrow panes "
                + "x" * (n % 40),
            }
            for n in range(first, self.produced)
        ]
        return {"entries": entries, "next_cursor": str(self.produced)}


async def _tail(seconds: float, rate: int) -> dict[str, Any]:
    from textual import events

    from ct_cli.tui.app import CtTui
    from ct_cli.tui.screens.logs import LogScreen
    from ct_core import plugins

    client = Firehose(rate)
    app = CtTui(client, JOB, poll_interval=1.0, plugin_manager=plugins.new_plugin_manager())
    lags: list[float] = []
    async with app.run_test(size=(COLUMNS, ROWS)) as pilot:
        screen = app.screen
        assert isinstance(screen, LogScreen)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            paused = screen.paused
            pressed = time.perf_counter()
            # As a terminal delivers a key: one event to the app, handled whenever the loop gets to it.
            app.post_message(events.Key("p", "p"))
            while screen.paused == paused:
                await asyncio.sleep(0.0005)
            lags.append(time.perf_counter() - pressed)
            await asyncio.sleep(KEY_EVERY_S)
        if screen.paused:
            await pilot.press("p")
        # Stop producing, let the last page arrive, then count what the screen holds.
        client.rate = 0
        produced = client.produced
        settle = time.monotonic() + 5
        while time.monotonic() < settle and sum(1 for line in screen.buffer if line.entry) < produced:
            await asyncio.sleep(0.05)
        received = sum(1 for line in screen.buffer if line.entry)
    lags.sort()
    p95 = lags[max(int(len(lags) * 0.95) - 1, 0)]
    return {
        "seconds": seconds,
        "rate": rate,
        "produced": produced,
        "received": received,
        "lag_median_s": statistics.median(lags),
        "lag_p95_s": p95,
        "lag_max_s": lags[-1],
        "keys": len(lags),
    }


def bench_tail(seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ct-bench-tui-home-") as home:
        os.environ["HOME"] = home
        os.environ["CORTEX_TRAINING_TUI_CACHE_DIR"] = str(Path(home) / "cache")
        result = asyncio.run(_tail(seconds, TAIL_RATE))
    print(
        f"tui tail at {TAIL_RATE} lines/s for {seconds:.0f} s: "
        f"{result['received']}/{result['produced']} lines on screen; "
        f"input lag median {result['lag_median_s'] * 1000:.1f} ms, "
        f"p95 {result['lag_p95_s'] * 1000:.1f} ms, max {result['lag_max_s'] * 1000:.1f} ms over "
        f"{result['keys']} keys"
    )
    # The screen keeps its newest 20,000 lines: that many (or all, when fewer came) must be there.
    report(
        "tui tail, lines on screen",
        result["received"] / max(1, min(result["produced"], 20_000)),
        "the lines produced (up to the 20,000 the screen keeps)",
        1.0,
        at_most=False,
    )
    report(
        "tui tail, input lag p95",
        result["lag_p95_s"] / LAG_TARGET_S,
        f"the {LAG_TARGET_S * 1000:.0f} ms budget",
        1.0,
        at_most=True,
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("launch", "tail"), help="run one of the two")
    parser.add_argument("--repeat", type=int, default=5, help="timed launches (after one warm-up)")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of tail")
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    if args.only in (None, "launch"):
        results["launch"] = bench_launch(args.repeat)
    if args.only in (None, "tail"):
        results["tail"] = bench_tail(args.seconds)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

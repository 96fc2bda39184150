"""Start-up time of the `ct` command line, against the reference `cortex-training` 0.0.3 CLI.

One run measures, in alternation (so load on the machine hits every command alike):

- `python -c pass`: the interpreter alone, the floor of any Python command line;
- `ct --help` and `ct list --help`;
- `ct get JOB` and `ct list`, real commands against a local server this script starts
  (`python -m ct_local serve`, its own state folder, one job created first);
- the floor of such a command: one interpreter importing only what a request from `ct` cannot do
  without (cyclopts and pluggy, and the standard library's http.client, ssl and json), nothing of
  ct. httpx, httpcore and requests are not part of it: a command whose requests succeed over plain
  HTTP never imports them (tests/cli/test_startup_imports.py pins that);
- `cortex-training --help` and `cortex-training list --help` of the reference 0.0.3, which imports
  torch on every start.

ct runs as a user's install would: every installed plugin loaded (`CT_PLUGINS` unset), bytecode
used (`PYTHONDONTWRITEBYTECODE` unset), an empty HOME, no connection variables. The reference
runs from .venv/reference (what `make venv` installs, with .venv's torch); without it, from a
virtual environment of its own that this script creates on first use (`--ref-venv`, with
`pip install torch==2.13.0 cortex-training==0.0.3`).

Each command runs `--repeat` times after one warm-up; the table shows the median and the best
wall time, and each median as a multiple of the reference's `--help`. The targets: `ct --help`
at most 0.07x the reference's `--help`, and `ct get JOB` and `ct list` at most 200 ms (median).
`--json FILE` also writes the numbers. Usage:

    .venv/bin/python bench/cli_startup.py [--repeat 9] [--json bench/results/cli_startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from verdict import report

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
REFERENCE_DIR = REPO / ".venv" / "reference"
DEFAULT_REF_VENV = REPO / "bench" / "results" / "ref-venv"
REFERENCE_REQUIREMENTS = ("torch==2.13.0", "cortex-training==0.0.3")
#: `ct --help` at most this fraction of the reference's `--help`.
HELP_TARGET_RATIO = 0.07
#: `ct get JOB` and `ct list` against the local server: at most this many seconds (median wall).
COMMAND_TARGET_S = 0.200
#: What a request from `ct` imports besides ct itself: the command-line parser, the plugin manager,
#: and the standard library's HTTP client, TLS and JSON modules its connections are built on.
THIRD_PARTY_FLOOR = "import cyclopts, pluggy, http.client, ssl, json"
#: Environment variables that would point ct at a developer's own connection or settings.
_ISOLATED_PREFIXES = ("CORTEX_TRAINING_", "SNOWFLAKE_", "CT_")
_JOB_BODY = {
    "sub_job_configs": [
        {
            "job_type": "training",
            "model_name": "Qwen/Qwen3-0.6B",
            "training_config": {
                "optimizer": {"name": "AdamW", "lr": 0.0001},
                "max_seq_len": 512,
                "train_batch_size": 2,
                "n_gpus": 1,
            },
        }
    ],
    "experiment_name": "cli-startup-bench",
    "hardware": "H200",
}


def reference_command(ref_venv: Path) -> tuple[list[str], dict[str, str]]:
    """The reference's launcher and the environment it needs (its folder on PYTHONPATH, or none)."""
    launcher = REFERENCE_DIR / "bin" / "cortex-training"
    if launcher.exists():
        return [sys.executable, str(launcher)], {"PYTHONPATH": str(REFERENCE_DIR)}
    script = ref_venv / "bin" / "cortex-training"
    if not script.exists():
        print(
            f"creating {ref_venv} with {' '.join(REFERENCE_REQUIREMENTS)} (first run only)", file=sys.stderr
        )
        subprocess.run([sys.executable, "-m", "venv", str(ref_venv)], check=True)
        pip = [str(ref_venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        # torch first and alone, so pip settles on the CPU build available here before anything else.
        subprocess.run([*pip, REFERENCE_REQUIREMENTS[0]], check=True)
        subprocess.run([*pip, *REFERENCE_REQUIREMENTS], check=True)
        if not script.exists():
            raise SystemExit(f"{script} is missing after installing the reference")
    return [str(script)], {}


def ct_environment(home: Path) -> dict[str, str]:
    """The environment of a user's `ct`: all plugins, bytecode on, an empty home, no connection."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(_ISOLATED_PREFIXES) and name != "PYTHONDONTWRITEBYTECODE"
    }
    for sub in (".config", ".local/share", ".cache", ".snowflake"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        SNOWFLAKE_HOME=str(home / ".snowflake"),
        COLUMNS="100",
    )
    return env


@contextmanager
def local_server(folder: Path, env: Mapping[str, str]) -> Iterator[str]:
    """Run `ct local serve` on a free loopback port with its state in `folder`; yields its base URL."""
    ready = folder / "ready.json"
    command = [sys.executable, "-m", "ct_local", "serve", "--port", "0"]
    command += ["--state-dir", str(folder / "state"), "--ready-file", str(ready)]
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=dict(env))
    try:
        deadline = time.monotonic() + 120
        while not ready.exists() or not ready.read_text().strip():
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the local server did not start; see {folder / 'server.log'}")
            time.sleep(0.05)
        yield str(json.loads(ready.read_text())["base_url"])
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def submit_job(ct: str, connection: list[str], folder: Path, env: Mapping[str, str]) -> str:
    """Create the job `ct get` reads, through ct itself; its id."""
    body = folder / "job.json"
    body.write_text(json.dumps(_JOB_BODY))
    done = subprocess.run(
        [ct, *connection, "submit", str(body)], capture_output=True, text=True, env=dict(env), check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"ct submit failed ({done.returncode}): {done.stderr[-500:]}")
    return str(json.loads(done.stdout)["job_id"])


def time_once(command: list[str], env: Mapping[str, str]) -> float:
    start = time.perf_counter()
    completed = subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(env), check=False
    )
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        raise SystemExit(
            f"{' '.join(command)} failed ({completed.returncode}): {completed.stderr.decode()[-500:]}"
        )
    return elapsed


def measure(
    commands: Mapping[str, tuple[list[str], Mapping[str, str]]], repeat: int
) -> dict[str, list[float]]:
    """Wall times of each command, `repeat` rounds after a warm-up, the commands interleaved."""
    for command, env in commands.values():  # warm-up: page cache, bytecode files
        time_once(command, env)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, (command, env) in commands.items():
            samples[name].append(time_once(command, env))
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="timed runs per command (after one warm-up)")
    parser.add_argument("--ref-venv", type=Path, default=DEFAULT_REF_VENV, help="venv of the reference 0.0.3")
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    args = parser.parse_args()

    ct = str(BIN / "ct")
    reference, reference_env = reference_command(args.ref_venv)
    with tempfile.TemporaryDirectory(prefix="ct-startup-") as scratch:
        folder = Path(scratch)
        env = ct_environment(folder / "home")
        ref_env = {**env, **reference_env}
        with local_server(folder, env) as base_url:
            connection = ["--base-url", base_url, "--database", "BENCH_DB"]
            job_id = submit_job(ct, connection, folder, env)
            commands: dict[str, tuple[list[str], Mapping[str, str]]] = {
                "python -c pass": ([sys.executable, "-c", "pass"], env),
                "ct --help": ([ct, "--help"], env),
                "ct list --help": ([ct, "list", "--help"], env),
                "ct get JOB": ([ct, *connection, "get", job_id], env),
                "ct list": ([ct, *connection, "list"], env),
                "imports a request cannot avoid": ([sys.executable, "-c", THIRD_PARTY_FLOOR], env),
                "cortex-training 0.0.3 --help": ([*reference, "--help"], ref_env),
                "cortex-training 0.0.3 list --help": ([*reference, "list", "--help"], ref_env),
            }
            samples = measure(commands, args.repeat)

    baseline = statistics.median(samples["cortex-training 0.0.3 --help"])
    rows = []
    print(f"{'command':36} {'median ms':>10} {'best ms':>9} {'x reference':>12}")
    for name, values in samples.items():
        median = statistics.median(values)
        rows.append(
            {
                "command": name,
                "median_s": median,
                "best_s": min(values),
                "ratio_to_reference": median / baseline,
            }
        )
        print(f"{name:36} {median * 1000:10.1f} {min(values) * 1000:9.1f} {median / baseline:12.3f}")
    by_name = {row["command"]: row for row in rows}
    print()
    report(
        "ct --help",
        by_name["ct --help"]["ratio_to_reference"],
        "the reference's --help",
        HELP_TARGET_RATIO,
        at_most=True,
    )
    for name in ("ct get JOB", "ct list"):
        median_s = by_name[name]["median_s"]
        report(
            f"{name} takes {median_s * 1000:.0f} ms",
            median_s / COMMAND_TARGET_S,
            f"the {COMMAND_TARGET_S * 1000:.0f} ms budget",
            1.0,
            at_most=True,
        )
    floor_ms = by_name["imports a request cannot avoid"]["median_s"] * 1000
    print(f"(of which the imports a request cannot avoid take {floor_ms:.0f} ms: {THIRD_PARTY_FLOOR})")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        targets = {"help_ratio": HELP_TARGET_RATIO, "command_s": COMMAND_TARGET_S}
        args.json.write_text(json.dumps({"repeat": args.repeat, "targets": targets, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

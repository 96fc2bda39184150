"""Start-up time of the `ct` command line against the reference `cortex-training` 0.0.3 CLI.

One run measures, side by side and in alternation (so load on the machine hits all alike):

- `python -c pass` (the interpreter alone, the floor),
- `ct --help` and `ct list --help` (this project, from the current interpreter's environment),
- `cortex-training --help` and `cortex-training list --help` of the reference 0.0.3, which
  imports torch on every start; it runs from its own virtual environment, created by this script
  on first use (`--ref-venv`, default bench/results/ref-venv) with
  `pip install torch==2.13.0 cortex-training==0.0.3`.

Each command runs `--repeat` times after one warm-up; the table shows the median and the best
wall time and the ratio of each median to the reference's `--help`. The design target is
ct <= 0.15x the reference. `--json FILE` also writes the numbers. Usage:

    .venv/bin/python bench/cli_startup.py [--repeat 9] [--json bench/results/cli_startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REF_VENV = REPO / "bench" / "results" / "ref-venv"
REFERENCE_REQUIREMENTS = ("torch==2.13.0", "cortex-training==0.0.3")
#: The design budget: ct's start-up at most this fraction of the reference's.
TARGET_RATIO = 0.15


def ensure_reference_venv(venv: Path) -> Path:
    """Create the reference's own venv when missing; return its `cortex-training` script."""
    script = venv / "bin" / "cortex-training"
    if script.exists():
        return script
    print(f"creating {venv} with {' '.join(REFERENCE_REQUIREMENTS)} (first run only)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    # torch first and alone, so pip settles on the CPU build available here before anything else.
    subprocess.run([*pip, REFERENCE_REQUIREMENTS[0]], check=True)
    subprocess.run([*pip, *REFERENCE_REQUIREMENTS], check=True)
    if not script.exists():
        raise SystemExit(f"{script} is missing after installing the reference")
    return script


def time_once(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    completed = subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False
    )
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        raise SystemExit(
            f"{' '.join(command)} failed ({completed.returncode}): {completed.stderr.decode()[-500:]}"
        )
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="timed runs per command (after one warm-up)")
    parser.add_argument("--ref-venv", type=Path, default=DEFAULT_REF_VENV, help="venv of the reference 0.0.3")
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    args = parser.parse_args()

    bin_dir = Path(sys.executable).parent
    ct = str(bin_dir / "ct")
    reference = str(ensure_reference_venv(args.ref_venv))
    commands: dict[str, list[str]] = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "ct --help": [ct, "--help"],
        "ct list --help": [ct, "list", "--help"],
        "cortex-training 0.0.3 --help": [reference, "--help"],
        "cortex-training 0.0.3 list --help": [reference, "list", "--help"],
    }
    env = {**os.environ, "COLUMNS": "100"}
    for command in commands.values():  # warm-up: page cache, .pyc files
        time_once(command, env)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():  # interleaved, so machine load hits every command alike
            samples[name].append(time_once(command, env))

    baseline = statistics.median(samples["cortex-training 0.0.3 --help"])
    rows = []
    print(f"{'command':36} {'median ms':>10} {'best ms':>9} {'x reference':>12}")
    for name, values in samples.items():
        median = statistics.median(values)
        row = {
            "command": name,
            "median_s": median,
            "best_s": min(values),
            "ratio_to_reference": median / baseline,
        }
        rows.append(row)
        print(f"{name:36} {median * 1000:10.1f} {min(values) * 1000:9.1f} {median / baseline:12.3f}")
    worst_ct = max(row["ratio_to_reference"] for row in rows if row["command"].startswith("ct "))
    verdict = "meets" if worst_ct <= TARGET_RATIO else "misses"
    print(f"\nct start-up is {worst_ct:.3f}x the reference's: {verdict} the {TARGET_RATIO}x target")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"repeat": args.repeat, "target_ratio": TARGET_RATIO, "rows": rows}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

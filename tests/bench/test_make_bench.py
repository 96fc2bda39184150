"""`make bench` runs every benchmark in bench/, and each prints its verdicts through bench/verdict.py."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def _benchmarks() -> list[Path]:
    """The scripts of bench/ (a helper module has no `__main__` block)."""
    return sorted(p for p in BENCH.glob("*.py") if '__name__ == "__main__"' in p.read_text(encoding="utf-8"))


def _verdict() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ct_bench_verdict", BENCH / "verdict.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_make_bench_runs_every_benchmark() -> None:
    # -n prints the recipe without running it; -o keeps the virtualenv's rules out of it.
    dry = subprocess.run(
        [
            "make",
            "-n",
            "-s",
            "bench",
            "-o",
            "venv",
            "-o",
            ".venv/.ct-installed",
            "-o",
            ".venv/reference/.ct-installed",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    ran = set(re.findall(r"bench/(\w+\.py)", dry))
    expected = {path.name for path in _benchmarks()}
    assert {"runs.py", "tui.py", "wire.py"} <= expected
    assert expected <= ran, f"make bench leaves out {sorted(expected - ran)}"


def test_every_benchmark_prints_its_verdicts_through_the_common_helper() -> None:
    missing = [p.name for p in _benchmarks() if not re.search(r"^from verdict import", p.read_text(), re.M)]
    assert not missing, f"these benchmarks print no verdict line through bench/verdict.py: {missing}"


def test_a_verdict_line_says_ratio_anchor_target_and_outcome() -> None:
    verdict = _verdict()
    assert verdict.verdict_line("ct --help", 0.0612, "the reference's --help", 0.07, at_most=True) == (
        "verdict: ct --help: 0.061x the reference's --help (target <= 0.07x): met"
    )
    assert verdict.verdict_line("upload", 3.5, "the reference's speed", 4, at_most=False) == (
        "verdict: upload: 3.500x the reference's speed (target >= 4x): NOT met"
    )
    assert verdict.verdict_line("loop", 1.6, "sequential", 1.6, at_most=False).endswith(": met")
    assert verdict.verdict_line("pair", 1.61, "bare", 1.6, at_most=True).endswith(": NOT met")

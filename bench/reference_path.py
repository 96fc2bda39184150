"""Where the benchmarks find the reference client cortex-training 0.0.3 to compare against.

`make venv` installs the reference apart from .venv, in .venv/reference (pip's `--target`, without
its requirements, which the dev extra brings into .venv): it declares `ct` and `cortex-training`
launchers of its own, which must not replace ct's in .venv/bin. A benchmark calls
`reference_on_path()` before it imports `cortex_training`. (`bench/cli_startup.py` times the
reference's command line instead, in a full venv of its own.)
"""

from __future__ import annotations

import sys
from pathlib import Path

REFERENCE_DIR = Path(__file__).resolve().parents[1] / ".venv" / "reference"


def reference_on_path() -> None:
    """Make `import cortex_training` find the reference (appended: it never shadows .venv's packages)."""
    folder = str(REFERENCE_DIR)
    if REFERENCE_DIR.is_dir() and folder not in sys.path:
        sys.path.append(folder)

"""Check the model catalog: `python model-catalog/validate_catalog.py [CATALOG_DIR]`.

A thin wrapper over `ct_core.catalog.validate_catalog` (the same check as `ct catalog validate`).
Prints one line per problem, `<file>: <field>: <message>`, and exits 1 when there is any; prints a
one-line summary and exits 0 otherwise. Without an argument it checks the folder this script sits in.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

try:
    from ct_core.catalog import load_catalog, validate_catalog
except ImportError:  # a bare checkout without `pip install -e .`: use the sources next to us
    sys.path.insert(0, str(HERE.parent))
    from ct_core.catalog import load_catalog, validate_catalog


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    root = Path(args[0]) if args else HERE
    problems = validate_catalog(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"model catalog invalid: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    catalog = load_catalog(root)
    jobs = sum(len(model.jobs) for model in catalog)
    print(f"model catalog valid: {len(catalog)} models, {jobs} job files")
    return 0


if __name__ == "__main__":
    sys.exit(main())

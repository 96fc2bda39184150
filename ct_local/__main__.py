"""``python -m ct_local serve ...``: the local server without the ``ct`` front end."""

from __future__ import annotations

import sys

from ct_local.cli import app


def main() -> None:
    result = app()
    sys.exit(result if isinstance(result, int) else 0)


if __name__ == "__main__":
    main()

"""`python -m ct_cli`: the same command line as the `ct` console script."""

from __future__ import annotations

from ct_cli.main import main

raise SystemExit(main())

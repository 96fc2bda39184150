"""`python -m ct`: the same command line as the `ct` console script (and `python -m ct_cli`)."""

from __future__ import annotations

from ct_cli.main import main

raise SystemExit(main())

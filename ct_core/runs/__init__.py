"""The SDK side of the managed runs service: `client.datasets` and `client.runs`.

- `datasets.DatasetsAPI`: upload a JSONL file as a dataset build, read it, wait until it settles;
- `runs.RunsAPI`: start a run from a spec, list and read runs, page or follow their metrics and
  logs, wait for the end, cancel, read the registered model;
- `polling`: the retry rule of these calls and the waits on the client's poll schedule.

Every call is one generated operation of the `runs` tag of openapi/ (`ct_core.operations.runs`),
called with the client, so URLs, auth, retries and error mapping are the client's own. A refusal
of the service arrives as the matching `APIError`: `InvalidArgumentError` and
`FailedPreconditionError` (with `.field` when the service named the input), `NotFoundError`, ...
(ct_core.errors). docs/runs.md describes it all.
"""

from __future__ import annotations

from ct_core.runs.datasets import DatasetsAPI
from ct_core.runs.polling import TERMINAL_RUN_STATUSES
from ct_core.runs.runs import RunsAPI, check_idempotency_key, load_run_spec

__all__ = ["TERMINAL_RUN_STATUSES", "DatasetsAPI", "RunsAPI", "check_idempotency_key", "load_run_spec"]

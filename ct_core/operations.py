"""Every REST operation of the spec as a typed function: the public surface to call them by.

`make regen` writes one thin function per operation of openapi/cortex-training.yaml into the
generated package `ct_api` (only ct_core imports it). This module hands its tag modules on under
their own names, so the facade, its parts and the plugins all call an operation the same way::

    from ct_core.operations import control_plane

    job = control_plane.get_job(client, job_id=job_id)

The first argument is anything with ct's request interface: a `CortexTrainingClient` (its
`request` / `stream`, under the client's policy) or a `ct_core.http.transport.Transport`.
Keyword arguments are the operation's path and query parameters, its `body=` (or `content=`), and
per-call policy (`predicate=`, `timeout=`, `max_retries=`, `headers=`, `trace=`); the retry rule
the spec names (`x-ct-retry`) applies unless a `predicate` replaces it. Answers are the decoded
JSON, typed as the spec's TypedDicts (`ct_core.operations.models`, for type checkers only). See
docs/regenerating-the-client.md.

Nothing outside `generated/` names an operation's method, path or parameters by hand
(tests/test_architecture.py checks that no module sends an operation by its id).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ct_api.api import account, control_plane, data_plane, inference, local, runs

if TYPE_CHECKING:
    from ct_api import models as models


class AnswerRecorder:
    """A request interface in front of another that keeps the last answer it passed on.

    For a caller that needs more of an answer than its decoded body, such as a header::

        recorder = AnswerRecorder(client)
        job = control_plane.get_job(recorder, job_id=job_id)
        served_at = recorder.answer.header("date")
    """

    __slots__ = ("_inner", "answer")

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        #: The last 2xx answer of `request` (None before the first).
        self.answer: Any = None

    def request(self, operation: str, /, **options: Any) -> Any:
        self.answer = self._inner.request(operation, **options)
        return self.answer

    def stream(self, operation: str, /, **options: Any) -> Any:
        return self._inner.stream(operation, **options)


def __getattr__(name: str) -> Any:
    # The TypedDicts are for type checkers: imported only when something asks for them.
    if name == "models":
        return importlib.import_module("ct_api.models")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["AnswerRecorder", "account", "control_plane", "data_plane", "inference", "local", "models", "runs"]

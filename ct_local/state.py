"""The state one local-server app owns: its settings, store, lifecycle loop, faults and data plane.

:func:`ct_local.app.create_app` builds one :class:`ServerState` per app and hangs it on
``app.state.ct``; request handlers reach it through :func:`ct_local.http.context.server_state`.
What a server changes while it serves lives here or in the data plane it holds, not in module
globals, so two apps in one process (as in the tests) do not share jobs, faults, stream events,
cancel flags, synced weights, router-replay pairs, training-row counters, request signals or
statement answers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ct_local.control.lifecycle import Lifecycle
from ct_local.dataplane.seam import DataPlane
from ct_local.http.faults import FaultSet
from ct_local.http.statements import StatementResults
from ct_local.settings import STATEMENT_RESULTS_KEPT, ServerSettings
from ct_local.storage.requests import RequestSignals
from ct_local.storage.store import Store
from ct_local.storage.training_rows import TrainingRows


@dataclass
class ServerState:
    """What the handlers of one app share; ``data_plane`` is set right after construction."""

    settings: ServerSettings
    store: Store
    lifecycle: Lifecycle
    faults: FaultSet
    data_plane: DataPlane = field(init=False)
    #: Services plugins added through the ``ct_local_services`` hook (see ct_local.app).
    services: list[Any] = field(default_factory=list)
    started_at: float = field(default_factory=time.time)
    #: Per training sub-job, the counters of its training rows (ct_local.storage.training_rows).
    training_rows: TrainingRows = field(default_factory=TrainingRows)
    #: Which data-plane requests this process accepted and has not finished: services inside the
    #: server wait on it instead of polling over loopback (ct_local.app.start_services).
    request_signals: RequestSignals = field(default_factory=RequestSignals)
    #: The answers of recent statements, for getStatementStatus (ct_local.http.statements).
    statements: StatementResults = field(default_factory=lambda: StatementResults(STATEMENT_RESULTS_KEPT))

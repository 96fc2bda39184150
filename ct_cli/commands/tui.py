"""`ct tui [JOB_ID] [--sub-job-id ID]`: the read-only terminal interface (needs the `tui` extra).

The connection is resolved and the client built before the interface starts, so a missing or
incomplete connection is reported exactly as by every other command. Textual is optional: without
it the command says how to install it and exits 2. The interface itself lives in `ct_cli.tui`, which
is imported only here, once Textual is known to be there.
"""

from __future__ import annotations

import io
from typing import Annotated

from cyclopts import Parameter

from ct_cli import context, output

MISSING_TEXTUAL = "`ct tui` requires the optional 'textual' dependency: pip install 'ct[tui]'"


def _textual_installed() -> bool:
    try:
        import textual  # noqa: F401
    except ImportError:
        return False
    return True


def tui(
    job_id: Annotated[
        str | None, Parameter(help="Open this job's logs at once (default: the job picker).")
    ] = None,
    /,
    *,
    sub_job: Annotated[
        str | None,
        Parameter(
            name=["--sub-job-id", "--sub-job"],
            help="Show only this sub-job's log, e.g. JOB:training:0 (default: every sub-job).",
        ),
    ] = None,
) -> int:
    """Browse jobs and follow their logs in the terminal; strictly read-only.

    Without JOB_ID it opens the job picker (newest first; / filters, @DATABASE or DATABASE.SCHEMA
    searches the whole account, r refreshes, Enter opens a job, d model deployments, R runs). A
    job's screen has three tabs: 1 its logs (the live tail of each sub-job, the saved console once
    the job has ended), 2 Resources (GPU and host use), 3 Training (loss, learning rate and
    grad-norm over steps). Log keys: b or Esc back, / filter, L minimum level, p pause, s save,
    y copy, r refresh, q quit. Needs the optional dependency: pip install 'ct[tui]'.
    """
    if not _textual_installed():
        output.error(MISSING_TEXTUAL)
        return output.EXIT_USAGE
    job_id = job_id or context.current().options.job
    client = context.client()

    from ct_cli.tui.app import CtTui

    app = CtTui(client, job_id, sub_job_id=sub_job)
    # The SDK's warnings (a download still uploading, say) would print over the screen: they are
    # kept while it runs and go to the error log afterwards.
    notices = io.StringIO()
    with output.using(output.Streams(stdout=notices, stderr=notices)):
        app.run()
    if notices.getvalue().strip():
        app.record_error("notices while ct tui ran", notices.getvalue())
    return output.EXIT_OK

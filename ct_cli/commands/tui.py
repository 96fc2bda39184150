"""`ct tui [JOB_ID] [--sub-job-id ID]`: the read-only terminal interface (needs the `tui` extra).

The connection options may come before `tui`, like every command's, or after it, as the reference's
`cortex-training tui --base-url URL --database DB` takes them; one given after `tui` wins over the same
one given before. `--poll-interval` is then the least time between two log polls of one sub-job.

The connection is resolved and the client built before the interface starts, so a missing or
incomplete connection is reported exactly as by every other command. Textual is optional: without
it the command says how to install it and exits 2. The interface itself lives in `ct_cli.tui`, which
is imported only here, once Textual is known to be there.
"""

from __future__ import annotations

import dataclasses
import io
import math
from typing import Annotated, Any

from cyclopts import Group, Parameter

from ct_cli import context, output
from ct_cli.cmdline import GLOBAL_OPTION_HELP, UsageError

MISSING_TEXTUAL = "`ct tui` requires the optional 'textual' dependency: pip install 'ct[tui]'"


def _textual_installed() -> bool:
    try:
        import textual  # noqa: F401
    except ImportError:
        return False
    return True


#: Where `ct tui --help` lists the connection options it also takes after the command.
_AFTER = Group("Connection (before or after tui)", sort_key=2)
_HELP = GLOBAL_OPTION_HELP


def _use_options_after_tui(given: dict[str, Any]) -> None:
    """Lay the options given after `tui` over those given before it (for this invocation)."""
    options = context.current().options
    changes = {name: value for name, value in given.items() if value is not None and value is not False}
    if changes:
        context.current().options = dataclasses.replace(options, **changes)


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
    config: Annotated[str | None, Parameter(group=_AFTER, help=_HELP["config"])] = None,
    connection: Annotated[str | None, Parameter(group=_AFTER, help=_HELP["connection"])] = None,
    base_url: Annotated[str | None, Parameter(group=_AFTER, help=_HELP["base_url"])] = None,
    host: Annotated[str | None, Parameter(group=_AFTER, help=_HELP["host"])] = None,
    pat: Annotated[str | None, Parameter(group=_AFTER, help=_HELP["pat"])] = None,
    database: Annotated[str | None, Parameter(group=_AFTER, help=_HELP["database"])] = None,
    schema: Annotated[str | None, Parameter(group=_AFTER, help=_HELP["schema"])] = None,
    endpoint: Annotated[str | None, Parameter(group=_AFTER, help=_HELP["endpoint"])] = None,
    no_verify_ssl: Annotated[bool, Parameter(group=_AFTER, negative=(), help=_HELP["no_verify_ssl"])] = False,
    poll_interval: Annotated[
        float | None,
        Parameter(group=_AFTER, help="Least seconds between two log polls of a sub-job (default 1)."),
    ] = None,
    poll_timeout: Annotated[float | None, Parameter(group=_AFTER, help=_HELP["poll_timeout"])] = None,
) -> int:
    """Browse jobs and follow their logs in the terminal; strictly read-only.

    Without JOB_ID it opens the job picker (newest first; / filters, @DATABASE or DATABASE.SCHEMA
    searches the whole account, r refreshes, Enter opens a job, d model deployments, R runs). A
    job's screen has three tabs: 1 its logs (the live tail of each sub-job, the saved console once
    the job has ended), 2 Resources (GPU and host use), 3 Training (loss, learning rate and
    grad-norm over steps). Log keys: b or Esc back, / filter, L minimum level, p pause, s save,
    y copy, r refresh, q quit. Needs the optional dependency: pip install 'ct[tui]'.

    The connection options may also follow `tui` (they win over the same ones before it).
    """
    _use_options_after_tui(
        {
            "config": config,
            "connection": connection,
            "base_url": base_url,
            "host": host,
            "pat": pat,
            "database": database,
            "schema": schema,
            "endpoint": endpoint,
            "no_verify_ssl": no_verify_ssl,
            "poll_interval": poll_interval,
            "poll_timeout": poll_timeout,
        }
    )
    interval = context.current().options.poll_interval
    if interval is not None and not (math.isfinite(interval) and interval > 0):
        raise UsageError(f"--poll-interval must be a positive number of seconds, got {interval:g}")
    if not _textual_installed():
        output.error(MISSING_TEXTUAL)
        return output.EXIT_USAGE
    job_id = job_id or context.current().options.job
    client = context.client()

    from ct_cli.tui import tail
    from ct_cli.tui.app import CtTui

    app = CtTui(client, job_id, sub_job_id=sub_job, poll_interval=interval or tail.DEFAULT_POLL_INTERVAL_S)
    # The SDK's warnings (a download still uploading, say) would print over the screen: they are
    # kept while it runs and go to the error log afterwards.
    notices = io.StringIO()
    with output.using(output.Streams(stdout=notices, stderr=notices)):
        app.run()
    if notices.getvalue().strip():
        app.record_error("notices while ct tui ran", notices.getvalue())
    return output.EXIT_OK

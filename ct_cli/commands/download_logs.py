"""`ct download-log JOB_ID ...` and `ct download-metrics JOB_ID ...`: logs, console and metrics files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from cyclopts import Parameter

from ct_cli import context, output

OutputDir = Annotated[
    Path | None,
    Parameter(help="Folder for <sub_job_id>/<file>; created when missing (default: the current folder)."),
]
Resume = Annotated[
    bool, Parameter(negative=(), help="Keep what an earlier download saved and fetch only what is new.")
]
SubJobs = Annotated[
    list[str] | None,
    Parameter(
        name=["--sub-job-id", "--sub-job"],
        help="Only this sub-job, e.g. JOB:training:0 (repeat for several).",
        consume_multiple=False,
    ),
]
Strict = Annotated[
    bool,
    Parameter(
        negative=(),
        help="Fail on the first damaged or vanished chunk instead of skipping it (chunked files only).",
    ),
]


class StatusLine:
    """Shows the SDK's progress lines on stderr: one updating line on a terminal, otherwise only the
    final line of each sub-job (so a log file is not flooded with bar redraws)."""

    def __init__(self) -> None:
        self._stream = output.current().stderr
        self._tty = bool(getattr(self._stream, "isatty", lambda: False)())
        self._last = ""

    def __call__(self, text: str) -> None:
        if text == "\n" or text.endswith("\n"):
            line = text.rstrip("\n") or self._last
            if self._tty:
                self._stream.write("\r\x1b[2K" + line + "\n")
            elif line:
                self._stream.write(line + "\n")
            self._last = ""
        else:
            self._last = text
            if self._tty:
                self._stream.write("\r\x1b[2K" + text)
        self._stream.flush()


def _folder(output_dir: Path | None) -> Path:
    return (output_dir or Path.cwd()).expanduser()


def _in_cli_words(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The SDK's entries with their notices worded for a `ct` user (`--resume`, not `resume=True`)."""
    for entry in entries:
        notices = entry.get("warnings") if isinstance(entry, dict) else None
        if isinstance(notices, list):
            entry["warnings"] = [output.cli_words(n) if isinstance(n, str) else n for n in notices]
    return entries


def download_log(
    job_id: Annotated[str, Parameter(help="The job whose logs to download.")],
    /,
    *,
    log_type: Annotated[
        Literal["execution", "stdout"],
        Parameter(help="execution: the structured execution logs; stdout: the saved console, rebuilt."),
    ] = "execution",
    output_dir: OutputDir = None,
    resume: Resume = False,
    sub_job: SubJobs = None,
    strict: Strict = False,
) -> None:
    """Download a job's logs into <output-dir>/<sub_job_id>/.

    Prints {"job_id", "logs": [...]} with one entry per saved file; progress goes to stderr.
    """
    client = context.client()
    status = StatusLine()
    if log_type == "stdout":
        logs = client.download_stdout_logs(
            job_id, _folder(output_dir), resume=resume, sub_job_ids=sub_job, progress=status, strict=strict
        )
    else:
        logs = client.download_execution_logs(
            job_id, _folder(output_dir), resume=resume, sub_job_ids=sub_job, progress=status
        )
    output.emit({"job_id": job_id, "logs": _in_cli_words(logs)})


def download_metrics(
    job_id: Annotated[str, Parameter(help="The job whose metrics to download.")],
    /,
    *,
    output_dir: OutputDir = None,
    resume: Resume = False,
    sub_job: SubJobs = None,
    strict: Strict = False,
) -> None:
    """Download a job's GPU/system metrics (gpu.jsonl) and training metrics (training.jsonl).

    Prints {"job_id", "metrics": [...], "training_metrics": [...]}; progress goes to stderr.
    """
    client = context.client()
    status = StatusLine()
    folder = _folder(output_dir)
    options = {"resume": resume, "sub_job_ids": sub_job, "progress": status, "strict": strict}
    metrics = client.download_metrics(job_id, folder, **options)
    training = client.download_training_metrics(job_id, folder, **options)
    output.emit(
        {"job_id": job_id, "metrics": _in_cli_words(metrics), "training_metrics": _in_cli_words(training)}
    )

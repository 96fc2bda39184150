"""`client.runs`: start, read, follow, wait for, cancel and resume managed training runs, and
register and read the models they leave (docs/runs.md).

A run is started from a run spec (a mapping, or a JSON file): `{dataset_id, model_config_tier,
labels, seed, overrides, trainer}`. The service checks it and answers the run; an identical spec
while that run is queued or running answers the same run. Each `start` call sends an idempotency
key of its own (the `Idempotency-Key` header) with every attempt, and the service answers a key it
has seen with that key's run whatever became of it, so retrying a start whose answer was lost
never starts a second run. Metrics and logs are read in pages behind a cursor; `follow_metrics`
and `follow_logs` keep reading until the run has ended and nothing new is left.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ct_core import errors
from ct_core.constants import IDEMPOTENCY_KEY_MAX_CHARS
from ct_core.errors import ValidationError
from ct_core.operations import runs as _runs
from ct_core.runs.polling import (
    RUNS_RULE,
    TERMINAL_RUN_STATUSES,
    answer_object,
    follow_interval,
    upload_rule,
    wait_until,
)

#: The statuses `list` accepts as a filter.
RUN_STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")
#: `after_step` that asks for every point (the service's default).
ALL_STEPS = -1
#: What an idempotency key may hold: visible ASCII, no spaces (see IDEMPOTENCY_KEY_MAX_CHARS).
_IDEMPOTENCY_KEY = re.compile(rf"[\x21-\x7e]{{1,{IDEMPOTENCY_KEY_MAX_CHARS}}}")


def check_idempotency_key(key: Any, name: str = "idempotency_key") -> str:
    """`key` when it is a usable idempotency key (1 to IDEMPOTENCY_KEY_MAX_CHARS visible ASCII
    characters); otherwise `ValidationError` naming `name`."""
    if not isinstance(key, str) or not _IDEMPOTENCY_KEY.fullmatch(key):
        raise ValidationError(
            f"{name} must be 1 to {IDEMPOTENCY_KEY_MAX_CHARS} visible ASCII characters without spaces, "
            f"got {key!r}"
        )
    return key


def load_run_spec(spec: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, Any]:
    """A run spec as a dict: given as a mapping, or read from a JSON file.

    A file that cannot be read, is not JSON or holds something other than an object is refused
    with its name and, for JSON, the line and column of the problem. What the spec says is
    checked by the service, which names the field it refuses.
    """
    if isinstance(spec, Mapping):
        return dict(spec)
    if not isinstance(spec, str | os.PathLike):
        raise ValidationError(f"a run spec is a mapping or a JSON file path, got {type(spec).__name__}")
    path = Path(spec).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValidationError(f"run spec file {path} does not exist") from None
    except IsADirectoryError:
        raise ValidationError(f"run spec {path} is a folder; pass a JSON file") from None
    except UnicodeDecodeError:
        raise ValidationError(f"run spec file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise ValidationError(f"cannot read run spec file {path}: {exc.strerror or exc}") from None
    return parse_run_spec(text, str(path))


def parse_run_spec(text: str, where: str) -> dict[str, Any]:
    """A run spec from JSON text; `where` names its origin (a file, stdin) in the errors."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"run spec {where} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    if not isinstance(value, dict):
        raise ValidationError(
            f"run spec {where} must be a JSON object with dataset_id, got a {type(value).__name__}"
        )
    return value


def _has_points(page: Mapping[str, Any]) -> bool:
    series = page.get("series")
    return isinstance(series, Mapping) and any(points for points in series.values())


def _metrics_cursor(page: Mapping[str, Any], previous: int) -> int:
    """The step to ask after next: the answer's cursor, never behind a step it returned."""
    highest = previous
    cursor = page.get("cursor")
    if isinstance(cursor, int) and not isinstance(cursor, bool):
        highest = max(highest, cursor)
    series = page.get("series")
    if isinstance(series, Mapping):
        for points in series.values():
            for point in points or ():
                if isinstance(point, list | tuple) and point and isinstance(point[0], int | float):
                    highest = max(highest, int(point[0]))
    return highest


def _logs_cursor(page: Mapping[str, Any], previous: int) -> int:
    cursor = page.get("cursor")
    if isinstance(cursor, int) and not isinstance(cursor, bool):
        return max(previous, cursor)
    return previous


def _check_progress(previous: int, cursor: int, operation: str) -> None:
    # A page with news but a cursor that did not move would be read again forever.
    if cursor <= previous:
        raise errors.APIError(
            f"{operation}: the runs service answered new entries without moving its cursor past {previous}"
        )


class RunsAPI:
    """Training runs of one client's database and schema."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def _get(self, send: Any, run_id: str, **query: Any) -> dict[str, Any]:
        """One call of `send` (a generated runs operation about one run) under the runs rule."""
        if not isinstance(run_id, str) or not run_id:
            raise ValidationError(f"a run id is needed, got {run_id!r}")
        answer = send(self.client, run_id=run_id, predicate=RUNS_RULE, **query)
        return answer_object(answer, send.__name__)

    # --- start and read --------------------------------------------------------------------------

    def start(
        self,
        spec: Mapping[str, Any] | str | os.PathLike[str],
        *,
        wait: bool = False,
        timeout: float | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Start a run from a spec (a mapping or a JSON file path); returns the Run.

        An identical spec while its run is queued or running returns that run. The call is
        idempotent: it sends `idempotency_key` (by default a new random one per call) with every
        attempt, and the service answers a key it has seen with that key's run, whatever became of
        the run since, so a retry after a lost answer never starts a second run. Pass a key of your
        own to make a start idempotent across processes (the same key with another spec is refused
        with `ConflictError`). With `wait`, the call returns the run once it has ended (see `wait`).
        """
        key = str(uuid.uuid4()) if idempotency_key is None else check_idempotency_key(idempotency_key)
        body = load_run_spec(spec)
        # Retried under the general rule: every attempt carries the call's key, so the service
        # answers a repeat with the run the first attempt started.
        answer: Any = _runs.start_run(self.client, body=body, idempotency_key=key, predicate=RUNS_RULE)
        run = answer_object(answer.json(), "startRun")
        if not wait:
            return run
        return self.wait(str(run.get("run_id", "")), timeout=timeout)

    def get(self, run_id: str) -> dict[str, Any]:
        """One run: status, fingerprints, resolved trainer, progress, checkpoints and outcome."""
        return self._get(_runs.get_run, run_id)

    def list(self, status: str | None = None, limit: int | None = None) -> builtins.list[dict[str, Any]]:
        """The schema's runs, newest first; only those in `status` when given, at most `limit`."""
        if status is not None and status not in RUN_STATUSES:
            raise ValidationError(f"unknown run status {status!r}; use one of {', '.join(RUN_STATUSES)}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValidationError(f"limit must be a positive integer, got {limit!r}")
        answer: Any = _runs.list_runs(self.client, status=status, limit=limit, predicate=RUNS_RULE)
        runs = answer_object(answer, "listRuns").get("runs")
        return [run for run in runs or [] if isinstance(run, dict)]

    def cancel(self, run_id: str) -> dict[str, Any]:
        """Ask a run to stop; returns the run. A queued run ends at once, a running one at its next
        step boundary after a final checkpoint. Repeating it is harmless."""
        return self._get(_runs.cancel_run, run_id)

    def wait(self, run_id: str, timeout: float | None = None) -> dict[str, Any]:
        """Poll until the run has ended (succeeded, failed or cancelled) and return it.

        An ended run is returned whatever its status; `timeout` defaults to the client's poll
        timeout, and running out raises `RunWaitTimeout` (the run goes on).
        """
        if not run_id:
            raise ValidationError("a run id is needed to wait for the run")
        return wait_until(
            self.client,
            lambda: self.get(run_id),
            lambda record: record.get("status") in TERMINAL_RUN_STATUSES,
            timeout=timeout,
            describe=f"run {run_id}",
        )

    def resume(self, run_id: str, *, wait: bool = False, timeout: float | None = None) -> dict[str, Any]:
        """Resume a failed or cancelled run from its newest resumable checkpoint; returns the Run.

        The run is queued again and trains on exactly as it would have without the interruption
        (the path a service restarted after a crash takes). A run that is queued, running or
        succeeded, one with no resumable checkpoint and one that registered a model are refused
        with `ConflictError` (409 `aborted`) saying what to do instead. Sent again only when the
        request provably never reached the service: a repeat would find the run queued and be
        refused. With `wait`, returns the run once it has ended again (see `wait`).
        """
        if not isinstance(run_id, str) or not run_id:
            raise ValidationError(f"a run id is needed, got {run_id!r}")
        answer: Any = _runs.resume_run(self.client, run_id=run_id, predicate=upload_rule)
        run = answer_object(answer, "resumeRun")
        if not wait:
            return run
        return self.wait(run_id, timeout=timeout)

    def register(self, run_id: str) -> dict[str, Any]:
        """Register the model of a cancelled run from its best checkpoint; returns the RegisteredModel.

        A run has one model: a run that has one (a succeeded run, or a cancelled one registered
        before) answers it. A run that is queued, running or failed, and a cancelled run that
        never validated, are refused with `ConflictError` (409 `aborted`) saying what to do.
        """
        if not isinstance(run_id, str) or not run_id:
            raise ValidationError(f"a run id is needed, got {run_id!r}")
        # Two answers (201 registered now, 200 registered before): the operation hands the response on.
        answer: Any = _runs.register_run_model(self.client, run_id=run_id, predicate=RUNS_RULE)
        return answer_object(answer.json(), "registerRunModel")

    def models(self, run_id: str | None = None, limit: int | None = None) -> builtins.list[dict[str, Any]]:
        """The registered models of the schema, newest first; only `run_id`'s when given."""
        if run_id is not None and (not isinstance(run_id, str) or not run_id):
            raise ValidationError(f"run_id must be a run id, got {run_id!r}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValidationError(f"limit must be a positive integer, got {limit!r}")
        answer: Any = _runs.list_registered_models(
            self.client, run_id=run_id, limit=limit, predicate=RUNS_RULE
        )
        found = answer_object(answer, "listRegisteredModels").get("models")
        return [model for model in found or [] if isinstance(model, dict)]

    def get_model(self, model_id: str) -> dict[str, Any]:
        """A registered model version (`model_id` of a run): source run, checkpoint, template."""
        if not isinstance(model_id, str) or not model_id:
            raise ValidationError(f"a model id is needed, got {model_id!r}")
        answer: Any = _runs.get_registered_model(self.client, model_id=model_id, predicate=RUNS_RULE)
        return answer_object(answer, "getRegisteredModel")

    # --- from a run to a chat ----------------------------------------------------------------------

    def deployments(self) -> Any:
        """The client's model-deployment methods (`client.model_deployments`: the plugin's)."""
        return self.client.deployments()

    def deploy(self, ref: str, *, wait: bool = False, timeout: float | None = None) -> dict[str, Any]:
        """Deploy the model a run registered (`run_...`) or a registered model (`mdl_...`).

        Returns the deployment's record with its OpenAI `base_url`, `model_id` and `run_id`; with
        `wait`, once it is READY. A run without a model is refused saying what to do (register a
        cancelled run, resume a failed one).
        """
        from ct_core.runs import deploy

        return deploy.deploy(self, ref, wait=wait, timeout=timeout)

    def chat(
        self,
        ref: str,
        prompt: str,
        *,
        max_completion_tokens: int | None = None,
        temperature: float = 0.0,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Ask a run's model one question through its deployment (created, and waited for, when
        none serves: `created` says so). Returns the answer's `content` and `finish_reason` with
        the deployment's id and `base_url`."""
        from ct_core.runs import deploy

        tokens = deploy.DEFAULT_CHAT_TOKENS if max_completion_tokens is None else max_completion_tokens
        return deploy.chat(
            self, ref, prompt, max_completion_tokens=tokens, temperature=temperature, timeout=timeout
        )

    def _terminal(self, run_id: str) -> bool:
        return self.get(run_id).get("status") in TERMINAL_RUN_STATUSES

    # --- metrics ---------------------------------------------------------------------------------

    def metrics(self, run_id: str, after_step: int | None = None) -> dict[str, Any]:
        """One page of metric series: `{"series": {name: [[step, value], ...]}, "cursor": int}`.

        Only points after `after_step` (all when None); pass the answer's cursor next time.
        """
        if after_step is not None and (isinstance(after_step, bool) or not isinstance(after_step, int)):
            raise ValidationError(f"after_step must be an integer, got {after_step!r}")
        return self._get(_runs.get_run_metrics, run_id, after_step=after_step)

    def follow_metrics(
        self, run_id: str, after_step: int | None = None, poll: float | None = None
    ) -> Iterator[dict[str, Any]]:
        """Yield each page with new points until the run has ended and nothing new is left.

        Reads every `poll` seconds (default: the client's poll interval) while nothing is new.
        The end is decided by reading the run's status only after an empty page, and then reading
        once more: points written between the two reads are never lost.
        """
        interval = follow_interval(self.client, poll)
        cursor = ALL_STEPS if after_step is None else after_step
        ended = False
        while True:
            page = self.metrics(run_id, after_step=cursor)
            previous, cursor = cursor, _metrics_cursor(page, cursor)
            if _has_points(page):
                _check_progress(previous, cursor, "getRunMetrics")
                yield page
                continue
            if ended:
                return
            if self._terminal(run_id):
                ended = True
                continue
            self.client.sleep(interval)

    # --- logs ------------------------------------------------------------------------------------

    def logs(
        self, run_id: str, structured: bool = False, after: int = 0, limit: int | None = None
    ) -> dict[str, Any]:
        """One page of log entries: `{"logs": [entry, ...], "cursor": int}`.

        Entries carry timestamp, severity and message; `structured` adds seq, step, epoch, event
        and the context known (losses, throughput, lr, checkpoint, early stop). Only entries after
        the sequence number `after`; pass the answer's cursor next time.
        """
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise ValidationError(f"after must be a non-negative integer, got {after!r}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValidationError(f"limit must be a positive integer, got {limit!r}")
        return self._get(_runs.get_run_logs, run_id, structured=bool(structured), after=after, limit=limit)

    def follow_logs(
        self,
        run_id: str,
        structured: bool = False,
        after: int = 0,
        poll: float | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Yield log entries one by one as they come, until the run has ended and none are left.

        Polls as `follow_metrics` does (every `poll` seconds while nothing is new).
        """
        interval = follow_interval(self.client, poll)
        cursor = after
        ended = False
        while True:
            page = self.logs(run_id, structured=structured, after=cursor)
            entries = [entry for entry in page.get("logs") or [] if isinstance(entry, dict)]
            previous, cursor = cursor, _logs_cursor(page, cursor)
            if entries:
                _check_progress(previous, cursor, "getRunLogs")
                yield from entries
                continue
            if ended:
                return
            if self._terminal(run_id):
                ended = True
                continue
            self.client.sleep(interval)

"""Smoke tests of catalog job files: does the server take each file's body, and does the job work?

`smoke_job_files(files, client=None)` runs each job file in turn:

* without a client (a dry run), the body gets exactly the checks `ct submit --dry-run` runs (the
  CLI's shape check and the SDK's create-body validation, plugin validators included) and nothing
  is sent;
* with a client, the body is submitted as it is, the job is waited for until it runs, then probed:
  a minimal forward-backward on a training sub-job, a one-token generate on a sampling sub-job (an
  RL file gets both). The job is cancelled afterwards whatever happened, once it exists.

Each file gives a `SmokeResult`; a failure is recorded in it and the next file still runs. Against
`ct local serve` (which serves every catalog model with its tiny stand-in) this runs on any machine;
against the service it spends GPU time, one job at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ct_core.catalog._layout import KIND_JOB_TYPES, JobFile

#: The probe's batch: a few token ids every model's vocabulary holds, labels shifted from them.
PROBE_INPUT_IDS = [[1, 2, 3, 4, 5, 6, 7, 8]]
#: The probe's generate: one prompt of token ids, one token, greedy.
PROBE_PROMPT = [1, 2, 3, 4]
PROBE_SAMPLING = {"max_tokens": 1, "temperature": 0.0}


@dataclass
class SmokeResult:
    """What happened to one job file."""

    file: str
    model: str
    ok: bool = False
    job_id: str | None = None
    probes: list[str] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "model": self.model,
            "ok": self.ok,
            "job_id": self.job_id,
            "probes": list(self.probes),
        }
        if self.error is not None:
            out["error"] = self.error
        return out


def _check_body(body: dict[str, Any]) -> None:
    from ct_core.config.validation import validate_create_body

    sub_jobs = body.get("sub_job_configs")
    if not isinstance(sub_jobs, list) or not sub_jobs:
        raise ValueError("job JSON must contain a non-empty sub_job_configs list")
    validate_create_body(body)


def _probe(client: Any, job_id: str, job: JobFile, done: list[str]) -> None:
    types = KIND_JOB_TYPES[job.kind]
    if "training" in types:
        from ct_core.data.payloads import build_forward_backward_payload

        frame = build_forward_backward_payload({"input_ids": PROBE_INPUT_IDS})
        client.poll_request(job_id, client.forward_backward(job_id, frame))
        done.append("fwd-bwd")
    if "sampling" in types:
        request_id = client.generate(job_id, prompts=[PROBE_PROMPT], sampling_params=PROBE_SAMPLING)
        client.poll_request(job_id, request_id)
        done.append("generate")


def smoke_job_file(
    job: JobFile,
    client: Any = None,
    *,
    label: str | None = None,
) -> SmokeResult:
    """Smoke-test one job file: checks only without `client`, else submit, wait, probe and cancel."""
    result = SmokeResult(file=label or str(job.path), model=job.model_name)
    try:
        body = job.body()
        _check_body(body)
        if client is None:
            result.ok = True
            return result
        created = client.create_job_from_body(body)
        job_id = created.get("job_id") if isinstance(created, dict) else None
        if not job_id:
            raise RuntimeError(f"the create answer carries no job_id: {created!r}")
        result.job_id = str(job_id)
        try:
            client.wait_for_job(result.job_id)
            _probe(client, result.job_id, job, result.probes)
        finally:
            client.cancel_job(result.job_id)
        result.ok = True
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    return result


def smoke_job_files(
    jobs: Iterable[JobFile],
    client: Any = None,
    *,
    label: Callable[[JobFile], str] | None = None,
    on_result: Callable[[SmokeResult], None] | None = None,
) -> list[SmokeResult]:
    """`smoke_job_file` for each of `jobs`, one after the other; `on_result` hears each as it ends."""
    results = []
    for job in jobs:
        result = smoke_job_file(job, client, label=label(job) if label else None)
        if on_result is not None:
            on_result(result)
        results.append(result)
    return results

"""`ct --job JOB generate FILE|-` and `--stream`: generation from a readable JSON request.

The file holds the fields of the reference CLI's generate JSON: ``prompts`` (strings and/or token-id
lists), optional ``sampling_params`` (one object or one per prompt), ``routing_key``, ``strict``, and
``poll`` (false: print the request id without waiting), optionally nested under ``payload``. A
flat list of token ids (``[72, 105, 33]``) is one prompt, as the SDK reads it, so it counts as one
and takes a one-item ``sampling_params`` list. A ``tokenizer`` next to the prompts (``"byte"``, a
folder, or a Hugging Face name in the local cache, read offline) encodes text prompts into token ids
here; without one the server reads them with the model's own tokenizer. A ``sub_job_id`` next to
the prompts picks the sampling sub-job like ``--sub-job-id`` (alias ``--sub-job``) does. The
requests are the operationIds ``generate`` and ``generateStream``.
"""

from __future__ import annotations

from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output
from ct_cli.commands._job import Extra, MisplacedJob, running_job
from ct_cli.commands._waiting import wait_for_request


def _request_fields(spec: dict[str, Any]) -> tuple[dict[str, Any], bool, str | None]:
    """The generate fields, `poll`, and the sub-job named in the file.

    The refusal texts are fixed: tooling matches on them.
    """
    payload = spec.get("payload", spec)
    if not isinstance(payload, dict):
        raise ValueError("generate payload must be an object")
    poll = spec.get("poll", True)
    if not isinstance(poll, bool):
        raise ValueError("generate poll must be a boolean")
    prompts = payload.get("prompts")
    if not (isinstance(prompts, list) and len(prompts) > 0):
        raise ValueError("generate JSON must contain a non-empty prompts list")
    if all(_is_token_id(item) for item in prompts):
        prompts = [prompts]
    params = payload.get("sampling_params")
    if isinstance(params, list):
        if len(params) != len(prompts):
            raise ValueError("generate sampling_params list length must match prompts length")
        if any(p is not None and not isinstance(p, dict) for p in params):
            raise ValueError("generate sampling_params list items must be objects or null")
    elif params is not None and not isinstance(params, dict):
        raise ValueError("generate sampling_params must be an object or list")
    routing_key = payload.get("routing_key")
    if isinstance(routing_key, list):
        # Our own addition to the reference's checks: a key list lines up with the prompts too.
        if len(routing_key) != len(prompts):
            raise ValueError("generate routing_key list length must match prompts length")
        if any(k is not None and not isinstance(k, str) for k in routing_key):
            raise ValueError("generate routing_key list items must be strings or null")
    elif routing_key is not None and not isinstance(routing_key, str):
        raise ValueError("generate routing_key must be a string or list")
    strict = payload.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise ValueError("generate strict must be a boolean")
    sub_job_id = payload.get("sub_job_id")
    if sub_job_id is not None and (not isinstance(sub_job_id, str) or not sub_job_id):
        raise ValueError("generate sub_job_id must be a non-empty string")
    if payload.get("tokenizer") is not None:
        from ct_core.data.payloads import encode_prompts

        # Text prompts are read with the tokenizer the file names, here; without one, the server
        # reads them with the sampling sub-job's model's own.
        prompts = encode_prompts(payload["tokenizer"], prompts)
    fields = {
        "prompts": prompts,
        "sampling_params": params,
        "routing_key": routing_key,
        "strict": strict,
    }
    return fields, poll, sub_job_id


def _is_token_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _pick_sub_job(flag: str | None, in_file: str | None) -> str | None:
    """--sub-job-id and the file's sub_job_id must agree when both are given."""
    if flag and in_file and flag != in_file:
        raise ValueError(f"--sub-job-id {flag} and the file's sub_job_id {in_file} name different sub-jobs")
    return flag or in_file


def _readable(event: dict[str, Any]) -> str:
    """One stream event as a line for a person at a terminal."""
    kind = event.get("type")
    if kind == "result":
        result = event.get("result") or {}
        return f"[{event.get('index')}] ({result.get('finish_reason')}) {result.get('text', '')!r}"
    if kind == "error":
        problem = event.get("error")
        text = problem if isinstance(problem, str) else output.render_json(problem, compact=True)
        return f"[{event.get('index')}] error: {text}"
    if kind == "done":
        return f"done: {event.get('completed')} completed, {event.get('failed')} failed"
    return output.render_json(event, compact=True)


def generate(
    file: Annotated[
        str,
        Parameter(
            allow_leading_hyphen=True, help="generate JSON (prompts, sampling_params, ...), or - for stdin."
        ),
    ],
    /,
    *extra: Extra,
    sub_job: Annotated[
        str | None,
        Parameter(
            name=["--sub-job-id", "--sub-job"],
            help="The sampling sub-job to run on (needed when the job has several).",
        ),
    ] = None,
    stream: Annotated[
        bool, Parameter(negative=(), help="Stream: print each event as it arrives (JSON lines).")
    ] = False,
    job: MisplacedJob = None,
) -> None:
    """Generate text on the job's sampling sub-job.

    Prints {"job_id", "prompt_count", "request_id", "result"} (on a terminal, each token-id list on
    one line). With --stream, prints one JSON line per event (result, error, done) as they arrive; on
    a terminal, readable lines instead, with control characters escaped.
    """
    from ct_cli.commands.submit import read_json_object

    job_id = running_job("generate", "FILE", extra=extra, misplaced_job=job)
    fields, poll, file_sub_job = _request_fields(read_json_object(file, what="generate"))
    sub_job = _pick_sub_job(sub_job, file_sub_job)
    client = context.client()
    if not stream:
        request_id = client.generate(job_id, sub_job_id=sub_job, **fields)
        answer: dict[str, Any] = {
            "job_id": job_id,
            "prompt_count": len(fields["prompts"]),
            "request_id": request_id,
        }
        if poll:
            answer["result"] = wait_for_request(job_id, request_id, "generate")
        output.emit(answer)
        return
    started = client.generate_stream(job_id, sub_job_id=sub_job, **fields)
    request_id = str(started["request_id"])
    output.progress(f"generate-stream: request {request_id}, {started.get('count')} prompt(s)")
    if not poll:
        output.emit(started)
        return
    to_terminal = output.stdout_is_terminal()
    for event in client.iter_generate_events(job_id, request_id):
        if to_terminal:
            output.emit_text(output.printable(_readable(event)))
        else:
            output.emit_text(output.render_json(event, compact=True))

"""OpenAI-compatible inference for model deployments: chat completions and the model list.

A deployment is a job whose only sub-job samples with ``deployment_class`` EVALUATION. This module
answers ``POST {prefix}/inference/v1/chat/completions`` and ``GET {prefix}/inference/v1/models``
for such jobs with the tiny local model: built from the model name, or loaded from the checkpoint
a deployment names as its source. Messages go through a small chat template over the byte
tokenizer; generation is a plain token loop (greedy at temperature 0, sampled otherwise).

The error answers use OpenAI's ``{"error": {...}}`` shape, because the callers are OpenAI clients.
torch is imported only when a model is first needed.
"""

from __future__ import annotations

import codecs
import json
import re
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ct_local.http.context import caller_identity, owner_filter, request_location, server_state
from ct_local.storage.store import JobRow

if TYPE_CHECKING:
    import torch

#: The class this endpoint serves; other classes exist in the service, not here.
SERVED_CLASS = "EVALUATION"
#: Deployment ids are sf-ct-<backing job UUID>.
_MODEL_RE = re.compile(r"sf-ct-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")
#: Job statuses in which the endpoint exists but cannot answer yet: 503 endpoint_failed.
NOT_READY_STATUSES = frozenset({"pending", "placing", "initializing"})
SERVING_STATUS = "running"
#: Completion length when the caller sets no max_completion_tokens (bounded by max_seq_len too).
DEFAULT_COMPLETION_TOKENS = 128
#: The fallback window when a deployment record carries no max_seq_len.
DEFAULT_MAX_SEQ_LEN = 2048
#: Methods the inference paths are registered for; the wrong ones answer 405 with no body.
ROUTE_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


# --- errors -----------------------------------------------------------------------------------


class InferenceError(Exception):
    """An OpenAI-style error answer."""

    def __init__(self, status: int, message: str, *, kind: str, code: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.code, self.param = status, message, kind, code, param

    def response(self) -> JSONResponse:
        body = {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}
        return JSONResponse(body, status_code=self.status)


def _bad_request(message: str, *, param: str | None = None, code: str = "invalid_value") -> InferenceError:
    return InferenceError(400, message, kind="invalid_request_error", code=code, param=param)


def _model_not_found(model: Any) -> InferenceError:
    # Same answer for unknown, failed, dropped and someone else's: existence must not leak.
    return InferenceError(
        404,
        f"The model {model!r} does not exist or you do not have access to it.",
        kind="invalid_request_error",
        code="model_not_found",
        param="model",
    )


# --- chat template and generation --------------------------------------------------------------


def render_chat(messages: list[dict[str, str]]) -> str:
    """A minimal template: one `<role>: text` line per message, then the assistant's turn."""
    lines = [f"<{message['role']}>: {message['content']}\n" for message in messages]
    return "".join(lines) + "<assistant>: "


@dataclass
class LoadedModel:
    model: Any
    lock: threading.Lock = field(default_factory=threading.Lock)


def _model_for(job: JobRow, state_dir: Path, store: Any) -> torch.nn.Module:
    from ct_local.model import tinylm
    from ct_local.storage.checkpoint_paths import resolve_checkpoint

    sub_job = job.sub_jobs[0]
    model = tinylm.build_model(str(sub_job.get("model_name", "")))
    info = sub_job.get("source_checkpoint_info")
    if isinstance(info, dict) and info.get("checkpoint_id"):
        row = resolve_checkpoint(store, str(info.get("source_job_id")), str(info["checkpoint_id"]))
        if row is None or not row.path:
            raise RuntimeError(f"source checkpoint {info['checkpoint_id']} is gone")
        folder = Path(row.path)
        tinylm.load_weights(model, folder if folder.is_absolute() else state_dir / folder)
    model.eval()
    return model


def generate_tokens(
    model: Any, prompt_ids: list[int], *, max_new: int, temperature: float, seed: int | None
) -> Iterator[int]:
    """Yield new token ids one at a time; stops after EOS (which is yielded) or `max_new` tokens."""
    import torch

    from ct_local.model.tinylm import EOS_ID

    generator = torch.Generator().manual_seed(seed if seed is not None else secrets.randbits(62))
    ids = list(prompt_ids)
    # The whole sequence is run again for every token: at this model's size that is cheaper than
    # keeping up with the changing cache API of transformers, and it keeps the loop obvious.
    with torch.no_grad():
        for _ in range(max_new):
            logits = model(input_ids=torch.tensor([ids], dtype=torch.long)).logits[0, -1].float()
            if temperature <= 0:
                token = int(torch.argmax(logits))
            else:
                probs = torch.softmax(logits / temperature, dim=-1)
                token = int(torch.multinomial(probs, 1, generator=generator))
            yield token
            if token == EOS_ID:
                return
            ids.append(token)


# --- request parsing ----------------------------------------------------------------------------


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, str]]
    max_completion_tokens: int | None
    temperature: float
    seed: int | None
    stream: bool
    include_usage: bool


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_chat(body: Any) -> ChatRequest:
    if not isinstance(body, dict):
        raise _bad_request("The request body must be a JSON object.")
    if "max_tokens" in body:
        raise _bad_request(
            "max_tokens is not supported by this endpoint; use max_completion_tokens instead.",
            param="max_tokens",
            code="unsupported_parameter",
        )
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad_request("messages must be a non-empty list.", param="messages")
    parsed: list[dict[str, str]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _bad_request(f"messages[{index}] needs a role.", param=f"messages[{index}]")
        content = message.get("content")
        if isinstance(content, list):
            # The content-parts form: only text parts mean anything to this model.
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        if not isinstance(content, str):
            raise _bad_request(f"messages[{index}].content must be text.", param=f"messages[{index}].content")
        parsed.append({"role": message["role"], "content": content})
    limit = body.get("max_completion_tokens")
    if limit is not None and (not _is_int(limit) or limit < 1):
        raise _bad_request("max_completion_tokens must be a positive integer.", param="max_completion_tokens")
    temperature = body.get("temperature", 1.0)
    if temperature is None:
        temperature = 1.0
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not 0 <= temperature <= 2:
        raise _bad_request("temperature must be a number from 0 to 2.", param="temperature")
    seed = body.get("seed")
    if seed is not None and not _is_int(seed):
        raise _bad_request("seed must be an integer.", param="seed")
    stream = body.get("stream") is True
    options = body.get("stream_options")
    include_usage = stream and isinstance(options, dict) and options.get("include_usage") is True
    return ChatRequest(
        model=str(body.get("model", "")),
        messages=parsed,
        max_completion_tokens=limit,
        temperature=float(temperature),
        seed=seed,
        stream=stream,
        include_usage=include_usage,
    )


# --- deployment lookup -------------------------------------------------------------------------


def _sub_job_class(sub_job: dict[str, Any]) -> str | None:
    config = sub_job.get("inference_config")
    if str(sub_job.get("job_type", "")).lower() != "sampling" or not isinstance(config, dict):
        return None
    value = config.get("deployment_class")
    return value if isinstance(value, str) and value else None


def _deployment_class(job: JobRow) -> str | None:
    return _sub_job_class(job.sub_jobs[0]) if len(job.sub_jobs) == 1 else None


def source_model_problem(sub_job: dict[str, Any], source: JobRow) -> str | None:
    """Why a deployment cannot start from `source`'s checkpoint, or None when it can.

    The service knows the source job's model and refuses a deployment that names another; ct reads
    the name from the source job for exactly that reason. Other sampling sub-jobs are left alone.
    """
    if _sub_job_class(sub_job) is None:
        return None
    trained = [
        str(sub.get("model_name"))
        for sub in source.sub_jobs
        if str(sub.get("job_type", "")).lower() == "training" and sub.get("model_name")
    ]
    name = sub_job.get("model_name")
    if not trained or name in trained:
        return None
    return (
        f"model_name {name!r} does not match the model of source job {source.job_id} "
        f"({', '.join(trained)}); a deployment from a checkpoint serves the model it was trained from"
    )


def _find_deployment(request: Request, model: Any) -> JobRow:
    identity = caller_identity(request)
    loc = request_location(request)
    match = _MODEL_RE.fullmatch(model) if isinstance(model, str) else None
    job = server_state(request).store.get_job(match.group(1)) if match else None
    owner = owner_filter(request, identity)
    if (
        job is None
        or (job.database_name, job.schema_name, job.endpoint) != (loc.database, loc.schema, loc.endpoint)
        or (owner is not None and job.owner_role != owner)
        or _deployment_class(job) is None
    ):
        raise _model_not_found(model)
    if _deployment_class(job) != SERVED_CLASS:
        raise InferenceError(
            403,
            f"This endpoint does not serve deployments of class {_deployment_class(job)}.",
            kind="permission_error",
            code="deployment_class_not_served",
        )
    if job.status in NOT_READY_STATUSES:
        raise InferenceError(
            503,
            f"The model {model} is not ready yet (it is {job.status}); try again when it is READY.",
            kind="service_unavailable",
            code="endpoint_failed",
        )
    if job.status != SERVING_STATUS:
        # A failed or dropped deployment will not serve again: let its model go.
        registry = getattr(request.app.state, "ct_inference_models", None)
        if registry is not None:
            registry.pop(job.job_id, None)
        raise _model_not_found(model)
    return job


def _loaded(request: Request, job: JobRow) -> LoadedModel:
    state = server_state(request)
    registry: dict[str, LoadedModel] | None = getattr(request.app.state, "ct_inference_models", None)
    if registry is None:
        registry = {}
        request.app.state.ct_inference_models = registry
    if job.job_id not in registry:
        registry[job.job_id] = LoadedModel(_model_for(job, Path(state.settings.state_dir), state.store))
    return registry[job.job_id]


# --- handlers ----------------------------------------------------------------------------------


async def chat_completions(request: Request) -> Response:
    if request.method != "POST":
        return Response(status_code=405)
    try:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            raise _bad_request("The request body is not valid JSON.") from None
        model_field = body.get("model") if isinstance(body, dict) else None
        job = _find_deployment(request, model_field)
        chat = parse_chat(body)
        from ct_local.model.tinylm import ByteTokenizer

        prompt_ids = ByteTokenizer().encode(render_chat(chat.messages), add_bos=True)
        config = job.sub_jobs[0].get("inference_config") or {}
        window = int(config.get("max_seq_len") or DEFAULT_MAX_SEQ_LEN)
        room = window - len(prompt_ids)
        if room < 1:
            raise _bad_request(
                f"The prompt is {len(prompt_ids)} tokens; this deployment's window is {window}.",
                param="messages",
                code="context_length_exceeded",
            )
        wanted = chat.max_completion_tokens or DEFAULT_COMPLETION_TOKENS
        loaded = await run_in_threadpool(_loaded, request, job)
    except InferenceError as exc:
        return exc.response()
    max_new = min(wanted, room)
    completion = Completion(chat, loaded, prompt_ids, max_new)
    if chat.stream:
        return StreamingResponse(completion.sse(), media_type="text/event-stream")
    return JSONResponse(await run_in_threadpool(completion.whole))


async def list_models(request: Request) -> Response:
    if request.method != "GET":
        return Response(status_code=405)
    identity = caller_identity(request)
    loc = request_location(request)
    owner = owner_filter(request, identity)
    jobs = server_state(request).store.jobs_in(loc.database, loc.schema, loc.endpoint, owner)
    data = [
        {
            "id": "sf-ct-" + job.job_id,
            "object": "model",
            "created": int(job.created_at),
            "owned_by": job.owner_role,
        }
        for job in jobs
        if job.status == SERVING_STATUS and _deployment_class(job) == SERVED_CLASS
    ]
    return JSONResponse({"object": "list", "data": data})


class Completion:
    """One chat completion: the token loop, as one object or as SSE chunks."""

    def __init__(self, chat: ChatRequest, loaded: LoadedModel, prompt_ids: list[int], max_new: int) -> None:
        self.chat, self.loaded, self.prompt_ids, self.max_new = chat, loaded, prompt_ids, max_new
        self.id = "chatcmpl-" + uuid.uuid4().hex
        self.created = int(time.time())

    def _pieces(self) -> Iterator[tuple[str, int, str | None]]:
        """(text, tokens so far, finish_reason once known); text is whole UTF-8 characters."""
        from ct_local.model.tinylm import BYTE_TOKENS, EOS_ID

        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        count = 0
        with self.loaded.lock:
            for token in generate_tokens(
                self.loaded.model,
                self.prompt_ids,
                max_new=self.max_new,
                temperature=self.chat.temperature,
                seed=self.chat.seed,
            ):
                count += 1
                if token == EOS_ID:
                    yield decoder.decode(b"", final=True), count, "stop"
                    return
                text = decoder.decode(bytes([token]), final=False) if token < BYTE_TOKENS else ""
                yield text, count, None
        yield decoder.decode(b"", final=True), count, "length"

    def _usage(self, completion_tokens: int) -> dict[str, int]:
        prompt = len(self.prompt_ids)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        }

    def whole(self) -> dict[str, Any]:
        parts: list[str] = []
        used, finish = 0, "length"
        for text, tokens, reason in self._pieces():
            parts.append(text)
            used, finish = tokens, reason or finish
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.chat.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "".join(parts)},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": self._usage(used),
        }

    def _chunk(self, delta: dict[str, Any], finish: str | None) -> str:
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.chat.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        if self.chat.include_usage:
            chunk["usage"] = None
        return "data: " + json.dumps(chunk) + "\n\n"

    def sse(self) -> Iterator[str]:
        # A sync generator: Starlette runs it in a worker thread, so the loop never blocks the server.
        yield self._chunk({"role": "assistant", "content": ""}, None)
        used, finish = 0, "length"
        for text, tokens, reason in self._pieces():
            if text:
                yield self._chunk({"content": text}, None)
            used, finish = tokens, reason or finish
        yield self._chunk({}, finish)
        if self.chat.include_usage:
            usage = {
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.chat.model,
                "choices": [],
                "usage": self._usage(used),
            }
            yield "data: " + json.dumps(usage) + "\n\n"
        yield "data: [DONE]\n\n"

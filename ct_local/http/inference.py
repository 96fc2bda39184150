"""OpenAI-compatible inference for model deployments: chat completions, the model list, one model.

A deployment is a job whose only sub-job samples with ``deployment_class`` EVALUATION. This module
answers ``POST {prefix}/inference/v1/chat/completions``, ``GET {prefix}/inference/v1/models`` and
``GET {prefix}/inference/v1/models/{model}`` for such jobs with the deployment's model: the tiny
local model (built from the model name, or loaded from the checkpoint a deployment names as its
source) or a real model's weights. Messages are rendered with the model's own chat template: the
tiny model's is :mod:`ct_core.chat_template` (the template managed runs train in; a checkpoint names
the template it was saved with), a real model's is its tokenizer's. Generation is the sampler's one
decoding loop (:class:`ct_local.model.sampler.Decoder`: batched, over a key/value cache): the ``n``
choices of a request decode together, and each stops at the template's end-of-turn token or the
end of sequence (``finish_reason`` ``stop``) or at its length (``length``).

Every request option is honoured or refused, never dropped: ``n`` draws that many choices,
``logprobs`` / ``top_logprobs`` return OpenAI's logprobs objects, ``top_p`` narrows the draw, the
penalties pass at 0; anything else (``tools``, ``response_format``, ``stop``, ...) answers 400
``unsupported_parameter`` naming it. A path under ``/inference/v1`` that is not one of these answers
OpenAI's 404 ``unknown_url``, and a database or schema the caller cannot see answers like a missing
model (404), so an inference call cannot tell whether a namespace exists.

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

from ct_local.http.context import Location, caller_identity, owner_filter, request_location, server_state
from ct_local.http.errors import ServiceError
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
ROUTE_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
#: The options chat completions honours; any other one with a value answers unsupported_parameter.
HONOURED_OPTIONS = frozenset(
    {
        "model",
        "messages",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "seed",
        "n",
        "logprobs",
        "top_logprobs",
        "stream",
        "stream_options",
        "frequency_penalty",
        "presence_penalty",
    }
)
#: Options honoured only at their neutral value (0: no penalty), as this model applies none.
NEUTRAL_ONLY_OPTIONS = ("frequency_penalty", "presence_penalty")
#: OpenAI's bounds for the number of choices and of alternatives per token.
MAX_CHOICES = 128
MAX_TOP_LOGPROBS = 20


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


def _model_not_found() -> InferenceError:
    # Same answer for unknown, failed, dropped and someone else's, and for a database or schema the
    # caller cannot see: existence must not leak, so the answer names nothing.
    return InferenceError(
        404,
        "The requested model is not available.",
        kind="invalid_request_error",
        code="model_not_found",
        param="model",
    )


def _unsupported(options: list[str]) -> InferenceError:
    listed = ", ".join(options)
    return _bad_request(
        f"Unsupported parameter(s): {listed}. This endpoint honours {', '.join(sorted(HONOURED_OPTIONS))}.",
        param=options[0],
        code="unsupported_parameter",
    )


def _inference_location(request: Request) -> Location:
    """The path's location; one the caller cannot see answers 404 here, not the management API's 400."""
    try:
        return request_location(request)
    except ServiceError:
        raise _model_not_found() from None


# --- chat template and generation --------------------------------------------------------------


@dataclass
class LoadedModel:
    model: Any
    #: The one decoding loop over this model (ct_local.model.sampler.Decoder).
    decoder: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: A real model's tokenizer (ct_local.model.hf.TextTokenizer); None for the tiny byte model.
    tokenizer: Any = None


def _checkpoint_folder(job: JobRow, state_dir: Path, store: Any) -> Path | None:
    """The folder of the checkpoint the deployment serves, or None for a base model."""
    from ct_local.storage.checkpoint_paths import resolve_checkpoint

    info = job.sub_jobs[0].get("source_checkpoint_info")
    if not (isinstance(info, dict) and info.get("checkpoint_id")):
        return None
    row = resolve_checkpoint(store, str(info.get("source_job_id")), str(info["checkpoint_id"]))
    if row is None or not row.path:
        raise RuntimeError(f"source checkpoint {info['checkpoint_id']} is gone")
    folder = Path(row.path)
    return folder if folder.is_absolute() else state_dir / folder


def _model_for(job: JobRow, state_dir: Path, store: Any) -> torch.nn.Module:
    from ct_local.model import hf, tinylm

    model_name = str(job.sub_jobs[0].get("model_name", ""))
    folder = _checkpoint_folder(job, state_dir, store)
    if folder is None:
        model = hf.base_model(model_name)[0]
    elif hf.registry.real_entry(model_name) is not None:
        model = hf.load_model(folder)
    else:
        try:
            # A tiny checkpoint saved with a template this server does not serve is refused here.
            tinylm.checkpoint_template(folder)
        except ValueError as exc:
            raise InferenceError(
                500, str(exc), kind="server_error", code="unsupported_chat_template"
            ) from None
        model = tinylm.build_model(model_name)
        tinylm.load_weights(model, folder)
    model.eval()
    return model


def new_generator(seed: int | None) -> torch.Generator:
    """The random source of one request: seeded when the caller gives a seed, so it repeats exactly."""
    import torch

    return torch.Generator().manual_seed(seed if seed is not None else secrets.randbits(62))


def tiny_prompt_ids(messages: list[dict[str, str]]) -> list[int]:
    """The tiny model's prompt for ``messages``: its chat template with an opened assistant turn.

    OpenAI's ``developer`` role is the system role of this template; other roles are refused.
    """
    from ct_core import chat_template

    renamed = [{**m, "role": "system"} if m["role"] == "developer" else m for m in messages]
    for index, message in enumerate(renamed):
        if message["role"] not in chat_template.ROLES:
            raise _bad_request(
                f"messages[{index}] has the role {message['role']!r}; this model's chat template has the "
                f"roles {', '.join(chat_template.ROLES)} (and developer, as system).",
                param=f"messages[{index}].role",
            )
    return chat_template.prompt_ids(renamed)


def token_text(token: int) -> str:
    """A token as a logprobs entry names it: its byte as text (escaped when not UTF-8 on its own)."""
    from ct_core import chat_template

    return chat_template.token_text(token)


def token_bytes(token: int) -> list[int] | None:
    from ct_local.model.tinylm import BYTE_TOKENS

    return [token] if token < BYTE_TOKENS else None


def logprob_entry(logprobs: torch.Tensor, token: int, top: int) -> dict[str, Any]:
    """OpenAI's ChatCompletionTokenLogprob for one drawn token, with its ``top`` likeliest alternatives."""
    import torch

    alternatives: list[dict[str, Any]] = []
    if top > 0:
        values, ids = torch.topk(logprobs, min(top, logprobs.numel()))
        alternatives = [
            {"token": token_text(alt), "logprob": float(value), "bytes": token_bytes(alt)}
            for value, alt in zip(values.tolist(), ids.tolist(), strict=True)
        ]
    return {
        "token": token_text(token),
        "logprob": float(logprobs[token]),
        "bytes": token_bytes(token),
        "top_logprobs": alternatives,
    }


def real_logprob_entry(tokenizer: Any, logprobs: torch.Tensor, token: int, top: int) -> dict[str, Any]:
    """:func:`logprob_entry` for a real model: tokens named and spelled by its tokenizer."""
    import torch

    def named(alt: int, value: float) -> dict[str, Any]:
        text = tokenizer.token_text(alt)
        return {"token": text, "logprob": value, "bytes": list(text.encode("utf-8"))}

    alternatives: list[dict[str, Any]] = []
    if top > 0:
        values, ids = torch.topk(logprobs, min(top, logprobs.numel()))
        alternatives = [named(alt, float(v)) for v, alt in zip(values.tolist(), ids.tolist(), strict=True)]
    return {**named(token, float(logprobs[token])), "top_logprobs": alternatives}


# --- request parsing ----------------------------------------------------------------------------


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, str]]
    max_completion_tokens: int | None
    temperature: float
    top_p: float
    seed: int | None
    n: int
    #: None without logprobs, else how many alternatives each token lists (0 to 20).
    top_logprobs: int | None
    stream: bool
    include_usage: bool


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _refuse_unsupported(body: dict[str, Any]) -> None:
    """400 unsupported_parameter for the first option this endpoint would otherwise have to ignore.

    An option sent as null is an option not given (OpenAI clients do that), so it passes.
    """
    if "max_tokens" in body:
        raise _bad_request(
            "max_tokens is not supported by this endpoint; use max_completion_tokens instead.",
            param="max_tokens",
            code="unsupported_parameter",
        )
    unknown = [key for key, value in body.items() if key not in HONOURED_OPTIONS and value is not None]
    if unknown:
        raise _unsupported(unknown)
    for key in NEUTRAL_ONLY_OPTIONS:
        value = body.get(key)
        if value is not None and not (_is_number(value) and value == 0):
            raise _bad_request(
                f"{key} other than 0 is not supported by this endpoint (its model applies no penalty).",
                param=key,
                code="unsupported_parameter",
            )


def _messages(raw: Any) -> list[dict[str, str]]:
    if not isinstance(raw, list) or not raw:
        raise _bad_request("messages must be a non-empty list.", param="messages")
    parsed: list[dict[str, str]] = []
    for index, message in enumerate(raw):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _bad_request(f"messages[{index}] needs a role.", param=f"messages[{index}]")
        content = message.get("content")
        if isinstance(content, list):
            # The content-parts form: only text parts mean anything to this model.
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        if not isinstance(content, str):
            raise _bad_request(f"messages[{index}].content must be text.", param=f"messages[{index}].content")
        parsed.append({"role": message["role"], "content": content})
    return parsed


def _top_logprobs(body: dict[str, Any]) -> int | None:
    wanted = body.get("logprobs")
    if wanted is not None and not isinstance(wanted, bool):
        raise _bad_request("logprobs must be true or false.", param="logprobs")
    top = body.get("top_logprobs")
    if top is None:
        return 0 if wanted else None
    if not _is_int(top) or not 0 <= top <= MAX_TOP_LOGPROBS:
        raise _bad_request(
            f"top_logprobs must be an integer from 0 to {MAX_TOP_LOGPROBS}.", param="top_logprobs"
        )
    if not wanted:
        raise _bad_request("top_logprobs needs logprobs set to true.", param="top_logprobs")
    return int(top)


def parse_chat(body: Any) -> ChatRequest:
    if not isinstance(body, dict):
        raise _bad_request("The request body must be a JSON object.")
    _refuse_unsupported(body)
    messages = _messages(body.get("messages"))
    limit = body.get("max_completion_tokens")
    if limit is not None and (not _is_int(limit) or limit < 1):
        raise _bad_request("max_completion_tokens must be a positive integer.", param="max_completion_tokens")
    temperature = body.get("temperature")
    if temperature is None:
        temperature = 1.0
    if not _is_number(temperature) or not 0 <= temperature <= 2:
        raise _bad_request("temperature must be a number from 0 to 2.", param="temperature")
    top_p = body.get("top_p")
    if top_p is None:
        top_p = 1.0
    if not _is_number(top_p) or not 0 <= top_p <= 1:
        raise _bad_request("top_p must be a number from 0 to 1.", param="top_p")
    seed = body.get("seed")
    if seed is not None and not _is_int(seed):
        raise _bad_request("seed must be an integer.", param="seed")
    n = body.get("n")
    if n is None:
        n = 1
    if not _is_int(n) or not 1 <= n <= MAX_CHOICES:
        raise _bad_request(f"n must be an integer from 1 to {MAX_CHOICES}.", param="n")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise _bad_request("stream must be true or false.", param="stream")
    options = body.get("stream_options")
    if options is not None and not stream:
        raise _bad_request("stream_options is only allowed when stream is true.", param="stream_options")
    if options is not None and not isinstance(options, dict):
        raise _bad_request("stream_options must be an object.", param="stream_options")
    include_usage = bool(stream) and isinstance(options, dict) and options.get("include_usage") is True
    return ChatRequest(
        model=str(body.get("model", "")),
        messages=messages,
        max_completion_tokens=limit,
        temperature=float(temperature),
        top_p=float(top_p),
        seed=seed,
        n=n,
        top_logprobs=_top_logprobs(body),
        stream=bool(stream),
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


def _visible_job(request: Request, model: Any) -> JobRow | None:
    """The deployment job ``model`` names, if the caller may see it at the path's location."""
    identity = caller_identity(request)
    loc = _inference_location(request)
    match = _MODEL_RE.fullmatch(model) if isinstance(model, str) else None
    job = server_state(request).store.get_job(match.group(1)) if match else None
    owner = owner_filter(request, identity)
    if (
        job is None
        or (job.database_name, job.schema_name, job.endpoint) != (loc.database, loc.schema, loc.endpoint)
        or (owner is not None and job.owner_role != owner)
        or _deployment_class(job) is None
    ):
        return None
    return job


def _find_deployment(request: Request, model: Any) -> JobRow:
    job = _visible_job(request, model)
    if job is None:
        raise _model_not_found()
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
        raise _model_not_found()
    return job


def _tokenizer_for(job: JobRow) -> Any:
    """A real model's tokenizer for the deployment's model; None for the tiny model."""
    from ct_local.model import hf

    return hf.text_tokenizer(str(job.sub_jobs[0].get("model_name", "")))


def _loaded(request: Request, job: JobRow) -> LoadedModel:
    state = server_state(request)
    registry: dict[str, LoadedModel] | None = getattr(request.app.state, "ct_inference_models", None)
    if registry is None:
        registry = {}
        request.app.state.ct_inference_models = registry
    if job.job_id not in registry:
        from ct_core import chat_template
        from ct_local.model.sampler import Decoder
        from ct_local.model.tinylm import ByteTokenizer

        model = _model_for(job, Path(state.settings.state_dir), state.store)
        tokenizer = _tokenizer_for(job)
        if tokenizer is not None:
            decoder = Decoder(model, tokenizer, tokenizer.stop_ids)
        else:
            # The tiny model ends an answer at its template's end of turn, or at the end of sequence.
            decoder = Decoder(model, ByteTokenizer(), frozenset(chat_template.STOP_IDS))
        registry[job.job_id] = LoadedModel(model, decoder, tokenizer=tokenizer)
    return registry[job.job_id]


# --- handlers ----------------------------------------------------------------------------------


async def chat_completions(request: Request) -> Response:
    if request.method != "POST":
        return Response(status_code=405)
    try:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            # Not only bad syntax: invalid UTF-8 and over-long integers are ValueErrors of json.loads too.
            raise _bad_request("The request body is not valid JSON.") from None
        model_field = body.get("model") if isinstance(body, dict) else None
        job = _find_deployment(request, model_field)
        chat = parse_chat(body)
        from ct_local.model import registry as model_registry

        if model_registry.real_entry(str(job.sub_jobs[0].get("model_name", ""))) is not None:
            # A real model's prompt goes through its own chat template.
            tokenizer = await run_in_threadpool(_tokenizer_for, job)
            prompt_ids = tokenizer.render_chat(chat.messages)
        else:
            prompt_ids = tiny_prompt_ids(chat.messages)
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
    completion = Completion(chat, loaded, prompt_ids, max_new, window)
    if chat.stream:
        return StreamingResponse(completion.sse(), media_type="text/event-stream")
    return JSONResponse(await run_in_threadpool(completion.whole))


def _model_object(job: JobRow) -> dict[str, Any]:
    return {
        "id": "sf-ct-" + job.job_id,
        "object": "model",
        "created": int(job.created_at),
        "owned_by": job.owner_role,
    }


def _is_listed(job: JobRow) -> bool:
    return job.status == SERVING_STATUS and _deployment_class(job) == SERVED_CLASS


async def list_models(request: Request) -> Response:
    if request.method != "GET":
        return Response(status_code=405)
    identity = caller_identity(request)
    try:
        loc = _inference_location(request)
    except InferenceError as exc:
        return exc.response()
    owner = owner_filter(request, identity)
    jobs = server_state(request).store.jobs_in(loc.database, loc.schema, loc.endpoint, owner)
    return JSONResponse({"object": "list", "data": [_model_object(job) for job in jobs if _is_listed(job)]})


async def retrieve_model(request: Request) -> Response:
    """One model of the list (``getDeploymentModel``); anything the list would not show is 404."""
    if request.method != "GET":
        return Response(status_code=405)
    try:
        job = _visible_job(request, request.path_params["model"])
        if job is None or not _is_listed(job):
            raise _model_not_found()
    except InferenceError as exc:
        return exc.response()
    return JSONResponse(_model_object(job))


async def unknown_route(request: Request) -> Response:
    """OpenAI's answer to a path it does not serve, so OpenAI clients report it as they would there."""
    caller_identity(request)
    message = f"Unknown request URL: {request.method} {request.url.path}. Please check the URL for typos."
    return InferenceError(404, message, kind="invalid_request_error", code="unknown_url").response()


@dataclass
class Piece:
    """What one drawn token adds to a choice: whole UTF-8 characters, its logprobs entry, the finish."""

    text: str
    logprob: dict[str, Any] | None
    finish: str | None


class _Choice:
    """One choice's text so far: each drawn token becomes a :class:`Piece` of whole characters."""

    def __init__(self, loaded: LoadedModel, top: int | None) -> None:
        self.tokenizer = loaded.tokenizer
        self.top = top
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.out: list[int] = []
        self.given = ""

    def piece(self, prompt: Any) -> Piece:
        """The piece of the token ``prompt`` (a sampler prompt) has just drawn."""
        token = prompt.out[-1]
        finish = prompt.finish if prompt.done else None
        if finish == "stop":
            # The end token is counted but is not part of the content, nor of its logprobs.
            return Piece(self._rest(), None, "stop")
        entry = None
        if self.top is not None:
            logprobs = prompt.step_logprobs
            if self.tokenizer is not None:
                entry = real_logprob_entry(self.tokenizer, logprobs, token, self.top)
            else:
                entry = logprob_entry(logprobs, token, self.top)
        text = self._text(token)
        if finish is not None:
            text += self._rest()
        return Piece(text, entry, finish)

    def _text(self, token: int) -> str:
        if self.tokenizer is None:
            from ct_core.chat_template import BYTE_TOKENS

            return self.decoder.decode(bytes([token]), final=False) if token < BYTE_TOKENS else ""
        # A real model's text is what its tokenizer decodes so far, less what earlier pieces gave (a
        # piece waits while its last character is incomplete).
        self.out.append(token)
        text = self.tokenizer.decode(self.out)
        piece = "" if text.endswith("\ufffd") else text[len(self.given) :]
        self.given += piece
        return piece

    def _rest(self) -> str:
        if self.tokenizer is None:
            return self.decoder.decode(b"", final=True)
        return self.tokenizer.decode(self.out)[len(self.given) :]


class Completion:
    """One chat completion: ``n`` choices decoded together by the sampler, whole or as SSE chunks."""

    def __init__(
        self, chat: ChatRequest, loaded: LoadedModel, prompt_ids: list[int], max_new: int, window: int
    ) -> None:
        self.chat, self.loaded, self.prompt_ids = chat, loaded, prompt_ids
        self.max_new, self.window = max_new, window
        self.id = "chatcmpl-" + uuid.uuid4().hex
        self.created = int(time.time())
        self.completion_tokens = 0

    def _pieces(self) -> Iterator[tuple[int, Piece]]:
        """``(choice index, piece)`` for every token drawn, in the order the choices draw them."""
        from ct_local.dataplane.sampling_plane import SamplingParams
        from ct_local.model.sampler import Prompt

        params = SamplingParams(
            max_tokens=self.max_new, temperature=self.chat.temperature, top_p=self.chat.top_p
        )
        # One random source for all choices: a seeded request draws the same n choices every time.
        generator = new_generator(self.chat.seed)
        prompts = []
        for index in range(self.chat.n):
            prompt = Prompt(index, list(self.prompt_ids), params, self.window)
            prompt.generator = generator
            prompt.keep_logprobs = self.chat.top_logprobs is not None
            prompts.append(prompt)
        choices = [_Choice(self.loaded, self.chat.top_logprobs) for _ in prompts]
        with self.loaded.lock:
            for drawn in self.loaded.decoder.steps(prompts, lambda: False):
                for prompt in drawn:
                    self.completion_tokens += 1
                    yield prompt.index, choices[prompt.index].piece(prompt)

    def _usage(self) -> dict[str, int]:
        prompt = len(self.prompt_ids)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": self.completion_tokens,
            "total_tokens": prompt + self.completion_tokens,
        }

    def _logprobs(self, entries: list[dict[str, Any]]) -> dict[str, Any] | None:
        return {"content": entries, "refusal": None} if self.chat.top_logprobs is not None else None

    def whole(self) -> dict[str, Any]:
        parts: list[list[str]] = [[] for _ in range(self.chat.n)]
        entries: list[list[dict[str, Any]]] = [[] for _ in range(self.chat.n)]
        finishes = ["length"] * self.chat.n
        for index, piece in self._pieces():
            parts[index].append(piece.text)
            if piece.logprob is not None:
                entries[index].append(piece.logprob)
            finishes[index] = piece.finish or finishes[index]
        choices = [
            {
                "index": index,
                "message": {"role": "assistant", "content": "".join(parts[index])},
                "finish_reason": finishes[index],
                "logprobs": self._logprobs(entries[index]),
            }
            for index in range(self.chat.n)
        ]
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.chat.model,
            "choices": choices,
            "usage": self._usage(),
        }

    def _chunk(
        self,
        index: int,
        delta: dict[str, Any],
        finish: str | None,
        entries: list[dict[str, Any]] | None = None,
    ) -> str:
        choice = {
            "index": index,
            "delta": delta,
            "finish_reason": finish,
            "logprobs": self._logprobs(entries) if entries else None,
        }
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.chat.model,
            "choices": [choice],
        }
        if self.chat.include_usage:
            chunk["usage"] = None
        return "data: " + json.dumps(chunk) + "\n\n"

    def sse(self) -> Iterator[str]:
        # A sync generator: Starlette runs it in a worker thread, so the loop never blocks the server.
        # Every choice opens with its role chunk; then each chunk carries the text one choice's
        # token completed, and a choice's last chunk its finish_reason. Choices decode together,
        # so their chunks interleave (each names its index, as OpenAI's do).
        for index in range(self.chat.n):
            yield self._chunk(index, {"role": "assistant", "content": ""}, None)
        # Logprobs of tokens that end mid-character wait for the chunk that completes the text.
        pending: list[list[dict[str, Any]]] = [[] for _ in range(self.chat.n)]
        for index, piece in self._pieces():
            if piece.logprob is not None:
                pending[index].append(piece.logprob)
            if piece.text:
                yield self._chunk(index, {"content": piece.text}, None, pending[index])
                pending[index] = []
            if piece.finish is not None:
                if pending[index]:
                    yield self._chunk(index, {"content": ""}, None, pending[index])
                    pending[index] = []
                yield self._chunk(index, {}, piece.finish)
        if self.chat.include_usage:
            usage = {
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.chat.model,
                "choices": [],
                "usage": self._usage(),
            }
            yield "data: " + json.dumps(usage) + "\n\n"
        yield "data: [DONE]\n\n"

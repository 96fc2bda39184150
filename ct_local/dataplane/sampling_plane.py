"""The sampling side of the local data plane: generate, generate-stream, weight sync, prefix cache.

The HTTP handlers here are called by :class:`ct_local.dataplane.training_plane.TrainingDataPlane`
and use its public methods to check, route and queue work. They read and check a request before it
is queued (so a bad prompt or parameter is a 400, not a failed request), pick the sampling sub-job
(``?sub_job_id=`` or the job's only sampling sub-job), and hand the frame to that sub-job's worker,
which samples in ct_local.model.sampler. Streaming events, cancel flags and synced weights travel
between the event loop and the workers on the data plane's boards (ct_local.dataplane.boards).

This module does not import torch; ct_local.model.sampler does, and only worker threads import it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ct_core import wire
from ct_local.dataplane.boards import CancelBoard, EventBoard
from ct_local.dataplane.chunk_groups import is_request_chunk
from ct_local.http.errors import RequestValidationError, ServiceError, invalid_request
from ct_local.model import registry, tinylm
from ct_local.storage.store import JobRow

if TYPE_CHECKING:
    from ct_local.dataplane.plane_api import HandlerPlane
    from ct_local.storage.requests import DataPlaneStore, RequestRow

# vLLM's default output length when sampling_params omits max_tokens.
DEFAULT_MAX_TOKENS = 16
# Log-probability alternatives per position (vLLM's own default cap is 20).
MAX_LOGPROBS = 20
# Below this temperature vLLM samples greedily; dividing logits by a smaller one overflows to inf.
GREEDY_BELOW_TEMPERATURE = 1e-5
# A seed is what torch.Generator.manual_seed takes.
MAX_SEED = 2**64 - 1
# Weight formats of a weight sync; "lora" sends only the adapter tensors.
WEIGHT_FORMATS = ("vllm", "hf", "lora")
DEFAULT_WEIGHT_FORMAT = "vllm"
# What must agree between the training and sampling peft_config for an adapter sync.
LORA_MATCH_KEYS = ("r", "lora_alpha", "target_modules")
GENERATE_KINDS = ("generate", "generate-stream")
# The sampling parameters this server implements; anything else is refused by name.
SAMPLING_KEYS = frozenset(
    {
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "seed",
        "stop",
        "stop_token_ids",
        "logprobs",
        "prompt_logprobs",
        "ignore_eos",
        "n",
    }
)


# --- request parsing (shared with the sampler) ------------------------------------------------------


@dataclass
class SamplingParams:
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    logprobs: int | None = None
    prompt_logprobs: int | None = None
    ignore_eos: bool = False


@dataclass
class GenerateRequest:
    prompts: list[str | list[int]]
    params: list[SamplingParams]
    routing_keys: list[str | None]
    strict: bool


def _int(value: Any, where: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RequestValidationError([([where], f"{where} must be an integer >= {minimum}")])
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RequestValidationError([([where], f"{where} must be a finite number")])
    return float(value)


def parse_params(raw: Any, where: str) -> SamplingParams:
    """One sampling_params object (or null) into :class:`SamplingParams`."""
    if raw is None:
        return SamplingParams()
    if not isinstance(raw, dict):
        raise RequestValidationError([([where], "sampling_params must be an object or null")])
    unknown = sorted(set(raw) - SAMPLING_KEYS)
    if unknown:
        raise RequestValidationError(
            [
                (
                    [where],
                    f"unsupported sampling_params: {', '.join(unknown)}; "
                    f"supported: {', '.join(sorted(SAMPLING_KEYS))}",
                )
            ]
        )
    p = SamplingParams()
    if raw.get("n", 1) != 1:
        raise RequestValidationError([([where, "n"], "this server returns one completion per prompt (n=1)")])
    if raw.get("max_tokens") is not None:
        p.max_tokens = _int(raw["max_tokens"], f"{where}.max_tokens", minimum=1)
    if raw.get("temperature") is not None:
        p.temperature = _number(raw["temperature"], f"{where}.temperature")
        if p.temperature < 0:
            raise RequestValidationError([([where, "temperature"], "temperature must be >= 0")])
        if p.temperature < GREEDY_BELOW_TEMPERATURE:
            p.temperature = 0.0
    if raw.get("top_p") is not None:
        p.top_p = _number(raw["top_p"], f"{where}.top_p")
        if not 0 < p.top_p <= 1:
            raise RequestValidationError([([where, "top_p"], "top_p must be in (0, 1]")])
    if raw.get("top_k") is not None:
        top_k = _int(raw["top_k"], f"{where}.top_k", minimum=-1)
        p.top_k = max(top_k, 0)  # vLLM reads -1 (and 0) as "no top-k"
    if raw.get("seed") is not None:
        p.seed = _int(raw["seed"], f"{where}.seed", minimum=0)
        if p.seed > MAX_SEED:
            raise RequestValidationError([([where, "seed"], "seed must be at most 2**64 - 1")])
    stop = raw.get("stop")
    if stop is not None:
        stops = [stop] if isinstance(stop, str) else stop
        if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
            raise RequestValidationError(
                [([where, "stop"], "stop must be a string or a list of non-empty strings")]
            )
        p.stop = tuple(stops)
    ids = raw.get("stop_token_ids")
    if ids is not None:
        if not isinstance(ids, list):
            raise RequestValidationError(
                [([where, "stop_token_ids"], "stop_token_ids must be a list of ints")]
            )
        p.stop_token_ids = tuple(_int(i, f"{where}.stop_token_ids", minimum=0) for i in ids)
    for name in ("logprobs", "prompt_logprobs"):
        if raw.get(name) is not None:
            k = _int(raw[name], f"{where}.{name}", minimum=0)
            if k > MAX_LOGPROBS:
                raise RequestValidationError([([where, name], f"{name} must be at most {MAX_LOGPROBS}")])
            setattr(p, name, k)
    if raw.get("ignore_eos") is not None:
        if not isinstance(raw["ignore_eos"], bool):
            raise RequestValidationError([([where, "ignore_eos"], "ignore_eos must be a boolean")])
        p.ignore_eos = raw["ignore_eos"]
    return p


def _token_list(value: Any, index: int) -> list[int]:
    """A pre-tokenized prompt (JSON list or a 1-D integer array from the tensor section)."""
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        if len(value.shape) != 1 or value.dtype.kind not in "iu":
            raise RequestValidationError([(["prompts", str(index)], "a prompt tensor must be 1-D integers")])
        return [int(v) for v in value.tolist()]
    if not all(isinstance(t, int) and not isinstance(t, bool) for t in value):
        raise RequestValidationError([(["prompts", str(index)], "a token-id prompt must hold integers only")])
    return list(value)


def _aligned(value: Any, count: int, name: str) -> list[Any]:
    if isinstance(value, list):
        if len(value) != count:
            raise RequestValidationError(
                [
                    (
                        [name],
                        f"{name} has {len(value)} entries for {count} prompts; "
                        "send one value or one per prompt",
                    )
                ]
            )
        return value
    return [value] * count


def parse_generate(
    frame: bytes,
    *,
    max_seq_len: int | None,
    vocab_size: int | None = None,
    encode: Callable[[str], Sequence[int]] | None = None,
) -> GenerateRequest:
    """Decode and check a logical generate request frame; raises RequestValidationError (400).

    ``vocab_size`` bounds token-id prompts (the tiny model's vocabulary when not given). ``encode``
    is the model's tokenizer (:func:`text_encoder`): a text prompt is counted against
    ``max_seq_len`` in its tokens. Without it, text prompts are left to the sampler, which counts
    them with the same tokenizer."""
    vocabulary = vocab_size or tinylm.VOCAB_SIZE
    try:
        body = wire.loads(frame, backend="numpy")
    except wire.WireError as exc:
        raise RequestValidationError([([], f"the body is not a valid DSSST1 frame: {exc}")]) from exc
    if not isinstance(body, dict):
        raise RequestValidationError([([], "the frame must hold an object with prompts")])
    raw_prompts = body.get("prompts")
    if hasattr(raw_prompts, "shape"):
        raw_prompts = [raw_prompts]  # a bare 1-D tensor is one prompt
    elif isinstance(raw_prompts, list) and raw_prompts and all(isinstance(t, int) for t in raw_prompts):
        raw_prompts = [raw_prompts]  # a flat id list is one prompt
    if not isinstance(raw_prompts, list) or not raw_prompts:
        raise RequestValidationError([(["prompts"], "prompts must be a non-empty list")])
    prompts: list[str | list[int]] = []
    for i, prompt in enumerate(raw_prompts):
        if isinstance(prompt, str):
            # Uncounted (None) without the tokenizer: the sampler counts it with its own.
            ids = [] if not prompt else list(encode(prompt)) if encode is not None else None
            prompts.append(prompt)
        elif isinstance(prompt, list) or hasattr(prompt, "shape"):
            ids = _token_list(prompt, i)
            # Both ends: a negative id passed this check once and failed in the embedding (IndexError).
            if any(not 0 <= t < vocabulary for t in ids):
                raise RequestValidationError(
                    [(["prompts", str(i)], f"token ids must lie in [0, {vocabulary}) for this model")]
                )
            prompts.append(ids)
        else:
            raise RequestValidationError(
                [(["prompts", str(i)], "a prompt is a string or a list of token ids")]
            )
        if ids is not None and not ids:
            raise RequestValidationError([(["prompts", str(i)], "a prompt must not be empty")])
        if ids is not None and max_seq_len is not None and len(ids) >= max_seq_len:
            raise RequestValidationError(
                [
                    (
                        ["prompts", str(i)],
                        f"prompt {i} has {len(ids)} tokens; the sampling sub-job's max_seq_len is "
                        f"{max_seq_len}, "
                        "which must leave room for at least one generated token",
                    )
                ]
            )
    count = len(prompts)
    params = [
        parse_params(raw, f"sampling_params[{i}]")
        for i, raw in enumerate(_aligned(body.get("sampling_params"), count, "sampling_params"))
    ]
    keys = _aligned(body.get("routing_key"), count, "routing_key")
    if not all(k is None or isinstance(k, str) for k in keys):
        raise RequestValidationError(
            [(["routing_key"], "routing_key must be a string, null, or a list of them")]
        )
    strict = body.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise RequestValidationError([(["strict"], "strict must be a boolean")])
    if strict and any(k is None for k in keys):
        raise RequestValidationError(
            [(["routing_key"], "strict routing needs a routing_key for every prompt")]
        )
    return GenerateRequest(prompts, params, keys, bool(strict))


def text_encoder(sub_job: dict[str, Any]) -> Callable[[str], Sequence[int]]:
    """How the sampler of ``sub_job`` turns a text prompt into tokens: the real model's own
    tokenizer, or the tiny model's bytes. Loading a tokenizer reads files: call it off the loop."""
    if registry.real_entry(str(sub_job.get("model_name") or "")) is not None:
        from ct_local.model import hf  # imports torch; only a server of real models gets here

        tokenizer = hf.text_tokenizer(str(sub_job["model_name"]))
        if tokenizer is not None:
            return tokenizer.encode
    return tinylm.ByteTokenizer().encode


async def _checked(frame: bytes, sub_job: dict[str, Any]) -> GenerateRequest:
    """:func:`parse_generate` with the sub-job's window, vocabulary and tokenizer."""
    window, vocabulary = max_seq_len_of(sub_job), registry.vocab_size_of(sub_job)
    if registry.real_entry(str(sub_job.get("model_name") or "")) is None:
        return parse_generate(frame, max_seq_len=window, vocab_size=vocabulary, encode=text_encoder(sub_job))

    def check() -> GenerateRequest:
        encode = text_encoder(sub_job)
        return parse_generate(frame, max_seq_len=window, vocab_size=vocabulary, encode=encode)

    # A real tokenizer loads from files and may take a while over a long prompt: off the event loop.
    return await run_in_threadpool(check)


def max_seq_len_of(sub_job: dict[str, Any]) -> int | None:
    config = sub_job.get("inference_config")
    raw = config.get("max_seq_len") if isinstance(config, dict) else None
    return int(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0 else None


def clear_cache_on_sync(sub_job: dict[str, Any]) -> bool:
    """A sampling sub-job may opt out of clearing its prefix cache on weight sync (vllm_config)."""
    config = sub_job.get("inference_config")
    vllm = config.get("vllm_config") if isinstance(config, dict) else None
    return not (isinstance(vllm, dict) and vllm.get("clear_cache_on_weight_sync") is False)


# --- routing -------------------------------------------------------------------------------------------


def sampling_sub_jobs(job: JobRow) -> list[dict[str, Any]]:
    return [s for s in job.sub_jobs if s.get("job_type") == "sampling"]


def route_generate(job: JobRow, sub_job_id: str | None) -> dict[str, Any]:
    """The named sampling sub-job, or the only one; several without a name is refused."""
    samplers = sampling_sub_jobs(job)
    ids = [str(s["sub_job_id"]) for s in samplers]
    if sub_job_id:
        for sub in job.sub_jobs:
            if sub["sub_job_id"] == sub_job_id:
                if sub.get("job_type") != "sampling":
                    raise invalid_request(
                        f"sub_job_id {sub_job_id} is not a sampling sub-job; "
                        f"sampling sub-jobs: {', '.join(ids) or 'none'}"
                    )
                return sub
        raise ServiceError(
            404,
            f"sub-job {sub_job_id} is not part of job {job.job_id}; "
            f"sampling sub-jobs: {', '.join(ids) or 'none'}",
            404,
        )
    if not samplers:
        raise invalid_request(f"Training job {job.job_id} has no sampling sub-job")
    if len(samplers) > 1:
        raise invalid_request(
            f"job {job.job_id} has several sampling sub-jobs; pass sub_job_id, one of {', '.join(ids)}"
        )
    return samplers[0]


# --- handlers (called by TrainingDataPlane) ------------------------------------------------------------


async def handle_generate(plane: HandlerPlane, request: Request, job: JobRow, action: str) -> Response:
    """POST generate / generate-stream: check, then queue on the sampling sub-job's worker."""
    plane.require_running(job)
    sub = route_generate(job, request.query_params.get("sub_job_id"))
    frame = await plane.read_body(request)
    if action == "generate-stream":
        if is_request_chunk(frame):
            raise invalid_request("generate-stream takes one DSSST1 frame, not request chunks")
        parsed = await _checked(frame, sub)
        request_id = plane.queue_request(job, sub, action, frame=frame)
        plane.boards.events.open(request_id)
        return JSONResponse({"request_id": request_id, "job_id": job.job_id, "count": len(parsed.prompts)})
    if is_request_chunk(frame):
        # Frames over 60 MiB arrive as request chunks; the whole frame is checked by the sampler.
        return await plane.schedule_frame(job, sub, action, frame, "generate")
    await _checked(frame, sub)
    return plane.enqueue(job, sub, action, frame=frame)


def weight_sync(
    plane: HandlerPlane, job: JobRow, sub_job_id: Any, sub_job_type: Any, payload: dict[str, Any]
) -> Response:
    """Queue a copy of the training weights (full, or the LoRA adapter) into sampling sub-jobs."""
    plane.require_running(job)
    by_id = {str(s["sub_job_id"]): s for s in job.sub_jobs}
    receiver = plane.route_sub_job(job, sub_job_id, sub_job_type, default_type="training")
    source_id = payload.get("source_sub_job_id") or receiver["sub_job_id"]
    source = by_id.get(str(source_id))
    if source is None or source.get("job_type") != "training":
        raise invalid_request(f"source_sub_job_id {source_id} is not a training sub-job of job {job.job_id}")
    raw_targets = payload.get("target_sub_job_ids")
    if raw_targets is None:
        targets = sampling_sub_jobs(job)
    elif isinstance(raw_targets, list) and all(isinstance(t, str) for t in raw_targets) and raw_targets:
        targets = []
        for target_id in raw_targets:
            target = by_id.get(target_id)
            if target is None or target.get("job_type") != "sampling":
                raise invalid_request(f"target {target_id} is not a sampling sub-job of job {job.job_id}")
            targets.append(target)
    else:
        raise RequestValidationError(
            [
                (
                    ["payload", "target_sub_job_ids"],
                    "target_sub_job_ids must be a non-empty list of sub-job ids",
                )
            ]
        )
    if not targets:
        raise invalid_request(f"job {job.job_id} has no sampling sub-job to sync weights into")
    weight_format = payload.get("weight_format") or DEFAULT_WEIGHT_FORMAT
    if weight_format not in WEIGHT_FORMATS:
        raise RequestValidationError(
            [(["payload", "weight_format"], f"weight_format must be one of {', '.join(WEIGHT_FORMATS)}")]
        )
    if weight_format == "lora":
        _check_lora(source, targets)
    params = {
        "targets": [str(t["sub_job_id"]) for t in targets],
        "clear_cache": {str(t["sub_job_id"]): clear_cache_on_sync(t) for t in targets},
        "weight_format": weight_format,
    }
    return plane.enqueue(job, source, "weight-sync", params=params)


def _check_lora(source: dict[str, Any], targets: list[dict[str, Any]]) -> None:
    training = source.get("training_config")
    train_peft = training.get("peft_config") if isinstance(training, dict) else None
    missing = [] if train_peft else [str(source["sub_job_id"])]
    for target in targets:
        config = target.get("inference_config")
        if not (isinstance(config, dict) and config.get("peft_config")):
            missing.append(str(target["sub_job_id"]))
    if missing:
        raise invalid_request(
            "weight_format 'lora' needs peft_config on both the training and the sampling sub-jobs "
            f"when the job is created; missing on {', '.join(missing)}"
        )
    # The sampler's adapter must have the trainer's shape and scale, or the tensors cannot land.
    train_view = _lora_identity(train_peft if isinstance(train_peft, dict) else {})
    for target in targets:
        target_view = _lora_identity(target["inference_config"]["peft_config"])
        differing = [key for key in LORA_MATCH_KEYS if train_view.get(key) != target_view.get(key)]
        if differing:
            raise invalid_request(
                f"peft_config of {target['sub_job_id']} does not match the training sub-job's "
                f"({', '.join(differing)} differ); r, lora_alpha and target_modules must be equal for "
                "weight_format 'lora'"
            )


def _lora_identity(peft_config: dict[str, Any]) -> dict[str, Any]:
    # Defaults as the client fills them in a peft_config; module order does not matter.
    view = {"r": 8, "lora_alpha": 8, **peft_config}
    modules = view.get("target_modules")
    if isinstance(modules, list | tuple):
        view["target_modules"] = sorted(str(m) for m in modules)
    return view


def reset_prefix_cache(
    plane: HandlerPlane, job: JobRow, sub_job_id: Any, sub_job_type: Any, payload: dict[str, Any]
) -> Response:
    """Answered inline: the local sampler keeps no prefix cache between requests, so it is always empty."""
    plane.require_running(job)
    sub = plane.route_sub_job(
        job, sub_job_id, sub_job_type or ("sampling" if sub_job_id is None else None), default_type="sampling"
    )
    if sub.get("job_type") != "sampling":
        raise invalid_request(f"reset-prefix-cache runs on a sampling sub-job, not on {sub['sub_job_id']}")
    drain = payload.get("drain", True)
    if not isinstance(drain, bool):
        raise RequestValidationError([(["payload", "drain"], "drain must be a boolean")])
    return JSONResponse(
        {"job_id": job.job_id, "sub_job_id": sub["sub_job_id"], "success": True, "drain": drain}
    )


def cancel_running(dp: DataPlaneStore, cancels: CancelBoard, row: RequestRow) -> bool:
    """Cancel a generation that is already running: flag it (the sampler stops at its next token).

    False when it is not running, or finished before the cancel could be recorded.
    """
    if row.kind not in GENERATE_KINDS or row.status != "running":
        return False
    cancels.request(row.request_id)
    if dp.finish_request(row.request_id, "cancelled", error="cancelled by the caller"):
        return True
    # It finished after ``row`` was read: it stays finished, and nothing is left to stop.
    cancels.forget(row.request_id)
    return False


def stream_page(events: EventBoard, row: RequestRow, body: dict[str, Any], max_events: int) -> dict[str, Any]:
    """A generate-stream poll drains up to max_events events: each event is delivered once."""
    body["events"] = events.drain(row.request_id, max_events)
    body["next_cursor"] = ""
    return body

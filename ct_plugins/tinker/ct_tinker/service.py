"""The Tinker HTTP API, translated into Cortex Training jobs and data-plane requests.

One implementation for both ways of running it: inside `ct local serve` (the `ct_local_services`
hook, `embedded_service`) and in front of any Cortex Training endpoint (`ct tinker serve`).

What maps to what (docs/tinker.md has the user's view):

- a session: an id; heartbeats and telemetry are answered and dropped.
- a training client (`create_model`): a job with a LoRA training sub-job (rank = peft `r`) and a
  sampling sub-job on the same base model; its model id is the job id.
- `forward_backward`: with `backend_losses` (inside `ct local serve`), one forward-backward request
  whose batch names the Tinker loss and carries its per-token inputs, its result every target's
  log-probability; otherwise (cross-entropy only) a forward request (the per-token
  log-probabilities the SDK reads back) then a forward-backward request on the training sub-job,
  sent back to back so they run in order on the same weights. `forward`: a forward request.
- `optim_step`: a step with the call's learning rate.
- `save_weights_for_sampler`: a weight sync from the training to the sampling sub-job (and, with a
  name, a weights-only checkpoint); `save_weights`: a resumable checkpoint; `load_weights`: a load.
- sampling (`asample`): a generate request on the job's sampling sub-job.
- futures: each call is one Python future, keyed by a request id the service hands out; calls of
  one training client are submitted in arrival order by one thread, so the SDK's pipelining keeps
  the order Cortex Training guarantees for a sub-job's requests.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import datetime
import json
import logging
import math
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from ct_core.fs import atomic_write
from ct_tinker import wire
from ct_tinker.pacing import Pacer, batch_key
from ct_tinker.tokenizer import ensure_byte_tokenizer

log = logging.getLogger(__name__)

PREFIX = "/api/v1"
#: The longest a retrieve_future call holds the request waiting for its result before answering
#: "try again" (the SDK waits 45 s for each retrieve answer, and asks again at once).
RETRIEVE_WAIT_S = 20.0
#: Where the jobs of the translation live on the Cortex Training endpoint.
DEFAULT_DATABASE = "TINKER_DB"
DEFAULT_SCHEMA = "PUBLIC"
#: The checkpoint records the service keeps in its state dir (JSON; one object keyed by Tinker path).
CHECKPOINTS_FILE = "checkpoints.json"
#: One checkpoint of a training run, as the SDK addresses it (`tinker://RUN/KIND/NAME`).
CHECKPOINT_ROUTE = "/training_runs/{model_id}/checkpoints/{kind}/{name}"
#: The sequence length of the jobs a training client creates.
MAX_SEQ_LEN = 1024
#: Tinker's Adam defaults; a job is created with them, and an optim_step asking for other betas,
#: eps or weight decay is refused (Cortex Training fixes them when the job is created).
ADAM_DEFAULTS = {"beta1": 0.9, "beta2": 0.95, "eps": 1e-12, "weight_decay": 0.0}
DEFAULT_LR = 1e-4
#: The LoRA target modules of Tinker's train_attn and train_mlp (Hugging Face Llama/Qwen names); the
#: unembedding is never adapted (train_unembed is accepted and documented as ignored).
ATTENTION_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP_MODULES = ("gate_proj", "up_proj", "down_proj")
#: The losses a training backend that takes them by name computes (ct local serve's does: the
#: batch's processing.loss_fn, with a sum reduction and each target's log-probability returned).
BACKEND_LOSSES = ("cross_entropy", "importance_sampling", "ppo")
#: The one loss the Cortex Training contract itself can express (a weighted cross-entropy mean).
PORTABLE_LOSSES = ("cross_entropy",)
#: What each loss reads from a datum's loss_fn_inputs besides target_tokens, and the
#: loss_fn_config keys it takes (ppo's ratio bounds; Tinker's defaults are 0.8 and 1.2).
LOSS_INPUTS = {
    "cross_entropy": ("weights",),
    "importance_sampling": ("logprobs", "advantages"),
    "ppo": ("logprobs", "advantages"),
}
LOSS_CONFIG_KEYS = {"ppo": ("clip_low_threshold", "clip_high_threshold")}
IGNORE_INDEX = -100
#: ppo's ratio bounds when loss_fn_config leaves them out (Tinker's: 1 - 0.2 and 1 + 0.2).
PPO_CLIP_LOW = 0.8
PPO_CLIP_HIGH = 1.2
#: The header of the key the SDK sends with every POST (kept when it resends the call), the routes
#: whose calls start work and so run once per key, and how many answers are kept for repeats.
IDEMPOTENCY_HEADER = "x-idempotency-key"
STARTS_WORK = frozenset(
    {
        "create_model",
        "forward_backward",
        "optim_step",
        "save_weights_for_sampler",
        "save_weights",
        "load_weights",
        "asample",
    }
)
IDEMPOTENCY_ANSWERS = 100_000
#: How many threads poll Cortex Training results for all training clients.
POLL_WORKERS = 16


class TinkerRefusal(Exception):
    """A call this service answers with an error in the SDK's shape."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class UserError(Exception):
    """A request whose future fails with the SDK's "user" error category."""


@dataclass
class TrainingModel:
    """One training client: its owner, job and sub-jobs, and the thread that submits in order."""

    model_id: str
    owner: str
    base_model: str
    rank: int
    job_id: str
    ready: concurrent.futures.Future[None]
    submit: concurrent.futures.ThreadPoolExecutor
    targets: list[str] = field(default_factory=list)
    #: Polls the results of the client's requests one at a time, in submission order: the data plane
    #: runs a sub-job's requests in that order, so a later one is never done before an earlier one
    #: and polling it meanwhile would only add requests to the server.
    finish: concurrent.futures.ThreadPoolExecutor = field(
        default_factory=lambda: concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tinker-poll")
    )
    #: The Adam settings the trainer holds (per_step_optimizer), as the job was created with them;
    #: None when unknown (after a load, or a refused settings request), so the next step sends them.
    optimizer: dict[str, Any] | None = field(default_factory=lambda: job_optimizer_settings())
    #: When the polling thread reads each result (ct_tinker.pacing).
    pace: Pacer = field(default_factory=Pacer)

    @property
    def training_sub_job(self) -> str:
        return f"{self.job_id}:training:0"

    @property
    def sampling_sub_job(self) -> str:
        return f"{self.job_id}:sampling:0"


@dataclass
class SamplingSession:
    session_id: str
    owner: str
    model_id: str
    base_model: str


@dataclass
class TinkerState:
    sessions: dict[str, str] = field(default_factory=dict)
    models: dict[str, TrainingModel] = field(default_factory=dict)
    samplers: dict[str, SamplingSession] = field(default_factory=dict)
    futures: dict[str, tuple[str, concurrent.futures.Future[Any]]] = field(default_factory=dict)
    checkpoints: dict[str, dict[str, Any]] = field(default_factory=dict)


def _answer(result: Any) -> Response:
    return result if isinstance(result, Response) else JSONResponse(result)


def _replay(first: tuple[int, bytes, str]) -> Response:
    status, body, media_type = first
    return Response(body, status_code=status, media_type=media_type or None)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message, "detail": message, "message": message}, status_code=status)


class TinkerService:
    """The Tinker routes over Cortex Training.

    `client_for(owner)` gives the ct_core client that acts for a caller's role; `authenticate`
    turns a request into that role (raising TinkerRefusal); `models()` lists the models served.
    """

    def __init__(
        self,
        *,
        client_for: Callable[[str], Any],
        authenticate: Callable[[Request], str],
        state_dir: Path,
        database: str | None = DEFAULT_DATABASE,
        schema: str | None = DEFAULT_SCHEMA,
        tokenizer_for: Callable[[str], str | None] | None = None,
        backend_losses: bool = False,
        tokenizer_as_model_name: bool = False,
        per_step_optimizer: bool = False,
    ) -> None:
        """`backend_losses`: the training backend computes Tinker's losses itself, by name (ct local
        serve's does); without it only cross-entropy is translated, into the contract's weighted mean.
        `tokenizer_as_model_name`: the model name the SDK is told (get-info, a sampler's base model)
        is the tokenizer folder, since a sampling client loads its tokenizer by that name alone.
        `per_step_optimizer`: the trainer takes Adam settings per step (a forward whose batch sets
        them, ct local serve's does), so an optim_step's betas, eps, weight decay and clipping apply;
        without it only the learning rate may change and other values than the job's are refused."""
        self.client_for = client_for
        self.backend_losses = backend_losses
        self.tokenizer_as_model_name = tokenizer_as_model_name
        self.per_step_optimizer = per_step_optimizer
        self.tokenizer_for = tokenizer_for
        self.authenticate = authenticate
        self.state_dir = state_dir
        self.database = database
        self.schema = schema
        self.state = TinkerState()
        self.lock = threading.Lock()
        self.pollers = concurrent.futures.ThreadPoolExecutor(POLL_WORKERS, thread_name_prefix="tinker-poll")
        self._tokenizer: Path | None = None
        # Answers by (owner, route, idempotency key), oldest first; touched on the event loop only.
        self._answers: collections.OrderedDict[
            tuple[str, str, str], asyncio.Future[tuple[int, bytes, str]]
        ] = collections.OrderedDict()
        saved = state_dir / CHECKPOINTS_FILE
        if saved.is_file():
            self.state.checkpoints = json.loads(saved.read_text(encoding="utf-8"))

    # --- plumbing -------------------------------------------------------------------------------

    def stop(self) -> None:
        with self.lock:
            models = list(self.state.models.values())
        for model in models:
            model.submit.shutdown(wait=False, cancel_futures=True)
            model.finish.shutdown(wait=False, cancel_futures=True)
        self.pollers.shutdown(wait=False, cancel_futures=True)

    def routes(self) -> list[BaseRoute]:
        """One mount at the API's prefix: inside `ct local serve`, whose every request is matched
        against the services' routes before the server's own, a data-plane request then costs one
        prefix test here rather than one per Tinker route."""
        post = {
            "/client/config": self.client_config,
            "/client/dynamic_config": self.dynamic_config,
            "/create_session": self.create_session,
            "/session_heartbeat": self.heartbeat,
            "/telemetry": self.telemetry,
            "/create_model": self.create_model,
            "/get_info": self.get_info,
            "/forward_backward": self.forward_backward,
            "/optim_step": self.optim_step,
            "/save_weights_for_sampler": self.save_weights_for_sampler,
            "/save_weights": self.save_weights,
            "/load_weights": self.load_weights,
            "/create_sampling_session": self.create_sampling_session,
            "/asample": self.asample,
            "/retrieve_future": self.retrieve_future,
            "/sessions/{session_id}/finish": self.finish_session,
            "/weights_info": self.weights_info,
            "/copy_weights": self.no_equivalent,
            CHECKPOINT_ROUTE + "/publish": self.no_equivalent,
        }
        get = {
            "/get_server_capabilities": self.capabilities,
            "/healthz": self.healthz,
            "/training_runs": self.list_training_runs,
            "/training_runs/{model_id}": self.get_training_run,
            "/training_runs/{model_id}/checkpoints": self.list_checkpoints,
            "/samplers/{sampler_id}": self.get_sampler,
        }
        other = [
            (CHECKPOINT_ROUTE, self.delete_checkpoint, "DELETE"),
            (CHECKPOINT_ROUTE + "/publish", self.no_equivalent, "DELETE"),
            (CHECKPOINT_ROUTE + "/ttl", self.no_equivalent, "PUT"),
        ]
        routes = [Route(path, self._h(h), methods=["POST"]) for path, h in post.items()]
        routes += [Route(path, self._h(h), methods=["GET"]) for path, h in get.items()]
        routes += [Route(path, self._h(h), methods=[method]) for path, h, method in other]
        routes.append(
            Route("/{rest:path}", self._h(self.unsupported), methods=["GET", "POST", "PUT", "DELETE"])
        )
        return [Mount(PREFIX, routes=routes)]

    def _h(self, handler: Callable[[Request, str], Any]) -> Callable[[Request], Any]:
        once = handler.__name__ in STARTS_WORK

        async def route(request: Request) -> Response:
            try:
                owner = self.authenticate(request)
                key = request.headers.get(IDEMPOTENCY_HEADER, "").strip() if once else ""
                if not key:
                    return _answer(await handler(request, owner))
                return await self._once((owner, handler.__name__, key), handler(request, owner))
            except TinkerRefusal as exc:
                return _error(exc.status, exc.message)

        route.__name__ = handler.__name__
        return route

    async def _once(self, key: tuple[str, str, str], call: Any) -> Response:
        """The answer of the first request that carried this idempotency key: a repeat (the SDK
        resends a call whose answer it lost, with the same key) gets it again, and starts nothing."""
        first = self._answers.get(key)
        if first is not None:
            try:
                answer = await asyncio.shield(first)
            except Exception:  # the first was refused: this one runs on its own
                answer = None
            if answer is not None:
                call.close()
                return _replay(answer)
        pending: asyncio.Future[tuple[int, bytes, str]] = asyncio.get_running_loop().create_future()
        self._answers[key] = pending
        while len(self._answers) > IDEMPOTENCY_ANSWERS:
            self._answers.popitem(last=False)
        try:
            response = _answer(await call)
        except Exception as exc:
            # A refused call may be sent again: only answers that started something are kept.
            if self._answers.get(key) is pending:
                del self._answers[key]
            pending.set_exception(exc)
            pending.exception()  # retrieved here, so an unawaited failure is not logged
            raise
        pending.set_result((response.status_code, bytes(response.body), response.media_type or ""))
        return response

    @staticmethod
    async def _json(request: Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except ValueError as exc:
            raise TinkerRefusal(400, f"the body is not valid JSON: {exc}") from None
        if not isinstance(body, dict):
            raise TinkerRefusal(400, "the body must be a JSON object")
        return body

    def _future(
        self, owner: str, future: concurrent.futures.Future[Any], model_id: str | None = None
    ) -> dict[str, Any]:
        request_id = f"req-{uuid.uuid4().hex}"
        with self.lock:
            self.state.futures[request_id] = (owner, future)
        answer: dict[str, Any] = {"request_id": request_id}
        if model_id is not None:
            answer["model_id"] = model_id
        return answer

    def _model(self, model_id: Any, owner: str) -> TrainingModel:
        with self.lock:
            model = self.state.models.get(str(model_id))
        # Another role's training client answers exactly like a missing one.
        if model is None or model.owner != owner:
            raise TinkerRefusal(404, f"training client {model_id!r} not found")
        return model

    def _ordered(
        self, model: TrainingModel, submit: Callable[[Any], Any], finish: Callable[[Any, Any], Any]
    ) -> concurrent.futures.Future[Any]:
        """Run `submit(client)` on the model's ordering thread, then `finish(client, submitted)` on
        its polling thread, in the same order; the returned future holds finish's value. finish
        reads each result with `_poll`, which the model's pacer times."""
        result: concurrent.futures.Future[Any] = concurrent.futures.Future()
        client = self.client_for(model.owner)

        def first() -> None:
            try:
                model.ready.result()
                submitted = submit(client)
            except BaseException as exc:
                result.set_exception(exc)
                return
            model.finish.submit(second, submitted, model.pace.now())

        def second(submitted: Any, submitted_at: float) -> None:
            model.pace.begin(submitted_at)
            try:
                result.set_result(finish(client, submitted))
            except BaseException as exc:
                result.set_exception(exc)

        model.submit.submit(first)
        return result

    @staticmethod
    def _poll(model: TrainingModel, client: Any, request_id: str, key: Any = None) -> Any:
        """The result of one of the model's requests, polled when due (`key`: see `Pacer.poll`)."""
        read = lambda: client.poll_request(model.job_id, request_id)  # noqa: E731
        if client.request_waiter is not None:
            # The server's own signal says when the request ends: nothing to pace.
            return read()
        return model.pace.poll(key, read, float(client.poll_interval))

    # --- session and configuration ------------------------------------------------------------------

    async def client_config(self, request: Request, owner: str) -> dict[str, Any]:
        # Only what this service supports: no JWT exchange, no server-side custom losses, no
        # session futures queue; fwd/bwd bodies unchunked up to the SDK's defaults. The SDK's
        # Rust HTTP transport (pyqwest) is on: each step is four requests of the SDK's (two
        # submissions, two future reads), and httpx's pure-Python HTTP costs its process more.
        return {
            "pjwt_auth_enabled": False,
            "use_pyqwest_transport": True,
            "proto_compress_fwdbwd": False,
            "sample_use_retrieve_futures": False,
            "custom_loss_server_side": False,
            "sample_join_sampling_session": False,
        }

    async def dynamic_config(self, request: Request, owner: str) -> dict[str, Any]:
        return {"refresh_interval_sec": 300, "sample_cancel_enabled": False}

    async def create_session(self, request: Request, owner: str) -> dict[str, Any]:
        await self._json(request)
        session_id = f"session-{uuid.uuid4().hex}"
        with self.lock:
            self.state.sessions[session_id] = owner
        return {"type": "create_session", "session_id": session_id}

    async def finish_session(self, request: Request, owner: str) -> Response:
        await request.body()
        session_id = request.path_params["session_id"]
        with self.lock:
            if self.state.sessions.get(session_id) != owner:
                raise TinkerRefusal(404, f"session {session_id!r} not found")
            del self.state.sessions[session_id]
        # The session's training clients stay: their jobs end with their idle timeout, and their
        # checkpoints stay loadable from another session.
        return Response(status_code=204)

    async def heartbeat(self, request: Request, owner: str) -> dict[str, Any]:
        await self._json(request)
        return {"type": "session_heartbeat"}

    async def telemetry(self, request: Request, owner: str) -> dict[str, Any]:
        await request.body()
        return {"status": "accepted"}

    async def healthz(self, request: Request, owner: str) -> dict[str, Any]:
        return {"status": "ok"}

    async def capabilities(self, request: Request, owner: str) -> dict[str, Any]:
        client = self.client_for(owner)
        models = await asyncio.to_thread(client.list_models)
        supported = []
        for entry in models:
            name = entry.get("model_name") or entry.get("name") or entry.get("id")
            if name:
                supported.append(
                    {
                        "model_name": name,
                        "max_context_length": MAX_SEQ_LEN,
                        "trainable": True,
                        "sampleable": True,
                    }
                )
        return {"supported_models": supported}

    async def no_equivalent(self, request: Request, owner: str) -> Response:
        """Publishing, TTLs and copies of checkpoints: refused, naming why."""
        await request.body()
        what = {
            "publish": "publishing a checkpoint (Cortex Training checkpoints belong to their job and role)",
            "ttl": "a checkpoint TTL (Cortex Training checkpoints live as long as their job's records)",
            "copy_weights": "copying a checkpoint into another project (Cortex Training has no projects)",
        }[request.url.path.rstrip("/").rsplit("/", 1)[-1]]
        raise TinkerRefusal(400, f"{what} has no Cortex Training equivalent (see docs/tinker.md)")

    async def unsupported(self, request: Request, owner: str) -> Response:
        path = request.url.path
        return _error(
            404, f"{request.method} {path} is not supported by ct's Tinker API (see docs/tinker.md)"
        )

    # --- training clients ---------------------------------------------------------------------

    async def create_model(self, request: Request, owner: str) -> dict[str, Any]:
        body = await self._json(request)
        base_model = body.get("base_model")
        if not isinstance(base_model, str) or not base_model:
            raise TinkerRefusal(400, "create_model needs base_model")
        lora = body.get("lora_config") or {}
        rank = int(lora.get("rank") or 0)
        if rank <= 0:
            raise TinkerRefusal(
                400, "ct's Tinker API trains LoRA adapters only: lora_config.rank must be positive"
            )
        optimizer = body.get("optimizer_config") or {}
        if optimizer.get("type", "adamw") != "adamw":
            raise TinkerRefusal(400, f"optimizer {optimizer.get('type')!r} is not supported: only adamw")
        targets = (ATTENTION_MODULES if lora.get("train_attn", True) else ()) + (
            MLP_MODULES if lora.get("train_mlp", True) else ()
        )
        if not targets:
            raise TinkerRefusal(400, "lora_config trains nothing: set train_attn or train_mlp")
        peft_seed = int(lora["seed"]) if lora.get("seed") is not None else None
        model = await self._new_model(owner, base_model, rank, list(targets), seed=peft_seed)
        created: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def done(ready: concurrent.futures.Future[None]) -> None:
            if ready.exception() is not None:
                created.set_exception(ready.exception())  # type: ignore[arg-type]
            else:
                created.set_result({"type": "create_model", "model_id": model.model_id})

        model.ready.add_done_callback(done)
        return self._future(owner, created, model.model_id)

    async def _new_model(
        self,
        owner: str,
        base_model: str,
        rank: int,
        targets: list[str],
        *,
        seed: int | None = None,
        model_id: str | None = None,
        load_optimizer_states: bool | None = None,
    ) -> TrainingModel:
        """Create the job of a training client; its `ready` future completes once the job runs."""
        from ct_core import SubJobConfig

        peft: dict[str, Any] = {"peft_type": "Lora", "r": rank, "lora_alpha": rank, "target_modules": targets}
        adam = {
            "name": "AdamW",
            "lr": DEFAULT_LR,
            "betas": [ADAM_DEFAULTS["beta1"], ADAM_DEFAULTS["beta2"]],
            "eps": ADAM_DEFAULTS["eps"],
            "weight_decay": ADAM_DEFAULTS["weight_decay"],
        }
        trainer = SubJobConfig.training_job(
            base_model,
            optimizer=adam,
            train_batch_size=1,
            max_seq_len=MAX_SEQ_LEN,
            n_gpus=1,
            extra_training={"peft_config": peft},
            seed=seed,
            load_optimizer_states=load_optimizer_states,
        )
        sampler = SubJobConfig.sampling_job(base_model, max_seq_len=MAX_SEQ_LEN, n_gpus=1)
        client = self.client_for(owner)
        try:
            job_id = await asyncio.to_thread(client.create_job, [trainer, sampler], experiment_name="tinker")
        except Exception as exc:
            raise TinkerRefusal(400, f"create_model: {exc}") from None
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        model = TrainingModel(
            model_id=model_id or job_id,
            owner=owner,
            base_model=base_model,
            rank=rank,
            job_id=job_id,
            ready=ready,
            submit=concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"tinker-{job_id[:8]}"),
            targets=targets,
        )
        with self.lock:
            self.state.models[model.model_id] = model

        def wait() -> None:
            try:
                client.wait_for_job(job_id)
            except BaseException as exc:
                ready.set_exception(exc)
                return
            ready.set_result(None)

        self.pollers.submit(wait)
        return model

    def tokenizer_id(self, base_model: str) -> str:
        """What the SDK loads with transformers: `tokenizer_for(base_model)` when it names one (a
        real model's folder or hub name), else the byte model's folder, written once."""
        named = self.tokenizer_for(base_model) if self.tokenizer_for is not None else None
        if named:
            return named
        if self._tokenizer is None:
            self._tokenizer = ensure_byte_tokenizer(self.state_dir)
        return str(self._tokenizer)

    async def get_info(self, request: Request, owner: str) -> dict[str, Any]:
        body = await self._json(request)
        model = self._model(body.get("model_id"), owner)
        return {
            "type": "get_info",
            "model_id": model.model_id,
            "model_data": {
                "arch": "ct-local",
                "model_name": self.sdk_model_name(model.base_model),
                "tokenizer_id": self.tokenizer_id(model.base_model),
            },
            "is_lora": True,
            "lora_rank": model.rank,
            "model_name": self.sdk_model_name(model.base_model),
        }

    def sdk_model_name(self, base_model: str) -> str:
        """The model name the SDK is told: the tokenizer folder with `tokenizer_as_model_name`."""
        return self.tokenizer_id(base_model) if self.tokenizer_as_model_name else base_model

    # --- forward / backward ---------------------------------------------------------------------

    async def forward_backward(self, request: Request, owner: str) -> dict[str, Any]:
        raw = await request.body()
        try:
            call = wire.decode_forward_backward_request(raw)
        except Exception as exc:  # the protobuf parser raises its own DecodeError
            raise TinkerRefusal(400, f"could not read the forward_backward request: {exc}") from None
        model = self._model(call["model_id"], owner)
        loss_fn = call["loss_fn"] or "cross_entropy"
        forward_only = call["forward_only"]
        try:
            if self.backend_losses:
                batch = backend_batch(call["data"], loss_fn, call["loss_fn_config"])
            else:
                if not forward_only and loss_fn not in PORTABLE_LOSSES:
                    raise UserError(refusal_of_loss(loss_fn))
                batch = build_batch(call["data"])
        except UserError as exc:
            failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
            failed.set_exception(exc)
            return self._future(owner, failed, model.model_id)
        if self.backend_losses:
            return self._future(owner, self._backend_step(model, batch, forward_only), model.model_id)

        def submit(client: Any) -> tuple[str, str | None]:
            forward = client.forward(model.job_id, batch["forward_frame"], sub_job_id=model.training_sub_job)
            fb = None if forward_only else client.forward_backward(model.job_id, batch["train_frame"])
            return forward["request_id"], fb

        rows, width = batch["shape"]

        def finish(client: Any, submitted: tuple[str, str | None]) -> bytes:
            forward_id, fb_id = submitted
            result = self._poll(model, client, forward_id, batch_key("forward", rows, width))
            if fb_id is not None:
                self._poll(model, client, fb_id, batch_key("forward_backward", rows, width))
            return batch_outputs(batch, np.asarray(result["logprobs"], dtype=np.float64))

        return self._future(owner, self._ordered(model, submit, finish), model.model_id)

    def _backend_step(
        self, model: TrainingModel, batch: dict[str, Any], forward_only: bool
    ) -> concurrent.futures.Future[Any]:
        """One request: a forward-backward (or a forward) whose result holds the loss and every
        target's log-probability, computed by the backend."""

        def submit(client: Any) -> str:
            if forward_only:
                answer = client.forward(model.job_id, batch["frame"], sub_job_id=model.training_sub_job)
                return str(answer["request_id"])
            return str(client.forward_backward(model.job_id, batch["frame"]))

        key = batch_key("forward" if forward_only else "forward_backward", *batch["shape"])

        def finish(client: Any, request_id: str) -> bytes:
            result = self._poll(model, client, request_id, key)
            logprobs = (result.get("post_process_outputs") or {}).get("logprobs")
            if logprobs is None:
                raise RuntimeError("the training backend returned no per-token log-probabilities")
            return backend_outputs(batch, np.asarray(logprobs, dtype=np.float64))

        return self._ordered(model, submit, finish)

    async def optim_step(self, request: Request, owner: str) -> dict[str, Any]:
        body = await self._json(request)
        model = self._model(body.get("model_id"), owner)
        params = body.get("adam_params")
        if not isinstance(params, dict):
            raise TinkerRefusal(400, "only Adam is supported: send adam_params")
        try:
            lr = float(params.get("learning_rate", DEFAULT_LR))
            wanted = optimizer_settings(params)
        except (TypeError, ValueError) as exc:
            raise TinkerRefusal(400, f"adam_params values must be numbers: {exc}") from None
        if not self.per_step_optimizer:
            job = job_optimizer_settings()
            for key, value in wanted.items():
                if value != job[key]:
                    raise TinkerRefusal(
                        400,
                        f"adam_params {key}={value} is not supported: Cortex Training fixes the optimizer "
                        f"when the job is created ({key}={job[key]}); only learning_rate may change per step",
                    )

        def submit(client: Any) -> tuple[str | None, str]:
            settings = None
            if model.optimizer != wanted:
                # Ordered before the step on the same sub-job, so the step runs with them.
                answer = client.forward(
                    model.job_id, optimizer_frame(wanted), sub_job_id=model.training_sub_job
                )
                settings = str(answer["request_id"])
                model.optimizer = wanted
            return settings, str(client.step(model.job_id, learning_rate=lr))

        def finish(client: Any, submitted: tuple[str | None, str]) -> dict[str, Any]:
            settings, request_id = submitted
            if settings is not None:
                try:
                    client.poll_request(model.job_id, settings)
                except Exception:
                    model.optimizer = None  # refused: what the trainer holds is unknown, sent again
                    raise
            result = self._poll(model, client, request_id, "step")
            metrics = {
                k: float(v)
                for k, v in result.items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            }
            return {"type": "optim_step", "metrics": metrics}

        return self._future(owner, self._ordered(model, submit, finish), model.model_id)

    # --- weights ------------------------------------------------------------------------------

    async def save_weights_for_sampler(self, request: Request, owner: str) -> dict[str, Any]:
        body = await self._json(request)
        model = self._model(body.get("model_id"), owner)
        name = body.get("path")
        session_id = f"sampler-{model.model_id}-{uuid.uuid4().hex[:8]}"

        def submit(client: Any) -> tuple[Any, Any]:
            sync = client.weight_sync(
                model.job_id, model.training_sub_job, [model.sampling_sub_job], weight_format="hf"
            )
            save = client.save(model.job_id, checkpoint_type="weights-only") if name else None
            return sync, save

        def finish(client: Any, submitted: tuple[Any, Any]) -> dict[str, Any]:
            sync, save = submitted
            if isinstance(sync, str):
                client.poll_request(model.job_id, sync)
            answer: dict[str, Any] = {"type": "save_weights_for_sampler"}
            if save is not None:
                result = client.poll_request(model.job_id, save)
                checkpoint_id = client.checkpoint_id_from_save_result(result)
                path = f"tinker://{model.job_id}/sampler_weights/{name}"
                self._remember(
                    path,
                    {
                        "owner": owner,
                        "model_id": model.model_id,
                        "job_id": model.job_id,
                        "base_model": model.base_model,
                        "rank": model.rank,
                        "targets": model.targets,
                        "checkpoint_id": checkpoint_id,
                        "checkpoint_type": "sampler",
                        "time": _now(),
                        "name": name,
                    },
                )
                answer["path"] = path
            else:
                with self.lock:
                    self.state.samplers[session_id] = SamplingSession(
                        session_id, owner, model.model_id, model.base_model
                    )
                answer["sampling_session_id"] = session_id
            return answer

        return self._future(owner, self._ordered(model, submit, finish), model.model_id)

    async def save_weights(self, request: Request, owner: str) -> dict[str, Any]:
        body = await self._json(request)
        model = self._model(body.get("model_id"), owner)
        name = body.get("path") or uuid.uuid4().hex[:8]

        def submit(client: Any) -> Any:
            return client.save(model.job_id, checkpoint_type="resumable")

        def finish(client: Any, save: Any) -> dict[str, Any]:
            result = client.poll_request(model.job_id, save)
            checkpoint_id = client.checkpoint_id_from_save_result(result)
            path = f"tinker://{model.job_id}/weights/{name}"
            self._remember(
                path,
                {
                    "owner": owner,
                    "model_id": model.model_id,
                    "job_id": model.job_id,
                    "base_model": model.base_model,
                    "rank": model.rank,
                    "targets": model.targets,
                    "checkpoint_id": checkpoint_id,
                    "checkpoint_type": "training",
                    "time": _now(),
                    "name": name,
                },
            )
            return {"type": "save_weights", "path": path}

        return self._future(owner, self._ordered(model, submit, finish), model.model_id)

    async def load_weights(self, request: Request, owner: str) -> dict[str, Any]:
        body = await self._json(request)
        path = str(body.get("path") or "")
        with self.lock:
            checkpoint = self.state.checkpoints.get(path)
        if checkpoint is None or checkpoint["owner"] != owner:
            raise TinkerRefusal(404, f"checkpoint {path!r} not found")
        if body.get("model_id") is not None:
            model = self._model(body.get("model_id"), owner)
        else:
            # A new training client made from the checkpoint, under the id the SDK derives itself.
            session_id = str(body.get("session_id") or "")
            with self.lock:
                known = self.state.sessions.get(session_id) == owner
            if not known or body.get("model_seq_id") is None:
                raise TinkerRefusal(404, f"session {session_id!r} not found")
            model = await self._new_model(
                owner,
                str(body.get("base_model") or checkpoint["base_model"]),
                int(checkpoint["rank"]),
                list(checkpoint["targets"]),
                model_id=f"{session_id}:train:{int(body['model_seq_id'])}",
                load_optimizer_states=bool(body.get("optimizer")),
            )

        def submit(client: Any) -> Any:
            model.optimizer = None  # the checkpoint's optimizer settings, or the job's: sent again
            return client.load(model.job_id, checkpoint["checkpoint_id"], source_job_id=checkpoint["job_id"])

        def finish(client: Any, load: Any) -> dict[str, Any]:
            client.poll_request(model.job_id, load)
            return {"type": "load_weights", "path": path, "model_id": model.model_id}

        return self._future(owner, self._ordered(model, submit, finish), model.model_id)

    def _remember(self, path: str, record: dict[str, Any]) -> None:
        """Keep a checkpoint's record, in memory and in the state dir (it outlives a restart)."""
        with self.lock:
            self.state.checkpoints[path] = record
            self.state_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(self.state_dir / CHECKPOINTS_FILE, json.dumps(self.state.checkpoints, indent=1))

    def _training_run(self, model: TrainingModel) -> dict[str, Any]:
        with self.lock:
            saved = [c for c in self.state.checkpoints.values() if c["job_id"] == model.job_id]
        last: dict[str, Any] = {}
        for record in saved:
            last[record["checkpoint_type"]] = record
        return {
            "training_run_id": model.model_id,
            "base_model": model.base_model,
            "model_owner": model.owner,
            "is_lora": True,
            "lora_rank": model.rank,
            "last_request_time": _now(),
            "last_checkpoint": self._checkpoint_row(model, last["training"]) if "training" in last else None,
            "last_sampler_checkpoint": self._checkpoint_row(model, last["sampler"])
            if "sampler" in last
            else None,
        }

    @staticmethod
    def _checkpoint_row(model: TrainingModel, record: dict[str, Any]) -> dict[str, Any]:
        folder = "sampler_weights" if record["checkpoint_type"] == "sampler" else "weights"
        return {
            "checkpoint_id": f"{folder}/{record['name']}",
            "checkpoint_type": record["checkpoint_type"],
            "tinker_path": f"tinker://{model.job_id}/{folder}/{record['name']}",
            "time": record["time"],
            "size_bytes": None,
            "public": False,
        }

    async def list_training_runs(self, request: Request, owner: str) -> dict[str, Any]:
        try:
            limit = int(request.query_params.get("limit", 20))
            offset = int(request.query_params.get("offset", 0))
        except ValueError:
            raise TinkerRefusal(400, "limit and offset must be integers") from None
        with self.lock:
            mine = [m for m in self.state.models.values() if m.owner == owner]
        page = mine[offset : offset + max(limit, 0)]
        return {
            "training_runs": [self._training_run(m) for m in page],
            "cursor": {"offset": offset, "limit": limit, "total_count": len(mine)},
        }

    async def get_training_run(self, request: Request, owner: str) -> dict[str, Any]:
        return self._training_run(self._model(request.path_params["model_id"], owner))

    def _checkpoint(self, path: str, owner: str) -> dict[str, Any]:
        with self.lock:
            record = self.state.checkpoints.get(path)
        # Another role's checkpoint answers exactly like a missing one.
        if record is None or record["owner"] != owner:
            raise TinkerRefusal(404, f"checkpoint {path!r} not found")
        return record

    async def weights_info(self, request: Request, owner: str) -> dict[str, Any]:
        body = await self._json(request)
        record = self._checkpoint(str(body.get("tinker_path") or ""), owner)
        targets = set(record["targets"])
        return {
            "base_model": record["base_model"],
            "is_lora": True,
            "lora_rank": record["rank"],
            "train_attn": bool(targets & set(ATTENTION_MODULES)),
            "train_mlp": bool(targets & set(MLP_MODULES)),
            "train_unembed": False,
        }

    async def delete_checkpoint(self, request: Request, owner: str) -> Response:
        from ct_core.errors import NotFoundError

        params = request.path_params
        path = f"tinker://{params['model_id']}/{params['kind']}/{params['name']}"
        record = self._checkpoint(path, owner)
        client = self.client_for(owner)
        try:
            await asyncio.to_thread(client.delete_checkpoint, record["job_id"], record["checkpoint_id"])
        except NotFoundError:
            pass  # gone from Cortex Training already: the record goes too
        with self.lock:
            self.state.checkpoints.pop(path, None)
            atomic_write(self.state_dir / CHECKPOINTS_FILE, json.dumps(self.state.checkpoints, indent=1))
        return Response(status_code=204)

    async def list_checkpoints(self, request: Request, owner: str) -> dict[str, Any]:
        model = self._model(request.path_params["model_id"], owner)
        with self.lock:
            rows = [
                {
                    "checkpoint_id": path.removeprefix(f"tinker://{model.job_id}/"),
                    "checkpoint_type": c["checkpoint_type"],
                    "tinker_path": path,
                    "time": c["time"],
                    "size_bytes": None,
                    "public": False,
                }
                for path, c in self.state.checkpoints.items()
                if c["model_id"] == model.model_id and c["owner"] == owner
            ]
        return {"checkpoints": rows}

    # --- sampling -------------------------------------------------------------------------------

    async def create_sampling_session(self, request: Request, owner: str) -> dict[str, Any]:
        body = await self._json(request)
        path = body.get("model_path")
        if not path:
            raise TinkerRefusal(
                400,
                "sampling a base model without a training client is not supported: Cortex Training "
                "samples from a job's sampling sub-job (save weights for a sampler first)",
            )
        with self.lock:
            checkpoint = self.state.checkpoints.get(str(path))
        if checkpoint is None or checkpoint["owner"] != owner:
            raise TinkerRefusal(404, f"checkpoint {path!r} not found")
        model = self._model(checkpoint["model_id"], owner)
        session_id = f"sampler-{model.model_id}-{uuid.uuid4().hex[:8]}"
        with self.lock:
            self.state.samplers[session_id] = SamplingSession(
                session_id, owner, model.model_id, model.base_model
            )
        return {"type": "create_sampling_session", "sampling_session_id": session_id}

    async def get_sampler(self, request: Request, owner: str) -> dict[str, Any]:
        session = self._sampler(request.path_params["sampler_id"], owner)
        return {
            "sampler_id": session.session_id,
            "base_model": self.sdk_model_name(session.base_model),
            "model_path": None,
        }

    def _sampler(self, session_id: Any, owner: str) -> SamplingSession:
        with self.lock:
            session = self.state.samplers.get(str(session_id))
        if session is None or session.owner != owner:
            raise TinkerRefusal(404, f"sampling session {session_id!r} not found")
        return session

    async def asample(self, request: Request, owner: str) -> dict[str, Any]:
        body = await self._json(request)
        session = self._sampler(body.get("sampling_session_id"), owner)
        model = self._model(session.model_id, owner)
        tokens = model_input_tokens(body.get("prompt") or {})
        if not tokens:
            raise TinkerRefusal(400, "the prompt holds no tokens")
        count = int(body.get("num_samples") or 1)
        params = sampling_params(body.get("sampling_params") or {})
        want_prompt = bool(body.get("prompt_logprobs"))
        for key in ("topk_prompt_logprobs", "topk_sample_logprobs", "prompt_alt_tokens_k"):
            if int(body.get(key) or 0):
                raise TinkerRefusal(400, f"{key} is not supported by ct's Tinker API")
        per_prompt = []
        for index in range(count):
            one = dict(params, logprobs=0)
            if "seed" in one:
                one["seed"] = int(one["seed"]) + index
            if want_prompt and index == 0:
                one["prompt_logprobs"] = 0
            per_prompt.append(one)

        def submit(client: Any) -> str:
            return str(
                client.generate(
                    model.job_id,
                    [tokens] * count,
                    sampling_params=per_prompt,
                    sub_job_id=model.sampling_sub_job,
                )
            )

        def finish(client: Any, request_id: str) -> bytes:
            result = client.poll_request(model.job_id, request_id)
            return sample_output(result["results"], tokens, want_prompt)

        answer = self._future(owner, self._ordered(model, submit, finish))
        answer["sample_sequence_ids"] = [f"{answer['request_id']}:{index}" for index in range(count)]
        return answer

    # --- futures --------------------------------------------------------------------------------

    async def retrieve_future(self, request: Request, owner: str) -> Response:
        body = await self._json(request)
        request_id = str(body.get("request_id"))
        with self.lock:
            entry = self.state.futures.get(request_id)
        if entry is None or entry[0] != owner:
            raise TinkerRefusal(404, f"future {request_id!r} not found")
        future = entry[1]
        if not future.done():
            try:
                await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), RETRIEVE_WAIT_S)
            except TimeoutError:
                return JSONResponse({"type": "try_again", "request_id": request_id, "queue_state": "active"})
            except Exception:
                pass
        error = future.exception()
        if error is not None:
            category = (
                "user" if isinstance(error, UserError | ValueError) or _is_client_error(error) else "server"
            )
            return JSONResponse({"error": f"{type(error).__name__}: {error}", "category": category})
        value = future.result()
        if isinstance(value, bytes):
            return Response(value, media_type=wire.PROTO_CONTENT_TYPE)
        return JSONResponse(value)


def job_optimizer_settings() -> dict[str, Any]:
    """The Adam settings a training client's job is created with, in `optimizer_settings`' form."""
    return {
        "betas": [ADAM_DEFAULTS["beta1"], ADAM_DEFAULTS["beta2"]],
        "eps": ADAM_DEFAULTS["eps"],
        "weight_decay": ADAM_DEFAULTS["weight_decay"],
        "grad_clip_norm": 0.0,
    }


def optimizer_settings(params: dict[str, Any]) -> dict[str, Any]:
    """An optim_step's Adam settings besides the learning rate (Tinker's defaults where absent);
    ValueError for values no Adam takes, so the step is refused before anything runs."""
    settings: dict[str, Any] = {
        "betas": [
            float(params.get("beta1", ADAM_DEFAULTS["beta1"])),
            float(params.get("beta2", ADAM_DEFAULTS["beta2"])),
        ],
        "eps": float(params.get("eps", ADAM_DEFAULTS["eps"])),
        "weight_decay": float(params.get("weight_decay", ADAM_DEFAULTS["weight_decay"])),
        "grad_clip_norm": float(params.get("grad_clip_norm") or 0.0),
    }
    if not all(0.0 <= b < 1.0 for b in settings["betas"]):
        raise ValueError("adam_params beta1 and beta2 must lie in [0, 1)")
    for key in ("eps", "weight_decay", "grad_clip_norm"):
        if not (math.isfinite(settings[key]) and settings[key] >= 0):
            raise ValueError(f"adam_params {key} must be a finite number >= 0")
    return settings


def optimizer_frame(settings: dict[str, Any]) -> bytes:
    """A one-token forward whose batch sets the trainer's Adam settings (processing.optimizer)."""
    from ct_core.data.payloads import serialize_forward_backward_args

    return serialize_forward_backward_args(
        kwargs={"input_ids": np.zeros((1, 1), dtype=np.int64)}, processing={"optimizer": settings}
    )


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")


def _is_client_error(error: BaseException) -> bool:
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and 400 <= status < 500


# --- translation helpers (pure) ---------------------------------------------------------------


def model_input_tokens(model_input: dict[str, Any]) -> list[int]:
    """The token ids of a JSON ModelInput; any chunk that is not tokens is refused."""
    tokens: list[int] = []
    for chunk in model_input.get("chunks") or []:
        kind = chunk.get("type", "encoded_text")
        if kind != "encoded_text":
            raise TinkerRefusal(400, f"model input chunks of type {kind!r} are not supported (tokens only)")
        tokens.extend(int(t) for t in chunk.get("tokens") or [])
    return tokens


def sampling_params(params: dict[str, Any]) -> dict[str, Any]:
    """Tinker sampling parameters as Cortex Training ones."""
    out: dict[str, Any] = {"max_tokens": int(params.get("max_tokens") or 16)}
    if params.get("seed") is not None:
        out["seed"] = int(params["seed"])
    out["temperature"] = float(params.get("temperature", 1.0))
    top_k = int(params.get("top_k", -1))
    if top_k > 0:
        out["top_k"] = top_k
    top_p = float(params.get("top_p", 1.0))
    if top_p < 1.0:
        out["top_p"] = top_p
    stop = params.get("stop")
    if isinstance(stop, str):
        out["stop"] = [stop]
    elif isinstance(stop, list) and stop:
        if all(isinstance(s, int) for s in stop):
            out["stop_token_ids"] = [int(s) for s in stop]
        else:
            out["stop"] = [str(s) for s in stop]
    return out


#: Why a loss other than cross-entropy is refused, per Tinker loss name.
_LOSS_REFUSALS = {
    "importance_sampling": "it needs the per-token ratio exp(logprob - sampler logprob) times the advantage",
    "ppo": "it needs clipped per-token ratios against the sampler's logprobs times the advantage",
}


def refusal_of_loss(loss_fn: str) -> str:
    """The message of a refused loss function: what Cortex Training computes, and what is missing."""
    why = _LOSS_REFUSALS.get(loss_fn, "it is not one of the losses Cortex Training computes")
    return (
        f"loss function {loss_fn!r} is not available through ct tinker serve: {why}, while the "
        "Cortex Training forward-backward computes only a token-weighted cross-entropy mean (no "
        "per-token policy ratio, no unnormalized sum), so it cannot be computed exactly; supported: "
        f"{', '.join(PORTABLE_LOSSES)} (inside ct local serve: {', '.join(BACKEND_LOSSES)}; "
        "see docs/tinker.md)"
    )


def _datum_inputs(
    index: int, datum: dict[str, Any], loss_fn: str
) -> tuple[list[int], list[int], dict[str, Any]]:
    """A datum's tokens, targets and the per-token inputs `loss_fn` reads, each checked for length."""
    tokens = datum["tokens"]
    inputs = datum["loss_fn_inputs"]
    if "target_tokens" not in inputs:
        raise UserError(f"datum {index}: loss_fn_inputs.target_tokens is required")
    targets = [int(t) for t in np.asarray(inputs["target_tokens"]).ravel()]
    if len(targets) != len(tokens):
        raise UserError(
            f"datum {index}: target_tokens ({len(targets)}) must have the length of the model "
            f"input ({len(tokens)})"
        )
    values: dict[str, Any] = {}
    for name in LOSS_INPUTS[loss_fn]:
        if name not in inputs:
            if name == "weights":
                values[name] = np.ones(len(targets))
                continue
            raise UserError(f"datum {index}: loss function {loss_fn} needs loss_fn_inputs.{name}")
        value = np.asarray(inputs[name], dtype=np.float64).ravel()
        if len(value) != len(tokens):
            raise UserError(
                f"datum {index}: {name} ({len(value)}) must have the length of the model "
                f"input ({len(tokens)})"
            )
        if not np.isfinite(value).all():
            raise UserError(f"datum {index}: {name} must be finite")
        values[name] = value
    return tokens, targets, values


def backend_batch(data: list[dict[str, Any]], loss_fn: str, config: dict[str, Any]) -> dict[str, Any]:
    """The batch frame of a Tinker loss for a backend that computes it by name.

    Tinker's `target_tokens[i]` is the target of input position `i`, the data plane's `labels`
    convention, so any targets work. The loss is summed (Tinker's reduction); the backend returns
    every target's log-probability, from which the SDK's outputs are made (`backend_outputs`).
    """
    from ct_core.data.payloads import serialize_forward_backward_args

    if loss_fn not in BACKEND_LOSSES:
        raise UserError(
            f"loss function {loss_fn!r} is not available through ct's Tinker API; supported: "
            f"{', '.join(BACKEND_LOSSES)}, and custom losses through forward_backward_custom"
        )
    if not data:
        raise UserError("forward_backward needs at least one datum")
    allowed = LOSS_CONFIG_KEYS.get(loss_fn, ())
    unknown = sorted(k for k in config if k not in allowed)
    if unknown:
        raise UserError(
            f"loss_fn_config keys {', '.join(unknown)} are not taken by {loss_fn}"
            + (f" (it takes {', '.join(allowed)})" if allowed else "")
        )
    processing: dict[str, Any] = {
        "loss_fn": loss_fn,
        "config": {"reduction": "sum", **{k: float(v) for k, v in config.items()}},
        "post": ["logprobs"],
    }
    rows = [_datum_inputs(index, datum, loss_fn) for index, datum in enumerate(data)]
    width = max(len(tokens) for tokens, _, _ in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    labels = np.full((len(rows), width), IGNORE_INDEX, dtype=np.int64)
    attention = np.zeros((len(rows), width), dtype=np.int64)
    per_token = {name: np.zeros((len(rows), width), dtype=np.float32) for name in LOSS_INPUTS[loss_fn]}
    for row, (tokens, targets, values) in enumerate(rows):
        n = len(tokens)
        ids[row, :n] = tokens
        labels[row, :n] = targets
        attention[row, :n] = 1
        for name, value in values.items():
            per_token[name][row, :n] = value
    context = {
        "loss_mask" if name == "weights" else "sampling_logprobs" if name == "logprobs" else name: array
        for name, array in per_token.items()
    }
    frame = serialize_forward_backward_args(
        kwargs={"input_ids": ids, "attention_mask": attention, "labels": labels},
        context=context,
        processing=processing,
    )
    return {
        "loss_fn": loss_fn,
        "config": processing["config"],
        "rows": rows,
        "frame": frame,
        "shape": ids.shape,
    }


def backend_outputs(batch: dict[str, Any], logprobs: np.ndarray) -> bytes:
    """The SDK's ForwardBackwardOutput from the targets' log-probabilities the backend returned:
    per datum its `logprobs` (and, for cross-entropy, `elementwise_loss`), and `loss:sum`, the loss
    as Tinker defines it, summed over every datum and token."""
    loss_fn = batch["loss_fn"]
    outputs = []
    total = 0.0
    for row, (tokens, _targets, values) in enumerate(batch["rows"]):
        lp = logprobs[row, : len(tokens)]
        if loss_fn == "cross_entropy":
            elementwise = -lp * values["weights"]
            outputs.append({"logprobs": lp, "elementwise_loss": elementwise})
        else:
            ratio = np.exp(lp - values["logprobs"])
            objective = ratio * values["advantages"]
            if loss_fn == "ppo":
                low = batch["config"].get("clip_low_threshold", PPO_CLIP_LOW)
                high = batch["config"].get("clip_high_threshold", PPO_CLIP_HIGH)
                objective = np.minimum(objective, np.clip(ratio, low, high) * values["advantages"])
            elementwise = -objective
            outputs.append({"logprobs": lp})
        total += float(elementwise.sum())
    return wire.encode_forward_backward_output(outputs, {"loss:sum": total})


def build_batch(data: list[dict[str, Any]]) -> dict[str, Any]:
    """The Cortex Training frames of a Tinker cross-entropy batch.

    Tinker's `target_tokens[i]` is the target of input position `i`, which is the data plane's
    `labels` convention. A forward request returns `logprobs[:, i]` for `input_ids[:, i + 1]`, so
    both frames carry each datum's tokens followed by its last target: the forward's log-probabilities
    are then exactly those of the targets, when the targets are the inputs shifted by one (the
    only layout accepted here; anything else is refused by name).
    """
    from ct_core.data.payloads import serialize_forward_backward_args

    if not data:
        raise UserError("forward_backward needs at least one datum")
    rows = []
    for index, datum in enumerate(data):
        tokens = datum["tokens"]
        inputs = datum["loss_fn_inputs"]
        if "target_tokens" not in inputs:
            raise UserError(f"datum {index}: loss_fn_inputs.target_tokens is required")
        targets = [int(t) for t in np.asarray(inputs["target_tokens"]).ravel()]
        weights = np.asarray(inputs.get("weights", np.ones(len(targets))), dtype=np.float64).ravel()
        if len(targets) != len(tokens) or len(weights) != len(tokens):
            raise UserError(
                f"datum {index}: target_tokens ({len(targets)}) and weights ({len(weights)}) must have "
                f"the length of the model input ({len(tokens)})"
            )
        if (weights < 0).any():
            raise UserError(
                f"datum {index}: negative weights are not supported: the Cortex Training forward-backward "
                "divides the weighted loss by the sum of the weights, which is exact only up to a positive "
                "scale when every weight is 0 or more (custom losses whose gradients go negative are refused)"
            )
        if targets[:-1] != tokens[1:]:
            raise UserError(
                f"datum {index}: target_tokens must be the model input shifted by one token (next-token "
                "targets); other targets are not supported by ct's Tinker API"
            )
        rows.append((tokens + targets[-1:], targets, weights))
    width = max(len(r[0]) for r in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    labels = np.full((len(rows), width), IGNORE_INDEX, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.float32)
    attention = np.zeros((len(rows), width), dtype=np.int64)
    for row, (seq, targets, weights) in enumerate(rows):
        ids[row, : len(seq)] = seq
        attention[row, : len(seq)] = 1
        n = len(targets)
        labels[row, :n] = np.where(weights != 0, targets, IGNORE_INDEX)
        mask[row, :n] = weights
    forward_frame = serialize_forward_backward_args(kwargs={"input_ids": ids, "attention_mask": attention})
    train_frame = serialize_forward_backward_args(
        kwargs={"input_ids": ids, "attention_mask": attention, "labels": labels, "loss_mask": mask}
    )
    return {
        "rows": rows,
        "forward_frame": forward_frame,
        "train_frame": train_frame,
        "shape": ids.shape,
    }


def batch_outputs(batch: dict[str, Any], logprobs: np.ndarray) -> bytes:
    """The SDK's ForwardBackwardOutput: per datum its targets' log-probabilities and elementwise
    losses, and the loss summed over every datum and token (weighted), as Tinker reports it."""
    outputs = []
    total = 0.0
    for row, (_seq, targets, weights) in enumerate(batch["rows"]):
        lp = logprobs[row, : len(targets)]
        elementwise = -lp * weights
        total += float(elementwise.sum())
        outputs.append({"logprobs": lp, "elementwise_loss": elementwise})
    return wire.encode_forward_backward_output(outputs, {"loss:sum": total})


def sample_output(results: list[dict[str, Any]], prompt: list[int], want_prompt: bool) -> bytes:
    sequences = []
    for item in results:
        tokens = [int(t) for t in item.get("token_ids") or []]
        logprobs = [
            _chosen_logprob(entry, token)
            for entry, token in zip(item.get("logprobs") or [], tokens, strict=False)
        ]
        sequences.append(
            {
                "tokens": tokens,
                "logprobs": logprobs if len(logprobs) == len(tokens) else None,
                "stop_reason": "length" if item.get("finish_reason") == "length" else "stop",
            }
        )
    prompt_logprobs = None
    if want_prompt and results:
        entries = results[0].get("prompt_logprobs") or []
        prompt_logprobs = [
            None if entry is None else _chosen_logprob(entry, token)
            for entry, token in zip(entries, prompt, strict=False)
        ]
    return wire.encode_sample_response(sequences, prompt_logprobs)


def _chosen_logprob(entry: Any, token: int) -> float | None:
    if not isinstance(entry, dict):
        return None
    value = entry.get(str(token))
    if isinstance(value, dict):
        return float(value["logprob"])
    return None

"""Sampling sub-jobs and deployments: batched generation over a key/value cache, logprobs, weight sync.

:class:`SamplingBackend` runs ``generate`` and ``generate-stream`` requests for one sampling
sub-job: greedy at temperature 0, otherwise temperature / top-k / top-p sampling from a generator
seeded per prompt when ``seed`` is given (so a seeded request repeats exactly). A prompt stops on
an EOS or ``stop_token_ids`` token, on a ``stop`` string (cut from the text, as vLLM does), or at
``max_tokens`` / the sub-job's ``max_seq_len`` (finish_reason ``length``).

:class:`Decoder` is the one decoding loop of ct_local: sampling sub-jobs and the OpenAI-compatible
endpoint of deployments (``ct_local.http.inference``, whose ``n`` choices are the prompts of one
batch) both generate through it, for the tiny model and real ones alike. The prompts of one request
are decoded together: up to :data:`MAX_BATCH_PROMPTS` consecutive
prompts are left-padded into one batch, the batch's prompts go through the model once, then each
step feeds every unfinished prompt's last token over the shared key/value cache, one forward pass
for the whole batch. A prompt that finishes leaves the batch (its cache rows are dropped). Each
prompt keeps its own parameters and its own seeded generator, so a prompt gives the same tokens in a
batch as alone; the tiny model costs about the same per pass for one prompt or sixty-four, which is
where the speed comes from.

:class:`SyncingTrainingBackend` is the training backend plus the ``weight-sync`` request: it
publishes a copy of the trainer's weights on the data plane's weight board
(:class:`ct_local.dataplane.boards.WeightBoard`), and each sampler adopts the newest copy before
its next request. Formats vllm and hf send the full weights (merged when the trainer is a LoRA
one; a LoRA sampler takes them as its base and zeroes its adapter); format lora sends only the
LoRA A/B tensors, into a sampler wrapped with the same adapter.

:func:`pick_token` is the one draw rule (greedy, temperature, top-k, top-p).

Imported only by worker threads and the chat endpoint: it imports torch.
"""

from __future__ import annotations

import inspect
import math
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from ct_core.fs import atomic_replace, temp_path_for
from ct_local.dataplane.boards import SamplingBoards
from ct_local.dataplane.sampling_plane import GenerateRequest, SamplingParams, max_seq_len_of
from ct_local.dataplane.sampling_plane import parse_generate as _parse_generate
from ct_local.http.errors import RequestValidationError
from ct_local.model import hf, tinylm
from ct_local.model.trainer import (
    RequestError,
    adapter_tensors,
    full_tensors,
    is_lora,
    load_adapter,
    load_full,
    peft_config_of,
    with_lora,
)
from ct_local.model.training_backend import TrainingBackend
from ct_local.model.training_spec import SpecError, parse_source
from ct_local.storage.checkpoint_paths import live_folder, resolve_checkpoint
from ct_local.storage.requests import RequestRow
from ct_local.storage.store import JobRow, Store

# Where a sampler keeps its synced weights over a graceful restart (in its live folder).
SYNCED_WEIGHTS_FILE = "synced.safetensors"
# Prompts decoded together, and the padded prompt tokens one batch may put through the model at
# once (that first pass can keep every position's logits, for prompt_logprobs).
MAX_BATCH_PROMPTS = 64
MAX_BATCH_TOKENS = 32 * 1024


class Cancelled(Exception):
    """The caller cancelled the running generation (a cancel-request operation)."""


class Prompt:
    """One prompt of a batch: its parameters, draw generator and what it has produced so far.

    ``limit`` bounds the whole sequence (prompt and output). A caller that reads each drawn token
    as it comes (a streamed chat answer) sets ``keep_logprobs``: after each pass ``step_logprobs``
    holds the log-probabilities the last token was drawn from (the model's, before temperature).
    """

    def __init__(self, index: int, prompt_ids: list[int], params: SamplingParams, limit: int) -> None:
        self.index = index
        self.prompt_ids = prompt_ids
        self.params = params
        self.limit = limit
        self.generator: torch.Generator | None = None
        if params.seed is not None:
            self.generator = torch.Generator().manual_seed(params.seed)
        self.ids = list(prompt_ids)
        self.out: list[int] = []
        self.logprobs: list[dict[str, Any]] = []
        self.prompt_logprobs: list[dict[str, Any] | None] | None = None
        self.finish = "length"
        self.text: str | None = None
        self.done = False
        self.error: RequestError | None = None
        self.keep_logprobs = False
        self.step_logprobs: torch.Tensor | None = None

    def out_of_room(self) -> bool:
        return len(self.out) >= self.params.max_tokens or len(self.ids) >= self.limit


def parse_request(frame: bytes, max_seq_len: int | None, vocab_size: int | None = None) -> GenerateRequest:
    try:
        return _parse_generate(frame, max_seq_len=max_seq_len, vocab_size=vocab_size)
    except RequestValidationError as exc:
        raise RequestError("; ".join(message for _, message in exc.problems)) from exc


class SamplingBackend:
    """Model of one sampling sub-job and its generate requests."""

    kinds: tuple[str, ...] = ("generate", "generate-stream")

    def __init__(
        self,
        store: Store,
        state_dir: Path,
        job: JobRow,
        sub_job: dict[str, Any],
        say: Callable[..., None],
        boards: SamplingBoards,
    ) -> None:
        self.job = job
        self.sub_job_id = str(sub_job["sub_job_id"])
        self.say = say
        self.boards = boards
        self.max_seq_len = max_seq_len_of(sub_job)
        model_name = str(sub_job.get("model_name") or "ct-local-tiny")
        # A real model's own tokenizer and end ids; the tiny model's bytes otherwise.
        real_tokenizer = hf.text_tokenizer(model_name)
        self.tokenizer: Any = real_tokenizer or tinylm.ByteTokenizer()
        self.stop_ids = real_tokenizer.stop_ids if real_tokenizer is not None else frozenset({tinylm.EOS_ID})
        self.live = live_folder(state_dir, job.job_id, self.sub_job_id)
        self.model = self._initial_model(store, sub_job)
        self.device = next(self.model.parameters()).device
        self.positions = hf.max_positions(self.model)
        peft_config = peft_config_of(sub_job)
        if peft_config:
            # The adapter starts as a no-op (B is zero) until the first lora sync fills it.
            self.model = with_lora(self.model, peft_config)
            self.say("LoRA adapter enabled from peft_config; waiting for an adapter sync")
        self.model.eval()
        self.weights_version = 0
        self._has_synced_weights = False
        self._restore_synced_weights()
        self.decoder = Decoder(self.model, self.tokenizer, self.stop_ids)

    def _initial_model(self, store: Store, sub_job: dict[str, Any]) -> torch.nn.Module:
        model_name = str(sub_job.get("model_name") or "ct-local-tiny")
        try:
            source = parse_source(sub_job.get("source_checkpoint_info"))
        except SpecError as exc:
            raise RuntimeError(str(exc)) from exc
        if source is None:
            model, origin = hf.base_model(model_name)
            self.say(f"building {origin} for sampling")
            return model
        if source.external_path is not None:
            self.say(f"sampling from Hugging Face weights in {source.external_path}")
            return hf.load_for(model_name, source.external_path)
        assert source.source_job_id is not None and source.checkpoint_id is not None
        row = resolve_checkpoint(store, source.source_job_id, source.checkpoint_id)
        if row is None or not row.path:
            raise RuntimeError(
                f"source checkpoint {source.checkpoint_id} of job {source.source_job_id} no longer exists"
            )
        self.say(f"sampling from checkpoint {row.checkpoint_id}")
        return hf.load_for(model_name, Path(row.path))

    def _restore_synced_weights(self) -> None:
        """Weights synced before a graceful restart (see :meth:`snapshot`) win over the source's."""
        path = self.live / SYNCED_WEIGHTS_FILE
        if not path.is_file():
            return
        from safetensors.torch import load_file

        self.model.load_state_dict(load_file(str(path)))
        shutil.rmtree(self.live, ignore_errors=True)
        self._has_synced_weights = True
        self.say("restored the weights synced before the last shutdown")

    def snapshot(self) -> None:
        """Keep synced weights across a graceful restart; a never-synced sampler has nothing to keep."""
        self._adopt_synced_weights()
        if self.weights_version == 0 and not self._has_synced_weights:
            return
        from safetensors.torch import save_file

        self.live.mkdir(parents=True, exist_ok=True)
        target = self.live / SYNCED_WEIGHTS_FILE
        tmp = temp_path_for(target)
        save_file({k: v.contiguous() for k, v in self.model.state_dict().items()}, str(tmp))
        atomic_replace(tmp, target, durable=False)

    def _adopt_synced_weights(self) -> None:
        published = self.boards.weights.latest(self.sub_job_id)
        if published is None or published.version <= self.weights_version:
            return
        if published.weight_format == "lora":
            load_adapter(self.model, published.tensors)
        else:
            load_full(self.model, published.tensors)
        self.weights_version = published.version
        self.say(f"adopted synced weights v{published.version} ({published.weight_format})")

    # --- requests -------------------------------------------------------------------------------

    def execute(self, row: RequestRow, frame: bytes | None) -> tuple[dict[str, Any], dict[str, Any]]:
        if row.kind not in self.kinds:
            raise RequestError(f"{row.kind} requests are not run by a sampling sub-job")
        if frame is None:
            raise RequestError("the request input is missing")
        from ct_core import wire

        self._adopt_synced_weights()
        options = wire.read_metadata(frame).get("response_options")
        options = options if isinstance(options, dict) else {}
        # The embedding's rows bound token ids (a real model often has more rows than tokenizer entries).
        vocab = int(self.model.get_input_embeddings().weight.shape[0])  # type: ignore[operator]
        request = parse_request(frame, self.max_seq_len, vocab)
        try:
            if row.kind == "generate-stream":
                return self._stream(row.request_id, request), {}
            prompts = self._prompts(request)
            # A prompt that cannot be run fails the whole request, as it did one prompt at a time.
            failed = next((p.error for p in prompts if p.error is not None), None)
            if failed is not None:
                raise failed
            results = [self._result(p) for p in self._run(row.request_id, prompts)]
        except Cancelled:
            return {"job_id": self.job.job_id, "cancelled": True}, {}
        finally:
            self.boards.cancels.forget(row.request_id)
        return {"job_id": self.job.job_id, "results": results}, options

    def _stream(self, request_id: str, request: GenerateRequest) -> dict[str, Any]:
        completed = failed = 0
        try:
            # Results are pushed in prompt order, each as soon as it and every earlier prompt are done.
            for prompt in self._run(request_id, self._prompts(request)):
                if prompt.error is not None:
                    failed += 1
                    event = {"type": "error", "index": prompt.index, "error": str(prompt.error)}
                else:
                    completed += 1
                    event = {"type": "result", "index": prompt.index, "result": self._result(prompt)}
                self.boards.events.push(request_id, event)
        except Cancelled:
            self.boards.events.push(
                request_id, {"type": "done", "completed": completed, "failed": failed, "cancelled": True}
            )
            raise
        self.boards.events.push(request_id, {"type": "done", "completed": completed, "failed": failed})
        return {
            "job_id": self.job.job_id,
            "count": len(request.prompts),
            "completed": completed,
            "failed": failed,
        }

    # --- sampling -------------------------------------------------------------------------------

    def _one(self, request_id: str, prompt: str | list[int], params: SamplingParams) -> dict[str, Any]:
        """One prompt on its own (a batch of one); raises RequestError when it cannot run."""
        (entry,) = self._run(request_id, [self._prompt(0, prompt, params)])
        if entry.error is not None:
            raise entry.error
        return self._result(entry)

    def _prompts(self, request: GenerateRequest) -> list[Prompt]:
        return [
            self._prompt(index, prompt, params)
            for index, (prompt, params) in enumerate(zip(request.prompts, request.params, strict=True))
        ]

    def _prompt(self, index: int, prompt: str | list[int], params: SamplingParams) -> Prompt:
        prompt_ids = self.tokenizer.encode(prompt) if isinstance(prompt, str) else list(prompt)
        limit = self.max_seq_len or self.positions
        entry = Prompt(index, prompt_ids, params, limit)
        if len(prompt_ids) >= limit:
            entry.error = RequestError(
                f"the prompt has {len(prompt_ids)} tokens; max_seq_len {limit} leaves no room to generate"
            )
            entry.done = True
        return entry

    def _run(self, request_id: str, prompts: list[Prompt]) -> Iterator[Prompt]:
        """Generate for every prompt, batch after batch; yields the prompts in order as they finish."""

        def cancelled() -> bool:
            # Asked at every decoding step; a test's hold fault parks the generation here first.
            self.boards.holds.park(self.job.job_id, request_id)
            return self.boards.cancels.is_cancelled(request_id)

        return self.decoder.run(prompts, cancelled)

    def _result(self, prompt: Prompt) -> dict[str, Any]:
        text = self.tokenizer.decode(prompt.out) if prompt.text is None else prompt.text
        result: dict[str, Any] = {"text": text, "token_ids": prompt.out, "finish_reason": prompt.finish}
        if prompt.params.logprobs is not None:
            result["logprobs"] = prompt.logprobs
        if prompt.params.prompt_logprobs is not None:
            result["prompt_logprobs"] = prompt.prompt_logprobs
        return result


class Decoder:
    """Batched decoding over a key/value cache for one model: the one decoding loop of ct_local.

    Sampling sub-jobs (:class:`SamplingBackend`) and the OpenAI-compatible endpoint of deployments
    (``ct_local.http.inference``) both generate through it. ``stop_ids`` are the model's end ids
    (a prompt's ``stop_token_ids`` add to them); ``tokenizer`` decodes text for ``stop`` strings,
    results and logprobs entries.
    """

    def __init__(self, model: Any, tokenizer: Any, stop_ids: frozenset[int]) -> None:
        self.model, self.tokenizer, self.stop_ids = model, tokenizer, stop_ids
        self.device = next(model.parameters()).device
        # transformers 5 renamed the key/value cache argument (and output field) to "cache".
        inner = model.get_base_model() if is_lora(model) else model
        parameters = inspect.signature(inner.forward).parameters
        self._cache_arg = "cache" if "cache" in parameters else "past_key_values"
        # Models that can return only the last position's logits save the rest of the vocabulary
        # projection over a batch's padded prompts.
        self._keeps_logits = "logits_to_keep" in parameters

    def run(self, prompts: list[Prompt], cancelled: Callable[[], bool]) -> Iterator[Prompt]:
        """Generate for every prompt, batch after batch; yields the prompts in order as they finish.

        Raises :class:`Cancelled` as soon as ``cancelled()`` is true between two passes.
        """
        for batch in _batches(prompts):
            released = 0
            for _ in self.passes(batch, cancelled):
                while released < len(batch) and batch[released].done:
                    yield batch[released]
                    released += 1
            yield from batch[released:]

    def steps(self, prompts: list[Prompt], cancelled: Callable[[], bool]) -> Iterator[list[Prompt]]:
        """Generate for every prompt, batch after batch; yields after every forward pass the prompts
        that drew a token in it (the token is their ``out[-1]``; ``done`` once it was their last)."""
        for batch in _batches(prompts):
            yield from self.passes(batch, cancelled)

    def passes(self, batch: list[Prompt], cancelled: Callable[[], bool]) -> Iterator[list[Prompt]]:
        """Decode one batch to its end; yields before the first pass (nothing drawn yet), then after
        every forward pass the prompts that drew a token in it (the token is their ``out[-1]``)."""
        yield []
        # The model's batch rows, in prompt order: the prompts still generating (a cache that
        # cannot drop rows keeps finished ones, whose output is then ignored).
        rows = [p for p in batch if not p.done]
        cache: Any = None
        mask = torch.zeros((0, 0), dtype=torch.long)
        while True:
            if cancelled():
                raise Cancelled()
            for prompt in rows:
                if not prompt.done and prompt.out_of_room():
                    prompt.done = True
            live = [i for i, prompt in enumerate(rows) if not prompt.done]
            if not live:
                return
            if cache is not None and len(live) < len(rows) and hasattr(cache, "batch_select_indices"):
                index = torch.tensor(live, device=self.device)
                cache.batch_select_indices(index)
                mask = mask[index]
                rows = [rows[i] for i in live]
            if cache is None:
                # The whole prompts once (or, without a cache, everything each time).
                step_ids, mask, positions = _left_padded([p.ids for p in rows])
                mask = mask.to(self.device)
            else:
                # Then one new token per prompt over the key/value cache.
                step_ids = torch.tensor([[p.ids[-1]] for p in rows])
                mask = torch.cat(
                    [mask, torch.ones((len(rows), 1), dtype=mask.dtype, device=self.device)], dim=1
                )
                positions = torch.tensor([[len(p.ids) - 1] for p in rows])
            step_ids, positions = step_ids.to(self.device), positions.to(self.device)
            scoring = any(not p.out and p.params.prompt_logprobs is not None for p in rows)
            kwargs: dict[str, Any] = {self._cache_arg: cache}
            if self._keeps_logits and not scoring:
                kwargs["logits_to_keep"] = 1
            with torch.no_grad():
                output = self.model(
                    input_ids=step_ids, attention_mask=mask, position_ids=positions, use_cache=True, **kwargs
                )
            cache = output.get(self._cache_arg)
            logits = output.logits
            # The greedy pick of every row is made where the logits are; only the rows that draw
            # at a temperature or report log-probabilities copy their last logits to the host.
            greedy = torch.argmax(logits[:, -1], dim=-1).tolist()
            hosted = self._hosted_last(logits, rows)
            drawn = []
            for row, prompt in enumerate(rows):
                if prompt.done:
                    continue
                if not prompt.out and prompt.params.prompt_logprobs is not None:
                    # Left padding: the prompt's own positions end at the last column.
                    start = logits.shape[1] - len(prompt.ids)
                    own = logits[row, start : start + len(prompt.prompt_ids)].float().cpu()
                    prompt.prompt_logprobs = self._prompt_logprobs(
                        own, prompt.prompt_ids, prompt.params.prompt_logprobs
                    )
                self._advance(prompt, hosted.get(row), greedy[row])
                drawn.append(prompt)
            yield drawn

    def _hosted_last(self, logits: torch.Tensor, rows: list[Prompt]) -> dict[int, torch.Tensor]:
        """The last position's logits (float32, on the host) of the rows that need more than the
        greedy token, by row; one copy for all of them."""
        wanted = [row for row, prompt in enumerate(rows) if not prompt.done and _needs_logits(prompt)]
        if not wanted:
            return {}
        last = logits[:, -1]
        if len(wanted) < len(rows):
            last = last[torch.tensor(wanted, device=last.device)]
        copied = last.float().cpu()
        return {row: copied[i] for i, row in enumerate(wanted)}

    def _advance(self, prompt: Prompt, last: torch.Tensor | None, greedy: int) -> None:
        """Draw one prompt's next token and apply its stop rules. ``last`` is its last logits on
        the host, given when :func:`_needs_logits` says the prompt reads more than ``greedy``."""
        params = prompt.params
        if params.temperature == 0:
            token = greedy
        else:
            assert last is not None
            token = self._pick(last, params, prompt.generator)
        if last is not None and (params.logprobs is not None or prompt.keep_logprobs):
            table = torch.log_softmax(last, dim=-1)
            if prompt.keep_logprobs:
                prompt.step_logprobs = table
            if params.logprobs is not None:
                prompt.logprobs.append(self._entry(table, token, params.logprobs))
        prompt.ids.append(token)
        prompt.out.append(token)
        if token in params.stop_token_ids or (token in self.stop_ids and not params.ignore_eos):
            # The stop token stays in token_ids but not in the text.
            prompt.finish, prompt.text, prompt.done = "stop", self.tokenizer.decode(prompt.out[:-1]), True
            return
        if params.stop:
            decoded = self.tokenizer.decode(prompt.out)
            cut = _stop_cut(decoded, params.stop)
            if cut is not None:
                prompt.finish, prompt.text, prompt.done = "stop", decoded[:cut], True
                return
        if prompt.out_of_room():
            prompt.done = True

    @staticmethod
    def _pick(logits: torch.Tensor, params: SamplingParams, generator: torch.Generator | None) -> int:
        return pick_token(
            logits,
            temperature=params.temperature,
            top_k=params.top_k,
            top_p=params.top_p,
            generator=generator,
        )

    def _entry(self, logprobs: torch.Tensor, token: int, k: int) -> dict[str, Any]:
        """The chosen token plus the k most likely ones, keyed by token id (vLLM's logprobs shape)."""
        ranked = _top_and_rank(logprobs, token, k)
        if ranked is None:
            # A tie decides an order: the whole vocabulary sorted, whose order among equal values
            # is the one these entries have always had.
            ranks = torch.argsort(logprobs, descending=True)
            ranked = ranks[:k].tolist(), int((ranks == token).nonzero()[0][0]) + 1
        top, rank_of_token = ranked
        entry: dict[str, Any] = {}
        entry[str(token)] = self._logprob(logprobs, token, rank_of_token)
        for rank, alt in enumerate(top, start=1):
            entry.setdefault(str(alt), self._logprob(logprobs, alt, rank))
        return entry

    def _logprob(self, logprobs: torch.Tensor, token: int, rank: int) -> dict[str, Any]:
        return {
            "logprob": float(logprobs[token]),
            "rank": rank,
            "decoded_token": self.tokenizer.decode([token]),
        }

    def _prompt_logprobs(
        self, logits: torch.Tensor, prompt: list[int], k: int
    ) -> list[dict[str, Any] | None]:
        table = torch.log_softmax(logits[: len(prompt)], dim=-1)
        entries: list[dict[str, Any] | None] = [None]
        for i in range(1, len(prompt)):
            entries.append(self._entry(table[i - 1], prompt[i], k))
        return entries


def pick_token(
    logits: torch.Tensor,
    *,
    temperature: float,
    top_k: int = 0,
    top_p: float = 1.0,
    generator: torch.Generator | None = None,
) -> int:
    """Draw the next token from one position's logits: greedy at temperature 0, else top-k / top-p sampling.

    Repeated calls with one ``generator`` draw several samples in a row, which is how a request
    asking for several completions of one prompt (OpenAI's ``n``) gets distinct yet repeatable ones.
    """
    if temperature == 0:
        return int(torch.argmax(logits))
    scaled = logits / temperature
    if top_k > 0 and top_k < scaled.numel():
        threshold = torch.topk(scaled, top_k).values[-1]
        scaled = scaled.masked_fill(scaled < threshold, -math.inf)
    if top_p < 1.0:
        ordered, order = torch.sort(scaled, descending=True)
        probs = torch.softmax(ordered, dim=-1)
        # Drop a token once the mass before it already reaches top_p; the most likely one always
        # stays, so even top_p 0 leaves something to draw.
        drop = torch.cumsum(probs, dim=-1) - probs >= top_p
        drop[0] = False
        scaled = scaled.clone()
        scaled[order[drop]] = -math.inf
    return int(torch.multinomial(torch.softmax(scaled, dim=-1), 1, generator=generator))


def _needs_logits(prompt: Prompt) -> bool:
    """Whether drawing ``prompt``'s next token reads its logits (more than the greedy pick)."""
    params = prompt.params
    return params.temperature != 0 or params.logprobs is not None or prompt.keep_logprobs


def _top_and_rank(logprobs: torch.Tensor, token: int, k: int) -> tuple[list[int], int] | None:
    """The ``k`` most likely ids in order and ``token``'s 1-based rank, without sorting the whole
    vocabulary; None when equal values make either depend on how a sort orders ties."""
    value = logprobs[token]
    if int((logprobs == value).sum()) != 1:
        return None
    rank = int((logprobs > value).sum()) + 1
    if k == 0:
        return [], rank
    if k >= logprobs.numel():
        return None
    # One more than asked: the k-th must be strictly above the next for the top k to be settled.
    values, ids = torch.topk(logprobs, k + 1)
    if not bool((values[:-1] > values[1:]).all()):
        return None
    return ids[:k].tolist(), rank


def _batches(prompts: list[Prompt]) -> Iterator[list[Prompt]]:
    """Consecutive runs of prompts, bounded in count and in padded prompt tokens."""
    batch: list[Prompt] = []
    longest = 0
    for prompt in prompts:
        grown = max(longest, len(prompt.prompt_ids))
        if batch and (len(batch) >= MAX_BATCH_PROMPTS or grown * (len(batch) + 1) > MAX_BATCH_TOKENS):
            yield batch
            batch, grown = [], len(prompt.prompt_ids)
        batch.append(prompt)
        longest = grown
    if batch:
        yield batch


def _left_padded(sequences: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Token ids padded on the left, the attention mask, and each real token's position.

    Padding on the left puts every prompt's last token in the last column, where the next token is
    read. The pad id is 0, a valid id for any vocabulary; masked positions never reach a real token.
    """
    width = max(len(ids) for ids in sequences)
    ids = torch.zeros((len(sequences), width), dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, width - len(sequence) :] = torch.tensor(sequence, dtype=torch.long)
        mask[row, width - len(sequence) :] = 1
    positions = (mask.cumsum(dim=-1) - 1).clamp(min=0)
    return ids, mask, positions


def _stop_cut(text: str, stops: tuple[str, ...]) -> int | None:
    found = [text.find(s) for s in stops if s in text]
    return min(found) if found else None


class SyncingTrainingBackend(TrainingBackend):
    """The training backend, plus ``weight-sync`` into sampling sub-jobs of the same server."""

    kinds: tuple[str, ...] = (*TrainingBackend.kinds, "weight-sync")

    def __init__(
        self,
        store: Store,
        state_dir: Path,
        job: JobRow,
        sub_job: dict[str, Any],
        say: Callable[..., None],
        boards: SamplingBoards,
    ) -> None:
        super().__init__(store, state_dir, job, sub_job, say)
        self.boards = boards

    def execute(self, row: RequestRow, frame: bytes | None) -> tuple[dict[str, Any], dict[str, Any]]:
        if row.kind != "weight-sync":
            return super().execute(row, frame)
        began = time.perf_counter()
        weight_format = str(row.params.get("weight_format") or "vllm")
        # One copy shared by every target: samplers only read it (load_state_dict copies into their own).
        if weight_format == "lora":
            if not is_lora(self.trainer.model):
                raise RequestError("weight_format 'lora' needs a training sub-job created with peft_config")
            tensors = adapter_tensors(self.trainer.model)
        else:
            tensors = full_tensors(self.trainer.model)
        clear = row.params.get("clear_cache") or {}
        targets = []
        for target in row.params.get("targets") or []:
            version = self.boards.weights.publish(str(target), tensors, weight_format)
            targets.append(
                {
                    "sub_job_id": target,
                    "recv": {
                        "recv": {"clear_cache": bool(clear.get(target, True)), "weights_version": version}
                    },
                }
            )
        self.say(
            f"synced weights ({weight_format}, global step {self.trainer.global_steps}) "
            f"to {len(targets)} sampler(s)"
        )
        return {
            "job_id": self.job.job_id,
            "source_sub_job_id": self.sub_job_id,
            "weight_format": weight_format,
            "global_steps": self.trainer.global_steps,
            "num_tensors": len(tensors),
            "elapsed_s": time.perf_counter() - began,
            "targets": targets,
        }, {}

"""Batched generation: a request's prompts decode together over one key/value cache.

The sampler runs the prompts of one request as a batch (left-padded, one forward pass per generated
position), so these tests pin that the batch gives exactly what each prompt gives alone: the same
greedy tokens, the same seeded samples, the same stops and lengths, whatever the prompt lengths and
per-prompt parameters around it. Two tests drive a sampling backend in this process (to count the
model's forward passes); the others go through a real server.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ct_testing import wait_until

from ct_core import wire

torch = pytest.importorskip("torch")


def _backend(tmp_path: Path, **inference: Any) -> Any:
    from ct_local.dataplane.boards import SamplingBoards
    from ct_local.model.sampler import SamplingBackend

    sub = {
        "sub_job_id": "batching:sampling:0",
        "job_type": "sampling",
        "model_name": "Qwen/Qwen3-0.6B",
        "inference_config": {"n_gpus": 1, **inference},
    }
    job: Any = SimpleNamespace(job_id="batching")
    return SamplingBackend(None, tmp_path, job, sub, lambda *a, **k: None, SamplingBoards())  # type: ignore[arg-type]


def _execute(backend: Any, logical: dict[str, Any], kind: str = "generate") -> dict[str, Any]:
    row: Any = SimpleNamespace(kind=kind, request_id=f"r-{random.random()}")
    body, _ = backend.execute(row, wire.dumps(logical))
    return body


def _prompts(count: int, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(256) for _ in range(rng.randrange(1, 24))] for _ in range(count)]


def test_one_request_of_many_prompts_decodes_them_together(tmp_path: Path) -> None:
    backend = _backend(tmp_path)
    calls: list[int] = []
    backend.model.register_forward_hook(
        lambda module, args, kwargs, output: calls.append(1), with_kwargs=True
    )
    prompts = _prompts(16)
    body = _execute(backend, {"prompts": prompts, "sampling_params": {"max_tokens": 8, "temperature": 0}})
    assert len(body["results"]) == 16
    # One pass over the padded prompts, then one per generated position: not one per prompt and token.
    assert len(calls) <= 8


def test_in_process_batch_matches_each_prompt_alone(tmp_path: Path) -> None:
    backend = _backend(tmp_path, max_seq_len=40)
    prompts = _prompts(24, seed=1)
    params: list[dict[str, Any]] = []
    for i in range(len(prompts)):
        entry: dict[str, Any] = {"max_tokens": 4 + i % 9, "ignore_eos": i % 2 == 0}
        if i % 3 == 0:
            entry.update(temperature=0)
        else:
            entry.update(temperature=0.9, top_p=0.95, top_k=50 if i % 4 else 0, seed=i)
        if i % 5 == 0:
            entry.update(logprobs=2)
        if i % 7 == 0:
            entry.update(prompt_logprobs=1)
        params.append(entry)
    batched = _execute(backend, {"prompts": prompts, "sampling_params": params})["results"]
    alone = [
        _execute(backend, {"prompts": [p], "sampling_params": q})["results"][0]
        for p, q in zip(prompts, params, strict=True)
    ]
    for together, single in zip(batched, alone, strict=True):
        _assert_same_result(together, single)


def _assert_same_result(together: dict[str, Any], single: dict[str, Any]) -> None:
    assert together["token_ids"] == single["token_ids"]
    assert together["text"] == single["text"]
    assert together["finish_reason"] == single["finish_reason"]
    assert set(together) == set(single)
    for name in ("logprobs", "prompt_logprobs"):
        if name not in single:
            continue
        for mine, theirs in zip(together[name], single[name], strict=True):
            if theirs is None:
                assert mine is None
                continue
            assert list(mine) == list(theirs)
            for token, entry in theirs.items():
                assert mine[token]["rank"] == entry["rank"]
                assert mine[token]["decoded_token"] == entry["decoded_token"]
                assert math.isclose(mine[token]["logprob"], entry["logprob"], abs_tol=1e-4)


def test_batched_greedy_equals_one_by_one_greedy(sp) -> None:
    sp.start()
    # Lengths from 1 to 60 tokens: most prompts are left-padded in the batch.
    rng = random.Random(2)
    prompts: list[Any] = [[rng.randrange(256) for _ in range(n)] for n in (1, 2, 3, 5, 8, 13, 21, 34, 55, 60)]
    prompts += ["Hello", "a", "The quick brown fox"]
    params = {"max_tokens": 12, "temperature": 0, "ignore_eos": True}
    batched = sp.generate(prompts, **params)
    alone = [sp.generate([prompt], **params)[0] for prompt in prompts]
    assert batched == alone
    # The 60-token prompt reaches max_seq_len (64) after 4 tokens, inside the batch too.
    assert batched[9]["finish_reason"] == "length" and len(batched[9]["token_ids"]) == 4


def test_batched_seeded_sampling_equals_each_prompt_alone(sp) -> None:
    sp.start()
    prompts = ["abc", [1, 2, 3, 4, 5, 6, 7, 8, 9], "x", "hello there"]
    params = [
        {"max_tokens": 10, "temperature": 1.2, "seed": 5, "ignore_eos": True},
        {"max_tokens": 6, "temperature": 0.7, "top_k": 20, "seed": 9, "ignore_eos": True},
        {"max_tokens": 8, "temperature": 0},
        {"max_tokens": 9, "temperature": 1.0, "top_p": 0.8, "seed": 1, "ignore_eos": True},
    ]
    logical = {"prompts": prompts, "sampling_params": params}
    first = sp.result(sp.submit(logical))["results"]
    again = sp.result(sp.submit(logical))["results"]
    assert first == again
    alone = [sp.generate([p], **q)[0] for p, q in zip(prompts, params, strict=True)]
    assert first == alone


def test_stops_inside_a_batch_match_each_prompt_alone(sp) -> None:
    sp.start()
    greedy = sp.generate(["Hello", "world"], max_tokens=8, temperature=0, ignore_eos=True)
    stop_id = greedy[0]["token_ids"][2]
    params = [
        {"max_tokens": 8, "temperature": 0, "ignore_eos": True, "stop_token_ids": [stop_id]},
        {"max_tokens": 8, "temperature": 0, "ignore_eos": True, "stop": [greedy[1]["text"][-1]]},
        {"max_tokens": 3, "temperature": 0, "ignore_eos": True},
    ]
    prompts = ["Hello", "world", "Hello"]
    batched = sp.result(sp.submit({"prompts": prompts, "sampling_params": params}))["results"]
    alone = [sp.generate([p], **q)[0] for p, q in zip(prompts, params, strict=True)]
    assert batched == alone
    assert batched[0]["finish_reason"] == "stop" and batched[1]["finish_reason"] == "stop"
    assert batched[2]["token_ids"] == greedy[0]["token_ids"][:3]


def _drain(sp: Any, request_id: str) -> list[dict[str, Any]]:
    """Every event of a generate-stream request, up to its done event."""
    events: list[dict[str, Any]] = []

    def done() -> bool:
        events.extend(sp.status(request_id)["events"])
        return bool(events) and events[-1]["type"] == "done"

    wait_until(done, message=lambda: f"no done event; events so far: {events}")
    return events


def test_stream_of_a_batch_keeps_index_order(sp) -> None:
    sp.start()
    prompts = ["a", [98, 99, 100, 101], "longer prompt here", "d"]
    params = [{"max_tokens": n, "temperature": 0, "ignore_eos": True} for n in (9, 2, 5, 1)]
    request_id = sp.submit({"prompts": prompts, "sampling_params": params}, "generate-stream")
    events = _drain(sp, request_id)
    results = [e for e in events if e["type"] == "result"]
    assert [e["index"] for e in results] == [0, 1, 2, 3]
    alone = [sp.generate([p], **q)[0] for p, q in zip(prompts, params, strict=True)]
    assert [e["result"] for e in results] == alone
    assert events[-1] == {"type": "done", "completed": 4, "failed": 0}

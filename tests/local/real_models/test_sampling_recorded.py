"""Sampling on a real Hugging Face model gives the tokens and log-probabilities it gave before the
decoding loop was made cheaper per token.

The expected values in ``sampling_recorded.json`` were recorded from the decoding loop as it was
before: logits copied whole to the host every step, the greedy token picked there, and each
logprobs entry ranked by sorting the whole vocabulary. One request mixes greedy and seeded sampled
prompts of different lengths (so the batch is padded and its rows take different paths), with
logprobs, prompt_logprobs, a stop token and a stop string, and runs on the qwen3 and llama test
models over a real server. Token ids, ranks and texts must match exactly; log-probabilities to
float32 rounding.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

RECORDED = Path(__file__).with_name("sampling_recorded.json")
#: Two float32 log-probabilities computed the same way agree far closer than this.
LOGPROB_TOLERANCE = 1e-5

PROMPTS: list[Any] = [
    "hello world, this is a prompt",
    [5, 17, 42],
    "a b c d e f g h i j",
    [100, 101, 102, 103, 104, 105, 106, 107],
    "hi",
]
PARAMS: list[dict[str, Any]] = [
    {"temperature": 0, "max_tokens": 8, "logprobs": 3, "prompt_logprobs": 2},
    {"temperature": 0.9, "seed": 7, "max_tokens": 8, "logprobs": 2, "stop": ["z"]},
    {"temperature": 0.7, "top_k": 20, "top_p": 0.9, "seed": 11, "max_tokens": 6, "logprobs": 0},
    {"temperature": 0, "max_tokens": 10, "ignore_eos": True, "logprobs": 1},
    {"temperature": 1.0, "seed": 3, "max_tokens": 8, "stop_token_ids": [170]},
]


def _sub_jobs(architecture: str) -> list[dict[str, Any]]:
    return [
        {
            "job_type": "sampling",
            "model_name": f"tiny-{architecture}",
            "inference_config": {"n_gpus": 1, "max_seq_len": 64},
        }
    ]


def _plain(value: Any) -> Any:
    """Results as JSON would carry them (numpy scalars and tuples to Python values and lists)."""
    return json.loads(json.dumps(value, default=lambda item: item.item()))


def _same(got: Any, want: Any, where: str) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: {got!r} != {want!r}"
        for key in want:
            _same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for index, (item, expected) in enumerate(zip(got, want, strict=True)):
            _same(item, expected, f"{where}[{index}]")
    elif isinstance(want, float):
        assert isinstance(got, float), f"{where}: {got!r} is not a float"
        assert math.isclose(got, want, rel_tol=0, abs_tol=LOGPROB_TOLERANCE), f"{where}: {got} != {want}"
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize("architecture", ["qwen3", "llama"])
def test_a_mixed_batch_gives_the_recorded_tokens_and_logprobs(driver: Any, architecture: str) -> None:
    driver.start(*_sub_jobs(architecture))
    logical = {"prompts": PROMPTS, "sampling_params": PARAMS}
    results = _plain(driver.result(driver.post_frame("generate", logical))["results"])
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))[architecture]
    _same(results, recorded, architecture)
    # The request exercises what it claims to: both finish reasons, a stop string and a stop token,
    # and sampled tokens ranked below the top (so a rank is more than the top entries' order).
    assert [r["finish_reason"] for r in results] == ["length", "stop", "length", "length", "stop"]
    assert results[4]["token_ids"][-1] == 170
    sampled = results[2]
    ranks = [e[str(t)]["rank"] for e, t in zip(sampled["logprobs"], sampled["token_ids"], strict=True)]
    assert max(ranks) > 1

"""Generation benchmark: client-side request encoding (ours against the reference) and sampler speed.

1. Encoding: turning 10,000 pre-tokenized prompts into the bytes a generate POST sends. Ours runs
   `normalize_prompts` + `build_logical_request` (int32 tensors) + `ct_core.wire.dumps`; the
   reference runs what its `generate` does before posting (the logical dict + its `wire.dumps`).
   Best of several runs each, with the frame size. The max_seq_len check is not timed (it needs a
   server and is cached per job after the first call on both clients).
2. Sampler: tokens per second of the local sampling backend (ct_local.model.sampler) on the tiny model,
   greedy and sampled, in this process, without HTTP.
3. Batched generate: 64 prompts of mixed lengths (8 to 48 tokens) as one generate (decoded together
   over one key/value cache) against the same 64 prompts one after another, greedy and seeded
   sampling; prints tokens/s, the speedup with its target (>= 5x) and whether the outputs are
   identical token for token.

    python bench/generate.py            # 10,000 prompts of 128 tokens
    python bench/generate.py --quick    # 1,000 prompts (also CT_BENCH_QUICK=1)
    python bench/generate.py --json out.json

Timings are informative only; nothing here asserts on them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections.abc import Callable
from typing import Any

from reference_path import reference_on_path
from verdict import report

PROMPTS = 10_000
PROMPT_TOKENS = 128
VOCAB = 151_000  # a Qwen-sized vocabulary: ids need more than 16 bits
REPEATS = 5
BATCH_PROMPTS = 64
BATCH_SPEEDUP_TARGET = 5.0
RESPONSE_OPTIONS = {"response_options": {"format": "dssst1", "delivery": "chunked"}}


def _best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeats):
        began = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - began)
    return best, value


def encoding(count: int) -> dict[str, Any]:
    from ct_core import wire
    from ct_core.data.generate import build_logical_request, normalize_prompts

    rng = random.Random(0)
    prompts = [[rng.randrange(VOCAB) for _ in range(PROMPT_TOKENS)] for _ in range(count)]
    params = {"max_tokens": 64, "temperature": 0.7}

    def ours() -> bytes:
        logical = build_logical_request(normalize_prompts(prompts), params, None, None, tensors=True)
        return wire.dumps(logical, metadata=RESPONSE_OPTIONS)

    report: dict[str, Any] = {"prompts": count, "prompt_tokens": PROMPT_TOKENS}
    seconds, frame = _best(ours, REPEATS)
    report["ours"] = {"seconds": seconds, "frame_bytes": len(frame)}
    reference_on_path()
    try:
        from cortex_training import wire as reference_wire
    except ImportError:
        report["reference"] = None
        return report

    def theirs() -> bytes:
        payload = {"prompts": prompts, "sampling_params": params}
        return bytes(reference_wire.dumps(payload, metadata=RESPONSE_OPTIONS))

    seconds, frame = _best(theirs, REPEATS)
    report["reference"] = {"seconds": seconds, "frame_bytes": len(frame)}
    report["speedup"] = report["reference"]["seconds"] / report["ours"]["seconds"]
    return report


def _backend() -> Any:
    from pathlib import Path
    from types import SimpleNamespace

    from ct_local.dataplane.boards import SamplingBoards
    from ct_local.model import sampler as sampling

    # The backend reads only the job id from the job row.
    job: Any = SimpleNamespace(job_id="bench")
    sub = {
        "sub_job_id": "bench:sampling:0",
        "job_type": "sampling",
        "model_name": "bench",
        "inference_config": {},
    }
    return sampling.SamplingBackend(
        None,  # type: ignore[arg-type]
        Path("."),
        job,
        sub,
        lambda *a, **k: None,
        SamplingBoards(),
    )


def sampler(max_tokens: int) -> dict[str, Any]:
    from ct_local.dataplane.sampling_plane import SamplingParams

    backend = _backend()
    report = {}
    for name, params in (
        ("greedy", SamplingParams(max_tokens=max_tokens, temperature=0, ignore_eos=True)),
        (
            "sampled",
            SamplingParams(max_tokens=max_tokens, temperature=0.8, top_p=0.9, seed=1, ignore_eos=True),
        ),
    ):

        def one(p: SamplingParams = params) -> dict[str, Any]:
            return backend._one("bench", list(range(32)), p)

        seconds, result = _best(one, 3)
        report[name] = {
            "tokens": len(result["token_ids"]),
            "tokens_per_s": len(result["token_ids"]) / seconds,
        }
    return report


def batched(max_tokens: int) -> dict[str, Any]:
    """One generate of BATCH_PROMPTS prompts against the same prompts one by one."""
    from ct_local.dataplane.sampling_plane import SamplingParams

    backend = _backend()
    rng = random.Random(1)
    prompts = [[rng.randrange(256) for _ in range(rng.randrange(8, 49))] for _ in range(BATCH_PROMPTS)]
    report: dict[str, Any] = {"prompts": BATCH_PROMPTS, "max_tokens": max_tokens}
    for name, params in (
        ("greedy", SamplingParams(max_tokens=max_tokens, temperature=0, ignore_eos=True)),
        (
            "sampled",
            SamplingParams(max_tokens=max_tokens, temperature=0.8, top_p=0.9, seed=1, ignore_eos=True),
        ),
    ):

        def together(p: SamplingParams = params) -> list[dict[str, Any]]:
            entries = [backend._prompt(i, prompt, p) for i, prompt in enumerate(prompts)]
            return [backend._result(entry) for entry in backend._run("bench", entries)]

        def one_by_one(p: SamplingParams = params) -> list[dict[str, Any]]:
            return [backend._one("bench", prompt, p) for prompt in prompts]

        batch_s, batch_out = _best(together, 3)
        seq_s, seq_out = _best(one_by_one, 1)
        tokens = sum(len(r["token_ids"]) for r in batch_out)
        report[name] = {
            "tokens": tokens,
            "batched_s": batch_s,
            "sequential_s": seq_s,
            "batched_tokens_per_s": tokens / batch_s,
            "sequential_tokens_per_s": tokens / seq_s,
            "speedup": seq_s / batch_s,
            "identical": [r["token_ids"] for r in batch_out] == [r["token_ids"] for r in seq_out],
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", default=bool(os.environ.get("CT_BENCH_QUICK")))
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args()
    count = PROMPTS // 10 if args.quick else PROMPTS
    enc = encoding(count)
    line = f"encode {enc['prompts']} prompts x {PROMPT_TOKENS} tokens: "
    line += f"ours {enc['ours']['seconds'] * 1000:.1f} ms"
    line += f" ({enc['ours']['frame_bytes'] / 1e6:.2f} MB)"
    if enc.get("reference"):
        line += f", reference {enc['reference']['seconds'] * 1000:.1f} ms"
        line += f" ({enc['reference']['frame_bytes'] / 1e6:.2f} MB), {enc['speedup']:.1f}x"
    print(line)
    samp = sampler(32 if args.quick else 128)
    for name, row in samp.items():
        print(f"sampler {name}: {row['tokens']} tokens, {row['tokens_per_s']:.0f} tokens/s")
    batch = batched(32 if args.quick else 128)
    for name in ("greedy", "sampled"):
        row = batch[name]
        print(
            f"generate {batch['prompts']} prompts x {batch['max_tokens']} tokens {name}: "
            f"batched {row['batched_s']:.2f} s ({row['batched_tokens_per_s']:.0f} tokens/s), "
            f"one by one {row['sequential_s']:.2f} s ({row['sequential_tokens_per_s']:.0f} tokens/s), "
            f"identical tokens: {'yes' if row['identical'] else 'NO'}"
        )
        report(
            f"batched generation, {name}",
            row["speedup"],
            "the same prompts one by one",
            BATCH_SPEEDUP_TARGET,
            at_most=False,
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"encoding": enc, "sampler": samp, "batched": batch}, handle, indent=2)


if __name__ == "__main__":
    main()

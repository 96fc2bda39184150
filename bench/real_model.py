"""Training and sampling speed of a real model in `ct local serve`, against plain transformers.

One run builds a random-init Qwen3 model (nothing is downloaded), saves it with a small tokenizer,
starts `python -m ct_local serve --model bench=FOLDER` on the chosen device, and measures, on the
same weights and in the same run:

- training tokens/s: the server's forward-backward + step requests (over HTTP, as a client sees
  them) against transformers' own training step (`model(input_ids, labels=...)`, backward, AdamW
  step) in this process;
- sampling tokens/s: one generate request of `--batch-sample` prompts (greedy, `ignore_eos`, a
  fixed number of new tokens each) against `model.generate` on the same prompts;
- on CUDA, the training MFU: 6 x parameters x tokens/s / the GPU's peak dense bf16 FLOP/s
  (`--peak-tflops`, or looked up from the GPU's name), with a target of 35 %.

Each side runs `--warmup` untimed rounds first. The ratios (server / transformers) are printed,
and `--json FILE` writes every number. Usage:

    .venv/bin/python bench/real_model.py                       # CPU: a ~4M-parameter model
    .venv/bin/python bench/real_model.py --device cuda         # GPU: the ~0.6B config at 2k context, bf16

The GPU preset follows Qwen3-0.6B's shape (28 layers, hidden 1024, vocab 151936): full fine-tune,
batches of `--batch-train` sequences of `--seq-len` tokens, sampling at batch 64.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from verdict import report

REPO = Path(__file__).resolve().parents[1]
#: Training MFU target on a GPU.
MFU_TARGET = 0.35
#: Peak dense bf16 FLOP/s (in TFLOP/s) by a substring of the GPU's name.
PEAK_BF16_TFLOPS = {"H200": 989.0, "H100": 989.0, "B200": 2250.0, "A100": 312.0, "L40": 181.0, "A10": 125.0}
#: Only a hang gets near these.
START_LIMIT_S = 300.0
REQUEST_LIMIT_S = 1800.0

PRESETS: dict[str, dict[str, Any]] = {
    "cpu": {
        "shape": {
            "vocab_size": 2048,
            "hidden_size": 256,
            "intermediate_size": 768,
            "num_hidden_layers": 4,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 64,
        },
        "seq_len": 256,
        "batch_train": 4,
        "batch_sample": 8,
        "prompt_len": 32,
        "new_tokens": 32,
        "steps": 5,
        "dtype": "float32",
    },
    "cuda": {
        "shape": {
            "vocab_size": 151936,
            "hidden_size": 1024,
            "intermediate_size": 3072,
            "num_hidden_layers": 28,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "head_dim": 128,
        },
        "seq_len": 2048,
        "batch_train": 8,
        "batch_sample": 64,
        "prompt_len": 128,
        "new_tokens": 128,
        "steps": 10,
        "dtype": "bfloat16",
    },
}


def build_folder(folder: Path, shape: dict[str, Any], seq_len: int) -> int:
    """Save a random-init Qwen3 model of ``shape`` with a small BPE tokenizer; its parameter count."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=512,
        special_tokens=["<|pad|>", "<|end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    raw.train_from_iterator(["a small corpus for a benchmark tokenizer"] * 10, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<|pad|>", eos_token="<|end|>")
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}<|end|>{% endfor %}"
    config = Qwen3Config(
        **shape,
        max_position_embeddings=max(seq_len * 2, 4096),
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(config)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return sum(p.numel() for p in model.parameters())


class Server:
    """`python -m ct_local serve` on a state folder of its own, serving the bench model."""

    def __init__(self, work: Path, folder: Path, device: str, dtype: str) -> None:
        ready = work / "ready.json"
        self.log = (work / "server.log").open("wb")
        command = [
            sys.executable,
            "-m",
            "ct_local",
            "serve",
            "--port",
            "0",
            "--state-dir",
            str(work / "state"),
            "--ready-file",
            str(ready),
            "--model",
            f"bench={folder}",
            "--device",
            device,
            "--dtype",
            dtype,
            "--hardware",
            "H200=1000",
            "--settings-json",
            json.dumps({"torch_threads": os.cpu_count() or 1}),
        ]
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_LIMIT_S
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start; see {work / 'server.log'}")
            time.sleep(0.1)
        self.base_url = json.loads(ready.read_text())["base_url"]
        self.http = httpx.Client(base_url=self.base_url, timeout=600)
        self.prefix = "/api/v2/databases/BENCH/schemas/PUBLIC/cortex-training"
        self.job = ""

    def start_job(self, seq_len: int) -> None:
        config = {"n_gpus": 1, "max_seq_len": seq_len, "optimizer": {"name": "AdamW", "lr": 1e-5}}
        body = {
            "sub_job_configs": [
                {"job_type": "training", "model_name": "bench", "training_config": config},
                {
                    "job_type": "sampling",
                    "model_name": "bench",
                    "inference_config": {"n_gpus": 1, "max_seq_len": seq_len},
                },
            ]
        }
        answer = self.http.post(self.prefix, json=body)
        answer.raise_for_status()
        self.job = answer.json()["job_id"]
        deadline = time.monotonic() + START_LIMIT_S
        while self.http.get(f"{self.prefix}/{self.job}").json()["status"] != "running":
            if time.monotonic() > deadline:
                raise RuntimeError("the bench job never ran")
            time.sleep(0.1)

    def wait(self, answer: httpx.Response) -> dict[str, Any]:
        from ct_core import wire

        answer.raise_for_status()
        request_id = answer.json()["request_id"]
        deadline = time.monotonic() + REQUEST_LIMIT_S
        while True:
            status = self.http.get(f"{self.prefix}/{self.job}/requests/{request_id}").json()
            if status["status"] == "done":
                result = status["result"]
                if result.get("wire_format") == "DSSST1":
                    return dict(wire.loads(base64.b64decode(result["payload_b64"]), backend="numpy"))
                return dict(result)
            if status["status"] in {"failed", "cancelled"} or time.monotonic() > deadline:
                raise RuntimeError(f"request {request_id}: {status}")
            time.sleep(0.005)

    def frame(self, action: str, logical: dict[str, Any]) -> dict[str, Any]:
        from ct_core import wire

        content = wire.dumps(logical)
        headers = {"content-type": "application/octet-stream"}
        return self.wait(
            self.http.post(f"{self.prefix}/{self.job}/{action}", content=content, headers=headers)
        )

    def train_step(self, ids: Any) -> None:
        labels = ids.clone()
        labels[:, :-1] = ids[:, 1:]
        labels[:, -1] = -100
        self.frame("forward-backward", {"args": (), "kwargs": {"input_ids": ids, "labels": labels}})
        self.wait(self.http.post(f"{self.prefix}/{self.job}/step", json={}))

    def generate(self, prompts: list[list[int]], new_tokens: int) -> int:
        params = {"max_tokens": new_tokens, "temperature": 0, "ignore_eos": True}
        result = self.frame("generate", {"prompts": prompts, "sampling_params": params})
        return sum(len(r["token_ids"]) for r in result["results"])

    def close(self) -> None:
        self.http.close()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def timed(run: Any, rounds: int, warmup: int, sync: Any) -> float:
    """Seconds per round of ``run`` after ``warmup`` untimed ones."""
    for _ in range(warmup):
        run()
    sync()
    start = time.perf_counter()
    for _ in range(rounds):
        run()
    sync()
    return (time.perf_counter() - start) / rounds


def transformers_baseline(
    folder: Path, preset: dict[str, Any], train_ids: Any, prompts: Any, device: str, dtype: Any, warmup: int
) -> tuple[float, float]:
    """Seconds per training step and per batched generate of plain transformers on the same model."""
    import torch
    from transformers import AutoModelForCausalLM

    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    on_device = train_ids.to(device)

    def hf_step() -> None:
        loss = model(input_ids=on_device, labels=on_device).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    hf_train_s = timed(hf_step, preset["steps"], warmup, sync)
    model.eval()
    prompt_device = prompts.to(device)

    def hf_generate() -> None:
        with torch.no_grad():
            model.generate(
                input_ids=prompt_device,
                attention_mask=torch.ones_like(prompt_device),
                max_new_tokens=preset["new_tokens"],
                min_new_tokens=preset["new_tokens"],
                do_sample=False,
                pad_token_id=0,
            )

    hf_sample_s = timed(hf_generate, 1, warmup, sync)
    return hf_train_s, hf_sample_s


def peak_tflops(device: str, given: float | None) -> float | None:
    if given:
        return given
    import torch

    if not device.startswith("cuda"):
        return None
    name = torch.cuda.get_device_name(torch.device(device if ":" in device else "cuda:0"))
    return next((peak for key, peak in PEAK_BF16_TFLOPS.items() if key in name), None)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (picks the preset)")
    parser.add_argument("--steps", type=int, help="timed training steps (default: the preset's)")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--seq-len", type=int)
    parser.add_argument("--batch-train", type=int)
    parser.add_argument("--batch-sample", type=int)
    parser.add_argument("--new-tokens", type=int)
    parser.add_argument("--peak-tflops", type=float, help="the GPU's peak dense bf16 TFLOP/s")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()

    import torch

    preset = dict(PRESETS["cuda" if args.device.startswith("cuda") else "cpu"])
    for key in ("steps", "seq_len", "batch_train", "batch_sample", "new_tokens"):
        if getattr(args, key) is not None:
            preset[key] = getattr(args, key)
    if args.device == "cpu":
        torch.set_num_threads(os.cpu_count() or 1)
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[preset["dtype"]]
    device = args.device if args.device != "cuda" else "cuda:0"

    with tempfile.TemporaryDirectory(prefix="ct-bench-real-") as tmp:
        work = Path(tmp)
        folder = work / "model"
        params = build_folder(folder, preset["shape"], preset["seq_len"])
        vocab = preset["shape"]["vocab_size"]
        generator = torch.Generator().manual_seed(1)
        # Token ids below the small tokenizer's size, so every side reads them alike.
        train_ids = torch.randint(0, 500, (preset["batch_train"], preset["seq_len"]), generator=generator)
        prompts = torch.randint(0, 500, (preset["batch_sample"], preset["prompt_len"]), generator=generator)
        train_tokens = train_ids.numel()
        print(f"model: Qwen3, {params / 1e6:.1f}M parameters, vocab {vocab}, {preset['dtype']} on {device}")

        hf_train_s, hf_sample_s = transformers_baseline(
            folder, preset, train_ids, prompts, device, dtype, args.warmup
        )
        if device.startswith("cuda"):
            torch.cuda.empty_cache()

        # --- the local server ------------------------------------------------------------------------
        server = Server(work, folder, args.device, preset["dtype"])
        try:
            server.start_job(preset["seq_len"] + preset["new_tokens"] + preset["prompt_len"])
            ct_train_s = timed(
                lambda: server.train_step(train_ids), preset["steps"], args.warmup, lambda: None
            )
            listed = prompts.tolist()
            ct_sample_s = timed(
                lambda: server.generate(listed, preset["new_tokens"]), 1, args.warmup, lambda: None
            )
        finally:
            server.close()

    sampled = preset["batch_sample"] * preset["new_tokens"]
    numbers: dict[str, Any] = {
        "device": device,
        "dtype": preset["dtype"],
        "parameters": params,
        "train_tokens_per_step": train_tokens,
        "train_tokens_per_s": {"ct": train_tokens / ct_train_s, "transformers": train_tokens / hf_train_s},
        "sample_tokens_per_s": {"ct": sampled / ct_sample_s, "transformers": sampled / hf_sample_s},
    }
    print(f"{'':24}{'ct local serve':>16}{'transformers':>16}{'ratio':>8}")
    for label, key in (
        ("training tokens/s", "train_tokens_per_s"),
        ("sampling tokens/s", "sample_tokens_per_s"),
    ):
        ct_value, hf_value = numbers[key]["ct"], numbers[key]["transformers"]
        print(f"{label:24}{ct_value:16.1f}{hf_value:16.1f}{ct_value / hf_value:8.2f}")
    peak = peak_tflops(device, args.peak_tflops)
    if peak:
        for side in ("ct", "transformers"):
            mfu = 6 * params * numbers["train_tokens_per_s"][side] / (peak * 1e12)
            numbers.setdefault("mfu", {})[side] = mfu
            print(f"training MFU ({side}): {mfu:.1%} of {peak:.0f} TFLOP/s")
        report(
            "training MFU of ct local serve",
            numbers["mfu"]["ct"],
            f"the GPU's peak dense bf16 {peak:.0f} TFLOP/s",
            MFU_TARGET,
            at_most=False,
        )
    else:
        print("(no verdict: the MFU target applies on a GPU whose peak is known; the ratios are informative)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(numbers, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The cost of the Tinker layer: the SDK's pipelined loop against the same loop through ct_core.

    python bench/tinker_loop.py               # 30 steps each way, after 3 warm-up steps
    python bench/tinker_loop.py --steps 100 --json out.json

Starts one `ct local serve` (tiny model, fast lifecycle) with the Tinker API inside it, then runs
on that server, taking turns:

- direct: a LoRA job created through ct_core; each step is one forward-backward and one step sent
  back to back, with two steps in flight (`client.pipeline(..., workers=4)`), the loop of
  docs/training-loop.md.
- tinker: the real `tinker` SDK pointed at the same server (TINKER_BASE_URL); each step is
  `forward_backward(..., "cross_entropy")` and `optim_step(AdamParams)` sent before the previous
  step's results are read, two steps in flight, the SDK's own pipelining.

Both train on the same batch (two short texts, next-token targets). It prints steps per second of
each and the ratio; the target is that the Tinker layer costs at most 10 % (tinker >= 0.9x direct).
Numbers are wall-clock on this machine; nothing here is asserted. On a machine others load too,
wall-clock swings from round to round, so it also prints the CPU time each loop spends per step
(the server process and this one together), which the load moves much less: the Tinker layer's
own cost is the difference. That CPU time is also shown split in two: the server process (where the
Tinker API and its translation run) and this process (ct_core's client, or the `tinker` SDK, which
is not ours to change).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from verdict import report

BASE_MODEL = "Qwen/Qwen3-0.6B"
TEXTS = ["ct trains a tiny model on the local server.", "the loss falls step after step."]
LORA_RANK = 8
LEARNING_RATE = 1e-3
IN_FLIGHT = 2
#: The modules a Tinker training client adapts (train_attn and train_mlp), so both loops train the same.
TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
#: The server's lifecycle delays: a job runs in well under a second.
SERVER_SETTINGS = {
    "pending_delay_s": 0.02,
    "placing_delay_s": 0.02,
    "initializing_delay_s": 0.02,
    "tick_s": 0.01,
}
SERVER_START_TIMEOUT_S = 180.0
TARGET_RATIO = 0.9


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    ready = folder / "ready.json"
    command = [
        sys.executable, "-m", "ct_local", "serve", "--host", "127.0.0.1", "--port", "0",
        "--state-dir", str(folder / "state"), "--ready-file", str(ready),
        "--settings-json", json.dumps(SERVER_SETTINGS),
    ]  # fmt: skip
    log = (folder / "server.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the local server did not start; see {folder / 'server.log'}")
        time.sleep(0.05)
    return process, json.loads(ready.read_text())["base_url"]


def token_rows() -> list[list[int]]:
    return [list(text.encode("utf-8")) for text in TEXTS]


def cpu_seconds(server: psutil.Process) -> tuple[float, float]:
    """CPU time used so far by the server process and by this one (every thread of each)."""
    times = server.cpu_times()
    return times.user + times.system, time.process_time()


def direct_loop(base_url: str) -> Callable[[int], float]:
    """ct_core: the job a Tinker training client becomes, and its pipelined loop."""
    from ct_core import CortexTrainingClient, SubJobConfig
    from ct_core.data.payloads import serialize_forward_backward_args

    client = CortexTrainingClient(
        base_url=base_url, database="BENCH_DB", schema="PUBLIC", poll_interval=0.01, poll_max_interval=0.05
    )
    peft = {"peft_type": "Lora", "r": LORA_RANK, "lora_alpha": LORA_RANK, "target_modules": list(TARGETS)}
    trainer = SubJobConfig.training_job(
        BASE_MODEL,
        optimizer={"name": "AdamW", "lr": LEARNING_RATE, "betas": [0.9, 0.95], "eps": 1e-12},
        train_batch_size=1,
        max_seq_len=1024,
        n_gpus=1,
        extra_training={"peft_config": peft},
    )
    sampler = SubJobConfig.sampling_job(BASE_MODEL, max_seq_len=1024, n_gpus=1)
    job_id = client.create_job([trainer, sampler])
    client.wait_for_job(job_id)
    rows = token_rows()
    width = max(len(r) for r in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    labels = np.full((len(rows), width), -100, dtype=np.int64)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        labels[i, : len(row) - 1] = row[1:]
    frame = serialize_forward_backward_args(kwargs={"input_ids": ids, "labels": labels})

    def run(steps: int) -> float:
        started = time.perf_counter()
        with client.pipeline(job_id, workers=4) as pipe:
            for _ in range(steps):
                pipe.forward_backward(frame)
                pipe.step(learning_rate=LEARNING_RATE)
                pipe.wait_pending(2 * IN_FLIGHT)
        return time.perf_counter() - started

    return run


def tinker_loop(base_url: str) -> Callable[[int], float]:
    os.environ["TINKER_BASE_URL"] = base_url
    os.environ.setdefault("TINKER_API_KEY", "tml-bench")
    import tinker
    from tinker import types

    service = tinker.ServiceClient()
    training = service.create_lora_training_client(base_model=BASE_MODEL, rank=LORA_RANK).result()
    batch = [
        types.Datum(
            model_input=types.ModelInput.from_ints(row[:-1]),
            loss_fn_inputs={
                "target_tokens": np.array(row[1:]),
                "weights": np.ones(len(row) - 1, dtype=np.float32),
            },
        )
        for row in token_rows()
    ]
    adam = types.AdamParams(learning_rate=LEARNING_RATE)

    def run(steps: int) -> float:
        started = time.perf_counter()
        pending: list[tuple[Any, Any]] = []
        for _ in range(steps):
            pending.append((training.forward_backward(batch, "cross_entropy"), training.optim_step(adam)))
            if len(pending) > IN_FLIGHT:
                fb, st = pending.pop(0)
                fb.result()
                st.result()
        for fb, st in pending:
            fb.result()
            st.result()
        return time.perf_counter() - started

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="turns each way; the best of each is kept")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ct-tinker-bench-") as tmp:
        process, base_url = start_server(Path(tmp))
        server = psutil.Process(process.pid)
        try:
            loops = {"direct": direct_loop(base_url), "tinker": tinker_loop(base_url)}
            for run in loops.values():
                run(args.warmup)
            best: dict[str, float] = {}
            cpu: dict[str, float] = {}
            split: dict[str, tuple[float, float]] = {}
            for _ in range(args.rounds):
                for name, run in loops.items():
                    server_before, client_before = cpu_seconds(server)
                    rate = args.steps / run(args.steps)
                    server_after, client_after = cpu_seconds(server)
                    parts = (
                        (server_after - server_before) / args.steps,
                        (client_after - client_before) / args.steps,
                    )
                    best[name] = max(best.get(name, 0.0), rate)
                    if sum(parts) < cpu.get(name, math.inf):
                        cpu[name] = sum(parts)
                        split[name] = parts
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    ratio = best["tinker"] / best["direct"]
    labels = {"direct": "direct (ct_core pipeline)", "tinker": "tinker (SDK, pipelined)"}
    clients = {"direct": "ct_core", "tinker": "SDK"}
    for name, label in labels.items():
        server_s, client_s = split[name]
        sys.stdout.write(
            f"{label + ':':27s}{best[name]:.1f} steps/s, {cpu[name] * 1e3:.1f} ms CPU/step "
            f"(server {server_s * 1e3:.1f} + {clients[name]} {client_s * 1e3:.1f})\n"
        )
    sys.stdout.flush()
    # The Tinker layer costs at most 10 %.
    report("tinker SDK loop", ratio, "the ct_core pipelined loop's steps/s", TARGET_RATIO, at_most=False)
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "steps_per_s": best,
                    "cpu_s_per_step": cpu,
                    "cpu_s_per_step_server_client": split,
                    "ratio": ratio,
                    "target": TARGET_RATIO,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

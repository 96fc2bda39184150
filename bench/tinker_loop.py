"""The cost of the Tinker layer: the SDK's pipelined loop against the same loop through ct_core.

    python bench/tinker_loop.py               # 20 rounds of 15 steps each way, taking turns
    python bench/tinker_loop.py --rounds 40 --json out.json
    python bench/tinker_loop.py --no-pin      # client and server share every core

Starts one `ct local serve` (tiny model, fast lifecycle) with the Tinker API inside it, then runs
on that server, taking turns:

- direct: a LoRA job created through ct_core; each step is one forward-backward and one step sent
  back to back, with two steps in flight (`client.pipeline(..., workers=4)`), the loop of
  docs/training-loop.md.
- tinker: the real `tinker` SDK pointed at the same server (TINKER_BASE_URL); each step is
  `forward_backward(..., "cross_entropy")` and `optim_step(AdamParams)` sent before the previous
  step's results are read, two steps in flight, the SDK's own pipelining.

Both train on the same batch (two short texts, next-token targets). The target is that the Tinker
layer costs at most 10 % (tinker >= 0.9x direct). Nothing here is asserted.

What is measured, and how:

- the Tinker layer is the server side (the Tinker API and its translation). The client side is
  the `tinker` SDK, which is not ours and costs its process several times ct_core's CPU per step;
  on a real deployment it runs on another machine than the server. So by default the server is
  pinned to every core but the last and this process (the clients) to the last one, as two
  machines would be; `--no-pin` lets both share every core, and prints what that costs too;
- the loops take turns in short rounds, and the ratio is the median of the rounds' ratios: on a
  shared virtual machine the speed of the cores moves by tens of percent within seconds, and two
  rounds next to each other see nearly the same speed. The best round of each is printed as well;
- the CPU time each loop spends per step, the server process and this one apart (median of the
  rounds): the Tinker layer's own cost is the server's difference.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
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


def pin(server_pid: int) -> str:
    """Server on every core but the last, this process on the last; what was done, in words."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return "not pinned (one core)"
    os.sched_setaffinity(server_pid, set(cores[:-1]))
    os.sched_setaffinity(0, {cores[-1]})
    return f"server on cores {cores[:-1]}, clients on core {cores[-1]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=15, help="steps per round")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=20, help="turns each way")
    parser.add_argument("--no-pin", action="store_true", help="client and server share every core")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rounds: dict[str, list[tuple[float, float, float]]] = {"direct": [], "tinker": []}
    with tempfile.TemporaryDirectory(prefix="ct-tinker-bench-") as tmp:
        process, base_url = start_server(Path(tmp))
        server = psutil.Process(process.pid)
        placement = "not pinned (--no-pin)" if args.no_pin else pin(process.pid)
        try:
            loops = {"direct": direct_loop(base_url), "tinker": tinker_loop(base_url)}
            for run in loops.values():
                run(args.warmup)
            for _ in range(args.rounds):
                for name, run in loops.items():
                    server_before, client_before = cpu_seconds(server)
                    rate = args.steps / run(args.steps)
                    server_after, client_after = cpu_seconds(server)
                    server_s = (server_after - server_before) / args.steps
                    rounds[name].append((rate, server_s, (client_after - client_before) / args.steps))
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    ratios = [t[0] / d[0] for d, t in zip(rounds["direct"], rounds["tinker"], strict=True)]
    ratio = statistics.median(ratios)
    best = {name: max(r[0] for r in rows) for name, rows in rounds.items()}
    cpu = {
        name: (statistics.median(r[1] for r in rows), statistics.median(r[2] for r in rows))
        for name, rows in rounds.items()
    }
    labels = {"direct": "direct (ct_core pipeline)", "tinker": "tinker (SDK, pipelined)"}
    clients = {"direct": "ct_core", "tinker": "SDK"}
    sys.stdout.write(f"{args.rounds} rounds of {args.steps} steps each way; {placement}\n")
    for name, label in labels.items():
        server_s, client_s = cpu[name]
        sys.stdout.write(
            f"{label + ':':27s}median {statistics.median(r[0] for r in rounds[name]):.1f} steps/s "
            f"(best {best[name]:.1f}), CPU/step: server {server_s * 1e3:.1f} ms, "
            f"{clients[name]} {client_s * 1e3:.1f} ms\n"
        )
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratio, ratio, ratio]
    sys.stdout.write(
        f"per-round ratios: median {ratio:.3f}, quartiles {quartiles[0]:.3f}-{quartiles[2]:.3f}; "
        f"best/best {best['tinker'] / best['direct']:.3f}\n"
    )
    sys.stdout.flush()
    # The Tinker layer costs at most 10 %.
    report("tinker SDK loop", ratio, "the ct_core pipelined loop's steps/s", TARGET_RATIO, at_most=False)
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "placement": placement,
                    "rounds": rounds,
                    "ratios": ratios,
                    "ratio": ratio,
                    "best_steps_per_s": best,
                    "cpu_s_per_step_server_client": cpu,
                    "target": TARGET_RATIO,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

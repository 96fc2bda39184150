"""Managed runs against a hand-written loop on the same server, and the time a run takes to train
again after its service is SIGKILLed.

    python bench/runs.py                 # both sections
    python bench/runs.py --json out.json # also write the raw numbers

Sections:

- overhead (twice: `ct runs serve` in its own process, and the service inside `ct local serve`,
  where its Python shares the server's interpreter): the same training (same batches, same
  learning rates, one validation and one checkpoint at the end) driven twice on one ct_local
  server: by a managed run (DBOS workflow, segments, per-step metrics and logs in SQLite), and by
  a hand-written pipelined loop (fwd-bwd and step with two steps in flight, polled by two
  background threads, as docs/training-loop.md shows). Each is timed from its
  job running to its final checkpoint, interleaved over `--rounds` rounds; the ratio of medians is
  reported (and the median of the per-round ratios, steadier on a loaded machine). Target: the
  managed run takes at most 5 % more wall time (ratio <= 1.05). Both loops pack each epoch once.
  `--service standalone|embedded` measures one of the two.
- restart: a run is SIGKILLed (the whole server, the service inside it) mid-segment; the time from
  the new server process being started to the run's first step past its last checkpoint.

Numbers are wall-clock on this machine (2 shared cores); nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from verdict import report

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DB, SCHEMA = "BENCH", "PUBLIC"
CORPUS = ROOT / "examples" / "data" / "runs-corpus.jsonl"
#: A managed run may take at most this multiple of the hand-written loop's wall time.
OVERHEAD_TARGET = 1.05
FAST = {"pending_delay_s": 0.02, "placing_delay_s": 0.02, "initializing_delay_s": 0.02, "tick_s": 0.01}


class Server:
    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.ready = state_dir.parent / "ready.json"
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Start; return the monotonic time the process was launched."""
        self.ready.unlink(missing_ok=True)
        launched = time.monotonic()
        command = [
            sys.executable,
            "-m",
            "ct_local",
            "serve",
            "--port",
            str(self.port),
            "--state-dir",
            str(self.state_dir),
        ]
        command += ["--ready-file", str(self.ready), "--settings-json", json.dumps(FAST)]
        log = (self.state_dir.parent / "server.log").open("ab")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        while not self.ready.exists():
            if self.process.poll() is not None:
                raise RuntimeError("the server exited; see " + str(self.state_dir.parent / "server.log"))
            time.sleep(0.02)
        self.base_url = json.loads(self.ready.read_text())["base_url"]
        self.port = int(self.base_url.rsplit(":", 1)[1])
        return launched

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=30)


def _client(base_url: str) -> Any:
    from ct_core import CortexTrainingClient

    return CortexTrainingClient(
        base_url=base_url, database=DB, schema=SCHEMA, poll_interval=0.005, poll_max_interval=0.05
    )


def _ts(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _managed(client: Any, spec: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    # Waited on at about the SDK's default pace (a read every 0.5 s to 1 s): the run is timed from
    # its log, and reading it every 50 ms (the schedule the hand loop's data-plane polls need)
    # would load only this side's server.
    waiting = client.with_polling(0.5, 1.0)
    run = waiting.runs.wait(client.runs.start(spec)["run_id"], timeout=1800)
    assert run["status"] == "succeeded", run
    logs = client.runs.logs(run["run_id"], structured=True, limit=10_000)["logs"]
    begun = next(_ts(e["timestamp"]) for e in logs if e.get("event") == "job_started")
    ended = max(_ts(e["timestamp"]) for e in logs if e.get("event") == "checkpoint")
    return ended - begun, run


def _hand_loop(
    client: Any, run: dict[str, Any], train: list[dict[str, Any]], validation: list[dict[str, Any]]
) -> float:
    """The same steps written by hand: pipelined fwd-bwd + step, one validation, one save."""
    from ct_runs import packing, schedule

    from ct_core.data.payloads import serialize_forward_backward_args

    trainer = run["trainer"]
    seq_len = int(run["overrides"].get("max_seq_len", 256))
    plan = schedule.SchedulePlan(
        schedule=trainer["lr_schedule"],
        base_lr=trainer["learning_rate"],
        total_steps=run["total_steps"],
        warmup_steps=trainer["warmup_steps"],
        cooldown_steps=trainer["cooldown_steps"],
        min_lr_ratio=trainer.get("min_lr_ratio", 0.0),
    )
    examples = packing.encode_rows(train, [])
    val_batches = packing.validation_batches(
        packing.encode_rows(validation, []), seq_len=seq_len, batch_tokens=trainer["batch_tokens"]
    )
    body = {
        "sub_job_configs": [
            {
                "job_type": "training",
                "model_name": run["model_name"],
                "training_config": {
                    "optimizer": {"name": "AdamW", "lr": trainer["learning_rate"]},
                    "max_seq_len": 8192,
                    "n_gpus": 1,
                },
            }
        ],
        "hardware": "H200",
    }
    job_id = client.create_job_from_body(body)["job_id"]
    client.wait_for_job(job_id)
    started = time.monotonic()
    planned: dict[int, list[Any]] = {}
    with client.pipeline(job_id, workers=2) as pipe:
        for step in range(run["total_steps"]):
            epoch, index = divmod(step, run["steps_per_epoch"])
            if epoch not in planned:
                # Each epoch is packed once, as the managed run does (and as any loop would).
                planned = {
                    epoch: packing.plan_epoch(
                        examples,
                        seed=run["seed"],
                        epoch=epoch,
                        seq_len=seq_len,
                        batch_tokens=trainer["batch_tokens"],
                    )
                }
            batch = planned[epoch][index]
            pipe.forward_backward(serialize_forward_backward_args(kwargs=batch.kwargs()))
            pipe.step(learning_rate=schedule.learning_rate(plan, step))
            pipe.wait_pending(4)
    for batch in val_batches:
        answer = client.forward(job_id, serialize_forward_backward_args(kwargs=batch.kwargs()))
        client.poll_request(job_id, answer["request_id"])
    client.poll_request(job_id, client.save(job_id, checkpoint_type="resumable"))
    elapsed = time.monotonic() - started
    client.cancel_job(job_id)
    return elapsed


TOKEN = "ctr_bench-token"


def _standalone(server: Server, folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`ct runs serve` in its own process, driving the local server."""
    ready = folder / "service.ready.json"
    ct = Path(sys.executable).with_name("ct")
    command = [str(ct), "--base-url", server.base_url, "--database", DB, "--schema", SCHEMA, "runs", "serve"]
    command += ["--port", "0", "--state-dir", str(folder / "service"), "--ready-file", str(ready)]
    env = {**os.environ, "CT_RUNS_SERVICE_TOKEN": TOKEN}
    process = subprocess.Popen(
        command, stdout=(folder / "service.log").open("ab"), stderr=subprocess.STDOUT, env=env
    )
    while not ready.exists():
        if process.poll() is not None:
            raise RuntimeError("ct runs serve exited; see " + str(folder / "service.log"))
        time.sleep(0.05)
    return process, json.loads(ready.read_text())["base_url"]


def overhead(rounds: int, epochs: int, standalone: bool) -> dict[str, Any]:
    from ct_runs import datasets

    from ct_core import CortexTrainingClient

    with tempfile.TemporaryDirectory(prefix="ct-bench-runs-") as tmp:
        server = Server(Path(tmp) / "state")
        if standalone:
            FAST["runs_service"] = False
        server.start()
        service = None
        try:
            client = _client(server.base_url)
            runs_client = client
            if standalone:
                service, service_url = _standalone(server, Path(tmp))
                runs_client = CortexTrainingClient(
                    base_url=service_url, database=DB, schema=SCHEMA, token=TOKEN
                )
            content = CORPUS.read_bytes()
            dataset = runs_client.datasets.build(content, wait=True, timeout=120)
            local = datasets.build_dataset(content, datasets.DatasetOptions())
            managed_s, hand_s = [], []
            # Round 0 warms both paths up (first imports, first job of the server); not counted.
            for i in range(rounds + 1):
                spec = {
                    "dataset_id": dataset["dataset_id"],
                    "seed": i,
                    "overrides": {"max_seq_len": 128},
                    "trainer": {
                        "epochs": epochs,
                        "batch_tokens": 512,
                        "early_stopping": False,
                        "lr_schedule": "cosine",
                        "val_every_steps": 100_000,
                        "checkpoint_every_steps": 100_000,
                    },
                }
                elapsed, run = _managed(runs_client, spec)
                hand = _hand_loop(client, run, local.train, local.validation)
                if i == 0:
                    print(f"  warm-up: managed {elapsed:.2f} s, hand loop {hand:.2f} s")
                    continue
                managed_s.append(elapsed)
                hand_s.append(hand)
                print(
                    f"  round {i}: managed {managed_s[-1]:.2f} s, hand loop {hand_s[-1]:.2f} s "
                    f"({run['total_steps']} steps)"
                )
            ratio = statistics.median(managed_s) / statistics.median(hand_s)
            # Each round's two timings ran back to back, under the same load: on a shared machine
            # the median of the per-round ratios moves less than the ratio of the medians.
            paired = statistics.median(m / h for m, h in zip(managed_s, hand_s, strict=True))
            print(f"  median of the per-round ratios: {paired:.3f}x")
            where = "ct runs serve in its own process" if standalone else "the service inside ct local serve"
            report(
                f"managed run overhead ({where})",
                ratio,
                "the hand-written pipelined loop's wall time",
                OVERHEAD_TARGET,
                at_most=True,
            )
            return {
                "managed_s": managed_s,
                "hand_s": hand_s,
                "ratio": ratio,
                "paired_ratio": paired,
                "steps": run["total_steps"],
            }
        finally:
            if service is not None:
                service.send_signal(signal.SIGTERM)
                service.wait(timeout=30)
            server.stop()
            FAST.pop("runs_service", None)


def restart(kills: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ct-bench-runs-") as tmp:
        server = Server(Path(tmp) / "state")
        server.start()
        rng = random.Random(1)
        times = []
        try:
            client = _client(server.base_url)
            dataset = client.datasets.build(CORPUS.read_bytes(), wait=True, timeout=120)
            spec = {
                "dataset_id": dataset["dataset_id"],
                "overrides": {"max_seq_len": 128},
                "trainer": {"epochs": 20, "batch_tokens": 512, "checkpoint_every_steps": 10},
            }
            run_id = client.runs.start(spec)["run_id"]
            for _ in range(kills):
                while client.runs.get(run_id)["step"] < 5:
                    time.sleep(0.02)
                mark = client.runs.get(run_id)["step"] + rng.randint(2, 8)
                while client.runs.get(run_id)["step"] < mark:
                    time.sleep(0.01)
                server.kill()
                launched = server.start()
                client = _client(server.base_url)
                committed = max([c["step"] for c in client.runs.get(run_id)["checkpoints"]] or [0])
                while True:
                    series = client.runs.metrics(run_id, after_step=committed)["series"].get("train_loss")
                    if series:
                        break
                    time.sleep(0.01)
                times.append(time.monotonic() - launched)
                print(f"  restart to first new step (past checkpoint step {committed}): {times[-1]:.2f} s")
            client.runs.cancel(run_id)
            median = statistics.median(times)
            print(
                f"restart: median {median:.2f} s from launching the server to the run's first new step "
                "(no target: informative)"
            )
            return {"seconds": times, "median_s": median}
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["overhead", "restart"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument(
        "--service",
        choices=["both", "standalone", "embedded"],
        default="both",
        help="which runs service the overhead section measures",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, Any] = {}
    if args.only in (None, "overhead"):
        if args.service in ("both", "standalone"):
            results["overhead_standalone"] = overhead(args.rounds, args.epochs, standalone=True)
        if args.service in ("both", "embedded"):
            results["overhead_embedded"] = overhead(args.rounds, args.epochs, standalone=False)
    if args.only in (None, "restart"):
        results["restart"] = restart(args.kills)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()

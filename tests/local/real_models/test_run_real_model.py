"""A managed run with ``model`` trains a real model served by ``ct local serve`` to its end.

The tiny random-init Qwen3 of the fixtures is registered under a catalog name a run can train, so
the run's jobs load those real weights, and the training loss falls over the run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ct_core import CortexTrainingClient

DATABASE, SCHEMA = "RUNS_DB", "PUBLIC"
#: A catalog model a run can train, served here by the tiny real Qwen3.
MODEL = "Qwen/Qwen3-0.6B"
#: Upper bounds on a build and a run; only a hang gets near them.
BUILD_LIMIT_S = 600.0
RUN_LIMIT_S = 900.0
REPLIES = ("hello world", "the quick brown fox", "four.")


def _chat_rows(count: int) -> bytes:
    rows = []
    for i in range(count):
        reply = REPLIES[i % len(REPLIES)]
        messages = [
            {"role": "user", "content": f"say something number {i}"},
            {"role": "assistant", "content": reply},
        ]
        rows.append(json.dumps({"messages": messages}))
    return ("\n".join(rows) + "\n").encode()


@pytest.fixture(scope="module")
def runs_server(module_local_server_factory: Any, model_folders: Any) -> Iterator[Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("CT_PLUGINS", raising=False)
        yield module_local_server_factory(
            settings={"runs_concurrency": 1},
            extra_args=["--model", f"{MODEL}={model_folders['qwen3']}", "--dtype", "float32"],
        )


def test_a_run_on_a_real_model_trains_to_its_end_with_falling_loss(runs_server):
    with CortexTrainingClient(
        base_url=runs_server.base_url,
        database=DATABASE,
        schema=SCHEMA,
        poll_interval=0.02,
        poll_max_interval=0.25,
    ) as client:
        built = client.datasets.build(_chat_rows(48), wait=True, timeout=BUILD_LIMIT_S)
        assert built["status"] == "succeeded", built
        spec = {
            "dataset_id": built["dataset_id"],
            "model": MODEL,
            "overrides": {"max_seq_len": 64},
            "trainer": {
                "epochs": 4,
                "batch_tokens": 256,
                "learning_rate": 1e-2,
                "checkpoint_every_steps": 100,
            },
        }
        run = client.runs.start(spec)
        done = client.runs.wait(run["run_id"], timeout=RUN_LIMIT_S)
        assert done["status"] == "succeeded", done.get("error")
        assert done["step"] == done["total_steps"] > 0
        losses = [loss for _, loss in client.runs.metrics(done["run_id"])["series"]["train_loss"]]
        assert len(losses) == done["total_steps"]
        quarter = max(1, len(losses) // 4)
        first, last = sum(losses[:quarter]) / quarter, sum(losses[-quarter:]) / quarter
        assert last < first, losses

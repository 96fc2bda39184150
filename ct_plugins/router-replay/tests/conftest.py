"""Fixtures of the router-replay plugin's tests: a `ct` subprocess runner and a local server that
serves a mixture-of-experts model (shared fixtures: ct_testing).

Router replay replays an MoE model's routing, so the local server refuses it on a dense model (its
built-in tiny one included). `moe_server` serves `MOE_MODEL`, a tiny random-init Qwen3-MoE built
here (four experts, two per token, hidden size 64), `DENSE_MODEL`, the same shape without experts
(Qwen3), both with a byte-level tokenizer and nothing downloaded, and `TINY_MODEL` by the built-in
tiny model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ct_testing import tiny_models
from ct_testing.plugin import CtResult, ct_runner

#: The names `moe_server` serves: a mixture-of-experts model, a dense one, the built-in tiny model.
MOE_MODEL = "tiny-moe"
DENSE_MODEL = "tiny-dense"
TINY_MODEL = "Qwen/Qwen3-0.6B"


@pytest.fixture
def run_ct(ct_home: Path) -> Callable[..., CtResult]:
    """Run the installed `ct` console script with an isolated home; only this plugin loads."""
    return ct_runner("router-replay")


def save_model(folder: Path, experts: int) -> Path:
    """A tiny random-init Qwen3 causal LM (Qwen3-MoE with ``experts`` experts, two per token, when
    there are any) over a byte-level tokenizer, saved as a model folder (ct_testing.tiny_models)."""
    return tiny_models.save_model(folder, "qwen3", tokenizer=tiny_models.byte_tokenizer(), experts=experts)


@pytest.fixture(scope="session")
def moe_server(session_local_server_factory: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A local server that serves `MOE_MODEL`, `DENSE_MODEL` and `TINY_MODEL` (see the module)."""
    root = tmp_path_factory.mktemp("rr-models")
    models = {
        MOE_MODEL: save_model(root / "moe", experts=4),
        DENSE_MODEL: save_model(root / "dense", experts=0),
    }
    args = ["--hardware", "H200=100000", "--model", TINY_MODEL]
    for name, folder in models.items():
        args += ["--model", f"{name}={folder}"]
    # No runs service: it lives for the whole session, and an idle one still polls its queues.
    return session_local_server_factory(extra_args=args, settings={"runs_service": False})


def start_pair(client: Any, model: str = MOE_MODEL, **training_extra: Any) -> tuple[str, str, str]:
    """Create a training + sampling job on ``model`` with ``client`` and wait until it runs.

    ``training_extra`` goes into the training config (a `router_replay` block, say). Answers the
    job id, then the training and the sampling sub-job ids.
    """
    training_config = {"optimizer": {"name": "AdamW", "lr": 1e-4}, "max_seq_len": 128, "train_batch_size": 2}
    body = {
        "sub_job_configs": [
            {
                "job_type": "training",
                "model_name": model,
                "training_config": {**training_config, **training_extra},
            },
            {"job_type": "sampling", "model_name": model, "inference_config": {"max_seq_len": 128}},
        ]
    }
    job_id = client.create_job_from_body(body)["job_id"]
    ids = {sub["job_type"]: sub["sub_job_id"] for sub in client.wait_for_job(job_id)["sub_jobs"]}
    return str(job_id), str(ids["training"]), str(ids["sampling"])


@pytest.fixture
def running_pair() -> Callable[..., tuple[str, str, str]]:
    """`start_pair`: a running training + sampling job of a client (see there)."""
    return start_pair

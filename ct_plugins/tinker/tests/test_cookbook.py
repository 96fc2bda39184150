"""tinker-cookbook's supervised-learning run, unchanged and offline, over a real `ct local serve`:
its own training loop, dataset builder and renderer, on a small conversation file bundled here.
The recipe sends Adam's betas and eps with every optimizer step; the local server applies them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

BASE_MODEL = "Qwen/Qwen3-0.6B"
DATA = Path(__file__).parent / "data" / "conversations.jsonl"


# The cookbook's own calls still use SDK methods the SDK marks deprecated; ours do not.
@pytest.mark.filterwarnings("ignore::FutureWarning:tinker_cookbook")
def test_the_cookbook_supervised_run_trains_offline(
    service_client: Any, local_server: Any, tmp_path: Path
) -> None:
    from tinker_cookbook import tokenizer_utils
    from tinker_cookbook.renderers import TrainOnWhat
    from tinker_cookbook.supervised import train
    from tinker_cookbook.supervised.data import FromConversationFileBuilder
    from tinker_cookbook.supervised.types import ChatDatasetBuilderCommonConfig
    from transformers import AutoTokenizer

    # The cookbook loads its tokenizer by the model's name; the server names the folder that holds it.
    probe = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
    folder = probe.get_info().model_data.tokenizer_id
    tokenizer_utils.register_tokenizer(BASE_MODEL, lambda: AutoTokenizer.from_pretrained(folder))
    try:
        common = ChatDatasetBuilderCommonConfig(
            model_name_for_tokenizer=BASE_MODEL,
            renderer_name="role_colon",
            max_length=256,
            batch_size=4,
            train_on_what=TrainOnWhat.ALL_ASSISTANT_MESSAGES,
        )
        config = train.Config(
            recipe_name="ct_offline_sl",
            log_path=str(tmp_path / "run"),
            model_name=BASE_MODEL,
            renderer_name="role_colon",
            dataset_builder=FromConversationFileBuilder(common_config=common, file_path=str(DATA)),
            learning_rate=1e-2,
            lr_schedule="linear",
            num_epochs=4,
            lora_rank=8,
            save_every=0,
            eval_every=0,
            base_url=local_server.base_url,
        )
        asyncio.run(train.main(config))
    finally:
        tokenizer_utils.unregister_tokenizer(BASE_MODEL)
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    losses = [row["train_mean_nll"] for row in rows if "train_mean_nll" in row]
    assert len(losses) == 8, rows  # 8 conversations, batches of 4, 4 epochs
    assert np.mean(losses[-2:]) < np.mean(losses[:2]), losses


def test_adam_parameters_apply_per_step(service_client: Any, next_token_datum: Any) -> None:
    """A huge eps makes Adam's step tiny; the default eps lets the same step move the weights."""
    from tinker import types

    tokens = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
    tokenizer = tokens.get_tokenizer()
    ids = tokenizer.encode("adam settings apply per step")
    datum = next_token_datum(ids)

    def moved(params: Any) -> float:
        training = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
        before = training.forward([datum], "cross_entropy").result().loss_fn_outputs[0]["logprobs"].to_numpy()
        for _ in range(2):
            fb = training.forward_backward([datum], "cross_entropy")
            step = training.optim_step(params)
            fb.result()
            step.result()
        after = training.forward([datum], "cross_entropy").result().loss_fn_outputs[0]["logprobs"].to_numpy()
        return float(np.abs(after - before).max())

    default = moved(types.AdamParams(learning_rate=1e-2))
    damped = moved(types.AdamParams(learning_rate=1e-2, eps=1e3, beta1=0.5, beta2=0.9, weight_decay=0.1))
    assert damped < default / 100, (damped, default)


def test_adam_settings_no_adam_takes_are_refused(service_client: Any, next_token_datum: Any) -> None:
    import tinker
    from tinker import types

    training = service_client.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
    ids = training.get_tokenizer().encode("refused settings")
    datum = next_token_datum(ids)
    training.forward_backward([datum], "cross_entropy").result()
    with pytest.raises(tinker.BadRequestError, match=r"beta1 and beta2 must lie in \[0, 1\)"):
        training.optim_step(types.AdamParams(learning_rate=1e-2, beta1=1.5)).result()
    # The refused settings changed nothing; the next step sends its own and runs.
    result = training.optim_step(types.AdamParams(learning_rate=1e-2, eps=1e-8)).result()
    assert result.metrics["global_steps"] == 1

"""Restoring optimizer states across a change of data-parallel size is refused, at load and at create.

The optimizer states are sharded over the data-parallel ranks and cannot be resized, so a target
whose n_gpus differs from the checkpoint's source sub-job must have been created with
``load_optimizer_states: false`` (weights only, fresh optimizer). Weights-only checkpoints carry no
optimizer state and load anywhere.
"""

from __future__ import annotations

from typing import Any

SUB_JOB = {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}


def _saved(dp: Any, text_batch: Any, checkpoint_type: str) -> str:
    """Train one step on a one-GPU job, save, and return the checkpoint id."""
    dp.start()
    dp.poll(dp.forward_backward(text_batch()))
    dp.poll(dp.step())
    saved = dp.poll(dp.save(checkpoint_type))
    return str(saved["stage_path"]).rstrip("/").split("/")[-2]


def _config(**extra: Any) -> dict[str, Any]:
    return {"optimizer": {"name": "AdamW", "lr": 1e-2}, **extra}


def test_runtime_load_of_optimizer_states_into_another_dp_size_is_refused(
    dp: Any, new_driver: Any, text_batch: Any
) -> None:
    checkpoint_id = _saved(dp, text_batch, "resumable")
    wider = new_driver(dp.prefix).start({"n_gpus": 2})
    refused = wider.http.post(
        f"{wider.url}/load", json={"checkpoint_id": checkpoint_id, "source_job_id": dp.job_id}
    )
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert body["code"] == "517602"
    assert "data-parallel size" in body["message"] and "load_optimizer_states" in body["message"]
    assert "n_gpus 1" in body["message"] and "n_gpus 2" in body["message"]
    # Created for weights only, the same load goes through with a fresh optimizer.
    fresh = new_driver(dp.prefix).start({"n_gpus": 2, "load_optimizer_states": False})
    loaded = fresh.poll(fresh.load(checkpoint_id, source_job_id=dp.job_id))
    assert loaded["loaded_optimizer_states"] is False
    # The same DP size restores the optimizer as before.
    same = new_driver(dp.prefix).start({"n_gpus": 1})
    assert same.poll(same.load(checkpoint_id, source_job_id=dp.job_id))["loaded_optimizer_states"] is True


def test_weights_only_checkpoints_load_into_any_dp_size(dp: Any, new_driver: Any, text_batch: Any) -> None:
    checkpoint_id = _saved(dp, text_batch, "weights-only")
    wider = new_driver(dp.prefix).start({"n_gpus": 2})
    assert wider.poll(wider.load(checkpoint_id, source_job_id=dp.job_id))["checkpoint_type"] == "weights-only"


def test_create_from_optimizer_states_with_another_dp_size_is_refused(
    dp: Any, new_driver: Any, text_batch: Any
) -> None:
    checkpoint_id = _saved(dp, text_batch, "resumable")
    source = {"checkpoint_id": checkpoint_id, "source_job_id": dp.job_id}

    def create(**config: Any) -> Any:
        sub = {**SUB_JOB, "training_config": _config(**config), "source_checkpoint_info": source}
        return dp.http.post(dp.prefix, json={"sub_job_configs": [sub]})

    refused = create(n_gpus=2)
    assert refused.status_code == 400, refused.text
    assert refused.json()["code"] == "517602"
    assert "load_optimizer_states" in refused.json()["message"]
    assert create(n_gpus=2, load_optimizer_states=False).status_code == 200
    assert create(n_gpus=1).status_code == 200
    # A wider job from a weights-only checkpoint has no optimizer state to resize.
    weights = new_driver(dp.prefix)
    weights_id = _saved(weights, text_batch, "weights-only")
    sub = {
        **SUB_JOB,
        "training_config": _config(n_gpus=2),
        "source_checkpoint_info": {"checkpoint_id": weights_id, "source_job_id": weights.job_id},
    }
    assert dp.http.post(dp.prefix, json={"sub_job_configs": [sub]}).status_code == 200

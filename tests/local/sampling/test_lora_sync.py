"""Adapter-only weight sync over HTTP: LoRA training, format lora, mismatch refusals, saves."""

from __future__ import annotations

from typing import Any

from ct_core import wire

PEFT = {
    "peft_type": "Lora",
    "r": 4,
    "lora_alpha": 8,
    "lora_dropout": 0.0,
    "bias": "none",
    "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
}
GREEDY = {"max_tokens": 6, "temperature": 0, "ignore_eos": True}
PROMPT = [list(b"abcab")]


def _lora_job(sp: Any, training_sub_job: Any, sampling_sub_job: Any, **sampling_peft: Any) -> None:
    training = training_sub_job()
    training["training_config"]["peft_config"] = dict(PEFT)
    sp.start(training, sampling_sub_job(peft_config={**PEFT, **sampling_peft}))


def _train(sp: Any, steps: int) -> float:
    import torch

    ids = torch.tensor([list(b"abcabcabcabcabcabc")], dtype=torch.long)
    labels = torch.roll(ids, -1, dims=1)
    labels[:, -1] = -100
    frame = wire.dumps({"args": (), "kwargs": {"input_ids": ids, "labels": labels}})
    loss = 0.0
    for _ in range(steps):
        response = sp.http.post(
            f"{sp.url}/forward-backward", content=frame, headers={"content-type": "application/octet-stream"}
        )
        assert response.status_code == 200, response.text
        loss = float(sp.result(response.json()["request_id"])["avg_loss"])
        sp.result(sp.http.post(f"{sp.url}/step", json={}).json()["request_id"])
    return loss


def _sync(sp: Any, weight_format: str) -> dict[str, Any]:
    response = sp.operation("weight-sync", {"weight_format": weight_format}, sub_job_type="training")
    assert response.status_code == 200, response.text
    return sp.result(response.json()["request_id"])


def test_adapter_sync_changes_the_sampler_output(sp, training_sub_job, sampling_sub_job) -> None:
    _lora_job(sp, training_sub_job, sampling_sub_job)
    before = sp.generate(PROMPT, **GREEDY)[0]["token_ids"]
    first = _train(sp, 1)
    last = _train(sp, 7)
    assert last < first  # the adapter alone learns
    assert sp.generate(PROMPT, **GREEDY)[0]["token_ids"] == before
    result = _sync(sp, "lora")
    # Only A and B of the four attention projections of each layer travel.
    assert result["weight_format"] == "lora" and result["num_tensors"] == 2 * 4 * 2
    after = sp.generate(PROMPT, **GREEDY)[0]["token_ids"]
    assert after != before
    assert set(after) <= set(b"abc")


def test_full_sync_from_a_lora_trainer_sends_merged_weights(sp, training_sub_job, sampling_sub_job) -> None:
    _lora_job(sp, training_sub_job, sampling_sub_job)
    before = sp.generate(PROMPT, **GREEDY)[0]["token_ids"]
    _train(sp, 8)
    result = _sync(sp, "hf")
    assert result["num_tensors"] > 2 * 4 * 2
    after = sp.generate(PROMPT, **GREEDY)[0]["token_ids"]
    assert after != before
    # The same model reached through the adapter: a later lora sync (same weights) keeps the output.
    _sync(sp, "lora")
    assert sp.generate(PROMPT, **GREEDY)[0]["token_ids"] != before


def test_mismatched_adapters_are_refused(sp, training_sub_job, sampling_sub_job) -> None:
    _lora_job(sp, training_sub_job, sampling_sub_job, r=8, target_modules=["q_proj"])
    response = sp.operation("weight-sync", {"weight_format": "lora"})
    assert response.status_code == 400
    assert "r, target_modules differ" in response.text
    # Full-weight formats do not care about the adapter shape.
    assert _sync(sp, "vllm")["weight_format"] == "vllm"


def test_alpha_mismatch_and_missing_side_are_refused(sp, training_sub_job, sampling_sub_job) -> None:
    _lora_job(sp, training_sub_job, sampling_sub_job, lora_alpha=16)
    response = sp.operation("weight-sync", {"weight_format": "lora"})
    assert response.status_code == 400 and "lora_alpha differ" in response.text

    training = training_sub_job()
    training["training_config"]["peft_config"] = dict(PEFT)
    sp.start(training, sampling_sub_job())
    response = sp.operation("weight-sync", {"weight_format": "lora"})
    assert response.status_code == 400
    assert f"{sp.job_id}:sampling:0" in response.text


def test_lora_saves_and_loads(sp, training_sub_job, sampling_sub_job) -> None:
    _lora_job(sp, training_sub_job, sampling_sub_job)
    _train(sp, 4)
    _sync(sp, "lora")
    at_save = sp.generate(PROMPT, **GREEDY)[0]["token_ids"]
    saved = sp.result(
        sp.http.post(f"{sp.url}/save", json={"checkpoint_type": "resumable"}).json()["request_id"]
    )
    assert saved["checkpoint_tag"] == "global_step4"
    _train(sp, 4)
    checkpoints = sp.http.get(f"{sp.url}/checkpoints").json()
    checkpoint_id = _only_checkpoint(checkpoints)
    loaded = sp.result(
        sp.http.post(
            f"{sp.url}/load", json={"checkpoint_id": checkpoint_id, "source_job_id": sp.job_id}
        ).json()["request_id"]
    )
    assert loaded["loaded_optimizer_states"] is True and loaded["global_steps"] == 4
    # The resumable checkpoint brought the adapter back, not just the base weights.
    _sync(sp, "lora")
    assert sp.generate(PROMPT, **GREEDY)[0]["token_ids"] == at_save
    weights = sp.result(
        sp.http.post(f"{sp.url}/save", json={"checkpoint_type": "weights-only"}).json()["request_id"]
    )
    assert weights["checkpoint_tag"] == "global_step4"


def _only_checkpoint(listing: Any) -> str:
    rows = listing.get("checkpoints") if isinstance(listing, dict) else listing
    assert rows and len(rows) == 1, listing
    return str(rows[0]["checkpoint_id"])


def test_samplers_start_from_a_lora_jobs_weights_only_checkpoint(
    sp, training_sub_job, sampling_sub_job, sampling_driver
) -> None:
    _lora_job(sp, training_sub_job, sampling_sub_job)
    _train(sp, 4)
    _sync(sp, "lora")
    at_save = sp.generate(PROMPT, **GREEDY)[0]["token_ids"]
    for checkpoint_type in ("weights-only", "resumable"):
        sp.result(
            sp.http.post(f"{sp.url}/save", json={"checkpoint_type": checkpoint_type}).json()["request_id"]
        )
    listing = sp.http.get(f"{sp.url}/checkpoints").json()
    rows = listing.get("checkpoints") if isinstance(listing, dict) else listing
    by_type = {row["checkpoint_type"]: row["checkpoint_id"] for row in rows}

    def from_checkpoint(checkpoint_type: str, **inference: Any) -> dict[str, Any]:
        sub = sampling_sub_job(**inference)
        sub["source_checkpoint_info"] = {
            "source_job_id": sp.job_id,
            "checkpoint_id": by_type[checkpoint_type],
        }
        return sub

    # A weights-only save of a LoRA trainer holds the merged weights: a plain sampler and a LoRA
    # sampler (whose fresh adapter is a no-op) both generate what the trained job generated.
    plain = sampling_driver(sp.http, sp.prefix).start(training_sub_job(), from_checkpoint("weights-only"))
    assert plain.generate(PROMPT, **GREEDY)[0]["token_ids"] == at_save
    adapted = sampling_driver(sp.http, sp.prefix).start(
        training_sub_job(), from_checkpoint("weights-only", peft_config=dict(PEFT))
    )
    assert adapted.generate(PROMPT, **GREEDY)[0]["token_ids"] == at_save
    # Sampling starts only from weights-only checkpoints; a resumable one is refused at create.
    response = sp.http.post(
        sp.prefix, json={"sub_job_configs": [training_sub_job(), from_checkpoint("resumable")]}
    )
    assert response.status_code == 400 and response.json()["code"] == "517602"
    assert "weights-only" in response.json()["message"]


def _weights_held(sp: Any) -> dict[str, Any]:
    health = sp.http.get("/healthz")
    assert health.status_code == 200, health.text
    return dict(health.json()["synced_weights"])


def _sampling_sub_job_ids(sp: Any) -> set[str]:
    job = sp.http.get(sp.url)
    assert job.status_code == 200, job.text
    return {s["sub_job_id"] for s in job.json()["sub_jobs"] if s["job_type"] == "sampling"}


def test_an_ended_jobs_synced_weights_are_let_go(sp, training_sub_job, sampling_sub_job) -> None:
    """The copy of the weights a sampler was sent is held for its sub-job while the job lives, and
    let go when the job ends (it is the size of the model: kept, every ended job would leak one)."""
    _lora_job(sp, training_sub_job, sampling_sub_job)
    samplers = _sampling_sub_job_ids(sp)
    assert not samplers & set(_weights_held(sp)["sub_jobs"])
    _sync(sp, "hf")
    held = _weights_held(sp)
    assert samplers <= set(held["sub_jobs"])
    assert held["count"] == len(held["sub_jobs"]) and held["bytes"] > 0
    assert sp.http.post(f"{sp.url}:cancel").status_code == 200
    from ct_testing import wait_until

    wait_until(
        lambda: not samplers & set(_weights_held(sp)["sub_jobs"]),
        timeout=120,
        interval=0.1,
        message="the cancelled job's synced weights are still held",
    )

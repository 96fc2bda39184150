"""Training end to end on the tiny model: SFT loop, pipelining, step options, save and load."""

from __future__ import annotations

import json
import math
from pathlib import Path

import httpx
import pytest


def test_sft_loop_of_30_steps_lowers_the_loss(dp, text_batch) -> None:
    dp.start()
    batch = text_batch()
    losses = []
    for _ in range(30):
        losses.append(dp.poll(dp.forward_backward(batch))["avg_loss"])
        dp.poll(dp.step())
    assert all(math.isfinite(x) for x in losses)
    assert losses[0] > math.log(200)  # an untrained model is close to uniform over the bytes
    assert losses[-1] < losses[0] / 2
    assert sum(losses[-5:]) < sum(losses[:5])


def test_forward_backward_result_shape(dp, text_batch) -> None:
    dp.start()
    batch = text_batch(rows=3)
    result = dp.poll(dp.forward_backward(batch))
    assert result["job_id"] == dp.job_id
    assert result["post_process_outputs"] == {}
    metrics = result["metrics"]
    assert metrics["num_sequences"] == 3
    assert metrics["num_tokens"] == int((batch["kwargs"]["labels"] != -100).sum())
    assert result["avg_loss"] == pytest.approx(metrics["loss"])


def test_requests_run_in_arrival_order_when_pipelined(dp, text_batch) -> None:
    dp.start()
    batch = text_batch()
    # Submit everything before polling anything (requests pipeline), then read the results.
    submitted = []
    for _ in range(3):
        submitted.append(("fb", dp.forward_backward(batch)))
        submitted.append(("step", dp.step()))
    results = [(kind, dp.poll(rid)) for kind, rid in submitted]
    steps = [r["global_steps"] for kind, r in results if kind == "step"]
    assert steps == [1, 2, 3]
    losses = [r["avg_loss"] for kind, r in results if kind == "fb"]
    assert losses[0] > losses[1] > losses[2]


def test_step_learning_rate_clipping_and_peak_memory(dp, text_batch) -> None:
    dp.start({"gradient_clipping": 0.5, "step_peak_memory_log": True})
    dp.poll(dp.forward_backward(text_batch()))
    stepped = dp.poll(dp.step(learning_rate=0.003))
    assert stepped["global_steps"] == 1
    assert stepped["last_lr"] == pytest.approx(0.003)
    assert stepped["grad_norm"] > 0
    assert stepped["peak_memory"]["cpu_peak"] > 0
    assert stepped["peak_memory"]["gpu_peak"] >= 0
    # Without learning_rate the job's own optimizer lr applies again.
    assert dp.poll(dp.step())["last_lr"] == pytest.approx(1e-2)


def test_step_without_memory_log_has_no_peak_memory(dp) -> None:
    dp.start()
    assert "peak_memory" not in dp.poll(dp.step())


def test_loss_mask_weights_positions(dp, text_batch) -> None:
    import torch

    dp.start({"optimizer": {"name": "SGD", "lr": 0.0}})
    batch = text_batch(rows=1)
    full = dp.poll(dp.forward_backward(batch))["avg_loss"]
    mask = torch.zeros_like(batch["kwargs"]["labels"], dtype=torch.float32)
    mask[0, 10] = 1.0
    only_one = dict(batch, kwargs={**batch["kwargs"], "loss_mask": mask})
    single = dp.poll(dp.forward_backward(only_one))
    assert single["metrics"]["num_tokens"] == 1
    assert single["avg_loss"] != pytest.approx(full)


def test_bad_requests_fail_with_clear_errors(dp, text_batch, request_failed) -> None:
    dp.start()
    batch = text_batch()
    grpo = dict(batch, processing={"loss_fn": "grpo", "config": {}})
    with pytest.raises(request_failed) as failed:
        dp.poll(dp.forward_backward(grpo))
    assert "unknown processing.loss_fn 'grpo'" in failed.value.status["error"]
    no_labels = {"args": (), "kwargs": {"input_ids": batch["kwargs"]["input_ids"]}}
    with pytest.raises(request_failed, match="labels is required"):
        dp.poll(dp.forward_backward(no_labels))
    # The job keeps working after refused requests.
    assert math.isfinite(dp.poll(dp.forward_backward(batch))["avg_loss"])


def _post_fwd_bwd(dp, frame_of, batch, *, max_bytes: int = 0) -> httpx.Response:
    """Every chunk of ``batch``'s frame; the answer to the last one."""
    chunks = dp.chunks(frame_of(batch), max_bytes=max_bytes)
    assert len(chunks) > 1 or not max_bytes
    for chunk in chunks[:-1]:
        assert dp.post_chunk(chunk).status_code == 200
    return dp.post_chunk(chunks[-1])


def test_token_ids_outside_the_vocabulary_are_refused_at_submit_naming_the_field(
    dp, text_batch, frame_of, training_server
) -> None:
    """Labels out of range once reached torch's cross-entropy (IndexError and a server traceback):
    ids of input_ids and labels are checked when the call arrives, whole or in chunks."""
    dp.start()
    mark = training_server.log_mark()
    batch = text_batch()
    ids, labels = batch["kwargs"]["input_ids"], batch["kwargs"]["labels"]
    bad = {
        "labels": [labels + 1000, labels.clamp(min=0) - 5, labels.clamp(min=0) * 0 + 260],
        "input_ids": [ids + 1000, ids - 300],
    }
    for field, values in bad.items():
        for value in values:
            batch_with = {"args": (), "kwargs": {**batch["kwargs"], field: value}}
            for max_bytes in (0, 8192 + 1024):  # one frame, then several chunks
                response = _post_fwd_bwd(dp, frame_of, batch_with, max_bytes=max_bytes)
                assert response.status_code == 422, response.text
                detail = response.json()["detail"][0]
                assert detail["loc"] == ["body", "kwargs", field], detail
                assert f"{field} must lie in [0, 260)" in detail["msg"], detail
            # The forward operation reads the same kwargs.
            forward = dp.operation(
                "forward",
                {field: value.tolist(), **({} if field == "input_ids" else {"input_ids": ids.tolist()})},
            )
            assert forward.status_code == 422, forward.text
            assert f"{field} must lie in [0, 260)" in forward.text
    # -100 marks an ignored label, and ids at both ends of the vocabulary are accepted.
    edges = ids.clone()
    edges[:, 0], edges[:, 1] = 0, 259
    good = {"args": (), "kwargs": {"input_ids": edges, "labels": labels}}
    assert math.isfinite(dp.poll(dp.forward_backward(good))["avg_loss"])
    log = training_server.log_since(mark)
    assert "Traceback" not in log, log[-4000:]


def test_max_seq_len_is_enforced(dp, text_batch, request_failed) -> None:
    dp.start({"max_seq_len": 16})
    with pytest.raises(request_failed, match="exceeds the sub-job's max_seq_len of 16"):
        dp.poll(dp.forward_backward(text_batch()))


def test_invalid_step_and_save_bodies_answer_422(dp) -> None:
    dp.start()
    # Each body is valid JSON (json.dumps writes inf as Infinity, which the server's parser reads), so
    # the 422 and its message come from the learning-rate check, not from the JSON parser.
    for lr in (-1, "fast", True, float("inf"), float("nan")):
        response = dp.http.post(f"{dp.url}/step", content=json.dumps({"learning_rate": lr}))
        assert response.status_code == 422, lr
        assert "learning_rate must be a finite number >= 0" in response.text, lr
    response = dp.http.post(f"{dp.url}/save", json={"checkpoint_type": "full"})
    assert response.status_code == 422
    assert "checkpoint_type must be 'resumable' or 'weights-only'" in response.text


def test_save_lists_checkpoints_and_load_restores_the_next_loss(dp, text_batch) -> None:
    dp.start()
    batch = text_batch()
    for _ in range(3):
        dp.poll(dp.forward_backward(batch))
        dp.poll(dp.step())
    saved = dp.poll(dp.save())
    # The save result has no checkpoint_id; the id is the cp_<uuid> in stage_path.
    assert "checkpoint_id" not in saved
    assert saved["checkpoint_tag"] == "global_step3"
    assert saved["job_id"] == f"{dp.job_id}:training:0"
    listed = dp.http.get(f"{dp.url}/checkpoints").json()["checkpoints"]
    assert len(listed) == 1
    checkpoint = listed[0]
    assert checkpoint["checkpoint_id"].startswith("cp_")
    assert f"/checkpoints/{checkpoint['checkpoint_id']}/" in saved["stage_path"]
    assert checkpoint["global_steps"] == 3
    assert checkpoint["checkpoint_type"] == "resumable"
    assert checkpoint["avg_loss"] > 0

    after_save = dp.poll(dp.forward_backward(batch))["avg_loss"]
    dp.poll(dp.step())
    stepped_twice = dp.poll(dp.forward_backward(batch))["avg_loss"]
    dp.poll(dp.step())
    assert dp.poll(dp.forward_backward(batch))["avg_loss"] != pytest.approx(after_save)

    loaded = dp.poll(dp.load(checkpoint["checkpoint_id"]))
    assert loaded["checkpoint_id"] == checkpoint["checkpoint_id"]
    assert loaded["loaded_optimizer_states"] is True
    assert loaded["global_steps"] == 3
    assert dp.poll(dp.forward_backward(batch))["avg_loss"] == after_save
    # The optimizer state came back too: the next step lands exactly where it did before.
    assert dp.poll(dp.step())["global_steps"] == 4
    assert dp.poll(dp.forward_backward(batch))["avg_loss"] == stepped_twice
    # A global_stepN tag also names the checkpoint.
    assert dp.poll(dp.load("global_step3"))["checkpoint_id"] == checkpoint["checkpoint_id"]


def test_resumable_checkpoint_starts_a_second_job(dp, new_driver, text_batch) -> None:
    dp.start()
    batch = text_batch()
    for _ in range(2):
        dp.poll(dp.forward_backward(batch))
        dp.poll(dp.step())
    dp.poll(dp.save("resumable"))
    checkpoint_id = dp.http.get(f"{dp.url}/checkpoints").json()["checkpoints"][0]["checkpoint_id"]
    expected = dp.poll(dp.forward_backward(batch))["avg_loss"]

    second = new_driver(dp.prefix)
    second.start(source_checkpoint_info={"checkpoint_id": checkpoint_id, "source_job_id": dp.job_id})
    assert second.poll(second.forward_backward(batch))["avg_loss"] == expected
    assert second.poll(second.step())["global_steps"] == 3

    # Runtime load from the other job into a fresh third one (load with source_job_id).
    third = new_driver(dp.prefix).start()
    fresh = third.poll(third.forward_backward(batch))["avg_loss"]
    assert fresh != pytest.approx(expected)
    loaded = third.poll(third.load(checkpoint_id, source_job_id=dp.job_id))
    assert loaded["source_job_id"] == dp.job_id
    assert third.poll(third.forward_backward(batch))["avg_loss"] == expected


def test_load_optimizer_states_false_starts_a_fresh_optimizer(dp, new_driver, text_batch) -> None:
    dp.start()
    batch = text_batch()
    dp.poll(dp.forward_backward(batch))
    dp.poll(dp.step())
    dp.poll(dp.save())
    checkpoint_id = dp.http.get(f"{dp.url}/checkpoints").json()["checkpoints"][0]["checkpoint_id"]
    other = new_driver(dp.prefix).start({"load_optimizer_states": False})
    loaded = other.poll(other.load(checkpoint_id, source_job_id=dp.job_id))
    assert loaded["loaded_optimizer_states"] is False
    assert loaded["global_steps"] == 0


def test_weights_only_checkpoint_is_a_hugging_face_folder(
    dp, new_driver, text_batch, training_server
) -> None:
    dp.start()
    batch = text_batch()
    dp.poll(dp.forward_backward(batch))
    dp.poll(dp.step())
    saved = dp.poll(dp.save("weights-only"))
    folder = Path(saved["checkpoint_path"])
    assert {"config.json", "model.safetensors"} <= {p.name for p in folder.iterdir()}
    assert not (folder / "optimizer.safetensors").exists()
    expected = dp.poll(dp.forward_backward(batch))["avg_loss"]
    listed = dp.http.get(f"{dp.url}/checkpoints").json()["checkpoints"]
    assert listed[0]["checkpoint_type"] == "weights-only"
    exported = dp.http.post(f"{dp.url}/checkpoints/{listed[0]['checkpoint_id']}:export").json()
    assert "model.safetensors" in {f["filename"] for f in exported["files"]}

    # external_stage_path: a local folder of HF safetensors initializes a new job.
    external = new_driver(dp.prefix).start(source_checkpoint_info={"external_stage_path": str(folder)})
    assert external.poll(external.forward_backward(batch))["avg_loss"] == expected


def test_forward_returns_shifted_logprobs(dp, text_batch) -> None:
    import torch

    dp.start()
    batch = text_batch(text="hello there", rows=2)
    result = dp.poll(dp.forward(batch))
    logprobs = result["logprobs"]
    ids = batch["kwargs"]["input_ids"]
    assert tuple(logprobs.shape) == (2, ids.shape[1] - 1)
    assert bool((logprobs <= 0).all())
    # logprobs[:, i] scores input_ids[:, i + 1], so their mean is minus the SFT loss.
    fb = dp.poll(dp.forward_backward(batch))["avg_loss"]
    assert float(-logprobs.mean()) == pytest.approx(fb, rel=1e-5)
    assert result["avg_loss"] == pytest.approx(fb, rel=1e-5)
    # No gradients came from the forward: a step after it changes nothing but the step count.
    assert torch.isfinite(logprobs).all()


def test_load_errors(dp, new_driver, training_server) -> None:
    dp.start()
    response = dp.http.post(f"{dp.url}/load", json={})
    assert response.status_code == 422
    missing = dp.http.post(f"{dp.url}/load", json={"checkpoint_id": "cp_nope"})
    assert missing.status_code == 404
    assert missing.json()["code"] == "517601"
    elsewhere = dp.http.post(
        f"{dp.url}/load", json={"checkpoint_id": "cp_x", "target_sub_job_id": "other:training:0"}
    )
    assert elsewhere.status_code == 400
    unknown_source = dp.http.post(f"{dp.url}/load", json={"checkpoint_id": "cp_x", "source_job_id": "nope"})
    assert unknown_source.status_code == 404
    assert "Source job was not found" in unknown_source.json()["message"]


def test_load_into_a_sampling_sub_job_answers_501(http, new_driver, training_server) -> None:
    prefix = training_server.prefix(schema="S_LOAD501")
    body = {
        "sub_job_configs": [
            {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 1}},
            {"job_type": "sampling", "model_name": "Qwen/Qwen3-0.6B", "inference_config": {"n_gpus": 1}},
        ]
    }
    driver = new_driver(prefix)
    driver.job_id = http.post(prefix, json=body).json()["job_id"]
    driver.wait_running()
    response = http.post(
        f"{driver.url}/load",
        json={"checkpoint_id": "cp_x", "target_sub_job_id": f"{driver.job_id}:sampling:0"},
    )
    assert response.status_code == 501
    assert "not a training sub-job" in response.json()["message"]
    # Generation runs on the sampling sub-job; a body that is not a DSSST1 frame is refused.
    assert http.post(f"{driver.url}/generate", content=b"x").status_code == 422

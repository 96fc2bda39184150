"""The reference client cortex-training 0.0.3 drives ct_local's training data plane unchanged."""

from __future__ import annotations

import pytest

pytest.importorskip("cortex_training")


def test_reference_client_training_round_trip(training_server, capsys) -> None:
    import torch
    from cortex_training import CortexTrainingClient
    from cortex_training.client import serialize_forward_backward_args

    client = CortexTrainingClient(
        base_url=training_server.base_url, database="CT_TEST_DB", schema="S_REFERENCE", poll_interval=0.02
    )
    body = {
        "sub_job_configs": [
            {
                "job_type": "training",
                "model_name": "Qwen/Qwen3-1.7B",
                "training_config": {"optimizer": {"name": "AdamW", "lr": 0.01}, "n_gpus": 1},
            }
        ]
    }
    job_id = client.create_job_from_body(body)["job_id"]
    assert client.wait_for_job(job_id)["status"] == "running"

    ids = torch.tensor([list(b"the reference client trains the tiny model")] * 2)
    labels = torch.roll(ids, -1, dims=1)
    labels[:, -1] = -100
    frame = serialize_forward_backward_args(kwargs={"input_ids": ids, "labels": labels})

    first = client.poll_request(job_id, client.forward_backward(job_id, frame))
    assert first["avg_loss"] > 0 and first["post_process_outputs"] == {}
    # Pipelined: the step is submitted before the next forward-backward is polled.
    step_id = client.step(job_id, learning_rate=0.02)
    second_id = client.forward_backward(job_id, frame)
    assert client.poll_request(job_id, step_id) == {"global_steps": 1, "last_lr": 0.02}
    second = client.poll_request(job_id, second_id)
    assert second["avg_loss"] < first["avg_loss"]

    saved = client.poll_request(job_id, client.save(job_id, checkpoint_type="RESUMABLE"))
    assert "checkpoint_id" not in saved and saved["checkpoint_tag"] == "global_step1"
    checkpoints = client.list_checkpoints(job_id)
    assert [c["checkpoint_type"] for c in checkpoints] == ["resumable"]
    checkpoint_id = checkpoints[0]["checkpoint_id"]
    assert checkpoint_id in saved["stage_path"]
    client.poll_request(job_id, client.step(job_id))

    loaded = client.poll_request(
        job_id, client.load(job_id, checkpoint_id, target_sub_job_id=f"{job_id}:training:0")
    )
    assert loaded["checkpoint_id"] == checkpoint_id
    again = client.poll_request(job_id, client.forward_backward(job_id, frame))
    assert again["avg_loss"] == second["avg_loss"]

    # Byte forward through the operation envelope, and a page of the sub-job's log.
    answer = client.forward(job_id, frame)
    logprobs = client.poll_request(job_id, answer["request_id"])["logprobs"]
    assert tuple(logprobs.shape) == (2, ids.shape[1] - 1)
    page = client.tail_logs(job_id, max_lines=5)
    assert len(page["entries"]) == 5 and page["eof"] is False
    # (stream_logs(follow=False) of 0.0.3 waits for eof on a live job forever, so it is not used.)
    capsys.readouterr()  # the reference prints every operation body to stdout
    client.cancel_job(job_id)

"""The SDK's data plane end to end against ct_local: a real tiny torch model behind real HTTP.

An SFT loop whose loss goes down, pipelined submission (step before polling its forward/backward),
save -> load -> the same next-step loss, a multi-chunk upload, forward-only requests, live logs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from ct_testing import wait_until

from ct_core import CortexTrainingClient, SubJobConfig, wire
from ct_core.data.logs import LogsUnavailableError
from ct_core.data.payloads import build_forward_backward_payload

MODEL = "Qwen/Qwen3-0.6B"
TEXTS = ["the quick brown fox jumps over the lazy dog", "pack my box with five dozen liquor jugs"]


def _frame(max_length: int = 48) -> bytes:
    return build_forward_backward_payload(
        {"texts": TEXTS, "tokenizer": "byte", "max_length": max_length, "include_attention_mask": True}
    )


@pytest.fixture(scope="module")
def trainer(module_local_server_factory: Any) -> Iterator[tuple[CortexTrainingClient, str]]:
    server = module_local_server_factory()
    client = CortexTrainingClient(
        base_url=server.base_url, database="E2E", schema="PUBLIC", poll_interval=0.02, poll_max_interval=0.2
    )
    training = SubJobConfig.training_job(
        MODEL, optimizer={"name": "AdamW", "lr": 1e-2}, max_seq_len=256, train_batch_size=2, n_gpus=1
    )
    sampling = SubJobConfig.sampling_job(MODEL, max_seq_len=256, n_gpus=1)
    job_id = client.create_job([training, sampling])
    client.wait_for_job(job_id)
    try:
        yield client, job_id
    finally:
        client.close()


def test_sft_loop_loss_goes_down_pipelined(trainer: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = trainer
    frame = _frame()
    losses = []
    steps = []
    for _ in range(12):
        # Submit the step before polling the forward/backward: the sub-job runs them in order.
        fb = client.forward_backward(job_id, frame)
        st = client.step(job_id)
        losses.append(client.poll_request(job_id, fb)["avg_loss"])
        steps.append(client.poll_request(job_id, st)["global_steps"])
    assert all(math.isfinite(loss) for loss in losses)
    assert losses[-1] < losses[0] * 0.8
    assert steps == sorted(steps) and len(set(steps)) == len(steps)


def test_pipeline_handles(trainer: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = trainer
    with client.pipeline(job_id) as pipe:
        fb = pipe.forward_backward(_frame())
        st = pipe.step(learning_rate=1e-3)
        assert not fb.done()
        step_result = st.result()
        assert fb.result()["avg_loss"] > 0
        assert fb.done() and step_result["last_lr"] == pytest.approx(1e-3)
    assert fb.result() is fb.result()


def test_save_load_restores_the_next_step_loss(trainer: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = trainer
    frame = _frame()
    saved = client.poll_request(job_id, client.save(job_id, checkpoint_type="resumable"))
    checkpoint_id = client.checkpoint_id_from_save_result(saved)
    assert checkpoint_id.startswith("cp_")
    assert checkpoint_id in {cp["checkpoint_id"] for cp in client.list_checkpoints(job_id)}
    before = client.poll_request(job_id, client.forward_backward(job_id, frame))["avg_loss"]
    client.poll_request(job_id, client.step(job_id))
    moved = client.poll_request(job_id, client.forward_backward(job_id, frame))["avg_loss"]
    client.poll_request(job_id, client.step(job_id))
    assert moved != pytest.approx(before, abs=1e-6)
    client.poll_request(job_id, client.load(job_id, checkpoint_id))
    after = client.poll_request(job_id, client.forward_backward(job_id, frame))["avg_loss"]
    client.poll_request(job_id, client.step(job_id))
    assert after == pytest.approx(before, rel=1e-5)


def test_multi_chunk_upload_gives_the_same_loss(
    trainer: tuple[CortexTrainingClient, str], relay: Any
) -> None:
    client, job_id = trainer
    frame = _frame(max_length=200)
    whole = client.poll_request(job_id, client.forward_backward(job_id, frame))["avg_loss"]
    # Chunk frames keep 8 KiB for their own header: 10,000 bytes leaves ~1.8 KB of payload each.
    assert len(frame) > 3 * 1808
    # The chunked client talks through a recording relay, so what it really sent can be checked.
    recorder = relay(client.base_url)
    with CortexTrainingClient(
        base_url=recorder.base_url,
        database="E2E",
        schema="PUBLIC",
        poll_interval=0.02,
        poll_max_interval=0.2,
        max_request_chunk_bytes=10_000,
    ) as small_chunks:
        chunked = small_chunks.poll_request(job_id, small_chunks.forward_backward(job_id, frame))["avg_loss"]
        small_chunks.poll_request(job_id, small_chunks.step(job_id, learning_rate=0.0))
    assert chunked == pytest.approx(whole, rel=1e-6)
    posts = [seen for seen in recorder.requests if seen.method == "POST" and "forward-backward" in seen.path]
    chunks = [wire.read_byte_chunk_metadata(seen.body) for seen in posts]
    # The frame went as several request chunks of one group, in order, none above the ceiling.
    assert len(posts) > 3 and all(chunk is not None for chunk in chunks)
    assert [chunk["chunk_idx"] for chunk in chunks] == list(range(len(posts)))
    assert len({chunk["chunk_group_id"] for chunk in chunks}) == 1
    assert all(len(seen.body) <= 10_000 for seen in posts)


def test_forward_only(trainer: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = trainer
    answer = client.forward(job_id, _frame(), sub_job_id=f"{job_id}:training:0")
    result = client.poll_request(job_id, answer["request_id"])
    assert isinstance(result, dict) and result


def test_live_logs(trainer: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = trainer
    sub_job = f"{job_id}:training:0"
    page = client.tail_logs(job_id, max_lines=2, sub_job_id=sub_job)
    assert 0 < len(page["entries"]) <= 2
    entries = list(client.stream_logs(job_id, sub_job_id=sub_job, follow=False, max_lines=5))
    assert entries and all("_raw" in entry for entry in entries)


def test_logs_of_an_ended_job_point_to_download_log(module_local_server_factory: Any) -> None:
    server = module_local_server_factory()
    client = CortexTrainingClient(
        base_url=server.base_url, database="E2E", schema="PUBLIC", poll_interval=0.02
    )
    training = SubJobConfig.training_job(
        MODEL, optimizer={"name": "AdamW", "lr": 1e-3}, max_seq_len=64, train_batch_size=1, n_gpus=1
    )
    job_id = client.create_job([training])
    client.wait_for_job(job_id)
    client.cancel_job(job_id)
    # However long the cancel takes on a busy machine: the deadline only ends a hang.
    with pytest.raises(LogsUnavailableError, match="download-log"):
        wait_until(
            lambda: (
                client.get_job(job_id)["status"] in ("cancelled", "terminated") and client.tail_logs(job_id)
            ),
            timeout=60,
            message="the job never ended, or its logs stayed readable",
        )
    client.close()


def test_pipeline_with_background_polls(trainer: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = trainer
    frame = _frame()
    with client.pipeline(job_id, workers=2) as pipe:
        handles = [(pipe.forward_backward(frame), pipe.step(learning_rate=0.0)) for _ in range(3)]
        results = [(fb.result()["avg_loss"], st.result()["global_steps"]) for fb, st in handles]
    losses = [loss for loss, _ in results]
    steps = [step for _, step in results]
    # lr 0 keeps the weights: the same batch gives the same loss; every step is counted once.
    assert losses == pytest.approx([losses[0]] * 3, rel=1e-6)
    assert steps == [steps[0], steps[0] + 1, steps[0] + 2]
    with pytest.raises(ValueError, match="workers"):
        client.pipeline(job_id, workers=-1)

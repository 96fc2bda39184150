"""The SDK's generation end to end against ct_local: generate, streaming, routing, weight sync, an RL loop.

Also checks that the reference client 0.0.3 generates against ct_local and that its results poll back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from ct_core import CortexTrainingClient, SubJobConfig, wire
from ct_core.data.generate import DISABLE_TENSOR_PROMPTS_ENV
from ct_core.data.results import RequestFailedError

MODEL = "Qwen/Qwen3-0.6B"
GREEDY = {"max_tokens": 6, "temperature": 0, "ignore_eos": True}


@pytest.fixture(scope="module")
def server(module_local_server_factory: Any) -> Any:
    return module_local_server_factory()


def _client(server: Any, **options: Any) -> CortexTrainingClient:
    return CortexTrainingClient(
        base_url=server.base_url,
        database="GEN",
        schema="PUBLIC",
        poll_interval=0.02,
        poll_max_interval=0.2,
        **options,
    )


@pytest.fixture(scope="module")
def job(server: Any) -> Iterator[tuple[CortexTrainingClient, str]]:
    client = _client(server)
    training = SubJobConfig.training_job(
        MODEL, optimizer={"name": "AdamW", "lr": 3e-2}, max_seq_len=64, train_batch_size=4, n_gpus=1
    )
    # The training window (64) is larger than the sampler's (32): prompts are checked against 32.
    sampling = SubJobConfig.sampling_job(MODEL, max_seq_len=32, n_gpus=1)
    job_id = client.create_job([training, sampling])
    client.wait_for_job(job_id)
    try:
        yield client, job_id
    finally:
        client.close()


def test_generate_strings_tokens_and_tensors(job: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = job
    request_id = client.generate(job_id, ["Hi", [72, 105], np.array([72, 105])], sampling_params=GREEDY)
    result = client.poll_request(job_id, request_id)
    results = result["results"]
    assert len(results) == 3
    assert results[0]["token_ids"] == results[1]["token_ids"] == results[2]["token_ids"]
    assert all(isinstance(r["token_ids"], list) and r["finish_reason"] == "length" for r in results)
    # A flat list is one prompt; per-prompt params and routing keys line up with prompts.
    one = client.poll_request(job_id, client.generate(job_id, [72, 105], sampling_params=GREEDY))
    assert one["results"] == results[:1]
    two = client.generate(
        job_id, ["a", "b"], sampling_params=[GREEDY, {"max_tokens": 1}], routing_key=["k1", "k2"], strict=True
    )
    assert [len(r["token_ids"]) for r in client.poll_request(job_id, two)["results"]] == [6, 1]


def test_generate_with_logprobs(job: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = job
    request_id = client.generate(
        job_id, [[1, 2, 3]], sampling_params={**GREEDY, "logprobs": 1, "prompt_logprobs": 0}
    )
    result = client.poll_request(job_id, request_id)["results"][0]
    assert len(result["logprobs"]) == 6 and result["prompt_logprobs"][0] is None


def test_prompt_length_checked_against_the_sampling_sub_job(job: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = job
    with pytest.raises(ValueError) as refused_list:
        client.generate(job_id, [[1], list(range(32))])
    # The whole text is fixed (the service words it the same way); the operation name leads it.
    assert str(refused_list.value) == (
        "generate prompt at index 1 has 32 tokens, which does not fit the sampling job's max_seq_len of "
        "32: a prompt must be shorter than max_seq_len to leave room for at least one generated token "
        "(vLLM rejects len(prompt) >= max_model_len). Shorten the prompt to at most 31 tokens, or "
        "recreate the job with a larger max_seq_len."
    )
    with pytest.raises(ValueError, match=r"^generate_stream prompt at index 0 has 40 tokens"):
        client.generate_stream(job_id, [list(range(40))])
    # Tuples, numpy arrays and torch tensors are checked like lists, and a bare tensor is one prompt.
    import torch

    for prompt in (tuple(range(33)), np.arange(32, dtype=np.int64), torch.arange(32)):
        with pytest.raises(ValueError, match=r"prompt at index 0 has 3[23] tokens"):
            client.generate(job_id, [prompt])
    with pytest.raises(ValueError, match="prompt at index 0 has 32 tokens"):
        client.generate(job_id, torch.arange(32))
    # Strings are left to the server's tokenizer, which refuses them as well.
    from ct_core.errors import APIError

    with pytest.raises(APIError) as refused:
        client.generate(job_id, ["x" * 40])
    assert refused.value.status_code == 422


def _job_lookups(recorder: Any) -> list[str]:
    """The job ids of the job reads (getJob) that arrived at a recording relay, in order."""
    looked_up = []
    for seen in recorder.requests:
        *_, parent, last = seen.path.split("?", 1)[0].split("/")
        if seen.method == "GET" and parent == "cortex-training":
            looked_up.append(last)
    return looked_up


def test_lookup_is_cached_and_failures_are_not(
    job: tuple[CortexTrainingClient, str], server: Any, relay: Any
) -> None:
    _, job_id = job
    recorder = relay(server.base_url)
    client = _client(recorder)
    for _ in range(3):
        client.poll_request(job_id, client.generate(job_id, [[1, 2]], sampling_params={"max_tokens": 1}))
    assert _job_lookups(recorder) == [job_id]
    from ct_core.errors import APIError

    missing = "00000000-0000-0000-0000-000000000000"
    for _ in range(2):
        with pytest.raises(APIError):
            client.generate(missing, [[1, 2]])
    assert _job_lookups(recorder) == [job_id, missing, missing]
    client.close()


def test_disable_tensor_prompts_keeps_a_frame(monkeypatch: pytest.MonkeyPatch, job: tuple[Any, str]) -> None:
    from ct_core.data.generate import build_logical_request

    as_tensors = build_logical_request([[1, 2], "x", [2**40]], None, None, None, tensors=True)
    assert as_tensors["prompts"][0].dtype == np.int32 and as_tensors["prompts"][2].dtype == np.int64
    assert as_tensors["prompts"][1] == "x"
    client, job_id = job
    monkeypatch.setenv(DISABLE_TENSOR_PROMPTS_ENV, "true")
    result = client.poll_request(job_id, client.generate(job_id, [[72, 105]], sampling_params=GREEDY))
    # The length check runs before (and regardless of) the tensor encoding.
    with pytest.raises(ValueError, match="prompt at index 0 has 32 tokens"):
        client.generate(job_id, [list(range(32))])
    monkeypatch.delenv(DISABLE_TENSOR_PROMPTS_ENV)
    again = client.poll_request(job_id, client.generate(job_id, [[72, 105]], sampling_params=GREEDY))
    assert result == again


def test_stream_iterator(job: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = job
    started = client.generate_stream(job_id, ["a", "b", [1, 2]], sampling_params={"max_tokens": 2})
    assert started["count"] == 3
    events = list(client.iter_generate_events(job_id, started["request_id"], max_events=1))
    assert [e["type"] for e in events].count("result") == 3
    assert events[-1] == {"type": "done", "completed": 3, "failed": 0}


def test_stream_frame_limit(job: tuple[CortexTrainingClient, str]) -> None:
    from ct_core.data import generate as _generate

    client, job_id = job
    with (
        CortexTrainingClient(
            base_url=client.base_url,
            database=client.database,
            schema=client.schema,
            max_request_chunk_bytes=1024,
        ) as small,
        pytest.raises(ValueError, match=r"^generate_stream payload is 0\.0 MB, which exceeds the maximum"),
    ):
        small.generate_stream(job_id, ["x" * 2000])
    # The oversize text at the real limit: sizes in MiB, written "MB".
    assert _generate.oversized_stream_message(61 * 1024 * 1024 + 1) == (
        "generate_stream payload is 61.0 MB, which exceeds the maximum allowed size of 60 MB. Reduce the "
        "number of prompts or shorten each prompt to bring the serialized request under the limit."
    )


def test_stream_of_a_cancelled_request_raises(job: tuple[CortexTrainingClient, str]) -> None:
    client, job_id = job
    started = client.generate_stream(
        job_id, [[1, 2]] * 40, sampling_params={"max_tokens": 25, "ignore_eos": True}
    )
    client.cancel_request(job_id, started["request_id"])
    events: list[dict[str, Any]] = []
    try:
        for event in client.iter_generate_events(job_id, started["request_id"]):
            events.append(event)
    except RequestFailedError as exc:
        assert exc.state == "cancelled"
    else:
        # It ran far enough to report its end itself.
        assert events[-1]["type"] == "done"


def test_routing_with_several_samplers(server: Any) -> None:
    client = _client(server)
    training = SubJobConfig.training_job(
        MODEL, optimizer={"name": "AdamW", "lr": 1e-2}, max_seq_len=64, train_batch_size=4, n_gpus=1
    )
    job_id = client.create_job(
        [
            training,
            SubJobConfig.sampling_job(MODEL, max_seq_len=64, n_gpus=1),
            SubJobConfig.sampling_job(MODEL, max_seq_len=16, n_gpus=1),
        ]
    )
    client.wait_for_job(job_id)
    from ct_core.errors import APIError

    with pytest.raises(APIError, match="pass sub_job_id"):
        client.generate(job_id, ["a"])
    with pytest.raises(ValueError, match="max_seq_len of 16"):
        client.generate(job_id, [list(range(20))], sub_job_id=f"{job_id}:sampling:1")
    ok = client.generate(
        job_id, [list(range(20))], sampling_params={"max_tokens": 1}, sub_job_id=f"{job_id}:sampling:0"
    )
    assert len(client.poll_request(job_id, ok)["results"]) == 1
    client.close()


def _batch(samples: list[list[int]], prompt_len: int, weights: list[float]) -> bytes:
    import torch

    width = max(len(s) for s in samples)
    ids = torch.full((len(samples), width), 256, dtype=torch.long)
    labels = torch.full((len(samples), width), -100, dtype=torch.long)
    mask = torch.zeros((len(samples), width))
    for row, (sample, weight) in enumerate(zip(samples, weights, strict=True)):
        ids[row, : len(sample)] = torch.tensor(sample)
        # Next-token labels on the generated part only, scaled by the sample's advantage.
        labels[row, prompt_len - 1 : len(sample) - 1] = torch.tensor(sample[prompt_len:])
        mask[row, prompt_len - 1 : len(sample) - 1] = weight
    return wire.dumps({"args": (), "kwargs": {"input_ids": ids, "labels": labels, "loss_mask": mask}})


@pytest.mark.slow
def test_rl_loop_changes_the_sampler(server: Any) -> None:
    """generate -> reward -> advantage-weighted forward-backward -> step -> weight-sync, 10 times."""
    client = _client(server)
    training = SubJobConfig.training_job(
        MODEL, optimizer={"name": "AdamW", "lr": 3e-2}, max_seq_len=64, train_batch_size=4, n_gpus=1
    )
    job_id = client.create_job([training, SubJobConfig.sampling_job(MODEL, max_seq_len=64, n_gpus=1)])
    client.wait_for_job(job_id)
    prompt = list(b"say a:")
    probe = client.poll_request(job_id, client.generate(job_id, [prompt], sampling_params=GREEDY))
    before = probe["results"][0]["token_ids"]
    rewards: list[float] = []
    after_first_sync: list[int] | None = None
    for iteration in range(10):
        params = {"max_tokens": 8, "temperature": 1.0, "seed": iteration, "ignore_eos": True}
        samples = client.poll_request(job_id, client.generate(job_id, [prompt] * 4, sampling_params=params))
        outputs = [r["token_ids"] for r in samples["results"]]
        scores = [sum(t == ord("a") for t in out) / len(out) for out in outputs]
        rewards.append(sum(scores) / len(scores))
        baseline = sum(scores) / len(scores)
        weights = [max(s - baseline, 0.0) + 0.05 for s in scores]
        frame = _batch([prompt + out for out in outputs], len(prompt), weights)
        client.poll_request(job_id, client.forward_backward(job_id, frame))
        client.poll_request(job_id, client.step(job_id))
        sync = client.weight_sync(job_id, f"{job_id}:training:0", [f"{job_id}:sampling:0"])
        synced = client.poll_request(job_id, sync)
        assert synced["targets"][0]["recv"]["recv"]["clear_cache"] is True
        if iteration == 0:
            greedy = client.poll_request(job_id, client.generate(job_id, [prompt], sampling_params=GREEDY))
            after_first_sync = greedy["results"][0]["token_ids"]
    assert after_first_sync is not None and after_first_sync != before
    assert len(rewards) == 10
    client.close()


def test_reference_client_generates_against_ct_local(
    job: tuple[CortexTrainingClient, str], server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = pytest.importorskip("cortex_training")
    _, job_id = job
    monkeypatch.delenv(DISABLE_TENSOR_PROMPTS_ENV, raising=False)
    theirs = reference.CortexTrainingClient(
        base_url=server.base_url, database="GEN", schema="PUBLIC", poll_interval=0.02
    )
    request_id = theirs.generate(job_id, ["Hi", [72, 105]], sampling_params=GREEDY)
    result = theirs.poll_request(job_id, request_id)
    results = result["results"]
    assert len(results) == 2 and results[0]["token_ids"] == results[1]["token_ids"]
    assert isinstance(results[0]["token_ids"], list)
    # The reference's generate_stream posts JSON, which a frame-only service refuses.
    import requests

    with pytest.raises(requests.HTTPError, match="422"):
        theirs.generate_stream(job_id, ["Hi"], sampling_params=GREEDY)


def test_large_generate_frames_travel_as_request_chunks(
    job: tuple[CortexTrainingClient, str], server: Any, relay: Any
) -> None:
    _, job_id = job
    recorder = relay(server.base_url)
    # A small chunk ceiling (above the 8 KiB header allowance) stands in for 60 MiB.
    with _client(recorder, max_request_chunk_bytes=16 * 1024) as client:
        prompts = [[(i * 7 + j) % 250 for j in range(20)] for i in range(300)]
        request_id = client.generate(job_id, prompts, sampling_params={"max_tokens": 1})
        assert len(client.poll_request(job_id, request_id)["results"]) == 300
    posts = [seen for seen in recorder.requests if seen.method == "POST"]
    chunks = [wire.read_byte_chunk_metadata(seen.body) for seen in posts]
    # Every POST of the frame is one request chunk of one group, none above the ceiling.
    assert len(posts) > 1 and all(chunk is not None for chunk in chunks)
    assert [chunk["chunk_idx"] for chunk in chunks] == list(range(len(posts)))
    assert all(len(seen.body) <= 16 * 1024 for seen in posts)

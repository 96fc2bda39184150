"""Router replay operations of the local server (bootstrap, discard, replay frames) over real HTTP.

Router replay replays a mixture-of-experts model's routing, so these run on the tiny random-init
Qwen3-MoE model of `moe_server` (conftest); a dense model, real or the built-in tiny one, is
refused with a 400 that names the model and why.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ct_core.client import CortexTrainingClient
from ct_local.dataplane import router_replay

DATABASE = "RR_DB"
#: What `moe_server` serves (conftest): a mixture-of-experts model, a dense one, the tiny model.
MOE_MODEL, DENSE_MODEL, TINY_MODEL = "tiny-moe", "tiny-dense", "Qwen/Qwen3-0.6B"


@pytest.fixture
def client(moe_server: Any) -> Iterator[CortexTrainingClient]:
    with CortexTrainingClient(base_url=moe_server.base_url, database=DATABASE, schema="PUBLIC") as sdk:
        yield sdk


def _operation(moe_server: Any, job_id: str, body: dict[str, Any]) -> httpx.Response:
    url = f"{moe_server.prefix(database=DATABASE)}/{job_id}/operation"
    with moe_server.http() as http:
        return http.post(url, json=body)


def _bootstrap_pair(server: Any, job_id: str, training: str, sampling: str) -> httpx.Response:
    """A plain HTTP bootstrap of the job's (sampling -> training) pair, sent to the training sub-job."""
    payload = {"source_sub_job_id": sampling, "target_sub_job_id": training}
    body = {"operation_type": "bootstrap-router-replay", "sub_job_id": training, "payload": payload}
    return _operation(server, job_id, body)


def test_bootstrap_returns_a_zone_id_per_pair(client: CortexTrainingClient, running_pair: Any) -> None:
    job_id, training, sampling = running_pair(client)
    first = client.bootstrap_router_replay(
        job_id, sampling, training, sub_job_id=training, max_cache_bytes=4096
    )
    assert first == {
        "job_id": job_id,
        "sub_job_id": training,
        "source_sub_job_id": sampling,
        "target_sub_job_id": training,
        "sampling_job_id": router_replay.zone_id(job_id, sampling, training),
        "max_cache_bytes": 4096,
    }
    zone = first["sampling_job_id"]
    # The zone id is not the public sampling sub-job id, and a repeated bootstrap answers the same.
    assert zone.startswith(router_replay.ZONE_PREFIX) and zone != sampling
    again = client.bootstrap_router_replay(job_id, sampling, training, sub_job_type="training")
    assert again["sampling_job_id"] == zone and again["max_cache_bytes"] is None
    # Another job's pair gets another zone.
    other_job, other_training, other_sampling = running_pair(client)
    other = client.bootstrap_router_replay(
        other_job, other_sampling, other_training, sub_job_id=other_training
    )
    assert other["sampling_job_id"] != zone


def test_bootstrap_takes_the_cap_from_the_router_replay_block(
    client: CortexTrainingClient, running_pair: Any
) -> None:
    block = {"enabled": True, "mode": "strict", "max_cache_bytes": 2048}
    job_id, training, sampling = running_pair(client, router_replay=block)
    assert (
        client.bootstrap_router_replay(job_id, sampling, training, sub_job_id=training)["max_cache_bytes"]
        == 2048
    )


def test_bootstrap_refuses_wrong_pairs_and_receivers(
    moe_server: Any, client: CortexTrainingClient, running_pair: Any
) -> None:
    job_id, training, sampling = running_pair(client)

    def bootstrap(payload: dict[str, Any], **hints: Any) -> httpx.Response:
        return _operation(
            moe_server, job_id, {"operation_type": "bootstrap-router-replay", "payload": payload, **hints}
        )

    pair = {"source_sub_job_id": sampling, "target_sub_job_id": training}
    swapped = bootstrap({"source_sub_job_id": training, "target_sub_job_id": sampling}, sub_job_id=sampling)
    assert swapped.status_code == 400
    assert f"source_sub_job_id {training} is a training sub-job, not sampling" in swapped.json()["message"]
    elsewhere = bootstrap(pair, sub_job_id=sampling)
    assert elsewhere.status_code == 400
    assert f"received by its target training sub-job {training}" in elsewhere.json()["message"]
    missing = bootstrap({"target_sub_job_id": training}, sub_job_id=training)
    assert missing.status_code == 422
    unknown = bootstrap({**pair, "source_sub_job_id": f"{job_id}:sampling:9"}, sub_job_id=training)
    assert unknown.status_code == 400 and "is not a sub-job of job" in unknown.json()["message"]
    for cap in (0, -1, "4096", True):
        bad_cap = bootstrap({**pair, "max_cache_bytes": cap}, sub_job_id=training)
        assert bad_cap.status_code == 422, cap
        assert "max_cache_bytes must be a positive integer" in bad_cap.text


def test_best_effort_bootstrap_is_rejected(
    moe_server: Any, client: CortexTrainingClient, running_pair: Any
) -> None:
    block = {"enabled": True, "mode": "best_effort"}
    job_id, training, sampling = running_pair(client, router_replay=block)
    response = _bootstrap_pair(moe_server, job_id, training, sampling)
    assert response.status_code == 400
    assert response.json()["message"].startswith("router replay bootstrap rejected: mode 'best_effort'")


def test_discard_runs_on_the_sampling_sub_job(
    moe_server: Any, client: CortexTrainingClient, running_pair: Any
) -> None:
    job_id, training, sampling = running_pair(client)
    answer = client.router_replay_discard(job_id, ["s-1", "s-2", "s-1"], sub_job_type="sampling")
    assert answer == {"job_id": job_id, "sub_job_id": sampling, "requested": 2, "discarded": 0}
    # Without any hint the sampling sub-job receives it; an empty list is a valid no-op.
    plain = _operation(moe_server, job_id, {"operation_type": "router-replay-discard", "payload": {}})
    assert plain.status_code == 200 and plain.json()["sub_job_id"] == sampling
    assert plain.json()["requested"] == 0
    on_training = _operation(
        moe_server,
        job_id,
        {"operation_type": "router-replay-discard", "sub_job_id": training, "payload": {"sample_ids": ["a"]}},
    )
    assert on_training.status_code == 400
    assert f"runs on a sampling sub-job, not on {training}" in on_training.json()["message"]
    bad = _operation(
        moe_server, job_id, {"operation_type": "router-replay-discard", "payload": {"sample_ids": "a"}}
    )
    assert bad.status_code == 422


def test_router_replay_needs_a_running_job(
    moe_server: Any, client: CortexTrainingClient, running_pair: Any
) -> None:
    job_id, _, _ = running_pair(client)
    client.cancel_job(job_id)
    response = _operation(
        moe_server,
        job_id,
        {"operation_type": "router-replay-discard", "payload": {"sample_ids": ["a"]}},
    )
    assert response.status_code == 409


def _replay_frame(sampling_job_id: str, **descriptor: Any) -> bytes:
    import numpy as np

    from ct_core import wire

    ids = np.array([[1, 2, 3, 4, 5, 6]], dtype=np.int64)
    labels = np.array([[2, 3, 4, 5, 6, -100]], dtype=np.int64)
    metadata = {"router_replay": {"sampling_job_id": sampling_job_id, **descriptor}}
    return wire.dumps({"args": (), "kwargs": {"input_ids": ids, "labels": labels}}, metadata=metadata)


def test_replay_frames_must_name_a_bootstrapped_pair(client: CortexTrainingClient, running_pair: Any) -> None:
    from ct_core.errors import APIError

    job_id, training, sampling = running_pair(client)
    zone = router_replay.zone_id(job_id, sampling, training)
    # Before the bootstrap, and with the public sampling sub-job id, the pair is unknown.
    for wrong in (zone, sampling):
        with pytest.raises(APIError, match="not a pair bootstrapped") as refused:
            client.forward_backward(job_id, _replay_frame(wrong, identity_version=1))
        assert refused.value.status_code == 400
    assert (
        client.bootstrap_router_replay(job_id, sampling, training, sub_job_id=training)["sampling_job_id"]
        == zone
    )
    # The bootstrapped zone id replays, with identity_version 1 or without one (legacy ids).
    for descriptor in ({"identity_version": 1}, {}):
        request_id = client.forward_backward(job_id, _replay_frame(zone, **descriptor))
        assert client.poll_request(job_id, request_id)["avg_loss"] > 0
    with pytest.raises(APIError, match="identity_version must be 1") as refused:
        client.forward_backward(job_id, _replay_frame(zone, identity_version=2))
    assert refused.value.status_code == 400
    # forward carries the descriptor the same way, unchunked.
    with pytest.raises(APIError, match="not a pair bootstrapped"):
        client.forward(job_id, _replay_frame("rrz-nobody"))
    accepted = client.forward(job_id, _replay_frame(zone, identity_version=1))
    assert accepted["request_id"]


def _rr1_frame(sampling_job_id: str, sample_ids: list[str], **descriptor: Any) -> bytes:
    import numpy as np

    from ct_core import wire

    ids = np.array([[1, 2, 3, 4, 5, 6]] * len(sample_ids), dtype=np.int64)
    labels = np.array([[2, 3, 4, 5, 6, -100]] * len(sample_ids), dtype=np.int64)
    batch = {"args": (), "kwargs": {"input_ids": ids, "labels": labels, "rr_sample_ids": sample_ids}}
    metadata = {"router_replay": {"sampling_job_id": sampling_job_id, **descriptor}}
    return wire.dumps(batch, metadata=metadata)


def test_rr1_sample_ids_need_identity_version_1(client: CortexTrainingClient, running_pair: Any) -> None:
    from ct_core.errors import APIError

    job_id, training, sampling = running_pair(client)
    zone = client.bootstrap_router_replay(job_id, sampling, training, sub_job_id=training)["sampling_job_id"]
    exact = ["rr1:sample-a", "rr1:sample-b"]
    # Without identity_version, rr1: ids are refused, chunked (forward-backward) or not (forward).
    with pytest.raises(APIError, match="identity_version must be 1 for rr1: sample ids") as refused:
        client.forward_backward(job_id, _rr1_frame(zone, exact))
    assert refused.value.status_code == 400
    with pytest.raises(APIError, match="identity_version must be 1 for rr1: sample ids"):
        client.forward(job_id, _rr1_frame(zone, ["legacy-1", "rr1:sample-c"]))
    request_id = client.forward_backward(job_id, _rr1_frame(zone, exact, identity_version=1))
    assert client.poll_request(job_id, request_id)["avg_loss"] > 0
    # Legacy ids still replay without a version.
    legacy = client.forward_backward(job_id, _rr1_frame(zone, ["sample-a", "sample-b"]))
    assert client.poll_request(job_id, legacy)["avg_loss"] > 0


def _plain_frame() -> bytes:
    import numpy as np

    from ct_core import wire

    ids = np.array([[1, 2, 3, 4, 5, 6]], dtype=np.int64)
    labels = np.array([[2, 3, 4, 5, 6, -100]], dtype=np.int64)
    return wire.dumps({"args": (), "kwargs": {"input_ids": ids, "labels": labels}})


@pytest.mark.parametrize(
    ("model", "why"),
    [
        (TINY_MODEL, "the built-in tiny model has no experts"),
        (DENSE_MODEL, "its config (Qwen3ForCausalLM) declares no experts"),
    ],
)
def test_router_replay_is_refused_for_a_dense_model(
    moe_server: Any, client: CortexTrainingClient, model: str, why: str, running_pair: Any
) -> None:
    from ct_core.errors import APIError

    job_id, training, sampling = running_pair(client, model)
    refusal = f"router replay needs a mixture-of-experts model, and {model} is dense: {why}"
    boot = _bootstrap_pair(moe_server, job_id, training, sampling)
    assert boot.status_code == 400, boot.text
    assert refusal in boot.json()["message"]
    discard = _operation(
        moe_server, job_id, {"operation_type": "router-replay-discard", "payload": {"sample_ids": ["a"]}}
    )
    assert discard.status_code == 400, discard.text
    assert refusal in discard.json()["message"]
    zone = router_replay.zone_id(job_id, sampling, training)
    with pytest.raises(APIError) as refused:
        client.forward_backward(job_id, _replay_frame(zone, identity_version=1))
    assert refused.value.status_code == 400
    assert refusal in str(refused.value)
    # A frame that asks for no replay trains as usual.
    plain = client.forward_backward(job_id, _plain_frame())
    assert client.poll_request(job_id, plain)["avg_loss"] > 0

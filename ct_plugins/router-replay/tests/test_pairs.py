"""`ReplayPairs`: bootstrap each source/target pair once, remember its zone id, build replay frames.

The helper runs against the real local server serving a mixture-of-experts model (which
implements bootstrap and checks replay frames); the client records what it was asked, so the tests
can see the receiver it was given and that a remembered pair is not bootstrapped again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from ct_router_replay.pairs import ReplayPairs

from ct_core import wire
from ct_core.client import CortexTrainingClient

DATABASE = "RR_PAIRS"
#: The mixture-of-experts model `moe_server` serves (conftest): router replay needs experts.
MOE_MODEL = "tiny-moe"


class CountingClient(CortexTrainingClient):
    """The real client; it also keeps the arguments of every bootstrap it sends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bootstraps: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def bootstrap_router_replay(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.bootstraps.append((args, kwargs))
        return super().bootstrap_router_replay(*args, **kwargs)


@pytest.fixture
def client(moe_server: Any) -> Iterator[CountingClient]:
    with CountingClient(base_url=moe_server.base_url, database=DATABASE, schema="PUBLIC") as sdk:
        yield sdk


def _batch(sample_ids: list[str]) -> dict[str, Any]:
    rows = len(sample_ids)
    return {
        "args": (),
        "kwargs": {
            "input_ids": np.array([[1, 2, 3, 4, 5, 6]] * rows, dtype=np.int64),
            "labels": np.array([[2, 3, 4, 5, 6, -100]] * rows, dtype=np.int64),
            "rr_sample_ids": sample_ids,
        },
    }


def test_bootstrap_defaults_the_receiver_to_the_target_and_remembers_the_pair(
    client: CountingClient, running_pair: Any
) -> None:
    job_id, training, sampling = running_pair(client)
    pairs = ReplayPairs(client)
    first = pairs.bootstrap(job_id, sampling, training, max_cache_bytes=4096)
    assert client.bootstraps == [
        (
            (job_id, sampling, training),
            {"max_cache_bytes": 4096, "sub_job_id": training, "sub_job_type": None},
        )
    ]
    zone = first["sampling_job_id"]
    assert zone != sampling and pairs.sampling_job_id(job_id, sampling, training) == zone
    # The same pair again is answered from memory; asking for another cap bootstraps again.
    assert pairs.bootstrap(job_id, sampling, training) == first
    assert pairs.bootstrap(job_id, sampling, training, max_cache_bytes=4096) == first
    assert len(client.bootstraps) == 1
    assert pairs.bootstrap(job_id, sampling, training, max_cache_bytes=8192)["max_cache_bytes"] == 8192
    assert len(client.bootstraps) == 2
    # A hint the caller gives is sent as given.
    pairs.bootstrap(job_id, sampling, training, sub_job_type="training", refresh=True)
    assert client.bootstraps[-1][1] == {
        "max_cache_bytes": None,
        "sub_job_id": None,
        "sub_job_type": "training",
    }
    # Another job's pair is another mapping: never reused across pairs.
    other_job, other_training, other_sampling = running_pair(client)
    other = pairs.bootstrap(other_job, other_sampling, other_training)["sampling_job_id"]
    assert other != zone
    assert pairs.known() == {
        (job_id, sampling, training): zone,
        (other_job, other_sampling, other_training): other,
    }
    with pytest.raises(LookupError, match="bootstrap it first"):
        pairs.sampling_job_id(job_id, other_sampling, training)


def test_frames_carry_the_zone_id_and_identity_version_1(client: CountingClient, running_pair: Any) -> None:
    job_id, training, sampling = running_pair(client)
    pairs = ReplayPairs(client)
    pairs.bootstrap(job_id, sampling, training)
    zone = pairs.sampling_job_id(job_id, sampling, training)
    assert pairs.descriptor(job_id, sampling, training) == {"sampling_job_id": zone, "identity_version": 1}
    frame = pairs.dumps(_batch(["rr1:a", "rr1:b"]), job_id, sampling, training)
    assert wire.read_metadata(frame) == {
        "response_options": {"format": "dssst1", "delivery": "chunked"},
        "router_replay": {"sampling_job_id": zone, "identity_version": 1},
    }
    # The server takes the frame: the pair is known and the rr1: ids carry their version.
    assert client.poll_request(job_id, client.forward_backward(job_id, frame))["avg_loss"] > 0
    # Legacy ids may leave the version out; rr1: ids may not, and are refused before sending.
    legacy = pairs.dumps(_batch(["a", "b"]), job_id, sampling, training, identity_version=None)
    assert wire.read_metadata(legacy)["router_replay"] == {"sampling_job_id": zone}
    assert client.poll_request(job_id, client.forward_backward(job_id, legacy))["avg_loss"] > 0
    with pytest.raises(ValueError, match="rr1: sample ids need identity_version 1"):
        pairs.dumps(_batch(["a", "rr1:b"]), job_id, sampling, training, identity_version=None)
    with pytest.raises(ValueError, match="identity_version must be 1"):
        pairs.descriptor(job_id, sampling, training, identity_version=2)


class PollingClient(CortexTrainingClient):
    """A deployment that answers bootstrap with a request to poll, as the contract allows."""

    def bootstrap_router_replay(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {"request_id": "r-1", "job_id": args[0]}

    def poll_request(self, job_id: str, request_id: str, **kwargs: Any) -> dict[str, Any]:
        assert request_id == "r-1"
        return {"sampling_job_id": "zone-7", "target_sub_job_id": "t"}


def test_a_bootstrap_request_is_polled_before_the_pair_is_remembered(local_server: Any) -> None:
    with PollingClient(base_url=local_server.base_url, database=DATABASE, schema="PUBLIC") as sdk:
        waited: list[str] = []
        pairs = ReplayPairs(sdk)
        assert pairs.bootstrap("J", "s", "t", on_wait=waited.append)["sampling_job_id"] == "zone-7"
        assert waited == ["r-1"] and pairs.sampling_job_id("J", "s", "t") == "zone-7"
        # Without polling the answer is the request, and nothing is remembered yet.
        unpolled = ReplayPairs(sdk)
        assert unpolled.bootstrap("J", "s", "t", poll=False) == {"request_id": "r-1", "job_id": "J"}
        assert unpolled.known() == {}

"""The checkpoint routes the SDK's RestClient calls: weights info and delete work; publishing,
TTLs and copies have no Cortex Training equivalent and are refused in the SDK's error shape, with
a message saying so. A sampling client's own get_tokenizer() loads offline."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

BASE_MODEL = "Qwen/Qwen3-0.6B"


@pytest.fixture
def saved(service_client: Any, local_server: Any) -> tuple[Any, Any, str]:
    """A training client (attention only), a RestClient of the same caller, and a saved state."""
    import tinker

    training = service_client.create_lora_training_client(
        base_model=BASE_MODEL, rank=4, train_mlp=False
    ).result()
    rest = tinker.RestClient(base_url=local_server.base_url, api_key="tml-local")
    path = training.save_state("first").result().path
    return training, rest, path


def test_weights_info_describes_a_saved_checkpoint(saved: tuple[Any, Any, str]) -> None:
    import tinker

    _training, rest, path = saved
    info = rest.get_weights_info_by_tinker_path(path).result()
    assert (info.base_model, info.is_lora, info.lora_rank) == (BASE_MODEL, True, 4)
    assert (info.train_attn, info.train_mlp, info.train_unembed) == (True, False, False)
    with pytest.raises(tinker.NotFoundError, match="not found"):
        rest.get_weights_info_by_tinker_path(path.replace("first", "missing")).result()


def test_a_deleted_checkpoint_is_gone(saved: tuple[Any, Any, str], service_client: Any) -> None:
    import tinker

    training, rest, path = saved
    kept = training.save_state("second").result().path
    rest.delete_checkpoint_from_tinker_path(path).result()
    listed = [c.tinker_path for c in rest.list_checkpoints(training.model_id).result().checkpoints]
    assert listed == [kept]
    with pytest.raises(tinker.NotFoundError, match="not found"):
        rest.delete_checkpoint_from_tinker_path(path).result()
    with pytest.raises(tinker.NotFoundError, match="not found"):
        service_client.create_training_client_from_state(path).result()


@pytest.mark.parametrize("call", ["publish", "unpublish", "ttl", "copy"])
def test_routes_without_an_equivalent_are_refused(saved: tuple[Any, Any, str], call: str) -> None:
    import tinker

    _training, rest, path = saved
    calls = {
        "publish": lambda: rest.publish_checkpoint_from_tinker_path(path),
        "unpublish": lambda: rest.unpublish_checkpoint_from_tinker_path(path),
        "ttl": lambda: rest.set_checkpoint_ttl_from_tinker_path(path, 3600),
        "copy": lambda: rest.copy_weights(path, destination_project_id="elsewhere"),
    }
    with pytest.raises(tinker.BadRequestError, match="no Cortex Training equivalent"):
        calls[call]().result()


def test_a_sampling_client_loads_its_tokenizer_offline(saved: tuple[Any, Any, str]) -> None:
    from tinker import types

    training, _rest, _path = saved
    expected = training.get_tokenizer()
    sampler = training.save_weights_and_get_sampling_client().result()
    tokenizer = sampler.get_tokenizer()
    assert tokenizer.encode("hello, sampler") == expected.encode("hello, sampler")
    tokens = np.array(tokenizer.encode("ab"))
    sampled = sampler.sample(
        types.ModelInput.from_ints(tokens.tolist()),
        num_samples=1,
        sampling_params=types.SamplingParams(max_tokens=2, seed=1),
    ).result()
    assert tokenizer.decode(sampled.sequences[0].tokens) is not None

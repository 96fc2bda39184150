"""Client and server judge a create-job body by the same rules, with the same words.

Each body goes to `validate_create_body` (offline) and to a real local server: both must accept it,
or both refuse it naming the same problems.
"""

from __future__ import annotations

from typing import Any

import pytest

from ct_core.config.validation import validate_create_body
from ct_core.errors import ValidationError

MODEL = "Qwen/Qwen3-1.7B"


def _training(**config: Any) -> dict[str, Any]:
    return {"job_type": "training", "model_name": MODEL, "training_config": {"n_gpus": 1, **config}}


def _sampling(**config: Any) -> dict[str, Any]:
    return {"job_type": "sampling", "model_name": MODEL, "inference_config": {"n_gpus": 1, **config}}


BODIES: dict[str, dict[str, Any]] = {
    "accepted": {"sub_job_configs": [_training(max_seq_len=2048), _sampling(max_seq_len=2048)]},
    "max_seq_len zero": {"sub_job_configs": [_training(max_seq_len=0)]},
    "max_seq_len too long": {"sub_job_configs": [_sampling(max_seq_len=(1 << 20) + 1)]},
    "max_seq_len text": {"sub_job_configs": [_sampling(max_seq_len="2048")]},
    "n_gpus zero": {"sub_job_configs": [_sampling(n_gpus=0)]},
    "train_batch_size negative": {"sub_job_configs": [_training(train_batch_size=-1)]},
    "unknown dtype": {"sub_job_configs": [{**_sampling(), "dtype": "float7"}]},
    "negative seed": {"sub_job_configs": [{**_sampling(), "seed": -1}]},
    "lora rank zero": {
        "sub_job_configs": [
            _training(peft_config={"peft_type": "Lora", "r": 0, "target_modules": ["q_proj"]})
        ]
    },
    "job_id": {"sub_job_configs": [_sampling()], "job_id": "mine"},
    "zero-3": {"sub_job_configs": [_training(ds_config={"zero_optimization": {"stage": 3}})]},
    "two trainings": {"sub_job_configs": [_training(), _training()]},
    "idle timeout": {"sub_job_configs": [_sampling()], "idle_timeout_seconds": 5},
    "pending timeout": {"sub_job_configs": [_sampling()], "pending_timeout_seconds": 0},
    "unknown hardware": {"sub_job_configs": [_sampling()], "hardware": "A100"},
    "bad multiplex id": {"sub_job_configs": [_sampling(multiplex_job_id="nope")]},
}


def _client_problems(body: dict[str, Any]) -> str:
    try:
        validate_create_body(body)
    except ValidationError as error:
        return str(error)
    return ""


def _server_problems(client: Any, prefix: str, body: dict[str, Any]) -> str:
    response = client.post(prefix, json=body)
    if response.status_code == 200:
        return ""
    answer = response.json()
    if response.status_code == 422:
        return "; ".join(detail["msg"] for detail in answer["detail"])
    assert response.status_code == 400, response.text
    return str(answer["message"])


@pytest.mark.parametrize("name", sorted(BODIES))
def test_client_and_server_agree(local_server, name: str) -> None:
    body = BODIES[name]
    with local_server.http() as client:
        server = _server_problems(client, local_server.prefix(), body)
    client_side = _client_problems(body)
    assert client_side == server, f"{name}: client says {client_side}, server says {server}"
    assert bool(client_side) == (name != "accepted")

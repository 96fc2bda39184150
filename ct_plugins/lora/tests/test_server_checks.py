"""The local server judges a peft_config by the plugin's own rules, in the plugin's own words.

The body is posted as raw HTTP, so no client-side check runs: the 400 comes from the server, which
asks every plugin's validators through ct_core's hooks (ct_local never imports a plugin).
"""

from __future__ import annotations

from typing import Any

import pytest
from ct_testing.plugin import LocalServer, create_job

from ct_core.config.validation import validate_create_body
from ct_core.errors import ValidationError

MODEL = "Qwen/Qwen3-0.6B"
WHERE = "sub_job_configs[0].training_config.peft_config"


def training(peft_config: Any) -> dict[str, Any]:
    return {
        "job_type": "training",
        "model_name": MODEL,
        "training_config": {
            "optimizer": {"name": "AdamW", "lr": 1e-4},
            "max_seq_len": 64,
            "train_batch_size": 1,
            "n_gpus": 1,
            "peft_config": peft_config,
        },
    }


def client_problems(body: dict[str, Any]) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        validate_create_body(body)
    return list(caught.value.problems)


def test_a_bad_peft_config_posted_raw_is_refused_with_the_plugins_message(local_server: LocalServer) -> None:
    body = {"sub_job_configs": [training({"peft_type": "LORA", "r": 0, "target_modules": ["q_proj"]})]}
    with local_server.http() as http:
        answer = http.post(local_server.prefix(), json=body)
    assert answer.status_code == 400, answer.text
    message = answer.json()["message"]
    expected = client_problems(body)
    assert f"{WHERE}.r must be a positive integer, got 0" in expected
    for problem in expected:
        assert problem in message


def test_a_peft_config_with_unknown_keys_is_refused_by_the_server(local_server: LocalServer) -> None:
    body = {"sub_job_configs": [training({"peft_type": "Lora", "rank": 4, "target_modules": ["q_proj"]})]}
    with local_server.http() as http:
        answer = http.post(local_server.prefix(), json=body)
    assert answer.status_code == 400, answer.text
    assert f"{WHERE} contains unsupported field(s): ['rank']" in answer.json()["message"]


def test_a_good_peft_config_posted_raw_is_accepted(local_server: LocalServer) -> None:
    with local_server.http() as http:
        adapter = {"peft_type": "Lora", "r": 4, "target_modules": ["q_proj"]}
        job_id = create_job(http, local_server.prefix(), [training(adapter)])
        http.delete(f"{local_server.prefix()}/{job_id}")

"""The local server applies the DFlash2 rules to a raw create body, in the plugin's own words.

No client runs here: the body goes out as plain HTTP and the 400 is the server's, which asks the
installed plugins' validators through ct_core's hooks (ct_local never imports a plugin).
"""

from __future__ import annotations

from typing import Any

import pytest
from ct_testing.plugin import LocalServer

from ct_core.config.validation import validate_create_body
from ct_core.errors import ValidationError

W = "sub_job_configs[0].training_config"


def dflash2_training(**extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "optimizer": {"name": "AdamW", "lr": 1e-4},
        "max_seq_len": 64,
        "train_batch_size": 1,
        "n_gpus": 1,
        "model_provider": "dflash2",
        "activation_checkpointing": False,
        "dflash2": {"draft_config": {"architectures": ["DFlashDraftModel"]}},
    }
    config.update(extra)
    return {"job_type": "training", "model_name": "Qwen/Qwen3-0.6B", "training_config": config}


def test_a_raw_body_breaking_the_dflash2_rules_gets_the_plugins_messages(local_server: LocalServer) -> None:
    body = {"sub_job_configs": [dflash2_training(activation_checkpointing=True, fp32_parity=True)]}
    with pytest.raises(ValidationError) as caught:
        validate_create_body(body)
    expected = list(caught.value.problems)
    assert any(problem.startswith(f"{W}.activation_checkpointing") for problem in expected)
    assert any(problem.startswith(f"{W}.fp32_parity") for problem in expected)

    with local_server.http() as http:
        answer = http.post(local_server.prefix(), json=body)
    assert answer.status_code == 400, answer.text
    message = answer.json()["message"]
    for problem in expected:
        assert problem in message

"""peft_config is normalized on every create path: raw body, typed configs, the client, `ct submit`."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest

from ct_core.config.typed import SubJobConfig
from ct_core.config.validation import build_create_body, validate_create_body
from ct_core.errors import ValidationError
from ct_core.plugins import get_plugin_manager, plugin_info

MODEL = "Qwen/Qwen3-0.6B"
#: Where the cross-check of the training and sampling adapters logs what differs.
LORA_LOGGER = "ct_core.plugins.lora"
ADAPTER = {"peft_type": "Lora", "r": 16, "lora_alpha": 32, "target_modules": ["q_proj", "v_proj"]}
NORMALIZED = {
    "peft_type": "Lora",
    "task_type": "CAUSAL_LM",
    "r": 16,
    "lora_alpha": 32,
    "lora_dropout": 0.0,
    "bias": "none",
    "target_modules": ["q_proj", "v_proj"],
    "target_parameters": [],
}


def body(training_peft: Any = None, sampling_peft: Any = None) -> dict[str, Any]:
    training: dict[str, Any] = {
        "optimizer": {"name": "AdamW", "lr": 1e-4},
        "max_seq_len": 256,
        "train_batch_size": 2,
        "n_gpus": 1,
    }
    inference: dict[str, Any] = {"max_seq_len": 256, "n_gpus": 1}
    if training_peft is not None:
        training["peft_config"] = copy.deepcopy(training_peft)
    if sampling_peft is not None:
        inference["peft_config"] = copy.deepcopy(sampling_peft)
    return {
        "sub_job_configs": [
            {"job_type": "training", "model_name": MODEL, "training_config": training},
            {"job_type": "sampling", "model_name": MODEL, "inference_config": inference},
        ]
    }


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        validate_create_body(raw)
    return list(caught.value.problems)


def test_the_plugin_is_loaded_from_its_entry_point() -> None:
    pm = get_plugin_manager()
    assert pm.has_plugin("lora")
    (info,) = [entry for entry in plugin_info(pm) if entry["name"] == "lora"]
    assert info["distribution"] == "ct-lora"
    assert "ct_validate_sub_job" in info["hooks"]


def test_raw_body_training_and_sampling_are_normalized_and_the_input_is_untouched() -> None:
    raw = body(ADAPTER, ADAPTER)
    before = copy.deepcopy(raw)
    sent = validate_create_body(raw)
    assert sent["sub_job_configs"][0]["training_config"]["peft_config"] == NORMALIZED
    assert sent["sub_job_configs"][1]["inference_config"]["peft_config"] == NORMALIZED
    assert raw == before


def test_a_body_without_peft_config_is_unchanged() -> None:
    raw = body()
    assert validate_create_body(raw) == raw


def test_errors_name_the_sub_job_and_field() -> None:
    found = problems(
        body({"peft_type": "LORA", "target_modules": ["q"]}, {"peft_type": "Lora", "dora": True})
    )
    assert found[0].startswith(
        "sub_job_configs[0].training_config.peft_config.peft_type must be exactly 'Lora'"
    )
    assert found[1].startswith(
        "sub_job_configs[1].inference_config.peft_config contains unsupported field(s)"
    )


def mismatch_warnings(raw: dict[str, Any], caplog: pytest.LogCaptureFixture) -> list[str]:
    """The warnings the cross-check logs for `raw`, which must validate (the service accepts it)."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=LORA_LOGGER):
        validate_create_body(raw)
    return [record.getMessage() for record in caplog.records if record.name == LORA_LOGGER]


def test_adapters_that_differ_are_a_warning_not_a_problem(caplog: pytest.LogCaptureFixture) -> None:
    raw = body(ADAPTER, {**ADAPTER, "r": 8, "target_modules": ["q_proj"]})
    sent = validate_create_body(raw)
    assert sent["sub_job_configs"][1]["inference_config"]["peft_config"]["r"] == 8
    found = mismatch_warnings(raw, caplog)
    assert found == [
        "sub_job_configs[1].inference_config.peft_config.r is 8 but "
        "sub_job_configs[0].training_config.peft_config.r is 16: a LoRA weight sync needs the sampling "
        "adapter to match the training adapter",
        "sub_job_configs[1].inference_config.peft_config.target_modules is ['q_proj'] but "
        "sub_job_configs[0].training_config.peft_config.target_modules is ['q_proj', 'v_proj']: a LoRA "
        "weight sync needs the sampling adapter to match the training adapter",
    ]


def test_defaults_count_when_matching(caplog: pytest.LogCaptureFixture) -> None:
    # lora_alpha omitted on one side is 8 after normalization; 8 on the other side matches.
    # Order of target_modules does not matter to PEFT, so it does not count as a mismatch either.
    sampling = {"peft_type": "Lora", "r": 16, "target_modules": ["v_proj", "q_proj"]}
    sent = validate_create_body(body({**ADAPTER, "lora_alpha": 8}, sampling))
    assert sent["sub_job_configs"][1]["inference_config"]["peft_config"]["lora_alpha"] == 8
    assert mismatch_warnings(body({**ADAPTER, "lora_alpha": 8}, sampling), caplog) == []
    found = mismatch_warnings(body(ADAPTER, sampling), caplog)
    assert len(found) == 1 and found[0].startswith(
        "sub_job_configs[1].inference_config.peft_config.lora_alpha is 8"
    )


@pytest.mark.parametrize(
    ("training_type", "sampling_type"),
    [("TRAINING", " Sampling "), ("job_type_training", "JOB_TYPE_SAMPLING")],
)
def test_the_cross_check_knows_every_job_type_spelling(
    training_type: str, sampling_type: str, caplog: pytest.LogCaptureFixture
) -> None:
    # The core accepts these spellings, so the cross-check must not let them slip past it.
    raw = body(ADAPTER, {**ADAPTER, "r": 8})
    raw["sub_job_configs"][0]["job_type"] = training_type
    raw["sub_job_configs"][1]["job_type"] = sampling_type
    (found,) = mismatch_warnings(raw, caplog)
    assert found.startswith("sub_job_configs[1].inference_config.peft_config.r is 8 but")


def test_only_one_side_with_an_adapter_is_accepted() -> None:
    # Training LoRA while sampling the base model is a valid job; only a lora sync would need both.
    assert validate_create_body(body(ADAPTER, None))["sub_job_configs"][0]["training_config"]["peft_config"]


def test_typed_path_normalizes_extra_training_and_extra_sampling() -> None:
    training = SubJobConfig.training_job(
        MODEL,
        optimizer={"name": "AdamW", "lr": 1e-4},
        max_seq_len=256,
        train_batch_size=2,
        n_gpus=1,
        extra_training={"peft_config": dict(ADAPTER)},
    )
    sampling = SubJobConfig.sampling_job(
        MODEL, max_seq_len=256, n_gpus=1, extra_sampling={"peft_config": dict(ADAPTER)}
    )
    sent = validate_create_body(build_create_body([training, sampling]))
    assert sent["sub_job_configs"][0]["training_config"]["peft_config"] == NORMALIZED
    assert sent["sub_job_configs"][1]["inference_config"]["peft_config"] == NORMALIZED


def test_typed_path_rejects_a_bad_adapter() -> None:
    sampling = SubJobConfig.sampling_job(
        MODEL, max_seq_len=256, n_gpus=1, extra_sampling={"peft_config": {"peft_type": "Lora"}}
    )
    with pytest.raises(ValidationError, match=r"inference_config.peft_config must specify target_modules"):
        validate_create_body(build_create_body([sampling]))


def test_client_create_job_sends_the_normalized_adapter(local_server: Any) -> None:
    from ct_core.client import CortexTrainingClient

    with CortexTrainingClient(base_url=local_server.base_url, database="LORA_DB", schema="PUBLIC") as client:
        training = SubJobConfig.training_job(
            MODEL,
            optimizer={"name": "AdamW", "lr": 1e-4},
            max_seq_len=256,
            train_batch_size=2,
            n_gpus=1,
            extra_training={"peft_config": dict(ADAPTER)},
        )
        job_id = client.create_job([training])
        record = client.get_job(job_id)
        client.cancel_job(job_id)
        with pytest.raises(ValidationError, match="peft_type must be exactly 'Lora'"):
            client.create_job_from_body(body({"peft_type": "LORA", "target_modules": ["q"]}))
    assert record["sub_jobs"][0]["training_config"]["peft_config"] == NORMALIZED


def test_submit_dry_run_prints_the_normalized_body(run_ct: Any) -> None:
    result = run_ct("submit", "--dry-run", "-", input=json.dumps(body(ADAPTER, ADAPTER)))
    assert result.returncode == 0, result
    printed = result.json
    assert printed["sub_job_configs"][0]["training_config"]["peft_config"] == NORMALIZED
    assert printed["sub_job_configs"][1]["inference_config"]["peft_config"] == NORMALIZED


def test_submit_dry_run_fails_with_every_problem(run_ct: Any) -> None:
    bad = body({**ADAPTER, "bias": "all"}, {**ADAPTER, "r": 4})
    result = run_ct("submit", "--dry-run", "-", input=json.dumps(bad))
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert "sub_job_configs[0].training_config.peft_config.bias='all' is not supported" in result.stderr


def test_submit_dry_run_accepts_differing_adapters_with_a_warning(run_ct: Any) -> None:
    # The service accepts such a job (only a later LoRA sync would fail), so the dry run does too.
    result = run_ct("submit", "--dry-run", "-", input=json.dumps(body(ADAPTER, {**ADAPTER, "r": 4})))
    assert result.returncode == 0, result
    assert result.json["sub_job_configs"][1]["inference_config"]["peft_config"]["r"] == 4
    assert (
        "warning: sub_job_configs[1].inference_config.peft_config.r is 4 but "
        "sub_job_configs[0].training_config.peft_config.r is 16"
    ) in result.stderr


def test_client_creates_a_job_whose_adapters_differ(
    local_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from ct_core.client import CortexTrainingClient

    with (
        CortexTrainingClient(base_url=local_server.base_url, database="LORA_DB", schema="PUBLIC") as client,
        caplog.at_level(logging.WARNING, logger=LORA_LOGGER),
    ):
        job_id = client.create_job_from_body(body(ADAPTER, {**ADAPTER, "r": 4}))["job_id"]
        record = client.get_job(job_id)
        client.cancel_job(job_id)
    assert record["sub_jobs"][1]["inference_config"]["peft_config"]["r"] == 4
    assert any("peft_config.r is 4 but" in r.getMessage() for r in caplog.records if r.name == LORA_LOGGER)


def test_submit_dry_run_without_the_plugin_does_not_rewrite(run_ct: Any) -> None:
    result = run_ct("submit", "--dry-run", "-", input=json.dumps(body(ADAPTER)), plugins="")
    assert result.returncode == 0, result
    assert result.json["sub_job_configs"][0]["training_config"]["peft_config"] == ADAPTER

"""Every DFlash2 rule: each accepted shape, each refusal naming its field, on every create path."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from ct_dflash2.rules import check_sub_job

from ct_core.config.validation import validate_create_body
from ct_core.errors import ValidationError

TARGET = "Qwen/Qwen3-8B"
DRAFT_CONFIG = {"architectures": ["DFlashDraftModel"], "dflash_config": {"block_size": 8}}
W = "sub_job_configs[0].training_config"
SPEC = "sub_job_configs[0].inference_config.vllm_config.speculative_config"


def training(**extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "optimizer": {"name": "AdamW", "lr": 1e-4},
        "max_seq_len": 2048,
        "train_batch_size": 8,
        "n_gpus": 8,
        "model_provider": "dflash2",
        "activation_checkpointing": False,
        "dflash2": {"draft_config": copy.deepcopy(DRAFT_CONFIG)},
    }
    config.update(extra)
    return {"job_type": "training", "model_name": TARGET, "training_config": config}


def sampling(speculative: dict[str, Any], source: Any = None) -> dict[str, Any]:
    sub_job: dict[str, Any] = {
        "job_type": "sampling",
        "model_name": TARGET,
        "inference_config": {
            "max_seq_len": 2048,
            "n_gpus": 1,
            "vllm_config": {"speculative_config": speculative},
        },
    }
    if source is not None:
        sub_job["source_checkpoint_info"] = source
    return sub_job


def check(sub_job: dict[str, Any]) -> list[str]:
    return check_sub_job(sub_job, "sub_job_configs[0]")


def test_the_documented_example_passes() -> None:
    assert check(training()) == []


def test_every_block_key_with_valid_values_passes() -> None:
    block = {
        "draft_config": DRAFT_CONFIG,
        "init_from": "@DB.SCHEMA.STAGE/draft",
        "attention_backend": "flex_attention",
        "num_anchors": 256,
        "loss_decay_gamma": None,
        "selector_loss_alpha": 0,
        "selector_stop_gradient": True,
        "objective_chunk_blocks": 64,
        "seed": 7,
    }
    assert check(training(dflash2=block, sp_size=1, ep_size=1, ds_config={"bf16": {"enabled": True}})) == []


@pytest.mark.parametrize("provider", ["huggingface", "arctic", "prime_rl"])
def test_other_providers_without_a_block_pass(provider: str) -> None:
    sub_job = training(model_provider=provider, activation_checkpointing=True)
    del sub_job["training_config"]["dflash2"]
    assert check(sub_job) == []


def test_no_provider_and_no_block_passes() -> None:
    sub_job = training()
    for key in ("model_provider", "dflash2", "activation_checkpointing"):
        del sub_job["training_config"][key]
    assert check(sub_job) == []


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("DFlash2", f"{W}.model_provider must be spelled 'dflash2', got 'DFlash2'"),
        ("dflash-2", f"{W}.model_provider must be spelled 'dflash2', got 'dflash-2'"),
        ("HuggingFace", f"{W}.model_provider must be spelled 'huggingface', got 'HuggingFace'"),
        ("prime-rl", f"{W}.model_provider must be spelled 'prime_rl', got 'prime-rl'"),
        (
            "megatron",
            f"{W}.model_provider must be one of ['huggingface', 'arctic', 'prime_rl', 'dflash2'], "
            "got 'megatron'",
        ),
    ],
)
def test_provider_spellings(provider: str, expected: str) -> None:
    sub_job = training(model_provider=provider)
    del sub_job["training_config"]["dflash2"]
    assert check(sub_job) == [expected]


def test_block_is_required_for_dflash2() -> None:
    sub_job = training()
    del sub_job["training_config"]["dflash2"]
    assert check(sub_job) == [f"{W}.dflash2 is required when model_provider is 'dflash2'"]


@pytest.mark.parametrize(("provider", "shown"), [("huggingface", "'huggingface'"), (None, "'unset'")])
def test_block_is_refused_for_other_providers(provider: str | None, shown: str) -> None:
    sub_job = training(model_provider=provider)
    if provider is None:
        del sub_job["training_config"]["model_provider"]
    assert check(sub_job) == [
        f"{W}.dflash2 is only accepted with model_provider 'dflash2', got model_provider {shown}"
    ]


def test_unknown_block_keys() -> None:
    found = check(training(dflash2={"draft_config": DRAFT_CONFIG, "num_anchor": 3, "lr": 1}))
    assert found == [
        f"{W}.dflash2 has unknown key(s) ['lr', 'num_anchor']; known keys: ['draft_config', 'init_from', "
        "'attention_backend', 'num_anchors', 'loss_decay_gamma', 'selector_loss_alpha', "
        "'selector_stop_gradient', 'objective_chunk_blocks', 'seed']"
    ]


def test_draft_config_is_always_required_even_with_init_from() -> None:
    assert check(training(dflash2={"init_from": "/models/draft"})) == [
        f"{W}.dflash2.draft_config is required (the draft's config.json contents), even with init_from"
    ]
    assert check(training(dflash2={"draft_config": {}})) == [
        f"{W}.dflash2.draft_config must be a non-empty object (the draft's config.json contents)"
    ]
    assert check(training(dflash2="on")) == [
        f"{W}.dflash2 must be an object with at least draft_config, got 'on'"
    ]


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "attention_backend",
            "flash_attention_2",
            "attention_backend must be one of ['sdpa', 'flex_attention', 'eager']",
        ),
        ("num_anchors", 0, "num_anchors must be an integer greater than zero, got 0"),
        ("num_anchors", 1.5, "num_anchors must be an integer greater than zero, got 1.5"),
        ("objective_chunk_blocks", -2, "objective_chunk_blocks must be an integer greater than zero, got -2"),
        ("loss_decay_gamma", 0, "loss_decay_gamma must be greater than zero, or null to disable, got 0"),
        ("loss_decay_gamma", "7", "loss_decay_gamma must be greater than zero, or null to disable, got '7'"),
        ("selector_loss_alpha", -0.5, "selector_loss_alpha must be a number of 0 or more, got -0.5"),
        ("selector_stop_gradient", "yes", "selector_stop_gradient must be true or false, got 'yes'"),
        ("seed", -1, "seed must be an integer of 0 or more, got -1"),
        ("init_from", "", "init_from must be a non-empty directory path, got ''"),
    ],
)
def test_block_values(key: str, value: Any, expected: str) -> None:
    (found,) = check(training(dflash2={"draft_config": DRAFT_CONFIG, key: value}))
    assert found.startswith(f"{W}.dflash2.{expected}")


@pytest.mark.parametrize(("value", "shown"), [(True, "True"), ("false", "'false'"), (0, "0")])
def test_activation_checkpointing_must_be_false(value: Any, shown: str) -> None:
    assert check(training(activation_checkpointing=value)) == [
        f"{W}.activation_checkpointing must be false for model_provider 'dflash2' "
        f"(the draft recomputes its own forward), got {shown}"
    ]


def test_activation_checkpointing_defaults_to_true_so_it_must_be_given() -> None:
    sub_job = training()
    del sub_job["training_config"]["activation_checkpointing"]
    (found,) = check(sub_job)
    assert found.endswith("got unset (it defaults to true)")


@pytest.mark.parametrize("key", ["fp32_parity", "fp32_residual", "text_config_overrides"])
@pytest.mark.parametrize("value", [True, False, {"num_hidden_layers": 2}])
def test_forbidden_keys(key: str, value: Any) -> None:
    assert check(training(**{key: value})) == [f"{W}.{key} cannot be set for model_provider 'dflash2'"]


@pytest.mark.parametrize("flag", ["bf16_master_weights_and_grads", "bf16_optimizer_states"])
def test_bf16_flags(flag: str) -> None:
    assert check(training(ds_config={"bf16": {"enabled": True, flag: True}})) == [
        f"{W}.ds_config.bf16.{flag} cannot be enabled for model_provider 'dflash2' "
        "(master weights and optimizer states stay fp32)"
    ]
    assert check(training(ds_config={"bf16": {flag: False}})) == []


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"use_liger_kernel": True}, "use_liger_kernel"),
        ({"liger": True}, "liger"),
        ({"model_options": {"liger": True}}, "model_options.liger"),
    ],
)
def test_model_patches_are_refused(extra: dict[str, Any], field: str) -> None:
    assert check(training(**extra)) == [
        f"{W}.{field} requests a model patch (Liger kernels), which model_provider 'dflash2' refuses"
    ]


def test_liger_false_asks_for_nothing() -> None:
    assert check(training(model_options={"liger": False}, use_liger_kernel=False)) == []


@pytest.mark.parametrize("key", ["sp_size", "ep_size"])
def test_data_parallel_only(key: str) -> None:
    assert check(training(**{key: 2})) == [
        f"{W}.{key} must be 1 or omitted for model_provider 'dflash2' (data parallelism only), got 2"
    ]


def test_the_same_knobs_are_fine_for_other_providers() -> None:
    sub_job = training(
        model_provider="huggingface",
        activation_checkpointing=True,
        fp32_parity=True,
        sp_size=4,
        use_liger_kernel=True,
        ds_config={"bf16": {"bf16_optimizer_states": True}},
    )
    del sub_job["training_config"]["dflash2"]
    assert check(sub_job) == []


def test_all_problems_are_reported_together() -> None:
    found = check(
        training(activation_checkpointing=True, fp32_residual=True, ep_size=8, dflash2={"seed": "x"})
    )
    assert len(found) == 5


# --- serving a trained draft -----------------------------------------------------------------

CHECKPOINT = {"checkpoint_id": "ckpt-1", "source_job_id": "job-1"}


def test_from_source_checkpoint_with_a_checkpoint_passes() -> None:
    assert (
        check(
            sampling(
                {"method": "dflash", "from_source_checkpoint": True, "num_speculative_tokens": 7}, CHECKPOINT
            )
        )
        == []
    )
    assert check(sampling({"model": "z-lab/draft", "from_source_checkpoint": False})) == []


def test_from_source_checkpoint_refusals() -> None:
    assert check(sampling({"from_source_checkpoint": True, "model": "z-lab/draft"}, CHECKPOINT)) == [
        f"{SPEC}: set either model or from_source_checkpoint to name the draft, not both"
    ]
    assert check(sampling({"from_source_checkpoint": True})) == [
        f"{SPEC}.from_source_checkpoint needs sub_job_configs[0].source_checkpoint_info naming the draft's "
        "checkpoint (checkpoint_id and source_job_id)"
    ]
    assert check(sampling({"from_source_checkpoint": True}, {"external_stage_path": "@DB.S.STAGE/d"})) == [
        f"{SPEC}.from_source_checkpoint needs a checkpoint saved by Cortex Training; "
        "sub_job_configs[0].source_checkpoint_info.external_stage_path cannot be the draft"
    ]
    assert check(sampling({"from_source_checkpoint": True}, {"source_job_id": "job-1"})) == [
        f"{SPEC}.from_source_checkpoint needs sub_job_configs[0].source_checkpoint_info.checkpoint_id"
    ]
    # The draft's checkpoint is another job's, so both ids are needed.
    assert check(sampling({"from_source_checkpoint": True}, {"checkpoint_id": "ckpt-1"})) == [
        f"{SPEC}.from_source_checkpoint needs sub_job_configs[0].source_checkpoint_info.source_job_id"
    ]
    assert check(sampling({"from_source_checkpoint": True}, {"checkpoint_id": "", "source_job_id": ""})) == [
        f"{SPEC}.from_source_checkpoint needs sub_job_configs[0].source_checkpoint_info.checkpoint_id",
        f"{SPEC}.from_source_checkpoint needs sub_job_configs[0].source_checkpoint_info.source_job_id",
    ]
    assert check(sampling({"from_source_checkpoint": "yes"}, CHECKPOINT)) == [
        f"{SPEC}.from_source_checkpoint must be true or false, got 'yes'"
    ]


def test_from_source_checkpoint_on_a_training_sub_job() -> None:
    sub_job = training(
        model_provider="huggingface", vllm_config={"speculative_config": {"from_source_checkpoint": True}}
    )
    del sub_job["training_config"]["dflash2"]
    sub_job["source_checkpoint_info"] = CHECKPOINT
    assert check(sub_job) == [
        "sub_job_configs[0].training_config.vllm_config.speculative_config.from_source_checkpoint is only "
        "accepted on a sampling sub-job, not 'training'"
    ]


@pytest.mark.parametrize("spelling", ["TRAINING", "job_type_training", " Training "])
def test_every_training_spelling_is_checked(spelling: str) -> None:
    # The core accepts these spellings, so the rules must not let them slip past.
    sub_job = training(activation_checkpointing=True)
    sub_job["job_type"] = spelling
    assert check(sub_job) == [
        f"{W}.activation_checkpointing must be false for model_provider 'dflash2' "
        "(the draft recomputes its own forward), got True"
    ]


@pytest.mark.parametrize("spelling", ["SAMPLING", "JOB_TYPE_SAMPLING"])
def test_every_sampling_spelling_may_serve_a_draft(spelling: str) -> None:
    sub_job = sampling({"from_source_checkpoint": True}, CHECKPOINT)
    sub_job["job_type"] = spelling
    assert check(sub_job) == []


# --- through the create paths -----------------------------------------------------------------


def test_validate_create_body_reports_every_sub_job() -> None:
    body = {
        "sub_job_configs": [
            training(activation_checkpointing=True),
            sampling({"from_source_checkpoint": True, "model": "m"}, CHECKPOINT),
        ]
    }
    with pytest.raises(ValidationError) as caught:
        validate_create_body(body)
    assert [problem.split(" ")[0] for problem in caught.value.problems] == [
        f"{W}.activation_checkpointing",
        "sub_job_configs[1].inference_config.vllm_config.speculative_config:",
    ]


def test_validate_create_body_passes_a_valid_draft_job_unchanged() -> None:
    body = {"sub_job_configs": [training()]}
    assert validate_create_body(body) == body


def test_typed_path() -> None:
    from ct_core.config.typed import SubJobConfig
    from ct_core.config.validation import build_create_body

    sub_job = SubJobConfig.training_job(
        TARGET,
        optimizer={"name": "AdamW", "lr": 1e-4},
        max_seq_len=2048,
        train_batch_size=8,
        n_gpus=8,
        extra_training={"model_provider": "dflash2", "dflash2": {"draft_config": DRAFT_CONFIG}},
    )
    with pytest.raises(ValidationError, match=r"activation_checkpointing must be false"):
        validate_create_body(build_create_body([sub_job]))


def test_submit_dry_run(run_ct: Any) -> None:
    good = run_ct("submit", "--dry-run", "-", input=json.dumps({"sub_job_configs": [training()]}))
    assert good.returncode == 0, good
    assert good.json["sub_job_configs"][0]["training_config"]["dflash2"]["draft_config"] == DRAFT_CONFIG
    bad = run_ct("submit", "--dry-run", "-", input=json.dumps({"sub_job_configs": [training(sp_size=2)]}))
    assert bad.returncode == 1
    assert f"error: {W}.sp_size must be 1 or omitted for model_provider 'dflash2'" in bad.stderr


def test_client_refuses_before_sending(local_server: Any) -> None:
    from ct_core.client import CortexTrainingClient

    with CortexTrainingClient(base_url=local_server.base_url, database="DF_DB", schema="PUBLIC") as client:
        with pytest.raises(ValidationError, match="fp32_parity cannot be set"):
            client.create_job_from_body({"sub_job_configs": [training(fp32_parity=True)]})
        assert client.list_jobs() == []


def test_the_local_server_refuses_a_raw_body_with_the_plugins_messages(local_server: Any) -> None:
    """Posted as plain HTTP (no client check), the body gets the server's 400 in the same words."""
    body = {"sub_job_configs": [training(activation_checkpointing=True, fp32_parity=True)]}
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

"""Typed training configs: passthrough, provider rename, LM-head check, checkpoint sources."""

from __future__ import annotations

from typing import Any

import pytest

from ct_core import SubJobConfig
from ct_core.config.typed import source_checkpoint_problems
from ct_core.config.validation import build_create_body
from ct_core.errors import ValidationError


def _training(**extra_training: Any) -> SubJobConfig:
    return SubJobConfig.training_job(
        "Qwen/Qwen3-1.7B",
        optimizer={"type": "AdamW", "lr": 1e-4, "params": {"beta1": 0.8}, "gradient_clipping": 1.0},
        max_seq_len=2048,
        train_batch_size=8,
        n_gpus=8,
        extra_training=extra_training or None,
    )


def test_extra_never_overrides_typed_keys() -> None:
    sub = _training(max_seq_len=1, n_gpus=99, optimizer={"name": "SGD"}, step_peak_memory_log=True)
    wire = sub.to_wire()["training_config"]
    assert wire["max_seq_len"] == 2048 and wire["n_gpus"] == 8
    assert wire["optimizer"] == {"name": "AdamW", "lr": 1e-4, "betas": [0.8, 0.999]}
    assert wire["gradient_clipping"] == 1.0
    assert wire["step_peak_memory_log"] is True


def test_arctic_is_sent_as_prime_rl() -> None:
    assert _training(model_provider="arctic").to_wire()["training_config"]["model_provider"] == "prime_rl"
    assert (
        _training(model_provider="huggingface").to_wire()["training_config"]["model_provider"]
        == "huggingface"
    )
    body = build_create_body([_training(model_provider="arctic")])
    assert body["sub_job_configs"][0]["training_config"]["model_provider"] == "prime_rl"


@pytest.mark.parametrize(
    "extra",
    [
        {"fp32_lm_head": True},
        {"fused_lm_head_token_chunk_size": 8192},
        {"fused_cross_entropy": True, "fp32_lm_head": True},
        {"prime_rl": {"fp32_lm_head": True}},
        {"prime_rl": {"fused_lm_head_token_chunk_size": 4096, "fused_cross_entropy": "liger"}},
    ],
)
def test_fused_cross_entropy_conflicts(extra: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="cannot combine fused_cross_entropy with fp32_lm_head"):
        _training(**extra).validate()


@pytest.mark.parametrize(
    "extra",
    [
        {"fused_cross_entropy": False, "fp32_lm_head": True},
        {"prime_rl": {"fused_cross_entropy": False, "fused_lm_head_token_chunk_size": 8192}},
        {"fused_lm_head_token_chunk_size": True},  # a bool is not a chunk size
        {"model_options": {"lm_head": {"fp32": True}}},  # never read by the check
    ],
)
def test_fused_cross_entropy_accepted(extra: dict[str, Any]) -> None:
    _training(**extra).validate()


def test_source_checkpoint_info_rules() -> None:
    assert source_checkpoint_problems(None) == []
    assert source_checkpoint_problems({"checkpoint_id": "cp_1", "source_job_id": "job"}) == []
    assert source_checkpoint_problems({"checkpoint_id": "cp_1"}) == []
    assert source_checkpoint_problems({"external_stage_path": "@DB.S.STAGE/run7"}) == []
    mixed = source_checkpoint_problems({"external_stage_path": "@DB.S.STAGE/x", "source_job_id": "job"})
    assert mixed and "cannot be combined with source_job_id" in mixed[0]
    assert "needs checkpoint_id" in source_checkpoint_problems({"source_job_id": "job"})[0]
    assert (
        "stage_info must not be sent"
        in source_checkpoint_problems({"checkpoint_id": "cp_1", "stage_info": {"token": "x"}})[0]
    )
    assert source_checkpoint_problems("cp_1") == ["sub_job.source_checkpoint_info must be an object"]


def test_source_checkpoint_info_on_sub_jobs() -> None:
    ok = SubJobConfig.sampling_job(
        "Qwen/Qwen3-1.7B",
        max_seq_len=512,
        n_gpus=1,
        source_checkpoint_info={"checkpoint_id": "cp_1", "source_job_id": "j"},
    )
    ok.validate()
    assert ok.to_wire()["source_checkpoint_info"] == {"checkpoint_id": "cp_1", "source_job_id": "j"}
    bad = SubJobConfig.sampling_job(
        "Qwen/Qwen3-1.7B",
        max_seq_len=512,
        n_gpus=1,
        source_checkpoint_info={"external_stage_path": "@s", "checkpoint_id": "c"},
    )
    with pytest.raises(ValidationError, match="external_stage_path cannot be combined"):
        bad.validate()


def test_job_type_spellings_on_the_typed_path() -> None:
    """Case, whitespace and a job_type_ prefix do not matter; log_prob is log_probability."""
    base = _training()
    for spelling in ("Training ", "TRAINING", "job_type_training"):
        sub = SubJobConfig(spelling, "m", training=base.training)  # type: ignore[arg-type]
        assert sub.problems() == []
        assert sub.to_wire()["job_type"] == "training"
    for spelling in ("log_prob", " JOB_TYPE_LOG_PROBABILITY"):
        sub = SubJobConfig(spelling, "m", training=base.training)  # type: ignore[arg-type]
        with pytest.raises(ValidationError, match=r"sub_jobs\[0\].job_type: log_probability sub-jobs"):
            build_create_body([sub])
    bogus = SubJobConfig("rl", "m", training=base.training)  # type: ignore[arg-type]
    assert bogus.problems() == [
        "sub_job.job_type must be one of training, sampling, log_probability, got 'rl'"
    ]
    with pytest.raises(ValidationError, match=r"sub_job\.job_type must be one of"):
        build_create_body([bogus])

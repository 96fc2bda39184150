"""The shipped catalog: valid as a whole, and every job file accepted by the SDK and by the reference."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ct_core.catalog import load_catalog, validate_catalog
from ct_core.config.validation import validate_create_body

SHIPPED = Path(__file__).resolve().parents[2] / "model-catalog"
JOB_FILES = sorted(p for p in (SHIPPED / "models").glob("*/*.json") if p.name != "model.json")


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def test_shipped_catalog_has_no_problems() -> None:
    assert [str(p) for p in validate_catalog(SHIPPED)] == []


def test_validate_script_passes_on_the_shipped_catalog() -> None:
    done = subprocess.run(
        [sys.executable, str(SHIPPED / "validate_catalog.py")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("model catalog valid: 10 models, ")


def test_catalog_covers_the_published_models() -> None:
    catalog = load_catalog(SHIPPED)
    assert catalog.get("Qwen/Qwen3.6-35B-A3B").info["architecture"] == "moe"
    limits = {model.name: model.max_context for model in catalog}
    assert limits["Qwen/Qwen3-8B"] == 32768
    assert limits["Qwen/Qwen3.8-27B"] == 262144
    assert limits["openai/gpt-oss-120b"] == 131072
    assert limits["zai-org/GLM-5.2-FP8"] == 1048576
    inference_only = {m.name for m in catalog if m.workflows == ("inference",)}
    assert inference_only == {
        "deepseek-ai/DeepSeek-V4-Flash-0731",
        "openai/gpt-oss-120b",
        "zai-org/GLM-5.2",
        "zai-org/GLM-5.2-FP8",
    }


@pytest.mark.parametrize("path", JOB_FILES, ids=_id)
def test_job_file_passes_sdk_validation_unchanged(path: Path) -> None:
    body = json.loads(path.read_text())
    assert validate_create_body(body) == body


@pytest.mark.parametrize("path", JOB_FILES, ids=_id)
def test_job_file_builds_through_the_reference_typed_factories(path: Path) -> None:
    """The 0.0.3 typed factories rejected the published SFT recipes; ours must build."""
    from cortex_training.client import SubJobConfig

    for sub_job in json.loads(path.read_text())["sub_job_configs"]:
        top = {k: sub_job[k] for k in ("dtype", "seed") if k in sub_job}
        if sub_job["job_type"] == "training":
            cfg = dict(sub_job["training_config"])
            typed = {k: cfg.pop(k) for k in ("optimizer", "max_seq_len", "train_batch_size", "n_gpus")}
            typed["gradient_clipping"] = cfg.pop("gradient_clipping", None)
            built = SubJobConfig.training_job(sub_job["model_name"], **typed, extra_training=cfg, **top)
        else:
            cfg = dict(sub_job["inference_config"])
            typed = {k: cfg.pop(k) for k in ("max_seq_len", "n_gpus")}
            built = SubJobConfig.sampling_job(sub_job["model_name"], **typed, extra_sampling=cfg, **top)
        built.validate()
        assert built.to_wire() == sub_job


def test_dense_sft_recipe_without_explicit_fused_cross_entropy_is_rejected_by_the_reference() -> None:
    """The fix is the explicit fused_cross_entropy: false; without it the typed check refuses."""
    from cortex_training.client import SubJobConfig

    body = json.loads((SHIPPED / "models/Qwen--Qwen3-8B/32k-H200-training-lora.json").read_text())
    cfg = dict(body["sub_job_configs"][0]["training_config"])
    assert cfg.pop("fused_cross_entropy") is False
    typed = {k: cfg.pop(k) for k in ("optimizer", "max_seq_len", "train_batch_size", "n_gpus")}
    with pytest.raises(ValueError, match="cannot combine fused_cross_entropy"):
        SubJobConfig.training_job("Qwen/Qwen3-8B", **typed, extra_training=cfg).validate()

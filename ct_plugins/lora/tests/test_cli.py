"""`ct lora config` and `ct lora apply`, run through the installed `ct` console script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MODEL = "Qwen/Qwen3-0.6B"


def test_config_prints_one_normalized_adapter(run_ct: Any) -> None:
    result = run_ct("lora", "config", "--r", "16", "--alpha", "32", "--target", "q_proj,k_proj,v_proj,o_proj")
    assert result.returncode == 0, result
    assert result.json == {
        "peft_type": "Lora",
        "task_type": "CAUSAL_LM",
        "r": 16,
        "lora_alpha": 32,
        "lora_dropout": 0.0,
        "bias": "none",
        "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
        "target_parameters": [],
    }


def test_config_repeated_targets_and_parameters(run_ct: Any) -> None:
    result = run_ct(
        "--compact",
        "lora",
        "config",
        "--target",
        "q_proj",
        "--target",
        "v_proj,",
        "--target-parameters",
        "w1",
    )
    assert result.returncode == 0, result
    assert result.stdout.count("\n") == 1
    assert result.json["target_modules"] == ["q_proj", "v_proj"]
    assert result.json["target_parameters"] == ["w1"]
    assert (result.json["r"], result.json["lora_alpha"]) == (8, 8)


def test_config_needs_a_target(run_ct: Any) -> None:
    result = run_ct("lora", "config", "--r", "4")
    assert result.returncode == 1
    assert "error: peft_config must specify target_modules, target_parameters, or both" in result.stderr
    assert result.stdout == ""


def test_config_rejects_bad_numbers(run_ct: Any) -> None:
    result = run_ct("lora", "config", "--r", "0", "--dropout", "2", "--target", "q")
    assert result.returncode == 1
    assert "peft_config.r must be a positive integer, got 0" in result.stderr
    assert "peft_config.lora_dropout must be a number from 0 to 1, got 2.0" in result.stderr


def _job() -> dict[str, Any]:
    return {
        "sub_job_configs": [
            {
                "job_type": "training",
                "model_name": MODEL,
                "training_config": {
                    "optimizer": {"name": "AdamW", "lr": 1e-4},
                    "max_seq_len": 256,
                    "train_batch_size": 2,
                    "n_gpus": 1,
                    "peft_config": {"peft_type": "Lora", "r": 2, "target_modules": ["x"]},
                },
            },
            {
                "job_type": "sampling",
                "model_name": MODEL,
                "inference_config": {"max_seq_len": 256, "n_gpus": 1},
            },
        ]
    }


def test_apply_sets_the_same_adapter_on_both_sub_jobs_and_submit_accepts_it(
    run_ct: Any, tmp_path: Path
) -> None:
    job = tmp_path / "job.json"
    job.write_text(json.dumps(_job()))
    applied = run_ct("lora", "apply", str(job), "--r", "16", "--alpha", "32", "--target", "q_proj,v_proj")
    assert applied.returncode == 0, applied
    training = applied.json["sub_job_configs"][0]["training_config"]["peft_config"]
    sampling = applied.json["sub_job_configs"][1]["inference_config"]["peft_config"]
    assert training == sampling
    assert (training["r"], training["lora_alpha"], training["target_modules"]) == (
        16,
        32,
        ["q_proj", "v_proj"],
    )
    dry = run_ct("submit", "--dry-run", "-", input=applied.stdout)
    assert dry.returncode == 0, dry
    assert dry.json == applied.json


def test_apply_reads_stdin_and_refuses_a_body_without_sub_jobs(run_ct: Any) -> None:
    ok = run_ct("lora", "apply", "-", "--target", "q", input=json.dumps(_job()))
    assert ok.returncode == 0, ok
    bad = run_ct("lora", "apply", "-", "--target", "q", input=json.dumps({"hardware": "H200"}))
    assert bad.returncode == 1
    assert "sub_job_configs list" in bad.stderr


def test_lora_is_listed_in_help_and_plugins(run_ct: Any) -> None:
    help_text = run_ct("--help")
    assert help_text.returncode == 0
    assert "lora" in help_text.stdout + help_text.stderr
    plugins = run_ct("plugins")
    assert plugins.returncode == 0, plugins
    (entry,) = [p for p in plugins.json["plugins"] if p["name"] == "lora"]
    assert entry["distribution"] == "ct-lora"
    assert entry["hooks"] == ["ct_register_commands", "ct_validate_create_body", "ct_validate_sub_job"]

"""validate_catalog() and validate_catalog.py on broken copies: each problem names its file and field."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ct_core.catalog import Problem, validate_catalog

QWEN8 = "models/Qwen--Qwen3-8B"
MOE = "models/Qwen--Qwen3.6-35B-A3B"


def _problems(root: Path) -> list[Problem]:
    return validate_catalog(root)


def _find(problems: list[Problem], file_suffix: str, field: str) -> Problem:
    for problem in problems:
        if problem.file.endswith(file_suffix) and problem.field == field:
            return problem
    pytest.fail(f"no problem for {file_suffix} / {field}; got:\n" + "\n".join(map(str, problems)))


def _training(data: dict[str, Any]) -> dict[str, Any]:
    return data["sub_job_configs"][0]["training_config"]


def _sampling(data: dict[str, Any]) -> dict[str, Any]:
    return data["sub_job_configs"][1]["inference_config"]


# (name, file to edit relative to the catalog, edit, file named in the problem, field, message part)
BROKEN: list[tuple[str, str, Callable[[Any], Any], str, str, str]] = [
    (
        "bad schema value",
        f"{QWEN8}/model.json",
        lambda d: d.update(architecture="sparse"),
        f"{QWEN8}/model.json",
        "architecture",
        "schema: 'sparse' is not one of",
    ),
    (
        "job body schema value",
        f"{QWEN8}/8k-H200-sampling-full.json",
        lambda d: d["sub_job_configs"][0]["inference_config"].update(n_gpus=12),
        f"{QWEN8}/8k-H200-sampling-full.json",
        "sub_job_configs[0].inference_config.n_gpus",
        "multiple of 8",
    ),
    (
        "model name does not match the folder",
        f"{QWEN8}/model.json",
        lambda d: d.update(name="Qwen/Qwen3-9B"),
        f"{QWEN8}/model.json",
        "name",
        "belongs in folder 'Qwen--Qwen3-9B'",
    ),
    (
        "sub-job model_name mismatch",
        f"{QWEN8}/32k-H200-training-full.json",
        lambda d: d["sub_job_configs"][0].update(model_name="Qwen/Qwen3-1.7B"),
        f"{QWEN8}/32k-H200-training-full.json",
        "sub_job_configs[0].model_name",
        "is not this folder's model 'Qwen/Qwen3-8B'",
    ),
    (
        "context above the model's limit",
        f"{QWEN8}/model.json",
        lambda d: d.update(max_context=16384),
        f"{QWEN8}/32k-H200-training-lora.json",
        "sub_job_configs[0].training_config.max_seq_len",
        "exceeds the model's max_context 16384",
    ),
    (
        "LoRA without peft_config on the sampling sub-job",
        f"{QWEN8}/8k-H200-training+sampling-lora.json",
        lambda d: _sampling(d).pop("peft_config"),
        f"{QWEN8}/8k-H200-training+sampling-lora.json",
        "sub_job_configs[1].inference_config.peft_config",
        "LoRA job file carries a peft_config on every sub-job",
    ),
    (
        "full file with a peft_config",
        f"{QWEN8}/8k-H200-training-full.json",
        lambda d: _training(d).update(peft_config={"peft_type": "Lora", "target_modules": ["q_proj"]}),
        f"{QWEN8}/8k-H200-training-full.json",
        "sub_job_configs[0].training_config.peft_config",
        "name the file -lora",
    ),
    (
        "body the SDK rejects (ZeRO-3)",
        f"{QWEN8}/32k-H200-training-full.json",
        lambda d: _training(d)["ds_config"]["zero_optimization"].update(stage=3),
        f"{QWEN8}/32k-H200-training-full.json",
        "sub_job_configs[0].training_config.ds_config.zero_optimization.stage",
        "rejected by SDK validation",
    ),
    (
        "body the SDK rejects (two training sub-jobs)",
        f"{QWEN8}/8k-H200-training+sampling-full.json",
        lambda d: (
            d["sub_job_configs"][1].update(
                job_type="training", training_config=_training(d), inference_config=None
            )
            or d["sub_job_configs"][1].pop("inference_config")
        ),
        f"{QWEN8}/8k-H200-training+sampling-full.json",
        "(body)",
        "at most one training sub-job",
    ),
    (
        "hardware disagrees with the file name",
        f"{QWEN8}/8k-H200-training+sampling-lora.json",
        lambda d: d.update(hardware="B200"),
        f"{QWEN8}/8k-H200-training+sampling-lora.json",
        "hardware",
        "'B200' disagrees with the file name (H200)",
    ),
    (
        "chunked LM head with fused cross-entropy",
        f"{QWEN8}/8k-H200-training-lora.json",
        lambda d: _training(d).pop("fused_cross_entropy"),
        f"{QWEN8}/8k-H200-training-lora.json",
        "sub_job_configs[0].training_config",
        "typed SubJobConfig path",
    ),
    (
        "LoRA shapes disagree between training and sampling",
        f"{QWEN8}/32k-H200-training+sampling-lora.json",
        lambda d: _sampling(d)["peft_config"].update(r=16),
        f"{QWEN8}/32k-H200-training+sampling-lora.json",
        "sub_job_configs[1].inference_config.peft_config.r",
        "adapter sync needs them equal",
    ),
    (
        "MoE LoRA targets the MLP",
        f"{MOE}/256k-H200-training-lora.json",
        lambda d: _training(d)["peft_config"].update(target_modules=["q_proj", "gate_proj"]),
        f"{MOE}/256k-H200-training-lora.json",
        "sub_job_configs[0].training_config.peft_config.target_modules",
        "must target exactly",
    ),
    (
        "MoE trains without its provider",
        f"{MOE}/256k-H200-training-full.json",
        lambda d: _training(d).update(model_provider="huggingface"),
        f"{MOE}/256k-H200-training-full.json",
        "sub_job_configs[0].training_config.model_provider",
        "trains with model_provider 'prime_rl'",
    ),
    (
        "prime_rl.seq_len left at another context",
        f"{MOE}/256k-H200-training+sampling-lora.json",
        lambda d: _training(d)["prime_rl"].update(seq_len=4096),
        f"{MOE}/256k-H200-training+sampling-lora.json",
        "sub_job_configs[0].training_config.prime_rl.seq_len",
        "must equal max_seq_len 262144",
    ),
    (
        "tensor parallel size does not divide the GPUs",
        f"{QWEN8}/8k-H200-training+sampling-full.json",
        lambda d: _sampling(d)["vllm_config"].update(tensor_parallel_size=3),
        f"{QWEN8}/8k-H200-training+sampling-full.json",
        "sub_job_configs[1].inference_config.vllm_config.tensor_parallel_size",
        "does not divide n_gpus",
    ),
    (
        "kind disagrees with the sub-jobs",
        f"{QWEN8}/8k-H200-training-full.json",
        lambda d: d.update(sub_job_configs=[_sampling_sub_job()]),
        f"{QWEN8}/8k-H200-training-full.json",
        "sub_job_configs",
        "a training file holds [training] sub-jobs, found [sampling]",
    ),
    (
        "validated date for a missing file",
        f"{QWEN8}/model.json",
        lambda d: d.update(validated={"64k-H200-training-lora.json": "2026-09-01"}),
        f"{QWEN8}/model.json",
        "validated.64k-H200-training-lora.json",
        "names no job file",
    ),
    (
        "trainable model without inference",
        f"{QWEN8}/model.json",
        lambda d: d.update(workflows=["sft", "rl"]),
        f"{QWEN8}/model.json",
        "workflows",
        "must also list inference",
    ),
]


def _sampling_sub_job() -> dict[str, Any]:
    return {
        "job_type": "sampling",
        "model_name": "Qwen/Qwen3-8B",
        "inference_config": {"max_seq_len": 8192, "n_gpus": 8},
    }


@pytest.mark.parametrize(
    ("target", "edit", "file", "field", "message"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN]
)
def test_broken_copy_names_file_and_field(
    catalog_copy: Path,
    edit_json: Any,
    target: str,
    edit: Callable[[Any], Any],
    file: str,
    field: str,
    message: str,
) -> None:
    edit_json(catalog_copy / target, edit)
    problem = _find(_problems(catalog_copy), file, field)
    assert message in problem.message
    assert str(problem) == f"{problem.file}: {field}: {problem.message}"
    assert problem.file.startswith("model-catalog/models/")


def test_bad_job_file_name(catalog_copy: Path) -> None:
    folder = catalog_copy / QWEN8
    (folder / "8k-H200-training-lora.json").rename(folder / "8k-H200-train-lora.json")
    problem = _find(_problems(catalog_copy), "8k-H200-train-lora.json", "(file name)")
    assert "<context>-<hardware>-<kind>-<mode>.json" in problem.message


def test_context_in_name_disagrees_with_body(catalog_copy: Path) -> None:
    folder = catalog_copy / QWEN8
    (folder / "8k-H200-sampling-full.json").rename(folder / "16k-H200-sampling-full.json")
    problem = _find(
        _problems(catalog_copy),
        "16k-H200-sampling-full.json",
        "sub_job_configs[0].inference_config.max_seq_len",
    )
    assert "8192 disagrees with the file name (16k)" in problem.message


def test_unknown_hardware_in_name(catalog_copy: Path) -> None:
    folder = catalog_copy / QWEN8
    (folder / "8k-H200-sampling-full.json").rename(folder / "8k-A100-sampling-full.json")
    problem = _find(_problems(catalog_copy), "8k-A100-sampling-full.json", "(file name)")
    assert "hardware must be one of H200, B200, B300" in problem.message


def test_missing_mode_for_a_declared_workflow(catalog_copy: Path) -> None:
    for path in (catalog_copy / QWEN8).glob("*-training-full.json"):
        path.unlink()
    problem = _find(_problems(catalog_copy), f"{QWEN8}/model.json", "workflows")
    assert "no *-training-full.json job file" in problem.message


def test_invalid_json_and_missing_model_json(catalog_copy: Path) -> None:
    (catalog_copy / QWEN8 / "8k-H200-sampling-full.json").write_text("{not json")
    (catalog_copy / "models/Qwen--Qwen3-1.7B/model.json").unlink()
    problems = _problems(catalog_copy)
    assert "invalid JSON at line 1" in _find(problems, "8k-H200-sampling-full.json", "(file)").message
    assert "missing" in _find(problems, "models/Qwen--Qwen3-1.7B", "model.json").message


def test_stray_file_and_not_a_catalog(catalog_copy: Path, tmp_path: Path) -> None:
    (catalog_copy / "models" / "notes.txt").write_text("hi")
    _find(_problems(catalog_copy), "models/notes.txt", "(file)")
    [problem] = validate_catalog(tmp_path / "nowhere")
    assert problem.field == "(folder)"


def test_broken_schema_is_reported(catalog_copy: Path, edit_json: Any) -> None:
    edit_json(catalog_copy / "schema.json", lambda d: d["$defs"]["model"].update(type="thing"))
    [problem] = _problems(catalog_copy)
    assert problem.file == "model-catalog/schema.json"
    assert "not a valid JSON Schema" in problem.message


def test_a_problem_stops_nothing_else(catalog_copy: Path, edit_json: Any) -> None:
    """All problems are collected in one run, across files and models."""
    edit_json(catalog_copy / QWEN8 / "8k-H200-training-full.json", lambda d: d.update(hardware="B300"))
    edit_json(catalog_copy / MOE / "model.json", lambda d: d.update(family="Qwen 3.6"))
    problems = _problems(catalog_copy)
    assert {p.field for p in problems} >= {"hardware", "family"}


def test_validate_script_fails_with_one_line_per_problem(catalog_copy: Path, edit_json: Any) -> None:
    edit_json(catalog_copy / QWEN8 / "8k-H200-training-full.json", lambda d: d.update(hardware="B300"))
    edit_json(catalog_copy / QWEN8 / "model.json", lambda d: d.update(max_context=16384))
    script = Path(__file__).resolve().parents[2] / "model-catalog" / "validate_catalog.py"
    done = subprocess.run(
        [sys.executable, str(script), str(catalog_copy)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "model-catalog/models/Qwen--Qwen3-8B/8k-H200-training-full.json: hardware: " in "\n".join(lines)
    assert all(line.count(": ") >= 2 and line.startswith("model-catalog/") for line in lines)
    assert "model catalog invalid" in done.stderr

"""Run specs: bounds and refusals, tiers from the real catalog, the canonical config and its fingerprint."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from ct_runs import packing, schedule, spec
from ct_runs.errors import RunsRefusal
from ct_runs.spec import canonical_json, fingerprint, resolve_run

from ct_core.catalog import find_catalog, load_catalog
from ct_core.config.optimizer import SCHEDULER_KEYS

LABEL_A = "lbl_01AAAAAAAAAAAAAAAAAAAAAAAA"
LABEL_B = "lbl_01BBBBBBBBBBBBBBBBBBBBBBBB"


def _dataset(**changes: Any) -> dict[str, Any]:
    dataset = {
        "dataset_id": "ds_01TESTTESTTESTTESTTESTTEST",
        "status": "succeeded",
        "name": "t",
        "fingerprints": {"source": "s" * 64, "train": "t" * 64, "validation": "v" * 64},
        "labels": [
            {"label_id": LABEL_A, "field": "topic", "values": ["news", "sport"]},
            {"label_id": LABEL_B, "field": "mood", "values": ["calm"]},
        ],
        "violations": [],
        "error": None,
    }
    dataset.update(changes)
    return dataset


# 40 rows of 257 tokens each without labels (BOS, 255 bytes, EOS): 256 target positions each, so
# one packed row of 256 each (examples never share a row), 5 steps of 8 rows.
ROWS = [{"text": "a" * 255, "labels": {"topic": "news", "mood": "calm"}} for _ in range(40)]
DATASET_ID = _dataset()["dataset_id"]


def _resolve(body: dict[str, Any] | None = None, **kwargs: Any) -> spec.ResolvedRun:
    given = {"dataset_id": DATASET_ID, **(body or {})}
    return resolve_run(given, kwargs.pop("dataset", _dataset()), kwargs.pop("rows", ROWS), **kwargs)


def _refusal(body: dict[str, Any], **kwargs: Any) -> RunsRefusal:
    with pytest.raises(RunsRefusal) as caught:
        _resolve(body, **kwargs)
    return caught.value


# --- resolution ------------------------------------------------------------------------------------


def test_defaults_resolve_tier_s_with_every_trainer_key() -> None:
    run = _resolve({"labels": []})
    assert run.model_name == "Qwen/Qwen3-0.6B" and run.seq_len == 256
    assert run.steps_per_epoch == 5 and run.total_steps == 50 and run.rows_per_batch == 8
    assert run.trainer == {
        "epochs": 10,
        "batch_tokens": 2048,
        "learning_rate": 3e-3,
        "checkpoint_every_steps": 5,
        "val_every_steps": 2,
        "n_gpus": 1,
        "early_stopping": True,
        "patience": 5,
        "min_delta": 1e-4,
        "cooldown_ratio": 0.2,
        "lr_schedule": "wsd",
        "warmup_steps": 3,
        "cooldown_steps": 10,
        "cooldown_min_steps": 10,
        "min_lr_ratio": 0.0,
        "val_at_epoch_boundaries": True,
    }
    assert run.plan == schedule.SchedulePlan("wsd", 3e-3, 50, 3, 10, 0.0)
    assert run.config["$schema"] == "https://spec.tessera.dev/schemas/run_config.json"
    assert run.config["tokenizer"] == "byte" and run.config["seq_len"] == 256
    assert run.config["dataset_fingerprints"] == _dataset()["fingerprints"]
    assert run.spec == {
        "dataset_id": DATASET_ID,
        "model": "Qwen/Qwen3-0.6B",
        "validation_dataset_id": None,
        "model_config_tier": "S",
        "labels": [],
        "seed": 0,
        "overrides": {},
        "trainer": {},
    }
    assert run.fingerprint == fingerprint(run.config)
    assert len(run.fingerprint) == 64


def test_total_steps_follow_the_packed_tokens_of_the_selected_labels() -> None:
    # 64-token rows: a text example takes 4 rows; a label example is the text asked (context
    # only, so its rows are left out) and its answer, which takes far fewer rows.
    body = {"overrides": {"max_seq_len": 64}, "trainer": {"epochs": 3}}
    counted = {}
    for fields in (["topic", "mood"], []):
        expected = packing.steps_per_epoch(packing.encode_rows(ROWS, fields), seq_len=64, batch_tokens=2048)
        run = _resolve({**body, "labels": None if fields else []})
        assert run.label_fields == fields
        assert run.steps_per_epoch == expected and run.total_steps == 3 * expected
        counted[bool(fields)] = expected
    assert counted[True] != counted[False], counted


def test_the_create_body_is_the_catalog_training_job_set_up_for_the_run() -> None:
    run = _resolve(
        {
            "seed": 9,
            "labels": [],
            "overrides": {"weight_decay": 0.1, "adam_beta2": 0.95, "gradient_clipping": 2},
            "trainer": {"n_gpus": 4, "learning_rate": 1e-3},
        }
    )
    catalog_body = (
        load_catalog()
        .pick_job("Qwen/Qwen3-0.6B", context=8192, hardware="H200", kind="training", mode="full")
        .body()
    )
    assert run.create_body["hardware"] == catalog_body["hardware"]
    (sub,) = run.create_body["sub_job_configs"]
    assert sub["job_type"] == "training" and sub["model_name"] == "Qwen/Qwen3-0.6B" and sub["seed"] == 9
    config = sub["training_config"]
    assert config["n_gpus"] == 4
    assert config["optimizer"]["lr"] == 1e-3
    assert config["optimizer"]["weight_decay"] == 0.1
    assert config["optimizer"]["betas"] == [0.9, 0.95]
    assert config["gradient_clipping"] == 2.0 and isinstance(config["gradient_clipping"], float)
    assert config["max_seq_len"] == 8192
    deepspeed = config["ds_config"]
    assert deepspeed["train_batch_size"] == 4 == config["train_batch_size"]
    assert run.config["overrides"] == {
        "max_seq_len": 256,
        "weight_decay": 0.1,
        "gradient_clipping": 2.0,
        "warmup_steps": 3,
        "min_lr_ratio": 0.0,
        "adam_beta1": 0.9,
        "adam_beta2": 0.95,
    }
    assert run.overrides == {"weight_decay": 0.1, "adam_beta2": 0.95, "gradient_clipping": 2.0}


@pytest.mark.parametrize(
    ("tier", "model", "seq_len", "lr", "batch_tokens"),
    [
        ("S", "Qwen/Qwen3-0.6B", 256, 3e-3, 2048),
        ("M", "Qwen/Qwen3-1.7B", 512, 1e-3, 4096),
        ("L", "Qwen/Qwen3-8B", 1024, 5e-4, 8192),
    ],
)
def test_each_tier_maps_to_its_catalog_model_and_defaults(
    tier: str, model: str, seq_len: int, lr: float, batch_tokens: int
) -> None:
    run = _resolve({"model_config_tier": tier})
    assert run.model_name == model and run.seq_len == seq_len
    assert run.trainer["learning_rate"] == lr and run.trainer["batch_tokens"] == batch_tokens
    assert run.create_body["sub_job_configs"][0]["model_name"] == model


def test_max_seq_len_sets_the_row_length_and_raises_a_smaller_tier_batch_default() -> None:
    run = _resolve({"overrides": {"max_seq_len": 4096}})
    assert run.seq_len == 4096 and run.trainer["batch_tokens"] == 4096 and run.rows_per_batch == 1


def test_server_side_scheduler_keys_of_a_job_file_are_stripped(tmp_path: Path) -> None:
    root = tmp_path / "model-catalog"
    shutil.copytree(find_catalog() / "models" / "Qwen--Qwen3-0.6B", root / "models" / "Qwen--Qwen3-0.6B")
    path = root / "models" / "Qwen--Qwen3-0.6B" / "8k-H200-training-full.json"
    body = json.loads(path.read_text())
    config = body["sub_job_configs"][0]["training_config"]
    config["optimizer"].update({key: 1 for key in SCHEDULER_KEYS})
    config["warmup_steps"] = 7
    config["ds_config"]["scheduler"] = {"type": "WarmupLR"}
    path.write_text(json.dumps(body))
    run = _resolve(catalog=load_catalog(root))
    config = run.create_body["sub_job_configs"][0]["training_config"]
    assert not set(SCHEDULER_KEYS) & set(config["optimizer"])
    assert "warmup_steps" not in config and "scheduler" not in config["ds_config"]


def test_a_catalog_without_the_tiers_job_file_is_an_internal_refusal(tmp_path: Path) -> None:
    root = tmp_path / "model-catalog"
    (root / "models").mkdir(parents=True)
    refusal = _refusal({}, catalog=load_catalog(root))
    assert refusal.code == "internal" and refusal.status == 500 and "tier S" in refusal.message


def test_cosine_without_early_stopping_has_no_cooldown() -> None:
    run = _resolve({"labels": [], "trainer": {"lr_schedule": "cosine", "early_stopping": False}})
    assert run.plan.schedule == "cosine" and run.plan.cooldown_steps == 0
    assert run.trainer["cooldown_steps"] == 0
    # Fixed horizon without an explicit cadence: once per epoch.
    assert run.trainer["val_every_steps"] == 5 and run.trainer["val_at_epoch_boundaries"] is False


def test_explicit_cadence_and_checkpoint_cadence_are_kept() -> None:
    run = _resolve({"trainer": {"val_every_steps": 3, "checkpoint_every_steps": 7}})
    assert run.trainer["val_every_steps"] == 3 and run.trainer["val_at_epoch_boundaries"] is False
    assert run.trainer["checkpoint_every_steps"] == 7


def test_warmup_override_is_clamped_before_the_cooldown() -> None:
    run = _resolve({"labels": [], "overrides": {"warmup_steps": 1000, "min_lr_ratio": 0.1}})
    assert run.plan.warmup_steps == 40 == run.trainer["warmup_steps"]
    assert run.plan.min_lr_ratio == 0.1


def test_null_counts_as_not_given() -> None:
    plain = _resolve()
    nulls = _resolve({"model_config_tier": None, "labels": None, "seed": None, "trainer": {"epochs": None}})
    assert nulls.fingerprint == plain.fingerprint


# --- refusals --------------------------------------------------------------------------------------


OVERRIDE_CASES = [
    ("max_seq_len", 15, "[16, 8192]"),
    ("max_seq_len", 8193, "[16, 8192]"),
    ("max_seq_len", 64.0, "an integer"),
    ("weight_decay", -0.1, "[0, 1]"),
    ("weight_decay", 1.5, "[0, 1]"),
    ("gradient_clipping", 0, "(0, 100]"),
    ("gradient_clipping", 100.5, "(0, 100]"),
    ("warmup_steps", -1, "[0, 100000]"),
    ("warmup_steps", 100_001, "[0, 100000]"),
    ("min_lr_ratio", 1.01, "[0, 1]"),
    ("adam_beta1", 0, "(0, 1)"),
    ("adam_beta1", 1, "(0, 1)"),
    ("adam_beta2", 1.0, "(0, 1)"),
    ("adam_beta2", True, "(0, 1)"),
    ("weight_decay", "0.1", "[0, 1]"),
    ("weight_decay", float("nan"), "[0, 1]"),
]


@pytest.mark.parametrize(("key", "value", "bound"), OVERRIDE_CASES)
def test_override_bounds(key: str, value: Any, bound: str) -> None:
    refusal = _refusal({"overrides": {key: value}})
    assert refusal.code == "invalid_argument" and refusal.status == 400
    assert refusal.field == f"overrides.{key}"
    assert bound in refusal.message and key in refusal.message
    assert refusal.body() == {"message": refusal.message, "code": "invalid_argument", "field": refusal.field}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_seq_len", 16),
        ("max_seq_len", 2048),
        ("weight_decay", 0),
        ("weight_decay", 1),
        ("gradient_clipping", 100),
        ("warmup_steps", 0),
        ("min_lr_ratio", 1),
        ("adam_beta1", 0.5),
    ],
)
def test_override_bounds_admit_their_edges(key: str, value: Any) -> None:
    _resolve({"overrides": {key: value}})


def test_unknown_override_key() -> None:
    refusal = _refusal({"overrides": {"dropout": 0.1}})
    assert refusal.field == "overrides.dropout" and "dropout" in refusal.message
    assert "max_seq_len" in refusal.message  # the known keys are listed


TRAINER_CASES = [
    ("epochs", 0, "[1, 1000]"),
    ("epochs", 1001, "[1, 1000]"),
    ("epochs", 2.0, "an integer"),
    ("epochs", True, "an integer"),
    ("batch_tokens", 255, "max_seq_len 256"),
    ("batch_tokens", 10_000_001, "[1, 10000000]"),
    ("learning_rate", 0, "(0, 1]"),
    ("learning_rate", 1.5, "(0, 1]"),
    ("learning_rate", False, "(0, 1]"),
    ("checkpoint_every_steps", 0, ">= 1"),
    ("val_every_steps", 0, ">= 1"),
    ("n_gpus", 0, "[1, 64]"),
    ("n_gpus", 65, "[1, 64]"),
    ("early_stopping", 1, "true or false"),
    ("patience", 0, "[1, 1000]"),
    ("patience", 1001, "[1, 1000]"),
    ("min_delta", -1e-9, ">= 0"),
    ("min_delta", float("inf"), ">= 0"),
    ("cooldown_ratio", 0, "(0, 1)"),
    ("cooldown_ratio", 1, "(0, 1)"),
    ("lr_schedule", "linear", "wsd, cosine"),
]


@pytest.mark.parametrize(("key", "value", "bound"), TRAINER_CASES)
def test_trainer_bounds(key: str, value: Any, bound: str) -> None:
    refusal = _refusal({"trainer": {key: value}})
    assert refusal.code == "invalid_argument" and refusal.field == f"trainer.{key}"
    assert bound in refusal.message


def test_batch_tokens_bound_follows_the_overridden_row_length() -> None:
    refusal = _refusal({"overrides": {"max_seq_len": 1024}, "trainer": {"batch_tokens": 1000}})
    assert refusal.field == "trainer.batch_tokens" and "1024" in refusal.message
    assert (
        _resolve({"overrides": {"max_seq_len": 1024}, "trainer": {"batch_tokens": 1024}}).rows_per_batch == 1
    )


def test_unknown_trainer_key() -> None:
    refusal = _refusal({"trainer": {"epoch": 3}})
    assert refusal.field == "trainer.epoch" and "'epoch'" in refusal.message


def test_cosine_with_early_stopping_is_refused() -> None:
    refusal = _refusal({"trainer": {"lr_schedule": "cosine"}})
    assert refusal.code == "invalid_argument" and refusal.field == "trainer.lr_schedule"
    assert "wsd" in refusal.message
    refusal = _refusal({"trainer": {"lr_schedule": "cosine", "early_stopping": True}})
    assert refusal.field == "trainer.lr_schedule"


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"dataset_id": None}, "dataset_id", "required"),
        ({"dataset_id": 3}, "dataset_id", "required"),
        ({"dataset_id": "ds_other"}, "dataset_id", "ds_other"),
        ({"model_config_tier": "XL"}, "model_config_tier", "S, M, L"),
        ({"model_config_tier": "s"}, "model_config_tier", "S, M, L"),
        ({"seed": -1}, "seed", "an integer in [0, "),
        ({"seed": True}, "seed", "an integer"),
        ({"labels": "lbl_x"}, "labels", "list"),
        ({"labels": [LABEL_A, "lbl_nope"]}, "labels[1]", "lbl_nope"),
        ({"labels": [LABEL_A, LABEL_A]}, "labels[1]", "repeats"),
        ({"labels": [7]}, "labels[0]", "string"),
        ({"overrides": []}, "overrides", "object"),
        ({"trainer": 3}, "trainer", "object"),
        ({"epochs": 3}, "epochs", "unknown run spec key"),
    ],
)
def test_top_level_refusals(body: dict[str, Any], field: str, words: str) -> None:
    refusal = _refusal(body)
    assert refusal.code == "invalid_argument" and refusal.field == field
    assert words in refusal.message


def test_a_spec_that_is_not_an_object() -> None:
    with pytest.raises(RunsRefusal) as caught:
        resolve_run([1], _dataset(), ROWS)
    assert caught.value.code == "invalid_argument"


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"status": "building"}, "building"),
        ({"status": "failed", "error": "bad jsonl"}, "bad jsonl"),
        (
            {
                "violations": [
                    {"gate": "exact_duplicate", "train_row": 1, "validation_row": 2, "similarity": 1.0},
                    {"gate": "near_duplicate", "train_row": 3, "validation_row": 4, "similarity": 0.9},
                ]
            },
            "2 leakage violation(s)",
        ),
    ],
)
def test_dataset_preconditions_fail_closed(changes: dict[str, Any], words: str) -> None:
    refusal = _refusal({}, dataset=_dataset(**changes))
    assert refusal.code == "failed_precondition" and refusal.status == 400 and refusal.field == "dataset_id"
    assert words in refusal.message


def test_an_empty_train_split_is_a_failed_precondition() -> None:
    refusal = _refusal({}, rows=[])
    assert refusal.code == "failed_precondition" and refusal.field == "dataset_id"


def test_labels_omitted_mean_all_and_empty_means_none() -> None:
    assert _resolve().label_ids == [LABEL_A, LABEL_B]
    assert _resolve({"labels": []}).label_fields == []
    chosen = _resolve({"labels": [LABEL_B]})
    assert chosen.label_ids == [LABEL_B] and chosen.label_fields == ["mood"]
    assert chosen.config["labels"] == [{"label_id": LABEL_B, "field": "mood"}]


# --- canonical JSON and fingerprints ----------------------------------------------------------------


def test_canonical_json_is_sorted_compact_and_order_independent() -> None:
    assert canonical_json({"b": [1, 2.5, None, True], "a": "é"}) == '{"a":"é","b":[1,2.5,null,true]}'.encode()
    assert canonical_json({"x": 1, "y": {"q": 1, "p": 2}}) == canonical_json({"y": {"p": 2, "q": 1}, "x": 1})
    assert canonical_json((1, 2)) == canonical_json([1, 2])
    assert canonical_json(-0.0) == canonical_json(0.0) == b"0.0"


def test_canonical_json_keeps_the_type_of_numbers() -> None:
    assert canonical_json(1) == b"1" and canonical_json(1.0) == b"1.0"
    assert canonical_json(1e-4) == b"0.0001" and canonical_json(0.1 + 0.2) == b"0.30000000000000004"
    assert fingerprint({"a": 1}) != fingerprint({"a": 1.0})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {1: "a"}, {"a": {1, 2}}, b"bytes"])
def test_canonical_json_refuses_what_has_no_single_json_form(value: Any) -> None:
    with pytest.raises(ValueError):
        canonical_json(value)


def test_identical_specs_give_identical_fingerprints() -> None:
    body = {"seed": 3, "trainer": {"epochs": 2, "patience": 3}, "overrides": {"weight_decay": 0.01}}
    reordered = {"overrides": {"weight_decay": 0.01}, "trainer": {"patience": 3, "epochs": 2}, "seed": 3}
    assert _resolve(body).fingerprint == _resolve(body).fingerprint == _resolve(reordered).fingerprint


def test_a_float_key_given_as_an_integer_is_the_same_config() -> None:
    assert _resolve({"trainer": {"learning_rate": 1}}).fingerprint == (
        _resolve({"trainer": {"learning_rate": 1.0}}).fingerprint
    )
    assert _resolve({"overrides": {"weight_decay": 0}}).config["overrides"]["weight_decay"] == 0.0


def test_spelled_out_defaults_are_the_same_config() -> None:
    explicit = {
        "model_config_tier": "S",
        "labels": [LABEL_B, LABEL_A],  # the dataset's order is what counts
        "seed": 0,
        "overrides": {"weight_decay": 0.0, "adam_beta1": 0.9},
        "trainer": {"epochs": 10, "cooldown_ratio": 0.2, "early_stopping": True, "lr_schedule": "wsd"},
    }
    assert _resolve(explicit).fingerprint == _resolve().fingerprint


@pytest.mark.parametrize(
    "body",
    [
        {"trainer": {"cooldown_ratio": 0.25}},
        {"trainer": {"min_delta": 1e-3}},
        {"trainer": {"patience": 6}},
        {"seed": 1},
        {"labels": [LABEL_A]},
        {"model_config_tier": "M"},
        {"overrides": {"min_lr_ratio": 0.1}},
        {"trainer": {"n_gpus": 2}},
    ],
)
def test_a_changed_setting_changes_the_fingerprint(body: dict[str, Any]) -> None:
    assert _resolve(body).fingerprint != _resolve().fingerprint


def test_a_changed_dataset_fingerprint_changes_the_config_fingerprint() -> None:
    other = _dataset(fingerprints={"source": "s" * 64, "train": "u" * 64, "validation": "v" * 64})
    run = _resolve(dataset=other)
    assert run.fingerprint != _resolve().fingerprint
    assert run.dataset_fingerprint != _resolve().dataset_fingerprint


def test_the_fingerprint_is_the_sha256_of_the_canonical_config() -> None:
    import hashlib

    run = _resolve()
    assert run.fingerprint == hashlib.sha256(canonical_json(run.config)).hexdigest()
    # The config survives a JSON round trip unchanged (what a store would keep).
    assert fingerprint(json.loads(canonical_json(run.config))) == run.fingerprint
    assert math.isclose(json.loads(canonical_json(run.config))["trainer"]["min_delta"], 1e-4)


# --- the model, a separate validation dataset, OpenAI's names ----------------------------------------

MODEL_ID = "mdl_01mmmmmmmmmmmmmmmmmmmmmmmm"
VALIDATION_ID = "ds_01vvvvvvvvvvvvvvvvvvvvvvvv"


def _registered(**changes: Any) -> dict[str, Any]:
    model = {
        "model_id": MODEL_ID,
        "model_name": "Qwen/Qwen3-1.7B",
        "run_id": "run_01rrrrrrrrrrrrrrrrrrrrrrrr",
        "checkpoint_id": "ckpt-weights",
        "status": "training",
    }
    model.update(changes)
    return model


def test_model_absent_is_the_tiers_model_and_resolved_by_name() -> None:
    run = _resolve()
    assert run.model == "Qwen/Qwen3-0.6B" == run.model_name
    assert run.spec["model"] == "Qwen/Qwen3-0.6B" and run.spec["validation_dataset_id"] is None
    assert run.config["model"] == "Qwen/Qwen3-0.6B" and run.config["validation_dataset_id"] is None


@pytest.mark.parametrize("given", ["Qwen/Qwen3-1.7B", "qwen3-1.7b", "Qwen--Qwen3-1.7B"])
def test_a_catalog_model_picks_its_job_file_and_its_tiers_defaults(given: str) -> None:
    run = _resolve({"model": given})
    assert run.model == "Qwen/Qwen3-1.7B" == run.model_name and run.spec["model"] == "Qwen/Qwen3-1.7B"
    assert run.spec["model_config_tier"] == "M" and run.seq_len == 512
    assert run.trainer["learning_rate"] == 1e-3
    assert run.create_body["sub_job_configs"][0]["model_name"] == "Qwen/Qwen3-1.7B"
    # Naming the model or its tier is one run.
    assert run.fingerprint == _resolve({"model_config_tier": "M"}).fingerprint


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"model": "gpt-17"}, "Qwen/Qwen3-0.6B"),  # the trainable models are listed
        ({"model": "zai-org/GLM-5.2"}, "no training job file"),
        ({"model": "Qwen/Qwen3-8B", "model_config_tier": "S"}, "tier S"),
        ({"model": 7}, "a string"),
        ({"model": ""}, "a non-empty string"),
    ],
)
def test_a_model_that_cannot_be_trained_is_refused_at_the_field(body: dict[str, Any], words: str) -> None:
    refusal = _refusal(body)
    assert refusal.code == "invalid_argument" and refusal.field == "model", refusal.message
    assert words in refusal.message


def test_a_registered_model_continues_from_its_weights_on_its_base_model() -> None:
    run = _resolve({"model": MODEL_ID}, registered_model=_registered())
    assert run.model == MODEL_ID and run.spec["model"] == MODEL_ID
    assert run.model_name == "Qwen/Qwen3-1.7B" and run.spec["model_config_tier"] == "M"
    assert run.config["model"] == MODEL_ID and run.config["model_name"] == "Qwen/Qwen3-1.7B"
    assert run.fingerprint != _resolve({"model": "Qwen/Qwen3-1.7B"}).fingerprint


def test_a_registered_model_the_service_does_not_know_is_refused() -> None:
    refusal = _refusal({"model": MODEL_ID})
    assert refusal.code == "invalid_argument" and refusal.field == "model"
    assert MODEL_ID in refusal.message and "registered model" in refusal.message


def test_a_validation_dataset_is_resolved_checked_and_fingerprinted() -> None:
    validation = _dataset(dataset_id=VALIDATION_ID, fingerprints={"source": "w" * 64})
    run = _resolve({"validation_dataset_id": VALIDATION_ID}, validation_dataset=validation)
    assert run.spec["validation_dataset_id"] == VALIDATION_ID == run.config["validation_dataset_id"]
    assert run.config["validation_dataset_fingerprints"] == {"source": "w" * 64}
    assert run.fingerprint != _resolve().fingerprint


@pytest.mark.parametrize(
    ("body", "validation", "code", "words"),
    [
        ({"validation_dataset_id": VALIDATION_ID}, None, "invalid_argument", "no dataset build"),
        (
            {"validation_dataset_id": VALIDATION_ID},
            _dataset(dataset_id=VALIDATION_ID, status="failed", error="bad rows"),
            "failed_precondition",
            "bad rows",
        ),
        (
            {"validation_dataset_id": VALIDATION_ID},
            _dataset(dataset_id=VALIDATION_ID, labels=[{"label_id": LABEL_A, "field": "topic"}]),
            "failed_precondition",
            "mood",
        ),
        ({"validation_dataset_id": DATASET_ID}, _dataset(), "invalid_argument", "its own validation split"),
        ({"validation_dataset_id": 5}, None, "invalid_argument", "a string"),
    ],
)
def test_a_validation_dataset_that_cannot_serve_is_refused(
    body: dict[str, Any], validation: dict[str, Any] | None, code: str, words: str
) -> None:
    refusal = _refusal(body, validation_dataset=validation)
    assert refusal.code == code and refusal.field == "validation_dataset_id", refusal.message
    assert words in refusal.message


def test_openai_names_resolve_to_the_trainer_and_are_the_same_run() -> None:
    named = _resolve({"n_epochs": 3, "batch_size": 4, "learning_rate_multiplier": 0.5})
    plain = _resolve({"trainer": {"epochs": 3, "batch_tokens": 4 * 256, "learning_rate": 0.5 * 3e-3}})
    assert named.trainer["epochs"] == 3 and named.trainer["batch_tokens"] == 1024
    assert named.trainer["learning_rate"] == 0.5 * 3e-3
    assert named.fingerprint == plain.fingerprint
    # Echoed resolved: the spec the run keeps names the trainer's own keys.
    assert named.spec["trainer"] == {"epochs": 3, "batch_tokens": 1024, "learning_rate": 0.0015}
    assert not {"n_epochs", "batch_size", "learning_rate_multiplier"} & set(named.spec)


def test_batch_size_counts_rows_of_the_overridden_length_and_multiplier_the_models_rate() -> None:
    run = _resolve({"model": "Qwen/Qwen3-8B", "batch_size": 2, "learning_rate_multiplier": 2})
    assert run.trainer["batch_tokens"] == 2 * 1024 and run.trainer["learning_rate"] == 2 * 5e-4
    run = _resolve({"overrides": {"max_seq_len": 64}, "batch_size": 3})
    assert run.trainer["batch_tokens"] == 192 and run.rows_per_batch == 3


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"n_epochs": 2, "trainer": {"epochs": 2}}, "n_epochs", "trainer.epochs"),
        ({"batch_size": 2, "trainer": {"batch_tokens": 512}}, "batch_size", "trainer.batch_tokens"),
        (
            {"learning_rate_multiplier": 1, "trainer": {"learning_rate": 1e-3}},
            "learning_rate_multiplier",
            "trainer.learning_rate",
        ),
        ({"n_epochs": 0}, "n_epochs", "[1, 1000]"),
        ({"batch_size": 0}, "batch_size", "[1, 100000]"),
        ({"batch_size": 100_000}, "batch_size", "10000000"),
        ({"learning_rate_multiplier": 0}, "learning_rate_multiplier", "a number"),
        ({"learning_rate_multiplier": 500}, "learning_rate_multiplier", "(0, 1]"),
    ],
)
def test_openai_names_refusals(body: dict[str, Any], field: str, words: str) -> None:
    refusal = _refusal(body)
    assert refusal.code == "invalid_argument" and refusal.field == field, refusal.message
    assert words in refusal.message


def test_the_spec_is_checked_by_its_json_schema_before_the_dataset() -> None:
    # The schema refuses before anything is looked up: parse_spec alone, no dataset, no catalog.
    with pytest.raises(RunsRefusal) as caught:
        spec.parse_spec({"dataset_id": DATASET_ID, "trainer": {"patience": 0}, "seed": -2})
    assert caught.value.field == "trainer.patience"  # the first problem in the body's order
    schema = spec.run_spec_schema()
    assert schema["$ref"] == "#/$defs/RunSpec"
    assert set(schema["$defs"]["RunSpec"]["properties"]) >= {"model", "validation_dataset_id", "n_epochs"}

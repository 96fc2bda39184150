"""The peft_config rules on their own, and agreement with the reference's normalizer."""

from __future__ import annotations

from typing import Any

import pytest
from ct_lora.config import (
    CANONICAL_KEYS,
    adapter_mismatches,
    build_peft_config,
    check_peft_config,
)

LOC = "sub_job_configs[0].training_config.peft_config"


def ok(config: dict[str, Any]) -> dict[str, Any]:
    normalized, problems = check_peft_config(config, LOC)
    assert problems == []
    assert normalized is not None
    return normalized


def problems_of(config: Any) -> list[str]:
    normalized, problems = check_peft_config(config, LOC)
    assert normalized is None
    assert problems
    return problems


def test_defaults_are_filled_and_all_eight_keys_come_out_in_order() -> None:
    normalized = ok({"peft_type": "Lora", "target_modules": ["q_proj"]})
    assert list(normalized) == list(CANONICAL_KEYS)
    assert normalized == {
        "peft_type": "Lora",
        "task_type": "CAUSAL_LM",
        "r": 8,
        "lora_alpha": 8,
        "lora_dropout": 0.0,
        "bias": "none",
        "target_modules": ["q_proj"],
        "target_parameters": [],
    }


def test_normalizing_twice_changes_nothing() -> None:
    once = ok({"peft_type": "Lora", "r": 16, "lora_alpha": 32, "target_parameters": ["experts.w1"]})
    assert ok(once) == once


def test_explicit_values_are_kept_and_dropout_becomes_float() -> None:
    normalized = ok(
        {"peft_type": "Lora", "r": 4, "lora_alpha": 0, "lora_dropout": 1, "target_modules": "all-linear"}
    )
    assert (normalized["r"], normalized["lora_alpha"]) == (4, 0)
    assert normalized["lora_dropout"] == 1.0 and isinstance(normalized["lora_dropout"], float)
    # A string is a regular expression for PEFT: it must stay a string, not become a list.
    assert normalized["target_modules"] == "all-linear"


def test_target_parameters_alone_is_enough() -> None:
    assert (
        ok({"peft_type": "Lora", "target_parameters": ["mlp.experts.gate_up_proj"]})["target_modules"] == []
    )


def test_not_an_object() -> None:
    assert problems_of(["Lora"]) == [f"{LOC} must be an object, got ['Lora']"]


def test_unsupported_keys_use_the_contract_text() -> None:
    (message,) = problems_of({"peft_type": "Lora", "target_modules": ["q"], "use_rslora": True, "alpha": 2})
    assert message == (
        f"{LOC} contains unsupported field(s): ['alpha', 'use_rslora']. Supported fields: "
        "['bias', 'lora_alpha', 'lora_dropout', 'peft_type', 'r', 'target_modules', 'target_parameters', "
        "'task_type']"
    )


@pytest.mark.parametrize("peft_type", ["LORA", "lora", None, "AdaLora"])
def test_peft_type_must_be_exactly_Lora(peft_type: Any) -> None:
    config = {"target_modules": ["q"]}
    if peft_type is not None:
        config["peft_type"] = peft_type
    (message,) = problems_of(config)
    assert message.startswith(f"{LOC}.peft_type must be exactly 'Lora', got {peft_type!r}")


def test_task_type_must_be_causal_lm() -> None:
    assert problems_of({"peft_type": "Lora", "task_type": "SEQ_CLS", "target_modules": ["q"]}) == [
        f"{LOC}.task_type must be 'CAUSAL_LM', got 'SEQ_CLS'"
    ]


@pytest.mark.parametrize("r", [0, -1, True, 2.0, "8"])
def test_r_must_be_a_positive_integer(r: Any) -> None:
    assert problems_of({"peft_type": "Lora", "r": r, "target_modules": ["q"]}) == [
        f"{LOC}.r must be a positive integer, got {r!r}"
    ]


@pytest.mark.parametrize("alpha", [-1, False, 1.5])
def test_lora_alpha_must_be_a_non_negative_integer(alpha: Any) -> None:
    (message,) = problems_of({"peft_type": "Lora", "lora_alpha": alpha, "target_modules": ["q"]})
    assert message.startswith(f"{LOC}.lora_alpha must be an integer of 0 or more")


@pytest.mark.parametrize("dropout", [-0.1, 1.5, True, "0.1"])
def test_lora_dropout_must_be_in_zero_one(dropout: Any) -> None:
    (message,) = problems_of({"peft_type": "Lora", "lora_dropout": dropout, "target_modules": ["q"]})
    assert message.startswith(f"{LOC}.lora_dropout must be a number from 0 to 1")


@pytest.mark.parametrize("bias", ["all", "lora_only"])
def test_known_bias_other_than_none_uses_the_contract_text(bias: str) -> None:
    assert problems_of({"peft_type": "Lora", "bias": bias, "target_modules": ["q"]}) == [
        f"{LOC}.bias={bias!r} is not supported by vLLM 0.26 LoRA. Use bias='none'."
    ]


def test_unknown_bias() -> None:
    (message,) = problems_of({"peft_type": "Lora", "bias": "some", "target_modules": ["q"]})
    assert message.startswith(f"{LOC}.bias must be one of ['none', 'all', 'lora_only']")


@pytest.mark.parametrize("modules", ["", [""], ["q", 3], {"q": 1}, 7])
def test_target_modules_shape(modules: Any) -> None:
    (message,) = problems_of({"peft_type": "Lora", "target_modules": modules})
    assert message.startswith(f"{LOC}.target_modules must")


@pytest.mark.parametrize("parameters", ["experts", [""], [None]])
def test_target_parameters_shape(parameters: Any) -> None:
    (message,) = problems_of({"peft_type": "Lora", "target_modules": ["q"], "target_parameters": parameters})
    assert message == f"{LOC}.target_parameters must be a list of non-empty strings"


@pytest.mark.parametrize(
    "config",
    [
        {"peft_type": "Lora"},
        {"peft_type": "Lora", "target_modules": [], "target_parameters": []},
    ],
)
def test_some_target_is_required(config: dict[str, Any]) -> None:
    assert problems_of(config) == [f"{LOC} must specify target_modules, target_parameters, or both"]


def test_every_problem_is_reported_at_once() -> None:
    found = problems_of({"peft_type": "LORA", "r": 0, "bias": "all", "target_modules": []})
    assert [message.split(" ")[0] for message in found] == [
        f"{LOC}.peft_type",
        f"{LOC}.r",
        f"{LOC}.bias='all'",
        LOC,
    ]


VALID_INPUTS: list[dict[str, Any]] = [
    {"peft_type": "Lora", "target_modules": ["q_proj", "v_proj"]},
    {"peft_type": "Lora", "target_modules": "all-linear", "r": 64, "lora_alpha": 128, "lora_dropout": 0.05},
    {"peft_type": "Lora", "target_parameters": ["experts.w1"], "task_type": "CAUSAL_LM", "bias": "none"},
    {"peft_type": "Lora", "target_modules": ["o_proj"], "target_parameters": ["x"], "lora_dropout": 1},
]


@pytest.mark.parametrize("config", VALID_INPUTS)
def test_same_normal_form_as_the_reference(config: dict[str, Any]) -> None:
    reference = pytest.importorskip("cortex_training.peft")
    expected = reference.normalize_lora_peft_config(dict(config), location=LOC)
    assert ok(dict(config)) == expected
    assert list(ok(dict(config))) == list(expected)


@pytest.mark.parametrize(
    "config",
    [
        {"peft_type": "LORA", "target_modules": ["q"]},
        {"peft_type": "Lora", "target_modules": ["q"], "fan_in_fan_out": True},
        {"peft_type": "Lora", "target_modules": ["q"], "bias": "all"},
        {"peft_type": "Lora"},
        {"peft_type": "Lora", "target_modules": ["q"], "r": 0},
    ],
)
def test_rejects_what_the_reference_rejects(config: dict[str, Any]) -> None:
    reference = pytest.importorskip("cortex_training.peft")
    with pytest.raises(ValueError):
        reference.normalize_lora_peft_config(dict(config), location=LOC)
    problems_of(config)


def test_build_peft_config() -> None:
    built = build_peft_config(r=16, lora_alpha=32, target_modules=("q_proj", "k_proj"))
    assert built["r"] == 16 and built["lora_alpha"] == 32 and built["target_modules"] == ["q_proj", "k_proj"]
    with pytest.raises(ValueError, match=r"peft_config.r must be a positive integer.*target_modules"):
        build_peft_config(r=0)


def test_adapter_mismatches() -> None:
    train = build_peft_config(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"])
    # The order of target_modules does not change the adapter PEFT builds.
    same = build_peft_config(r=16, lora_alpha=32, target_modules=["v_proj", "q_proj"], lora_dropout=0.1)
    assert adapter_mismatches(train, "T", same, "S") == []
    other = build_peft_config(r=8, lora_alpha=32, target_modules="q_proj|v_proj")
    found = adapter_mismatches(train, "T", other, "S")
    assert [message.split(" ")[0] for message in found] == ["S.r", "S.target_modules"]
    assert "T.r is 16" in found[0]

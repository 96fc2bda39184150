"""router_replay block rules, on their own and through every create path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ct_router_replay.rules import check_router_replay

from ct_core.config.validation import validate_create_body
from ct_core.errors import ValidationError

MODEL = "Qwen/Qwen3.6-35B-A3B"
T = "sub_job_configs[0].training_config.router_replay"
S = "sub_job_configs[1].inference_config.router_replay"


def body(training_block: Any = None, sampling_block: Any = None) -> dict[str, Any]:
    training: dict[str, Any] = {
        "optimizer": {"name": "AdamW", "lr": 1e-5},
        "max_seq_len": 256,
        "train_batch_size": 2,
        "n_gpus": 1,
    }
    inference: dict[str, Any] = {"max_seq_len": 256, "n_gpus": 1}
    if training_block is not None:
        training["router_replay"] = training_block
    if sampling_block is not None:
        inference["router_replay"] = sampling_block
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


@pytest.mark.parametrize(
    ("block", "job_type"),
    [
        ({"enabled": True, "max_cache_bytes": 5368709120}, "training"),
        ({"enabled": True, "max_cache_bytes": 21474836480, "mode": "strict"}, "sampling"),
        ({"enabled": True, "mode": "best_effort"}, "training"),
        ({"mode": "best_effort", "max_cache_bytes": 1}, "training"),
        ({"enabled": False}, "sampling"),
        ({"enabled": True, "future_knob": 3}, "training"),
        ({}, "sampling"),
    ],
)
def test_accepted_blocks(block: dict[str, Any], job_type: str) -> None:
    assert check_router_replay(block, "rr", job_type=job_type) == []


@pytest.mark.parametrize(
    ("block", "job_type", "expected"),
    [
        ("on", "training", "rr must be an object with enabled, max_cache_bytes and mode, got 'on'"),
        ({"mode": "STRICT"}, "training", "rr.mode must be 'strict' or 'best_effort', got 'STRICT'"),
        ({"mode": "lenient"}, "sampling", "rr.mode must be 'strict' or 'best_effort', got 'lenient'"),
        (
            {"mode": "best_effort"},
            "sampling",
            "rr.mode 'best_effort' applies to the training sub-job only; "
            "a sampling sub-job must use 'strict'",
        ),
        (
            {"enabled": False, "mode": "best_effort"},
            "training",
            "rr.mode 'best_effort' needs router replay enabled, but enabled is false",
        ),
        (
            {"max_cache_bytes": 0},
            "training",
            "rr.max_cache_bytes must be a positive integer (bytes per worker), got 0",
        ),
        (
            {"max_cache_bytes": -5},
            "sampling",
            "rr.max_cache_bytes must be a positive integer (bytes per worker), got -5",
        ),
        (
            {"max_cache_bytes": 1.5e9},
            "training",
            "rr.max_cache_bytes must be a positive integer (bytes per worker), got 1500000000.0",
        ),
        (
            {"max_cache_bytes": True},
            "training",
            "rr.max_cache_bytes must be a positive integer (bytes per worker), got True",
        ),
        (
            {"max_cache_bytes": "5GiB"},
            "training",
            "rr.max_cache_bytes must be a positive integer (bytes per worker), got '5GiB'",
        ),
        ({"enabled": "yes"}, "training", "rr.enabled must be true or false, got 'yes'"),
        (
            {"max_cache_byte": 10},
            "training",
            "rr.max_cache_byte is not a router_replay key; did you mean max_cache_bytes?",
        ),
    ],
)
def test_rejected_blocks(block: Any, job_type: str, expected: str) -> None:
    assert check_router_replay(block, "rr", job_type=job_type) == [expected]


def test_every_problem_of_a_block_is_reported() -> None:
    found = check_router_replay(
        {"mode": "fast", "max_cache_bytes": 0, "enabled": 1}, "rr", job_type="training"
    )
    assert len(found) == 3


def test_create_body_accepts_the_catalog_caps_unchanged() -> None:
    raw = body(
        {"enabled": True, "max_cache_bytes": 5368709120}, {"enabled": True, "max_cache_bytes": 21474836480}
    )
    assert validate_create_body(raw) == raw


def test_create_body_names_the_sub_job_and_field() -> None:
    found = problems(
        body({"enabled": False, "mode": "best_effort"}, {"mode": "best_effort", "max_cache_bytes": 0})
    )
    assert found == [
        f"{T}.mode 'best_effort' needs router replay enabled, but enabled is false",
        f"{S}.mode 'best_effort' applies to the training sub-job only; a sampling sub-job must use 'strict'",
        f"{S}.max_cache_bytes must be a positive integer (bytes per worker), got 0",
    ]


@pytest.mark.parametrize(
    ("training_type", "sampling_type"),
    [("TRAINING", " Sampling "), ("job_type_training", "JOB_TYPE_SAMPLING")],
)
def test_every_job_type_spelling_is_checked(training_type: str, sampling_type: str) -> None:
    # The core accepts these spellings, so the rules must not let them slip past.
    raw = body({"mode": "fast"}, {"mode": "best_effort"})
    raw["sub_job_configs"][0]["job_type"] = training_type
    raw["sub_job_configs"][1]["job_type"] = sampling_type
    assert problems(raw) == [
        f"{T}.mode must be 'strict' or 'best_effort', got 'fast'",
        f"{S}.mode 'best_effort' applies to the training sub-job only; a sampling sub-job must use 'strict'",
    ]


def test_typed_sampling_path_through_extra_sampling() -> None:
    from ct_core.config.typed import SubJobConfig
    from ct_core.config.validation import build_create_body

    sampling = SubJobConfig.sampling_job(
        MODEL, max_seq_len=256, n_gpus=1, extra_sampling={"router_replay": {"mode": "best_effort"}}
    )
    with pytest.raises(ValidationError, match=r"sub_job_configs\[0\].inference_config.router_replay.mode"):
        validate_create_body(build_create_body([sampling]))


def test_client_refuses_before_sending(local_server: Any) -> None:
    from ct_core.client import CortexTrainingClient

    with CortexTrainingClient(base_url=local_server.base_url, database="RR_DB", schema="PUBLIC") as client:
        before = client.list_jobs()
        with pytest.raises(ValidationError, match="max_cache_bytes must be a positive integer"):
            client.create_job_from_body(body({"max_cache_bytes": -1}))
        assert client.list_jobs() == before


def test_submit_dry_run(run_ct: Any) -> None:
    good = run_ct(
        "submit", "--dry-run", "-", input=json.dumps(body({"enabled": True, "mode": "best_effort"}))
    )
    assert good.returncode == 0, good
    assert good.json["sub_job_configs"][0]["training_config"]["router_replay"]["mode"] == "best_effort"
    bad = run_ct("submit", "--dry-run", "-", input=json.dumps(body(None, {"mode": "best_effort"})))
    assert bad.returncode == 1
    assert f"{S}.mode 'best_effort' applies to the training sub-job only" in bad.stderr

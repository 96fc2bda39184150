"""The create-job body schema that client and server check bodies with is the spec's own."""

from __future__ import annotations

from importlib import resources
from typing import Any

from ct_core.config import bodies


def test_the_shipped_schema_is_the_specs(spec: dict[str, Any]) -> None:
    shipped = resources.files("ct_core.config").joinpath(bodies.SCHEMA_FILE).read_text(encoding="utf-8")
    expected = bodies.schema_text(bodies.schema_from_spec(spec))
    assert shipped == expected, "the spec changed: run `.venv/bin/python -m ct_core.config.bodies`"


def test_the_schema_says_the_contracts_bounds(spec: dict[str, Any]) -> None:
    schema = bodies.schema_from_spec(spec)["$defs"]
    assert schema["CreateJobRequest"]["required"] == ["sub_job_configs"]
    assert schema["Hardware"]["enum"] == ["H200", "B200", "B300"]
    for config in ("TrainingConfig", "InferenceConfig"):
        assert schema[config]["properties"]["max_seq_len"]["exclusiveMinimum"] == 0
        assert schema[config]["properties"]["n_gpus"]["exclusiveMinimum"] == 0


def test_the_timeout_bounds_are_the_constants(spec: dict[str, Any]) -> None:
    from ct_core import constants

    body = bodies.schema_from_spec(spec)["$defs"]["CreateJobRequest"]["properties"]
    for name in ("idle_timeout_seconds", "pending_timeout_seconds"):
        assert body[name]["maximum"] == constants.TIMEOUT_MAX_SECONDS
    assert body["pending_timeout_seconds"]["minimum"] == constants.TIMEOUT_MIN_SECONDS
    assert body["idle_timeout_seconds"]["not"]["exclusiveMaximum"] == constants.TIMEOUT_MIN_SECONDS

"""URLs of REST operations come from the route table generated out of openapi/, nowhere else."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ct_core.http.routes import Routes, operation_ids, query_string

SPEC = Path(__file__).resolve().parents[2] / "openapi" / "cortex-training.yaml"


def test_the_table_has_every_operation_of_the_spec() -> None:
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    in_spec = {
        operation["operationId"]
        for item in spec["paths"].values()
        for method, operation in item.items()
        if method in {"get", "post", "put", "delete", "patch"}
    }
    assert set(operation_ids()) == in_spec


def test_paths_are_filled_over_the_bound_location_and_each_segment_is_encoded() -> None:
    routes = Routes({"database": "DB", "schema": "S", "endpoint": "cortex-training"})
    assert routes.path("step", {"job_id": "j1"}) == ("/api/v2/databases/DB/schemas/S/cortex-training/j1/step")
    # A sub-job id or a name with reserved characters travels as one segment.
    assert routes.path("getRequestStatus", {"job_id": "a/b", "request_id": "x:y z"}) == (
        "/api/v2/databases/DB/schemas/S/cortex-training/a%2Fb/requests/x%3Ay%20z"
    )
    # The call's own parameters win over the bound ones (a for_job view of another schema).
    assert routes.path("getJob", {"job_id": "j", "schema": "OTHER"}).startswith(
        "/api/v2/databases/DB/schemas/OTHER/"
    )


def test_the_query_leaves_out_none_and_spells_booleans_as_json() -> None:
    assert query_string({"a": 1, "b": None, "c": True, "d": "x y"}) == "?a=1&c=true&d=x%20y"
    # A list repeats its key, in order; None items are left out.
    assert (
        query_string({"label_field": ["topic", None, "tone"], "x": 1})
        == "?label_field=topic&label_field=tone&x=1"
    )
    assert query_string({"b": None}) == ""
    assert query_string(None) == ""


def test_an_unknown_operation_or_a_missing_parameter_is_refused() -> None:
    routes = Routes({"database": "DB", "schema": "S", "endpoint": "cortex-training"})
    with pytest.raises(ValueError, match="unknown REST operation 'stepp'"):
        routes.path("stepp", {"job_id": "j"})
    with pytest.raises(ValueError, match="needs the path parameter"):
        routes.path("step", {})

"""The OpenAPI document covers the REST contract: every route and operationId, named schemas, the
auth schemes and content types, and the generated package mirrors it."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
from openapi_spec_validator import validate

PREFIX = "/api/v2/databases/{database}/schemas/{schema}/{endpoint}"

# operationId -> (HTTP method, path, tag): the fixed names other modules code against (every endpoint of
# the contract, the account-level list, models, deployments and the SQL statements API).
OPERATIONS: dict[str, tuple[str, str, str]] = {
    "createJob": ("post", PREFIX, "control_plane"),
    "listJobs": ("get", PREFIX, "control_plane"),
    "getCapacity": ("get", PREFIX + "/capacity", "control_plane"),
    "getJob": ("get", PREFIX + "/{job_id}", "control_plane"),
    "cancelJob": ("post", PREFIX + "/{job_id}:cancel", "control_plane"),
    "getExperimentRun": ("get", PREFIX + "/{job_id}/experiment-run", "control_plane"),
    "listCheckpoints": ("get", PREFIX + "/{job_id}/checkpoints", "control_plane"),
    "exportCheckpoint": ("post", PREFIX + "/{job_id}/checkpoints/{checkpoint_id}:export", "control_plane"),
    "deleteCheckpoint": ("delete", PREFIX + "/{job_id}/checkpoints/{checkpoint_id}", "control_plane"),
    "forwardBackward": ("post", PREFIX + "/{job_id}/forward-backward", "data_plane"),
    "step": ("post", PREFIX + "/{job_id}/step", "data_plane"),
    "save": ("post", PREFIX + "/{job_id}/save", "data_plane"),
    "load": ("post", PREFIX + "/{job_id}/load", "data_plane"),
    "generate": ("post", PREFIX + "/{job_id}/generate", "data_plane"),
    "generateStream": ("post", PREFIX + "/{job_id}/generate-stream", "data_plane"),
    "submitOperation": ("post", PREFIX + "/{job_id}/operation", "data_plane"),
    "getRequestStatus": ("get", PREFIX + "/{job_id}/requests/{request_id}", "data_plane"),
    "listAccountJobs": ("get", "/api/v2/{endpoint}", "account"),
    "listModels": ("get", "/api/v2/cortex-training/models", "account"),
    "executeStatement": ("post", "/api/v2/statements", "account"),
    "getStatementStatus": ("get", "/api/v2/statements/{statement_handle}", "account"),
    "listLocalArtifacts": ("get", "/_artifacts/{experiment_name}/{run_name}", "local"),
    "getLocalArtifact": ("get", "/_artifacts/{experiment_name}/{run_name}/{artifact_path}", "local"),
    "createChatCompletion": ("post", PREFIX + "/inference/v1/chat/completions", "inference"),
    "listDeploymentModels": ("get", PREFIX + "/inference/v1/models", "inference"),
    "getDeploymentModel": ("get", PREFIX + "/inference/v1/models/{model}", "inference"),
    "buildDataset": ("post", PREFIX + "/datasets", "runs"),
    "getDataset": ("get", PREFIX + "/datasets/{dataset_id}", "runs"),
    "startRun": ("post", PREFIX + "/runs", "runs"),
    "listRuns": ("get", PREFIX + "/runs", "runs"),
    "getRun": ("get", PREFIX + "/runs/{run_id}", "runs"),
    "getRunMetrics": ("get", PREFIX + "/runs/{run_id}/metrics", "runs"),
    "getRunLogs": ("get", PREFIX + "/runs/{run_id}/logs", "runs"),
    "cancelRun": ("post", PREFIX + "/runs/{run_id}:cancel", "runs"),
    "resumeRun": ("post", PREFIX + "/runs/{run_id}:resume", "runs"),
    "registerRunModel": ("post", PREFIX + "/runs/{run_id}:register", "runs"),
    "listRegisteredModels": ("get", PREFIX + "/models", "runs"),
    "getRegisteredModel": ("get", PREFIX + "/models/{model_id}", "runs"),
}

OCTET_STREAM_BODIES = {"forwardBackward", "generate", "generateStream"}
#: Bodies sent as a JSONL file (the dataset upload of the runs service).
NDJSON_BODIES = {"buildDataset"}
HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                yield path, method, operation


def _schema_of(spec: dict[str, Any], ref: str) -> dict[str, Any]:
    assert ref.startswith("#/components/schemas/"), ref
    return spec["components"]["schemas"][ref.rsplit("/", 1)[1]]


def _inline_objects(node: Any, where: str) -> Iterator[str]:
    """Every place below ``node`` where an object schema is written inline instead of referenced."""
    if isinstance(node, dict):
        declared = node.get("type")
        types = declared if isinstance(declared, list) else [declared]
        if "properties" in node or "object" in types:
            yield where
        for key, value in node.items():
            # Examples and vendor extensions hold data, not schemas.
            if key not in {"examples", "example"} and not key.startswith("x-"):
                yield from _inline_objects(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _inline_objects(value, f"{where}/{index}")


def test_spec_is_valid_openapi_3_1(spec: dict[str, Any]) -> None:
    assert spec["openapi"].startswith("3.1.")
    validate(spec)


def test_operation_ids_are_exactly_the_agreed_list(spec: dict[str, Any]) -> None:
    found = [operation.get("operationId") for _, _, operation in _operations(spec)]
    assert None not in found, "an operation has no operationId"
    assert len(found) == len(set(found)), "operationIds must be unique"
    assert set(found) == set(OPERATIONS)


@pytest.mark.parametrize("operation_id", sorted(OPERATIONS))
def test_each_operation_sits_on_its_contract_path(spec: dict[str, Any], operation_id: str) -> None:
    method, path, tag = OPERATIONS[operation_id]
    assert path in spec["paths"], f"missing path {path}"
    operation = spec["paths"][path].get(method)
    assert operation is not None, f"missing {method.upper()} {path}"
    assert operation["operationId"] == operation_id
    assert operation["tags"] == [tag]
    # Each answer names the success schema through a component and documents the error statuses.
    assert {"4XX", "5XX"} <= set(operation["responses"])
    assert any(code.startswith("2") for code in operation["responses"])


def test_prefix_routes_take_database_schema_and_endpoint(spec: dict[str, Any]) -> None:
    for path, item in spec["paths"].items():
        names = {p["$ref"].rsplit("/", 1)[1] for p in item.get("parameters", []) if "$ref" in p}
        if path.startswith(PREFIX):
            assert {"Database", "Schema", "Endpoint"} <= names, path
        for template in re.findall(r"{(\w+)}", path):
            declared = {
                spec["components"]["parameters"][p["$ref"].rsplit("/", 1)[1]]["name"]
                if "$ref" in p
                else p["name"]
                for p in item.get("parameters", [])
            }
            assert template in declared, f"{path}: path parameter {template} is not declared"


def test_no_inline_object_schemas_anywhere(spec: dict[str, Any]) -> None:
    for path, method, operation in _operations(spec):
        assert list(_inline_objects(operation, f"{method.upper()} {path}")) == []
    for name, schema in spec["components"]["schemas"].items():
        # The component itself may be an object; anything nested in it must be a $ref.
        for key, value in schema.items():
            if key not in {"type", "description", "examples"}:
                assert list(_inline_objects(value, f"{name}/{key}")) == []
    for section in ("responses", "parameters", "headers"):
        assert list(_inline_objects(spec["components"][section], section)) == []


def test_every_object_component_says_whether_it_is_open(spec: dict[str, Any]) -> None:
    for name, schema in spec["components"]["schemas"].items():
        if schema.get("type") == "object":
            assert "additionalProperties" in schema, name


@pytest.mark.parametrize(
    "name",
    [
        "CreateJobRequest",
        "SubJobConfig",
        "TrainingConfig",
        "InferenceConfig",
        "SourceCheckpointInfo",
        "OptimizerConfig",
        "JobRecord",
        "SubJobRecord",
        "RequestStatus",
        "RequestEvent",
        "OperationResponse",
        "TailLogsPage",
        "ModelOptions",
        "ChatCompletionRequest",
    ],
)
def test_objects_the_contract_keeps_open_allow_more_keys(spec: dict[str, Any], name: str) -> None:
    assert spec["components"]["schemas"][name]["additionalProperties"] is True


def test_dflash2_block_is_closed(spec: dict[str, Any]) -> None:
    dflash2 = spec["components"]["schemas"]["Dflash2Config"]
    assert dflash2["additionalProperties"] is False
    assert dflash2["required"] == ["draft_config"]


def test_request_bodies_use_the_contract_content_types(spec: dict[str, Any]) -> None:
    for path, method, operation in _operations(spec):
        body = operation.get("requestBody")
        operation_id = operation["operationId"]
        if operation_id in OCTET_STREAM_BODIES:
            assert list(body["content"]) == ["application/octet-stream"], operation_id
            schema = _schema_of(spec, body["content"]["application/octet-stream"]["schema"]["$ref"])
            assert schema["type"] == "string" and schema["format"] == "binary"
        elif operation_id in NDJSON_BODIES:
            assert list(body["content"]) == ["application/x-ndjson"], operation_id
            schema = _schema_of(spec, body["content"]["application/x-ndjson"]["schema"]["$ref"])
            assert schema["type"] == "string" and schema["format"] == "binary"
        elif body is not None:
            assert list(body["content"]) == ["application/json"], f"{method} {path}"
    # Cancel and export take no body.
    assert "requestBody" not in spec["paths"][OPERATIONS["cancelJob"][1]]["post"]
    assert "requestBody" not in spec["paths"][OPERATIONS["exportCheckpoint"][1]]["post"]


def test_generate_routes_take_sub_job_id_as_a_query_parameter(spec: dict[str, Any]) -> None:
    query = spec["components"]["parameters"]["SubJobIdQuery"]
    assert (query["name"], query["in"]) == ("sub_job_id", "query")
    for operation_id in ("generate", "generateStream"):
        method, path, _ = OPERATIONS[operation_id]
        refs = [p["$ref"] for p in spec["paths"][path][method]["parameters"]]
        assert "#/components/parameters/SubJobIdQuery" in refs


def test_account_job_list_has_the_filters_and_paging_of_5_3(spec: dict[str, Any]) -> None:
    operation = spec["paths"]["/api/v2/{endpoint}"]["get"]
    names = {p["name"]: p for p in operation["parameters"]}
    assert set(names) == {
        "database",
        "schema",
        "status",
        "submitted_by",
        "created_after",
        "created_before",
        "limit",
        "page_token",
    }
    assert names["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 1000}
    page = spec["components"]["schemas"]["AccountJobPage"]["properties"]
    assert page["next_page_token"]["type"] == ["string", "null"]
    record = spec["components"]["schemas"]["AccountJobRecord"]["allOf"]
    assert {"$ref": "#/components/schemas/JobLocation"} in record


def test_auth_schemes_cover_pat_and_snowflake_session(spec: dict[str, Any]) -> None:
    schemes = spec["components"]["securitySchemes"]
    assert schemes["PatBearer"] == {**schemes["PatBearer"], "type": "http", "scheme": "bearer"}
    assert schemes["PatTokenType"]["in"] == "header"
    assert schemes["PatTokenType"]["name"] == "X-Snowflake-Authorization-Token-Type"
    assert schemes["SnowflakeSession"]["scheme"] == "Snowflake"
    assert 'Snowflake Token="' in schemes["SnowflakeSession"]["description"]
    # A PAT needs both headers at once; a session token stands alone.
    assert spec["security"] == [{"PatBearer": [], "PatTokenType": []}, {"SnowflakeSession": []}]


def test_error_bodies_of_3_6_are_described(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    assert set(schemas["ServiceError"]["properties"]) == {"message", "code"}
    detail = schemas["ValidationErrorBody"]["properties"]["detail"]
    assert detail["items"] == {"$ref": "#/components/schemas/ValidationErrorDetail"}
    assert set(schemas["ValidationErrorDetail"]["properties"]) == {"loc", "msg", "type"}
    for name in ("ClientError", "ServerError"):
        response = spec["components"]["responses"][name]
        assert response["x-ct-error-body"] == {"$ref": "#/components/schemas/ErrorBody"}
        assert "x-snowflake-request-id" in response["headers"]


def test_every_operation_payload_is_a_named_schema(spec: dict[str, Any]) -> None:
    payload = spec["components"]["schemas"]["OperationRequest"]["properties"]["payload"]
    named = {ref["$ref"].rsplit("/", 1)[1] for ref in payload["anyOf"]}
    assert named == {
        "ForwardPayload",
        "WeightSyncPayload",
        "BootstrapRouterReplayPayload",
        "RouterReplayDiscardPayload",
        "ResetPrefixCachePayload",
        "CancelRequestPayload",
        "TailLogsPayload",
        "OperationPayload",
    }
    operation_types = set(spec["components"]["schemas"]["OperationType"]["enum"])
    assert "tail-logs" in operation_types and "weight-sync" in operation_types


def _snake(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


@pytest.mark.parametrize("operation_id", sorted(OPERATIONS))
def test_generated_package_has_every_operation(operation_id: str) -> None:
    _, _, tag = OPERATIONS[operation_id]
    module = importlib.import_module(f"ct_api.api.{tag}")
    assert module.OPERATIONS[operation_id].__name__ == _snake(operation_id)


def test_generated_models_are_typeddicts_of_the_schemas(spec: dict[str, Any]) -> None:
    """A schema's properties are the TypedDict's keys; those it does not require are NotRequired (the
    annotations stay strings at run time, so the check reads them as a type checker does)."""
    from ct_api import models

    for name in ("CreateJobRequest", "JobRecord", "RequestStatus", "Run"):
        schema = spec["components"]["schemas"][name]
        annotations = getattr(models, name).__annotations__
        required = set(schema.get("required") or [])
        assert set(annotations) == set(schema.get("properties") or {}), name
        texts = {key: str(getattr(value, "__forward_arg__", value)) for key, value in annotations.items()}
        optional = {key for key, text in texts.items() if text.startswith("NotRequired[")}
        assert optional == set(annotations) - required, name


def test_inline_object_detector_flags_an_inline_schema() -> None:
    operation = {
        "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {}}}}},
        "responses": {
            "200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/X"}}}}
        },
    }
    assert list(_inline_objects(operation, "op")) == ["op/requestBody/content/application/json/schema"]
    assert list(_inline_objects({"type": ["object", "null"]}, "nullable")) == ["nullable"]

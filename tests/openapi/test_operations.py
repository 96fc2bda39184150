"""The generated operations: one typed function per operation of the spec, each naming the retry rule
the spec gives it, and each sending its own method, path, query and body through ct's real transport
to a real local server (a recorder in front of the client notes what each function asked for)."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from ct_api.routes import ROUTES
from ct_testing import wait_until

from ct_core.client import CortexTrainingClient
from ct_core.http import retry as _retry
from ct_core.http.transport import Transport

REPO_ROOT = Path(__file__).resolve().parents[2]
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
DB, SCHEMA = "CT_OPS_DB", "PUBLIC"
BODY = {
    "sub_job_configs": [
        {
            "job_type": "training",
            "model_name": "Qwen/Qwen3-1.7B",
            "training_config": {"n_gpus": 1, "max_seq_len": 64, "train_batch_size": 1},
        },
    ],
    "comment": "generated operations test",
}
# Bounds a hang only: the fast test server runs a new job within a second or two.
RUNNING_DEADLINE_S = 120.0


def _spec_operations(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        operation["operationId"]: operation
        for item in spec["paths"].values()
        for method in HTTP_METHODS
        if (operation := item.get(method)) is not None
    }


def _tag_modules() -> dict[str, Any]:
    folder = REPO_ROOT / "generated" / "ct_api" / "api"
    tags = sorted(path.name for path in folder.iterdir() if (path / "__init__.py").is_file())
    return {tag: importlib.import_module(f"ct_api.api.{tag}") for tag in tags}


def _snake(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


def test_every_operation_has_exactly_one_generated_function(spec: dict[str, Any]) -> None:
    operations = _spec_operations(spec)
    found: dict[str, list[str]] = {}
    for tag, module in _tag_modules().items():
        for operation_id, function in module.OPERATIONS.items():
            found.setdefault(operation_id, []).append(f"{tag}.{function.__name__}")
            assert function.__name__ == _snake(operation_id)
            assert tag == operations[operation_id]["tags"][0]
        # Nothing else public: the operations, plus the event-stream form of those that may stream.
        public = {
            name
            for name, value in vars(module).items()
            if inspect.isfunction(value) and value.__module__ == module.__name__
        }
        events = {
            f"{_snake(op)}_events"
            for op in module.OPERATIONS
            if "text/event-stream" in operations[op]["responses"].get("200", {}).get("content", {})
        }
        assert public == {function.__name__ for function in module.OPERATIONS.values()} | events
    assert sorted(found) == sorted(operations)
    assert {op: places for op, places in found.items() if len(places) != 1} == {}


def test_every_operation_names_a_known_retry_rule_and_its_function_passes_it(spec: dict[str, Any]) -> None:
    modules = _tag_modules()
    for operation_id, operation in _spec_operations(spec).items():
        rule = operation.get("x-ct-retry")
        assert rule in _retry.RULES, f"{operation_id}: x-ct-retry {rule!r} is not a rule of ct_core"
        function = modules[operation["tags"][0]].OPERATIONS[operation_id]
        source = inspect.getsource(function)
        assert f'"{operation_id}",' in source
        if "transport.stream(" not in source:
            assert f'retry="{rule}",' in source, operation_id


def _api_error(status: int, code: str | None = None) -> BaseException:
    from ct_core.errors import APIError

    return APIError(f"HTTP {status}", status_code=status, code=code)


def _connection_error(*, never_sent: bool) -> BaseException:
    from ct_core.errors import CTConnectionError

    return CTConnectionError("connection failed", never_sent=never_sent)


#: failure -> the rules that send the request again after it (job "j" was created moments ago).
RULE_DECISIONS: list[tuple[str, Any, set[str]]] = [
    (
        "never sent",
        lambda: _connection_error(never_sent=True),
        {"read", "settled", "idempotent-key", "conflict-final", "nothing-ran", "never-sent"},
    ),
    (
        "lost after sending",
        lambda: _connection_error(never_sent=False),
        {"read", "settled", "idempotent-key", "conflict-final"},
    ),
    ("500", lambda: _api_error(500), {"read", "settled", "idempotent-key", "conflict-final"}),
    (
        "503",
        lambda: _api_error(503),
        {"read", "settled", "idempotent-key", "conflict-final", "nothing-ran"},
    ),
    ("409 restarting zone", lambda: _api_error(409), {"read", "settled", "idempotent-key", "nothing-ran"}),
    ("409 lasting conflict", lambda: _api_error(409, "517604"), set()),
    (
        "404 of the just-created job",
        lambda: _api_error(404, "517601"),
        {"read", "idempotent-key", "conflict-final", "nothing-ran"},
    ),
    ("400", lambda: _api_error(400, "517602"), set()),
]


@pytest.mark.parametrize(
    ("failure", "make", "retried_by"), RULE_DECISIONS, ids=[row[0] for row in RULE_DECISIONS]
)
def test_each_named_rule_decides_as_documented(failure: str, make: Any, retried_by: set[str]) -> None:
    recent = _retry.RecentJobs()
    recent.add("j")
    error = make()
    decided = {name for name in _retry.RULES if _retry.rule(name, job_id="j", recent_jobs=recent)(error)}
    assert decided == retried_by, failure


def test_a_named_rule_decides_the_retries_of_a_request(local_server: Any) -> None:
    """`retry` names the rule when no predicate is given: a just-created job's 404 is retried under
    `read`, never under `never` or `settled`."""
    waits: list[float] = []
    transport = Transport(
        local_server.base_url,
        max_retries=2,
        sleep=waits.append,
        path_defaults={"database": DB, "schema": SCHEMA, "endpoint": "cortex-training"},
    )
    try:
        transport.recent_jobs.add("not-a-job")
        for name, retried in (("never", False), ("settled", False), ("read", True)):
            waits.clear()
            with pytest.raises(Exception) as caught:
                transport.request("getJob", params={"job_id": "not-a-job"}, retry=name, job_id="not-a-job")
            assert getattr(caught.value, "status_code", None) == 404
            assert len(waits) == (2 if retried else 0), name
        with pytest.raises(ValueError, match="unknown retry rule 'sometimes'"):
            transport.request("getJob", params={"job_id": "x"}, retry="sometimes")
    finally:
        transport.close()


class Recorder:
    """The client as the operations' transport, noting each call (operation, options) it forwards."""

    def __init__(self, client: CortexTrainingClient) -> None:
        self.client = client
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def request(self, operation: str, **options: Any) -> Any:
        self.calls.append((operation, options))
        return self.client.request(operation, **options)

    def stream(self, operation: str, **options: Any) -> AbstractContextManager[Any]:
        self.calls.append((operation, options))
        return self.client.stream(operation, **options)

    def sent(self) -> tuple[str, str, dict[str, Any]]:
        """The method, filled path and query of the last call, as the request line will carry them."""
        operation, options = self.calls[-1]
        method = ROUTES[operation][0]
        url = self.client.url_for(operation, **(options.get("params") or {}))
        path = url.removeprefix(self.client.base_url)
        return method, path, {k: v for k, v in (options.get("query") or {}).items() if v is not None}


@pytest.fixture
def recorder(local_server: Any) -> Iterator[Recorder]:
    client = CortexTrainingClient(base_url=local_server.base_url, database=DB, schema=SCHEMA)
    try:
        yield Recorder(client)
    finally:
        client.close()


def test_control_plane_functions_send_their_routes(recorder: Recorder) -> None:
    from ct_api.api import control_plane

    prefix = f"/api/v2/databases/{DB}/schemas/{SCHEMA}/cortex-training"
    created = control_plane.create_job(recorder, body=BODY)  # type: ignore[arg-type]
    job_id = created["job_id"]
    assert recorder.sent() == ("POST", prefix, {})
    assert recorder.calls[-1][1]["json_body"] == BODY
    assert recorder.calls[-1][1]["retry"] == "never-sent"

    job = wait_until(
        lambda: (job := control_plane.get_job(recorder, job_id=job_id))["status"] == "running" and job,
        timeout=RUNNING_DEADLINE_S,
        message="the job never ran",
    )
    assert recorder.sent() == ("GET", f"{prefix}/{job_id}", {})
    assert recorder.calls[-1][1]["job_id"] == job_id, "the 404 grace knows the job"
    assert job["job_id"] == job_id

    listed = control_plane.list_jobs(recorder, status="running")
    assert recorder.sent() == ("GET", prefix, {"status": "running"})
    assert job_id in {row["job_id"] for row in listed["jobs"]}

    checkpoints = control_plane.list_checkpoints(recorder, job_id=job_id)
    assert recorder.sent() == ("GET", f"{prefix}/{job_id}/checkpoints", {})
    assert checkpoints["checkpoints"] == []

    # A sub-job id is one percent-encoded path segment.
    with pytest.raises(Exception) as caught:
        control_plane.get_job(recorder, job_id="abc:training:0", max_retries=0)
    assert recorder.sent()[1] == f"{prefix}/abc%3Atraining%3A0"
    assert getattr(caught.value, "status_code", None) == 404

    control_plane.cancel_job(recorder, job_id=job_id)
    assert recorder.sent() == ("POST", f"{prefix}/{job_id}:cancel", {})
    assert recorder.calls[-1][1]["retry"] == "conflict-final"


def test_data_plane_functions_send_their_routes(recorder: Recorder) -> None:
    from ct_api.api import control_plane, data_plane

    from ct_core.data.chunk_groups import ChunkPlan
    from ct_core.data.payloads import build_forward_backward_payload

    prefix = f"/api/v2/databases/{DB}/schemas/{SCHEMA}/cortex-training"
    job_id = control_plane.create_job(recorder, body=BODY)["job_id"]  # type: ignore[arg-type]
    wait_until(
        lambda: control_plane.get_job(recorder, job_id=job_id)["status"] == "running",
        timeout=RUNNING_DEADLINE_S,
        message="the job never ran",
    )

    frame = build_forward_backward_payload({"texts": ["a short text"], "tokenizer": "byte", "max_length": 16})
    # The frame as the data plane sends it: the request chunks of a fresh chunk group, in order.
    plan = ChunkPlan(frame, operation="fwd-bwd", max_bytes=len(frame) * 4, force_chunk=True)
    for index in range(len(plan)):
        chunk = plan.body(index)
        accepted = data_plane.forward_backward(
            recorder, job_id=job_id, content=chunk.stream, length=chunk.size
        )
    assert recorder.sent() == ("POST", f"{prefix}/{job_id}/forward-backward", {})
    assert recorder.calls[-1][1]["content_type"] == "application/octet-stream"
    assert "request_id" in accepted, accepted
    request_id = accepted["request_id"]

    status = data_plane.get_request_status(recorder, job_id=job_id, request_id=request_id, max_events=5)
    assert recorder.sent() == ("GET", f"{prefix}/{job_id}/requests/{request_id}", {"max_events": 5})
    assert status["request_id"] == request_id

    stepped = data_plane.step(recorder, job_id=job_id, body={"learning_rate": 1e-4}, trace="[ct step] call=1")
    assert recorder.sent() == ("POST", f"{prefix}/{job_id}/step", {})
    assert recorder.calls[-1][1]["json_body"] == {"learning_rate": 1e-4}
    assert recorder.calls[-1][1]["retry"] == "nothing-ran"
    assert recorder.calls[-1][1]["trace"] == "[ct step] call=1"
    assert isinstance(stepped["request_id"], str) and stepped["request_id"]
    control_plane.cancel_job(recorder, job_id=job_id)


def test_generated_package_imports_only_the_standard_library_and_itself() -> None:
    """No httpx, attrs or ct_core anywhere in generated/, not even for a type checker: nothing there
    can form an import cycle with ct_core, and importing an operation module costs nothing else."""
    import ast

    allowed = {"__future__", "typing", "collections", "contextlib", "ct_api"}
    found: dict[str, set[str]] = {}
    for path in sorted((REPO_ROOT / "generated" / "ct_api").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = {node.module or ""}
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(path.name)
    assert set(found) <= allowed, {name: files for name, files in found.items() if name not in allowed}
    # At run time an operation module imports only typing (and its own package): the rest is for checkers.
    module = importlib.import_module("ct_api.api.data_plane")
    assert {name for name, value in vars(module).items() if inspect.ismodule(value)} == set()


class _Noted:
    """Notes the call and answers `answer` (for the few checks that need no server at all)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def request(self, operation: str, **options: Any) -> Any:
        self.calls.append((operation, options))
        answer = self.answer

        class _Answer:
            status_code = 200

            def json(self) -> Any:
                return answer

        return _Answer()


def test_binary_bodies_travel_as_content_with_the_spec_content_type() -> None:
    from ct_api.api import data_plane, runs

    frame = b"\x08\x00\x00\x00\x00\x00\x00\x00{}      "
    noted = _Noted({"request_id": "r"})
    data_plane.generate(noted, job_id="job", content=frame, sub_job_id="job:sampling:1")  # type: ignore[arg-type]
    operation, options = noted.calls[-1]
    assert operation == "generate"
    assert options["content"] == frame and options["content_type"] == "application/octet-stream"
    assert options["query"] == {"sub_job_id": "job:sampling:1"}
    assert "json_body" not in options

    # The JSONL upload keeps the spec's own content type (the generator's config maps it to bytes).
    runs.build_dataset(noted, content=b'{"text": "a"}\n', text_field="text", label_field=["a", "b"])  # type: ignore[arg-type]
    operation, options = noted.calls[-1]
    assert operation == "buildDataset" and options["content_type"] == "application/x-ndjson"
    assert options["query"]["label_field"] == ["a", "b"] and options["retry"] == "nothing-ran"

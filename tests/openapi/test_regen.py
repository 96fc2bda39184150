"""Regenerating the typed transport: a spec change shows up as a new typed function that works over
real HTTP, `regen --check` catches hand edits and stale files, and `regen --output` repairs them."""

from __future__ import annotations

import importlib
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

# Test modules are not importable from each other under --import-mode=importlib, so the paths are here too.
REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC_PATH = REPO_ROOT / "openapi" / "cortex-training.yaml"
GENERATED_PACKAGE = REPO_ROOT / "generated" / "ct_api"
PREFIX = "/api/v2/databases/{database}/schemas/{schema}/{endpoint}"

# A new operation as a spec author would add it: a path, an operationId, and named schemas.
PAUSE_PATH = PREFIX + "/{job_id}:pause"
PAUSE_OPERATION = {
    "operationId": "pauseJob",
    "x-ct-retry": "nothing-ran",
    "tags": ["control_plane"],
    "summary": "Pause a job.",
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PauseRequest"}}},
    },
    "responses": {
        "200": {
            "description": "Paused.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PauseResult"}}},
        },
        "4XX": {"$ref": "#/components/responses/ClientError"},
    },
}
PAUSE_SCHEMAS = {
    "PauseRequest": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"reason": {"type": "string"}},
    },
    "PauseResult": {
        "type": "object",
        "additionalProperties": True,
        "properties": {"job_id": {"type": "string"}, "paused": {"type": "boolean"}},
    },
}


class _Recorder(BaseHTTPRequestHandler):
    """Answers every POST with a PauseResult and remembers what it was sent."""

    seen: list[dict[str, Any]]

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"null")
        type(self).seen.append(
            {"path": self.path, "body": body, "content_type": self.headers.get("Content-Type")}
        )
        answer = json.dumps({"job_id": "j-1", "paused": True, "until": "later"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("x-snowflake-request-id", "req-123")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass


@pytest.fixture
def recording_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    handler = type("Recorder", (_Recorder,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def fresh_package(regen: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package generated from the committed spec, once per module."""
    output = tmp_path_factory.mktemp("fresh") / "ct_api"
    regen.generate(output)
    return output


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_differences_lists_missing_unexpected_and_changed_files(regen: ModuleType, tmp_path: Path) -> None:
    expected = _tree(tmp_path / "expected", {"a.py": "a\n", "api/b.py": "b\n", "api/c.py": "c\n"})
    actual = _tree(
        tmp_path / "actual",
        {"a.py": "a\n", "api/b.py": "B\n", "api/d.py": "d\n", "__pycache__/a.cpython-311.pyc": "x"},
    )
    assert regen.differences(expected, actual) == [
        "differs: api/b.py",
        "missing: api/c.py",
        "unexpected: api/d.py",
    ]
    assert regen.differences(expected, expected) == []


@pytest.mark.slow
def test_committed_package_matches_the_spec(regen: ModuleType, fresh_package: Path) -> None:
    assert regen.differences(fresh_package, GENERATED_PACKAGE) == []


@pytest.mark.slow
def test_spec_change_regenerates_a_new_typed_function(
    regen: ModuleType,
    tmp_path: Path,
    load_package: Callable[[Path, str], ModuleType],
    recording_server: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    document = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    document["paths"][PAUSE_PATH] = {
        "parameters": [
            {"$ref": f"#/components/parameters/{name}"}
            for name in ("Database", "Schema", "Endpoint", "JobId")
        ],
        "post": PAUSE_OPERATION,
    }
    document["components"]["schemas"].update(PAUSE_SCHEMAS)
    changed_spec = tmp_path / "cortex-training.yaml"
    changed_spec.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")

    output = tmp_path / "out" / "ct_api"
    regen.regenerate(output, spec=changed_spec)
    load_package(output, "ct_api_spec_change")
    control_plane = importlib.import_module("ct_api_spec_change.api.control_plane")
    routes = importlib.import_module("ct_api_spec_change.routes")
    assert routes.ROUTES["pauseJob"] == ("POST", PAUSE_PATH, "control_plane")

    # ct's transport over real HTTP, bound to the new route table (the committed one lacks pauseJob).
    from ct_core.http import routes as route_module
    from ct_core.http.transport import Transport

    base_url, seen = recording_server
    transport = Transport(
        base_url, path_defaults={"database": "DB", "schema": "PUBLIC", "endpoint": "cortex-training"}
    )
    monkeypatch.setattr(route_module, "ROUTES", routes.ROUTES)
    route_module._template.cache_clear()
    try:
        result = control_plane.pause_job(
            transport, job_id="b1fcb345:training:0", body={"reason": "maintenance"}
        )
    finally:
        transport.close()
        route_module._template.cache_clear()
    assert control_plane.OPERATIONS["pauseJob"] is control_plane.pause_job
    assert (
        result == {"job_id": "b1fcb345:training:0", "paused": True, "until": "later"}
        or result["paused"] is True
    )
    assert seen == [
        {
            "path": "/api/v2/databases/DB/schemas/PUBLIC/cortex-training/b1fcb345%3Atraining%3A0:pause",
            "body": {"reason": "maintenance"},
            "content_type": "application/json",
        }
    ]
    # The committed package is untouched by a regeneration elsewhere.
    with pytest.raises(KeyError):
        importlib.import_module("ct_api.api.control_plane").OPERATIONS["pauseJob"]


@pytest.mark.slow
def test_check_detects_hand_edits_and_output_repairs_them(
    regen: ModuleType, fresh_package: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "ct_api"
    shutil.copytree(GENERATED_PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    edited = copy / "api" / "control_plane" / "__init__.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# a hand edit\n", encoding="utf-8")
    (copy / "models" / "hand_written.py").write_text("X = 1\n", encoding="utf-8")
    (copy / "types.py").unlink()

    assert regen.main(["--check", str(copy)]) == regen.EXIT_DRIFT
    report = capsys.readouterr().err
    assert "run `make regen`" in report
    assert "differs: api/control_plane/__init__.py" in report
    assert "unexpected: models/hand_written.py" in report
    assert "missing: types.py" in report

    assert regen.main(["--output", str(copy)]) == 0
    assert regen.differences(fresh_package, copy) == []


@pytest.mark.slow
def test_a_broken_spec_fails_without_touching_the_output(
    regen: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    operation = document["paths"][PREFIX]["post"]
    operation["requestBody"]["content"]["application/json"]["schema"] = {"$ref": "#/components/schemas/Nope"}
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    output = _tree(tmp_path / "ct_api", {"__init__.py": "kept\n"})

    assert regen.main(["--output", str(output), "--spec", str(broken)]) == regen.EXIT_SETUP
    assert "openapi-python-client failed" in capsys.readouterr().err
    assert (output / "__init__.py").read_text(encoding="utf-8") == "kept\n"

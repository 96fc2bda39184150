"""`client.datasets` and `client.runs` (ct_core.runs): requests, errors, waits and followers.

The runs service itself is tested end to end in ct_plugins/runs/tests. Here the SDK is checked
on its own: what it refuses before sending, how the service's error body maps to exceptions, and
the exact sequence of reads its waits and followers make. For the last, a loopback HTTP server
answers a script of contract-shaped answers: only a script can place a point between the follower's
status read and its last metrics read, the case that decides whether a follower loses data.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from ct_core import CortexTrainingClient
from ct_core.context import OperationsContext
from ct_core.errors import (
    APIError,
    BadRequestError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    RunWaitTimeout,
    ServerError,
    ValidationError,
    api_error_from_response,
)
from ct_core.runs import DatasetsAPI, RunsAPI, load_run_spec
from ct_core.runs.datasets import read_source
from ct_core.runs.polling import RUNS_RULE

DB, SCHEMA = "RUNS_DB", "PUBLIC"
PREFIX = f"/api/v2/databases/{DB}/schemas/{SCHEMA}/cortex-training"
RUN_ID = "run_01JD3QA2F5XK9V3B8C1D6E0G7H"
DATASET_ID = "ds_01JD3Q9W6Y6Z0R8K5T2M4N7P1A"


# --- the service's error body -----------------------------------------------------------------------


def _answer(status: int, body: Any) -> httpx.Response:
    request = httpx.Request("POST", f"http://127.0.0.1{PREFIX}/runs")
    return httpx.Response(status, json=body, request=request)


def test_invalid_argument_names_the_field_and_stays_a_bad_request() -> None:
    body = {"message": "epochs must be at least 1", "code": "invalid_argument", "field": "trainer.epochs"}
    error = api_error_from_response(_answer(400, body))
    assert type(error) is InvalidArgumentError
    assert isinstance(error, BadRequestError)
    assert (error.status_code, error.code, error.field) == (400, "invalid_argument", "trainer.epochs")
    assert str(error).startswith("epochs must be at least 1 (invalid_argument); HTTP 400")
    assert error.hint is not None and "trainer.epochs" in error.hint


def test_failed_precondition_without_a_field() -> None:
    body = {"message": "dataset ds_1 failed its leakage gates", "code": "failed_precondition"}
    error = api_error_from_response(_answer(400, body))
    assert type(error) is FailedPreconditionError
    assert error.field is None and error.hint is None


def test_other_codes_keep_the_status_classes() -> None:
    assert (
        type(api_error_from_response(_answer(404, {"message": "no run", "code": "not_found"})))
        is NotFoundError
    )
    assert (
        type(api_error_from_response(_answer(400, {"message": "bad", "code": "517602"}))) is BadRequestError
    )
    assert type(api_error_from_response(_answer(500, {"message": "x", "code": "internal"}))) is ServerError


def test_refusal_codes_are_final_and_service_failures_are_retried() -> None:
    assert not RUNS_RULE(api_error_from_response(_answer(404, {"message": "m", "code": "not_found"})))
    assert not RUNS_RULE(api_error_from_response(_answer(409, {"message": "m", "code": "already_exists"})))
    assert RUNS_RULE(api_error_from_response(_answer(500, {"message": "m", "code": "internal"})))
    assert RUNS_RULE(api_error_from_response(_answer(503, None)))


# --- what is refused before anything is sent --------------------------------------------------------


def test_a_spec_file_that_is_not_json_is_named_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text('{\n  "dataset_id": "ds_1",\n}\n', encoding="utf-8")
    with pytest.raises(ValidationError, match=r"spec\.json is not valid JSON: .* at line 3, column 1"):
        load_run_spec(path)
    with pytest.raises(ValidationError, match="does not exist"):
        load_run_spec(tmp_path / "missing.json")
    with pytest.raises(ValidationError, match="is a folder"):
        load_run_spec(tmp_path)
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValidationError, match=r"must be a JSON object .* got a list"):
        load_run_spec(str(path))
    path.write_text('{"dataset_id": "ds_1"}', encoding="utf-8")
    assert load_run_spec(path) == {"dataset_id": "ds_1"}
    assert load_run_spec({"dataset_id": "ds_2"}) == {"dataset_id": "ds_2"}


def test_a_dataset_source_must_be_a_readable_non_empty_file_or_bytes(tmp_path: Path) -> None:
    assert read_source(b'{"text": "a"}\n') == b'{"text": "a"}\n'
    with pytest.raises(ValidationError, match="does not exist"):
        read_source(tmp_path / "none.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n \n", encoding="utf-8")
    with pytest.raises(ValidationError, match="is empty"):
        read_source(empty)
    with pytest.raises(ValidationError, match="file path or bytes"):
        read_source(42)  # type: ignore[arg-type]


@pytest.fixture
def offline_client() -> Iterator[CortexTrainingClient]:
    # Nothing listens on port 9: a call that got as far as sending would fail with a connection error.
    with CortexTrainingClient(base_url="http://127.0.0.1:9", database=DB, schema=SCHEMA, max_retries=0) as c:
        yield c


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"val_fraction": 1.0}, "val_fraction must be greater than 0 and at most 0.5"),
        ({"val_fraction": 0.75}, "val_fraction must be greater than 0 and at most 0.5"),
        ({"val_fraction": "0.1"}, "val_fraction must be greater than 0 and at most 0.5, got '0.1'"),
        ({"text_field": ""}, "text_field must be a non-empty string"),
        ({"label_fields": ["topic", ""]}, "label fields must be non-empty strings"),
        ({"seed": 1.5}, "seed must be an integer"),
    ],
)
def test_build_options_are_checked_before_the_upload(
    offline_client: CortexTrainingClient, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        offline_client.datasets.build(b'{"text": "a"}\n', **options)


def test_run_arguments_are_checked_before_sending(offline_client: CortexTrainingClient) -> None:
    runs = offline_client.runs
    with pytest.raises(ValidationError, match="unknown run status 'done'"):
        runs.list(status="done")
    with pytest.raises(ValidationError, match="limit must be a positive integer"):
        runs.list(limit=0)
    with pytest.raises(ValidationError, match="after_step must be an integer"):
        runs.metrics(RUN_ID, after_step="3")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="after must be a non-negative integer"):
        runs.logs(RUN_ID, after=-1)
    with pytest.raises(ValidationError, match="a run id is needed"):
        runs.get("")
    with pytest.raises(ValidationError, match="poll must be a positive number"):
        next(runs.follow_metrics(RUN_ID, poll=0))
    with pytest.raises(ValidationError, match="timeout must be a positive number"):
        runs.wait(RUN_ID, timeout=0)


def test_the_client_hands_out_views_bound_to_itself(offline_client: CortexTrainingClient) -> None:
    # The views get the client's context (its request path and poll settings), not the client.
    assert isinstance(offline_client.datasets, DatasetsAPI) and isinstance(offline_client.runs, RunsAPI)
    for view in (offline_client.datasets, offline_client.runs):
        assert isinstance(view.client, OperationsContext) and view.client is not offline_client
        assert view.client.poll_interval == offline_client.poll_interval
        assert view.client.sleep is offline_client.sleep
    twin = offline_client.for_job({"database_name": "OTHER", "schema_name": "S2"})
    assert twin.runs.client is not offline_client.runs.client
    assert twin.url_for("getRun", run_id=RUN_ID).endswith(
        "/databases/OTHER/schemas/S2/cortex-training/runs/" + RUN_ID
    )


# --- reads, waits and followers against a scripted loopback server ----------------------------------


@dataclass
class Script:
    """Answers per (method, path below the prefix), served in order; the last one repeats."""

    answers: dict[tuple[str, str], list[tuple[int, Any]]] = field(default_factory=dict)
    seen: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, method: str, path: str, *answers: tuple[int, Any]) -> None:
        self.answers.setdefault((method, path), []).extend(answers)

    def next(self, method: str, path: str) -> tuple[int, Any]:
        with self.lock:
            queue = self.answers.get((method, path))
            if not queue:
                return 404, {"message": f"nothing scripted for {method} {path}", "code": "not_found"}
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def calls(self, path: str) -> list[dict[str, Any]]:
        return [call for call in self.seen if call["path"] == path]


@pytest.fixture
def script() -> Iterator[tuple[Script, str]]:
    plan = Script()

    class Handler(http.server.BaseHTTPRequestHandler):
        def _serve(self) -> None:
            target = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            below = target.path.removeprefix(PREFIX) if target.path.startswith(PREFIX) else target.path
            with plan.lock:
                plan.seen.append(
                    {
                        "method": self.command,
                        "path": below,
                        "query": parse_qs(target.query, keep_blank_values=True),
                        "content_type": self.headers.get("content-type"),
                        "body": body,
                    }
                )
            status, answer = plan.next(self.command, below)
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield plan, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Sleeps:
    calls: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def _client(base_url: str, sleep: Sleeps, **options: Any) -> CortexTrainingClient:
    return CortexTrainingClient(
        base_url=base_url, database=DB, schema=SCHEMA, poll_interval=0.01, sleep=sleep, **options
    )


def _run(status: str, **fields: Any) -> dict[str, Any]:
    return {"run_id": RUN_ID, "status": status, **fields}


def test_follow_metrics_keeps_points_written_after_the_run_ended(script: tuple[Script, str]) -> None:
    plan, base_url = script
    metrics = f"/runs/{RUN_ID}/metrics"
    plan.add(
        "GET",
        metrics,
        (200, {"series": {"train_loss": [[0, 2.0], [1, 1.9]]}, "cursor": 1}),
        (200, {"series": {}, "cursor": 1}),
        (200, {"series": {"train_loss": [[2, 1.8]], "lr": [[2, 0.001]]}, "cursor": 2}),
        (200, {"series": {"train_loss": []}, "cursor": 2}),
        # Written after the status read below said "succeeded", before the follower's last read.
        (200, {"series": {"val_loss": [[3, 1.7]]}, "cursor": 3}),
        (200, {"series": {}, "cursor": 3}),
    )
    plan.add("GET", f"/runs/{RUN_ID}", (200, _run("running")), (200, _run("succeeded")))
    sleeps = Sleeps()
    with _client(base_url, sleeps) as client:
        pages = list(client.runs.follow_metrics(RUN_ID, poll=0.5))
    assert [page["cursor"] for page in pages] == [1, 2, 3]
    assert pages[2]["series"]["val_loss"] == [[3, 1.7]]
    assert [call["query"]["after_step"] for call in plan.calls(metrics)] == [
        ["-1"],
        ["1"],
        ["1"],
        ["2"],
        ["2"],
        ["3"],
    ]
    # One wait: after the empty page while the run was still running; none once it had ended.
    assert sleeps.calls == [0.5]


def test_follow_logs_yields_entries_one_by_one_and_ends_with_the_run(script: tuple[Script, str]) -> None:
    plan, base_url = script
    logs = f"/runs/{RUN_ID}/logs"
    entry = {"timestamp": "2026-01-01T00:00:00Z", "severity": "INFO", "message": "step 1"}
    plan.add(
        "GET",
        logs,
        (200, {"logs": [{**entry, "seq": 1}, {**entry, "seq": 2}], "cursor": 2}),
        (200, {"logs": [], "cursor": 2}),
        (200, {"logs": [], "cursor": 2}),
    )
    plan.add("GET", f"/runs/{RUN_ID}", (200, _run("cancelled")))
    with _client(base_url, Sleeps()) as client:
        entries = list(client.runs.follow_logs(RUN_ID, structured=True))
    assert [e["seq"] for e in entries] == [1, 2]
    queries = [call["query"] for call in plan.calls(logs)]
    assert [q["after"] for q in queries] == [["0"], ["2"], ["2"]]
    assert all(q["structured"] == ["true"] for q in queries)


def test_a_follower_refuses_a_cursor_that_does_not_move(script: tuple[Script, str]) -> None:
    plan, base_url = script
    plan.add("GET", f"/runs/{RUN_ID}/logs", (200, {"logs": [{"message": "again"}], "cursor": 0}))
    with _client(base_url, Sleeps()) as client, pytest.raises(APIError, match="without moving its cursor"):
        list(client.runs.follow_logs(RUN_ID))


def test_wait_polls_until_the_run_has_ended(script: tuple[Script, str]) -> None:
    plan, base_url = script
    plan.add("GET", f"/runs/{RUN_ID}", (200, _run("queued")), (200, _run("running")), (200, _run("failed")))
    sleeps = Sleeps()
    with _client(base_url, sleeps) as client:
        run = client.runs.wait(RUN_ID)
    assert run["status"] == "failed"
    assert len(sleeps.calls) == 2


def test_a_wait_that_runs_out_of_time_keeps_the_last_record(script: tuple[Script, str]) -> None:
    plan, base_url = script
    plan.add("GET", f"/runs/{RUN_ID}", (200, _run("running", step=7)))
    # Real sleeps: the deadline is measured on the monotonic clock, which an injected sleep does not move.
    client = CortexTrainingClient(base_url=base_url, database=DB, schema=SCHEMA, poll_interval=0.01)
    with client, pytest.raises(RunWaitTimeout, match=f"run {RUN_ID} is still running after 0.05s") as caught:
        client.runs.wait(RUN_ID, timeout=0.05)
    assert caught.value.last["step"] == 7
    assert isinstance(caught.value, TimeoutError)


def test_a_refusal_is_raised_after_one_request(script: tuple[Script, str]) -> None:
    plan, base_url = script
    refusal = {
        "message": "dataset ds_1 failed its leakage gates",
        "code": "failed_precondition",
        "field": "dataset_id",
    }
    plan.add("POST", "/runs", (400, refusal))
    plan.add("GET", f"/runs/{RUN_ID}", (404, {"message": "run not found", "code": "not_found"}))
    with _client(base_url, Sleeps()) as client:
        with pytest.raises(FailedPreconditionError) as caught:
            client.runs.start({"dataset_id": "ds_1"})
        assert caught.value.field == "dataset_id"
        with pytest.raises(NotFoundError):
            client.runs.get(RUN_ID)
    assert len(plan.calls("/runs")) == 1
    assert len(plan.calls(f"/runs/{RUN_ID}")) == 1
    assert json.loads(plan.calls("/runs")[0]["body"]) == {"dataset_id": "ds_1"}


def test_build_uploads_the_file_as_jsonl_and_waits_for_the_build(
    script: tuple[Script, str], tmp_path: Path
) -> None:
    plan, base_url = script
    source = tmp_path / "corpus.jsonl"
    source.write_bytes(b'{"text": "one"}\n{"text": "two"}\n')
    plan.add("POST", "/datasets", (202, {"dataset_id": DATASET_ID, "status": "building"}))
    plan.add(
        "GET",
        f"/datasets/{DATASET_ID}",
        (200, {"dataset_id": DATASET_ID, "status": "building"}),
        (200, {"dataset_id": DATASET_ID, "status": "failed", "violations": [{"gate": "exact_duplicate"}]}),
    )
    with _client(base_url, Sleeps()) as client:
        dataset = client.datasets.build(
            source, text_field="body", val_fraction=0.25, seed=3, name="demo", wait=True
        )
    assert dataset["status"] == "failed" and dataset["violations"]
    upload = plan.calls("/datasets")[0]
    assert upload["content_type"] == "application/x-ndjson"
    assert upload["body"] == source.read_bytes()
    assert upload["query"] == {
        "text_field": ["body"],
        "val_fraction": ["0.25"],
        "seed": ["3"],
        "name": ["demo"],
    }
    assert len(plan.calls(f"/datasets/{DATASET_ID}")) == 2


def test_build_repeats_label_field_once_per_label(script: tuple[Script, str]) -> None:
    plan, base_url = script
    plan.add("POST", "/datasets", (202, {"dataset_id": DATASET_ID, "status": "building"}))
    with _client(base_url, Sleeps()) as client:
        client.datasets.build(
            b'{"text": "a", "topic": "sky", "mood": "calm"}\n', label_fields=["topic", "mood"]
        )
    assert plan.calls("/datasets")[0]["query"]["label_field"] == ["topic", "mood"]


def test_list_cancel_and_model_use_their_operations(script: tuple[Script, str]) -> None:
    plan, base_url = script
    plan.add("GET", "/runs", (200, {"runs": [_run("succeeded"), "not a run"]}))
    plan.add("POST", f"/runs/{RUN_ID}:cancel", (200, _run("running", cancel_requested=True)))
    plan.add("GET", "/models/mdl_1", (200, {"model_id": "mdl_1", "status": "training"}))
    with _client(base_url, Sleeps()) as client:
        assert client.runs.list(status="succeeded", limit=5) == [_run("succeeded")]
        assert client.runs.cancel(RUN_ID)["cancel_requested"] is True
        assert client.runs.get_model("mdl_1")["status"] == "training"
    assert plan.calls("/runs")[0]["query"] == {"status": ["succeeded"], "limit": ["5"]}


def test_a_twins_runs_view_sends_to_the_twins_schema_and_waits_on_its_schedule(
    script: tuple[Script, str],
) -> None:
    plan, base_url = script
    other = f"/api/v2/databases/OTHER/schemas/S2/cortex-training/runs/{RUN_ID}"
    plan.add("GET", other, (200, _run("running")), (200, _run("succeeded")))
    sleeps = Sleeps()
    with _client(base_url, sleeps) as client:
        twin = client.for_job({"database_name": "OTHER", "schema_name": "S2"}).with_polling(0.25, 0.25)
        assert twin.runs.wait(RUN_ID, timeout=60)["status"] == "succeeded"
    assert [call["method"] for call in plan.calls(other)] == ["GET", "GET"]
    assert plan.calls(f"/runs/{RUN_ID}") == []
    assert sleeps.calls == [0.25]

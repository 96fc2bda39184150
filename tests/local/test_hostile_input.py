"""Hostile input against a real local server: nesting, names, create values, token ids, slow bodies.

The bad-input corpus is the hand-written bodies of tests/fixtures/bad_inputs.json plus the bodies
:func:`generated_bodies` makes (every field of a few valid bodies replaced by each of a list of
hostile values). It is sent to every JSON route over one kept-alive connection per route; no answer
may be a 500, the server log may hold no traceback, and the connection must still answer.
"""

from __future__ import annotations

import copy
import dataclasses
import gzip
import http.client
import json
import socket
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPResponse
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np
import pytest
from ct_testing import wait_until
from ct_testing.plugin import create_job, wait_for_job_status

from ct_core import wire
from ct_core.downloads.artifacts import run_uri
from ct_core.errors import ArtifactError
from ct_local.control.jobs import build_job
from ct_local.http.artifacts import folder_name
from ct_local.model import tinylm
from ct_local.settings import Identity, ServerSettings
from ct_local.storage.store import Store

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "bad_inputs.json"
DATABASE = "CT_HOSTILE_DB"
# The module server: short body timeout, and one GPU, held by the job the data-plane routes use, so
# the jobs the corpus creates stay pending instead of starting models.
BODY_TIMEOUT_S = 2.0
SERVER_SETTINGS = {
    "body_timeout_s": BODY_TIMEOUT_S,
    "capacity": {"H200": {"max_total_gpus": 1}},
}
# Upper bound on any wait; only a hang gets near it.
LIMIT_S = 120.0
SAMPLING = {"job_type": "sampling", "model_name": "Qwen/Qwen3-0.6B", "inference_config": {"n_gpus": 1}}


# --- the corpus ----------------------------------------------------------------------------------

#: Values a hostile caller puts in any field.
HOSTILE_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    2**63,
    10**30,
    1e308,
    -0.5,
    float("nan"),
    float("-inf"),
    "",
    "x",
    "x" * 300,
    "x" * 100_000,
    "a b/c",
    "../../etc/passwd",
    "名前é",
    "\ud800",
    "\u0000",
    [],
    {},
    [None, {}],
    {"": {"": [1]}},
    [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
]

#: Valid bodies of the JSON routes; the generator replaces each listed field by each hostile value.
BASE_BODIES: dict[str, tuple[dict[str, Any], list[tuple[str | int, ...]]]] = {
    "create": (
        {
            "experiment_name": "EXP",
            "hardware": "H200",
            "idle_timeout_seconds": 600,
            "sub_job_configs": [
                {
                    "job_type": "training",
                    "model_name": "Qwen/Qwen3-0.6B",
                    "dtype": "bfloat16",
                    "training_config": {
                        "optimizer": {"name": "AdamW", "lr": 1e-4},
                        "max_seq_len": 128,
                        "train_batch_size": 2,
                        "n_gpus": 1,
                        "peft_config": {"r": 4, "lora_alpha": 8, "target_modules": ["q_proj"]},
                    },
                }
            ],
        },
        [
            ("experiment_name",),
            ("hardware",),
            ("idle_timeout_seconds",),
            ("sub_job_configs",),
            ("sub_job_configs", 0),
            ("sub_job_configs", 0, "job_type"),
            ("sub_job_configs", 0, "model_name"),
            ("sub_job_configs", 0, "dtype"),
            ("sub_job_configs", 0, "seed"),
            ("sub_job_configs", 0, "source_checkpoint_info"),
            ("sub_job_configs", 0, "training_config"),
            ("sub_job_configs", 0, "training_config", "optimizer"),
            ("sub_job_configs", 0, "training_config", "optimizer", "lr"),
            ("sub_job_configs", 0, "training_config", "max_seq_len"),
            ("sub_job_configs", 0, "training_config", "train_batch_size"),
            ("sub_job_configs", 0, "training_config", "n_gpus"),
            ("sub_job_configs", 0, "training_config", "peft_config"),
            ("sub_job_configs", 0, "training_config", "peft_config", "r"),
        ],
    ),
    "statement": ({"statement": "SELECT CURRENT_USER()"}, [("statement",), ("database",)]),
    "step": ({"learning_rate": 1e-3}, [("learning_rate",)]),
    "load": ({"checkpoint_id": "cp_x", "source_job_id": "x"}, [("checkpoint_id",), ("source_job_id",)]),
    "operation": (
        {"operation_type": "tail-logs", "payload": {"max_lines": 5, "cursor": ""}},
        [("operation_type",), ("payload",), ("payload", "max_lines"), ("payload", "cursor"), ("sub_job_id",)],
    ),
    "chat": (
        {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 4},
        [("model",), ("messages",), ("messages", 0, "content"), ("max_completion_tokens",)],
    ),
}


@dataclasses.dataclass(frozen=True)
class BadInput:
    name: str
    body: bytes
    content_type: str = "application/json"


def _with(body: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(body)
    target: Any = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


def generated_bodies() -> Iterator[BadInput]:
    """Every listed field of every base body, replaced by every hostile value."""
    for route, (base, paths) in BASE_BODIES.items():
        for path in paths:
            for index, value in enumerate(HOSTILE_VALUES):
                text = json.dumps(_with(base, path, value))  # NaN and Infinity as Python writes them
                yield BadInput(f"{route} {'.'.join(map(str, path))} = value {index}", text.encode())


def fixture_bodies() -> Iterator[BadInput]:
    """The hand-written bodies of tests/fixtures/bad_inputs.json."""
    for entry in json.loads(FIXTURE.read_text(encoding="utf-8"))["inputs"]:
        if "parts" in entry:
            body = "".join(text * times for text, times in entry["parts"]).encode("utf-8", "surrogatepass")
        elif "hex" in entry:
            body = bytes.fromhex(entry["hex"])
        elif "hex_parts" in entry:
            body = b"".join(bytes.fromhex(text) * times for text, times in entry["hex_parts"])
        else:
            body = json.dumps(entry["json"]).encode()
        yield BadInput(entry["name"], body, entry.get("content_type", "application/json"))


def corpus() -> list[BadInput]:
    return [*fixture_bodies(), *generated_bodies()]


def test_the_corpus_holds_about_600_inputs() -> None:
    inputs = corpus()
    assert len(inputs) >= 600
    assert len({i.name for i in inputs}) == len(inputs)


# --- one kept-alive connection -------------------------------------------------------------------


@dataclasses.dataclass
class Answer:
    status: int
    body: bytes
    closes: bool

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One HTTP/1.1 connection over a plain socket: a test sees exactly when the server closes it."""

    def __init__(self, base_url: str) -> None:
        url = urlsplit(base_url)
        self.host = f"{url.hostname}:{url.port}"
        self.sock = socket.create_connection((url.hostname, url.port), timeout=LIMIT_S)

    def request(
        self, method: str, path: str, body: bytes = b"", content_type: str = "application/json"
    ) -> Answer:
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        self.sock.sendall(head.encode("latin-1") + body)
        response = HTTPResponse(self.sock, method=method)
        response.begin()
        data = response.read()
        return Answer(response.status, data, bool(response.will_close))

    def close(self) -> None:
        self.sock.close()


# --- the server and its jobs ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(module_local_server_factory: Any) -> Any:
    return module_local_server_factory(settings=SERVER_SETTINGS)


@pytest.fixture(scope="module")
def api(server: Any) -> Iterator[httpx.Client]:
    with server.http() as client:
        yield client


@pytest.fixture(scope="module")
def prefix(server: Any) -> str:
    return server.prefix(database=DATABASE, schema="S_" + uuid.uuid4().hex[:10].upper())


@pytest.fixture(scope="module")
def sampling_job(api: httpx.Client, prefix: str) -> str:
    """A running sampling-only job: the data-plane routes read their bodies and refuse training work."""
    sub = {**SAMPLING, "inference_config": {"n_gpus": 1, "max_seq_len": 64}}
    job_id = create_job(api, prefix, [sub])
    wait_for_job_status(api, f"{prefix}/{job_id}", {"running"}, limit_s=LIMIT_S)
    return job_id


@pytest.fixture
def log_mark(server: Any) -> int:
    """Where the module server's log ends when the test starts: a test checks only its own lines."""
    return int(server.log_mark())


def _path(url: str) -> str:
    return urlsplit(url).path


def json_routes(server: Any, prefix: str, job_id: str, spare_job_id: str) -> list[str]:
    """Every route that reads a body (POST), as paths. ``/_ct/faults`` is left out: a valid rule
    posted there makes the server answer 500 on purpose."""
    job = f"{prefix}/{job_id}"
    return [
        _path(prefix),
        "/api/v2/statements",
        _path(f"{prefix}/inference/v1/chat/completions"),
        *(_path(f"{job}/{action}") for action in ("step", "save", "load", "operation")),
        *(_path(f"{job}/{action}") for action in ("generate", "generate-stream", "forward-backward")),
        f"/_ct/jobs/{spare_job_id}/status",
        f"/_ct/jobs/{spare_job_id}/checkpoints",
    ]


# --- item: nesting and size ------------------------------------------------------------------------


def test_deep_nesting_is_refused_with_400_naming_the_limit_on_every_json_route(
    server: Any, api: httpx.Client, prefix: str, sampling_job: str, log_mark: int
) -> None:
    spare = create_job(api, prefix, [SAMPLING])
    connection = Connection(server.base_url)
    try:
        for route in json_routes(server, prefix, sampling_job, spare):
            for body in (b"[" * 1000 + b"]" * 1000, b'{"a":' * 1000 + b"1" + b"}" * 1000):
                answer = connection.request("POST", route, body)
                assert answer.status == 400, (route, answer)
                assert "nested deeper than 64" in answer.body.decode(), (route, answer)
                assert "max_json_depth" in answer.body.decode()
                assert not answer.closes
        # The same connection still answers.
        assert connection.request("GET", "/healthz").status == 200
    finally:
        connection.close()
    assert "Traceback" not in server.log_since(log_mark)


def test_a_body_within_the_depth_limit_reaches_the_handler(server: Any, prefix: str) -> None:
    connection = Connection(server.base_url)
    try:
        answer = connection.request("POST", _path(prefix), b"[" * 64 + b"]" * 64)
        assert answer.status == 422  # the handler's own answer: the body must be an object
        assert "detail" in answer.json()
    finally:
        connection.close()


def test_a_body_longer_than_max_body_bytes_is_refused_before_it_is_read(server: Any, prefix: str) -> None:
    with socket.create_connection((urlsplit(server.base_url).hostname, server.port), timeout=LIMIT_S) as sock:
        head = f"POST {_path(prefix)} HTTP/1.1\r\nHost: x\r\nContent-Length: {10**12}\r\n\r\n"
        sock.sendall(head.encode())
        response = HTTPResponse(sock, method="POST")
        response.begin()
        body = json.loads(response.read())
    assert response.status == 413
    assert "max_body_bytes" in body["message"]


def test_a_request_head_that_never_ends_is_cut_off_early(server: Any) -> None:
    # A head is not a body: no Content-Length bounds it. The server must stop reading it long before
    # a caller can fill its memory (uvicorn's httptools road alone never does; h11 stops at 16 KiB).
    sent = 0
    with socket.create_connection((urlsplit(server.base_url).hostname, server.port), timeout=LIMIT_S) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Endless: ")
        piece = b"a" * 65536
        with pytest.raises(OSError):
            while sent < 64 * 1024 * 1024:
                sock.sendall(piece)
                sent += len(piece)
            # Everything went out: the server is still reading. Its answer, if any, says so.
            sock.shutdown(socket.SHUT_WR)
            assert sock.recv(1) == b"", "the server answered a 64 MiB head"
            raise AssertionError("the server read a 64 MiB request head without cutting it off")
    assert sent < 8 * 1024 * 1024
    connection = Connection(server.base_url)
    try:
        assert connection.request("GET", "/healthz").status == 200
    finally:
        connection.close()


def test_a_long_head_within_the_limit_is_served_and_one_past_it_refused(server: Any) -> None:
    address = (urlsplit(server.base_url).hostname, server.port)

    def healthz(header_bytes: int) -> int:
        with socket.create_connection(address, timeout=LIMIT_S) as sock:
            # In one write: the server may read it whole, its head complete in one read.
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * header_bytes + b"\r\n\r\n")
            response = HTTPResponse(sock, method="GET")
            response.begin()
            response.read()
            return response.status

    assert healthz(12 * 1024) == 200
    assert healthz(20 * 1024) == 400


# --- item: names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["x" * 300, "x" * (1 << 20), "my experiment", "a/b", "ñame", "名前", "a..b", ".x", "A.B.C.D", "a\u0000b"],
    ids=[
        "300 chars",
        "1 MB",
        "space",
        "slash",
        "accent",
        "cjk",
        "empty part",
        "leading dot",
        "4 parts",
        "nul",
    ],
)
def test_experiment_names_outside_the_name_rules_are_refused_at_create(
    api: httpx.Client, prefix: str, name: str
) -> None:
    response = api.post(prefix, json={"sub_job_configs": [SAMPLING], "experiment_name": name})
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == "517602"
    assert "experiment_name" in body["message"]
    assert len(body["message"]) < 1000  # the name is never echoed whole


#: The longest name create accepts: three parts of the longest identifier each (767 characters).
LONGEST_NAME = ".".join(letter * 255 for letter in "DSE")


@pytest.fixture(scope="module")
def uploads_server(module_local_server_factory: Any) -> Any:
    """A server of these names' own: room for every job, uploads every 50 ms, its own log."""
    return module_local_server_factory(settings={"artifact_upload_interval_s": 0.05})


@pytest.mark.parametrize(
    "name",
    ["MY_EXP", "cli-tests", "demo", "DB2.S2.EXP_2", "S.EXP", "x" * 255, "_a-1", LONGEST_NAME],
    ids=["plain", "dash", "lower", "3 parts", "2 parts", "255 chars", "leading underscore", "longest"],
)
def test_every_name_the_server_accepts_gets_its_artifacts_uploaded_and_listed(
    uploads_server: Any, name: str
) -> None:
    """Whatever the name's length, the job's console is uploaded and its run lists and serves it
    (a full name longer than a file name once made every upload and listing of the run fail)."""
    mark = uploads_server.log_mark()
    with uploads_server.http() as api:
        prefix = uploads_server.prefix(database=DATABASE, schema="S_" + uuid.uuid4().hex[:10].upper())
        job_id = create_job(api, prefix, [SAMPLING], experiment_name=name)
        run = api.get(f"{prefix}/{job_id}/experiment-run").raise_for_status().json()
        assert run["experiment_name"].endswith(name)
        assert run_uri(run).startswith(f"snow://experiment/{run['experiment_name']}/versions/")
        wait_for_job_status(api, f"{prefix}/{job_id}", {"running"}, limit_s=LIMIT_S)
        folder = f"_stdout/{job_id}:sampling:0/"
        names = wait_until(
            lambda: _listing(api, run, folder),
            timeout=LIMIT_S,
            interval=0.05,
            message=lambda: uploads_server.log_since(mark)[-4000:],
        )
        rel = names[0].split(f"/versions/{run['experiment_run_name']}/", 1)[1]
        obj = api.get(f"/_artifacts/{run['experiment_name']}/{run['experiment_run_name']}/{rel}")
        assert obj.status_code == 200, obj.text
        assert gzip.decompress(obj.content)
    log = uploads_server.log_since(mark)
    assert "Traceback" not in log, log[-4000:]
    assert job_id not in log, log[-4000:]  # no upload failure was logged for the job


def test_long_names_get_distinct_folders_within_the_file_name_limit() -> None:
    first, second = "A" * 300, "A" * 299 + "B"
    folders = {folder_name(first), folder_name(second), folder_name(LONGEST_NAME)}
    assert len(folders) == 3
    assert all(len(f.encode()) <= 255 and f.startswith(("A" * 200, "D" * 200)) for f in folders)
    assert folder_name("x" * 255) == "x" * 255  # a name that fits keeps its folder


@pytest.mark.parametrize("name", ['DB.SCHEMA."my exp"', '"a""b".S.E', "DB.S.x$y"])
def test_the_run_uri_parser_reads_quoted_identifiers_a_service_may_write(name: str) -> None:
    assert run_uri({"experiment_name": name, "experiment_run_name": "RUN_1"}).startswith(
        f"snow://experiment/{name}/"
    )


@pytest.mark.parametrize("name", ["..", "a..b", ".x", "DB/../x", '"a/b"', '""', "a\\b"])
def test_the_run_uri_parser_refuses_names_that_could_leave_the_run(name: str) -> None:
    with pytest.raises(ArtifactError, match="invalid experiment_name"):
        run_uri({"experiment_name": name, "experiment_run_name": "RUN_1"})


def test_a_database_name_outside_the_name_rules_is_refused_when_it_names_the_experiment(
    server: Any, api: httpx.Client
) -> None:
    prefix = server.prefix(database='"my db"', schema="PUBLIC")
    response = api.post(prefix, json={"sub_job_configs": [SAMPLING]})
    assert response.status_code == 400, response.text
    assert "experiment_name" in response.json()["message"]
    # A full experiment name of the caller's own makes the job creatable there.
    assert (
        api.post(prefix, json={"sub_job_configs": [SAMPLING], "experiment_name": "D.S.E"}).status_code == 200
    )


def _seed_jobs_an_older_server_accepted(state_dir: Path, names: list[str]) -> list[str]:
    """Running jobs with names today's create refuses, written straight into a fresh state dir."""
    store = Store(state_dir)
    settings = ServerSettings(state_dir=state_dir)
    ids = []
    try:
        for name in names:
            job = build_job(
                {"sub_job_configs": [SAMPLING]},
                settings=settings,
                identity=Identity("LOCAL_ROLE", "LOCAL_USER"),
                database=DATABASE,
                schema="OLD",
                endpoint="cortex-training",
                now=time.time(),
            )
            job = dataclasses.replace(job, status="running", experiment_name=name)
            store.insert_job(job)
            ids.append(job.job_id)
    finally:
        store.close()
    return ids


def _listing(api: httpx.Client, run: dict[str, Any], folder: str) -> list[str]:
    response = api.get(
        f"/_artifacts/{run['experiment_name']}/{run['experiment_run_name']}", params={"prefix": folder}
    )
    response.raise_for_status()
    return [str(f["name"]) for f in response.json()["files"]]


def test_a_job_whose_upload_fails_never_blocks_the_other_jobs_uploads(
    local_server_factory: Any, tmp_path: Path
) -> None:
    state_dir = tmp_path / "state"
    # Names no folder can hold (a megabyte long with a space in it, and a space), so each job's
    # uploads fail; the failure is logged once, cut short.
    bad = _seed_jobs_an_older_server_accepted(state_dir, ["DB.S." + "x" * (1 << 20) + " y", "DB.S.has space"])
    server = local_server_factory(state_dir=state_dir, settings={"artifact_upload_interval_s": 0.05})
    with server.http() as api:
        prefix = server.prefix(database=DATABASE, schema="NEW")
        job_id = create_job(api, prefix, [SAMPLING])
        wait_for_job_status(api, f"{prefix}/{job_id}", {"running"}, limit_s=LIMIT_S)
        run = api.get(f"{prefix}/{job_id}/experiment-run").raise_for_status().json()
        # Several upload passes: each samples one system-metrics chunk of the running job.
        wait_until(
            lambda: len(_listing(api, run, f"_metrics/{job_id}:sampling:0/")) >= 4,
            timeout=LIMIT_S,
            interval=0.05,
            message=server.log,
        )
        assert _listing(api, run, f"_stdout/{job_id}:sampling:0/"), "the good job's console was not uploaded"
    log = server.log_path.read_text(encoding="utf-8", errors="replace")
    for job in bad:
        assert log.count(job) == 1, log[-4000:]
    assert len(log) < 64 * 1024
    assert "Traceback" not in log


# --- item: create values ---------------------------------------------------------------------------


def _training(**config: Any) -> dict[str, Any]:
    return {
        "job_type": "training",
        "model_name": "Qwen/Qwen3-0.6B",
        "training_config": {"optimizer": {"name": "AdamW", "lr": 1e-4}, "n_gpus": 1, **config},
    }


@pytest.mark.parametrize(
    ("sub_job", "field"),
    [
        (_training(max_seq_len=-5), "max_seq_len"),
        (_training(max_seq_len=0), "max_seq_len"),
        ({**SAMPLING, "inference_config": {"n_gpus": 1, "max_seq_len": 0}}, "max_seq_len"),
        (_training(n_gpus=10**9), "n_gpus"),
        ({**SAMPLING, "inference_config": {"n_gpus": 10**30}}, "n_gpus"),
        (_training(train_batch_size="x"), "train_batch_size"),
        (_training(train_batch_size=0), "train_batch_size"),
        (_training(peft_config={"r": -1}), "peft_config.r"),
        ({**SAMPLING, "inference_config": {"n_gpus": 1, "peft_config": {"r": 0}}}, "peft_config.r"),
        (_training(peft_config={"lora_dropout": 2}), "peft_config.lora_dropout"),
        (_training(peft_config="lora"), "peft_config"),
        ({**_training(), "dtype": "int3"}, "dtype"),
        ({**_training(), "model_name": "m" * 100_000}, "model_name"),
        ({**_training(), "seed": "x"}, "seed"),
        ({**_training(), "global_batch_size": -1}, "global_batch_size"),
        (_training(peft_config={"r": 2**40}), "peft_config.r"),
        (_training(optimizer={"name": "AdamW", "lr": 1e-4, "weight_decay": -1}), "optimizer.weight_decay"),
        (_training(optimizer={"name": "AdamW", "lr": 1e-4, "betas": [2, 0.9]}), "optimizer.betas"),
        (_training(optimizer={"name": "AdamW", "lr": 1e-4, "beta2": 1.0}), "optimizer.beta"),
        (_training(optimizer={"name": "AdamW", "lr": 1e-4, "eps": -1e-8}), "optimizer.eps"),
        (_training(optimizer={"name": "SGD", "lr": 1e-4, "momentum": -0.9}), "optimizer.momentum"),
        (_training(gradient_clipping=-1), "gradient_clipping"),
        (_training(optimizer={"name": "AdamW", "lr": 1e-4, "gradient_clipping": -2}), "gradient_clipping"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_create_refuses_bad_sub_job_values_naming_the_field(
    api: httpx.Client, prefix: str, sub_job: dict[str, Any], field: str
) -> None:
    response = api.post(prefix, json={"sub_job_configs": [sub_job]})
    assert response.status_code in (400, 422), response.text
    assert field in response.text
    assert len(response.text) < 2000  # a long value is never echoed whole


def test_create_accepts_the_values_the_typed_client_sends(api: httpx.Client, prefix: str) -> None:
    sub = {
        **_training(
            max_seq_len=2048,
            train_batch_size=8,
            n_gpus=1,
            # The client's normalized form names the adapter type and its layers (all of them here).
            peft_config={"peft_type": "Lora", "r": 8, "lora_dropout": 0.1, "target_modules": "all-linear"},
        ),
        "dtype": "bfloat16",
        "seed": 7,
        "global_batch_size": 16,
    }
    sub["training_config"]["n_gpus"] = 1.0  # whole numbers may come back as floats, and go in again
    create_job(api, prefix, [sub])


# --- item: token ids -------------------------------------------------------------------------------


def _generate(api: httpx.Client, prefix: str, job_id: str, prompts: Any) -> httpx.Response:
    return api.post(
        f"{prefix}/{job_id}/generate",
        content=wire.dumps({"prompts": prompts, "sampling_params": {"max_tokens": 2, "temperature": 0}}),
        headers={"content-type": "application/octet-stream"},
    )


@pytest.mark.parametrize(
    "prompts",
    [
        [[1, -1, 2]],
        [[-(2**40)]],
        [[tinylm.VOCAB_SIZE]],
        [[2**70]],
        [np.array([3, -4], dtype=np.int64)],
        [np.array([2**63 - 1], dtype=np.int64)],
    ],
    ids=["negative", "very negative", "vocab size", "huge", "negative tensor", "huge tensor"],
)
def test_generate_refuses_token_ids_outside_the_vocabulary_with_422(
    server: Any, api: httpx.Client, prefix: str, sampling_job: str, prompts: Any, log_mark: int
) -> None:
    response = _generate(api, prefix, sampling_job, prompts)
    assert response.status_code == 422, response.text
    assert f"[0, {tinylm.VOCAB_SIZE})" in response.text
    assert "Traceback" not in server.log_since(log_mark)


def test_generate_takes_ids_at_both_ends_of_the_vocabulary(
    api: httpx.Client, prefix: str, sampling_job: str
) -> None:
    response = _generate(api, prefix, sampling_job, [[0, tinylm.VOCAB_SIZE - 1]])
    assert response.status_code == 200, response.text
    request_id = response.json()["request_id"]
    status = wait_until(
        lambda: (
            (status := api.get(f"{prefix}/{sampling_job}/requests/{request_id}").json())["status"]
            in {"done", "failed"}
            and status
        ),
        timeout=LIMIT_S,
        message=f"request {request_id} never finished",
    )
    assert status["status"] == "done", status


# --- item: slow and lying bodies -------------------------------------------------------------------


def test_bodies_that_never_arrive_are_answered_408_and_closed(
    server: Any, api: httpx.Client, prefix: str, sampling_job: str
) -> None:
    address = (urlsplit(server.base_url).hostname, server.port)
    routes = [_path(prefix), _path(f"{prefix}/{sampling_job}/step")]
    sockets = []
    try:
        for index in range(20):
            sock = socket.create_connection(address, timeout=LIMIT_S)
            head = f"POST {routes[index % 2]} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
            sock.sendall(head.encode() + b'{"a')
            sockets.append(sock)
        for sock in sockets:
            response = HTTPResponse(sock, method="POST")
            response.begin()
            body = json.loads(response.read())
            assert response.status == 408
            assert "body_timeout_s" in body["message"]
            assert sock.recv(1) == b""  # the server closed the connection
    finally:
        for sock in sockets:
            sock.close()
    assert api.get("/healthz").status_code == 200


def test_a_chunk_descriptor_with_an_absurd_chunk_count_is_refused(
    api: httpx.Client, prefix: str, sampling_job: str
) -> None:
    for total, size in ((2**40, 2**50), (5000, 10**9), (10, 3)):
        descriptor = {
            "chunk_group_id": str(uuid.uuid4()),
            "chunk_idx": 0,
            "total_chunks": total,
            "frame_sha256": "0" * 64,
            "frame_size_bytes": size,
        }
        frame = wire.dumps({"payload": np.zeros(3, dtype=np.uint8)}, metadata={"request_chunk": descriptor})
        response = api.post(
            f"{prefix}/{sampling_job}/generate",
            content=frame,
            headers={"content-type": "application/octet-stream"},
        )
        assert response.status_code == 400, (total, response.text)
        assert "total_chunks" in response.json()["message"]


# --- the corpus ------------------------------------------------------------------------------------


def _send_corpus(base_url: str, route: str, inputs: list[BadInput]) -> list[str]:
    """Every input to ``route`` over one kept-alive connection; what went wrong, one line each."""
    failures: list[str] = []
    connection = Connection(base_url)
    try:
        for bad in inputs:
            try:
                answer = connection.request("POST", route, bad.body, bad.content_type)
            except (OSError, http.client.HTTPException) as exc:
                failures.append(f"{route} {bad.name}: no answer ({exc!r})")
                connection.close()
                connection = Connection(base_url)
                continue
            if answer.status >= 500 and answer.status != 501:
                failures.append(f"{route} {bad.name}: {answer.status} {answer.body[:300]!r}")
            if answer.closes:
                failures.append(f"{route} {bad.name}: the server closed the connection")
                connection.close()
                connection = Connection(base_url)
        # Afterwards the same connection still answers.
        if connection.request("GET", "/healthz").status != 200:
            failures.append(f"{route}: /healthz did not answer 200 afterwards")
    finally:
        connection.close()
    return failures


def _check_corpus(server: Any, routes: list[str]) -> None:
    mark = server.log_mark()
    inputs = corpus()
    # One connection per route, side by side: the routes are independent and the run is I/O-bound.
    with ThreadPoolExecutor(max_workers=len(routes)) as pool:
        found = pool.map(lambda route: _send_corpus(server.base_url, route, inputs), routes)
        failures = [line for lines in found for line in lines]
    log = server.log_since(mark)
    assert not failures, "\n".join(failures[:40]) + "\n" + log[-3000:]
    assert "Traceback" not in log, log[-6000:]


def test_the_bad_input_corpus_never_answers_500_nor_logs_a_traceback(
    server: Any, api: httpx.Client, prefix: str, sampling_job: str
) -> None:
    spare = create_job(api, prefix, [SAMPLING])
    chat = _path(f"{prefix}/inference/v1/chat/completions")
    _check_corpus(server, [r for r in json_routes(server, prefix, sampling_job, spare) if r != chat])


def test_the_bad_input_corpus_never_answers_500_on_the_chat_route(local_server_factory: Any) -> None:
    # A server of its own, so a failure's tracebacks would stay out of the module server's log.
    server = local_server_factory(settings=SERVER_SETTINGS)
    _check_corpus(server, [_path(f"{server.prefix(database=DATABASE)}/inference/v1/chat/completions")])

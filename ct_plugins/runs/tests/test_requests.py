"""What the runs routes refuse before they act: an unknown, repeated or ill-typed query parameter,
and a body field of the wrong type, each answered 400 ``invalid_argument`` naming it in ``field``.

Raw HTTP on purpose: the SDK never sends such requests, other callers (curl, a script) do.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ct_core import CortexTrainingClient

DATABASE, SCHEMA = "REQ_DB", "PUBLIC"
#: Well formed ids nothing was ever given: a request that passes its checks answers 404 for them.
RUN_ID = "run_01m8rng1v17g51gxtxd8tpankf"
DATASET_ID = "ds_01m8rng1v17g51gxtxd8tpankf"
MODEL_ID = "mdl_01m8rng1v17g51gxtxd8tpankf"


@pytest.fixture(scope="module")
def http(server: Any) -> Any:
    with server.http() as client:
        yield client


def _prefix(server: Any) -> str:
    return server.prefix(DATABASE, SCHEMA)


def _refused(answer: httpx.Response, field: str, *words: str) -> None:
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["code"] == "invalid_argument", body
    assert body["field"] == field, body
    for word in words:
        assert word in body["message"], body


@pytest.mark.parametrize(
    ("method", "path", "query", "field", "words"),
    [
        ("GET", f"/runs/{RUN_ID}/logs", "structured=maybe", "structured", ("true or false", "'maybe'")),
        ("GET", f"/runs/{RUN_ID}/logs", "structured=true&verbose=1", "verbose", ("unknown", "structured")),
        ("GET", f"/runs/{RUN_ID}/logs", "after=-1", "after", ()),
        ("GET", f"/runs/{RUN_ID}/logs", "limit=ten", "limit", ("integer", "'ten'")),
        ("GET", f"/runs/{RUN_ID}/logs", "after=1&after=2", "after", ("give it once",)),
        ("GET", f"/runs/{RUN_ID}/metrics", "after_step=1.5", "after_step", ("integer",)),
        ("GET", f"/runs/{RUN_ID}/metrics", "after=3", "after", ("unknown", "after_step")),
        ("GET", f"/runs/{RUN_ID}", "verbose=true", "verbose", ("unknown", "takes none")),
        ("GET", "/runs", "status=done", "status", ("queued",)),
        ("GET", "/runs", "limit=0", "limit", ()),
        ("GET", "/runs", "state=running", "state", ("unknown", "status", "limit")),
        ("GET", f"/datasets/{DATASET_ID}", "wait=true", "wait", ("unknown",)),
        ("GET", f"/models/{MODEL_ID}", "run_id=x", "run_id", ("unknown",)),
        ("POST", f"/runs/{RUN_ID}:cancel", "force=true", "force", ("unknown",)),
        ("POST", "/datasets", "seed=1&seed=2", "seed", ("give it once",)),
    ],
)
def test_unknown_repeated_or_ill_typed_query_parameters_are_refused_by_name(
    server: Any, http: Any, method: str, path: str, query: str, field: str, words: tuple[str, ...]
) -> None:
    content = b'{"text": "a b c"}\n' if path == "/datasets" else None
    answer = http.request(method, f"{_prefix(server)}{path}?{query}", content=content)
    _refused(answer, field, *words)


@pytest.mark.parametrize(
    ("method", "path", "query"),
    [
        ("GET", f"/runs/{RUN_ID}/logs", "structured=true&after=0&limit=10"),
        ("GET", f"/runs/{RUN_ID}/logs", "structured=FALSE"),
        ("GET", f"/runs/{RUN_ID}/logs", "structured=1"),
        ("GET", f"/runs/{RUN_ID}/metrics", "after_step=-1"),
        ("GET", f"/runs/{RUN_ID}", ""),
    ],
)
def test_well_formed_parameters_pass_their_checks(
    server: Any, http: Any, method: str, path: str, query: str
) -> None:
    # Past the checks, the unknown run is what the route answers.
    answer = http.request(method, f"{_prefix(server)}{path}?{query}")
    assert answer.status_code == 404, answer.text
    assert answer.json()["code"] == "not_found"


def test_listing_with_every_parameter_it_takes_answers(server: Any, http: Any) -> None:
    answer = http.get(f"{_prefix(server)}/runs", params={"status": "queued", "limit": 5})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"runs": []}


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"dataset_id": 5}, ("must be a string", "number")),
        ({"dataset_id": ["ds_01m8rng1v17g51gxtxd8tpankf"]}, ("must be a string", "array")),
        ({"dataset_id": True}, ("must be a string", "boolean")),
        ({"dataset_id": ""}, ("empty",)),
        ({"dataset_id": None}, ("required",)),
        ({"trainer": {}}, ("required",)),
    ],
)
def test_a_run_spec_with_a_missing_or_ill_typed_dataset_id_says_which(
    server: Any, http: Any, spec: dict[str, Any], words: tuple[str, ...]
) -> None:
    _refused(http.post(f"{_prefix(server)}/runs", json=spec), "dataset_id", *words)


def test_the_sdk_reads_of_an_unknown_run_are_not_refused_for_their_parameters(server: Any) -> None:
    # What the SDK sends (booleans as true/false, every optional parameter) passes the checks.
    from ct_core.errors import NotFoundError

    with CortexTrainingClient(base_url=server.base_url, database=DATABASE, schema=SCHEMA) as client:
        for read in (
            lambda: client.runs.logs(RUN_ID, structured=True, after=3, limit=7),
            lambda: client.runs.logs(RUN_ID),
            lambda: client.runs.metrics(RUN_ID, after_step=4),
            lambda: client.runs.get(RUN_ID),
        ):
            with pytest.raises(NotFoundError):
                read()
        assert client.runs.list(status="running", limit=3) == []

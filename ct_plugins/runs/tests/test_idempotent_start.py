"""`client.runs.start` starts one run per call, however many of its answers are lost on the way.

Each call sends an idempotency key of its own with every attempt, and the service answers a key
it has seen with the run that key started: whatever happened to that run between two attempts
(here it is cancelled and ends while the call is still retrying), a repeat never starts another.
The answers are lost by a real proxy between the SDK and a real local server: the service has
started the run each time, only its answer does not come back.
"""

from __future__ import annotations

from typing import Any

import pytest

from ct_core.errors import ConflictError, ValidationError

DATABASE, SCHEMA = "IDEM_DB", "PUBLIC"
#: Answers of one call the proxy loses before it lets one through.
LOST_ANSWERS = 3


@pytest.fixture(scope="module")
def dataset_id(server: Any, kit: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = kit.write_corpus(tmp_path_factory.mktemp("idem") / "corpus.jsonl", kit.corpus_lines())
    with kit.client(server.base_url, DATABASE, SCHEMA) as client:
        dataset = client.datasets.build(path, label_fields=["topic"], seed=5, wait=True, timeout=600)
    assert dataset["status"] == "succeeded", dataset
    return str(dataset["dataset_id"])


def _no_wait(seconds: float) -> None:
    """The lossy client's retry waits: none, the proxy decides what happens between attempts."""


def test_lost_answers_and_a_run_that_ended_meanwhile_still_start_one_run(
    server: Any, dataset_id: str, kit: Any, lossy_proxy: Any
) -> None:
    proxy = lossy_proxy(server.base_url)
    spec = kit.small_spec(dataset_id, epochs=1)
    starts: list[Any] = []

    def lose_starts(seen: Any) -> bool:
        if seen.method == "POST" and seen.path.split("?")[0].endswith("/runs"):
            starts.append(seen)
            return len(starts) <= LOST_ANSWERS
        return False

    with kit.client(server.base_url, DATABASE, SCHEMA) as direct:

        def end_the_first_run(seen: Any) -> None:
            # Between two attempts of the call, the run the first attempt started is cancelled and
            # ends: an identical spec no longer has a run in flight to be answered with.
            if seen.method == "POST" and seen.path.split("?")[0].endswith("/runs") and starts:
                for run in direct.runs.list():
                    direct.runs.cancel(run["run_id"])
                    assert direct.runs.wait(run["run_id"], timeout=300)["status"] == "cancelled"

        proxy.lose = lose_starts
        proxy.before = end_the_first_run
        retries = {"max_retries": LOST_ANSWERS + 2, "sleep": _no_wait}
        with kit.client(proxy.base_url, DATABASE, SCHEMA, **retries) as lossy:
            run = lossy.runs.start(spec)
        runs = direct.runs.list()

    assert len(starts) == LOST_ANSWERS + 1
    assert [r["run_id"] for r in runs] == [run["run_id"]], runs
    assert run["status"] == "cancelled"
    keys = {seen.headers.get("idempotency-key") for seen in starts}
    assert len(keys) == 1 and None not in keys, keys


def test_a_key_answers_its_run_and_never_starts_another_spec(server: Any, dataset_id: str, kit: Any) -> None:
    spec = kit.small_spec(dataset_id)
    other = kit.small_spec(dataset_id, epochs=3)
    url = f"{server.prefix(DATABASE, SCHEMA)}/runs"
    with server.http() as http, kit.client(server.base_url, DATABASE, SCHEMA) as client:
        first = http.post(url, json=spec, headers={"Idempotency-Key": "key-one"})
        assert first.status_code == 201, first.text
        again = http.post(url, json=spec, headers={"Idempotency-Key": "key-one"})
        assert again.status_code == 200, again.text
        assert again.json()["run_id"] == first.json()["run_id"]
        # The same key with another spec is a caller's mistake: refused, naming the run it started.
        reused = http.post(url, json=other, headers={"Idempotency-Key": "key-one"})
        assert reused.status_code == 409, reused.text
        body = reused.json()
        assert body["code"] == "already_exists" and body["field"] == "Idempotency-Key", body
        assert first.json()["run_id"] in body["message"]
        for bad in ("", "x" * 256, "tab\there"):
            refused = http.post(url, json=other, headers={"Idempotency-Key": bad})
            assert refused.status_code == 400, refused.text
            assert refused.json()["field"] == "Idempotency-Key", refused.text
        # Through the SDK: a key of the caller's own answers the same run on every call.
        mine = client.runs.start(other, idempotency_key="caller-chosen")
        assert client.runs.start(other, idempotency_key="caller-chosen")["run_id"] == mine["run_id"]
        with pytest.raises(ConflictError) as conflict:
            client.runs.start(spec, idempotency_key="caller-chosen")
        assert conflict.value.code == "already_exists" and "caller-chosen" in str(conflict.value)
        for run_id in {first.json()["run_id"], mine["run_id"]}:
            client.runs.cancel(run_id)
        for run_id in {first.json()["run_id"], mine["run_id"]}:
            assert client.runs.wait(run_id, timeout=300)["status"] == "cancelled"


@pytest.mark.parametrize("key", ["", "x" * 256, "\u00e9t\u00e9", "two words"])
def test_the_sdk_refuses_a_key_the_service_would_before_sending(key: str, kit: Any) -> None:
    # Port 9: nothing listens there, so reaching the network would fail otherwise.
    nowhere = kit.client("http://127.0.0.1:9", DATABASE, SCHEMA)
    with nowhere, pytest.raises(ValidationError, match="idempotency_key"):
        nowhere.runs.start({"dataset_id": "ds_01m8rng1v17g51gxtxd8tpankf"}, idempotency_key=key)

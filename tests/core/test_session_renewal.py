"""A Snowflake session that expires under several threads at once is renewed once, not once per thread.

The stand-in Connector (tests/core/fake_snowflake) hands out session tokens in order; a scripted
server refuses the first token as expired and accepts the second. A barrier holds the first
token's answers until every thread's request has arrived, so all of them fail on the same expired
token together, and each thread's renewal must see that another thread already renewed it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ct_core.client import CortexTrainingClient

EXPIRED = {"code": "390112", "message": "Your session has expired. Please login again."}
OLD, NEW = "session-old", "session-new"
THREADS = 6


@pytest.fixture
def profile(ct_home: Path, misbehaving_server: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    (ct_home / ".snowflake" / "connections.toml").write_text(
        '[training]\naccount = "myorg-acct"\nuser = "ALICE"\ndatabase = "DB"\nschema = "PUBLIC"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("CT_FAKE_SNOWFLAKE_SERVER_URL", misbehaving_server.base_url)
    return "training"


def test_shared_expiry_opens_exactly_one_new_session(
    fake_connector: ModuleType, profile: str, misbehaving_server: Any, act: Any
) -> None:
    fake_connector.SESSIONS[:] = [OLD, NEW, "third", "fourth", "fifth", "sixth", "seventh"]
    # Generous: the barrier only breaks on a hang, never because a busy machine started a thread late.
    together = threading.Barrier(THREADS, timeout=60)

    def answer(seen: Any) -> Any:
        if seen.header("Authorization") == f'Snowflake Token="{OLD}"':
            together.wait()  # every thread has sent its request with the old token
            return act(401, EXPIRED)
        return act(200, {"jobs": []})

    misbehaving_server.responder = answer
    results: list[Any] = []
    failures: list[BaseException] = []
    with CortexTrainingClient.from_configs(connection=profile, max_retries=0) as client:

        def work() -> None:
            try:
                results.append(client.list_jobs())
            except BaseException as error:  # reported below, with the thread's own error
                failures.append(error)

        threads = [threading.Thread(target=work) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert failures == [] and results == [[]] * THREADS
    # One sign-in at start, one renewal for all six threads.
    assert len(fake_connector.CALLS) == 2
    signed = [seen.header("Authorization") for seen in misbehaving_server.requests]
    assert signed.count(f'Snowflake Token="{OLD}"') == THREADS
    assert signed.count(f'Snowflake Token="{NEW}"') == THREADS
    assert len(signed) == 2 * THREADS


def test_expiry_of_the_renewed_session_renews_again(
    fake_connector: ModuleType, profile: str, misbehaving_server: Any, act: Any
) -> None:
    # A request signed with the current token that comes back expired is a new expiry, not a stale one.
    fake_connector.SESSIONS[:] = [OLD, NEW, "third"]
    misbehaving_server.script(act(401, EXPIRED), act(200, {"jobs": []}), act(401, EXPIRED))
    with CortexTrainingClient.from_configs(connection=profile, max_retries=0) as client:
        assert client.list_jobs() == []
        assert client.list_jobs() == []
    assert len(fake_connector.CALLS) == 3
    signed = [seen.header("Authorization") for seen in misbehaving_server.requests]
    assert signed == [f'Snowflake Token="{t}"' for t in (OLD, NEW, NEW, "third")]

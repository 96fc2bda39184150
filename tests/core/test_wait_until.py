"""``ct_testing.wait_until``: the one way tests wait for a condition."""

from __future__ import annotations

import pytest
from ct_testing import wait_until


def test_returns_the_first_truthy_value_without_waiting() -> None:
    calls: list[int] = []

    def predicate() -> dict[str, str]:
        calls.append(1)
        return {"status": "DONE"}

    assert wait_until(predicate, timeout=0) == {"status": "DONE"}
    assert len(calls) == 1


def test_keeps_calling_until_the_predicate_holds() -> None:
    values = iter([None, 0, "", [], "ready"])

    assert wait_until(lambda: next(values), interval=0) == "ready"


def test_fails_with_the_message_and_the_last_value_seen() -> None:
    calls: list[int] = []

    def predicate() -> dict[str, str]:
        calls.append(1)
        return {}

    with pytest.raises(pytest.fail.Exception) as failure:
        wait_until(predicate, timeout=0, interval=0, message="job never started")
    text = str(failure.value)
    assert "job never started" in text
    assert "last value: {}" in text
    assert calls


def test_message_may_be_built_when_the_wait_fails() -> None:
    built: list[int] = []

    def message() -> str:
        built.append(1)
        return "log: nothing written"

    with pytest.raises(pytest.fail.Exception, match=r"log: nothing written.*last value: None"):
        wait_until(lambda: None, timeout=0, interval=0, message=message)
    assert built == [1]
    # A wait that succeeds never builds its message.
    wait_until(lambda: True, timeout=0, message=message)
    assert built == [1]


def test_an_exception_from_the_predicate_stops_the_wait() -> None:
    def predicate() -> bool:
        raise LookupError("job vanished")

    with pytest.raises(LookupError, match="job vanished"):
        wait_until(predicate, timeout=60)

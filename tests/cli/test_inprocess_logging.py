"""Running `ct_cli.main.main()` in-process leaves Python's logging as it found it.

Tests and programs that embed the CLI call `main()` in their own process; the warning handler the CLI
installs for a command line must not stay behind (it used to switch propagation off on the SDK's
loggers for good, which hid every later record from pytest's caplog).
"""

from __future__ import annotations

import io
import logging

import pytest

from ct_cli.main import main

SDK_LOGGERS = ("ct_core", "ct_cli", "cortex_training")


def test_main_restores_the_sdk_loggers(caplog: pytest.LogCaptureFixture) -> None:
    before = {
        name: (logging.getLogger(name).propagate, logging.getLogger(name).level) for name in SDK_LOGGERS
    }
    handlers = {name: list(logging.getLogger(name).handlers) for name in SDK_LOGGERS}
    out, err = io.StringIO(), io.StringIO()
    assert main(["--version"], stdout=out, stderr=err) == 0
    assert main(["no-such-command"], stdout=out, stderr=err) != 0
    after = {name: (logging.getLogger(name).propagate, logging.getLogger(name).level) for name in SDK_LOGGERS}
    assert after == before
    assert {name: list(logging.getLogger(name).handlers) for name in SDK_LOGGERS} == handlers
    with caplog.at_level(logging.DEBUG, logger="ct_core.transport"):
        logging.getLogger("ct_core.transport").debug("still seen")
    assert "still seen" in caplog.text

"""The state folder and the per-role clients of the Tinker front come from ct_core's shared helpers,
the same ones the runs service uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def test_both_services_keep_state_under_the_shared_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from ct_runs.cli import default_state_dir as runs_state_dir
    from ct_tinker.cli import default_state_dir as tinker_state_dir

    from ct_core.fs import service_state_dir

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert (
        tinker_state_dir()
        == service_state_dir("tinker-service")
        == tmp_path / "cortex-training" / "tinker-service"
    )
    assert runs_state_dir() == service_state_dir("runs-service")
    monkeypatch.setenv("XDG_DATA_HOME", " ")
    assert service_state_dir("x") == Path.home() / ".local" / "share" / "cortex-training" / "x"


def test_role_clients_act_as_each_role(local_server_factory: Any) -> None:
    from ct_core import RoleClients
    from ct_core.errors import CTError

    server = local_server_factory(extra_args=["--token", "alice-token=ALICE", "--token", "bob-token=BOB"])
    tokens = {"alice-token": "ALICE", "bob-token": "BOB"}
    clients = RoleClients(lambda role: next((t for t, r in tokens.items() if r == role), None))
    with pytest.raises(CTError, match="not started listening"):
        clients.get("ALICE", "DB", "PUBLIC")
    clients.start(server.base_url)
    try:
        alice = clients.get("ALICE", "DB", "PUBLIC")
        assert clients.get("ALICE", "db", "public") is alice
        assert clients.get("BOB", "DB", "PUBLIC") is not alice
        assert alice.list_models()
    finally:
        clients.close()

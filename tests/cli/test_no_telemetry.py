"""ct sends no telemetry: every network connection a command opens goes to the configured endpoint.

Each command runs in a fresh interpreter, exactly as the `ct` console script runs it (every installed
plugin loaded), with a Python audit hook (`sys.addaudithook`) that records each `socket.connect`,
`socket.sendto` and name lookup (`socket.getaddrinfo`, `socket.gethostbyname`) into a file. The
commands talk to a real local server; afterwards every recorded address must be that server's.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

CtRunner = Any

#: Installs the audit hook, then runs the command line as the console script does.
AUDITED_CT = """
import json, sys

_log = open(sys.argv[1], "a", encoding="utf-8")
_EVENTS = ("socket.connect", "socket.sendto", "socket.getaddrinfo", "socket.gethostbyname")

def _hook(event, args):
    if event in _EVENTS:
        address = args[1] if event in ("socket.connect", "socket.sendto") else args[0]
        if isinstance(address, bytes):
            address = address.decode("ascii", "replace")
        shown = address if isinstance(address, str) else list(address)[:2]
        _log.write(json.dumps({"event": event, "address": shown}) + "\\n")
        _log.flush()

sys.addaudithook(_hook)
from ct_cli.main import main
sys.exit(main(sys.argv[2:]))
"""

#: Names that mean this machine: a lookup of one of them never leaves it.
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1"}


def _answer_400(listener: socket.socket) -> None:
    """Answer the first request on `listener` with a bare 400 and close."""
    listener.settimeout(60)
    connection, _ = listener.accept()
    with connection:
        connection.settimeout(60)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(65536)
            if not chunk:
                return
            received += chunk
        connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def _audited(log: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CT_PLUGINS"}  # every installed plugin loads
    return subprocess.run(
        [sys.executable, "-c", AUDITED_CT, str(log), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )


def _elsewhere(log: Path, host: str, port: int) -> list[dict[str, Any]]:
    """Every recorded event that reached for anything but `host:port`."""
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert events, "the audit hook recorded nothing: it cannot have watched the commands"
    stray = []
    for event in events:
        address = event["address"]
        if event["event"] in ("socket.connect", "socket.sendto"):
            if address != [host, port]:
                stray.append(event)
        elif address not in LOOPBACK_NAMES:
            stray.append(event)
    return stray


# Sixteen fresh interpreters with every plugin loaded: the limit only bounds a hang on a loaded machine.
@pytest.mark.timeout(900)
def test_no_command_connects_anywhere_but_the_configured_server(
    local_server: Any, ct_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "connections.jsonl"
    server = ["--base-url", local_server.base_url, "--database", "CT_AUDIT_DB"]
    job_file = tmp_path / "job.json"
    job_file.write_text(
        json.dumps(
            {
                "sub_job_configs": [
                    {
                        "job_type": "training",
                        "model_name": "Qwen/Qwen3-0.6B",
                        "training_config": {
                            "optimizer": {"name": "AdamW", "lr": 0.0001},
                            "max_seq_len": 128,
                            "train_batch_size": 2,
                            "n_gpus": 1,
                        },
                    },
                    {
                        "job_type": "sampling",
                        "model_name": "Qwen/Qwen3-0.6B",
                        "inference_config": {"max_seq_len": 128, "n_gpus": 1},
                    },
                ],
                "experiment_name": "no-telemetry",
            }
        )
    )
    config = tmp_path / "login.json"
    config.write_text(json.dumps({"base_url": local_server.base_url, "database": "CT_AUDIT_DB"}))
    config.chmod(0o600)

    submitted = _audited(log, *server, "submit", str(job_file), "--wait")
    assert submitted.returncode == 0, submitted.stderr
    job_id = json.loads(submitted.stdout)["job_id"]
    batch = json.dumps({"texts": ["hello there"], "tokenizer": "byte", "max_length": 32})
    generate = json.dumps({"prompts": ["Hi"], "sampling_params": {"max_tokens": 2, "temperature": 0}})
    commands: list[tuple[list[str], str]] = [
        (["--help"], ""),
        (["--version"], ""),
        ([*server, "list"], ""),
        ([*server, "get", job_id], ""),
        ([*server, "--job", job_id, "fwd-bwd", "-"], batch),
        ([*server, "--job", job_id, "step", "--lr", "0.0001"], ""),
        ([*server, "--job", job_id, "generate", "-"], generate),
        ([*server, "logs", job_id, "--max-lines", "5"], ""),
        ([*server, "models"], ""),
        ([*server, "capacity"], ""),
        (["catalog", "list"], ""),
        (["plugins"], ""),
        (["login", str(config)], ""),
        (["list"], ""),  # through the remembered login
        ([*server, "cancel", job_id], ""),
    ]
    for argv, stdin in commands:
        result = _audited(log, *argv, stdin=stdin)
        assert result.returncode == 0, (argv, result.stderr)
    host, port = local_server.base_url.removeprefix("http://").rsplit(":", 1)
    assert _elsewhere(log, host, int(port)) == []
    # The hook did watch: the server's own connections are there.
    assert [host, int(port)] in [json.loads(line)["address"] for line in log.read_text().splitlines()]


def test_the_audit_sees_a_connection_to_another_address(
    local_server: Any, ct_home: Path, tmp_path: Path
) -> None:
    # The check above can fail: a command sent to a second address is caught. That address answers
    # 400, which ct does not retry (a refused connection would be retried for about a minute).
    with socket.create_server(("127.0.0.1", 0)) as other:
        other_port = other.getsockname()[1]
        answering = threading.Thread(target=_answer_400, args=(other,), daemon=True)
        answering.start()
        log = tmp_path / "connections.jsonl"
        result = _audited(log, "--base-url", f"http://127.0.0.1:{other_port}", "--database", "D", "list")
        answering.join(60)
    assert result.returncode == 1, result.stderr
    host, port = local_server.base_url.removeprefix("http://").rsplit(":", 1)
    stray = _elsewhere(log, host, int(port))
    assert {"event": "socket.connect", "address": ["127.0.0.1", other_port]} in stray

"""The ``ct local`` command group: run the embedded local server in the foreground.

The root CLI registers :data:`app` lazily, and ``python -m ct_local`` runs it directly. Importing
this module stays cheap: starlette, uvicorn and the server modules are imported inside the
command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

from cyclopts import App, Parameter

app = App(
    name="local",
    help="Run the embedded local Cortex Training server (loopback, SQLite state, no account needed).",
)

# A flag given once per value (``--token a --token b``), without cyclopts' ``--empty-*`` twin.
Repeated = Annotated[list[str] | None, Parameter(negative=(), consume_multiple=False)]


@app.command
def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    state_dir: Path | None = None,
    token: Repeated = None,
    hardware: Repeated = None,
    pending_delay: float | None = None,
    placing_delay: float | None = None,
    initializing_delay: float | None = None,
    cancelling_delay: float | None = None,
    timeout_scale: float | None = None,
    model: Repeated = None,
    models_dir: Repeated = None,
    device: str = "auto",
    dtype: str = "auto",
    device_memory: str | None = None,
    fault: Repeated = None,
    settings_json: str | None = None,
    ready_file: Path | None = None,
    log_level: str = "warning",
    state_snapshot_max_bytes: int | None = None,
) -> int:
    """Serve the REST contract on HOST:PORT until SIGINT or SIGTERM.

    Parameters
    ----------
    host
        Address to listen on; keep it on loopback.
    port
        Port to listen on; 0 picks a free one (see --ready-file).
    state_dir
        Folder holding the SQLite state and blobs; a restart on the same folder keeps every job.
        Default: ``ct/local-server`` in the platform's user data folder (on Linux
        ``~/.local/share/ct/local-server``); the folder in use is printed at start-up.
    token
        Require ``Authorization: Bearer TOKEN``. Repeatable. ``TOKEN=ROLE`` names the role owning
        what the token creates; without it a role is derived from the token.
    hardware
        Account capacity per GPU type, ``NAME=MAX_GPUS[:best-effort][:schedulable=N]``. Repeatable;
        when given, types not listed are unsupported (capacity answers 409 517604).
    pending_delay
        Seconds a job stays pending before placing (when GPUs are free).
    placing_delay
        Seconds a job stays placing.
    initializing_delay
        Seconds a job stays initializing before running.
    cancelling_delay
        Seconds a job stays cancelling before cancelled.
    timeout_scale
        Multiplier for idle and pending timeouts (0.001 turns 300 s into 0.3 s, for tests).
    model
        A model to serve. Repeatable; replaces the built-in list. ``NAME`` is served by the
        built-in tiny model; ``NAME=PATH`` by the Hugging Face causal LM in the folder PATH, or,
        when PATH is a hub name such as ``Qwen/Qwen3-0.6B``, by its copy in the local Hugging Face
        cache (never downloaded).
    models_dir
        Serve every Hugging Face model folder directly under this folder, named by its folder
        name. Repeatable.
    device
        Where real models run: auto (CUDA, then MPS, then the CPU), cpu, cuda, cuda:N or mps.
    dtype
        The dtype of real models: auto (bfloat16 where the device supports it, float32 on the
        CPU), float32, bfloat16 or float16.
    device_memory
        The memory a real model's sub-job may take (e.g. 24GiB); default: the GPU's memory, or
        the machine's on the CPU. A job whose estimated need is larger is refused at create.
    fault
        A fault rule as JSON (see docs/local-server.md). Repeatable.
    settings_json
        JSON object of settings, or a path to a JSON file; flags win over it.
    ready_file
        Write ``{"base_url", "pid"}`` here once the server accepts connections.
    log_level
        uvicorn log level.
    state_snapshot_max_bytes
        Training states up to this size (default 256 MiB) are snapshotted after every request, so a
        killed server carries on exactly; a job with a larger state is kept at graceful stops only
        and fails after a crash, naming its newest checkpoint.
    """
    import logging

    from ct_local.model import registry as model_registry
    from ct_local.runtime import StateDirInUse
    from ct_local.runtime import serve as run_server
    from ct_local.settings import ServerSettings, load_settings, parse_hardware_spec, parse_token_specs

    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    try:
        settings = load_settings(ServerSettings(), settings_json)
        overrides: dict[str, object] = {"host": host, "port": port}
        if state_dir is not None:
            overrides["state_dir"] = state_dir
        if token:
            overrides["tokens"] = parse_token_specs(token)
        if hardware:
            overrides["capacity"] = dict(parse_hardware_spec(spec) for spec in hardware)
        for key, value in (
            ("pending_delay_s", pending_delay),
            ("placing_delay_s", placing_delay),
            ("initializing_delay_s", initializing_delay),
            ("cancelling_delay_s", cancelling_delay),
            ("timeout_scale", timeout_scale),
        ):
            if value is not None:
                overrides[key] = value
        served = model_registry.build_registry(
            model or (),
            [Path(d) for d in models_dir or ()],
            default_names=settings.models,
            device=device,
            dtype=dtype,
            memory=device_memory,
        )
        overrides["models"] = list(served.names)
        if fault:
            overrides["faults"] = [*settings.faults, *(json.loads(f) for f in fault)]
        settings = settings.with_overrides(overrides)
        if state_snapshot_max_bytes is not None and state_snapshot_max_bytes < 0:
            raise ValueError("--state-snapshot-max-bytes must be 0 or more")
    except (ValueError, OSError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    model_registry.install(served)
    for entry in served.entries.values():
        if entry.is_real:
            sys.stderr.write(
                f"model {entry.name}: {entry.architecture} weights from {entry.path} ({entry.origin})\n"
            )
    if served.has_real_models:
        limit = model_registry.shown_bytes(served.memory_bytes) if served.memory_bytes else "unchecked"
        sys.stderr.write(f"real models run on {served.device} in {served.dtype} (memory: {limit})\n")
    try:
        code = run_server(
            settings, ready_file=ready_file, log_level=log_level, snapshot_max_bytes=state_snapshot_max_bytes
        )
    except StateDirInUse as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except OSError as exc:
        sys.stderr.write(f"error: cannot serve on {host}:{port}: {exc}\n")
        return 1
    if "torch" in sys.modules:
        from ct_local.runtime import exit_now

        exit_now(code)
    return code

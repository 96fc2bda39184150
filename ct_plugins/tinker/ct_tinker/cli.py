"""`ct tinker serve`: the Tinker-compatible API in front of the Cortex Training endpoint that the
global connection options name (`ct --base-url ... tinker serve`, `ct --profile ... tinker serve`).

Nothing heavy is imported at module level: the SDK, starlette and uvicorn load when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import App, Parameter

from ct_cli import context

tinker_app = App(name="tinker", help="Serve a Tinker-compatible API in front of Cortex Training.")

#: The port `ct tinker serve` listens on by default.
DEFAULT_SERVE_PORT = 8086
#: The folder of the service's state (its key, the byte tokenizer folder) unless --state-dir says.
STATE_FOLDER = "tinker-service"


def default_state_dir() -> Path:
    """`$XDG_DATA_HOME/cortex-training/tinker-service`, or under ~/.local/share without XDG_DATA_HOME."""
    from ct_core.fs import service_state_dir

    return service_state_dir(STATE_FOLDER)


@tinker_app.command
def serve(
    *,
    host: Annotated[str, Parameter(help="Address to listen on; keep it on loopback.")] = "127.0.0.1",
    port: Annotated[int, Parameter(help="Port to listen on; 0 picks a free one.")] = DEFAULT_SERVE_PORT,
    state_dir: Annotated[
        Path | None,
        Parameter(
            help="Folder of the service's state (default: $XDG_DATA_HOME/cortex-training/tinker-service)."
        ),
    ] = None,
    ready_file: Annotated[
        Path | None, Parameter(help='Write {"base_url", "pid"} here once the service accepts connections.')
    ] = None,
    byte_tokenizer: Annotated[
        bool,
        Parameter(
            negative=(),
            help="Name the byte tokenizer of ct local serve's tiny model (default: the base model's own).",
        ),
    ] = False,
) -> int:
    """Serve the Tinker API in the foreground; every call runs on the global connection's credential.

    Callers present the service's own key as their Tinker API key (CT_TINKER_SERVICE_KEY, or the key
    generated into <state dir>/service-key on first start); it is never forwarded to Cortex Training.
    """
    if not 0 <= port <= 65535:
        from ct_cli.app import UsageError

        raise UsageError(f"--port must be between 0 and 65535, got {port}")
    client = context.client()
    from ct_tinker.serve import run_service

    return run_service(
        client,
        host=host,
        port=port,
        state_dir=(state_dir or default_state_dir()).expanduser(),
        ready_file=ready_file,
        byte_tokenizer=byte_tokenizer,
    )

"""The tinker plugin's hooks: the Tinker-compatible API inside `ct local serve`.

Registered under the entry-point group `ct` as `tinker`.
"""

from __future__ import annotations

from typing import Any

from ct_core.hookspecs import hookimpl


@hookimpl
def ct_local_services(state_dir: str, settings: Any) -> Any:
    from ct_tinker.embedded import embedded_service

    return embedded_service(state_dir, settings)

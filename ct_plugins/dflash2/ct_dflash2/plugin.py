"""The dflash2 plugin's hook: run the DFlash2 rules on every sub-job of every create path.

Registered under the entry-point group `ct` as `dflash2`. It adds no command: the rules show up
in `ct submit` / `ct submit --dry-run` and in the SDK's `create_job` and `create_job_from_body`.
"""

from __future__ import annotations

from typing import Any

from ct_core.hookspecs import hookimpl


@hookimpl
def ct_validate_sub_job(sub_job: dict[str, Any], location: str) -> list[str]:
    # Imported here, not with the module: loading the plugin (every `ct` start) needs no rules.
    from ct_dflash2.rules import check_sub_job

    return check_sub_job(sub_job, location)

"""`ct capacity`: GPU ceiling and usage of the account, per hardware type (CLI-09, rest-api §5.5).

Kept small on purpose: a later issue moves this command into its own plugin.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from cyclopts import Parameter

from ct_cli import context, output

HardwareName = Literal["H200", "B200", "B300"]


def _is_unsupported_hardware(exc: Exception) -> bool:
    from ct_core.constants import UNSUPPORTED_HARDWARE_CODE
    from ct_core.errors import APIError

    return isinstance(exc, APIError) and exc.status_code == 409 and exc.code == UNSUPPORTED_HARDWARE_CODE


def _lookup(client: Any, hardware: str, breakdown: bool) -> dict[str, Any]:
    if breakdown:
        return dict(client.get_capacity_breakdown(hardware))
    return dict(client.get_capacity(hardware))


def capacity(
    *,
    hardware: Annotated[
        HardwareName | None, Parameter(help="Only this GPU type; omit to ask for every type.")
    ] = None,
    breakdown: Annotated[
        bool, Parameter(negative=(), help="Split usage by job type and by submitter.")
    ] = False,
) -> None:
    """Show the account's GPU ceiling, usage and headroom.

    With --hardware, prints that type's numbers. Without it, asks for each type in turn and
    prints {"capacity_by_hardware": {...}}; types the account does not support are listed
    under "unsupported_hardware" instead of failing the command.
    """
    from ct_core.configs import Hardware

    client = context.client()
    if hardware is not None:
        output.emit(_lookup(client, hardware, breakdown))
        return
    by_hardware: dict[str, Any] = {}
    unsupported: list[str] = []
    for member in Hardware:
        try:
            by_hardware[member.value] = _lookup(client, member.value, breakdown)
        except Exception as exc:
            if not _is_unsupported_hardware(exc):
                raise
            unsupported.append(member.value)
    result: dict[str, Any] = {"capacity_by_hardware": by_hardware}
    if unsupported:
        result["unsupported_hardware"] = unsupported
    output.emit(result)

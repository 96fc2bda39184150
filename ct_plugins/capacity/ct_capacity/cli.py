"""`ct capacity`: the account's GPU ceiling, usage and headroom, per hardware type (operationId getCapacity).

Without `--hardware` every type is asked for in turn, one attempt each (the SDK bounds each call);
a type the account does not support (409, code 517604) is listed under `unsupported_hardware`
and any other error fails the command. `--breakdown` splits usage by job type and by
submitter through `get_capacity_breakdown`, which fills in the counts and statuses the service may leave out.
"""

from __future__ import annotations

from typing import Annotated, Any

from cyclopts import Parameter

from ct_cli import context, output

#: The dimensions `--breakdown` asks for when given without a value.
DEFAULT_DIMENSIONS = ("job_type", "submitted_by")


def is_unsupported_hardware(exc: BaseException) -> bool:
    """True for the 409 / 517604 answer of a known type the account does not support."""
    from ct_core.constants import UNSUPPORTED_HARDWARE_CODE
    from ct_core.errors import APIError

    return isinstance(exc, APIError) and exc.status_code == 409 and str(exc.code) == UNSUPPORTED_HARDWARE_CODE


def _dimensions(breakdown: bool | str) -> tuple[str, ...] | None:
    if breakdown is False:
        return None
    if breakdown is True:
        return DEFAULT_DIMENSIONS
    names = tuple(part.strip() for part in breakdown.split(",") if part.strip())
    if not names:
        raise ValueError("--breakdown needs dimension names such as job_type,submitted_by (or no value)")
    return names


def _lookup(client: Any, hardware: str | None, dimensions: tuple[str, ...] | None) -> dict[str, Any]:
    if dimensions is None:
        return dict(client.get_capacity(hardware))
    return dict(client.get_capacity_breakdown(hardware, dimensions=dimensions))


def collect(client: Any, hardware: str | None, dimensions: tuple[str, ...] | None) -> dict[str, Any]:
    """The JSON `ct capacity` prints: one capacity, or every type under capacity_by_hardware."""
    if hardware is not None:
        return _lookup(client, hardware, dimensions)
    from ct_core.config.typed import Hardware

    by_hardware: dict[str, Any] = {}
    unsupported: list[str] = []
    # One type after another, on purpose: a fast control-plane read, and an error on one type
    # must stop the command before it asks for the next.
    for member in Hardware:
        try:
            by_hardware[member.value] = _lookup(client, member.value, dimensions)
        except Exception as exc:
            if not is_unsupported_hardware(exc):
                raise
            unsupported.append(member.value)
    result: dict[str, Any] = {"capacity_by_hardware": by_hardware}
    if unsupported:
        result["unsupported_hardware"] = unsupported
    return result


def capacity(
    *,
    hardware: Annotated[
        str | None,
        Parameter(help="Only this GPU type (H200, B200, B300, in any case); omit for every type."),
    ] = None,
    breakdown: Annotated[
        bool | str,
        Parameter(
            help="Split usage by dimension: job_type and submitted_by when given alone, or a "
            "comma-separated list such as --breakdown job_type."
        ),
    ] = False,
    table: Annotated[bool, Parameter(negative=(), help="Print a table for people instead of JSON.")] = False,
) -> None:
    """Show the account's GPU ceiling, usage and headroom per hardware type.

    Without --hardware every type is queried in turn and the result is
    {"capacity_by_hardware": {...}}; types the account does not support are listed under
    "unsupported_hardware" instead of failing the command, while any other error fails it.
    max_total_gpus of -1 means no ceiling. When has_reservation is false, available_gpus is an
    upper bound; 0 available does not block a submit, which then waits in the queue.
    """
    dimensions = _dimensions(breakdown)
    if hardware is not None:
        # Any case is taken, as job bodies and deployments take it; the service is sent upper case.
        from ct_cli.app import UsageError
        from ct_core.config.typed import hardware_wire

        try:
            hardware = hardware_wire(hardware)
        except ValueError as exc:
            raise UsageError(f"--hardware: {exc}") from None
    result = collect(context.client(), hardware, dimensions)
    if not table:
        output.emit(result)
        return
    from ct_capacity.table import render

    render(result, hardware=hardware, stream=output.current().stdout)

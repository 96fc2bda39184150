"""The one verdict line every benchmark prints for each of its targets.

    verdict: ct --help: 0.061x the reference's --help (target <= 0.07x): met

A benchmark measures something against an anchor (the reference client, a bare socket, a physical
pass over the same bytes, or a time budget), gets a ratio, and compares it with its target; a ratio
must stay at or below its target (`at_most=True`, e.g. a time) or reach it (`at_most=False`, e.g. a
speed-up). `make bench` runs every benchmark; `grep '^verdict:'` over its output gives the summary.
"""

from __future__ import annotations

#: How every verdict line starts.
PREFIX = "verdict:"


def verdict_line(what: str, ratio: float, anchor: str, target: float, *, at_most: bool) -> str:
    """The line for one target: the ratio against its anchor, the target, and met / NOT met."""
    met = ratio <= target if at_most else ratio >= target
    bound = "<=" if at_most else ">="
    return (
        f"{PREFIX} {what}: {ratio:.3f}x {anchor} (target {bound} {target:g}x): {'met' if met else 'NOT met'}"
    )


def report(what: str, ratio: float, anchor: str, target: float, *, at_most: bool) -> bool:
    """Print the verdict line (flushed, so it shows up as it comes); whether the target is met."""
    print(verdict_line(what, ratio, anchor, target, at_most=at_most), flush=True)
    return ratio <= target if at_most else ratio >= target

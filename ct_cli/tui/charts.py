"""Text charts for the TUI: block-glyph bars over time, and braille line charts over steps.

Both are pure functions of numbers and a size in terminal cells, so the screens draw them at
whatever width they have and tests read them as plain strings. Nothing here imports Textual.

- `block_chart`: one column per bucket, bars of the glyphs `▁▂▃▄▅▆▇█` (eighths of a cell), a
  percent axis (`100% ┤` at the top, `0% └` at the bottom) and local-time labels under the
  start, the middle and the end. A bucket without samples is drawn as `·` on the bottom row, so
  "unmeasured" never looks like 0 %.
- `LineChart`: any number of (x, y) series on one braille canvas (each cell holds 2 x 4 dots),
  consecutive points joined, with the y range on the left and the x range underneath. Each cell
  remembers which series drew in it, so a widget can colour the series apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

#: Bar glyphs from one to eight eighths of a cell.
BLOCKS = "▁▂▃▄▅▆▇█"
#: Drawn in the bottom row of a bucket that holds no sample.
EMPTY_BUCKET = "·"
#: The y axis of a block chart: its top, its rows in between, and its bottom corner.
AXIS_TOP = "100% ┤"
AXIS_MID = "     │"
AXIS_BOTTOM = "  0% └"
AXIS_WIDTH = len(AXIS_TOP)
#: Braille dots: bit of the dot at (column 0..1, row 0..3) within a cell (Unicode 2800 block).
_BRAILLE_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
_BRAILLE_BASE = 0x2800
#: `LineChart.owners` marks a cell drawn by more than one series with this value.
MIXED = -2
NOBODY = -1


def bar_cells(value: float | None, height: int, top: float = 100.0) -> list[str]:
    """One bucket's column, top row first: full blocks below, a partial block on top."""
    if value is None:
        return [" "] * (height - 1) + [EMPTY_BUCKET]
    share = min(max(value, 0.0), top) / top if top > 0 else 0.0
    # Anything above zero shows at least one eighth, so a nearly idle GPU never looks unmeasured.
    eighths = max(round(share * height * 8), 1 if share > 0 else 0)
    column: list[str] = []
    for row in range(height):
        floor = (height - 1 - row) * 8
        filled = min(max(eighths - floor, 0), 8)
        column.append(BLOCKS[filled - 1] if filled else " ")
    return column


def time_label(moment: float, span_s: float) -> str:
    """A local time for an axis: `HH:MM`, with seconds for spans under ten minutes and the date
    for spans over a day."""
    local = datetime.fromtimestamp(moment).astimezone()
    if span_s > 86_400:
        return local.strftime("%m-%d %H:%M")
    if span_s < 600:
        return local.strftime("%H:%M:%S")
    return local.strftime("%H:%M")


def spread_labels(width: int, start: str, middle: str, end: str) -> str:
    """`start` at the left edge, `middle` centred and `end` at the right edge of `width` cells;
    the middle one is left out where it would touch either of the others."""
    if width <= 0:
        return ""
    line = [" "] * width

    def put(text: str, at: int) -> None:
        for offset, char in enumerate(text):
            if 0 <= at + offset < width:
                line[at + offset] = char

    put(start, 0)
    end_at = max(width - len(end), 0)
    middle_at = (width - len(middle)) // 2
    if middle and middle_at > len(start) and middle_at + len(middle) < end_at:
        put(middle, middle_at)
    if end_at >= len(start) + 1 or not start:
        put(end, end_at)
    return "".join(line).rstrip()


def block_chart(
    values: Sequence[float | None],
    *,
    height: int,
    start_s: float | None = None,
    end_s: float | None = None,
    top: float = 100.0,
) -> list[str]:
    """The bars of `values` (one column each) `height` rows high, the axis, and the time labels.

    `start_s`/`end_s` (epoch seconds) label the first and last bucket; without them no label line
    is drawn.
    """
    height = max(height, 1)
    columns = [bar_cells(value, height, top) for value in values]
    lines: list[str] = []
    for row in range(height):
        prefix = AXIS_TOP if row == 0 else AXIS_MID
        lines.append(prefix + "".join(column[row] for column in columns))
    lines.append(AXIS_BOTTOM + "─" * len(values))
    if start_s is not None and end_s is not None and values:
        span = max(end_s - start_s, 0.0)
        middle = time_label(start_s + span / 2, span)
        labels = spread_labels(len(values), time_label(start_s, span), middle, time_label(end_s, span))
        lines.append(" " * AXIS_WIDTH + labels)
    return lines


def number_label(value: float) -> str:
    """A short label for an axis value: 4 significant digits, scientific notation when tiny or huge."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e5 or magnitude < 1e-3:
        return f"{value:.2e}"
    return f"{value:.4g}"


@dataclass
class LineChart:
    """A braille canvas `width` x `height` cells, with series plotted over shared x and y ranges.

    Build it with the series, then read `lines()` (the text, axis included) and `owners` (which
    series drew each cell of the plot area, `NOBODY` or `MIXED`).
    """

    width: int
    height: int
    series: Sequence[Sequence[tuple[float, float]]]
    x_label: str = ""
    y_log: bool = False
    owners: list[list[int]] = field(default_factory=list, init=False)
    _dots: list[list[int]] = field(default_factory=list, init=False)
    _gutter: int = field(default=0, init=False)
    _ranges: tuple[float, float, float, float] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        points = [(x, y) for one in self.series for x, y in one if self._usable(y)]
        y_values = [self._y(y) for _, y in points]
        if points:
            x_min, x_max = min(x for x, _ in points), max(x for x, _ in points)
            y_min, y_max = min(y_values), max(y_values)
            if y_max == y_min:
                pad = abs(y_max) * 0.05 or 1.0
                y_min, y_max = y_min - pad, y_max + pad
            if x_max == x_min:
                x_min, x_max = x_min - 1, x_max + 1
            self._ranges = (x_min, x_max, y_min, y_max)
        top, bottom = self._y_labels()
        self._gutter = max(len(top), len(bottom)) + 2
        columns = max(self.width - self._gutter, 1)
        rows = max(self.height - 2, 1)
        self._dots = [[0] * columns for _ in range(rows)]
        self.owners = [[NOBODY] * columns for _ in range(rows)]
        for index, one in enumerate(self.series):
            self._plot(index, [(x, y) for x, y in one if self._usable(y)])

    def _usable(self, y: float) -> bool:
        return math.isfinite(y) and (not self.y_log or y > 0)

    def _y(self, y: float) -> float:
        return math.log10(y) if self.y_log else y

    def _y_labels(self) -> tuple[str, str]:
        if self._ranges is None:
            return "", ""
        _, _, y_min, y_max = self._ranges
        if self.y_log:
            return number_label(10**y_max), number_label(10**y_min)
        return number_label(y_max), number_label(y_min)

    def _plot(self, index: int, points: list[tuple[float, float]]) -> None:
        if self._ranges is None or not points:
            return
        x_min, x_max, y_min, y_max = self._ranges
        dot_columns = len(self._dots[0]) * 2
        dot_rows = len(self._dots) * 4

        def place(x: float, y: float) -> tuple[int, int]:
            column = round((x - x_min) / (x_max - x_min) * (dot_columns - 1))
            row = round((y_max - self._y(y)) / (y_max - y_min) * (dot_rows - 1))
            return column, row

        previous: tuple[int, int] | None = None
        for x, y in sorted(points):
            here = place(x, y)
            if previous is None:
                self._dot(index, *here)
            else:
                for column, row in _segment(previous, here):
                    self._dot(index, column, row)
            previous = here

    def _dot(self, index: int, column: int, row: int) -> None:
        cell_row, cell_column = row // 4, column // 2
        if not (0 <= cell_row < len(self._dots) and 0 <= cell_column < len(self._dots[0])):
            return
        self._dots[cell_row][cell_column] |= _BRAILLE_BITS[row % 4][column % 2]
        owner = self.owners[cell_row][cell_column]
        self.owners[cell_row][cell_column] = index if owner in (NOBODY, index) else MIXED

    @property
    def gutter(self) -> int:
        """Cells left of the plot area (the y labels and the axis)."""
        return self._gutter

    def plot_rows(self) -> list[str]:
        """The braille rows of the plot area alone."""
        return ["".join(chr(_BRAILLE_BASE + bits) if bits else " " for bits in row) for row in self._dots]

    def lines(self) -> list[str]:
        """The whole chart: the plot with its y labels, the x axis and the x range."""
        top, bottom = self._y_labels()
        label_width = self._gutter - 2
        rows = self.plot_rows()
        lines = []
        for number, row in enumerate(rows):
            label = top if number == 0 else bottom if number == len(rows) - 1 else ""
            lines.append(f"{label:>{label_width}} ┤{row}" if label else f"{'':>{label_width}} │{row}")
        width = len(rows[0]) if rows else 0
        lines.append(" " * label_width + " └" + "─" * width)
        if self._ranges is not None:
            x_min, x_max, _, _ = self._ranges
            first, last = _x_text(x_min, self.series, first=True), _x_text(x_max, self.series, first=False)
            name = f" {self.x_label} " if self.x_label else ""
            lines.append(" " * self._gutter + spread_labels(width, first, name.strip(), last))
        return lines


def _x_text(value: float, series: Sequence[Sequence[tuple[float, float]]], *, first: bool) -> str:
    """The real first or last x (the range is padded when every point shares one x)."""
    xs = [x for one in series for x, _ in one]
    if xs:
        value = min(xs) if first else max(xs)
    return str(int(value)) if float(value).is_integer() else number_label(value)


def _segment(start: tuple[int, int], end: tuple[int, int]) -> list[tuple[int, int]]:
    """Every dot on the straight line from `start` to `end` (Bresenham), both ends included."""
    (x0, y0), (x1, y1) = start, end
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    step_x, step_y = (1 if x1 >= x0 else -1), (1 if y1 >= y0 else -1)
    error = dx + dy
    dots = []
    while True:
        dots.append((x0, y0))
        if (x0, y0) == (x1, y1):
            return dots
        twice = 2 * error
        if twice >= dy:
            error += dy
            x0 += step_x
        if twice <= dx:
            error += dx
            y0 += step_y


def sparkline(values: Sequence[float | None], top: float = 100.0) -> str:
    """One row of bars, one glyph per value (`·` where a bucket holds no sample)."""
    return "".join(bar_cells(value, 1, top)[0] for value in values)

"""Rich text from the TUI's plain charts and tables: colours per series, charts side by side.

The chart modules stay plain strings (tested as such); this is where they get their styles for
the screens. Rich is all it needs (it comes with Textual).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from ct_cli.tui import charts

#: Colours of the series of a chart, in order; a cell drawn by two series gets `MIXED_STYLE`.
SERIES_STYLES = ("bright_cyan", "bright_magenta", "bright_green", "yellow")
MIXED_STYLE = "bright_white"
TITLE_STYLE = "bold"
MUTED_STYLE = "dim"


def plain(line: str, style: str = "") -> Text:
    return Text(line, style=style, no_wrap=True, overflow="crop")


def line_chart_text(chart: charts.LineChart, styles: Sequence[str] = SERIES_STYLES) -> list[Text]:
    """The chart's lines, each plot cell coloured by the series that drew it."""
    lines = chart.lines()
    rows = chart.plot_rows()
    texts: list[Text] = []
    for number, line in enumerate(lines):
        text = plain(line[: chart.gutter], MUTED_STYLE)
        if number < len(rows):
            for char, owner in zip(rows[number], chart.owners[number], strict=True):
                style = (
                    MIXED_STYLE
                    if owner == charts.MIXED
                    else styles[owner % len(styles)]
                    if owner >= 0
                    else ""
                )
                text.append(char, style=style)
        else:
            text.append(line[chart.gutter :], style=MUTED_STYLE)
        texts.append(text)
    return texts


def block_chart_text(lines: Sequence[str], height: int, style: str) -> list[Text]:
    """A block chart (`height` rows of bars, then the axis and labels): bars in `style`, the rest muted."""
    texts = []
    for number, line in enumerate(lines):
        axis, rest = line[: charts.AXIS_WIDTH], line[charts.AXIS_WIDTH :]
        text = plain(axis, MUTED_STYLE)
        text.append(rest, style=style if number < height else MUTED_STYLE)
        texts.append(text)
    return texts


def side_by_side(blocks: Sequence[Sequence[Text]], widths: Sequence[int], gap: int = 2) -> list[Text]:
    """Blocks of lines next to each other, each padded to its width."""
    height = max((len(block) for block in blocks), default=0)
    lines: list[Text] = []
    for row in range(height):
        line = Text(no_wrap=True, overflow="crop")
        for index, (block, width) in enumerate(zip(blocks, widths, strict=True)):
            piece = block[row].copy() if row < len(block) else Text()
            piece.truncate(width, pad=True)
            line.append_text(piece)
            if index < len(blocks) - 1:
                line.append(" " * gap)
        lines.append(line)
    return lines


def join(lines: Sequence[Text]) -> Text:
    """Lines as one text for a Static, never wrapped (each line was cut to the width already)."""
    text = Text("\n", no_wrap=True, overflow="crop").join(lines)
    text.no_wrap = True
    text.overflow = "crop"
    return text

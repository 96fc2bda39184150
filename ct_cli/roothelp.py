"""`ct --help` drawn without cyclopts or rich.

Why: importing cyclopts and rich and letting them lay out the root help page costs more than
everything else `ct --help` does (about 100 ms of 160). The page itself is simple: a usage line,
the description, and two boxed two-column tables (the commands, the global options).

Where its content comes from: the live registrations, never a saved copy. The same
`register_core_commands` and `ct_register_commands` hooks that fill the cyclopts app
(`ct_cli.app.build_app`) are run against `CommandRecorder`, which only notes each command's name,
help text and sort key; the global options come from `ct_cli.cmdline.GLOBAL_OPTIONS`, which the
app's launcher is declared from. Nothing is cached between runs.

How it stays exact: the layout follows the rules cyclopts' default help formatter gets from rich
(word wrap with folding of over-long words, a name column of at most 35 % of the width, rounded
panels, bold usage and cyan names on a terminal), and tests/cli/test_startup_help.py compares this
page with the one cyclopts prints, byte for byte, at every width and for random command tables.
Whatever falls outside those rules makes `root_help_page` return None, and the caller prints the
page through cyclopts as before: a plugin registering anything but a lazily imported command with
a plain one-line help text, a hook that fails (so cyclopts' path reports it), non-ASCII text, or an
output that rich would treat specially (forced colours, NO_COLOR, a dumb terminal, a non-UTF-8
stream, a width under 40 columns).
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from ct_cli import cmdline

if TYPE_CHECKING:
    from ct_core.plugins import CTPluginManager

#: The narrowest and widest outputs drawn here; anything else goes through cyclopts.
MIN_WIDTH = 40
MAX_WIDTH = 1000
#: Fraction of the width the name column may take (cyclopts' default formatter).
NAME_COLUMN_SHARE = 0.35
#: Title of the panel listing the commands, and cyclopts' own two entries at its end.
COMMANDS_TITLE = "Commands"
BUILTIN_ENTRIES = (
    ("--help (-h)", "Display this message and exit."),
    ("--version", "Display application version."),
)

_BOLD = "\x1b[1m"
_CYAN = "\x1b[36m"
_RESET = "\x1b[0m"

#: A command name drawn here: what `ct` and its plugins use (`model-deployment`, `hello-my_plugin`).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
#: A help text drawn here: one line of printable ASCII (cyclopts shows plain-text help verbatim).
_PLAIN_TEXT = re.compile(r"[ -~]+\Z")
#: Texts a docstring parser could read as something other than a summary (`:param x:`, `Args:`,
#: `@param`, `.. deprecated::`), which cyclopts would show differently.
_DOCSTRING_MARKUP = re.compile(r"(^|\s)[:@]\w|::|\.\. |^\w+:")
#: A word as rich's wrapper sees it: leading space (first word only), the word, trailing space.
_WORD = re.compile(r"\s*\S+\s*")


class Unsupported(Exception):
    """A registration or text this module does not draw; cyclopts prints the page instead."""


@dataclass(frozen=True)
class CommandEntry:
    """One line of the commands panel: the name, the one-line help, the sort key (None: by name)."""

    name: str
    help: str
    sort_key: float | None = None


class CommandRecorder:
    """Stands in for the cyclopts App while the registration hooks run, for `ct --help` only.

    It accepts what ct's own commands and well-behaved plugins do, `app.command("module:attr",
    name=..., help=..., sort_key=...)` (with `usage=` / `help_epilogue=`, which only the command's
    own help shows), and raises `Unsupported` for anything else, including a name registered twice.
    """

    _IGNORED = frozenset({"usage", "help_epilogue"})

    def __init__(self, prog: str) -> None:
        self.name = (prog,)
        self.entries: dict[str, CommandEntry] = {}

    def command(self, target: Any = None, /, *, name: Any = None, help: Any = None, **options: Any) -> None:
        sort_key = options.pop("sort_key", None)
        if set(options) - self._IGNORED:
            raise Unsupported(f"command option(s) {sorted(set(options) - self._IGNORED)}")
        module, _, attribute = target.partition(":") if isinstance(target, str) else ("", "", "")
        if not (module and attribute):
            raise Unsupported("a command that is not registered by import path")
        if not isinstance(name, str) or not _PLAIN_NAME.match(name) or name in self.entries:
            raise Unsupported(f"command name {name!r}")
        if isinstance(sort_key, bool) or not (sort_key is None or isinstance(sort_key, int | float)):
            raise Unsupported(f"sort key {sort_key!r}")
        self.entries[name] = CommandEntry(name, plain_text(help), sort_key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self.entries


def plain_text(text: Any) -> str:
    """`text` when it is a help text drawn here unchanged by cyclopts; else `Unsupported`."""
    if (
        not isinstance(text, str)
        or not _PLAIN_TEXT.match(text)
        or text != text.strip()
        or _DOCSTRING_MARKUP.search(text)
    ):
        raise Unsupported(f"help text {text!r}")
    return text


def recorded_commands(pm: CTPluginManager, prog: str) -> list[CommandEntry] | None:
    """The commands `ct --help` lists, from the live hooks; None when one is not drawn here.

    A hook that raises also gives None: cyclopts' path then runs the hooks again and reports the
    failure the usual way (a warning naming the plugin), exactly once.
    """
    recorder = CommandRecorder(prog)
    try:
        cmdline.register_core_commands(recorder, pm, prog)
        for impl in reversed(pm.hook.ct_register_commands.get_hookimpls()):
            if getattr(impl, "hookwrapper", False) or getattr(impl, "wrapper", False):
                return None
            impl.function(**{arg: recorder for arg in impl.argnames})
    except Exception:
        return None
    return list(recorder.entries.values())


def console_shape(stream: TextIO | None, environ: Mapping[str, str] | None = None) -> tuple[int, bool] | None:
    """The width rich would give a console on `stream`, and whether it would style the output.

    None when rich would do something this module does not reproduce. Width: `COLUMNS` when it
    is a number, else the size of the first of stdin, stdout, stderr that is a terminal, else 80.
    """
    env = os.environ if environ is None else environ
    if stream is None:  # no stdout at all (closed by the caller): rich writes nowhere, quietly
        return None
    if sys.platform == "win32" or "IPython" in sys.modules or "idlelib" in sys.modules:
        return None
    if "FORCE_COLOR" in env or "TTY_COMPATIBLE" in env:
        return None
    try:
        isatty = getattr(stream, "isatty", None)
        styled = bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        styled = False
    if styled and (env.get("TERM", "").lower() in ("dumb", "unknown") or env.get("NO_COLOR", "") != ""):
        return None
    if not (getattr(stream, "encoding", "utf-8") or "utf-8").lower().startswith("utf"):
        return None
    columns = env.get("COLUMNS")
    if columns is not None and columns.isdigit():
        if not columns.isascii():
            return None
        width = int(columns)
    else:
        width = _terminal_columns() or 80
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        return None
    return width, styled


def _terminal_columns() -> int:
    """Columns of the first of the process's stdin, stdout, stderr that is a terminal; 0 if none."""
    for usual, stream in enumerate((sys.__stdin__, sys.__stdout__, sys.__stderr__)):
        try:
            descriptor = stream.fileno() if stream is not None else usual
        except Exception:  # no descriptor behind the stream: the usual number
            descriptor = usual
        try:
            return os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
    return 0


def root_help_page(pm: CTPluginManager, prog: str, stream: TextIO | None) -> str | None:
    """The whole `ct --help` page as `stream` should receive it, or None to let cyclopts print it."""
    shape = console_shape(stream)
    if shape is None:
        return None
    commands = recorded_commands(pm, prog)
    if commands is None:
        return None
    try:
        return render(prog, commands, width=shape[0], styled=shape[1])
    except Unsupported:
        return None


def print_root_help(pm: CTPluginManager, prog: str, stream: TextIO | None) -> bool:
    """Write `ct --help` to `stream`; False (nothing written) when cyclopts must draw it."""
    page = root_help_page(pm, prog, stream)
    if page is None or stream is None:
        return False
    stream.write(page)
    stream.flush()
    return True


# --- layout ---------------------------------------------------------------------------------------


def render(prog: str, commands: Iterable[CommandEntry], *, width: int, styled: bool) -> str:
    """The root help page for `commands` at `width` columns, with terminal styles when `styled`."""
    out: list[str] = []
    for line in wrap(cmdline.usage_line(prog), width):
        out.append(_styled(line, _BOLD, styled) + "\n")
    out.append("\n")
    out.extend(line + "\n" for line in wrap(cmdline.DESCRIPTION, width))
    out.append("\n")
    rows = [(entry.name, entry.help) for entry in sort_commands(commands)]
    rows.extend(BUILTIN_ENTRIES)
    out.extend(_panel(COMMANDS_TITLE, rows, width, styled, _wrap_command_name))
    options = [(option.label, option.help) for option in cmdline.GLOBAL_OPTIONS]
    out.extend(_panel(cmdline.GLOBAL_GROUP_TITLE, options, width, styled, _wrap_option_label))
    return "".join(out)


def sort_commands(commands: Iterable[CommandEntry]) -> list[CommandEntry]:
    """Commands with a sort key first, by key then name; the others after them, by name."""
    keyed = sorted((entry for entry in commands if entry.sort_key is not None), key=_keyed_order)
    by_name = sorted((entry for entry in commands if entry.sort_key is None), key=_name_order)
    return keyed + by_name


def _keyed_order(entry: CommandEntry) -> tuple[float, tuple[bool, str]]:
    return (entry.sort_key or 0), _name_order(entry)


def _name_order(entry: CommandEntry) -> tuple[bool, str]:
    return entry.name.startswith("-"), entry.name


def _styled(text: str, code: str, styled: bool) -> str:
    return f"{code}{text}{_RESET}" if styled and text else text


def _panel(
    title: str,
    rows: list[tuple[str, str]],
    width: int,
    styled: bool,
    wrap_name: Callable[[str, int], list[str]],
) -> list[str]:
    """A rounded box titled `title` around a name column and a description column."""
    inner = width - 4  # the two borders and one space of padding on each side
    heading = f" {title} "[:inner]  # a title wider than the box is cut at its edge
    name_limit = math.ceil(width * NAME_COLUMN_SHARE)
    names = [wrap_name(label, name_limit) for label, _ in rows]
    # The name column: its longest line plus two spaces before the description, at most the limit.
    name_width = min(max(len(line) for lines in names for line in lines), name_limit) + 2
    text_width = inner - name_width
    lines = [f"╭─{heading}{'─' * (inner - len(heading))}─╮\n"]
    for name_lines, (_, description) in zip(names, rows, strict=True):
        text_lines = [line.ljust(text_width) for line in wrap(description, text_width)]
        for index in range(max(len(name_lines), len(text_lines))):
            if index < len(name_lines):
                name = name_lines[index]
                if len(name) > name_width - 2:
                    raise Unsupported("a name wider than its column")
                cell = _styled(name.ljust(name_width - 2), _CYAN, styled) + _styled("  ", _CYAN, styled)
            else:
                cell = _styled(" " * name_width, _CYAN, styled)
            text = text_lines[index] if index < len(text_lines) else " " * text_width
            lines.append(f"│ {cell}{text} │\n")
    lines.append(f"╰{'─' * (width - 2)}╯\n")
    return lines


def wrap(text: str, width: int) -> list[str]:
    """Break one line of text (no leading or trailing space) into lines of at most `width` columns.

    The result is what rich's word wrap gives: a word goes to the next line when it does not fit
    after the words before it; a word longer than a whole line is cut into `width`-wide pieces,
    each on its own line; a line keeps the spaces after its last word as far as they fit.
    """
    lines: list[str] = []
    current = ""
    for match in _WORD.finditer(text):
        word = match.group(0)
        visible = len(word.rstrip())
        if visible <= width - len(current):
            current += word
            continue
        if current:
            lines.append(current)
        if visible <= width:
            current = word
            continue
        pieces = [word[index : index + width] for index in range(0, len(word), width)]
        lines.extend(pieces[:-1])
        current = pieces[-1]
    lines.append(current)
    return [_fit(line, width) for line in lines]


def _fit(line: str, width: int) -> str:
    """Cut a wrapped line to `width`, dropping spaces at its end before anything else."""
    if len(line) <= width:
        return line
    spaces = len(line) - len(line.rstrip())
    return line[: len(line) - min(spaces, len(line) - width)][:width]


def _wrap_command_name(name: str, width: int) -> list[str]:
    """A command's name cell: cut like `textwrap.wrap` with a two-space indent after the first line."""
    if len(name) <= width:
        return [name]
    import textwrap

    return textwrap.wrap(name, width, subsequent_indent="  ", break_on_hyphens=False, tabsize=4)


def _wrap_option_label(label: str, width: int) -> list[str]:
    """An option's name cell: whole flags per line, each later line indented by two spaces.

    A flag too long for a line is cut at its last `.` that fits (after its first character),
    else where the line ends.
    """
    done: list[str] = []
    line = ""
    for flag in label.split():
        joined = f"{line} {flag}" if line.strip() else line + flag
        if len(joined) <= width:
            line = joined
            continue
        if line.strip():
            done.append(line)
            line = "  "
        while len(line) + len(flag) > width:
            room = width - len(line)
            dot = flag.rfind(".", 1, room + 1)
            cut = dot if dot > 0 else max(room, 1)
            done.append(line + flag[:cut])
            line, flag = "  ", flag[cut:]
        line += flag
    return [*done, line]

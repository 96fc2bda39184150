"""The one place the `ct` command line writes to the terminal.

Conventions: stdout carries exactly one JSON document per command, keys sorted,
pretty-printed unless `--compact`, always ending in a newline; stderr carries progress,
warnings and errors. A known error is printed as `error: <message>` plus, where one helps, a
`hint: ...` line; a traceback is shown only with `CT_DEBUG=1`. Errors and warnings go out with
the client's own credentials removed by value (see `redactor`), whatever a server echoed back.

Commands never print directly: they call `emit()`, `progress()` and `warn()`, which write to
the streams of the current invocation (real ones, or the ones a test passed to `main`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

#: Environment variable that turns on tracebacks for errors (any non-empty value but 0/false).
DEBUG_ENV_VAR = "CT_DEBUG"

#: Exit codes of the command line: success, a reported error, a usage error, Ctrl+C.
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


@dataclass
class Streams:
    """The streams and JSON style of one `ct` invocation."""

    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    compact: bool = False


_current = Streams()


def current() -> Streams:
    """The streams commands write to right now."""
    return _current


@contextmanager
def using(streams: Streams) -> Iterator[Streams]:
    """Direct all output to `streams` for the duration of one invocation."""
    global _current
    previous = _current
    _current = streams
    try:
        yield streams
    finally:
        _current = previous


def set_compact(compact: bool) -> None:
    """Choose compact JSON (the global `--compact` flag) for the rest of the invocation."""
    _current.compact = compact


def _json_default(value: Any) -> Any:
    # Results are plain JSON from the service; a few SDK helpers hand back paths or dates.
    # (Imported here: this runs rarely, and start-up time counts on every command.)
    from datetime import date, datetime
    from pathlib import PurePath

    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot print a {type(value).__name__} as JSON")


def render_json(value: Any, *, compact: bool) -> str:
    """The exact text `emit` writes for `value` (without the trailing newline)."""
    if compact:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default)
    return json.dumps(value, sort_keys=True, indent=2, default=_json_default)


def _escape_unprintable(text: str, encoding: str) -> str:
    """`text` (JSON) with every character a terminal should not get raw written as its JSON escape.

    That is a control or format character (ESC, BEL, a right-to-left override), anything else
    `str.isprintable` refuses, and what the terminal's encoding cannot show. The newlines of the
    layout stay: inside a JSON string a newline is already escaped.
    """
    out: list[str] = []
    for char in text:
        if char == "\n" or (char.isprintable() and _encodable(char, encoding)):
            out.append(char)
        else:
            out.append(json.dumps(char)[1:-1])  # \uXXXX, a surrogate pair above the BMP
    return "".join(out)


def _encodable(char: str, encoding: str) -> bool:
    try:
        char.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _readable_lines(value: Any, indent: int) -> str:
    if isinstance(value, dict) and value:
        pad = " " * (indent + 2)
        items = [
            f"{pad}{json.dumps(str(key), ensure_ascii=False)}: {_readable_lines(value[key], indent + 2)}"
            for key in sorted(value)
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, (list, tuple)) and value:
        if all(v is None or isinstance(v, (int, float)) for v in value):
            # Token ids, logprobs, shapes: one line, not one number per line.
            return "[" + ", ".join(json.dumps(v) for v in value) + "]"
        pad = " " * (indent + 2)
        return (
            "[\n"
            + ",\n".join(pad + _readable_lines(v, indent + 2) for v in value)
            + "\n"
            + " " * indent
            + "]"
        )
    if isinstance(value, (dict, list, tuple, str, int, float, bool)) or value is None:
        return json.dumps(value, ensure_ascii=False)
    return _readable_lines(_json_default(value), indent)


def render_json_readable(value: Any, *, encoding: str | None) -> str:
    """`value` as a person at a terminal reads it: the same JSON, laid out for the eye.

    Keys sorted and indented as `emit` does, lists of numbers on one line, text as itself (not
    `\\u` escapes) except for what a terminal should not get raw (see `_escape_unprintable`).
    `json.loads` of it equals `json.loads` of `render_json(value, ...)`.
    """
    return _escape_unprintable(_readable_lines(value, 0), encoding or "utf-8")


def printable(text: str) -> str:
    """`text` safe to write on the current stdout when it is a terminal (see `_escape_unprintable`)."""
    return _escape_unprintable(text, getattr(current().stdout, "encoding", None) or "utf-8")


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def emit(value: Any) -> None:
    """Write a command's result: one JSON document on stdout.

    Piped or redirected, the document is pretty-printed by `json.dumps` (or compact with
    `--compact`). On a terminal and without `--compact`, it is the same JSON laid out for reading:
    lists of numbers on one line and control characters escaped (`render_json_readable`).
    """
    streams = current()
    if not streams.compact and _is_terminal(streams.stdout):
        text = render_json_readable(value, encoding=getattr(streams.stdout, "encoding", None))
    else:
        text = render_json(value, compact=streams.compact)
    streams.stdout.write(text + "\n")
    streams.stdout.flush()


def stdout_is_terminal() -> bool:
    """Whether the current stdout is a terminal (a person reads it) rather than a pipe or a file."""
    return _is_terminal(current().stdout)


def emit_text(text: str) -> None:
    """Write non-JSON text on stdout; only for commands whose product is a text file (completion)."""
    streams = current()
    streams.stdout.write(text if text.endswith("\n") else text + "\n")
    streams.stdout.flush()


def _stderr_line(text: str) -> None:
    stream = current().stderr
    stream.write(text + "\n")
    stream.flush()


def progress(message: str) -> None:
    """Tell the user what is happening (stderr; never changes stdout)."""
    _stderr_line(message)


#: SDK wording inside messages the SDK shares with its Python callers, and what the CLI prints instead:
#: a user of `ct` is told which flag to pass, not which keyword argument.
_CLI_WORDS = (
    ("with resume=True", "with --resume"),
    (" (SDK: download_stdout_logs())", ""),
    ("pass verify_ssl=False / --no-verify-ssl", "pass --no-verify-ssl"),
)


def cli_words(text: str) -> str:
    """`text` with the SDK's words for an option replaced by the CLI's (`resume=True` -> `--resume`)."""
    for sdk, cli in _CLI_WORDS:
        if sdk in text:
            text = text.replace(sdk, cli)
    return text


def warn(message: str) -> None:
    """Print `warning: <message>` on stderr (credentials the SDK knows removed, as in `error`)."""
    _stderr_line(f"warning: {cli_words(redactor()(message))}")


def debug_enabled() -> bool:
    value = os.environ.get(DEBUG_ENV_VAR, "").strip().lower()
    return value not in ("", "0", "false", "no", "off")


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    """`exc` and every exception it was raised from or while handling (each one once)."""
    seen: set[int] = set()
    todo = [exc] if exc is not None else []
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
        if isinstance(current, BaseExceptionGroup):
            todo += list(current.exceptions)


def redactor(exc: BaseException | None = None) -> Callable[[str], str]:
    """Removes, by value, the credentials this process signs with from text about to be printed.

    They are the ones the SDK remembered (every failed request's own included) and those of the
    requests behind `exc` and its chain: a server may echo a token back anywhere in a body, and a
    traceback shows exceptions (an httpx error, a ValueError) that are not the SDK's own.
    """
    # Only when the SDK is loaded: nothing could know a credential otherwise, and `ct --help` stays lean.
    errors = sys.modules.get("ct_core.errors")
    if errors is None:
        return lambda text: text
    extra: list[str] = []
    for item in _chain(exc):
        request = getattr(item, "request", None)
        headers = getattr(request, "headers", None)
        if headers is not None and hasattr(headers, "get"):
            extra += errors.authorization_secrets(headers.get("authorization"))
    return lambda text: errors.redact_known(text, extra)


def error(message: str, *, hint: str | None = None, exc: BaseException | None = None) -> None:
    """Print `error: <message>` (and a hint) on stderr; the traceback too under CT_DEBUG=1.

    Every part (message, hint, traceback) goes out with the client's credentials removed by value.
    """
    redact = redactor(exc)
    if exc is not None and debug_enabled():
        import traceback

        _stderr_line(redact("".join(traceback.format_exception(exc)).rstrip()))
    message = redact(message)
    # A hint the message already says (a 422's problems, which the SDK's message names) is not repeated.
    hint = redact(hint) if hint and hint.strip() not in message else None
    lines = cli_words(message).strip().splitlines() or [""]
    _stderr_line(f"error: {lines[0]}")
    for line in lines[1:]:
        _stderr_line(f"  {line}")
    if hint:
        _stderr_line(f"hint: {cli_words(hint)}")


class _WarningHandler(logging.Handler):
    """Routes the SDK's log warnings to `warning: ...` lines on the invocation's stderr; under
    CT_DEBUG=1 its info and debug lines (the forward/backward trace) too, as `info:` / `debug:`."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if record.levelno >= logging.WARNING:
                warn(record.getMessage())
            else:
                _stderr_line(f"{record.levelname.lower()}: {redactor()(record.getMessage())}")
        except Exception:
            self.handleError(record)


#: The SDK's loggers; download notices go to "cortex_training", the logger name reference users configure.
_SDK_LOGGERS = ("ct_core", "ct_cli", "cortex_training")
_handler_depth = 0


@contextmanager
def log_handler() -> Iterator[None]:
    """Show warnings the SDK logs (plugin load failures, stalled uploads) as `warning:` lines, and
    under CT_DEBUG=1 its info and debug lines too (the forward/backward trace, retries).

    For the duration of one command line: the loggers get their handler, propagation and level back
    afterwards, so running `main()` in-process (tests, embedding) leaves logging as it found it. A
    nested run keeps the outer one's handler.
    """
    global _handler_depth
    if _handler_depth:
        _handler_depth += 1
        try:
            yield
        finally:
            _handler_depth -= 1
        return
    shown = logging.DEBUG if debug_enabled() else logging.WARNING
    handler = _WarningHandler(level=shown)
    saved = []
    for name in _SDK_LOGGERS:
        log = logging.getLogger(name)
        saved.append((log, log.propagate, log.level))
        log.addHandler(handler)
        # The handler already writes to stderr; passing the record up would print it twice
        # through Python's last-resort handler.
        log.propagate = False
        if log.level == logging.NOTSET:
            log.setLevel(shown)
    _handler_depth = 1
    try:
        yield
    finally:
        _handler_depth = 0
        for log, propagate, level in saved:
            log.removeHandler(handler)
            log.propagate = propagate
            log.setLevel(level)

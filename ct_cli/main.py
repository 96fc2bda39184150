"""Entry point of the `ct` and `cortex-training` console scripts.

`main()` owns the process-level contract of the command line: it loads plugins, builds the app, runs one
command, and turns every outcome into an exit code: 0 on success, 1 with an `error:` line
for any failure (a one-line message plus a hint, the traceback only with `CT_DEBUG=1`), 2 for
a usage error (a wrong command line, or no whole connection to talk to: as the reference, whose
argparse refused both), 130 on Ctrl+C. Streams and the client factory can be injected for tests; the
factory receives the global options with the connection resolved.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO, cast

from ct_cli import context, output
from ct_cli.cmdline import (
    GLOBAL_FLAG_FIELDS,
    GLOBAL_VALUE_FIELDS,
    HELP_FLAGS,
    VERSION_FLAG,
    UsageError,
    parse_global_args,
    split_global_args,
)
from ct_cli.context import ClientFactory
from ct_core import __version__
from ct_core.constants import USAGE_SUGGESTION_CUTOFF

if TYPE_CHECKING:
    from rich.console import Console

    from ct_core.plugins import CTPluginManager

#: Program names the console scripts are installed under.
PROG_NAMES = ("ct", "cortex-training")

_INSTALL_HINT = "python3 -m pip install -e ."

#: Core commands that show every plugin (their list, or the whole command tree), so every plugin
#: loads before they run.
EVERY_PLUGIN_COMMANDS = frozenset({"plugins", "completion"})


def _commands_without_plugins() -> frozenset[str]:
    """The core commands that run with no plugin loaded up front (plugins load when asked for)."""
    from ct_cli.commands import CORE_COMMANDS

    return frozenset(name for name, _, _ in CORE_COMMANDS) - EVERY_PLUGIN_COMMANDS


def _prog_name() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name in PROG_NAMES else PROG_NAMES[0]


def describe_error(exc: BaseException) -> tuple[str, str | None]:
    """The message and hint printed for an error a command raised."""
    from ct_core import errors

    if isinstance(exc, ModuleNotFoundError):
        missing = exc.name or "a required package"
        return (
            f"missing Python dependency '{missing}'. Install the missing package, or install this "
            f"repo first, for example: {_INSTALL_HINT}",
            None,
        )
    message = str(exc) or type(exc).__name__
    if isinstance(exc, errors.CTError) and exc.hint:
        return message, exc.hint
    if isinstance(exc, errors.ConfigError):
        return message, "run 'ct login', or pass --base-url (local server) or --host and --pat"
    if isinstance(exc, errors.ValidationError):
        if len(exc.problems) > 1:
            return "the job body is invalid:\n" + "\n".join(exc.problems), None
        return message, None
    if isinstance(exc, errors.TLSVerificationError):
        return message, "check the host name and your CA certificates (--no-verify-ssl skips the check)"
    if isinstance(exc, errors.CTConnectionError):
        return message, "check the host or --base-url, and that the service is reachable"
    if isinstance(exc, errors.APIError):
        # A refused PAT already carries its next steps in the message; a 401 on a
        # profile request gets no hint, because that token was accepted at sign-in.
        if exc.status_code == 404:
            return message, "check the job id, database and schema (a job is visible only to its owner role)"
        return message, _validation_details(exc)
    if isinstance(exc, (errors.CTError, OSError, ValueError, RuntimeError)):
        return message, None
    # Anything else is a bug somewhere; still one clean line, not a traceback, with its type to report.
    return f"{type(exc).__name__}: {message}", "set CT_DEBUG=1 to see the traceback"


#: At most this many validation details are shown in a hint (the rest are counted).
MAX_DETAIL_HINTS = 5


def _validation_details(exc: Any) -> str | None:
    """A validation error body like {"detail": [{"loc": [...], "msg": ...}]} says what was wrong; the SDK's
    message does not repeat it (it carries only a code or message), so the CLI shows it as the hint."""
    try:
        body = exc.response.json() if exc.response is not None else None
    except Exception:
        return None
    details = body.get("detail") if isinstance(body, dict) else None
    if not isinstance(details, list):
        return None
    parts: list[str] = []
    for item in details:
        if not isinstance(item, dict) or not isinstance(item.get("msg"), str):
            continue
        loc = item.get("loc")
        where = ".".join(str(part) for part in loc if part != "body") if isinstance(loc, list) else ""
        parts.append(f"{where}: {item['msg']}" if where else item["msg"])
    if not parts:
        return None
    shown = "; ".join(parts[:MAX_DETAIL_HINTS])
    extra = len(parts) - MAX_DETAIL_HINTS
    return shown + (f" (and {extra} more)" if extra > 0 else "")


def _is_command_line_error(exc: BaseException) -> bool:
    """A wrong command line: ours (`UsageError`) or one cyclopts refused while parsing it."""
    if isinstance(exc, UsageError):
        return True
    # Only an imported cyclopts can have raised its own error; never import it just to ask.
    cyclopts = sys.modules.get("cyclopts")
    return cyclopts is not None and isinstance(exc, cyclopts.CycloptsError)


def _usage_message(exc: BaseException) -> tuple[str, str]:
    """The message and hint for a wrong command line (exit 2)."""
    hint = "run with --help to see the usage"
    if isinstance(exc, UsageError):
        return str(exc), hint
    from cyclopts import UnknownCommandError, UnknownOptionError, UnusedCliTokensError

    if isinstance(exc, UnknownOptionError):
        return _unknown_option(exc), hint
    if isinstance(exc, UnusedCliTokensError):
        # cyclopts says "Unused Tokens: ['B']"; say which words the command did not take.
        extra = " ".join(str(token) for token in (exc.unused_tokens or []))
        return (f"unexpected argument(s): {extra}" if extra else "unexpected arguments"), hint
    if isinstance(exc, UnknownCommandError):
        # cyclopts' own text imports every lazy command to suggest a near name; the names alone are
        # enough, and keep a typo from importing the local server's torch stack.
        return _unknown_command(exc)
    return str(exc).strip(), hint


def _nearest(word: str, names: Iterable[str]) -> str | None:
    """The name most like `word`, when one is close enough to be what was meant."""
    import difflib

    found = difflib.get_close_matches(word, list(dict.fromkeys(names)), n=1, cutoff=USAGE_SUGGESTION_CUTOFF)
    return found[0] if found else None


def _global_placeholder(option: str) -> str:
    """`--base-url BASE_URL`, `--poll-timeout SECONDS`, `--compact`: a global option as usage shows it."""
    field = GLOBAL_VALUE_FIELDS.get(option)
    if field is None:
        return option
    if field in ("poll_interval", "poll_timeout"):
        return f"{option} SECONDS"
    return f"{option} {'JOB_ID' if field == 'job' else field.upper()}"


def _unknown_option(exc: Any) -> str:
    token = exc.token
    given = str(token.keyword or token.value or "")
    option = given.partition("=")[0]
    command = " ".join(exc.command_chain or ())
    if option in GLOBAL_VALUE_FIELDS or option in GLOBAL_FLAG_FIELDS:
        where = " ".join(part for part in (_prog_name(), _global_placeholder(option), command) if part)
        return (
            f"{option} is a global option of ct, not an option of {command}: "
            f"put it before the command: {where} ..."
        )
    names = [
        name
        for argument in exc.argument_collection
        for name in argument.names
        if name.startswith("--") and (argument.show or argument.parameter.show is not False)
    ]
    message = f"unknown option {option} of {command}" if command else f"unknown option {option}"
    near = _nearest(option, names)
    return f"{message}; did you mean {near}?" if near else message


def _unknown_command(exc: Any) -> tuple[str, str]:
    prog = _prog_name()
    word = str((exc.unused_tokens or [""])[0])
    chain = " ".join(exc.command_chain or ())
    if not chain and word.startswith("-"):
        # `ct --compcat list`: a word before the command that is no global option.
        near = _nearest(word.partition("=")[0], (*GLOBAL_VALUE_FIELDS, *GLOBAL_FLAG_FIELDS, *HELP_FLAGS))
        message = f"unknown global option {word}" + (f"; did you mean {near}?" if near else "")
        return message, f"run '{prog} --help' to see the global options, which go before the command"
    names = [name for name in (exc.app or ()) if not str(name).startswith("-")] if exc.app else []
    near = _nearest(word, names)
    prefix = f"{chain} " if chain else ""
    message = f"unknown command: {prefix}{word}" + (f"; did you mean '{prefix}{near}'?" if near else "")
    return message, f"run '{prog} {prefix}--help' to see the commands"


def _is_usage_error(exc: BaseException) -> bool:
    """A missing or incomplete connection: what to pass on the command line is what is wrong."""
    from ct_core.connect.resolve import IncompleteConnectionError

    return isinstance(exc, IncompleteConnectionError)


class ConsoleOnDemand:
    """The rich console cyclopts prints a command's help (or its own errors) to, made on first use.

    cyclopts reaches for its console only to print; running a command never does, so the command
    runs without importing rich. Every attribute is the real `rich.console.Console`'s, on `file`.
    """

    def __init__(self, file: TextIO) -> None:
        self._file = file
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self._file)
        return getattr(self._console, name)


def print_root_help(pm: CTPluginManager, prog: str, stream: TextIO) -> None:
    """Write `ct --help` to `stream`: drawn directly when it can be (no cyclopts, no rich), else by cyclopts.

    Both give the same page (tests/cli/test_startup_help.py compares them); `ct_cli.roothelp` says
    when it hands over to cyclopts.
    """
    from ct_cli import roothelp

    if roothelp.print_root_help(pm, prog, stream):
        return
    from rich.console import Console

    from ct_cli.app import build_app

    build_app(pm, name=prog).meta.help_print([], console=Console(file=stream))


def run(
    argv: list[str],
    *,
    client_factory: ClientFactory | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Run one command line with the current output streams; returns the exit code.

    Only what a command line needs is imported: `ct --help` and `ct --version` build no cyclopts
    app, and a command imports its own module and, when it talks to the service, the client.
    """
    from ct_core.plugins import get_plugin_manager

    inv = context.Invocation(client_factory=client_factory, stdin=stdin or sys.stdin)
    with output.log_handler(), context.invocation(inv):
        try:
            prog = _prog_name()
            global_args, command_args = split_global_args(argv)
            wants_help = any(flag in global_args for flag in HELP_FLAGS)
            if command_args and not wants_help:
                # Only the plugin serving the command loads now (none for a core command).
                pm = get_plugin_manager(command_args[0], builtin_commands=_commands_without_plugins())
            else:
                pm = get_plugin_manager()
            if wants_help:
                print_root_help(pm, prog, output.current().stdout)
                return output.EXIT_OK
            if VERSION_FLAG in global_args:
                output.emit_text(__version__)
                return output.EXIT_OK
            inv.options = parse_global_args(global_args)
            output.set_compact(inv.options.compact)
            if not command_args:
                print_root_help(pm, prog, output.current().stderr)
                output.error("a command is required", hint=f"run '{prog} --help' to see the commands")
                return output.EXIT_USAGE
            from ct_cli.app import build_app, use_docstring_help

            app = build_app(pm, name=prog)
            use_docstring_help(app, command_args[0])
            result = app(
                command_args,
                console=cast("Console", ConsoleOnDemand(output.current().stdout)),
                exit_on_error=False,
                print_error=False,
                result_action="return_value",
            )
            return result if isinstance(result, int) else output.EXIT_OK
        except KeyboardInterrupt:
            output.error("interrupted")
            return output.EXIT_INTERRUPTED
        except SystemExit as exc:
            code = exc.code
            if code == output.EXIT_INTERRUPTED:
                # cyclopts turns Ctrl+C inside a command into exit 130 without a word; say why.
                output.error("interrupted")
            return code if isinstance(code, int) else (output.EXIT_OK if code is None else output.EXIT_ERROR)
        except Exception as exc:
            if _is_command_line_error(exc):
                usage, usage_hint = _usage_message(exc)
                output.error(usage, hint=usage_hint, exc=exc)
                return output.EXIT_USAGE
            message, hint = describe_error(exc)
            output.error(message, hint=hint, exc=exc)
            return output.EXIT_USAGE if _is_usage_error(exc) else output.EXIT_ERROR


def main(
    argv: list[str] | None = None,
    *,
    client_factory: ClientFactory | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Run `ct` with `argv` (default: the process arguments) and return the exit code.

    The console scripts exit with the returned code; `stdout`, `stderr`, `stdin` and
    `client_factory` let tests run it in-process against their own streams or client.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    streams = output.Streams(stdout=stdout or sys.stdout, stderr=stderr or sys.stderr)
    try:
        with output.using(streams):
            code = run(args, client_factory=client_factory, stdin=stdin)
    except KeyboardInterrupt:
        # Ctrl+C between commands' own handling (plugin loading, app building) still exits 130.
        streams.stderr.write("error: interrupted\n")
        code = output.EXIT_INTERRUPTED
    return code


if __name__ == "__main__":
    raise SystemExit(main())

"""The shape of a `ct` command line, known without importing cyclopts.

Everything here is needed on every start, `ct --help` included, before any command runs: the
global options (their flags, metavars and help texts), how a command line splits into those
options and the command, the program's description and usage line, and the registration of the
built-in commands. Keeping it free of cyclopts (and of rich) is what lets `ct --help` be drawn
by `ct_cli.roothelp` without either; `ct_cli.app` builds the cyclopts application from the very
same data, so the two cannot describe different command lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ct_cli import context

if TYPE_CHECKING:
    from ct_core.plugins import CTPluginManager


class UsageError(ValueError):
    """The command line itself is wrong (exit code 2, like any other usage error)."""


@dataclass(frozen=True)
class GlobalOption:
    """One global option: the `GlobalOptions` field it sets, its flags, and how help shows it."""

    field: str
    names: tuple[str, ...]
    #: The value placeholder shown in help (`STR`, `FLOAT`); None for a switch that takes no value.
    metavar: str | None
    help: str

    @property
    def label(self) -> str:
        """The option as the help page's left column shows it: `--job --job-id STR`."""
        return " ".join((*self.names, self.metavar) if self.metavar else self.names)


#: Every global option, in the order `ct --help` lists them. `ct_cli.app`'s launcher declares the
#: same options as cyclopts parameters, with these help texts; tests/cli/test_startup_help.py
#: checks that the two render the same page.
GLOBAL_OPTIONS: tuple[GlobalOption, ...] = (
    GlobalOption(
        "config", ("--config",), "STR", "Legacy JSON config file (default: $CORTEX_TRAINING_CONFIG)."
    ),
    GlobalOption(
        "connection", ("--connection",), "STR", "Snowflake connection profile from connections.toml."
    ),
    GlobalOption(
        "base_url", ("--base-url",), "STR", "Base URL of a local or compatible server (no Snowflake auth)."
    ),
    GlobalOption("host", ("--host",), "STR", "Snowflake account host, for PAT auth."),
    GlobalOption("pat", ("--pat",), "STR", "Programmatic access token (never printed)."),
    GlobalOption("database", ("--database",), "STR", "Database that holds the training endpoint."),
    GlobalOption("schema", ("--schema",), "STR", "Schema that holds the endpoint (default PUBLIC)."),
    GlobalOption("endpoint", ("--endpoint",), "STR", "REST endpoint name (default cortex-training)."),
    GlobalOption("no_verify_ssl", ("--no-verify-ssl",), None, "Do not verify TLS certificates."),
    GlobalOption(
        "poll_interval", ("--poll-interval",), "FLOAT", "Seconds between status polls (default 0.5)."
    ),
    GlobalOption(
        "poll_timeout", ("--poll-timeout",), "FLOAT", "Seconds to wait for a job or request (default 1800)."
    ),
    GlobalOption("compact", ("--compact",), None, "Print compact JSON instead of pretty JSON."),
    GlobalOption("job", ("--job", "--job-id"), "STR", "Job id for commands that act on one running job."),
)
#: Help text of each global option, by the `GlobalOptions` field it sets.
GLOBAL_OPTION_HELP = {option.field: option.help for option in GLOBAL_OPTIONS}

#: Global options that take a value, by the `GlobalOptions` field they set; `--opt=value`
#: is accepted too.
GLOBAL_VALUE_FIELDS = {
    name: option.field for option in GLOBAL_OPTIONS if option.metavar for name in option.names
}
GLOBAL_VALUE_OPTIONS = frozenset(GLOBAL_VALUE_FIELDS)
#: Global switches, by the field they turn on.
GLOBAL_FLAG_FIELDS = {
    name: option.field for option in GLOBAL_OPTIONS if not option.metavar for name in option.names
}
HELP_FLAGS = ("--help", "-h")
VERSION_FLAG = "--version"
#: Everything `split_global_args` accepts before the command.
GLOBAL_FLAGS = frozenset({*GLOBAL_FLAG_FIELDS, *HELP_FLAGS, VERSION_FLAG})
_FLOAT_FIELDS = frozenset(option.field for option in GLOBAL_OPTIONS if option.metavar == "FLOAT")

#: Title of the help panel that lists the global options.
GLOBAL_GROUP_TITLE = "Global options (before the command)"

#: What `ct --help` says the program is for.
DESCRIPTION = (
    "Manage Cortex Training jobs: submit, inspect, wait for, list and cancel them, and work with "
    "their checkpoints. Results are JSON on stdout; progress and errors go to stderr."
)

#: Name of the built-in commands plugin in the plugin manager (hidden from `ct plugins`).
BUILTIN_PLUGIN_NAME = "ct.commands"

#: The terminal UI command: registered by ct itself, listed right after `logs`.
TUI_COMMAND_PATH = "ct_cli.commands.tui:tui"
TUI_COMMAND_HELP = "Browse jobs and follow their logs in a terminal UI (read-only)."
TUI_SORT_KEY = 18.5


def usage_line(prog: str) -> str:
    """The usage line at the top of `ct --help`, for the name the program was started under."""
    return f"Usage: {prog} [GLOBAL OPTIONS] COMMAND [ARGS]"


def register_core_commands(app: Any, pm: CTPluginManager, prog: str) -> None:
    """Register what ct itself contributes to `app`: the built-in commands plugin and `ct tui`.

    `app` is the cyclopts application (`ct_cli.app.build_app`) or the recorder that
    `ct_cli.roothelp` lists `ct --help` from; both then run every `ct_register_commands` hook.
    The terminal UI is registered first, so no plugin can take its name.
    """
    from ct_cli import commands
    from ct_core.plugins import register_builtin

    register_builtin(pm, commands, BUILTIN_PLUGIN_NAME)
    app.command(
        TUI_COMMAND_PATH,
        name="tui",
        help=TUI_COMMAND_HELP,
        sort_key=TUI_SORT_KEY,
        usage=f"Usage: {prog} [GLOBAL OPTIONS] tui [JOB_ID] [OPTIONS]",
    )


def split_global_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split `argv` into the leading global options and the command with its arguments.

    Splitting stops at the first token that is not a known global option (normally the
    command name); everything from there on belongs to the command.
    """
    index = 0
    while index < len(argv):
        token = argv[index]
        if token in GLOBAL_VALUE_OPTIONS:
            index += 2
        elif token.partition("=")[0] in GLOBAL_VALUE_OPTIONS or token in GLOBAL_FLAGS:
            index += 1
        else:
            break
    index = min(index, len(argv))
    return list(argv[:index]), list(argv[index:])


def parse_global_args(global_args: Sequence[str]) -> context.GlobalOptions:
    """Read the leading global options (as split off by `split_global_args`); help flags are ignored.

    Parsed here rather than by cyclopts: this runs on every start, and a table lookup is much
    cheaper than assembling a parser for the meta app (which stays, for completion).
    """
    values: dict[str, Any] = {}
    index = 0
    while index < len(global_args):
        token = global_args[index]
        option, equals, inline = token.partition("=")
        index += 1
        if option in GLOBAL_VALUE_FIELDS:
            if equals:
                value = inline
            elif index < len(global_args):
                value = global_args[index]
                index += 1
            else:
                raise UsageError(f"{option} needs a value")
            field_name = GLOBAL_VALUE_FIELDS[option]
            if field_name in _FLOAT_FIELDS:
                try:
                    values[field_name] = float(value)
                except ValueError:
                    raise UsageError(f"{option} takes a number of seconds, got {value!r}") from None
            else:
                values[field_name] = value
        elif token in GLOBAL_FLAG_FIELDS:
            values[GLOBAL_FLAG_FIELDS[token]] = True
    return context.GlobalOptions(**values)

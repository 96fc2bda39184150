"""The `ct` cyclopts application: global options, command registration and dispatch.

Shape of a command line: `ct [GLOBAL OPTIONS] COMMAND [COMMAND OPTIONS]`. Global
options are read only *before* the command, as the reference CLI does, so a command may
reuse a name for its own option (`ct list --all --database DB` filters the account-level list
by database, while `ct --database DB list` picks the connection's database).

To do that with cyclopts, the leading global options are split off by `split_global_args`
and handed to a meta app (`app.meta`), whose launcher records them and runs the command app
on the rest. Commands are registered lazily by import path, by the built-in commands plugin
(`ct_cli.commands`) and by third-party plugins through the `ct_register_commands` hook, so
`ct --help` imports no command module.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Annotated, Any

from cyclopts import App, Group, Parameter

from ct_cli import context, output
from ct_core import __version__
from ct_core.plugins import CTPluginManager, register_builtin, register_commands

#: Global options that take a value, by the `GlobalOptions` field they set; `--opt=value`
#: is accepted too.
GLOBAL_VALUE_FIELDS = {
    "--config": "config",
    "--connection": "connection",
    "--base-url": "base_url",
    "--host": "host",
    "--pat": "pat",
    "--database": "database",
    "--schema": "schema",
    "--endpoint": "endpoint",
    "--poll-interval": "poll_interval",
    "--poll-timeout": "poll_timeout",
    "--job": "job",
    "--job-id": "job",
}
GLOBAL_VALUE_OPTIONS = frozenset(GLOBAL_VALUE_FIELDS)
#: Global switches, by the field they turn on.
GLOBAL_FLAG_FIELDS = {"--no-verify-ssl": "no_verify_ssl", "--compact": "compact"}
HELP_FLAGS = ("--help", "-h")
VERSION_FLAG = "--version"
#: Everything `split_global_args` accepts before the command.
GLOBAL_FLAGS = frozenset({*GLOBAL_FLAG_FIELDS, *HELP_FLAGS, VERSION_FLAG})
_FLOAT_FIELDS = ("poll_interval", "poll_timeout")


class UsageError(ValueError):
    """The command line itself is wrong (exit code 2, like any other usage error)."""


#: Name of the built-in commands plugin in the plugin manager (hidden from `ct plugins`).
BUILTIN_PLUGIN_NAME = "ct.commands"

GLOBAL_GROUP = Group("Global options (before the command)", sort_key=1)

_DESCRIPTION = (
    "Manage Cortex Training jobs: submit, inspect, wait for, list and cancel them, and work with "
    "their checkpoints. Results are JSON on stdout; progress and errors go to stderr."
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
    cheaper than assembling a parser for the meta app (which stays, for `--help` and completion).
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


def build_app(pm: CTPluginManager, *, name: str = "ct") -> App:
    """Build the root application and let the built-in and installed plugins add commands.

    Plugin failures while registering commands are recorded in `pm.load_errors` (and logged),
    so a broken plugin costs only its own commands.
    """
    from ct_cli import commands

    app = App(
        name=name,
        help=_DESCRIPTION,
        version=__version__,
        usage=f"Usage: {name} [GLOBAL OPTIONS] COMMAND [ARGS]",
        # Flags are plain switches (no --no-X twins), and help texts state their own defaults.
        default_parameter=Parameter(negative=(), show_default=False),
        # Plain text: the markdown renderer alone would add a third to `ct --help`'s start-up.
        help_format="plaintext",
    )
    app.meta.usage = app.usage
    app.meta.help = app.help
    register_builtin(pm, commands, BUILTIN_PLUGIN_NAME)
    # The terminal UI, listed after `logs` (a core command: registered before any plugin's).
    app.command(
        "ct_cli.commands.tui:tui",
        name="tui",
        help="Browse jobs and follow their logs in a terminal UI (read-only).",
        sort_key=18.5,
        usage=f"Usage: {name} [GLOBAL OPTIONS] tui [JOB_ID] [OPTIONS]",
    )
    register_commands(pm, app)
    _attach_launcher(app)
    return app


def _attach_launcher(app: App) -> None:
    @app.meta.default
    def launcher(
        *tokens: Annotated[str, Parameter(show=False, allow_leading_hyphen=True)],
        config: Annotated[
            str | None,
            Parameter(group=GLOBAL_GROUP, help="Legacy JSON config file (default: $CORTEX_TRAINING_CONFIG)."),
        ] = None,
        connection: Annotated[
            str | None,
            Parameter(group=GLOBAL_GROUP, help="Snowflake connection profile from connections.toml."),
        ] = None,
        base_url: Annotated[
            str | None,
            Parameter(
                group=GLOBAL_GROUP, help="Base URL of a local or compatible server (no Snowflake auth)."
            ),
        ] = None,
        host: Annotated[
            str | None, Parameter(group=GLOBAL_GROUP, help="Snowflake account host, for PAT auth.")
        ] = None,
        pat: Annotated[
            str | None, Parameter(group=GLOBAL_GROUP, help="Programmatic access token (never printed).")
        ] = None,
        database: Annotated[
            str | None, Parameter(group=GLOBAL_GROUP, help="Database that holds the training endpoint.")
        ] = None,
        schema: Annotated[
            str | None, Parameter(group=GLOBAL_GROUP, help="Schema that holds the endpoint (default PUBLIC).")
        ] = None,
        endpoint: Annotated[
            str | None, Parameter(group=GLOBAL_GROUP, help="REST endpoint name (default cortex-training).")
        ] = None,
        no_verify_ssl: Annotated[
            bool,
            Parameter(
                group=GLOBAL_GROUP, negative=(), show_default=False, help="Do not verify TLS certificates."
            ),
        ] = False,
        poll_interval: Annotated[
            float | None, Parameter(group=GLOBAL_GROUP, help="Seconds between status polls (default 0.5).")
        ] = None,
        poll_timeout: Annotated[
            float | None,
            Parameter(group=GLOBAL_GROUP, help="Seconds to wait for a job or request (default 1800)."),
        ] = None,
        compact: Annotated[
            bool,
            Parameter(
                group=GLOBAL_GROUP,
                negative=(),
                show_default=False,
                help="Print compact JSON instead of pretty JSON.",
            ),
        ] = False,
        job: Annotated[
            str | None,
            Parameter(
                name=["--job", "--job-id"],
                group=GLOBAL_GROUP,
                help="Job id for commands that act on one running job.",
            ),
        ] = None,
    ) -> int:
        inv = context.current()
        inv.options = context.GlobalOptions(
            config=config,
            connection=connection,
            base_url=base_url,
            host=host,
            pat=pat,
            database=database,
            schema=schema,
            endpoint=endpoint,
            no_verify_ssl=no_verify_ssl,
            poll_interval=poll_interval,
            poll_timeout=poll_timeout,
            compact=compact,
            job=job,
        )
        output.set_compact(compact)
        # The `--` that `ct_cli.main` puts after the global options reaches us as a token.
        if tokens and tokens[0] == "--":
            tokens = tokens[1:]
        if not tokens:
            from rich.console import Console

            app.meta.help_print([], console=Console(file=output.current().stderr))
            output.error("a command is required", hint=f"run '{app.name[0]} --help' to see the commands")
            return output.EXIT_USAGE
        use_docstring_help(app, tokens[0])
        result = app(list(tokens), exit_on_error=False, print_error=False, result_action="return_value")
        return result if isinstance(result, int) else output.EXIT_OK


def use_docstring_help(app: App, name: str) -> None:
    """Let `ct COMMAND --help` show the command's whole docstring.

    A lazily registered command carries the one-line help given at registration (what
    `ct --help` lists without importing it); once the command is imported to run, its
    docstring is the better description.
    """
    if name.startswith("-") or name not in app:
        return
    command = app[name]
    function = command.default_command
    doc = inspect.getdoc(function) if function is not None else None
    if doc:
        # Help is rendered as plain text, so join each paragraph's lines and let it wrap to the terminal.
        paragraphs = (" ".join(part.split()) for part in doc.split("\n\n"))
        command.help = "\n\n".join(paragraph for paragraph in paragraphs if paragraph)

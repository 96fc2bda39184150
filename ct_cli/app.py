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
from typing import Annotated

from cyclopts import App, Group, Parameter

from ct_cli import context, output
from ct_cli.cmdline import (
    BUILTIN_PLUGIN_NAME,
    DESCRIPTION,
    GLOBAL_FLAG_FIELDS,
    GLOBAL_FLAGS,
    GLOBAL_GROUP_TITLE,
    GLOBAL_OPTION_HELP,
    GLOBAL_VALUE_FIELDS,
    GLOBAL_VALUE_OPTIONS,
    HELP_FLAGS,
    VERSION_FLAG,
    UsageError,
    parse_global_args,
    register_core_commands,
    split_global_args,
    usage_line,
)
from ct_core import __version__
from ct_core.plugins import CTPluginManager, register_commands

# The command line's shape lives in ct_cli.cmdline (it is needed before cyclopts is imported, and
# by `ct --help`, which never imports it); these names stay importable from here.
__all__ = [
    "BUILTIN_PLUGIN_NAME",
    "GLOBAL_FLAGS",
    "GLOBAL_FLAG_FIELDS",
    "GLOBAL_GROUP",
    "GLOBAL_VALUE_FIELDS",
    "GLOBAL_VALUE_OPTIONS",
    "HELP_FLAGS",
    "VERSION_FLAG",
    "UsageError",
    "build_app",
    "parse_global_args",
    "split_global_args",
    "use_docstring_help",
]

GLOBAL_GROUP = Group(GLOBAL_GROUP_TITLE, sort_key=1)
_HELP = GLOBAL_OPTION_HELP


def build_app(pm: CTPluginManager, *, name: str = "ct") -> App:
    """Build the root application and let the built-in and installed plugins add commands.

    Plugin failures while registering commands are recorded in `pm.load_errors` (and logged),
    so a broken plugin costs only its own commands. `ct --help` itself is drawn from the same
    registrations by `ct_cli.roothelp`, without building this app.
    """
    app = App(
        name=name,
        help=DESCRIPTION,
        version=__version__,
        usage=usage_line(name),
        # Flags are plain switches (no --no-X twins), and help texts state their own defaults.
        default_parameter=Parameter(negative=(), show_default=False),
        # Plain text: the markdown renderer alone would add a third to `ct --help`'s start-up.
        help_format="plaintext",
    )
    app.meta.usage = app.usage
    app.meta.help = app.help
    # The built-in commands and the terminal UI (listed after `logs`), before any plugin's.
    register_core_commands(app, pm, name)
    register_commands(pm, app)
    _attach_launcher(app)
    return app


def _attach_launcher(app: App) -> None:
    @app.meta.default
    def launcher(
        *tokens: Annotated[str, Parameter(show=False, allow_leading_hyphen=True)],
        config: Annotated[
            str | None,
            Parameter(group=GLOBAL_GROUP, help=_HELP["config"]),
        ] = None,
        connection: Annotated[
            str | None,
            Parameter(group=GLOBAL_GROUP, help=_HELP["connection"]),
        ] = None,
        base_url: Annotated[
            str | None,
            Parameter(group=GLOBAL_GROUP, help=_HELP["base_url"]),
        ] = None,
        host: Annotated[str | None, Parameter(group=GLOBAL_GROUP, help=_HELP["host"])] = None,
        pat: Annotated[str | None, Parameter(group=GLOBAL_GROUP, help=_HELP["pat"])] = None,
        database: Annotated[str | None, Parameter(group=GLOBAL_GROUP, help=_HELP["database"])] = None,
        schema: Annotated[str | None, Parameter(group=GLOBAL_GROUP, help=_HELP["schema"])] = None,
        endpoint: Annotated[str | None, Parameter(group=GLOBAL_GROUP, help=_HELP["endpoint"])] = None,
        no_verify_ssl: Annotated[
            bool,
            Parameter(group=GLOBAL_GROUP, negative=(), show_default=False, help=_HELP["no_verify_ssl"]),
        ] = False,
        poll_interval: Annotated[
            float | None, Parameter(group=GLOBAL_GROUP, help=_HELP["poll_interval"])
        ] = None,
        poll_timeout: Annotated[
            float | None,
            Parameter(group=GLOBAL_GROUP, help=_HELP["poll_timeout"]),
        ] = None,
        compact: Annotated[
            bool,
            Parameter(
                group=GLOBAL_GROUP,
                negative=(),
                show_default=False,
                help=_HELP["compact"],
            ),
        ] = False,
        job: Annotated[
            str | None,
            Parameter(
                name=["--job", "--job-id"],
                group=GLOBAL_GROUP,
                help=_HELP["job"],
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

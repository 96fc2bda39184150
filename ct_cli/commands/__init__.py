"""The built-in `ct` commands, registered the same way a plugin registers its own.

This module is the built-in commands plugin: its `ct_register_commands` hook adds every core
command to the root app lazily, by import path, with a one-line help text, so `ct --help`
shows them all without importing any of the modules below. Each command lives in its own
module of this package and is imported only when it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ct_core.hookspecs import hookimpl

if TYPE_CHECKING:
    import cyclopts

#: (command name, import path, help shown in `ct --help`), in the order `ct --help` lists them.
CORE_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("submit", "ct_cli.commands.submit:submit", "Create a job from a create-job JSON body (file or -)."),
    ("get", "ct_cli.commands.get:get", "Print a create body for a job like JOB_ID (--raw: its record)."),
    (
        "list",
        "ct_cli.commands.list_jobs:list_jobs",
        "List jobs in the schema, or across the account (--all).",
    ),
    ("wait", "ct_cli.commands.wait:wait", "Wait until a job is running and print its record."),
    ("cancel", "ct_cli.commands.cancel:cancel", "Cancel a job."),
    ("checkpoints", "ct_cli.commands.checkpoints:checkpoints", "List a job's checkpoints."),
    (
        "delete-checkpoint",
        "ct_cli.commands.checkpoints:delete_checkpoint",
        "Delete one checkpoint of a job.",
    ),
    ("models", "ct_cli.commands.models:models", "List the models new jobs can use."),
    ("capacity", "ct_cli.commands.capacity:capacity", "Show GPU capacity and usage per hardware type."),
    (
        "login",
        "ct_cli.commands.login:login",
        "Remember a connection (config file or profile) for later commands.",
    ),
    ("plugins", "ct_cli.commands.plugins:plugins", "List installed plugins as JSON."),
    ("completion", "ct_cli.commands.completion:completion", "Print or install a shell completion script."),
    ("local", "ct_local.cli:app", "Run the embedded local Cortex Training server."),
)


@hookimpl(tryfirst=True)
def ct_register_commands(app: cyclopts.App) -> None:
    # tryfirst: core commands claim their names before any plugin, so a plugin that reuses
    # one fails (and is reported) instead of silently replacing a core command.
    for sort_key, (name, import_path, help_text) in enumerate(CORE_COMMANDS):
        app.command(import_path, name=name, help=help_text, sort_key=sort_key)

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
    (
        "download-checkpoint",
        "ct_cli.commands.download_checkpoint:download_checkpoint",
        "Download a checkpoint's files into a folder (resumable).",
    ),
    (
        "download-log",
        "ct_cli.commands.download_logs:download_log",
        "Download a job's execution logs or saved console (--log-type stdout).",
    ),
    (
        "download-metrics",
        "ct_cli.commands.download_logs:download_metrics",
        "Download a job's GPU/system and training metrics as JSON lines.",
    ),
    ("plot", "ct_cli.commands.plot:plot", "Plot a job's loss, learning rate and CPU/GPU use as a PNG."),
    ("models", "ct_cli.commands.models:models", "List the models new jobs can use."),
    (
        "fwd-bwd",
        "ct_cli.commands.fwd_bwd:fwd_bwd",
        "Run one forward/backward pass from a readable JSON batch (file or -).",
    ),
    ("step", "ct_cli.commands.step:step", "Apply one optimizer step (--lr to set the learning rate)."),
    ("save", "ct_cli.commands.save:save", "Save a checkpoint of the job's training sub-job."),
    ("load", "ct_cli.commands.load:load", "Load a checkpoint into the job's training sub-job."),
    ("weight-sync", "ct_cli.commands.weight_sync:weight_sync", "Push training weights to sampling sub-jobs."),
    (
        "generate",
        "ct_cli.commands.generate:generate",
        "Generate text from a readable JSON request (file or -); --stream for events.",
    ),
    ("logs", "ct_cli.commands.logs:logs", "Print a running job's live log (--follow to keep reading)."),
    (
        "catalog",
        "ct_cli.commands.catalog:app",
        "Browse and check the model catalog; print job bodies for ct submit.",
    ),
    (
        "login",
        "ct_cli.commands.login:login",
        "Remember a connection (config file or profile) for later commands.",
    ),
    ("plugins", "ct_cli.commands.plugins:plugins", "List installed plugins as JSON."),
    ("completion", "ct_cli.commands.completion:completion", "Print or install a shell completion script."),
    ("local", "ct_local.cli:app", "Run the embedded local Cortex Training server."),
)


#: Commands that act on the running job named by the global --job: their usage line shows where
#: it goes, and their help ends with the reminder. Values are the arguments after the name.
JOB_COMMAND_USAGE: dict[str, str] = {
    "fwd-bwd": "FILE",
    "step": "[--lr LR]",
    "save": "[--type TYPE] [--no-poll]",
    "load": "CHECKPOINT_ID [OPTIONS]",
    "weight-sync": "[OPTIONS]",
    "generate": "FILE [OPTIONS]",
}
JOB_EPILOG = "Required global option: --job JOB_ID (alias: --job-id JOB_ID). Place it before the subcommand."
#: Usage lines of commands whose arguments cyclopts would not spell out by itself.
OWN_USAGE: dict[str, str] = {"logs": "JOB_ID [OPTIONS]"}


@hookimpl(tryfirst=True)
def ct_register_commands(app: cyclopts.App) -> None:
    # tryfirst: core commands claim their names before any plugin, so a plugin that reuses
    # one fails (and is reported) instead of silently replacing a core command.
    prog = app.name[0] if app.name else "ct"  # ct or cortex-training, as the user typed it
    for sort_key, (name, import_path, help_text) in enumerate(CORE_COMMANDS):
        extra: dict[str, str] = {}
        if name in JOB_COMMAND_USAGE:
            extra = {
                "usage": f"Usage: {prog} [GLOBAL OPTIONS] --job JOB_ID {name} {JOB_COMMAND_USAGE[name]}",
                "help_epilogue": JOB_EPILOG,
            }
        elif name in OWN_USAGE:
            extra = {"usage": f"Usage: {prog} [GLOBAL OPTIONS] {name} {OWN_USAGE[name]}"}
        app.command(import_path, name=name, help=help_text, sort_key=sort_key, **extra)

"""mkdocs hook: the CLI reference page, written from the `ct` cyclopts app at build time.

Nothing in the page is written by hand: the commands, their arguments, options and help texts
come from the same application `ct` runs (built-in commands and every installed plugin's), through
cyclopts' own Markdown renderer. Each command's whole docstring is used, as `ct COMMAND --help`
shows it. The global options are listed once, at the top: they go before the command.

`tests/docs/test_cli_reference.py` checks that every command and every option of the app is on
the page.
"""

from __future__ import annotations

import re
from typing import Any

#: Where the page lands in the site.
PAGE = "reference/cli.md"

_GLOBAL_HEADING = "**Global options (before the command)**:"

_INTRO = """\
This page is generated from the `ct` application each time the site is built (the built-in
commands and those of the plugins installed with ct), so it lists every command and option `ct`
accepts. Global options go before the command: `ct [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGUMENTS]`.
What the commands print and their exit codes are described in [the command line guide](../cli.md).

"""


def build_ct_app() -> Any:
    """The `ct` application with every command registered (plugins included), as `ct` builds it."""
    from ct_cli.app import build_app, use_docstring_help
    from ct_core.plugins import get_plugin_manager

    app = build_app(get_plugin_manager())
    for name in list(app):
        # Each command's full docstring, as `ct COMMAND --help` shows it (imports the command).
        use_docstring_help(app, name)
    return app


def cli_reference_markdown() -> str:
    """The Markdown of the CLI reference page."""
    app = build_ct_app()
    text = app.generate_docs(output_format="markdown", heading_level=1, include_hidden=False)
    # cyclopts repeats the global options under every command; keep the first list, at the top.
    first = text.find(_GLOBAL_HEADING)
    if first != -1:
        head, rest = text[: first + len(_GLOBAL_HEADING)], text[first + len(_GLOBAL_HEADING) :]
        rest = re.sub(
            r"\n\*\*Global options \(before the command\)\*\*:\n\n(?:\* .*\n)+",
            "\n",
            rest,
        )
        text = head + rest
    _title, _, body = text.partition("\n")
    return f"# Command reference\n\n{_INTRO}{_escape_markup(body.lstrip())}"


_BRACKETS = re.compile(r"\[([^\[\]]*)\](?!\()")


def _plain(text: str) -> str:
    """Text outside code: `<output-dir>` is no HTML tag and `[--yes]` no link."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BRACKETS.sub(r"\\[\1\\]", text)


def _escape_markup(markdown: str) -> str:
    """Help texts write placeholders as `<dir>` and optional parts as `[--yes]`; outside code, Markdown
    would read the first as an HTML tag and `[A] [B]` as a reference link, so both are escaped."""
    lines = []
    in_fence = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence:
            parts = line.split("`")
            parts[::2] = [_plain(part) for part in parts[::2]]
            line = "`".join(parts)
        lines.append(line)
    return "\n".join(lines)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=cli_reference_markdown()))
    return files

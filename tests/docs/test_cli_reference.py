"""The generated CLI reference (docs/hooks/cli_reference.py) covers every command and option of `ct`.

The page is written at build time from the cyclopts app; these tests walk the same app on their own
and look for each command's section and, in it, each of its arguments and options.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "docs" / "hooks" / "cli_reference.py"


def _load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ct_docs_cli_reference", HOOK)
    assert spec is not None and spec.loader is not None, f"no CLI reference hook at {HOOK}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    return _load_hook()


@pytest.fixture(scope="module")
def page(hook: ModuleType) -> str:
    return str(hook.cli_reference_markdown())


def _commands(app: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name in app:
        if name.startswith("-"):
            continue
        command = app[name]
        if not command.show:
            continue
        yield (*path, name), command
        yield from _commands(command, (*path, name))


def _sections(page: str) -> dict[str, str]:
    """Each command's section of the page, by its heading (`ct runs start`)."""
    parts = re.split(r"^#+ (ct(?: [\w-]+)*)\s*$", page, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _shown_names(command: Any) -> list[str]:
    names: list[str] = []
    if command.default_command is None:  # a group of subcommands, with no arguments of its own
        return names
    for argument in command.assemble_argument_collection():
        # `ct` turns off cyclopts' --no-X / --empty-X twins for every command (they are not accepted).
        if argument.show:
            names.extend(name for name in argument.names if name not in argument.negatives)
    return names


def test_every_command_and_option_is_on_the_page(hook: ModuleType, page: str) -> None:
    app = hook.build_ct_app()
    sections = _sections(page)
    commands = list(_commands(app, ("ct",)))
    # The built-in commands and those of the first-party plugins, subcommands included.
    assert len(commands) > 40, [" ".join(path) for path, _ in commands]
    missing = []
    for path, command in commands:
        title = " ".join(path)
        if title not in sections:
            missing.append(f"no section for {title!r}")
            continue
        for name in _shown_names(command):
            if f"`{name}" not in sections[title] and f", {name}" not in sections[title]:
                missing.append(f"{title}: {name}")
    assert not missing, missing


def test_global_options_are_listed_once_at_the_top(hook: ModuleType, page: str) -> None:
    app = hook.build_ct_app()
    top = page.split("\n## ct ", 1)[0]
    names = _shown_names(app.meta)
    assert "--base-url" in names and "--compact" in names
    for name in names:
        assert f"`{name}" in top or f", {name}" in top, name
    assert page.count("Global options (before the command)") == 1


def test_a_command_section_shows_the_commands_whole_docstring(page: str) -> None:
    from ct_cli.commands.login import login

    first_paragraph = " ".join(login.__doc__.split("\n\n")[0].split())
    assert first_paragraph in _sections(page)["ct login"]


def test_markup_in_help_texts_stays_text(page: str) -> None:
    section = _sections(page)["ct download-log"]
    assert "&lt;output-dir&gt;/&lt;sub_job_id&gt;/" in section
    assert "<output-dir>" not in section


def test_the_page_lands_in_the_site_build(hook: ModuleType) -> None:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "docs/hooks/cli_reference.py" in text
    assert "reference/cli.md" in text
    assert not (ROOT / "docs" / hook.PAGE).exists(), "the CLI reference is generated, never a file in docs/"

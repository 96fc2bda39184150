"""`ct --help` drawn by ct_cli.roothelp is the page cyclopts prints, byte for byte.

`ct --help` does not import cyclopts or rich: it runs the same registration hooks against a
recorder and lays the page out itself. These tests are what keeps that honest. They render both
pages from the live plugin manager (every installed plugin) at every width, plain and styled, from
random command tables, and through a real pseudo-terminal, and they check that whatever the
renderer does not reproduce is handed to cyclopts instead (same output, warnings once).
"""

from __future__ import annotations

import io
import json
import os
import random
import string
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ct_cli import cmdline, roothelp
from ct_core import plugins
from ct_core.hookspecs import hookimpl

CT_SCRIPT = Path(sys.executable).with_name("ct")
#: Every width from the narrowest drawn up to a wide terminal, then a sample of wider ones.
WIDTHS = [*range(roothelp.MIN_WIDTH, 131), *range(131, 420, 9)]


def cyclopts_page(app_or_pm: Any, prog: str, width: int, styled: bool) -> str:
    """The root help page as cyclopts and rich print it on a console of `width` columns.

    `app_or_pm` is a built app, or a plugin manager to build one from.
    """
    from rich.console import Console

    from ct_cli.app import build_app

    app = build_app(app_or_pm, name=prog) if isinstance(app_or_pm, plugins.CTPluginManager) else app_or_pm
    buffer = io.StringIO()
    app.meta.help_print([], console=Console(file=buffer, width=width, force_terminal=styled, _environ={}))
    return buffer.getvalue()


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> plugins.CTPluginManager:
    """A plugin manager holding every installed plugin, as a user's `ct` loads them."""
    monkeypatch.delenv(plugins.ALLOW_ENV_VAR, raising=False)
    pm = plugins.new_plugin_manager()
    plugins.load_plugins(pm)
    return pm


def first_party_commands() -> set[str]:
    """The command names the installed first-party plugins add (the runs plugin adds two)."""
    names = {ep.name for ep in plugins.discover_entry_points()}
    expected = {"capacity", "lora", "model-deployment", "router-replay"} & names
    if "runs" in names:
        expected |= {"datasets", "runs"}
    return expected


@pytest.mark.parametrize("prog", ["ct", "cortex-training"])
@pytest.mark.parametrize("styled", [False, True], ids=["plain", "terminal"])
def test_the_page_is_cyclopts_page_at_every_width(
    installed: plugins.CTPluginManager, prog: str, styled: bool
) -> None:
    from ct_cli.app import build_app

    commands = roothelp.recorded_commands(installed, prog)
    assert commands is not None, "the installed plugins' commands should be drawn directly"
    assert first_party_commands() <= {entry.name for entry in commands}
    app = build_app(installed, name=prog)
    for width in WIDTHS:
        page = roothelp.render(prog, commands, width=width, styled=styled)
        assert page == cyclopts_page(app, prog, width, styled), f"width {width}"
        assert ("\x1b[36m" in page) is styled


def _random_word(rng: random.Random) -> str:
    size = rng.choice([1, 2, 3, 5, 8, 13, 21, 34, 55, 89])
    alphabet = string.ascii_letters + string.digits + "-_.,;()[]/'\"=+*%$#!?&<>|~{}"
    word = "".join(rng.choice(alphabet) for _ in range(size))
    return word + ":" if rng.random() < 0.1 else word  # "like this: one", as real help texts have


def _random_help(rng: random.Random) -> str:
    words = [rng.choice(string.ascii_letters) + _random_word(rng) for _ in range(rng.randint(1, 30))]
    return words[0].rstrip(":") + "".join(
        rng.choice([" ", " ", " ", "  ", "    "]) + word for word in words[1:]
    )


def _random_name(rng: random.Random) -> str:
    tail = rng.choice([0, 2, 5, 9, 17, 26, 41])
    return rng.choice(string.ascii_lowercase) + "".join(
        rng.choice(string.ascii_lowercase + string.digits + "-_.") for _ in range(tail)
    )


class TablePlugin:
    """A plugin registering a given table of commands: name -> (help, sort key or None)."""

    def __init__(self, table: dict[str, tuple[str, float | None]]) -> None:
        self.table = table

    @hookimpl
    def ct_register_commands(self, app: Any) -> None:
        for name, (help_text, sort_key) in self.table.items():
            extra = {} if sort_key is None else {"sort_key": sort_key}
            app.command("json:dumps", name=name, help=help_text, **extra)


def test_the_page_is_cyclopts_page_for_random_command_tables() -> None:
    drawn = tries = 0
    for seed in range(150):
        rng = random.Random(seed)
        table: dict[str, tuple[str, float | None]] = {}
        for _ in range(rng.randint(0, 8)):
            key = rng.choice([None, None, rng.randint(-3, 30), round(rng.uniform(0, 30), 3)])
            table[_random_name(rng)] = (_random_help(rng), key)
        pm = plugins.new_plugin_manager()
        pm.register(TablePlugin(table), name="table")
        width, styled = rng.randint(roothelp.MIN_WIDTH, 320), rng.random() < 0.5
        tries += 1
        commands = roothelp.recorded_commands(pm, "ct")
        if commands is None:
            continue
        drawn += 1
        page = roothelp.render("ct", commands, width=width, styled=styled)
        assert page == cyclopts_page(pm, "ct", width, styled), f"seed {seed}, width {width}, styled {styled}"
    # Nearly every table is drawn directly (only docstring-like help texts are handed over).
    assert drawn >= tries * 0.8, (drawn, tries)


def _pseudo_terminal() -> tuple[int, Any]:
    """A new pseudo-terminal: its master descriptor, and its other end as a text stream."""
    master, slave = os.openpty()
    return master, open(slave, "w", encoding="utf-8")  # the caller closes both


ENVIRONMENTS: list[dict[str, str]] = [
    {},
    {"COLUMNS": "100"},
    {"COLUMNS": "57", "TERM": "xterm-256color"},
    {"COLUMNS": "39"},
    {"COLUMNS": "wide"},
    {"TERM": "dumb", "COLUMNS": "90"},
    {"NO_COLOR": "1", "COLUMNS": "90"},
    {"NO_COLOR": "", "COLUMNS": "90"},
    {"FORCE_COLOR": "1", "COLUMNS": "90"},
    {"TTY_COMPATIBLE": "0"},
    {"COLORTERM": "truecolor", "COLUMNS": "140"},
]


@pytest.mark.parametrize(
    "environ", ENVIRONMENTS, ids=lambda env: ",".join(f"{k}={v}" for k, v in env.items())
)
def test_width_and_styling_are_the_ones_rich_picks(environ: dict[str, str]) -> None:
    from rich.console import Console

    master, tty = _pseudo_terminal()
    latin = io.TextIOWrapper(io.BytesIO(), encoding="latin-1")
    try:
        for stream in (io.StringIO(), tty, latin):
            shape = roothelp.console_shape(stream, environ)
            if shape is None:
                continue
            console = Console(file=stream, _environ=environ)
            assert shape == (console.width, console.is_terminal), (stream, environ)
            assert (console.color_system is not None) == shape[1]
            assert not (shape[1] and console.no_color)
    finally:
        tty.close()
        os.close(master)
    # The everyday cases are drawn directly, not handed over.
    if environ in ({}, {"COLUMNS": "100"}, {"COLUMNS": "57", "TERM": "xterm-256color"}):
        assert roothelp.console_shape(io.StringIO(), environ) is not None


TERMINAL_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from rich.console import Console
    from ct_cli import roothelp
    from ct_cli.app import build_app
    from ct_core.plugins import get_plugin_manager

    pm = get_plugin_manager()
    page = roothelp.root_help_page(pm, "ct", sys.stdout)
    console = Console(file=sys.stdout)
    with console.capture() as captured:
        build_app(pm, name="ct").meta.help_print([], console=console)
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump({"page": page, "cyclopts": captured.get(), "width": console.width}, out)
    """
)


def test_on_a_real_terminal_the_page_is_cyclopts_page(tmp_path: Path) -> None:
    import fcntl
    import struct
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 123, 0, 0))
    env = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(TERM="xterm-256color")
    env.pop(plugins.ALLOW_ENV_VAR, None)
    result_file = tmp_path / "pages.json"
    try:
        done = subprocess.run(
            [sys.executable, "-c", TERMINAL_SCRIPT, str(result_file)],
            stdin=slave,
            stdout=slave,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    pages = json.loads(result_file.read_text(encoding="utf-8"))
    assert pages["width"] == 123
    assert pages["page"] is not None, "a plain terminal is drawn directly"
    assert pages["page"] == pages["cyclopts"]
    assert "\x1b[1mUsage: ct [GLOBAL OPTIONS] COMMAND [ARGS]\x1b[0m" in pages["page"]


def test_the_recorder_hands_over_what_it_does_not_draw() -> None:
    recorder = roothelp.CommandRecorder("ct")
    recorder.command("pkg.cli:app", name="ok", help="Fine.", sort_key=3, usage="Usage: x", help_epilogue="y")
    assert list(recorder) == ["ok"] and "ok" in recorder
    refused: list[tuple[Any, dict[str, Any]]] = [
        (print, {"name": "fn", "help": "A function object."}),
        ("no_attribute", {"name": "x", "help": "No attribute."}),
        ("pkg.cli:app", {"name": "ok", "help": "The same name twice."}),
        ("pkg.cli:app", {"name": ["a", "b"], "help": "Aliases."}),
        ("pkg.cli:app", {"name": "grp", "help": "A group.", "group": "Other"}),
        ("pkg.cli:app", {"name": "nohelp"}),
        ("pkg.cli:app", {"name": "uni", "help": "Caf\u00e9 au lait."}),
        ("pkg.cli:app", {"name": "two", "help": "First line.\nSecond line."}),
        ("pkg.cli:app", {"name": "param", "help": "Text :param x: more."}),
        ("pkg.cli:app", {"name": "key", "help": "Sorted.", "sort_key": "b"}),
        ("pkg.cli:app", {"name": "flag", "help": "Sorted.", "sort_key": True}),
    ]
    for target, options in refused:
        with pytest.raises(roothelp.Unsupported):
            recorder.command(target, **options)


def test_the_global_options_are_the_launchers() -> None:
    # The launcher declares its parameters one by one; every one of them is in the shared table,
    # with the table's help text (a new option added to one side only fails here and in the pages).
    import inspect

    from ct_cli.app import build_app

    app = build_app(plugins.new_plugin_manager())
    launcher = app.meta.default_command
    assert launcher is not None
    declared = [name for name in inspect.signature(launcher).parameters if name != "tokens"]
    assert declared == [option.field for option in cmdline.GLOBAL_OPTIONS]


def write_plugin(root: Path, module: str, body: str) -> None:
    """Install a one-module plugin under `root` as pip would leave it (module plus dist-info)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(body, encoding="utf-8")
    info = root / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[ct]\n{module} = {module}\n", encoding="utf-8")


def run_help(root: Path, plugin: str) -> subprocess.CompletedProcess[str]:
    """`ct --help` with only `plugin` (from `root`) loaded; also reports whether cyclopts was needed."""
    code = (
        "import sys\n"
        "from ct_cli.main import main\n"
        "code = main(['--help'])\n"
        "sys.stderr.write('cyclopts imported: %s\\n' % ('cyclopts' in sys.modules))\n"
        "raise SystemExit(code)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "100", plugins.ALLOW_ENV_VAR: plugin}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=120,
        check=False,
    )


def test_a_command_registered_by_function_is_listed_through_cyclopts(tmp_path: Path) -> None:
    body = (
        "from ct_core.hookspecs import hookimpl\n\n"
        "def greet() -> None:\n"
        '    """Say hello right here."""\n\n'
        "@hookimpl\n"
        "def ct_register_commands(app):\n"
        "    app.command(greet, name='greet-eager')\n"
    )
    write_plugin(tmp_path / "site", "ct_eager_plugin", body)
    done = run_help(tmp_path / "site", "ct_eager_plugin")
    assert done.returncode == 0, done.stderr
    assert "greet-eager" in done.stdout and "Say hello right here." in done.stdout
    assert "cyclopts imported: True" in done.stderr


def test_a_non_ascii_help_is_listed_through_cyclopts(tmp_path: Path) -> None:
    body = (
        "from ct_core.hookspecs import hookimpl\n\n"
        "@hookimpl\n"
        "def ct_register_commands(app):\n"
        "    app.command('json:dumps', name='cafe', help='Commande caf\\u00e9.')\n"
    )
    write_plugin(tmp_path / "site", "ct_accent_plugin", body)
    done = run_help(tmp_path / "site", "ct_accent_plugin")
    assert done.returncode == 0, done.stderr
    assert "Commande caf\u00e9." in done.stdout
    assert "cyclopts imported: True" in done.stderr


def test_a_failing_registration_is_reported_once(tmp_path: Path) -> None:
    body = (
        "from ct_core.hookspecs import hookimpl\n\n"
        "@hookimpl\n"
        "def ct_register_commands(app):\n"
        "    app.command('json:dumps', name='half-done', help='Registered before the failure.')\n"
        "    raise RuntimeError('no more commands today')\n"
    )
    write_plugin(tmp_path / "site", "ct_failing_plugin", body)
    done = run_help(tmp_path / "site", "ct_failing_plugin")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("failed in ct_register_commands: RuntimeError: no more commands today") == 1
    assert "half-done" in done.stdout


def test_a_plain_plugin_is_drawn_without_cyclopts(tmp_path: Path) -> None:
    body = (
        "from ct_core.hookspecs import hookimpl\n\n"
        "@hookimpl\n"
        "def ct_register_commands(app):\n"
        "    app.command('json:dumps', name='plain-one', help='An ordinary lazy command.', sort_key=2.5)\n"
    )
    write_plugin(tmp_path / "site", "ct_plain_plugin", body)
    done = run_help(tmp_path / "site", "ct_plain_plugin")
    assert done.returncode == 0, done.stderr
    assert "cyclopts imported: False" in done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("│ ")]
    names = [line.split()[1] for line in lines[:5]]
    assert names == ["submit", "get", "list", "plain-one", "wait"]  # sort key 2.5: after list (2)


def test_without_a_command_the_page_goes_to_stderr(ct_home: Path) -> None:
    env = {**os.environ, "COLUMNS": "100", plugins.ALLOW_ENV_VAR: ""}
    done = subprocess.run([str(CT_SCRIPT)], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    golden = (Path(__file__).with_name("golden") / "help.txt").read_text(encoding="utf-8")
    page, _, error = done.stderr.rpartition("error: a command is required")
    assert "\n".join(line.rstrip() for line in page.splitlines()) + "\n" == golden
    assert error.startswith("\nhint: run 'ct --help' to see the commands")


def test_with_stdout_closed_help_prints_nothing_and_succeeds(ct_home: Path) -> None:
    # Python leaves sys.stdout None when descriptor 1 is closed; rich then writes nowhere, and so do we.
    env = {**os.environ, plugins.ALLOW_ENV_VAR: ""}
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" --help >&-', str(CT_SCRIPT)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""

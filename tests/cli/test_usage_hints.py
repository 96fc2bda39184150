"""Wrong command lines say what was meant: where a misplaced global option goes, and the nearest
command or option name to a mistyped one."""

from __future__ import annotations

import io
from pathlib import Path

import pytest


def _run(*args: str) -> tuple[int, str, str]:
    from ct_cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdout=out, stderr=err, stdin=io.StringIO(""))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["submit", "job.json", "--compact"], "ct --compact submit"),
        (["list", "--base-url", "http://127.0.0.1:9"], "ct --base-url BASE_URL list"),
        (["list", "--database=DB", "--no-verify-ssl"], "ct --no-verify-ssl list"),
        (["catalog", "list", "--poll-timeout", "3"], "ct --poll-timeout SECONDS catalog list"),
    ],
)
def test_a_global_option_after_the_command_says_where_it_goes(
    ct_home: Path, argv: list[str], where: str
) -> None:
    code, out, err = _run(*argv)
    assert code == 2 and out == "", err
    first = err.splitlines()[0]
    assert "is a global option of ct" in first and "put it before the command" in first, err
    assert where in first, err


def test_a_global_option_the_command_also_has_is_still_the_commands(ct_home: Path) -> None:
    # `list --all --database DB` filters the account list: --database is list's own option there.
    code, _, err = _run("list", "--database", "DB")
    assert code == 1 and "only apply with --all" in err, err


@pytest.mark.parametrize(
    ("argv", "unknown", "suggestion"),
    [
        (["lst"], "unknown command: lst", "did you mean 'list'?"),
        (["submti", "job.json"], "unknown command: submti", "did you mean 'submit'?"),
        (["list", "--stauts", "running"], "unknown option --stauts of list", "did you mean --status?"),
        (["list", "--all", "--limt=3"], "unknown option --limt of list", "did you mean --limit?"),
        (["--compcat", "list"], "unknown global option --compcat", "did you mean --compact?"),
        (["catalog", "jbo"], "unknown command: catalog jbo", "did you mean 'catalog job'?"),
    ],
)
def test_a_mistyped_name_gets_the_nearest_one(
    ct_home: Path, argv: list[str], unknown: str, suggestion: str
) -> None:
    code, out, err = _run(*argv)
    assert code == 2 and out == "", err
    first = err.splitlines()[0]
    assert first == f"error: {unknown}; {suggestion}", err


def test_a_name_like_nothing_gets_no_guess(ct_home: Path) -> None:
    code, _, err = _run("frobnicate")
    assert code == 2
    assert err.splitlines()[0] == "error: unknown command: frobnicate", err
    assert "ct --help" in err

"""The examples in docs/ run: every shell and Python example of every page, against a local server.

Every fence names its language (`text` for a listing that is no example). A `bash`, `sh`, `shell` or
`console` fence is a shell example and a `python` fence a Python example; each of these runs here
unless the line right before its fence is an HTML comment that says why not:
`<!-- not-run: needs a Snowflake account -->`.

A page's examples run in page order, as a reader would type them, in one test with one fresh
`ct local serve` and one working folder (HOME points into the test's own folder):

- the server's address replaces every `http://127.0.0.1:PORT` of the examples;
- the page's examples name one database (`--database DB`, `database="DB"`; CT_DB when none does);
- when the examples use a job (`job_id` in Python, `JOB_ID` or `JOB` in shell, which become its id),
  the job of `examples/job.json` (a training and a sampling sub-job) is created there first;
- the reader has logged in to that server and database (`ct login` with a JSON config, as in
  getting-started.md), and the working folder holds `examples/` and `job.json` (a copy of
  `examples/job.json`);
- the Python examples share one namespace, which starts with `CortexTrainingClient`, `client` (a
  client of that server and database) and `job_id`;
- a shell example runs under `bash -e -o pipefail` with ct's virtualenv first on PATH; in a
  `console` example the lines after `$ ` are the commands, and one whose shown output starts with
  `error:` must fail.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "console"})
PYTHON_LANGUAGES = frozenset({"python", "py"})

_NOT_RUN = re.compile(r"^<!--\s*not-run:(.*?)-->\s*$", re.DOTALL)


@dataclass(frozen=True)
class Example:
    page: str  # relative to docs/
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    not_run: str | None  # the reason, when marked not to run

    @property
    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"

    @property
    def kind(self) -> str | None:
        if self.language in SHELL_LANGUAGES:
            return "shell"
        if self.language in PYTHON_LANGUAGES:
            return "python"
        return None


def pages() -> list[Path]:
    return sorted(path for path in DOCS.rglob("*.md") if "hooks" not in path.relative_to(DOCS).parts)


def fences(path: Path) -> list[Example]:
    """Every fenced block of a page, with the not-run reason written just before it."""
    tokens = MarkdownIt().parse(path.read_text(encoding="utf-8"))
    found = []
    for index, token in enumerate(tokens):
        if token.type != "fence" or token.map is None:
            continue
        reason = None
        before = tokens[index - 1] if index else None
        if before is not None and before.type == "html_block" and before.map is not None:
            match = _NOT_RUN.match(before.content.strip())
            if match and before.map[1] == token.map[0]:
                reason = " ".join(match.group(1).split())
        found.append(
            Example(
                page=path.relative_to(DOCS).as_posix() if path.is_relative_to(DOCS) else path.name,
                line=token.map[0] + 1,
                language=(token.info.split() or [""])[0],
                code=token.content,
                not_run=reason,
            )
        )
    return found


def examples() -> list[Example]:
    """The shell and Python examples of every page, in page order."""
    return [example for path in pages() for example in fences(path) if example.kind is not None]


def console_commands(code: str) -> list[tuple[str, bool]]:
    """The commands of a `console` block (lines after `$ `, with their `\\` continuations) and, for
    each, whether the output shown under it is an error (the command is expected to fail)."""
    commands: list[tuple[str, bool]] = []
    lines = code.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.startswith("$ "):
            continue
        command = line[2:]
        while command.rstrip().endswith("\\") and index < len(lines):
            command += "\n" + lines[index]
            index += 1
        shown = lines[index] if index < len(lines) else ""
        commands.append((command, shown.startswith("error:")))
    return commands


# --- running a page ---------------------------------------------------------------------------------

DEFAULT_DATABASE = "CT_DB"
#: A shell example may take this long (a `--wait` included); only a hang gets near it.
SHELL_TIMEOUT_S = 240
_LOCAL_URL = re.compile(r"http://127\.0\.0\.1:\d+")
_DATABASE = re.compile(r"""--database[= ]([A-Za-z_][\w$]*)|database=["']([A-Za-z_][\w$]*)["']""")
_JOB_PLACEHOLDER = re.compile(r"\bJOB(?:_ID)?\b")


def runnable(page: str) -> list[Example]:
    return [example for example in examples() if example.page == page and example.not_run is None]


def page_database(page_examples: list[Example]) -> str:
    names = {a or b for example in page_examples for a, b in _DATABASE.findall(example.code)}
    assert len(names) <= 1, f"docs/{page_examples[0].page}: the examples name several databases: {names}"
    return names.pop() if names else DEFAULT_DATABASE


def uses_job(page_examples: list[Example]) -> bool:
    return any(
        "job_id" in example.code if example.kind == "python" else bool(_JOB_PLACEHOLDER.search(example.code))
        for example in page_examples
    )


def _pages_with_examples() -> list[str]:
    return sorted({example.page for example in examples() if example.not_run is None})


@dataclass
class PageRun:
    base_url: str
    database: str
    workdir: Path
    job_id: str | None
    namespace: dict[str, Any]

    def substitute(self, code: str, shell: bool) -> str:
        code = _LOCAL_URL.sub(self.base_url, code)
        if shell and self.job_id is not None:
            code = _JOB_PLACEHOLDER.sub(self.job_id, code)
        return code

    def run(self, example: Example) -> None:
        if example.kind == "python":
            code = self.substitute(example.code, shell=False)
            exec(compile(code, example.where, "exec"), self.namespace)
            return
        code = self.substitute(example.code, shell=True)
        if example.language == "console":
            for command, fails in console_commands(code):
                self._shell(example, command, expect_failure=fails)
        else:
            self._shell(example, code, expect_failure=False)

    def _shell(self, example: Example, script: str, *, expect_failure: bool) -> None:
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "CT_MODEL_CATALOG": str(ROOT / "model-catalog"),
        }
        completed = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=self.workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=SHELL_TIMEOUT_S,
            check=False,
        )
        failed = completed.returncode != 0
        assert failed == expect_failure, (
            f"{example.where}: exit {completed.returncode} (expected {'a failure' if expect_failure else 0})"
            f" from:\n{script}\nstdout: {completed.stdout[-2000:]}\nstderr: {completed.stderr[-3000:]}"
        )


@pytest.fixture
def page_run(
    request: pytest.FixtureRequest,
    local_server_factory: Any,
    ct_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[PageRun]:
    from ct_core import CortexTrainingClient

    page_examples = runnable(request.param)
    database = page_database(page_examples)
    server = local_server_factory()
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "examples").symlink_to(ROOT / "examples")
    (workdir / "job.json").write_bytes((ROOT / "examples" / "job.json").read_bytes())
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("CT_MODEL_CATALOG", str(ROOT / "model-catalog"))
    login = tmp_path / "ct-local.json"
    login.write_text(json.dumps({"base_url": server.base_url, "database": database}), encoding="utf-8")
    logged_in = subprocess.run(
        [str(Path(sys.executable).with_name("ct")), "login", str(login)],
        capture_output=True,
        text=True,
        timeout=SHELL_TIMEOUT_S,
        check=False,
    )
    assert logged_in.returncode == 0, logged_in
    client = CortexTrainingClient(base_url=server.base_url, database=database, schema="PUBLIC")
    job_id = None
    if uses_job(page_examples):
        body = json.loads((ROOT / "examples" / "job.json").read_text(encoding="utf-8"))
        job_id = str(client.create_job_from_body(body)["job_id"])
        client.wait_for_job(job_id)
    namespace: dict[str, Any] = {
        "__name__": "__docs_example__",
        "CortexTrainingClient": CortexTrainingClient,
        "client": client,
        "job_id": job_id,
    }
    try:
        yield PageRun(server.base_url, database, workdir, job_id, namespace)
    finally:
        client.close()


# --- the tests --------------------------------------------------------------------------------------


def test_every_fence_names_its_language() -> None:
    unnamed = [
        f"docs/{path.relative_to(DOCS)}:{fence.line}"
        for path in pages()
        for fence in fences(path)
        if not fence.language
    ]
    assert not unnamed, f"fences without a language (use text for a listing): {unnamed}"


def test_an_example_that_does_not_run_says_why() -> None:
    unexplained = [example.where for example in examples() if example.not_run == ""]
    assert not unexplained, unexplained


def test_the_parser_reads_markers_and_console_commands(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# t\n\n<!-- not-run: needs a Snowflake account -->\n```bash\nct list\n```\n\n"
        "<!-- not-run: this comment is not right before the fence -->\n\n```python\nprint(1)\n```\n\n"
        "```console\n$ ct a \\\n    --b\nerror: bad\n$ ct c\n{}\n```\n",
        encoding="utf-8",
    )
    first, second, third = fences(page)
    assert (first.language, first.not_run) == ("bash", "needs a Snowflake account")
    assert (second.language, second.not_run) == ("python", None)
    assert console_commands(third.code) == [("ct a \\\n    --b", True), ("ct c", False)]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("page_run", _pages_with_examples(), indirect=True)
def test_the_examples_of_a_page_run(page_run: PageRun, request: pytest.FixtureRequest) -> None:
    page = request.node.callspec.params["page_run"]
    for example in runnable(page):
        page_run.run(example)

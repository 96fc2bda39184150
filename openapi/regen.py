"""Regenerate the typed transport package ``ct_api`` from the OpenAPI spec, or check that it is current.

This script owns the one way generated/ct_api is produced:

    python openapi/regen.py --output generated/ct_api   # rewrite the package (make regen)
    python openapi/regen.py --check generated/ct_api    # exit 1 and list drift (make regen-check)

The templates under openapi/templates replace the generator's own, so the package holds only what
ct runs (see docs/regenerating-the-client.md):

- ``ct_api/api/<tag>/__init__.py``: per operation one thin typed function over ct's hand-written
  transport (``Transport.request``/``Transport.stream``), passing the retry rule the spec names in
  the operation's ``x-ct-retry`` extension;
- ``ct_api/models/__init__.py``: the request and answer schemas as TypedDicts (free at run time);
- ``ct_api/types.py``: what those functions need of a transport, as Protocols.

Templates of what nothing runs (attrs models, httpx endpoint modules, the httpx client, errors)
render to nothing, and the empty files they leave are deleted here. The generator drops vendor
extensions, so this script reads the spec itself and hands each operation's id, retry rule, body
content type and kind of answer to the templates as ``ct_spec.jinja`` (a template file written next
to copies of ours in a temporary folder).

Besides the generator's package, the route table ``ct_api/routes.py`` is written from the same spec:
every operationId with its HTTP method and path template. ``ct_core.http`` builds every URL from it,
so no path is spelled by hand anywhere else, and the same check covers it.

Both modes run the pinned openapi-python-client into a fresh temporary directory, so the result never
depends on what the output directory held before. The generator's post hooks run ``ruff`` from the same
virtual environment as this interpreter (its bin directory is put first on PATH) in isolated mode, which
makes the output byte-for-byte reproducible on any machine with the pinned tools.
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# The generator version the committed package was produced with; a different one writes different code.
GENERATOR_DISTRIBUTION = "openapi-python-client"
GENERATOR_VERSION = "0.29.1"

OPENAPI_DIR = Path(__file__).resolve().parent
DEFAULT_SPEC = OPENAPI_DIR / "cortex-training.yaml"
DEFAULT_CONFIG = OPENAPI_DIR / "config.yaml"
#: Templates that replace the generator's own of the same name.
TEMPLATES_DIR = OPENAPI_DIR / "templates"
#: The template file regen.py writes beside copies of ours: the spec's data the generator drops.
SPEC_DATA_TEMPLATE = "ct_spec.jinja"
#: The vendor extension naming an operation's retry rule (a key of ct_core.http.retry.RULES).
RETRY_EXTENSION = "x-ct-retry"
JSON_CONTENT_TYPE = "application/json"
EVENT_STREAM_CONTENT_TYPE = "text/event-stream"

# Files the interpreter or tools leave behind that are not part of the generated output.
IGNORED_NAMES = frozenset({"__pycache__", ".ruff_cache", ".mypy_cache", ".pytest_cache"})

EXIT_DRIFT = 1
EXIT_SETUP = 2


class RegenError(RuntimeError):
    """The generator could not run or reported a problem with the spec."""


def _check_generator_version() -> None:
    try:
        installed = importlib.metadata.version(GENERATOR_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise RegenError(f"{GENERATOR_DISTRIBUTION} is not installed in {sys.prefix}") from exc
    if installed != GENERATOR_VERSION:
        raise RegenError(
            f"{GENERATOR_DISTRIBUTION}=={GENERATOR_VERSION} is required, found {installed}; "
            "install the pinned version (pip install -e '.[dev]')"
        )


def _tool_environment() -> dict[str, str]:
    """The environment for the generator: this interpreter's bin directory first, so hooks use its ruff."""
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    ruff = shutil.which("ruff", path=env["PATH"])
    # The generator only warns when a hook's command is missing and then writes unformatted code, which
    # would show up as drift everywhere; refuse instead.
    if ruff is None:
        raise RegenError(f"ruff is not installed next to {sys.executable}; it formats the generated code")
    return env


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in (document.get("paths") or {}).items():
        for method in HTTP_METHODS:
            operation = item.get(method)
            if operation is not None:
                yield method.upper(), path, operation


def _answer_kind(operation_id: str, operation: dict[str, Any]) -> tuple[str, bool]:
    """How the generated function answers, and whether the operation may answer server-sent events.

    ``json``: the body, typed; ``answer``: the transport's answer (several 2xx statuses, each
    meaning something), typed by its body; ``none``: nothing; ``stream``: the answer read as it
    arrives (a body that is not JSON).
    """
    responses = operation.get("responses") or {}
    success = {code: spec for code, spec in responses.items() if str(code).startswith("2")}
    types = {content for spec in success.values() for content in (spec.get("content") or {})}
    events = EVENT_STREAM_CONTENT_TYPE in types
    types.discard(EVENT_STREAM_CONTENT_TYPE)
    if not types:
        return "none", events
    if types == {JSON_CONTENT_TYPE}:
        return ("answer" if len(success) > 1 else "json"), events
    if JSON_CONTENT_TYPE not in types:
        return "stream", events
    raise RegenError(f"{operation_id} answers both JSON and {sorted(types - {JSON_CONTENT_TYPE})}")


def spec_data(spec: Path = DEFAULT_SPEC) -> dict[str, dict[str, Any]]:
    """Per operation ("METHOD path"): its id, retry rule, body content type and kind of answer."""
    import yaml

    document = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data: dict[str, dict[str, Any]] = {}
    for method, path, operation in _operations(document):
        operation_id = operation.get("operationId")
        if not operation_id:
            raise RegenError(f"{method} {path} has no operationId")
        rule = operation.get(RETRY_EXTENSION)
        if not isinstance(rule, str) or not rule:
            raise RegenError(f"{operation_id} names no retry rule ({RETRY_EXTENSION})")
        body = ((operation.get("requestBody") or {}).get("content") or {}).keys()
        answer, events = _answer_kind(operation_id, operation)
        data[f"{method} {path}"] = {
            "id": operation_id,
            "retry": rule,
            "body_type": next(iter(body), ""),
            "answer": answer,
            "events": events,
        }
    return data


def _templates(scratch: Path, spec: Path) -> Path:
    """Copies of our templates plus ``ct_spec.jinja`` (the spec's data), in a folder under ``scratch``."""
    folder = scratch / "templates"
    shutil.copytree(TEMPLATES_DIR, folder)
    # JSON of strings and booleans is a Jinja literal too (Jinja spells the booleans the same way).
    literal = json.dumps(spec_data(spec), indent=1, sort_keys=True)
    (folder / SPEC_DATA_TEMPLATE).write_text(
        "{# Written by openapi/regen.py from the spec: what the generator does not keep. #}\n"
        f"{{% set ct_operations = {literal} %}}\n",
        encoding="utf-8",
    )
    return folder


def _prune(output: Path) -> None:
    """Delete the files our templates render empty (what nothing runs), then the folders left empty."""
    for path in sorted(output.rglob("*"), reverse=True):
        if path.is_file() and not path.read_text(encoding="utf-8").strip():
            path.unlink()
    for path in sorted(output.rglob("*"), key=lambda item: len(item.parts), reverse=True):
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def generate(output: Path, *, spec: Path = DEFAULT_SPEC, config: Path = DEFAULT_CONFIG) -> None:
    """Run the generator so that ``output`` (which must not exist) holds the package."""
    _check_generator_version()
    with tempfile.TemporaryDirectory(prefix="ct-regen-templates-") as scratch:
        _generate(output, spec=spec, config=config, templates=_templates(Path(scratch), spec))


def _generate(output: Path, *, spec: Path, config: Path, templates: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "openapi_python_client",
        "generate",
        "--path",
        str(spec),
        "--config",
        str(config),
        "--meta",
        "none",
        "--output-path",
        str(output),
        "--custom-template-path",
        str(templates),
        "--fail-on-warning",
    ]
    done = subprocess.run(command, env=_tool_environment(), capture_output=True, text=True, check=False)
    # The generator can report errors and still exit 0, so its words count as much as its status.
    report = (done.stdout + done.stderr).strip()
    failed = done.returncode != 0 or "Error(s) encountered" in report or "Warning(s) encountered" in report
    if failed or not (output / "__init__.py").is_file():
        raise RegenError(f"openapi-python-client failed (exit {done.returncode}):\n{report}")
    for leftover in IGNORED_NAMES:
        for path in output.rglob(leftover):
            shutil.rmtree(path, ignore_errors=True)
    _prune(output)
    (output / "routes.py").write_text(route_table(spec), encoding="utf-8")


HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def route_table(spec: Path = DEFAULT_SPEC) -> str:
    """The source of ``routes.py``: ``ROUTES[operationId] = (METHOD, path template, tag)``, sorted."""
    import yaml

    document = yaml.safe_load(spec.read_text(encoding="utf-8"))
    rows: list[tuple[str, str, str, str]] = []
    for method, path, operation in _operations(document):
        operation_id = operation.get("operationId")
        if not operation_id:
            raise RegenError(f"{method} {path} has no operationId")
        tag = (operation.get("tags") or ["default"])[0]
        rows.append((operation_id, method, path, tag))
    seen: set[str] = set()
    for operation_id, *_ in rows:
        if operation_id in seen:
            raise RegenError(f"operationId {operation_id} is used twice")
        seen.add(operation_id)
    lines = [
        '"""Every REST operation of the spec: operationId -> (HTTP method, path template, tag).',
        "",
        "Written by openapi/regen.py from openapi/cortex-training.yaml; never edited by hand.",
        '"""',
        "",
        "ROUTES: dict[str, tuple[str, str, str]] = {",
    ]
    for operation_id, method, path, tag in sorted(rows):
        lines.append(f"    {operation_id!r}: ({method!r}, {path!r}, {tag!r}),".replace("'", '"'))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _relative_files(root: Path) -> set[str]:
    files: set[str] = set()
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if any(part in IGNORED_NAMES for part in relative.parts) or path.suffix == ".pyc":
            continue
        if path.is_file():
            files.add(relative.as_posix())
    return files


def differences(expected: Path, actual: Path) -> list[str]:
    """Describe every file that differs between two package trees, one line each, sorted by path."""
    want = _relative_files(expected)
    have = _relative_files(actual)
    lines = [f"missing: {name}" for name in sorted(want - have)]
    lines += [f"unexpected: {name}" for name in sorted(have - want)]
    lines += [
        f"differs: {name}"
        for name in sorted(want & have)
        if not filecmp.cmp(expected / name, actual / name, shallow=False)
    ]
    return sorted(lines, key=lambda line: line.split(": ", 1)[1])


def regenerate(output: Path, *, spec: Path = DEFAULT_SPEC, config: Path = DEFAULT_CONFIG) -> None:
    """Replace ``output`` with a freshly generated package."""
    output = output.resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    # Generate beside the target so the final move stays on one file system.
    with tempfile.TemporaryDirectory(prefix=".regen-", dir=output.parent) as scratch:
        fresh = Path(scratch) / output.name
        generate(fresh, spec=spec, config=config)
        if output.exists():
            shutil.rmtree(output)
        fresh.rename(output)


def check(output: Path, *, spec: Path = DEFAULT_SPEC, config: Path = DEFAULT_CONFIG) -> list[str]:
    """Regenerate into a temporary directory and return the differences from ``output``."""
    with tempfile.TemporaryDirectory(prefix="ct-regen-check-") as scratch:
        fresh = Path(scratch) / "ct_api"
        generate(fresh, spec=spec, config=config)
        return differences(fresh, output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--output", type=Path, help="rewrite this package directory from the spec")
    mode.add_argument("--check", type=Path, help="fail when this package directory differs from the spec")
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC, help="the OpenAPI document")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="the generator config")
    args = parser.parse_args(argv)
    try:
        if args.output is not None:
            regenerate(args.output, spec=args.spec, config=args.config)
            sys.stdout.write(f"regenerated {args.output} from {args.spec}\n")
            return 0
        drift = check(args.check, spec=args.spec, config=args.config)
    except RegenError as exc:
        sys.stderr.write(f"regen: {exc}\n")
        return EXIT_SETUP
    if drift:
        sys.stderr.write(f"{args.check} is out of date with {args.spec}; run `make regen`:\n")
        sys.stderr.writelines(f"  {line}\n" for line in drift)
        return EXIT_DRIFT
    sys.stdout.write(f"{args.check} matches {args.spec}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

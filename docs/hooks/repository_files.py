"""mkdocs hook: repository files the guides link to, published with the site.

A guide links to a file beside docs/ (`../ARCHITECTURE.md`, `../openapi/cortex-training.yaml`), which
works when reading the repository. For the site, each such file that exists is copied in under
`repository/` (a Markdown file becomes a page) and the link is pointed at the copy, so the strict
build still refuses any link whose target exists nowhere.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

#: Where the copies land in the site.
PREFIX = "repository"

_LINK = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")


def _outside_target(page_uri: str, target: str) -> str | None:
    """The repository path of a relative link that leaves docs/, or None."""
    if "://" in target or target.startswith(("/", "#", "mailto:")):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page_uri), target))
    if not joined.startswith("../"):
        return None
    return joined[len("../") :]


def _repository_root(config: Any) -> Path:
    return Path(config["docs_dir"]).resolve().parent


def _linked_files(config: Any, files: Any) -> set[str]:
    root = _repository_root(config)
    found: set[str] = set()
    for file in files.documentation_pages():
        text = file.content_string
        for match in _LINK.finditer(text):
            path = _outside_target(file.src_uri, match.group(1))
            if path and (root / path).is_file():
                found.add(path)
    return found


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    root = _repository_root(config)
    for path in sorted(_linked_files(config, files)):
        files.append(File.generated(config, f"{PREFIX}/{path}", abs_src_path=str(root / path)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    root = _repository_root(config)

    def repoint(match: re.Match[str]) -> str:
        target, anchor = match.group(1), match.group(2) or ""
        path = _outside_target(page.file.src_uri, target)
        if path is None or not (root / path).is_file():
            return match.group(0)
        new = posixpath.relpath(f"{PREFIX}/{path}", posixpath.dirname(page.file.src_uri) or ".")
        return f"]({new}{anchor})"

    return _LINK.sub(repoint, markdown)

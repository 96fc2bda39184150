"""The experiment-run artifact store: list a root, get one object (see docs/logs-and-metrics.md).

A store is bound to one run (``snow://experiment/<experiment>/versions/<run>/``) and does two
things: `list(root)` returns every object below a run-relative folder, and `get(path, directory)`
writes one object, under its own base name, into a directory the caller made private. Everything
above this interface (chunk ordering, manifests, retries) is shared by every store.

`LocalArtifactStore` reads the tree ct_local serves beside its REST routes. Listings from any store
pass through `checked_listing`, which applies the listing rules: names must belong to the run, be
relative and free of traversal, stay under the requested root, and come back de-duplicated and
sorted. The errors (`ArtifactError` and its kinds) are declared in ct_core.errors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ct_core import errors
from ct_core.errors import ArtifactError, ArtifactMissing, ArtifactUnavailable
from ct_core.http import retry as _retry
from ct_core.operations import local

__all__ = [
    "ArtifactEntry",
    "ArtifactError",
    "ArtifactMissing",
    "ArtifactStore",
    "ArtifactUnavailable",
    "LocalArtifactStore",
    "checked_listing",
    "run_uri",
    "safe_relative",
]

#: An experiment or run name that may build a URI: dot-separated identifiers, each plain (these
#: characters only) or double-quoted as SQL quotes them (any text but a slash, a backslash or a
#: control character, with ``""`` for a quote). Nothing in it can end a path segment, and no part is
#: empty, so ``.`` and ``..`` never name a folder. Every name the local server accepts matches (its
#: parts are plain), and so do the quoted parts a service may write for other names.
_PLAIN_PART = r"[A-Za-z0-9_$:@=+-]+"
_QUOTED_PART = r'"(?:[^"/\\\x00-\x1f\x7f]|"")+"'
_PART = rf"(?:{_PLAIN_PART}|{_QUOTED_PART})"
_RUN_PART = re.compile(rf"{_PART}(?:\.{_PART})*")


@dataclass(frozen=True, order=True)
class ArtifactEntry:
    """One staged object: its run-relative path, size and checksum as the listing reported them."""

    path: str
    size: int = 0
    md5: str | None = None


class ArtifactStore(Protocol):
    """What the download code needs from a place that holds a run's artifacts."""

    run_uri: str

    def list(self, root: str) -> list[ArtifactEntry]:
        """Every object below ``root`` (a run-relative folder such as ``_stdout/JOB:training:0``)."""
        ...

    def get(self, path: str, directory: Path, *, timeout: float | None = None) -> Path:
        """Write the object at ``path`` into ``directory`` under its base name; the file's path."""
        ...

    def close(self, *, keep: bool = False) -> None:
        """The download is over; ``keep`` (it succeeded) allows the session to be kept for the next."""
        ...


def run_uri(experiment_run: Mapping[str, Any]) -> str:
    """The logical URI of a run (``snow://experiment/<experiment>/versions/<run>/``) from the
    experiment-run answer (operationId getExperimentRun)."""
    for key in ("experiment_name", "experiment_run_name"):
        if not experiment_run.get(key):
            raise ArtifactError(f"experiment-run response missing field: {key}")
    experiment, run = experiment_run["experiment_name"], experiment_run["experiment_run_name"]
    if not isinstance(experiment, str) or not _RUN_PART.fullmatch(experiment):
        raise ArtifactError("experiment-run response has invalid experiment_name")
    if not isinstance(run, str) or not _RUN_PART.fullmatch(run):
        raise ArtifactError("experiment-run response has invalid experiment_run_name")
    return f"snow://experiment/{experiment}/versions/{run}/"


def safe_relative(path: str) -> bool:
    """A run-relative path with no absolute start, backslash, or empty/./.. segment."""
    return (
        bool(path)
        and not path.startswith("/")
        and "\\" not in path
        and all(part not in ("", ".", "..") for part in path.split("/"))
    )


def checked_listing(rows: Iterable[tuple[str, int, str | None]], run: str, root: str) -> list[ArtifactEntry]:
    """Apply the listing rules to raw ``(name, size, md5)`` rows whose names start with
    ``/versions/<run>/``."""
    prefix = f"/versions/{run}/"
    folder = root.strip("/") + "/"
    found: dict[str, ArtifactEntry] = {}
    for name, size, md5 in rows:
        if not name.startswith(prefix):
            raise ArtifactError(f"experiment artifact LIST returned an unexpected path: {name!r}")
        rel = name[len(prefix) :]
        if not safe_relative(rel):
            raise ArtifactError(f"unsafe experiment artifact path: {rel!r}")
        if not rel.startswith(folder):
            raise ArtifactError(
                f"experiment artifact LIST returned a file outside the requested root {root!r}: {rel!r}"
            )
        found[rel] = ArtifactEntry(rel, int(size or 0), md5)
    return sorted(found.values())


def _route_not_served(error: BaseException) -> bool:
    """A 404 or 405 without a service error code: the server has no such route (it is not ct_local;
    ct_local answers every refusal of its artifact routes with a coded JSON body)."""
    return isinstance(error, errors.APIError) and error.status_code in (404, 405) and not error.code


def artifacts_not_served(base_url: str, error: BaseException) -> ArtifactError:
    """The error for a server whose artifact routes are missing: what a download needs instead."""
    return ArtifactError(
        f"{base_url} does not serve experiment-run artifacts (its artifact route answered "
        f"{getattr(error, 'status_code', None)}), so a job's saved console, metrics and execution logs "
        "cannot be downloaded through it. A client given a base URL reads them from a `ct local serve` "
        "server. For the Cortex Training service, connect through Snowflake instead (a connection "
        "profile, or a programmatic access token with the account host): the artifacts are read over "
        "a Snowflake Connector session."
    )


class LocalArtifactStore:
    """The artifact tree of a ct_local server, read over its local-only REST operations
    (`listLocalArtifacts`, `getLocalArtifact`) through the client's one request path.

    A server without those routes (not ct_local) answers them 404 with no service code: that is
    final at once, raised as an `ArtifactError` that says what a download needs instead.
    """

    def __init__(self, client: Any, experiment_run: Mapping[str, Any]) -> None:
        self.run_uri = run_uri(experiment_run)
        self._client = client
        self._run = str(experiment_run["experiment_run_name"])
        self._experiment = str(experiment_run["experiment_name"])

    def list(self, root: str) -> list[ArtifactEntry]:
        try:
            answer: Any = local.list_local_artifacts(
                self._client,
                experiment_name=self._experiment,
                run_name=self._run,
                prefix=root.strip("/") + "/",
                predicate=_retry.general(final=_route_not_served),
            )
        except errors.APIError as error:
            if _route_not_served(error):
                raise artifacts_not_served(str(self._client.base_url), error) from error
            raise
        files = answer.get("files", []) if isinstance(answer, dict) else []
        rows = [(str(f.get("name", "")), int(f.get("size") or 0), f.get("md5")) for f in files]
        return checked_listing(rows, self._run, root)

    def get(self, path: str, directory: Path, *, timeout: float | None = None) -> Path:
        if not safe_relative(path):
            raise ArtifactError(f"unsafe experiment artifact path: {path!r}")
        target = directory / path.rsplit("/", 1)[-1]
        limit = (timeout, timeout) if timeout is not None else None
        try:
            with (
                local.get_local_artifact(
                    self._client,
                    experiment_name=self._experiment,
                    run_name=self._run,
                    artifact_path=path,
                    timeout=limit,
                ) as response,
                target.open("wb") as sink,
            ):
                for block in response.iter_bytes():
                    sink.write(block)
        except errors.APIError as error:
            if _route_not_served(error):
                raise artifacts_not_served(str(self._client.base_url), error) from error
            raise
        if not target.is_file():
            raise ArtifactError(f"GET did not create expected artifact {path}")
        return target

    def close(self, *, keep: bool = False) -> None:
        # The HTTP client belongs to the SDK client; nothing of our own to release.
        return None

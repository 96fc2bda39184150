"""Catalog layout: names, discovery, loading and lookups (no checking; see `_checks`).

Owns the file-name grammar `<context>-<hardware>-<kind>-<mode>.json`, the folder rule
`<org>--<model>`, `find_catalog()` with `CT_MODEL_CATALOG`, and the `Catalog` object the CLI and the
local server query. Standard library only, so importing it stays cheap.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ct_core.errors import (
    CatalogError,
)

#: Environment variable naming the catalog: the `model-catalog` folder or its `models` folder.
CATALOG_ENV = "CT_MODEL_CATALOG"
#: Folder, below a checkout's root, that holds the catalog.
CATALOG_DIRNAME = "model-catalog"
#: Folder of ct_core/catalog where a wheel carries the catalog (pyproject.toml's force-include).
PACKAGED_DIRNAME = "data"
MODELS_DIRNAME = "models"
SCHEMA_FILENAME = "schema.json"
MODEL_FILENAME = "model.json"
#: Files a model folder may hold besides model.json and job files.
_IGNORED_FILES = frozenset({"README.md", ".gitkeep"})

#: Hardware values of the create-job body; H200 is the server default.
HARDWARE = ("H200", "B200", "B300")
DEFAULT_HARDWARE = "H200"
#: Sub-job kinds in file names, and the workflow each one serves.
KIND_WORKFLOW = {"training": "sft", "training+sampling": "rl", "sampling": "inference"}
WORKFLOW_KIND = {workflow: kind for kind, workflow in KIND_WORKFLOW.items()}
#: The sub-job types each kind carries, in the order job files list them.
KIND_JOB_TYPES = {
    "training": ("training",),
    "training+sampling": ("training", "sampling"),
    "sampling": ("sampling",),
}
MODES = ("lora", "full")
#: Modes a declared workflow must provide (training support means LoRA and full, SFT and RL).
REQUIRED_MODES = {"sft": MODES, "rl": MODES, "inference": ()}
#: LoRA settings that must agree between training and sampling for adapter sync.
LORA_SYNC_KEYS = ("r", "lora_alpha", "target_modules")

_JOB_NAME = re.compile(
    r"^(?P<context>[0-9]+[km]?)-(?P<hardware>[A-Z0-9]+)-(?P<kind>training\+sampling|training|sampling)"
    r"-(?P<mode>lora|full)\.json$"
)
_CONTEXT = re.compile(r"^([0-9]+)([km]?)$")
_CONTEXT_UNITS = {"": 1, "k": 1024, "m": 1024 * 1024}


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the catalog: which file, which field in it, and what."""

    file: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.message}"


@dataclass(frozen=True, slots=True)
class JobFile:
    """One job file: its shape, parsed from the name, and where it lives."""

    model_name: str
    path: Path
    context: int
    hardware: str
    kind: str
    mode: str

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def workflow(self) -> str:
        return KIND_WORKFLOW[self.kind]

    @property
    def context_label(self) -> str:
        return format_context(self.context)

    def body(self) -> dict[str, Any]:
        """The CreateJob body, read afresh (callers may change the returned dict)."""
        data = _read_json(self.path)
        if not isinstance(data, dict):
            raise CatalogError(f"{self.path}: a job file must hold a JSON object")
        return data

    def summary(self) -> dict[str, Any]:
        return {
            "file": self.name,
            "context": self.context_label,
            "max_seq_len": self.context,
            "hardware": self.hardware,
            "kind": self.kind,
            "workflow": self.workflow,
            "mode": self.mode,
        }


@dataclass(frozen=True, slots=True)
class Model:
    """One model folder: its model.json and its job files."""

    name: str
    folder: Path
    info: dict[str, Any]
    jobs: tuple[JobFile, ...] = field(default=())

    @property
    def max_context(self) -> int:
        return int(self.info.get("max_context") or 0)

    @property
    def workflows(self) -> tuple[str, ...]:
        return tuple(self.info.get("workflows") or ())

    @property
    def hardware(self) -> tuple[str, ...]:
        return tuple(sorted({job.hardware for job in self.jobs}))

    def summary(self) -> dict[str, Any]:
        """The row `ct catalog list` prints."""
        return {
            "name": self.name,
            "display_name": self.info.get("display_name"),
            "family": self.info.get("family"),
            "architecture": self.info.get("architecture"),
            "parameters_billions": self.info.get("parameters_billions"),
            "active_parameters_billions": self.info.get("active_parameters_billions"),
            "max_context": self.max_context,
            "workflows": list(self.workflows),
            "hardware": list(self.hardware),
        }

    def describe(self) -> dict[str, Any]:
        """Everything `ct catalog show` prints: model.json plus the job files."""
        out = dict(self.info)
        out["folder"] = self.folder.name
        out["jobs"] = [job.summary() for job in self.jobs]
        return out


# ---------------------------------------------------------------------------------------------
# Names and contexts


def folder_name(model_name: str) -> str:
    """The folder of a model: its hub id with '/' written as '--' (as the Hugging Face cache does)."""
    return model_name.replace("/", "--")


def format_context(tokens: int) -> str:
    """8192 -> '8k', 262144 -> '256k', 1048576 -> '1m'; other counts stay plain numbers."""
    if tokens % _CONTEXT_UNITS["m"] == 0:
        return f"{tokens // _CONTEXT_UNITS['m']}m"
    if tokens % _CONTEXT_UNITS["k"] == 0:
        return f"{tokens // _CONTEXT_UNITS['k']}k"
    return str(tokens)


def parse_context(text: str | int) -> int:
    """'8k' -> 8192, '1M' -> 1048576, '4096' -> 4096 (k and m are powers of two, as in file names)."""
    if isinstance(text, int) and not isinstance(text, bool):
        tokens = text
    else:
        match = _CONTEXT.match(str(text).strip().lower())
        if match is None:
            raise CatalogError(f"context {text!r} is not a token count such as 8192, 8k or 1m")
        tokens = int(match.group(1)) * _CONTEXT_UNITS[match.group(2)]
    if tokens <= 0:
        raise CatalogError(f"context must be positive, got {text!r}")
    return tokens


def parse_job_filename(name: str) -> tuple[int, str, str, str]:
    """Split `<context>-<hardware>-<kind>-<mode>.json` into (tokens, hardware, kind, mode)."""
    match = _JOB_NAME.match(name)
    if match is None:
        raise CatalogError(
            f"job file name {name!r} does not follow <context>-<hardware>-<kind>-<mode>.json "
            "(e.g. 8k-H200-training+sampling-lora.json)"
        )
    hardware = match.group("hardware")
    if hardware not in HARDWARE:
        raise CatalogError(f"job file name {name!r}: hardware must be one of {', '.join(HARDWARE)}")
    return parse_context(match.group("context")), hardware, match.group("kind"), match.group("mode")


def job_filename(context: int, hardware: str, kind: str, mode: str) -> str:
    return f"{format_context(context)}-{hardware}-{kind}-{mode}.json"


# ---------------------------------------------------------------------------------------------
# Discovery and loading


def _catalog_dir(path: Path) -> Path | None:
    """Accept either the catalog folder (holding models/) or the models folder itself."""
    if (path / MODELS_DIRNAME).is_dir():
        return path
    if path.name == MODELS_DIRNAME and path.is_dir():
        return path.parent
    return None


def find_catalog(start: Path | None = None) -> Path:
    """Return the catalog folder (the one holding `models/` and `schema.json`).

    Order: `CT_MODEL_CATALOG`; then `model-catalog/` in `start` (default: the working directory)
    or any parent of it; then the checkout this module was imported from (editable installs);
    then the copy an installed wheel ships as package data (`ct_core/catalog/data`).
    """
    env = os.environ.get(CATALOG_ENV)
    if env:
        found = _catalog_dir(Path(env).expanduser())
        if found is None:
            raise CatalogError(f"{CATALOG_ENV}={env!r} is not a model catalog (no {MODELS_DIRNAME}/ folder)")
        return found
    here = (start or Path.cwd()).resolve()
    candidates = [here, *here.parents, Path(__file__).resolve().parents[2]]
    for base in candidates:
        found = _catalog_dir(base / CATALOG_DIRNAME)
        if found is not None:
            return found
    packaged = _catalog_dir(Path(__file__).resolve().parent / PACKAGED_DIRNAME)
    if packaged is not None:
        return packaged
    raise CatalogError(
        f"model catalog not found: it is neither in this installation nor in a ct checkout; set "
        f"{CATALOG_ENV} to a {CATALOG_DIRNAME} folder"
    )


def _read_json(path: Path) -> Any:
    try:
        with path.open("rb") as handle:
            return json.load(handle)
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise CatalogError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc


def _model_dirs(models_dir: Path) -> Iterator[Path]:
    for entry in sorted(models_dir.iterdir(), key=lambda p: p.name.lower()):
        if entry.is_dir() and not entry.name.startswith("."):
            yield entry


def _job_files(model_name: str, folder: Path) -> Iterator[JobFile]:
    for path in sorted(folder.glob("*.json")):
        if path.name == MODEL_FILENAME:
            continue
        try:
            context, hardware, kind, mode = parse_job_filename(path.name)
        except CatalogError:
            continue  # reported by validate_catalog(); loading stays usable
        yield JobFile(model_name, path, context, hardware, kind, mode)


class Catalog:
    """The loaded catalog: models by name, with lookups the CLI and the local server use."""

    def __init__(self, root: Path, models: list[Model]) -> None:
        self.root = root
        self.models = {model.name: model for model in models}

    def __iter__(self) -> Iterator[Model]:
        return iter(self.models.values())

    def __len__(self) -> int:
        return len(self.models)

    def model_names(self) -> list[str]:
        return list(self.models)

    def get(self, name: str) -> Model:
        """Find a model by hub id, folder name or bare model name, ignoring case."""
        if name in self.models:
            return self.models[name]
        wanted = name.strip().lower()
        matches = [
            model
            for model in self.models.values()
            if wanted in (model.name.lower(), model.folder.name.lower(), model.name.split("/")[-1].lower())
        ]
        if len(matches) == 1:
            return matches[0]
        known = ", ".join(self.models)
        if matches:
            raise CatalogError(f"model {name!r} is ambiguous: {', '.join(m.name for m in matches)}")
        raise CatalogError(f"model {name!r} is not in the catalog; known models: {known}")

    def list_models(self, *, workflow: str | None = None, hardware: str | None = None) -> list[Model]:
        """Models that support `workflow` and have a job file for it (and for `hardware`, if given)."""
        if workflow is not None and workflow not in WORKFLOW_KIND:
            raise CatalogError(f"workflow must be one of {', '.join(WORKFLOW_KIND)}, got {workflow!r}")
        hw = _normalize_hardware(hardware) if hardware is not None else None
        selected = []
        for model in self.models.values():
            if workflow is not None and workflow not in model.workflows:
                continue
            jobs = [
                job
                for job in model.jobs
                if (workflow is None or job.workflow == workflow) and (hw is None or job.hardware == hw)
            ]
            if jobs:
                selected.append(model)
        return selected

    def find_jobs(
        self,
        model: str,
        *,
        context: str | int | None = None,
        hardware: str | None = None,
        mode: str | None = None,
        kind: str | None = None,
        workflow: str | None = None,
    ) -> list[JobFile]:
        """Job files of `model` matching every filter given."""
        entry = self.get(model)
        tokens = parse_context(context) if context is not None else None
        hw = _normalize_hardware(hardware) if hardware is not None else None
        if mode is not None and mode not in MODES:
            raise CatalogError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if kind is not None and kind not in KIND_WORKFLOW:
            raise CatalogError(f"kind must be one of {', '.join(KIND_WORKFLOW)}, got {kind!r}")
        if workflow is not None and workflow not in WORKFLOW_KIND:
            raise CatalogError(f"workflow must be one of {', '.join(WORKFLOW_KIND)}, got {workflow!r}")
        return [
            job
            for job in entry.jobs
            if (tokens is None or job.context == tokens)
            and (hw is None or job.hardware == hw)
            and (mode is None or job.mode == mode)
            and (kind is None or job.kind == kind)
            and (workflow is None or job.workflow == workflow)
        ]

    def pick_job(
        self,
        model: str,
        *,
        context: str | int | None = None,
        hardware: str | None = None,
        mode: str | None = None,
        kind: str | None = None,
        workflow: str | None = None,
    ) -> JobFile:
        """The one job file matching the filters.

        Left open, hardware prefers H200 (the server default) and context the longest one (the
        catalog's recommendation); kind and mode must be given when several remain.
        """
        jobs = self.find_jobs(
            model, context=context, hardware=hardware, mode=mode, kind=kind, workflow=workflow
        )
        name = self.get(model).name
        if not jobs:
            wanted = {
                "context": context,
                "hardware": hardware,
                "mode": mode,
                "kind": kind,
                "workflow": workflow,
            }
            given = ", ".join(f"{key}={value}" for key, value in wanted.items() if value is not None)
            available = ", ".join(job.name for job in self.get(model).jobs) or "none"
            raise CatalogError(
                f"no job file of {name} matches {given or 'the request'}; available: {available}"
            )
        if hardware is None and any(job.hardware == DEFAULT_HARDWARE for job in jobs):
            jobs = [job for job in jobs if job.hardware == DEFAULT_HARDWARE]
        if context is None:
            longest = max(job.context for job in jobs)
            jobs = [job for job in jobs if job.context == longest]
        if len(jobs) > 1:
            raise CatalogError(
                f"{len(jobs)} job files of {name} match; narrow it with --kind/--mode/--hardware: "
                + ", ".join(job.name for job in jobs)
            )
        return jobs[0]

    def render_job(
        self,
        model: str,
        *,
        context: str | int | None = None,
        hardware: str | None = None,
        mode: str | None = None,
        kind: str | None = None,
        workflow: str | None = None,
    ) -> RenderedJob:
        """The CreateJob body for a shape, from its job file or, when no file holds it, derived from one.

        A file of exactly the shape asked for is used as it is (`pick_job`). Otherwise the rules
        allow two changes to a file of the same model, kind and mode: another hardware type (any of
        `HARDWARE`: sub-jobs ask for whole 8-GPU nodes, which every type has), and a shorter context,
        up to the model's `max_context`, taken from the file with the nearest longer context (a
        recipe that holds a longer window holds a shorter one; nothing is stretched). The derived body
        sets `hardware`, every sub-job's `max_seq_len` and `prime_rl.seq_len` where a file sends it.
        Anything else raises `CatalogError` naming the shapes that exist.
        """
        entry = self.get(model)
        exact = self.find_jobs(
            model, context=context, hardware=hardware, mode=mode, kind=kind, workflow=workflow
        )
        if exact:
            job = self.pick_job(
                model, context=context, hardware=hardware, mode=mode, kind=kind, workflow=workflow
            )
            return RenderedJob(job, job.body(), {})
        tokens = parse_context(context) if context is not None else None
        hw = _normalize_hardware(hardware) if hardware is not None else None
        candidates = self.find_jobs(model, mode=mode, kind=kind, workflow=workflow)
        available = ", ".join(job.name for job in entry.jobs) or "none"
        if not candidates:
            wanted = {"mode": mode, "kind": kind, "workflow": workflow}
            given = ", ".join(f"{key}={value}" for key, value in wanted.items() if value is not None)
            raise CatalogError(
                f"no job file of {entry.name} matches {given or 'the request'} to render it from; "
                f"available: {available}"
            )
        contexts = ", ".join(format_context(c) for c in sorted({job.context for job in candidates}))
        if tokens is not None:
            if tokens > entry.max_context:
                raise CatalogError(
                    f"context {format_context(tokens)} is longer than {entry.name}'s max_context "
                    f"{format_context(entry.max_context)}; contexts with job files: {contexts}"
                )
            longer = [job for job in candidates if job.context >= tokens]
            if not longer:
                raise CatalogError(
                    f"no job file of {entry.name} has a context of {format_context(tokens)} or longer to "
                    f"render it from (a recipe is only shortened); contexts with job files: {contexts}"
                )
            nearest = min(job.context for job in longer)
            candidates = [job for job in longer if job.context == nearest]
        else:
            longest = max(job.context for job in candidates)
            candidates = [job for job in candidates if job.context == longest]
        for preferred in (hw, DEFAULT_HARDWARE):
            if preferred is not None and any(job.hardware == preferred for job in candidates):
                candidates = [job for job in candidates if job.hardware == preferred]
                break
        if len(candidates) > 1:
            raise CatalogError(
                f"{len(candidates)} job files of {entry.name} could be the start; narrow it with "
                "--kind/--mode/--hardware: " + ", ".join(job.name for job in candidates)
            )
        job = candidates[0]
        body = job.body()
        changes: dict[str, Any] = {}
        if hw is not None and hw != job.hardware:
            body["hardware"] = hw
            changes["hardware"] = hw
        if tokens is not None and tokens != job.context:
            for sub_job in body.get("sub_job_configs") or []:
                for key in ("training_config", "inference_config"):
                    config = sub_job.get(key) if isinstance(sub_job, dict) else None
                    if isinstance(config, dict) and "max_seq_len" in config:
                        config["max_seq_len"] = tokens
                        prime_rl = config.get("prime_rl")
                        if isinstance(prime_rl, dict) and "seq_len" in prime_rl:
                            prime_rl["seq_len"] = tokens
            changes["max_seq_len"] = tokens
        return RenderedJob(job, body, changes)


@dataclass(frozen=True, slots=True)
class RenderedJob:
    """A CreateJob body for a shape: the job file it comes from and what was changed in it (if anything)."""

    source: JobFile
    body: dict[str, Any]
    #: `hardware` and/or `max_seq_len` set differently from `source`; empty when the file is the shape.
    changes: dict[str, Any]

    @property
    def derived(self) -> bool:
        return bool(self.changes)

    @property
    def name(self) -> str:
        """The file name this shape would have in the catalog."""
        return job_filename(
            int(self.changes.get("max_seq_len", self.source.context)),
            str(self.changes.get("hardware", self.source.hardware)),
            self.source.kind,
            self.source.mode,
        )


def _normalize_hardware(hardware: str) -> str:
    # Deployment gpu_type is case-insensitive; accept any case here and use the wire spelling.
    value = hardware.strip().upper()
    if value not in HARDWARE:
        raise CatalogError(f"hardware must be one of {', '.join(HARDWARE)}, got {hardware!r}")
    return value


def load_catalog(root: Path | str | None = None) -> Catalog:
    """Read every model folder. Unreadable model.json files raise; `validate_catalog` says why in detail."""
    base = Path(root) if root is not None else find_catalog()
    catalog_dir = _catalog_dir(base)
    if catalog_dir is None:
        raise CatalogError(f"{base} is not a model catalog (no {MODELS_DIRNAME}/ folder)")
    models = []
    for folder in _model_dirs(catalog_dir / MODELS_DIRNAME):
        info_path = folder / MODEL_FILENAME
        if not info_path.is_file():
            continue
        info = _read_json(info_path)
        if not isinstance(info, dict) or not isinstance(info.get("name"), str):
            raise CatalogError(f"{info_path}: model.json must be an object with a string 'name'")
        name = info["name"]
        models.append(Model(name, folder, info, tuple(_job_files(name, folder))))
    return Catalog(catalog_dir, models)


def model_names(root: Path | str | None = None) -> list[str]:
    """Hub ids of every model in the catalog (what a local server can list as its models)."""
    return load_catalog(root).model_names()


def job_body(
    model: str,
    *,
    root: Path | str | None = None,
    context: str | int | None = None,
    hardware: str | None = None,
    mode: str | None = None,
    kind: str | None = None,
    workflow: str | None = None,
) -> dict[str, Any]:
    """The CreateJob body of the job file `pick_job` chooses."""
    catalog = load_catalog(root)
    job = catalog.pick_job(model, context=context, hardware=hardware, mode=mode, kind=kind, workflow=workflow)
    return job.body()

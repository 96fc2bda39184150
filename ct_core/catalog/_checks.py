"""Catalog checks: `validate_catalog()` and the rules it applies to model.json and job files.

Rules, in the order they run for each model folder: model.json matches `#/$defs/model` of
schema.json and sits in the folder its name implies; every other file is a job file whose name
parses and whose body matches `#/$defs/job`; the body agrees with its name and folder (hardware,
kind, model_name, context within the model's limit, LoRA on every sub-job, provider and LoRA targets
the model demands); the SDK's create-body validation (plugins included) accepts it unchanged; the
typed factories accept each sub-job; and each workflow model.json lists has its job files.
jsonschema and the SDK validation are imported only when a check runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ct_core.catalog._layout import (
    _IGNORED_FILES,
    KIND_JOB_TYPES,
    LORA_SYNC_KEYS,
    MODEL_FILENAME,
    MODELS_DIRNAME,
    REQUIRED_MODES,
    SCHEMA_FILENAME,
    WORKFLOW_KIND,
    CatalogError,
    JobFile,
    Model,
    Problem,
    _catalog_dir,
    _model_dirs,
    _read_json,
    find_catalog,
    folder_name,
    parse_job_filename,
)


class _Collector:
    """Problems for one catalog, with file paths shown relative to the catalog's parent folder."""

    def __init__(self, catalog_dir: Path) -> None:
        self.base = catalog_dir.parent
        self.problems: list[Problem] = []

    def add(self, path: Path, field_path: str, message: str) -> None:
        try:
            shown = path.resolve().relative_to(self.base.resolve()).as_posix()
        except ValueError:
            shown = str(path)
        self.problems.append(Problem(shown, field_path or "(file)", message))


def _json_path(parts: Any) -> str:
    """['sub_job_configs', 0, 'model_name'] -> 'sub_job_configs[0].model_name'."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


def _load_schemas(catalog_dir: Path, out: _Collector) -> tuple[Any, Any] | None:
    """Validators for model.json and job files, from the catalog's schema.json."""
    import jsonschema  # deferred: only the checker needs it

    schema_path = catalog_dir / SCHEMA_FILENAME
    try:
        schema = _read_json(schema_path)
        validator_cls = jsonschema.validators.validator_for(schema)
        validator_cls.check_schema(schema)
    except CatalogError as exc:
        out.add(schema_path, "(file)", str(exc).removeprefix(f"{schema_path}: "))
        return None
    except jsonschema.SchemaError as exc:
        out.add(schema_path, _json_path(exc.absolute_path), f"not a valid JSON Schema: {exc.message}")
        return None
    checker = jsonschema.FormatChecker()
    model = validator_cls({**schema, "$ref": "#/$defs/model"}, format_checker=checker)
    job = validator_cls({**schema, "$ref": "#/$defs/job"}, format_checker=checker)
    return model, job


def _schema_problems(validator: Any, data: Any, path: Path, out: _Collector) -> bool:
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    for error in errors:
        out.add(path, _json_path(error.absolute_path), f"schema: {error.message}")
    return not errors


def _config_key(sub_job: dict[str, Any]) -> str:
    return "training_config" if sub_job.get("job_type") == "training" else "inference_config"


_PROBLEM_FIELD = re.compile(r"^(?P<field>[A-Za-z_][\w]*(?:\[[0-9]+\]|\.[A-Za-z_][\w]*)+)(?P<colon>:?)")


def _split_sdk_problem(text: str) -> tuple[str, str]:
    """SDK problems start with their location ('sub_job_configs[0].x: ...'); use it as the field."""
    match = _PROBLEM_FIELD.match(text)
    if match is None:
        return "(body)", text
    if match.group("colon"):
        return match.group("field"), text[match.end() :].strip() or text
    return match.group("field"), text


def _first_difference(left: Any, right: Any, where: str = "") -> str | None:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right), key=str):
            sub = f"{where}.{key}" if where else str(key)
            if key not in left or key not in right:
                return sub
            found = _first_difference(left[key], right[key], sub)
            if found is not None:
                return found
        return None
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            found = _first_difference(a, b, f"{where}[{index}]")
            if found is not None:
                return found
        return None
    same = left == right and type(left) is type(right)
    return None if same else (where or "(root)")


def _sdk_problems(body: dict[str, Any], path: Path, out: _Collector) -> None:
    """Run the create-body validation `ct submit --dry-run` runs, plugin hooks included."""
    from ct_core.config.validation import validate_create_body
    from ct_core.errors import ValidationError

    try:
        normalized = validate_create_body(json.loads(json.dumps(body)))
    except ValidationError as exc:
        problems = list(getattr(exc, "problems", None) or [str(exc)])
        for text in problems:
            where, message = _split_sdk_problem(str(text))
            out.add(path, where, f"rejected by SDK validation: {message}")
        return
    # What `ct catalog job` prints should be exactly what gets sent: a file the SDK would rewrite
    # (peft_config defaults, provider spellings) hides the real request from its reader.
    changed = _first_difference(body, normalized)
    if changed is not None:
        out.add(path, changed, "the SDK rewrites this value before sending; store it in the normalized form")


def _typed_problems(body: dict[str, Any], path: Path, out: _Collector) -> None:
    """Build each sub-job through the typed factories, whose checks are stricter (fused CE / LM head)."""
    from ct_core.config import typed as configs

    for index, sub_job in enumerate(body["sub_job_configs"]):
        where = f"sub_job_configs[{index}]"
        top = {
            key: sub_job[key]
            for key in ("global_batch_size", "dtype", "seed", "model_post_init")
            if key in sub_job
        }
        try:
            if sub_job["job_type"] == "training":
                cfg = dict(sub_job["training_config"])
                typed = {
                    key: cfg.pop(key)
                    for key in ("optimizer", "max_seq_len", "train_batch_size", "n_gpus", "gradient_clipping")
                    if key in cfg
                }
                built = configs.SubJobConfig.training_job(
                    sub_job["model_name"], **typed, extra_training=cfg, **top
                )
            else:
                cfg = dict(sub_job["inference_config"])
                typed = {key: cfg.pop(key) for key in ("max_seq_len", "n_gpus") if key in cfg}
                built = configs.SubJobConfig.sampling_job(
                    sub_job["model_name"], **typed, extra_sampling=cfg, **top
                )
            validate = getattr(built, "validate", None)
            if callable(validate):
                validate()
        except (ValueError, TypeError) as exc:
            detail = "; ".join(getattr(exc, "problems", None) or [str(exc)])
            out.add(
                path, f"{where}.{_config_key(sub_job)}", f"rejected by the typed SubJobConfig path: {detail}"
            )


def _lora_problems(model: Model, body: dict[str, Any], path: Path, mode: str, out: _Collector) -> None:
    peft_configs = []
    for index, sub_job in enumerate(body["sub_job_configs"]):
        key = _config_key(sub_job)
        where = f"sub_job_configs[{index}].{key}.peft_config"
        peft = sub_job[key].get("peft_config")
        if mode == "lora" and peft is None:
            out.add(path, where, "missing: a LoRA job file carries a peft_config on every sub-job")
        elif mode == "full" and peft is not None:
            out.add(path, where, "present in a full fine-tuning / base-weights job file; name the file -lora")
        if isinstance(peft, dict):
            peft_configs.append((where, peft))
            wanted = model.info.get("lora_target_modules")
            if wanted is not None and peft.get("target_modules") != wanted:
                out.add(path, f"{where}.target_modules", f"{model.name} LoRA must target exactly {wanted}")
    # Adapter sync copies training weights into the sampler, so the two must have the same shape.
    if len(peft_configs) > 1:
        first_where, first = peft_configs[0]
        for where, other in peft_configs[1:]:
            for key in LORA_SYNC_KEYS:
                if other.get(key) != first.get(key):
                    out.add(
                        path,
                        f"{where}.{key}",
                        f"differs from {first_where}.{key}; adapter sync needs them equal",
                    )


def _shape_problems(model: Model, job: JobFile, body: dict[str, Any], out: _Collector) -> None:
    path = job.path
    if body["hardware"] != job.hardware:
        out.add(path, "hardware", f"{body['hardware']!r} disagrees with the file name ({job.hardware})")
    types = tuple(sub_job["job_type"] for sub_job in body["sub_job_configs"])
    if types != KIND_JOB_TYPES[job.kind]:
        expected = ", ".join(KIND_JOB_TYPES[job.kind])
        out.add(
            path,
            "sub_job_configs",
            f"a {job.kind} file holds [{expected}] sub-jobs, found [{', '.join(types)}]",
        )
    if job.workflow not in model.workflows:
        out.add(path, "(file name)", f"{job.kind} serves {job.workflow}, which model.json does not list")
    provider = model.info.get("training_provider")
    for index, sub_job in enumerate(body["sub_job_configs"]):
        where = f"sub_job_configs[{index}]"
        if sub_job["model_name"] != model.name:
            out.add(
                path,
                f"{where}.model_name",
                f"{sub_job['model_name']!r} is not this folder's model {model.name!r}",
            )
        key = _config_key(sub_job)
        cfg = sub_job[key]
        seq = cfg["max_seq_len"]
        if seq != job.context:
            out.add(
                path,
                f"{where}.{key}.max_seq_len",
                f"{seq} disagrees with the file name ({job.context_label})",
            )
        if seq > model.max_context:
            out.add(
                path,
                f"{where}.{key}.max_seq_len",
                f"{seq} exceeds the model's max_context {model.max_context}",
            )
        tp = (cfg.get("vllm_config") or {}).get("tensor_parallel_size")
        if isinstance(tp, int) and cfg["n_gpus"] % tp:
            out.add(path, f"{where}.{key}.vllm_config.tensor_parallel_size", f"{tp} does not divide n_gpus")
        if key == "training_config":
            if provider is not None and cfg.get("model_provider") != provider:
                out.add(
                    path,
                    f"{where}.{key}.model_provider",
                    f"{model.name} trains with model_provider {provider!r}",
                )
            # Expert-parallel jobs read the sequence length from prime_rl.seq_len when it is sent.
            prime_rl = cfg.get("prime_rl")
            if isinstance(prime_rl, dict) and "seq_len" in prime_rl and prime_rl["seq_len"] != seq:
                out.add(
                    path,
                    f"{where}.{key}.prime_rl.seq_len",
                    f"{prime_rl['seq_len']} must equal max_seq_len {seq}",
                )
    _lora_problems(model, body, path, job.mode, out)


def _check_model(folder: Path, validators: tuple[Any, Any], out: _Collector, *, typed: bool) -> None:
    model_validator, job_validator = validators
    info_path = folder / MODEL_FILENAME
    if not info_path.is_file():
        out.add(folder, MODEL_FILENAME, "missing: every model folder has a model.json")
        return
    try:
        info = _read_json(info_path)
    except CatalogError as exc:
        out.add(info_path, "(file)", str(exc).split(": ", 1)[-1])
        return
    if not _schema_problems(model_validator, info, info_path, out):
        return
    model = Model(info["name"], folder, info)
    if folder.name != folder_name(model.name):
        out.add(
            info_path,
            "name",
            f"{model.name!r} belongs in folder {folder_name(model.name)!r}, not {folder.name!r}",
        )
    if {"sft", "rl"} & set(model.workflows) and "inference" not in model.workflows:
        out.add(info_path, "workflows", "a trainable model must also list inference")

    jobs: list[JobFile] = []
    for path in sorted(folder.iterdir()):
        if path.name == MODEL_FILENAME or path.name in _IGNORED_FILES or path.name.startswith("."):
            continue
        try:
            context, hardware, kind, mode = parse_job_filename(path.name)
        except CatalogError as exc:
            out.add(path, "(file name)", str(exc))
            continue
        job = JobFile(model.name, path, context, hardware, kind, mode)
        try:
            body = _read_json(path)
        except CatalogError as exc:
            out.add(path, "(file)", str(exc).split(": ", 1)[-1])
            continue
        jobs.append(job)
        if not _schema_problems(job_validator, body, path, out):
            continue
        _shape_problems(model, job, body, out)
        _sdk_problems(body, path, out)
        if typed:
            _typed_problems(body, path, out)

    for workflow in model.workflows:
        present = [job for job in jobs if job.workflow == workflow]
        kind = WORKFLOW_KIND[workflow]
        if not present:
            out.add(info_path, "workflows", f"lists {workflow} but there is no *-{kind}-*.json job file")
        for mode in REQUIRED_MODES[workflow]:
            if present and not any(job.mode == mode for job in present):
                out.add(
                    info_path, "workflows", f"lists {workflow} but there is no *-{kind}-{mode}.json job file"
                )
    names = {job.name for job in jobs}
    for name in info.get("validated") or {}:
        if name not in names:
            out.add(info_path, f"validated.{name}", "names no job file in this folder")


def _typed_path_available() -> bool:
    try:
        from ct_core.config import typed as configs
    except ImportError:
        return False
    return hasattr(getattr(configs, "SubJobConfig", None), "training_job")


def validate_catalog(root: Path | str | None = None) -> list[Problem]:
    """Check the whole catalog and return every problem found (an empty list means it is valid).

    Each job file must match schema.json, agree with its folder and name (model, context within
    the model's limit, hardware, kind, LoRA on every sub-job), and pass the SDK's create-body
    validation with plugin validators exactly as `ct submit --dry-run` runs it. When the typed
    configs are available, each sub-job must also build through `SubJobConfig.training_job` /
    `sampling_job` (their fused cross-entropy check once refused the catalog's own SFT recipes).
    """
    base = Path(root) if root is not None else find_catalog()
    catalog_dir = _catalog_dir(base)
    if catalog_dir is None:
        return [Problem(str(base), "(folder)", f"not a model catalog: no {MODELS_DIRNAME}/ folder")]
    out = _Collector(catalog_dir)
    validators = _load_schemas(catalog_dir, out)
    if validators is None:
        return out.problems
    typed = _typed_path_available()
    names: dict[str, Path] = {}
    models_dir = catalog_dir / MODELS_DIRNAME
    for entry in sorted(models_dir.iterdir()):
        if entry.is_file() and entry.name not in _IGNORED_FILES and not entry.name.startswith("."):
            out.add(entry, "(file)", "only model folders belong in models/")
    folders = list(_model_dirs(models_dir))
    if not folders:
        out.add(models_dir, "(folder)", "the catalog has no models")
    for folder in folders:
        _check_model(folder, validators, out, typed=typed)
        lowered = folder.name.lower()
        if lowered in names:
            out.add(folder, "(folder)", f"same model as {names[lowered].name} (names differ only in case)")
        names[lowered] = folder
    return out.problems

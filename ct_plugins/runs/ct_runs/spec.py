"""Run specs: checking one, resolving it against its dataset and the catalog, and fingerprinting it.

A run spec is what a user sends (``{dataset_id, model_config_tier, labels, seed, overrides,
trainer}``); :func:`resolve_run` checks every key against explicit bounds, checks the dataset's
preconditions, and assembles the canonical run config whose SHA-256 is the run's fingerprint.

**Refusals.** Every problem is a :class:`~ct_runs.errors.RunsRefusal` naming the input:
``invalid_argument`` for a bad spec (field ``overrides.<key>``, ``trainer.<key>``, ``labels[i]``
or the top-level key, with the bound in the message), ``failed_precondition`` for a dataset that
did not build cleanly (field ``dataset_id``), ``internal`` when the catalog cannot give the tier's
job file. Types are strict: a bool is not a number, an integer key takes only integers; a number
key takes an integer or a float and stores it as a float. A key given as ``null`` counts as not
given.

**Tiers.** ``S``, ``M`` and ``L`` name a model (Qwen3 0.6B, 1.7B, 8B) whose catalog job file
``8k-H200-training-full.json`` is the CreateJob body, plus packing and optimizer defaults. The
body keeps only its training sub-job, with ``n_gpus`` from the trainer, the batch sizes of its
DeepSpeed block rescaled so micro batch x accumulation x GPUs still equals the batch, the
optimizer's ``lr`` set to the resolved learning rate (the value a step without a rate would use;
each step sends its own), the sub-job ``seed`` set to the run's seed, and any server-side scheduler
key removed (the schedule is computed here and sent with each step).

**Overrides** tune the preset: ``max_seq_len`` is the packed row length (the job keeps the
catalog's 8k context, so scoring forwards longer than a row still fit), ``weight_decay``,
``gradient_clipping``, ``adam_beta1`` and ``adam_beta2`` go into the create body,
``warmup_steps`` and ``min_lr_ratio`` into the schedule.

**Defaults the trainer resolves.** ``checkpoint_every_steps`` is ``max(1, ceil(total_steps / 10))``
(about ten cadence checkpoints per budget); ``val_every_steps`` follows ``ct_runs.schedule``
(nominal half-epoch cadence capped at 500 plus epoch boundaries with early stopping, once per
epoch without); ``warmup_steps`` is ``min(100, ceil(0.05 * total_steps))``, and any warmup is
clamped so it ends before the cooldown (WSD) or the last step (cosine); a tier's default
``batch_tokens`` below an overridden ``max_seq_len`` is raised to one row. The resolved trainer
echoes every key, with ``warmup_steps``, ``cooldown_steps``, ``cooldown_min_steps``,
``min_lr_ratio`` and ``val_at_epoch_boundaries`` added.

**Labels** are resolved to the dataset's order (the order of its ``labels`` list), so the same set
of labels is the same run whatever order the request lists them in.

**Canonical JSON** (:func:`canonical_json`): keys sorted, no whitespace, UTF-8, floats written as
Python's shortest round-trip repr, ``-0.0`` written as ``0.0``, NaN and infinities refused. Numbers
keep the type the config gives them: each config key has one type (float keys always hold floats,
integer keys integers), so ``1`` and ``1.0`` sent for a float key give the same config, while an
integer key never holds a float. The config holds resolved values (the full trainer, every
override's effective value), so leaving a key out and sending its default give one fingerprint.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

from ct_core.catalog import Catalog, load_catalog
from ct_core.config.bodies import schema_errors
from ct_core.config.optimizer import SCHEDULER_KEYS
from ct_core.data.payloads import TINY_WEIGHTS
from ct_core.errors import CatalogError, describe_service_error
from ct_runs import packing, schedule, tokenizers
from ct_runs.errors import RunsRefusal, failed_precondition, invalid_argument
from ct_runs.packing import Row
from ct_runs.schedule import SchedulePlan

#: The schema URL every run config names.
RUN_CONFIG_SCHEMA = "https://spec.tessera.dev/schemas/run_config.json"
#: Version of the run config's layout (2: the model a run starts from and a separate validation
#: dataset joined it).
RUN_CONFIG_VERSION = 2

#: Catalog shape of every tier's job file.
TIER_CONTEXT = 8192
TIER_HARDWARE = "H200"
TIER_KIND = "training"
TIER_MODE = "full"


@dataclass(frozen=True)
class Tier:
    """A size preset: the model and the defaults a run of it starts from."""

    name: str
    model_name: str
    seq_len: int
    learning_rate: float
    batch_tokens: int


TIERS: dict[str, Tier] = {
    "S": Tier("S", "Qwen/Qwen3-0.6B", seq_len=256, learning_rate=3e-3, batch_tokens=2048),
    "M": Tier("M", "Qwen/Qwen3-1.7B", seq_len=512, learning_rate=1e-3, batch_tokens=4096),
    "L": Tier("L", "Qwen/Qwen3-8B", seq_len=1024, learning_rate=5e-4, batch_tokens=8192),
}
DEFAULT_TIER = "S"

#: Registered model ids start with this (``mdl_<ULID>``); any other ``model`` is a catalog name.
REGISTERED_MODEL_PREFIX = "mdl_"
#: OpenAI's fine-tuning names a spec may use at its top level, and the trainer key each one sets
#: (through the rule of :func:`_from_aliases`).
ALIASES = {"n_epochs": "epochs", "batch_size": "batch_tokens", "learning_rate_multiplier": "learning_rate"}
#: The most tokens one optimizer step may take (the upper bound of ``trainer.batch_tokens``).
MAX_BATCH_TOKENS = 10_000_000
#: The bounds of the learning rate a spec resolves to (what ``trainer.learning_rate`` accepts).
LEARNING_RATE_BOUND_TEXT = "a number in (0, 1]"

#: The package file holding the spec's ``RunSpec`` schema (openapi/cortex-training.yaml) and the
#: schemas it refers to, under ``$defs``; a test keeps it in step with the spec.
SCHEMA_FILE = "run_spec_schema.json"

TRAINER_DEFAULTS: dict[str, Any] = {
    "epochs": 10,
    "n_gpus": 1,
    "early_stopping": True,
    "patience": 5,
    "min_delta": 1e-4,
    "cooldown_ratio": 0.2,
    "lr_schedule": "wsd",
}


# --- bounds in words ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bound:
    """An integer or number range; ``None`` ends are open-ended, ``*_open`` ends exclusive."""

    kind: str  # "int" or "float"
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    @classmethod
    def of(cls, schema: Mapping[str, Any]) -> Bound:
        """The range a numeric schema (``minimum``, ``exclusiveMinimum``, ...) describes."""
        kinds = schema.get("type", [])
        kind = "int" if "integer" in ([kinds] if isinstance(kinds, str) else kinds) else "float"
        low, low_open = schema.get("minimum"), False
        if schema.get("exclusiveMinimum") is not None:
            low, low_open = schema["exclusiveMinimum"], True
        high, high_open = schema.get("maximum"), False
        if schema.get("exclusiveMaximum") is not None:
            high, high_open = schema["exclusiveMaximum"], True
        return cls(kind, low, high, low_open, high_open)

    def describe(self) -> str:
        noun = "an integer" if self.kind == "int" else "a number"
        if self.low is not None and self.high is not None:
            left = "(" if self.low_open else "["
            right = ")" if self.high_open else "]"
            return f"{noun} in {left}{_show(self.low)}, {_show(self.high)}{right}"
        if self.low is not None:
            return f"{noun} {'>' if self.low_open else '>='} {_show(self.low)}"
        if self.high is not None:
            return f"{noun} {'<' if self.high_open else '<='} {_show(self.high)}"
        return noun


def _show(number: float) -> str:
    return str(int(number)) if float(number).is_integer() and abs(number) >= 1 else repr(number)


def _given(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


# --- the schema -----------------------------------------------------------------------------------


@cache
def run_spec_schema() -> dict[str, Any]:
    """The run spec's JSON schema, shipped with the package (the spec's ``RunSpec``)."""
    text = resources.files("ct_runs").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _is_integer(_checker: Any, value: Any) -> bool:
    # Strict: a bool is not a number and 2.0 is not an integer (JSON Schema would take it).
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(_checker: Any, value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})
    strict = validators.extend(Draft202012Validator, type_checker=checker)
    schema = run_spec_schema()
    strict.check_schema(schema)
    return strict(schema)


def _properties(name: str) -> dict[str, Any]:
    properties: dict[str, Any] = run_spec_schema()["$defs"][name]["properties"]
    return properties


def _float_keys(name: str) -> frozenset[str]:
    """The keys of schema ``name`` that hold numbers (kept as floats once checked)."""
    found = set()
    for key, prop in _properties(name).items():
        kinds = prop.get("type", [])
        if "number" in ([kinds] if isinstance(kinds, str) else kinds):
            found.add(key)
    return frozenset(found)


def _where(loc: Sequence[Any]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


#: What a string field holds, said after "must be a string" where the name alone says too little.
_STRING_HINTS = {
    "dataset_id": " (a succeeded dataset build's id, ds_...)",
    "model": " (a catalog model name or a registered model id, mdl_...)",
    "validation_dataset_id": " (a succeeded dataset build's id, ds_...)",
}
#: Where a refusal of a key names the keys its object knows, by the object's path.
_OBJECT_NAMES = {(): "run spec", ("overrides",): "overrides", ("trainer",): "trainer"}


def _refusal(error: Any, body: Any) -> RunsRefusal:
    """One schema error as the refusal the service answers: the field, what it must be, what it got."""
    loc = tuple(error.absolute_path)
    field = _where(loc)
    keyword = error.validator
    value = error.instance
    schema = error.schema
    if keyword == "required":
        missing = next(name for name in error.validator_value if name not in value)
        if missing == "dataset_id":
            return invalid_argument(
                "dataset_id is required: the id of a succeeded dataset build", "dataset_id"
            )
        return invalid_argument(f"{_where((*loc, missing))} is required", _where((*loc, missing)))
    if keyword == "additionalProperties":
        known = list(schema.get("properties", {}))
        extra = next(key for key in value if key not in known)
        where = _where((*loc, extra))
        return invalid_argument(
            f"unknown {_OBJECT_NAMES.get(loc, field)} key {extra!r}; known keys: {', '.join(known)}", where
        )
    if not loc and keyword == "type":
        return invalid_argument(f"a run spec must be a JSON object, got {_given(value)}")
    if loc == ("dataset_id",):
        return invalid_argument(
            f"dataset_id is required: the id of a succeeded dataset build, got {_given(value)}", field
        )
    if keyword == "enum":
        allowed = ", ".join(str(item) for item in error.validator_value)
        return invalid_argument(f"{field} must be one of {allowed}, got {_given(value)}", field)
    if keyword == "uniqueItems":
        index = next(i for i, item in enumerate(value) if item in value[:i])
        where = _where((*loc, index))
        return invalid_argument(f"{where} repeats {value[index]!r}", where)
    if loc == ("labels",):
        return invalid_argument(f"labels must be a list of label ids, got {_given(value)}", field)
    if len(loc) == 2 and loc[0] == "labels":
        return invalid_argument(f"{field} must be a label id string, got {_given(value)}", field)
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else [kind for kind in kinds if kind != "null"]
    hint = _STRING_HINTS.get(field, "")
    if kinds == ["string"]:
        if keyword == "maxLength":
            return invalid_argument(
                f"{field} has {len(value)} characters; at most {error.validator_value} are allowed", field
            )
        noun = "a non-empty string" if keyword == "minLength" else "a string"
        return invalid_argument(f"{field} must be {noun}{hint}, got {_given(value)}", field)
    if "integer" in kinds or "number" in kinds:
        return invalid_argument(f"{field} must be {Bound.of(schema).describe()}, got {_given(value)}", field)
    if kinds == ["boolean"]:
        return invalid_argument(f"{field} must be true or false, got {_given(value)}", field)
    if kinds == ["object"]:
        return invalid_argument(f"{field} must be an object, got {_given(value)}", field)
    return invalid_argument(f"{field}: {error.message}", field or None)


def spec_problems(spec: Any) -> list[RunsRefusal]:
    """Every problem the run spec's schema finds, in the order of the spec's fields (nulls dropped)."""
    body = _without_nulls(spec)
    found: list[RunsRefusal] = []
    for error in schema_errors(_validator(), body):
        refusal = _refusal(error, body)
        if all((refusal.field, refusal.message) != (seen.field, seen.message) for seen in found):
            found.append(refusal)
    return found


def _without_nulls(spec: Any) -> Any:
    """The spec with null keys dropped at its top level and in its overrides and trainer."""
    if not isinstance(spec, Mapping):
        return spec
    out = {key: value for key, value in spec.items() if value is not None}
    for key in ("overrides", "trainer"):
        if isinstance(out.get(key), Mapping):
            out[key] = {name: value for name, value in out[key].items() if value is not None}
    return out


# --- the spec's rules a schema cannot say ---------------------------------------------------------


def parse_spec(spec: Any) -> dict[str, Any]:
    """Check what can be checked without the dataset, the catalog or the registry; the spec typed.

    The spec's JSON schema first (the first problem in the spec's order is refused, naming its
    field), then the rules a schema cannot say: one name per setting (an OpenAI name and the
    trainer key it sets are not both given) and no cosine schedule under early stopping. Returns
    ``{dataset_id, model, validation_dataset_id, model_config_tier, labels, seed, overrides,
    trainer, aliases}`` with nulls dropped (``None`` for what is not given; ``labels`` None means
    all), number keys as floats, and the OpenAI names given in ``aliases``.
    """
    problems = spec_problems(spec)
    if problems:
        raise problems[0]
    body = _without_nulls(spec)
    overrides = dict(body.get("overrides") or {})
    trainer = dict(body.get("trainer") or {})
    for key in _float_keys("RunOverrides") & set(overrides):
        overrides[key] = float(overrides[key])
    for key in _float_keys("TrainerSpec") & set(trainer):
        trainer[key] = float(trainer[key])
    aliases = {key: body[key] for key in ALIASES if key in body}
    if "learning_rate_multiplier" in aliases:
        aliases["learning_rate_multiplier"] = float(aliases["learning_rate_multiplier"])
    for alias, key in ALIASES.items():
        if alias in aliases and key in trainer:
            raise invalid_argument(
                f"{alias} is OpenAI's name of trainer.{key}: give one of them, not both", alias
            )
    early = trainer.get("early_stopping", TRAINER_DEFAULTS["early_stopping"])
    if trainer.get("lr_schedule") == "cosine" and early:
        raise invalid_argument(
            "trainer.lr_schedule cosine is a fixed-horizon schedule: early stopping requires wsd "
            "(set trainer.early_stopping to false to use cosine)",
            "trainer.lr_schedule",
        )
    labels = body.get("labels")
    return {
        "dataset_id": body["dataset_id"],
        "model": body.get("model"),
        "validation_dataset_id": body.get("validation_dataset_id"),
        "model_config_tier": body.get("model_config_tier"),
        "labels": list(labels) if labels is not None else None,
        "seed": body.get("seed", 0),
        "overrides": overrides,
        "trainer": trainer,
        "aliases": aliases,
    }


def is_registered_model(model: Any) -> bool:
    """Whether a spec's ``model`` names a registered model (``mdl_...``) rather than a catalog model."""
    return isinstance(model, str) and model.startswith(REGISTERED_MODEL_PREFIX)


def _trainable(catalog: Catalog) -> list[str]:
    """The catalog's models that have the job file a run is built from."""
    names = []
    for name in catalog.model_names():
        try:
            catalog.pick_job(
                name, context=TIER_CONTEXT, hardware=TIER_HARDWARE, kind=TIER_KIND, mode=TIER_MODE
            )
        except CatalogError:
            continue
        names.append(name)
    return names


def tier_of(model_name: str) -> Tier:
    """The preset of a base model: its tier, or tier S's numbers for a model outside the tiers."""
    for tier in TIERS.values():
        if tier.model_name == model_name:
            return tier
    return replace(TIERS[DEFAULT_TIER], model_name=model_name)


def _served_real(models: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """The names a local server serves with real weights, from its models route's entries."""
    return [
        str(entry.get("name"))
        for entry in models or ()
        if entry.get("weights") not in (None, TINY_WEIGHTS) and entry.get("name")
    ]


def _base_model(
    parsed: Mapping[str, Any],
    catalog: Catalog | None,
    registered_model: Mapping[str, Any] | None,
    served_models: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[str, Tier]:
    """What the run starts from (the model as the run names it) and the preset of its base model.

    A name the server serves with real weights (``ct local serve --model NAME=FOLDER``) is a base
    model too, with tier S's presets when it is not a tier's model."""
    given_tier = parsed["model_config_tier"]
    model = parsed["model"]
    if model is None:
        tier = TIERS[given_tier or DEFAULT_TIER]
        return tier.model_name, tier
    served = _served_real(served_models)
    if model in served:
        base = named = model
    elif is_registered_model(model):
        if registered_model is None or registered_model.get("model_id") != model:
            raise invalid_argument(
                f"model {model!r} is not a registered model of this schema (ct runs models lists them)",
                "model",
            )
        base = str(registered_model.get("model_name") or "")
        named = model
    else:
        try:
            source = catalog if catalog is not None else load_catalog()
        except CatalogError as exc:
            raise RunsRefusal("internal", f"the model catalog cannot be read: {exc}") from exc
        trainable = _trainable(source)
        try:
            base = source.get(model).name
        except CatalogError:
            also = f", the server's real models {', '.join(served)}" if served else ""
            raise invalid_argument(
                f"model {model!r} is not in the catalog; the models a run can train: {', '.join(trainable)}"
                f"{also} (or a registered model id, mdl_...)",
                "model",
            ) from None
        if base not in trainable:
            raise invalid_argument(
                f"model {base} has no training job file ({TIER_CONTEXT // 1024}k {TIER_HARDWARE} "
                f"{TIER_KIND} {TIER_MODE}) in the catalog; the models a run can train: "
                f"{', '.join(trainable)}",
                "model",
            )
        named = base
    tier = tier_of(base)
    if given_tier is not None and TIERS[given_tier].model_name != base:
        raise invalid_argument(
            f"model {named} is {base}, not tier {given_tier}'s model {TIERS[given_tier].model_name}: "
            "give one of model and model_config_tier",
            "model",
        )
    return named, tier


def _from_aliases(
    aliases: Mapping[str, Any], trainer: dict[str, Any], *, seq_len: int, tier: Tier
) -> dict[str, Any]:
    """The trainer with OpenAI's names resolved: ``n_epochs`` is ``epochs``; ``batch_size`` packed
    rows of ``seq_len`` tokens are ``batch_tokens``; ``learning_rate_multiplier`` times the base
    model's default rate is ``learning_rate``. Each result keeps the trainer key's bounds."""
    out = dict(trainer)
    if "n_epochs" in aliases:
        out["epochs"] = aliases["n_epochs"]
    if "batch_size" in aliases:
        tokens = aliases["batch_size"] * seq_len
        if tokens > MAX_BATCH_TOKENS:
            raise invalid_argument(
                f"batch_size {aliases['batch_size']} rows of max_seq_len {seq_len} tokens is {tokens} tokens "
                f"a step; at most {MAX_BATCH_TOKENS} are allowed",
                "batch_size",
            )
        out["batch_tokens"] = tokens
    if "learning_rate_multiplier" in aliases:
        rate = aliases["learning_rate_multiplier"] * tier.learning_rate
        if not 0 < rate <= 1:
            raise invalid_argument(
                f"learning_rate_multiplier {_show(aliases['learning_rate_multiplier'])} times the default "
                f"learning rate {tier.learning_rate!r} of {tier.model_name} is {rate!r}; the learning rate "
                f"must be {LEARNING_RATE_BOUND_TEXT}",
                "learning_rate_multiplier",
            )
        out["learning_rate"] = rate
    if "batch_tokens" in out and out["batch_tokens"] < seq_len:
        raise invalid_argument(
            f"trainer.batch_tokens must be an integer in [{seq_len}, {MAX_BATCH_TOKENS}] (at least one row "
            f"of max_seq_len {seq_len} tokens), got {out['batch_tokens']}",
            "trainer.batch_tokens",
        )
    return out


# --- canonical JSON ------------------------------------------------------------------------------


def _canonical(value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {value!r} has no JSON form")
        return 0.0 if value == 0 else value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where}: object keys must be strings, got {key!r}")
            out[key] = _canonical(item, f"{where}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_canonical(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise ValueError(f"{where}: {type(value).__name__} has no canonical JSON form")


def canonical_json(value: Any) -> bytes:
    """The one byte form of a JSON value: sorted keys, no whitespace, UTF-8, repr floats."""
    return json.dumps(
        _canonical(value, "$"), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def fingerprint(value: Any) -> str:
    """SHA-256 hex of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


# --- datasets --------------------------------------------------------------------------------------


def check_dataset(dataset: Mapping[str, Any], field: str = "dataset_id") -> None:
    """failed_precondition (naming ``field``) unless the build succeeded with an empty violation report."""
    dataset_id = dataset.get("dataset_id")
    status = dataset.get("status")
    if status != "succeeded":
        detail = (
            f" ({describe_service_error(dataset['error'])})"
            if status == "failed" and dataset.get("error")
            else ""
        )
        raise failed_precondition(
            f"dataset {dataset_id} is {status}{detail}: a run needs a succeeded dataset build", field
        )
    violations = dataset.get("violations") or []
    if violations:
        raise failed_precondition(
            f"dataset {dataset_id} has {len(violations)} leakage violation(s) between its train and "
            "validation splits (see its violations report); leakage gates fail closed, so fix the data "
            "and build it again",
            field,
        )


def _select_labels(wanted: list[str] | None, dataset: Mapping[str, Any]) -> list[dict[str, str]]:
    known = [
        {"label_id": str(label["label_id"]), "field": str(label["field"])}
        for label in dataset.get("labels") or []
    ]
    if wanted is None:
        return known
    ids = {label["label_id"] for label in known}
    for index, label_id in enumerate(wanted):
        if label_id not in ids:
            choices = ", ".join(sorted(ids)) or "none"
            raise invalid_argument(
                f"labels[{index}] {label_id!r} is not a label of dataset {dataset.get('dataset_id')} "
                f"(its labels: {choices})",
                f"labels[{index}]",
            )
    chosen = set(wanted)
    return [label for label in known if label["label_id"] in chosen]


def _training_body(
    tier: Tier,
    catalog: Catalog | None,
    *,
    n_gpus: int,
    learning_rate: float,
    seed: int,
    overrides: Mapping[str, Any],
) -> dict[str, Any]:
    """The tier's catalog job file, reduced to its training sub-job and set up for this run."""
    try:
        source = catalog if catalog is not None else load_catalog()
        # A model outside the tiers (a server's real model) trains with its tier's job file.
        job = source.pick_job(
            TIERS[tier.name].model_name,
            context=TIER_CONTEXT,
            hardware=TIER_HARDWARE,
            kind=TIER_KIND,
            mode=TIER_MODE,
        )
        body = copy.deepcopy(job.body())
    except CatalogError as exc:
        message = f"tier {tier.name}: the model catalog has no usable job file: {exc}"
        raise RunsRefusal("internal", message) from exc
    subs = [sub for sub in body.get("sub_job_configs") or [] if sub.get("job_type") == "training"]
    if len(subs) != 1 or not isinstance(subs[0].get("training_config"), dict):
        message = f"tier {tier.name}: {job.name} does not hold exactly one training sub-job"
        raise RunsRefusal("internal", message)
    sub = subs[0]
    sub["model_name"] = tier.model_name
    sub["seed"] = seed
    config = sub["training_config"]
    for key in SCHEDULER_KEYS:
        config.pop(key, None)
    optimizer = config.setdefault("optimizer", {})
    for key in SCHEDULER_KEYS:
        optimizer.pop(key, None)
    optimizer["lr"] = learning_rate
    if "weight_decay" in overrides:
        optimizer["weight_decay"] = overrides["weight_decay"]
    if "adam_beta1" in overrides or "adam_beta2" in overrides:
        betas = list(optimizer.get("betas") or [0.9, 0.999])
        betas[0] = overrides.get("adam_beta1", float(betas[0]))
        betas[1] = overrides.get("adam_beta2", float(betas[1]))
        optimizer["betas"] = betas
    if "gradient_clipping" in overrides:
        config["gradient_clipping"] = overrides["gradient_clipping"]
    config["n_gpus"] = n_gpus
    deepspeed = config.get("ds_config")
    if isinstance(deepspeed, dict):
        deepspeed.pop("scheduler", None)
        micro = int(deepspeed.get("train_micro_batch_size_per_gpu") or 1)
        accumulation = int(deepspeed.get("gradient_accumulation_steps") or 1)
        deepspeed["train_batch_size"] = micro * accumulation * n_gpus
        if "train_batch_size" in config:
            config["train_batch_size"] = deepspeed["train_batch_size"]
    body["sub_job_configs"] = [sub]
    return body


def _effective_overrides(
    *, seq_len: int, warmup: int, min_lr_ratio: float, body: Mapping[str, Any]
) -> dict[str, Any]:
    config = body["sub_job_configs"][0]["training_config"]
    optimizer = config.get("optimizer") or {}
    betas = optimizer.get("betas") or [None, None]
    clipping = config.get("gradient_clipping")
    effective = {
        "max_seq_len": seq_len,
        "weight_decay": optimizer.get("weight_decay"),
        "gradient_clipping": clipping,
        "warmup_steps": warmup,
        "min_lr_ratio": min_lr_ratio,
        "adam_beta1": betas[0],
        "adam_beta2": betas[1],
    }
    # Catalog numbers are read back as floats for the float keys, as a user's value would be.
    floats = _float_keys("RunOverrides")
    for key, value in effective.items():
        if value is not None and key in floats:
            effective[key] = float(value)
    return effective


@dataclass(frozen=True)
class ResolvedRun:
    """A checked spec with everything a run needs, and the canonical config it is fingerprinted by."""

    spec: dict[str, Any]
    config: dict[str, Any]
    fingerprint: str
    trainer: dict[str, Any]
    model_name: str
    create_body: dict[str, Any]
    seq_len: int
    label_ids: list[str]
    label_fields: list[str]
    total_steps: int
    steps_per_epoch: int
    plan: SchedulePlan
    rows_per_batch: int
    dataset_fingerprint: str
    overrides: dict[str, Any]
    #: What the run starts from: the catalog base model's name, or the registered model id whose
    #: weights it continues from (its base model is ``model_name``).
    model: str
    #: The separate dataset build the run validates on, or None for the dataset's own split.
    validation_dataset_id: str | None


def _run_tokenizer(
    model_name: str, served_models: Sequence[Mapping[str, Any]] | None
) -> tokenizers.RunTokenizer:
    """The tokenizer of the run's base model (the tiny model's bytes without the server's models)."""
    if served_models is None:
        return packing.BYTES
    try:
        return tokenizers.for_model(model_name, served_models)
    except ValueError as exc:
        raise failed_precondition(
            f"the tokenizer of model {model_name} cannot be read, so the run's rows cannot be tokenized "
            f"for it: {exc}",
            "model",
        ) from None


def _check_validation_dataset(
    wanted: str, dataset: Mapping[str, Any], validation: Mapping[str, Any] | None, label_fields: Sequence[str]
) -> None:
    """Refuse a validation dataset that is the dataset itself, unknown, unbuilt or of other rows."""
    field = "validation_dataset_id"
    if wanted == dataset.get("dataset_id"):
        raise invalid_argument(
            f"validation_dataset_id {wanted} is the dataset itself: leave it out to validate on its own "
            "validation split, or name another build",
            field,
        )
    if validation is None or validation.get("dataset_id") != wanted:
        raise invalid_argument(
            f"validation_dataset_id {wanted!r} names no dataset build of this schema", field
        )
    check_dataset(validation, field)
    have = {str(label.get("field")) for label in validation.get("labels") or []}
    missing = [name for name in label_fields if name not in have]
    if missing:
        raise failed_precondition(
            f"validation dataset {wanted} has no label field {', '.join(map(repr, missing))} the run "
            "trains on: build it from rows with the same label fields (or choose labels without them)",
            field,
        )
    formats = (dataset.get("format"), validation.get("format"))
    if None not in formats and formats[0] != formats[1]:
        raise failed_precondition(
            f"validation dataset {wanted} holds {formats[1]} rows and dataset {dataset.get('dataset_id')} "
            f"{formats[0]} rows: validate on rows of the format the run trains on",
            field,
        )


def resolve_run(
    spec: Any,
    dataset: Mapping[str, Any],
    train_rows: Sequence[Row],
    *,
    catalog: Catalog | None = None,
    validation_dataset: Mapping[str, Any] | None = None,
    registered_model: Mapping[str, Any] | None = None,
    served_models: Sequence[Mapping[str, Any]] | None = None,
) -> ResolvedRun:
    """Check ``spec`` against ``dataset`` (its Dataset JSON) and resolve the run it describes.

    ``train_rows`` are the dataset's train split (``{"text", "labels"}``), needed for the step
    budget. ``catalog`` defaults to the one :func:`ct_core.catalog.load_catalog` finds. The caller
    looks up what the spec names by id and passes it, or None when it finds nothing:
    ``validation_dataset``, the Dataset JSON of ``validation_dataset_id``, and ``registered_model``,
    the RegisteredModel JSON of a ``model`` that is a registered model id
    (:func:`is_registered_model`); an id without its record is refused at its field.

    ``served_models`` are the server's models route entries (``client.list_models()``): the run's
    rows are tokenized with its base model's tokenizer as they describe it (ct_runs.tokenizers),
    and a name served with real weights can be the run's ``model``. Without them (None) the rows
    are the tiny model's bytes.
    """
    parsed = parse_spec(spec)
    if parsed["dataset_id"] != dataset.get("dataset_id"):
        raise invalid_argument(
            f"dataset_id {parsed['dataset_id']!r} does not name dataset {dataset.get('dataset_id')!r}",
            "dataset_id",
        )
    check_dataset(dataset)
    labels = _select_labels(parsed["labels"], dataset)
    label_ids = [label["label_id"] for label in labels]
    label_fields = [label["field"] for label in labels]
    validation_id = parsed["validation_dataset_id"]
    if validation_id is not None:
        _check_validation_dataset(validation_id, dataset, validation_dataset, label_fields)

    model, tier = _base_model(parsed, catalog, registered_model, served_models)
    tokenizer = _run_tokenizer(tier.model_name, served_models)
    given_overrides = parsed["overrides"]
    seq_len = int(given_overrides.get("max_seq_len", tier.seq_len))
    given_trainer = _from_aliases(parsed["aliases"], parsed["trainer"], seq_len=seq_len, tier=tier)
    trainer: dict[str, Any] = {**TRAINER_DEFAULTS, **given_trainer}
    trainer.setdefault("batch_tokens", tier.batch_tokens)
    trainer.setdefault("learning_rate", tier.learning_rate)
    if trainer["batch_tokens"] < seq_len:  # a tier default below an overridden row length
        trainer["batch_tokens"] = seq_len

    try:
        examples = packing.encode_rows(train_rows, label_fields, tokenizer)
    except ValueError as exc:
        raise failed_precondition(
            f"the rows of dataset {dataset.get('dataset_id')} cannot be tokenized for model "
            f"{tier.model_name}: {exc}",
            "model",
        ) from None
    per_epoch = packing.steps_per_epoch(examples, seq_len=seq_len, batch_tokens=trainer["batch_tokens"])
    if per_epoch == 0:
        raise failed_precondition(
            f"dataset {dataset.get('dataset_id')} has no train tokens to learn from", "dataset_id"
        )
    total = trainer["epochs"] * per_epoch

    if trainer["lr_schedule"] == "wsd":
        cooldown, cooldown_min = schedule.cooldown_steps_for(total, trainer["cooldown_ratio"])
    else:
        cooldown, cooldown_min = 0, 0
    requested_warmup = int(given_overrides.get("warmup_steps", schedule.default_warmup_steps(total)))
    warmup = schedule.effective_warmup(
        requested_warmup, schedule=trainer["lr_schedule"], total_steps=total, cooldown_steps=cooldown
    )
    min_lr_ratio = float(given_overrides.get("min_lr_ratio", 0.0))
    plan = SchedulePlan(
        schedule=trainer["lr_schedule"],
        base_lr=trainer["learning_rate"],
        total_steps=total,
        warmup_steps=warmup,
        cooldown_steps=cooldown,
        min_lr_ratio=min_lr_ratio,
    )
    trainer.setdefault("checkpoint_every_steps", max(1, math.ceil(total / 10)))
    val_every, at_boundaries = schedule.resolve_cadence(
        trainer.get("val_every_steps"), steps_per_epoch=per_epoch, early_stopping=trainer["early_stopping"]
    )
    trainer["val_every_steps"] = val_every
    trainer.update(
        warmup_steps=warmup,
        cooldown_steps=cooldown,
        cooldown_min_steps=cooldown_min,
        min_lr_ratio=min_lr_ratio,
        val_at_epoch_boundaries=at_boundaries,
    )

    body = _training_body(
        tier,
        catalog,
        n_gpus=trainer["n_gpus"],
        learning_rate=trainer["learning_rate"],
        seed=parsed["seed"],
        overrides=given_overrides,
    )
    overrides = _effective_overrides(seq_len=seq_len, warmup=warmup, min_lr_ratio=min_lr_ratio, body=body)
    per_batch = packing.rows_per_batch(seq_len=seq_len, batch_tokens=trainer["batch_tokens"])
    dataset_fingerprints = dict(dataset.get("fingerprints") or {})
    config = {
        "$schema": RUN_CONFIG_SCHEMA,
        "version": RUN_CONFIG_VERSION,
        "dataset_id": dataset["dataset_id"],
        "dataset_fingerprints": dataset_fingerprints,
        "model_config_tier": tier.name,
        "model_name": tier.model_name,
        "model": model,
        "validation_dataset_id": validation_id,
        "validation_dataset_fingerprints": (
            dict((validation_dataset or {}).get("fingerprints") or {}) if validation_id is not None else None
        ),
        "create_body": body,
        "trainer": {key: trainer[key] for key in sorted(trainer)},
        "schedule": plan.to_dict(),
        "labels": labels,
        "seed": parsed["seed"],
        "overrides": overrides,
        "tokenizer": tokenizers.config_value(tokenizer),
        "packing": packing.PACKING_VERSION,
        "seq_len": seq_len,
        "rows_per_batch": per_batch,
        "steps_per_epoch": per_epoch,
        "total_steps": total,
    }
    # The spec as the run keeps it: resolved names, OpenAI's names as the trainer keys they set.
    normalized = {
        "dataset_id": parsed["dataset_id"],
        "model": model,
        "validation_dataset_id": validation_id,
        "model_config_tier": tier.name,
        "labels": label_ids,
        "seed": parsed["seed"],
        "overrides": parsed["overrides"],
        "trainer": given_trainer,
    }
    return ResolvedRun(
        spec=normalized,
        config=config,
        fingerprint=fingerprint(config),
        trainer=config["trainer"],
        model_name=tier.model_name,
        create_body=body,
        seq_len=seq_len,
        label_ids=label_ids,
        label_fields=label_fields,
        total_steps=total,
        steps_per_epoch=per_epoch,
        plan=plan,
        rows_per_batch=per_batch,
        dataset_fingerprint=fingerprint(dataset_fingerprints),
        overrides=dict(given_overrides),
        model=model,
        validation_dataset_id=validation_id,
    )

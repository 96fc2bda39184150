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
from dataclasses import dataclass
from typing import Any

from ct_core.catalog import Catalog, load_catalog
from ct_core.config.optimizer import SCHEDULER_KEYS
from ct_core.errors import CatalogError, describe_service_error
from ct_runs import packing, schedule
from ct_runs.errors import RunsRefusal, failed_precondition, invalid_argument
from ct_runs.packing import Row
from ct_runs.schedule import SchedulePlan

#: The schema URL every run config names.
RUN_CONFIG_SCHEMA = "https://spec.tessera.dev/schemas/run_config.json"
#: Version of the run config's layout.
RUN_CONFIG_VERSION = 1

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

TOP_LEVEL_KEYS = ("dataset_id", "model_config_tier", "labels", "seed", "overrides", "trainer")
MAX_SEED = 2**63 - 1


# --- bounds --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bound:
    """An integer or number range; ``None`` ends are open-ended, ``*_open`` ends exclusive."""

    kind: str  # "int" or "float"
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

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

    def check(self, value: Any, field: str) -> int | float:
        """The value, typed (floats for number keys); invalid_argument naming ``field`` otherwise."""
        if self.kind == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if ok:
            typed: int | float = value if self.kind == "int" else float(value)
            below = self.low is not None and (typed < self.low or (self.low_open and typed == self.low))
            above = self.high is not None and (typed > self.high or (self.high_open and typed == self.high))
            if not below and not above:
                return typed
        raise invalid_argument(f"{field} must be {self.describe()}, got {_given(value)}", field)


def _show(number: float) -> str:
    return str(int(number)) if float(number).is_integer() and abs(number) >= 1 else repr(number)


def _given(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


OVERRIDE_BOUNDS: dict[str, Bound] = {
    "max_seq_len": Bound("int", 16, TIER_CONTEXT),
    "weight_decay": Bound("float", 0, 1),
    "gradient_clipping": Bound("float", 0, 100, low_open=True),
    "warmup_steps": Bound("int", 0, 100_000),
    "min_lr_ratio": Bound("float", 0, 1),
    "adam_beta1": Bound("float", 0, 1, low_open=True, high_open=True),
    "adam_beta2": Bound("float", 0, 1, low_open=True, high_open=True),
}

MAX_BATCH_TOKENS = 10_000_000
TRAINER_BOUNDS: dict[str, Bound] = {
    "epochs": Bound("int", 1, 1000),
    "learning_rate": Bound("float", 0, 1, low_open=True),
    "checkpoint_every_steps": Bound("int", 1),
    "val_every_steps": Bound("int", 1),
    "n_gpus": Bound("int", 1, 64),
    "patience": Bound("int", 1, 1000),
    "min_delta": Bound("float", 0),
    "cooldown_ratio": Bound("float", 0, 1, low_open=True, high_open=True),
}
TRAINER_KEYS = (
    "epochs",
    "batch_tokens",
    "learning_rate",
    "checkpoint_every_steps",
    "val_every_steps",
    "n_gpus",
    "early_stopping",
    "patience",
    "min_delta",
    "cooldown_ratio",
    "lr_schedule",
)
TRAINER_DEFAULTS: dict[str, Any] = {
    "epochs": 10,
    "n_gpus": 1,
    "early_stopping": True,
    "patience": 5,
    "min_delta": 1e-4,
    "cooldown_ratio": 0.2,
    "lr_schedule": "wsd",
}


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


# --- the spec ------------------------------------------------------------------------------------


def _object(value: Any, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise invalid_argument(f"{field} must be an object, got {_given(value)}", field)
    return {key: item for key, item in value.items() if item is not None}


def _unknown(given: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    for key in given:
        if key not in known:
            field = f"{where}.{key}" if where else str(key)
            kind = f"{where} key" if where else "run spec key"
            raise invalid_argument(f"unknown {kind} {key!r}; known keys: {', '.join(known)}", field)


def parse_spec(spec: Any) -> dict[str, Any]:
    """Check what can be checked without the dataset; the spec with its values typed.

    Returns ``{dataset_id, model_config_tier, labels (list or None for all), seed, overrides,
    trainer}`` with only the given override and trainer keys (typed), nulls dropped. The
    ``batch_tokens`` lower bound (the row length) is checked here too.
    """
    if not isinstance(spec, Mapping):
        raise invalid_argument(f"a run spec must be a JSON object, got {_given(spec)}")
    _unknown(spec, TOP_LEVEL_KEYS, "")
    dataset_id = spec.get("dataset_id")
    if not isinstance(dataset_id, str) or not dataset_id:
        raise invalid_argument("dataset_id is required: the id of a succeeded dataset build", "dataset_id")
    tier = spec.get("model_config_tier")
    tier = DEFAULT_TIER if tier is None else tier
    if not isinstance(tier, str) or tier not in TIERS:
        raise invalid_argument(
            f"model_config_tier must be one of {', '.join(TIERS)}, got {_given(tier)}", "model_config_tier"
        )
    seed = spec.get("seed")
    seed = 0 if seed is None else Bound("int", 0, MAX_SEED).check(seed, "seed")
    labels = spec.get("labels")
    if labels is not None:
        if not isinstance(labels, list):
            raise invalid_argument(f"labels must be a list of label ids, got {_given(labels)}", "labels")
        for index, label in enumerate(labels):
            if not isinstance(label, str) or not label:
                raise invalid_argument(f"labels[{index}] must be a label id string", f"labels[{index}]")
            if label in labels[:index]:
                raise invalid_argument(f"labels[{index}] repeats {label!r}", f"labels[{index}]")
        labels = list(labels)

    overrides = _object(spec.get("overrides"), "overrides")
    _unknown(overrides, tuple(OVERRIDE_BOUNDS), "overrides")
    typed_overrides = {
        key: OVERRIDE_BOUNDS[key].check(value, f"overrides.{key}") for key, value in overrides.items()
    }
    seq_len = int(typed_overrides.get("max_seq_len", TIERS[tier].seq_len))

    trainer = _object(spec.get("trainer"), "trainer")
    _unknown(trainer, TRAINER_KEYS, "trainer")
    typed_trainer: dict[str, Any] = {}
    for key, value in trainer.items():
        field = f"trainer.{key}"
        if key == "early_stopping":
            if not isinstance(value, bool):
                raise invalid_argument(f"{field} must be true or false, got {_given(value)}", field)
            typed_trainer[key] = value
        elif key == "lr_schedule":
            if value not in schedule.SCHEDULES:
                raise invalid_argument(
                    f"{field} must be one of {', '.join(schedule.SCHEDULES)}, got {_given(value)}", field
                )
            typed_trainer[key] = value
        elif key == "batch_tokens":
            bound = Bound("int", seq_len, MAX_BATCH_TOKENS)
            if isinstance(value, int) and not isinstance(value, bool) and value < seq_len:
                raise invalid_argument(
                    f"{field} must be {bound.describe()} (at least one row of max_seq_len {seq_len} "
                    f"tokens), got {value}",
                    field,
                )
            typed_trainer[key] = bound.check(value, field)
        else:
            typed_trainer[key] = TRAINER_BOUNDS[key].check(value, field)
    early = typed_trainer.get("early_stopping", TRAINER_DEFAULTS["early_stopping"])
    if typed_trainer.get("lr_schedule") == "cosine" and early:
        raise invalid_argument(
            "trainer.lr_schedule cosine is a fixed-horizon schedule: early stopping requires wsd "
            "(set trainer.early_stopping to false to use cosine)",
            "trainer.lr_schedule",
        )
    return {
        "dataset_id": dataset_id,
        "model_config_tier": tier,
        "labels": labels,
        "seed": seed,
        "overrides": typed_overrides,
        "trainer": typed_trainer,
    }


def check_dataset(dataset: Mapping[str, Any]) -> None:
    """failed_precondition unless the build succeeded with an empty violation report."""
    dataset_id = dataset.get("dataset_id")
    status = dataset.get("status")
    if status != "succeeded":
        detail = (
            f" ({describe_service_error(dataset['error'])})"
            if status == "failed" and dataset.get("error")
            else ""
        )
        raise failed_precondition(
            f"dataset {dataset_id} is {status}{detail}: a run needs a succeeded dataset build", "dataset_id"
        )
    violations = dataset.get("violations") or []
    if violations:
        raise failed_precondition(
            f"dataset {dataset_id} has {len(violations)} leakage violation(s) between its train and "
            "validation splits (see its violations report); leakage gates fail closed, so fix the data "
            "and build it again",
            "dataset_id",
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
        job = source.pick_job(
            tier.model_name, context=TIER_CONTEXT, hardware=TIER_HARDWARE, kind=TIER_KIND, mode=TIER_MODE
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
    for key, value in effective.items():
        if value is not None and OVERRIDE_BOUNDS[key].kind == "float":
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


def resolve_run(
    spec: Any,
    dataset: Mapping[str, Any],
    train_rows: Sequence[Row],
    *,
    catalog: Catalog | None = None,
) -> ResolvedRun:
    """Check ``spec`` against ``dataset`` (its Dataset JSON) and resolve the run it describes.

    ``train_rows`` are the dataset's train split (``{"text", "labels"}``), needed for the step
    budget. ``catalog`` defaults to the one :func:`ct_core.catalog.load_catalog` finds.
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

    tier = TIERS[parsed["model_config_tier"]]
    given_overrides = parsed["overrides"]
    given_trainer = parsed["trainer"]
    seq_len = int(given_overrides.get("max_seq_len", tier.seq_len))
    trainer: dict[str, Any] = {**TRAINER_DEFAULTS, **given_trainer}
    trainer.setdefault("batch_tokens", tier.batch_tokens)
    trainer.setdefault("learning_rate", tier.learning_rate)
    if trainer["batch_tokens"] < seq_len:  # a tier default below an overridden row length
        trainer["batch_tokens"] = seq_len

    examples = packing.encode_rows(train_rows, label_fields)
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
        "create_body": body,
        "trainer": {key: trainer[key] for key in sorted(trainer)},
        "schedule": plan.to_dict(),
        "labels": labels,
        "seed": parsed["seed"],
        "overrides": overrides,
        "tokenizer": packing.TOKENIZER,
        "packing": packing.PACKING_VERSION,
        "seq_len": seq_len,
        "rows_per_batch": per_batch,
        "steps_per_epoch": per_epoch,
        "total_steps": total,
    }
    normalized = {**parsed, "labels": label_ids}
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
    )

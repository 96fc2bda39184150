"""The one set of create-job body rules, used by the client and by the local server.

`create_body_problems(body)` checks a create-job body against the contract's JSON schema (the
`CreateJobRequest` schema of openapi/cortex-training.yaml, shipped with this package as
`create_job_schema.json`) and then against the few rules a schema cannot say (a job_id the service
assigns, job_type spellings and the log-probability refusal, one training sub-job, ZeRO-3, the form
of a multiplex_job_id). Every problem names its field. The client (`validate_create_body`) raises
them all at once; the local server answers 422 for the malformed ones (`BodyProblem.shape`) and 400
for the rest, so a body is judged by the same rules, in the same words, on both sides.

The schema file is kept in step with the spec by a test; rewrite it after changing the spec with
`python -m ct_core.config.bodies`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ct_core.config.typed import LOG_PROBABILITY_REFUSAL, JobType, normalize_job_type
from ct_core.constants import MAX_ZERO_STAGE
from ct_core.ids import parse_sub_job_id

#: The schema of the spec that a create-job body is checked against.
CREATE_JOB_SCHEMA_NAME = "CreateJobRequest"
#: The package file holding that schema (and every schema it refers to, under $defs).
SCHEMA_FILE = "create_job_schema.json"

SUBMITTABLE_TYPES = (JobType.TRAINING.value, JobType.SAMPLING.value)
#: How much of a refused value a message quotes.
SHOWN_CHARS = 60

#: What a value must be, in words, where the schema's bounds alone would say it less clearly.
_EXPECTED: dict[tuple[str, ...], str] = {
    ("idle_timeout_seconds",): "0 or between 300 and 604800",
    ("pending_timeout_seconds",): "between 300 and 604800",
}
#: Where a problem is one of shape (the server answers 422): a field at one of these paths that is
#: missing or of the wrong type. `None` stands for any list index.
_SHAPE_PATHS = {
    (),
    ("sub_job_configs",),
    ("sub_job_configs", None),
    ("sub_job_configs", None, "job_type"),
    ("sub_job_configs", None, "model_name"),
    ("sub_job_configs", None, "training_config"),
    ("sub_job_configs", None, "inference_config"),
    ("experiment_name",),
    ("comment",),
}
_SHAPE_KEYWORDS = ("type", "required", "minItems", "minLength")
_ANY_CASE = re.compile(r"\^\(\?i:(?P<names>[^)]*)\)\$")

Location = tuple[str | int, ...]


@dataclass(frozen=True)
class BodyProblem:
    """One thing wrong with a body: where (`loc`, the JSON path), what, and whether it is one of
    shape (a missing or mistyped structural field, 422 on the server) or a broken rule (400)."""

    loc: Location
    message: str
    shape: bool = False


def where(loc: Location) -> str:
    """`sub_job_configs[0].training_config.max_seq_len` for a JSON path."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "the body"


def shown(value: Any) -> str:
    """`repr(value)`, cut short: a refusal never echoes a megabyte back."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + f"... ({len(text)} characters)"


# --- the schema ---------------------------------------------------------------------------------


def schema_from_spec(spec: dict[str, Any], name: str = CREATE_JOB_SCHEMA_NAME) -> dict[str, Any]:
    """A standalone JSON schema for the spec's component `name`: it and every component it refers
    to, under `$defs`."""
    components = spec["components"]["schemas"]
    prefix = "#/components/schemas/"
    wanted = [name]
    found: dict[str, Any] = {}

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str) and value.startswith(prefix):
                    target = value[len(prefix) :]
                    wanted.append(target)
                    out[key] = "#/$defs/" + target
                elif key.startswith("x-") or key in ("description", "examples"):
                    continue
                else:
                    out[key] = rewrite(value)
            return out
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        return node

    while wanted:
        target = wanted.pop()
        if target not in found:
            found[target] = None
            found[target] = rewrite(components[target])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": f"#/$defs/{name}",
        "$defs": dict(sorted(found.items())),
    }


def schema_text(schema: dict[str, Any]) -> str:
    """The file form of a schema (sorted keys, two-space indent, final newline)."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


@cache
def create_job_schema() -> dict[str, Any]:
    """The create-job body schema shipped with the package."""
    text = resources.files("ct_core.config").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    schema = create_job_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


# --- schema errors in the contract's words --------------------------------------------------------


def _number(value: Any) -> str:
    return str(value)


def _expected(schema: dict[str, Any]) -> str:
    """What `schema` accepts, in words ("a positive integer", "an integer from 0 to 10", ...)."""
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else [kind for kind in kinds if kind != "null"]
    low, high = schema.get("minimum"), schema.get("maximum")
    if "integer" in kinds or "number" in kinds:
        noun = "integer" if "integer" in kinds else "number"
        if schema.get("exclusiveMinimum") == 0:
            return f"a positive {noun}"
        article = "an" if noun == "integer" else "a"
        if low is not None and high is not None:
            return f"{article} {noun} from {_number(low)} to {_number(high)}"
        if low is not None:
            return f"{article} {noun} of {_number(low)} or more"
        return f"{article} {noun}"
    if kinds == ["array"] or kinds == ["array", "string"]:
        return "a non-empty list" if schema.get("minItems") else "a list"
    if kinds == ["string"]:
        return "a non-empty string" if schema.get("minLength") else "a string"
    if kinds == ["object"]:
        return "an object"
    if kinds == ["boolean"]:
        return "true or false"
    return " or ".join(kinds) or "something else"


def _message(error: Any) -> tuple[Location, str, bool]:
    loc: Location = tuple(error.absolute_path)
    keyword = error.validator
    schema = error.schema
    value = error.instance
    if keyword == "required":
        missing = next(name for name in error.validator_value if name not in value)
        loc = (*loc, missing)
        if loc == ("sub_job_configs",):
            return loc, "sub_job_configs must be a non-empty list", True
        return loc, f"{where(loc)} is required", True
    name = where(loc)
    if keyword == "enum":
        allowed = ", ".join(str(item) for item in error.validator_value if item is not None)
        return loc, f"{name} must be one of {allowed}, got {shown(value)}", False
    if keyword == "pattern":
        match = _ANY_CASE.fullmatch(error.validator_value)
        if match:
            names = ", ".join(match["names"].split("|"))
            return loc, f"{name} must be one of {names}, got {shown(value)}", False
        return loc, f"{name} must match {error.validator_value}, got {shown(value)}", False
    if keyword == "maxLength":
        return loc, f"{name} has {len(value)} characters; at most {error.validator_value} are allowed", False
    if keyword == "minItems":
        return loc, f"{name} must be a non-empty list", True
    if keyword == "additionalProperties":
        extra = sorted(key for key in value if key not in schema.get("properties", {}))
        return loc, f"{name} has unknown keys {extra}", False
    generic = tuple(None if isinstance(part, int) else part for part in loc)
    shape = keyword in _SHAPE_KEYWORDS and generic in _SHAPE_PATHS
    if keyword == "type" and loc == ():
        return loc, "the request body must be a JSON object", True
    if keyword == "maximum" and "exclusiveMinimum" in schema:
        return loc, f"{name} must be at most {error.validator_value}, got {shown(value)}", False
    special = _EXPECTED.get(tuple(str(part) for part in loc))
    if keyword == "type":
        expected = "an integer" if special else _expected(schema)
        return loc, f"{name} must be {expected}, got {shown(value)}", shape
    expected = special or _expected(schema)
    return loc, f"{name} must be {expected}, got {shown(value)}", shape


def _leaves(error: Any) -> Iterator[Any]:
    """The errors that say what is wrong: through a nullable `oneOf`/`anyOf` into its non-null branch."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        branches = error.validator_value
        for sub in error.context:
            if branches[sub.relative_schema_path[0]] != {"type": "null"}:
                yield from _leaves(sub)
        return
    yield error


def _body_order(body: Any, path: Any) -> list[int]:
    """Where a JSON path lies in the body, as positions of keys and indices (body order)."""
    order: list[int] = []
    node = body
    for part in path:
        if isinstance(node, Mapping):
            keys = list(node)
            order.append(keys.index(part) if part in keys else len(keys))
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int):
            order.append(part)
            node = node[part] if part < len(node) else None
        else:
            order.append(0)
            node = None
    return order


def schema_errors(validator: Any, body: Any) -> list[Any]:
    """What a JSON-schema `validator` (jsonschema's) finds wrong in `body`, as the errors that say
    what is wrong (a nullable `oneOf`'s non-null branch, not the `oneOf`), in the order of the body's
    fields: the one walk of schema errors the create-job body and the run spec share."""
    leaves = [leaf for error in validator.iter_errors(body) for leaf in _leaves(error)]
    return sorted(leaves, key=lambda error: _body_order(body, error.absolute_path))


def schema_problems(body: Any) -> list[BodyProblem]:
    """The body's problems against the create-job schema, in the order of the body's fields."""
    found: list[BodyProblem] = []
    for leaf in schema_errors(_validator(), body):
        problem = BodyProblem(*_message(leaf))
        if problem not in found:
            found.append(problem)
    return found


# --- what a schema cannot say -------------------------------------------------------------------


def multiplex_job_id_problems(value: Any, location: str, *, own_job_id: str | None = None) -> list[str]:
    """Format check of a `multiplex_job_id` (None: unset): a complete sub-job id of another job.

    A job's id is unknown before it is created, so `own_job_id` is only given by callers that know it.
    """
    if value is None:
        return []
    try:
        parsed = parse_sub_job_id(value)
    except ValueError as error:
        return [
            f"{location}.multiplex_job_id must be a complete sub-job id "
            f"{{job_id}}:{{training|sampling|log_prob}}:{{index}} ({error})"
        ]
    if own_job_id is not None and parsed.job_id == own_job_id:
        return [
            f"{location}.multiplex_job_id {value!r} names a sub-job of the same job; it must point to "
            "a sub-job of another job"
        ]
    return []


def zero_stage_problem(training_config: dict[str, Any], location: str) -> str | None:
    """Why the training config's DeepSpeed ZeRO stage cannot run, or None."""
    ds_config = training_config.get("ds_config")
    zero = ds_config.get("zero_optimization") if isinstance(ds_config, dict) else None
    stage = zero.get("stage") if isinstance(zero, dict) else None
    if isinstance(stage, int | float) and not isinstance(stage, bool) and stage > MAX_ZERO_STAGE:
        return (
            f"{location}.training_config.ds_config.zero_optimization.stage {stage:g} is not supported "
            "(ZeRO-3); use stage 0, 1 or 2 (stage 2 with offload_optimizer for CPU offload)"
        )
    return None


def rule_problems(body: dict[str, Any]) -> list[BodyProblem]:
    """The rules of a create-job body that its schema cannot say."""
    found: list[BodyProblem] = []
    if "job_id" in body:
        found.append(
            BodyProblem(("job_id",), "job_id cannot be set when creating a job: the service assigns it")
        )
    sub_jobs = body.get("sub_job_configs")
    training_count = 0
    for index, sub_job in enumerate(sub_jobs if isinstance(sub_jobs, list) else []):
        if not isinstance(sub_job, dict):
            continue
        location = f"sub_job_configs[{index}]"
        kind = normalize_job_type(sub_job.get("job_type"))
        if kind == JobType.LOG_PROBABILITY.value:
            found.append(
                BodyProblem(
                    ("sub_job_configs", index, "job_type"), f"{location}.job_type: {LOG_PROBABILITY_REFUSAL}"
                )
            )
            continue
        if kind not in SUBMITTABLE_TYPES:
            message = (
                f"{location}.job_type must be training or sampling, got {shown(sub_job.get('job_type'))}"
            )
            found.append(BodyProblem(("sub_job_configs", index, "job_type"), message, shape=True))
            continue
        for key in ("training_config", "inference_config"):
            config = sub_job.get(key)
            if isinstance(config, dict):
                for message in multiplex_job_id_problems(config.get("multiplex_job_id"), f"{location}.{key}"):
                    found.append(BodyProblem(("sub_job_configs", index, key, "multiplex_job_id"), message))
        if kind != "training":
            continue
        training_count += 1
        training_config = sub_job.get("training_config")
        zero = zero_stage_problem(training_config, location) if isinstance(training_config, dict) else None
        if zero:
            found.append(BodyProblem(("sub_job_configs", index, "training_config", "ds_config"), zero))
    if training_count > 1:
        found.append(BodyProblem(("sub_job_configs",), "at most one training sub-job is supported per job"))
    return found


def _plugin_manager() -> Any:
    """The process-wide plugin manager, or None without the plugin machinery (a stripped install)."""
    try:
        from ct_core.plugins import get_plugin_manager
    except ImportError:
        return None
    return get_plugin_manager()


def plugin_problems(body: dict[str, Any]) -> list[str]:
    """What the installed plugins' validators say of a create-job body, in their own words.

    Every sub-job goes through `ct_validate_sub_job`, then the whole body through
    `ct_validate_create_body` (see `ct_core.hookspecs`); a validator may normalize `body` in place
    (the lora plugin rewrites each `peft_config` into its canonical form), so pass a copy when the
    caller's body must stay as it was. The client and the local server both ask here, so a plugin's
    rule refuses a body with the same sentence on either side, and neither imports the plugin.
    """
    pm = _plugin_manager()
    if pm is None:
        return []
    from ct_core.plugins import run_create_body_validators, run_sub_job_validators

    found: list[str] = []
    sub_jobs = body.get("sub_job_configs")
    for index, sub_job in enumerate(sub_jobs if isinstance(sub_jobs, list) else []):
        if isinstance(sub_job, dict):
            found.extend(run_sub_job_validators(sub_job, f"sub_job_configs[{index}]", pm))
    found.extend(run_create_body_validators(body, pm))
    return found


def create_body_problems(body: Any) -> list[BodyProblem]:
    """Every problem of a create-job body: its schema's, then the rules a schema cannot say."""
    found = schema_problems(body)
    if isinstance(body, dict):
        found.extend(problem for problem in rule_problems(body) if problem not in found)
    return found


def _write_schema() -> Path:  # pragma: no cover - a maintainer's command
    import yaml

    root = Path(__file__).resolve().parents[2]
    spec = yaml.safe_load((root / "openapi" / "cortex-training.yaml").read_text(encoding="utf-8"))
    target = Path(__file__).with_name(SCHEMA_FILE)
    target.write_text(schema_text(schema_from_spec(spec)), encoding="utf-8")
    return target


if __name__ == "__main__":  # pragma: no cover
    import logging

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("ct_core.config.bodies").info("wrote %s", _write_schema())

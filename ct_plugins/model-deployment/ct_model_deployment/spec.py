"""Deployment specs: the client-side checks of a spec and the create-job body it becomes.

A spec is one JSON object with exactly `deployment`, `source` and `inference`. Only the rules below
are checked here; which models can be deployed, and on how many GPUs, is the server's call, so a new
model needs no client release. Every problem found is reported in one DeploymentSpecError
(a ValidationError).

A `registered_model` source (the model a managed run registered) is only checked for its shape here;
`registered_checkpoint` turns the runs service's record of it into the `checkpoint` source it stands
for, which the SDK does when it creates the deployment (never in a dry run).
"""

from __future__ import annotations

import copy
import re
from typing import Any, TypeGuard

from ct_core.errors import ValidationError
from ct_model_deployment.errors import DeploymentSpecError

#: The top-level objects of a spec and the keys each may hold.
SPEC_KEYS = ("deployment", "source", "inference")
DEPLOYMENT_KEYS = ("class", "min_replicas", "gpus_per_replica", "gpu_type")
INFERENCE_KEYS = ("max_seq_len",)
SOURCE_KEYS = {
    "base_model": ("type", "model"),
    "checkpoint": ("type", "job_id", "checkpoint_id"),
    "registered_model": ("type", "model_id"),
}

#: The only deployment class served today.
DEPLOYMENT_CLASS = "EVALUATION"
#: GPU types a deployment may ask for, matched without regard to case.
GPU_TYPES = ("H200", "B200", "B300")
#: Allowed tensor-parallel widths of one replica.
GPUS_PER_REPLICA = (1, 2, 4, 8)
#: GPUs of one node: a deployment fits inside one, or spans whole nodes.
NODE_GPUS = 8

#: A deployment id today: the prefix plus the backing job's canonical lower-case UUID.
DEPLOYMENT_PREFIX = "sf-ct-"
_DEPLOYMENT_ID_RE = re.compile(r"sf-ct-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")
BAD_DEPLOYMENT_ID = "deployment must currently be an sf-ct-<UUID> ID"

#: A registered model id: `mdl_` and a ULID, 26 characters of Crockford's base32 (digits and letters
#: without I, L, O and U) in either case after the lower-case prefix. Passed on as written.
_MODEL_ID_RE = re.compile(r"mdl_(?i:[0-9A-HJKMNP-TV-Z]{26})")
BAD_MODEL_ID = (
    "source.model_id must be mdl_ followed by 26 base32 characters (0-9 and A-Z without I, L, O, U), "
    "the model_id of a succeeded run"
)


def job_id_of(deployment: Any) -> str:
    """The backing job id of a deployment id; anything but exactly sf-ct-<UUID> is refused.

    Names may later be accepted in the same place, which is why this is a parser and not a strip.
    """
    match = _DEPLOYMENT_ID_RE.fullmatch(deployment) if isinstance(deployment, str) else None
    if match is None:
        raise ValidationError(BAD_DEPLOYMENT_ID)
    return match.group(1)


def deployment_id_of(job_id: str) -> str:
    return DEPLOYMENT_PREFIX + job_id


def _key_problems(value: Any, where: str, allowed: tuple[str, ...]) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where} must be a JSON object"]
    unknown = [key for key in value if key not in allowed]
    missing = [key for key in allowed if key not in value]
    found = []
    # Both lists in one message, so a typo shows as the unknown spelling and the missing right one.
    if unknown:
        found.append(f"{where} has unknown keys: {', '.join(map(str, unknown))}")
    if missing:
        found.append(f"{where} is missing keys: {', '.join(missing)}")
    return found


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def check_spec(spec: Any) -> dict[str, Any]:
    """The normalized spec (gpu_type upper-cased), or DeploymentSpecError naming every problem."""
    problems = _key_problems(spec, "spec", SPEC_KEYS)
    if not isinstance(spec, dict):
        raise DeploymentSpecError(problems)
    normalized = copy.deepcopy(spec)
    deployment = normalized.get("deployment")
    if "deployment" in normalized:
        problems += _key_problems(deployment, "deployment", DEPLOYMENT_KEYS)
    if isinstance(deployment, dict):
        problems += _deployment_problems(deployment)
    source = normalized.get("source")
    if "source" in normalized:
        problems += _source_problems(source)
    inference = normalized.get("inference")
    if "inference" in normalized:
        problems += _key_problems(inference, "inference", INFERENCE_KEYS)
    if isinstance(inference, dict) and "max_seq_len" in inference and not _is_count(inference["max_seq_len"]):
        problems.append("inference.max_seq_len must be a positive integer")
    if problems:
        raise DeploymentSpecError(problems)
    return normalized


def _deployment_problems(deployment: dict[str, Any]) -> list[str]:
    found = []
    if "class" in deployment and deployment["class"] != DEPLOYMENT_CLASS:
        found.append(f"deployment.class must be {DEPLOYMENT_CLASS!r} (the only class served today)")
    for key in ("min_replicas", "gpus_per_replica"):
        if key in deployment and not _is_count(deployment[key]):
            found.append(f"deployment.{key} must be a positive integer")
    gpus = deployment.get("gpus_per_replica")
    if _is_count(gpus) and gpus not in GPUS_PER_REPLICA:
        found.append(f"deployment.gpus_per_replica must be one of {', '.join(map(str, GPUS_PER_REPLICA))}")
    replicas = deployment.get("min_replicas")
    if _is_count(gpus) and _is_count(replicas):
        total = replicas * gpus
        if total > NODE_GPUS and total % NODE_GPUS:
            found.append(
                f"deployment.min_replicas * gpus_per_replica is {total}: it must be at most {NODE_GPUS} "
                f"or a multiple of {NODE_GPUS}"
            )
    if "gpu_type" in deployment:
        gpu_type = deployment["gpu_type"]
        if isinstance(gpu_type, str) and gpu_type.upper() in GPU_TYPES:
            deployment["gpu_type"] = gpu_type.upper()
        else:
            found.append(f"deployment.gpu_type must be one of {', '.join(GPU_TYPES)} (any case)")
    return found


def _source_problems(source: Any) -> list[str]:
    if not isinstance(source, dict):
        return ["source must be a JSON object"]
    kind = source.get("type")
    if kind not in SOURCE_KEYS:
        return [f"source.type must be one of {', '.join(SOURCE_KEYS)}"]
    found = _key_problems(source, "source", SOURCE_KEYS[kind])
    for key in SOURCE_KEYS[kind]:
        if key in source and not (isinstance(source[key], str) and source[key].strip()):
            found.append(f"source.{key} must be a non-empty string")
    model_id = source.get("model_id")
    has_id = isinstance(model_id, str) and bool(model_id.strip())
    if kind == "registered_model" and has_id and not is_model_id(model_id):
        found.append(f"{BAD_MODEL_ID}; got {_shorten(str(model_id))}")
    return found


def is_model_id(value: Any) -> bool:
    """Whether `value` reads as a registered model id (mdl_ and 26 base32 characters)."""
    return isinstance(value, str) and _MODEL_ID_RE.fullmatch(value) is not None


def _shorten(value: str, limit: int = 60) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "...")


def registered_checkpoint(model: Any, model_id: str) -> dict[str, Any]:
    """The checkpoint source a registered model stands for, from the runs service's record of it.

    `model` is the answer of getRegisteredModel for `model_id`. The record must be about that model
    and name the weights-only checkpoint (`job_id`, `checkpoint_id`) it was exported to; anything
    else is refused with a ValidationError naming the model, before a deployment is created.
    """
    if not isinstance(model, dict):
        raise ValidationError(f"registered model {model_id}: the runs service's answer is not a JSON object")
    answered = model.get("model_id")
    if answered is not None and answered != model_id:
        raise ValidationError(
            f"registered model {model_id}: the runs service answered for {_shorten(str(answered))} instead"
        )
    missing = [
        key
        for key in ("job_id", "checkpoint_id")
        if not (isinstance(model.get(key), str) and model[key].strip())
    ]
    if missing:
        raise ValidationError(
            f"registered model {model_id} names no {' and no '.join(missing)} to deploy "
            "(its run may not have exported a weights-only checkpoint)"
        )
    return {"type": "checkpoint", "job_id": model["job_id"], "checkpoint_id": model["checkpoint_id"]}


def create_body(spec: dict[str, Any], model_name: str) -> dict[str, Any]:
    """The POST / body for a checked spec (operation createJob); `model_name` is the source's model.

    A registered-model source must be resolved first (`registered_checkpoint`): sent as it is, it
    would silently deploy the bare base model.
    """
    deployment, source, inference = spec["deployment"], spec["source"], spec["inference"]
    if source["type"] == "registered_model":
        raise ValueError("a registered_model source must be resolved to its checkpoint before create_body")
    replicas, gpus = deployment["min_replicas"], deployment["gpus_per_replica"]
    max_seq_len = inference["max_seq_len"]
    sub_job: dict[str, Any] = {
        "job_type": "sampling",
        "model_name": model_name,
        "inference_config": {
            "deployment_class": deployment["class"],
            "num_replicas": replicas,
            "n_gpus": replicas * gpus,
            "max_seq_len": max_seq_len,
            "vllm_config": {"tensor_parallel_size": gpus, "max_model_len": max_seq_len},
        },
    }
    if source["type"] == "checkpoint":
        sub_job["source_checkpoint_info"] = {
            "source_job_id": source["job_id"],
            "checkpoint_id": source["checkpoint_id"],
        }
    # A deployment is never reclaimed for idleness: it is dropped explicitly.
    return {"idle_timeout_seconds": 0, "hardware": deployment["gpu_type"], "sub_job_configs": [sub_job]}

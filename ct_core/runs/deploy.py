"""From a run to a deployment and a chat: `client.runs.deploy(...)` and `client.runs.chat(...)`,
which `ct runs deploy` and `ct runs chat` call.

`deploy(runs, "run_..." or "mdl_...")` finds the model the run registered (or takes the registered
model named), creates a model deployment from it through the client's model-deployment methods
(`client.model_deployments`, which the model-deployment plugin gives every client through its hook:
this module imports no plugin; without it, `MissingPluginError`) and returns the deployment's record
with its OpenAI base URL. `chat(runs, ref, prompt)` sends one user message to the deployment of that
model through the deployment's `/chat/completions` (the generated `createChatCompletion`
operation), creating and waiting for a deployment first when the model has none that serves.

The deployment is the one shape a quick check needs: the only class served today, one replica on
one GPU, with the run's packed row length as its context.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ct_core.errors import ValidationError

#: Deployment statuses in which a deployment cannot answer (it is failing, going or gone).
NOT_SERVING = frozenset({"FAILED", "TERMINATED", "DROPPING", "DROPPED"})
#: The status of a deployment that answers.
READY = "READY"
#: The deployment a run's model gets: the one class served, one replica of one GPU.
DEPLOYMENT = {"class": "EVALUATION", "min_replicas": 1, "gpus_per_replica": 1, "gpu_type": "H200"}
#: The context of a deployment when the run names no row length (the tiers' shortest).
DEFAULT_MAX_SEQ_LEN = 256
#: Most tokens a quick chat check generates unless told otherwise.
DEFAULT_CHAT_TOKENS = 64
RUN_PREFIX = "run_"
MODEL_PREFIX = "mdl_"


class RunsAPI(Protocol):
    """What these calls use of `client.runs` (`ct_core.runs.runs.RunsAPI`, which calls them)."""

    #: The transport the generated operations take (the client's OperationsContext).
    client: Any

    def get(self, run_id: str) -> dict[str, Any]: ...

    def get_model(self, model_id: str) -> dict[str, Any]: ...

    def models(self, run_id: str | None = None) -> list[dict[str, Any]]: ...

    def deployments(self) -> Any: ...


def registered_model(runs: RunsAPI, ref: str) -> dict[str, Any]:
    """The registered model a run id or a model id names; ValidationError saying what to do when a
    run has none (register a cancelled run, resume a failed one, wait for a running one)."""
    if not isinstance(ref, str) or not ref.startswith((RUN_PREFIX, MODEL_PREFIX)):
        raise ValidationError(f"give a run id (run_...) or a registered model id (mdl_...), got {ref!r}")
    if ref.startswith(MODEL_PREFIX):
        return dict(runs.get_model(ref))
    found = runs.models(run_id=ref)
    if found:
        return dict(found[0])
    run = runs.get(ref)
    status = run.get("status")
    if status == "cancelled":
        why = f"run {ref} was cancelled and has no registered model: register its best checkpoint first"
        error = ValidationError(why)
        error.hint = f"ct runs register {ref}"
    elif status == "failed":
        error = ValidationError(f"run {ref} failed and has no registered model: resume it to train on")
        error.hint = f"ct runs resume {ref} --wait"
    elif status in ("queued", "running"):
        error = ValidationError(f"run {ref} is {status}: it registers its model when it succeeds")
        error.hint = f"wait for it (ct runs get {ref}), or cancel it and ct runs register {ref}"
    else:
        error = ValidationError(f"run {ref} is {status} but registered no model: {run.get('error')}")
    raise error


def _serves(record: Mapping[str, Any], model: Mapping[str, Any]) -> bool:
    source = record.get("source") or {}
    return (
        source.get("type") == "checkpoint"
        and source.get("checkpoint_id") == model.get("checkpoint_id")
        and source.get("job_id") == model.get("job_id")
        and record.get("status") not in NOT_SERVING
    )


def find_deployment(runs: RunsAPI, model: Mapping[str, Any]) -> dict[str, Any] | None:
    """The newest deployment of the model's weights that serves or is on its way to, if any."""
    records = runs.deployments().list_model_deployments(on_malformed=lambda _problem: None)
    serving = [record for record in records if _serves(record, model)]
    return dict(serving[-1]) if serving else None


def _described(runs: RunsAPI, record: Mapping[str, Any], model: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(record)
    out["base_url"] = out.get("base_url") or runs.deployments().base_url()
    out["model_id"] = model.get("model_id")
    out["run_id"] = model.get("run_id")
    return out


def deploy(runs: RunsAPI, ref: str, *, wait: bool = False, timeout: float | None = None) -> dict[str, Any]:
    """Create a deployment of the model a run registered (or of a registered model id).

    Returns the deployment's record (`deployment`, `status`, `base_url`, ...) with `model_id` and
    `run_id`; with `wait`, once it is READY. A run without a model is refused, saying what to do.
    """
    model = registered_model(runs, ref)
    run = runs.get(str(model.get("run_id"))) if model.get("run_id") else {}
    seq_len = (run.get("overrides") or {}).get("max_seq_len") or DEFAULT_MAX_SEQ_LEN
    spec = {
        "deployment": dict(DEPLOYMENT),
        "source": {"type": "registered_model", "model_id": model["model_id"]},
        "inference": {"max_seq_len": int(seq_len)},
    }
    deployments = runs.deployments()
    record = deployments.create(spec)
    if wait:
        record = deployments.wait(record["deployment"], timeout=timeout)
    return _described(runs, record, model)


def chat(
    runs: RunsAPI,
    ref: str,
    prompt: str,
    *,
    max_completion_tokens: int = DEFAULT_CHAT_TOKENS,
    temperature: float = 0.0,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Ask the model of a run (or a registered model) one question through its deployment.

    Uses a deployment of the model that serves, waiting for it to be READY; creates one when there
    is none (`created` is then true: it keeps running until dropped). Returns `{"deployment",
    "base_url", "created", "model_id", "run_id", "content", "finish_reason", "usage"}`.
    """
    from ct_core.operations import inference

    if not isinstance(prompt, str) or not prompt:
        raise ValidationError("the prompt must be a non-empty string")
    model = registered_model(runs, ref)
    found = find_deployment(runs, model)
    created = found is None
    if found is None:
        record = deploy(runs, str(model["model_id"]), wait=True, timeout=timeout)
    elif found.get("status") != READY:
        record = _described(runs, runs.deployments().wait(found["deployment"], timeout=timeout), model)
    else:
        record = _described(runs, found, model)
    body = {
        "model": record["deployment"],
        "messages": [{"role": "user", "content": prompt}],
        "max_completion_tokens": max_completion_tokens,
        "temperature": temperature,
    }
    # One attempt, as an OpenAI client makes: a repeated completion would generate twice.
    answer: Any = inference.create_chat_completion(runs.client, body=body)
    choice = (answer.get("choices") or [{}])[0]
    return {
        "deployment": record["deployment"],
        "base_url": record["base_url"],
        "created": created,
        "model_id": model.get("model_id"),
        "run_id": model.get("run_id"),
        "content": (choice.get("message") or {}).get("content"),
        "finish_reason": choice.get("finish_reason"),
        "usage": answer.get("usage"),
    }

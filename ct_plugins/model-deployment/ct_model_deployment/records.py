"""Reading a job back as a deployment: the status table and the metadata (docs/model-deployments.md).

Records are reported as the server stored them: unknown models and GPU shapes still list, and a
missing value is shown as null rather than guessed. Only a record whose numbers contradict each
other is refused (MalformedDeploymentRecord).
"""

from __future__ import annotations

from typing import Any

from ct_model_deployment.errors import MalformedDeploymentRecord, replace_backing_ids
from ct_model_deployment.spec import DEPLOYMENT_CLASS, deployment_id_of

#: Job status -> deployment status; anything else is the job status upper-cased.
STATUS_BY_JOB_STATUS = {
    "pending": "PENDING",
    "placing": "INITIALIZING",
    "initializing": "INITIALIZING",
    "running": "READY",
    "failed": "FAILED",
    "cancelling": "DROPPING",
    "cancelled": "DROPPED",
    "done": "DROPPED",
    "terminated": "TERMINATED",
}
#: Every status the table names, for `list --status`.
KNOWN_STATUSES = tuple(dict.fromkeys(STATUS_BY_JOB_STATUS.values()))
#: Statuses whose reason is a failure ({code, message}) rather than a status_reason.
FAILURE_STATUSES = frozenset({"FAILED", "TERMINATED"})
#: Statuses in which the endpoint cannot answer, so no base_url is shown.
NOT_SERVING = frozenset({"FAILED", "DROPPING", "DROPPED", "TERMINATED"})
#: Statuses that already say the client dropped it; the server's reason would only repeat that.
DROP_STATUSES = frozenset({"DROPPING", "DROPPED"})
CANCELLED_BY_CLIENT = "cancelled_by_client"


def deployment_status(job_status: Any) -> str:
    text = str(job_status or "unknown").strip().lower()
    return STATUS_BY_JOB_STATUS.get(text, text.upper())


def sampling_sub_job(job: dict[str, Any]) -> dict[str, Any] | None:
    """The one EVALUATION sampling sub-job of a deployment, or None for any other job."""
    sub_jobs = job.get("sub_jobs")
    if not isinstance(sub_jobs, list) or len(sub_jobs) != 1 or not isinstance(sub_jobs[0], dict):
        return None
    sub_job = sub_jobs[0]
    config = sub_job.get("inference_config")
    if str(sub_job.get("job_type", "")).lower() != "sampling" or not isinstance(config, dict):
        return None
    return sub_job if config.get("deployment_class") == DEPLOYMENT_CLASS else None


def is_deployment(job: dict[str, Any]) -> bool:
    return sampling_sub_job(job) is not None


def _count(value: Any, name: str, deployment: str) -> int:
    # Whole-number floats pass (JSON writers differ); anything not a positive whole number does not.
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0 or value != int(value):
        raise MalformedDeploymentRecord(f"model deployment {deployment} has a malformed {name}: {value!r}")
    return int(value)


def metadata(job: dict[str, Any], *, base_url: str) -> dict[str, Any]:
    """The full metadata of a deployment job, as every SDK method returns it."""
    sub_job = sampling_sub_job(job)
    job_id = str(job.get("job_id", ""))
    deployment = deployment_id_of(job_id)
    if sub_job is None:
        raise MalformedDeploymentRecord(f"job behind {deployment} is not a model deployment")
    config = sub_job["inference_config"]
    vllm = config.get("vllm_config") if isinstance(config.get("vllm_config"), dict) else {}
    replicas = _count(config.get("num_replicas"), "num_replicas", deployment)
    n_gpus = _count(config.get("n_gpus"), "n_gpus", deployment)
    width = _count(vllm.get("tensor_parallel_size"), "tensor_parallel_size", deployment)
    max_seq_len = _count(config.get("max_seq_len"), "max_seq_len", deployment)
    max_model_len = _count(vllm.get("max_model_len"), "max_model_len", deployment)
    if n_gpus != replicas * width:
        raise MalformedDeploymentRecord(
            f"model deployment {deployment} is malformed: n_gpus {n_gpus} is not "
            f"num_replicas {replicas} * tensor_parallel_size {width}"
        )
    if max_seq_len != max_model_len:
        raise MalformedDeploymentRecord(
            f"model deployment {deployment} is malformed: max_seq_len {max_seq_len} differs from "
            f"max_model_len {max_model_len}"
        )
    status = deployment_status(job.get("status"))
    hardware = job.get("hardware") or None
    info = sub_job.get("source_checkpoint_info")
    if isinstance(info, dict) and info.get("checkpoint_id"):
        source = {
            "type": "checkpoint",
            "job_id": info.get("source_job_id"),
            "checkpoint_id": info["checkpoint_id"],
        }
    else:
        source = {"type": "base_model", "model": sub_job.get("model_name")}
    record: dict[str, Any] = {
        "deployment": deployment,
        "status": status,
        "model": sub_job.get("model_name"),
        "gpu_type": hardware,
        "min_replicas": replicas,
        "gpus_per_replica": width,
        "n_gpus": n_gpus,
        "max_seq_len": max_seq_len,
        "source": source,
        "created_at": job.get("created_at"),
        "updated_at": job.get("updated_at"),
        "spec": {
            "deployment": {
                "class": DEPLOYMENT_CLASS,
                "min_replicas": replicas,
                "gpus_per_replica": width,
                "gpu_type": hardware,
            },
            "source": dict(source),
            "inference": {"max_seq_len": max_seq_len},
        },
    }
    if status not in NOT_SERVING:
        record["base_url"] = base_url
    record.update(_reason_fields(job, status, job_id, deployment))
    return record


def _reason_fields(job: dict[str, Any], status: str, job_id: str, deployment: str) -> dict[str, Any]:
    reason = str(job.get("reason") or "")
    details = replace_backing_ids(str(job.get("reason_details") or ""), job_id, deployment)
    if status in FAILURE_STATUSES:
        return {"failure": {"code": reason or None, "message": details or None}} if reason or details else {}
    if status in DROP_STATUSES and reason == CANCELLED_BY_CLIENT:
        return {}
    fields: dict[str, Any] = {}
    if reason:
        fields["status_reason"] = reason
    if details:
        fields["status_details"] = details
    return fields


def summary(record: dict[str, Any]) -> dict[str, Any]:
    """What create, create --wait and wait print."""
    return {key: record[key] for key in ("deployment", "status", "base_url", "failure") if key in record}

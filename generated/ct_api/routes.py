"""Every REST operation of the spec: operationId -> (HTTP method, path template, tag).

Written by openapi/regen.py from openapi/cortex-training.yaml; never edited by hand.
"""

ROUTES: dict[str, tuple[str, str, str]] = {
    "cancelJob": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}:cancel", "control_plane"),
    "createChatCompletion": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/inference/v1/chat/completions", "inference"),
    "createJob": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}", "control_plane"),
    "deleteCheckpoint": ("DELETE", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/checkpoints/{checkpoint_id}", "control_plane"),
    "executeStatement": ("POST", "/api/v2/statements", "account"),
    "exportCheckpoint": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/checkpoints/{checkpoint_id}:export", "control_plane"),
    "forwardBackward": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/forward-backward", "data_plane"),
    "generate": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/generate", "data_plane"),
    "generateStream": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/generate-stream", "data_plane"),
    "getCapacity": ("GET", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/capacity", "control_plane"),
    "getDeploymentModel": ("GET", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/inference/v1/models/{model}", "inference"),
    "getExperimentRun": ("GET", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/experiment-run", "control_plane"),
    "getJob": ("GET", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}", "control_plane"),
    "getLocalArtifact": ("GET", "/_artifacts/{experiment_name}/{run_name}/{artifact_path}", "local"),
    "getRequestStatus": ("GET", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/requests/{request_id}", "data_plane"),
    "getStatementStatus": ("GET", "/api/v2/statements/{statement_handle}", "account"),
    "listAccountJobs": ("GET", "/api/v2/{endpoint}", "account"),
    "listCheckpoints": ("GET", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/checkpoints", "control_plane"),
    "listDeploymentModels": ("GET", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/inference/v1/models", "inference"),
    "listJobs": ("GET", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}", "control_plane"),
    "listLocalArtifacts": ("GET", "/_artifacts/{experiment_name}/{run_name}", "local"),
    "listModels": ("GET", "/api/v2/cortex-training/models", "account"),
    "load": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/load", "data_plane"),
    "save": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/save", "data_plane"),
    "step": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/step", "data_plane"),
    "submitOperation": ("POST", "/api/v2/databases/{database}/schemas/{schema}/{endpoint}/{job_id}/operation", "data_plane"),
}

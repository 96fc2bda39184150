"""The request and answer schemas of the spec, as TypedDicts (and enums as Literal aliases).

Written by openapi/regen.py from openapi/cortex-training.yaml; never edited by hand. They are types
for a checker only: the operations of ``ct_api.api`` import this module under ``TYPE_CHECKING`` and
``cast`` the transport's decoded JSON, so no object is built or checked per call. A key the schema
marks optional is ``NotRequired``; a schema open to more keys still lists only the keys it names.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

CheckpointReason: TypeAlias = Literal["cadence", "best", "final"]
CheckpointType: TypeAlias = Literal["resumable", "weights-only"]
DatasetFormatType1: TypeAlias = Literal["chat", "prompt_completion", "text", "labels"]
DatasetFormatType2Type1: TypeAlias = Literal["chat", "prompt_completion", "text", "labels"]
DatasetFormatType3Type1: TypeAlias = Literal["chat", "prompt_completion", "text", "labels"]
DatasetStatus: TypeAlias = Literal["building", "succeeded", "failed"]
Dflash2ConfigAttentionBackend: TypeAlias = Literal["sdpa", "flex_attention", "eager"]
Hardware: TypeAlias = Literal["H200", "B200", "B300"]
JobType: TypeAlias = Literal["training", "sampling", "log_probability"]
LeakageGate: TypeAlias = Literal["exact_duplicate", "near_duplicate"]
LogSeverity: TypeAlias = Literal["INFO", "WARNING", "ERROR"]
LrSchedule: TypeAlias = Literal["wsd", "cosine"]
ModelConfigTier: TypeAlias = Literal["S", "M", "L"]
OperationType: TypeAlias = Literal[
    "forward",
    "weight-sync",
    "bootstrap-router-replay",
    "router-replay-discard",
    "reset-prefix-cache",
    "cancel-request",
    "tail-logs",
]
RunsErrorCode: TypeAlias = Literal[
    "invalid_argument",
    "failed_precondition",
    "not_found",
    "unauthenticated",
    "permission_denied",
    "already_exists",
    "aborted",
    "internal",
    "unavailable",
]
RunStatus: TypeAlias = Literal["queued", "running", "succeeded", "failed", "cancelled"]


class AccountJobPage(TypedDict):
    jobs: NotRequired[list[AccountJobRecord] | None]
    next_page_token: NotRequired[str | None]


class AccountJobRecord(TypedDict):
    """A per-schema job record plus its database and schema."""

    job_id: NotRequired[str]
    status: NotRequired[str]
    reason: NotRequired[str | None]
    reason_details: NotRequired[str | None]
    created_at: NotRequired[str | None]
    updated_at: NotRequired[str | None]
    state_changed_at: NotRequired[str | None]
    submitted_by: NotRequired[str | None]
    owner_role: NotRequired[str | None]
    hardware: NotRequired[str | None]
    comment: NotRequired[str | None]
    image_tag: NotRequired[str | None]
    idle_timeout_seconds: NotRequired[int | float | None]
    pending_timeout_seconds: NotRequired[int | float | None]
    sub_jobs: NotRequired[list[SubJobRecord] | None]
    database_name: NotRequired[str]
    schema_name: NotRequired[str]


ActivationCheckpointingConfig: TypeAlias = "dict[str, Any]"


class BootstrapRouterReplayPayload(TypedDict):
    source_sub_job_id: str
    target_sub_job_id: str
    max_cache_bytes: NotRequired[int]


class BootstrapRouterReplayResult(TypedDict):
    sampling_job_id: NotRequired[str]


class CancelRequestPayload(TypedDict):
    request_id: str


class Capacity(TypedDict):
    """Proto3 JSON omits false and zero values, so every key may be absent."""

    has_reservation: NotRequired[bool]
    max_total_gpus: NotRequired[int]
    reserved_gpus: NotRequired[int]
    in_use_gpus: NotRequired[int]
    pending_gpus: NotRequired[int]
    available_gpus: NotRequired[int]
    breakdown: NotRequired[CapacityBreakdown | None]


class CapacityBreakdown(TypedDict):
    unsupported_dimensions: NotRequired[list[str] | None]
    job_count: NotRequired[int | None]
    truncated: NotRequired[bool | None]
    by_job_type: NotRequired[JobTypeBreakdown | None]
    by_submitted_by: NotRequired[SubmitterBreakdown | None]


class ChatCompletion(TypedDict):
    id: NotRequired[str]
    object: NotRequired[str]
    created: NotRequired[int]
    model: NotRequired[str]
    choices: NotRequired[list[ChatCompletionChoice]]
    usage: NotRequired[CompletionUsage | None]


class ChatCompletionChoice(TypedDict):
    index: NotRequired[int]
    message: NotRequired[ChatMessage | None]
    finish_reason: NotRequired[str | None]
    logprobs: NotRequired[ChoiceLogprobs | None]


class ChatCompletionChunk(TypedDict):
    """One `data:` event of a streamed chat completion."""

    id: NotRequired[str]
    object: NotRequired[str]
    created: NotRequired[int]
    model: NotRequired[str]
    choices: NotRequired[list[ChatCompletionChunkChoice]]
    usage: NotRequired[CompletionUsage | None]


class ChatCompletionChunkChoice(TypedDict):
    index: NotRequired[int]
    delta: NotRequired[ChatMessage | None]
    finish_reason: NotRequired[str | None]
    logprobs: NotRequired[ChoiceLogprobs | None]


class ChatCompletionRequest(TypedDict):
    """An OpenAI chat completion request. max_tokens is rejected, use max_completion_tokens. The local
    server honours the options listed here (frequency_penalty and presence_penalty at 0 only) and
    answers any other one with 400 unsupported_parameter naming it."""

    model: str
    messages: list[ChatMessage]
    max_completion_tokens: NotRequired[int]
    temperature: NotRequired[float]
    top_p: NotRequired[float]
    n: NotRequired[int]
    seed: NotRequired[int]
    logprobs: NotRequired[bool]
    top_logprobs: NotRequired[int]
    stream: NotRequired[bool]
    stream_options: NotRequired[ChatCompletionStreamOptions | None]


class ChatCompletionStreamOptions(TypedDict):
    include_usage: NotRequired[bool]


class ChatMessage(TypedDict):
    role: NotRequired[str]
    content: NotRequired[str | None]


class ChatTemplate(TypedDict):
    """How the model's conversations are laid out: the template's name and the marker that ends a turn
    (generation stops at it). Null for a model trained on text or label rows."""

    name: NotRequired[str | None]
    end_of_turn: NotRequired[str | None]


class CheckpointExport(TypedDict):
    checkpoint_id: NotRequired[str]
    files: NotRequired[list[CheckpointFile] | None]
    expires_at: NotRequired[str | None]


class CheckpointFile(TypedDict):
    filename: NotRequired[str]
    url: NotRequired[str]
    size_bytes: NotRequired[int | str]


class CheckpointInfo(TypedDict):
    checkpoint_id: NotRequired[str]
    global_steps: NotRequired[int | float | None]
    avg_loss: NotRequired[float | None]
    created_at: NotRequired[str | None]
    checkpoint_type: NotRequired[str | None]


class CheckpointList(TypedDict):
    checkpoints: NotRequired[list[CheckpointInfo] | None]


class ChoiceLogprobs(TypedDict):
    """With logprobs true, one entry per drawn token of the content."""

    content: NotRequired[list[TokenLogprob] | None]


class CompletionUsage(TypedDict):
    prompt_tokens: NotRequired[int]
    completion_tokens: NotRequired[int]
    total_tokens: NotRequired[int]


CreateJobDebugOptions: TypeAlias = "dict[str, Any]"


class CreateJobRequest(TypedDict):
    """The create-job body. Keys beyond the named ones are forwarded unchanged (the service rejects
    job_id). Clients and the local server check a body against this schema (clients after upper-casing
    hardware), so every bound here is refused before anything is stored."""

    sub_job_configs: list[SubJobConfig]
    experiment_name: NotRequired[str | None]
    hardware: NotRequired[Hardware | None]
    comment: NotRequired[str | None]
    idle_timeout_seconds: NotRequired[int | None]
    pending_timeout_seconds: NotRequired[int | None]
    debug: NotRequired[CreateJobDebugOptions | None]


class CreateJobResponse(TypedDict):
    job_id: NotRequired[str]


class Dataset(TypedDict):
    """A dataset build."""

    dataset_id: NotRequired[str]
    status: NotRequired[DatasetStatus]
    name: NotRequired[str | None]
    format: NotRequired[None | DatasetFormatType1 | DatasetFormatType2Type1 | DatasetFormatType3Type1]
    created_at: NotRequired[str | None]
    finished_at: NotRequired[str | None]
    source: NotRequired[DatasetSource | None]
    text_field: NotRequired[str | None]
    label_fields: NotRequired[list[str] | None]
    val_fraction: NotRequired[float | None]
    seed: NotRequired[int | None]
    splits: NotRequired[DatasetSplits | None]
    fingerprints: NotRequired[DatasetFingerprints | None]
    labels: NotRequired[list[DatasetLabel] | None]
    violations: NotRequired[list[LeakageViolation] | None]
    error: NotRequired[str | None]


class DatasetFingerprints(TypedDict):
    """SHA-256 hex digests of the source file and of each split's canonical form."""

    source: NotRequired[str | None]
    train: NotRequired[str | None]
    validation: NotRequired[str | None]


class DatasetLabel(TypedDict):
    """One label field of the rows and the values it takes."""

    label_id: NotRequired[str]
    field: NotRequired[str | None]
    values: NotRequired[list[str] | None]


class DatasetSource(TypedDict):
    """The uploaded file."""

    bytes: NotRequired[int | None]
    sha256: NotRequired[str | None]
    rows: NotRequired[int | None]


class DatasetSplits(TypedDict):
    train: NotRequired[SplitSize | None]
    validation: NotRequired[SplitSize | None]


DeepSpeedConfig: TypeAlias = "dict[str, Any]"


class DeploymentModel(TypedDict):
    id: NotRequired[str]
    object: NotRequired[str]
    created: NotRequired[int]
    owned_by: NotRequired[str]


class DeploymentModelList(TypedDict):
    object: NotRequired[str]
    data: NotRequired[list[DeploymentModel] | None]


class Dflash2Config(TypedDict):
    """DFlash2 draft training options; required with model_provider dflash2. Unknown keys are rejected."""

    draft_config: Dflash2DraftConfig
    init_from: NotRequired[str | None]
    attention_backend: NotRequired[Dflash2ConfigAttentionBackend]
    num_anchors: NotRequired[int]
    loss_decay_gamma: NotRequired[float | None]
    selector_loss_alpha: NotRequired[float]
    selector_stop_gradient: NotRequired[bool]
    objective_chunk_blocks: NotRequired[int]
    seed: NotRequired[int]


Dflash2DraftConfig: TypeAlias = "dict[str, Any]"


class EarlyStop(TypedDict):
    """The step at which patience ran out, and why."""

    step: NotRequired[int | None]
    reason: NotRequired[str | None]


class EncodedResult(TypedDict):
    """A DSSST1 result frame carried inside poll JSON."""

    content_type: NotRequired[str]
    encoding: NotRequired[str]
    wire_format: NotRequired[str]
    payload_b64: NotRequired[str]
    metrics: NotRequired[Metrics | None]


class ExperimentRun(TypedDict):
    experiment_name: NotRequired[str]
    experiment_run_name: NotRequired[str]


class ForwardBackwardResult(TypedDict):
    job_id: NotRequired[str]
    avg_loss: NotRequired[float | None]
    metrics: NotRequired[Metrics | None]
    post_process_outputs: NotRequired[PostProcessOutputs | None]


class ForwardPayload(TypedDict):
    """A DSSST1 frame (or request chunk of one) as base64 inside the JSON envelope."""

    payload_b64: str
    content_type: NotRequired[str]


class GenerateRequest(TypedDict):
    """The logical generate request encoded inside the DSSST1 frame (not a JSON body). Token-id prompts
    travel as int32 tensors."""

    prompts: list[str | list[int]]
    sampling_params: NotRequired[SamplingParams | list[SamplingParams | None]]
    routing_key: NotRequired[str | list[str | None] | None]
    strict: NotRequired[bool]


class GenerateResult(TypedDict):
    job_id: NotRequired[str]
    results: NotRequired[list[GenerationOutput] | None]


class GenerateStreamAccepted(TypedDict):
    request_id: NotRequired[str]
    job_id: NotRequired[str]
    count: NotRequired[int]


class GenerationOutput(TypedDict):
    text: NotRequired[str]
    token_ids: NotRequired[list[int]]
    finish_reason: NotRequired[str | None]
    logprobs: NotRequired[list[Any] | None]
    prompt_logprobs: NotRequired[list[Any] | None]


class InferenceConfig(TypedDict):
    """A sampling sub-job's config. Typed keys are listed; extra_sampling keys pass through."""

    max_seq_len: NotRequired[int | None]
    n_gpus: NotRequired[int | None]
    multiplex_job_id: NotRequired[str | None]
    gpu_memory_utilization: NotRequired[float | None]
    deployment_class: NotRequired[str | None]
    num_replicas: NotRequired[int | None]
    vllm_config: NotRequired[VllmConfig | None]
    peft_config: NotRequired[PeftConfig | None]
    model_options: NotRequired[ModelOptions | None]
    router_replay: NotRequired[RouterReplayConfig | None]


class JobList(TypedDict):
    jobs: NotRequired[list[JobRecord] | None]


class JobLocation(TypedDict):
    """Where an account-level list entry lives."""

    database_name: NotRequired[str]
    schema_name: NotRequired[str]


class JobRecord(TypedDict):
    """A job as Get job and List jobs return it. Timestamps are RFC 3339 strings."""

    job_id: NotRequired[str]
    status: NotRequired[str]
    reason: NotRequired[str | None]
    reason_details: NotRequired[str | None]
    created_at: NotRequired[str | None]
    updated_at: NotRequired[str | None]
    state_changed_at: NotRequired[str | None]
    submitted_by: NotRequired[str | None]
    owner_role: NotRequired[str | None]
    hardware: NotRequired[str | None]
    comment: NotRequired[str | None]
    image_tag: NotRequired[str | None]
    idle_timeout_seconds: NotRequired[int | float | None]
    pending_timeout_seconds: NotRequired[int | float | None]
    sub_jobs: NotRequired[list[SubJobRecord] | None]


class JobTypeBreakdown(TypedDict):
    status: NotRequired[str | None]
    groups: NotRequired[list[JobTypeGroup] | None]


class JobTypeGroup(TypedDict):
    job_type: NotRequired[str]
    in_use_gpus: NotRequired[int]
    pending_gpus: NotRequired[int]
    sub_job_count: NotRequired[int]


class LeakageViolation(TypedDict):
    """A train row and a validation row that are (nearly) the same text."""

    gate: NotRequired[LeakageGate]
    train_row: NotRequired[int | None]
    validation_row: NotRequired[int | None]
    similarity: NotRequired[float | None]


class LoadRequest(TypedDict):
    checkpoint_id: str
    source_job_id: NotRequired[str]
    target_sub_job_id: NotRequired[str]


class LoadResult(TypedDict):
    checkpoint_id: NotRequired[str]


class LocalArtifactFile(TypedDict):
    name: NotRequired[str | None]
    size: NotRequired[int | None]
    md5: NotRequired[str | None]


class LocalArtifactListing(TypedDict):
    """The files of an experiment run on the embedded local server."""

    files: NotRequired[list[LocalArtifactFile] | None]


Metrics: TypeAlias = "dict[str, Any]"
MetricSeries: TypeAlias = "dict[str, list[list[float]]]"


class MicroBatchSpec(TypedDict):
    max_tokens_per_mb: NotRequired[int | None]


class ModelInfo(TypedDict):
    name: NotRequired[str]


class ModelList(TypedDict):
    models: NotRequired[list[ModelInfo] | None]


ModelOptions: TypeAlias = "dict[str, Any]"


class OpenAIError(TypedDict):
    message: NotRequired[str | None]
    type: NotRequired[str | None]
    param: NotRequired[str | None]
    code: NotRequired[str | None]


class OpenAIErrorBody(TypedDict):
    error: NotRequired[OpenAIError | None]


OperationPayload: TypeAlias = "dict[str, Any]"


class OperationRequest(TypedDict):
    operation_type: str
    sub_job_id: NotRequired[str]
    sub_job_type: NotRequired[str]
    payload: NotRequired[
        ForwardPayload
        | WeightSyncPayload
        | BootstrapRouterReplayPayload
        | RouterReplayDiscardPayload
        | CancelRequestPayload
        | TailLogsPayload
        | ResetPrefixCachePayload
        | OperationPayload
    ]


class OperationResponse(TypedDict):
    """An opaque operation answer; poll it when it carries a request_id."""

    request_id: NotRequired[str]
    job_id: NotRequired[str]


class OptimizerConfig(TypedDict):
    """The canonical optimizer block (name, lr, weight_decay, betas, eps, fused). Raw bodies are forwarded
    as given, so other keys pass through."""

    name: NotRequired[str | None]
    lr: NotRequired[float | None]
    weight_decay: NotRequired[float | None]
    betas: NotRequired[list[float] | None]
    eps: NotRequired[float | None]
    fused: NotRequired[bool | None]


class PeakMemory(TypedDict):
    """Per-step memory diagnostics in bytes, present when step_peak_memory_log is on."""

    gpu_peak: NotRequired[int]
    cpu_peak: NotRequired[int]


class PeftConfig(TypedDict):
    """A PEFT LoraConfig-compatible block; peft_type is exactly "Lora"."""

    peft_type: NotRequired[str | None]
    r: NotRequired[int | None]
    lora_alpha: NotRequired[int | None]
    lora_dropout: NotRequired[float | None]
    bias: NotRequired[str | None]
    target_modules: NotRequired[list[str] | str | None]
    target_parameters: NotRequired[list[str] | None]


PostProcessOutputs: TypeAlias = "dict[str, Any]"
PrimeRlConfig: TypeAlias = "dict[str, Any]"


class RegisteredModel(TypedDict):
    """A model version registered by a succeeded run, from its best checkpoint exported weights-only (the
    newest checkpoint, flagged `fallback`, when validation never ran), or by registerRunModel from the
    best checkpoint of a cancelled run."""

    model_id: NotRequired[str]
    status: NotRequired[str | None]
    run_id: NotRequired[str | None]
    model_name: NotRequired[str | None]
    job_id: NotRequired[str | None]
    checkpoint_id: NotRequired[str | None]
    source_checkpoint_id: NotRequired[str | None]
    step: NotRequired[int | None]
    val_loss: NotRequired[float | None]
    fallback: NotRequired[bool | None]
    config_fingerprint: NotRequired[str | None]
    created_at: NotRequired[str | None]
    run_status: NotRequired[str | None]
    status_detail: NotRequired[str | None]
    format: NotRequired[str | None]
    chat_template: NotRequired[ChatTemplate | None]


class RegisteredModelList(TypedDict):
    models: NotRequired[list[RegisteredModel] | None]


class RequestAccepted(TypedDict):
    """The answer of a scheduling call; non-final request chunks may carry no request_id."""

    request_id: NotRequired[str]
    job_id: NotRequired[str]


class RequestEvent(TypedDict):
    """An opaque backend event. Streaming generation sends result, error and done events; large results
    arrive as result_chunk events with payload_b64 and payload_sha256."""

    type: NotRequired[str]
    index: NotRequired[int | None]
    result: NotRequired[Any]
    error: NotRequired[Any]
    completed: NotRequired[int | None]
    failed: NotRequired[int | None]
    payload_b64: NotRequired[str | None]
    payload_sha256: NotRequired[str | None]


class RequestStatus(TypedDict):
    request_id: NotRequired[str]
    status: NotRequired[str | None]
    created_at: NotRequired[str | None]
    updated_at: NotRequired[str | None]
    result: NotRequired[Any]
    error: NotRequired[Any]
    events: NotRequired[list[RequestEvent] | None]
    next_cursor: NotRequired[str | None]


class ResetPrefixCachePayload(TypedDict):
    drain: NotRequired[bool]
    timeout_s: NotRequired[float]
    retry_interval_s: NotRequired[float]


class ResultSetColumn(TypedDict):
    name: NotRequired[str]
    type: NotRequired[str]
    nullable: NotRequired[bool]


class ResultSetMetaData(TypedDict):
    numRows: NotRequired[int]
    format: NotRequired[str]
    rowType: NotRequired[list[ResultSetColumn]]


class RouterReplayConfig(TypedDict):
    enabled: NotRequired[bool | None]
    max_cache_bytes: NotRequired[int | None]
    mode: NotRequired[str | None]


class RouterReplayDiscardPayload(TypedDict):
    sample_ids: list[str]


class Run(TypedDict):
    """A training run."""

    run_id: NotRequired[str]
    status: NotRequired[RunStatus]
    config_fingerprint: NotRequired[str | None]
    dataset_id: NotRequired[str | None]
    dataset_fingerprint: NotRequired[str | None]
    model_config_tier: NotRequired[str | None]
    model_name: NotRequired[str | None]
    model: NotRequired[str | None]
    validation_dataset_id: NotRequired[str | None]
    labels: NotRequired[list[str] | None]
    seed: NotRequired[int | None]
    overrides: NotRequired[RunOverrides | None]
    trainer: NotRequired[RunTrainer | None]
    total_steps: NotRequired[int | None]
    steps_per_epoch: NotRequired[int | None]
    step: NotRequired[int | None]
    epoch: NotRequired[float | None]
    best_val_loss: NotRequired[float | None]
    best_step: NotRequired[int | None]
    early_stop: NotRequired[EarlyStop | None]
    checkpoints: NotRequired[list[RunCheckpoint] | None]
    best_checkpoint_id: NotRequired[str | None]
    gpu_seconds: NotRequired[float | None]
    usage: NotRequired[RunUsage | None]
    model_id: NotRequired[str | None]
    job_ids: NotRequired[list[str] | None]
    cancel_requested: NotRequired[bool | None]
    error: NotRequired[str | None]
    created_at: NotRequired[str | None]
    started_at: NotRequired[str | None]
    finished_at: NotRequired[str | None]


class RunCheckpoint(TypedDict):
    """A retained checkpoint of a run (resumable; its manifest fingerprints every part)."""

    checkpoint_id: NotRequired[str]
    job_id: NotRequired[str | None]
    step: NotRequired[int | None]
    reasons: NotRequired[list[CheckpointReason] | None]
    val_loss: NotRequired[float | None]
    manifest_sha256: NotRequired[str | None]


class RunList(TypedDict):
    runs: NotRequired[list[Run] | None]


class RunLogEntry(TypedDict):
    """timestamp, severity and message always; with structured=true also seq, step, epoch and event, and
    where known the losses, throughput, learning rate, checkpoint and early stop."""

    timestamp: NotRequired[str]
    severity: NotRequired[LogSeverity]
    message: NotRequired[str]
    seq: NotRequired[int | None]
    step: NotRequired[int | None]
    epoch: NotRequired[float | None]
    event: NotRequired[str | None]
    train_loss: NotRequired[float | None]
    val_loss: NotRequired[float | None]
    tokens_per_s: NotRequired[float | None]
    lr: NotRequired[float | None]
    checkpoint_id: NotRequired[str | None]
    worker: NotRequired[str | None]
    early_stop: NotRequired[EarlyStop | None]


class RunLogs(TypedDict):
    """Log entries in order; `cursor` is the last entry's seq (pass it as `after`)."""

    logs: NotRequired[list[RunLogEntry] | None]
    cursor: NotRequired[int]


class RunMetrics(TypedDict):
    """Metric series by name (train_loss, val_loss, lr, epoch, tokens_per_s, and val_accuracy/<label field>
    per label). `cursor` is the highest step returned, or the after_step asked for when nothing is new."""

    series: NotRequired[MetricSeries | None]
    cursor: NotRequired[int]


class RunOverrides(TypedDict):
    """Settings of the tier's preset tuned within validated bounds; the service refuses an unknown key or a
    value out of bounds with invalid_argument naming it (for example overrides.max_seq_len)."""

    max_seq_len: NotRequired[int | None]
    weight_decay: NotRequired[float | None]
    gradient_clipping: NotRequired[float | None]
    warmup_steps: NotRequired[int | None]
    min_lr_ratio: NotRequired[float | None]
    adam_beta1: NotRequired[float | None]
    adam_beta2: NotRequired[float | None]


class RunsError(TypedDict):
    """The error body of the runs service, such as `{"message": "...", "code": "invalid_argument", "field":
    "trainer.epochs"}`."""

    message: str
    code: RunsErrorCode
    field: NotRequired[str | None]


class RunSpec(TypedDict):
    """What to train. Unknown keys are refused with invalid_argument naming them; a key sent as null counts
    as not given. Omitted `labels` means every label of the dataset; an empty list means none (self-
    supervised only). `n_epochs`, `batch_size` and `learning_rate_multiplier` are the OpenAI fine-tuning
    names of `trainer.epochs`, `trainer.batch_tokens` (batch_size packed rows of max_seq_len tokens) and
    `trainer.learning_rate` (the multiplier times the base model's default rate); a spec gives a setting
    under one name only, and the run echoes it resolved in its trainer."""

    dataset_id: str
    model: NotRequired[str | None]
    validation_dataset_id: NotRequired[str | None]
    model_config_tier: NotRequired[ModelConfigTier | None]
    labels: NotRequired[list[str] | None]
    seed: NotRequired[int | None]
    n_epochs: NotRequired[int | None]
    batch_size: NotRequired[int | None]
    learning_rate_multiplier: NotRequired[float | None]
    overrides: NotRequired[RunOverrides | None]
    trainer: NotRequired[TrainerSpec | None]


class RunTrainer(TypedDict):
    """The trainer a run resolved: every key of TrainerSpec, and the values derived from them (warmup and
    cooldown steps, the floor of the decay, validation at epoch boundaries)."""

    epochs: NotRequired[int | None]
    batch_tokens: NotRequired[int | None]
    learning_rate: NotRequired[float | None]
    checkpoint_every_steps: NotRequired[int | None]
    val_every_steps: NotRequired[int | None]
    n_gpus: NotRequired[int | None]
    early_stopping: NotRequired[bool | None]
    patience: NotRequired[int | None]
    min_delta: NotRequired[float | None]
    cooldown_ratio: NotRequired[float | None]
    lr_schedule: NotRequired[str | None]
    warmup_steps: NotRequired[int | None]
    cooldown_steps: NotRequired[int | None]
    cooldown_min_steps: NotRequired[int | None]
    min_lr_ratio: NotRequired[float | None]
    val_at_epoch_boundaries: NotRequired[bool | None]


class RunUsage(TypedDict):
    """What the run has used so far, as metered."""

    training_gpu_seconds: NotRequired[float | None]


class SamplingParams(TypedDict):
    """vLLM sampling options (max_tokens, temperature, logprobs, prompt_logprobs, ...)."""

    max_tokens: NotRequired[int]
    temperature: NotRequired[float]
    logprobs: NotRequired[int]
    prompt_logprobs: NotRequired[int]


class SaveRequest(TypedDict):
    """checkpoint_id is not honoured by the service; use the id from the save result's stage_path."""

    checkpoint_id: NotRequired[str]
    checkpoint_type: NotRequired[CheckpointType]


class SaveResult(TypedDict):
    """The durable checkpoint id is the cp_<uuid> segment of stage_path."""

    job_id: NotRequired[str]
    stage_path: NotRequired[str]
    checkpoint_path: NotRequired[str]
    checkpoint_tag: NotRequired[str]
    version: NotRequired[float]


class ServiceError(TypedDict):
    """A service error such as `{"message": "...", "code": "517601"}`."""

    message: NotRequired[str]
    code: NotRequired[int | str]


class SourceCheckpointInfo(TypedDict):
    """Create-time initialization: checkpoint_id (with source_job_id for another job's checkpoint), or
    external_stage_path alone. The service stamps stage credentials itself."""

    checkpoint_id: NotRequired[str | None]
    source_job_id: NotRequired[str | None]
    external_stage_path: NotRequired[str | None]


class SpeculativeConfig(TypedDict):
    """vLLM speculative decoding; name the draft by model or by from_source_checkpoint, not both."""

    method: NotRequired[str | None]
    model: NotRequired[str | None]
    num_speculative_tokens: NotRequired[int | None]
    from_source_checkpoint: NotRequired[bool | None]


class SplitSize(TypedDict):
    rows: NotRequired[int | None]
    tokens: NotRequired[int | None]


class StatementRequest(TypedDict):
    statement: str
    timeout: NotRequired[int]
    database: NotRequired[str]
    schema: NotRequired[str]
    warehouse: NotRequired[str]
    role: NotRequired[str]


class StatementResult(TypedDict):
    code: NotRequired[str | None]
    sqlState: NotRequired[str | None]
    message: NotRequired[str | None]
    statementHandle: NotRequired[str | None]
    statementStatusUrl: NotRequired[str | None]
    requestId: NotRequired[str | None]
    createdOn: NotRequired[int | None]
    resultSetMetaData: NotRequired[ResultSetMetaData | None]
    data: NotRequired[list[list[str | None]] | None]


class StepRequest(TypedDict):
    learning_rate: NotRequired[float]


class StepResult(TypedDict):
    global_steps: NotRequired[int | float]
    last_lr: NotRequired[float | list[float] | None]
    peak_memory: NotRequired[PeakMemory | None]


class SubJobConfig(TypedDict):
    """One sub-job of a create body; exactly one of training_config and inference_config is set."""

    job_type: str
    model_name: str
    training_config: NotRequired[TrainingConfig | None]
    inference_config: NotRequired[InferenceConfig | None]
    global_batch_size: NotRequired[int | None]
    dtype: NotRequired[str | None]
    seed: NotRequired[int | None]
    model_post_init: NotRequired[list[str] | None]
    source_checkpoint_info: NotRequired[SourceCheckpointInfo | None]


class SubJobRecord(TypedDict):
    """A sub-job's config (effective or as submitted) plus the sub_job_id and status the service adds.
    Whole numbers may come back as floats."""

    sub_job_id: NotRequired[str]
    status: NotRequired[str | None]
    job_type: NotRequired[str]
    model_name: NotRequired[str | None]
    training_config: NotRequired[TrainingConfig | None]
    inference_config: NotRequired[InferenceConfig | None]
    global_batch_size: NotRequired[int | float | None]
    dtype: NotRequired[str | None]
    seed: NotRequired[int | float | None]
    model_post_init: NotRequired[list[str] | None]
    source_checkpoint_info: NotRequired[SourceCheckpointInfo | None]


class SubmitterBreakdown(TypedDict):
    status: NotRequired[str | None]
    groups: NotRequired[list[SubmitterGroup] | None]


class SubmitterGroup(TypedDict):
    kind: NotRequired[str]
    submitted_by: NotRequired[str | None]
    is_caller: NotRequired[bool | None]
    in_use_gpus: NotRequired[int]
    pending_gpus: NotRequired[int]
    job_count: NotRequired[int]


class TailLogEntry(TypedDict):
    _raw: NotRequired[str]
    ts: NotRequired[str]
    line: NotRequired[str]


class TailLogsPage(TypedDict):
    """One tail-logs page (at most 2000 entries or 256 KiB)."""

    entries: list[TailLogEntry]
    next_cursor: NotRequired[str | None]
    eof: NotRequired[bool | None]


class TailLogsPayload(TypedDict):
    """Omit cursor with max_lines for the newest lines, omit both to read from the start."""

    cursor: NotRequired[str]
    max_lines: NotRequired[int]


class TokenLogprob(TypedDict):
    token: NotRequired[str]
    logprob: NotRequired[float]
    bytes: NotRequired[list[int] | None]
    top_logprobs: NotRequired[list[TopLogprob]]


class TopLogprob(TypedDict):
    token: NotRequired[str]
    logprob: NotRequired[float]
    bytes: NotRequired[list[int] | None]


class TrainerSpec(TypedDict):
    """The trainer. Every key is optional in a spec; a run echoes every key resolved. Early stopping (the
    default) validates at the nominal cadence and at each epoch boundary and, after `patience`
    validations without an improvement of `min_delta`, runs the cooldown of the WSD schedule
    (`cooldown_ratio` of the steps) and ends succeeded."""

    epochs: NotRequired[int | None]
    batch_tokens: NotRequired[int | None]
    learning_rate: NotRequired[float | None]
    checkpoint_every_steps: NotRequired[int | None]
    val_every_steps: NotRequired[int | None]
    n_gpus: NotRequired[int | None]
    early_stopping: NotRequired[bool | None]
    patience: NotRequired[int | None]
    min_delta: NotRequired[float | None]
    cooldown_ratio: NotRequired[float | None]
    lr_schedule: NotRequired[LrSchedule | None]


class TrainingConfig(TypedDict):
    """A training sub-job's config. Typed keys are listed; everything else (extra_training) is open
    passthrough, including the memory-diagnostics switches step_peak_memory_log and
    training_memory_telemetry."""

    optimizer: NotRequired[OptimizerConfig | None]
    max_seq_len: NotRequired[int | None]
    train_batch_size: NotRequired[int | None]
    n_gpus: NotRequired[int | None]
    gradient_clipping: NotRequired[float | None]
    multiplex_job_id: NotRequired[str | None]
    load_optimizer_states: NotRequired[bool | None]
    model_provider: NotRequired[str | None]
    ep_size: NotRequired[int | None]
    sp_size: NotRequired[int | None]
    activation_checkpointing: NotRequired[bool | int | None]
    cuda_allocator_conf: NotRequired[str | None]
    ds_config: NotRequired[DeepSpeedConfig | None]
    ac_config: NotRequired[ActivationCheckpointingConfig | None]
    mb_spec: NotRequired[MicroBatchSpec | None]
    router_replay: NotRequired[RouterReplayConfig | None]
    peft_config: NotRequired[PeftConfig | None]
    model_options: NotRequired[ModelOptions | None]
    prime_rl: NotRequired[PrimeRlConfig | None]
    dflash2: NotRequired[Dflash2Config | None]
    step_peak_memory_log: NotRequired[bool | None]
    training_memory_telemetry: NotRequired[bool | None]
    save_training_metrics: NotRequired[bool | None]


class ValidationErrorBody(TypedDict):
    detail: NotRequired[list[ValidationErrorDetail] | None]


class ValidationErrorDetail(TypedDict):
    loc: NotRequired[list[str | int]]
    msg: NotRequired[str]
    type: NotRequired[str]


class VllmConfig(TypedDict):
    tensor_parallel_size: NotRequired[int | None]
    max_model_len: NotRequired[int | None]
    gpu_memory_utilization: NotRequired[float | None]
    fp32_lm_head: NotRequired[bool | None]
    clear_cache_on_weight_sync: NotRequired[Any]
    speculative_config: NotRequired[SpeculativeConfig | None]


class WeightSyncPayload(TypedDict):
    source_sub_job_id: str
    target_sub_job_ids: NotRequired[list[str]]
    weight_format: NotRequired[str]


WeightSyncResult: TypeAlias = "dict[str, Any]"

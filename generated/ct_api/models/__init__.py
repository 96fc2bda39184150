"""Contains all the data models used in inputs/outputs"""

from .account_job_page import AccountJobPage
from .account_job_record import AccountJobRecord
from .activation_checkpointing_config import ActivationCheckpointingConfig
from .bootstrap_router_replay_payload import BootstrapRouterReplayPayload
from .bootstrap_router_replay_result import BootstrapRouterReplayResult
from .cancel_request_payload import CancelRequestPayload
from .capacity import Capacity
from .capacity_breakdown import CapacityBreakdown
from .chat_completion import ChatCompletion
from .chat_completion_choice import ChatCompletionChoice
from .chat_completion_chunk import ChatCompletionChunk
from .chat_completion_chunk_choice import ChatCompletionChunkChoice
from .chat_completion_request import ChatCompletionRequest
from .chat_completion_stream_options import ChatCompletionStreamOptions
from .chat_message import ChatMessage
from .checkpoint_export import CheckpointExport
from .checkpoint_file import CheckpointFile
from .checkpoint_info import CheckpointInfo
from .checkpoint_list import CheckpointList
from .checkpoint_reason import CheckpointReason
from .checkpoint_type import CheckpointType
from .choice_logprobs import ChoiceLogprobs
from .completion_usage import CompletionUsage
from .create_job_debug_options import CreateJobDebugOptions
from .create_job_request import CreateJobRequest
from .create_job_response import CreateJobResponse
from .dataset import Dataset
from .dataset_fingerprints import DatasetFingerprints
from .dataset_label import DatasetLabel
from .dataset_source import DatasetSource
from .dataset_splits import DatasetSplits
from .dataset_status import DatasetStatus
from .deep_speed_config import DeepSpeedConfig
from .deployment_model import DeploymentModel
from .deployment_model_list import DeploymentModelList
from .dflash_2_config import Dflash2Config
from .dflash_2_config_attention_backend import Dflash2ConfigAttentionBackend
from .dflash_2_draft_config import Dflash2DraftConfig
from .early_stop import EarlyStop
from .encoded_result import EncodedResult
from .experiment_run import ExperimentRun
from .forward_backward_result import ForwardBackwardResult
from .forward_payload import ForwardPayload
from .generate_request import GenerateRequest
from .generate_result import GenerateResult
from .generate_stream_accepted import GenerateStreamAccepted
from .generation_output import GenerationOutput
from .hardware import Hardware
from .inference_config import InferenceConfig
from .job_list import JobList
from .job_location import JobLocation
from .job_record import JobRecord
from .job_type import JobType
from .job_type_breakdown import JobTypeBreakdown
from .job_type_group import JobTypeGroup
from .leakage_gate import LeakageGate
from .leakage_violation import LeakageViolation
from .load_request import LoadRequest
from .load_result import LoadResult
from .local_artifact_file import LocalArtifactFile
from .local_artifact_listing import LocalArtifactListing
from .log_severity import LogSeverity
from .lr_schedule import LrSchedule
from .metric_series import MetricSeries
from .metrics import Metrics
from .micro_batch_spec import MicroBatchSpec
from .model_config_tier import ModelConfigTier
from .model_info import ModelInfo
from .model_list import ModelList
from .model_options import ModelOptions
from .open_ai_error import OpenAIError
from .open_ai_error_body import OpenAIErrorBody
from .operation_payload import OperationPayload
from .operation_request import OperationRequest
from .operation_response import OperationResponse
from .operation_type import OperationType
from .optimizer_config import OptimizerConfig
from .peak_memory import PeakMemory
from .peft_config import PeftConfig
from .post_process_outputs import PostProcessOutputs
from .prime_rl_config import PrimeRlConfig
from .registered_model import RegisteredModel
from .request_accepted import RequestAccepted
from .request_event import RequestEvent
from .request_status import RequestStatus
from .reset_prefix_cache_payload import ResetPrefixCachePayload
from .result_set_column import ResultSetColumn
from .result_set_meta_data import ResultSetMetaData
from .router_replay_config import RouterReplayConfig
from .router_replay_discard_payload import RouterReplayDiscardPayload
from .run import Run
from .run_checkpoint import RunCheckpoint
from .run_list import RunList
from .run_log_entry import RunLogEntry
from .run_logs import RunLogs
from .run_metrics import RunMetrics
from .run_overrides import RunOverrides
from .run_spec import RunSpec
from .run_status import RunStatus
from .run_trainer import RunTrainer
from .run_usage import RunUsage
from .runs_error import RunsError
from .runs_error_code import RunsErrorCode
from .sampling_params import SamplingParams
from .save_request import SaveRequest
from .save_result import SaveResult
from .service_error import ServiceError
from .source_checkpoint_info import SourceCheckpointInfo
from .speculative_config import SpeculativeConfig
from .split_size import SplitSize
from .statement_request import StatementRequest
from .statement_result import StatementResult
from .step_request import StepRequest
from .step_result import StepResult
from .sub_job_config import SubJobConfig
from .sub_job_record import SubJobRecord
from .submitter_breakdown import SubmitterBreakdown
from .submitter_group import SubmitterGroup
from .tail_log_entry import TailLogEntry
from .tail_logs_page import TailLogsPage
from .tail_logs_payload import TailLogsPayload
from .token_logprob import TokenLogprob
from .top_logprob import TopLogprob
from .trainer_spec import TrainerSpec
from .training_config import TrainingConfig
from .validation_error_body import ValidationErrorBody
from .validation_error_detail import ValidationErrorDetail
from .vllm_config import VllmConfig
from .weight_sync_payload import WeightSyncPayload
from .weight_sync_result import WeightSyncResult

__all__ = (
    "AccountJobPage",
    "AccountJobRecord",
    "ActivationCheckpointingConfig",
    "BootstrapRouterReplayPayload",
    "BootstrapRouterReplayResult",
    "CancelRequestPayload",
    "Capacity",
    "CapacityBreakdown",
    "ChatCompletion",
    "ChatCompletionChoice",
    "ChatCompletionChunk",
    "ChatCompletionChunkChoice",
    "ChatCompletionRequest",
    "ChatCompletionStreamOptions",
    "ChatMessage",
    "CheckpointExport",
    "CheckpointFile",
    "CheckpointInfo",
    "CheckpointList",
    "CheckpointReason",
    "CheckpointType",
    "ChoiceLogprobs",
    "CompletionUsage",
    "CreateJobDebugOptions",
    "CreateJobRequest",
    "CreateJobResponse",
    "Dataset",
    "DatasetFingerprints",
    "DatasetLabel",
    "DatasetSource",
    "DatasetSplits",
    "DatasetStatus",
    "DeepSpeedConfig",
    "DeploymentModel",
    "DeploymentModelList",
    "Dflash2Config",
    "Dflash2ConfigAttentionBackend",
    "Dflash2DraftConfig",
    "EarlyStop",
    "EncodedResult",
    "ExperimentRun",
    "ForwardBackwardResult",
    "ForwardPayload",
    "GenerateRequest",
    "GenerateResult",
    "GenerateStreamAccepted",
    "GenerationOutput",
    "Hardware",
    "InferenceConfig",
    "JobList",
    "JobLocation",
    "JobRecord",
    "JobType",
    "JobTypeBreakdown",
    "JobTypeGroup",
    "LeakageGate",
    "LeakageViolation",
    "LoadRequest",
    "LoadResult",
    "LocalArtifactFile",
    "LocalArtifactListing",
    "LogSeverity",
    "LrSchedule",
    "Metrics",
    "MetricSeries",
    "MicroBatchSpec",
    "ModelConfigTier",
    "ModelInfo",
    "ModelList",
    "ModelOptions",
    "OpenAIError",
    "OpenAIErrorBody",
    "OperationPayload",
    "OperationRequest",
    "OperationResponse",
    "OperationType",
    "OptimizerConfig",
    "PeakMemory",
    "PeftConfig",
    "PostProcessOutputs",
    "PrimeRlConfig",
    "RegisteredModel",
    "RequestAccepted",
    "RequestEvent",
    "RequestStatus",
    "ResetPrefixCachePayload",
    "ResultSetColumn",
    "ResultSetMetaData",
    "RouterReplayConfig",
    "RouterReplayDiscardPayload",
    "Run",
    "RunCheckpoint",
    "RunList",
    "RunLogEntry",
    "RunLogs",
    "RunMetrics",
    "RunOverrides",
    "RunsError",
    "RunsErrorCode",
    "RunSpec",
    "RunStatus",
    "RunTrainer",
    "RunUsage",
    "SamplingParams",
    "SaveRequest",
    "SaveResult",
    "ServiceError",
    "SourceCheckpointInfo",
    "SpeculativeConfig",
    "SplitSize",
    "StatementRequest",
    "StatementResult",
    "StepRequest",
    "StepResult",
    "SubJobConfig",
    "SubJobRecord",
    "SubmitterBreakdown",
    "SubmitterGroup",
    "TailLogEntry",
    "TailLogsPage",
    "TailLogsPayload",
    "TokenLogprob",
    "TopLogprob",
    "TrainerSpec",
    "TrainingConfig",
    "ValidationErrorBody",
    "ValidationErrorDetail",
    "VllmConfig",
    "WeightSyncPayload",
    "WeightSyncResult",
)

"""Named limits, defaults and environment-variable names of the SDK, each tied to the contract section
(rest-api.md, "§") or acceptance feature it comes from. Nothing else in ct_core spells these numbers.
"""

from __future__ import annotations

# --- URL layout (§2.1, CFG-02) -------------------------------------------------------------------
DEFAULT_ENDPOINT = "cortex-training"
DEFAULT_SCHEMA = "PUBLIC"
#: The account-scoped model list keeps the literal endpoint name (§5.4; A-2).
MODELS_ENDPOINT = "cortex-training"
SNOWFLAKE_HOST_SUFFIXES = (".snowflakecomputing.com", ".snowflakecomputing.cn")

# --- Headers (§2.2, §2.4) --------------------------------------------------------------------------
REQUEST_ID_HEADER = "x-snowflake-request-id"
TOKEN_TYPE_HEADER = "X-Snowflake-Authorization-Token-Type"
PAT_TOKEN_TYPE = "PROGRAMMATIC_ACCESS_TOKEN"

# --- Polling (§3.4, CFG-01) ------------------------------------------------------------------------
DEFAULT_POLL_INTERVAL = 0.5
DEFAULT_POLL_TIMEOUT = 1800.0
DEFAULT_POLL_BACKOFF_MULTIPLIER = 1.25
DEFAULT_POLL_MAX_INTERVAL = 6.0

# --- Transport (§3.5, CFG-01, CFG-12, TRN-01) ------------------------------------------------------
DEFAULT_POOL_MAXSIZE = 1024
DEFAULT_MAX_RETRIES = 10
DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_READ_TIMEOUT = 600.0
#: Capacity is one attempt bounded by 10 s connect / 30 s read; a shorter configured timeout wins (§5.5).
CAPACITY_CONNECT_TIMEOUT = 10.0
CAPACITY_READ_TIMEOUT = 30.0
#: Exponential jitter between attempts: min(initial * 2**(n-1) + U(0, jitter), max) seconds (TRN-01).
RETRY_INITIAL_WAIT = 0.5
RETRY_MAX_WAIT = 10.0
RETRY_JITTER = 1.0
#: Statuses worth another attempt on the general request path (§3.5).
RETRYABLE_STATUSES = frozenset({307, 308, 404, 409, 429, 500, 502, 503, 504})
#: 404 with this service code is final unless this client created the job recently (§3.5).
JOB_NOT_FOUND_CODE = "517601"
RECENTLY_CREATED_WINDOW_SECONDS = 120.0
#: How many created job ids a client remembers for the window above (bounded bookkeeping, BUG-17).
RECENTLY_CREATED_MAX_ENTRIES = 1024
#: Shared code of every 400 refusal (§3.7) and the message prefix of an inaccessible database/schema.
BAD_REQUEST_CODE = "517602"
UNSUPPORTED_HARDWARE_CODE = "517604"
#: 409 codes that name a lasting conflict rather than a restarting zone: never retried (A-10, BUG-04).
PERMANENT_CONFLICT_CODES = frozenset(
    {
        UNSUPPORTED_HARDWARE_CODE,
        "chunk_group_restart_required",
        "chunk_group_conflict",
        "chunk_group_missing_chunks",
    }
)
#: Codes that say a Snowflake session token expired; the profile client replays once (CFG-10).
SESSION_EXPIRED_CODES = frozenset({"390111", "390112", "390114"})

# --- Error messages (§3.6, TRN-10, TRN-11) ---------------------------------------------------------
ERROR_MESSAGE_LIMIT = 1000
ERROR_BODY_SEARCH_DEPTH = 8

# --- Create-job limits (§5.1, CP-02, CP-03) --------------------------------------------------------
TIMEOUT_MIN_SECONDS = 300
TIMEOUT_MAX_SECONDS = 604_800
#: What a job runs with when the create body omits a timeout (§5.2, create_job_body_from_job).
DEFAULT_IDLE_TIMEOUT_SECONDS = 1800
DEFAULT_PENDING_TIMEOUT_SECONDS = 86_400
MAX_ZERO_STAGE = 2

# --- Account-level list (§5.3) ---------------------------------------------------------------------
ACCOUNT_LIST_MIN_PAGE_SIZE = 1
ACCOUNT_LIST_MAX_PAGE_SIZE = 1000

# --- Environment variables (CFG-13) ----------------------------------------------------------------
ENV_CONNECTION = "CORTEX_TRAINING_CONNECTION"
ENV_CONFIG = "CORTEX_TRAINING_CONFIG"
ENV_BASE_URL = "CORTEX_TRAINING_BASE_URL"
ENV_HOST = ("CORTEX_TRAINING_HOST", "SNOWFLAKE_HOST")
ENV_PAT = ("CORTEX_TRAINING_PAT", "SNOWFLAKE_PAT")
ENV_DATABASE = ("CORTEX_TRAINING_DATABASE", "SNOWFLAKE_DATABASE")
ENV_SCHEMA = ("CORTEX_TRAINING_SCHEMA", "SNOWFLAKE_SCHEMA")
ENV_ENDPOINT = "CORTEX_TRAINING_ENDPOINT"
#: Last-resort database of a profile client (§2.2).
ENV_DB_FALLBACK = "CORTEX_TRAINING_DB"
ENV_LOGIN_FILE = "CORTEX_TRAINING_LOGIN_FILE"
ENV_SNOWFLAKE_HOME = "SNOWFLAKE_HOME"
ENV_SNOWFLAKE_DEFAULT_CONNECTION = "SNOWFLAKE_DEFAULT_CONNECTION_NAME"
ENV_XDG_CONFIG_HOME = "XDG_CONFIG_HOME"
ENV_ENABLE_DEBUG_OPTIONS = "CORTEX_TRAINING_ENABLE_DEBUG_OPTIONS"
TRUTHY_ENV_VALUES = frozenset({"1", "true", "yes", "on"})

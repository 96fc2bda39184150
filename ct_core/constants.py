"""Named limits, defaults and environment-variable names of the SDK, each with the rule it comes from.

Nothing else in ct_core spells these numbers: the retry policies of every request path, the timeouts,
the service's limits and error codes, and the environment variables a client reads.
"""

from __future__ import annotations

# --- URL layout: <host>/api/v2/databases/<db>/schemas/<schema>/<endpoint>/... ----------------------
DEFAULT_ENDPOINT = "cortex-training"
DEFAULT_SCHEMA = "PUBLIC"
SNOWFLAKE_HOST_SUFFIXES = (".snowflakecomputing.com", ".snowflakecomputing.cn")

# --- Headers: the service's request id, and how a programmatic access token is announced ----------
REQUEST_ID_HEADER = "x-snowflake-request-id"
TOKEN_TYPE_HEADER = "X-Snowflake-Authorization-Token-Type"
PAT_TOKEN_TYPE = "PROGRAMMATIC_ACCESS_TOKEN"

# --- Polling a job or request: first interval, overall limit, growth per poll, largest interval ----
DEFAULT_POLL_INTERVAL = 0.5
DEFAULT_POLL_TIMEOUT = 1800.0
DEFAULT_POLL_BACKOFF_MULTIPLIER = 1.25
DEFAULT_POLL_MAX_INTERVAL = 6.0

# --- Transport: what a client starts with unless it is configured otherwise -----------------------
DEFAULT_POOL_MAXSIZE = 1024
DEFAULT_MAX_RETRIES = 10
DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_READ_TIMEOUT = 600.0
#: Capacity is one attempt bounded by 10 s connect / 30 s read; a shorter configured timeout wins.
CAPACITY_CONNECT_TIMEOUT = 10.0
CAPACITY_READ_TIMEOUT = 30.0

# --- Retry policies (ct_core.http.retry runs all of them) ----------------------------------------
# Retry n (1-based) waits min(first * 2**(n-1) + U(0, jitter), max) seconds, then loses a random share
# of up to `jitter share` of that; a Retry-After the service sends on a 429/503 replaces the backoff
# where a path honours it (still capped by the max).
#
#: General API requests: DEFAULT_MAX_RETRIES retries, 0.5 s doubling up to 10 s plus up to 1 s at
#: random, Retry-After honoured. What is retried: transport failures other than certificate
#: failures, and RETRYABLE_STATUSES.
RETRY_INITIAL_WAIT = 0.5
RETRY_MAX_WAIT = 10.0
RETRY_JITTER = 1.0
#: Statuses worth another attempt on the general request path: a redirect (asked again, never
#: followed), a job not visible yet, a restarting zone, rate limiting, and transient 5xx answers.
RETRYABLE_STATUSES = frozenset({307, 308, 404, 409, 429, 500, 502, 503, 504})
#: Statuses that prove a call which must not run twice did not run: a redirect, a job not visible
#: yet, a restarting zone, rate limiting and an unavailable service all answer before anything is
#: done (a 5xx other than 503 may come after the work, so it is never repeated).
NOTHING_RAN_STATUSES = frozenset({307, 308, 404, 409, 429, 503})
#: Artifact LIST and GET (chunked stdout/metrics downloads and execution logs): 4 retries, 0.25 s
#: doubling up to 8 s, each wait cut by a random share of up to half so parallel workers do not retry
#: in step; Retry-After is not read (stores answer through the Connector or a plain stream). What is
#: retried: a store that says it is unavailable, connection failures, timeouts (an attempt abandoned
#: past the transfer timeout included), ARTIFACT_RETRYABLE_STATUSES and every 5xx.
ARTIFACT_RETRIES = 4
ARTIFACT_RETRY_FIRST_WAIT = 0.25
ARTIFACT_RETRY_MAX_WAIT = 8.0
ARTIFACT_RETRY_JITTER_SHARE = 0.5
#: Each artifact LIST or GET attempt is limited to this many seconds by default (then retried).
DEFAULT_TRANSFER_TIMEOUT_S = 300.0
#: 408 is retried here though not on the general path: a LIST or GET of an artifact only reads, so a
#: request the server stopped waiting for is always safe to send again, while the general path keeps to
#: the statuses the service names as passing. 409 and 429 are a busy store, as on the general path.
ARTIFACT_RETRYABLE_STATUSES = frozenset({408, 409, 429})
#: Checkpoint files over presigned links: 5 retries per file, 0.2 s doubling up to 5 s, no jitter. Each
#: file of a download retries on its own, and the files fetched at once are a handful of connections
#: of one client (CHECKPOINT_DOWNLOAD_WORKERS at most), too few for retries in step to load a store the
#: way many clients' would. Every retry continues the partial file with a Range request. A body that
#: ended short of the announced size is retried at once, without a wait, and counts against the same 5.
#: A link refused as expired is not a retry: it is re-exported once for the whole download.
CHECKPOINT_RETRIES = 5
CHECKPOINT_RETRY_FIRST_WAIT = 0.2
CHECKPOINT_RETRY_MAX_WAIT = 5.0
#: Statuses of a presigned link worth another attempt on the same link (408 included, as for artifacts:
#: a GET of a file is always safe to send again).
CHECKPOINT_RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: Statuses an object store answers for a presigned link past its expiry (the export is asked again).
CHECKPOINT_LINK_EXPIRED_STATUSES = frozenset({401, 403})
#: Files of one checkpoint fetched at once from another host (fewer when the checkpoint has fewer
#: files to fetch): each on its own connection, with its own partial file, Range resume and checks. A
#: handful of streams fills a link that one stream cannot (per-connection limits of object stores,
#: round trips), while the disk sees few enough concurrent writers to keep each file's blocks together.
CHECKPOINT_DOWNLOAD_WORKERS = 4
#: Links to this machine itself (loopback) get one worker per this many cores, at least one: the server
#: shares the client's cores, and one stream at full speed keeps about two of them busy (near 2 GiB/s,
#: `ct local serve` spends some 0.6 CPU seconds per GiB reading and sending, the client some 0.5
#: receiving and writing), so further streams only split the same CPUs: on 2 cores four streams from
#: `ct local serve` were about 15 % slower than one (bench/downloads.py, docs/checkpoint-download.md).
CHECKPOINT_LOOPBACK_CORES_PER_WORKER = 2

# --- Service codes the retry rules and error messages read ----------------------------------------
#: 404 with this service code is final unless this client created the job in the last
#: RECENTLY_CREATED_WINDOW_SECONDS (a new job can be invisible for a moment).
JOB_NOT_FOUND_CODE = "517601"
RECENTLY_CREATED_WINDOW_SECONDS = 120.0
#: How many created job ids a client remembers for the window above (bounded, so a long-lived client
#: does not grow without limit).
RECENTLY_CREATED_MAX_ENTRIES = 1024
#: Shared code of every 400 refusal and the message prefix of an inaccessible database/schema.
BAD_REQUEST_CODE = "517602"
UNSUPPORTED_HARDWARE_CODE = "517604"
#: 409 codes that name a lasting conflict rather than a restarting zone: never retried.
PERMANENT_CONFLICT_CODES = frozenset(
    {
        UNSUPPORTED_HARDWARE_CODE,
        "chunk_group_restart_required",
        "chunk_group_conflict",
        "chunk_group_missing_chunks",
    }
)
#: Codes that say a Snowflake session token expired; the profile client renews it and replays once.
SESSION_EXPIRED_CODES = frozenset({"390111", "390112", "390114"})

# --- Error messages: how much of the service's message is kept, how deep a body is searched -------
ERROR_MESSAGE_LIMIT = 1000
ERROR_BODY_SEARCH_DEPTH = 8
#: A validation list (a 422's `detail`) names at most this many problems in an error's text; the
#: rest are counted ("and 2 more"), so one line still fits a terminal while the first ones show.
MAX_VALIDATION_DETAILS = 5

# --- Create-job limits the service enforces (checked before a body is sent) -----------------------
TIMEOUT_MIN_SECONDS = 300
TIMEOUT_MAX_SECONDS = 604_800
#: What a job runs with when the create body omits a timeout (see create_job_body_from_job).
DEFAULT_IDLE_TIMEOUT_SECONDS = 1800
DEFAULT_PENDING_TIMEOUT_SECONDS = 86_400
MAX_ZERO_STAGE = 2

# --- Data plane: the largest request-chunk frame the service accepts in one POST ------------------
# A larger frame travels as a request-chunk group; the local server sizes its body limit on it.
MAX_REQUEST_CHUNK_BYTES = 60 * 1024 * 1024

# --- Account-level job list: page size bounds ------------------------------------------------------
ACCOUNT_LIST_MIN_PAGE_SIZE = 1
ACCOUNT_LIST_MAX_PAGE_SIZE = 1000

# --- Environment variables -------------------------------------------------------------------------
ENV_CONNECTION = "CORTEX_TRAINING_CONNECTION"
ENV_CONFIG = "CORTEX_TRAINING_CONFIG"
ENV_BASE_URL = "CORTEX_TRAINING_BASE_URL"
ENV_HOST = ("CORTEX_TRAINING_HOST", "SNOWFLAKE_HOST")
ENV_PAT = ("CORTEX_TRAINING_PAT", "SNOWFLAKE_PAT")
ENV_DATABASE = ("CORTEX_TRAINING_DATABASE", "SNOWFLAKE_DATABASE")
ENV_SCHEMA = ("CORTEX_TRAINING_SCHEMA", "SNOWFLAKE_SCHEMA")
ENV_ENDPOINT = "CORTEX_TRAINING_ENDPOINT"
#: The database of a profile client (and of `ct login`'s prompt) when neither the options, the
#: environment nor the profile names one: a database name, not an environment variable.
DEFAULT_PROFILE_DATABASE = "CORTEX_TRAINING_DB"
ENV_LOGIN_FILE = "CORTEX_TRAINING_LOGIN_FILE"
ENV_SNOWFLAKE_HOME = "SNOWFLAKE_HOME"
ENV_SNOWFLAKE_DEFAULT_CONNECTION = "SNOWFLAKE_DEFAULT_CONNECTION_NAME"
ENV_XDG_CONFIG_HOME = "XDG_CONFIG_HOME"
ENV_ENABLE_DEBUG_OPTIONS = "CORTEX_TRAINING_ENABLE_DEBUG_OPTIONS"
TRUTHY_ENV_VALUES = frozenset({"1", "true", "yes", "on"})

#: Redaction by value: a credential the client holds that is at least this long is removed wherever
#: it appears in an error message; a shorter one only where it stands alone, so that a short test
#: token such as `tok` does not eat into the words around it.
REDACT_ANYWHERE_MIN_LENGTH = 8

# --- Managed runs (ct_core.runs and the runs service of ct_plugins/runs share these) ----------------
#: A dataset build sends at most this share of its rows to validation (and more than none): past
#: half, the split would train on less than it validates on. The SDK and `ct datasets build` check it
#: before uploading anything; the service refuses the same bound.
DATASET_VAL_FRACTION_MAX = 0.5
#: The header of a run start's idempotency key: the SDK makes one key per `runs.start` call and
#: sends it on every attempt; the service answers a key it has seen with that key's run.
IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"
#: An idempotency key is 1 to this many visible ASCII characters (no spaces), as HTTP carries it
#: unchanged through proxies; the SDK's own keys are 36.
IDEMPOTENCY_KEY_MAX_CHARS = 255

# --- Command line -------------------------------------------------------------------------------
#: How alike (difflib's ratio, 0 to 1) a known command or option name must be to a mistyped one for
#: ct to suggest it: 0.6, difflib's own default, offers `list` for `lst` and `--status` for
#: `--stauts`, and offers nothing for a word that resembles no name.
USAGE_SUGGESTION_CUTOFF = 0.6

"""`ct router-replay ...`: plan a cache size, bootstrap a sampling -> training pair, discard samples.

`plan` is arithmetic only (no connection). `bootstrap` and `discard` act on the job given with the
global `--job` and go through the SDK methods `bootstrap_router_replay` and `router_replay_discard`
(the `bootstrap-router-replay` and `router-replay-discard` operations), which the training
data-plane client provides; `bootstrap` goes through the plugin's `ReplayPairs` helper, so the
command and Python callers pick the receiver and poll the same way.
"""

from __future__ import annotations

from typing import Annotated, Literal

from cyclopts import App, Parameter

from ct_cli import context, output
from ct_router_replay.pairs import ReplayPairs, sdk_method
from ct_router_replay.planner import plan as make_plan

app = App(name="router-replay", help="Size, bootstrap and discard MoE router replay.")

SubJobType = Literal["training", "sampling"]


@app.command
def plan(
    *,
    experts: Annotated[int, Parameter(help="Routed experts per MoE layer (up to 65,536).")],
    seq_len: Annotated[int, Parameter(help="Tokens per sequence (prompt plus completion).")],
    moe_layers: Annotated[int, Parameter(help="Number of MoE layers in the model.")],
    top_k: Annotated[int, Parameter(help="Experts each token is routed to.")],
    sequences: Annotated[int, Parameter(help="Sequences a worker holds at once (default 1).")] = 1,
) -> None:
    """Compute router_replay.max_cache_bytes for one worker and show the formula.

    Each expert id takes 1 byte (uint8) for models with up to 256 experts and 2 bytes (uint16) up
    to 65,536, so max_cache_bytes = sequences x seq_len x moe_layers x top_k x id_bytes. Set the
    result in the router_replay block of each sub-job; the service does not choose it.
    """
    output.emit(
        make_plan(
            experts=experts, seq_len=seq_len, moe_layers=moe_layers, top_k=top_k, sequences=sequences
        ).as_dict()
    )


@app.command
def bootstrap(
    *,
    source_sub_job_id: Annotated[str, Parameter(help="The sampling sub-job whose routing is captured.")],
    target_sub_job_id: Annotated[str, Parameter(help="The training sub-job that replays it.")],
    max_cache_bytes: Annotated[int | None, Parameter(help="Per-worker cache cap in bytes.")] = None,
    operation_sub_job_id: Annotated[
        str | None, Parameter(help="Sub-job that receives the operation (default: the target).")
    ] = None,
    operation_sub_job_type: Annotated[
        SubJobType | None, Parameter(help="Route the operation by sub-job type instead of id.")
    ] = None,
    no_poll: Annotated[bool, Parameter(negative=(), help="Print a request id instead of waiting.")] = False,
) -> None:
    """Pair a sampling sub-job with a training sub-job for router replay (needs --job).

    Prints the bootstrap result; its sampling_job_id is the id to put in the router_replay
    operation metadata of later forward and forward-backward frames for this pair.
    """
    if max_cache_bytes is not None and max_cache_bytes <= 0:
        raise ValueError("--max-cache-bytes must be a positive integer")
    inv = context.current()
    job_id = inv.require_job("router-replay bootstrap")
    # The helper sends the operation to the target unless a hint routes it, and polls an answer
    # that is a request (some deployments give one before the pairing is known).
    result = ReplayPairs(inv.client()).bootstrap(
        job_id,
        source_sub_job_id,
        target_sub_job_id,
        max_cache_bytes=max_cache_bytes,
        sub_job_id=operation_sub_job_id,
        sub_job_type=operation_sub_job_type,
        poll=not no_poll,
        on_wait=lambda request_id: output.progress(
            f"bootstrap accepted as request {request_id}; waiting for its result"
        ),
    )
    output.emit(result)


@app.command
def discard(
    *sample_ids: Annotated[str, Parameter(help="Sample ids whose captured routing to drop.")],
    sub_job_id: Annotated[str | None, Parameter(help="Sub-job holding the captures.")] = None,
    sub_job_type: Annotated[
        SubJobType | None, Parameter(help="Route by sub-job type (default sampling without --sub-job-id).")
    ] = None,
) -> None:
    """Drop captured routing for samples that will not be trained on (needs --job)."""
    if not sample_ids:
        raise ValueError("give at least one SAMPLE_ID to discard")
    inv = context.current()
    job_id = inv.require_job("router-replay discard")
    method = sdk_method(inv.client(), "router_replay_discard")
    if sub_job_id is None and sub_job_type is None:
        # Captures live on the sampling workers that generated the samples.
        sub_job_type = "sampling"
    output.emit(method(job_id, list(sample_ids), sub_job_id=sub_job_id, sub_job_type=sub_job_type))

"""A cancel-request and the worker finishing the same running generation: one of them wins, for good.

The worker stores a generation's result while, on the event loop, a cancel-request may flag and
cancel the same request. Both write the request's final status; whichever lands second must not
overwrite the first, or a request the cancel answered as cancelled later reads done (or a done
one flips to cancelled). The two interleavings are played here step by step on a real app state
(SQLite store in a temporary state dir), with the same calls the worker and the cancel route make.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ct_core import wire
from ct_local.app import create_app
from ct_local.dataplane import chunk_groups, sampling_plane
from ct_local.dataplane.training_plane import TrainingDataPlane
from ct_local.settings import ServerSettings
from ct_local.storage.requests import RequestRow

JOB = "race-job"
SUB_JOB = f"{JOB}:sampling:0"
RESULT = {"job_id": JOB, "results": [{"text": "ab", "token_ids": [97, 98], "finish_reason": "length"}]}


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[TrainingDataPlane]:
    _, state = create_app(ServerSettings(state_dir=tmp_path / "state"), data_plane_factory=TrainingDataPlane)
    plane = state.data_plane
    assert isinstance(plane, TrainingDataPlane)
    try:
        yield plane
    finally:
        state.store.close()


def _running_generation(plane: TrainingDataPlane) -> RequestRow:
    plane.dp.add_request("gen-1", JOB, SUB_JOB, "generate")
    assert plane.dp.start_request("gen-1")
    row = plane.dp.get_request("gen-1")
    assert row is not None and row.status == "running"
    return row


def test_a_cancel_that_lands_while_the_result_is_stored_stays_cancelled(plane: TrainingDataPlane) -> None:
    row = _running_generation(plane)
    answers: list[bool] = []

    def cancel_now(encoded: dict[str, Any]) -> None:
        # The worker has checked that the request was not cancelled and is about to mark it done.
        answers.append(sampling_plane.cancel_running(plane.dp, plane.boards.cancels, row))

    plane._store_result(row, RESULT, {}, before_done=cancel_now)
    assert answers == [True]
    final = plane.dp.get_request(row.request_id)
    assert final is not None
    assert final.status == "cancelled", "the cancel was answered as cancelled, so it must stay cancelled"


def test_a_cancel_that_read_the_row_before_the_result_was_stored_leaves_it_done(
    plane: TrainingDataPlane,
) -> None:
    row = _running_generation(plane)
    seen_by_cancel = plane.dp.get_request(row.request_id)  # the cancel route reads the row: running
    assert seen_by_cancel is not None
    plane._store_result(row, RESULT, {})  # the worker finishes first
    cancelled = sampling_plane.cancel_running(plane.dp, plane.boards.cancels, seen_by_cancel)
    assert cancelled is False
    final = plane.dp.get_request(row.request_id)
    assert final is not None and final.status == "done"
    assert final.result_json is not None
    # No cancel flag is left behind for a request that will never look at it again.
    assert not plane.boards.cancels.is_cancelled(row.request_id)


# --- racing final chunks: one writes its chunk while the other has completed the group ---------------


def test_a_final_chunk_written_while_a_racing_one_completes_the_group_is_answered(
    plane: TrainingDataPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two copies of a group's last chunk arrive at once (a client retrying, or the racing-chunks
    test). Each copy is accepted on a thread of its own; the first to complete the group schedules
    the request and removes the group's chunk folder. The other copy, which found its chunk not yet
    stored, may be writing it into that folder at that very moment: it must still be answered."""
    frame = wire.dumps({"x": np.arange(4000, dtype=np.int64)})
    chunks = wire.encode_byte_chunks(
        frame,
        kind="request",
        operation="fwd-bwd",
        max_bytes=8192 + 600,
        chunk_group_id=str(uuid.uuid4()),
        force_chunk=True,
    )
    assert len(chunks) >= 3
    groups = plane.chunks
    for chunk in chunks[:-1]:
        groups.accept(JOB, chunk, operation="fwd-bwd")

    def complete_and_claim() -> None:
        # What the handler of the winning copy does: accept it, schedule the request, drop the chunks.
        accepted, whole = groups.accept(JOB, chunks[-1], operation="fwd-bwd")
        assert whole is not None
        assert _claim(plane, accepted.group_id, "fb-1") == ("fb-1", True)
        groups.discard_files(JOB, accepted.group_id)

    racer_errors: list[BaseException] = []

    def racer_thread() -> None:
        try:
            complete_and_claim()
        except BaseException as exc:
            racer_errors.append(exc)

    racer = threading.Thread(target=racer_thread)
    real_write = chunk_groups.atomic_write

    def write_while_the_other_copy_completes(path: Any, data: Any, **kwargs: Any) -> None:
        if racer.ident is None:  # this copy's write of the chunk: the other copy completes now
            racer.start()
            racer.join(timeout=1.0)  # done by then, unless it has to wait for this write
        real_write(path, data, **kwargs)

    monkeypatch.setattr(chunk_groups, "atomic_write", write_while_the_other_copy_completes)
    accepted, whole = groups.accept(JOB, chunks[-1], operation="fwd-bwd")
    racer.join(timeout=60)
    assert not racer.is_alive() and racer_errors == []
    # This copy is answered with the one execution, or hands over a frame whose claim finds it.
    if whole is None:
        assert accepted.request_id == "fb-1"
    else:
        assert _claim(plane, accepted.group_id, "fb-2") == ("fb-1", False)


def _claim(plane: TrainingDataPlane, group_id: str, request_id: str) -> tuple[str, bool]:
    """What schedule_frame does with a reassembled frame: link it to a new request, unless linked."""
    request = {"request_id": request_id, "sub_job_id": f"{JOB}:training:0", "kind": "forward-backward"}
    return plane.dp.claim_group(JOB, group_id, {**request, "input_path": None})

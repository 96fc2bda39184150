"""Capacity breakdown account switches and edge cases on a real local server.

Covers what the capacity plugin's author could only fake before: DISABLED for the whole account,
UNAVAILABLE per dimension, `truncated` with an attribution limit (later jobs fall into
UNATTRIBUTED / UNKNOWN), job-type names (log_prob, UNSPECIFIED, UNKNOWN), and cancelling jobs,
which the service leaves out of in_use_gpus.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ct_local.control import capacity
from ct_local.settings import HardwareCapacity, ServerSettings
from ct_local.storage.store import JobRow

SIX = ("has_reservation", "max_total_gpus", "reserved_gpus", "in_use_gpus", "pending_gpus", "available_gpus")
BOTH = {"breakdown": "job_type,submitted_by"}


def _sub(n_gpus: int, job_type: str = "training") -> dict[str, Any]:
    config = "training_config" if job_type == "training" else "inference_config"
    return {"job_type": job_type, "model_name": "Qwen/Qwen3-0.6B", config: {"n_gpus": n_gpus}}


def _totals(answer: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(answer[key] for key in SIX)


def _start_two_jobs(server: Any, wait_for: Any) -> str:
    """Start a 2+1 GPU job for tok-a, then a 1 GPU job for tok-a; return the URL prefix."""
    url = server.prefix()
    with server.http("tok-a") as a:
        first = a.post(url, json={"sub_job_configs": [_sub(2), _sub(1, "sampling")]}).json()["job_id"]
        wait_for(a, f"{url}/{first}", {"running"})
        second = a.post(url, json={"sub_job_configs": [_sub(1)]}).json()["job_id"]
        wait_for(a, f"{url}/{second}", {"running"})
    return url


def test_breakdown_disabled_for_the_account(local_server_factory: Any, wait_for: Any) -> None:
    server = local_server_factory(tokens={"tok-a": "ROLE_A"}, settings={"breakdown_enabled": False})
    url = _start_two_jobs(server, wait_for)
    with server.http("tok-a") as a:
        plain = a.get(f"{url}/capacity").json()
        answer = a.get(f"{url}/capacity", params={"breakdown": "job_type,submitted_by,region"}).json()
    assert _totals(answer) == _totals(plain)
    assert answer["in_use_gpus"] == 4
    # No dimension is OK, so job_count and truncated are left out; unknown names are still listed.
    assert answer["breakdown"] == {
        "unsupported_dimensions": ["region"],
        "by_job_type": {"status": "DISABLED", "groups": []},
        "by_submitted_by": {"status": "DISABLED", "groups": []},
    }


def test_one_dimension_unavailable(local_server_factory: Any, wait_for: Any) -> None:
    server = local_server_factory(
        tokens={"tok-a": "ROLE_A"}, settings={"breakdown_unavailable": ["Submitted_By"]}
    )
    url = _start_two_jobs(server, wait_for)
    with server.http("tok-a") as a:
        breakdown = a.get(f"{url}/capacity", params=BOTH).json()["breakdown"]
        only_unavailable = a.get(f"{url}/capacity", params={"breakdown": "submitted_by"}).json()
    assert breakdown["by_submitted_by"] == {"status": "UNAVAILABLE", "groups": []}
    assert breakdown["by_job_type"]["status"] == "OK"
    assert breakdown["job_count"] == 2 and breakdown["truncated"] is False
    assert only_unavailable["breakdown"] == {
        "unsupported_dimensions": [],
        "by_submitted_by": {"status": "UNAVAILABLE", "groups": []},
    }


def test_attribution_limit_truncates(local_server_factory: Any, wait_for: Any) -> None:
    server = local_server_factory(tokens={"tok-a": "ROLE_A"}, settings={"breakdown_attribution_limit": 1})
    url = _start_two_jobs(server, wait_for)
    with server.http("tok-a") as a:
        answer = a.get(f"{url}/capacity", params=BOTH).json()
    breakdown = answer["breakdown"]
    assert breakdown["job_count"] == 2 and breakdown["truncated"] is True
    # The older job is attributed; the newer one counts as UNATTRIBUTED and its sub-job as UNKNOWN.
    users = breakdown["by_submitted_by"]["groups"]
    assert [(g["kind"], g["in_use_gpus"], g["job_count"]) for g in users] == [
        ("USER", 3, 1),
        ("OTHER", 0, 0),
        ("UNATTRIBUTED", 1, 1),
    ]
    types = {
        g["job_type"]: (g["in_use_gpus"], g["sub_job_count"]) for g in breakdown["by_job_type"]["groups"]
    }
    assert types == {"TRAINING": (2, 1), "SAMPLING": (1, 1), "LOG_PROBABILITY": (0, 0), "UNKNOWN": (1, 1)}
    # The groups still add up to the totals.
    assert sum(g["in_use_gpus"] for g in users) == answer["in_use_gpus"] == 4
    assert sum(v[0] for v in types.values()) == 4


def test_cancelling_jobs_are_not_in_use_but_still_block_placement(
    local_server_factory: Any, wait_for: Any
) -> None:
    server = local_server_factory(
        tokens={"tok-a": "ROLE_A"},
        # The cancel never finishes during the test, so the job sits in cancelling.
        settings={"capacity": {"H200": {"max_total_gpus": 4}}, "cancelling_delay_s": 3600},
    )
    url = server.prefix()
    with server.http("tok-a") as a:
        job = a.post(url, json={"sub_job_configs": [_sub(3)]}).json()["job_id"]
        wait_for(a, f"{url}/{job}", {"running"})
        a.post(f"{url}/{job}:cancel").raise_for_status()
        assert a.get(f"{url}/{job}").json()["status"] == "cancelling"
        answer = a.get(f"{url}/capacity", params=BOTH).json()
    assert (answer["in_use_gpus"], answer["pending_gpus"]) == (0, 0)
    # Its 3 GPUs are not free yet, so only 1 of the 4 is available.
    assert answer["available_gpus"] == 1
    breakdown = answer["breakdown"]
    assert breakdown["job_count"] == 0
    assert all(g["in_use_gpus"] == 0 for g in breakdown["by_job_type"]["groups"])
    assert [g["kind"] for g in breakdown["by_submitted_by"]["groups"]] == ["OTHER", "UNATTRIBUTED"]


@pytest.mark.parametrize(
    ("raw", "group"),
    [
        ("training", "TRAINING"),
        ("JOB_TYPE_SAMPLING", "SAMPLING"),
        ("log_prob", "LOG_PROBABILITY"),
        ("Log_Probability", "LOG_PROBABILITY"),
        ("reward_model", "REWARD_MODEL"),
        (None, "UNSPECIFIED"),
        ("  ", "UNSPECIFIED"),
        ("job_type_", "UNSPECIFIED"),
        (7, "UNKNOWN"),
        ("not a type!", "UNKNOWN"),
    ],
)
def test_job_type_group_names(raw: Any, group: str) -> None:
    assert capacity.job_type_group(raw) == group


def _row(job_id: str, status: str, sub_jobs: list[dict[str, Any]], created_at: float) -> JobRow:
    return JobRow(
        job_id=job_id,
        database_name="DB",
        schema_name="PUBLIC",
        endpoint="E",
        owner_role="ROLE_A",
        submitted_by="ALICE",
        status=status,
        created_at=created_at,
        updated_at=created_at,
        state_changed_at=created_at,
        last_activity_at=created_at,
        hardware="H200",
        gpus=capacity.job_gpus(sub_jobs),
        experiment_name="X",
        experiment_run_name="R",
        sub_jobs=sub_jobs,
    )


def test_stored_log_prob_and_untyped_sub_jobs_are_grouped() -> None:
    # Rows as a store could hold them (the raw API spells the type log_prob; old rows may lack one).
    jobs = [
        _row("a", "running", [_sub(2), {"job_type": "log_prob", "inference_config": {"n_gpus": 4}}], 1.0),
        _row("b", "pending", [{"model_name": "Qwen/Qwen3-0.6B", "training_config": {"n_gpus": 2}}], 2.0),
        _row("c", "initializing", [{"job_type": ["odd"], "inference_config": {"n_gpus": 1}}], 3.0),
    ]
    answer = capacity.capacity_answer(
        jobs,
        HardwareCapacity(max_total_gpus=16),
        dimensions=(["job_type"], []),
        caller_role="ROLE_A",
        caller_user="ALICE",
        settings=ServerSettings(models=()),
    )
    assert (answer["in_use_gpus"], answer["pending_gpus"], answer["available_gpus"]) == (3, 1, 12)
    groups = [
        (g["job_type"], g["in_use_gpus"], g["pending_gpus"], g["sub_job_count"])
        for g in answer["breakdown"]["by_job_type"]["groups"]
    ]
    assert groups == [
        ("TRAINING", 2, 0, 1),
        ("SAMPLING", 0, 0, 0),
        ("LOG_PROBABILITY", 0, 0, 1),  # log-probability sub-jobs add no GPUs but are counted
        ("UNSPECIFIED", 0, 1, 1),
        ("UNKNOWN", 1, 0, 1),
    ]


def test_multiplexed_sub_jobs_add_no_gpus_but_are_counted() -> None:
    # A sub-job that sets multiplex_job_id shares another job's GPUs, so it adds none of its own.
    shared = {"job_type": "sampling", "model_name": "Qwen/Qwen3-0.6B", "inference_config": {"n_gpus": 4}}
    shared["inference_config"]["multiplex_job_id"] = "other-job:sampling:0"
    trainer = _sub(2)
    trainer["training_config"]["multiplex_job_id"] = "other-job:training:0"
    jobs = [
        _row("a", "running", [_sub(2), shared], 1.0),
        _row("b", "pending", [trainer, _sub(1, "sampling")], 2.0),
    ]
    answer = capacity.capacity_answer(
        jobs,
        HardwareCapacity(max_total_gpus=16),
        dimensions=(["job_type", "submitted_by"], []),
        caller_role="ROLE_A",
        caller_user="ALICE",
        settings=ServerSettings(models=()),
    )
    assert (answer["in_use_gpus"], answer["pending_gpus"]) == (2, 1)
    breakdown = answer["breakdown"]
    groups = [
        (g["job_type"], g["in_use_gpus"], g["pending_gpus"], g["sub_job_count"])
        for g in breakdown["by_job_type"]["groups"]
    ]
    assert groups == [("TRAINING", 2, 0, 2), ("SAMPLING", 0, 1, 2), ("LOG_PROBABILITY", 0, 0, 0)]
    (alice, *_rest) = breakdown["by_submitted_by"]["groups"]
    assert (alice["submitted_by"], alice["in_use_gpus"], alice["pending_gpus"], alice["job_count"]) == (
        "ALICE",
        2,
        1,
        2,
    )
    assert breakdown["job_count"] == 2


def test_user_rows_most_gpus_first_then_by_name_then_other_and_unattributed() -> None:
    def owned(job_id: str, user: str, role: str, n_gpus: int, status: str = "running") -> JobRow:
        row = _row(job_id, status, [_sub(n_gpus)], float(len(job_id)))
        return dataclasses.replace(row, submitted_by=user, owner_role=role)

    jobs = [
        owned("a", "ZOE", "ROLE_A", 2),
        owned("bb", "ALICE", "ROLE_A", 1, "pending"),
        owned("ccc", "BEN", "ROLE_A", 1),
        owned("dddd", "MAX", "ROLE_A", 4),
        owned("eeeee", "", "ROLE_A", 1),  # no known submitter
        owned("ffffff", "EVE", "ROLE_B", 8),  # not visible to the caller's role
    ]
    answer = capacity.capacity_answer(
        jobs,
        HardwareCapacity(max_total_gpus=64),
        dimensions=(["submitted_by"], []),
        caller_role="ROLE_A",
        caller_user="BEN",
        settings=ServerSettings(models=()),
    )
    rows = [
        (g["kind"], g.get("submitted_by"), g.get("is_caller"), g["in_use_gpus"] + g["pending_gpus"])
        for g in answer["breakdown"]["by_submitted_by"]["groups"]
    ]
    # In-use and pending GPUs together decide the order; a tie goes by name (ALICE before BEN).
    assert rows == [
        ("USER", "MAX", False, 4),
        ("USER", "ZOE", False, 2),
        ("USER", "ALICE", False, 1),
        ("USER", "BEN", True, 1),
        ("OTHER", None, None, 8),
        ("UNATTRIBUTED", None, None, 1),
    ]

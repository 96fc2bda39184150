"""Capacity: per-hardware accounting of held and pending GPUs, breakdowns and 517604."""

from __future__ import annotations

import pytest


def _job(n_gpus: int, job_type: str = "training") -> dict:
    config = "training_config" if job_type == "training" else "inference_config"
    return {"job_type": job_type, "model_name": "Qwen/Qwen3-0.6B", config: {"n_gpus": n_gpus}}


@pytest.fixture
def small(local_server_factory):
    return local_server_factory(
        tokens={"tok-a": "ROLE_A", "tok-b": "ROLE_B"},
        settings={
            "capacity": {
                "H200": {"max_total_gpus": 8},
                "B300": {"max_total_gpus": -1, "has_reservation": False},
            }
        },
    )


def test_in_use_and_pending_accounting(small, wait_for) -> None:
    with small.http("tok-a") as a:
        url = small.prefix()
        empty = a.get(f"{url}/capacity").json()
        assert empty == {
            "has_reservation": True,
            "max_total_gpus": 8,
            "reserved_gpus": 8,
            "in_use_gpus": 0,
            "pending_gpus": 0,
            "available_gpus": 8,
        }
        running = a.post(url, json={"sub_job_configs": [_job(4), _job(2, "sampling")]}).json()["job_id"]
        wait_for(a, f"{url}/{running}", {"running"})
        waiting = a.post(url, json={"sub_job_configs": [_job(4)]}).json()["job_id"]
        # 6 held + 4 wanted is over the ceiling of 8: the second job stays pending and claims quota.
        assert a.get(f"{url}/{waiting}").json()["status"] == "pending"
        cap = a.get(f"{url}/capacity", params={"hardware": "H200"}).json()
        assert (cap["in_use_gpus"], cap["pending_gpus"], cap["available_gpus"]) == (6, 4, 0)
        # Once the first job is cancelled, the waiting one is placed and runs.
        a.post(f"{url}/{running}:cancel").raise_for_status()
        wait_for(a, f"{url}/{waiting}", {"running"})
        after = a.get(f"{url}/capacity").json()
        assert (after["in_use_gpus"], after["pending_gpus"], after["available_gpus"]) == (4, 0, 4)


def test_unsupported_hardware_is_409_517604(small) -> None:
    with small.http("tok-a") as a:
        response = a.get(f"{small.prefix()}/capacity", params={"hardware": "B200"})
        assert response.status_code == 409
        assert response.json() == {
            "code": "517604",
            "message": 'Cortex training getCapacity failed: unsupported hardware "B200": '
            "supported hardware is H200, B300",
        }
        unknown = a.get(f"{small.prefix()}/capacity", params={"hardware": "A100"})
        assert unknown.status_code == 400
        best_effort = a.get(f"{small.prefix()}/capacity", params={"hardware": "B300"}).json()
        assert best_effort["has_reservation"] is False and best_effort["max_total_gpus"] == -1
        assert best_effort["reserved_gpus"] == 0


def test_breakdown(small, wait_for) -> None:
    url = small.prefix()
    with small.http("tok-a") as a, small.http("tok-b") as b:
        mine = a.post(url, json={"sub_job_configs": [_job(2), _job(1, "sampling")]}).json()["job_id"]
        theirs = b.post(url, json={"sub_job_configs": [_job(1, "sampling")]}).json()["job_id"]
        wait_for(a, f"{url}/{mine}", {"running"})
        wait_for(b, f"{url}/{theirs}", {"running"})
        plain = a.get(f"{url}/capacity").json()
        assert "breakdown" not in plain
        body = a.get(
            f"{url}/capacity", params={"breakdown": " Job_Type,submitted_by,,job_type,future_dim"}
        ).json()
        assert body["in_use_gpus"] == 4
        breakdown = body["breakdown"]
        assert breakdown["unsupported_dimensions"] == ["future_dim"]
        assert breakdown["job_count"] == 2 and breakdown["truncated"] is False
        by_type = breakdown["by_job_type"]
        assert by_type["status"] == "OK"
        assert [g["job_type"] for g in by_type["groups"]] == ["TRAINING", "SAMPLING", "LOG_PROBABILITY"]
        assert [(g["in_use_gpus"], g["sub_job_count"]) for g in by_type["groups"]] == [(2, 1), (2, 2), (0, 0)]
        groups = breakdown["by_submitted_by"]["groups"]
        assert [g["kind"] for g in groups] == ["USER", "OTHER", "UNATTRIBUTED"]
        assert groups[0]["is_caller"] is True and groups[0]["in_use_gpus"] == 3
        assert groups[1]["in_use_gpus"] == 1 and groups[1]["job_count"] == 1
        assert "submitted_by" not in groups[1]
        only_unknown = a.get(f"{url}/capacity", params={"breakdown": "nothing_known"}).json()["breakdown"]
        assert only_unknown == {"unsupported_dimensions": ["nothing_known"]}


@pytest.mark.parametrize("value", ["a,b,c,d,e,f,g,h,i", "Bad-Name", "x" * 33])
def test_breakdown_bad_dimensions_are_400(client, prefix, value) -> None:
    response = client.get(f"{prefix}/capacity", params={"breakdown": value})
    assert response.status_code == 400
    assert response.json()["code"] == "517602"

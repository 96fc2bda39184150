"""Server-side checks of the create-job body: every refusal has the service's error shape."""

from __future__ import annotations

import pytest


def _post(client, prefix, body):
    return client.post(prefix, json=body)


def test_shape_problems_answer_422_detail(client, prefix) -> None:
    for body, loc in (
        ({}, ["body", "sub_job_configs"]),
        ({"sub_job_configs": []}, ["body", "sub_job_configs"]),
        ({"sub_job_configs": ["x"]}, ["body", "sub_job_configs", 0]),
        ({"sub_job_configs": [{"job_type": "training"}]}, ["body", "sub_job_configs", 0, "model_name"]),
        (
            {"sub_job_configs": [{"job_type": "weird", "model_name": "m"}]},
            ["body", "sub_job_configs", 0, "job_type"],
        ),
        ([1, 2], ["body"]),
    ):
        response = _post(client, prefix, body)
        assert response.status_code == 422, body
        detail = response.json()["detail"]
        assert detail[0]["loc"] == loc
        assert detail[0]["type"] == "value_error"
        assert detail[0]["msg"]


def test_non_json_body_is_422(client, prefix) -> None:
    response = client.post(prefix, content=b"{nope")
    assert response.status_code == 422
    assert "detail" in response.json()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"hardware": "A100"}, "hardware must be one of H200, B200, B300, got 'A100'"),
        ({"hardware": "h200"}, "hardware must be one of H200, B200, B300, got 'h200'"),
        ({"idle_timeout_seconds": 5}, "idle_timeout_seconds must be 0 or between 300 and 604800"),
        ({"idle_timeout_seconds": 604801}, "idle_timeout_seconds must be 0 or between 300 and 604800"),
        ({"idle_timeout_seconds": 300.5}, "idle_timeout_seconds must be an integer"),
        ({"idle_timeout_seconds": True}, "idle_timeout_seconds must be an integer"),
        ({"pending_timeout_seconds": 0}, "pending_timeout_seconds must be between 300 and 604800"),
        ({"pending_timeout_seconds": "300"}, "pending_timeout_seconds must be an integer"),
        ({"job_id": "mine"}, "job_id must not be set when creating a job"),
    ],
)
def test_rule_violations_answer_400_517602(client, prefix, training, fields, message) -> None:
    response = _post(client, prefix, {"sub_job_configs": [training], **fields})
    assert response.status_code == 400
    assert response.json() == {"message": message, "code": "517602"}


def test_at_most_one_training_sub_job(client, prefix, training) -> None:
    response = _post(client, prefix, {"sub_job_configs": [training, training]})
    assert response.status_code == 400
    assert response.json()["message"] == "at most one training sub-job is supported per job"


@pytest.mark.parametrize("job_type", ["log_probability", "log_prob", "JOB_TYPE_LOG_PROBABILITY"])
def test_log_probability_sub_jobs_are_refused(client, prefix, sampling, job_type) -> None:
    response = _post(client, prefix, {"sub_job_configs": [sampling, {**sampling, "job_type": job_type}]})
    assert response.status_code == 400
    assert response.json()["message"] == (
        "sub_job_configs[1].job_type: log_probability sub-jobs are not currently supported"
    )


def test_every_problem_is_named(client, prefix, training) -> None:
    zero3 = {**training, "training_config": {"ds_config": {"zero_optimization": {"stage": 3}}, "n_gpus": 0}}
    response = _post(client, prefix, {"sub_job_configs": [zero3], "idle_timeout_seconds": 1, "hardware": "X"})
    message = response.json()["message"]
    assert response.status_code == 400
    assert "ZeRO-3 is not supported" in message
    assert "n_gpus must be a positive integer" in message
    assert "idle_timeout_seconds" in message
    assert "hardware must be one of" in message


def test_hardware_the_account_lacks_is_refused(local_server_factory, training) -> None:
    server = local_server_factory(settings={"capacity": {"H200": {"max_total_gpus": 8}}})
    with server.http() as client:
        response = client.post(server.prefix(), json={"sub_job_configs": [training], "hardware": "B300"})
    assert response.status_code == 400
    assert response.json() == {
        "message": 'unsupported hardware "B300": supported hardware is H200',
        "code": "517602",
    }

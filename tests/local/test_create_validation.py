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
        ({"idle_timeout_seconds": 5}, "idle_timeout_seconds must be 0 or between 300 and 604800, got 5"),
        (
            {"idle_timeout_seconds": 604801},
            "idle_timeout_seconds must be 0 or between 300 and 604800, got 604801",
        ),
        ({"idle_timeout_seconds": 300.5}, "idle_timeout_seconds must be an integer, got 300.5"),
        ({"idle_timeout_seconds": True}, "idle_timeout_seconds must be an integer, got True"),
        ({"pending_timeout_seconds": 0}, "pending_timeout_seconds must be between 300 and 604800, got 0"),
        ({"pending_timeout_seconds": "300"}, "pending_timeout_seconds must be an integer, got '300'"),
        ({"job_id": "mine"}, "job_id cannot be set when creating a job: the service assigns it"),
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
    assert "stage 3 is not supported (ZeRO-3)" in message
    assert "n_gpus must be a positive integer, got 0" in message
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


# --- models the server does not serve ------------------------------------------------------------

UNKNOWN_MODEL = "Some/Unknown-Model"


def test_a_job_of_a_model_the_server_does_not_serve_is_refused(client, prefix, training, sampling) -> None:
    for sub_job, kind in ((training, "training"), (sampling, "sampling")):
        response = _post(client, prefix, {"sub_job_configs": [{**sub_job, "model_name": UNKNOWN_MODEL}]})
        assert response.status_code == 400, response.text
        body = response.json()
        assert body["code"] == "517650"
        assert body["message"].startswith(f"Unsupported model for a {kind} job: {UNKNOWN_MODEL}")
    # One unknown sub-job refuses the whole job, and nothing is stored.
    mixed = _post(client, prefix, {"sub_job_configs": [training, {**sampling, "model_name": UNKNOWN_MODEL}]})
    assert mixed.status_code == 400
    assert client.get(prefix).json()["jobs"] == []


def test_a_deployment_of_a_model_the_server_does_not_serve_is_refused(client, prefix) -> None:
    deployment = {
        "idle_timeout_seconds": 0,
        "hardware": "H200",
        "sub_job_configs": [
            {
                "job_type": "sampling",
                "model_name": UNKNOWN_MODEL,
                "inference_config": {"deployment_class": "EVALUATION", "num_replicas": 1, "n_gpus": 1},
            }
        ],
    }
    response = _post(client, prefix, deployment)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "517650"
    assert response.json()["message"].startswith(f"Unsupported model for a model deployment: {UNKNOWN_MODEL}")


def test_every_model_the_server_lists_is_accepted(local_server, client, prefix, sampling) -> None:
    names = [m["name"] for m in client.get("/api/v2/cortex-training/models").json()["models"]]
    assert "Qwen/Qwen3-0.6B" in names
    for name in names:
        response = _post(client, prefix, {"sub_job_configs": [{**sampling, "model_name": name}]})
        assert response.status_code == 200, (name, response.text)


def test_the_models_a_server_is_started_with_are_the_ones_it_accepts(local_server_factory, sampling) -> None:
    server = local_server_factory(extra_args=["--model", "my-org/my-model"])
    with server.http() as client:
        listed = client.get("/api/v2/cortex-training/models").json()["models"]
        assert listed == [{"name": "my-org/my-model", "weights": "tiny"}]
        accepted = _post(
            client, server.prefix(), {"sub_job_configs": [{**sampling, "model_name": "my-org/my-model"}]}
        )
        assert accepted.status_code == 200, accepted.text
        refused = _post(client, server.prefix(), {"sub_job_configs": [sampling]})
        assert refused.status_code == 400
        assert refused.json()["code"] == "517650"

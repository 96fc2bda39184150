"""The client-side format check of `multiplex_job_id`, on every create path."""

from __future__ import annotations

import uuid

import pytest

from ct_core import errors
from ct_core.client import CortexTrainingClient
from ct_core.config.typed import SubJobConfig
from ct_core.config.validation import build_create_body, multiplex_job_id_problems, validate_create_body


def _body(training_multiplex=None, sampling_multiplex=None):
    training = {"optimizer": {"name": "AdamW"}, "max_seq_len": 8, "train_batch_size": 1, "n_gpus": 1}
    sampling = {"max_seq_len": 8, "n_gpus": 1}
    if training_multiplex is not None:
        training["multiplex_job_id"] = training_multiplex
    if sampling_multiplex is not None:
        sampling["multiplex_job_id"] = sampling_multiplex
    return {
        "sub_job_configs": [
            {"job_type": "training", "model_name": "m", "training_config": training},
            {"job_type": "sampling", "model_name": "m", "inference_config": sampling},
        ]
    }


def test_complete_ids_pass_and_are_sent_unchanged():
    body = _body("other-job:training:0", "other-job:log_prob:3")
    normalized = validate_create_body(body)
    assert normalized["sub_job_configs"][0]["training_config"]["multiplex_job_id"] == "other-job:training:0"
    assert normalized["sub_job_configs"][1]["inference_config"]["multiplex_job_id"] == "other-job:log_prob:3"
    assert validate_create_body(_body()) == _body()


def test_incomplete_ids_are_all_reported():
    with pytest.raises(errors.ValidationError) as caught:
        validate_create_body(_body("other-job", "other-job:log_probability:0"))
    problems = caught.value.problems
    assert len(problems) == 2
    assert problems[0].startswith(
        "sub_job_configs[0].training_config.multiplex_job_id must be a complete sub-job id "
        "{job_id}:{training|sampling|log_prob}:{index}"
    )
    assert problems[1].startswith("sub_job_configs[1].inference_config.multiplex_job_id must be")
    assert "'log_probability'" in problems[1]


@pytest.mark.parametrize("value", ["", "job:sampling", "job:sampling:first", 5, "job:sampling:0:0"])
def test_malformed_values(value):
    assert len(multiplex_job_id_problems(value, "x")) == 1


def test_a_sub_job_of_the_same_job_is_refused_when_the_job_is_known():
    assert multiplex_job_id_problems("j1:sampling:0", "x", own_job_id="j2") == []
    (problem,) = multiplex_job_id_problems("j1:sampling:0", "x", own_job_id="j1")
    assert "same job" in problem
    assert multiplex_job_id_problems(None, "x", own_job_id="j1") == []


def test_typed_path_checks_it_too():
    sub_job = SubJobConfig.sampling_job("m", max_seq_len=8, n_gpus=1, multiplex_job_id="not-an-id")
    body = build_create_body([sub_job])
    with pytest.raises(errors.ValidationError, match="multiplex_job_id must be a complete sub-job id"):
        validate_create_body(body)


def test_create_job_refuses_before_sending(local_server):
    schema = f"S_{uuid.uuid4().hex[:8].upper()}"
    with CortexTrainingClient(base_url=local_server.base_url, database="CT_TEST_DB", schema=schema) as client:
        with pytest.raises(errors.ValidationError, match="multiplex_job_id"):
            client.create_job_from_body(_body(sampling_multiplex="just-a-job-id"))
        # Nothing reached the server.
        assert client.list_jobs() == []

"""Checkpoint-id and sub-job-id helpers: unit cases plus one real job record."""

from __future__ import annotations

import uuid

import pytest

from ct_core import ids
from ct_core.client import CortexTrainingClient
from ct_core.config.typed import SubJobConfig

CP = "cp_0f8e2c3a-1b2c-4d5e-8f90-a1b2c3d4e5f6"


# --- checkpoint ids ------------------------------------------------------------------------------


def test_checkpoint_id_comes_from_the_stage_path_not_the_tag() -> None:
    result = {
        "stage_path": f"@DB.S.EXP/versions/run1/checkpoints/{CP}/model.safetensors",
        "checkpoint_tag": "global_step1",
        "checkpoint_path": "/mnt/job/ckpt/global_step1",
    }
    assert ids.checkpoint_id_from_save_result(result) == CP


def test_checkpoint_id_missing_is_an_error_pointing_to_the_list() -> None:
    with pytest.raises(ValueError, match="list_checkpoints"):
        ids.checkpoint_id_from_save_result({"stage_path": "@x/other/global_step1/", "checkpoint_tag": "t"})


def test_latest_checkpoint_reads_z_as_utc_and_filters_by_type() -> None:
    listed = [
        {"checkpoint_id": "cp_a", "checkpoint_type": "resumable", "created_at": "2026-07-20T18:00:00Z"},
        # 19:30+02:00 is 17:30 UTC: the oldest one, although its text sorts after the others.
        {"checkpoint_id": "cp_b", "checkpoint_type": "resumable", "created_at": "2026-07-20T19:30:00+02:00"},
        {"checkpoint_id": "cp_c", "checkpoint_type": "weights-only", "created_at": "2026-07-21T00:00:00Z"},
        {"checkpoint_id": "cp_d", "checkpoint_type": "resumable", "created_at": "2026-07-20T18:05:00Z"},
        {"checkpoint_id": "cp_e", "checkpoint_type": "resumable", "created_at": "not a time"},
    ]
    assert ids.latest_checkpoint(listed, "resumable")["checkpoint_id"] == "cp_d"
    assert ids.latest_checkpoint(listed, "Weights-Only")["checkpoint_id"] == "cp_c"
    assert ids.latest_checkpoint(listed)["checkpoint_id"] == "cp_c"
    assert ids.latest_checkpoint(listed, "other") is None
    assert ids.latest_checkpoint([]) is None


def test_latest_checkpoint_treats_a_time_without_offset_as_utc() -> None:
    listed = [
        {"checkpoint_id": "naive", "checkpoint_type": "resumable", "created_at": "2026-07-20T18:10:00"},
        {"checkpoint_id": "aware", "checkpoint_type": "resumable", "created_at": "2026-07-20T18:05:00Z"},
    ]
    assert ids.latest_checkpoint(listed)["checkpoint_id"] == "naive"


# --- sub-job ids ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("job_type", "index", "expected"),
    [
        ("training", 0, "b1fcb345:training:0"),
        ("sampling", 2, "b1fcb345:sampling:2"),
        ("log_probability", 0, "b1fcb345:log_prob:0"),
        ("log_prob", 1, "b1fcb345:log_prob:1"),
        ("JOB_TYPE_SAMPLING", 0, "b1fcb345:sampling:0"),
    ],
)
def test_format_sub_job_id(job_type: str, index: int, expected: str) -> None:
    assert ids.format_sub_job_id("b1fcb345", job_type, index) == expected
    parsed = ids.parse_sub_job_id(expected)
    assert str(parsed) == expected
    assert parsed.job_id == "b1fcb345" and parsed.index == index


@pytest.mark.parametrize(
    ("job_id", "job_type", "index", "message"),
    [
        ("", "training", 0, "job_id"),
        ("a:b", "training", 0, "job_id"),
        ("job", "deployment", 0, "unknown sub-job type"),
        ("job", "training", -1, "counts from 0"),
        ("job", "training", True, "counts from 0"),
    ],
)
def test_format_sub_job_id_rejects(job_id: str, job_type: str, index: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ids.format_sub_job_id(job_id, job_type, index)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("b1fcb345", "must have the form"),
        ("b1fcb345:training", "must have the form"),
        ("b1fcb345:training:0:1", "must have the form"),
        (":training:0", "empty job id"),
        ("b1fcb345:log_probability:0", "has type 'log_probability'"),
        ("b1fcb345:Training:0", "has type"),
        ("b1fcb345:training:-1", "non-negative integer"),
        ("b1fcb345:training:x", "non-negative integer"),
        ("b1fcb345:training:", "non-negative integer"),
        ("b1fcb345:training:\u0661", "non-negative integer"),  # an Arabic-Indic digit one
    ],
)
def test_parse_sub_job_id_rejects(value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ids.parse_sub_job_id(value)


def test_parse_sub_job_id_rejects_a_non_string() -> None:
    with pytest.raises(ValueError, match="must be a string"):
        ids.parse_sub_job_id(7)  # type: ignore[arg-type]


def test_find_sub_jobs_by_job_type_or_id_segment() -> None:
    record = {
        "job_id": "j",
        "sub_jobs": [
            {"sub_job_id": "j:training:0", "job_type": "training"},
            {"sub_job_id": "j:sampling:0", "job_type": "sampling"},
            {"sub_job_id": "j:sampling:1"},  # an entry without job_type: its id decides
            {"sub_job_id": "j:log_prob:0", "job_type": "log_probability"},
            "not an object",
            {"job_type": "something-new"},
        ],
    }
    assert [s["sub_job_id"] for s in ids.find_sub_jobs(record, "sampling")] == [
        "j:sampling:0",
        "j:sampling:1",
    ]
    assert [s["sub_job_id"] for s in ids.find_sub_jobs(record, "log_prob")] == ["j:log_prob:0"]
    assert [s["sub_job_id"] for s in ids.find_sub_jobs(record, "log_probability")] == ["j:log_prob:0"]
    assert ids.find_sub_jobs({"job_id": "j"}, "training") == []
    with pytest.raises(ValueError, match="unknown sub-job type"):
        ids.find_sub_jobs(record, "deployment")


def test_helpers_agree_with_a_real_job_record(local_server) -> None:
    schema = f"S_{uuid.uuid4().hex[:8].upper()}"
    with CortexTrainingClient(
        base_url=local_server.base_url, database="CT_TEST_DB", schema=schema, poll_interval=0.02
    ) as client:
        training = SubJobConfig.training_job(
            "Qwen/Qwen3-0.6B",
            optimizer={"name": "AdamW", "lr": 1e-4},
            max_seq_len=64,
            train_batch_size=1,
            n_gpus=1,
        )
        sampling = SubJobConfig.sampling_job("Qwen/Qwen3-0.6B", max_seq_len=64, n_gpus=1)
        job_id = client.create_job([training, sampling, sampling])
        try:
            record = client.get_job(job_id)
            found = ids.find_sub_jobs(record, "sampling")
            assert [s["sub_job_id"] for s in found] == [
                ids.format_sub_job_id(job_id, "sampling", 0),
                ids.format_sub_job_id(job_id, "sampling", 1),
            ]
            (trainer,) = ids.find_sub_jobs(record, "training")
            assert ids.parse_sub_job_id(trainer["sub_job_id"]) == ids.SubJobId(job_id, "training", 0)
        finally:
            client.cancel_job(job_id)

"""Client-side rules of generation with no server: prompt shapes, packing, the sampling window (BUG-19)."""

from __future__ import annotations

import numpy as np
import pytest

from ct_core import wire
from ct_core._generate import (
    build_logical_request,
    normalize_prompts,
    sampling_max_seq_len,
    tensor_prompts_enabled,
)


def _plain(prompts: list[object]) -> list[object]:
    return [p if isinstance(p, str) else p.tolist() for p in prompts]  # type: ignore[attr-defined]


def test_prompt_shapes() -> None:
    assert _plain(normalize_prompts([1, 2, 3])) == [[1, 2, 3]]
    assert _plain(normalize_prompts(np.array([1, 2], dtype=np.int64))) == [[1, 2]]
    assert _plain(normalize_prompts([[1, 2], [3]])) == [[1, 2], [3]]
    assert _plain(normalize_prompts(["a", [1], np.array([2, 3]), (4, 5)])) == ["a", [1], [2, 3], [4, 5]]
    with pytest.raises(TypeError):
        normalize_prompts([[2**70]])
    with pytest.raises(TypeError):
        normalize_prompts([b"bytes"])
    with pytest.raises(TypeError, match="wrap a single string"):
        normalize_prompts("hello")
    with pytest.raises(ValueError, match="non-empty"):
        normalize_prompts([])
    with pytest.raises(ValueError, match="empty"):
        normalize_prompts([[]])
    with pytest.raises(ValueError, match="1-D"):
        normalize_prompts([np.zeros((2, 2), dtype=np.int32)])
    with pytest.raises(TypeError, match="token ids"):
        normalize_prompts([[1.5]])
    # int32 when every id fits, int64 otherwise.
    assert normalize_prompts([[1, 2]])[0].dtype == np.int32
    assert normalize_prompts([[1, 2**40]])[0].dtype == np.int64


def test_packing_int32_then_int64_and_json_lists() -> None:
    logical = build_logical_request([[1, 2], [2**31], "s"], {"max_tokens": 3}, "k", False, tensors=True)
    assert logical["prompts"][0].dtype == np.int32
    assert logical["prompts"][1].dtype == np.int64
    assert logical == {**logical, "sampling_params": {"max_tokens": 3}, "routing_key": "k", "strict": False}
    frame = wire.dumps(logical)
    back = wire.loads(frame, backend="numpy")
    assert back["prompts"][0].tolist() == [1, 2] and back["prompts"][2] == "s"
    plain = build_logical_request([[1, 2]], None, None, None, tensors=False)
    assert plain == {"prompts": [[1, 2]]}
    with pytest.raises(ValueError, match="2 entries for 1 prompts"):
        build_logical_request([[1]], [{}, {}], None, None, tensors=True)
    with pytest.raises(ValueError, match="routing_key has 3 entries"):
        build_logical_request([[1]], None, ["a", "b", "c"], None, tensors=True)


@pytest.mark.parametrize(
    ("value", "enabled"), [("", True), ("0", True), ("1", False), ("TRUE", False), ("yes", False)]
)
def test_disable_env(monkeypatch: pytest.MonkeyPatch, value: str, enabled: bool) -> None:
    monkeypatch.setenv("CORTEX_TRAINING_DISABLE_TENSOR_PROMPTS", value)
    assert tensor_prompts_enabled() is enabled


def test_window_comes_from_the_sampling_sub_job() -> None:
    # BUG-19: a log-probability sub-job carrying an inference_config is listed first; it must not count.
    job = {
        "sub_jobs": [
            {
                "sub_job_id": "j:log_probability:0",
                "job_type": "log_probability",
                "inference_config": {"max_seq_len": 8},
            },
            {
                "sub_job_id": "j:sampling:0",
                "job_type": "sampling",
                "inference_config": {"max_seq_len": 2048.0},
            },
            {"sub_job_id": "j:sampling:1", "job_type": "SAMPLING", "inference_config": {"max_seq_len": 16}},
        ]
    }
    assert sampling_max_seq_len(job, None) == 2048
    assert sampling_max_seq_len(job, "j:sampling:1") == 16
    assert sampling_max_seq_len(job, "j:other") is None
    assert sampling_max_seq_len({"sub_jobs": []}, None) is None


def test_remembered_windows_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # DP-27 / BUG-17: a client that samples from many jobs keeps only the most recent windows.
    from ct_core import CortexTrainingClient, _generate

    monkeypatch.setattr(_generate, "MAX_CACHED_WINDOWS", 2)
    client = CortexTrainingClient(base_url="http://127.0.0.1:9", database="D", schema="S")
    looked_up: list[str] = []

    def get_job(job_id: str) -> dict[str, object]:
        looked_up.append(job_id)
        return {"sub_jobs": [{"job_type": "sampling", "inference_config": {"max_seq_len": 32}}]}

    client.get_job = get_job  # type: ignore[method-assign]
    for job_id in ("a", "b", "a", "c", "a", "b"):
        assert client._sampling_window(job_id, None) == 32
    # "a" stays (used again before "c" arrived); "b" was the least recent one when "c" came in.
    assert looked_up == ["a", "b", "c", "b"]
    client.close()

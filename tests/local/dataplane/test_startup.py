"""Sub-job start-up: lazy model imports, create-time checks, and a backend that cannot start."""

from __future__ import annotations

import subprocess
import sys

from ct_testing import wait_until


def test_serving_modules_do_not_import_torch() -> None:
    code = (
        "import sys, ct_local.cli, ct_local.runtime, ct_local.dataplane.training_plane, "
        "ct_local.app, ct_local.http.control_plane; "
        "print('torch' in sys.modules or 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_create_refuses_what_the_backend_cannot_run(dp, tmp_path) -> None:
    def create(training_config: dict, **sub_job) -> dict:
        body = {
            "sub_job_configs": [
                {
                    "job_type": "training",
                    "model_name": "Qwen/Qwen3-0.6B",
                    "training_config": training_config,
                    **sub_job,
                }
            ]
        }
        response = dp.http.post(dp.prefix, json=body)
        assert response.status_code == 400, response.text
        return response.json()

    assert "optimizer 'lion' is not supported" in create({"optimizer": {"name": "Lion"}})["message"]
    assert (
        "name and optimizer.type disagree"
        in create({"optimizer": {"name": "AdamW", "type": "SGD"}})["message"]
    )
    stage = create({}, source_checkpoint_info={"external_stage_path": "@DB.S.STAGE/model"})
    assert "names a Snowflake stage" in stage["message"]
    empty = create({}, source_checkpoint_info={"external_stage_path": str(tmp_path)})
    assert "must hold config.json and *.safetensors" in empty["message"]
    both = create({}, source_checkpoint_info={"external_stage_path": str(tmp_path), "checkpoint_id": "x"})
    assert "cannot be combined" in both["message"]
    unknown = dp.http.post(
        dp.prefix,
        json={
            "sub_job_configs": [
                {
                    "job_type": "training",
                    "model_name": "Qwen/Qwen3-0.6B",
                    "source_checkpoint_info": {"checkpoint_id": "cp_1", "source_job_id": "nope"},
                }
            ]
        },
    )
    assert unknown.status_code == 404
    assert unknown.json()["code"] == "517601"
    # A raw body's DeepSpeed-style optimizer is canonicalized by the server, not refused.
    ok = dp.http.post(
        dp.prefix,
        json={
            "sub_job_configs": [
                {
                    "job_type": "training",
                    "model_name": "Qwen/Qwen3-0.6B",
                    "training_config": {
                        "optimizer": {"type": "AdamW", "params": {"lr": 0.001, "beta1": 0.8}}
                    },
                }
            ]
        },
    )
    assert ok.status_code == 200, ok.text


def test_a_sub_job_that_cannot_load_its_weights_fails_the_job(dp, tmp_path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text("{not json", encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"\x00" * 16)
    dp.create({}, source_checkpoint_info={"external_stage_path": str(folder)})
    record = wait_until(
        lambda: (record := dp.http.get(dp.url).json())["status"] == "failed" and record,
        interval=0.05,
        message="the job never failed",
    )
    assert record["reason"] == "initialization_failed"
    assert "failed to start" in record["reason_details"]

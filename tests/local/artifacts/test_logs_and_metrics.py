"""Execution logs, system and training metrics, and the artifacts ct_local produces, end to end."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest
from ct_testing import wait_until

from ct_core import CortexTrainingClient
from ct_core.downloads.artifacts import ArtifactError, checked_listing, run_uri
from ct_core.errors import NoChunksError


def test_execution_logs_prefer_logs_root_and_are_private(tree, tmp_path) -> None:
    sub = tree.sub()
    tree.put("_logs", sub, "execution.jsonl", b'{"message": "primary"}\n', raw=True)
    tree.put("checkpoints/_logs", sub, "execution.jsonl", b'{"message": "older copy"}\n', raw=True)
    tree.put("checkpoints/_logs", sub, "extra.log", b"only here\n", raw=True)
    progress: list[str] = []
    result = tree.client.download_execution_logs(tree.job_id, tmp_path, progress=progress.append)
    by_name = {entry["filename"]: entry for entry in result}
    assert set(by_name) == {"execution.jsonl", "extra.log"}
    saved = Path(by_name["execution.jsonl"]["saved_path"])
    assert saved == tmp_path / sub / "execution.jsonl"
    assert saved.read_text() == '{"message": "primary"}\n'
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert by_name["execution.jsonl"]["artifact_uri"].endswith(f"/_logs/{sub}/execution.jsonl")
    assert by_name["execution.jsonl"]["bytes"] == saved.stat().st_size
    assert progress == [
        f"execution logs: [##########----------] 1/2 {sub}/execution.jsonl\n",
        f"execution logs: [####################] 2/2 {sub}/extra.log\n",
    ]
    assert not list((tmp_path / sub).glob(".execution-log-*"))

    again = tree.client.download_execution_logs(tree.job_id, tmp_path, resume=True)
    assert all(entry["unchanged"] for entry in again)
    tree.put("_logs", sub, "execution.jsonl", b'{"message": "grown"}\n{"message": "more"}\n', raw=True)
    changed = {
        e["filename"]: e for e in tree.client.download_execution_logs(tree.job_id, tmp_path, resume=True)
    }
    assert changed["execution.jsonl"]["unchanged"] is False and changed["extra.log"]["unchanged"] is True
    assert saved.read_text().endswith('"more"}\n')


def test_execution_log_failure_after_a_saved_file_says_progress_was_saved(tree, tmp_path) -> None:
    from ct_core.errors import APIError

    tree.put("_logs", tree.sub(), "a.jsonl", b"first\n", raw=True)
    tree.put("_logs", tree.sub(), "b.jsonl", b"second\n", raw=True)
    tree.server.set_faults(
        {"path": "/_artifacts/.*/b\\.jsonl$", "action": "respond", "status": 403, "count": None}
    )
    earlier = tmp_path / tree.sub() / "b.jsonl"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("earlier copy\n")
    with pytest.raises(APIError) as caught:
        tree.client.download_execution_logs(tree.job_id, tmp_path)
    assert caught.value.download_progress_saved is True  # type: ignore[attr-defined]
    assert (tmp_path / tree.sub() / "a.jsonl").read_text() == "first\n"
    # The failed file left the earlier copy as it was, and no staging folder behind.
    assert earlier.read_text() == "earlier copy\n"
    assert not list(earlier.parent.glob(".execution-log-*"))
    # When the first file already fails, nothing was saved and the error makes no such claim.
    tree.server.set_faults({"path": "/_artifacts/.*/a\\.jsonl$", "action": "respond", "status": 403})
    with pytest.raises(APIError) as again:
        tree.client.download_execution_logs(tree.job_id, tmp_path / "other")
    assert not getattr(again.value, "download_progress_saved", False)


def test_fetch_execution_logs_decodes_with_replacement(tree) -> None:
    tree.put("_logs", tree.sub(), "execution.jsonl", b"ok \xff bytes\n", raw=True)
    [entry] = tree.client.fetch_execution_logs(tree.job_id)
    assert entry["content"] == "ok \ufffd bytes\n"
    assert set(entry) == {"sub_job_id", "filename", "artifact_uri", "content"}


def test_execution_logs_for_an_unknown_sub_job(tree, tmp_path) -> None:
    tree.put("_logs", tree.sub(), "execution.jsonl", b"x\n", raw=True)
    with pytest.raises(NoChunksError) as caught:
        tree.client.download_execution_logs(tree.job_id, tmp_path, sub_job_ids=[tree.sub("sampling:0")])
    assert caught.value.available == [tree.sub()]


def test_metrics_note_sub_jobs_with_stdout_but_no_metrics(tree, tmp_path) -> None:
    tree.console(tree.sub(), 1, "console only\n")
    row = {"kind": "system", "record_version": 3, "sub_job_id": tree.sub("sampling:0"), "cpu_count": 2}
    tree.put(
        "_metrics", tree.sub("sampling:0"), "gpu.20260101-000001.a.gz", (json.dumps(row) + "\n").encode()
    )
    tree.console(tree.sub("sampling:0"), 1, "sampling console\n")
    tree.server.force_status(tree.job_id, "failed", "boom")
    result = {e["sub_job_id"]: e for e in tree.client.download_metrics(tree.job_id, tmp_path)}
    assert json.loads(Path(result[tree.sub("sampling:0")]["saved_path"]).read_text()) == row
    missing = result[tree.sub()]
    assert missing["chunk_count"] == 0 and missing["saved_path"] is None
    assert missing["first_artifact_uri"] is None and missing["last_artifact_uri"] is None
    assert "no GPU metrics were saved" in missing["warnings"][0]
    # A sub-job with stdout only may be named without an error; one with neither may not.
    named = tree.client.download_metrics(tree.job_id, tmp_path, sub_job_ids=[tree.sub()])
    assert [e["sub_job_id"] for e in named] == [tree.sub()]
    with pytest.raises(NoChunksError) as caught:
        tree.client.download_metrics(tree.job_id, tmp_path, sub_job_ids=[tree.sub("sampling:7")])
    # Only that sub-job's folders were listed; the roots are then listed whole to name the others.
    assert caught.value.sub_job_ids == [tree.sub("sampling:7")]
    assert caught.value.available == sorted([tree.sub(), tree.sub("sampling:0")])


def test_training_metrics_have_their_own_file(tree, tmp_path) -> None:
    sub = tree.sub()
    gpu = {"record_version": 2, "sub_job_id": sub, "gpu_util_pct": None}
    training = {
        "kind": "training",
        "record_version": 2,
        "op": "step",
        "step": 1,
        "metrics": {"global_steps": 1},
    }
    tree.put("_metrics", sub, "gpu.20260101-000001.a.gz", (json.dumps(gpu) + "\n").encode())
    tree.put("_metrics", sub, "training.20260101-000001.b.gz", (json.dumps(training) + "\n").encode())
    [metrics] = tree.client.download_metrics(tree.job_id, tmp_path, stale_after_seconds=None)
    [rows] = tree.client.download_training_metrics(tree.job_id, tmp_path, stale_after_seconds=None)
    assert json.loads(Path(metrics["saved_path"]).read_text()) == gpu
    assert json.loads(Path(rows["saved_path"]).read_text()) == training
    assert (tmp_path / sub / ".training.jsonl.manifest.json").exists()
    # A named sub-job without training rows is left out rather than raising.
    assert (
        tree.client.download_training_metrics(
            tree.job_id, tmp_path, sub_job_ids=[tree.sub("sampling:0")], stale_after_seconds=None
        )
        == []
    )


@pytest.mark.parametrize(
    "name, message",
    [
        ("/versions/OTHER/_stdout/a/b.gz", "unexpected path"),
        ("/versions/RUN/_stdout/../x.gz", "unsafe"),
        ("/versions/RUN//etc/passwd", "unsafe"),
        ("/versions/RUN/_stdout/a\\b.gz", "unsafe"),
        ("/versions/RUN/_metrics/a/b.gz", "outside the requested root"),
    ],
)
def test_listing_names_are_checked(name: str, message: str) -> None:
    with pytest.raises(ArtifactError, match=message):
        checked_listing([(name, 1, None)], "RUN", "_stdout")


def test_listing_is_deduplicated_and_sorted() -> None:
    rows = [("/versions/RUN/_stdout/s/b.gz", 2, None), ("/versions/RUN/_stdout/s/a.gz", 1, "m")] * 2
    assert [e.path for e in checked_listing(rows, "RUN", "_stdout")] == ["_stdout/s/a.gz", "_stdout/s/b.gz"]


def test_run_uri_checks_the_experiment_run_answer() -> None:
    assert run_uri({"experiment_name": "DB.S.EXP", "experiment_run_name": "RUN_1"}) == (
        "snow://experiment/DB.S.EXP/versions/RUN_1/"
    )
    with pytest.raises(ArtifactError, match="missing field: experiment_run_name"):
        run_uri({"experiment_name": "DB.S.EXP"})
    with pytest.raises(ArtifactError, match="invalid experiment_name"):
        run_uri({"experiment_name": "DB/../x", "experiment_run_name": "R"})


def test_artifact_routes_refuse_traversal(tree) -> None:
    run = tree.client.get_experiment_run(tree.job_id)
    base = f"{tree.server.base_url}/_artifacts/{run['experiment_name']}/{run['experiment_run_name']}"
    assert httpx.get(base, params={"prefix": "../"}).status_code == 400
    assert httpx.get(f"{base}/_stdout/..%2F..%2Fsecret").status_code == 404


@pytest.mark.slow
def test_ct_local_produces_console_metrics_and_training_rows(
    module_local_server_factory: Any, tmp_path
) -> None:
    """A real job: the server's uploader stages what its sub-job did, and the SDK reads it back."""
    from ct_core.data.payloads import serialize_forward_backward_args

    server = module_local_server_factory(settings={"artifact_upload_interval_s": 0.2})
    with CortexTrainingClient(base_url=server.base_url, database="DB", schema="PRODUCED") as client:
        body = {
            "sub_job_configs": [
                {
                    "job_type": "training",
                    "model_name": "Qwen/Qwen3-0.6B",
                    "training_config": {"n_gpus": 1, "optimizer": {"name": "AdamW", "lr": 1e-3}},
                }
            ]
        }
        job_id = client.create_job_from_body(body)["job_id"]
        client.wait_for_job(job_id)
        import torch

        ids = torch.tensor([list(b"artifacts are staged per sub-job")] * 2)
        labels = torch.roll(ids, -1, dims=1)
        labels[:, -1] = -100
        frame = serialize_forward_backward_args((), {"input_ids": ids, "labels": labels})
        for _ in range(2):
            client.poll_request(job_id, client.forward_backward(job_id, frame))
            client.poll_request(job_id, client.forward_backward(job_id, frame))
            client.poll_request(job_id, client.step(job_id))
        sub = f"{job_id}:training:0"
        rows: list[dict[str, Any]] = []

        def six_rows() -> list[dict[str, Any]] | None:
            nonlocal rows
            found = client.download_training_metrics(job_id, tmp_path, resume=True, stale_after_seconds=None)
            if found:
                text = (tmp_path / sub / "training.jsonl").read_text()
                rows = [json.loads(line) for line in text.splitlines()]
            return rows if len(rows) >= 6 else None

        rows = wait_until(six_rows, timeout=60, interval=0.2, message=lambda: f"rows so far: {rows}")
        assert [(r["op"], r["step"], r["call"]) for r in rows] == [
            ("fwd_bwd", None, 1),
            ("fwd_bwd", None, 2),
            ("step", 1, None),
            ("fwd_bwd", 2, 1),
            ("fwd_bwd", 2, 2),
            ("step", 2, None),
        ]
        assert [r["seq"] for r in rows] == list(range(6))
        assert all(r["kind"] == "training" and r["record_version"] == 2 for r in rows)
        assert isinstance(rows[0]["metrics"]["avg_loss"], float)
        assert "job_id" not in rows[0]["metrics"]
        assert rows[2]["metrics"]["global_steps"] == 1

        [metrics] = client.download_metrics(job_id, tmp_path, stale_after_seconds=None)
        system = [json.loads(line) for line in Path(metrics["saved_path"]).read_text().splitlines()]
        assert system and all(r["kind"] == "system" and r["record_version"] == 3 for r in system)
        assert system[0]["cpu_count"] >= 1 and system[0]["mem_total_bytes"] > 0

        [stdout] = client.download_stdout_logs(job_id, tmp_path, stale_after_seconds=None)
        assert "running" in Path(stdout["saved_path"]).read_text()
        [execution] = client.download_execution_logs(job_id, tmp_path)
        first = json.loads(Path(execution["saved_path"]).read_text().splitlines()[0])
        assert first["sub_job_id"] == sub and first["level"] == "INFO"

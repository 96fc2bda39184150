"""`ct download-checkpoint` end to end: the real console script against ct_local."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import httpx


def _job_with_checkpoint(local_server: Any, database: str) -> str:
    prefix = local_server.prefix(database=database)
    body = {"sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}]}
    job_id = httpx.post(prefix, json=body, timeout=30).raise_for_status().json()["job_id"]
    local_server.add_checkpoint(
        job_id, checkpoint_id="cp_cli", files={"model.safetensors": "w", "config.json": '{"b": 2}'}
    )
    return job_id


def test_download_checkpoint_prints_a_summary_and_progress(ct, server_args, local_server, tmp_path) -> None:
    job_id = _job_with_checkpoint(local_server, server_args[-1])
    folder = Path(local_server.state_dir) / "checkpoints" / job_id / "cp_cli"
    weights = os.urandom(1_500_000)
    (folder / "model.safetensors").write_bytes(weights)
    out = tmp_path / "ckpt"
    result = ct(*server_args, "download-checkpoint", job_id, "cp_cli", "--output-dir", str(out))
    assert result.returncode == 0, result
    summary = result.json
    assert summary["checkpoint_id"] == "cp_cli" and summary["job_id"] == job_id
    assert {f["filename"] for f in summary["files"]} == {"config.json", "model.safetensors"}
    assert (out / "model.safetensors").read_bytes() == weights
    # Progress is on stderr only; stdout is exactly one JSON document.
    assert "files 2/2" in result.stderr
    json.loads(result.stdout)


def test_include_and_missing_checkpoint(ct, server_args, local_server, tmp_path) -> None:
    job_id = _job_with_checkpoint(local_server, server_args[-1])
    out = tmp_path / "only-json"
    result = ct(
        *server_args,
        "--compact",
        "download-checkpoint",
        job_id,
        "cp_cli",
        "--output-dir",
        str(out),
        "--include",
        "*.json",
        "--durable",
    )
    assert result.returncode == 0, result
    assert [f["filename"] for f in result.json["files"]] == ["config.json"]
    # The download records live in the hidden .ct-download folder beside the files.
    assert sorted(p.name for p in out.iterdir() if p.name != ".ct-download") == ["config.json"]

    missing = ct(*server_args, "download-checkpoint", job_id, "cp_nope", "--output-dir", str(out))
    assert missing.returncode == 1
    assert missing.stdout == ""
    assert "error:" in missing.stderr and "cp_nope" in missing.stderr


def _job_with_shards(local_server: Any, database: str, count: int = 3) -> tuple[str, dict[str, bytes]]:
    """A job with checkpoint cp_shards: ``count`` random files of a few hundred KB."""
    prefix = local_server.prefix(database=database)
    body = {"sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}]}
    job_id = httpx.post(prefix, json=body, timeout=30).raise_for_status().json()["job_id"]
    names = [f"model-{n:05d}-of-{count:05d}.safetensors" for n in range(1, count + 1)]
    local_server.add_checkpoint(job_id, checkpoint_id="cp_shards", files=dict.fromkeys(names, "x"))
    folder = Path(local_server.state_dir) / "checkpoints" / job_id / "cp_shards"
    blobs = {name: os.urandom(300_000 + n) for n, name in enumerate(names)}
    for name, data in blobs.items():
        (folder / name).write_bytes(data)
    return job_id, blobs


def test_workers_below_one_is_a_usage_error_before_anything_is_fetched(
    ct, server_args, local_server, tmp_path
) -> None:
    job_id, _ = _job_with_shards(local_server, server_args[-1])
    out = tmp_path / "never"
    for value in ("0", "-3"):
        result = ct(
            *server_args,
            "download-checkpoint",
            job_id,
            "cp_shards",
            "--output-dir",
            str(out),
            f"--workers={value}",
        )
        assert result.returncode == 2, result
        assert result.stdout == ""
        assert f"--workers must be at least 1 (files fetched at once), got {value}" in result.stderr
    assert not out.exists()
    not_a_number = ct(
        *server_args, "download-checkpoint", job_id, "cp_shards", "--output-dir", str(out), "--workers", "two"
    )
    assert not_a_number.returncode == 2 and not out.exists()


def test_workers_fetches_every_file_of_a_sharded_checkpoint(ct, server_args, local_server, tmp_path) -> None:
    job_id, blobs = _job_with_shards(local_server, server_args[-1])
    out = tmp_path / "shards"
    args = (*server_args, "download-checkpoint", job_id, "cp_shards", "--output-dir", str(out))
    result = ct(*args, "--workers", "3")
    assert result.returncode == 0, result
    assert [f["filename"] for f in result.json["files"]] == sorted(blobs)
    assert all((out / name).read_bytes() == data for name, data in blobs.items())
    assert not list(out.glob("*.partial"))
    assert "files 3/3" in result.stderr
    # One worker: the same files, already in place this time.
    again = ct(*args, "--workers", "1")
    assert again.returncode == 0, again
    assert all(f["already_present"] for f in again.json["files"])


def test_workers_reaches_the_sdk(server_args, local_server, tmp_path, ct_home, monkeypatch) -> None:
    """In-process, so the SDK's own download function can be watched while it runs for real."""
    import ct_core.downloads.checkpoint as checkpoint
    from ct_cli.main import main

    job_id, blobs = _job_with_shards(local_server, server_args[-1])
    real = checkpoint.download_checkpoint
    asked: list[int | None] = []

    def watched(*args: Any, **kwargs: Any) -> dict[str, Any]:
        asked.append(kwargs.get("workers"))
        return real(*args, **kwargs)

    monkeypatch.setattr(checkpoint, "download_checkpoint", watched)
    for flag, out in ((["--workers", "2"], tmp_path / "two"), ([], tmp_path / "default")):
        stdout, stderr = io.StringIO(), io.StringIO()
        argv = [*server_args, "download-checkpoint", job_id, "cp_shards", "--output-dir", str(out), *flag]
        assert main(argv, stdout=stdout, stderr=stderr, stdin=io.StringIO()) == 0, stderr.getvalue()
        assert all((out / name).read_bytes() == data for name, data in blobs.items())
    # Without the option the SDK picks its own default (docs/checkpoint-download.md).
    assert asked == [2, None]


def _stage_run(local_server: Any, database: str) -> tuple[str, Path]:
    """A job on the session server and its run folder, with two console chunks and one metrics row."""
    import gzip

    from ct_local.http.artifacts import run_root

    prefix = local_server.prefix(database=database, schema="ARTIFACTS")
    body = {"sub_job_configs": [{"job_type": "training", "model_name": "Qwen/Qwen3-0.6B"}]}
    job_id = httpx.post(prefix, json=body, timeout=30).raise_for_status().json()["job_id"]
    run = httpx.get(f"{prefix}/{job_id}/experiment-run", timeout=30).raise_for_status().json()
    root = run_root(Path(local_server.state_dir), run["experiment_name"], run["experiment_run_name"])
    sub = f"{job_id}:training:9"
    for index, text in enumerate(["hello\n", "world\n"]):
        chunk = root / "_stdout" / sub / f"console.20260101-00000{index}.c{index}.gz"
        chunk.parent.mkdir(parents=True, exist_ok=True)
        chunk.write_bytes(gzip.compress(text.encode()))
    metrics = root / "_metrics" / sub / "gpu.20260101-000000.m.gz"
    metrics.parent.mkdir(parents=True, exist_ok=True)
    metrics.write_bytes(gzip.compress(b'{"kind": "system", "record_version": 3}\n'))
    (root / "_logs" / sub).mkdir(parents=True, exist_ok=True)
    (root / "_logs" / sub / "execution.jsonl").write_text('{"message": "x"}\n')
    return job_id, root


def test_download_log_and_metrics(ct, local_server, tmp_path) -> None:
    args = ["--base-url", local_server.base_url, "--database", "CT_CLI_DB", "--schema", "ARTIFACTS"]
    job_id, _ = _stage_run(local_server, "CT_CLI_DB")
    sub = f"{job_id}:training:9"
    # The session server stages the real sub-job's console too: name the staged one.
    stdout_run = ct(
        *args, "download-log", job_id, "--log-type", "stdout", "--output-dir", str(tmp_path), "--sub-job", sub
    )
    assert stdout_run.returncode == 0, stdout_run
    [entry] = stdout_run.json["logs"]
    assert Path(entry["saved_path"]).read_text() == "hello\nworld\n"
    # stderr is not a terminal here: one final line per sub-job, no bar redraws.
    assert f"stdout: [####################] 2/2 {sub}" in stdout_run.stderr
    assert "0/2" not in stdout_run.stderr

    execution = ct(*args, "download-log", job_id, "--output-dir", str(tmp_path), "--sub-job", sub)
    assert execution.returncode == 0, execution
    assert [e["filename"] for e in execution.json["logs"]] == ["execution.jsonl"]

    metrics = ct(
        *args, "download-metrics", job_id, "--output-dir", str(tmp_path), "--resume", "--sub-job", sub
    )
    assert metrics.returncode == 0, metrics
    assert metrics.json["training_metrics"] == []
    assert [e["sub_job_id"] for e in metrics.json["metrics"]] == [sub]
    assert (tmp_path / sub / "gpu.jsonl").read_text() == '{"kind": "system", "record_version": 3}\n'

    missing = ct(*args, "download-log", job_id, "--log-type", "stdout", "--sub-job", f"{job_id}:sampling:0")
    assert missing.returncode == 1 and "error:" in missing.stderr and sub in missing.stderr


def test_download_log_strict_and_sub_job_id(ct, local_server, tmp_path) -> None:
    args = ["--base-url", local_server.base_url, "--database", "CT_CLI_STRICT", "--schema", "ARTIFACTS"]
    job_id, root = _stage_run(local_server, "CT_CLI_STRICT")
    sub = f"{job_id}:training:9"
    (root / "_stdout" / sub / "console.20260101-000005.bad.gz").write_bytes(b"not gzip at all")
    command = ["download-log", job_id, "--log-type", "stdout", "--sub-job-id", sub]
    # Without --strict the damaged chunk is skipped and listed; with it the command fails.
    lenient = ct(*args, *command, "--output-dir", str(tmp_path / "lenient"))
    assert lenient.returncode == 0, lenient
    [entry] = lenient.json["logs"]
    assert Path(entry["saved_path"]).read_text() == "hello\nworld\n"
    assert [uri.rsplit("/", 1)[-1] for uri in entry["skipped_chunks"]] == ["console.20260101-000005.bad.gz"]
    strict = ct(*args, *command, "--strict", "--output-dir", str(tmp_path / "strict"))
    assert strict.returncode == 1 and strict.stdout == ""
    assert "error:" in strict.stderr and "could not be read" in strict.stderr


def test_plot_writes_a_png_from_the_downloaded_metrics(ct, local_server, tmp_path) -> None:
    import gzip

    args = ["--base-url", local_server.base_url, "--database", "CT_CLI_DB", "--schema", "ARTIFACTS"]
    job_id, root = _stage_run(local_server, "CT_CLI_DB")
    sub = f"{job_id}:training:9"
    rows = [
        {"kind": "training", "op": "fwd_bwd", "step": None, "metrics": {"avg_loss": 3.0}},
        {"kind": "training", "op": "fwd_bwd", "step": None, "metrics": {"avg_loss": 2.0}},
        {"kind": "training", "op": "step", "step": 1, "metrics": {"global_steps": 1, "last_lr": 0.001}},
        {"kind": "training", "op": "fwd_bwd", "step": 2, "metrics": {"avg_loss": 1.5}},
        {"kind": "training", "op": "step", "step": 2, "metrics": {"global_steps": 2, "last_lr": 0.0005}},
    ]
    chunk = root / "_metrics" / sub / "training.20260101-000000.t.gz"
    chunk.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    system = {
        "kind": "system",
        "sub_job_id": sub,
        "sample_ts": "2026-01-01T00:00:01.123456789Z",
        "cpu_util_pct": 40,
    }
    later = root / "_metrics" / sub / "gpu.20260101-000001.n.gz"
    later.write_bytes(gzip.compress((json.dumps(system) + "\n").encode()))
    target = tmp_path / "plots" / "job.png"
    result = ct(*args, "plot", job_id, "--output", str(target), "--data-dir", str(tmp_path / "data"))
    assert result.returncode == 0, result
    assert result.json["steps"] == 2 and result.json["utilisation_samples"] >= 1
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_read_series_means_each_steps_calls(tmp_path) -> None:
    from ct_cli.commands.plot import read_series

    training = tmp_path / "training.jsonl"
    training.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"kind": "training", "op": "fwd_bwd", "metrics": {"avg_loss": 4.0}},
                {"kind": "training", "op": "fwd_bwd", "metrics": {"avg_loss": 2.0}},
                {"kind": "training", "op": "step", "step": 5, "metrics": {"last_lr": 0.1}},
                {"kind": "other"},
            ]
        )
        + "\n{torn"
    )
    series = read_series([training], [])
    assert (series.steps, series.loss, series.lr) == ([5], [3.0], [0.1])


class _Terminal:
    """A stderr that says it is a terminal and keeps what was written."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.text = ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        return None


def test_status_line_redraws_on_a_terminal_and_writes_final_lines_otherwise() -> None:
    from ct_cli import output
    from ct_cli.commands.download_logs import StatusLine

    calls = ["stdout: [----] 0/2 S", "stdout: [##--] 1/2 S", "stdout: [####] 2/2 S", "\n"]
    calls += ["stdout: no new chunks for T\n"]
    for tty in (True, False):
        stream = _Terminal(tty)
        with output.using(output.Streams(stderr=stream)):  # type: ignore[arg-type]
            status = StatusLine()
            for text in calls:
                status(text)
        if tty:
            # One line redrawn in place (carriage return + clear), ended once per sub-job.
            assert stream.text.count("\n") == 2 and stream.text.count("\r\x1b[2K") == 5
            assert stream.text.endswith("\r\x1b[2Kstdout: no new chunks for T\n")
        else:
            assert stream.text == "stdout: [####] 2/2 S\nstdout: no new chunks for T\n"


def test_plot_keeps_the_step_axis_of_the_loss_panel() -> None:
    from datetime import UTC, datetime

    from ct_cli.commands.plot import Series, build_figure

    series = Series(steps=[1, 2, 3], loss=[3.0, 2.0, 1.0], lr_steps=[1, 2, 3], lr=[0.1, 0.05, 0.01])
    series.cpu["a"] = [(datetime(2026, 1, 1, 0, 0, s, tzinfo=UTC), 10.0 * s) for s in range(1, 4)]
    figure = build_figure(series, "job")
    try:
        figure.canvas.draw()
        loss_axes, util_axes = figure.axes[0], figure.axes[1]
        assert loss_axes.get_xlabel() == "step"
        step_labels = [t.get_text() for t in loss_axes.get_xticklabels() if t.get_visible() and t.get_text()]
        assert step_labels, "the loss panel shows no step numbers"
        time_labels = [t.get_text() for t in util_axes.get_xticklabels() if t.get_visible() and t.get_text()]
        assert time_labels and util_axes.get_xlabel() == "time (UTC)"
    finally:
        import matplotlib.pyplot as plt

        plt.close(figure)

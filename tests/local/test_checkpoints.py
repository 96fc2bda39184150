"""Checkpoint metadata routes: list, export with signed download links, delete."""

from __future__ import annotations

import httpx


def test_list_export_download_delete(local_server, client, prefix, create, training) -> None:
    job_id = create(client, prefix, training)
    assert client.get(f"{prefix}/{job_id}/checkpoints").json() == {"checkpoints": []}
    local_server.add_checkpoint(
        job_id,
        checkpoint_id="cp_a",
        global_steps=12,
        avg_loss=0.83,
        checkpoint_type="weights-only",
        files={"model.safetensors": "weights", "config.json": "{}"},
    )
    listed = client.get(f"{prefix}/{job_id}/checkpoints").json()["checkpoints"]
    assert len(listed) == 1
    entry = listed[0]
    assert {k: entry[k] for k in ("checkpoint_id", "global_steps", "avg_loss", "checkpoint_type")} == {
        "checkpoint_id": "cp_a",
        "global_steps": 12,
        "avg_loss": 0.83,
        "checkpoint_type": "weights-only",
    }
    assert entry["created_at"].endswith("Z")

    exported = client.post(f"{prefix}/{job_id}/checkpoints/cp_a:export").json()
    assert exported["checkpoint_id"] == "cp_a"
    assert exported["expires_at"].endswith("Z")
    files = {f["filename"]: f for f in exported["files"]}
    assert set(files) == {"model.safetensors", "config.json"}
    assert files["model.safetensors"]["size_bytes"] == len("weights")
    # The links are presigned: no Authorization header needed.
    download = httpx.get(files["model.safetensors"]["url"])
    assert download.status_code == 200
    assert download.content == b"weights"
    ranged = httpx.get(files["model.safetensors"]["url"], headers={"Range": "bytes=2-"})
    assert ranged.status_code == 206 and ranged.content == b"ights"
    forged = httpx.get(files["model.safetensors"]["url"].replace("sig=", "sig=0"))
    assert forged.status_code == 403

    assert client.delete(f"{prefix}/{job_id}/checkpoints/cp_a").status_code == 204
    assert client.get(f"{prefix}/{job_id}/checkpoints").json() == {"checkpoints": []}
    assert httpx.get(files["model.safetensors"]["url"]).status_code == 404
    # A missing checkpoint is not success.
    again = client.delete(f"{prefix}/{job_id}/checkpoints/cp_a")
    assert again.status_code == 404
    assert again.json()["code"] == "517601"
    assert client.post(f"{prefix}/{job_id}/checkpoints/cp_a:export").status_code == 404

"""The local server lists the models of the model catalog (the catalog is the source of truth)."""

from __future__ import annotations

from ct_core.catalog import model_names
from ct_local.settings import BUILTIN_MODELS, ServerSettings


def test_models_route_lists_the_catalog(local_server):
    with local_server.http() as http:
        answer = http.get("/api/v2/cortex-training/models")
    assert answer.status_code == 200
    listed = [entry["name"] for entry in answer.json()["models"]]
    assert listed == model_names()
    assert "Qwen/Qwen3-1.7B" in listed


def test_settings_fall_back_to_builtin_models_without_a_catalog(monkeypatch, tmp_path):
    monkeypatch.setenv("CT_MODEL_CATALOG", str(tmp_path / "nowhere"))
    assert ServerSettings().models == BUILTIN_MODELS

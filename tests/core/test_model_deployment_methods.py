"""The model-deployment methods under their contract names on the client itself, over ct_local.

`client.create_model_deployment(spec)`, `client.wait_for_model_deployment(d)`, ... forward to the
methods the ct-model-deployment plugin gives through the `ct_model_deployments` hook, the same ones
`client.model_deployments` gives. Without the plugin loaded each says which distribution it needs
and why it is missing.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from ct_core import plugins
from ct_core.client import CortexTrainingClient
from ct_core.errors import MissingPluginError

SPEC: dict[str, Any] = {
    "deployment": {"class": "EVALUATION", "min_replicas": 1, "gpus_per_replica": 1, "gpu_type": "H200"},
    "source": {"type": "base_model", "model": "Qwen/Qwen3-0.6B"},
    "inference": {"max_seq_len": 256},
}
METHODS = (
    "create_model_deployment",
    "list_model_deployments",
    "describe_model_deployment",
    "get_model_deployment",
    "wait_for_model_deployment",
    "drop_model_deployment",
    "download_model_deployment_logs",
    "download_model_deployment_metrics",
    "model_deployment_base_url",
)


@pytest.fixture
def client(local_server: Any) -> Any:
    schema = f"S_{uuid.uuid4().hex[:8].upper()}"
    with CortexTrainingClient(
        base_url=local_server.base_url, database="DEP_DB", schema=schema, poll_interval=0.02, poll_timeout=60
    ) as made:
        yield made


def test_deployment_lifecycle_through_the_clients_own_methods(client: Any, tmp_path: Path) -> None:
    created = client.create_model_deployment(SPEC)
    deployment = created["deployment"]
    assert deployment.startswith("sf-ct-")
    ready = client.wait_for_model_deployment(deployment, timeout=60)
    assert ready["status"] == "READY"
    assert client.describe_model_deployment(deployment) == client.get_model_deployment(deployment)
    assert client.describe_model_deployment(deployment) == client.model_deployments.describe(deployment)
    assert [d["deployment"] for d in client.list_model_deployments()] == [deployment]
    assert client.list_model_deployments(["pending"]) == []
    assert client.model_deployment_base_url() == client.rest_prefix + "/inference/v1"
    assert client.model_deployment_base_url(deployment) == client.model_deployments.base_url(deployment)
    assert isinstance(client.download_model_deployment_metrics(deployment, tmp_path / "metrics"), list)
    assert isinstance(client.download_model_deployment_logs(deployment, tmp_path / "logs"), list)
    dropped = client.drop_model_deployment(deployment)
    assert dropped["deployment"] == deployment and dropped["status"] in {"DROPPING", "DROPPED"}


def test_each_contract_name_is_a_documented_client_method(client: Any) -> None:
    for name in METHODS:
        method = getattr(CortexTrainingClient, name)
        assert method.__name__ == name and method.__doc__, name


@pytest.mark.parametrize("name", METHODS)
def test_without_the_plugin_each_method_names_it(
    client: Any, name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Only the lora plugin loads: model-deployment is installed but left out.
    monkeypatch.setenv(plugins.ALLOW_ENV_VAR, "lora")
    plugins.reset_plugin_manager()
    try:
        arguments: tuple[Any, ...] = ("sf-ct-00000000-0000-0000-0000-000000000000",)
        if name.startswith("download_"):
            arguments += (tmp_path,)
        with pytest.raises(MissingPluginError, match="ct-model-deployment plugin") as caught:
            getattr(client, name)(*arguments)
        assert isinstance(caught.value, ImportError)
        assert f"{plugins.ALLOW_ENV_VAR}='lora' leaves out" in str(caught.value)
        with pytest.raises(MissingPluginError, match="ct-model-deployment"):
            client.model_deployments  # noqa: B018 - the property itself asks the plugins
    finally:
        plugins.reset_plugin_manager()

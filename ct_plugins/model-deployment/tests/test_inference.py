"""The OpenAI-compatible endpoint of ct_local (chat completions, models), called by httpx and openai."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from ct_model_deployment import model_deployments

from ct_core.client import CortexTrainingClient

DB = "DEP_DB"
SCHEMA = "PUBLIC"
ALICE, BOB = "alice-pat", "bob-pat"
PAT_HEADERS = {"X-Snowflake-Authorization-Token-Type": "PROGRAMMATIC_ACCESS_TOKEN"}


def make_client(server: Any, token: str | None = None) -> CortexTrainingClient:
    headers = {"Authorization": f"Bearer {token}", **PAT_HEADERS} if token else None
    return CortexTrainingClient(
        base_url=server.base_url,
        database=DB,
        schema=SCHEMA,
        poll_interval=0.02,
        poll_max_interval=0.05,
        headers=headers,
    )


@pytest.fixture(scope="module")
def auth_server(module_local_server_factory: Any) -> Any:
    return module_local_server_factory(tokens=[f"{ALICE}=ROLE_A", f"{BOB}=ROLE_B"])


@pytest.fixture(scope="module")
def ready(auth_server: Any) -> Iterator[dict[str, Any]]:
    """A READY deployment owned by alice's role, shared by the module."""
    spec = {
        "deployment": {"class": "EVALUATION", "min_replicas": 1, "gpus_per_replica": 1, "gpu_type": "H200"},
        "source": {"type": "base_model", "model": "Qwen/Qwen3-0.6B"},
        "inference": {"max_seq_len": 256},
    }
    with make_client(auth_server, ALICE) as client:
        deployments = model_deployments(client)
        record = deployments.wait(deployments.create(spec)["deployment"], timeout=60)
        yield record
        deployments.drop(record["deployment"])


def chat(base_url: str, token: str | None, body: dict[str, Any]) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", **PAT_HEADERS} if token else {}
    return httpx.post(base_url + "/chat/completions", json=body, headers=headers, timeout=120)


def body_for(model: str, **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": "hello"}], **extra}


def test_openai_client_non_streaming(ready: dict[str, Any]) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=ready["base_url"], api_key=ALICE, default_headers=PAT_HEADERS)
    answer = client.chat.completions.create(
        model=ready["deployment"],
        messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
        max_completion_tokens=8,
        temperature=0,
    )
    assert answer.object == "chat.completion" and answer.model == ready["deployment"]
    choice = answer.choices[0]
    assert choice.message.role == "assistant" and isinstance(choice.message.content, str)
    assert choice.finish_reason in {"stop", "length"}
    assert answer.usage is not None and 1 <= answer.usage.completion_tokens <= 8
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + answer.usage.completion_tokens
    again = client.chat.completions.create(
        model=ready["deployment"],
        messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
        max_completion_tokens=8,
        temperature=0,
    )
    assert again.choices[0].message.content == choice.message.content


def test_openai_client_streaming_with_usage(ready: dict[str, Any]) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=ready["base_url"], api_key=ALICE, default_headers=PAT_HEADERS)
    stream = client.chat.completions.create(
        model=ready["deployment"],
        messages=[{"role": "user", "content": "hi"}],
        max_completion_tokens=6,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant" and chunks[0].choices[0].delta.content == ""
    final = chunks[-2].choices[0]
    assert final.finish_reason in {"stop", "length"} and not final.delta.content
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert all(chunk.usage is None for chunk in chunks[:-1])
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks[1:-2])
    whole = client.chat.completions.create(
        model=ready["deployment"],
        messages=[{"role": "user", "content": "hi"}],
        max_completion_tokens=6,
        temperature=0,
    )
    assert text == whole.choices[0].message.content
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens


def test_raw_stream_shape(ready: dict[str, Any]) -> None:
    headers = {"Authorization": f"Bearer {ALICE}", **PAT_HEADERS}
    body = body_for(ready["deployment"], stream=True, max_completion_tokens=4, temperature=0)
    with httpx.stream(
        "POST", ready["base_url"] + "/chat/completions", json=body, headers=headers, timeout=60
    ) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in r.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    assert chunks[-1]["choices"][0]["delta"] == {} and chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert "usage" not in chunks[0]


def test_max_tokens_is_refused(ready: dict[str, Any]) -> None:
    response = chat(ready["base_url"], ALICE, body_for(ready["deployment"], max_tokens=5))
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["type"], error["param"], error["code"]) == (
        "invalid_request_error",
        "max_tokens",
        "unsupported_parameter",
    )


def test_length_limit_and_bad_fields(ready: dict[str, Any]) -> None:
    answer = chat(
        ready["base_url"], ALICE, body_for(ready["deployment"], max_completion_tokens=3, temperature=0)
    ).json()
    assert answer["usage"]["completion_tokens"] <= 3
    for extra in ({"max_completion_tokens": 0}, {"temperature": "hot"}, {"messages": []}):
        response = chat(ready["base_url"], ALICE, {**body_for(ready["deployment"]), **extra})
        assert response.status_code == 400 and response.json()["error"]["type"] == "invalid_request_error"
    long_prompt = body_for(ready["deployment"])
    long_prompt["messages"][0]["content"] = "x" * 400
    response = chat(ready["base_url"], ALICE, long_prompt)
    assert response.status_code == 400 and response.json()["error"]["code"] == "context_length_exceeded"


def test_not_found_for_unknown_malformed_and_foreign(ready: dict[str, Any]) -> None:
    unknown = "sf-ct-00000000-0000-4000-8000-000000000000"
    for token, model in (
        (ALICE, unknown),
        (ALICE, "not-an-id"),
        (ALICE, ready["deployment"].upper()),
        (BOB, ready["deployment"]),
    ):
        response = chat(ready["base_url"], token, body_for(model))
        assert response.status_code == 404, (token, model)
        assert response.json()["error"]["code"] == "model_not_found"
    other_schema = ready["base_url"].replace(f"/schemas/{SCHEMA}/", "/schemas/ELSEWHERE/")
    assert (
        chat(other_schema, ALICE, body_for(ready["deployment"])).json()["error"]["code"] == "model_not_found"
    )


def test_auth_and_methods(ready: dict[str, Any]) -> None:
    assert chat(ready["base_url"], None, body_for(ready["deployment"])).status_code == 401
    assert chat(ready["base_url"], "wrong", body_for(ready["deployment"])).status_code == 401
    headers = {"Authorization": f"Bearer {ALICE}"}
    wrong = httpx.get(ready["base_url"] + "/chat/completions", headers=headers, timeout=30)
    assert wrong.status_code == 405 and wrong.content == b""
    assert httpx.post(ready["base_url"] + "/models", headers=headers, timeout=30).status_code == 405


def test_models_lists_ready_deployments_of_the_caller(ready: dict[str, Any]) -> None:
    from openai import OpenAI

    mine = [model.id for model in OpenAI(base_url=ready["base_url"], api_key=ALICE).models.list()]
    assert ready["deployment"] in mine
    theirs = [model.id for model in OpenAI(base_url=ready["base_url"], api_key=BOB).models.list()]
    assert ready["deployment"] not in theirs


def test_not_ready_then_dropped_or_failed(slow_server: Any, dep_server: Any) -> None:
    spec = {
        "deployment": {"class": "EVALUATION", "min_replicas": 1, "gpus_per_replica": 1, "gpu_type": "H200"},
        "source": {"type": "base_model", "model": "Qwen/Qwen3-0.6B"},
        "inference": {"max_seq_len": 128},
    }
    with make_client(slow_server) as client:
        deployments = model_deployments(client)
        pending = deployments.create(spec)
        response = chat(pending["base_url"], None, body_for(pending["deployment"]))
        assert response.status_code == 503 and response.json()["error"]["code"] == "endpoint_failed"
        for job_status in ("placing", "initializing"):
            slow_server.force_status(pending["deployment"].removeprefix("sf-ct-"), job_status)
            assert deployments.describe(pending["deployment"])["status"] == "INITIALIZING"
            response = chat(pending["base_url"], None, body_for(pending["deployment"]))
            assert response.status_code == 503 and response.json()["error"]["code"] == "endpoint_failed"
        # max_tokens is not looked at before the deployment is found ready.
        deployments.drop(pending["deployment"])
    with make_client(dep_server) as client:
        deployments = model_deployments(client)
        failed = deployments.wait(deployments.create(spec)["deployment"], timeout=60)
        dep_server.force_status(
            failed["deployment"].removeprefix("sf-ct-"), "failed", "sub_job_failed", "boom"
        )
        assert chat(failed["base_url"], None, body_for(failed["deployment"])).status_code == 404
        dropped = deployments.wait(deployments.create(spec)["deployment"], timeout=60)
        deployments.drop(dropped["deployment"])
        assert chat(dropped["base_url"], None, body_for(dropped["deployment"])).status_code == 404


@pytest.mark.slow
def test_checkpoint_deployment_serves_the_trained_weights(dep_server: Any) -> None:
    import torch
    from safetensors.torch import save_file

    from ct_local.http.inference import generate_tokens, render_chat
    from ct_local.model import tinylm

    base, trained_name = "Qwen/Qwen3-0.6B", "weights/that-differ"
    with make_client(dep_server) as client:
        training = client.create_job_from_body(
            {
                "sub_job_configs": [
                    {
                        "job_type": "training",
                        "model_name": base,
                        "training_config": {
                            "optimizer": {"name": "AdamW", "lr": 1e-4},
                            "max_seq_len": 128,
                            "train_batch_size": 1,
                            "n_gpus": 1,
                        },
                    }
                ]
            }
        )["job_id"]
        checkpoint = dep_server.add_checkpoint(
            training, checkpoint_type="weights-only", files={"config.json": "{}"}
        )["checkpoint_id"]
        # Stand-in for training: weights that differ from the base model's, saved as safetensors.
        trained = tinylm.build_model(trained_name)
        folder = dep_server.state_dir / "checkpoints" / training / checkpoint
        state = {name: tensor.contiguous() for name, tensor in trained.state_dict().items()}
        save_file(state, str(folder / tinylm.WEIGHTS_FILE))
        spec = {
            "deployment": {
                "class": "EVALUATION",
                "min_replicas": 1,
                "gpus_per_replica": 1,
                "gpu_type": "H200",
            },
            "source": {"type": "checkpoint", "job_id": training, "checkpoint_id": checkpoint},
            "inference": {"max_seq_len": 128},
        }
        deployments = model_deployments(client)
        record = deployments.wait(deployments.create(spec)["deployment"], timeout=60)
        answer = chat(
            record["base_url"], None, body_for(record["deployment"], max_completion_tokens=8, temperature=0)
        )
        got = answer.json()["choices"][0]["message"]["content"]
        deployments.drop(record["deployment"])
    prompt = tinylm.ByteTokenizer().encode(render_chat([{"role": "user", "content": "hello"}]), add_bos=True)

    def greedy(model: torch.nn.Module) -> str:
        model.eval()
        tokens = [t for t in generate_tokens(model, prompt, max_new=8, temperature=0, seed=0) if t < 256]
        return bytes(tokens).decode("utf-8", errors="replace")

    assert got == greedy(trained)
    assert got != greedy(tinylm.build_model(base))


def test_other_deployment_classes_are_not_served(auth_server: Any, ready: dict[str, Any]) -> None:
    body = {
        "idle_timeout_seconds": 0,
        "sub_job_configs": [
            {
                "job_type": "sampling",
                "model_name": "Qwen/Qwen3-0.6B",
                "inference_config": {
                    "deployment_class": "PRODUCTION",
                    "num_replicas": 1,
                    "n_gpus": 1,
                    "max_seq_len": 128,
                    "vllm_config": {"tensor_parallel_size": 1, "max_model_len": 128},
                },
            }
        ],
    }
    headers = {"Authorization": f"Bearer {ALICE}"}
    prefix = ready["base_url"].removesuffix("/inference/v1")
    job_id = httpx.post(prefix, json=body, headers=headers, timeout=30).raise_for_status().json()["job_id"]
    response = chat(ready["base_url"], ALICE, body_for(f"sf-ct-{job_id}"))
    assert response.status_code == 403 and response.json()["error"]["code"] == "deployment_class_not_served"
    no_model = chat(ready["base_url"], ALICE, {"messages": [{"role": "user", "content": "x"}]})
    assert no_model.status_code == 404 and no_model.json()["error"]["code"] == "model_not_found"

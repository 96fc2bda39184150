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
#: A schema the server answers as not found or not authorized.
HIDDEN = "HIDDEN"


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
    return module_local_server_factory(
        tokens=[f"{ALICE}=ROLE_A", f"{BOB}=ROLE_B"], settings={"hidden_schemas": [f"{DB}.{HIDDEN}"]}
    )


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
def test_checkpoint_deployment_serves_the_trained_weights(dep_server: Any, greedy_answer: Any) -> None:
    from safetensors.torch import save_file

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
    hello = [{"role": "user", "content": "hello"}]
    assert got == greedy_answer(trained, hello, 8)
    assert got != greedy_answer(tinylm.build_model(base), hello, 8)


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


def openai_client(ready: dict[str, Any], token: str = ALICE, base_url: str | None = None) -> Any:
    from openai import OpenAI

    return OpenAI(base_url=base_url or ready["base_url"], api_key=token, default_headers=PAT_HEADERS)


def test_n_returns_that_many_choices(ready: dict[str, Any]) -> None:
    client = openai_client(ready)
    ask = {
        "model": ready["deployment"],
        "messages": [{"role": "user", "content": "hi"}],
        "max_completion_tokens": 6,
        "temperature": 1.5,
        "seed": 11,
        "n": 3,
        "logprobs": True,
    }
    answer = client.chat.completions.create(**ask)
    assert [choice.index for choice in answer.choices] == [0, 1, 2]
    # Every choice counts in the usage; the prompt counts once.
    drawn = [len(choice.logprobs.content) + (choice.finish_reason == "stop") for choice in answer.choices]
    assert answer.usage.completion_tokens == sum(drawn)
    assert len({choice.message.content for choice in answer.choices}) > 1
    # A seeded request repeats exactly, choices included, streamed or not.
    again = client.chat.completions.create(**ask)
    assert [c.message.content for c in again.choices] == [c.message.content for c in answer.choices]
    texts = ["", "", ""]
    finishes: dict[int, str] = {}
    for chunk in client.chat.completions.create(**ask, stream=True):
        for choice in chunk.choices:
            texts[choice.index] += choice.delta.content or ""
            if choice.finish_reason:
                finishes[choice.index] = choice.finish_reason
    assert texts == [c.message.content for c in answer.choices]
    assert finishes == {c.index: c.finish_reason for c in answer.choices}
    for bad in (0, 129, "2", True):
        response = chat(ready["base_url"], ALICE, body_for(ready["deployment"], n=bad))
        assert response.status_code == 400, bad
        assert response.json()["error"]["param"] == "n"


def test_logprobs_come_back_in_openai_shape(ready: dict[str, Any]) -> None:
    client = openai_client(ready)
    ask = {
        "model": ready["deployment"],
        "messages": [{"role": "user", "content": "hello"}],
        "max_completion_tokens": 8,
        "temperature": 0,
    }
    answer = client.chat.completions.create(**ask, logprobs=True, top_logprobs=3)
    choice = answer.choices[0]
    content = choice.logprobs.content
    assert content and len(content) <= 8
    for entry in content:
        assert entry.logprob <= 0 and len(entry.top_logprobs) == 3
        ranked = [alt.logprob for alt in entry.top_logprobs]
        assert ranked == sorted(ranked, reverse=True)
        # Greedy decoding picks the most likely token.
        assert entry.top_logprobs[0].token == entry.token
        assert entry.top_logprobs[0].logprob == pytest.approx(entry.logprob)
    assert (
        bytes(b for entry in content for b in entry.bytes or []).decode("utf-8", "replace")
        == choice.message.content
    )
    # logprobs without top_logprobs: the chosen tokens only.
    plain = client.chat.completions.create(**ask, logprobs=True).choices[0].logprobs.content
    assert [entry.token for entry in plain] == [entry.token for entry in content]
    assert all(entry.top_logprobs == [] for entry in plain)
    assert client.chat.completions.create(**ask).choices[0].logprobs is None
    # Streamed, each content chunk carries the logprobs of its own tokens.
    streamed = []
    for chunk in client.chat.completions.create(**ask, logprobs=True, top_logprobs=3, stream=True):
        for part in chunk.choices:
            if part.logprobs is not None and part.logprobs.content:
                streamed.extend(part.logprobs.content)
    assert [(e.token, e.logprob) for e in streamed] == [(e.token, e.logprob) for e in content]


def test_logprob_options_are_checked(ready: dict[str, Any]) -> None:
    for extra, param in (
        ({"top_logprobs": 2}, "top_logprobs"),
        ({"logprobs": True, "top_logprobs": 21}, "top_logprobs"),
        ({"logprobs": True, "top_logprobs": -1}, "top_logprobs"),
        ({"logprobs": "yes"}, "logprobs"),
    ):
        response = chat(ready["base_url"], ALICE, body_for(ready["deployment"], **extra))
        assert response.status_code == 400, extra
        assert response.json()["error"]["param"] == param


def test_unsupported_options_are_refused_by_name(ready: dict[str, Any]) -> None:
    import openai

    client = openai_client(ready)
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    for option, value in (
        ("tools", [tool]),
        ("tool_choice", "auto"),
        ("response_format", {"type": "json_object"}),
        ("stop", ["\n"]),
        ("frequency_penalty", 0.5),
        ("logit_bias", {"65": 5}),
        ("parallel_tool_calls", False),
    ):
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(
                model=ready["deployment"],
                messages=[{"role": "user", "content": "hi"}],
                max_completion_tokens=2,
                **{option: value},
            )
        assert refused.value.status_code == 400, option
        error = refused.value.body
        assert (error["code"], error["param"], error["type"]) == (
            "unsupported_parameter",
            option,
            "invalid_request_error",
        )
        assert option in error["message"]
    # An option the endpoint has never heard of is refused the same way, not dropped.
    response = chat(ready["base_url"], ALICE, body_for(ready["deployment"], made_up_option=1))
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "made_up_option"
    assert response.json()["error"]["code"] == "unsupported_parameter"
    # stream_options means something only with stream.
    response = chat(
        ready["base_url"], ALICE, body_for(ready["deployment"], stream_options={"include_usage": True})
    )
    assert response.status_code == 400 and response.json()["error"]["param"] == "stream_options"


def test_honoured_options_at_their_neutral_values_pass(ready: dict[str, Any]) -> None:
    client = openai_client(ready)
    answer = client.chat.completions.create(
        model=ready["deployment"],
        messages=[{"role": "user", "content": "hi"}],
        max_completion_tokens=4,
        temperature=0,
        top_p=1,
        n=1,
        frequency_penalty=0,
        presence_penalty=0,
    )
    assert len(answer.choices) == 1
    # top_p is honoured: a tiny nucleus keeps only the most likely token, so sampling is greedy.
    nucleus = client.chat.completions.create(
        model=ready["deployment"],
        messages=[{"role": "user", "content": "hi"}],
        max_completion_tokens=4,
        temperature=1.5,
        top_p=1e-6,
    )
    assert nucleus.choices[0].message.content == answer.choices[0].message.content


def test_models_retrieve_reads_one_deployment(ready: dict[str, Any]) -> None:
    import openai

    model = openai_client(ready).models.retrieve(ready["deployment"])
    assert (model.id, model.object, model.owned_by) == (ready["deployment"], "model", "ROLE_A")
    listed = {m.id: m for m in openai_client(ready).models.list()}
    assert listed[ready["deployment"]].created == model.created
    for token, model_id in (
        (BOB, ready["deployment"]),
        (ALICE, "sf-ct-00000000-0000-4000-8000-000000000000"),
        (ALICE, "not-an-id"),
    ):
        with pytest.raises(openai.NotFoundError) as missing:
            openai_client(ready, token).models.retrieve(model_id)
        assert missing.value.body["code"] == "model_not_found"
    headers = {"Authorization": f"Bearer {ALICE}"}
    url = f"{ready['base_url']}/models/{ready['deployment']}"
    assert httpx.post(url, headers=headers, timeout=30).status_code == 405
    assert httpx.get(url, timeout=30).status_code == 401


def test_unknown_inference_routes_answer_an_openai_404(ready: dict[str, Any]) -> None:
    import openai

    with pytest.raises(openai.NotFoundError) as missing:
        openai_client(ready).embeddings.create(model=ready["deployment"], input="hi")
    assert missing.value.body["type"] == "invalid_request_error"
    assert missing.value.body["code"] == "unknown_url"
    headers = {"Authorization": f"Bearer {ALICE}"}
    for method, path in (("POST", "/completions"), ("GET", "/nothing/here"), ("DELETE", "/models/x/y")):
        response = httpx.request(method, ready["base_url"] + path, headers=headers, timeout=30)
        assert response.status_code == 404, path
        error = response.json()["error"]
        assert error["code"] == "unknown_url" and path in error["message"]


def test_inaccessible_schema_answers_404_like_a_missing_model(ready: dict[str, Any]) -> None:
    import openai

    hidden = ready["base_url"].replace(f"/schemas/{SCHEMA}/", f"/schemas/{HIDDEN}/")
    response = chat(hidden, ALICE, body_for(ready["deployment"]))
    assert response.status_code == 404
    error = response.json()["error"]
    assert (error["code"], error["message"]) == ("model_not_found", "The requested model is not available.")
    with pytest.raises(openai.NotFoundError):
        openai_client(ready, base_url=hidden).models.list()
    with pytest.raises(openai.NotFoundError):
        openai_client(ready, base_url=hidden).models.retrieve(ready["deployment"])
    # The answer is the one an unknown model gets in a schema the caller can see.
    unknown = chat(ready["base_url"], ALICE, body_for("sf-ct-00000000-0000-4000-8000-000000000000"))
    assert unknown.json() == response.json()

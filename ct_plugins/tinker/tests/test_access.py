"""With `ct local serve --token`, the Tinker API key is the server's token (with or without the
SDK's `tml-` prefix), and one role's training clients, futures, samplers and checkpoints are
invisible to another role."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

BASE_MODEL = "Qwen/Qwen3-0.6B"
TOKENS = {"alice-token": "ALICE_ROLE", "bob-token": "BOB_ROLE"}


@pytest.fixture(scope="module")
def secured(module_local_server_factory: Any) -> Any:
    return module_local_server_factory(tokens=TOKENS)


def post(server: Any, key: str | None, path: str, body: dict[str, Any]) -> httpx.Response:
    headers = {"X-API-Key": key} if key else {}
    return httpx.post(f"{server.base_url}/api/v1/{path}", json=body, headers=headers, timeout=60)


def result(server: Any, key: str, request_id: str) -> dict[str, Any]:
    """The future's result; each retrieve waits on the server for it, so no sleep is needed."""
    for _ in range(100):
        answer = post(server, key, "retrieve_future", {"request_id": request_id})
        answer.raise_for_status()
        body = answer.json()
        if body.get("type") != "try_again":
            return dict(body)
    raise AssertionError(f"future {request_id} never finished")


def test_a_key_that_is_no_token_is_refused(secured: Any) -> None:
    for key in (None, "tml-nobody", "nobody"):
        answer = post(secured, key, "create_session", {"tags": [], "sdk_version": "0", "user_metadata": None})
        assert answer.status_code == 401, key
        assert "Tinker API key" in answer.json()["error"]


def test_roles_do_not_see_each_others_training_clients(
    secured: Any, tinker_env: Any, next_token_datum: Any
) -> None:
    import tinker

    # Alice drives the SDK with her token behind the SDK's prefix.
    tinker_env(secured.base_url, "tml-alice-token")
    with tinker.ServiceClient() as service:
        training = service.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
        tokens = training.get_tokenizer().encode("alice trains")
        datum = next_token_datum(tokens)
        training.forward_backward([datum], "cross_entropy").result()
        saved = training.save_state("alice-state").result()
        model_id = training.model_id

    # Her own future, retrieved over plain HTTP with the bare token.
    started = post(
        secured, "alice-token", "optim_step", {"model_id": model_id, "adam_params": {"learning_rate": 1e-3}}
    )
    assert started.status_code == 200, started.text
    request_id = started.json()["request_id"]

    # Bob sees none of it: each answer is the one a missing object gets.
    bob = "tml-bob-token"
    for path, body in (
        ("get_info", {"model_id": model_id}),
        ("retrieve_future", {"request_id": request_id}),
        ("optim_step", {"model_id": model_id, "adam_params": {"learning_rate": 1e-3}}),
        ("save_weights", {"model_id": model_id, "path": "stolen"}),
        ("load_weights", {"model_id": model_id, "path": saved.path, "optimizer": True}),
        ("weights_info", {"tinker_path": saved.path}),
    ):
        answer = post(secured, bob, path, body)
        assert answer.status_code == 404, (path, answer.text)
    checkpoint = saved.path.removeprefix("tinker://").split("/", 1)
    deleted = httpx.delete(
        f"{secured.base_url}/api/v1/training_runs/{checkpoint[0]}/checkpoints/{checkpoint[1]}",
        headers={"X-API-Key": bob},
        timeout=60,
    )
    assert deleted.status_code == 404, deleted.text
    listing = httpx.get(
        f"{secured.base_url}/api/v1/training_runs/{model_id}/checkpoints",
        headers={"X-API-Key": bob},
        timeout=60,
    )
    assert listing.status_code == 404

    assert "metrics" in result(secured, "alice-token", request_id)
    mine = httpx.get(
        f"{secured.base_url}/api/v1/training_runs/{model_id}/checkpoints",
        headers={"X-API-Key": "alice-token"},
        timeout=60,
    )
    assert [c["tinker_path"] for c in mine.json()["checkpoints"]] == [saved.path]


def test_training_runs_are_listed_per_role(secured: Any, tinker_env: Any) -> None:
    import tinker

    tinker_env(secured.base_url, "tml-bob-token")
    with tinker.ServiceClient() as service:
        training = service.create_lora_training_client(base_model=BASE_MODEL, rank=4).result()
        rest = tinker.RestClient(base_url=secured.base_url, api_key="tml-bob-token")
        listed = rest.list_training_runs().result()
        ids = [run.training_run_id for run in listed.training_runs]
        assert training.model_id in ids
        run = rest.get_training_run(training.model_id).result()
        assert (run.base_model, run.lora_rank, run.is_lora) == (BASE_MODEL, 4, True)
    tinker_env(secured.base_url, "tml-alice-token")
    with tinker.ServiceClient() as service:
        alice = tinker.RestClient(base_url=secured.base_url, api_key="tml-alice-token")
        theirs = alice.list_training_runs().result()
        assert training.model_id not in [run.training_run_id for run in theirs.training_runs]

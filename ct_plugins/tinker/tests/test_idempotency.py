"""The SDK's idempotency keys are honoured: a call sent again with the key of one that started work
gets that call's answer and starts nothing; another key starts another call."""

from __future__ import annotations

from typing import Any

import httpx

BASE_MODEL = "Qwen/Qwen3-0.6B"
KEY = {"X-API-Key": "tml-local"}


def post(base_url: str, path: str, body: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    headers = {**KEY, "X-Idempotency-Key": key} if key else KEY
    answer = httpx.post(f"{base_url}/api/v1/{path}", json=body, headers=headers, timeout=60)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def result(base_url: str, request_id: str) -> dict[str, Any]:
    """Each retrieve waits on the server for the result, so no sleep is needed."""
    for _ in range(100):
        body = post(base_url, "retrieve_future", {"request_id": request_id})
        if body.get("type") != "try_again":
            return body
    raise AssertionError(f"future {request_id} never finished")


def test_a_resent_step_runs_once(local_server: Any) -> None:
    url = local_server.base_url
    session = post(url, "create_session", {"tags": [], "sdk_version": "0", "user_metadata": None})[
        "session_id"
    ]
    created = post(
        url,
        "create_model",
        {"session_id": session, "model_seq_id": 0, "base_model": BASE_MODEL, "lora_config": {"rank": 4}},
        key="create-1",
    )
    again = post(
        url,
        "create_model",
        {"session_id": session, "model_seq_id": 0, "base_model": BASE_MODEL, "lora_config": {"rank": 4}},
        key="create-1",
    )
    assert again == created
    model_id = result(url, created["request_id"])["model_id"]

    step = {"model_id": model_id, "adam_params": {"learning_rate": 1e-3}}
    first = post(url, "optim_step", step, key="step-1")
    resent = post(url, "optim_step", step, key="step-1")
    assert resent["request_id"] == first["request_id"]
    second = post(url, "optim_step", step, key="step-2")
    assert second["request_id"] != first["request_id"]
    assert result(url, first["request_id"])["metrics"]["global_steps"] == 1
    assert result(url, second["request_id"])["metrics"]["global_steps"] == 2

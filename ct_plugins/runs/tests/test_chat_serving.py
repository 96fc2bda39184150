"""Fine-tune, then chat: a run trains the tiny model on a small task and its deployment answers as taught.

A real ct_local with the runs service embedded. Each format (chat, prompt/completion, labels) trains
on a few distinct questions with a fixed answer each, for many epochs, then the registered model is
deployed through the model-deployment SDK and asked every trained question through the real
``openai`` package: the deployment renders the messages with the template the run trained in and
stops at its end-of-turn token, so the answer is the taught one, exactly, with finish_reason stop.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from ct_model_deployment import model_deployments
from ct_runs.datasets import validation_indices

from ct_core import CortexTrainingClient

DATABASE, SCHEMA = "CHAT_DB", "PUBLIC"
#: Questions are three words drawn from these; answers are colours, one per question.
WORDS = (
    *("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"),
    *("kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"),
)
ANSWERS = ("red", "green", "blue", "amber", "cyan", "black", "white", "grey", "pink")
VAL_FRACTION, SEED = 0.1, 5
#: Enough epochs for the tiny model to learn eight answers by heart (it does in about twenty).
EPOCHS = 40
#: More steps than the run has: validation only at its last step, which always validates.
VAL_EVERY_STEPS = 1000


def task() -> list[tuple[str, str]]:
    rng = random.Random(11)
    return [(" ".join(rng.sample(WORDS, 3)), answer) for answer in ANSWERS]


def rows_of(kind: str) -> list[dict[str, Any]]:
    if kind == "chat":
        return [
            {"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]}
            for q, a in task()
        ]
    if kind == "prompt_completion":
        return [{"prompt": q, "completion": a} for q, a in task()]
    return [{"text": q, "colour": a} for q, a in task()]


def taught(kind: str) -> list[tuple[str, str]]:
    """The trained (question, answer) pairs: the rows not held out for validation."""
    pairs = task()
    held_out = set(validation_indices(len(pairs), VAL_FRACTION, SEED))
    # A label model answers in the labels layout: one "field: value" line.
    answer = (lambda a: f"colour: {a}") if kind == "labels" else (lambda a: a)
    return [(q, answer(a)) for i, (q, a) in enumerate(pairs) if i not in held_out]


@pytest.mark.parametrize("kind", ["chat", "prompt_completion", "labels"])
def test_a_fine_tuned_model_answers_through_openai_as_taught(client: CortexTrainingClient, kind: str) -> None:
    from openai import OpenAI

    content = "".join(json.dumps(row) + "\n" for row in rows_of(kind)).encode()
    built = client.datasets.build(
        content,
        label_fields=["colour"] if kind == "labels" else (),
        val_fraction=VAL_FRACTION,
        seed=SEED,
        wait=True,
        timeout=600,
    )
    assert built["status"] == "succeeded" and built["format"] == kind, built
    spec = {
        "dataset_id": built["dataset_id"],
        "overrides": {"max_seq_len": 128},
        # Validated at the last step only (the held-out question is not learnable), so the model the
        # run registers, its best checkpoint, is the fully trained one.
        "trainer": {
            "val_every_steps": VAL_EVERY_STEPS,
            "epochs": EPOCHS,
            "batch_tokens": 512,
            "early_stopping": False,
            "checkpoint_every_steps": 1000,
        },
    }
    run = client.runs.wait(client.runs.start(spec)["run_id"], timeout=900)
    assert run["status"] == "succeeded", run.get("error")

    deployments = model_deployments(client)
    created = deployments.create(
        {
            "source": {"type": "registered_model", "model_id": run["model_id"]},
            "deployment": {
                "class": "EVALUATION",
                "min_replicas": 1,
                "gpus_per_replica": 1,
                "gpu_type": "H200",
            },
            "inference": {"max_seq_len": 128},
        }
    )
    record = deployments.wait(created["deployment"], timeout=600)
    try:
        openai = OpenAI(base_url=record["base_url"], api_key="unused")
        for question, answer in taught(kind):
            reply = openai.chat.completions.create(
                model=record["deployment"],
                messages=[{"role": "user", "content": question}],
                max_completion_tokens=32,
                temperature=0,
            )
            choice = reply.choices[0]
            assert (choice.message.content, choice.finish_reason) == (answer, "stop"), question
            # Streamed, the same answer arrives in pieces and ends the same way.
            streamed = list(
                openai.chat.completions.create(
                    model=record["deployment"],
                    messages=[{"role": "user", "content": question}],
                    max_completion_tokens=32,
                    temperature=0,
                    stream=True,
                )
            )
            text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices)
            assert text == answer and streamed[-1].choices[0].finish_reason == "stop"
    finally:
        deployments.drop(record["deployment"])

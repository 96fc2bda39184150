"""A managed run on a real model packs its rows with that model's own tokenizer and chat template.

The packing of a run (``ct_runs.packing``) takes the run's tokenizer (``ct_runs.tokenizers``): the
tiny model's bytes, which give exactly the ids runs have always trained on, or a real model's
tokenizer and template. These tests pack rows for the tiny random-init Qwen3 of the fixtures and
read the ids back with the folder's own tokenizer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ct_runs import packing, tokenizers

CHAT = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "hello world"},
    {"role": "assistant", "content": "the quick brown fox"},
]


@pytest.fixture(scope="module")
def qwen_tokenizer(model_folders: dict[str, Path]) -> tokenizers.ModelTokenizer:
    """The run tokenizer of a server that serves the Qwen3 folder as ``qwen``."""
    models = [{"name": "qwen", "weights": "huggingface", "path": str(model_folders["qwen3"])}]
    chosen = tokenizers.for_model("qwen", models)
    assert isinstance(chosen, tokenizers.ModelTokenizer)
    return chosen


def _trained(tokenizer: Any, example: packing.Example) -> str:
    return str(tokenizer.decode([t for t, m in zip(example.tokens, example.loss_mask, strict=True) if m]))


def test_a_chat_row_packs_as_the_models_template_renders_it(qwen_tokenizer, tokenizer):
    example = packing.encode_example({"messages": CHAT}, [], qwen_tokenizer)
    assert tokenizer.decode(list(example.tokens)) == tokenizer.apply_chat_template(CHAT, tokenize=False)
    assert max(example.tokens) < len(tokenizer)
    # Only what the assistant says, and the end of its turn, are targets.
    assert _trained(tokenizer, example) == "the quick brown fox<|end|>"


def test_prompt_completion_and_text_rows_use_the_models_tokens(qwen_tokenizer, tokenizer):
    example = packing.encode_example({"prompt": "hello", "completion": "world"}, [], qwen_tokenizer)
    messages = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "world"}]
    assert tokenizer.decode(list(example.tokens)) == tokenizer.apply_chat_template(messages, tokenize=False)
    assert _trained(tokenizer, example) == "world<|end|>"
    text = packing.encode_example({"text": "the lazy dog"}, [], qwen_tokenizer)
    assert list(text.tokens) == [
        tokenizer.bos_token_id,
        *tokenizer.encode("the lazy dog", add_special_tokens=False),
        tokenizer.eos_token_id,
    ]
    assert text.loss_mask == (0, *([1] * (len(text.tokens) - 1)))


def test_label_candidates_continue_the_prompt_as_training_encoded_the_answer(qwen_tokenizer, tokenizer):
    row = {"text": "what is two plus two?", "labels": {"topic": "sport", "mood": "happy"}}
    fields = ["topic", "mood"]
    encoded = list(packing.encode_example(row, fields, qwen_tokenizer).tokens)
    for field, values, true in (("topic", ["news", "sport"], 1), ("mood", ["happy", "sad"], 0)):
        prompt, candidates = packing.label_candidates(row, field, values, fields, qwen_tokenizer)
        # The prompt and the true value's candidate are exactly the training ids, up to that value's end.
        assert encoded[: len(prompt) + len(candidates[true])] == prompt + candidates[true]
        assert len({tuple(c) for c in candidates}) == len(values)
    # The last label's candidate ends with the template's end of turn.
    assert tokenizer.decode(candidates[0]).endswith("happy<|end|>")


def test_batches_pad_with_the_models_pad_token(qwen_tokenizer, tokenizer):
    rows = [{"messages": CHAT}, {"prompt": "hi", "completion": "yo"}]
    examples = packing.encode_rows(rows, [], qwen_tokenizer)
    pad = qwen_tokenizer.pad_id
    (batch,) = packing.validation_batches(examples, seq_len=64, batch_tokens=128, pad_id=pad)
    padded = batch.input_ids[batch.attention_mask == 0]
    assert padded.size > 0 and set(padded.tolist()) == {tokenizer.pad_token_id}
    prompt, candidates = packing.label_candidates(
        {"text": "x", "labels": {"a": "b"}}, "a", ["b", "cc d"], ["a"], qwen_tokenizer
    )
    input_ids, attention, _ = packing.candidate_batch(prompt, candidates, pad_id=qwen_tokenizer.pad_id)
    assert set(np.asarray(input_ids)[attention == 0].tolist()) <= {tokenizer.pad_token_id}


def test_a_run_finds_its_tokenizer_again_from_what_it_recorded(qwen_tokenizer, model_folders, tmp_path):
    recorded = tokenizers.config_value(qwen_tokenizer)
    assert recorded == qwen_tokenizer.record()
    assert recorded["name"] == str(model_folders["qwen3"])
    again = tokenizers.for_run({"config": {"tokenizer": recorded}})
    assert isinstance(again, tokenizers.ModelTokenizer) and again.record() == recorded
    # The tiny model's runs record the name they always did, and read bytes.
    assert tokenizers.config_value(tokenizers.ByteChat()) == packing.TOKENIZER == "byte"
    assert isinstance(tokenizers.for_run({"config": {"tokenizer": "byte"}}), tokenizers.ByteChat)
    # A tokenizer changed since the run started cannot replay its batches: refused, naming it.
    changed = {**recorded, "chat_template_sha256": "0" * 64}
    with pytest.raises(ValueError, match="changed since the run started"):
        tokenizers.for_run({"config": {"tokenizer": changed}})


def _resolve(model: str, served: list[dict[str, Any]] | None) -> Any:
    from ct_runs import spec

    dataset = {
        "dataset_id": "ds_01TESTTESTTESTTESTTESTTEST",
        "status": "succeeded",
        "fingerprints": {"source": "s" * 64, "train": "t" * 64, "validation": "v" * 64},
        "labels": [],
        "violations": [],
        "error": None,
    }
    rows = [{"messages": CHAT}] * 8
    body = {"dataset_id": dataset["dataset_id"], "model": model, "overrides": {"max_seq_len": 64}}
    return spec.resolve_run(body, dataset, rows, served_models=served)


def test_a_run_spec_resolves_a_served_real_model_with_its_tokenizer(qwen_tokenizer, model_folders, tmp_path):
    from ct_runs.errors import RunsRefusal

    real = {"weights": "huggingface", "path": str(model_folders["qwen3"])}
    resolved = _resolve(SERVED, [{"name": SERVED, **real}])
    assert resolved.model == resolved.model_name == SERVED
    (training,) = resolved.create_body["sub_job_configs"]
    assert training["model_name"] == SERVED
    assert resolved.config["tokenizer"] == qwen_tokenizer.record()
    # A catalog name served by the tiny model packs bytes: the config and fingerprint of before.
    catalog = "Qwen/Qwen3-0.6B"
    tiny = _resolve(catalog, [{"name": catalog, "weights": "tiny"}])
    assert tiny.config["tokenizer"] == "byte"
    assert tiny.fingerprint == _resolve(catalog, None).fingerprint
    # The same catalog name served from the folder trains on the folder's tokens: another run.
    from_folder = _resolve(catalog, [{"name": catalog, **real}])
    assert from_folder.config["tokenizer"] == qwen_tokenizer.record()
    assert from_folder.fingerprint != tiny.fingerprint
    assert from_folder.steps_per_epoch <= tiny.steps_per_epoch
    # A served model whose tokenizer cannot be read is refused at the model, saying why.
    empty = tmp_path / "no-tokenizer"
    empty.mkdir()
    with pytest.raises(RunsRefusal) as caught:
        _resolve(SERVED, [{"name": SERVED, "weights": "huggingface", "path": str(empty)}])
    assert (caught.value.code, caught.value.field) == ("failed_precondition", "model")
    assert "tokenizer" in caught.value.message and str(empty) in caught.value.message
    # A name neither in the catalog nor served lists the server's real models among the choices.
    with pytest.raises(RunsRefusal) as unknown:
        _resolve("llama", [{"name": SERVED, **real}])
    assert (
        unknown.value.code == "invalid_argument" and "the server's real models qwen" in unknown.value.message
    )


# --- a managed run on a real model, end to end ----------------------------------------------------

DATABASE, SCHEMA = "RUNS_DB", "PUBLIC"
#: The name the server serves the Qwen3 folder under, and a run names as its model.
SERVED = "qwen"
#: Upper bounds on a build and a run; only a hang gets near them.
BUILD_LIMIT_S = 600.0
RUN_LIMIT_S = 900.0
REPLIES = (
    "the quick brown fox jumps over the lazy dog",
    "hello world, this is a tiny model for tests",
    "what is two plus two? four.",
)
SEQ_LEN = 64


def _chat_rows(count: int) -> list[dict[str, Any]]:
    """Chat rows whose byte encoding needs two rows of ``SEQ_LEN`` and whose BPE encoding one."""
    rows = []
    for i in range(count):
        messages = [
            {"role": "user", "content": f"what is two plus two? say it {i}"},
            {"role": "assistant", "content": REPLIES[i % len(REPLIES)]},
        ]
        rows.append({"messages": messages})
    return rows


@pytest.fixture(scope="module")
def qwen_server(module_local_server_factory: Any, model_folders: dict[str, Path]) -> Any:
    """``ct local serve --model qwen=FOLDER`` with its embedded runs service."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("CT_PLUGINS", raising=False)
        yield module_local_server_factory(
            settings={"runs_concurrency": 1},
            extra_args=["--model", f"{SERVED}={model_folders['qwen3']}", "--dtype", "float32"],
        )


def test_a_run_on_a_served_real_model_trains_on_its_tokens(
    qwen_server, qwen_tokenizer, tokenizer, model_folders
):
    import json

    from ct_runs.run_data import RunData
    from ct_runs.store import Store, sqlite_url

    from ct_core import CortexTrainingClient

    rows = _chat_rows(24)
    with CortexTrainingClient(
        base_url=qwen_server.base_url,
        database=DATABASE,
        schema=SCHEMA,
        poll_interval=0.02,
        poll_max_interval=0.25,
    ) as client:
        source = ("\n".join(json.dumps(row) for row in rows) + "\n").encode()
        built = client.datasets.build(source, wait=True, timeout=BUILD_LIMIT_S)
        assert built["status"] == "succeeded", built
        spec = {
            "dataset_id": built["dataset_id"],
            "model": SERVED,
            "overrides": {"max_seq_len": SEQ_LEN},
            "trainer": {"epochs": 4, "batch_tokens": 4 * SEQ_LEN, "learning_rate": 1e-2},
        }
        run = client.runs.start(spec)
        assert (run["model"], run["model_name"]) == (SERVED, SERVED)
        done = client.runs.wait(run["run_id"], timeout=RUN_LIMIT_S)
        assert done["status"] == "succeeded", done.get("error")
        assert done["step"] == done["total_steps"] > 0
        losses = [loss for _, loss in client.runs.metrics(done["run_id"])["series"]["train_loss"]]
        quarter = max(1, len(losses) // 4)
        assert sum(losses[-quarter:]) / quarter < sum(losses[:quarter]) / quarter, losses
        # The registered model answers in the folder's own chat template.
        registered = client.runs.get_model(done["model_id"])
        assert registered["chat_template"]["tokenizer"] == str(model_folders["qwen3"]), registered
        assert registered["chat_template"]["end_of_turn"] == "<|end|>"

    # What the run trained on, read from the service's own records: the model's tokens.
    store = Store(sqlite_url(qwen_server.state_dir / "runs-service" / "runs.sqlite3"))
    try:
        record = json.loads(store.run_row(done["run_id"]).record)
        assert record["config"]["tokenizer"] == qwen_tokenizer.record()
        train = store.train_rows(built["dataset_id"], separate_validation=False)
        real = packing.steps_per_epoch(
            packing.encode_rows(train, [], qwen_tokenizer), seq_len=SEQ_LEN, batch_tokens=4 * SEQ_LEN
        )
        as_bytes = packing.steps_per_epoch(
            packing.encode_rows(train, []), seq_len=SEQ_LEN, batch_tokens=4 * SEQ_LEN
        )
        assert done["steps_per_epoch"] == real < as_bytes
        batch = RunData(store).epoch(done["run_id"], 0)[0]
        rendered = {tokenizer.apply_chat_template(row["messages"], tokenize=False) for row in train}
        for ids, attention in zip(batch.input_ids.tolist(), batch.attention_mask.tolist(), strict=True):
            text = tokenizer.decode([t for t, a in zip(ids, attention, strict=True) if a])
            assert any(whole.startswith(text) for whole in rendered), text
    finally:
        store.close()

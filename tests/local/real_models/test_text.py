"""Readable batches and text prompts go through the model's own tokenizer.

``ct fwd-bwd`` with ``texts`` uses the tokenizer the batch names (a folder, or a name in the local
Hugging Face cache, read offline), else the job's model's: the folder a real model was registered
from (as the models route reports it), the byte tokenizer for the tiny model. The generate door
counts a text prompt in the model's tokens.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

from ct_testing.plugin import DEFAULT_DATABASE, create_job, run_ct, wait_for_job_status

TEXT = "the quick brown fox jumps over the lazy dog"
#: Upper bound on a job reaching running; only a hang gets near it.
START_LIMIT_S = 180.0


def _training(model: str) -> dict[str, Any]:
    return {
        "job_type": "training",
        "model_name": model,
        "training_config": {"n_gpus": 1, "optimizer": {"name": "AdamW", "lr": 1e-2}},
    }


def _ct(server: Any, schema: str, job_id: str, *args: str, stdin: str = "", **env: str) -> Any:
    return run_ct(
        "--base-url",
        server.base_url,
        "--database",
        DEFAULT_DATABASE,
        "--schema",
        schema,
        "--poll-interval",
        "0.05",
        "--job",
        job_id,
        *args,
        input=stdin,
        env=env,
        timeout=START_LIMIT_S,
    )


def _schema(driver: Any) -> str:
    return driver.prefix.split("/schemas/")[1].split("/")[0]


def _fwd_bwd_loss(server: Any, driver: Any, batch: dict[str, Any], **env: str) -> float:
    result = _ct(server, _schema(driver), driver.job_id, "fwd-bwd", "-", stdin=json.dumps(batch), **env)
    assert result.returncode == 0, result.stderr
    return float(json.loads(result.stdout)["result"]["avg_loss"])


def _hub_cache(root: Path, repo_id: str, source: Path) -> None:
    """Lay ``source`` out as the Hugging Face cache holds a downloaded snapshot of ``repo_id``."""
    repo = root / ("models--" + repo_id.replace("/", "--"))
    revision = "89abcdef0123456789abcdef0123456789abcdef"
    shutil.copytree(source, repo / "snapshots" / revision)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)


def test_texts_without_a_tokenizer_use_the_real_models_own(real_server, driver, tokenizer):
    driver.start(_training("tiny-qwen3"))
    by_ids = driver.fwd_bwd([tokenizer(TEXT)["input_ids"]])
    by_text = _fwd_bwd_loss(real_server, driver, {"texts": [TEXT], "padding": "longest"})
    # The same tokens (BPE, not bytes) give the same loss on the same, unstepped weights.
    assert abs(by_text - by_ids) < 1e-5


def test_texts_with_a_tokenizer_named_by_folder_or_cached_hub_name(
    real_server, driver, tokenizer, model_folders, tmp_path
):
    driver.start(_training("tiny-llama"))
    by_ids = driver.fwd_bwd([tokenizer(TEXT)["input_ids"]])
    folder = {"texts": [TEXT], "padding": "longest", "tokenizer": str(model_folders["llama"])}
    assert abs(_fwd_bwd_loss(real_server, driver, folder) - by_ids) < 1e-5
    cache = tmp_path / "hub"
    _hub_cache(cache, "Org/Tiny-Tokenizer", model_folders["llama"])
    named = {"texts": [TEXT], "padding": "longest", "tokenizer": {"name": "Org/Tiny-Tokenizer"}}
    loss = _fwd_bwd_loss(real_server, driver, named, HF_HUB_CACHE=str(cache))
    assert abs(loss - by_ids) < 1e-5


def test_a_tokenizer_that_is_nowhere_is_a_clear_error(real_server, driver, tmp_path):
    driver.start(_training("tiny-qwen3"))
    batch = {"texts": [TEXT], "padding": "longest", "tokenizer": "Org/Not-Cached"}
    result = _ct(
        real_server,
        _schema(driver),
        driver.job_id,
        "fwd-bwd",
        "-",
        stdin=json.dumps(batch),
        HF_HUB_CACHE=str(tmp_path / "empty-hub"),
    )
    assert result.returncode == 1, result.stdout
    assert "Org/Not-Cached" in result.stderr
    assert "local Hugging Face cache" in result.stderr
    assert "Traceback" not in result.stderr


def test_texts_on_a_tiny_model_job_use_the_byte_tokenizer(local_server, ct_home):
    schema = "S_" + uuid.uuid4().hex[:10].upper()
    prefix = local_server.prefix(schema=schema)
    with local_server.http() as http:
        job_id = create_job(http, prefix, [_training("Qwen/Qwen3-0.6B")])
        wait_for_job_status(http, f"{prefix}/{job_id}", {"running"}, limit_s=START_LIMIT_S)

    def loss(batch: dict[str, Any]) -> float:
        result = _ct(local_server, schema, job_id, "fwd-bwd", "-", stdin=json.dumps(batch))
        assert result.returncode == 0, result.stderr
        return float(json.loads(result.stdout)["result"]["avg_loss"])

    implicit = loss({"texts": [TEXT], "padding": "longest"})
    assert implicit == loss({"texts": [TEXT], "padding": "longest", "tokenizer": "byte"})


def test_the_generate_door_counts_a_text_prompt_in_the_models_tokens(real_server, driver, tokenizer):
    max_seq_len = 64
    sampling = {
        "job_type": "sampling",
        "model_name": "tiny-qwen3",
        "inference_config": {"n_gpus": 1, "max_seq_len": max_seq_len},
    }
    driver.start(_training("tiny-qwen3"), sampling)
    # More bytes than max_seq_len, far fewer of the model's tokens: accepted and sampled.
    fits = " ".join([TEXT, TEXT])
    assert len(fits.encode()) >= max_seq_len > len(tokenizer(fits)["input_ids"]) + 4
    request = {"prompts": [fits], "sampling_params": {"temperature": 0, "max_tokens": 4}}
    result = _ct(real_server, _schema(driver), driver.job_id, "generate", "-", stdin=json.dumps(request))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["result"]["results"][0]["token_ids"]
    # Text the tokenizer never saw is about a token per byte: refused, counted in tokens.
    long = "zqxj" * 20
    count = len(tokenizer(long, add_special_tokens=False)["input_ids"])
    assert count >= max_seq_len
    refused = driver.post_frame("generate", {"prompts": [long]})
    assert refused.status_code == 422, refused.text
    assert f"has {count} tokens" in refused.text


def test_ct_generate_encodes_text_prompts_with_a_tokenizer_the_file_names(real_server, driver, tmp_path):
    max_seq_len = 64
    sampling = {
        "job_type": "sampling",
        "model_name": "tiny-qwen3",
        "inference_config": {"n_gpus": 1, "max_seq_len": max_seq_len},
    }
    driver.start(sampling)
    prompt = " ".join([TEXT, TEXT])  # 87 bytes, far fewer of the model's tokens
    request = {"prompts": [prompt], "sampling_params": {"max_tokens": 2}, "tokenizer": "byte"}
    result = _ct(real_server, _schema(driver), driver.job_id, "generate", "-", stdin=json.dumps(request))
    # Encoded as bytes on the client: 87 ids, too many for the window, refused before sending.
    assert result.returncode == 1, result.stdout
    assert f"has {len(prompt.encode())} tokens" in result.stderr
    request["tokenizer"] = "Org/Not-Cached"
    missing = _ct(
        real_server,
        _schema(driver),
        driver.job_id,
        "generate",
        "-",
        stdin=json.dumps(request),
        HF_HUB_CACHE=str(tmp_path / "empty-hub"),
    )
    assert missing.returncode == 1, missing.stdout
    assert "'Org/Not-Cached' is neither a folder nor in the local Hugging Face cache" in missing.stderr

"""Tiny real Hugging Face models built in the test, and a server that serves them.

Nothing is downloaded: each model is a random-init config of a real architecture (Qwen3, Llama)
with hidden size 64 and two layers, saved with ``save_pretrained`` next to a small byte-level BPE
tokenizer trained here with ``tokenizers`` and wrapped in ``PreTrainedTokenizerFast`` with a chat
template. The folders are what a user's own model folder holds, so the server loads them exactly
as it would load a downloaded one.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from ct_testing import wait_until
from ct_testing.plugin import create_job, wait_for_job_status

from ct_core import wire

#: Upper bound on waiting for a request or a job; only a hang gets near it.
POLL_LIMIT_S = 180.0
#: The chat template of the test tokenizers: one line per message, ending with the end token.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|start|>{{ m['role'] }}\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|pad|>", "<|start|>", "<|end|>"]
CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "hello world, this is a tiny model for tests",
    "user assistant system: what is two plus two? four.",
] * 20
ARCHITECTURES = ("qwen3", "llama")


def build_tokenizer() -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    raw.train_from_iterator(CORPUS, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, pad_token="<|pad|>", eos_token="<|end|>", bos_token="<|start|>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_config(architecture: str, vocab_size: int, tokenizer: Any) -> Any:
    from transformers import LlamaConfig, Qwen3Config

    shape = {
        "vocab_size": vocab_size,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 512,
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    if architecture == "qwen3":
        return Qwen3Config(head_dim=16, tie_word_embeddings=True, **shape)
    return LlamaConfig(tie_word_embeddings=False, **shape)


def save_model(folder: Path, architecture: str, seed: int = 0) -> Path:
    """A tiny random-init causal LM of ``architecture`` with its tokenizer, saved to ``folder``."""
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = build_tokenizer()
    config = build_config(architecture, len(tokenizer), tokenizer)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    """The test models' tokenizer (the same for every architecture)."""
    return build_tokenizer()


@pytest.fixture(scope="session")
def model_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{architecture: folder}`` for every test architecture, built once per session."""
    root = tmp_path_factory.mktemp("real-models")
    return {name: save_model(root / name, name) for name in ARCHITECTURES}


@pytest.fixture(scope="session")
def real_server(session_local_server_factory: Any, model_folders: dict[str, Path]) -> Any:
    """One server for the folder: each test architecture registered as ``tiny-<architecture>``."""
    args = ["--hardware", "H200=100000"]
    for name, folder in model_folders.items():
        args += ["--model", f"tiny-{name}={folder}"]
    return session_local_server_factory(extra_args=args)


@dataclass
class Driver:
    """A job on the real-model server, spoken to over plain HTTP with ct_core.wire."""

    http: httpx.Client
    prefix: str
    job_id: str = ""

    @property
    def url(self) -> str:
        return f"{self.prefix}/{self.job_id}"

    def start(self, *sub_jobs: dict[str, Any]) -> Driver:
        self.job_id = create_job(self.http, self.prefix, sub_jobs)
        wait_for_job_status(self.http, self.url, {"running"}, limit_s=POLL_LIMIT_S)
        return self

    def wait(self, request_id: str) -> dict[str, Any]:
        def finished() -> dict[str, Any] | None:
            response = self.http.get(f"{self.url}/requests/{request_id}")
            assert response.status_code == 200, response.text
            status = response.json()
            return dict(status) if status["status"] in {"done", "failed", "cancelled"} else None

        return wait_until(
            finished, timeout=POLL_LIMIT_S, interval=0.05, message=f"request {request_id} never finished"
        )

    def result(self, response: httpx.Response) -> dict[str, Any]:
        assert response.status_code == 200, response.text
        status = self.wait(response.json()["request_id"])
        assert status["status"] == "done", status
        result = status["result"]
        if result.get("wire_format") == "DSSST1":
            return dict(wire.loads(base64.b64decode(result["payload_b64"]), backend="numpy"))
        return dict(result)

    def post_frame(self, action: str, logical: dict[str, Any], **query: Any) -> httpx.Response:
        return self.http.post(
            f"{self.url}/{action}",
            content=wire.dumps(logical),
            params=query,
            headers={"content-type": "application/octet-stream"},
        )

    def forward(self, ids: list[list[int]]) -> Any:
        """The shifted log-probabilities of ``ids`` (the forward operation)."""
        import torch

        frame = wire.dumps({"args": (), "kwargs": {"input_ids": torch.tensor(ids, dtype=torch.long)}})
        payload = {
            "payload_b64": base64.b64encode(frame).decode(),
            "content_type": "application/octet-stream",
        }
        response = self.http.post(
            f"{self.url}/operation", json={"operation_type": "forward", "payload": payload}
        )
        return self.result(response)["logprobs"]

    def fwd_bwd(self, ids: list[list[int]]) -> float:
        import torch

        input_ids = torch.tensor(ids, dtype=torch.long)
        labels = torch.roll(input_ids, -1, dims=1)
        labels[:, -1] = -100
        batch = {"args": (), "kwargs": {"input_ids": input_ids, "labels": labels}}
        return float(self.result(self.post_frame("forward-backward", batch))["avg_loss"])

    def step(self, lr: float | None = None) -> dict[str, Any]:
        return self.result(
            self.http.post(f"{self.url}/step", json={} if lr is None else {"learning_rate": lr})
        )

    def save(self, checkpoint_type: str) -> dict[str, Any]:
        return self.result(self.http.post(f"{self.url}/save", json={"checkpoint_type": checkpoint_type}))


@pytest.fixture
def real_http(real_server: Any) -> Iterator[httpx.Client]:
    with real_server.http() as client:
        yield client


@pytest.fixture
def driver(real_server: Any, real_http: httpx.Client) -> Driver:
    return Driver(real_http, real_server.prefix(schema="S_" + uuid.uuid4().hex[:10].upper()))


@pytest.fixture
def driver_class() -> type[Driver]:
    """The :class:`Driver` class, for a test that starts a server of its own."""
    return Driver

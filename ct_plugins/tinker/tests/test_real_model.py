"""A real Hugging Face model folder served by `ct local serve --model NAME=FOLDER`: get-info names
that folder, so the SDK's `get_tokenizer()` loads the model's own tokenizer offline, and the SDK's
loop trains it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

MODEL = "tiny-real-qwen3"
TEXT = "the quick brown fox jumps over the lazy dog"


def save_model(folder: Path) -> Path:
    """A random-init two-layer Qwen3 and a small byte-level BPE tokenizer trained here (offline)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, Qwen3Config

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    raw.train_from_iterator([TEXT, "a tiny real model for the tinker plugin"] * 10, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", eos_token="<eos>")
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    folder.mkdir(parents=True)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def test_a_real_model_trains_with_its_own_tokenizer(
    local_server_factory: Any, tinker_env: Any, tmp_path: Path, next_token_datum: Any
) -> None:
    import tinker
    from tinker import types
    from transformers import AutoTokenizer

    folder = save_model(tmp_path / "model")
    server = local_server_factory(extra_args=["--model", f"{MODEL}={folder}"])
    tinker_env(server.base_url)
    with tinker.ServiceClient() as service:
        rest = tinker.RestClient(base_url=server.base_url, api_key="tml-local")
        capabilities = rest.get_server_capabilities().result()
        assert MODEL in [m.model_name for m in capabilities.supported_models]
        training = service.create_lora_training_client(base_model=MODEL, rank=4).result()
        tokenizer = training.get_tokenizer()
        expected = AutoTokenizer.from_pretrained(str(folder))
        assert tokenizer.encode(TEXT) == expected.encode(TEXT)
        assert len(tokenizer) == len(expected)
        tokens = tokenizer.encode(TEXT)
        datum = next_token_datum(tokens)
        losses = []
        for _ in range(4):
            fb = training.forward_backward([datum], "cross_entropy")
            training.optim_step(types.AdamParams(learning_rate=2e-2)).result()
            losses.append(fb.result().metrics["loss:sum"])
        assert losses[-1] < losses[0], losses
        sampler = training.save_weights_and_get_sampling_client().result()
        sampled = sampler.sample(
            types.ModelInput.from_ints(tokens[:3]),
            num_samples=1,
            sampling_params=types.SamplingParams(max_tokens=4),
        ).result()
        assert all(0 <= t < len(expected) for t in sampled.sequences[0].tokens)

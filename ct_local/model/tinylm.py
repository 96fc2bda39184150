"""The tiny causal language model behind every local sub-job, and its checkpoint files.

Nothing is downloaded: the model is a two-layer Qwen3-architecture transformer built from a config
in code, with weights drawn from a generator seeded by the model *name*, so two jobs naming the
same model start from identical weights. Text goes through :class:`ByteTokenizer` (one token per
UTF-8 byte plus a few specials), also built in code; its chat template, with the end-of-turn special
token, is :mod:`ct_core.chat_template`, shared with the runs that train it.

Checkpoints are folders of safetensors, never pickle: weights-only is a Hugging Face style folder
(``config.json`` + ``model.safetensors``) that ``transformers`` loads as is, with ``ct_tokenizer.json``
naming the byte tokenizer, its special ids and the chat template (so a deployment of the checkpoint
renders chats as the model was trained: :func:`checkpoint_template`); resumable adds
``optimizer.safetensors`` (the optimizer's tensors) and ``trainer_state.json`` (step count, loss
and the optimizer's scalar settings). Folders are written under a temporary name and renamed, so a
reader never sees half a checkpoint.

torch and transformers are imported inside functions: importing this module stays cheap.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ct_core import chat_template
from ct_core.fs import atomic_replace, atomic_write, temp_path_for

if TYPE_CHECKING:
    import torch

# Byte-level vocabulary (ct_core.chat_template): ids 0..255 are bytes, then PAD, BOS, EOS and the
# chat template's end-of-turn token.
BYTE_TOKENS = chat_template.BYTE_TOKENS
PAD_ID = chat_template.PAD_ID
BOS_ID = chat_template.BOS_ID
EOS_ID = chat_template.EOS_ID
END_OF_TURN_ID = chat_template.END_OF_TURN_ID
VOCAB_SIZE = 260

# The model's shape: small enough to train on a CPU in milliseconds per step.
HIDDEN_SIZE = 64
INTERMEDIATE_SIZE = 128
NUM_LAYERS = 2
NUM_HEADS = 4
NUM_KV_HEADS = 2
HEAD_DIM = 16
MAX_POSITIONS = 4096

WEIGHTS_FILE = "model.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
TRAINER_STATE_FILE = "trainer_state.json"
TOKENIZER_FILE = "ct_tokenizer.json"
RESUMABLE_FORMAT = "ct-local-resumable-1"

# Model construction seeds torch's global generator; one build at a time keeps that deterministic.
_BUILD_LOCK = threading.Lock()
# transformers resolves its top-level names lazily, and two threads resolving one for the first
# time can see a half-initialised module ("cannot import name 'Qwen3ForCausalLM'"); workers of
# several sub-jobs start together, so every lookup goes through this lock.
_IMPORT_LOCK = threading.Lock()


def _hf(name: str) -> Any:
    """A top-level transformers name, resolved one thread at a time."""
    with _IMPORT_LOCK:
        import transformers

        return getattr(transformers, name)


class ByteTokenizer:
    """UTF-8 bytes as token ids; decoding skips the special ids."""

    vocab_size = VOCAB_SIZE
    pad_token_id = PAD_ID
    bos_token_id = BOS_ID
    eos_token_id = EOS_ID

    def encode(self, text: str, *, add_bos: bool = False) -> list[int]:
        ids = list(text.encode("utf-8"))
        return [BOS_ID, *ids] if add_bos else ids

    def decode(self, ids: list[int]) -> str:
        return bytes(i for i in ids if 0 <= i < BYTE_TOKENS).decode("utf-8", errors="replace")


def name_seed(model_name: str) -> int:
    """A stable 63-bit seed derived from the model name."""
    return int.from_bytes(hashlib.sha256(model_name.encode()).digest()[:8], "big") >> 1


def tiny_config() -> Any:
    return _hf("Qwen3Config")(
        vocab_size=VOCAB_SIZE,
        hidden_size=HIDDEN_SIZE,
        intermediate_size=INTERMEDIATE_SIZE,
        num_hidden_layers=NUM_LAYERS,
        num_attention_heads=NUM_HEADS,
        num_key_value_heads=NUM_KV_HEADS,
        head_dim=HEAD_DIM,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=False,
        pad_token_id=PAD_ID,
        bos_token_id=BOS_ID,
        eos_token_id=EOS_ID,
    )


def build_model(model_name: str) -> torch.nn.Module:
    """A fresh tiny model whose weights depend only on ``model_name``."""
    import torch

    qwen3_for_causal_lm = _hf("Qwen3ForCausalLM")
    with _BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(name_seed(model_name))
        model: torch.nn.Module = qwen3_for_causal_lm(tiny_config())
    return model.float()


def load_pretrained(folder: Path) -> torch.nn.Module:
    """A model from a Hugging Face safetensors folder (one of ours or an external one)."""
    import torch

    model: torch.nn.Module = _hf("AutoModelForCausalLM").from_pretrained(
        str(folder), local_files_only=True, use_safetensors=True, dtype=torch.float32
    )
    return model.to(torch.float32)


def weight_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.safetensors") if p.name != OPTIMIZER_FILE)


def load_weights(model: torch.nn.Module, folder: Path) -> None:
    """Copy a folder's weights into ``model``; the tensor names and shapes must match exactly."""
    from safetensors.torch import load_file

    state: dict[str, Any] = {}
    for path in weight_files(folder):
        state.update(load_file(str(path)))
    if not state:
        raise ValueError(f"no safetensors weights in {folder}")
    own = set(model.state_dict())
    missing, unexpected = own - set(state), set(state) - own
    # An untied head may be absent from folders saved with tied embeddings; anything else is a mismatch.
    # Checked before anything is copied, so a refused load leaves the model as it was.
    if unexpected or [m for m in missing if m != "lm_head.weight"]:
        raise ValueError(
            "checkpoint does not match the model: "
            f"missing {sorted(missing)[:5]}, unexpected {sorted(unexpected)[:5]}"
        )
    model.load_state_dict(state, strict=False)


def flatten_optimizer(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split an optimizer state_dict into safetensors tensors and a JSON-safe remainder."""
    import torch

    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for index, entry in state["state"].items():
        for key, value in entry.items():
            if torch.is_tensor(value):
                tensors[f"state.{index}.{key}"] = value.detach().contiguous().cpu()
            else:
                scalars.setdefault(str(index), {})[key] = value
    groups = [
        {k: list(v) if isinstance(v, tuple) else v for k, v in group.items()}
        for group in state["param_groups"]
    ]
    return tensors, {"scalars": scalars, "param_groups": groups}


def unflatten_optimizer(tensors: dict[str, Any], rest: dict[str, Any]) -> dict[str, Any]:
    """The optimizer state_dict :func:`flatten_optimizer` split (tensors named ``state.<i>.<key>``)."""
    state: dict[int, dict[str, Any]] = {}
    for name, tensor in tensors.items():
        _, index, key = name.split(".", 2)
        state.setdefault(int(index), {})[key] = tensor
    for index, values in rest.get("scalars", {}).items():
        state.setdefault(int(index), {}).update(values)
    groups = []
    for group in rest["param_groups"]:
        fixed = dict(group)
        if isinstance(fixed.get("betas"), list):
            fixed["betas"] = tuple(fixed["betas"])
        groups.append(fixed)
    return {"state": state, "param_groups": groups}


def write_checkpoint(
    folder: Path,
    model: torch.nn.Module,
    *,
    optimizer: torch.optim.Optimizer | None,
    trainer_state: dict[str, Any],
    extra: dict[str, dict[str, torch.Tensor]] | None = None,
) -> None:
    """Write a checkpoint folder atomically; ``optimizer`` None makes it weights-only.

    ``extra`` maps relative file paths to more tensors to store (a LoRA adapter), inside the
    same atomic write.
    """
    from safetensors.torch import save_file

    def save_tensors(tensors: dict[str, torch.Tensor], target: Path) -> None:
        temp = temp_path_for(target)
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(temp))
        atomic_replace(temp, target, durable=False)

    folder.parent.mkdir(parents=True, exist_ok=True)
    # Everything is written into a private staging folder that takes the checkpoint's name in one
    # rename at the end: a reader sees no checkpoint or the whole of it.
    staging = folder.parent / f".{folder.name}.{uuid.uuid4().hex}.partial"
    staging.mkdir()
    try:
        # transformers writes config.json, generation_config.json and model.safetensors; its
        # progress bars would land in the server's console, so they are off.
        _hf("utils").logging.disable_progress_bar()
        model.save_pretrained(str(staging))  # type: ignore[operator]
        atomic_write(staging / TOKENIZER_FILE, json.dumps(tokenizer_description()), durable=False)
        for relative, tensors in (extra or {}).items():
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            save_tensors(tensors, target)
        state = dict(trainer_state)
        if optimizer is not None:
            tensors, rest = flatten_optimizer(optimizer.state_dict())
            if tensors:
                save_tensors(tensors, staging / OPTIMIZER_FILE)
            state["optimizer"] = rest
            state["format"] = RESUMABLE_FORMAT
        atomic_write(staging / TRAINER_STATE_FILE, json.dumps(state, indent=1), durable=False)
        if folder.exists():
            shutil.rmtree(folder)
        atomic_replace(staging, folder, durable=False)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def tokenizer_description() -> dict[str, Any]:
    """What a checkpoint's ``ct_tokenizer.json`` holds: the byte tokenizer, its special ids, the template."""
    return {
        "type": "bytes",
        "vocab_size": VOCAB_SIZE,
        "pad": PAD_ID,
        "bos": BOS_ID,
        "eos": EOS_ID,
        "end_of_turn": END_OF_TURN_ID,
        "chat_template": chat_template.TEMPLATE_NAME,
    }


def checkpoint_template(folder: Path) -> str:
    """The chat template a tiny-model checkpoint folder was saved with.

    A folder without ``ct_tokenizer.json`` or without a template in it (an older checkpoint, or
    weights copied in by hand) gets the built-in template; a template this server does not know is
    refused with a ValueError, rather than served with another one.
    """
    path = folder / TOKENIZER_FILE
    named: Any = None
    if path.is_file():
        try:
            described = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"{TOKENIZER_FILE} of checkpoint {folder.name} is not JSON: {exc}") from None
        named = described.get("chat_template") if isinstance(described, dict) else None
    if named is None:
        return chat_template.TEMPLATE_NAME
    if named != chat_template.TEMPLATE_NAME:
        raise ValueError(
            f"checkpoint {folder.name} was saved with the chat template {named!r}; this server serves "
            f"the tiny model with {chat_template.TEMPLATE_NAME!r} only"
        )
    return str(named)


def read_trainer_state(folder: Path) -> dict[str, Any]:
    path = folder / TRAINER_STATE_FILE
    if not path.is_file():
        return {}
    value = json.loads(path.read_text(encoding="utf-8"))
    return value if isinstance(value, dict) else {}


def load_optimizer_state(optimizer: torch.optim.Optimizer, folder: Path) -> bool:
    """Restore optimizer state from a resumable folder; False when the folder holds none."""
    from safetensors.torch import load_file

    rest = read_trainer_state(folder).get("optimizer")
    if not isinstance(rest, dict):
        return False
    path = folder / OPTIMIZER_FILE
    tensors = load_file(str(path)) if path.is_file() else {}
    optimizer.load_state_dict(unflatten_optimizer(tensors, rest))
    return True


# --- state snapshots (see ct_local.storage.snapshots) -------------------------------------------------


def model_from_config(config: dict[str, Any]) -> torch.nn.Module:
    """An untrained model of the architecture ``config`` (a ``PretrainedConfig.to_dict()``) describes.

    The weights are whatever the constructor draws; a snapshot restore overwrites every one.
    """
    import torch

    values = dict(config)
    model_type = values.pop("model_type")
    built = _hf("AutoConfig").for_model(model_type, **values)
    with _BUILD_LOCK, torch.random.fork_rng(devices=[]):
        model: torch.nn.Module = _hf("AutoModelForCausalLM").from_config(built)
    return model.float()


def write_snapshot(path: Path, tensors: dict[str, torch.Tensor], description: dict[str, Any]) -> None:
    """Write tensors and their JSON description as one safetensors file, in one atomic rename.

    Not fsynced: a killed process never leaves half a file, and what it wrote is in the page cache.
    """
    from safetensors.torch import save

    from ct_core.fs import atomic_write

    # safetensors refuses tensors that share storage (tied weights): each is saved as its own copy.
    seen: set[int] = set()
    owned: dict[str, torch.Tensor] = {}
    for name, tensor in tensors.items():
        value = tensor.detach().cpu().contiguous()
        pointer = value.untyped_storage().data_ptr()
        if pointer in seen:
            value = value.clone()
        seen.add(pointer)
        owned[name] = value
    from ct_local.storage.snapshots import METADATA_KEY

    payload = save(owned, metadata={METADATA_KEY: json.dumps(description)})
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, payload, durable=False)


def read_snapshot(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The tensors and the JSON description of a file :func:`write_snapshot` wrote."""
    from safetensors import safe_open

    from ct_local.storage.snapshots import METADATA_KEY

    tensors: dict[str, torch.Tensor] = {}
    with safe_open(str(path), framework="pt") as f:  # type: ignore[no-untyped-call]
        description = json.loads((f.metadata() or {}).get(METADATA_KEY, "{}"))
        for name in f.keys():  # noqa: SIM118 - safe_open handles have no __iter__
            tensors[name] = f.get_tensor(name)
    return tensors, description if isinstance(description, dict) else {}

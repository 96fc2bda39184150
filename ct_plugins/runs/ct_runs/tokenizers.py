"""A run's tokenizer: the tiny model's bytes, or a real model's own tokenizer and chat template.

Packing (``ct_runs.packing``) turns rows into tokens with a loss mask. For the local server's tiny
model that is UTF-8 bytes and ``ct_core.chat_template``; for a real model it must be that model's
tokenizer and that model's chat template, or the run trains the model on ids that mean nothing to
it. Both are offered here behind one shape, :class:`RunTokenizer`:

- ``encode(text)``: the text's ids, no special tokens added;
- ``conversation_pieces(messages)``: the whole conversation as ``(ids, trained)`` pieces, in order,
  every leading special token included (the tiny model's BOS, or whatever the real template
  renders), ``trained`` true for the content and end-of-turn token(s) of each assistant message of
  ``weight`` 1 (absent means 1) and false for everything else;
- ``prompt_ids(messages)``: the conversation so far and an opened assistant turn (what a model
  continues to answer; label scoring uses it);
- ``text_pieces(text)``: a plain text row for language modelling: the start of sequence (context)
  when the tokenizer has one, the text and the end of sequence (trained);
- ``end_of_turn_ids``: the ids that close an assistant turn in training (what follows a label
  value's last line); ``pad_id``; ``record()``: what a run records of its tokenizer, so a changed
  tokenizer or template gives a new fingerprint.

A run records its tokenizer in its config (:func:`config_value`: ``"byte"`` for the tiny model, as
runs always have, or a real tokenizer's record), and every process that trains or validates it
finds the same tokenizer again from that record (:func:`for_run`).

:func:`for_model` picks one from the run's model as the models route (``client.list_models()``)
describes it: a local server's tiny model reads bytes; a real model served from a folder uses the
tokenizer saved there; any other name is looked up in the local Hugging Face cache. Nothing is
downloaded (``ct_core.data.payloads.load_tokenizer`` reads offline), and transformers is imported
only for a real model.

**Finding what an assistant says in a real template.** The template renders the whole conversation
once; each message's content is then found in that text in order, and the assistant contents of
weight 1 and the end-of-turn text right after them are the trained characters. The end-of-turn
text is learnt from the template itself: what follows an assistant's content when a two-turn
conversation is rendered, up to its trailing whitespace (``<|im_end|>`` for Qwen, ``<|eot_id|>``
for Llama 3). Rendering each prefix of the conversation and diffing would be simpler, but some
templates (Qwen3's) render an earlier assistant turn differently once a later user turn exists, so
a prefix's rendering is not always a prefix of the whole. The text is tokenized whole, as the model
sees it, and a token is trained when its first character is; runs of tokens with the same flag are
the pieces.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ct_core import chat_template
from ct_core.data.payloads import ByteTokenizer, load_tokenizer, model_tokenizer

#: One piece of a conversation: its token ids and whether the model is trained to say them.
Piece = tuple[list[int], bool]
#: The name a run records for the tiny model's byte tokenizer.
BYTE_NAME = "byte"
#: The role that learns, and what a message's weight must be for it to.
TRAINED_ROLE = chat_template.TRAINED_ROLE
TRAINED_WEIGHT = 1
#: The conversation rendered to learn a template's end-of-turn text (any two distinct contents do).
_PROBE = ({"role": "user", "content": "ping"}, {"role": TRAINED_ROLE, "content": "pong"})


class RunTokenizer(Protocol):
    """What packing needs of a tokenizer (see the module's notes)."""

    @property
    def name(self) -> str: ...

    @property
    def pad_id(self) -> int: ...

    @property
    def end_of_turn_ids(self) -> tuple[int, ...]: ...

    def encode(self, text: str) -> list[int]: ...

    def conversation_pieces(self, messages: Sequence[Mapping[str, Any]]) -> list[Piece]: ...

    def prompt_ids(self, messages: Sequence[Mapping[str, Any]]) -> list[int]: ...

    def text_pieces(self, text: str) -> list[Piece]: ...

    def record(self) -> dict[str, Any]: ...


def _is_trained(message: Mapping[str, Any]) -> bool:
    return message.get("role") == TRAINED_ROLE and message.get("weight", TRAINED_WEIGHT) == TRAINED_WEIGHT


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")
    return value


class ByteChat:
    """The tiny model's tokenizer: UTF-8 bytes and ``ct_core.chat_template`` (what packing has
    always produced: BOS, then the template's pieces)."""

    name = BYTE_NAME
    pad_id = chat_template.PAD_ID
    end_of_turn_ids = (chat_template.END_OF_TURN_ID,)

    def encode(self, text: str) -> list[int]:
        return list(_text(text, "a text").encode("utf-8"))

    def conversation_pieces(self, messages: Sequence[Mapping[str, Any]]) -> list[Piece]:
        return [([chat_template.BOS_ID], False), *chat_template.conversation_pieces(messages)]

    def prompt_ids(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        return chat_template.prompt_ids(messages)

    def text_pieces(self, text: str) -> list[Piece]:
        return [([chat_template.BOS_ID], False), (self.encode(text), True), ([chat_template.EOS_ID], True)]

    def record(self) -> dict[str, Any]:
        return {"name": BYTE_NAME, "template": chat_template.TEMPLATE_NAME}


class ModelTokenizer:
    """A real model's tokenizer (a transformers fast tokenizer) and its own chat template."""

    def __init__(self, tokenizer: Any, source: str) -> None:
        self.tokenizer = tokenizer
        self.source = source
        self.name = source
        eos = tokenizer.eos_token_id
        pad = tokenizer.pad_token_id
        if not isinstance(eos, int):
            raise ValueError(f"the tokenizer of {source} names no end-of-sequence token")
        self.eos_id: int = eos
        self.pad_id: int = pad if isinstance(pad, int) else eos
        bos = tokenizer.bos_token_id
        self.bos_id: int | None = bos if isinstance(bos, int) else None
        self._end_of_turn: tuple[str, tuple[int, ...]] | None = None

    # --- plain text ---------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(_text(text, "a text"), add_special_tokens=False))

    def text_pieces(self, text: str) -> list[Piece]:
        head: list[Piece] = [([self.bos_id], False)] if self.bos_id is not None else []
        return [*head, (self.encode(text), True), ([self.eos_id], True)]

    # --- the chat template --------------------------------------------------------------------

    def _render(self, messages: Sequence[Mapping[str, Any]], *, generation: bool = False) -> str:
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(
                f"the tokenizer of {self.source} has no chat template, so a conversation cannot be rendered "
                "for it; train text rows, or use a model whose tokenizer_config.json carries one"
            )
        rendered = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], tokenize=False, add_generation_prompt=generation
        )
        return str(rendered)

    @property
    def end_of_turn_text(self) -> str:
        """What closes an assistant turn in the template, trailing whitespace left out."""
        return self._learn_end_of_turn()[0]

    @property
    def end_of_turn_ids(self) -> tuple[int, ...]:
        return self._learn_end_of_turn()[1]

    def _learn_end_of_turn(self) -> tuple[str, tuple[int, ...]]:
        if self._end_of_turn is None:
            rendered = self._render(_PROBE)
            content = str(_PROBE[-1]["content"])
            end = rendered.rfind(content)
            if end < 0:
                raise ValueError(f"the chat template of {self.source} does not render an assistant's content")
            text = rendered[end + len(content) :].rstrip()
            self._end_of_turn = (text, tuple(self.encode(text)))
        return self._end_of_turn

    def trained_ranges(self, messages: Sequence[Mapping[str, Any]], rendered: str) -> list[tuple[int, int]]:
        """The ``[start, end)`` characters of ``rendered`` the model is trained to say."""
        end_text = self.end_of_turn_text
        ranges = []
        cursor = 0
        for index, message in enumerate(messages):
            content = _text(message.get("content"), f"message {index}'s content")
            found = rendered.find(content, cursor)
            if found < 0 and content.strip():
                # Some templates trim a content's surrounding whitespace.
                content = content.strip()
                found = rendered.find(content, cursor)
            if found < 0:
                raise ValueError(
                    f"message {index}'s content does not appear in the conversation as the chat template "
                    f"of {self.source} renders it, so what it trains on cannot be found"
                )
            stop = found + len(content)
            if _is_trained(message):
                if end_text and rendered.startswith(end_text, stop):
                    stop += len(end_text)
                ranges.append((found, stop))
            cursor = stop
        return ranges

    def conversation_pieces(self, messages: Sequence[Mapping[str, Any]]) -> list[Piece]:
        if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
            raise ValueError("messages must be a list of messages")
        rendered = self._render(messages)
        ranges = self.trained_ranges(messages, rendered)
        try:
            encoded = self.tokenizer(rendered, add_special_tokens=False, return_offsets_mapping=True)
        except NotImplementedError as exc:
            raise ValueError(
                f"the tokenizer of {self.source} is a slow (Python) tokenizer, which cannot say where each "
                "token comes from; a run needs its fast form (tokenizer.json)"
            ) from exc
        pieces: list[Piece] = []
        for token, (start, _) in zip(encoded["input_ids"], encoded["offset_mapping"], strict=True):
            trained = any(low <= start < high for low, high in ranges)
            if pieces and pieces[-1][1] == trained:
                pieces[-1][0].append(int(token))
            else:
                pieces.append(([int(token)], trained))
        return pieces

    def prompt_ids(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        return self.encode(self._render(messages, generation=True))

    def record(self) -> dict[str, Any]:
        template = getattr(self.tokenizer, "chat_template", None) or ""
        return {
            "name": self.name,
            "vocab_size": len(self.tokenizer),
            "chat_template_sha256": hashlib.sha256(str(template).encode("utf-8")).hexdigest(),
        }


def for_model(model_name: str, models: Sequence[Mapping[str, Any]]) -> RunTokenizer:
    """The tokenizer of a run on ``model_name``, given the models route's entries (see the notes).

    Raises ``ValueError`` naming what was looked for when a real model's tokenizer is nowhere."""
    spec = model_tokenizer(model_name, models)
    loaded = load_tokenizer(spec)
    if isinstance(loaded, ByteTokenizer):
        return ByteChat()
    source = spec["path"] if isinstance(spec, dict) else str(spec)
    return ModelTokenizer(loaded, str(source))


def for_client(client: Any, model_name: str) -> RunTokenizer:
    """:func:`for_model` with the models ``client`` (a ``CortexTrainingClient``) lists."""
    return for_model(model_name, client.list_models())


def config_value(tokenizer: RunTokenizer) -> str | dict[str, Any]:
    """What a run's config records of its tokenizer: ``"byte"`` for the tiny model's (the name runs
    have always recorded, so their fingerprints stay as they were), else the tokenizer's record."""
    return BYTE_NAME if isinstance(tokenizer, ByteChat) else tokenizer.record()


def for_run(record: Mapping[str, Any]) -> RunTokenizer:
    """The tokenizer a run packs with, from what its config recorded (:func:`config_value`).

    A real model's tokenizer is loaded again, offline, from where it was found when the run
    started; one whose record no longer matches (another vocabulary or chat template in that
    folder) is refused: the run's batches could not be replayed as they were."""
    recorded = (record.get("config") or {}).get("tokenizer", BYTE_NAME)
    return _recorded(json.dumps(recorded, sort_keys=True))


@functools.lru_cache(maxsize=8)
def _recorded(key: str) -> RunTokenizer:
    recorded = json.loads(key)
    if recorded == BYTE_NAME:
        return ByteChat()
    if not isinstance(recorded, dict) or not isinstance(recorded.get("name"), str):
        raise ValueError(f"a run's recorded tokenizer must be {BYTE_NAME!r} or a tokenizer's record: {key}")
    found = ModelTokenizer(load_tokenizer({"path": recorded["name"]}), recorded["name"])
    if found.record() != recorded:
        raise ValueError(
            f"the tokenizer at {recorded['name']} has changed since the run started (recorded {key}, "
            f"found {json.dumps(found.record(), sort_keys=True)}), so the run's batches cannot be replayed "
            "as they were: put the model's files back as they were, or start a new run"
        )
    return found

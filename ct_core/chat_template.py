"""The chat template of the built-in tiny model: how a conversation becomes tokens, trained and served.

A model's chat template is part of the model. This module defines the tiny byte-level model's template
once, for both sides: a managed run renders its rows with it (``ct_runs``, a client of the service),
and a deployment of the tiny model renders the messages of ``/chat/completions`` with it and stops at
its end-of-turn token (``ct_local``). Real models use their tokenizer's own template instead.

The byte vocabulary: ids 0-255 are UTF-8 bytes, then four special tokens, PAD (256), BOS (257), EOS
(258) and END_OF_TURN (259). A conversation is BOS, then each turn as::

    <|role|>\\n content <END_OF_TURN> \\n

``role`` is ``system``, ``user`` or ``assistant``; the marker and content are their UTF-8 bytes, and
the end of a turn is the single special token 259 (spelled ``<|end|>`` where a conversation is shown
as text). A content that contains the characters ``<|end|>`` stays bytes, so no message can end a turn
early. A model answering is given the conversation so far followed by ``<|assistant|>\\n``
(:func:`prompt_ids`) and its answer ends at END_OF_TURN (or EOS).

What a model learns to say in training: the content and the end-of-turn token of each assistant turn
of weight 1 (the default); role markers, the newline after each turn, system and user turns and
assistant turns of weight 0 are context (:func:`conversation_pieces` says which is which).

Pure: no torch, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

#: The template's name: what a checkpoint of the tiny model carries and a run records.
TEMPLATE_NAME = "ct-byte-chat-2"
#: The roles a message may have.
ROLES = ("system", "user", "assistant")
#: The role whose turns are training targets and which a deployment answers as.
TRAINED_ROLE = "assistant"

#: The byte vocabulary's special tokens (ids 0-255 are bytes).
BYTE_TOKENS = 256
PAD_ID = 256
BOS_ID = 257
EOS_ID = 258
#: The end-of-turn token: closes every turn; a model generating a turn stops at it.
END_OF_TURN_ID = 259
#: How the end-of-turn token is spelled when a conversation is shown as text.
END_OF_TURN = "<|end|>"
#: The tokens a deployment of the tiny model stops at: the end of the turn, or of the sequence.
STOP_IDS = (END_OF_TURN_ID, EOS_ID)
#: The special tokens by id, as a logprobs entry or a text rendering names them.
SPECIAL_TOKENS: Mapping[int, str] = MappingProxyType(
    {PAD_ID: "<|pad|>", BOS_ID: "<|bos|>", EOS_ID: "<|eos|>", END_OF_TURN_ID: END_OF_TURN}
)

#: The same template in the Jinja form a Hugging Face tokenizer folder carries (`chat_template` of its
#: tokenizer_config.json), for a tokenizer whose added tokens are SPECIAL_TOKENS: with it,
#: `apply_chat_template` gives :func:`conversation_ids` (and :func:`prompt_ids` with
#: `add_generation_prompt`) for conversations whose contents do not spell a special token.
JINJA = (
    "<|bos|>{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}<|end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

#: One piece of a rendered conversation: its token ids and whether the model is trained to say them.
Piece = tuple[list[int], bool]


def role_marker(role: str) -> str:
    """The text that opens a turn of ``role``: ``<|role|>`` and a newline."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    return f"<|{role}|>\n"


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if not isinstance(content, str):
        raise ValueError(f"a message's content must be a string, got {type(content).__name__}")
    return content


def turn_pieces(message: Mapping[str, Any]) -> list[Piece]:
    """One message as pieces: its marker, its content, the end-of-turn token, a newline.

    The content and the end-of-turn token are trained when the message is an assistant message of
    ``weight`` 1 (absent means 1); everything else is context.
    """
    role = message.get("role")
    marker = role_marker(role if isinstance(role, str) else repr(role))
    trained = role == TRAINED_ROLE and message.get("weight", 1) == 1
    return [
        (list(marker.encode("utf-8")), False),
        (list(_content(message).encode("utf-8")), trained),
        ([END_OF_TURN_ID], trained),
        ([ord("\n")], False),
    ]


def conversation_pieces(messages: Sequence[Mapping[str, Any]]) -> list[Piece]:
    """Every piece of a conversation, in order, BOS not included (see :func:`turn_pieces`)."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ValueError("messages must be a list of messages")
    return [piece for message in messages for piece in turn_pieces(message)]


def conversation_ids(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """BOS and the whole conversation, every turn closed: what a run trains on."""
    return [BOS_ID, *(token for ids, _ in conversation_pieces(messages) for token in ids)]


def prompt_ids(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """What a model continues to answer: BOS, the conversation so far and an opened assistant turn."""
    return [*conversation_ids(messages), *role_marker(TRAINED_ROLE).encode("utf-8")]


def token_text(token: int) -> str:
    """One token as text: its byte (escaped when it is not a character on its own), or a special's name."""
    if 0 <= token < BYTE_TOKENS:
        return bytes([token]).decode("utf-8", errors="backslashreplace")
    return SPECIAL_TOKENS.get(token, f"<|special_{token}|>")


def render(messages: Sequence[Mapping[str, Any]]) -> str:
    """The conversation as text (BOS left out, the end-of-turn token spelled ``<|end|>``)."""
    parts = []
    for ids, _ in conversation_pieces(messages):
        if ids == [END_OF_TURN_ID]:
            parts.append(END_OF_TURN)
        else:
            parts.append(bytes(ids).decode("utf-8"))
    return "".join(parts)


def generation_prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    """:func:`prompt_ids` as text: the conversation so far and an opened assistant turn."""
    return render(messages) + role_marker(TRAINED_ROLE)


def describe() -> dict[str, Any]:
    """The template as a record shows it: its name, roles, turn layout and end-of-turn token."""
    return {
        "name": TEMPLATE_NAME,
        "roles": list(ROLES),
        "turn": "<|role|>\\n{content}<|end|>\\n",
        "end_of_turn": END_OF_TURN,
        "end_of_turn_id": END_OF_TURN_ID,
        "stop_token_ids": list(STOP_IDS),
    }

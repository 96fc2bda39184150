"""The chat template of the tiny built-in byte model: how a conversation becomes text and tokens.

Defined here once, so training (ct_runs.packing), dataset builds (ct_runs.datasets: a chat row's
text, which the leakage gates compare, is its rendered conversation) and, later, a deployment that
serves the trained model all render a conversation the same way.

A conversation is rendered turn by turn, each turn as::

    <|role|>\\n content <|end|>\\n

with ``role`` one of ``system``, ``user`` and ``assistant`` and ``<|end|>`` the end-of-turn marker.
In tokens (the byte vocabulary: ids 0-255 are UTF-8 bytes) the conversation starts with BOS, and
every piece is its UTF-8 bytes. A model answering a conversation is prompted with the turns so far
followed by ``<|assistant|>\\n`` (:func:`generation_prompt`) and stops at ``<|end|>``.

What a model learns to say: the content and the end-of-turn marker of each assistant turn whose
weight is 1 (the default). Role markers, the newline after a marker, system and user turns, and
assistant turns of weight 0 are context: they are read, never trained on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Name of this template, as a dataset build and a run record it.
TEMPLATE = "ct-byte-chat-1"
#: The roles a message may have, in the order documented.
ROLES = ("system", "user", "assistant")
#: Ends every turn; a model generating an assistant turn stops at it.
END_OF_TURN = "<|end|>"
#: The role that learns: only its turns are training targets.
TRAINED_ROLE = "assistant"


def role_marker(role: str) -> str:
    """The text that opens a turn of ``role``: ``<|role|>`` and a newline."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    return f"<|{role}|>\n"


def turn_pieces(message: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """One message as ``(text, trained)`` pieces: the marker, the content, the end of turn, a newline.

    ``trained`` is true for the content and the end-of-turn marker of an assistant message whose
    ``weight`` is 1 (absent means 1); everything else is context.
    """
    role = message["role"]
    content = message["content"]
    if not isinstance(content, str):
        raise ValueError(f"a message's content must be a string, got {type(content).__name__}")
    trained = role == TRAINED_ROLE and message.get("weight", 1) == 1
    return [(role_marker(role), False), (content, trained), (END_OF_TURN, trained), ("\n", False)]


def conversation_pieces(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, bool]]:
    """Every piece of a conversation, in order (see :func:`turn_pieces`)."""
    return [piece for message in messages for piece in turn_pieces(message)]


def render(messages: Sequence[Mapping[str, Any]]) -> str:
    """The conversation as text, every turn closed by the end-of-turn marker."""
    return "".join(text for text, _ in conversation_pieces(messages))


def generation_prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text a model continues to answer: the conversation so far and an opened assistant turn."""
    return render(messages) + role_marker(TRAINED_ROLE)

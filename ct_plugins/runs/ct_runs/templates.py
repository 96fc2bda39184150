"""How each dataset format becomes a conversation of the tiny model's chat template.

The template itself (role markers, the end-of-turn token, what is trained) is the model's and lives
in :mod:`ct_core.chat_template`, where a deployment of the model reads it too: a run renders with the
same template the deployment serves with. This module says what each row format is as a
conversation:

- **chat** rows are their messages, as they are.
- **prompt/completion** rows are one user turn (the prompt) and the assistant's answer (the
  completion): a deployment answers the prompt sent as a user message with the completion.
- **labels** rows (with label fields selected) are one user turn (the text) and the assistant's
  answer, one ``field: value`` line per selected field with a value, in the run's order: a deployed
  label model answers a text with those lines.
- **text** rows have no template: they are language modelling, ``BOS text EOS`` (ct_runs.packing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ct_core import chat_template
from ct_core.chat_template import (
    END_OF_TURN,
    END_OF_TURN_ID,
    ROLES,
    TEMPLATE_NAME,
    TRAINED_ROLE,
    conversation_pieces,
    generation_prompt,
    render,
    role_marker,
)
from ct_runs.tokenizers import ByteChat, RunTokenizer

__all__ = [
    "END_OF_TURN",
    "END_OF_TURN_ID",
    "LABEL_SEPARATOR",
    "ROLES",
    "TEMPLATE",
    "TEMPLATE_NAME",
    "TRAINED_ROLE",
    "conversation_pieces",
    "generation_prompt",
    "label_line",
    "label_messages",
    "model_template",
    "prompt_completion_messages",
    "render",
    "role_marker",
    "template_record",
]

#: The template's name, as a dataset build and a run record it.
TEMPLATE = TEMPLATE_NAME
#: Between a label field's name and its value in a labels answer.
LABEL_SEPARATOR = ": "
#: How a run renders each dataset format (see the module's notes), as a record shows it.
LAYOUTS = {
    "chat": "the messages as they are",
    "prompt_completion": "the prompt as the user turn, the completion as the assistant's answer",
    "labels": "the text as the user turn; the answer is one 'field: value' line per label field",
    "text": "no template: BOS, the text, EOS (language modelling)",
}


def prompt_completion_messages(prompt: Any, completion: Any) -> list[dict[str, Any]]:
    """A prompt/completion row as a conversation: the user asks the prompt, the assistant completes."""
    return [{"role": "user", "content": prompt}, {"role": TRAINED_ROLE, "content": completion}]


def label_line(field: str, value: Any) -> str:
    """One label of a labels answer: ``field: value``."""
    if not isinstance(field, str) or not isinstance(value, str):
        raise ValueError(f"label {field!r} must be a string field with a string value, got {value!r}")
    return f"{field}{LABEL_SEPARATOR}{value}"


def label_messages(text: Any, labels: Mapping[str, Any], label_fields: Sequence[str]) -> list[dict[str, Any]]:
    """A labels row as a conversation: the text, then one ``field: value`` line per field with a value."""
    lines = [label_line(field, labels[field]) for field in label_fields if labels.get(field) is not None]
    return [{"role": "user", "content": text}, {"role": TRAINED_ROLE, "content": "\n".join(lines)}]


def model_template(tokenizer: RunTokenizer) -> dict[str, Any] | None:
    """The chat template a model trained with the run's ``tokenizer`` (ct_runs.tokenizers) answers
    in, when it is a real model's own: the tokenizer it comes with (a folder or a cached name), its
    end-of-turn text and the template's digest. None for the tiny model's bytes, whose template is
    the one described here."""
    if isinstance(tokenizer, ByteChat):
        return None
    record = tokenizer.record()
    return {
        "name": "the model's own",
        "tokenizer": record["name"],
        "end_of_turn": getattr(tokenizer, "end_of_turn_text", None),
        "chat_template_sha256": record.get("chat_template_sha256"),
    }


def template_record(dataset_format: str) -> dict[str, Any] | None:
    """What a run on a dataset of ``dataset_format`` records as its model's template (None: text rows,
    which use none): the template's name, end-of-turn token and how the format's rows were rendered."""
    if dataset_format not in LAYOUTS:
        raise ValueError(f"unknown dataset format {dataset_format!r}; known: {', '.join(LAYOUTS)}")
    if dataset_format == "text":
        return None
    return {**chat_template.describe(), "layout": LAYOUTS[dataset_format]}

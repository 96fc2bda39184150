"""The row formats a dataset build accepts (chat, prompt/completion, text, labels), detected per file
and echoed in the Dataset record; every malformed row and a file mixing formats refused at its line.

The first tests read real JSONL files with the build function itself; the last ones upload files to
a real local server with the runs service embedded, through the SDK and through ``ct datasets
build``, as a user does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ct_runs import datasets, templates
from ct_runs.datasets import ACCEPTED_ROWS, DatasetOptions, build_dataset
from ct_runs.errors import RunsRefusal
from ct_testing.plugin import run_ct

from ct_core import CortexTrainingClient

DATABASE, SCHEMA = "RUNS_DB", "PUBLIC"


def jsonl(rows: list[Any]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")


def chat(i: int, **assistant: Any) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "system", "content": "You count."},
            {"role": "user", "content": f"What follows {i} {'x' * (i % 7)}?"},
            {"role": "assistant", "content": f"{i + 1}", **assistant},
        ]
    }


def chat_rows(count: int = 20) -> list[dict[str, Any]]:
    # Distinct enough that no two conversations are near duplicates of each other.
    return [
        {
            "messages": [
                {"role": "user", "content": f"word {i}: {' '.join(f'w{i}_{k}' for k in range(8))}"},
                {"role": "assistant", "content": f"answer {i} {i * 7919 % 1000}"},
            ]
        }
        for i in range(count)
    ]


def pc_rows(count: int = 20) -> list[dict[str, Any]]:
    return [
        {"prompt": f"Spell {i} {' '.join(f'p{i}_{k}' for k in range(8))}:", "completion": f" s{i}"}
        for i in range(count)
    ]


def text_rows(count: int = 20) -> list[dict[str, Any]]:
    return [{"text": " ".join(f"t{i}_{k}" for k in range(10)), "topic": "ab"[i % 2]} for i in range(count)]


def refused(content: bytes, options: DatasetOptions | None = None) -> RunsRefusal:
    with pytest.raises(RunsRefusal) as caught:
        build_dataset(content, options or DatasetOptions())
    assert caught.value.code == "invalid_argument"
    return caught.value


# --- detection and echo --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "options", "expected"),
    [
        (chat_rows(), DatasetOptions(), "chat"),
        (pc_rows(), DatasetOptions(), "prompt_completion"),
        (text_rows(), DatasetOptions(), "text"),
        (text_rows(), DatasetOptions(label_fields=("topic",)), "labels"),
        # A text field named after a prompt/completion key reads that key as plain text.
        (pc_rows(), DatasetOptions(text_field="prompt"), "text"),
    ],
)
def test_each_format_is_detected_and_echoed(
    rows: list[dict[str, Any]], options: DatasetOptions, expected: str
) -> None:
    build = build_dataset(jsonl(rows), options)
    assert build.format == expected
    assert build.summary()["format"] == expected
    assert build.splits["train"]["rows"] + build.splits["validation"]["rows"] == len(rows)
    assert build.violations == []


def test_a_chat_row_is_stored_with_its_messages_and_its_rendered_text() -> None:
    row = chat(3, weight=1)
    build = build_dataset(jsonl([row]), DatasetOptions())
    [stored] = build.train + build.validation
    assert stored["messages"] == row["messages"]
    assert stored["text"] == templates.render(row["messages"])
    assert stored["text"].startswith("<|system|>\nYou count.<|end|>\n<|user|>\n")
    assert build.splits["train"]["tokens"] + build.splits["validation"]["tokens"] == len(
        stored["text"].encode()
    )


def test_a_prompt_completion_row_is_stored_with_both_and_their_text() -> None:
    build = build_dataset(jsonl([{"prompt": "2+2=", "completion": "4"}]), DatasetOptions())
    [stored] = build.train + build.validation
    assert stored == {"text": "2+2=4", "labels": {}, "prompt": "2+2=", "completion": "4"}


def test_the_leakage_gates_compare_rendered_conversations() -> None:
    rows = chat_rows(30)
    leaky = build_dataset(jsonl(rows + rows), DatasetOptions())
    assert {v["gate"] for v in leaky.violations} == {"exact_duplicate"}
    # The same user turns with other answers are other conversations, and the fingerprints move.
    other = [json.loads(json.dumps(row)) for row in rows]
    for row in other:
        row["messages"][1]["content"] += " and more words after it"
    clean = build_dataset(jsonl(rows), DatasetOptions())
    moved = build_dataset(jsonl(other), DatasetOptions())
    assert clean.fingerprints["train"] != moved.fingerprints["train"]
    assert clean.fingerprints["validation"] != moved.fingerprints["validation"]


def test_prompt_completion_rows_are_gated_on_prompt_and_completion() -> None:
    rows = pc_rows(30)
    leaky = build_dataset(jsonl(rows + rows), DatasetOptions())
    assert {v["gate"] for v in leaky.violations} == {"exact_duplicate"}


# --- refusals ------------------------------------------------------------------------------------

GOOD_CHAT = json.dumps(chat(1))


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [
        ('{"body": "x"}', "messages", "the row has no 'messages', which every row of this chat file has"),
        ('{"messages": []}', "messages", "non-empty array of messages, not an empty array"),
        ('{"messages": "hi"}', "messages", "not a string"),
        ('{"messages": ["hi"]}', "messages", "message 1 must be an object, not a string"),
        (
            '{"messages": [{"role": "bot", "content": "a"}, {"role": "assistant", "content": "b"}]}',
            "messages",
            "message 1 has the role 'bot'",
        ),
        (
            '{"messages": [{"role": "assistant"}]}',
            "messages",
            "content of message 1 must be a string, not null",
        ),
        (
            '{"messages": [{"role": "assistant", "content": " "}]}',
            "messages",
            "content of message 1 is empty",
        ),
        (
            '{"messages": [{"role": "user", "content": "a", "weight": 1}, '
            '{"role": "assistant", "content": "b"}]}',
            "messages",
            "message 1 is a user message with a weight",
        ),
        ('{"messages": [{"role": "assistant", "content": "b", "weight": 2}]}', "messages", "0 or 1, not 2"),
        (
            '{"messages": [{"role": "assistant", "content": "b", "weight": true}]}',
            "messages",
            "0 or 1, not True",
        ),
        (
            '{"messages": [{"role": "assistant", "content": "b", "name": "x"}]}',
            "messages",
            "message 1 has the key 'name'",
        ),
        (
            '{"messages": [{"role": "user", "content": "a"}, '
            '{"role": "assistant", "content": "b", "weight": 0}]}',
            "messages",
            "no assistant message of weight 1",
        ),
        (
            '{"messages": [{"role": "user", "content": "only a question"}]}',
            "messages",
            "no assistant message",
        ),
    ],
)
def test_a_malformed_chat_row_is_refused_at_its_line(bad: str, field: str, words: str) -> None:
    refusal = refused(f"{GOOD_CHAT}\n{GOOD_CHAT.replace('1', '5')}\n\n{bad}\n".encode())
    assert refusal.message.startswith("line 4: "), refusal.message
    assert words in refusal.message, refusal.message
    assert refusal.field == field


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [
        ('{"prompt": "a"}', "completion", "'completion' is missing"),
        ('{"completion": "a"}', "prompt", "'prompt' is missing"),
        ('{"prompt": 1, "completion": "a"}', "prompt", "'prompt' must be a string, not a number"),
        ('{"prompt": "a", "completion": ""}', "completion", "'completion' is empty"),
        ('{"other": "a"}', "completion", "neither 'prompt' nor 'completion'"),
    ],
)
def test_a_malformed_prompt_completion_row_is_refused_at_its_line(bad: str, field: str, words: str) -> None:
    refusal = refused(f'{{"prompt": "1+1=", "completion": "2"}}\n{bad}\n'.encode())
    assert refusal.message.startswith("line 2: "), refusal.message
    assert words in refusal.message, refusal.message
    assert refusal.field == field


def test_a_row_of_no_accepted_shape_names_every_shape_with_an_example_and_the_limits() -> None:
    refusal = refused(b'{"question": "?", "answer": "!"}\n')
    assert refusal.message.startswith("line 1: ")
    assert refusal.message.endswith(ACCEPTED_ROWS)
    for example in (
        '{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]}',
        '{"prompt": "2+2=", "completion": "4"}',
        '{"text": "A sentence to learn."}',
        '{"text": "Clear skies all day.", "topic": "weather"}',
    ):
        assert example in refusal.message
        json.loads(example)  # every example is itself a valid row
    assert "512 MiB a file" in refusal.message and "1000000 rows" in refusal.message
    assert "1 MiB of text a row" in refusal.message
    assert datasets.MAX_SOURCE_BYTES == 512 * 1024 * 1024


@pytest.mark.parametrize(
    ("first", "second", "words"),
    [
        (GOOD_CHAT, '{"text": "plain"}', "this is a text row, but line 1 is a chat row"),
        ('{"text": "plain"}', GOOD_CHAT, "this is a chat row, but line 1 is a text row"),
        (
            '{"prompt": "a", "completion": "b"}',
            GOOD_CHAT,
            "this is a chat row, but line 1 is a prompt/completion",
        ),
        (GOOD_CHAT, '{"prompt": "a", "completion": "b"}', "prompt/completion row, but line 1 is a chat row"),
    ],
)
def test_a_file_mixing_formats_is_refused_at_the_first_row_of_another_format(
    first: str, second: str, words: str
) -> None:
    refusal = refused(f"{first}\n{first.replace('b', 'c')}\n{second}\n".encode())
    assert refusal.message.startswith("line 3: "), refusal.message
    assert words in refusal.message and "a file holds rows of one format" in refusal.message
    assert refusal.message.endswith(ACCEPTED_ROWS)


def test_label_fields_need_text_rows() -> None:
    refusal = refused(jsonl(chat_rows(2)), DatasetOptions(label_fields=("topic",)))
    assert refusal.message.startswith("line 1: label_field applies to text rows")
    assert refusal.field == "label_field"


def test_a_conversation_over_the_row_limit_is_refused() -> None:
    long = {"messages": [{"role": "user", "content": "a" * (1 << 20)}, {"role": "assistant", "content": "b"}]}
    refusal = refused(jsonl([chat(1), long]))
    assert refusal.message.startswith("line 2: the rendered conversation is ")
    assert "the limit is 1048576 bytes" in refusal.message


# --- through a real server -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "label_fields", "expected"),
    [
        (chat_rows(), [], "chat"),
        (pc_rows(), [], "prompt_completion"),
        (text_rows(), [], "text"),
        (text_rows(), ["topic"], "labels"),
    ],
)
def test_the_service_builds_each_format_and_echoes_it(
    client: CortexTrainingClient, tmp_path: Path, rows: list[Any], label_fields: list[str], expected: str
) -> None:
    path = tmp_path / "data.jsonl"
    path.write_bytes(jsonl(rows))
    built = client.datasets.build(path, label_fields=label_fields, wait=True, timeout=600)
    assert built["status"] == "succeeded", built
    assert built["format"] == expected
    assert client.datasets.get(built["dataset_id"])["format"] == expected


def test_the_service_refuses_a_mixed_file_at_its_line(client: CortexTrainingClient) -> None:
    built = client.datasets.build(
        jsonl([chat(1), chat(2), {"prompt": "a", "completion": "b"}]), wait=True, timeout=600
    )
    assert built["status"] == "failed"
    assert built["error"]["code"] == "invalid_argument"
    message = built["error"]["message"]
    assert message.startswith("line 3: this is a prompt/completion row, but line 1 is a chat row")
    assert message.endswith(ACCEPTED_ROWS)


def test_ct_datasets_build_of_a_chat_file_echoes_the_format(
    server: Any, ct_home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_bytes(jsonl(chat_rows()))
    result = run_ct(
        "--base-url", server.base_url, "--database", DATABASE,
        "datasets", "build", str(path), "--wait", "--timeout", "120",
        plugins="runs",
    )  # fmt: skip
    assert result.returncode == 0, result
    assert json.loads(result.stdout)["format"] == "chat"


@pytest.mark.parametrize("rows", [chat_rows(24), pc_rows(24)], ids=["chat", "prompt_completion"])
def test_a_short_run_trains_on_each_new_format_to_its_end(
    client: CortexTrainingClient, kit: Any, rows: list[dict[str, Any]]
) -> None:
    built = client.datasets.build(jsonl(rows), wait=True, timeout=600)
    assert built["status"] == "succeeded", built
    run = client.runs.start(kit.small_spec(built["dataset_id"], epochs=1))
    done = client.runs.wait(run["run_id"], timeout=900)
    assert done["status"] == "succeeded", done.get("error")
    assert done["step"] == done["total_steps"] > 0
    series = client.runs.metrics(done["run_id"])["series"]
    assert [step for step, _ in series["train_loss"]] == list(range(1, done["total_steps"] + 1))
    assert all(0 < loss < 100 for _, loss in series["train_loss"] + series["val_loss"])


def test_the_template_a_run_records_names_the_template_and_its_end_of_turn() -> None:
    for kind in ("chat", "prompt_completion", "labels"):
        record = templates.template_record(kind)
        assert record is not None
        assert record["name"] == templates.TEMPLATE == "ct-byte-chat-2"
        assert (record["end_of_turn"], record["end_of_turn_id"]) == ("<|end|>", 259)
        assert record["layout"] == templates.LAYOUTS[kind]
    # Plain text rows are language modelling: no template.
    assert templates.template_record("text") is None
    with pytest.raises(ValueError, match="unknown dataset format"):
        templates.template_record("csv")

"""`make demo`'s fine-tune-and-chat part: the bundled task is learnable and really held out, and the
demo's targets and table say what they should.

The demo itself runs end to end in tests/cli/test_demo.py (as `make demo` runs it, with its own
local server): that test checks the targets the demo prints, the fine-tuned model answering at
least 90 % of the held-out questions exactly and the base model at most 20 %. The run is seeded and
decoding is greedy, so the answers do not depend on the machine's load; the margin is in the task
(the tiny model answers every held-out question well before the run's last step).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "data"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs: dataclasses look their module up by name.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


demo = _load("ct_examples_demo", ROOT / "examples" / "demo.py")
make_shout = _load("ct_examples_make_shout", DATA / "make_shout.py")


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _turns(row: dict[str, Any]) -> dict[str, str]:
    return {message["role"]: message["content"] for message in row["messages"]}


def test_the_bundled_files_are_what_the_generator_writes() -> None:
    for path, text in make_shout.contents().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name}: run examples/data/make_shout.py"


def test_the_held_out_questions_are_not_in_the_training_file_and_follow_its_rule() -> None:
    train = [_turns(row) for row in _rows(demo.TASK_FILE)]
    held_out = demo.held_out_questions()
    assert len(train) == make_shout.TRAIN_ROWS and len(held_out) == make_shout.HELDOUT_ROWS
    trained_questions = {turns["user"] for turns in train}
    trained_words = {turns["user"].split()[-1] for turns in train}
    for question, answer in held_out:
        word = question.split()[-1]
        assert question not in trained_questions and word not in trained_words, question
        assert answer == word.upper() and question == f"shout {word}"
    for turns in train:
        assert turns["assistant"] == turns["user"].removeprefix("shout ").upper()


def _outcome(base: list[str], tuned: list[str]) -> Any:
    questions = [f"shout {w}" for w in ("abc", "xyz", "kqz", "mno", "pqr")]
    rows = [
        demo.Asked(question, question.split()[-1].upper(), b, t)
        for question, b, t in zip(questions, base, tuned, strict=True)
    ]
    return demo.Outcome(rows=rows, plot=Path("run.png"))


def test_the_targets_refuse_a_fine_tune_that_did_not_learn_or_a_base_that_already_knew() -> None:
    right = ["ABC", "XYZ", "KQZ", "MNO", "PQR"]
    noise = ["\x15\ufffd", "", "abc", "XY", "\u04fd"]
    demo.check_targets(_outcome(noise, right))
    # 4 of 5 (80 %) is under the fine-tuned target of 90 %.
    with pytest.raises(demo.DemoError, match=r"at least 90%.* answered 80% and 0%"):
        demo.check_targets(_outcome(noise, [*right[:4], "PQ"]))
    # 2 of 5 (40 %) is over the base model's ceiling of 20 %.
    with pytest.raises(demo.DemoError, match=r"at most 20%.* answered 100% and 40%"):
        demo.check_targets(_outcome([*right[:2], *noise[2:]], right))


def test_the_side_by_side_table_shows_every_answer_and_each_accuracy() -> None:
    table = demo.side_by_side(_outcome(["\x15\ufffd", "XYZ", "abc", "", "\u04fd"], ["ABC"] * 5).rows)
    lines = table.splitlines()
    assert "base model (untrained)" in lines[0] and "fine-tuned" in lines[0]
    # A model's bytes that are no text are shown escaped, so the columns stay aligned.
    assert "\\x15\\ufffd" in table and "\ufffd" not in table
    assert lines[-1].split() == ["accuracy", "1/5", "=", "20%", "1/5", "=", "20%"]

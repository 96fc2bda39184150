"""Write the demo's "shout" task: `python examples/data/make_shout.py` (the files are committed).

The task: the user sends ``shout`` and a three-letter word, the assistant answers the word in
capital letters (``shout kqz`` -> ``KQZ``). The words are random letters, so nothing can be
answered from memory: a model that answers a word it never saw has learned the rule (copy the
letters, change their case). Two files of OpenAI chat rows, in this folder:

- ``shout.jsonl``: 400 rows to fine-tune on (a dataset build keeps 10 % of them for validation);
- ``shout-heldout.jsonl``: 40 more rows whose words appear nowhere in ``shout.jsonl``, the
  questions `make demo` asks the base model and the fine-tuned one.

The same seed writes the same files on every machine (Python's ``random`` is stable across versions
for ``Random.choice`` over a sequence).
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAIN_FILE = HERE / "shout.jsonl"
HELDOUT_FILE = HERE / "shout-heldout.jsonl"
TRAIN_ROWS = 400
HELDOUT_ROWS = 40
WORD_LETTERS = 3
SEED = 2026


def question(word: str) -> str:
    """What the user sends for ``word``."""
    return f"shout {word}"


def answer(word: str) -> str:
    """What the assistant is taught to answer."""
    return word.upper()


def row(word: str) -> dict[str, object]:
    return {
        "messages": [
            {"role": "user", "content": question(word)},
            {"role": "assistant", "content": answer(word)},
        ]
    }


def words(count: int, seed: int = SEED) -> list[str]:
    """``count`` distinct random lowercase words, in the order they were drawn."""
    rng = random.Random(seed)
    drawn: list[str] = []
    seen: set[str] = set()
    while len(drawn) < count:
        word = "".join(rng.choice(string.ascii_lowercase) for _ in range(WORD_LETTERS))
        if word not in seen:
            seen.add(word)
            drawn.append(word)
    return drawn


def contents() -> dict[Path, str]:
    """Each file's text: the first TRAIN_ROWS words train, the next HELDOUT_ROWS are held out."""
    drawn = words(TRAIN_ROWS + HELDOUT_ROWS)
    lines = [json.dumps(row(word)) + "\n" for word in drawn]
    return {TRAIN_FILE: "".join(lines[:TRAIN_ROWS]), HELDOUT_FILE: "".join(lines[TRAIN_ROWS:])}


def main() -> None:
    for path, text in contents().items():
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

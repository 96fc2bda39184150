"""`client.datasets`: build a dataset from a JSONL file and read the build (docs/runs.md).

A build uploads the file as it is (operation buildDataset, body `application/x-ndjson`); the
service splits, fingerprints and checks it for leakage in the background, so the answer is the
build in status `building`. `wait` (or `build(..., wait=True)`) polls getDataset until the build
settles as `succeeded` or `failed`; a failed build is returned, not raised, because its
violation report is the useful part.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ct_core.constants import DATASET_VAL_FRACTION_MAX
from ct_core.errors import ValidationError
from ct_core.operations import runs as _runs
from ct_core.runs.polling import DATASET_BUILDING, RUNS_RULE, answer_object, upload_rule, wait_until

#: The service's defaults, repeated so a call that leaves them out says what it gets.
DEFAULT_TEXT_FIELD = "text"
DEFAULT_VAL_FRACTION = 0.1
DEFAULT_SEED = 0


def read_source(source: str | os.PathLike[str] | bytes | bytearray | memoryview) -> bytes:
    """The bytes of a JSONL source: given as bytes, or read from a file path.

    The rows are checked by the service (which names the line at fault); here only what makes an
    upload pointless is refused: a missing or unreadable file, or nothing to send.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        data, where = bytes(source), "the dataset source"
    elif isinstance(source, str | os.PathLike):
        path = Path(source).expanduser()
        where = f"dataset file {path}"
        if path.is_dir():
            raise ValidationError(f"{where} is a folder; pass a JSONL file")
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ValidationError(f"{where} does not exist") from None
        except OSError as exc:
            raise ValidationError(f"cannot read {where}: {exc.strerror or exc}") from None
    else:
        raise ValidationError(f"a dataset source is a file path or bytes, got {type(source).__name__}")
    if not data.strip():
        raise ValidationError(f"{where} is empty; a build needs at least one JSONL row")
    return data


def _label_fields(label_fields: Iterable[str] | str) -> list[str]:
    # One name given as a string means that name, not its letters.
    names = [label_fields] if isinstance(label_fields, str) else list(label_fields)
    bad = [name for name in names if not isinstance(name, str) or not name.strip()]
    if bad:
        raise ValidationError(f"label fields must be non-empty strings, got {bad!r}")
    return names


def check_val_fraction(value: Any, name: str = "val_fraction") -> float:
    """`value` as a float when the service takes it as a build's validation share (greater than 0
    and at most DATASET_VAL_FRACTION_MAX); otherwise `ValidationError` naming `name`, before any
    upload."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 < value <= DATASET_VAL_FRACTION_MAX
    ):
        raise ValidationError(
            f"{name} must be greater than 0 and at most {DATASET_VAL_FRACTION_MAX}, got {value!r}"
        )
    return float(value)


class DatasetsAPI:
    """Dataset builds of one client's database and schema: `build`, `get`, `wait`."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def build(
        self,
        source: str | os.PathLike[str] | bytes,
        *,
        text_field: str = DEFAULT_TEXT_FIELD,
        label_fields: Iterable[str] | str = (),
        val_fraction: float = DEFAULT_VAL_FRACTION,
        seed: int = DEFAULT_SEED,
        name: str | None = None,
        wait: bool = False,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Upload a JSONL file (a path, or its bytes) and start a build; returns the Dataset.

        The service finds the file's format from its first row and echoes it as `format`: `chat`
        (OpenAI's `{"messages": [...]}` rows), `prompt_completion` (`{"prompt", "completion"}`),
        `text` or `labels` (docs/datasets.md); every row must have that format.
        `text_field` is the key holding a text row's text, `label_fields` the keys holding labels,
        `val_fraction` the share of rows for validation (greater than 0, at most 0.5) and `seed` the
        split's seed. With `wait`
        the call returns the settled build (see `wait`). The upload is sent once: it is retried
        only when it provably never left this machine, or a starting service refused it unread
        (503 `unavailable`, after its Retry-After), since a repeat would build twice.
        """
        if not isinstance(text_field, str) or not text_field.strip():
            raise ValidationError(f"text_field must be a non-empty string, got {text_field!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValidationError(f"seed must be an integer, got {seed!r}")
        labels = _label_fields(label_fields) or None
        fraction = check_val_fraction(val_fraction)
        data = read_source(source)
        answer: Any = _runs.build_dataset(
            self.client,
            content=data,
            text_field=text_field,
            label_field=labels,
            val_fraction=fraction,
            seed=seed,
            name=name,
            predicate=upload_rule,
        )
        dataset = answer_object(answer, "buildDataset")
        if not wait:
            return dataset
        return self.wait(str(dataset.get("dataset_id", "")), timeout=timeout)

    def get(self, dataset_id: str) -> dict[str, Any]:
        """One build: status, splits, fingerprints, labels and the leakage violations."""
        answer: Any = _runs.get_dataset(self.client, dataset_id=dataset_id, predicate=RUNS_RULE)
        return answer_object(answer, "getDataset")

    def wait(self, dataset_id: str, timeout: float | None = None) -> dict[str, Any]:
        """Poll until the build is no longer `building` and return it (succeeded or failed).

        `timeout` defaults to the client's poll timeout; running out raises `RunWaitTimeout`.
        """
        if not dataset_id:
            raise ValidationError("a dataset id is needed to wait for its build")
        return wait_until(
            self.client,
            lambda: self.get(dataset_id),
            lambda record: record.get("status") != DATASET_BUILDING,
            timeout=timeout,
            describe=f"dataset {dataset_id}",
        )

"""The rows a run trains and validates on, tokenized and packed once per process.

Everything here is a function of the run's record and its datasets, which never change once the
run has started, so it is cached by run id: the batches a resumed segment sends are the ones the
lost attempt sent (ct_runs.packing is pure).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from ct_runs import packing, tokenizers
from ct_runs.store import Store


class RunData:
    """The packed epochs and validation batches of runs, read from one store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _record(self, run_id: str) -> dict[str, Any]:
        row = self.store.run_row(run_id)
        if row is None:
            raise LookupError(f"run {run_id} does not exist")
        return dict(json.loads(row.record))

    def rows(self, record: Mapping[str, Any], purpose: str) -> list[dict[str, Any]]:
        """The rows a run trains on (``purpose`` "train") or validates on ("validation").

        With a validation dataset of its own, the run validates on every row of that build and
        trains on every row of its dataset; otherwise on the dataset's two splits.
        """
        separate = record.get("validation_dataset_id")
        if purpose == "train":
            return self.store.train_rows(record["dataset_id"], separate_validation=bool(separate))
        if separate:
            return self.store.all_rows(str(separate))
        return self.store.dataset_rows(record["dataset_id"], "validation")

    @functools.lru_cache(maxsize=8)  # noqa: B019 - one per engine, for its life; keyed by run and purpose
    def examples(self, run_id: str, purpose: str) -> list[packing.Example]:
        record = self._record(run_id)
        fields = tuple(record["label_fields"])
        return packing.encode_rows(self.rows(record, purpose), fields, tokenizers.for_run(record))

    @functools.lru_cache(maxsize=4)  # noqa: B019
    def epoch(self, run_id: str, epoch: int) -> list[packing.Batch]:
        record = self._record(run_id)
        return packing.plan_epoch(
            self.examples(run_id, "train"),
            seed=record["seed"],
            epoch=epoch,
            seq_len=record["seq_len"],
            batch_tokens=record["trainer"]["batch_tokens"],
            pad_id=tokenizers.for_run(record).pad_id,
        )

    @functools.lru_cache(maxsize=4)  # noqa: B019
    def validation(self, run_id: str) -> list[packing.Batch]:
        record = self._record(run_id)
        return packing.validation_batches(
            self.examples(run_id, "validation"),
            seq_len=record["seq_len"],
            batch_tokens=record["trainer"]["batch_tokens"],
            pad_id=tokenizers.for_run(record).pad_id,
        )

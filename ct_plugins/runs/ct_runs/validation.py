"""Validating a run's live job: the mean validation loss, and per-label accuracy.

A validation is forward passes only (no optimizer step), so it never changes the job's state: the
training after it is the same whether it ran or not. The loss is the token-weighted mean over the
validation batches (ct_runs.packing.mean_loss); with labels, each candidate value of a label is
scored by the log-probabilities of its tokens after the row's text, on at most
``LABEL_ACCURACY_ROWS`` rows, and the best-scoring value is the prediction.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ct_core.data.payloads import serialize_forward_backward_args
from ct_runs import packing, tokenizers
from ct_runs.run_data import RunData

#: Validation rows scored for per-label accuracy (one forward per row and label).
LABEL_ACCURACY_ROWS = 64
#: Forwards a validation keeps sent ahead of the one it reads: the job works through them while
#: the results are read, instead of waiting for each one's poll (results are read in order).
FORWARDS_AHEAD = 4


def _forwards(client: Any, job_id: str, frames: Iterable[bytes]) -> list[Any]:
    """The results of forwards of ``frames`` on the job, in order, with a few sent ahead."""
    sent: deque[str] = deque()
    results: list[Any] = []
    for frame in frames:
        sent.append(str(client.forward(job_id, frame)["request_id"]))
        if len(sent) > FORWARDS_AHEAD:
            results.append(client.poll_request(job_id, sent.popleft()))
    while sent:
        results.append(client.poll_request(job_id, sent.popleft()))
    return results


def validate(
    client: Any, job_id: str, record: Mapping[str, Any], data: RunData
) -> tuple[float, dict[str, float]]:
    """The validation loss of the job's weights, and the accuracy of each label field."""
    run_id = record["run_id"]
    batches = data.validation(run_id)
    batch_frames = (serialize_forward_backward_args(kwargs=batch.kwargs()) for batch in batches)
    losses = [float(result["avg_loss"]) for result in _forwards(client, job_id, batch_frames)]
    loss = packing.mean_loss(losses, batches)
    accuracy: dict[str, float] = {}
    fields = list(record["label_fields"])
    if fields:
        tokenizer = tokenizers.for_run(record)
        rows = data.rows(record, "validation")[:LABEL_ACCURACY_ROWS]
        values = {label["field"]: list(label["values"]) for label in record["labels_detail"]}
        for label_field in fields:
            candidates = values.get(label_field) or []
            if not candidates or not rows:
                continue
            frames: list[bytes] = []
            spans_of: list[list[tuple[int, int, int]]] = []
            for row in rows:
                prompt, options = packing.label_candidates(row, label_field, candidates, fields, tokenizer)
                input_ids, attention_mask, spans = packing.candidate_batch(
                    prompt, options, max_len=int(record["seq_len"]), pad_id=tokenizer.pad_id
                )
                spans_of.append(spans)
                frames.append(
                    serialize_forward_backward_args(
                        kwargs={"input_ids": input_ids, "attention_mask": attention_mask}
                    )
                )
            correct = 0
            results = _forwards(client, job_id, frames)
            for row, spans, result in zip(rows, spans_of, results, strict=True):
                scores = packing.candidate_scores(np.asarray(result["logprobs"]), spans)
                predicted = candidates[packing.best_candidate(scores)]
                correct += int(str(predicted) == str(row["labels"].get(label_field)))
            accuracy[label_field] = correct / len(rows)
    return loss, accuracy

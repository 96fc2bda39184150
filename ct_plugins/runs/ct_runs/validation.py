"""Validating a run's live job: the mean validation loss, and per-label accuracy.

A validation is forward passes only (no optimizer step), so it never changes the job's state: the
training after it is the same whether it ran or not. The loss is the token-weighted mean over the
validation batches (ct_runs.packing.mean_loss); with labels, each candidate value of a label is
scored by the log-probabilities of its tokens after the row's text, on at most
``LABEL_ACCURACY_ROWS`` rows, and the best-scoring value is the prediction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ct_core.data.payloads import serialize_forward_backward_args
from ct_runs import packing, tokenizers
from ct_runs.run_data import RunData

#: Validation rows scored for per-label accuracy (one forward per row and label).
LABEL_ACCURACY_ROWS = 64


def validate(
    client: Any, job_id: str, record: Mapping[str, Any], data: RunData
) -> tuple[float, dict[str, float]]:
    """The validation loss of the job's weights, and the accuracy of each label field."""
    run_id = record["run_id"]
    batches = data.validation(run_id)
    losses = []
    for batch in batches:
        frame = serialize_forward_backward_args(kwargs=batch.kwargs())
        answer = client.forward(job_id, frame)
        losses.append(float(client.poll_request(job_id, answer["request_id"])["avg_loss"]))
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
            correct = 0
            for row in rows:
                prompt, options = packing.label_candidates(row, label_field, candidates, fields, tokenizer)
                input_ids, attention_mask, spans = packing.candidate_batch(
                    prompt, options, max_len=int(record["seq_len"]), pad_id=tokenizer.pad_id
                )
                frame = serialize_forward_backward_args(
                    kwargs={"input_ids": input_ids, "attention_mask": attention_mask}
                )
                answer = client.forward(job_id, frame)
                result = client.poll_request(job_id, answer["request_id"])
                scores = packing.candidate_scores(np.asarray(result["logprobs"]), spans)
                predicted = candidates[packing.best_candidate(scores)]
                correct += int(str(predicted) == str(row["labels"].get(label_field)))
            accuracy[label_field] = correct / len(rows)
    return loss, accuracy

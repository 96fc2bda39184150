"""Sizing `router_replay.max_cache_bytes`: how many bytes a worker needs to hold routing captures.

The service stores one expert id per token, per MoE layer, per routed expert (top-k), as uint8 when
the model has at most 256 experts and as uint16 up to 65,536. So one sequence of
`seq_len` tokens takes `seq_len * moe_layers * top_k * id_bytes` bytes, and a worker that must
hold `sequences` of them at once needs that many times more. The service does not pick the cap;
this is the arithmetic behind a sensible one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ct_router_replay.rules import EXAMPLE_SAMPLING_CAP_BYTES, EXAMPLE_TRAINING_CAP_BYTES

#: Largest expert count stored as uint8 ids, and the largest the service supports at all.
UINT8_MAX_EXPERTS = 256
UINT16_MAX_EXPERTS = 65_536


@dataclass(frozen=True)
class Plan:
    """A router-replay cache size and how it was computed."""

    experts: int
    seq_len: int
    moe_layers: int
    top_k: int
    sequences: int

    @property
    def id_dtype(self) -> str:
        return "uint8" if self.experts <= UINT8_MAX_EXPERTS else "uint16"

    @property
    def id_bytes(self) -> int:
        return 1 if self.experts <= UINT8_MAX_EXPERTS else 2

    @property
    def bytes_per_sequence(self) -> int:
        return self.seq_len * self.moe_layers * self.top_k * self.id_bytes

    @property
    def max_cache_bytes(self) -> int:
        return self.sequences * self.bytes_per_sequence

    def formula(self) -> str:
        return (
            "max_cache_bytes = sequences x seq_len x moe_layers x top_k x id_bytes = "
            f"{self.sequences} x {self.seq_len} x {self.moe_layers} x {self.top_k} x {self.id_bytes} = "
            f"{self.max_cache_bytes}"
        )

    def as_dict(self) -> dict[str, Any]:
        per_sequence = self.bytes_per_sequence
        return {
            "experts": self.experts,
            "seq_len": self.seq_len,
            "moe_layers": self.moe_layers,
            "top_k": self.top_k,
            "sequences": self.sequences,
            "expert_id_dtype": self.id_dtype,
            "id_bytes": self.id_bytes,
            "bytes_per_sequence": per_sequence,
            "max_cache_bytes": self.max_cache_bytes,
            "max_cache_human": human_bytes(self.max_cache_bytes),
            "formula": self.formula(),
            # How far the documented example caps go for sequences of this shape.
            "sequences_per_example_cap": {
                "training_5GiB": EXAMPLE_TRAINING_CAP_BYTES // per_sequence,
                "sampling_20GiB": EXAMPLE_SAMPLING_CAP_BYTES // per_sequence,
            },
        }


def plan(*, experts: int, seq_len: int, moe_layers: int, top_k: int, sequences: int = 1) -> Plan:
    """Check the inputs and return the plan; ValueError naming every bad input."""
    problems = [
        f"--{name.replace('_', '-')} must be a positive integer, got {value!r}"
        for name, value in (
            ("experts", experts),
            ("seq_len", seq_len),
            ("moe_layers", moe_layers),
            ("top_k", top_k),
            ("sequences", sequences),
        )
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0
    ]
    if not problems and experts > UINT16_MAX_EXPERTS:
        problems.append(
            f"--experts {experts} is more than the {UINT16_MAX_EXPERTS} experts router replay supports"
        )
    if not problems and top_k > experts:
        problems.append(f"--top-k {top_k} cannot exceed --experts {experts}")
    if problems:
        raise ValueError("; ".join(problems))
    return Plan(experts=experts, seq_len=seq_len, moe_layers=moe_layers, top_k=top_k, sequences=sequences)


def human_bytes(count: int) -> str:
    """Binary units, for people: 1536 -> "1.5 KiB"."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"

"""A run's clock: the learning rate of each step, when to validate, and the early-stop state.

All pure: plain floats and ints in, plain floats and ints out, so a resumed run computes exactly
what the uninterrupted one did. The learning rate is sent with every ``step`` call (the service's
own schedulers are never used).

**Steps.** ``learning_rate`` takes the 0-based index of the optimizer step about to be taken;
the cadence and early-stop helpers take ``step_done``, the number of optimizer steps finished
(1-based: after the first step, ``step_done`` is 1).

**WSD** (warmup, stable, decay; the default): the rate climbs linearly to ``base_lr`` over
``warmup_steps`` (step ``i`` of the warmup uses ``base_lr * (i + 1) / warmup_steps``, so the first
step is never wasted at 0), holds, then falls linearly over ``cooldown_steps`` from the rate it had
to ``base_lr * min_lr_ratio``, reaching that floor at the run's end boundary (the cooldown's first
step still uses the stable rate). The cooldown begins at ``total_steps - cooldown_steps`` unless an
early stop moves it earlier: then it begins at the stop step and the run ends ``cooldown_steps``
later (:func:`end_step`). A stop that falls inside the planned cooldown changes nothing.

**Cosine** (fixed horizon): the same warmup, then ``floor + (base - floor) * (1 + cos(pi * p)) / 2``
with ``p`` going from 0 at the end of warmup to 1 at ``total_steps``.

**Cooldown length.** ``cooldown_steps = max(ceil(cooldown_ratio * total_steps), cooldown_min_steps)``.
The minimum used to be a flat 50 steps, which gave a short run a cooldown longer than its share
(or than the whole run). Newly assembled configs pin ``min(50, max(1, ceil(ratio * total)))``:
the floor of 50 still holds for long runs, a short run's cooldown is its proportional share, and
the pinned value is part of the resolved trainer (so of the fingerprint); a stored config keeps
the minimum it was assembled with (:func:`cooldown_steps_for` with ``pinned_min``).

**Validation cadence.** With early stopping and no explicit ``val_every_steps``, validation runs
every nominal step ``min(500, max(1, steps_per_epoch // 2))`` and at each packed epoch boundary;
an explicit ``val_every_steps`` is exact (its multiples only); without early stopping and without
an explicit cadence, once per epoch. The run's last step is always validated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

#: Schedules a run may use.
SCHEDULES = ("wsd", "cosine")
#: Ceiling of the nominal validation cadence when early stopping resolves it.
NOMINAL_VAL_CAP = 500
#: The flat cooldown minimum of earlier configs; still the ceiling of the proportional one.
LEGACY_COOLDOWN_MIN_STEPS = 50
#: Default warmup when no override sets it: 5 % of the budget, at most this many steps.
DEFAULT_WARMUP_CAP = 100
DEFAULT_WARMUP_RATIO = 0.05

Schedule = Literal["wsd", "cosine"]


@dataclass(frozen=True)
class SchedulePlan:
    """The fingerprinted learning-rate schedule of a run."""

    schedule: Schedule
    base_lr: float
    total_steps: int
    warmup_steps: int
    cooldown_steps: int
    min_lr_ratio: float = 0.0

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}")
        if not math.isfinite(self.base_lr) or self.base_lr <= 0:
            raise ValueError(f"base_lr must be a positive finite number, got {self.base_lr!r}")
        if not 0 <= self.min_lr_ratio <= 1:
            raise ValueError(f"min_lr_ratio must lie in [0, 1], got {self.min_lr_ratio!r}")
        for name in ("total_steps", "warmup_steps", "cooldown_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if self.schedule == "wsd" and self.warmup_steps + self.cooldown_steps > self.total_steps:
            raise ValueError("warmup_steps + cooldown_steps must not exceed total_steps")
        if self.schedule == "cosine" and self.cooldown_steps:
            raise ValueError("a cosine schedule has no cooldown_steps")

    @property
    def min_lr(self) -> float:
        return self.base_lr * self.min_lr_ratio

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SchedulePlan:
        return cls(
            schedule=data["schedule"],
            base_lr=float(data["base_lr"]),
            total_steps=int(data["total_steps"]),
            warmup_steps=int(data["warmup_steps"]),
            cooldown_steps=int(data["cooldown_steps"]),
            min_lr_ratio=float(data.get("min_lr_ratio", 0.0)),
        )


def default_warmup_steps(total_steps: int) -> int:
    """Warmup when none is asked for: ``min(100, ceil(0.05 * total_steps))``."""
    return min(DEFAULT_WARMUP_CAP, math.ceil(DEFAULT_WARMUP_RATIO * total_steps))


def effective_warmup(requested: int, *, schedule: Schedule, total_steps: int, cooldown_steps: int) -> int:
    """The warmup a run can hold: a WSD warmup ends before the cooldown, a cosine one before the end."""
    room = total_steps - cooldown_steps if schedule == "wsd" else total_steps - 1
    return max(0, min(requested, room))


def cooldown_steps_for(
    total_steps: int, cooldown_ratio: float, *, pinned_min: int | None = None
) -> tuple[int, int]:
    """``(cooldown_steps, cooldown_min_steps)`` of a WSD run of ``total_steps``.

    The minimum is ``min(50, max(1, ceil(ratio * total)))`` for a new config, or ``pinned_min`` (the
    value a stored config was assembled with). The cooldown never exceeds the run.
    """
    if not 0 < cooldown_ratio < 1:
        raise ValueError(f"cooldown_ratio must lie in (0, 1), got {cooldown_ratio!r}")
    share = math.ceil(cooldown_ratio * total_steps)
    minimum = min(LEGACY_COOLDOWN_MIN_STEPS, max(1, share)) if pinned_min is None else pinned_min
    return min(total_steps, max(share, minimum)), minimum


def _cooldown_start(plan: SchedulePlan, cooldown_start: int | None) -> int:
    planned = plan.total_steps - plan.cooldown_steps
    if cooldown_start is None:
        return planned
    if isinstance(cooldown_start, bool) or not isinstance(cooldown_start, int) or cooldown_start < 0:
        raise ValueError(f"cooldown_start must be a non-negative integer, got {cooldown_start!r}")
    return min(planned, cooldown_start)


def _warm(plan: SchedulePlan, step: int) -> float:
    """The rate before any decay: the warmup ramp, then base_lr."""
    if step < plan.warmup_steps:
        return plan.base_lr * (step + 1) / plan.warmup_steps
    return plan.base_lr


def learning_rate(plan: SchedulePlan, step: int, cooldown_start: int | None = None) -> float:
    """The learning rate of the 0-based optimizer step ``step``; ``cooldown_start`` after an early stop."""
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"step must be a non-negative integer, got {step!r}")
    floor = plan.min_lr
    if plan.schedule == "cosine":
        if cooldown_start is not None:
            raise ValueError("a cosine schedule has no cooldown to move; early stopping needs wsd")
        if step < plan.warmup_steps:
            return _warm(plan, step)
        if step >= plan.total_steps:
            return floor
        progress = (step - plan.warmup_steps) / (plan.total_steps - plan.warmup_steps)
        return floor + (plan.base_lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))
    start = _cooldown_start(plan, cooldown_start)
    if step < start:
        return _warm(plan, step)
    into = step - start
    if plan.cooldown_steps == 0 or into >= plan.cooldown_steps:
        return floor
    peak = _warm(plan, start)
    return peak + (floor - peak) * into / plan.cooldown_steps


def end_step(plan: SchedulePlan, cooldown_start: int | None = None) -> int:
    """Steps the run takes: ``total_steps``, or the early cooldown's end after an early stop."""
    if cooldown_start is None or plan.schedule == "cosine":
        return plan.total_steps
    return min(plan.total_steps, _cooldown_start(plan, cooldown_start) + plan.cooldown_steps)


# --- validation cadence --------------------------------------------------------------------------


def nominal_val_every(steps_per_epoch: int) -> int:
    """The nominal cadence early stopping resolves when none is given: half an epoch, at most 500."""
    return min(NOMINAL_VAL_CAP, max(1, steps_per_epoch // 2))


def resolve_cadence(
    val_every_steps: int | None, *, steps_per_epoch: int, early_stopping: bool
) -> tuple[int, bool]:
    """``(val_every_steps, at_epoch_boundaries)`` as the resolved trainer records them.

    Explicit: exact, no epoch boundaries. Omitted with early stopping: nominal, plus epoch
    boundaries. Omitted without: once per epoch (every ``steps_per_epoch`` steps).
    """
    if val_every_steps is not None:
        return val_every_steps, False
    if early_stopping:
        return nominal_val_every(steps_per_epoch), True
    return max(1, steps_per_epoch), False


def is_validation_step(
    step_done: int,
    *,
    val_every_steps: int,
    steps_per_epoch: int,
    at_epoch_boundaries: bool,
    end_step: int,
) -> bool:
    """Whether to validate after ``step_done`` finished steps (1-based); the last step always is."""
    if step_done <= 0 or step_done > end_step:
        return False
    if step_done == end_step or step_done % val_every_steps == 0:
        return True
    return at_epoch_boundaries and steps_per_epoch > 0 and step_done % steps_per_epoch == 0


def validation_steps(
    *,
    val_every_steps: int,
    steps_per_epoch: int,
    at_epoch_boundaries: bool,
    end_step: int,
) -> list[int]:
    """Every ``step_done`` at which :func:`is_validation_step` holds, in order."""
    return [
        step
        for step in range(1, end_step + 1)
        if is_validation_step(
            step,
            val_every_steps=val_every_steps,
            steps_per_epoch=steps_per_epoch,
            at_epoch_boundaries=at_epoch_boundaries,
            end_step=end_step,
        )
    ]


# --- early stopping ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EarlyStop:
    """Early-stop bookkeeping, saved with each checkpoint so a resumed run stops at the same step."""

    best_val_loss: float | None = None
    best_step: int | None = None
    bad_evals: int = 0
    stop_step: int | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> EarlyStop:
        if not data:
            return cls()
        unknown = sorted(set(data) - {"best_val_loss", "best_step", "bad_evals", "stop_step", "reason"})
        if unknown:
            raise ValueError(f"unknown early-stop field(s): {', '.join(unknown)}")
        best = data.get("best_val_loss")
        return cls(
            best_val_loss=None if best is None else float(best),
            best_step=data.get("best_step"),
            bad_evals=int(data.get("bad_evals", 0)),
            stop_step=data.get("stop_step"),
            reason=data.get("reason"),
        )


def observe(
    state: EarlyStop, step: int, val_loss: float, *, patience: int, min_delta: float
) -> tuple[EarlyStop, bool]:
    """Fold one validation result in: ``(new state, whether it is a new best)``.

    A new best must beat the best so far by more than ``min_delta`` (the first result always is,
    a NaN never is). Otherwise it is a bad evaluation; when ``patience`` of them follow the best
    in a row and no stop is set yet, the stop is set at ``step``. The input is not changed.
    """
    improved = not math.isnan(val_loss) and (
        state.best_val_loss is None or val_loss < state.best_val_loss - min_delta
    )
    if improved:
        return replace(state, best_val_loss=float(val_loss), best_step=step, bad_evals=0), True
    bad = state.bad_evals + 1
    if bad >= patience and state.stop_step is None:
        reason = f"no validation improvement of more than {min_delta} in {patience} evaluations"
        return replace(state, bad_evals=bad, stop_step=step, reason=reason), False
    return replace(state, bad_evals=bad), False

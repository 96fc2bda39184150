"""Learning-rate schedules, the end step after an early stop, validation cadence, early-stop state."""

from __future__ import annotations

import math

import pytest
from ct_runs import schedule
from ct_runs.schedule import EarlyStop, SchedulePlan, end_step, learning_rate, observe


def _wsd(**changes: object) -> SchedulePlan:
    values: dict = {
        "schedule": "wsd",
        "base_lr": 1.0,
        "total_steps": 100,
        "warmup_steps": 10,
        "cooldown_steps": 20,
        "min_lr_ratio": 0.0,
    }
    values.update(changes)
    return SchedulePlan(**values)


def test_wsd_warms_up_holds_then_decays_linearly_to_the_floor() -> None:
    plan = _wsd(min_lr_ratio=0.1)
    assert learning_rate(plan, 0) == pytest.approx(0.1)
    assert learning_rate(plan, 4) == pytest.approx(0.5)
    assert learning_rate(plan, 9) == pytest.approx(1.0)
    assert learning_rate(plan, 10) == 1.0
    assert learning_rate(plan, 79) == 1.0
    # The cooldown starts at 100 - 20 = 80 and reaches 0.1 at the end boundary (step 100).
    assert learning_rate(plan, 80) == 1.0
    assert learning_rate(plan, 90) == pytest.approx(1.0 + (0.1 - 1.0) * 10 / 20)
    assert learning_rate(plan, 99) == pytest.approx(1.0 + (0.1 - 1.0) * 19 / 20)
    assert learning_rate(plan, 100) == pytest.approx(0.1)
    assert end_step(plan) == 100


def test_an_early_stop_moves_the_cooldown_earlier_and_shortens_the_run() -> None:
    plan = _wsd()
    assert learning_rate(plan, 40, cooldown_start=40) == 1.0
    assert learning_rate(plan, 50, cooldown_start=40) == pytest.approx(0.5)
    assert learning_rate(plan, 60, cooldown_start=40) == 0.0
    assert end_step(plan, 40) == 60 < plan.total_steps
    # A stop inside the planned cooldown changes nothing.
    assert end_step(plan, 90) == 100
    assert learning_rate(plan, 90, cooldown_start=95) == learning_rate(plan, 90)


def test_an_early_stop_during_warmup_decays_from_the_rate_it_had() -> None:
    plan = _wsd()
    assert learning_rate(plan, 4, cooldown_start=4) == pytest.approx(0.5)
    assert learning_rate(plan, 14, cooldown_start=4) == pytest.approx(0.25)
    assert end_step(plan, 4) == 24


def test_cosine_warms_up_then_follows_a_half_cosine_to_the_floor() -> None:
    plan = SchedulePlan("cosine", 2.0, total_steps=110, warmup_steps=10, cooldown_steps=0, min_lr_ratio=0.25)
    assert learning_rate(plan, 0) == pytest.approx(0.2)
    assert learning_rate(plan, 10) == pytest.approx(2.0)
    assert learning_rate(plan, 60) == pytest.approx(0.5 + 1.5 * 0.5)
    assert learning_rate(plan, 85) == pytest.approx(0.5 + 1.5 * 0.5 * (1 + math.cos(math.pi * 0.75)))
    assert learning_rate(plan, 110) == pytest.approx(0.5)
    assert end_step(plan) == 110
    with pytest.raises(ValueError, match="wsd"):
        learning_rate(plan, 5, cooldown_start=5)


def test_learning_rate_is_a_pure_deterministic_float() -> None:
    plan = _wsd(base_lr=3e-3, min_lr_ratio=0.05)
    first = [learning_rate(plan, s, cooldown_start=55) for s in range(100)]
    assert first == [learning_rate(plan, s, cooldown_start=55) for s in range(100)]
    assert all(type(value) is float for value in first)
    with pytest.raises(ValueError):
        learning_rate(plan, -1)


@pytest.mark.parametrize(
    "changes",
    [
        {"schedule": "linear"},
        {"base_lr": 0.0},
        {"min_lr_ratio": 1.5},
        {"warmup_steps": 90},
        {"total_steps": -1},
        {"schedule": "cosine"},  # a cosine plan carries no cooldown
    ],
)
def test_schedule_plan_refuses_inconsistent_values(changes: dict) -> None:
    with pytest.raises(ValueError):
        _wsd(**changes)


def test_schedule_plan_round_trips_through_a_dict() -> None:
    plan = _wsd(min_lr_ratio=0.2)
    assert SchedulePlan.from_dict(plan.to_dict()) == plan


@pytest.mark.parametrize(
    ("total", "ratio", "expected"),
    [
        (1000, 0.2, (200, 50)),  # long run: the 50-step floor holds, the share is larger
        (100, 0.2, (20, 20)),  # short run: the minimum is the proportional share, not 50
        (10, 0.2, (2, 2)),
        (3, 0.1, (1, 1)),  # never below one step
        (0, 0.2, (0, 1)),
    ],
)
def test_cooldown_steps_pin_a_proportional_minimum(total: int, ratio: float, expected: tuple) -> None:
    assert schedule.cooldown_steps_for(total, ratio) == expected


def test_cooldown_with_a_pinned_legacy_minimum() -> None:
    assert schedule.cooldown_steps_for(100, 0.2, pinned_min=50) == (50, 50)
    assert schedule.cooldown_steps_for(30, 0.2, pinned_min=50) == (30, 50)  # never longer than the run
    with pytest.raises(ValueError):
        schedule.cooldown_steps_for(100, 1.0)


def test_warmup_defaults_and_clamping() -> None:
    assert schedule.default_warmup_steps(20) == 1
    assert schedule.default_warmup_steps(100_000) == 100
    assert schedule.effective_warmup(50, schedule="wsd", total_steps=40, cooldown_steps=8) == 32
    assert schedule.effective_warmup(50, schedule="cosine", total_steps=40, cooldown_steps=0) == 39
    assert schedule.effective_warmup(5, schedule="wsd", total_steps=1, cooldown_steps=1) == 0


def test_cadence_with_early_stopping_is_nominal_plus_epoch_boundaries_plus_the_last_step() -> None:
    every, boundaries = schedule.resolve_cadence(None, steps_per_epoch=7, early_stopping=True)
    assert (every, boundaries) == (3, True)
    steps = schedule.validation_steps(
        val_every_steps=every, steps_per_epoch=7, at_epoch_boundaries=boundaries, end_step=22
    )
    assert steps == [3, 6, 7, 9, 12, 14, 15, 18, 21, 22]


def test_nominal_cadence_is_capped_at_500_steps() -> None:
    assert schedule.resolve_cadence(None, steps_per_epoch=5000, early_stopping=True) == (500, True)
    assert schedule.resolve_cadence(None, steps_per_epoch=1, early_stopping=True) == (1, True)


def test_an_explicit_cadence_is_exact() -> None:
    every, boundaries = schedule.resolve_cadence(4, steps_per_epoch=7, early_stopping=True)
    assert (every, boundaries) == (4, False)
    steps = schedule.validation_steps(
        val_every_steps=every, steps_per_epoch=7, at_epoch_boundaries=boundaries, end_step=14
    )
    assert steps == [4, 8, 12, 14]


def test_fixed_horizon_default_validates_once_per_epoch() -> None:
    every, boundaries = schedule.resolve_cadence(None, steps_per_epoch=7, early_stopping=False)
    assert (every, boundaries) == (7, False)
    steps = schedule.validation_steps(
        val_every_steps=every, steps_per_epoch=7, at_epoch_boundaries=boundaries, end_step=21
    )
    assert steps == [7, 14, 21]


def test_the_last_step_of_a_stopped_run_is_validated() -> None:
    options = {"val_every_steps": 10, "steps_per_epoch": 50, "at_epoch_boundaries": True}
    assert schedule.is_validation_step(33, end_step=33, **options)
    assert not schedule.is_validation_step(33, end_step=40, **options)
    assert not schedule.is_validation_step(0, end_step=40, **options)
    assert not schedule.is_validation_step(50, end_step=40, **options)


def test_observe_tracks_the_best_and_stops_after_patience_bad_evaluations() -> None:
    state = EarlyStop()
    state, best = observe(state, 10, 2.0, patience=2, min_delta=0.1)
    assert best and state == EarlyStop(best_val_loss=2.0, best_step=10)
    # Lower, but not by more than min_delta: not a new best.
    state, best = observe(state, 20, 1.95, patience=2, min_delta=0.1)
    assert not best and state.bad_evals == 1 and state.best_val_loss == 2.0 and state.stop_step is None
    before = state
    state, best = observe(state, 30, 2.5, patience=2, min_delta=0.1)
    assert not best and state.stop_step == 30
    assert state.reason == "no validation improvement of more than 0.1 in 2 evaluations"
    assert before.stop_step is None and before.bad_evals == 1  # the input is untouched
    # After the stop, a new best is still recorded, but the stop stays where it was.
    state, best = observe(state, 40, 1.0, patience=2, min_delta=0.1)
    assert best and state.best_step == 40 and state.stop_step == 30 and state.bad_evals == 0
    state, _ = observe(state, 50, 9.0, patience=1, min_delta=0.1)
    assert state.stop_step == 30


def test_observe_counts_nan_as_a_bad_evaluation() -> None:
    state, best = observe(EarlyStop(), 1, float("nan"), patience=1, min_delta=0.0)
    assert not best and state.best_val_loss is None and state.stop_step == 1


def test_early_stop_round_trips_through_a_dict() -> None:
    state = EarlyStop(best_val_loss=1.5, best_step=4, bad_evals=2, stop_step=9, reason="why")
    assert EarlyStop.from_dict(state.to_dict()) == state
    assert EarlyStop.from_dict(None) == EarlyStop()
    with pytest.raises(ValueError, match="unknown"):
        EarlyStop.from_dict({"best": 1})


def test_an_early_stop_ends_a_run_below_its_budget() -> None:
    # A whole run driven by the helpers: the loss stops improving, patience runs out, the
    # cooldown takes cooldown_steps more, and the run ends below total_steps.
    plan = _wsd(total_steps=200, warmup_steps=5, cooldown_steps=20)
    losses = {step: max(1.0, 3.0 - step / 20) for step in range(1, 201)}
    state, cooldown_start, step = EarlyStop(), None, 0
    while step < end_step(plan, cooldown_start):
        assert learning_rate(plan, step, cooldown_start) >= 0
        step += 1
        if schedule.is_validation_step(
            step,
            val_every_steps=10,
            steps_per_epoch=50,
            at_epoch_boundaries=True,
            end_step=end_step(plan, cooldown_start),
        ):
            state, _ = observe(state, step, losses[step], patience=3, min_delta=1e-4)
            if state.stop_step is not None and cooldown_start is None:
                cooldown_start = state.stop_step
    assert state.best_step == 40 and state.stop_step == 70
    assert step == 90 < plan.total_steps

"""Typed configs, optimizer canonicalization and create-body validation (every problem reported)."""

from __future__ import annotations

import pytest

from ct_core.config.typed import Hardware, JobType, SubJobConfig, TrainingConfig
from ct_core.config.validation import build_create_body, validate_create_body
from ct_core.errors import ValidationError

REFUSAL = "log_probability sub-jobs are not currently supported"


def sampling(**extra):
    return {
        "job_type": "sampling",
        "model_name": "m",
        "inference_config": {"max_seq_len": 8, "n_gpus": 1},
        **extra,
    }


def training(**training_config):
    config = {"optimizer": {"name": "AdamW"}, "max_seq_len": 8, "train_batch_size": 1, "n_gpus": 1}
    return {"job_type": "training", "model_name": "m", "training_config": {**config, **training_config}}


def problems_of(body):
    with pytest.raises(ValidationError) as caught:
        validate_create_body(body)
    assert isinstance(caught.value, ValueError)
    return caught.value.problems


def test_valid_body_is_returned_as_a_normalized_copy():
    body = {"sub_job_configs": [training(model_provider="arctic", optimizer={"type": "x"}), sampling()]}
    normalized = validate_create_body(body)
    assert normalized["sub_job_configs"][0]["training_config"]["model_provider"] == "prime_rl"
    # Everything else, the optimizer included, is forwarded exactly as given; the input is untouched.
    assert normalized["sub_job_configs"][0]["training_config"]["optimizer"] == {"type": "x"}
    assert body["sub_job_configs"][0]["training_config"]["model_provider"] == "arctic"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ([], ["create_job_from_body requires a JSON object"]),
        ({}, ["sub_job_configs must be a non-empty list"]),
        ({"sub_job_configs": []}, ["sub_job_configs must be a non-empty list"]),
        (
            {"sub_job_configs": [{"job_type": "JOB_TYPE_LOG_PROBABILITY"}, {"job_type": " log_prob "}]},
            [f"sub_job_configs[0].job_type: {REFUSAL}", f"sub_job_configs[1].job_type: {REFUSAL}"],
        ),
        (
            {"sub_job_configs": [training(), training()]},
            ["at most one training sub-job is supported per job"],
        ),
        ({"sub_job_configs": [sampling()], "job_id": "x"}, ["job_id cannot be set when creating a job"]),
    ],
)
def test_body_errors(body, expected):
    if not isinstance(body, dict):
        with pytest.raises(ValidationError, match=expected[0]):
            validate_create_body(body)
        return
    found = problems_of(body)
    for item in expected:
        assert any(problem.startswith(item) for problem in found), (item, found)


def test_every_problem_is_reported_at_once(monkeypatch):
    monkeypatch.delenv("CORTEX_TRAINING_ENABLE_DEBUG_OPTIONS", raising=False)
    body = {
        "sub_job_configs": [
            training(ds_config={"zero_optimization": {"stage": 3}}),
            training(),
            {"job_type": "log_probability"},
        ],
        "hardware": "h100",
        "idle_timeout_seconds": 5,
        "pending_timeout_seconds": 0,
        "debug": {"x": 1},
    }
    found = problems_of(body)
    assert len(found) == 8, found
    assert "sub_job_configs[2].model_name is required" in found
    assert any(
        "zero_optimization.stage 3 is not supported (ZeRO-3)" in p and "offload_optimizer" in p for p in found
    )
    assert "hardware must be one of H200, B200, B300, got 'h100'" in found
    assert "idle_timeout_seconds must be 0 or between 300 and 604800, got 5" in found
    assert "pending_timeout_seconds must be between 300 and 604800, got 0" in found
    assert (
        "create-job debug options are an internal-only capability; set "
        "CORTEX_TRAINING_ENABLE_DEBUG_OPTIONS=1 "
        "to send a request with a `debug` block"
    ) in found


def test_debug_block_allowed_with_the_env_var(monkeypatch):
    monkeypatch.setenv("CORTEX_TRAINING_ENABLE_DEBUG_OPTIONS", "yes")
    assert validate_create_body({"sub_job_configs": [sampling()], "debug": {"x": 1}})["debug"] == {"x": 1}


@pytest.mark.parametrize(("value", "message"), [(True, "must be an integer"), (1.5, "must be an integer")])
def test_timeout_types(value, message):
    assert any(
        message in p for p in problems_of({"sub_job_configs": [sampling()], "idle_timeout_seconds": value})
    )


def test_typed_path_builds_the_body():
    body = build_create_body(
        [SubJobConfig.sampling_job("m", max_seq_len=8, n_gpus=1)],
        hardware=Hardware.B200,
        idle_timeout_seconds=0,
    )
    assert body == {
        "sub_job_configs": [
            {"job_type": "sampling", "model_name": "m", "inference_config": {"max_seq_len": 8, "n_gpus": 1}}
        ],
        "hardware": "B200",
        "idle_timeout_seconds": 0,
    }


def test_typed_path_errors():
    with pytest.raises(ValidationError, match="create_job requires a non-empty sub_jobs list"):
        build_create_body([])
    bad = SubJobConfig.training_job("  ", optimizer={}, max_seq_len=0, train_batch_size=True, n_gpus=1)
    log_prob = SubJobConfig(job_type=JobType.LOG_PROBABILITY, model_name="m")
    with pytest.raises(ValidationError) as caught:
        build_create_body([bad, log_prob], hardware="b201", pending_timeout_seconds=1)
    found = caught.value.problems
    assert "sub_jobs[0]: sub_job.model_name is required" in found
    assert "sub_jobs[0]: training.optimizer is required and must be a non-empty dict" in found
    assert "sub_jobs[0]: training.max_seq_len must be > 0" in found
    assert any(p.startswith("sub_jobs[0]: training.train_batch_size must be an integer") for p in found)
    assert f"sub_jobs[1].job_type: {REFUSAL}" in found
    assert "hardware must be one of H200, B200, B300, got 'b201'" in found


def test_sampling_job_factory_rules():
    with pytest.raises(ValidationError, match=f"sampling_job\\(\\).job_type: {REFUSAL}"):
        SubJobConfig.sampling_job("m", max_seq_len=1, n_gpus=1, job_type=JobType.LOG_PROBABILITY)
    with pytest.raises(ValidationError, match="sampling_job\\(\\) only accepts SAMPLING"):
        SubJobConfig.sampling_job("m", max_seq_len=1, n_gpus=1, job_type=JobType.TRAINING)


def test_extra_never_overrides_typed_fields():
    config = TrainingConfig(
        optimizer={"name": "A"}, max_seq_len=4, train_batch_size=1, n_gpus=2, extra={"n_gpus": 9}
    )
    assert config.to_dict()["n_gpus"] == 2


def test_fused_cross_entropy_check():
    config = TrainingConfig(
        optimizer={"name": "A"},
        max_seq_len=4,
        train_batch_size=1,
        n_gpus=1,
        extra={"prime_rl": {"fp32_lm_head": True}},
    )
    found = config.problems()
    assert [p.split(" cannot")[0] for p in found] == ["training.extra", "training.extra.prime_rl"]
    ok = TrainingConfig(
        optimizer={"name": "A"},
        max_seq_len=4,
        train_batch_size=1,
        n_gpus=1,
        extra={"fused_cross_entropy": False, "fused_lm_head_token_chunk_size": 4096},
    )
    assert ok.problems() == []


@pytest.mark.parametrize(
    ("optimizer", "expected"),
    [
        ({"type": "AdamW", "params": {"lr": 1e-5}}, {"name": "AdamW", "lr": 1e-5}),
        ({"name": "AdamW", "beta1": 0.8}, {"name": "AdamW", "betas": [0.8, 0.999]}),
        (
            {"betas": (0.9, 0.95), "eps": 1e-8, "fused": True},
            {"betas": [0.9, 0.95], "eps": 1e-8, "fused": True},
        ),
        ({"gradient_clipping": 1.0}, {}),
    ],
)
def test_optimizer_canonical_form(optimizer, expected):
    config = TrainingConfig(optimizer=optimizer, max_seq_len=4, train_batch_size=1, n_gpus=1)
    assert config.optimizer == expected
    assert list(config.optimizer) == [
        k for k in ("name", "lr", "weight_decay", "betas", "eps", "fused") if k in expected
    ]
    if "gradient_clipping" in optimizer:
        assert config.gradient_clipping == 1.0 and config.problems() == []


@pytest.mark.parametrize(
    ("optimizer", "message"),
    [
        ([], "must be an object"),
        ({"params": 3}, "params must be an object"),
        ({"lr": 1, "params": {"lr": 2}}, "Remove one."),
        ({"warmup_steps": 10}, "unsupported scheduler field(s): ['warmup_steps']"),
        ({"name": "a", "type": "b"}, "Use name."),
        ({"betas": "0.9"}, "betas must be a list of two numbers"),
        ({"betas": [0.9]}, "must have exactly two values"),
        ({"betas": [0.9, 1.0]}, "in [0, 1)"),
        ({"betas": [0.9, 0.99], "beta1": 0.8}, "Use betas."),
        ({"momentum": 0.9}, "unsupported field(s): ['momentum']"),
        ({"lr": True}, "lr must be a finite number"),
        ({"lr": float("inf")}, "lr must be a finite number"),
        ({"eps": 0}, "eps must be > 0"),
        ({"weight_decay": -1}, "weight_decay must be >= 0"),
        ({"fused": 1}, "fused must be a boolean"),
    ],
)
def test_optimizer_rejections(optimizer, message):
    with pytest.raises(ValidationError) as caught:
        TrainingConfig(optimizer=optimizer, max_seq_len=4, train_batch_size=1, n_gpus=1)
    assert message in str(caught.value)


def test_plugin_validators_run_on_every_create_path(monkeypatch):
    import pluggy

    from ct_core.config import bodies

    hookimpl = pluggy.HookimplMarker("ct")

    class Rules:
        @hookimpl
        def ct_validate_sub_job(self, sub_job, location):
            sub_job.setdefault("seed", 7)  # plugins may normalize in place
            return [f"{location}: plugin says no"] if sub_job.get("model_name") == "bad" else None

        @hookimpl
        def ct_validate_create_body(self, body):
            return ["body too bold"] if body.get("comment") == "bold" else []

    from ct_core import plugins

    pm = plugins.new_plugin_manager() if hasattr(plugins, "new_plugin_manager") else None
    if pm is None:
        pytest.skip("plugin manager factory not available")
    pm.register(Rules())
    monkeypatch.setattr(bodies, "_plugin_manager", lambda: pm)
    assert validate_create_body({"sub_job_configs": [sampling()]})["sub_job_configs"][0]["seed"] == 7
    found = problems_of({"sub_job_configs": [sampling(model_name="bad")], "comment": "bold"})
    assert found == ["sub_job_configs[0]: plugin says no", "body too bold"]


class _Records(list):
    """Collects the records of one logger directly (the CLI may stop ct_core records from propagating)."""

    def __enter__(self):
        import logging

        self.handler = logging.Handler(level=logging.WARNING)
        self.handler.emit = self.append
        self.logger = logging.getLogger("ct_core.config.validation")
        self.logger.addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self.handler)

    def messages(self):
        return [record.getMessage() for record in self]


def test_clear_cache_on_weight_sync_near_misses_warn_on_every_path() -> None:
    """A misspelled opt-out is silently ignored by the service, so the client says so."""
    key = "clear_cache_on_weight_sync"
    typo = {"vllm_config": {"clear-cache-on-weight-sync": False, "gpu_memory_utilization": 0.8}}
    raw = {"sub_job_configs": [sampling(inference_config={"max_seq_len": 8, "n_gpus": 1, **typo})]}
    with _Records() as records:
        assert (
            validate_create_body(raw)["sub_job_configs"][0]["inference_config"]["vllm_config"]
            == (typo["vllm_config"])
        )  # forwarded untouched: only a warning
    assert records.messages() == [
        "sub_job_configs[0].inference_config.vllm_config.clear-cache-on-weight-sync looks like a "
        f"misspelling of {key}; the service ignores unknown keys, so weight syncs would keep clearing "
        "the prefix cache"
    ]

    typed = SubJobConfig.sampling_job(
        "m", max_seq_len=8, n_gpus=1, extra_sampling={"vllm_config": {"clear_cache_on_weights_sync": False}}
    )
    with _Records() as records:
        validate_create_body(build_create_body([typed]))
    assert [m.split(" looks like")[0] for m in records.messages()] == [
        "sub_job_configs[0].inference_config.vllm_config.clear_cache_on_weights_sync"
    ]

    misplaced = SubJobConfig.sampling_job("m", max_seq_len=8, n_gpus=1, extra_sampling={key: False})
    not_bool = SubJobConfig.sampling_job(
        "m", max_seq_len=8, n_gpus=1, extra_sampling={"vllm_config": {key: "false"}}
    )
    with _Records() as records:
        validate_create_body(build_create_body([misplaced]))
        validate_create_body(build_create_body([not_bool]))
    assert records.messages()[0].startswith(
        f"sub_job_configs[0].inference_config.{key} is not read there; put it in "
        "sub_job_configs[0].inference_config.vllm_config"
    )
    assert records.messages()[1] == (
        f"sub_job_configs[0].inference_config.vllm_config.{key} should be true or false, got 'false'"
    )

    fine = SubJobConfig.sampling_job(
        "m",
        max_seq_len=8,
        n_gpus=1,
        extra_sampling={"vllm_config": {key: False, "enable_prefix_caching": True, "speculative_config": {}}},
    )
    with _Records() as records:
        validate_create_body(build_create_body([fine]))
    assert records.messages() == []

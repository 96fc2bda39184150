from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.activation_checkpointing_config import ActivationCheckpointingConfig
    from ..models.deep_speed_config import DeepSpeedConfig
    from ..models.dflash_2_config import Dflash2Config
    from ..models.micro_batch_spec import MicroBatchSpec
    from ..models.model_options import ModelOptions
    from ..models.optimizer_config import OptimizerConfig
    from ..models.peft_config import PeftConfig
    from ..models.prime_rl_config import PrimeRlConfig
    from ..models.router_replay_config import RouterReplayConfig


T = TypeVar("T", bound="TrainingConfig")


@_attrs_define
class TrainingConfig:
    """A training sub-job's config. Typed keys are listed; everything else (extra_training) is open passthrough, including
    the memory-diagnostics switches step_peak_memory_log and training_memory_telemetry.

        Attributes:
            optimizer (None | OptimizerConfig | Unset):
            max_seq_len (int | None | Unset):
            train_batch_size (int | None | Unset):
            n_gpus (int | None | Unset):
            gradient_clipping (float | None | Unset):
            multiplex_job_id (None | str | Unset):
            load_optimizer_states (bool | None | Unset):
            model_provider (None | str | Unset): huggingface, prime_rl (clients send arctic as prime_rl) or dflash2.
            ep_size (int | None | Unset):
            sp_size (int | None | Unset):
            activation_checkpointing (bool | int | None | Unset):
            cuda_allocator_conf (None | str | Unset):
            ds_config (DeepSpeedConfig | None | Unset):
            ac_config (ActivationCheckpointingConfig | None | Unset):
            mb_spec (MicroBatchSpec | None | Unset):
            router_replay (None | RouterReplayConfig | Unset):
            peft_config (None | PeftConfig | Unset):
            model_options (ModelOptions | None | Unset):
            prime_rl (None | PrimeRlConfig | Unset):
            dflash2 (Dflash2Config | None | Unset):
            step_peak_memory_log (bool | None | Unset): Adds peak_memory (gpu_peak, cpu_peak bytes) to each step result.
            training_memory_telemetry (bool | None | Unset): Emits allocator events (fwd_bwd_end, step_start, step_end) to
                the training event stream.
            save_training_metrics (bool | None | Unset):
    """

    optimizer: None | OptimizerConfig | Unset = UNSET
    max_seq_len: int | None | Unset = UNSET
    train_batch_size: int | None | Unset = UNSET
    n_gpus: int | None | Unset = UNSET
    gradient_clipping: float | None | Unset = UNSET
    multiplex_job_id: None | str | Unset = UNSET
    load_optimizer_states: bool | None | Unset = UNSET
    model_provider: None | str | Unset = UNSET
    ep_size: int | None | Unset = UNSET
    sp_size: int | None | Unset = UNSET
    activation_checkpointing: bool | int | None | Unset = UNSET
    cuda_allocator_conf: None | str | Unset = UNSET
    ds_config: DeepSpeedConfig | None | Unset = UNSET
    ac_config: ActivationCheckpointingConfig | None | Unset = UNSET
    mb_spec: MicroBatchSpec | None | Unset = UNSET
    router_replay: None | RouterReplayConfig | Unset = UNSET
    peft_config: None | PeftConfig | Unset = UNSET
    model_options: ModelOptions | None | Unset = UNSET
    prime_rl: None | PrimeRlConfig | Unset = UNSET
    dflash2: Dflash2Config | None | Unset = UNSET
    step_peak_memory_log: bool | None | Unset = UNSET
    training_memory_telemetry: bool | None | Unset = UNSET
    save_training_metrics: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.activation_checkpointing_config import ActivationCheckpointingConfig  # noqa: PLC0415
        from ..models.deep_speed_config import DeepSpeedConfig  # noqa: PLC0415
        from ..models.dflash_2_config import Dflash2Config  # noqa: PLC0415
        from ..models.micro_batch_spec import MicroBatchSpec  # noqa: PLC0415
        from ..models.model_options import ModelOptions  # noqa: PLC0415
        from ..models.optimizer_config import OptimizerConfig  # noqa: PLC0415
        from ..models.peft_config import PeftConfig  # noqa: PLC0415
        from ..models.prime_rl_config import PrimeRlConfig  # noqa: PLC0415
        from ..models.router_replay_config import RouterReplayConfig  # noqa: PLC0415

        optimizer: dict[str, Any] | None | Unset
        if isinstance(self.optimizer, Unset):
            optimizer = UNSET
        elif isinstance(self.optimizer, OptimizerConfig):
            optimizer = self.optimizer.to_dict()
        else:
            optimizer = self.optimizer

        max_seq_len: int | None | Unset
        if isinstance(self.max_seq_len, Unset):
            max_seq_len = UNSET
        else:
            max_seq_len = self.max_seq_len

        train_batch_size: int | None | Unset
        if isinstance(self.train_batch_size, Unset):
            train_batch_size = UNSET
        else:
            train_batch_size = self.train_batch_size

        n_gpus: int | None | Unset
        if isinstance(self.n_gpus, Unset):
            n_gpus = UNSET
        else:
            n_gpus = self.n_gpus

        gradient_clipping: float | None | Unset
        if isinstance(self.gradient_clipping, Unset):
            gradient_clipping = UNSET
        else:
            gradient_clipping = self.gradient_clipping

        multiplex_job_id: None | str | Unset
        if isinstance(self.multiplex_job_id, Unset):
            multiplex_job_id = UNSET
        else:
            multiplex_job_id = self.multiplex_job_id

        load_optimizer_states: bool | None | Unset
        if isinstance(self.load_optimizer_states, Unset):
            load_optimizer_states = UNSET
        else:
            load_optimizer_states = self.load_optimizer_states

        model_provider: None | str | Unset
        if isinstance(self.model_provider, Unset):
            model_provider = UNSET
        else:
            model_provider = self.model_provider

        ep_size: int | None | Unset
        if isinstance(self.ep_size, Unset):
            ep_size = UNSET
        else:
            ep_size = self.ep_size

        sp_size: int | None | Unset
        if isinstance(self.sp_size, Unset):
            sp_size = UNSET
        else:
            sp_size = self.sp_size

        activation_checkpointing: bool | int | None | Unset
        if isinstance(self.activation_checkpointing, Unset):
            activation_checkpointing = UNSET
        else:
            activation_checkpointing = self.activation_checkpointing

        cuda_allocator_conf: None | str | Unset
        if isinstance(self.cuda_allocator_conf, Unset):
            cuda_allocator_conf = UNSET
        else:
            cuda_allocator_conf = self.cuda_allocator_conf

        ds_config: dict[str, Any] | None | Unset
        if isinstance(self.ds_config, Unset):
            ds_config = UNSET
        elif isinstance(self.ds_config, DeepSpeedConfig):
            ds_config = self.ds_config.to_dict()
        else:
            ds_config = self.ds_config

        ac_config: dict[str, Any] | None | Unset
        if isinstance(self.ac_config, Unset):
            ac_config = UNSET
        elif isinstance(self.ac_config, ActivationCheckpointingConfig):
            ac_config = self.ac_config.to_dict()
        else:
            ac_config = self.ac_config

        mb_spec: dict[str, Any] | None | Unset
        if isinstance(self.mb_spec, Unset):
            mb_spec = UNSET
        elif isinstance(self.mb_spec, MicroBatchSpec):
            mb_spec = self.mb_spec.to_dict()
        else:
            mb_spec = self.mb_spec

        router_replay: dict[str, Any] | None | Unset
        if isinstance(self.router_replay, Unset):
            router_replay = UNSET
        elif isinstance(self.router_replay, RouterReplayConfig):
            router_replay = self.router_replay.to_dict()
        else:
            router_replay = self.router_replay

        peft_config: dict[str, Any] | None | Unset
        if isinstance(self.peft_config, Unset):
            peft_config = UNSET
        elif isinstance(self.peft_config, PeftConfig):
            peft_config = self.peft_config.to_dict()
        else:
            peft_config = self.peft_config

        model_options: dict[str, Any] | None | Unset
        if isinstance(self.model_options, Unset):
            model_options = UNSET
        elif isinstance(self.model_options, ModelOptions):
            model_options = self.model_options.to_dict()
        else:
            model_options = self.model_options

        prime_rl: dict[str, Any] | None | Unset
        if isinstance(self.prime_rl, Unset):
            prime_rl = UNSET
        elif isinstance(self.prime_rl, PrimeRlConfig):
            prime_rl = self.prime_rl.to_dict()
        else:
            prime_rl = self.prime_rl

        dflash2: dict[str, Any] | None | Unset
        if isinstance(self.dflash2, Unset):
            dflash2 = UNSET
        elif isinstance(self.dflash2, Dflash2Config):
            dflash2 = self.dflash2.to_dict()
        else:
            dflash2 = self.dflash2

        step_peak_memory_log: bool | None | Unset
        if isinstance(self.step_peak_memory_log, Unset):
            step_peak_memory_log = UNSET
        else:
            step_peak_memory_log = self.step_peak_memory_log

        training_memory_telemetry: bool | None | Unset
        if isinstance(self.training_memory_telemetry, Unset):
            training_memory_telemetry = UNSET
        else:
            training_memory_telemetry = self.training_memory_telemetry

        save_training_metrics: bool | None | Unset
        if isinstance(self.save_training_metrics, Unset):
            save_training_metrics = UNSET
        else:
            save_training_metrics = self.save_training_metrics

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if optimizer is not UNSET:
            field_dict["optimizer"] = optimizer
        if max_seq_len is not UNSET:
            field_dict["max_seq_len"] = max_seq_len
        if train_batch_size is not UNSET:
            field_dict["train_batch_size"] = train_batch_size
        if n_gpus is not UNSET:
            field_dict["n_gpus"] = n_gpus
        if gradient_clipping is not UNSET:
            field_dict["gradient_clipping"] = gradient_clipping
        if multiplex_job_id is not UNSET:
            field_dict["multiplex_job_id"] = multiplex_job_id
        if load_optimizer_states is not UNSET:
            field_dict["load_optimizer_states"] = load_optimizer_states
        if model_provider is not UNSET:
            field_dict["model_provider"] = model_provider
        if ep_size is not UNSET:
            field_dict["ep_size"] = ep_size
        if sp_size is not UNSET:
            field_dict["sp_size"] = sp_size
        if activation_checkpointing is not UNSET:
            field_dict["activation_checkpointing"] = activation_checkpointing
        if cuda_allocator_conf is not UNSET:
            field_dict["cuda_allocator_conf"] = cuda_allocator_conf
        if ds_config is not UNSET:
            field_dict["ds_config"] = ds_config
        if ac_config is not UNSET:
            field_dict["ac_config"] = ac_config
        if mb_spec is not UNSET:
            field_dict["mb_spec"] = mb_spec
        if router_replay is not UNSET:
            field_dict["router_replay"] = router_replay
        if peft_config is not UNSET:
            field_dict["peft_config"] = peft_config
        if model_options is not UNSET:
            field_dict["model_options"] = model_options
        if prime_rl is not UNSET:
            field_dict["prime_rl"] = prime_rl
        if dflash2 is not UNSET:
            field_dict["dflash2"] = dflash2
        if step_peak_memory_log is not UNSET:
            field_dict["step_peak_memory_log"] = step_peak_memory_log
        if training_memory_telemetry is not UNSET:
            field_dict["training_memory_telemetry"] = training_memory_telemetry
        if save_training_metrics is not UNSET:
            field_dict["save_training_metrics"] = save_training_metrics

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.activation_checkpointing_config import ActivationCheckpointingConfig  # noqa: PLC0415
        from ..models.deep_speed_config import DeepSpeedConfig  # noqa: PLC0415
        from ..models.dflash_2_config import Dflash2Config  # noqa: PLC0415
        from ..models.micro_batch_spec import MicroBatchSpec  # noqa: PLC0415
        from ..models.model_options import ModelOptions  # noqa: PLC0415
        from ..models.optimizer_config import OptimizerConfig  # noqa: PLC0415
        from ..models.peft_config import PeftConfig  # noqa: PLC0415
        from ..models.prime_rl_config import PrimeRlConfig  # noqa: PLC0415
        from ..models.router_replay_config import RouterReplayConfig  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_optimizer(data: object) -> None | OptimizerConfig | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                optimizer_type_0 = OptimizerConfig.from_dict(data)

                return optimizer_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OptimizerConfig | Unset, data)

        optimizer = _parse_optimizer(d.pop("optimizer", UNSET))

        def _parse_max_seq_len(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_seq_len = _parse_max_seq_len(d.pop("max_seq_len", UNSET))

        def _parse_train_batch_size(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        train_batch_size = _parse_train_batch_size(d.pop("train_batch_size", UNSET))

        def _parse_n_gpus(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        n_gpus = _parse_n_gpus(d.pop("n_gpus", UNSET))

        def _parse_gradient_clipping(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        gradient_clipping = _parse_gradient_clipping(d.pop("gradient_clipping", UNSET))

        def _parse_multiplex_job_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        multiplex_job_id = _parse_multiplex_job_id(d.pop("multiplex_job_id", UNSET))

        def _parse_load_optimizer_states(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        load_optimizer_states = _parse_load_optimizer_states(d.pop("load_optimizer_states", UNSET))

        def _parse_model_provider(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model_provider = _parse_model_provider(d.pop("model_provider", UNSET))

        def _parse_ep_size(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        ep_size = _parse_ep_size(d.pop("ep_size", UNSET))

        def _parse_sp_size(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        sp_size = _parse_sp_size(d.pop("sp_size", UNSET))

        def _parse_activation_checkpointing(data: object) -> bool | int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | int | None | Unset, data)

        activation_checkpointing = _parse_activation_checkpointing(d.pop("activation_checkpointing", UNSET))

        def _parse_cuda_allocator_conf(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cuda_allocator_conf = _parse_cuda_allocator_conf(d.pop("cuda_allocator_conf", UNSET))

        def _parse_ds_config(data: object) -> DeepSpeedConfig | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                ds_config_type_0 = DeepSpeedConfig.from_dict(data)

                return ds_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeepSpeedConfig | None | Unset, data)

        ds_config = _parse_ds_config(d.pop("ds_config", UNSET))

        def _parse_ac_config(data: object) -> ActivationCheckpointingConfig | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                ac_config_type_0 = ActivationCheckpointingConfig.from_dict(data)

                return ac_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ActivationCheckpointingConfig | None | Unset, data)

        ac_config = _parse_ac_config(d.pop("ac_config", UNSET))

        def _parse_mb_spec(data: object) -> MicroBatchSpec | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                mb_spec_type_0 = MicroBatchSpec.from_dict(data)

                return mb_spec_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MicroBatchSpec | None | Unset, data)

        mb_spec = _parse_mb_spec(d.pop("mb_spec", UNSET))

        def _parse_router_replay(data: object) -> None | RouterReplayConfig | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                router_replay_type_0 = RouterReplayConfig.from_dict(data)

                return router_replay_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RouterReplayConfig | Unset, data)

        router_replay = _parse_router_replay(d.pop("router_replay", UNSET))

        def _parse_peft_config(data: object) -> None | PeftConfig | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                peft_config_type_0 = PeftConfig.from_dict(data)

                return peft_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PeftConfig | Unset, data)

        peft_config = _parse_peft_config(d.pop("peft_config", UNSET))

        def _parse_model_options(data: object) -> ModelOptions | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                model_options_type_0 = ModelOptions.from_dict(data)

                return model_options_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ModelOptions | None | Unset, data)

        model_options = _parse_model_options(d.pop("model_options", UNSET))

        def _parse_prime_rl(data: object) -> None | PrimeRlConfig | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                prime_rl_type_0 = PrimeRlConfig.from_dict(data)

                return prime_rl_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PrimeRlConfig | Unset, data)

        prime_rl = _parse_prime_rl(d.pop("prime_rl", UNSET))

        def _parse_dflash2(data: object) -> Dflash2Config | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                dflash2_type_0 = Dflash2Config.from_dict(data)

                return dflash2_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Dflash2Config | None | Unset, data)

        dflash2 = _parse_dflash2(d.pop("dflash2", UNSET))

        def _parse_step_peak_memory_log(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        step_peak_memory_log = _parse_step_peak_memory_log(d.pop("step_peak_memory_log", UNSET))

        def _parse_training_memory_telemetry(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        training_memory_telemetry = _parse_training_memory_telemetry(d.pop("training_memory_telemetry", UNSET))

        def _parse_save_training_metrics(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        save_training_metrics = _parse_save_training_metrics(d.pop("save_training_metrics", UNSET))

        training_config = cls(
            optimizer=optimizer,
            max_seq_len=max_seq_len,
            train_batch_size=train_batch_size,
            n_gpus=n_gpus,
            gradient_clipping=gradient_clipping,
            multiplex_job_id=multiplex_job_id,
            load_optimizer_states=load_optimizer_states,
            model_provider=model_provider,
            ep_size=ep_size,
            sp_size=sp_size,
            activation_checkpointing=activation_checkpointing,
            cuda_allocator_conf=cuda_allocator_conf,
            ds_config=ds_config,
            ac_config=ac_config,
            mb_spec=mb_spec,
            router_replay=router_replay,
            peft_config=peft_config,
            model_options=model_options,
            prime_rl=prime_rl,
            dflash2=dflash2,
            step_peak_memory_log=step_peak_memory_log,
            training_memory_telemetry=training_memory_telemetry,
            save_training_metrics=save_training_metrics,
        )

        training_config.additional_properties = d
        return training_config

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.model_options import ModelOptions
    from ..models.peft_config import PeftConfig
    from ..models.router_replay_config import RouterReplayConfig
    from ..models.vllm_config import VllmConfig


T = TypeVar("T", bound="InferenceConfig")


@_attrs_define
class InferenceConfig:
    """A sampling sub-job's config. Typed keys are listed; extra_sampling keys pass through.

    Attributes:
        max_seq_len (int | None | Unset):
        n_gpus (int | None | Unset):
        multiplex_job_id (None | str | Unset):
        gpu_memory_utilization (float | None | Unset):
        deployment_class (None | str | Unset): EVALUATION for a model deployment.
        num_replicas (int | None | Unset):
        vllm_config (None | Unset | VllmConfig):
        peft_config (None | PeftConfig | Unset):
        model_options (ModelOptions | None | Unset):
        router_replay (None | RouterReplayConfig | Unset):
    """

    max_seq_len: int | None | Unset = UNSET
    n_gpus: int | None | Unset = UNSET
    multiplex_job_id: None | str | Unset = UNSET
    gpu_memory_utilization: float | None | Unset = UNSET
    deployment_class: None | str | Unset = UNSET
    num_replicas: int | None | Unset = UNSET
    vllm_config: None | Unset | VllmConfig = UNSET
    peft_config: None | PeftConfig | Unset = UNSET
    model_options: ModelOptions | None | Unset = UNSET
    router_replay: None | RouterReplayConfig | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.model_options import ModelOptions  # noqa: PLC0415
        from ..models.peft_config import PeftConfig  # noqa: PLC0415
        from ..models.router_replay_config import RouterReplayConfig  # noqa: PLC0415
        from ..models.vllm_config import VllmConfig  # noqa: PLC0415

        max_seq_len: int | None | Unset
        if isinstance(self.max_seq_len, Unset):
            max_seq_len = UNSET
        else:
            max_seq_len = self.max_seq_len

        n_gpus: int | None | Unset
        if isinstance(self.n_gpus, Unset):
            n_gpus = UNSET
        else:
            n_gpus = self.n_gpus

        multiplex_job_id: None | str | Unset
        if isinstance(self.multiplex_job_id, Unset):
            multiplex_job_id = UNSET
        else:
            multiplex_job_id = self.multiplex_job_id

        gpu_memory_utilization: float | None | Unset
        if isinstance(self.gpu_memory_utilization, Unset):
            gpu_memory_utilization = UNSET
        else:
            gpu_memory_utilization = self.gpu_memory_utilization

        deployment_class: None | str | Unset
        if isinstance(self.deployment_class, Unset):
            deployment_class = UNSET
        else:
            deployment_class = self.deployment_class

        num_replicas: int | None | Unset
        if isinstance(self.num_replicas, Unset):
            num_replicas = UNSET
        else:
            num_replicas = self.num_replicas

        vllm_config: dict[str, Any] | None | Unset
        if isinstance(self.vllm_config, Unset):
            vllm_config = UNSET
        elif isinstance(self.vllm_config, VllmConfig):
            vllm_config = self.vllm_config.to_dict()
        else:
            vllm_config = self.vllm_config

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

        router_replay: dict[str, Any] | None | Unset
        if isinstance(self.router_replay, Unset):
            router_replay = UNSET
        elif isinstance(self.router_replay, RouterReplayConfig):
            router_replay = self.router_replay.to_dict()
        else:
            router_replay = self.router_replay

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if max_seq_len is not UNSET:
            field_dict["max_seq_len"] = max_seq_len
        if n_gpus is not UNSET:
            field_dict["n_gpus"] = n_gpus
        if multiplex_job_id is not UNSET:
            field_dict["multiplex_job_id"] = multiplex_job_id
        if gpu_memory_utilization is not UNSET:
            field_dict["gpu_memory_utilization"] = gpu_memory_utilization
        if deployment_class is not UNSET:
            field_dict["deployment_class"] = deployment_class
        if num_replicas is not UNSET:
            field_dict["num_replicas"] = num_replicas
        if vllm_config is not UNSET:
            field_dict["vllm_config"] = vllm_config
        if peft_config is not UNSET:
            field_dict["peft_config"] = peft_config
        if model_options is not UNSET:
            field_dict["model_options"] = model_options
        if router_replay is not UNSET:
            field_dict["router_replay"] = router_replay

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.model_options import ModelOptions  # noqa: PLC0415
        from ..models.peft_config import PeftConfig  # noqa: PLC0415
        from ..models.router_replay_config import RouterReplayConfig  # noqa: PLC0415
        from ..models.vllm_config import VllmConfig  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_max_seq_len(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_seq_len = _parse_max_seq_len(d.pop("max_seq_len", UNSET))

        def _parse_n_gpus(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        n_gpus = _parse_n_gpus(d.pop("n_gpus", UNSET))

        def _parse_multiplex_job_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        multiplex_job_id = _parse_multiplex_job_id(d.pop("multiplex_job_id", UNSET))

        def _parse_gpu_memory_utilization(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        gpu_memory_utilization = _parse_gpu_memory_utilization(d.pop("gpu_memory_utilization", UNSET))

        def _parse_deployment_class(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deployment_class = _parse_deployment_class(d.pop("deployment_class", UNSET))

        def _parse_num_replicas(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        num_replicas = _parse_num_replicas(d.pop("num_replicas", UNSET))

        def _parse_vllm_config(data: object) -> None | Unset | VllmConfig:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                vllm_config_type_0 = VllmConfig.from_dict(data)

                return vllm_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VllmConfig, data)

        vllm_config = _parse_vllm_config(d.pop("vllm_config", UNSET))

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

        inference_config = cls(
            max_seq_len=max_seq_len,
            n_gpus=n_gpus,
            multiplex_job_id=multiplex_job_id,
            gpu_memory_utilization=gpu_memory_utilization,
            deployment_class=deployment_class,
            num_replicas=num_replicas,
            vllm_config=vllm_config,
            peft_config=peft_config,
            model_options=model_options,
            router_replay=router_replay,
        )

        inference_config.additional_properties = d
        return inference_config

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.speculative_config import SpeculativeConfig


T = TypeVar("T", bound="VllmConfig")


@_attrs_define
class VllmConfig:
    """
    Attributes:
        tensor_parallel_size (int | None | Unset):
        max_model_len (int | None | Unset):
        gpu_memory_utilization (float | None | Unset):
        fp32_lm_head (bool | None | Unset):
        clear_cache_on_weight_sync (bool | None | Unset): Whether the default weight sync clears the prefix cache
            (default true).
        speculative_config (None | SpeculativeConfig | Unset):
    """

    tensor_parallel_size: int | None | Unset = UNSET
    max_model_len: int | None | Unset = UNSET
    gpu_memory_utilization: float | None | Unset = UNSET
    fp32_lm_head: bool | None | Unset = UNSET
    clear_cache_on_weight_sync: bool | None | Unset = UNSET
    speculative_config: None | SpeculativeConfig | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.speculative_config import SpeculativeConfig  # noqa: PLC0415

        tensor_parallel_size: int | None | Unset
        if isinstance(self.tensor_parallel_size, Unset):
            tensor_parallel_size = UNSET
        else:
            tensor_parallel_size = self.tensor_parallel_size

        max_model_len: int | None | Unset
        if isinstance(self.max_model_len, Unset):
            max_model_len = UNSET
        else:
            max_model_len = self.max_model_len

        gpu_memory_utilization: float | None | Unset
        if isinstance(self.gpu_memory_utilization, Unset):
            gpu_memory_utilization = UNSET
        else:
            gpu_memory_utilization = self.gpu_memory_utilization

        fp32_lm_head: bool | None | Unset
        if isinstance(self.fp32_lm_head, Unset):
            fp32_lm_head = UNSET
        else:
            fp32_lm_head = self.fp32_lm_head

        clear_cache_on_weight_sync: bool | None | Unset
        if isinstance(self.clear_cache_on_weight_sync, Unset):
            clear_cache_on_weight_sync = UNSET
        else:
            clear_cache_on_weight_sync = self.clear_cache_on_weight_sync

        speculative_config: dict[str, Any] | None | Unset
        if isinstance(self.speculative_config, Unset):
            speculative_config = UNSET
        elif isinstance(self.speculative_config, SpeculativeConfig):
            speculative_config = self.speculative_config.to_dict()
        else:
            speculative_config = self.speculative_config

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if tensor_parallel_size is not UNSET:
            field_dict["tensor_parallel_size"] = tensor_parallel_size
        if max_model_len is not UNSET:
            field_dict["max_model_len"] = max_model_len
        if gpu_memory_utilization is not UNSET:
            field_dict["gpu_memory_utilization"] = gpu_memory_utilization
        if fp32_lm_head is not UNSET:
            field_dict["fp32_lm_head"] = fp32_lm_head
        if clear_cache_on_weight_sync is not UNSET:
            field_dict["clear_cache_on_weight_sync"] = clear_cache_on_weight_sync
        if speculative_config is not UNSET:
            field_dict["speculative_config"] = speculative_config

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.speculative_config import SpeculativeConfig  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_tensor_parallel_size(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        tensor_parallel_size = _parse_tensor_parallel_size(d.pop("tensor_parallel_size", UNSET))

        def _parse_max_model_len(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_model_len = _parse_max_model_len(d.pop("max_model_len", UNSET))

        def _parse_gpu_memory_utilization(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        gpu_memory_utilization = _parse_gpu_memory_utilization(d.pop("gpu_memory_utilization", UNSET))

        def _parse_fp32_lm_head(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        fp32_lm_head = _parse_fp32_lm_head(d.pop("fp32_lm_head", UNSET))

        def _parse_clear_cache_on_weight_sync(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        clear_cache_on_weight_sync = _parse_clear_cache_on_weight_sync(d.pop("clear_cache_on_weight_sync", UNSET))

        def _parse_speculative_config(data: object) -> None | SpeculativeConfig | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                speculative_config_type_0 = SpeculativeConfig.from_dict(data)

                return speculative_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SpeculativeConfig | Unset, data)

        speculative_config = _parse_speculative_config(d.pop("speculative_config", UNSET))

        vllm_config = cls(
            tensor_parallel_size=tensor_parallel_size,
            max_model_len=max_model_len,
            gpu_memory_utilization=gpu_memory_utilization,
            fp32_lm_head=fp32_lm_head,
            clear_cache_on_weight_sync=clear_cache_on_weight_sync,
            speculative_config=speculative_config,
        )

        vllm_config.additional_properties = d
        return vllm_config

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.inference_config import InferenceConfig
    from ..models.source_checkpoint_info import SourceCheckpointInfo
    from ..models.training_config import TrainingConfig


T = TypeVar("T", bound="SubJobConfig")


@_attrs_define
class SubJobConfig:
    """One sub-job of a create body; exactly one of training_config and inference_config is set.

    Attributes:
        job_type (str): training, sampling or log_probability (see JobType).
        model_name (str):
        training_config (None | TrainingConfig | Unset):
        inference_config (InferenceConfig | None | Unset):
        global_batch_size (int | None | Unset):
        dtype (None | str | Unset):
        seed (int | None | Unset):
        model_post_init (list[str] | None | Unset):
        source_checkpoint_info (None | SourceCheckpointInfo | Unset):
    """

    job_type: str
    model_name: str
    training_config: None | TrainingConfig | Unset = UNSET
    inference_config: InferenceConfig | None | Unset = UNSET
    global_batch_size: int | None | Unset = UNSET
    dtype: None | str | Unset = UNSET
    seed: int | None | Unset = UNSET
    model_post_init: list[str] | None | Unset = UNSET
    source_checkpoint_info: None | SourceCheckpointInfo | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.inference_config import InferenceConfig  # noqa: PLC0415
        from ..models.source_checkpoint_info import SourceCheckpointInfo  # noqa: PLC0415
        from ..models.training_config import TrainingConfig  # noqa: PLC0415

        job_type = self.job_type

        model_name = self.model_name

        training_config: dict[str, Any] | None | Unset
        if isinstance(self.training_config, Unset):
            training_config = UNSET
        elif isinstance(self.training_config, TrainingConfig):
            training_config = self.training_config.to_dict()
        else:
            training_config = self.training_config

        inference_config: dict[str, Any] | None | Unset
        if isinstance(self.inference_config, Unset):
            inference_config = UNSET
        elif isinstance(self.inference_config, InferenceConfig):
            inference_config = self.inference_config.to_dict()
        else:
            inference_config = self.inference_config

        global_batch_size: int | None | Unset
        if isinstance(self.global_batch_size, Unset):
            global_batch_size = UNSET
        else:
            global_batch_size = self.global_batch_size

        dtype: None | str | Unset
        if isinstance(self.dtype, Unset):
            dtype = UNSET
        else:
            dtype = self.dtype

        seed: int | None | Unset
        if isinstance(self.seed, Unset):
            seed = UNSET
        else:
            seed = self.seed

        model_post_init: list[str] | None | Unset
        if isinstance(self.model_post_init, Unset):
            model_post_init = UNSET
        elif isinstance(self.model_post_init, list):
            model_post_init = self.model_post_init

        else:
            model_post_init = self.model_post_init

        source_checkpoint_info: dict[str, Any] | None | Unset
        if isinstance(self.source_checkpoint_info, Unset):
            source_checkpoint_info = UNSET
        elif isinstance(self.source_checkpoint_info, SourceCheckpointInfo):
            source_checkpoint_info = self.source_checkpoint_info.to_dict()
        else:
            source_checkpoint_info = self.source_checkpoint_info

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "job_type": job_type,
                "model_name": model_name,
            }
        )
        if training_config is not UNSET:
            field_dict["training_config"] = training_config
        if inference_config is not UNSET:
            field_dict["inference_config"] = inference_config
        if global_batch_size is not UNSET:
            field_dict["global_batch_size"] = global_batch_size
        if dtype is not UNSET:
            field_dict["dtype"] = dtype
        if seed is not UNSET:
            field_dict["seed"] = seed
        if model_post_init is not UNSET:
            field_dict["model_post_init"] = model_post_init
        if source_checkpoint_info is not UNSET:
            field_dict["source_checkpoint_info"] = source_checkpoint_info

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.inference_config import InferenceConfig  # noqa: PLC0415
        from ..models.source_checkpoint_info import SourceCheckpointInfo  # noqa: PLC0415
        from ..models.training_config import TrainingConfig  # noqa: PLC0415

        d = dict(src_dict)
        job_type = d.pop("job_type")

        model_name = d.pop("model_name")

        def _parse_training_config(data: object) -> None | TrainingConfig | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                training_config_type_0 = TrainingConfig.from_dict(data)

                return training_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TrainingConfig | Unset, data)

        training_config = _parse_training_config(d.pop("training_config", UNSET))

        def _parse_inference_config(data: object) -> InferenceConfig | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                inference_config_type_0 = InferenceConfig.from_dict(data)

                return inference_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(InferenceConfig | None | Unset, data)

        inference_config = _parse_inference_config(d.pop("inference_config", UNSET))

        def _parse_global_batch_size(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        global_batch_size = _parse_global_batch_size(d.pop("global_batch_size", UNSET))

        def _parse_dtype(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dtype = _parse_dtype(d.pop("dtype", UNSET))

        def _parse_seed(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        seed = _parse_seed(d.pop("seed", UNSET))

        def _parse_model_post_init(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                model_post_init_type_0 = cast(list[str], data)

                return model_post_init_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        model_post_init = _parse_model_post_init(d.pop("model_post_init", UNSET))

        def _parse_source_checkpoint_info(data: object) -> None | SourceCheckpointInfo | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                source_checkpoint_info_type_0 = SourceCheckpointInfo.from_dict(data)

                return source_checkpoint_info_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceCheckpointInfo | Unset, data)

        source_checkpoint_info = _parse_source_checkpoint_info(d.pop("source_checkpoint_info", UNSET))

        sub_job_config = cls(
            job_type=job_type,
            model_name=model_name,
            training_config=training_config,
            inference_config=inference_config,
            global_batch_size=global_batch_size,
            dtype=dtype,
            seed=seed,
            model_post_init=model_post_init,
            source_checkpoint_info=source_checkpoint_info,
        )

        sub_job_config.additional_properties = d
        return sub_job_config

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

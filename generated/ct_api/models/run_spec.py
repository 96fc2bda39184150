from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.model_config_tier import ModelConfigTier
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.run_overrides import RunOverrides
    from ..models.trainer_spec import TrainerSpec


T = TypeVar("T", bound="RunSpec")


@_attrs_define
class RunSpec:
    """What to train. Unknown keys are refused with invalid_argument naming them. Omitted `labels` means every label of the
    dataset; an empty list means none (self-supervised only).

        Attributes:
            dataset_id (str): A succeeded dataset build
            model_config_tier (ModelConfigTier | Unset): The model size preset of the catalog a run starts from.
            labels (list[str] | Unset):
            seed (int | Unset):  Default: 0.
            overrides (RunOverrides | Unset): Settings of the tier's preset tuned within validated bounds; the service
                refuses an unknown key or a value out of bounds with invalid_argument naming it (for example
                overrides.max_seq_len).
            trainer (TrainerSpec | Unset): The trainer. Every key is optional in a spec; a run echoes every key resolved.
                Early stopping (the default) validates at the nominal cadence and at each epoch boundary and, after `patience`
                validations without an improvement of `min_delta`, runs the cooldown of the WSD schedule (`cooldown_ratio` of
                the steps) and ends succeeded.
    """

    dataset_id: str
    model_config_tier: ModelConfigTier | Unset = UNSET
    labels: list[str] | Unset = UNSET
    seed: int | Unset = 0
    overrides: RunOverrides | Unset = UNSET
    trainer: TrainerSpec | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        dataset_id = self.dataset_id

        model_config_tier: str | Unset = UNSET
        if not isinstance(self.model_config_tier, Unset):
            model_config_tier = self.model_config_tier.value

        labels: list[str] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels

        seed = self.seed

        overrides: dict[str, Any] | Unset = UNSET
        if not isinstance(self.overrides, Unset):
            overrides = self.overrides.to_dict()

        trainer: dict[str, Any] | Unset = UNSET
        if not isinstance(self.trainer, Unset):
            trainer = self.trainer.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "dataset_id": dataset_id,
            }
        )
        if model_config_tier is not UNSET:
            field_dict["model_config_tier"] = model_config_tier
        if labels is not UNSET:
            field_dict["labels"] = labels
        if seed is not UNSET:
            field_dict["seed"] = seed
        if overrides is not UNSET:
            field_dict["overrides"] = overrides
        if trainer is not UNSET:
            field_dict["trainer"] = trainer

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_overrides import RunOverrides  # noqa: PLC0415
        from ..models.trainer_spec import TrainerSpec  # noqa: PLC0415

        d = dict(src_dict)
        dataset_id = d.pop("dataset_id")

        _model_config_tier = d.pop("model_config_tier", UNSET)
        model_config_tier: ModelConfigTier | Unset
        if isinstance(_model_config_tier, Unset):
            model_config_tier = UNSET
        else:
            model_config_tier = ModelConfigTier(_model_config_tier)

        labels = cast(list[str], d.pop("labels", UNSET))

        seed = d.pop("seed", UNSET)

        _overrides = d.pop("overrides", UNSET)
        overrides: RunOverrides | Unset
        if isinstance(_overrides, Unset):
            overrides = UNSET
        else:
            overrides = RunOverrides.from_dict(_overrides)

        _trainer = d.pop("trainer", UNSET)
        trainer: TrainerSpec | Unset
        if isinstance(_trainer, Unset):
            trainer = UNSET
        else:
            trainer = TrainerSpec.from_dict(_trainer)

        run_spec = cls(
            dataset_id=dataset_id,
            model_config_tier=model_config_tier,
            labels=labels,
            seed=seed,
            overrides=overrides,
            trainer=trainer,
        )

        return run_spec

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.dflash_2_config_attention_backend import Dflash2ConfigAttentionBackend
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.dflash_2_draft_config import Dflash2DraftConfig


T = TypeVar("T", bound="Dflash2Config")


@_attrs_define
class Dflash2Config:
    """DFlash2 draft training options; required with model_provider dflash2. Unknown keys are rejected.

    Attributes:
        draft_config (Dflash2DraftConfig): The contents of the draft's config.json (architectures and dflash_config).
        init_from (None | str | Unset):
        attention_backend (Dflash2ConfigAttentionBackend | Unset):  Default: Dflash2ConfigAttentionBackend.SDPA.
        num_anchors (int | Unset):  Default: 512.
        loss_decay_gamma (float | None | Unset):  Default: 7.0.
        selector_loss_alpha (float | Unset):  Default: 1.0.
        selector_stop_gradient (bool | Unset):  Default: False.
        objective_chunk_blocks (int | Unset):  Default: 128.
        seed (int | Unset):  Default: 0.
    """

    draft_config: Dflash2DraftConfig
    init_from: None | str | Unset = UNSET
    attention_backend: Dflash2ConfigAttentionBackend | Unset = Dflash2ConfigAttentionBackend.SDPA
    num_anchors: int | Unset = 512
    loss_decay_gamma: float | None | Unset = 7.0
    selector_loss_alpha: float | Unset = 1.0
    selector_stop_gradient: bool | Unset = False
    objective_chunk_blocks: int | Unset = 128
    seed: int | Unset = 0

    def to_dict(self) -> dict[str, Any]:
        draft_config = self.draft_config.to_dict()

        init_from: None | str | Unset
        if isinstance(self.init_from, Unset):
            init_from = UNSET
        else:
            init_from = self.init_from

        attention_backend: str | Unset = UNSET
        if not isinstance(self.attention_backend, Unset):
            attention_backend = self.attention_backend.value

        num_anchors = self.num_anchors

        loss_decay_gamma: float | None | Unset
        if isinstance(self.loss_decay_gamma, Unset):
            loss_decay_gamma = UNSET
        else:
            loss_decay_gamma = self.loss_decay_gamma

        selector_loss_alpha = self.selector_loss_alpha

        selector_stop_gradient = self.selector_stop_gradient

        objective_chunk_blocks = self.objective_chunk_blocks

        seed = self.seed

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "draft_config": draft_config,
            }
        )
        if init_from is not UNSET:
            field_dict["init_from"] = init_from
        if attention_backend is not UNSET:
            field_dict["attention_backend"] = attention_backend
        if num_anchors is not UNSET:
            field_dict["num_anchors"] = num_anchors
        if loss_decay_gamma is not UNSET:
            field_dict["loss_decay_gamma"] = loss_decay_gamma
        if selector_loss_alpha is not UNSET:
            field_dict["selector_loss_alpha"] = selector_loss_alpha
        if selector_stop_gradient is not UNSET:
            field_dict["selector_stop_gradient"] = selector_stop_gradient
        if objective_chunk_blocks is not UNSET:
            field_dict["objective_chunk_blocks"] = objective_chunk_blocks
        if seed is not UNSET:
            field_dict["seed"] = seed

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dflash_2_draft_config import Dflash2DraftConfig  # noqa: PLC0415

        d = dict(src_dict)
        draft_config = Dflash2DraftConfig.from_dict(d.pop("draft_config"))

        def _parse_init_from(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        init_from = _parse_init_from(d.pop("init_from", UNSET))

        _attention_backend = d.pop("attention_backend", UNSET)
        attention_backend: Dflash2ConfigAttentionBackend | Unset
        if isinstance(_attention_backend, Unset):
            attention_backend = UNSET
        else:
            attention_backend = Dflash2ConfigAttentionBackend(_attention_backend)

        num_anchors = d.pop("num_anchors", UNSET)

        def _parse_loss_decay_gamma(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        loss_decay_gamma = _parse_loss_decay_gamma(d.pop("loss_decay_gamma", UNSET))

        selector_loss_alpha = d.pop("selector_loss_alpha", UNSET)

        selector_stop_gradient = d.pop("selector_stop_gradient", UNSET)

        objective_chunk_blocks = d.pop("objective_chunk_blocks", UNSET)

        seed = d.pop("seed", UNSET)

        dflash_2_config = cls(
            draft_config=draft_config,
            init_from=init_from,
            attention_backend=attention_backend,
            num_anchors=num_anchors,
            loss_decay_gamma=loss_decay_gamma,
            selector_loss_alpha=selector_loss_alpha,
            selector_stop_gradient=selector_stop_gradient,
            objective_chunk_blocks=objective_chunk_blocks,
            seed=seed,
        )

        return dflash_2_config

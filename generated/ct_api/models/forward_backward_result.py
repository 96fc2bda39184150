from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.metrics import Metrics
    from ..models.post_process_outputs import PostProcessOutputs


T = TypeVar("T", bound="ForwardBackwardResult")


@_attrs_define
class ForwardBackwardResult:
    """
    Attributes:
        job_id (str | Unset):
        avg_loss (float | None | Unset):
        metrics (Metrics | None | Unset):
        post_process_outputs (None | PostProcessOutputs | Unset):
    """

    job_id: str | Unset = UNSET
    avg_loss: float | None | Unset = UNSET
    metrics: Metrics | None | Unset = UNSET
    post_process_outputs: None | PostProcessOutputs | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.metrics import Metrics  # noqa: PLC0415
        from ..models.post_process_outputs import PostProcessOutputs  # noqa: PLC0415

        job_id = self.job_id

        avg_loss: float | None | Unset
        if isinstance(self.avg_loss, Unset):
            avg_loss = UNSET
        else:
            avg_loss = self.avg_loss

        metrics: dict[str, Any] | None | Unset
        if isinstance(self.metrics, Unset):
            metrics = UNSET
        elif isinstance(self.metrics, Metrics):
            metrics = self.metrics.to_dict()
        else:
            metrics = self.metrics

        post_process_outputs: dict[str, Any] | None | Unset
        if isinstance(self.post_process_outputs, Unset):
            post_process_outputs = UNSET
        elif isinstance(self.post_process_outputs, PostProcessOutputs):
            post_process_outputs = self.post_process_outputs.to_dict()
        else:
            post_process_outputs = self.post_process_outputs

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if job_id is not UNSET:
            field_dict["job_id"] = job_id
        if avg_loss is not UNSET:
            field_dict["avg_loss"] = avg_loss
        if metrics is not UNSET:
            field_dict["metrics"] = metrics
        if post_process_outputs is not UNSET:
            field_dict["post_process_outputs"] = post_process_outputs

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.metrics import Metrics  # noqa: PLC0415
        from ..models.post_process_outputs import PostProcessOutputs  # noqa: PLC0415

        d = dict(src_dict)
        job_id = d.pop("job_id", UNSET)

        def _parse_avg_loss(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        avg_loss = _parse_avg_loss(d.pop("avg_loss", UNSET))

        def _parse_metrics(data: object) -> Metrics | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                metrics_type_0 = Metrics.from_dict(data)

                return metrics_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Metrics | None | Unset, data)

        metrics = _parse_metrics(d.pop("metrics", UNSET))

        def _parse_post_process_outputs(data: object) -> None | PostProcessOutputs | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                post_process_outputs_type_0 = PostProcessOutputs.from_dict(data)

                return post_process_outputs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PostProcessOutputs | Unset, data)

        post_process_outputs = _parse_post_process_outputs(d.pop("post_process_outputs", UNSET))

        forward_backward_result = cls(
            job_id=job_id,
            avg_loss=avg_loss,
            metrics=metrics,
            post_process_outputs=post_process_outputs,
        )

        forward_backward_result.additional_properties = d
        return forward_backward_result

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.bootstrap_router_replay_payload import BootstrapRouterReplayPayload
    from ..models.cancel_request_payload import CancelRequestPayload
    from ..models.forward_payload import ForwardPayload
    from ..models.operation_payload import OperationPayload
    from ..models.reset_prefix_cache_payload import ResetPrefixCachePayload
    from ..models.router_replay_discard_payload import RouterReplayDiscardPayload
    from ..models.tail_logs_payload import TailLogsPayload
    from ..models.weight_sync_payload import WeightSyncPayload


T = TypeVar("T", bound="OperationRequest")


@_attrs_define
class OperationRequest:
    """
    Attributes:
        operation_type (str): One of OperationType; other values are passed through.
        sub_job_id (str | Unset):
        sub_job_type (str | Unset):
        payload (BootstrapRouterReplayPayload | CancelRequestPayload | ForwardPayload | OperationPayload |
            ResetPrefixCachePayload | RouterReplayDiscardPayload | TailLogsPayload | Unset | WeightSyncPayload): The
            operation-specific payload.
    """

    operation_type: str
    sub_job_id: str | Unset = UNSET
    sub_job_type: str | Unset = UNSET
    payload: (
        BootstrapRouterReplayPayload
        | CancelRequestPayload
        | ForwardPayload
        | OperationPayload
        | ResetPrefixCachePayload
        | RouterReplayDiscardPayload
        | TailLogsPayload
        | Unset
        | WeightSyncPayload
    ) = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.bootstrap_router_replay_payload import BootstrapRouterReplayPayload  # noqa: PLC0415
        from ..models.cancel_request_payload import CancelRequestPayload  # noqa: PLC0415
        from ..models.forward_payload import ForwardPayload  # noqa: PLC0415
        from ..models.reset_prefix_cache_payload import ResetPrefixCachePayload  # noqa: PLC0415
        from ..models.router_replay_discard_payload import RouterReplayDiscardPayload  # noqa: PLC0415
        from ..models.tail_logs_payload import TailLogsPayload  # noqa: PLC0415
        from ..models.weight_sync_payload import WeightSyncPayload  # noqa: PLC0415

        operation_type = self.operation_type

        sub_job_id = self.sub_job_id

        sub_job_type = self.sub_job_type

        payload: dict[str, Any] | Unset
        if isinstance(self.payload, Unset):
            payload = UNSET
        elif isinstance(self.payload, ForwardPayload):
            payload = self.payload.to_dict()
        elif isinstance(self.payload, WeightSyncPayload):
            payload = self.payload.to_dict()
        elif isinstance(self.payload, BootstrapRouterReplayPayload):
            payload = self.payload.to_dict()
        elif isinstance(self.payload, RouterReplayDiscardPayload):
            payload = self.payload.to_dict()
        elif isinstance(self.payload, CancelRequestPayload):
            payload = self.payload.to_dict()
        elif isinstance(self.payload, TailLogsPayload):
            payload = self.payload.to_dict()
        elif isinstance(self.payload, ResetPrefixCachePayload):
            payload = self.payload.to_dict()
        else:
            payload = self.payload.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "operation_type": operation_type,
            }
        )
        if sub_job_id is not UNSET:
            field_dict["sub_job_id"] = sub_job_id
        if sub_job_type is not UNSET:
            field_dict["sub_job_type"] = sub_job_type
        if payload is not UNSET:
            field_dict["payload"] = payload

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.bootstrap_router_replay_payload import BootstrapRouterReplayPayload  # noqa: PLC0415
        from ..models.cancel_request_payload import CancelRequestPayload  # noqa: PLC0415
        from ..models.forward_payload import ForwardPayload  # noqa: PLC0415
        from ..models.operation_payload import OperationPayload  # noqa: PLC0415
        from ..models.reset_prefix_cache_payload import ResetPrefixCachePayload  # noqa: PLC0415
        from ..models.router_replay_discard_payload import RouterReplayDiscardPayload  # noqa: PLC0415
        from ..models.tail_logs_payload import TailLogsPayload  # noqa: PLC0415
        from ..models.weight_sync_payload import WeightSyncPayload  # noqa: PLC0415

        d = dict(src_dict)
        operation_type = d.pop("operation_type")

        sub_job_id = d.pop("sub_job_id", UNSET)

        sub_job_type = d.pop("sub_job_type", UNSET)

        def _parse_payload(
            data: object,
        ) -> (
            BootstrapRouterReplayPayload
            | CancelRequestPayload
            | ForwardPayload
            | OperationPayload
            | ResetPrefixCachePayload
            | RouterReplayDiscardPayload
            | TailLogsPayload
            | Unset
            | WeightSyncPayload
        ):
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payload_type_0 = ForwardPayload.from_dict(data)

                return payload_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payload_type_1 = WeightSyncPayload.from_dict(data)

                return payload_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payload_type_2 = BootstrapRouterReplayPayload.from_dict(data)

                return payload_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payload_type_3 = RouterReplayDiscardPayload.from_dict(data)

                return payload_type_3
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payload_type_4 = CancelRequestPayload.from_dict(data)

                return payload_type_4
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payload_type_5 = TailLogsPayload.from_dict(data)

                return payload_type_5
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payload_type_6 = ResetPrefixCachePayload.from_dict(data)

                return payload_type_6
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            payload_type_7 = OperationPayload.from_dict(data)

            return payload_type_7

        payload = _parse_payload(d.pop("payload", UNSET))

        operation_request = cls(
            operation_type=operation_type,
            sub_job_id=sub_job_id,
            sub_job_type=sub_job_type,
            payload=payload,
        )

        return operation_request

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.chat_message import ChatMessage
    from ..models.choice_logprobs import ChoiceLogprobs


T = TypeVar("T", bound="ChatCompletionChunkChoice")


@_attrs_define
class ChatCompletionChunkChoice:
    """
    Attributes:
        index (int | Unset):
        delta (ChatMessage | None | Unset):
        finish_reason (None | str | Unset):
        logprobs (ChoiceLogprobs | None | Unset):
    """

    index: int | Unset = UNSET
    delta: ChatMessage | None | Unset = UNSET
    finish_reason: None | str | Unset = UNSET
    logprobs: ChoiceLogprobs | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.chat_message import ChatMessage  # noqa: PLC0415
        from ..models.choice_logprobs import ChoiceLogprobs  # noqa: PLC0415

        index = self.index

        delta: dict[str, Any] | None | Unset
        if isinstance(self.delta, Unset):
            delta = UNSET
        elif isinstance(self.delta, ChatMessage):
            delta = self.delta.to_dict()
        else:
            delta = self.delta

        finish_reason: None | str | Unset
        if isinstance(self.finish_reason, Unset):
            finish_reason = UNSET
        else:
            finish_reason = self.finish_reason

        logprobs: dict[str, Any] | None | Unset
        if isinstance(self.logprobs, Unset):
            logprobs = UNSET
        elif isinstance(self.logprobs, ChoiceLogprobs):
            logprobs = self.logprobs.to_dict()
        else:
            logprobs = self.logprobs

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if index is not UNSET:
            field_dict["index"] = index
        if delta is not UNSET:
            field_dict["delta"] = delta
        if finish_reason is not UNSET:
            field_dict["finish_reason"] = finish_reason
        if logprobs is not UNSET:
            field_dict["logprobs"] = logprobs

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.chat_message import ChatMessage  # noqa: PLC0415
        from ..models.choice_logprobs import ChoiceLogprobs  # noqa: PLC0415

        d = dict(src_dict)
        index = d.pop("index", UNSET)

        def _parse_delta(data: object) -> ChatMessage | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                delta_type_0 = ChatMessage.from_dict(data)

                return delta_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ChatMessage | None | Unset, data)

        delta = _parse_delta(d.pop("delta", UNSET))

        def _parse_finish_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        finish_reason = _parse_finish_reason(d.pop("finish_reason", UNSET))

        def _parse_logprobs(data: object) -> ChoiceLogprobs | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                logprobs_type_0 = ChoiceLogprobs.from_dict(data)

                return logprobs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ChoiceLogprobs | None | Unset, data)

        logprobs = _parse_logprobs(d.pop("logprobs", UNSET))

        chat_completion_chunk_choice = cls(
            index=index,
            delta=delta,
            finish_reason=finish_reason,
            logprobs=logprobs,
        )

        chat_completion_chunk_choice.additional_properties = d
        return chat_completion_chunk_choice

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

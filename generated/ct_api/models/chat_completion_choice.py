from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.chat_message import ChatMessage
    from ..models.choice_logprobs import ChoiceLogprobs


T = TypeVar("T", bound="ChatCompletionChoice")


@_attrs_define
class ChatCompletionChoice:
    """
    Attributes:
        index (int | Unset):
        message (ChatMessage | None | Unset):
        finish_reason (None | str | Unset):
        logprobs (ChoiceLogprobs | None | Unset):
    """

    index: int | Unset = UNSET
    message: ChatMessage | None | Unset = UNSET
    finish_reason: None | str | Unset = UNSET
    logprobs: ChoiceLogprobs | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.chat_message import ChatMessage  # noqa: PLC0415
        from ..models.choice_logprobs import ChoiceLogprobs  # noqa: PLC0415

        index = self.index

        message: dict[str, Any] | None | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        elif isinstance(self.message, ChatMessage):
            message = self.message.to_dict()
        else:
            message = self.message

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
        if message is not UNSET:
            field_dict["message"] = message
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

        def _parse_message(data: object) -> ChatMessage | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                message_type_0 = ChatMessage.from_dict(data)

                return message_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ChatMessage | None | Unset, data)

        message = _parse_message(d.pop("message", UNSET))

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

        chat_completion_choice = cls(
            index=index,
            message=message,
            finish_reason=finish_reason,
            logprobs=logprobs,
        )

        chat_completion_choice.additional_properties = d
        return chat_completion_choice

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

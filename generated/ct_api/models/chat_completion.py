from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.chat_completion_choice import ChatCompletionChoice
    from ..models.completion_usage import CompletionUsage


T = TypeVar("T", bound="ChatCompletion")


@_attrs_define
class ChatCompletion:
    """
    Attributes:
        id (str | Unset):
        object_ (str | Unset):
        created (int | Unset):
        model (str | Unset):
        choices (list[ChatCompletionChoice] | Unset):
        usage (CompletionUsage | None | Unset):
    """

    id: str | Unset = UNSET
    object_: str | Unset = UNSET
    created: int | Unset = UNSET
    model: str | Unset = UNSET
    choices: list[ChatCompletionChoice] | Unset = UNSET
    usage: CompletionUsage | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.completion_usage import CompletionUsage  # noqa: PLC0415

        id = self.id

        object_ = self.object_

        created = self.created

        model = self.model

        choices: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.choices, Unset):
            choices = []
            for choices_item_data in self.choices:
                choices_item = choices_item_data.to_dict()
                choices.append(choices_item)

        usage: dict[str, Any] | None | Unset
        if isinstance(self.usage, Unset):
            usage = UNSET
        elif isinstance(self.usage, CompletionUsage):
            usage = self.usage.to_dict()
        else:
            usage = self.usage

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if id is not UNSET:
            field_dict["id"] = id
        if object_ is not UNSET:
            field_dict["object"] = object_
        if created is not UNSET:
            field_dict["created"] = created
        if model is not UNSET:
            field_dict["model"] = model
        if choices is not UNSET:
            field_dict["choices"] = choices
        if usage is not UNSET:
            field_dict["usage"] = usage

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.chat_completion_choice import ChatCompletionChoice  # noqa: PLC0415
        from ..models.completion_usage import CompletionUsage  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id", UNSET)

        object_ = d.pop("object", UNSET)

        created = d.pop("created", UNSET)

        model = d.pop("model", UNSET)

        _choices = d.pop("choices", UNSET)
        choices: list[ChatCompletionChoice] | Unset = UNSET
        if _choices is not UNSET:
            choices = []
            for choices_item_data in _choices:
                choices_item = ChatCompletionChoice.from_dict(choices_item_data)

                choices.append(choices_item)

        def _parse_usage(data: object) -> CompletionUsage | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                usage_type_0 = CompletionUsage.from_dict(data)

                return usage_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CompletionUsage | None | Unset, data)

        usage = _parse_usage(d.pop("usage", UNSET))

        chat_completion = cls(
            id=id,
            object_=object_,
            created=created,
            model=model,
            choices=choices,
            usage=usage,
        )

        chat_completion.additional_properties = d
        return chat_completion

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="GenerationOutput")


@_attrs_define
class GenerationOutput:
    """
    Attributes:
        text (str | Unset):
        token_ids (list[int] | Unset):
        finish_reason (None | str | Unset):
        logprobs (list[Any] | None | Unset): One map per generated token, token id to an object with logprob.
        prompt_logprobs (list[Any] | None | Unset): One map per prompt token; the first entry is null.
    """

    text: str | Unset = UNSET
    token_ids: list[int] | Unset = UNSET
    finish_reason: None | str | Unset = UNSET
    logprobs: list[Any] | None | Unset = UNSET
    prompt_logprobs: list[Any] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        text = self.text

        token_ids: list[int] | Unset = UNSET
        if not isinstance(self.token_ids, Unset):
            token_ids = self.token_ids

        finish_reason: None | str | Unset
        if isinstance(self.finish_reason, Unset):
            finish_reason = UNSET
        else:
            finish_reason = self.finish_reason

        logprobs: list[Any] | None | Unset
        if isinstance(self.logprobs, Unset):
            logprobs = UNSET
        elif isinstance(self.logprobs, list):
            logprobs = self.logprobs

        else:
            logprobs = self.logprobs

        prompt_logprobs: list[Any] | None | Unset
        if isinstance(self.prompt_logprobs, Unset):
            prompt_logprobs = UNSET
        elif isinstance(self.prompt_logprobs, list):
            prompt_logprobs = self.prompt_logprobs

        else:
            prompt_logprobs = self.prompt_logprobs

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if text is not UNSET:
            field_dict["text"] = text
        if token_ids is not UNSET:
            field_dict["token_ids"] = token_ids
        if finish_reason is not UNSET:
            field_dict["finish_reason"] = finish_reason
        if logprobs is not UNSET:
            field_dict["logprobs"] = logprobs
        if prompt_logprobs is not UNSET:
            field_dict["prompt_logprobs"] = prompt_logprobs

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        text = d.pop("text", UNSET)

        token_ids = cast(list[int], d.pop("token_ids", UNSET))

        def _parse_finish_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        finish_reason = _parse_finish_reason(d.pop("finish_reason", UNSET))

        def _parse_logprobs(data: object) -> list[Any] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                logprobs_type_0 = cast(list[Any], data)

                return logprobs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Any] | None | Unset, data)

        logprobs = _parse_logprobs(d.pop("logprobs", UNSET))

        def _parse_prompt_logprobs(data: object) -> list[Any] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                prompt_logprobs_type_0 = cast(list[Any], data)

                return prompt_logprobs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Any] | None | Unset, data)

        prompt_logprobs = _parse_prompt_logprobs(d.pop("prompt_logprobs", UNSET))

        generation_output = cls(
            text=text,
            token_ids=token_ids,
            finish_reason=finish_reason,
            logprobs=logprobs,
            prompt_logprobs=prompt_logprobs,
        )

        generation_output.additional_properties = d
        return generation_output

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SamplingParams")


@_attrs_define
class SamplingParams:
    """vLLM sampling options (max_tokens, temperature, logprobs, prompt_logprobs, ...).

    Attributes:
        max_tokens (int | Unset):
        temperature (float | Unset):
        logprobs (int | Unset):
        prompt_logprobs (int | Unset):
    """

    max_tokens: int | Unset = UNSET
    temperature: float | Unset = UNSET
    logprobs: int | Unset = UNSET
    prompt_logprobs: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        max_tokens = self.max_tokens

        temperature = self.temperature

        logprobs = self.logprobs

        prompt_logprobs = self.prompt_logprobs

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if max_tokens is not UNSET:
            field_dict["max_tokens"] = max_tokens
        if temperature is not UNSET:
            field_dict["temperature"] = temperature
        if logprobs is not UNSET:
            field_dict["logprobs"] = logprobs
        if prompt_logprobs is not UNSET:
            field_dict["prompt_logprobs"] = prompt_logprobs

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_tokens = d.pop("max_tokens", UNSET)

        temperature = d.pop("temperature", UNSET)

        logprobs = d.pop("logprobs", UNSET)

        prompt_logprobs = d.pop("prompt_logprobs", UNSET)

        sampling_params = cls(
            max_tokens=max_tokens,
            temperature=temperature,
            logprobs=logprobs,
            prompt_logprobs=prompt_logprobs,
        )

        sampling_params.additional_properties = d
        return sampling_params

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

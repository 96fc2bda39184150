from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.chat_completion_stream_options import ChatCompletionStreamOptions
    from ..models.chat_message import ChatMessage


T = TypeVar("T", bound="ChatCompletionRequest")


@_attrs_define
class ChatCompletionRequest:
    """An OpenAI chat completion request. max_tokens is rejected, use max_completion_tokens. The local server honours the
    options listed here (frequency_penalty and presence_penalty at 0 only) and answers any other one with 400
    unsupported_parameter naming it.

        Attributes:
            model (str): The deployment id
            messages (list[ChatMessage]):
            max_completion_tokens (int | Unset):
            temperature (float | Unset):
            top_p (float | Unset):
            n (int | Unset): Choices to draw (1 to 128).
            seed (int | Unset):
            logprobs (bool | Unset):
            top_logprobs (int | Unset): Alternatives per token (0 to 20); needs logprobs.
            stream (bool | Unset):  Default: False.
            stream_options (ChatCompletionStreamOptions | None | Unset):
    """

    model: str
    messages: list[ChatMessage]
    max_completion_tokens: int | Unset = UNSET
    temperature: float | Unset = UNSET
    top_p: float | Unset = UNSET
    n: int | Unset = UNSET
    seed: int | Unset = UNSET
    logprobs: bool | Unset = UNSET
    top_logprobs: int | Unset = UNSET
    stream: bool | Unset = False
    stream_options: ChatCompletionStreamOptions | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.chat_completion_stream_options import ChatCompletionStreamOptions  # noqa: PLC0415

        model = self.model

        messages = []
        for messages_item_data in self.messages:
            messages_item = messages_item_data.to_dict()
            messages.append(messages_item)

        max_completion_tokens = self.max_completion_tokens

        temperature = self.temperature

        top_p = self.top_p

        n = self.n

        seed = self.seed

        logprobs = self.logprobs

        top_logprobs = self.top_logprobs

        stream = self.stream

        stream_options: dict[str, Any] | None | Unset
        if isinstance(self.stream_options, Unset):
            stream_options = UNSET
        elif isinstance(self.stream_options, ChatCompletionStreamOptions):
            stream_options = self.stream_options.to_dict()
        else:
            stream_options = self.stream_options

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "model": model,
                "messages": messages,
            }
        )
        if max_completion_tokens is not UNSET:
            field_dict["max_completion_tokens"] = max_completion_tokens
        if temperature is not UNSET:
            field_dict["temperature"] = temperature
        if top_p is not UNSET:
            field_dict["top_p"] = top_p
        if n is not UNSET:
            field_dict["n"] = n
        if seed is not UNSET:
            field_dict["seed"] = seed
        if logprobs is not UNSET:
            field_dict["logprobs"] = logprobs
        if top_logprobs is not UNSET:
            field_dict["top_logprobs"] = top_logprobs
        if stream is not UNSET:
            field_dict["stream"] = stream
        if stream_options is not UNSET:
            field_dict["stream_options"] = stream_options

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.chat_completion_stream_options import ChatCompletionStreamOptions  # noqa: PLC0415
        from ..models.chat_message import ChatMessage  # noqa: PLC0415

        d = dict(src_dict)
        model = d.pop("model")

        messages = []
        _messages = d.pop("messages")
        for messages_item_data in _messages:
            messages_item = ChatMessage.from_dict(messages_item_data)

            messages.append(messages_item)

        max_completion_tokens = d.pop("max_completion_tokens", UNSET)

        temperature = d.pop("temperature", UNSET)

        top_p = d.pop("top_p", UNSET)

        n = d.pop("n", UNSET)

        seed = d.pop("seed", UNSET)

        logprobs = d.pop("logprobs", UNSET)

        top_logprobs = d.pop("top_logprobs", UNSET)

        stream = d.pop("stream", UNSET)

        def _parse_stream_options(data: object) -> ChatCompletionStreamOptions | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                stream_options_type_0 = ChatCompletionStreamOptions.from_dict(data)

                return stream_options_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ChatCompletionStreamOptions | None | Unset, data)

        stream_options = _parse_stream_options(d.pop("stream_options", UNSET))

        chat_completion_request = cls(
            model=model,
            messages=messages,
            max_completion_tokens=max_completion_tokens,
            temperature=temperature,
            top_p=top_p,
            n=n,
            seed=seed,
            logprobs=logprobs,
            top_logprobs=top_logprobs,
            stream=stream,
            stream_options=stream_options,
        )

        chat_completion_request.additional_properties = d
        return chat_completion_request

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

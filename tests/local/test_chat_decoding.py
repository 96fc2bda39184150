"""Chat completions of a deployment decode through the sampler's one loop, in this process.

The tiny model is steered by a forward hook that rewrites its logits, so what it "says" is known:
the tests pin that an answer ends at the chat template's end-of-turn token with finish_reason
stop, that the end token is counted but neither shown nor listed in logprobs, that ``n`` choices
decode together (one pass over the prompt, then one per position, for all of them), and that a
streamed answer is the whole one in pieces.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ct_core import chat_template

torch = pytest.importorskip("torch")

MESSAGES = [{"role": "user", "content": "Say hi."}]


def _steered(script: list[int]) -> tuple[Any, list[int]]:
    """A tiny model whose greedy answer is ``script`` (one token per pass, then the last repeated),
    and the list its forward passes are counted in."""
    from ct_local.model import tinylm

    model = tinylm.build_model("steered")
    model.eval()
    passes: list[int] = []

    def steer(module: Any, args: Any, kwargs: Any, output: Any) -> Any:
        token = script[min(len(passes), len(script) - 1)]
        passes.append(int(kwargs["input_ids"].shape[0]))
        output.logits[..., token] += 1000.0
        return output

    model.register_forward_hook(steer, with_kwargs=True)
    return model, passes


def _completion(model: Any, **options: Any) -> Any:
    from ct_local.http.inference import Completion, LoadedModel, parse_chat, tiny_prompt_ids
    from ct_local.model.sampler import Decoder
    from ct_local.model.tinylm import ByteTokenizer

    loaded = LoadedModel(model, Decoder(model, ByteTokenizer(), frozenset(chat_template.STOP_IDS)))
    chat = parse_chat({"model": "sf-ct-x", "messages": MESSAGES, "temperature": 0, **options})
    prompt = tiny_prompt_ids(chat.messages)
    return Completion(chat, loaded, prompt, chat.max_completion_tokens or 16, window=256)


def test_an_answer_ends_at_the_end_of_turn_token_with_finish_reason_stop() -> None:
    model, _ = _steered([ord("H"), ord("i"), chat_template.END_OF_TURN_ID])
    answer = _completion(model, logprobs=True, top_logprobs=2).whole()
    [choice] = answer["choices"]
    assert choice["message"]["content"] == "Hi" and choice["finish_reason"] == "stop"
    # The end token counts in the usage but is not content, nor listed in the logprobs.
    assert answer["usage"]["completion_tokens"] == 3
    assert [entry["token"] for entry in choice["logprobs"]["content"]] == ["H", "i"]
    assert choice["logprobs"]["content"][0]["top_logprobs"][0]["token"] == "H"


def test_the_end_of_sequence_token_also_stops_and_a_long_answer_stops_at_its_length() -> None:
    model, _ = _steered([ord("a"), chat_template.EOS_ID])
    [choice] = _completion(model).whole()["choices"]
    assert (choice["message"]["content"], choice["finish_reason"]) == ("a", "stop")
    model, _ = _steered([ord("z")])
    [choice] = _completion(model, max_completion_tokens=5).whole()["choices"]
    assert (choice["message"]["content"], choice["finish_reason"]) == ("zzzzz", "length")


def test_n_choices_decode_together_over_the_cache() -> None:
    model, passes = _steered([ord("o"), ord("k"), chat_template.END_OF_TURN_ID])
    answer = _completion(model, n=4).whole()
    assert [c["message"]["content"] for c in answer["choices"]] == ["ok"] * 4
    assert {c["finish_reason"] for c in answer["choices"]} == {"stop"}
    # One pass over the four prompts, then one per drawn position for all four: not 4 x 3 passes.
    assert passes == [4, 4, 4]
    assert answer["usage"]["completion_tokens"] == 12


def test_a_streamed_answer_is_the_whole_one_in_chunks() -> None:
    model, _ = _steered([ord("H"), ord("i"), chat_template.END_OF_TURN_ID])
    events = list(_completion(model, n=2, stream=True).sse())
    assert events[-1] == "data: [DONE]\n\n"
    chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-1]]
    texts, finishes = ["", ""], [None, None]
    for chunk in chunks:
        [choice] = chunk["choices"]
        texts[choice["index"]] += choice["delta"].get("content") or ""
        finishes[choice["index"]] = choice["finish_reason"] or finishes[choice["index"]]
    assert texts == ["Hi", "Hi"] and finishes == ["stop", "stop"]
    # Each choice opens with its role chunk and closes with an empty delta carrying the finish.
    assert [c["choices"][0]["delta"] for c in chunks[:2]] == [{"role": "assistant", "content": ""}] * 2
    assert chunks[-1]["choices"][0]["delta"] == {}


def test_roles_outside_the_template_are_refused_and_developer_is_system() -> None:
    from ct_local.http.inference import InferenceError, tiny_prompt_ids

    as_system = tiny_prompt_ids([{"role": "system", "content": "x"}])
    assert tiny_prompt_ids([{"role": "developer", "content": "x"}]) == as_system
    with pytest.raises(InferenceError) as caught:
        tiny_prompt_ids([{"role": "tool", "content": "x"}])
    assert caught.value.status == 400 and caught.value.param == "messages[0].role"

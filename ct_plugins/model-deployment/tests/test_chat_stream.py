"""How `ct model-deployment chat --stream` reads a server-sent-event answer, and the ways it can fail.

The lines go through the same SSE decoding a real answer does (`StreamedResponse.iter_sse`)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from ct_model_deployment.cli import _print_stream

from ct_cli import output
from ct_core.http.transport import StreamedResponse


def data(chunk: Any) -> str:
    # One event: its data line and the blank line that ends it.
    return "data: " + (chunk if isinstance(chunk, str) else json.dumps(chunk)) + "\n"


def content(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


def run(lines: list[str]) -> str:
    streams = output.Streams(stdout=io.StringIO(), stderr=io.StringIO())
    with output.using(streams):
        body = "".join(line + "\n" for line in lines).encode("utf-8")
        _print_stream(StreamedResponse(200, [(b"content-type", b"text/event-stream")], iter([body])))
    return streams.stdout.getvalue()


def test_text_is_printed_as_it_arrives() -> None:
    lines = [
        data({"choices": [{"delta": {"role": "assistant", "content": ""}}]}),
        "",
        ": a comment line",
        data(content("Hel")),
        data(content("lo")),
        data({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
        data({"choices": [], "usage": {"completion_tokens": 2}}),
        data("[DONE]"),
    ]
    assert run(lines) == "Hello\n"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([data(content("a"))], "ended before \\[DONE\\]"),
        ([data("{not json"), data("[DONE]")], "not JSON"),
        ([data({"error": {"message": "boom"}}), data("[DONE]")], "error mid-stream"),
    ],
)
def test_a_broken_stream_fails(lines: list[str], message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        run(lines)


class Terminal(io.StringIO):
    """A text stream that says it is a terminal, as a console's stdout does."""

    def isatty(self) -> bool:
        return True


def run_on(stdout: io.StringIO, lines: list[str]) -> str:
    streams = output.Streams(stdout=stdout, stderr=io.StringIO())
    with output.using(streams):
        body = "".join(line + "\n" for line in lines).encode("utf-8")
        _print_stream(StreamedResponse(200, [(b"content-type", b"text/event-stream")], iter([body])))
    return stdout.getvalue()


#: Text a model may well generate: an escape sequence that would clear the screen, a bell, a carriage
#: return that overwrites the line, a C1 control, a right-to-left override; then ordinary text.
HOSTILE = "a\x1b[2J\x07b\rc\x85d\u202ee\tf\ng é"


def test_a_terminal_gets_control_characters_escaped() -> None:
    shown = run_on(Terminal(), [data(content(HOSTILE[:5])), data(content(HOSTILE[5:])), data("[DONE]")])
    assert shown == "a\\u001b[2J\\u0007b\\rc\\u0085d\\u202ee\\tf\ng é\n"
    assert all(char.isprintable() or char == "\n" for char in shown)


def test_a_pipe_gets_the_text_unchanged() -> None:
    assert run_on(io.StringIO(), [data(content(HOSTILE)), data("[DONE]")]) == HOSTILE + "\n"

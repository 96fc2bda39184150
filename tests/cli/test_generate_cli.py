"""`ct --job JOB generate FILE|-` (and --stream, --sub-job) end to end on ct_local, in-process."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def ct(ct_home: Path) -> Iterator[Callable[..., Result]]:
    from ct_cli.main import main

    def run(*args: str, stdin: str = "", tty: bool = False) -> Result:
        out = _Terminal() if tty else io.StringIO()
        err = io.StringIO()
        code = main(list(args), stdout=out, stderr=err, stdin=io.StringIO(stdin))
        return Result(code, out.getvalue(), err.getvalue())

    yield run


@pytest.fixture(scope="module")
def job(module_local_server_factory: Any) -> list[str]:
    from ct_core import CortexTrainingClient, SubJobConfig

    server = module_local_server_factory()
    with CortexTrainingClient(
        base_url=server.base_url, database="CLI_GEN", schema="PUBLIC", poll_interval=0.02
    ) as c:
        sampling = SubJobConfig.sampling_job("Qwen/Qwen3-0.6B", max_seq_len=64, n_gpus=1)
        job_id = c.create_job(
            [sampling, SubJobConfig.sampling_job("Qwen/Qwen3-0.6B", max_seq_len=64, n_gpus=1)]
        )
        c.wait_for_job(job_id)
    return [
        "--base-url",
        server.base_url,
        "--database",
        "CLI_GEN",
        "--poll-interval",
        "0.02",
        "--job",
        job_id,
    ]


REQUEST = {
    "prompts": ["Hi", [72, 105]],
    "sampling_params": {"max_tokens": 3, "temperature": 0, "ignore_eos": True},
}


def test_generate_from_stdin_and_file(ct: Callable[..., Result], job: list[str], tmp_path: Path) -> None:
    sub = f"{job[-1]}:sampling:0"
    result = ct(*job, "generate", "-", "--sub-job", sub, stdin=json.dumps(REQUEST))
    assert result.code == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["prompt_count"] == 2 and body["job_id"] == job[-1]
    results = body["result"]["results"]
    assert results[0]["token_ids"] == results[1]["token_ids"] and len(results[0]["token_ids"]) == 3
    path = tmp_path / "gen.json"
    path.write_text(json.dumps({"payload": REQUEST, "poll": False}))
    queued = ct(*job, "generate", str(path), "--sub-job", sub)
    assert queued.code == 0 and "result" not in json.loads(queued.stdout)


def test_generate_needs_a_sub_job_with_several_samplers(ct: Callable[..., Result], job: list[str]) -> None:
    result = ct(*job, "generate", "-", stdin=json.dumps(REQUEST))
    assert result.code == 1
    assert "pass sub_job_id" in result.stderr and f"{job[-1]}:sampling:1" in result.stderr


@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        # These texts are fixed: tooling matches on them.
        ({"prompts": []}, "generate JSON must contain a non-empty prompts list"),
        ({"payload": {"prompts": "a"}}, "generate JSON must contain a non-empty prompts list"),
        (
            {"prompts": ["a"], "sampling_params": [{}, {}]},
            "generate sampling_params list length must match prompts length",
        ),
        (
            {"prompts": ["a"], "sampling_params": [3]},
            "generate sampling_params list items must be objects or null",
        ),
        ({"prompts": ["a"], "sampling_params": 3}, "generate sampling_params must be an object or list"),
        ({"prompts": ["a"], "strict": "yes"}, "generate strict must be a boolean"),
        ({"prompts": ["a"], "poll": "no"}, "generate poll must be a boolean"),
        ({"payload": []}, "generate payload must be an object"),
        # Our own checks: an aligned routing_key list, and a usable sub_job_id.
        (
            {"prompts": ["a"], "routing_key": ["k", "l"]},
            "generate routing_key list length must match prompts",
        ),
        ({"prompts": ["a"], "routing_key": [3]}, "routing_key list items must be strings or null"),
        ({"prompts": ["a"], "routing_key": 3}, "generate routing_key must be a string or list"),
        ({"prompts": ["a"], "sub_job_id": 3}, "generate sub_job_id must be a non-empty string"),
    ],
)
def test_generate_input_errors(
    ct: Callable[..., Result], job: list[str], request_body: Any, message: str
) -> None:
    result = ct(*job, "generate", "-", "--sub-job", f"{job[-1]}:sampling:0", stdin=json.dumps(request_body))
    assert result.code == 1
    assert message in result.stderr and result.stdout == ""


def test_stream_prints_json_lines(ct: Callable[..., Result], job: list[str]) -> None:
    result = ct(
        *job, "generate", "-", "--stream", "--sub-job", f"{job[-1]}:sampling:1", stdin=json.dumps(REQUEST)
    )
    assert result.code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["type"] for e in events].count("result") == 2
    assert events[-1] == {"type": "done", "completed": 2, "failed": 0}


def test_stream_is_readable_on_a_terminal(ct: Callable[..., Result], job: list[str]) -> None:
    result = ct(
        *job,
        "generate",
        "-",
        "--stream",
        "--sub-job",
        f"{job[-1]}:sampling:1",
        stdin=json.dumps(REQUEST),
        tty=True,
    )
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "done: 2 completed, 0 failed"
    assert all(line.startswith("[") and "(length)" in line for line in lines[:-1])


def test_generate_needs_a_job(ct: Callable[..., Result], job: list[str]) -> None:
    result = ct(*job[:-2], "generate", "-", stdin=json.dumps(REQUEST))
    assert result.code == 1 and "--job" in result.stderr


def test_the_file_may_name_the_sub_job(ct: Callable[..., Result], job: list[str]) -> None:
    sub = f"{job[-1]}:sampling:1"
    body = {"payload": {**REQUEST, "sub_job_id": sub}}
    result = ct(*job, "generate", "-", stdin=json.dumps(body))
    assert result.code == 0, result.stderr
    assert len(json.loads(result.stdout)["result"]["results"]) == 2
    agreeing = ct(*job, "generate", "-", "--sub-job", sub, stdin=json.dumps(body))
    assert agreeing.code == 0, agreeing.stderr
    streamed = ct(*job, "generate", "-", "--stream", stdin=json.dumps(body))
    assert streamed.code == 0 and json.loads(streamed.stdout.splitlines()[-1])["type"] == "done"
    clash = ct(*job, "generate", "-", "--sub-job", f"{job[-1]}:sampling:0", stdin=json.dumps(body))
    assert clash.code == 1 and clash.stdout == ""
    assert "name different sub-jobs" in clash.stderr


def test_routing_keys_and_strict_reach_the_sampler(ct: Callable[..., Result], job: list[str]) -> None:
    body = {**REQUEST, "routing_key": ["k0", None], "strict": False}
    result = ct(*job, "generate", "-", "--sub-job", f"{job[-1]}:sampling:0", stdin=json.dumps(body))
    assert result.code == 0, result.stderr
    # The local server refuses strict routing for a prompt without a key (a 422 validation answer), so
    # the fields did arrive.
    strict = ct(
        *job,
        "generate",
        "-",
        "--sub-job",
        f"{job[-1]}:sampling:0",
        stdin=json.dumps({**body, "strict": True}),
    )
    assert strict.code == 1 and "422" in strict.stderr and strict.stdout == ""
    # The error leads with the 422 body's reason, which names the field.
    assert strict.stderr.startswith("error: routing_key: "), strict.stderr


def test_stream_without_polling_prints_the_start(ct: Callable[..., Result], job: list[str]) -> None:
    body = {"payload": {**REQUEST, "sub_job_id": f"{job[-1]}:sampling:0"}, "poll": False}
    result = ct(*job, "generate", "-", "--stream", stdin=json.dumps(body))
    assert result.code == 0, result.stderr
    started = json.loads(result.stdout)
    assert started["count"] == 2 and started["job_id"] == job[-1] and started["request_id"]
    assert "generate-stream: request" in result.stderr


def test_generate_on_a_terminal_is_compact_and_readable(ct: Callable[..., Result], job: list[str]) -> None:
    sub = f"{job[-1]}:sampling:0"
    piped = ct(*job, "generate", "-", "--sub-job", sub, stdin=json.dumps(REQUEST))
    shown = ct(*job, "generate", "-", "--sub-job", sub, stdin=json.dumps(REQUEST), tty=True)
    assert piped.code == shown.code == 0, (piped.stderr, shown.stderr)
    # Piped: the pretty JSON document as before, one token id per line.
    piped_body = json.loads(piped.stdout)
    ids = piped_body["result"]["results"][0]["token_ids"]
    assert f"\n{' ' * 10}{ids[0]},\n" in piped.stdout
    # On a terminal: still one JSON document with the same content, each token-id list on one line.
    shown_body = json.loads(shown.stdout)
    assert shown_body.keys() == piped_body.keys()
    assert [r["token_ids"] for r in shown_body["result"]["results"]] == [
        r["token_ids"] for r in piped_body["result"]["results"]
    ]
    assert '"token_ids": [' + ", ".join(str(i) for i in ids) + "]" in shown.stdout
    assert len(shown.stdout.splitlines()) < len(piped.stdout.splitlines()) - 4


def test_terminal_json_escapes_what_is_not_printable() -> None:
    from ct_cli import output

    value = {"text": "caf\u00e9 \x1b[31mred\x1b[0m \u202eevil\u202c\x07 \U0001f600", "ids": [1, 2, 3]}
    shown = output.render_json_readable(value, encoding="utf-8")
    assert json.loads(shown) == value
    assert "\x1b" not in shown and "\u202e" not in shown and "\x07" not in shown
    assert "\\u001b[31mred" in shown and "\\u202e" in shown
    assert "caf\u00e9" in shown and "\U0001f600" in shown  # printable text stays readable
    assert '"ids": [1, 2, 3]' in shown
    # A terminal that cannot show a character gets its escape instead.
    assert json.loads(output.render_json_readable(value, encoding="ascii")) == value
    assert "caf\\u00e9" in output.render_json_readable(value, encoding="ascii")


def test_a_streamed_error_reads_as_text_not_a_python_repr() -> None:
    from ct_cli.commands.generate import _readable

    line = _readable({"type": "error", "index": 1, "error": {"code": "x", "message": "bad \x1b[2J"}})
    assert line == '[1] error: {"code":"x","message":"bad \\u001b[2J"}'
    assert _readable({"type": "error", "index": 0, "error": "plain words"}) == "[0] error: plain words"

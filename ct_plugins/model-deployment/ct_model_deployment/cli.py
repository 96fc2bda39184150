"""`ct model-deployment ...`: the CLI over the deployment SDK methods (docs/model-deployments.md).

create, create --wait and wait print the short summary (`records.summary`); list prints
{"deployments": [{deployment, status}, ...]} (and "malformed" when a record could not be read);
describe prints everything. A failed, terminated or dropped deployment, or a wait that runs out of
time, prints the last summary and fails with exit 1; Ctrl+C while waiting, or during create once
the deployment exists, leaves it running, names it, and exits 130. `chat` calls the endpoint itself, as any
OpenAI-compatible client would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from cyclopts import App, Parameter

from ct_cli import context, output

app = App(name="model-deployment", help="Create, watch, call and drop OpenAI-compatible model deployments.")

#: How many tokens `chat` asks for when --max-completion-tokens is not given.
DEFAULT_CHAT_TOKENS = 64
Resume = Annotated[
    bool,
    Parameter(
        negative=(),
        help="Keep what an earlier download into the folder saved and fetch only what is new.",
    ),
]
#: The SSE line prefix and end marker of a streamed chat completion (operation createChatCompletion).
SSE_DONE = "[DONE]"


def _deployments() -> Any:
    from ct_model_deployment.sdk import ModelDeployments

    return ModelDeployments(context.client())


def _read_spec(spec: str) -> Any:
    if spec != "-":
        return spec
    from ct_core.errors import ValidationError

    text = context.current().stdin.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"spec on stdin is not valid JSON ({exc.msg} at line {exc.lineno})") from None


def _wait_and_print(deployments: Any, deployment: str, timeout: float | None, *, announce: str = "") -> int:
    from ct_model_deployment.errors import ModelDeploymentWaitError, ModelDeploymentWaitTimeout
    from ct_model_deployment.records import summary

    try:
        # Announced inside the try: a Ctrl+C right after the line is read still gets the message.
        if announce:
            output.progress(announce)
        record = deployments.wait(deployment, timeout=timeout)
    except KeyboardInterrupt:
        # Leaving is not dropping: the deployment keeps its GPUs until someone drops it.
        output.error(
            f"interrupted; {deployment} is still running ... (drop it with ct model-deployment drop)"
        )
        return output.EXIT_INTERRUPTED
    except (ModelDeploymentWaitError, ModelDeploymentWaitTimeout) as exc:
        output.emit(summary(exc.deployment))
        raise
    output.emit(summary(record))
    return output.EXIT_OK


@app.command
def create(
    spec: Annotated[
        str, Parameter(allow_leading_hyphen=True, help="The deployment spec: a JSON file, or - for stdin.")
    ],
    *,
    wait: Annotated[bool, Parameter(negative=(), help="Wait until the deployment is READY.")] = False,
    timeout: Annotated[
        float | None, Parameter(help="Seconds --wait may take (default: the global --poll-timeout).")
    ] = None,
    dry_run: Annotated[
        bool, Parameter(negative=(), help="Only check the spec and print it normalized; send nothing.")
    ] = False,
) -> int:
    """Create a model deployment from a spec with deployment, source and inference objects."""
    from ct_model_deployment.records import summary
    from ct_model_deployment.spec import check_spec

    if dry_run:
        from ct_model_deployment.sdk import load_spec

        output.emit(check_spec(load_spec(_read_spec(spec))))
        return output.EXIT_OK
    deployments = _deployments()
    created: list[str] = []
    try:
        record = deployments.create(_read_spec(spec), on_created=created.append)
        if not wait:
            output.emit(summary(record))
            return output.EXIT_OK
    except KeyboardInterrupt:
        if created:
            output.error(
                f"interrupted; {created[0]} was created and is still running ... (drop it with "
                "ct model-deployment drop)"
            )
        else:
            output.error(
                "interrupted before the service confirmed a deployment; if the create was sent, one "
                "may exist (ct model-deployment list shows yours)"
            )
        return output.EXIT_INTERRUPTED
    announce = f"created {record['deployment']}; waiting for it to be READY"
    return _wait_and_print(deployments, record["deployment"], timeout, announce=announce)


@app.command(name="list")
def list_deployments(
    *,
    status: Annotated[
        list[str] | None, Parameter(help="Only deployments in this status (repeatable, any case).")
    ] = None,
) -> None:
    """List the schema's deployments, oldest first: deployment and status.

    Prints {"deployments": [...]}; a deployment whose record is malformed is left out of it, named
    with the reason under "malformed" and in a warning on stderr.
    """
    malformed: list[dict[str, str]] = []

    def report(problem: dict[str, str]) -> None:
        malformed.append(problem)
        output.warn(problem["error"])

    found = _deployments().list_model_deployments(statuses=status, on_malformed=report)
    listing: dict[str, Any] = {
        "deployments": [{"deployment": item["deployment"], "status": item["status"]} for item in found]
    }
    if malformed:
        listing["malformed"] = malformed
    output.emit(listing)


@app.command
def describe(deployment: Annotated[str, Parameter(help="The deployment id, sf-ct-<UUID>.")]) -> None:
    """Print everything known about one deployment."""
    output.emit(_deployments().describe(deployment))


@app.command(name="wait")
def wait_command(
    deployment: Annotated[str, Parameter(help="The deployment id, sf-ct-<UUID>.")],
    *,
    timeout: Annotated[
        float | None, Parameter(help="Seconds to wait (default: the global --poll-timeout).")
    ] = None,
) -> int:
    """Wait until a deployment is READY and print its summary."""
    from ct_model_deployment.spec import job_id_of

    job_id_of(deployment)
    return _wait_and_print(
        _deployments(), deployment, timeout, announce=f"waiting for {deployment} to be READY"
    )


@app.command
def drop(deployment: Annotated[str, Parameter(help="The deployment id, sf-ct-<UUID>.")]) -> None:
    """Drop a deployment and free its GPUs; dropping twice is fine."""
    output.emit(_deployments().drop(deployment))


@app.command
def logs(
    deployment: Annotated[str, Parameter(help="The deployment id, sf-ct-<UUID>.")],
    *,
    log_type: Annotated[
        Literal["execution", "stdout"],
        Parameter(help="execution (the service's logs) or stdout (the console)."),
    ] = "execution",
    output_dir: Annotated[Path, Parameter(help="Folder the files are written into, flat.")] = Path("."),
    resume: Resume = False,
) -> None:
    """Download a deployment's logs into a folder (files are owner-only)."""
    files = _deployments().download_logs(deployment, output_dir, log_type=log_type, resume=resume)
    output.emit({"deployment": deployment, "log_type": log_type, "files": _in_cli_words(files)})


@app.command
def metrics(
    deployment: Annotated[str, Parameter(help="The deployment id, sf-ct-<UUID>.")],
    *,
    output_dir: Annotated[Path, Parameter(help="Folder the files are written into, flat.")] = Path("."),
    resume: Resume = False,
) -> None:
    """Download a deployment's GPU and system metrics into a folder (files are owner-only)."""
    files = _deployments().download_metrics(deployment, output_dir, resume=resume)
    output.emit({"deployment": deployment, "files": _in_cli_words(files)})


def _in_cli_words(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries with their notices worded for the command line (`--resume`, not `resume=True`)."""
    for entry in files:
        if entry.get("warnings"):
            entry["warnings"] = [output.cli_words(str(notice)) for notice in entry["warnings"]]
    return files


@app.command
def chat(
    deployment: Annotated[str, Parameter(help="The deployment id, sf-ct-<UUID>.")],
    prompt: Annotated[str, Parameter(help="The user message to send.")],
    *,
    stream: Annotated[bool, Parameter(negative=(), help="Print the answer as it is generated.")] = False,
    max_completion_tokens: Annotated[int, Parameter(help="Most tokens to generate.")] = DEFAULT_CHAT_TOKENS,
    temperature: Annotated[float | None, Parameter(help="Sampling temperature (0: greedy).")] = None,
) -> None:
    """Send one chat message to a READY deployment and print the answer."""
    from ct_model_deployment.spec import job_id_of

    job_id_of(deployment)
    deployments = _deployments()
    body: dict[str, Any] = {
        "model": deployment,
        "messages": [{"role": "user", "content": prompt}],
        "max_completion_tokens": max_completion_tokens,
    }
    if temperature is not None:
        body["temperature"] = temperature
    from ct_core.operations import inference

    client = deployments.client
    with deployments.errors_named(deployment, job_id_of(deployment)):
        if not stream:
            # One attempt (the spec's rule), as an OpenAI client makes: a repeated completion would
            # generate twice.
            answer: Any = inference.create_chat_completion(client, body=body)
            choice = answer["choices"][0]
            output.emit(
                {
                    "deployment": deployment,
                    "content": choice["message"]["content"],
                    "finish_reason": choice["finish_reason"],
                    "usage": answer.get("usage"),
                }
            )
            return
        body["stream"] = True
        with inference.create_chat_completion_events(client, body=body) as response:
            _print_stream(response)


def _print_stream(response: Any) -> None:
    """Print the text deltas of an OpenAI-style server-sent-event answer as they arrive.

    On a terminal, what it would act on rather than show is written as its JSON escape
    (`output.printable`, as ct's other output); a pipe or file gets the text as generated.
    """
    out = output.current().stdout
    shown = output.printable if output.stdout_is_terminal() else str
    finished = False
    for event in response.iter_sse():
        data = event.data
        if data.strip() == SSE_DONE:
            finished = True
            break
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError:
            raise RuntimeError("the deployment sent a stream line that is not JSON") from None
        if not isinstance(chunk, dict) or "error" in chunk:
            raise RuntimeError(f"the deployment reported an error mid-stream: {chunk}")
        for choice in chunk.get("choices") or []:
            text = (choice.get("delta") or {}).get("content")
            if text:
                out.write(shown(text))
                out.flush()
    out.write("\n")
    out.flush()
    if not finished:
        # The status was 200 already; only the missing end marker tells that the call failed.
        raise RuntimeError("the stream ended before [DONE]; the answer may be incomplete")

"""`ct catalog`: browse the model catalog, print a job body from it, and check it.

The command group is a cyclopts sub-app (`app`), registered lazily by import path like every
core command. It reads the catalog through `ct_core.catalog` only and needs no connection:
`ct catalog job ... | ct submit -` is the path from a catalog entry to a running job.

Output follows the CLI conventions (ct_cli/output.py): JSON on stdout, errors on stderr. The one
exception is `ct catalog list` on a terminal, which draws a table unless `--json` is given;
piped or redirected, it prints JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from cyclopts import App, Parameter

from ct_cli import output

app = App(
    name="catalog",
    help="Browse and check the model catalog; print job bodies ready for `ct submit -`.",
    default_parameter=Parameter(negative=(), show_default=False),
)

Workflow = Literal["sft", "rl", "inference"]
Mode = Literal["lora", "full"]
Kind = Literal["training", "sampling", "training+sampling"]

_CATALOG_HELP = (
    "Catalog folder (model-catalog/ or its models/); default: $CT_MODEL_CATALOG or the checkout's."
)


def _load(catalog: str | None) -> Any:
    from ct_core.catalog import load_catalog

    return load_catalog(Path(catalog) if catalog else None)


def _params(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:g}B"


def _print_table(models: list[Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from ct_core.catalog import format_context

    table = Table(title="Cortex Training model catalog")
    # Model ids and sizes are what people copy from the table: never break them across lines.
    for column in ("model", "architecture", "parameters", "max context", "workflows", "hardware"):
        table.add_column(column, no_wrap=column in ("model", "parameters"))
    for model in models:
        info = model.info
        params = _params(info.get("parameters_billions"))
        if info.get("architecture") == "moe" and info.get("active_parameters_billions") is not None:
            params += f" ({_params(info['active_parameters_billions'])} active)"
        table.add_row(
            model.name,
            str(info.get("architecture", "")),
            params,
            format_context(model.max_context),
            ", ".join(model.workflows),
            ", ".join(model.hardware),
        )
    Console(file=output.current().stdout).print(table)


@app.command(name="list")
def list_models(
    *,
    workflow: Annotated[
        Workflow | None, Parameter(help="Only models with job files for this workflow.")
    ] = None,
    hardware: Annotated[str | None, Parameter(help="Only models with job files for this GPU type.")] = None,
    json: Annotated[bool, Parameter(help="Print JSON even on a terminal.")] = False,
    catalog: Annotated[str | None, Parameter(help=_CATALOG_HELP)] = None,
) -> None:
    """List the catalog's models: a table on a terminal, otherwise {"models": [...]} as JSON."""
    models = _load(catalog).list_models(workflow=workflow, hardware=hardware)
    stdout = output.current().stdout
    if not json and getattr(stdout, "isatty", lambda: False)():
        _print_table(models)
        return
    output.emit({"models": [model.summary() for model in models]})


@app.command
def show(
    model: Annotated[str, Parameter(help="Hub id (Qwen/Qwen3-8B), folder name or bare name (Qwen3-8B).")],
    /,
    *,
    catalog: Annotated[str | None, Parameter(help=_CATALOG_HELP)] = None,
) -> None:
    """Print one model's model.json with the list of its job files."""
    output.emit(_load(catalog).get(model).describe())


@app.command
def job(
    model: Annotated[str, Parameter(help="Hub id (Qwen/Qwen3-8B), folder name or bare name (Qwen3-8B).")],
    /,
    *,
    context: Annotated[
        str | None,
        Parameter(help="Context such as 8k, 32k, 256k or 1m (default: longest); shorter ones are rendered."),
    ] = None,
    hardware: Annotated[
        str | None, Parameter(help="GPU type: H200, B200 or B300 (default: H200); others are rendered.")
    ] = None,
    mode: Annotated[Mode | None, Parameter(help="lora or full.")] = None,
    kind: Annotated[
        Kind | None, Parameter(help="training (SFT), training+sampling (RL) or sampling.")
    ] = None,
    workflow: Annotated[Workflow | None, Parameter(help="sft, rl or inference (instead of --kind).")] = None,
    path: Annotated[
        bool,
        Parameter(help='Print {"path": ...} of the job file (and "changes" made to it) instead of the body.'),
    ] = False,
    catalog: Annotated[str | None, Parameter(help=_CATALOG_HELP)] = None,
) -> None:
    """Print the create-job body of one catalog job file, ready for `ct submit -`.

    The filters must leave exactly one file; when several remain the error lists them. A shape no
    file holds is rendered from one when the rules allow: another hardware type (H200, B200, B300),
    or a shorter context (up to the model's max_context) from the file with the nearest longer
    context, which sets every max_seq_len (and prime_rl.seq_len). stderr says which file it came
    from; anything else is refused with the shapes that exist.
    Example: ct catalog job Qwen/Qwen3-8B --context 8k --mode lora --kind training+sampling | ct submit -
    """
    rendered = _load(catalog).render_job(
        model, context=context, hardware=hardware, mode=mode, kind=kind, workflow=workflow
    )
    if rendered.derived:
        changed = ", ".join(f"{key} {value}" for key, value in rendered.changes.items())
        output.progress(
            f"no job file holds {rendered.name}; rendered from {rendered.source.name} with {changed}"
        )
    if path:
        shown: dict[str, Any] = {"path": str(rendered.source.path)}
        if rendered.derived:
            shown["changes"] = rendered.changes
        output.emit(shown)
        return
    output.emit(rendered.body)


@app.command
def smoke(
    *models: Annotated[str, Parameter(help="Models to test (default: every model of the catalog).")],
    context: Annotated[str | None, Parameter(help="Only job files of this context (8k, 32k, ...).")] = None,
    hardware: Annotated[str | None, Parameter(help="Only job files for this GPU type.")] = None,
    mode: Annotated[Mode | None, Parameter(help="Only lora or only full files.")] = None,
    kind: Annotated[Kind | None, Parameter(help="Only files of this kind.")] = None,
    workflow: Annotated[Workflow | None, Parameter(help="Only files of this workflow.")] = None,
    dry_run: Annotated[
        bool, Parameter(help="Only the checks `ct submit --dry-run` runs; send nothing, need no connection.")
    ] = False,
    catalog: Annotated[str | None, Parameter(help=_CATALOG_HELP)] = None,
) -> int:
    """Smoke-test catalog job files against the connection's server (a local one works).

    Each selected file is submitted as it is, waited for until its job runs, probed (a minimal
    fwd-bwd on a training sub-job, a one-token generate on a sampling one) and cancelled, one after
    the other. With --dry-run each file only gets the checks of `ct submit --dry-run`. Prints
    {"dry_run", "files", "passed", "failed", "results": [{"file", "model", "ok", "job_id", "probes",
    "error"}]} and a line per file on stderr; exits 1 when any file fails.
    """
    from ct_core.catalog.smoke import SmokeResult, smoke_job_files

    loaded = _load(catalog)
    names = list(models) or loaded.model_names()
    jobs = [
        job
        for name in names
        for job in loaded.find_jobs(
            name, context=context, hardware=hardware, mode=mode, kind=kind, workflow=workflow
        )
    ]
    if not jobs:
        raise ValueError("no catalog job file matches the filters")
    base = loaded.root.parent

    def label(chosen: Any) -> str:
        try:
            return chosen.path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            return str(chosen.path)

    def report(result: SmokeResult) -> None:
        how = "checked" if dry_run else f"job {result.job_id}, probes: {', '.join(result.probes) or 'none'}"
        if result.ok:
            output.progress(f"ok      {result.file} ({how})")
        else:
            output.progress(f"FAILED  {result.file}: {result.error}")

    client = None if dry_run else context_client()
    results = smoke_job_files(jobs, client, label=label, on_result=report)
    failed = sum(1 for result in results if not result.ok)
    output.emit(
        {
            "dry_run": dry_run,
            "files": len(results),
            "passed": len(results) - failed,
            "failed": failed,
            "results": [result.as_dict() for result in results],
        }
    )
    return output.EXIT_ERROR if failed else output.EXIT_OK


def context_client() -> Any:
    """The connection's client (the global options, the remembered login, the environment)."""
    from ct_cli import context

    return context.client()


@app.command
def validate(
    directory: Annotated[str | None, Parameter(help=_CATALOG_HELP)] = None,
    /,
) -> int:
    """Check every catalog file: schema, names against contents, and the SDK's create-body checks.

    Prints {"valid": ..., "problems": [...]}; each problem also goes to stderr as
    `<file>: <field>: <message>`. Exits 1 when there is any problem.
    """
    from ct_core.catalog import load_catalog, validate_catalog

    root = Path(directory) if directory else None
    problems = validate_catalog(root)
    result: dict[str, Any] = {
        "valid": not problems,
        "problems": [{"file": p.file, "field": p.field, "message": p.message} for p in problems],
    }
    if problems:
        output.emit(result)
        for problem in problems:
            output.progress(str(problem))
        output.error(f"model catalog invalid: {len(problems)} problem(s)")
        return output.EXIT_ERROR
    catalog = load_catalog(root)
    result["models"] = len(catalog)
    result["job_files"] = sum(len(model.jobs) for model in catalog)
    output.emit(result)
    return output.EXIT_OK

"""`ct lora ...`: build one LoRA adapter config and put it into a job's training and sampling sub-jobs.

A LoRA weight sync needs the training and the sampling adapter to agree on r, lora_alpha and
target_modules; the simplest way to get that is to write the config once. `ct lora config` prints
that one config; `ct lora apply` writes it into every training and sampling sub-job of a body.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from cyclopts import App, Parameter

from ct_cli import context, output
from ct_lora.config import DEFAULT_LORA_ALPHA, DEFAULT_LORA_DROPOUT, DEFAULT_R, build_peft_config

app = App(name="lora", help="Build LoRA adapter configs (peft_config) for jobs.")

#: Where each sub-job type keeps its adapter config.
_CONFIG_KEY_BY_TYPE = {"training": "training_config", "sampling": "inference_config"}


def _names(values: list[str] | None) -> list[str]:
    """Flatten `--target a,b --target c` into ["a", "b", "c"], dropping blanks."""
    names: list[str] = []
    for value in values or []:
        names.extend(part.strip() for part in value.split(",") if part.strip())
    return names


def _adapter(
    r: int, alpha: int, dropout: float, target: list[str] | None, target_parameters: list[str] | None
) -> dict[str, Any]:
    return build_peft_config(
        r=r,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules=_names(target),
        target_parameters=_names(target_parameters),
    )


R_HELP = f"LoRA rank (default {DEFAULT_R})."
ALPHA_HELP = f"LoRA alpha scaling (default {DEFAULT_LORA_ALPHA})."
DROPOUT_HELP = f"LoRA dropout, 0 to 1 (default {DEFAULT_LORA_DROPOUT})."
TARGET_HELP = "Module names to adapt, comma-separated or repeated (for example q_proj,k_proj,v_proj,o_proj)."
PARAMS_HELP = "Parameter names to adapt directly (for MoE expert weights), comma-separated or repeated."


@app.command
def config(
    *,
    r: Annotated[int, Parameter(help=R_HELP)] = DEFAULT_R,
    alpha: Annotated[int, Parameter(help=ALPHA_HELP)] = DEFAULT_LORA_ALPHA,
    dropout: Annotated[float, Parameter(help=DROPOUT_HELP)] = DEFAULT_LORA_DROPOUT,
    target: Annotated[list[str] | None, Parameter(help=TARGET_HELP)] = None,
    target_parameters: Annotated[list[str] | None, Parameter(help=PARAMS_HELP)] = None,
) -> None:
    """Print one normalized peft_config to use in both the training and the sampling sub-job.

    Put the printed object under training_config.peft_config and inference_config.peft_config
    (or let `ct lora apply` do it), so the adapter trained and the adapter served have the same
    shape, which a LoRA weight sync requires.
    """
    output.emit(_adapter(r, alpha, dropout, target, target_parameters))


def _read_body(path: str) -> dict[str, Any]:
    raw = context.current().stdin.read() if path == "-" else Path(path).expanduser().read_text("utf-8")
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON in {path}: {exc}") from exc
    if not isinstance(body, dict) or not isinstance(body.get("sub_job_configs"), list):
        raise ValueError("job JSON must be an object with a sub_job_configs list")
    return body


@app.command
def apply(
    file: Annotated[str, Parameter(allow_leading_hyphen=True, help="Create-job JSON body, or - for stdin.")],
    /,
    *,
    r: Annotated[int, Parameter(help=R_HELP)] = DEFAULT_R,
    alpha: Annotated[int, Parameter(help=ALPHA_HELP)] = DEFAULT_LORA_ALPHA,
    dropout: Annotated[float, Parameter(help=DROPOUT_HELP)] = DEFAULT_LORA_DROPOUT,
    target: Annotated[list[str] | None, Parameter(help=TARGET_HELP)] = None,
    target_parameters: Annotated[list[str] | None, Parameter(help=PARAMS_HELP)] = None,
) -> None:
    """Set the same peft_config on every training and sampling sub-job of a body and print it.

    An existing peft_config is replaced. The result can go straight to `ct submit -`.
    """
    adapter = _adapter(r, alpha, dropout, target, target_parameters)
    body = _read_body(file)
    touched = 0
    for index, sub_job in enumerate(body["sub_job_configs"]):
        if not isinstance(sub_job, dict):
            raise ValueError(f"sub_job_configs[{index}] must be an object")
        key = _CONFIG_KEY_BY_TYPE.get(str(sub_job.get("job_type", "")).lower())
        if key is None:
            continue
        config = sub_job.setdefault(key, {})
        if not isinstance(config, dict):
            raise ValueError(f"sub_job_configs[{index}].{key} must be an object")
        config["peft_config"] = dict(adapter)
        touched += 1
    if not touched:
        raise ValueError("the body has no training or sampling sub-job to put an adapter on")
    output.emit(body)

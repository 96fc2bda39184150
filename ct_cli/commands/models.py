"""`ct models`: the models the account can start new jobs with."""

from __future__ import annotations

from ct_cli import context, output


def models() -> None:
    """List the models configured for new jobs, as {"models": [{"name": ...}, ...]}.

    A listed model may still wait for weights or GPUs: this is policy, not a capacity promise.
    """
    output.emit({"models": context.client().list_models()})

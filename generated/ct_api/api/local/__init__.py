"""The local operations of the spec, one thin typed function each.

Written by openapi/regen.py from openapi/cortex-training.yaml; never edited by hand. Each function
calls ct's transport with the operation's id, path and query parameters, body and the retry rule the
spec names (``x-ct-retry``, a key of ``ct_core.http.retry.RULES``) and returns the answer typed
without building or checking anything (``cast``). ``predicate`` replaces the named rule for one call,
``headers``, ``timeout``, ``max_retries`` and ``trace`` (a debug label) pass through, and ``job_id``
(where the path has one) also gives the transport the job a just-created-job 404 is about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from contextlib import AbstractContextManager

    from ct_api import models
    from ct_api.types import Answer, Content, Predicate, StreamedAnswer, TimeoutPair, Transport


def list_local_artifacts(
    transport: Transport,
    *,
    experiment_name: str,
    run_name: str,
    prefix: str | None = None,
    headers: Mapping[str, str] | None = None,
    predicate: Predicate | None = None,
    timeout: TimeoutPair | None = None,
    max_retries: int | None = None,
    trace: str | None = None,
) -> models.LocalArtifactListing:
    """The artifact files of an experiment run kept by the embedded local server.

    ``GET /_artifacts/{experiment_name}/{run_name}`` (listLocalArtifacts); retry rule ``read``.
    """
    params: dict[str, Any] = {
        "experiment_name": experiment_name,
        "run_name": run_name,
    }
    answer = transport.request(
        "listLocalArtifacts",
        params=params,
        query={
            "prefix": prefix,
        },
        headers=headers,
        predicate=predicate,
        retry="read",
        max_retries=max_retries,
        trace=trace,
        timeout=timeout,
    )
    return cast("models.LocalArtifactListing", answer.json())


def get_local_artifact(
    transport: Transport,
    *,
    experiment_name: str,
    run_name: str,
    artifact_path: str,
    headers: Mapping[str, str] | None = None,
    timeout: TimeoutPair | None = None,
) -> AbstractContextManager[StreamedAnswer]:
    """One artifact file of an experiment run kept by the embedded local server.

    ``GET /_artifacts/{experiment_name}/{run_name}/{artifact_path}`` (getLocalArtifact), read as it arrives inside the
    ``with`` block: one attempt (retry rule ``never``).
    """
    params: dict[str, Any] = {
        "experiment_name": experiment_name,
        "run_name": run_name,
        "artifact_path": artifact_path,
    }
    return transport.stream(
        "getLocalArtifact",
        params=params,
        headers=headers,
        timeout=timeout,
    )


#: operationId -> the one function that sends it.
OPERATIONS: dict[str, Callable[..., Any]] = {
    "listLocalArtifacts": list_local_artifacts,
    "getLocalArtifact": get_local_artifact,
}

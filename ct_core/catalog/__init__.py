"""The model catalog: finding it, reading it, choosing a job file, and checking it.

The catalog of supported models is a folder tree, `model-catalog/models/<org>--<model>/`, with one
`model.json` per model and one job file per supported shape. A job file is a complete CreateJob body
(operationId createJob) named `<context>-<hardware>-<kind>-<mode>.json`, for example
`8k-H200-training+sampling-lora.json`; see model-catalog/README.md for the layout and the rules.

This module owns:

* discovery: `find_catalog()` honours `CT_MODEL_CATALOG`, then looks for a repository checkout,
  then for the copy an installed wheel carries in `ct_core/catalog/data`;
* loading and choosing: `load_catalog()`, `Catalog.list_models()`, `Catalog.pick_job()`, and
  `Catalog.render_job()` for a shape no file holds (other hardware, a shorter context);
* smoke tests: `ct_core.catalog.smoke` submits job files to a server and probes them;
* checking: `validate_catalog()` returns every `Problem` found, each naming the file and the field.
  Job files go through the SDK's own create-body validation (`ct_core.config.validation`, plugins
  included), so a file that passes here passes `ct submit --dry-run`.

Importing it is cheap: json, pathlib and dataclasses only. jsonschema and the SDK validation are
imported when `validate_catalog()` runs.
"""

from __future__ import annotations

from ct_core.catalog._checks import validate_catalog
from ct_core.catalog._layout import (
    CATALOG_ENV,
    DEFAULT_HARDWARE,
    HARDWARE,
    KIND_WORKFLOW,
    MODES,
    WORKFLOW_KIND,
    Catalog,
    CatalogError,
    JobFile,
    Model,
    Problem,
    RenderedJob,
    find_catalog,
    folder_name,
    format_context,
    job_body,
    job_filename,
    load_catalog,
    model_names,
    parse_context,
    parse_job_filename,
)

__all__ = [
    "CATALOG_ENV",
    "DEFAULT_HARDWARE",
    "HARDWARE",
    "KIND_WORKFLOW",
    "MODES",
    "WORKFLOW_KIND",
    "Catalog",
    "CatalogError",
    "JobFile",
    "Model",
    "Problem",
    "RenderedJob",
    "find_catalog",
    "folder_name",
    "format_context",
    "job_body",
    "job_filename",
    "load_catalog",
    "model_names",
    "parse_context",
    "parse_job_filename",
    "validate_catalog",
]

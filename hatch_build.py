"""Build hook of the ct-core wheel: the model catalog goes in as package data of ct_core.

In the repository the catalog stays in model-catalog/, where it is edited and checked; a wheel
carries a copy under ct_core/catalog/data, which `ct_core.catalog.find_catalog` falls back to.
An editable install gets no copy: it finds the checkout's folder itself, so edits show at once.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: What of model-catalog/ a wheel ships (source in the repository -> path in the wheel).
CATALOG_FILES = {
    "model-catalog/models": "ct_core/catalog/data/models",
    "model-catalog/schema.json": "ct_core/catalog/data/schema.json",
}


class CatalogBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            return
        build_data["force_include"].update(CATALOG_FILES)

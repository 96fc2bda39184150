"""The run spec schema the service and the CLI check a spec with is the spec's own ``RunSpec``.

Rewrite the shipped copy after changing openapi/cortex-training.yaml with
``.venv/bin/python ct_plugins/runs/tests/test_spec_schema.py``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from ct_runs import spec

from ct_core.config import bodies

ROOT = Path(__file__).resolve().parents[3]
OPENAPI = ROOT / "openapi" / "cortex-training.yaml"


def _expected() -> str:
    document: dict[str, Any] = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))
    return bodies.schema_text(bodies.schema_from_spec(document, "RunSpec"))


def test_the_shipped_schema_is_the_specs() -> None:
    shipped = resources.files("ct_runs").joinpath(spec.SCHEMA_FILE).read_text(encoding="utf-8")
    assert shipped == _expected(), (
        f"the spec changed: run `.venv/bin/python {Path(__file__).relative_to(ROOT)}`"
    )


def test_the_schema_refuses_unknown_keys_at_every_level() -> None:
    defs = spec.run_spec_schema()["$defs"]
    for name in ("RunSpec", "RunOverrides", "TrainerSpec"):
        assert defs[name]["additionalProperties"] is False, name
    assert defs["RunSpec"]["required"] == ["dataset_id"]
    # The bound the packed row length and the batch share with the code.
    assert defs["RunOverrides"]["properties"]["max_seq_len"]["maximum"] == spec.TIER_CONTEXT
    assert defs["TrainerSpec"]["properties"]["batch_tokens"]["maximum"] == spec.MAX_BATCH_TOKENS


if __name__ == "__main__":  # pragma: no cover - a maintainer's command
    target = Path(spec.__file__).with_name(spec.SCHEMA_FILE)
    target.write_text(_expected(), encoding="utf-8")

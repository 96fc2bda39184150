"""ct_core.catalog lookups: names, contexts, discovery, listing and choosing a job file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ct_core.catalog import (
    CATALOG_ENV,
    CatalogError,
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

SHIPPED = Path(__file__).resolve().parents[2] / "model-catalog"


@pytest.mark.parametrize(
    ("tokens", "label"),
    [(8192, "8k"), (32768, "32k"), (131072, "128k"), (262144, "256k"), (1048576, "1m"), (5000, "5000")],
)
def test_context_labels_round_trip(tokens: int, label: str) -> None:
    assert format_context(tokens) == label
    assert parse_context(label) == tokens
    assert parse_context(label.upper()) == tokens


@pytest.mark.parametrize("bad", ["", "8x", "k", "-8k", "0", "1.5k"])
def test_bad_contexts_are_refused(bad: str) -> None:
    with pytest.raises(CatalogError):
        parse_context(bad)


def test_job_file_names() -> None:
    assert parse_job_filename("8k-H200-training+sampling-lora.json") == (
        8192,
        "H200",
        "training+sampling",
        "lora",
    )
    assert parse_job_filename("1m-B300-sampling-full.json") == (1048576, "B300", "sampling", "full")
    assert job_filename(262144, "H200", "training", "full") == "256k-H200-training-full.json"
    assert folder_name("Qwen/Qwen3-8B") == "Qwen--Qwen3-8B"
    for bad in (
        "8k-H200-rl-lora.json",
        "8k-h200-training-lora.json",
        "8k-H200-training-qlora.json",
        "model.json",
    ):
        with pytest.raises(CatalogError, match="does not follow"):
            parse_job_filename(bad)


def test_find_catalog_env_accepts_both_folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(CATALOG_ENV, str(SHIPPED))
    assert find_catalog() == SHIPPED
    monkeypatch.setenv(CATALOG_ENV, str(SHIPPED / "models"))
    assert find_catalog() == SHIPPED
    monkeypatch.setenv(CATALOG_ENV, str(tmp_path))
    with pytest.raises(CatalogError, match=CATALOG_ENV):
        find_catalog()


def test_find_catalog_from_the_checkout(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(CATALOG_ENV, raising=False)
    assert find_catalog(SHIPPED / "models" / "Qwen--Qwen3-8B").resolve() == SHIPPED.resolve()
    # Outside any checkout, the editable install still finds the catalog next to ct_core.
    assert find_catalog(tmp_path).resolve() == SHIPPED.resolve()


def test_models_and_lookup_variants() -> None:
    catalog = load_catalog(SHIPPED)
    assert len(catalog) == 10
    assert "Qwen/Qwen3-8B" in model_names(SHIPPED)
    for spelling in ("Qwen/Qwen3-8B", "qwen/qwen3-8b", "Qwen--Qwen3-8B", "Qwen3-8B"):
        assert catalog.get(spelling).name == "Qwen/Qwen3-8B"
    with pytest.raises(CatalogError, match="not in the catalog; known models: "):
        catalog.get("Llama/Llama-4")


def test_list_filters() -> None:
    catalog = load_catalog(SHIPPED)
    assert len(catalog.list_models()) == 10
    assert len(catalog.list_models(workflow="inference")) == 10
    trainable = {m.name for m in catalog.list_models(workflow="rl")}
    assert trainable == {m.name for m in catalog.list_models(workflow="sft")}
    assert "openai/gpt-oss-120b" not in trainable and len(trainable) == 6
    assert len(catalog.list_models(hardware="h200")) == 10
    assert catalog.list_models(hardware="B200") == []
    with pytest.raises(CatalogError, match="workflow must be one of"):
        catalog.list_models(workflow="dpo")
    with pytest.raises(CatalogError, match="hardware must be one of"):
        catalog.list_models(hardware="A100")


def test_pick_job_defaults_and_errors() -> None:
    catalog = load_catalog(SHIPPED)
    job = catalog.pick_job(
        "Qwen/Qwen3-8B", context="8k", hardware="H200", mode="lora", kind="training+sampling"
    )
    assert job.name == "8k-H200-training+sampling-lora.json"
    assert job.workflow == "rl"
    # Context defaults to the longest (the catalog's recommendation), hardware to H200.
    assert catalog.pick_job("Qwen3-8B", workflow="sft", mode="full").name == "32k-H200-training-full.json"
    assert catalog.pick_job("openai/gpt-oss-120b").name == "128k-H200-sampling-full.json"
    with pytest.raises(CatalogError, match="5 job files of Qwen/Qwen3-8B match"):
        catalog.pick_job("Qwen3-8B")
    with pytest.raises(CatalogError, match="no job file of Qwen/Qwen3-8B matches context=64k"):
        catalog.pick_job("Qwen3-8B", context="64k", kind="sampling")
    with pytest.raises(CatalogError, match="mode must be one of"):
        catalog.pick_job("Qwen3-8B", mode="qlora")


def test_job_body_is_a_fresh_copy() -> None:
    body = job_body("Qwen/Qwen3-0.6B", root=SHIPPED, context="8k", mode="full", kind="sampling")
    assert body["sub_job_configs"][0]["inference_config"]["max_seq_len"] == 8192
    body["hardware"] = "B200"
    again = job_body("Qwen/Qwen3-0.6B", root=SHIPPED, context="8k", mode="full", kind="sampling")
    assert again["hardware"] == "H200"


def test_import_is_cheap() -> None:
    code = (
        "import sys, ct_core.catalog\n"
        "names = ('torch', 'transformers', 'snowflake.connector', 'jsonschema', 'httpx')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""

# The one way to run things, locally and in CI. `make test` and `make demo` set up .venv on their own.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ct-installed
# The tinker plugin's tests run this cookbook's supervised loop. It is installed without its
# requirements: it caps transformers below ours; what it needs is in the dev extra (pyproject.toml).
TINKER_COOKBOOK := tinker-cookbook==0.5.8
PLUGIN_PROJECTS := $(wildcard ct_plugins/*/pyproject.toml)
# The distribution `ct`: ct-core (the root project) plus the first-party plugins, no code of its own.
META_PROJECT := packaging/ct/pyproject.toml
# The shared pytest fixtures (a pytest11 plugin), a distribution of its own so no wheel of ct ships them.
TESTING_PROJECT := testing/pyproject.toml
GENERATED_PKG := generated/ct_api
# The reference client, an interoperability peer of the tests and benchmarks, never part of ct. It
# declares `ct` and `cortex-training` launchers of its own, so installing it into .venv would replace
# ct's and uninstalling it would delete them. pip puts it instead in a folder of its own, without
# its requirements (the dev extra brings those into .venv): the launchers land in $(REF_DIR)/bin, and
# pytest (the `pythonpath` setting) and the benchmarks add $(REF_DIR) to sys.path. The wheel stays in
# $(REF_WHEELS), so tests/test_packaging.py can install it again offline.
REFERENCE := cortex-training==0.0.3
REF_DIR := $(VENV)/reference
REF_WHEELS := $(VENV)/reference-wheels
REF_STAMP := $(REF_DIR)/.ct-installed
SPEC := openapi/cortex-training.yaml

.PHONY: venv install test test-only tui-snapshots lint format regen regen-check spec-check docs demo bench fuzz clean

venv: $(STAMP) $(REF_STAMP)

# torch comes first, pinned to the CPU build that lies on this disk where it exists; otherwise a plain
# torch requirement could pull a multi-GB CUDA build. A venv made before the reference moved out of it
# still holds the reference, whose launchers replaced ct's: uninstalling it deletes bin/ct and
# bin/cortex-training, and installing ct afterwards writes ct's again. The same holds for a venv whose
# `ct` is the old root project (it held the launchers that ct-core holds now): it is uninstalled
# first, and the install below writes ct-core's launchers and the new `ct` again.
$(STAMP): pyproject.toml $(PLUGIN_PROJECTS) $(TESTING_PROJECT) $(META_PROJECT)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip uninstall -q -y cortex-training ct 2>/dev/null
	$(PY) -m pip install -q torch==2.13.0 || $(PY) -m pip install -q torch --index-url https://download.pytorch.org/whl/cpu
	$(PY) -m pip install -q $(foreach p,$(PLUGIN_PROJECTS),-e $(dir $(p))) -e $(dir $(TESTING_PROJECT)) -e '.[local,plot,dev,tui]' ./$(dir $(META_PROJECT))
	$(PY) -m pip install -q --no-deps $(TINKER_COOKBOOK)
	touch $(STAMP)

$(REF_STAMP): $(STAMP) Makefile
	rm -rf $(REF_DIR)
	$(PY) -m pip download -q --no-deps --dest $(REF_WHEELS) $(REFERENCE)
	$(PY) -m pip install -q --no-deps --no-index --find-links $(REF_WHEELS) --target $(REF_DIR) $(REFERENCE)
	touch $(REF_STAMP)

install: venv

# Three workers on two cores: many tests wait on a server or a subprocess, and the third keeps the
# cores busy meanwhile (27 min against 33 with two on a slow day; the suite passes at -n 4 too).
test: venv lint regen-check spec-check docs
	$(PY) -m pytest -n 3 --dist loadfile

# Tests only, without lint and regen-check (handy while iterating).
test-only: venv
	$(PY) -m pytest -n 3 --dist loadfile

# Rewrite the `ct tui` snapshot SVGs after an intended change; docs/images/tui/ gets copies.
tui-snapshots: venv
	$(PY) -m pytest -q tests/tui/test_snapshots.py --snapshot-update
	mkdir -p docs/images/tui
	cp tests/tui/__snapshots__/test_snapshots/*.svg docs/images/tui/

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy ct_core ct_cli ct_local ct_plugins/lora/ct_lora ct_plugins/router-replay/ct_router_replay ct_plugins/dflash2/ct_dflash2 ct_plugins/capacity/ct_capacity ct_plugins/model-deployment/ct_model_deployment ct_plugins/tinker/ct_tinker ct_plugins/runs/ct_runs testing/ct_testing

format: venv
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

spec-check: venv
	$(VENV)/bin/openapi-spec-validator $(SPEC)

# Rewrite generated/ from the spec. Never edit generated/ by hand.
regen: venv
	$(PY) openapi/regen.py --output $(GENERATED_PKG)

# Regenerate into a temp dir and fail on any difference from generated/.
regen-check: venv
	$(PY) openapi/regen.py --check $(GENERATED_PKG)

# The documentation site (mkdocs.yml), built with --strict into a temporary folder that is then removed:
# a broken link, a page missing from the build or an unreadable docstring fails it. The CLI reference
# page is generated from the ct app at build time (docs/hooks/cli_reference.py). The examples in the
# guides are run by tests/docs. NO_MKDOCS_2_WARNING quiets the theme's notice about its successor.
docs: venv
	site=$$(mktemp -d) && NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir $$site; \
	status=$$?; rm -rf $$site; exit $$status

# The demo (examples/demo.py): a local server, a fine-tune of the tiny model on the bundled chat task
# (examples/data/shout.jsonl) and its held-out questions asked of the base and the fine-tuned model
# through the openai package, then the low-level job path. A few minutes on two CPU cores.
demo: venv
	$(PY) examples/demo.py

# Every benchmark in bench/ (a script with a __main__ block; reference_path.py and verdict.py are
# helpers), one after another; each prints a `verdict:` line per target (bench/verdict.py). One that
# fails does not stop the others, and `make bench` then fails.
BENCHMARKS := $(shell grep -l '__name__ == "__main__"' bench/*.py)

bench: venv
	status=0; for script in $(BENCHMARKS); do \
		echo "== $$script"; $(PY) $$script || status=1; \
	done; exit $$status

# A long property-based fuzz run of the wire decoder (not part of `make test`).
fuzz: venv
	CT_FUZZ_EXAMPLES=$${CT_FUZZ_EXAMPLES:-20000} $(PY) -m pytest -m fuzz -p no:xdist tests/core

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

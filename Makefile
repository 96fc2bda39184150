# The one way to run things, locally and in CI. `make test` and `make demo` set up .venv on their own.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ct-installed
PLUGIN_PROJECTS := $(wildcard ct_plugins/*/pyproject.toml)
# The shared pytest fixtures (a pytest11 plugin), a distribution of its own so no wheel of ct ships them.
TESTING_PROJECT := testing/pyproject.toml
GENERATED_PKG := generated/ct_api
SPEC := openapi/cortex-training.yaml

.PHONY: venv install test test-only lint format regen regen-check spec-check catalog-check demo bench fuzz clean

venv: $(STAMP)

# torch comes first, pinned to the CPU build that lies on this disk where it exists; otherwise a plain
# torch requirement could pull a multi-GB CUDA build.
$(STAMP): pyproject.toml $(PLUGIN_PROJECTS) $(TESTING_PROJECT)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0 || $(PY) -m pip install -q torch --index-url https://download.pytorch.org/whl/cpu
	$(PY) -m pip install -q $(foreach p,$(PLUGIN_PROJECTS),-e $(dir $(p))) -e $(dir $(TESTING_PROJECT)) -e '.[local,plot,dev]'
	touch $(STAMP)

install: venv

test: venv lint regen-check spec-check
	$(PY) -m pytest -n 2 --dist loadfile

# Tests only, without lint and regen-check (handy while iterating).
test-only: venv
	$(PY) -m pytest -n 2 --dist loadfile

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy ct_core ct_cli

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

demo: venv
	$(PY) examples/demo.py

bench: venv
	$(PY) bench/cli_startup.py
	$(PY) bench/wire.py
	$(PY) bench/train_loop.py
	$(PY) bench/generate.py
	$(PY) bench/downloads.py

# A long property-based fuzz run of the wire decoder (not part of `make test`).
fuzz: venv
	CT_FUZZ_EXAMPLES=$${CT_FUZZ_EXAMPLES:-20000} $(PY) -m pytest -m fuzz -p no:xdist tests/core

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

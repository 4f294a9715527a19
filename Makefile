# Two entry points, each creating or reusing a local virtual environment (.venv):
#   make demo  - install rankproof and run the main job
#   make test  - install rankproof with its dev extras and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.rankproof-dev
DEMO_STAMP := $(VENV)/.rankproof-dense

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# torch is pinned to 2.13.0 (the CPU wheel) in the dense extra; see README.
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dense,retrieval,report]'
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,ray,faiss,docs]'
	touch $(STAMP) $(DEMO_STAMP)

# Ends naming evals/results/latest.json and the HTML report beside it (open it in a browser).
demo: $(DEMO_STAMP)
	$(BIN)/rankproof eval --html evals/results/latest.html

# chromium, chromium-driver and pdflatex (apt-get, when missing): see scripts/system-deps.sh.
test: $(STAMP)
	bash scripts/system-deps.sh
	$(BIN)/python -m mypy
	$(BIN)/python -m ruff check src tests benchmarks
	$(BIN)/python -m pytest -q -n 2

lint: $(STAMP)
	$(BIN)/python -m mypy
	$(BIN)/python -m ruff check src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/measures.py

clean:
	rm -rf $(VENV) bench-data .pytest_cache .mypy_cache .ruff_cache

# Two entry points, each creating or reusing a local virtual environment (.venv):
#   make demo  - install rankproof and run the main job
#   make test  - install rankproof with its dev extras and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.rankproof-installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/rankproof measure examples/toy/qrels.txt examples/toy/bm25.run examples/toy/dense.run

test: $(STAMP)
	$(BIN)/python -m pytest -q
	$(BIN)/python -m mypy
	$(BIN)/python -m ruff check src tests benchmarks

lint: $(STAMP)
	$(BIN)/python -m mypy
	$(BIN)/python -m ruff check src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/measures.py

clean:
	rm -rf $(VENV) bench-data .pytest_cache .mypy_cache .ruff_cache

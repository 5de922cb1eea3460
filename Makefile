# The two commands of the README's quick start, and the checks behind them.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint install bench

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "needs $(PYTHON) on PATH (or run: make PYTHON=python3 ...)"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test]"

demo: install
	$(BIN)/procedure-rag demo

lint: install
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

# Every figure of the README's Benchmarks section, from the shared data in ../shared/data:
# retrieval quality (benchmarks/results/retrieval.*), what each representation kind finds
# (retrieval_kinds.*) and costs to index (index_cost.*), then splitting speed, memory, index
# throughput and query latency (benchmarks/results/speed.*, latency.json).
bench: install
	$(BIN)/python benchmarks/retrieval.py --questions ../shared/data/questions/hololens_dev.jsonl \
		../shared/data/questions/ja_native_dev.jsonl ../shared/data/emanual --docs-root ../shared/data \
		--confirm-chroma ja_native_dev --out benchmarks/results/retrieval.json
	$(BIN)/python benchmarks/retrieval.py --questions ../shared/data/questions/hololens_dev.jsonl \
		../shared/data/questions/ja_native_dev.jsonl ../shared/data/emanual --docs-root ../shared/data \
		--confirm-chroma none --methods langchain-recursive procedure-rag-raw procedure-rag-multivector \
		procedure-rag-multivector-all procedure-rag-raw+question procedure-rag-raw+summary \
		procedure-rag-raw+keywords procedure-rag-raw+table_summary procedure-rag-raw+code_docstring \
		procedure-rag-raw+image_caption --out benchmarks/results/retrieval_kinds.json
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python benchmarks/index_cost.py
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python benchmarks/speed.py --part all

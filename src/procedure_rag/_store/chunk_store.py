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
import math
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeAlias

from procedure_rag._models.identity import EmbeddingIdentity
from procedure_rag._store.ledger import LEDGER_TABLES, VectorLedger, mark_chunks_stale, mark_live
from procedure_rag._store.lexical_index import LexicalHit, create_lexical_tables, index_pending
from procedure_rag._store.lexical_memory import MemoryLexicon
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
    "StoreValue",
    "StoredChunk",
]

#: A metadata or info value: what every vector store takes as it is.
Scalar: TypeAlias = str | int | float | bool
#: A metadata value as the store keeps it: a scalar, or a non-empty list of scalars of one
#: type (Chroma stores such lists and filters them with ``$contains``).
StoreValue: TypeAlias = Scalar | list[str] | list[int] | list[float] | list[bool]

#: The layout of the store's tables; a file written with a higher number is refused.
STORE_SCHEMA_VERSION = 2

#: Info keys :meth:`ChunkStore.check_embedding` reads and writes.
EMBEDDING_MODEL_KEY = "procedure_rag:embedding"
EMBEDDING_DIMENSION_KEY = "procedure_rag:dimension"
_SCHEMA_VERSION_KEY = "schema_version"

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


@dataclass(frozen=True)
class StoredChunk:
    """One chunk as the store keeps it: id, text and flat metadata.

    The metadata is copied into a read-only mapping. Its ``source_id`` (when present)
    is the source the chunk is filed under; its ``chunk_id`` (when present) must be
    ``chunk_id``.

    Args:
        chunk_id: The chunk's id (non-empty).
        text: The chunk's text.
        metadata: Flat metadata: string keys, ``str``/``int``/``float``/``bool`` values
            (finite floats) or non-empty lists of one of those types
            (:func:`~procedure_rag._metadata.document_value` makes any value one).

    Raises:
        ValueError: When a field is of the wrong kind; the message names the chunk id
            and, for metadata, the key.
    """

    chunk_id: str
    text: str
    metadata: Mapping[str, StoreValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check(self.chunk_id, self.text, self.metadata)
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    @property
    def source_id(self) -> str:
        """The metadata's ``source_id``, or ``""``."""
        return str(self.metadata.get("source_id", ""))


@dataclass(frozen=True)
class ReplaceResult:
    """What :meth:`ChunkStore.replace_source` did, as chunk ids.

    Attributes:
        added: Ids that were not stored before, in the records' order.
        removed: Ids that were stored for the source and are gone, sorted.
        kept: Ids stored before with the same text and metadata, in the records' order.
            Their rows were not rewritten; their vectors need no new embedding.
        updated: Ids stored before whose text or metadata changed, in the records' order.
    """

    added: tuple[str, ...]
    removed: tuple[str, ...]
    kept: tuple[str, ...]
    updated: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceCommit:
    """What :meth:`ChunkStore.commit_source` did.

    Attributes:
        chunks: The chunk ids added, removed, kept and updated.
        stale_vectors: Vector ids of the source that are no longer wanted: delete them
            from the vector store, then call :meth:`ChunkStore.forget_vectors`.
    """

    chunks: ReplaceResult
    stale_vectors: tuple[str, ...]


@dataclass(frozen=True)
class IndexInfo:
    """The store's schema version and the embedding model its index was built with.

    Attributes:
        schema_version: :data:`STORE_SCHEMA_VERSION` of the file.
        embedding_model: The model identity recorded by :meth:`ChunkStore.check_embedding`,
            or ``None`` before the first call.
        embedding_dimension: The vector dimension recorded with it, or ``None``.
    """

    schema_version: int
    embedding_model: str | None
    embedding_dimension: int | None


class ChunkStore(VectorLedger):
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
        self._lexicon = MemoryLexicon()  # read from the lexical tables at the first search
        super().__init__(path, "chunk store", self._setup)

    def _setup(self, _conn: sqlite3.Connection) -> None:
        with self._transaction() as conn:
            _open_schema(conn, self._path)
            self._lexical = create_lexical_tables(conn)

    # -- chunks -----------------------------------------------------------------

    def put(self, records: Iterable[StoredChunk]) -> None:
        """Store ``records``, replacing chunks with the same ids, in one transaction.

        A chunk is filed under its metadata's ``source_id`` (``""`` when absent), moving
        it if it was filed elsewhere.

        Raises:
            ValueError: When a record is invalid or an id occurs twice (nothing is
                written; the message names the chunk id), or the store is closed.
        """
        rows = _rows(records)
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
                chunk_id: _decode(chunk_id, text, metadata)
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
        rows = _rows(records)
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
            return self._lexicon.search(self._connection(), query, n)

    def _index_words(self, conn: sqlite3.Connection) -> None:
        """Index the words of the chunks this transaction wrote (see :mod:`.lexical_index`)."""
        if self._lexical:
            index_pending(conn)

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
        rows = _rows(records)
        wanted = {row[0] for row in rows}
        for vector_id, chunk_id in vectors.items():
            if chunk_id not in wanted:
                msg = f"vector {vector_id!r} points at chunk {chunk_id!r}, which is not among the records"
                raise ValueError(msg)
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
        if key == _SCHEMA_VERSION_KEY:
            msg = f"info key {key!r} is kept by the store itself"
            raise ValueError(msg)
        _check_scalar(value, f"info {key!r}")
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
            version = _get_info(conn, _SCHEMA_VERSION_KEY)
            model = _get_info(conn, EMBEDDING_MODEL_KEY)
            dimension = _get_info(conn, EMBEDDING_DIMENSION_KEY)
        return IndexInfo(
            schema_version=int(version) if isinstance(version, int) else STORE_SCHEMA_VERSION,
            embedding_model=model if isinstance(model, str) else None,
            embedding_dimension=dimension if isinstance(dimension, int) else None,
        )

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
        keys = identity.to_metadata()
        with self._lock, self._transaction() as conn:
            stored = {key: value for key in keys if (value := _get_info(conn, key)) is not None}
            recorded = EmbeddingIdentity.from_metadata(stored)
            if recorded is None:
                for key, value in keys.items():
                    _set_info(conn, key, value)
                return
        recorded.check_same(identity, f"the index at {self._path!r}")


def _open_schema(conn: sqlite3.Connection, path: str) -> None:
    conn.execute(_INFO_TABLE)
    version = _get_info(conn, _SCHEMA_VERSION_KEY)
    if version is None:
        _set_info(conn, _SCHEMA_VERSION_KEY, STORE_SCHEMA_VERSION)
    elif isinstance(version, bool) or not isinstance(version, int) or version > STORE_SCHEMA_VERSION:
        msg = (
            f"the chunk store at {path!r} has store schema version {version!r}; this version of "
            f"procedure-rag reads version {STORE_SCHEMA_VERSION}: upgrade procedure-rag to open it"
        )
        raise ValueError(msg)
    elif version != STORE_SCHEMA_VERSION:
        msg = f"the chunk store at {path!r} has unknown store schema version {version!r}"
        raise ValueError(msg)
    # Created only after the version check: a newer layout is never touched.
    for statement in (*_CHUNK_TABLES, *LEDGER_TABLES):
        conn.execute(statement)


def _replace(
    conn: sqlite3.Connection, source_id: str, rows: list[tuple[str, str, str, str]]
) -> ReplaceResult:
    """:meth:`ChunkStore.replace_source` inside an open transaction."""
    for chunk_id, row_source, _, _ in rows:
        if row_source not in ("", source_id):
            msg = f"chunk {chunk_id!r} has source_id {row_source!r}, not {source_id!r}"
            raise ValueError(msg)
    before = {
        chunk_id: (text, _canonical(metadata))
        for chunk_id, text, metadata in conn.execute(
            "SELECT chunk_id, text, metadata FROM chunks WHERE source_id = ?", (source_id,)
        )
    }
    incoming = {row[0] for row in rows}
    removed = tuple(sorted(set(before) - incoming))
    _delete(conn, list(removed))
    seq = _next_seq(conn)
    added: list[str] = []
    kept: list[str] = []
    updated: list[str] = []
    for i, (chunk_id, _, text, metadata) in enumerate(rows):
        old = before.get(chunk_id)
        if old is None:
            _insert_new(conn, (chunk_id, source_id, text, metadata, seq + i))
            added.append(chunk_id)
        elif old == (text, _canonical(metadata)):
            conn.execute("UPDATE chunks SET seq = ? WHERE chunk_id = ?", (seq + i, chunk_id))
            kept.append(chunk_id)
        else:
            conn.execute(
                "UPDATE chunks SET text = ?, metadata = ?, seq = ? WHERE chunk_id = ?",
                (text, metadata, seq + i, chunk_id),
            )
            updated.append(chunk_id)
    return ReplaceResult(added=tuple(added), removed=removed, kept=tuple(kept), updated=tuple(updated))


def _check(chunk_id: object, text: object, metadata: object) -> None:
    """Raise ValueError, naming the chunk id, when a record's fields are of the wrong kind."""
    if not isinstance(chunk_id, str) or not chunk_id:
        msg = f"chunk id must be a non-empty str, got {chunk_id!r}"
        raise ValueError(msg)
    if not isinstance(text, str):
        msg = f"chunk {chunk_id!r}: text must be a str, got {type(text).__name__}"
        raise ValueError(msg)
    if not isinstance(metadata, Mapping):
        msg = f"chunk {chunk_id!r}: metadata must be a mapping, got {type(metadata).__name__}"
        raise ValueError(msg)
    for key, value in metadata.items():
        if not isinstance(key, str):
            msg = f"chunk {chunk_id!r}: metadata key {key!r} is not a str"
            raise ValueError(msg)
        what = f"chunk {chunk_id!r}: metadata {key!r}"
        if isinstance(value, list):
            _check_list(value, what)
        else:
            _check_scalar(value, what)
    for key, expected in (("chunk_id", chunk_id), ("source_id", None)):
        value = metadata.get(key)
        if value is not None and (not isinstance(value, str) or (expected is not None and value != expected)):
            msg = f"chunk {chunk_id!r}: metadata {key!r} is {value!r}"
            raise ValueError(msg)


def _check_list(value: list[object], what: str) -> None:
    kinds = {type(item) for item in value}
    if len(kinds) != 1 or not kinds <= {str, int, float, bool}:
        msg = f"{what} must be a non-empty list of str, int, float or bool of one type, got {value!r}"
        raise ValueError(msg)
    for item in value:
        _check_scalar(item, what)


def _check_scalar(value: object, what: str) -> None:
    if not isinstance(value, str | int | float):  # bool is an int
        msg = f"{what} must be a str, int, float or bool, got {type(value).__name__}"
        raise ValueError(msg)
    if isinstance(value, float) and not math.isfinite(value):
        msg = f"{what} must be a finite number, got {value!r}"
        raise ValueError(msg)


def _rows(records: Iterable[StoredChunk]) -> list[tuple[str, str, str, str]]:
    """``(chunk_id, source_id, text, metadata JSON)`` per record, all checked before any write."""
    rows: list[tuple[str, str, str, str]] = []
    seen: set[str] = set()
    for record in records:
        if not isinstance(record, StoredChunk):
            msg = f"records must be StoredChunk, got {type(record).__name__}"
            raise TypeError(msg)
        # Checked again: a frozen dataclass can still be forced past __post_init__.
        _check(record.chunk_id, record.text, record.metadata)
        if record.chunk_id in seen:
            msg = f"chunk {record.chunk_id!r} occurs twice"
            raise ValueError(msg)
        seen.add(record.chunk_id)
        rows.append((record.chunk_id, record.source_id, record.text, _dumps(dict(record.metadata))))
    return rows


def _decode(chunk_id: str, text: str, metadata: str) -> StoredChunk:
    if not isinstance(metadata, str):  # a BLOB another program wrote: never decoded as bytes
        msg = f"chunk {chunk_id!r}: stored metadata is a {type(metadata).__name__}, not JSON text"
        raise ValueError(msg)
    try:
        decoded = json.loads(metadata)
    except json.JSONDecodeError as exc:
        msg = f"chunk {chunk_id!r}: stored metadata is not valid JSON: {exc.msg}"
        raise ValueError(msg) from exc
    return StoredChunk(chunk_id, text, decoded)


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _canonical(metadata_json: str) -> str:
    """Key order does not make metadata different; ``1`` and ``True`` do (so no dict ``==``)."""
    return json.dumps(json.loads(metadata_json), ensure_ascii=False, sort_keys=True)


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
    conn.execute("INSERT OR REPLACE INTO info VALUES (?, ?)", (key, _dumps(value)))

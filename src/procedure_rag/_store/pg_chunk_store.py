"""Raw chunks, the vector ledger and the lexical index in a PostgreSQL database.

:class:`PostgresChunkStore` is the :class:`~procedure_rag._store.docstore.Docstore` for an
index served from several machines: every API server opens the same URL (see
:mod:`procedure_rag._store.postgres` for the URL, the schema and the errors). It keeps
what the SQLite store keeps, in the same form (metadata as the same JSON text,
embeddings as the same float32 bytes), under the same contract:

- one transaction per source: a source's chunks, its lexical words and its live vectors
  commit together, so a reader (any statement, on any machine) sees the source as it
  was before or after, never half of it;
- several writers of different sources at once: each source-writing transaction takes a
  transaction-scoped advisory lock on its source (two writers of one source queue), and
  the writer holds a session-scoped advisory lock per source while it writes the vector
  store (:meth:`PostgresChunkStore.writing`), so a writer cleaning up after a killed run
  never deletes the vectors another live writer is writing. A killed writer's session
  ends with its connection, and its locks with it;
- the lexical index: each child chunk's words (the SQLite store's tokenisation) in a
  table, with a generation counter raised by every transaction that changes it; searches
  are answered from the in-memory BM25 postings
  (:class:`~procedure_rag._store.lexical_memory.MemoryLexicon`, the same scores as the
  SQLite store's), read again in one snapshot whenever the counter moved.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import partial
from typing import Any

from procedure_rag._language.words import lexical_terms
from procedure_rag._models.identity import EmbeddingIdentity
from procedure_rag._store.docstore import Docstore
from procedure_rag._store.ledger import LedgerVector, float32_bytes
from procedure_rag._store.lexical_index import LexicalHit, is_parent_metadata
from procedure_rag._store.lexical_memory import MemoryLexicon
from procedure_rag._store.postgres import PostgresConnection
from procedure_rag._store.records import (
    SCHEMA_VERSION_KEY,
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
)

__all__ = ["PostgresChunkStore"]

_WHAT = "chunk store"
_STATES = ("live", "pending", "stale")
_LOCK_SOURCES = (
    "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(s))"
    " FROM (SELECT unnest(%s::text[]) AS s ORDER BY 1) AS sources"
)
_UPSERT_CHUNK = (
    "INSERT INTO chunks VALUES (%s, %s, %s, %s, %s) ON CONFLICT (chunk_id) DO UPDATE SET"
    " source_id = excluded.source_id, text = excluded.text, metadata = excluded.metadata, seq = excluded.seq"
)
_RECORD_VECTOR = (
    "INSERT INTO vectors (vector_id, chunk_id, source_id, state) VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (vector_id) DO UPDATE SET"
    " chunk_id = excluded.chunk_id, source_id = excluded.source_id, state = excluded.state"
)


class PostgresChunkStore(Docstore):
    """Chunks by id, the vector ledger and the lexical index in a PostgreSQL schema.

    Thread-safe (a connection pool); several processes on several machines may read and
    write one database. Use it as a context manager, or call :meth:`close`.

    Args:
        url: ``postgresql://user:password@host:port/database``, with libpq's options and
            ``schema=NAME`` (default ``procedure_rag``) for the schema of the tables.
        create: Create the schema when the database has none (``False``: an error).
        max_connections: The connection pool's largest size.

    Raises:
        DocstoreError: When the server cannot be reached or refuses the login, the URL
            is unreadable, or the schema is missing (``create=False``), foreign, or of
            another version; the message is one line naming the URL (without password).
        ImportError: When psycopg or psycopg_pool is missing (the message says what to
            install).
    """

    def __init__(self, url: str, *, create: bool = True, max_connections: int = 8) -> None:
        self._db = PostgresConnection(url, create=create, max_connections=max_connections)
        self._lexicon = MemoryLexicon()
        self._lexicon_lock = threading.Lock()
        self._psycopg_errors = _errors()
        self._analyser = self._db.lexical_analyser  # recorded when the schema was made

    # -- what it is ---------------------------------------------------------------

    @property
    def location(self) -> str:
        """The URL, its password replaced by ``***``."""
        return self._db.url.shown

    @property
    def schema(self) -> str:
        """The PostgreSQL schema of the tables."""
        return self._db.schema

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._db.closed

    def close(self) -> None:
        """Close the connection pool; closing twice is harmless."""
        self._db.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"{type(self).__name__}({self.location!r}, {state})"

    # -- plumbing -------------------------------------------------------------------

    def _rows(
        self, query: str, params: Sequence[object] = (), *, binary: bool = False
    ) -> list[tuple[Any, ...]]:
        with self._db.connection(_WHAT) as conn:
            return conn.execute(query, params, binary=binary).fetchall()

    def _column(self, query: str, params: Sequence[object] = ()) -> list[str]:
        return [row[0] for row in self._rows(query, params)]

    @contextmanager
    def _write(self, sources: Iterable[str] = ()) -> Iterator[Any]:
        """A transaction holding the advisory locks of ``sources`` (taken in order)."""
        with self._db.connection(_WHAT) as conn, conn.transaction():
            locked = sorted(set(sources))
            if locked:
                conn.execute(_LOCK_SOURCES, (self.schema, locked))
            yield conn

    # -- chunks ---------------------------------------------------------------------

    def put(self, records: Iterable[StoredChunk]) -> None:
        """Store ``records``, replacing chunks with the same ids, in one transaction.

        Raises:
            ValueError: When a record is invalid, an id occurs twice, or a text holds a
                NUL character (nothing is written); or the store is closed.
        """
        rows = _checked(record_rows(records))
        with self._write(row[1] for row in rows) as conn:
            seqs = _next_seqs(conn, len(rows))
            conn.cursor().executemany(
                _UPSERT_CHUNK, [(*row, seq) for row, seq in zip(rows, seqs, strict=True)]
            )
            if _index_words(conn, rows, (), self._analyser):
                _bump(conn)

    def get(self, ids: Iterable[str]) -> list[StoredChunk | None]:
        """The chunks with ``ids``, in that order; ``None`` for an id not stored."""
        wanted = list(ids)
        rows = self._rows("SELECT chunk_id, text, metadata FROM chunks WHERE chunk_id = ANY(%s)", (wanted,))
        found = {chunk_id: decode_chunk(chunk_id, text, metadata) for chunk_id, text, metadata in rows}
        return [found.get(chunk_id) for chunk_id in wanted]

    def delete(self, ids: Iterable[str]) -> int:
        """Delete the chunks with ``ids`` (ids not stored are ignored); returns how many were."""
        unique = sorted(set(ids))
        with self._write() as conn:
            gone = _delete(conn, unique)
            if _index_words(conn, (), gone, self._analyser):
                _bump(conn)
        return len(gone)

    def ids_for_source(self, source_id: str) -> list[str]:
        """The ids filed under ``source_id``, in the order they were last written."""
        return self._column("SELECT chunk_id FROM chunks WHERE source_id = %s ORDER BY seq", (source_id,))

    def replace_source(self, source_id: str, records: Iterable[StoredChunk]) -> ReplaceResult:
        """Make ``records`` the chunks of ``source_id``, in one transaction (see ``ChunkStore``)."""
        rows = _checked(record_rows(records))
        with self._write([source_id]) as conn:
            result, changed = self._replace(conn, source_id, rows)
            if changed:
                _bump(conn)
        return result

    def sources(self) -> list[str]:
        """The source ids with at least one chunk, sorted."""
        return self._column("SELECT DISTINCT source_id FROM chunks ORDER BY source_id")

    def __len__(self) -> int:
        return int(self._rows("SELECT count(*) FROM chunks")[0][0])

    def _replace(self, conn: Any, source_id: str, rows: list[Row]) -> tuple[ReplaceResult, bool]:  # noqa: ANN401
        """:meth:`replace_source` in an open transaction; also whether the words changed."""
        before = {
            chunk_id: (text, metadata)
            for chunk_id, text, metadata in conn.execute(
                "SELECT chunk_id, text, metadata FROM chunks WHERE source_id = %s", (source_id,)
            )
        }
        plan = plan_replace(source_id, rows, before)
        new_ids = [row[0] for _, row in plan.new]
        if new_ids:
            elsewhere = conn.execute(
                "SELECT chunk_id, source_id FROM chunks WHERE chunk_id = ANY(%s) ORDER BY chunk_id LIMIT 1",
                (new_ids,),
            ).fetchone()
            if elsewhere is not None:
                chunk_id, other = elsewhere
                msg = f"chunk {chunk_id!r} is already stored under source {other!r}, not {source_id!r}"
                raise ValueError(msg)
        _delete(conn, list(plan.result.removed))
        seqs = _next_seqs(conn, len(rows))
        cursor = conn.cursor()
        try:
            cursor.executemany(
                "INSERT INTO chunks VALUES (%s, %s, %s, %s, %s)", [(*row, seqs[i]) for i, row in plan.new]
            )
        except self._psycopg_errors.UniqueViolation as exc:  # another writer filed it meanwhile
            detail = exc.diag.message_detail
            msg = f"a chunk of {source_id!r} was stored under another source meanwhile: {detail}"
            raise ValueError(msg) from exc
        cursor.executemany(
            "UPDATE chunks SET seq = %s WHERE chunk_id = %s", [(seqs[i], cid) for i, cid in plan.kept]
        )
        cursor.executemany(
            "UPDATE chunks SET text = %s, metadata = %s, seq = %s WHERE chunk_id = %s",
            [(text, metadata, seqs[i], chunk_id) for i, (chunk_id, _, text, metadata) in plan.changed],
        )
        written = [row for _, row in (*plan.new, *plan.changed)]
        return plan.result, _index_words(conn, written, plan.result.removed, self._analyser)

    # -- lexical search -------------------------------------------------------------

    @property
    def lexical(self) -> bool:
        """Always ``True``: the words are kept in a table."""
        return True

    def lexical_search(self, query: str, n: int) -> list[LexicalHit]:
        """The best ``n`` child chunks for ``query`` by BM25, as the SQLite store finds them.

        Answered from the in-memory postings, read again (one snapshot) whenever any
        writer, on any machine, changed the words since.
        """
        with self._lexicon_lock:
            return self._lexicon.search(_PostgresWords(self), query, n)

    # -- chunks and vectors together --------------------------------------------------

    def commit_source(
        self,
        source_id: str,
        records: Iterable[StoredChunk],
        vectors: Mapping[str, str],
        *,
        details: Mapping[str, tuple[str, str]] | None = None,
        embeddings: Mapping[str, Sequence[float]] | None = None,
    ) -> SourceCommit:
        """The chunks of ``source_id`` and its live vectors, in one transaction (see ``ChunkStore``)."""
        rows = _checked(record_rows(records))
        check_vectors_of(rows, vectors)
        for vector_id, (_, text) in (details or {}).items():
            _no_nul(text, f"vector {vector_id!r}: its text")
        with self._write([source_id]) as conn:
            result, changed = self._replace(conn, source_id, rows)
            stale = _mark_live(conn, source_id, vectors, details=details, embeddings=embeddings)
            if changed:
                _bump(conn)
        return SourceCommit(chunks=result, stale_vectors=stale)

    def remove_chunks(self, ids: Iterable[str]) -> tuple[str, ...]:
        """Delete chunks by id and mark their vectors stale, in one transaction."""
        unique = sorted(set(ids))
        with self._write() as conn:
            changed = _index_words(conn, (), _delete(conn, unique), self._analyser)
            stale = [
                row[0]
                for row in conn.execute(
                    "UPDATE vectors SET state = 'stale' WHERE chunk_id = ANY(%s) RETURNING vector_id",
                    (unique,),
                )
            ]
            if changed:
                _bump(conn)
        return tuple(sorted(stale))

    # -- the vector ledger ----------------------------------------------------------

    def vector_details(self, vector_ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """``vector id -> (chunk id, kind, text)`` of the live vectors among ``vector_ids``."""
        rows = self._rows(
            "SELECT vector_id, chunk_id, kind, text FROM vectors"
            " WHERE state = 'live' AND vector_id = ANY(%s)",
            (list(vector_ids),),
        )
        return {vector_id: (chunk_id, kind, text) for vector_id, chunk_id, kind, text in rows}

    def vector_states(self, vector_ids: Iterable[str]) -> dict[str, str]:
        """``vector id -> state`` of the ids the ledger lists."""
        rows = self._rows(
            "SELECT vector_id, state FROM vectors WHERE vector_id = ANY(%s)", (list(vector_ids),)
        )
        return dict(rows)

    def vectors_of_chunks(self, chunk_ids: Iterable[str]) -> list[LedgerVector]:
        """Every live vector of ``chunk_ids``, with its kind, text and (when recorded) embedding."""
        rows = self._rows(
            "SELECT vector_id, chunk_id, kind, text, embedding FROM vectors"
            " WHERE state = 'live' AND chunk_id = ANY(%s) ORDER BY vector_id",
            (sorted(set(chunk_ids)),),
            binary=True,  # the embeddings as bytes: half the transfer of hex text, and no decoding
        )
        return [
            LedgerVector(vid, cid, kind, text, None if emb is None else bytes(emb))
            for vid, cid, kind, text, emb in rows
        ]

    def begin_vectors(self, source_id: str, vectors: Mapping[str, str]) -> None:
        """Record ``vectors`` as about to be written for ``source_id`` (pending)."""
        with self._write([source_id]) as conn:
            _record(conn, source_id, vectors, "pending")

    def vector_ids(self, source_id: str | None = None, *, state: str = "live") -> list[str]:
        """Vector ids in ``state`` (``"live"``, ``"pending"`` or ``"stale"``), of one source or all."""
        if state not in _STATES:
            msg = f"state must be 'live', 'pending' or 'stale', got {state!r}"
            raise ValueError(msg)
        if source_id is None:
            return self._column("SELECT vector_id FROM vectors WHERE state = %s ORDER BY vector_id", (state,))
        return self._column(
            "SELECT vector_id FROM vectors WHERE state = %s AND source_id = %s ORDER BY vector_id",
            (state, source_id),
        )

    def stale_vectors(self, source_id: str | None = None) -> list[str]:
        """Vectors to delete from the vector store: stale ones, and pending ones not live."""
        if source_id is None:
            return self._column("SELECT vector_id FROM vectors WHERE state != 'live' ORDER BY vector_id")
        return self._column(
            "SELECT vector_id FROM vectors WHERE state != 'live' AND source_id = %s ORDER BY vector_id",
            (source_id,),
        )

    def stale_sources(self) -> list[str]:
        """The sources with vectors :meth:`stale_vectors` lists, sorted."""
        return self._column("SELECT DISTINCT source_id FROM vectors WHERE state != 'live' ORDER BY source_id")

    def forget_vectors(self, ids: Iterable[str]) -> None:
        """Drop the ledger rows of vectors that were deleted from the vector store."""
        with self._write() as conn:
            conn.execute(
                "DELETE FROM vectors WHERE state != 'live' AND vector_id = ANY(%s)", (sorted(set(ids)),)
            )

    @contextmanager
    def writing(self, source_id: str, *, wait: bool = True) -> Iterator[bool]:
        """Hold ``source_id``'s writer lock (a session advisory lock) on a connection of its own.

        Yields whether it is held: with ``wait=False``, ``False`` at once when another
        writer (any process, any machine) holds it. A writer that dies loses it with its
        connection.
        """
        key = f"{self.schema}/{source_id}"
        with self._db.connection(_WHAT) as conn:
            if wait:
                conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
                held = True
            else:
                row = conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)).fetchone()
                held = bool(row and row[0])
            try:
                yield held
            finally:
                if held:  # a connection that is gone took its lock with it
                    with suppress(self._psycopg_errors.Error):
                        conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))

    @contextmanager
    def writing_sources(self, source_ids: Sequence[str]) -> Iterator[None]:
        """Hold the writer locks of several sources on one connection, taken in sorted order."""
        keys = [f"{self.schema}/{source_id}" for source_id in sorted(set(source_ids))]
        with self._db.connection(_WHAT) as conn:
            held: list[str] = []
            try:
                for key in keys:
                    conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
                    held.append(key)
                yield
            finally:
                with suppress(self._psycopg_errors.Error):
                    for key in reversed(held):
                        conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))

    # -- index info -------------------------------------------------------------

    def set_info(self, key: str, value: Scalar) -> None:
        """Record ``value`` under ``key``, replacing what was there (``schema_version`` is refused)."""
        if key == SCHEMA_VERSION_KEY:
            msg = f"info key {key!r} is kept by the store itself"
            raise ValueError(msg)
        check_scalar(value, f"info {key!r}")
        with self._write() as conn:
            _set_info(conn, key, value)

    def get_info(self, key: str) -> Scalar | None:
        """The value recorded under ``key``, or ``None``."""
        with self._db.connection(_WHAT) as conn:
            return _get_info(conn, key)

    def index_info(self) -> IndexInfo:
        """The schema version and the recorded embedding model and dimension."""
        with self._db.connection(_WHAT) as conn:
            return IndexInfo.read(partial(_get_info, conn))

    def check_embedding(self, identity: EmbeddingIdentity) -> None:
        """Record the embedding model on first use; afterwards, insist on the same one.

        Raises:
            EmbeddingMismatchError: When the store was built with another model or dimension.
        """
        with self._write() as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtext('procedure_rag:info'), hashtext(%s))", (self.schema,)
            )
            recorded = record_embedding(identity, partial(_get_info, conn), partial(_set_info, conn))
        if recorded is not None:
            recorded.check_same(identity, f"the index at {self.location!r}")


class _PostgresWords:
    """The lexical table as :class:`MemoryLexicon` reads it; no search of its own."""

    def __init__(self, store: PostgresChunkStore) -> None:
        self._store = store

    def generation(self) -> int:
        return int(self._store._rows("SELECT n FROM lexical_generation")[0][0])

    def analyser(self) -> str:
        return self._store._analyser

    def read(self) -> tuple[int, list[tuple[str, str]]]:
        with self._store._db.connection(_WHAT) as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # one snapshot for both
            (now,) = conn.execute("SELECT n FROM lexical_generation").fetchall()[0]
            words = conn.execute("SELECT chunk_id, terms FROM lexical ORDER BY row").fetchall()
        return int(now), [(chunk_id, terms) for chunk_id, terms in words]

    def search(self, query: str, n: int) -> list[LexicalHit] | None:
        return None


def _errors() -> Any:  # noqa: ANN401 - psycopg.errors
    import psycopg  # noqa: PLC0415 - PostgresConnection imported it (or raised the hint)

    return psycopg.errors


def _no_nul(text: str, what: str) -> None:
    if "\x00" in text:
        msg = f"{what} holds a NUL character, which PostgreSQL cannot store"
        raise ValueError(msg)


def _checked(rows: list[Row]) -> list[Row]:
    """``rows``, once no id or text holds a NUL character (JSON metadata escapes it)."""
    for chunk_id, source_id, text, _ in rows:
        _no_nul(chunk_id, f"chunk {chunk_id!r}: its id")
        _no_nul(source_id, f"chunk {chunk_id!r}: its source_id")
        _no_nul(text, f"chunk {chunk_id!r}: its text")
    return rows


def _next_seqs(conn: Any, count: int) -> list[int]:  # noqa: ANN401 - psycopg.Connection
    """``count`` increasing numbers from the chunks' sequence (document order within a write)."""
    if not count:
        return []
    rows = conn.execute("SELECT nextval('chunk_seq') FROM generate_series(1, %s)", (count,)).fetchall()
    return sorted(int(row[0]) for row in rows)


def _delete(conn: Any, ids: Sequence[str]) -> list[str]:  # noqa: ANN401 - psycopg.Connection
    """Delete chunks (their words are the caller's, :func:`_index_words`); returns the ids deleted."""
    if not ids:
        return []
    return [
        row[0]
        for row in conn.execute(
            "DELETE FROM chunks WHERE chunk_id = ANY(%s) RETURNING chunk_id", (list(ids),)
        )
    ]


def _index_words(conn: Any, written: Iterable[Row], removed: Iterable[str], analyser: str) -> bool:  # noqa: ANN401
    """Index the words of chunks written (children only), drop those of chunks removed.

    ``analyser`` is the one the store records (``lexical_analyser`` in its info table).

    Returns whether the lexical table changed: the caller then raises the generation
    (:func:`_bump`), last.
    """
    rows = list(written)
    ids = [row[0] for row in rows] + list(removed)
    if not ids:
        return False
    dropped = conn.execute("DELETE FROM lexical WHERE chunk_id = ANY(%s)", (ids,)).rowcount
    words = [
        (chunk_id, " ".join(lexical_terms(text, analyser)))
        for chunk_id, _, text, metadata in rows
        if not is_parent_metadata(metadata)
    ]
    conn.cursor().executemany("INSERT INTO lexical (chunk_id, terms) VALUES (%s, %s)", words)
    return bool(dropped or words)


def _bump(conn: Any) -> None:  # noqa: ANN401 - psycopg.Connection
    """Raise the lexical generation (its row lock is held until the commit: call it last)."""
    conn.execute("UPDATE lexical_generation SET n = n + 1")


def _record(conn: Any, source_id: str, vectors: Mapping[str, str], state: str) -> None:  # noqa: ANN401
    conn.cursor().executemany(
        _RECORD_VECTOR,
        [(vector_id, chunk_id, source_id, state) for vector_id, chunk_id in sorted(vectors.items())],
    )


def _mark_live(
    conn: Any,  # noqa: ANN401 - psycopg.Connection
    source_id: str,
    vectors: Mapping[str, str],
    *,
    details: Mapping[str, tuple[str, str]] | None,
    embeddings: Mapping[str, Sequence[float]] | None,
) -> tuple[str, ...]:
    """``vectors`` become the source's live ones, its others stale (see ``ledger.mark_live``)."""
    _record(conn, source_id, vectors, "live")
    cursor = conn.cursor()
    if details:
        cursor.executemany(
            "UPDATE vectors SET kind = %s, text = %s WHERE vector_id = %s",
            [(kind, text, vid) for vid, (kind, text) in sorted(details.items()) if vid in vectors],
        )
    if embeddings:
        cursor.executemany(
            "UPDATE vectors SET embedding = %s WHERE vector_id = %s",
            [(float32_bytes(vector), vid) for vid, vector in sorted(embeddings.items()) if vid in vectors],
        )
    others = conn.execute(
        "SELECT vector_id FROM vectors WHERE source_id = %s AND state != 'stale'", (source_id,)
    ).fetchall()
    stale = sorted(row[0] for row in others if row[0] not in vectors)
    if stale:
        conn.execute("UPDATE vectors SET state = 'stale' WHERE vector_id = ANY(%s)", (stale,))
    return tuple(stale)


def _get_info(conn: Any, key: str) -> Scalar | None:  # noqa: ANN401 - psycopg.Connection
    row = conn.execute("SELECT value FROM info WHERE key = %s", (key,)).fetchone()
    if row is None:
        return None
    value = json.loads(row[0])
    return value if isinstance(value, str | int | float) else None


def _set_info(conn: Any, key: str, value: Scalar) -> None:  # noqa: ANN401 - psycopg.Connection
    conn.execute(
        "INSERT INTO info VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, dumps(value)),
    )

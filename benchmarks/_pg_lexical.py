"""The PostgreSQL docstore's lexical search, two ways: in-memory BM25 (the store's) and in SQL.

The store keeps each child chunk's words in the ``lexical`` table and answers from
in-memory postings (:class:`~procedure_rag._store.lexical_memory.MemoryLexicon`), read
again whenever the generation counter moved. The other option is PostgreSQL's own
full-text machinery over the same pre-tokenised words. Both are built here beside a
benchmark index's docstore (tables prefixed ``bench_fts_`` in its schema, from its
``lexical`` table) and measured on the same questions:

``memory``
    ``PostgresChunkStore.lexical_search``: FTS5's BM25 (the SQLite store's hits and scores).
``sql-bm25``
    The same BM25 computed in SQL: a postings table ``(term, row, tf)`` (B-tree on the term),
    document lengths and a one-row count of documents and words, kept by every write.
``ts_rank``
    A ``tsvector`` per chunk made from the very tokens the store searches (a tsvector
    literal: the ``'simple'`` parser would split ``wi-fi`` and ``foo_bar``, which FTS5's
    tokenizer keeps whole), a GIN index, ``@@`` an OR of the question's tokens, ranked
    by ``ts_rank(tsv, query, 1)`` (term frequency over 1 + log of the length): PostgreSQL's
    own ranking, not BM25.

Measured: whether each finds the memory's hits (the same ten in the same order, and the
share of its ten it finds); latency p50/p95 per question; what a write costs each (one
source replaced: the store's own transaction, and the extra tables' update); what
refreshing costs the memory (reading the table again, on every reader, after any write);
and the latencies while a writer replaces a source every ``write_every`` seconds.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from procedure_rag._language.words import lexical_terms
from procedure_rag._store.chunk_store import StoredChunk
from procedure_rag._store.lexical_index import MAX_QUERY_TERMS
from procedure_rag._store.lexical_memory import MemoryLexicon, _tokens
from procedure_rag._store.pg_chunk_store import PostgresChunkStore, _PostgresWords

#: How many hits each question asks (the retriever asks ``2 * k``).
N = 10
_TABLES = (
    "DROP TABLE IF EXISTS bench_fts_docs, bench_fts_postings, bench_fts_stats",
    'CREATE TABLE bench_fts_docs (row BIGINT PRIMARY KEY, chunk_id TEXT COLLATE "C" NOT NULL UNIQUE,'
    " len INTEGER NOT NULL, tsv TSVECTOR NOT NULL)",
    'CREATE TABLE bench_fts_postings (term TEXT COLLATE "C" NOT NULL, row BIGINT NOT NULL,'
    " tf INTEGER NOT NULL, PRIMARY KEY (term, row))",
    "CREATE TABLE bench_fts_stats (id INTEGER PRIMARY KEY, n BIGINT NOT NULL, words BIGINT NOT NULL)",
)
# Statistics first: without them the planner takes the one-row stats table for 1,700 rows,
# multiplies its estimates into the billions and compiles the query with JIT (3 s a question).
_INDEXES = (
    "CREATE INDEX bench_fts_tsv ON bench_fts_docs USING GIN (tsv)",
    "ANALYZE bench_fts_docs",
    "ANALYZE bench_fts_postings",
    "ANALYZE bench_fts_stats",
)
# FTS5's BM25 (k1 1.2, b 0.75; an IDF at or below zero counts as 1e-6), ties by row.
_BM25 = """
WITH p AS MATERIALIZED (SELECT term, row, tf FROM bench_fts_postings WHERE term = ANY(%(terms)s::text[])),
s AS MATERIALIZED (SELECT n::float8 AS n, words::float8 / greatest(n, 1) AS avgdl FROM bench_fts_stats),
w AS (SELECT term, coalesce(nullif(greatest(
          ln(((SELECT n FROM s) - count(*) + 0.5) / (count(*) + 0.5)), 0), 0), 1e-6) AS idf
      FROM p GROUP BY term)
SELECT d.chunk_id,
       sum(w.idf * p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * d.len / (SELECT avgdl FROM s)))) AS score
FROM p JOIN w ON w.term = p.term JOIN bench_fts_docs d ON d.row = p.row
GROUP BY d.row, d.chunk_id ORDER BY score DESC, d.row LIMIT %(n)s
"""
_TS_RANK = """
SELECT chunk_id, ts_rank(tsv, q, 1) AS score FROM bench_fts_docs, CAST(%(query)s AS tsquery) AS q
WHERE tsv @@ q ORDER BY score DESC, row LIMIT %(n)s
"""


def question_tokens(query: str) -> list[str]:
    """The tokens the store searches for ``query`` (as MemoryLexicon picks them)."""
    asked = list(dict.fromkeys(lexical_terms(query)))[:MAX_QUERY_TERMS]
    return [made[0] for made in map(_tokens, asked) if len(made) == 1]


def _tsvector(tokens: Sequence[str]) -> str:
    """A tsvector literal of ``tokens`` with their positions (at most PostgreSQL's 16,383)."""
    positions: dict[str, list[int]] = {}
    for at, token in enumerate(tokens[:16383], start=1):
        positions.setdefault(token, []).append(at)
    return " ".join(f"'{_quoted(token)}':{','.join(map(str, at[:256]))}" for token, at in positions.items())


def _quoted(token: str) -> str:
    return token.replace("\\", "\\\\").replace("'", "''")


def _rows_of(
    rows: Sequence[tuple[int, str, str]],
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], int]:
    """Docs rows and postings rows for ``(row, chunk id, words)``; and the words they hold."""
    docs: list[tuple[Any, ...]] = []
    postings: list[tuple[Any, ...]] = []
    words = 0
    for row, chunk_id, terms in rows:
        tokens = _tokens(terms)
        words += len(tokens)
        docs.append((row, chunk_id, len(tokens), _tsvector(tokens)))
        postings.extend((term, row, tf) for term, tf in Counter(tokens).items())
    return docs, postings, words


def build(store: PostgresChunkStore) -> dict[str, Any]:
    """The SQL tables from the store's ``lexical`` table; how long that took."""
    start = time.perf_counter()
    with store._db.connection("bench") as conn:
        rows = conn.execute("SELECT row, chunk_id, terms FROM lexical ORDER BY row").fetchall()
        docs, postings, words = _rows_of(rows)
        with conn.transaction():
            for statement in _TABLES:
                conn.execute(statement)
            _copy(conn, "bench_fts_docs (row, chunk_id, len, tsv)", docs)
            _copy(conn, "bench_fts_postings (term, row, tf)", postings)
            conn.execute("INSERT INTO bench_fts_stats VALUES (0, %s, %s)", (len(docs), words))
        for statement in _INDEXES:
            conn.execute(statement)
    return {
        "chunks": len(docs),
        "postings": len(postings),
        "build_seconds": round(time.perf_counter() - start, 2),
    }


def _copy(conn: Any, table: str, rows: Sequence[tuple[Any, ...]]) -> None:  # noqa: ANN401 - psycopg
    with conn.cursor().copy(f"COPY {table} FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


# -- the searches ------------------------------------------------------------------------


Search = Callable[[str], list[tuple[str, float]]]


def searches(store: PostgresChunkStore) -> dict[str, Search]:
    """The three searches, each ``question -> [(chunk id, score)]`` best first."""

    def memory(query: str) -> list[tuple[str, float]]:
        return [(hit.chunk_id, hit.score) for hit in store.lexical_search(query, N)]

    def sql_bm25(query: str) -> list[tuple[str, float]]:
        terms = question_tokens(query)
        if not terms:
            return []
        with store._db.connection("bench") as conn:
            return [(c, float(s)) for c, s in conn.execute(_BM25, {"terms": terms, "n": N}).fetchall()]

    def ts_rank(query: str) -> list[tuple[str, float]]:
        terms = question_tokens(query)
        if not terms:
            return []
        tsquery = " | ".join(f"'{_quoted(term)}'" for term in dict.fromkeys(terms))
        with store._db.connection("bench") as conn:
            return [(c, float(s)) for c, s in conn.execute(_TS_RANK, {"query": tsquery, "n": N}).fetchall()]

    return {"memory": memory, "sql-bm25": sql_bm25, "ts_rank": ts_rank}


def agreement(named: dict[str, Search], queries: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per search: the share of questions with the memory's ten hits in its order, and of its hits found."""
    same: dict[str, list[bool]] = {name: [] for name in named}
    found: dict[str, list[float]] = {name: [] for name in named}
    scores_match: dict[str, list[bool]] = {name: [] for name in named}
    for query in dict.fromkeys(queries):
        reference = named["memory"](query)
        ids = [c for c, _ in reference]
        for name, search in named.items():
            hits = search(query)
            same[name].append([c for c, _ in hits] == ids)
            found[name].append(len({c for c, _ in hits} & set(ids)) / len(ids) if ids else 1.0)
            scores_match[name].append(
                len(hits) == len(reference)
                and all(
                    abs(a - b) <= 1e-9 * max(1.0, abs(b))
                    for (_, a), (_, b) in zip(hits, reference, strict=True)
                )
            )
    return {
        name: {
            "same_hits_in_order": round(statistics.fmean(same[name]), 3),
            "memory_hits_found": round(statistics.fmean(found[name]), 3),
            "same_scores": round(statistics.fmean(scores_match[name]), 3),
        }
        for name in named
    }


def latencies(named: dict[str, Search], queries: Sequence[str]) -> dict[str, dict[str, float]]:
    """p50/p95 ms per search, the searches interleaved (their order rotating per question)."""
    names = list(named)
    for query in queries[:5]:
        for name in names:
            named[name](query)
    times: dict[str, list[float]] = {name: [] for name in names}
    for i, query in enumerate(queries):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            start = time.perf_counter()
            named[name](query)
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: _summary(times[name]) for name in names}


def _summary(ms: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": round(float(np.percentile(ms, 50)), 2),
        "p95_ms": round(float(np.percentile(ms, 95)), 2),
        "max_ms": round(max(ms), 1),
        "n": len(ms),
    }


# -- writes ------------------------------------------------------------------------------


class Writes:
    """Sources replaced in turn, each toggled between its chunks and the same chunks edited.

    :meth:`write` replaces one through the store (its transaction: chunks, words, the
    generation) and then updates the SQL tables for it (a transaction of their own).
    """

    def __init__(self, store: PostgresChunkStore, count: int = 20) -> None:
        self.store = store
        small = [s for s in store.sources() if 2 <= len(store.ids_for_source(s)) <= 12]
        self.sources = small[:: max(1, len(small) // count)][:count]
        self.versions = {}
        for source in self.sources:
            chunks = [c for c in store.get(store.ids_for_source(source)) if c is not None]
            edited = [StoredChunk(c.chunk_id, f"{c.text}\nEdited: press OK.", c.metadata) for c in chunks]
            self.versions[source] = (chunks, edited)
        self.turn = 0
        self.store_seconds: list[float] = []
        self.tables_seconds: list[float] = []

    def write(self) -> None:
        source = self.sources[self.turn % len(self.sources)]
        chunks = self.versions[source][(self.turn // len(self.sources) + 1) % 2]
        self.turn += 1
        start = time.perf_counter()
        self.store.replace_source(source, chunks)
        middle = time.perf_counter()
        self._tables(chunks)
        self.store_seconds.append(middle - start)
        self.tables_seconds.append(time.perf_counter() - middle)

    def _tables(self, chunks: Sequence[StoredChunk]) -> None:
        ids = [c.chunk_id for c in chunks]  # the lexical table holds the children among them
        with self.store._db.connection("bench") as conn, conn.transaction():
            old = conn.execute(
                "DELETE FROM bench_fts_docs WHERE chunk_id = ANY(%s) RETURNING row, len", (ids,)
            ).fetchall()
            conn.execute("DELETE FROM bench_fts_postings WHERE row = ANY(%s)", ([r for r, _ in old],))
            rows = conn.execute(
                "SELECT row, chunk_id, terms FROM lexical WHERE chunk_id = ANY(%s)", (ids,)
            ).fetchall()
            docs, postings, words = _rows_of(rows)
            conn.cursor().executemany("INSERT INTO bench_fts_docs VALUES (%s, %s, %s, %s)", docs)
            conn.cursor().executemany("INSERT INTO bench_fts_postings VALUES (%s, %s, %s)", postings)
            conn.execute(
                "UPDATE bench_fts_stats SET n = n + %s, words = words + %s",
                (len(docs) - len(old), words - sum(length for _, length in old)),
            )

    def costs(self) -> dict[str, float]:
        return {
            "writes": len(self.store_seconds),
            "store_ms_p50": round(1000 * statistics.median(self.store_seconds), 1),
            "extra_sql_tables_ms_p50": round(1000 * statistics.median(self.tables_seconds), 1),
        }


def refresh_seconds(store: PostgresChunkStore, repeats: int = 3) -> float:
    """How long the memory takes to read the words again (what any write costs every reader)."""
    times = []
    for _ in range(repeats):
        lexicon = MemoryLexicon()
        start = time.perf_counter()
        lexicon._read(_PostgresWords(store))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def under_writes(
    named: dict[str, Search], queries: Sequence[str], writes: Writes, *, seconds: float, write_every: float
) -> dict[str, Any]:
    """The searches (interleaved) while a thread replaces a source every ``write_every`` seconds."""
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            while not stop.wait(write_every):
                writes.write()
        except BaseException as exc:  # reported by the caller
            errors.append(exc)

    thread = threading.Thread(target=writer)
    names = list(named)
    times: dict[str, list[float]] = {name: [] for name in names}
    before = len(writes.store_seconds)
    thread.start()
    deadline = time.monotonic() + seconds
    i = 0
    try:
        while time.monotonic() < deadline:
            query = queries[i % len(queries)]
            for name in names[i % len(names) :] + names[: i % len(names)]:
                start = time.perf_counter()
                named[name](query)
                times[name].append((time.perf_counter() - start) * 1000)
            i += 1
    finally:
        stop.set()
        thread.join()
    if errors:
        raise errors[0]
    return {
        "seconds": seconds,
        "write_every_s": write_every,
        "writes": len(writes.store_seconds) - before,
        "searches": {name: _summary(times[name]) for name in names},
    }


def compare(
    url: str, queries: Sequence[str], *, seconds: float = 20.0, write_every: float = 1.0
) -> dict[str, Any]:
    """Everything the module docstring lists, on the docstore at ``url``."""
    with PostgresChunkStore(url) as store:
        built = build(store)
        named = searches(store)
        result: dict[str, Any] = {"tables": built, "n": N, "questions": len(set(queries))}
        result["agreement"] = agreement(named, queries)
        result["latency"] = latencies(named, queries)
        result["memory_refresh_seconds"] = round(refresh_seconds(store), 3)
        writes = Writes(store)
        for _ in range(2 * len(writes.sources)):
            writes.write()
        result["write_costs"] = writes.costs()
        result["under_writes"] = under_writes(
            named, queries, writes, seconds=seconds, write_every=write_every
        )
    return result

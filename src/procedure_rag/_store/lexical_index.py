"""Lexical search: BM25 over the raw chunks' words, in the docstore's SQLite file (FTS5).

Dense embeddings of a small offline model miss exact terms that decide a question
in a manual: build numbers (19041.1361), product and feature names (WCD, ARC, Remote
Assist), UI labels. A lexical index finds them. :mod:`procedure_rag._retrieval.retrieve`
adds its normalised BM25 score to the dense fused score (see
:attr:`RetrievalOptions.lexical_weight <procedure_rag._retrieval.retrieve.RetrievalOptions>`)
and lets lexically found chunks join the exact re-scoring, so a chunk the vector
search ranked too low still gets its dense score.

Words are made by :func:`~procedure_rag._language.words.lexical_terms`, not by SQLite:
the text is NFKC-normalised (full-width letters and digits become ASCII); Latin words,
numbers and codes are lower-cased, English stopwords dropped and plain words cut to
their Snowball stems; Japanese content words come from SudachiPy in split mode C, in
their normalised form (the same analyser as the keyword representation), or, without
SudachiPy installed, as character bigrams. Which of the two made an index's words is
recorded in the docstore's ``info`` table under ``lexical_analyser`` when the index is
created, and every later write and question uses that one, whatever is installed then
(an index made before the key existed was made with SudachiPy). The index
stores the words as space-separated text, and a query is its own words, each quoted,
joined by ``OR``: nothing from the question is ever read as FTS5 query syntax.

Tables (created beside ``chunks`` in the docstore, kept in step by triggers): the
FTS5 table ``lexical`` (one row per child chunk), ``lexical_ids`` (its rowid to the
chunk id, stable across VACUUM) and ``lexical_pending`` (chunks written or changed
whose words are not indexed yet; the writer indexes them in the same transaction
with :func:`index_pending`). Parent chunks are not indexed: they are never results.
``lexical_generation`` counts every row added to or removed from ``lexical_ids``, so
an in-memory copy of the index knows when it is out of date: the chunk store answers
from one (:mod:`procedure_rag._store.lexical_memory`, the same hits as :func:`search_lexical`,
10x faster on a large index); :func:`search_lexical` is FTS5's own BM25 query.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from procedure_rag._language.words import SUDACHI, default_analyser, lexical_terms

__all__ = [
    "LEXICAL_ANALYSER_KEY",
    "LEXICAL_TABLES",
    "MAX_QUERY_TERMS",
    "LexicalHit",
    "create_lexical_tables",
    "generation",
    "index_pending",
    "is_parent_metadata",
    "lexical_analyser",
    "lexical_terms",
    "match_expression",
    "search_lexical",
]

_LOG = logging.getLogger(__name__)

#: The docstore info key recording the analyser of the index's words (see words.SUDACHI).
LEXICAL_ANALYSER_KEY = "lexical_analyser"

#: Most distinct words of a question that are searched (the rest are ignored).
MAX_QUERY_TERMS = 64

LEXICAL_TABLES = (
    # Letters, digits and "._+-" inside a word are word characters, so the codes made
    # below (19041.1361, usb-c) stay single tokens; everything else separates.
    "CREATE VIRTUAL TABLE IF NOT EXISTS lexical USING fts5("
    "terms, tokenize = \"unicode61 remove_diacritics 0 tokenchars '._+-'\")",
    "CREATE TABLE IF NOT EXISTS lexical_ids (row INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE)",
    "CREATE TABLE IF NOT EXISTS lexical_pending (chunk_id TEXT PRIMARY KEY)",
    """
    CREATE TRIGGER IF NOT EXISTS lexical_on_insert AFTER INSERT ON chunks BEGIN
        INSERT OR IGNORE INTO lexical_pending VALUES (new.chunk_id);
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS lexical_on_update AFTER UPDATE OF text, metadata ON chunks BEGIN
        DELETE FROM lexical WHERE rowid = (SELECT row FROM lexical_ids WHERE chunk_id = old.chunk_id);
        DELETE FROM lexical_ids WHERE chunk_id = old.chunk_id;
        INSERT OR IGNORE INTO lexical_pending VALUES (new.chunk_id);
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS lexical_on_delete AFTER DELETE ON chunks BEGIN
        DELETE FROM lexical WHERE rowid = (SELECT row FROM lexical_ids WHERE chunk_id = old.chunk_id);
        DELETE FROM lexical_ids WHERE chunk_id = old.chunk_id;
        DELETE FROM lexical_pending WHERE chunk_id = old.chunk_id;
    END
    """,
    # Raised with every row added to or removed from the index (each one adds or
    # removes its id in lexical_ids), in the writer's transaction: an in-memory copy of
    # the index (procedure_rag._store.lexical_memory) knows when it is out of date.
    "CREATE TABLE IF NOT EXISTS lexical_generation"
    " (id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO lexical_generation VALUES (0, 0)",
    """
    CREATE TRIGGER IF NOT EXISTS lexical_generation_on_insert AFTER INSERT ON lexical_ids BEGIN
        UPDATE lexical_generation SET n = n + 1;
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS lexical_generation_on_delete AFTER DELETE ON lexical_ids BEGIN
        UPDATE lexical_generation SET n = n + 1;
    END
    """,
)


@dataclass(frozen=True, slots=True)
class LexicalHit:
    """One chunk found by its words.

    Attributes:
        chunk_id: The raw chunk.
        score: Its BM25 score (higher is better; not normalised).
        terms: The question's words the chunk holds, in question order.
    """

    chunk_id: str
    score: float
    terms: tuple[str, ...]


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of ``terms``: each one a quoted string, so never syntax."""
    quoted = ['"' + term.replace('"', '""') + '"' for term in dict.fromkeys(terms)]
    return " OR ".join(quoted[:MAX_QUERY_TERMS])


def create_lexical_tables(conn: sqlite3.Connection) -> bool:
    """Create the lexical tables and triggers; index every chunk when they are new.

    Returns:
        ``False`` when this SQLite has no FTS5 (nothing is created; lexical search is
        then off and a warning says so), ``True`` otherwise.
    """
    fresh = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'lexical'").fetchone() is None
    try:
        for statement in LEXICAL_TABLES:
            conn.execute(statement)
    except sqlite3.OperationalError as exc:
        if "fts5" not in str(exc).lower():
            raise
        _LOG.warning("this SQLite has no FTS5 (%s): lexical search is off", exc)
        return False
    if conn.execute("SELECT 1 FROM info WHERE key = ?", (LEXICAL_ANALYSER_KEY,)).fetchone() is None:
        # A new index gets what is installed; one made before the key existed used SudachiPy.
        analyser = default_analyser() if fresh else SUDACHI
        conn.execute("INSERT INTO info VALUES (?, ?)", (LEXICAL_ANALYSER_KEY, json.dumps(analyser)))
    if fresh:
        # A store written before the lexical index existed: index what it holds.
        conn.execute("INSERT OR IGNORE INTO lexical_pending SELECT chunk_id FROM chunks")
        index_pending(conn)
    return True


def lexical_analyser(conn: sqlite3.Connection) -> str:
    """The analyser recorded for the index's words (``words.SUDACHI`` or ``words.BIGRAMS``)."""
    row = conn.execute("SELECT value FROM info WHERE key = ?", (LEXICAL_ANALYSER_KEY,)).fetchone()
    return str(json.loads(row[0])) if row is not None else SUDACHI


def index_pending(conn: sqlite3.Connection, analyser: str | None = None) -> int:
    """Index the words of every pending chunk, inside the caller's transaction.

    ``analyser`` is the index's own (:func:`lexical_analyser`, read when ``None``).

    Returns:
        How many chunks were indexed (parents are skipped, not counted).
    """
    rows = conn.execute(
        "SELECT p.chunk_id, c.text, c.metadata FROM lexical_pending p JOIN chunks c USING (chunk_id)"
    ).fetchall()
    indexed = 0
    if rows and analyser is None:
        analyser = lexical_analyser(conn)
    for chunk_id, text, metadata in rows:
        if is_parent_metadata(metadata):
            continue
        conn.execute(
            "DELETE FROM lexical WHERE rowid = (SELECT row FROM lexical_ids WHERE chunk_id = ?)", (chunk_id,)
        )
        conn.execute("DELETE FROM lexical_ids WHERE chunk_id = ?", (chunk_id,))
        row = conn.execute("INSERT INTO lexical_ids (chunk_id) VALUES (?)", (chunk_id,)).lastrowid
        terms = " ".join(lexical_terms(text, analyser))
        conn.execute("INSERT INTO lexical (rowid, terms) VALUES (?, ?)", (row, terms))
        indexed += 1
    conn.execute("DELETE FROM lexical_pending")
    return indexed


def search_lexical(
    conn: sqlite3.Connection, query: str, n: int, analyser: str | None = None
) -> list[LexicalHit]:
    """The best ``n`` chunks for ``query`` by BM25 (FTS5's ``bm25()``: k1 1.2, b 0.75).

    ``query`` is cut into words by the index's analyser (:func:`lexical_analyser`, read
    when ``None``).
    """
    terms = lexical_terms(query, analyser if analyser is not None else lexical_analyser(conn))
    if not terms or n < 1:
        return []
    rows = conn.execute(
        "SELECT i.chunk_id, -bm25(lexical), lexical.terms FROM lexical"
        " JOIN lexical_ids i ON i.row = lexical.rowid"
        " WHERE lexical MATCH ? ORDER BY bm25(lexical) LIMIT ?",
        (match_expression(terms), n),
    ).fetchall()
    asked = list(dict.fromkeys(terms))
    hits = []
    for chunk_id, score, held in rows:
        words = set(held.split())
        hits.append(LexicalHit(chunk_id, float(score), tuple(t for t in asked if t in words)))
    return hits


def generation(conn: sqlite3.Connection) -> int:
    """How many times a row was added to or removed from the lexical index, ever."""
    row = conn.execute("SELECT n FROM lexical_generation").fetchone()
    return int(row[0]) if row else 0


def _forget(conn: sqlite3.Connection, chunk_id: str) -> None:
    conn.execute(
        "DELETE FROM lexical WHERE rowid = (SELECT row FROM lexical_ids WHERE chunk_id = ?)", (chunk_id,)
    )
    conn.execute("DELETE FROM lexical_ids WHERE chunk_id = ?", (chunk_id,))


def is_parent_metadata(metadata: str) -> bool:
    """Whether a chunk's metadata JSON marks it a parent (parents are not indexed: never results)."""
    try:
        decoded = json.loads(metadata)
    except json.JSONDecodeError:
        return False
    return isinstance(decoded, dict) and decoded.get("chunk_level") == "parent"

"""The lexical index in memory: BM25 over numpy postings, the FTS5 table its durable source.

FTS5's ``bm25()`` scores every row that holds any of the question's words (an ``OR`` of
them all), about half of a large index for an everyday question: 15 ms at 28k chunks,
growing with the index. :class:`MemoryLexicon` reads the words of the ``lexical``
table once into postings (per word: the rows holding it, sorted, and each row's BM25
term weight), so a question costs one ``bincount`` over the postings of its words and a
partial sort: well under a millisecond at that size.

It gives what :func:`procedure_rag._lexical.search_lexical` gives (the same formula as
FTS5's: k1 1.2, b 0.75, an IDF at or below zero counted as 1e-6; ties in row order),
with one difference: words are the index's space-separated words, where FTS5 splits
a rare Japanese word holding a separator such as ``・`` into a phrase of two tokens.

Kept valid across connections and processes by ``lexical_generation``: a counter that
triggers on ``lexical_ids`` (every row added to or removed from the FTS5 table adds or
removes its id there) raise in the writer's own transaction. Each search reads the
counter and, when it moved, reads the table again in one snapshot.
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from procedure_rag._lexical import MAX_QUERY_TERMS, LexicalHit, generation, lexical_terms, search_lexical

__all__ = ["REREAD_GAP", "MemoryLexicon"]

#: BM25 parameters, FTS5's defaults.
K1 = 1.2
B = 0.75
#: FTS5's IDF for a word in more than half the rows (its formula gives <= 0 there).
MIN_IDF = 1e-6
#: The table is read again when it changed and was last read at least this many times
#: as long ago as reading took; until then FTS5 answers (the same hits, slower).
REREAD_GAP = 10.0
#: Characters FTS5's tokenizer (unicode61, tokenchars "._+-") may read as separators;
#: a text without them splits on whitespace alone. The exact test is :func:`_is_token_char`.
_MAYBE_SEPARATOR = re.compile(r"[^\w\s.+-]")


@dataclass(frozen=True, slots=True)
class _Postings:
    rows: npt.NDArray[np.int64]  # indexes into MemoryLexicon.chunk_ids, ascending
    weights: npt.NDArray[np.float64]  # tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


class MemoryLexicon:
    """The lexical table's words as postings, as of one ``lexical_generation``.

    Not thread-safe on its own: the :class:`~procedure_rag._docstore.ChunkStore` that
    holds one uses it under its lock.
    """

    def __init__(self) -> None:
        self.generation = -1  # nothing read yet
        self.chunk_ids: list[str] = []
        self._postings: dict[str, _Postings] = {}
        self._read_at = 0.0  # time.monotonic() when the table was last read
        self._read_seconds = 0.0  # how long that took

    def search(self, conn: sqlite3.Connection, query: str, n: int) -> list[LexicalHit]:
        """The best ``n`` chunks for ``query`` by BM25, as :func:`search_lexical` finds them.

        Reads the table again when it changed, unless it was last read less than
        ``REREAD_GAP`` times as long ago as reading took: FTS5 answers then, so a store
        written to all the time spends at most about a tenth of its time reading.
        """
        terms = lexical_terms(query)
        if not terms or n < 1:
            return []
        asked = list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]
        tokens = [_tokens(term) for term in asked]
        if any(len(made) != 1 for made in tokens):
            # FTS5 reads such a word as a phrase of its tokens, in a row: let it answer.
            return search_lexical(conn, query, n)
        if generation(conn) != self.generation:
            if time.monotonic() - self._read_at < REREAD_GAP * self._read_seconds:
                return search_lexical(conn, query, n)
            self._read(conn)
        found = [
            (term, self._postings[made[0]])
            for term, made in zip(asked, tokens, strict=True)
            if made[0] in self._postings
        ]
        return self._best(found, n)

    def _best(self, found: list[tuple[str, _Postings]], n: int) -> list[LexicalHit]:
        total = len(self.chunk_ids)
        scores = np.zeros(total)
        for _, postings in found:
            hits = len(postings.rows)
            idf = max(math.log((total - hits + 0.5) / (hits + 0.5)), 0.0) or MIN_IDF
            scores[postings.rows] += idf * postings.weights  # rows are distinct within a word
        held = np.flatnonzero(scores)
        if len(held) > n:  # the n best; of those tied with the n-th, the first rows (as FTS5)
            nth = -np.partition(-scores[held], n - 1)[n - 1]
            above = held[scores[held] > nth]
            held = np.concatenate([above, held[scores[held] == nth][: n - len(above)]])
        best = sorted(held.tolist(), key=lambda row: (-scores[row], row))
        return [LexicalHit(self.chunk_ids[row], float(scores[row]), _holding(row, found)) for row in best]

    def _read(self, conn: sqlite3.Connection) -> None:
        """Read the table's words into postings, and the generation they are of."""
        start = time.monotonic()
        conn.execute("BEGIN")  # one snapshot for the counter and the words
        try:
            now = generation(conn)
            rows = conn.execute(
                "SELECT i.chunk_id, l.terms FROM lexical l JOIN lexical_ids i ON i.row = l.rowid"
                " ORDER BY l.rowid"
            ).fetchall()
        finally:
            conn.execute("COMMIT")
        self.chunk_ids = [chunk_id for chunk_id, _ in rows]
        self._postings = _postings([_tokens(words) for _, words in rows])
        self.generation = now
        self._read_at = time.monotonic()
        self._read_seconds = self._read_at - start


def _postings(docs: list[list[str]]) -> dict[str, _Postings]:
    """Per word, the documents holding it and its BM25 weight in each (FTS5's formula)."""
    avgdl = sum(map(len, docs)) / len(docs) if docs else 0.0
    by_term: dict[str, tuple[list[int], list[float]]] = {}
    for row, words in enumerate(docs):
        norm = K1 * (1 - B + B * len(words) / avgdl) if avgdl else K1
        for term, tf in Counter(words).items():
            entry = by_term.get(term)
            if entry is None:
                entry = by_term[term] = ([], [])
            entry[0].append(row)
            entry[1].append(tf * (K1 + 1) / (tf + norm))
    return {
        term: _Postings(np.asarray(rows, dtype=np.int64), np.asarray(weights, dtype=np.float64))
        for term, (rows, weights) in by_term.items()
    }


def _tokens(text: str) -> list[str]:
    """``text``'s tokens as FTS5's unicode61 tokenizer makes them: case-folded, split at separators."""
    text = text.lower()
    if not _MAYBE_SEPARATOR.search(text):
        return text.split()
    return "".join(ch if _is_token_char(ch) else " " for ch in text).split()


def _is_token_char(ch: str) -> bool:
    """unicode61's default: letters, numbers and private-use characters, and the tokenchars."""
    category = unicodedata.category(ch)
    return category[0] in "LN" or category == "Co" or ch in "._+-"


def _holding(row: int, found: list[tuple[str, _Postings]]) -> tuple[str, ...]:
    """The asked words (in question order) whose postings hold ``row``."""
    out = []
    for term, postings in found:
        at = int(np.searchsorted(postings.rows, row))
        if at < len(postings.rows) and postings.rows[at] == row:
            out.append(term)
    return tuple(out)

"""The lexical index in memory: BM25 over numpy postings, the FTS5 table its durable source.

FTS5's ``bm25()`` scores every row that holds any of the question's words (an ``OR`` of
them all), often half of the index for an everyday question: 5-9 ms at 16k chunks on the
project machine, growing with the index. :class:`MemoryLexicon` reads the words of the
``lexical`` table once into postings (per word: the rows holding it, ascending, and its
BM25 term weight in each), so a question costs a few vector additions over the postings
of its words and a partial sort: about 0.5 ms at 16k chunks. Reading costs about 0.3-0.5 s
and 10 MB per 16k chunks (their 760k words), paid by the first search of a store.

It finds what :func:`procedure_rag._store.lexical_index.search_lexical` finds, with the same scores:
FTS5's formula (k1 1.2, b 0.75, an IDF at or below zero counted as 1e-6, document length
and average in FTS5 tokens), words case-folded and split as FTS5's tokenizer does, and
of chunks tied with the n-th, the first rows (as FTS5 keeps). Two differences: a question
word FTS5 would split into a phrase (a Japanese word holding ``・``, say; none in the
shared corpus) is left to FTS5; and a hit's ``terms`` lists every asked word that
matched, where FTS5's lists only those spelled as stored (it missed ``Microsoft``, the
normal form of マイクロソフト, in a chunk holding ``microsoft``).

Kept valid across connections and processes by ``lexical_generation``: a counter that
triggers on ``lexical_ids`` raise in the writer's own transaction (every row added to or
removed from the FTS5 table adds or removes its id there). Each search reads the counter
(5 µs) and, when it moved, reads the table again in one snapshot; when it moves again
sooner than ``REREAD_GAP`` times the last read's duration, FTS5 answers meanwhile.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sqlite3
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

from procedure_rag._store.lexical_index import (
    MAX_QUERY_TERMS,
    LexicalHit,
    generation,
    lexical_analyser,
    lexical_terms,
    search_lexical,
)

#: numpy holds the postings; a core install without it leaves every search to the store (FTS5).
_HAS_NUMPY = importlib.util.find_spec("numpy") is not None

__all__ = ["REREAD_GAP", "LexicalSource", "MemoryLexicon", "SQLiteLexicalSource"]

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


class LexicalSource(Protocol):
    """Where :class:`MemoryLexicon` reads the index from: a store's lexical tables."""

    def generation(self) -> int:
        """The index's generation counter now."""
        ...  # pragma: no cover - a protocol

    def analyser(self) -> str:
        """The analyser the index's words were made with (``words.SUDACHI`` or ``words.BIGRAMS``)."""
        ...  # pragma: no cover - a protocol

    def read(self) -> tuple[int, Sequence[tuple[str, str]]]:
        """In one snapshot: the generation, and every indexed ``(chunk id, words)`` in row order."""
        ...  # pragma: no cover - a protocol

    def search(self, query: str, n: int) -> list[LexicalHit] | None:
        """The store's own BM25 search (the same hits), or ``None`` when it has none."""
        ...  # pragma: no cover - a protocol


@dataclass(frozen=True, slots=True)
class SQLiteLexicalSource:
    """The lexical tables of a SQLite docstore, on its connection (used under the store's lock)."""

    conn: sqlite3.Connection
    recorded: str | None = None  # the index's analyser when the caller knows it

    def generation(self) -> int:
        return generation(self.conn)

    def analyser(self) -> str:
        return self.recorded if self.recorded is not None else lexical_analyser(self.conn)

    def read(self) -> tuple[int, list[tuple[str, str]]]:
        self.conn.execute("BEGIN")  # one snapshot for the counter and the words
        try:
            now = generation(self.conn)
            rows = self.conn.execute(
                "SELECT i.chunk_id, l.terms FROM lexical l JOIN lexical_ids i ON i.row = l.rowid"
                " ORDER BY l.rowid"
            ).fetchall()
        finally:
            self.conn.execute("COMMIT")
        return now, rows

    def search(self, query: str, n: int) -> list[LexicalHit]:
        return search_lexical(self.conn, query, n, self.analyser())


@dataclass(frozen=True, slots=True)
class _Postings:
    rows: npt.NDArray[np.int64]  # indexes into MemoryLexicon.chunk_ids, ascending
    weights: npt.NDArray[np.float64]  # tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


class MemoryLexicon:
    """The lexical table's words as postings, as of one ``lexical_generation``.

    Not thread-safe on its own: the :class:`~procedure_rag._store.chunk_store.ChunkStore` that
    holds one uses it under its lock.
    """

    def __init__(self) -> None:
        self.generation = -1  # nothing read yet
        self.chunk_ids: list[str] = []
        self._postings: dict[str, _Postings] = {}
        self._read_at = 0.0  # time.monotonic() when the table was last read
        self._read_seconds = 0.0  # how long that took

    def search(self, source: LexicalSource, query: str, n: int) -> list[LexicalHit]:
        """The best ``n`` chunks for ``query`` by BM25, as :func:`search_lexical` finds them.

        Reads the table again when it changed, unless it was last read less than
        ``REREAD_GAP`` times as long ago as reading took: the store's own search (FTS5)
        answers then, so a store written to all the time spends at most about a tenth of
        its time reading. A source without its own search is read again at once.
        """
        terms = lexical_terms(query, source.analyser())
        if not terms or n < 1:
            return []
        asked = list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]
        tokens = [_tokens(term) for term in asked]
        if not _HAS_NUMPY:  # a core install: the store's own search answers, the same hits, slower
            return source.search(query, n) or []
        if any(len(made) != 1 for made in tokens):
            # FTS5 reads such a word as a phrase of its tokens, in a row: let it answer.
            own = source.search(query, n)
            if own is not None:
                return own
            # Without FTS5 (PostgreSQL) such a word is not searched: its tokens are no phrase here.
            tokens = [made if len(made) == 1 else [] for made in tokens]
        if source.generation() != self.generation:
            if time.monotonic() - self._read_at < REREAD_GAP * self._read_seconds:
                own = source.search(query, n)
                if own is not None:
                    return own
            self._read(source)
        found = [
            (term, self._postings[made[0]])
            for term, made in zip(asked, tokens, strict=True)
            if made and made[0] in self._postings
        ]
        return self._best(found, n)

    def _best(self, found: list[tuple[str, _Postings]], n: int) -> list[LexicalHit]:
        import numpy as np  # noqa: PLC0415 - optional in a core install (see _HAS_NUMPY)

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
        best = np.asarray(sorted(held.tolist(), key=lambda row: (-scores[row], row)), dtype=np.int64)
        return [
            LexicalHit(self.chunk_ids[row], float(scores[row]), words)
            for row, words in zip(best.tolist(), _holding(best, found), strict=True)
        ]

    def _read(self, source: LexicalSource) -> None:
        """Read the table's words into postings, and the generation they are of."""
        start = time.monotonic()
        now, rows = source.read()
        self.chunk_ids = [chunk_id for chunk_id, _ in rows]
        self._postings = _postings([_tokens(words) for _, words in rows])
        self.generation = now
        self._read_at = time.monotonic()
        self._read_seconds = self._read_at - start


def _postings(docs: list[list[str]]) -> dict[str, _Postings]:
    """Per word, the documents holding it and its BM25 weight in each (FTS5's formula)."""
    import numpy as np  # noqa: PLC0415 - optional in a core install (see _HAS_NUMPY)

    vocabulary: dict[str, int] = {}
    ids = [vocabulary.setdefault(word, len(vocabulary)) for words in docs for word in words]
    if not ids:
        return {}
    count = len(docs)
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=count)
    # (word, document) pairs, sorted by word then document, with how often each occurs.
    pairs, tf = np.unique(
        np.asarray(ids, dtype=np.int64) * count + np.repeat(np.arange(count), lengths), return_counts=True
    )
    word, rows = np.divmod(pairs, count)
    avgdl = float(lengths.sum()) / count
    weights = tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths[rows] / avgdl))
    bounds = np.searchsorted(word, np.arange(len(vocabulary) + 1)).tolist()
    return {
        term: _Postings(rows[bounds[i] : bounds[i + 1]], weights[bounds[i] : bounds[i + 1]])
        for term, i in vocabulary.items()
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


def _holding(rows: npt.NDArray[np.int64], found: list[tuple[str, _Postings]]) -> list[tuple[str, ...]]:
    """For each of ``rows``, the asked words (in question order) whose postings hold it."""
    import numpy as np  # noqa: PLC0415 - optional in a core install (see _HAS_NUMPY)

    held: list[list[str]] = [[] for _ in range(len(rows))]
    for term, postings in found:
        at = np.minimum(np.searchsorted(postings.rows, rows), len(postings.rows) - 1)
        for i in np.flatnonzero(postings.rows[at] == rows).tolist():
            held[i].append(term)
    return [tuple(words) for words in held]

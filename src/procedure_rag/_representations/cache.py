"""A persistent cache of model-generated representation texts, on SQLite.

Keys are content hashes (:meth:`RepresentationCache.make_key`): the kind, the
prompt version, the model's identity and a hash of everything the prompt sent. A
changed chunk, prompt or model therefore misses; an unchanged one hits, and a re-run
makes no model calls. Values are JSON (never pickle), so a cache file read from
elsewhere cannot run code.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Sequence

from procedure_rag._store.sqlite import MEMORY, SQLiteStore

__all__ = ["RepresentationCache"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS representations (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    model TEXT NOT NULL,
    texts TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class RepresentationCache(SQLiteStore):
    """Representation texts by content key, in a SQLite file or in memory.

    Thread-safe: one connection, used under a lock. A file cache runs in WAL mode, so
    several processes may read and write one file. Use it as a context manager, or
    call :meth:`close`.

    Args:
        path: The SQLite file (created with its parent folders when missing), or
            ``":memory:"`` for a cache that lives as long as the object.

    Raises:
        sqlite3.DatabaseError: When ``path`` is not a SQLite database.
    """

    def __init__(self, path: str | os.PathLike[str] = MEMORY) -> None:
        super().__init__(path, "representation cache", _create_schema)
        self._hits = 0
        self._misses = 0

    @staticmethod
    def make_key(*, kind: str, prompt_version: str, model_identity: str, content_digest: str) -> str:
        """The cache key: a sha256 over the kind, prompt version, model and prompt content hash."""
        parts = json.dumps([kind, prompt_version, model_identity, content_digest])
        return hashlib.sha256(parts.encode("utf-8")).hexdigest()

    @property
    def hits(self) -> int:
        """How many :meth:`get` calls found an entry since the cache was opened."""
        return self._hits

    @property
    def misses(self) -> int:
        """How many :meth:`get` calls found nothing since the cache was opened."""
        return self._misses

    def get(self, key: str) -> tuple[str, ...] | None:
        """The texts stored under ``key``, or ``None`` (an unreadable entry counts as missing).

        Raises:
            ValueError: When the cache is closed.
        """
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT texts FROM representations WHERE key = ?", (key,))
                .fetchone()
            )
            texts = _decode(row[0]) if row is not None else None
            if texts is None:
                self._misses += 1
            else:
                self._hits += 1
            return texts

    def put(
        self,
        key: str,
        texts: Sequence[str],
        *,
        kind: str = "",
        prompt_version: str = "",
        model_identity: str = "",
    ) -> None:
        """Store ``texts`` under ``key``, replacing what was there.

        ``kind``, ``prompt_version`` and ``model_identity`` are stored beside the texts
        for :meth:`count` and for people reading the file; they are not part of the key.

        Raises:
            TypeError: When ``texts`` is not a sequence of strings.
            ValueError: When the cache is closed.
        """
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            msg = "texts must be a sequence of str"
            raise TypeError(msg)
        value = json.dumps(list(texts), ensure_ascii=False)
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO representations VALUES (?, ?, ?, ?, ?, ?)",
                (key, kind, prompt_version, model_identity, value, time.time()),
            )

    def count(self, *, kind: str | None = None, model_identity: str | None = None) -> int:
        """How many entries are stored, optionally only of one kind and/or one model.

        Raises:
            ValueError: When the cache is closed.
        """
        query = (
            "SELECT COUNT(*) FROM representations WHERE (? IS NULL OR kind = ?) AND (? IS NULL OR model = ?)"
        )
        with self._lock:
            row = self._connection().execute(query, (kind, kind, model_identity, model_identity)).fetchone()
        return int(row[0])

    def __len__(self) -> int:
        return self.count()

    def clear(self) -> None:
        """Delete every entry.

        Raises:
            ValueError: When the cache is closed.
        """
        with self._lock:
            self._connection().execute("DELETE FROM representations")


def _create_schema(conn: sqlite3.Connection) -> None:
    conn.execute(_SCHEMA)


def _decode(value: object) -> tuple[str, ...] | None:
    """The texts of a stored entry; ``None`` for anything but a JSON list of strings.

    A value of another SQLite type (a BLOB written by another program: a pickle, say)
    is never decoded, only ignored.
    """
    if not isinstance(value, str):
        return None
    try:
        texts = json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return None
    return tuple(texts)

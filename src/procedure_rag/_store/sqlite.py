"""The SQLite plumbing the chunk store and the representation cache share.

One connection (a file in WAL mode, or ``":memory:"``) used under one lock, a closed
check naming the store, a write transaction, and close / context-manager methods; and
:func:`in_batches`, for statements on more ids than one statement may bind.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from procedure_rag._closing import Closing

__all__ = ["MEMORY", "SQLiteStore", "execute_in_batches", "in_batches"]

MEMORY = ":memory:"

# Ids per statement of in_batches: below SQLite's oldest bound-variable limit (999).
_BATCH = 500


class SQLiteStore(Closing):
    """A SQLite file (or ``":memory:"``) behind one connection used under a lock.

    The file is created with its parent folders when missing and runs in WAL mode; a
    writer waits up to 30 seconds for another. Subclasses hold ``self._lock`` while
    they use :meth:`_connection` or :meth:`_transaction`.

    Args:
        path: The SQLite file, or ``":memory:"``.
        what: The store's name in messages, such as ``"chunk store"``.
        setup: Called with the connection once it is open (to create tables); when it
            raises, the connection is closed and the error propagates.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        what: str,
        setup: Callable[[sqlite3.Connection], None],
    ) -> None:
        self._path = str(path)
        self._what = what
        if self._path != MEMORY:
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        # The lock serialises all use, so the connection may move between threads.
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            self._path, timeout=30.0, check_same_thread=False, isolation_level=None
        )
        self._lock = threading.Lock()
        try:
            if self._path != MEMORY:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
            setup(self._conn)
        except BaseException:
            self._conn.close()
            self._conn = None
            raise

    @property
    def path(self) -> str:
        """The SQLite file, or ``":memory:"``."""
        return self._path

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._conn is None

    def close(self) -> None:
        """Close the database; closing twice is harmless."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"{type(self).__name__}({self._path!r}, {state})"

    def _column(self, query: str, params: tuple[str, ...] = ()) -> list[str]:
        """The first column of every row ``query`` selects, in order."""
        with self._lock:
            rows = self._connection().execute(query, params).fetchall()
        return [row[0] for row in rows]

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            msg = f"the {self._what} at {self._path!r} is closed"
            raise ValueError(msg)
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on any exception.

        IMMEDIATE takes the write lock up front, so two writers on one file queue on the
        busy timeout instead of failing when a read transaction tries to become a write.
        """
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def in_batches(conn: sqlite3.Connection, statement: str, ids: Iterable[str]) -> Iterator[sqlite3.Cursor]:
    """Run ``statement`` on ``ids`` (once each, sorted), a batch of them at a time.

    ``statement`` holds ``{marks}`` where the batch's ``?`` marks go (``... IN ({marks})``);
    only the marks are formatted in, the ids are bound. Each cursor is yielded as soon as
    its batch ran.
    """
    unique = sorted(set(ids))
    for start in range(0, len(unique), _BATCH):
        batch = unique[start : start + _BATCH]
        yield conn.execute(statement.format(marks=", ".join("?" * len(batch))), batch)


def execute_in_batches(conn: sqlite3.Connection, statement: str, ids: Iterable[str]) -> int:
    """:func:`in_batches` run to the end; returns the rows changed, all batches together."""
    return sum(cursor.rowcount for cursor in in_batches(conn, statement, ids))

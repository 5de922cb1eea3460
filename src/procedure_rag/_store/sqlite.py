"""The SQLite plumbing the chunk store and the representation cache share.

One connection (a file in WAL mode, or ``":memory:"``) used under one lock, a closed
check naming the store, a write transaction, and close / context-manager methods.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ["MEMORY", "SQLiteStore"]

MEMORY = ":memory:"


class SQLiteStore:
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

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"{type(self).__name__}({self._path!r}, {state})"

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

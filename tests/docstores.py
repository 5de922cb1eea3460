"""The docstore backends the contract tests run against: SQLite in memory, a SQLite file, PostgreSQL.

``tests/test_docstore.py``, ``tests/test_docstore_ledger.py`` and the lexical contract in
``tests/test_docstore_postgres.py`` take their ``store`` fixture from :func:`open_store`,
so one suite runs on every backend. The PostgreSQL store gets a schema of its own in the
session's throwaway cluster (the ``postgres_cluster`` fixture, asked for only by the
PostgreSQL cases: SQLite runs start no server).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from procedure_rag._store.chunk_store import ChunkStore
from procedure_rag._store.docstore import Docstore

BACKENDS = ["memory", "file", "postgres"]
#: The backends that two store objects (or processes) can share.
SHARED_BACKENDS = ["file", "postgres"]


def store_location(request: pytest.FixtureRequest, tmp_path: Path, backend: str) -> str:
    """Where a fresh store of ``backend`` lives: ``":memory:"``, a file path, or a URL."""
    if backend == "memory":
        return ":memory:"
    if backend == "file":
        return str(tmp_path / "index" / "docstore.sqlite3")
    return str(request.getfixturevalue("postgres_cluster").fresh_url())


def open_store(location: str) -> Docstore:
    """The store at ``location`` (a PostgreSQL URL, or a SQLite path)."""
    if location.startswith("postgresql://"):
        from procedure_rag._store.pg_chunk_store import PostgresChunkStore  # noqa: PLC0415 - optional

        return PostgresChunkStore(location)
    return ChunkStore(location)

"""Which docstore a location names: a ``postgresql://`` URL, or a SQLite file (or ``":memory:"``).

One rule for the command line, :class:`~procedure_rag._chroma.index.ChromaIndex` and both
adapters: a string starting with ``postgresql://`` (or ``postgres://``) opens a
:class:`~procedure_rag._store.pg_chunk_store.PostgresChunkStore` (psycopg is imported only
then); anything else is a SQLite path.
"""

from __future__ import annotations

import os

from procedure_rag._store.chunk_store import ChunkStore
from procedure_rag._store.docstore import Docstore
from procedure_rag._store.postgres import is_postgres_url

__all__ = ["DocstoreLocation", "is_postgres_url", "open_docstore"]

#: A docstore location: a PostgreSQL URL, or a SQLite file.
DocstoreLocation = str | os.PathLike[str]


def open_docstore(location: DocstoreLocation, *, create: bool = True) -> Docstore:
    """Open the docstore at ``location``.

    Args:
        location: ``postgresql://…`` (see :mod:`procedure_rag._store.postgres`), a SQLite
            file path, or ``":memory:"``.
        create: Create an empty docstore when there is none (``False``: a PostgreSQL
            database without the schema is an error; a SQLite file that does not exist is
            one too).

    Raises:
        DocstoreError: When a PostgreSQL docstore cannot be opened (one line saying why),
            or ``create`` is ``False`` and a SQLite file does not exist.
        ValueError: When the store's schema is of another version.
        ImportError: When a PostgreSQL URL is given and psycopg is not installed.
    """
    if is_postgres_url(location):
        from procedure_rag._store.pg_chunk_store import PostgresChunkStore  # noqa: PLC0415 - optional

        return PostgresChunkStore(str(location), create=create)
    path = os.fspath(location)
    if not create and path != ":memory:" and not os.path.isfile(path):
        from procedure_rag._errors import DocstoreError  # noqa: PLC0415

        msg = f"no docstore at {path!r}"
        raise DocstoreError(msg)
    return ChunkStore(path)

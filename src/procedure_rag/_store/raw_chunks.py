"""Where an index's raw chunks live: a chunk store, or a framework docstore mirrored from a ledger.

Both adapters take either docstore. With a :class:`~procedure_rag._store.docstore.Docstore`
(a SQLite :class:`~procedure_rag._store.chunk_store.ChunkStore`, or a PostgreSQL database)
the raw chunks and the vector ledger are one store, written in one transaction.
With a framework's own docstore (a LangChain ``BaseStore``, a LlamaIndex
``BaseDocumentStore``) the ledger that finds a source's old vectors is an in-memory
chunk store, and every write is mirrored into the framework docstore: the chunks
written are put there, the chunks gone are deleted. So re-adding a source replaces its
vectors only within one process (a later process cannot know the vectors of chunks
that changed in between).

:class:`RawChunks` is that rule, once; an adapter gives it its framework docstore as a
:class:`ForeignDocstore` (two methods translating chunks into the framework's items).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from procedure_rag._store.chunk_store import ChunkStore
from procedure_rag._store.docstore import Docstore
from procedure_rag._store.records import StoredChunk
from procedure_rag._store.writer import (
    IndexReport,
    RepresentationSource,
    VectorBackend,
    check_delete_selector,
    delete_chunks,
    delete_sources,
    write_chunks,
)

__all__ = ["ForeignDocstore", "RawChunks"]


class ForeignDocstore(Protocol):
    """A framework's docstore, as :class:`RawChunks` mirrors writes into it."""

    def put(self, chunks: Sequence[StoredChunk]) -> None:
        """Store ``chunks`` under their chunk ids, replacing what was there."""

    def delete(self, chunk_ids: Sequence[str]) -> None:
        """Delete the chunks with ``chunk_ids`` (ids not stored are ignored)."""


class RawChunks:
    """The raw chunks of an index and the ledger of its vectors.

    Args:
        docstore: A chunk store (raw chunks and ledger in one file), or a framework
            docstore (mirrored from an in-memory ledger).
    """

    def __init__(self, docstore: Docstore | ForeignDocstore) -> None:
        self._foreign = None if isinstance(docstore, Docstore) else docstore
        self._ledger: Docstore = docstore if isinstance(docstore, Docstore) else ChunkStore()

    @property
    def ledger(self) -> Docstore:
        """The vector ledger: the chunk store itself, or the in-memory one beside a framework docstore."""
        return self._ledger

    @property
    def chunk_store(self) -> Docstore | None:
        """The chunk store holding the raw chunks, or ``None`` beside a framework docstore."""
        return self._ledger if self._foreign is None else None

    @property
    def lists_every_vector(self) -> bool:
        """Whether the ledger is the chunk store's, so it lists every vector written to the index."""
        return self._foreign is None

    def write(
        self,
        chunks: Sequence[StoredChunk],
        *,
        backend: VectorBackend,
        representations: RepresentationSource | None,
        id_key: str,
    ) -> IndexReport:
        """Index ``chunks`` (see :func:`~procedure_rag._store.writer.write_chunks`), then mirror them.

        The framework docstore gets the chunks written, then loses the chunks their
        sources had before and have no longer.
        """
        before = self._ids_of_sources(chunk.source_id for chunk in chunks)
        report = write_chunks(
            chunks, store=self._ledger, backend=backend, representations=representations, id_key=id_key
        )
        if self._foreign is not None:
            self._foreign.put(chunks)
            self._forget(before - {chunk.chunk_id for chunk in chunks})
        return report

    def delete(
        self,
        *,
        source_ids: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
        backend: VectorBackend,
    ) -> IndexReport:
        """Delete whole sources, or chunks by id, with their vectors (unknown ones are ignored).

        Raises:
            ValueError: When neither or both of ``source_ids`` and ``ids`` are given.
        """
        check_delete_selector(source_ids, ids)
        if source_ids is not None:
            return self.delete_sources(source_ids, backend=backend)
        return self.delete_chunks(list(ids or ()), backend=backend)

    def delete_sources(self, source_ids: Sequence[str], *, backend: VectorBackend) -> IndexReport:
        """Remove every chunk and vector of ``source_ids`` (unknown ones are ignored)."""
        before = self._ids_of_sources(source_ids)
        report = delete_sources(source_ids, store=self._ledger, backend=backend)
        self._forget(before)
        return report

    def delete_chunks(self, chunk_ids: Sequence[str], *, backend: VectorBackend) -> IndexReport:
        """Remove chunks by id, with their vectors (unknown ids are ignored)."""
        report = delete_chunks(chunk_ids, store=self._ledger, backend=backend)
        self._forget(chunk_ids)
        return report

    def _ids_of_sources(self, source_ids: Iterable[str]) -> set[str]:
        if self._foreign is None:
            return set()
        return {chunk_id for source in set(source_ids) for chunk_id in self._ledger.ids_for_source(source)}

    def _forget(self, chunk_ids: Iterable[str]) -> None:
        gone = sorted(set(chunk_ids))
        if self._foreign is not None and gone:
            self._foreign.delete(gone)

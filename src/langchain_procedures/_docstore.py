"""The raw-chunk docstore as a LangChain ``BaseStore[str, Document]``.

A thin view of the core's docstore (SQLite or PostgreSQL, JSON values, never pickle):
``Document.page_content`` is the chunk text, ``metadata`` its flat metadata, the key its
chunk id. The multi-vector retriever also keeps its vector ledger in the same file, so
re-indexing a source and deleting it are one transaction here. Any other ``BaseStore``
is kept in step with the retriever's in-memory ledger through :class:`BaseStoreMirror`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from langchain_core.documents import Document
from langchain_core.stores import BaseStore

from procedure_rag._core_api import MEMORY, Docstore, DocstoreLocation, StoredChunk, open_docstore

__all__ = ["BaseStoreMirror", "ProcedureDocStore", "document_of", "stored_of"]


def document_of(chunk: StoredChunk) -> Document:
    """The ``Document`` of a stored chunk (as stored: its key is not added as ``id``)."""
    return Document(page_content=chunk.text, metadata=dict(chunk.metadata))


def stored_of(key: str, document: Document) -> StoredChunk:
    """The stored form of ``document`` under ``key``.

    Raises:
        TypeError: When ``document`` is not a ``Document``.
        ValueError: When its metadata holds a value that is not a scalar (the message
            names the key), or names another ``chunk_id``.
    """
    if not isinstance(document, Document):
        msg = f"ProcedureDocStore stores Documents, got {type(document).__name__} for key {key!r}"
        raise TypeError(msg)
    return StoredChunk(key, document.page_content, dict(document.metadata))


class ProcedureDocStore(BaseStore[str, Document]):
    """Raw chunks by id in a SQLite file (or in memory) or a PostgreSQL database, as LangChain documents.

    Args:
        path: The SQLite file (created when missing), ``":memory:"``, or a
            ``postgresql://`` URL.
        store: An open docstore to wrap instead of ``path``.

    Example:
        >>> store = ProcedureDocStore()
        >>> store.mset([("c1", Document(page_content="Press the power button."))])
        >>> store.mget(["c1", "nope"])[1] is None
        True
    """

    def __init__(self, path: DocstoreLocation = MEMORY, *, store: Docstore | None = None) -> None:
        self.store = store if store is not None else open_docstore(path)

    def mget(self, keys: Sequence[str]) -> list[Document | None]:
        """The documents under ``keys``, ``None`` where a key is not stored."""
        return [None if found is None else document_of(found) for found in self.store.get(keys)]

    def mset(self, key_value_pairs: Sequence[tuple[str, Document]]) -> None:
        """Store documents under keys, replacing what was there, in one transaction."""
        self.store.put([stored_of(key, document) for key, document in key_value_pairs])

    def mdelete(self, keys: Sequence[str]) -> None:
        """Delete the documents under ``keys``; their vectors are marked stale in the ledger."""
        self.store.remove_chunks(keys)

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        """The stored keys (those starting with ``prefix``, when given), in write order per source."""
        for source_id in self.store.sources():
            for key in self.store.ids_for_source(source_id):
                if prefix is None or key.startswith(prefix):
                    yield key

    def close(self) -> None:
        """Close the underlying store."""
        self.store.close()


@dataclass(frozen=True, slots=True)
class BaseStoreMirror:
    """A LangChain ``BaseStore`` as the core's ``RawChunks`` mirrors raw chunks into it."""

    docstore: BaseStore[str, Document]

    def put(self, chunks: Sequence[StoredChunk]) -> None:
        """Store ``chunks`` as documents under their chunk ids, replacing what was there."""
        self.docstore.mset([(chunk.chunk_id, document_of(chunk)) for chunk in chunks])

    def delete(self, chunk_ids: Sequence[str]) -> None:
        """Delete the documents under ``chunk_ids``."""
        self.docstore.mdelete(list(chunk_ids))

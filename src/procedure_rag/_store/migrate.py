"""Copying a docstore to another backend: a SQLite index's docstore into PostgreSQL.

:func:`copy_docstore` reads every source of one docstore and writes it into another
through the :class:`~procedure_rag._store.docstore.Docstore` interface, one transaction
per source: its chunks in their order, its live vectors with their kinds, texts and
embeddings (the same float32 values), and the vectors still to be deleted from the
vector store (stale, or pending from a killed run) as pending, so the next indexing run
deletes them there as it would have. The info table (the embedding model, the caller's
keys) comes along. A copy that dies part way is completed by running it again: each
source is replaced whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from procedure_rag._models.identity import EmbeddingIdentity
from procedure_rag._store.docstore import Docstore
from procedure_rag._store.records import StoredChunk

__all__ = ["CopyReport", "copy_docstore"]

#: Info keys the copy does not write with ``set_info`` (the store keeps them itself: the
#: target cuts the copied chunks into index words with its own recorded analyser).
_KEPT_KEYS = frozenset({"schema_version", "lexical_analyser"})


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What :func:`copy_docstore` copied.

    Attributes:
        sources: Sources copied.
        chunks: Chunks copied (parents included).
        vectors: Live vectors copied.
        leftovers: Vectors copied as still to be deleted from the vector store.
    """

    sources: int
    chunks: int
    vectors: int
    leftovers: int


def copy_docstore(source: Docstore, target: Docstore, *, info_keys: tuple[str, ...] = ()) -> CopyReport:
    """Copy every source of ``source`` (chunks, vector ledger, info) into ``target``.

    Args:
        source: The docstore to read (left as it is).
        target: The docstore to write; sources it holds that ``source`` also holds are
            replaced, others are left alone.
        info_keys: Info keys to copy besides the embedding model's.

    Raises:
        EmbeddingMismatchError: When ``target`` records another embedding model.
    """
    keys = EmbeddingIdentity("any", 1, (1.0,)).to_metadata()  # the keys a model is recorded under
    recorded = {key: value for key in keys if (value := source.get_info(key)) is not None}
    identity = EmbeddingIdentity.from_metadata(recorded)
    if identity is not None:
        target.check_embedding(identity)
    for key in info_keys:
        value = source.get_info(key)
        if value is not None and key not in _KEPT_KEYS:
            target.set_info(key, value)
    sources = sorted(set(source.sources()) | set(source.stale_sources()))
    chunks = vectors = leftovers = 0
    for source_id in sources:
        records = [found for found in source.get(source.ids_for_source(source_id)) if found is not None]
        live = set(source.vector_ids(source_id))
        rows = [row for row in source.vectors_of_chunks(r.chunk_id for r in records) if row.vector_id in live]
        pending = source.stale_vectors(source_id)
        with target.writing(source_id):
            target.commit_source(
                source_id,
                [StoredChunk(r.chunk_id, r.text, r.metadata) for r in records],
                {row.vector_id: row.chunk_id for row in rows},
                details={row.vector_id: (row.kind, row.text) for row in rows},
                embeddings={
                    row.vector_id: np.frombuffer(row.embedding, dtype=np.float32).tolist()
                    for row in rows
                    if row.embedding is not None
                },
            )
            if pending:  # only ever deleted from the vector store: their chunk is not needed
                target.begin_vectors(source_id, dict.fromkeys(pending, ""))
        chunks += len(records)
        vectors += len(rows)
        leftovers += len(pending)
    return CopyReport(sources=len(sources), chunks=chunks, vectors=vectors, leftovers=leftovers)

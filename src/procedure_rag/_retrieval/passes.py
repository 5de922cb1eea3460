"""Which optional passes of :func:`~procedure_rag._retrieval.retrieve.retrieve` an index allows.

Two passes depend on the stores and the caller's filter, decided here once for
:class:`~procedure_rag.ChromaIndex` and both adapters' retrievers:

- **Lexical search** (the docstore's BM25 index, :func:`lexical_pass`) applies when the
  raw chunks are in a chunk store (a framework docstore keeps no index), no metadata
  filter applies (the index cannot apply one), and the search ranks by similarity alone
  (with a score threshold or MMR the search decides what may be a result, so chunks
  found by their words alone are not added).
- **Exact re-scoring** of the candidates (:func:`rescore_pass`) applies on a Chroma
  collection of the layout (another store cannot hand back the vectors of given chunks):
  from the ledger (:func:`~procedure_rag._chroma.queries.ledger_rescore`) when it lists
  every vector of the index and the filter, if any, is in Chroma's syntax; otherwise from
  the collection read by chunk id (:func:`~procedure_rag._chroma.queries.collection_rescore`),
  with a filter the adapter evaluates on each vector's metadata; not at all under a
  filter that neither Chroma nor the adapter can apply to given vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from procedure_rag._chroma.collection import ID_KEY
from procedure_rag._chroma.queries import (
    ChromaGet,
    MetadataCheck,
    Where,
    collection_rescore,
    ledger_rescore,
)
from procedure_rag._retrieval.fusion import Hit
from procedure_rag._retrieval.retrieve import Lexical, Rescore
from procedure_rag._store.raw_chunks import RawChunks

__all__ = ["VectorFilter", "lexical_pass", "rescore_pass"]


@dataclass(frozen=True, slots=True)
class VectorFilter:
    """The caller's metadata filter on vectors, as the re-scoring can apply it.

    Give the forms the filter has; with neither, the filter cannot be applied to given
    vectors and :func:`rescore_pass` turns re-scoring off.

    Attributes:
        where: The filter in Chroma's syntax (Chroma checks it).
        check: The filter as a test of one vector's metadata (the adapter's own rules).
    """

    where: Where | None = None
    check: MetadataCheck | None = None


def lexical_pass(raw: RawChunks, *, filtered: bool, similarity_only: bool = True) -> Lexical | None:
    """The docstore's lexical search, when it applies (see the module); else ``None``.

    Args:
        raw: Where the raw chunks live.
        filtered: Whether a metadata filter applies to the search.
        similarity_only: Whether the search ranks by similarity alone (no score
            threshold, no MMR).
    """
    store = raw.chunk_store
    if store is None or filtered or not similarity_only:
        return None
    return store.lexical_search


def rescore_pass(
    get: ChromaGet | None,
    vector: Sequence[float],
    *,
    raw: RawChunks,
    vector_filter: VectorFilter | None = None,
    searched: Sequence[Hit] = (),
    id_key: str = ID_KEY,
) -> Rescore | None:
    """The exact re-scoring that applies (see the module), or ``None``.

    Args:
        get: The Chroma collection's ``get`` when the vectors are in a Chroma collection
            of the layout; ``None`` for any other store.
        vector: The query vector.
        raw: Where the raw chunks live (and whether its ledger lists every vector).
        vector_filter: The caller's filter, or ``None``.
        searched: The last search's hits, for the ledger's re-scoring: those of vectors
            it never listed are kept (see :func:`~procedure_rag._chroma.queries.ledger_rescore`).
        id_key: The vector metadata key naming the raw chunk.
    """
    if get is None:
        return None
    where = None if vector_filter is None else vector_filter.where
    check = None if vector_filter is None else vector_filter.check
    if vector_filter is not None and where is None and check is None:
        return None
    if raw.lists_every_vector and check is None:
        return ledger_rescore(get, vector, ledger=raw.ledger, where=where, searched=searched)
    return collection_rescore(get, vector, id_key=id_key, where=where, check=check)

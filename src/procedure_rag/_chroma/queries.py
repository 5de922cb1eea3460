"""Reading a Chroma collection of the layout: filters, the search, the exact re-scorings.

What every reader of the layout asks of Chroma, with no framework: :class:`ChromaIndex`
(:mod:`procedure_rag._chroma.index`) and both adapters' retrievers (the LangChain one on
``langchain_chroma.Chroma``, whose ``get`` takes the same arguments as a collection's;
the LlamaIndex one on ``ChromaVectorStore``'s collection).

- :func:`chroma_search`: the core's ``search``, asking Chroma for ids and distances only.
- :func:`ledger_rescore`: every live vector of the candidates, as the docstore's vector
  ledger lists them, scored exactly (for an index whose ledger lists every vector).
- :func:`collection_rescore`: every vector of the candidates, as the collection holds
  them under a metadata filter on the chunk id, scored exactly (for a ledger that does
  not list every vector).

Which re-scoring applies is decided once, in :mod:`procedure_rag._retrieval.passes`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from procedure_rag._chroma.collection import ID_KEY, read_retrying
from procedure_rag._retrieval.fusion import Hit
from procedure_rag._retrieval.retrieve import ALL_KINDS, Found, Rescore, Search, hits_from_vectors
from procedure_rag._store.docstore import Docstore

__all__ = [
    "ChromaGet",
    "MetadataCheck",
    "Where",
    "chroma_search",
    "chunks_where",
    "collection_rescore",
    "cosine_from_relevance",
    "kinds_where",
    "ledger_rescore",
]

#: A Chroma ``where`` filter.
Where = Mapping[str, Any]

#: A Chroma ``get`` (a collection's, or ``langchain_chroma.Chroma.get``): takes ``ids``,
#: ``where`` and ``include``, returns Chroma's ``GetResult``.
ChromaGet = Callable[..., Mapping[str, Any]]

#: A metadata filter evaluated here, on one vector's metadata (the adapter's own rules).
MetadataCheck = Callable[[Mapping[str, object]], bool]


def kinds_where(where: Where | None, kinds: Iterable[str]) -> dict[str, Any]:
    """``where`` (when given) and "the representation is one of ``kinds``", as one Chroma filter."""
    names = sorted(kinds)
    clause: dict[str, Any] = {"representation": names[0] if len(names) == 1 else {"$in": names}}
    return clause if not where else {"$and": [dict(where), clause]}


def chunks_where(where: Where | None, doc_ids: Iterable[str], *, id_key: str = ID_KEY) -> dict[str, Any]:
    """``where`` (when given) and "the vector belongs to one of ``doc_ids``", as one Chroma filter."""
    clause: dict[str, Any] = {id_key: {"$in": list(doc_ids)}}
    return clause if not where else {"$and": [dict(where), clause]}


def cosine_from_relevance(chroma_score: float) -> float:
    """The cosine similarity behind a relevance score of ``exp(-distance)`` (LlamaIndex's on Chroma).

    ``exp(-d)`` is never 0 for a cosine distance (at most 2); a foreign score of 0 gets
    the lowest cosine similarity rather than ``-inf``, which JSON cannot carry.
    """
    return max(1.0 + math.log(chroma_score), -1.0) if chroma_score > 0 else -1.0


def chroma_search(
    collection: Any,  # noqa: ANN401 - chromadb.Collection
    vector: Sequence[float],
    *,
    store: Docstore,
    where: Where | None = None,
) -> Search:
    """The core's ``search`` over a Chroma collection of this layout, for one query vector.

    Chroma is asked for ids and distances only, with no filter unless the caller gives
    one or wants only some kinds (Chroma resolves a ``where`` into every matching id
    before it searches, which costs more than the search at 100k vectors); each hit's
    chunk, kind and text come from the docstore's vector ledger. Scores are cosine
    similarities (``1 - distance``: the layout's collections use cosine space).
    """
    embedding = list(vector)

    def search(n: int, kinds: frozenset[str]) -> Found:
        clause = where if kinds >= ALL_KINDS else kinds_where(where, kinds)
        found = read_retrying(
            lambda: collection.query(
                query_embeddings=[embedding], n_results=n, where=clause or None, include=["distances"]
            )
        )
        ids: list[str] = list(found["ids"][0])
        details = store.vector_details(ids)
        hits = [
            Hit(chunk_id, kind, text, 1.0 - float(distance), vector_id)
            for vector_id, distance in zip(ids, found["distances"][0], strict=True)
            if (detail := details.get(vector_id)) is not None
            for chunk_id, kind, text in (detail,)
        ]
        return Found(hits, exhausted=len(ids) < n)

    return search


def ledger_rescore(
    get: ChromaGet,
    vector: Sequence[float],
    *,
    ledger: Docstore,
    where: Where | None = None,
    searched: Sequence[Hit] = (),
) -> Rescore:
    """The core's ``rescore`` from the ledger: every live vector of the candidates, scored exactly.

    The ledger names the candidates' vectors, their kinds and texts and, when the writer
    embedded them itself, holds their embeddings; the others Chroma hands back by id (its
    cheapest read). No filtered read of the collection, which costs a scan of it and, on a
    Chroma server, races a writer's deletes ("Error finding id").

    Args:
        get: The collection's ``get``.
        vector: The query vector.
        ledger: The docstore whose ledger lists each chunk's vectors.
        where: The caller's Chroma filter, kept in the re-scoring (Chroma checks it on the
            candidates' vector ids).
        searched: The last search's hits (filled in by the caller's search, read at each
            call): those of vectors the ledger never listed (another tool wrote them, such
            as langchain-chroma) are kept; vectors it lists but no longer as live are left
            out.
    """

    def rescore(doc_ids: Sequence[str]) -> list[Hit]:
        rows = ledger.vectors_of_chunks(doc_ids)
        if where and rows:
            # The caller's filter holds in the re-scoring too: the store decides which pass.
            ids = [row.vector_id for row in rows]
            passing = set(read_retrying(lambda: get(ids=ids, where=dict(where), include=[]))["ids"])
            rows = [row for row in rows if row.vector_id in passing]
        import numpy as np  # noqa: PLC0415 - chromadb brings it; the core imports without it

        vectors: dict[str, Any] = {
            row.vector_id: np.frombuffer(row.embedding, dtype=np.float32)
            for row in rows
            if row.embedding is not None
        }
        unrecorded = [row.vector_id for row in rows if row.embedding is None]
        if unrecorded:
            # Written by a store that embedded out of sight: Chroma hands them back by id.
            found = read_retrying(lambda: get(ids=unrecorded, include=["embeddings"]))
            vectors.update(zip(found["ids"], found["embeddings"], strict=True))
        kept = [row for row in rows if row.vector_id in vectors]
        hits = hits_from_vectors(
            vector,
            ids=[row.vector_id for row in kept],
            texts=[row.text for row in kept],
            metadatas=[{ID_KEY: row.chunk_id, "representation": row.kind} for row in kept],
            embeddings=[vectors[row.vector_id] for row in kept],
        )
        wanted = set(doc_ids)
        others = [hit for hit in searched if hit.doc_id in wanted]
        if not others:
            return hits
        listed = ledger.vector_states(hit.representation_id for hit in others)
        return hits + [hit for hit in others if hit.representation_id not in listed]

    return rescore


def collection_rescore(
    get: ChromaGet,
    vector: Sequence[float],
    *,
    id_key: str = ID_KEY,
    where: Where | None = None,
    check: MetadataCheck | None = None,
) -> Rescore:
    """The core's ``rescore`` from the collection: every vector of the candidates, scored exactly.

    Read from Chroma by a metadata filter on ``id_key`` (vectors and all), so the scores
    are exact whatever the HNSW search found, for vectors any tool wrote.

    Args:
        get: The collection's ``get``.
        vector: The query vector.
        id_key: The vector metadata key naming the raw chunk.
        where: The caller's Chroma filter, joined to the one on ``id_key``.
        check: The caller's filter as the adapter evaluates it on a vector's metadata,
            so a filter on a representation's own keys holds as it did in the search.
    """

    def rescore(doc_ids: Sequence[str]) -> list[Hit]:
        got = read_retrying(
            lambda: get(
                where=chunks_where(where, doc_ids, id_key=id_key),
                include=["embeddings", "documents", "metadatas"],
            )
        )
        ids: list[str] = list(got["ids"])
        metadatas: list[Mapping[str, object] | None] = list(got["metadatas"] or [None] * len(ids))
        texts: list[str | None] = list(got["documents"] or [None] * len(ids))
        embeddings = got["embeddings"]
        if check is not None:
            rows = [i for i, metadata in enumerate(metadatas) if check(metadata or {})]
            ids, texts = [ids[i] for i in rows], [texts[i] for i in rows]
            metadatas, embeddings = [metadatas[i] for i in rows], [embeddings[i] for i in rows]
        return hits_from_vectors(
            vector, ids=ids, texts=texts, metadatas=metadatas, embeddings=embeddings, id_key=id_key
        )

    return rescore

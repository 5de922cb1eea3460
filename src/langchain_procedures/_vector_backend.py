"""A LangChain ``VectorStore`` as the core's vector backend and search.

Writing: representation records become ``Document``s with the record's id, text and
metadata, added through the store's own API (so it embeds with its own embedding
function). Searching: hits come back as the core's ``Hit``s with similarity scores
(higher is better) whichever store it is; on the index layout the core searches and
re-scores the collection itself.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document
from langchain_core.vectorstores import VectorStore

from procedure_rag._core_api import (
    Found,
    Hit,
    RawChunks,
    Rescore,
    Search,
    VectorFilter,
    VectorRecord,
    chroma_search,
    rescore_pass,
)

__all__ = ["DocumentFilter", "Layout", "Searcher", "VectorStoreBackend", "hits_of", "searcher"]

#: A metadata filter: a dict in the store's syntax, or a test of one vector's ``Document``
#: (as ``InMemoryVectorStore`` takes).
DocumentFilter = Mapping[str, Any] | Callable[[Document], bool]

# Chroma takes at most a few thousand records per call; smaller batches also bound memory.
_ADD_BATCH = 512


@dataclass(frozen=True, slots=True)
class VectorStoreBackend:
    """Adds and deletes representation vectors through a LangChain ``VectorStore``."""

    vectorstore: VectorStore

    def add(
        self,
        records: Sequence[VectorRecord],
        *,
        known: Mapping[str, Sequence[float]] | None = None,
    ) -> None:
        """Embed and store ``records`` (ids kept, so a rerun overwrites); the store embeds them itself."""
        for start in range(0, len(records), _ADD_BATCH):
            batch = records[start : start + _ADD_BATCH]
            ids = [record.vector_id for record in batch]
            # Stores that add rather than upsert would keep an old copy of a re-written id.
            self.vectorstore.delete(ids=ids)
            self.vectorstore.add_documents(
                [Document(page_content=r.text, metadata=dict(r.metadata), id=r.vector_id) for r in batch],
                ids=ids,
            )

    def delete(self, ids: Sequence[str]) -> None:
        """Delete vectors by id."""
        for start in range(0, len(ids), _ADD_BATCH):
            self.vectorstore.delete(ids=list(ids[start : start + _ADD_BATCH]))


def hits_of(pairs: Iterable[tuple[Document, float]], id_key: str) -> list[Hit]:
    """Core hits from ``(document, similarity)`` pairs; entries without ``id_key`` are skipped."""
    hits: list[Hit] = []
    for document, score in pairs:
        doc_id = document.metadata.get(id_key)
        if not doc_id:
            continue
        hits.append(
            Hit(
                doc_id=str(doc_id),
                kind=str(document.metadata.get("representation", "raw")),
                text=document.page_content,
                score=float(score),
                representation_id=document.id or f"{doc_id}:{document.page_content}",
            )
        )
    return hits


@dataclass(frozen=True, slots=True)
class Searcher:
    """The two callables the core's ``retrieve`` takes, over one LangChain store and query."""

    search: Search
    rescore: Rescore | None


@dataclass(frozen=True, slots=True)
class Layout:
    """The index layout's own collection and raw chunks, when the retriever opened them."""

    collection: Any
    raw: RawChunks


def searcher(
    vectorstore: VectorStore,
    query: str,
    *,
    search_type: str,
    search_kwargs: Mapping[str, Any],
    id_key: str,
    where: DocumentFilter | None,
    layout: Layout | None = None,
) -> Searcher:
    """Search and re-score ``query``, embedding the query once where it can.

    On the index layout (:meth:`from_persist_directory` and kin) the core searches the
    collection for ids and distances only, resolves them in the docstore's vector ledger,
    and re-scores every representation of the best candidates from their stored vectors;
    scores are cosine similarities. On any other store one search serves every kind,
    with the store's relevance scores, and no re-scoring. ``mmr`` gives no scores, so a
    hit scores by its MMR rank (1.0 for the first, falling evenly).

    A callable ``where`` is applied here, to each hit's vector ``Document`` (the
    representation text, the chunk's metadata with ``id_key`` and ``representation``),
    whatever the store: a store's own callable filters are not part of the
    ``VectorStore`` contract, Chroma takes none, and neither the layout's search nor its
    exact re-scoring can apply one. Under a callable filter the store's search is
    therefore asked unfiltered and the vectors that pass are kept; the core's own
    widening asks again for more while it has fewer than ``k`` chunks, up to
    ``RetrievalOptions.fetch_limit`` vectors (a selective filter may find fewer than a
    store applying it would). There is no exact re-scoring then (scores are the store's), and
    with ``mmr`` the diversity is chosen among all vectors before the filter keeps some.
    ``InMemoryVectorStore`` takes only callables, so a dict given for it is read as
    equality of each key (see :func:`_equality_test`).
    """
    kwargs = {key: value for key, value in search_kwargs.items() if key not in ("k", "filter")}
    threshold = kwargs.pop("score_threshold", None) if search_type == "similarity_score_threshold" else None
    if _is_in_memory(vectorstore) and where is not None and not callable(where):
        where = _equality_test(where)
    keep = where if callable(where) else None
    where = None if callable(where) else where
    if search_type == "mmr":
        return Searcher(_mixed(_mmr_pairs(vectorstore, query, kwargs, where), id_key, keep), None)
    embeddings = vectorstore.embeddings
    if layout is not None and embeddings is not None and keep is None:
        vector = embeddings.embed_query(query)
        search = chroma_search(layout.collection, vector, store=layout.raw.ledger, where=where)
        rescore = rescore_pass(
            layout.collection.get,
            vector,
            raw=layout.raw,
            vector_filter=None if where is None else VectorFilter(where=where),
        )
        return Searcher(search if threshold is None else _at_least(search, float(threshold)), rescore)

    options = {**kwargs, **({} if where is None else {"filter": dict(where)})}

    def pairs(n: int) -> list[tuple[Document, float]]:
        try:
            found = vectorstore.similarity_search_with_relevance_scores(query, k=n, **options)
        except NotImplementedError:
            # Stores without a relevance function (InMemoryVectorStore) give similarities here.
            found = vectorstore.similarity_search_with_score(query, k=n, **options)
        return found if threshold is None else _above(found, float(threshold))

    return Searcher(_mixed(pairs, id_key, keep), None)


def _is_in_memory(vectorstore: VectorStore) -> bool:
    """Whether ``vectorstore`` is langchain-core's ``InMemoryVectorStore``.

    Without importing it: its module imports numpy (about 0.3 s), and a store can only be
    one once the module is loaded.
    """
    module = sys.modules.get("langchain_core.vectorstores.in_memory")
    return module is not None and isinstance(vectorstore, module.InMemoryVectorStore)


def _equality_test(where: Mapping[str, Any]) -> Callable[[Document], bool]:
    """A dict filter as a test of a ``Document``: each key's metadata value equals the given one.

    Raises:
        ValueError: For an operator (a key starting with ``$``, or a dict value): only a
            store that knows the syntax can apply it.
    """
    for key, value in where.items():
        if key.startswith("$") or isinstance(value, Mapping):
            msg = (
                f"a dict filter here may only ask equality of metadata keys, got {key!r}: "
                "pass a callable taking the vector's Document instead"
            )
            raise ValueError(msg)
    wanted = dict(where)

    def test(document: Document) -> bool:
        return all(
            key in document.metadata and document.metadata[key] == value for key, value in wanted.items()
        )

    return test


def _above(pairs: list[tuple[Document, float]], threshold: float) -> list[tuple[Document, float]]:
    # Best first: once one hit falls under the threshold, asking for more finds none above
    # it, and returning fewer than asked tells the retriever the store is exhausted.
    return [(document, score) for document, score in pairs if score >= threshold]


def _at_least(search: Search, threshold: float) -> Search:
    def kept(n: int, kinds: frozenset[str]) -> Found:
        found = search(n, kinds)
        hits = [hit for hit in found.hits if hit.score >= threshold]
        return Found(hits, exhausted=found.exhausted or len(hits) < len(found.hits))

    return kept


Pairs = Callable[[int], list[tuple[Document, float]]]


def _mixed(pairs: Pairs, id_key: str, keep: Callable[[Document], bool] | None = None) -> Search:
    """One store search serves every kind: asked once per ``n``, filtered by kind (and ``keep``) after."""
    last: dict[int, list[tuple[Document, float]]] = {}

    def search(n: int, kinds: frozenset[str]) -> Found:
        if n not in last:
            last.clear()
            last[n] = pairs(n)
        found = last[n]
        passing = found if keep is None else [pair for pair in found if keep(pair[0])]
        # The store's count decides exhaustion, not the share of it that passes: the core
        # asks again for more while it has too few chunks (up to its fetch limit).
        hits = [hit for hit in hits_of(passing, id_key) if hit.kind in kinds]
        return Found(hits, exhausted=len(found) < n)

    return search


def _mmr_pairs(
    vectorstore: VectorStore, query: str, kwargs: Mapping[str, Any], where: Mapping[str, Any] | None
) -> Pairs:
    def pairs(n: int) -> list[tuple[Document, float]]:
        options = dict(kwargs)
        fetch_k = max(int(options.pop("fetch_k", 20)), 2 * n)
        if where is not None:
            options["filter"] = dict(where)
        found = vectorstore.max_marginal_relevance_search(query, k=n, fetch_k=fetch_k, **options)
        return [(document, 1.0 - i / max(n, 1)) for i, document in enumerate(found)]

    return pairs

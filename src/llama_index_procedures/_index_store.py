"""The multi-vector index on LlamaIndex stores: representation nodes, raw nodes, the ledger.

The translation layer under :class:`~llama_index_procedures.ProcedureMultiVectorRetriever`:

- :class:`IndexBackend` is the core's :class:`~procedure_rag._store.writer.VectorBackend` over a
  ``VectorStoreIndex``: each :class:`~procedure_rag._store.writer.VectorRecord` becomes a
  ``TextNode`` (id = representation id, text = representation text, metadata = the
  record's) whose ``SOURCE`` is the raw chunk, so the ``doc_id`` LlamaIndex writes at the
  top level of a vector's metadata is the chunk id, as the LangChain adapter writes it.
- :class:`RawNodes` keeps the raw chunks: in the core's :class:`~procedure_rag._store.chunk_store.ChunkStore`
  (SQLite, which is also the vector ledger), or in any LlamaIndex ``BaseDocumentStore``
  mirrored from an in-memory ledger.
- :func:`to_hits` turns the vector store's answer into the core's
  :class:`~procedure_rag._retrieval.fusion.Hit`, with Chroma's ``exp(-distance)`` turned back into
  cosine similarity so both frameworks score one index alike; :func:`chroma_rescore`
  scores every representation of candidate chunks exactly, from the vectors Chroma
  stores.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import (
    BaseNode,
    MetadataMode,
    NodeRelationship,
    NodeWithScore,
    RelatedNodeInfo,
    RelatedNodeType,
    TextNode,
)
from llama_index.core.storage.docstore.types import BaseDocumentStore
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from llama_index.core.vector_stores.utils import build_metadata_filter_fn, node_to_metadata_dict

from procedure_rag import STRUCTURAL_KEYS, read_metadata
from procedure_rag._chroma.collection import check_dimension, read_retrying, upsert
from procedure_rag._chroma.index import chroma_rescore as rescore_from_ledger
from procedure_rag._models.identity import PROBE_TEXT, EmbeddingIdentity, describe_model
from procedure_rag._retrieval.fusion import Hit
from procedure_rag._retrieval.retrieve import ALL_KINDS, Rescore, hits_from_vectors
from procedure_rag._store.chunk_store import ChunkStore, StoredChunk
from procedure_rag._store.lexical_index import LexicalHit
from procedure_rag._store.writer import (
    IndexReport,
    RepresentationSource,
    VectorRecord,
    delete_chunks,
    delete_sources,
    stored_chunk,
    write_chunks,
)

__all__ = [
    "RESULT_KEYS",
    "IndexBackend",
    "RawNodes",
    "can_rescore",
    "chroma_metadata",
    "chroma_rescore",
    "chunk_node",
    "embedding_identity",
    "is_chroma",
    "kind_filters",
    "ledger_rescore",
    "representation_node",
    "stored_chunks",
    "to_hits",
]

_LOG = logging.getLogger("procedure_rag")

#: Metadata keys a retrieved node gets (see :func:`procedure_rag._retrieval.retrieve.retrieve`).
RESULT_KEYS = ("score", "matched", "routing", "expanded_from")

#: Neither the embedding nor an LLM prompt needs the chunk's structure or the result
#: keys; the LLM keeps ``section``, a labelled heading path a prompt can cite (as the
#: node parser does).
_EMBED_EXCLUDED = (*STRUCTURAL_KEYS, *RESULT_KEYS)
_LLM_EXCLUDED = (*(key for key in STRUCTURAL_KEYS if key != "section"), *RESULT_KEYS)

#: ``ChromaVectorStore.class_name()``: its scores are ``exp(-distance)``.
_CHROMA = "ChromaVectorStore"

#: Representations per Chroma upsert (Chroma bounds a call's batch).
_UPSERT_BATCH = 512


def embedding_identity(embed_model: BaseEmbedding) -> EmbeddingIdentity:
    """The identity an index records for ``embed_model`` (embeds the probe text once)."""
    return EmbeddingIdentity.from_probe(
        describe_model(embed_model), embed_model.get_text_embedding(PROBE_TEXT)
    )


def chunk_node(chunk: StoredChunk) -> TextNode:
    """A stored chunk as the raw ``TextNode`` the retriever returns.

    Id, text and metadata are the chunk's; ``SOURCE`` is its source id and
    ``PARENT``/``CHILD`` follow ``parent_id``/``child_ids``, as the node parser set them.
    """
    metadata = dict(chunk.metadata)
    relationships: dict[NodeRelationship, RelatedNodeType] = {}
    if chunk.source_id:
        relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=chunk.source_id)
    parent = metadata.get("parent_id")
    if isinstance(parent, str) and parent:
        relationships[NodeRelationship.PARENT] = RelatedNodeInfo(node_id=parent)
    children = read_metadata({"child_ids": metadata.get("child_ids", "[]")})["child_ids"]
    if children:
        relationships[NodeRelationship.CHILD] = [RelatedNodeInfo(node_id=str(child)) for child in children]
    return TextNode(
        id_=chunk.chunk_id,
        text=chunk.text,
        metadata=metadata,
        excluded_embed_metadata_keys=list(_EMBED_EXCLUDED),
        excluded_llm_metadata_keys=list(_LLM_EXCLUDED),
        relationships=relationships,
    )


def stored_chunks(nodes: Iterable[BaseNode]) -> list[StoredChunk]:
    """Nodes from :class:`~llama_index_procedures.ProcedureNodeParser` as the docstore keeps them.

    Raises:
        ValueError: When a node was not made by the node parser (no ``chunk_id``) or holds
            a metadata value that is not a scalar; the message names its position.
    """
    return [
        stored_chunk(node.get_content(metadata_mode=MetadataMode.NONE), node.metadata, position=i)
        for i, node in enumerate(nodes)
    ]


def representation_node(record: VectorRecord, chunk_id: str) -> TextNode:
    """One representation as the vector store keeps it; its vector is the text's alone."""
    metadata = dict(record.metadata)
    return TextNode(
        id_=record.vector_id,
        text=record.text,
        metadata=metadata,
        excluded_embed_metadata_keys=list(metadata),
        excluded_llm_metadata_keys=list(metadata),
        # node_to_metadata_dict writes ref_doc_id (the SOURCE) as the top-level doc_id.
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=chunk_id)},
    )


class IndexBackend:
    """The core's vector backend over a ``VectorStoreIndex``, with the caller's embedding model.

    Representation nodes are embedded here (the index's own model is never asked) and go
    through ``insert_nodes``/``delete_nodes``, so a store that keeps no text (such as
    ``SimpleVectorStore``) finds them in the index's docstore as usual; on Chroma they
    are upserted into the collection, as ``ChromaVectorStore`` writes them.

    Args:
        index: The index holding the representations.
        embed_model: The model that embeds them.
        identity: The model's identity; every vector is checked against its dimension.
        id_key: The metadata key naming the raw chunk.
    """

    def __init__(
        self, index: VectorStoreIndex, embed_model: BaseEmbedding, identity: EmbeddingIdentity, id_key: str
    ) -> None:
        self._index = index
        self._embed_model = embed_model
        self._identity = identity
        self._id_key = id_key

    def add(self, records: Sequence[VectorRecord]) -> list[list[float]]:
        """Embed and store ``records``, replacing any with the same ids; return their embeddings.

        Raises:
            EmbeddingMismatchError: When the model gives a vector of another dimension.
        """
        nodes = [representation_node(record, str(record.metadata[self._id_key])) for record in records]
        vectors = self._embed_model.get_text_embedding_batch([record.text for record in records])
        for node, vector in zip(nodes, vectors, strict=True):
            check_dimension(self._identity, len(vector), f"the embedding of representation {node.node_id!r}")
            node.embedding = vector
        if is_chroma(self._index):
            return _chroma_upsert(self._index, nodes)  # a vector a killed run stored is kept
        # Stores may ignore an add of an id they hold: delete first to replace.
        self.delete([node.node_id for node in nodes])
        self._index.insert_nodes(nodes)
        return [list(vector) for vector in vectors]

    def delete(self, ids: Sequence[str]) -> None:
        """Delete the vectors with ``ids`` (ids not stored are ignored)."""
        # The index keeps a node in its own struct and docstore when the store keeps no
        # text; its delete_nodes fails on an id it does not hold there, so those go to
        # the vector store alone.
        held = self._index.index_struct.nodes_dict
        in_index = [vector_id for vector_id in ids if vector_id in held]
        elsewhere = [vector_id for vector_id in ids if vector_id not in held]
        if in_index:
            self._index.delete_nodes(in_index, delete_from_docstore=True)
        if elsewhere:
            self._index.vector_store.delete_nodes(elsewhere)


def _chroma_upsert(index: VectorStoreIndex, nodes: Sequence[TextNode]) -> list[list[float]]:
    """Write ``nodes`` as ``ChromaVectorStore.add`` would, but replacing ids the collection holds.

    Chroma's ``add`` skips an id it holds, and deleting a vector and adding it again
    under the same id can leave it unreachable by search while ``get`` still returns it
    (chroma-core/chroma#7758, chromadb 1.5.9): :func:`~procedure_rag._chroma.collection.upsert`
    replaces it in place, metadata included, and keeps a vector stored already.

    Returns:
        The vectors the collection holds for ``nodes``, in order.
    """
    store = index.vector_store
    flat = bool(getattr(store, "flat_metadata", True))
    held: list[list[float]] = []
    for start in range(0, len(nodes), _UPSERT_BATCH):
        batch = nodes[start : start + _UPSERT_BATCH]
        metadatas = [
            {
                key: "" if value is None else value  # as ChromaVectorStore.add: Chroma refuses None
                for key, value in node_to_metadata_dict(node, remove_text=True, flat_metadata=flat).items()
            }
            for node in batch
        ]
        held += upsert(
            store.client,
            ids=[node.node_id for node in batch],
            embeddings=[node.get_embedding() for node in batch],
            metadatas=metadatas,
            documents=[node.get_content(metadata_mode=MetadataMode.NONE) for node in batch],
        )
    return held


class RawNodes:
    """The raw chunks: a :class:`ChunkStore`, or a LlamaIndex docstore beside a ledger.

    With a ``ChunkStore`` the chunks and the vector ledger live in one SQLite file. With a
    ``BaseDocumentStore`` the raw nodes are written there (and read from there), while
    the ledger that finds stale vectors is an in-memory ``ChunkStore``: re-indexing in a
    later process cannot remove the vectors and nodes of chunks changed in between.

    Args:
        docstore: Where raw chunks are kept.
    """

    def __init__(self, docstore: ChunkStore | BaseDocumentStore) -> None:
        self._mirror = None if isinstance(docstore, ChunkStore) else docstore
        self.ledger = docstore if isinstance(docstore, ChunkStore) else ChunkStore()

    @property
    def lists_every_vector(self) -> bool:
        """Whether the ledger is the chunk store's file, so it lists every vector written to the index."""
        return self._mirror is None

    def lexical_search(self, query: str, n: int) -> list[LexicalHit]:
        """The chunk store's lexical search (nothing with a LlamaIndex docstore: it keeps no index)."""
        return [] if self._mirror is not None else self.ledger.lexical_search(query, n)

    def lookup(self, ids: Sequence[str]) -> list[TextNode | None]:
        """Raw nodes by id, in order, ``None`` for an id not stored."""
        if self._mirror is None:
            return [None if chunk is None else chunk_node(chunk) for chunk in self.ledger.get(ids)]
        found = [self._mirror.get_document(doc_id, raise_error=False) for doc_id in ids]
        return [node if isinstance(node, TextNode) else None for node in found]

    def write(
        self,
        chunks: Sequence[StoredChunk],
        *,
        backend: IndexBackend,
        representations: RepresentationSource | None,
        id_key: str,
    ) -> IndexReport:
        """Index ``chunks`` (see :func:`procedure_rag._store.writer.write_chunks`)."""
        before = self._ids_of_sources(chunk.source_id for chunk in chunks)
        report = write_chunks(
            chunks, store=self.ledger, backend=backend, representations=representations, id_key=id_key
        )
        if self._mirror is not None:
            self._mirror.add_documents([chunk_node(chunk) for chunk in chunks], allow_update=True)
            self._forget(before - {chunk.chunk_id for chunk in chunks})
        return report

    def delete_sources(self, source_ids: Sequence[str], *, backend: IndexBackend) -> IndexReport:
        """Remove every chunk and vector of ``source_ids``."""
        before = self._ids_of_sources(source_ids)
        report = delete_sources(source_ids, store=self.ledger, backend=backend)
        self._forget(before)
        return report

    def delete_chunks(self, chunk_ids: Sequence[str], *, backend: IndexBackend) -> IndexReport:
        """Remove chunks by id, with their vectors."""
        report = delete_chunks(chunk_ids, store=self.ledger, backend=backend)
        self._forget(set(chunk_ids))
        return report

    def _ids_of_sources(self, source_ids: Iterable[str]) -> set[str]:
        if self._mirror is None:
            return set()
        return {chunk_id for source in set(source_ids) for chunk_id in self.ledger.ids_for_source(source)}

    def _forget(self, ids: Iterable[str]) -> None:
        if self._mirror is not None:
            for doc_id in sorted(ids):
                self._mirror.delete_document(doc_id, raise_error=False)


def to_hits(found: Sequence[NodeWithScore], *, id_key: str, chroma: bool) -> list[Hit]:
    """The vector store's answer as core hits; vectors naming no raw chunk are left out.

    A vector written by LangChain has no ``_node_content``: LlamaIndex reads it back with
    its legacy reader, which keeps ``doc_id`` in the metadata; one written here names
    the chunk in both the metadata and its ``SOURCE``.

    Args:
        found: Representation nodes with the store's scores.
        id_key: The metadata key naming the raw chunk.
        chroma: Whether the scores are Chroma's ``exp(-distance)`` (then turned into
            ``1 - distance``, the cosine similarity of the default cosine collection).
    """
    hits: list[Hit] = []
    for item in found:
        node = item.node
        chunk_id = node.metadata.get(id_key) or node.ref_doc_id
        if not chunk_id:
            _LOG.debug("vector %s names no raw chunk (no %r): skipped", node.node_id, id_key)
            continue
        score = 0.0 if item.score is None else float(item.score)
        hits.append(
            Hit(
                doc_id=str(chunk_id),
                kind=str(node.metadata.get("representation", "raw")),
                text=node.get_content(metadata_mode=MetadataMode.NONE),
                score=_cosine_similarity(score) if chroma else score,
                representation_id=node.node_id,
            )
        )
    return hits


def is_chroma(index: VectorStoreIndex) -> bool:
    """Whether the index's vector store is LlamaIndex's ``ChromaVectorStore``."""
    return index.vector_store.class_name() == _CHROMA


def chroma_metadata(index: VectorStoreIndex) -> Mapping[str, object] | None:
    """The Chroma collection's metadata (``None`` for another store)."""
    if not is_chroma(index):
        return None
    metadata = getattr(index.vector_store.client, "metadata", None)
    return metadata if isinstance(metadata, Mapping) else None


def _cosine_similarity(chroma_score: float) -> float:
    # exp(-d) is never 0 for a cosine distance (at most 2); a foreign score of 0 gets the
    # lowest cosine similarity rather than -inf, which JSON cannot carry.
    return max(1.0 + math.log(chroma_score), -1.0) if chroma_score > 0 else -1.0


def kind_filters(filters: MetadataFilters | None, kinds: Iterable[str]) -> MetadataFilters | None:
    """``filters`` and "the representation is one of ``kinds``", as one filter for a store query.

    The kind condition joins an ``and`` list as one more entry, so stores that do not
    nest filters (``SimpleVectorStore``) take it; ``or``/``not`` filters are nested.
    """
    wanted = frozenset(kinds)
    if wanted >= ALL_KINDS:
        return filters  # every kind: no filter (a store filter costs more than the search)
    by_kind = MetadataFilter(key="representation", value=sorted(wanted), operator=FilterOperator.IN)
    if filters is None:
        return MetadataFilters(filters=[by_kind])
    if filters.condition in (None, FilterCondition.AND):
        return MetadataFilters(filters=[*filters.filters, by_kind], condition=FilterCondition.AND)
    return MetadataFilters(filters=[filters, by_kind], condition=FilterCondition.AND)


def ledger_rescore(
    index: VectorStoreIndex,
    query_vector: Sequence[float],
    *,
    ledger: ChunkStore,
    searched: Sequence[Hit],
) -> Rescore:
    """Candidates re-scored from the ledger, as ``ChromaIndex`` and the LangChain retriever do.

    For a ledger that lists every vector of the index (the chunk store's file): each
    candidate's live vectors, their kinds and texts from the ledger and their embeddings
    as the writer recorded them (Chroma is asked by id only for vectors written without
    one). No filtered read of the collection, which costs a scan of it and, on a Chroma
    server, races a writer's deletes ("Error finding id"). Vectors the ledger never
    listed (another tool wrote them, such as langchain-chroma) keep the hits the last
    search found in ``searched``; vectors it lists but no longer as live are left out.
    """
    exact = rescore_from_ledger(index.vector_store.client.get, query_vector, store=ledger)

    def rescore(doc_ids: Sequence[str]) -> list[Hit]:
        hits = list(exact(doc_ids))
        wanted = set(doc_ids)
        others = [hit for hit in searched if hit.doc_id in wanted]
        listed = ledger.vector_states(hit.representation_id for hit in others)
        return hits + [hit for hit in others if hit.representation_id not in listed]

    return rescore


def can_rescore(index: VectorStoreIndex, filters: MetadataFilters | None) -> bool:
    """Whether :func:`chroma_rescore` applies: a Chroma store, and filters it can check here."""
    return is_chroma(index) and (
        filters is None or not any(isinstance(item, MetadataFilters) for item in filters.filters)
    )


def chroma_rescore(
    index: VectorStoreIndex,
    query_vector: Sequence[float],
    doc_ids: Sequence[str],
    *,
    id_key: str,
    filters: MetadataFilters | None,
) -> list[Hit]:
    """Every representation of ``doc_ids``, scored by cosine similarity to ``query_vector``.

    Read from the Chroma collection by a metadata filter on ``id_key`` (vectors and all),
    so the scores are exact whatever the HNSW search found. ``filters`` (flat, see
    :func:`can_rescore`) are checked here with LlamaIndex's own filter evaluation, so a
    filter on a representation's own keys holds as it did in the search.
    """
    collection = index.vector_store.client
    got = read_retrying(
        lambda: collection.get(
            where={id_key: {"$in": list(doc_ids)}}, include=["embeddings", "documents", "metadatas"]
        )
    )
    ids: list[str] = list(got["ids"])
    metadatas: list[Mapping[str, object] | None] = list(got["metadatas"] or [None] * len(ids))
    texts: list[str | None] = list(got["documents"] or [None] * len(ids))
    embeddings = got["embeddings"]
    if filters is not None:
        by_id = {vector_id: metadata or {} for vector_id, metadata in zip(ids, metadatas, strict=True)}
        keep = build_metadata_filter_fn(lambda vector_id: by_id[vector_id], filters)
        rows = [i for i, vector_id in enumerate(ids) if keep(vector_id)]
        ids, metadatas, texts = [ids[i] for i in rows], [metadatas[i] for i in rows], [texts[i] for i in rows]
        embeddings = [embeddings[i] for i in rows]
    return hits_from_vectors(
        query_vector, ids=ids, texts=texts, metadatas=metadatas, embeddings=embeddings, id_key=id_key
    )

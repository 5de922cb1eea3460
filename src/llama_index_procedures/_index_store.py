"""The multi-vector index on LlamaIndex stores: LlamaIndex types to and from the core's.

The translation layer under :class:`~llama_index_procedures.ProcedureMultiVectorRetriever`:

- :class:`IndexBackend` is the core's ``VectorBackend`` over a ``VectorStoreIndex``: each
  ``VectorRecord`` becomes a ``TextNode`` (id = representation id, text = representation
  text, metadata = the record's) whose ``SOURCE`` is the raw chunk, so the ``doc_id``
  LlamaIndex writes at the top level of a vector's metadata is the chunk id, as the
  LangChain adapter writes it.
- :func:`raw_chunks` and :func:`node_lookup` put the raw chunks in the core's
  ``ChunkStore`` (SQLite, which is also the vector ledger) or in any LlamaIndex
  ``BaseDocumentStore``, which the core's ``RawChunks`` mirrors from an in-memory ledger
  (:class:`DocumentStoreMirror`).
- :func:`to_hits` turns the vector store's answer into the core's ``Hit``, with Chroma's
  ``exp(-distance)`` turned back into cosine similarity so both frameworks score one
  index alike; :func:`vector_filter` gives the core's re-scoring the retriever's filters.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
from procedure_rag._core_api import (
    ALL_KINDS,
    PROBE_TEXT,
    Docstore,
    EmbeddingIdentity,
    Hit,
    RawChunks,
    StoredChunk,
    VectorFilter,
    VectorRecord,
    check_dimension,
    cosine_from_relevance,
    describe_model,
    embed_texts,
    stored_chunk,
    upsert,
)

__all__ = [
    "RESULT_KEYS",
    "DocumentStoreMirror",
    "IndexBackend",
    "chroma_metadata",
    "chunk_node",
    "embedding_identity",
    "is_chroma",
    "kind_filters",
    "node_lookup",
    "raw_chunks",
    "representation_node",
    "stored_chunks",
    "to_hits",
    "vector_filter",
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
    return _text_node(chunk.chunk_id, chunk.text, metadata, (_EMBED_EXCLUDED, _LLM_EXCLUDED), relationships)


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
    # node_to_metadata_dict writes ref_doc_id (the SOURCE) as the top-level doc_id.
    source: dict[NodeRelationship, RelatedNodeType] = {
        NodeRelationship.SOURCE: RelatedNodeInfo(node_id=chunk_id)
    }
    return _text_node(record.vector_id, record.text, metadata, (metadata, metadata), source)


def _text_node(
    node_id: str,
    text: str,
    metadata: dict[str, Any],
    excluded: tuple[Iterable[str], Iterable[str]],
    relationships: dict[NodeRelationship, RelatedNodeType],
) -> TextNode:
    """A ``TextNode``; ``excluded`` are the metadata keys its embedding and its LLM text leave out."""
    embed_excluded, llm_excluded = excluded
    return TextNode(
        id_=node_id,
        text=text,
        metadata=metadata,
        excluded_embed_metadata_keys=list(embed_excluded),
        excluded_llm_metadata_keys=list(llm_excluded),
        relationships=relationships,
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

    def add(
        self, records: Sequence[VectorRecord], *, known: Mapping[str, Sequence[float]] | None = None
    ) -> list[list[float]]:
        """Embed and store ``records``, replacing any with the same ids; return their embeddings.

        Each distinct text is embedded once (shortest first), and not at all when ``known``
        (the index's own vectors, by text) holds it.

        Raises:
            EmbeddingMismatchError: When the model gives a vector of another dimension.
        """
        nodes = [representation_node(record, str(record.metadata[self._id_key])) for record in records]
        # One call: the model batches by its own embed_batch_size.
        vectors = embed_texts(
            [record.text for record in records],
            self._embed_model.get_text_embedding_batch,
            known=known,
            batch_size=max(1, len(records)),
        )
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
    (chroma-core/chroma#7758, chromadb 1.5.9): the core's ``upsert`` replaces
    it in place, metadata included, and keeps a vector stored already.

    Returns:
        The vectors the collection holds for ``nodes``, in order.
    """
    store = index.vector_store
    flat = bool(getattr(store, "flat_metadata", True))
    return upsert(
        store.client,
        ids=[node.node_id for node in nodes],
        embeddings=[node.get_embedding() for node in nodes],
        metadatas=[node_to_metadata_dict(node, remove_text=True, flat_metadata=flat) for node in nodes],
        documents=[node.get_content(metadata_mode=MetadataMode.NONE) for node in nodes],
    )


@dataclass(frozen=True, slots=True)
class DocumentStoreMirror:
    """A LlamaIndex docstore as the core's ``RawChunks`` mirrors raw chunks into it."""

    docstore: BaseDocumentStore

    def put(self, chunks: Sequence[StoredChunk]) -> None:
        """Store ``chunks`` as raw nodes, replacing nodes with the same ids."""
        self.docstore.add_documents([chunk_node(chunk) for chunk in chunks], allow_update=True)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        """Delete the nodes with ``chunk_ids`` (ids not stored are ignored)."""
        for doc_id in chunk_ids:
            self.docstore.delete_document(doc_id, raise_error=False)


def raw_chunks(docstore: Docstore | BaseDocumentStore) -> RawChunks:
    """The core's raw chunks over ``docstore``: the docstore itself, or a mirrored LlamaIndex docstore."""
    return RawChunks(docstore if isinstance(docstore, Docstore) else DocumentStoreMirror(docstore))


def node_lookup(docstore: Docstore | BaseDocumentStore) -> Callable[[Sequence[str]], list[TextNode | None]]:
    """Raw nodes by id from ``docstore``, in order, ``None`` for an id not stored."""
    if isinstance(docstore, Docstore):
        return lambda ids: [None if chunk is None else chunk_node(chunk) for chunk in docstore.get(ids)]

    def lookup(ids: Sequence[str]) -> list[TextNode | None]:
        found = [docstore.get_document(doc_id, raise_error=False) for doc_id in ids]
        return [node if isinstance(node, TextNode) else None for node in found]

    return lookup


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
                score=cosine_from_relevance(score) if chroma else score,
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


def vector_filter(filters: MetadataFilters | None) -> VectorFilter | None:
    """``filters`` as the core's re-scoring applies them (``None`` for no filters).

    Flat filters are checked on each re-scored vector's metadata with LlamaIndex's own
    filter evaluation, so a filter on a representation's own keys holds as it did in the
    search; nested ones cannot be checked there (re-scoring is then off).
    """
    if filters is None:
        return None
    if any(isinstance(item, MetadataFilters) for item in filters.filters):
        return VectorFilter()

    def check(metadata: Mapping[str, object]) -> bool:
        return build_metadata_filter_fn(lambda _: metadata, filters)("")

    return VectorFilter(check=check)

"""Search representations as LlamaIndex ``IndexNode``s, for ``RecursiveRetriever`` and kin.

Each :class:`~procedure_rag.Representation` becomes one ``IndexNode``: its text to embed,
``id_`` = the representation's stable id, ``index_id`` = the raw chunk's id, so a
retriever that follows index nodes returns the raw chunk node. The metadata keys are the
LangChain adapter's (``doc_id``, ``representation``…): both frameworks read one index.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llama_index.core.llms import LLM
from llama_index.core.schema import BaseNode, IndexNode, MetadataMode, TextNode

from llama_index_procedures._models import LlamaIndexModel
from procedure_rag import (
    Chunk,
    ChunkType,
    Representation,
    RepresentationCache,
    RepresentationKind,
    chunk_from_metadata,
)
from procedure_rag._core_api import arepresent, represent

__all__ = [
    "agenerate_representation_nodes",
    "generate_representation_nodes",
    "representations_to_index_nodes",
]


def representations_to_index_nodes(
    representations: Iterable[Representation], *, metadata: Mapping[str, Any] | None = None
) -> list[IndexNode]:
    """Return one ``IndexNode`` per representation, ready for a vector index.

    Args:
        representations: The representations.
        metadata: Metadata every node gets. The representation's own metadata is
            written over it, then the keys ``doc_id`` (raw chunk id), ``representation``
            (kind), ``representation_index``, ``generator`` and ``fallback``.

    Returns:
        The nodes, in the order of ``representations``: ``id_`` is the representation
        id, ``index_id`` the raw chunk id, ``text`` the representation's text. No
        metadata key is embedded or shown to an LLM, so the vector is the text's alone,
        as in the LangChain adapter.

    """
    nodes = []
    for rep in representations:
        meta = rep.store_metadata(metadata)
        node = TextNode(
            id_=rep.representation_id,
            text=rep.text,
            metadata=meta,
            excluded_embed_metadata_keys=list(meta),
            excluded_llm_metadata_keys=list(meta),
        )
        nodes.append(IndexNode.from_text_node(node, index_id=rep.chunk_id))
    return nodes


def generate_representation_nodes(
    nodes: Iterable[BaseNode | Chunk],
    *,
    llm: LLM | LlamaIndexModel | None = None,
    kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
    cache: RepresentationCache | None = None,
    max_concurrency: int = 4,
) -> list[IndexNode]:
    """Generate the representations of chunk nodes and return them as index nodes.

    Args:
        nodes: Nodes from :class:`~llama_index_procedures.ProcedureNodeParser` (their
            metadata holds the chunk's structure, which
            :func:`procedure_rag.chunk_from_metadata` reads back), or core chunks.
        llm: ``None`` for the offline deterministic generators; else a LlamaIndex LLM
            (wrapped in :class:`LlamaIndexModel`), or a ``LlamaIndexModel`` to set its
            identity or image support. For retries, timeouts or images use
            :class:`~procedure_rag.LLMGenerator` and
            :func:`representations_to_index_nodes` directly.
        kinds: Kinds per chunk type, over the defaults.
        cache: Cache of model replies (ignored without a model).
        max_concurrency: Most model calls in flight.

    Returns:
        The representation nodes (see :func:`representations_to_index_nodes`).

    Raises:
        ValueError: When a node's metadata was not written by this package.

    """
    core = _chunks(nodes)
    found = represent(core, model=_model(llm), kinds=kinds, cache=cache, max_concurrency=max_concurrency)
    return representations_to_index_nodes(found)


async def agenerate_representation_nodes(
    nodes: Iterable[BaseNode | Chunk],
    *,
    llm: LLM | LlamaIndexModel | None = None,
    kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
    cache: RepresentationCache | None = None,
    max_concurrency: int = 4,
) -> list[IndexNode]:
    """The async twin of :func:`generate_representation_nodes` (model calls with ``achat``)."""
    core = _chunks(nodes)
    found = await arepresent(
        core, model=_model(llm), kinds=kinds, cache=cache, max_concurrency=max_concurrency
    )
    return representations_to_index_nodes(found)


def _chunks(items: Iterable[BaseNode | Chunk]) -> Sequence[Chunk]:
    return [
        item
        if isinstance(item, Chunk)
        else chunk_from_metadata(item.get_content(metadata_mode=MetadataMode.NONE), item.metadata)
        for item in items
    ]


def _model(llm: LLM | LlamaIndexModel | None) -> LlamaIndexModel | None:
    if llm is None or isinstance(llm, LlamaIndexModel):
        return llm
    return LlamaIndexModel(llm)

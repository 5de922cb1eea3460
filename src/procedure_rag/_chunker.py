"""The chunker: the pipeline as a short list of passes."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from procedure_rag._options import ChunkerOptions
from procedure_rag._types import Chunk, LayoutElement

__all__ = ["ProcedureChunker", "chunk", "iter_chunks"]


class ProcedureChunker:
    """Turns a document into procedure-block chunks (children) and their parents."""

    def __init__(self, options: ChunkerOptions | None = None) -> None:
        self._options = options or ChunkerOptions()

    @property
    def options(self) -> ChunkerOptions:
        """The validated options."""
        return self._options

    def length(self, text: str) -> int:
        """Measure ``text`` with the configured length function."""
        raise NotImplementedError

    def iter_chunks(self, text: str | bytes, *, source_id: str | None = None) -> Iterator[Chunk]:
        """Yield the chunks of one document (children in reading order, each parent after its last child)."""
        raise NotImplementedError

    def chunk(self, text: str | bytes, *, source_id: str | None = None) -> list[Chunk]:
        """Return :meth:`iter_chunks` as a list."""
        return list(self.iter_chunks(text, source_id=source_id))

    def iter_chunks_from_elements(
        self, elements: Sequence[LayoutElement], *, source_id: str, language: str | None = None
    ) -> Iterator[Chunk]:
        """Yield chunks from elements a reader already produced."""
        raise NotImplementedError


def iter_chunks(
    text: str | bytes, *, source_id: str | None = None, options: ChunkerOptions | None = None
) -> Iterator[Chunk]:
    """Yield the chunks of ``text``; see :meth:`ProcedureChunker.iter_chunks`."""
    return ProcedureChunker(options).iter_chunks(text, source_id=source_id)


def chunk(
    text: str | bytes, *, source_id: str | None = None, options: ChunkerOptions | None = None
) -> list[Chunk]:
    """Return the chunks of ``text`` as a list."""
    return list(iter_chunks(text, source_id=source_id, options=options))

"""``ProcedureLoader``: files read by procedure-rag's own readers, as LangChain chunk documents.

The frameworks' own loaders hand a splitter text that has lost what a manual's structure
is made of: ``Docx2txtLoader`` drops Word's automatic list numbers and heading styles,
an Excel procedure sheet loses its columns. This loader reads the file itself (PDF,
Word, Excel, PowerPoint, HTML, Markdown, reStructuredText, plain text) and yields the
procedure-block chunks as documents, as ``DoclingLoader``'s chunk export does: what
:class:`~langchain_procedures.ProcedureTextSplitter` gives, with no splitter needed
after it (one given these documents passes them through).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

from langchain_procedures._splitter import ProcedureTextSplitter
from procedure_rag._core_api import check_source_format

__all__ = ["ProcedureLoader"]

FilePath = str | os.PathLike[str]


class ProcedureLoader(BaseLoader):
    """Load files as procedure-block chunk documents, each file read by its own reader.

    Each chunk is one ``Document``: its text and metadata are those
    :class:`~langchain_procedures.ProcedureTextSplitter` gives a chunk (the structural
    keys of :data:`procedure_rag.STRUCTURAL_KEYS`, ``page``/``pages`` where the file has
    pages), with ``source`` the path as given, and its ``id`` the chunk's stable id.

    Args:
        file_path: A path, or a list of paths, loaded in order.
        splitter: The splitter whose options chunk the files (budget, parents, language,
            lexicons…); ``None`` for ``ProcedureTextSplitter.from_tiktoken_encoder()``:
            400 ``cl100k_base`` tokens (the core's default budget), children only (the
            splitter's default).
        source_format: ``"auto"`` (from the suffix and the content) or one of
            :data:`procedure_rag.FORMATS`, for every file.

    Raises:
        TypeError: When ``file_path`` holds something other than paths.
        ValueError: For a bad ``source_format`` (at construction); while loading, a file
            that cannot be read (its path and the reason in the message).
        FileNotFoundError: While loading, a path that does not exist.

    Example:
        >>> docs = ProcedureLoader(["manual.docx", "sheet.xlsx"]).load()  # doctest: +SKIP
        >>> Chroma.from_documents(docs, embeddings)  # doctest: +SKIP
    """

    def __init__(
        self,
        file_path: FilePath | Sequence[FilePath],
        *,
        splitter: ProcedureTextSplitter | None = None,
        source_format: str = "auto",
    ) -> None:
        paths = [file_path] if isinstance(file_path, str | os.PathLike) else list(file_path)
        for path in paths:
            if not isinstance(path, str | os.PathLike):
                msg = f"file_path must be a path or a list of paths, got {type(path).__name__}"
                raise TypeError(msg)
        self.file_paths = [str(p) for p in paths]
        self.splitter = splitter if splitter is not None else ProcedureTextSplitter.from_tiktoken_encoder()
        self.source_format = check_source_format(source_format)

    def lazy_load(self) -> Iterator[Document]:
        """Yield the chunk documents of each file in turn, a file read as its chunks are asked for."""
        for path in self.file_paths:
            yield from self.splitter.split_file(Path(path), source=path, source_format=self.source_format)

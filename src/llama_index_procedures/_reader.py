"""``ProcedureReader``: files read by procedure-rag's own readers, as LlamaIndex chunk documents.

``SimpleDirectoryReader`` reads Word with docx2txt, which drops Word's automatic list
numbers and heading styles, and Excel through pandas, which flattens a procedure sheet
into rows of text. This reader reads the file itself (PDF, Word, Excel, PowerPoint,
HTML, Markdown, reStructuredText, plain text) and gives one ``Document`` per
procedure-block chunk; :class:`~llama_index_procedures.ProcedureNodeParser` passes them
through as nodes, parents and children linked. Plug it in per suffix::

    SimpleDirectoryReader("manuals", file_extractor={".docx": ProcedureReader(), ".xlsx": ProcedureReader()})
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from llama_index.core.readers.base import BaseReader
from llama_index.core.schema import Document

from llama_index_procedures._node_parser import ProcedureNodeParser
from procedure_rag._core_api import check_source_format

__all__ = ["ProcedureReader"]


class ProcedureReader(BaseReader):
    """Read a file into procedure-block chunk documents, each file by its own reader.

    Args:
        parser: The node parser whose options chunk the files (budget, parents,
            tokenizer, language…); ``None`` for ``ProcedureNodeParser()``.
        source_format: ``"auto"`` (from the suffix and the content) or one of
            :data:`procedure_rag.FORMATS`, for every file.

    Raises:
        ValueError: For a bad ``source_format`` (at construction); while loading, a file
            that cannot be read (its path and the reason in the message).
        FileNotFoundError: While loading, a path that does not exist.
    """

    def __init__(self, *, parser: ProcedureNodeParser | None = None, source_format: str = "auto") -> None:
        self.parser = parser if parser is not None else ProcedureNodeParser()
        self.source_format = check_source_format(source_format)  # now, not at the first file

    def lazy_load_data(
        self, file: str | Path, extra_info: dict[str, Any] | None = None, fs: object = None
    ) -> Iterator[Document]:
        """Yield the chunk documents of ``file``; ``extra_info`` goes into each one's metadata.

        ``SimpleDirectoryReader`` passes its file metadata as ``extra_info``, and ``fs``
        only for a file system other than the local one, which this reader does not read.

        Raises:
            ValueError: When ``fs`` is given, or the file cannot be read.
            FileNotFoundError: When ``file`` does not exist.
        """
        if fs is not None:
            msg = (
                f"ProcedureReader reads local files only; got the file system {type(fs).__name__} for {file}"
            )
            raise ValueError(msg)
        yield from self.parser.file_documents(
            Path(file), extra_info=extra_info, source_format=self.source_format
        )

"""Error types the readers and the docstores raise."""

from __future__ import annotations

__all__ = ["DocstoreError", "ReaderError"]


class ReaderError(ValueError):
    """A source a reader cannot use: malformed parser output, or an unreadable file.

    The message names the format, the record (a parser's own id, or its index in
    the output when it has none) and the problem, e.g.
    ``textract record 'b7c1…': BoundingBox Left is 1.7, outside the page``.

    Attributes:
        source_format: The reader's format name (``"unstructured"``, ``"docling"``…).
        record: The record's id or position, as a string.
        problem: What is wrong with it.
    """

    def __init__(self, source_format: str, record: str, problem: str) -> None:
        self.source_format = source_format
        self.record = record
        self.problem = problem
        super().__init__(f"{source_format} record {record!r}: {problem}")


class DocstoreError(ValueError):
    """A docstore that cannot be opened or used, in one line naming it and the reason.

    A PostgreSQL server that cannot be reached or refuses the login, a URL libpq cannot
    read, a database without the docstore's schema or with one of another version, a
    server that fails a call (it restarted, say: the call can be made again).
    """

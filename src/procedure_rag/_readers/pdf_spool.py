"""Records kept on disk, not in memory, while a long PDF is laid out in passes.

The layout of a PDF is decided over the whole document (running lines, the body font,
headings, contents lists, the text's right edge), but holding every page's lines until
the last page is read makes memory grow with the page count. The reader instead writes
each page (its lines, later its blocks) to a :class:`Spool` and reads it back in every
pass, so it holds one page at a time and the summaries the passes count.

A spool is an unnamed temporary file (:func:`tempfile.TemporaryFile`): on POSIX it is
removed from the directory as soon as it is made, so nothing is left behind even when
reading stops on an error or the process is killed; closing it frees the disk space.
"""

from __future__ import annotations

import pickle
import tempfile
from array import array
from collections.abc import Iterator
from types import TracebackType
from typing import Generic, TypeVar

__all__ = ["Spool"]

T = TypeVar("T")


class Spool(Generic[T]):
    """Records appended to a temporary file and read back by index, one at a time.

    Each record is pickled on its own, so objects it shares (a block's lines and its
    page's lines) are shared again when it is read back; only the offsets, eight bytes
    a record, stay in memory.
    """

    def __init__(self) -> None:
        # Closed by close(), which the reader calls in a finally.
        self._file = tempfile.TemporaryFile(prefix="procedure-rag-pdf-")  # noqa: SIM115
        self._offsets = array("q")
        self._end = 0

    def append(self, record: T) -> None:
        """Write ``record`` after the last one."""
        self._file.seek(self._end)
        self._offsets.append(self._end)
        pickle.dump(record, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._end = self._file.tell()

    def __len__(self) -> int:
        return len(self._offsets)

    def __getitem__(self, index: int) -> T:
        self._file.seek(self._offsets[index])
        record: T = pickle.load(self._file)  # noqa: S301 - our own records, written above
        return record

    def __iter__(self) -> Iterator[T]:
        for index in range(len(self._offsets)):
            yield self[index]

    def close(self) -> None:
        """Delete the file (idempotent)."""
        self._file.close()

    def __enter__(self) -> Spool[T]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

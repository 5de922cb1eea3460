"""The text a streaming reader has written so far, sliced by absolute offsets, its consumed part released.

A file reader that yields its elements one page at a time (the PDF reader) also
writes the text their spans point into. The chunker needs that text only around
the section it is packing (to map a table's rows or a cut step's pieces back to
it), so it reads through a :class:`TextWindow`: the reader appends, the chunker
slices with the same offsets the spans hold and releases what lies before the
sections it has finished. Memory then follows the longest section, not the
document.
"""

from __future__ import annotations

__all__ = ["TextWindow"]


class TextWindow:
    """Text appended at the end and released from the start; offsets stay those of the whole text.

    ``len(window)`` is the whole text's length so far (released characters count),
    so a span ``Span(a, b)`` reads ``window[a:b]`` while ``a`` is not released.
    """

    __slots__ = ("_base", "_end", "_parts", "_text")

    def __init__(self) -> None:
        self._text = ""  # the kept text, from offset ``_base``
        self._parts: list[str] = []  # appended since the last read
        self._base = 0
        self._end = 0

    def append(self, text: str) -> None:
        """Add ``text`` at the end."""
        self._parts.append(text)
        self._end += len(text)

    def __len__(self) -> int:
        return self._end

    @property
    def released(self) -> int:
        """The offset before which the text is gone."""
        return self._base

    def __getitem__(self, key: slice) -> str:
        """The text of ``key``'s absolute offsets (a slice with no step).

        Raises:
            IndexError: When the slice starts in the released part.
        """
        start = 0 if key.start is None else key.start
        stop = self._end if key.stop is None else key.stop
        if key.step not in (None, 1) or start < 0 or stop < 0:
            msg = "a text window takes slices of offsets from the start, with no step"
            raise IndexError(msg)
        if start < self._base and start < stop:
            msg = f"offset {start} of the text was released (the window starts at {self._base})"
            raise IndexError(msg)
        self._join()
        return self._text[start - self._base : max(start, stop) - self._base]

    def text(self) -> str:
        """All of the kept text (the whole text when nothing was released)."""
        self._join()
        return self._text

    def release(self, before: int) -> None:
        """Forget the text before offset ``before`` (never what is not written yet)."""
        before = min(before, self._end)
        if before <= self._base:
            return
        self._join()
        self._text = self._text[before - self._base :]
        self._base = before

    def _join(self) -> None:
        if self._parts:
            self._text += "".join(self._parts)
            self._parts.clear()

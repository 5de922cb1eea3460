"""Page furniture of a PDF: running headers, footers, page numbers and contents pages.

* **Headers and footers** are lines in a page's top or bottom margin whose text,
  with its numbers blanked, recurs in the same margin on two in five pages and on
  at least two (``Exastro 12``, a chapter title over every page); a line in the margin that is only a page
  number (``12``, ``- 12 -``, ``－ 15 －``, ``Page 3 of 9``, ``3 / 62``) is one too,
  on any page, and so is, in a tagged PDF, a margin line outside the tag tree and beyond
  the page's tagged text (what Word and LibreOffice mark as a pagination artifact: found
  on a one-page document too). The
  number such a line prints is the page's ``printed_page``.
* **Contents pages** hold lines that end in a leader and a page number (``概要
  ........ 3``), follow a 「目次」/"Contents" title, or list, line after line, the
  headings the rest of the document has. Their lines are kept as text, never as
  steps or headings.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from procedure_rag._readers.furniture_rules import (
    NUMBER_PREFIX,
    SENTENCE,
    is_contents_title,
    normalised,
    printed_number,
    shape,
    single_number,
    toc_line,
)
from procedure_rag._readers.pdf_pages import Line, PageLines

__all__ = ["RunningLines", "contents_page", "heading_key", "normalised"]

# The share of a page's height, from its top or bottom edge, that is its margin.
_MARGIN = 0.09
# A PDF is tagged when at least this share of its lines belong to a tag-tree element.
_TAGGED_SHARE = 0.8


@dataclass
class RunningLines:
    """The margin lines of every page, counted: a pass over the pages fills it, page by page.

    A line in a page's margin whose shape (its text with numbers blanked) recurs on two
    pages of a short document, or two in five of a long one, is running. Whether the PDF
    is tagged is only known at the end, and in a tagged PDF a margin line beyond the
    tagged text is furniture uncounted, so both counts are kept.
    """

    pages: int = 0
    lines: int = 0
    tagged_lines: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    tagged_counts: Counter[str] = field(default_factory=Counter)

    def add(self, page: PageLines) -> None:
        """Count ``page``'s lines and the shapes of its margin lines."""
        self.pages += 1
        self.lines += len(page.lines)
        self.tagged_lines += sum(1 for line in page.lines if line.tag_key)
        for counts, tagged in ((self.counts, False), (self.tagged_counts, True)):
            _, _, keyed = _margin_kinds(page, tagged=tagged)
            counts.update({key for _, key in keyed})

    @property
    def tagged(self) -> bool:
        """Whether the PDF is tagged: nearly all its lines belong to an element of the tag tree."""
        return bool(self.lines) and self.tagged_lines >= _TAGGED_SHARE * self.lines

    def on_page(self, page: PageLines) -> tuple[set[int], int | None]:
        """The indexes of ``page``'s header and footer lines, and the page number it prints."""
        tagged = self.tagged
        counts = self.tagged_counts if tagged else self.counts
        found, printed, keyed = _margin_kinds(page, tagged=tagged)
        # On two pages of a short document, or two in five of a long one's.
        threshold = max(2, math.ceil(0.4 * self.pages))
        for i, key in keyed:
            if counts[key] >= threshold:
                found.add(i)
                number = single_number(page.lines[i].text)
                if printed is None and number is not None:
                    printed = number
        return found, printed


def _margin_lines(page: PageLines) -> list[tuple[int, Line, str]]:
    out = []
    for i, line in enumerate(page.lines):
        if line.bottom <= page.height * _MARGIN or line.top >= page.height * (1 - _MARGIN):
            where = "top" if line.bottom <= page.height * _MARGIN else "bottom"
            out.append((i, line, where))
    return out


def _margin_kinds(page: PageLines, *, tagged: bool) -> tuple[set[int], int | None, list[tuple[int, str]]]:
    """A page's margin lines: those that are furniture alone, the number printed, the others' shapes."""
    found: set[int] = set()
    printed: int | None = None
    keyed: list[tuple[int, str]] = []
    body = [line for line in page.lines if line.tag_key] if tagged else []
    for i, line, where in _margin_lines(page):
        number = printed_number(line.text)
        if number is not None:
            found.add(i)
            if printed is None:
                printed = number
            continue
        if body and not line.tag_key and _outside(line, where, body):
            found.add(i)  # an artifact of a tagged PDF: pagination
            continue
        keyed.append((i, where + shape(line.text)))
    return found, printed, keyed


def heading_key(text: str) -> str:
    """What a contents page's line and a heading are compared by."""
    return normalised(NUMBER_PREFIX.sub("", text))


def _outside(line: Line, where: str, body: list[Line]) -> bool:
    """Whether ``line`` lies beyond the page's tagged text: above all of it, or below."""
    if where == "top":
        return line.bottom <= min(b.top for b in body)
    return line.top >= max(b.bottom for b in body)


def contents_page(page: PageLines, furniture: set[int], last_page: dict[str, int], *, after: bool) -> bool:
    """Whether ``page`` is a contents page.

    Args:
        page: The page's lines.
        furniture: The indexes of its header and footer lines.
        last_page: :func:`heading_key` of each heading known (outline entries or
            font-size candidates) -> the last page it is on, to recognise a page that
            lists the headings after it.
        after: Whether the page before is a contents page.
    """
    body = [line for i, line in enumerate(page.lines) if i not in furniture]
    if not body:
        return False
    texts = [line.text for line in body]
    listed = sum(1 for t in texts if last_page.get(heading_key(t), -1) > page.number)
    dotted = sum(1 for t in texts if toc_line(t))
    titled = any(is_contents_title(t) for t in texts[:3])
    # A contents page goes on: its lines are numbered entries (「1. はじめに」), no sentences.
    entries = sum(1 for t in texts if NUMBER_PREFIX.match(unicodedata.normalize("NFKC", t).strip())
                  and not SENTENCE.search(t))  # fmt: skip
    return bool(
        dotted >= 3
        or (titled and (dotted or listed >= 2 or entries >= 3))
        or (len(texts) >= 4 and listed >= 0.6 * len(texts))
        or (after and len(texts) >= 2 and max(listed, entries) >= 0.5 * len(texts))
    )

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
from collections.abc import Iterable, Sequence
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

__all__ = ["Furniture", "find_furniture", "normalised"]

# The share of a page's height, from its top or bottom edge, that is its margin.
_MARGIN = 0.09
# A PDF is tagged when at least this share of its lines belong to a tag-tree element.
_TAGGED_SHARE = 0.8


@dataclass
class Furniture:
    """What :func:`find_furniture` found.

    Attributes:
        lines: ``(page number, line index)`` of every header or footer line.
        printed: Page number -> the number printed on it, where one is.
        contents: Page numbers of contents pages.
    """

    lines: set[tuple[int, int]] = field(default_factory=set)
    printed: dict[int, int] = field(default_factory=dict)
    contents: set[int] = field(default_factory=set)


def _margin_lines(page: PageLines) -> list[tuple[int, Line, str]]:
    out = []
    for i, line in enumerate(page.lines):
        if line.bottom <= page.height * _MARGIN or line.top >= page.height * (1 - _MARGIN):
            where = "top" if line.bottom <= page.height * _MARGIN else "bottom"
            out.append((i, line, where))
    return out


def find_furniture(pages: Sequence[PageLines], headings: Iterable[tuple[int, str]] = ()) -> Furniture:
    """Find headers, footers, printed page numbers and contents pages.

    Args:
        pages: Every page's lines.
        headings: ``(page, text)`` of the headings known so far (outline entries or
            font-size candidates), to recognise contents pages that list them.
    """
    found = Furniture()
    keys: dict[tuple[int, int], str] = {}
    counts: Counter[str] = Counter()
    tagged = _tagged(pages)
    for page in pages:
        seen = set()
        body = [line for line in page.lines if line.tag_key] if tagged else []
        for i, line, where in _margin_lines(page):
            number = printed_number(line.text)
            if number is not None:
                found.lines.add((page.number, i))
                found.printed.setdefault(page.number, number)
                continue
            if body and not line.tag_key and _outside(line, where, body):
                found.lines.add((page.number, i))  # an artifact of a tagged PDF: pagination
                continue
            key = where + shape(line.text)
            keys[(page.number, i)] = key
            if key not in seen:
                seen.add(key)
                counts[key] += 1
    # On two pages of a short document, or two in five of a long one's.
    threshold = max(2, math.ceil(0.4 * len(pages)))
    for (page_number, i), key in keys.items():
        if counts[key] >= threshold:
            found.lines.add((page_number, i))
            number = single_number(pages[page_number - 1].lines[i].text)
            if number is not None:
                found.printed.setdefault(page_number, number)
    found.contents = _contents_pages(pages, found.lines, list(headings))
    return found


def _tagged(pages: Sequence[PageLines]) -> bool:
    """Whether the PDF is tagged: nearly all its lines belong to an element of the tag tree."""
    lines = [line for page in pages for line in page.lines]
    return bool(lines) and sum(1 for line in lines if line.tag_key) >= _TAGGED_SHARE * len(lines)


def _outside(line: Line, where: str, body: list[Line]) -> bool:
    """Whether ``line`` lies beyond the page's tagged text: above all of it, or below."""
    if where == "top":
        return line.bottom <= min(b.top for b in body)
    return line.top >= max(b.bottom for b in body)


def _contents_pages(
    pages: Sequence[PageLines], furniture: set[tuple[int, int]], headings: list[tuple[int, str]]
) -> set[int]:
    out: set[int] = set()
    for page in pages:
        body = [line for i, line in enumerate(page.lines) if (page.number, i) not in furniture]
        if not body:
            continue
        texts = [line.text for line in body]
        later = {normalised(NUMBER_PREFIX.sub("", t)) for p, t in headings if p > page.number}
        listed = sum(1 for t in texts if normalised(NUMBER_PREFIX.sub("", t)) in later)
        dotted = sum(1 for t in texts if toc_line(t))
        titled = any(is_contents_title(t) for t in texts[:3])
        after_contents = page.number - 1 in out
        # A contents page goes on: its lines are numbered entries (「1. はじめに」), no sentences.
        entries = sum(1 for t in texts if NUMBER_PREFIX.match(unicodedata.normalize("NFKC", t).strip())
                      and not SENTENCE.search(t))  # fmt: skip
        if (
            dotted >= 3
            or (titled and (dotted or listed >= 2 or entries >= 3))
            or (len(texts) >= 4 and listed >= 0.6 * len(texts))
            or (after_contents and len(texts) >= 2 and max(listed, entries) >= 0.5 * len(texts))
        ):
            out.add(page.number)
    return out

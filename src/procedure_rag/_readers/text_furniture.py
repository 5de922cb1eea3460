"""Running headers and footers, and contents lines, of plain text extracted from pages.

A PDF loader (LangChain's ``PyPDFLoader``, LlamaIndex's PDF reader) gives one text per
page; joined by form feeds, the plain-text reader reads them as one text. This module
finds, by the rules of :mod:`procedure_rag._readers.furniture_rules`:

* **running lines**: among the first and the last two non-blank lines of each page, a
  line whose shape (digits as ``#``) is at the same edge of more than half of the pages
  with text, and of two at least (``12/1/26, 10:00 AM Title`` and ``file:///… 3/5``
  printed by a browser, ``HoloLens operations guide`` over every page, ``6Exastro`` where
  pypdf glued the page number to the header). A shape seen in the middle of pages too
  (a table's header row repeated on each page, "Back to top" closing every section) is
  not running; a second line from the edge is running only when the line nearer the
  edge is furniture too; a shape of fewer than three characters besides its digits
  only when it is a page number (``- # -``); and a page keeps one line at least (a
  short page's only body line may look like a running line). A running line that prints one number
  (``Exastro 12``, ``－ 12 －``) gives its page's printed number.
* **contents lines**: lines ending in a dotted leader and a page number (three or more
  in the text; a line between two of them is the first line of a wrapped entry), and
  after a 「目次」/"Contents" title, the lines whose title (number and leader removed)
  comes again later in the text, each after the one before it did (one line at a time
  may differ: a wrapped entry, a heading the text wraps). They are kept as text, never
  steps or headings.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from procedure_rag._readers.furniture_rules import (
    entry_title,
    is_contents_title,
    printed_number,
    shape,
    single_number,
    toc_line,
)
from procedure_rag._types import ElementKind

__all__ = ["RunningLines", "find_contents_lines", "find_running_lines", "has_contents_cue"]

#: ``(body offset, end offset)`` of a non-blank line.
TextLine = tuple[int, int]

_EDGE = 2  # lines from a page's top and from its bottom where running lines are
_AWAY = 0.1  # a running shape is seen away from the edges at most this share of its pages
_MIN_CHARS = 3  # characters besides digits a running line needs, unless it is a page number
_MAX_LINE = 300  # longer lines are never furniture (and are not shaped)
_MIN_LEADERS = 3  # dotted-leader lines a text needs before they are taken as contents
_MAX_ENTRY = 120  # a contents entry is a short line
_CUE = re.compile(
    r"(?:^|(?<=[\r\f]))[ \t\u3000]*(?:目[ \t\u3000]*次|もくじ|contents|table of contents|inhalt|sommaire)"
    r"[ \t\u3000]*(?=[\r\n\f]|\Z)"
    r"|(?:[.．·・…‥][ \t]*){3}[0-9０-９]",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class RunningLines:
    """What :func:`find_running_lines` found.

    Attributes:
        kinds: Body offset of each running line -> ``PAGE_HEADER`` or ``PAGE_FOOTER``.
        printed: Page index -> the number a running line prints on it.
    """

    kinds: dict[int, ElementKind] = field(default_factory=dict)
    printed: dict[int, int] = field(default_factory=dict)


def find_running_lines(
    text: str, pages: Sequence[Sequence[TextLine]], known: Mapping[int, ElementKind]
) -> RunningLines:
    """Find the running headers and footers of pages of text (see the module docstring).

    Args:
        text: The whole text.
        pages: Each page's non-blank lines, in order.
        known: Furniture found before (page-number footers): it counts as furniture at an
            edge, and its page keeps the number it printed.
    """
    shapes = [[shape(text[b:e]) if e - b <= _MAX_LINE else "" for b, e in lines] for lines in pages]
    edges: Counter[tuple[str, str]] = Counter()
    middle: Counter[str] = Counter()
    for page in shapes:
        n = len(page)
        seen = {("top", s) for s in page[:_EDGE]} | {("bottom", s) for s in page[max(0, n - _EDGE) :]}
        edges.update(key for key in seen if key[1])
        middle.update(page[_EDGE : n - _EDGE])
    with_text = sum(1 for lines in pages if lines)

    def running(where: str, s: str) -> bool:
        count = edges[(where, s)]
        return bool(s) and count >= 2 and 2 * count > with_text and middle[s] <= _AWAY * count

    found = RunningLines()
    for index, (lines, page) in enumerate(zip(pages, shapes, strict=True)):
        numbered = any(body in known for body, _ in lines)
        left = sum(1 for body, _ in lines if body not in known)  # a page keeps a line of its own
        for where, indexes in _edges(len(lines)):
            for i in indexes:
                body, end = lines[i]
                if body in known or body in found.kinds:
                    continue
                if left <= 1:
                    break
                line = text[body:end]
                number = printed_number(line)
                if not running(where, page[i]) or (
                    number is None and len(page[i].replace("#", "")) < _MIN_CHARS
                ):
                    break
                found.kinds[body] = ElementKind.PAGE_HEADER if where == "top" else ElementKind.PAGE_FOOTER
                left -= 1
                number = number if number is not None else single_number(line)
                if number is not None and not numbered:
                    found.printed.setdefault(index, number)
    return found


def _edges(n: int) -> tuple[tuple[str, range], tuple[str, range]]:
    """The indexes of a page's top and bottom lines, each from the edge inwards."""
    return ("top", range(min(_EDGE, n))), ("bottom", range(n - 1, max(-1, n - 1 - _EDGE), -1))


def has_contents_cue(text: str) -> bool:
    """Whether ``text`` may hold contents lines: a contents title or a dotted leader somewhere."""
    return _CUE.search(text) is not None


def find_contents_lines(text: str, lines: Sequence[TextLine], apart: Collection[int]) -> frozenset[int]:
    """Body offsets of the contents lines of ``text`` (see the module docstring).

    Args:
        text: The whole text.
        lines: Its non-blank lines, in order.
        apart: Body offsets of furniture lines, skipped.
    """
    lines = [line for line in lines if line[0] not in apart]
    texts = [text[b:e] for b, e in lines]
    out: set[int] = set()
    dotted = {i for i, t in enumerate(texts) if len(t) <= _MAX_ENTRY and toc_line(t)}
    titles = [i for i, t in enumerate(texts) if is_contents_title(t)]
    if len(dotted) >= _MIN_LEADERS:
        out.update(dotted)
        # An entry wrapped over two lines: its first line sits between two entries (or a title and one).
        out.update(
            i
            for i in range(1, len(texts) - 1)
            if i + 1 in dotted and (i - 1 in dotted or i - 1 in titles) and len(texts[i]) <= _MAX_ENTRY
        )
    if titles:
        later: dict[str, list[int]] = {}
        for i, t in enumerate(texts):
            if len(t) <= _MAX_ENTRY and 2 <= len(key := entry_title(t)) <= _MAX_ENTRY:
                later.setdefault(key, []).append(i)
        for title in titles:
            entries = _titled_entries(texts, title, later, dotted)
            if entries:
                out.add(title)
                out.update(entries)
    return frozenset(lines[i][0] for i in out)


def _titled_entries(
    texts: Sequence[str], title: int, later: Mapping[str, list[int]], dotted: Collection[int]
) -> list[int]:
    """The entries under a contents title: each one's title again later than the one before's."""
    entries: list[int] = []
    cursor = title
    gap: int | None = None
    for i in range(title + 1, len(texts)):
        short = len(texts[i]) <= _MAX_ENTRY
        again = _after(later.get(entry_title(texts[i])), max(cursor, i)) if short else None
        if i in dotted or again is not None:
            cursor = again if again is not None else cursor
            entries.extend((gap, i) if gap is not None else (i,))
            gap = None
        elif gap is None:
            gap = i  # a wrapped entry, or one the text words differently: taken if an entry follows
        else:
            break
    return entries


def _after(indexes: list[int] | None, index: int) -> int | None:
    """The first of ``indexes`` (sorted) after ``index``."""
    if not indexes:
        return None
    at = bisect_right(indexes, index)
    return indexes[at] if at < len(indexes) else None

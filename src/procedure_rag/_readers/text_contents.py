"""Contents lines of plain text: a table of contents is text, never steps or headings.

By the rules of :mod:`procedure_rag._readers.furniture_rules`, a contents line is:

* a line ending in a dotted leader and a page number (``概要 ........ 3``), when the
  text has three or more of them; a line between two of them (or between a contents
  title and one) is the first line of a wrapped entry;
* after a 「目次」/"Contents" title, an entry: a leader line, a line whose title (its
  number and leader removed) comes again later in the text, after the previous
  entry's did (the headings the contents list), or a numbered line that is no
  sentence (``3. Azureモデルの実行``) on a page of such lines alone (a contents page
  of a document cut short, whose headings do not come). One line at a time may be
  none of these (an entry wrapped, a heading the text words differently) when an
  entry follows it; two in a row end the contents.

The title is a contents line when an entry follows it.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from procedure_rag._readers.furniture_rules import (
    NUMBER_PREFIX,
    SENTENCE,
    entry_title,
    is_contents_title,
    toc_line,
)
from procedure_rag._readers.text_furniture import TextLine

__all__ = ["find_contents_lines", "has_contents_cue"]

_MIN_LEADERS = 3  # dotted-leader lines a text needs before they are taken as contents
_MAX_ENTRY = 120  # a contents entry is a short line
# A contents title alone on its line, or a dotted leader before a page number. Three
# patterns rather than one: a pattern that opens with a look-behind or ``^`` is tried at
# every character, one that opens with a character class is found by a scan in C (5x
# faster over the shared corpora, where almost no document has contents).
_TITLE = (
    r"[ \t\u3000]*(?:目[ \t\u3000]*次|もくじ|contents|table of contents|inhalt|sommaire)"
    r"[ \t\u3000]*(?=[\r\n\f]|\Z)"
)
_TITLE_FIRST = re.compile(_TITLE, re.IGNORECASE)
_TITLE_AFTER_BREAK = re.compile(r"[\n\r\f]" + _TITLE, re.IGNORECASE)
_LEADER = re.compile(r"[.．·・…‥][ \t]*[.．·・…‥][ \t]*[.．·・…‥][ \t]*[0-9０-９]")


def has_contents_cue(text: str) -> bool:
    """Whether ``text`` may hold contents lines: a contents title or a dotted leader somewhere."""
    return (
        _LEADER.search(text) is not None
        or _TITLE_FIRST.match(text) is not None
        or _TITLE_AFTER_BREAK.search(text) is not None
    )


def find_contents_lines(
    text: str, pages: Sequence[Sequence[TextLine]], apart: Collection[int]
) -> frozenset[int]:
    """Body offsets of the contents lines of ``text`` (see the module docstring).

    Args:
        text: The whole text.
        pages: Each page's non-blank lines, in order (one page for text without page breaks).
        apart: Body offsets of furniture lines, skipped.
    """
    lines = [(line, p) for p, page in enumerate(pages) for line in page if line[0] not in apart]
    found = _Contents([text[b:e] for (b, e), _ in lines], [p for _, p in lines])
    return frozenset(lines[i][0][0] for i in found.lines())


@dataclass
class _Contents:
    texts: list[str]
    page_of: list[int]
    dotted: set[int] = field(init=False)
    later: dict[str, list[int]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.dotted = {i for i, t in enumerate(self.texts) if len(t) <= _MAX_ENTRY and toc_line(t)}

    def lines(self) -> set[int]:
        texts = self.texts
        out: set[int] = set()
        titles = {i for i, t in enumerate(texts) if is_contents_title(t)}
        if len(self.dotted) >= _MIN_LEADERS:
            out.update(self.dotted)
            out.update(
                i
                for i in range(1, len(texts) - 1)
                if i + 1 in self.dotted
                and (i - 1 in self.dotted or i - 1 in titles)
                and len(texts[i]) <= _MAX_ENTRY
            )
        if titles:
            for i, t in enumerate(texts):
                if len(t) <= _MAX_ENTRY and 2 <= len(key := entry_title(t)) <= _MAX_ENTRY:
                    self.later.setdefault(key, []).append(i)
        for title in sorted(titles):
            entries = self.entries(title)
            if entries:
                out.add(title)
                out.update(entries)
        return out

    def entries(self, title: int) -> list[int]:
        """The entries under the contents title at ``title`` (see the module docstring)."""
        entries: list[int] = []
        cursor = title
        gap: int | None = None
        listing: dict[int, bool] = {}
        for i in range(title + 1, len(self.texts)):
            again = self.again(i, max(cursor, i))
            page = self.page_of[i]
            if page not in listing:
                listing[page] = self.listing_page(page, title)
            if i in self.dotted or again is not None or (listing[page] and self.numbered(i)):
                cursor = again if again is not None else cursor
                entries.extend((gap, i) if gap is not None else (i,))
                gap = None
            elif gap is None:
                gap = i
            else:
                break
        return entries

    def again(self, index: int, after: int) -> int | None:
        """Where the title of line ``index`` comes again after line ``after``, if it does."""
        if len(self.texts[index]) > _MAX_ENTRY:
            return None
        indexes = self.later.get(entry_title(self.texts[index]))
        if not indexes:
            return None
        at = bisect_right(indexes, after)
        return indexes[at] if at < len(indexes) else None

    def numbered(self, index: int) -> bool:
        """Whether line ``index`` is numbered and no sentence (``1. はじめに``)."""
        text = self.texts[index]
        return (
            len(text) <= _MAX_ENTRY
            and NUMBER_PREFIX.match(unicodedata.normalize("NFKC", text).strip()) is not None
            and SENTENCE.search(text) is None
        )

    def listing_page(self, page: int, title: int) -> bool:
        """Whether the lines of ``page`` (after the title, on its page) are two or more entries alone."""
        start = max(title + 1, bisect_left(self.page_of, page))
        on_page = range(start, bisect_right(self.page_of, page))
        return len(on_page) >= 2 and all(i in self.dotted or self.numbered(i) for i in on_page)

"""Which blocks are headings, decided over the whole document in passes over its pages.

The evidence (see :mod:`procedure_rag._readers.pdf_structure`) is the tag tree's, the
outline's, or the fonts'. The outline and fonts are weighed over the whole document,
yet the pages are read one at a time from a spool (:mod:`procedure_rag._readers.pdf_spool`),
so each rule here keeps only what it counts, never a page's lines:

* **The outline.** :func:`outline_headings` walks the bookmarks in order over the
  pages' text blocks, loading only the page a bookmark points to and the next one
  (a bookmark that points nowhere is looked for in every page after the last match);
  it keeps each matched block's place and level.
* **Fonts.** :class:`FontHeadings` counts, in a first pass, each font size's blocks and
  those that could be headings, their number depths and pages, and how much of the
  body-size text is bold; a second pass then decides each block from those counts,
  holding a page only until the next text block is seen (a bold line is a heading when
  a paragraph follows it, maybe on the next page).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from procedure_rag._language.numbering import match_heading_number, match_step_marker
from procedure_rag._readers.pdf_furniture import normalised
from procedure_rag._readers.pdf_pages import OutlineEntry, PageLines
from procedure_rag._readers.pdf_structure import HEADING_LINES, Block, large
from procedure_rag._readers.text_lines import CAPTION as _CAPTION
from procedure_rag._readers.text_lines import display_width

__all__ = ["FontHeadings", "outline_headings"]

R = TypeVar("R")

_SENTENCE_END = re.compile(r"[。．.!！:：、,，]$|(?:ます|です|ください|ません|ました|でした)[)）」]?$")
_SENTENCE_INSIDE = re.compile(r"[。．][^\s」）)]")
_URL = re.compile(r"https?://|www\.", re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]")
# A font size is a heading size when at least this share of its blocks read as headings.
_HEADING_SHARE = 0.85
# A heading is at most this wide (display columns).
_HEADING_WIDTH = 90
# Pages whose text blocks the outline walk keeps at hand.
_CACHED_PAGES = 4


def outline_headings(
    page_count: int, blocks_of: Callable[[int], Sequence[Block]], outline: Sequence[OutlineEntry]
) -> dict[tuple[int, int], int]:
    """Text blocks whose text is a bookmark's title, on its page or the next: headings at its depth.

    Bookmarks are matched in order, each after the block the one before matched.

    Args:
        page_count: How many pages there are.
        blocks_of: A page's blocks (0-based page index), kinds as the page's tags say.
        outline: The bookmarks in document order.

    Returns:
        ``(page index, block index)`` of each heading found -> its level.
    """
    cache: dict[int, list[tuple[int, str]]] = {}

    def texts(page: int) -> list[tuple[int, str]]:
        found = cache.get(page)
        if found is None:
            if len(cache) >= _CACHED_PAGES:
                del cache[next(iter(cache))]
            blocks = blocks_of(page)
            found = [(i, normalised(b.text)) for i, b in enumerate(blocks) if b.kind in ("text", "title")]
            cache[page] = found
        return found

    out: dict[tuple[int, int], int] = {}
    start = (0, 0)  # the page, and the place among its text blocks, the next search starts at
    for entry in outline:
        want = normalised(entry.title)
        page, at = start
        while page < page_count:
            if entry.page is not None:
                if page + 1 > entry.page + 1:
                    break
                if page + 1 < entry.page:
                    page, at = entry.page - 1, 0
                    continue
            candidates = texts(page)
            hit = next(
                (
                    j
                    for j in range(at, len(candidates))
                    if candidates[j][1] == want
                    or (
                        len(want) >= 4
                        and candidates[j][1].startswith(want)
                        and len(candidates[j][1]) <= len(want) + 8
                    )
                ),
                None,
            )
            if hit is not None:
                out[(page, candidates[hit][0])] = entry.level + 1
                start = (page, hit + 1)
                break
            page, at = page + 1, 0
    return out


@dataclass
class _Size:
    """What the first pass counts of one font size's blocks (those set wholly in it, above body size)."""

    blocks: int = 0
    fit: int = 0  # of them, those that could be headings
    first: int = 0  # the first and last page of those
    last: int = 0
    depths: set[int] = field(default_factory=set)  # their number depths, tagged titles left out


@dataclass
class FontHeadings:
    """Headings by font size and bold body-size lines, and lines a rule underlines.

    A short block set in a size above the body's is a heading when at least
    :data:`_HEADING_SHARE` of that size's blocks could be: the largest size the highest
    level, and in one size a deeper decimal number (3.2.1 under 3.2) a deeper level; the
    largest size is the title when it is on the first page alone, once or twice. A bold
    line at body size, where body lines start, with a paragraph after it is a heading
    below those, and so is a short line a rule runs right under.

    Feed every page's blocks to :meth:`count` in order, then pass the pages again through
    :meth:`decide`.
    """

    body: float
    sizes: dict[float, _Size] = field(default_factory=dict)
    first_page: int | None = None
    bold_chars: Counter[bool] = field(default_factory=Counter)
    found: bool = False

    def count(self, blocks: Sequence[Block]) -> None:
        """Count a page's blocks (kinds as its tags say)."""
        for b in blocks:
            if b.kind not in ("text", "title", "item"):
                continue
            if self.first_page is None:
                self.first_page = b.page
            if abs(b.size - self.body) <= 0.6:
                self.bold_chars[b.bold] += len(b.text)
            if not all(large(line, self.body) for line in b.lines):
                continue
            size = self.sizes.setdefault(b.size, _Size())
            size.blocks += 1
            if _headable(b):
                size.fit += 1
                size.first = size.first or b.page
                size.last = b.page
                if b.kind != "title":
                    size.depths.add(_number_depth(b.text))

    def _tables(self) -> tuple[set[float], float | None, dict[tuple[float, int], int], int]:
        heading_sizes = {s for s, n in self.sizes.items() if n.fit >= _HEADING_SHARE * n.blocks}
        ordered = sorted(heading_sizes, reverse=True)
        first_page = self.first_page if self.first_page is not None else 1
        title: float | None = None
        if len(ordered) > 1:
            top = self.sizes[ordered[0]]
            if top.first == top.last == first_page and top.fit <= 2:
                title = ordered[0]
                ordered = ordered[1:]
        ranks = {size: i for i, size in enumerate(ordered)}
        keys: dict[tuple[float, int], tuple[int, int]] = {}
        for size in ordered:
            depths = self.sizes[size].depths
            shallowest = min((d or 99 for d in depths), default=99)
            for d in depths:
                keys[(size, d)] = (ranks[size], max(0, (d or shallowest) - shallowest))
        dense = {key: i + 1 for i, key in enumerate(sorted(set(keys.values())))}
        levels = {sd: dense[key] for sd, key in keys.items()}
        return heading_sizes, title, levels, len(dense) + 1

    def decide(
        self,
        records: Iterable[R],
        page_of: Callable[[R], PageLines],
        blocks_of: Callable[[R], list[Block]],
        margin_of: Callable[[R], float],
    ) -> Iterator[R]:
        """Yield ``records`` (pages, in order) with their headings decided, in place.

        ``margin_of`` gives a page's left text edge as its blocks were before any heading
        was decided. A page is held until the next text block after its last is seen.
        """
        heading_sizes, title, levels, deepest = self._tables()
        body_bold = self.bold_chars[True] > self.bold_chars[False]
        held: deque[R] = deque()
        last: tuple[Block, float] | None = None
        for record in records:
            flat = [b for b in blocks_of(record) if b.kind in ("text", "title", "item")]
            for b in flat:
                if b.size not in heading_sizes or not all(large(line, self.body) for line in b.lines):
                    continue
                if not _headable(b):
                    continue
                if b.size == title:
                    b.kind = "title"
                elif b.kind != "title":
                    b.kind, b.level = "heading", levels[(b.size, _number_depth(b.text))]
            held.append(record)
            margin = margin_of(record)
            for b in flat:
                if last is not None and not body_bold:
                    _bold_heading(last[0], b, self.body, last[1], deepest)
                last = (b, margin)
            if flat:
                while len(held) > 1:
                    yield self._underlined(held.popleft(), page_of, blocks_of, margin_of, deepest)
        while held:
            yield self._underlined(held.popleft(), page_of, blocks_of, margin_of, deepest)

    def _underlined(
        self,
        record: R,
        page_of: Callable[[R], PageLines],
        blocks_of: Callable[[R], list[Block]],
        margin_of: Callable[[R], float],
        level: int,
    ) -> R:
        """Short text blocks underlined by a rule across the text are headings at ``level``.

        The rule is the border a web page or a Word style draws under a heading. As with
        bold body-size lines, only a block where body lines start counts.
        """
        page = page_of(record)
        blocks = blocks_of(record)
        if page.rules:
            margin = margin_of(record)
            for block in blocks:
                if (
                    block.kind == "text"
                    and _headable(block)
                    and block.left <= margin + 2 * block.size
                    and _underlined(block, page)
                ):
                    block.kind, block.level = "heading", level
        self.found = self.found or any(b.kind in ("heading", "title") for b in blocks)
        return record


def _bold_heading(b: Block, nxt: Block, body: float, margin: float, level: int) -> None:
    """A bold line at body size, where body lines start, over a paragraph: a heading at ``level``.

    One further right than the page's body lines is a label in a figure or a table.
    """
    if (
        b.kind == "text"
        and b.bold
        and len(b.lines) == 1
        and abs(b.size - body) <= 0.6
        and _headable(b)
        and b.left <= margin + 2 * b.size
        and nxt.kind in ("text", "item")
        and not nxt.bold
        and _bold_heading_shape(b.text, nxt)
    ):
        b.kind = "heading"
        b.level = level


def _headable(block: Block) -> bool:
    """Whether a block could be a heading: short, one cell, no sentence, no caption, no bullet."""
    if block.kind not in ("text", "heading", "title"):
        return False
    text = unicodedata.normalize("NFKC", block.text).strip()
    if len(_LETTERS.findall(text)) < 2 or _CAPTION.match(text) or len(block.lines) > HEADING_LINES:
        return False
    if any(len(line.cells) > 1 for line in block.lines) or _URL.search(text):
        return False
    marker = match_step_marker(text)
    if marker is not None and not marker.ordered:
        return False
    if _SENTENCE_END.search(text) or _SENTENCE_INSIDE.search(text):
        return False
    words = len(text.split())
    return display_width(text) <= _HEADING_WIDTH and words <= 14


def _underlined(block: Block, page: PageLines) -> bool:
    """Whether a rule runs right under ``block``, at least as wide as its text, no other line between."""
    em = block.size
    for rule in page.rules:
        if not block.bottom <= rule.top <= block.bottom + 1.5 * em:
            continue
        if rule.left > block.left + 0.5 * em or rule.right < block.right - 0.5 * em:
            continue
        mine = {id(line) for line in block.lines}
        return not any(
            id(line) not in mine and line.top < rule.top and line.bottom > block.bottom for line in page.lines
        )
    return False


def _number_depth(text: str) -> int:
    """How many numbers a decimal heading number has (``3.2.1 …`` → 3); 0 when it has none."""
    found = match_heading_number(unicodedata.normalize("NFKC", text).strip())
    if found is None:
        m = re.match(r"^\d{1,3}[.．]\s", unicodedata.normalize("NFKC", text))
        return 1 if m else 0
    return len(re.findall(r"\d+", found[0]))


def _bold_heading_shape(text: str, after: Block) -> bool:
    """A bold line that reads as a heading: numbered like one, or short and over a paragraph."""
    text = unicodedata.normalize("NFKC", text).strip()
    if match_heading_number(text) is not None or re.match(r"^[(（]?\d{1,2}[)）.]\s*\S", text):
        return True
    return display_width(text) <= 40 and len(after.lines) >= 2

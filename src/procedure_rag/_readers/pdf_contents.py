"""Contents lists inside a page: lists whose entries are the document's own later headings.

A page printed from the web opens with its "In this article" list of links, a manual's
chapter with a short list of the sections that follow. Such a list is no procedure:
a run of list items (tagged ``LI``, or lines opening with a bullet) with the short labels
between them, at least three of whose entries (and two in five) are the titles of
headings that come later in the document, becomes one ``"contents"`` block. It is kept
as text, never made steps; the contents *pages* a manual opens with are found by
:mod:`procedure_rag._readers.pdf_furniture`.
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from procedure_rag._readers.pdf_furniture import normalised

if TYPE_CHECKING:
    from procedure_rag._readers.pdf_structure import Block

__all__ = ["LaterHeadings", "mark_contents_lists"]

R = TypeVar("R")

# A bullet or an entry number before an entry's title: •, ・, -, 1., 1.2, (3), 第2章.
_ENTRY_PREFIX = re.compile(
    r"^\s*(?:[•·・◦▪▫■□●○◆◇\-*–—‐]\s*)?(?:第?[0-9]+(?:[.．][0-9]+)*[.．)）章節]?\s+|[(（][0-9]+[)）]\s*)?"
)
_SENTENCE = re.compile(r"[。.!?！？:：]$")
_BULLET = re.compile(r"^\s*[•·・◦▪▫■□●○◆◇]\s*\S")
# At least this many entries, and this share of the items, must be later headings (a translated
# or edited contents list drifts from its headings: not all of them match).
_MIN_ENTRIES = 3
_SHARE = 0.4


def _key(text: str) -> str:
    return normalised(_ENTRY_PREFIX.sub("", unicodedata.normalize("NFKC", text), count=1))


def _is_item(block: Block) -> bool:
    return block.kind == "item" or (block.kind == "text" and _BULLET.match(block.text) is not None)


def _is_label(block: Block) -> bool:
    """A short line between a contents list's entries (a group label: "General", 「設定」)."""
    text = unicodedata.normalize("NFKC", block.text).strip()
    return (
        block.kind == "text" and len(block.lines) == 1 and len(text) <= 40 and _SENTENCE.search(text) is None
    )


class LaterHeadings:
    """Where each heading title is last: a pass over the decided blocks fills it, page by page.

    Blocks are counted in reading order, headers and footers left out; the count of a
    list item compared with its title's last position tells whether the heading comes later.
    """

    def __init__(self) -> None:
        self.last: dict[str, int] = {}
        self.count = 0

    def add(self, blocks: Sequence[Block]) -> None:
        """Count a page's blocks (its headings already decided)."""
        for block in blocks:
            if block.kind in ("header", "footer"):
                continue
            if block.kind in ("heading", "title"):
                self.last[_key(block.text)] = self.count
            self.count += 1


@dataclass
class _Member:
    page: int  # the record's position in the document
    index: int  # the block's index in its page
    item: bool
    later: bool


def mark_contents_lists(
    records: Iterable[R], blocks_of: Callable[[R], list[Block]], later: LaterHeadings
) -> Iterator[R]:
    """Yield ``records`` (pages, in order) with every contents list made ``"contents"`` blocks.

    A page is held only while a run of list items that reaches it is open (see the
    module docstring); it is yielded with its runs merged, in place.

    Args:
        records: Every page's record, in order.
        blocks_of: A record's blocks in reading order, headings already decided.
        later: The headings' last positions (:class:`LaterHeadings`, filled by a pass before).
    """
    held: deque[tuple[R, list[list[int]]]] = deque()
    first_held = 0
    run: list[_Member] = []
    at = 0

    def close() -> None:
        members = run
        while members and not members[-1].item:
            members.pop()  # a label after the list belongs to what follows
        items = [m for m in members if m.item]
        matched = sum(1 for m in items if m.later)
        if matched >= _MIN_ENTRIES and matched >= _SHARE * len(items):
            heads: dict[int, list[int]] = {}
            for m in members:
                heads.setdefault(m.page, []).append(m.index)
            for page, indexes in heads.items():
                held[page - first_held][1].append(indexes)

    for number, record in enumerate(records):
        held.append((record, []))
        for i, block in enumerate(blocks_of(record)):
            if block.kind in ("header", "footer"):
                continue
            item = _is_item(block)
            if item or (run and _is_label(block)):
                if later.last:
                    key = _key(block.text) if item else ""
                    run.append(_Member(number, i, item, bool(key) and later.last.get(key, -1) > at))
            elif run:
                close()
                run = []
            at += 1
        keep = run[0].page if run else number + 1
        while held and first_held < keep:
            done, merges = held.popleft()
            _merge(blocks_of(done), merges)
            first_held += 1
            yield done
    if run:
        close()
    while held:
        done, merges = held.popleft()
        _merge(blocks_of(done), merges)
        yield done


def _merge(blocks: list[Block], groups: Sequence[Sequence[int]]) -> None:
    """Make each group of a page's blocks (indexes, in order) one contents block, in place."""
    if not groups:
        return
    dropped: set[int] = set()
    for indexes in groups:
        block = blocks[indexes[0]]
        block.lines = [line for i in indexes for line in blocks[i].lines]
        block.kind, block.level = "contents", 0
        dropped.update(indexes[1:])
    blocks[:] = [b for i, b in enumerate(blocks) if i not in dropped]

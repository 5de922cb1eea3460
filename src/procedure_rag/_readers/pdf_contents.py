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
from collections.abc import Sequence
from typing import TYPE_CHECKING

from procedure_rag._readers.pdf_furniture import normalised

if TYPE_CHECKING:
    from procedure_rag._readers.pdf_structure import Block

__all__ = ["mark_contents_lists"]

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


def mark_contents_lists(blocks: list[list[Block]]) -> None:
    """Turn every contents list (see the module docstring) into ``"contents"`` blocks, in place.

    Args:
        blocks: Every page's blocks in reading order, headings already decided.
    """
    flat = [
        (p, i, b)
        for p, page in enumerate(blocks)
        for i, b in enumerate(page)
        if b.kind not in ("header", "footer")
    ]
    last_heading: dict[str, int] = {}
    for at, (_, _, block) in enumerate(flat):
        if block.kind in ("heading", "title"):
            last_heading[_key(block.text)] = at
    if not last_heading:
        return

    def later(at: int) -> bool:
        key = _key(flat[at][2].text)
        return bool(key) and last_heading.get(key, -1) > at

    runs: list[list[int]] = []
    run: list[int] = []
    for at, (_, _, block) in enumerate(flat):
        if _is_item(block) or (run and _is_label(block)):
            run.append(at)
            continue
        runs.append(run)
        run = []
    runs.append(run)
    groups = []
    for members in runs:
        while members and not _is_item(flat[members[-1]][2]):
            members.pop()  # a label after the list belongs to what follows
        items = [at for at in members if _is_item(flat[at][2])]
        matched = sum(1 for at in items if later(at))
        if matched >= _MIN_ENTRIES and matched >= _SHARE * len(items):
            groups.append([flat[at][:2] for at in members])
    _merge(blocks, groups)


def _merge(blocks: list[list[Block]], groups: Sequence[Sequence[tuple[int, int]]]) -> None:
    """Make each group of blocks (page index, block index; in order) one contents block per page."""
    heads: dict[tuple[int, int], list[int]] = {}
    for group in groups:
        for page, index in group:
            first = next(i for p, i in group if p == page)
            heads.setdefault((page, first), []).append(index)
    dropped: set[tuple[int, int]] = set()
    for (page, first), indexes in heads.items():
        block = blocks[page][first]
        block.lines = [line for i in indexes for line in blocks[page][i].lines]
        block.kind, block.level = "contents", 0
        dropped.update((page, i) for i in indexes[1:])
    for page in {p for p, _ in dropped}:
        blocks[page] = [b for i, b in enumerate(blocks[page]) if (page, i) not in dropped]

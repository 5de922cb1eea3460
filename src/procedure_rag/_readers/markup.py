"""Markup block machinery shared by the HTML and reStructuredText readers.

A markup walker (lxml's tree, docutils' tree) knows each block's kind, text and
start line, but not where the block ends. :class:`BlockEmitter` collects the blocks
in reading order as the walker opens and closes lists and items, giving each its
list structure; :func:`place` then gives every block its span (a line range up to
where the next block starts). :func:`format_number` writes list numbers as a reader
sees them (``3``, ``c``, ``iii``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from procedure_rag._language.labels import leading_label
from procedure_rag._language.numbering import DEFAULT_STEP_STYLES, StepMarker, StepStyle, match_step_marker
from procedure_rag._readers.draft import ElementDraft, element_id_for, list_id_for
from procedure_rag._types import ElementKind, LayoutElement, Span

__all__ = ["BlockEmitter", "Draft", "format_number", "place"]

K = ElementKind

# Step markers that read as steps on their own; "1." or "-" at the start of one
# paragraph is as often prose ("1. の設定は…") and needs a second marked line.
_WEAK_STYLES = frozenset({"dotted", "close-paren", "roman", "letter", "bullet", "bullet-cjk", "sphinx-auto"})
_WORD = re.compile(r"[A-Za-z0-9]{1,12}|[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]{1,6}")
_SEARCH_WINDOW = 20_000


@dataclass(slots=True, kw_only=True)
class Draft(ElementDraft):
    """An element before its span is known.

    ``line`` is the 0-based source line the block starts on, when the parser says;
    the span stage finds blocks without one by ``pattern`` or their first word,
    ending no later than the 0-based line ``before`` when that is known.
    """

    element_id: str
    line: int | None
    pattern: re.Pattern[str] | None = None
    before: int | None = None


@dataclass
class _OpenList:
    list_id: str
    depth: int
    last_item: str | None = None


@dataclass
class _OpenItem:
    number: str
    ordered: bool
    level: int
    parent_id: str | None
    list_id: str
    line: int | None
    element_id: str = ""


class BlockEmitter:
    """Collects the blocks of a markup document in reading order.

    Lists and items are opened and closed as the parser's tree is walked; an
    item's own element is written when its first text arrives (or when anything
    else does), so ``<li><p>Text</p></li>`` and ``<li>Text</li>`` read the same.
    Blocks inside an item carry its id as ``parent_id`` and the top list's
    ``list_id``; loose text between the items of a list belongs to the item
    before it.
    """

    def __init__(
        self,
        source_id: str,
        step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES,
        *,
        join: Callable[[list[str]], str] = "\n".join,
    ) -> None:
        self.source_id = source_id
        self.step_styles = step_styles
        self.join = join
        self.drafts: list[Draft] = []
        self._lists: list[_OpenList] = []
        self._items: list[_OpenItem] = []
        self._lists_opened = 0
        self._pseudo_list: str | None = None  # list id of a run of marker paragraphs

    # -- lists ------------------------------------------------------------------------------
    def open_list(self) -> None:
        """Start a list inside the current item (same ``list_id``) or at the top."""
        self._flush_item()
        if self._in_item():
            item = self._items[-1]
            self._lists.append(_OpenList(item.list_id, item.level + 1))
        elif self._lists:  # a list straight inside a list (<ol><ol>): one level deeper
            outer = self._lists[-1]
            self._lists.append(_OpenList(outer.list_id, outer.depth + 1, outer.last_item))
        else:
            self._lists.append(_OpenList(list_id_for(self.source_id, self._lists_opened), 0))
        self._lists_opened += 1

    def close_list(self) -> None:
        """End the innermost list."""
        if self._items and len(self._items) == len(self._lists):
            self.close_item()
        if self._lists:
            self._lists.pop()

    def between_items(self) -> bool:
        """Whether a list is open and no item of it is."""
        return bool(self._lists) and len(self._items) < len(self._lists)

    def open_item(self, number: str, *, ordered: bool, line: int | None) -> None:
        """Start an item of the innermost list (call :meth:`between_items` first)."""
        lst = self._lists[-1]
        parent = self._items[-1].element_id if self._items else None
        self._items.append(_OpenItem(number, ordered, lst.depth, parent, lst.list_id, line))

    def close_item(self) -> None:
        """End the innermost item; an item that had no text is written with none."""
        self._flush_item()
        self._items.pop()

    def _in_item(self) -> bool:
        return bool(self._items) and len(self._items) == len(self._lists)

    def _flush_item(self, text: str = "", line: int | None = None) -> bool:
        """Write the open item's element if it is not written yet; True when it was."""
        if not self._in_item() or self._items[-1].element_id:
            return False
        item = self._items[-1]
        item.element_id = self._next_id()
        self._lists[len(self._items) - 1].last_item = item.element_id
        self._append(
            Draft(
                K.LIST_ITEM,
                text,
                level=item.level,
                number=item.number,
                ordered=item.ordered,
                parent_id=item.parent_id,
                list_id=item.list_id,
                element_id=item.element_id,
                line=item.line if item.line is not None else line,
            )
        )
        return True

    # -- blocks -----------------------------------------------------------------------------
    def heading(
        self, text: str, level: int, line: int | None, *, kind: ElementKind = K.SECTION_HEADER
    ) -> None:
        """A heading; it stands outside any list."""
        self._flush_item()
        self._append(Draft(kind, text, level=level, element_id=self._next_id(), line=line))

    def block(
        self,
        kind: ElementKind,
        text: str,
        line: int | None,
        *,
        admonition: str = "",
        hints: tuple[tuple[str, str], ...] = (),
        pattern: re.Pattern[str] | None = None,
        before: int | None = None,
    ) -> None:
        """Any block but a heading; plain text opens the current item when it has no text yet.

        A block whose start line is unknown (``line=None``) is found after the block
        before it by ``pattern`` (or by its first word), ending no later than the
        0-based line ``before`` when the parser knows where the block ends.
        """
        if kind is K.TEXT and not admonition and not hints and self._flush_item(text, line):
            return
        self._flush_item()
        parent, list_id = self._context()
        self._append(
            Draft(
                kind,
                text,
                parent_id=parent,
                list_id=list_id,
                admonition=admonition,
                hints=hints,
                element_id=self._next_id(),
                line=line,
                pattern=pattern,
                before=before,
            )
        )

    def paragraph(self, lines: list[str], line: int | None, *, admonition: str = "") -> None:
        """A paragraph (one string per visual line); lines opening with step markers become items."""
        lines = [ln for ln in lines if ln]
        if not lines:
            return
        marks = [match_step_marker(ln, self.step_styles) for ln in lines]
        found = [mk for mk in marks if mk is not None]
        strong = any(mk.style not in _WEAK_STYLES for mk in found)
        if admonition or not found or not (strong or len(found) > 1 or self._pseudo_list):
            text = self.join(lines)
            self.block(K.TEXT, text, line, admonition=admonition or leading_label(text)[0])
            return
        group: list[str] = []
        marker = None
        for ln, mk in zip(lines, marks, strict=True):
            if mk is not None:
                self._marker_group(group, marker, line)
                group, marker = [ln[mk.rest_start :].strip()], mk
            else:
                group.append(ln)
        self._marker_group(group, marker, line)

    def _marker_group(self, group: list[str], marker: StepMarker | None, line: int | None) -> None:
        if not group:
            return
        text = self.join(group)
        if marker is None:
            self.block(K.TEXT, text, line, admonition=leading_label(text)[0])
            return
        self._flush_item()
        parent: str | None
        list_id: str | None
        if self._in_item():
            item = self._items[-1]
            parent, list_id, level = item.element_id, item.list_id, item.level + 1
        else:
            parent, list_id = self._context()
            level = self._lists[-1].depth + 1 if self._lists else 0
            list_id = list_id or self._pseudo_list or list_id_for(self.source_id, self._lists_opened)
            if self._pseudo_list is None and not self._lists:
                self._lists_opened += 1
        draft = Draft(
            K.LIST_ITEM,
            text,
            level=level,
            number=marker.marker,
            ordered=marker.ordered,
            parent_id=parent,
            list_id=list_id,
            element_id=self._next_id(),
            line=line,
        )
        self._append(draft, pseudo=list_id)

    def _context(self) -> tuple[str | None, str | None]:
        """``(parent_id, list_id)`` for a block written now."""
        if self._in_item():
            return self._items[-1].element_id, self._items[-1].list_id
        if self._lists:
            return self._lists[-1].last_item, self._lists[-1].list_id
        return None, None

    def _next_id(self) -> str:
        return element_id_for(self.source_id, len(self.drafts))

    def _append(self, draft: Draft, *, pseudo: str | None = None) -> None:
        self.drafts.append(draft)
        self._pseudo_list = pseudo


def _line_starts(text: str, *, universal: bool) -> list[int]:
    r"""Offsets where each line starts: ``"\\n"`` breaks, or every break ``str.splitlines`` knows."""
    starts = [0]
    if universal:
        pos = 0
        for line in text.splitlines(keepends=True):
            pos += len(line)
            starts.append(pos)
    else:
        starts.extend(m.end() for m in re.finditer("\n", text))
    return starts


def _anchor(text: str) -> str:
    m = _WORD.search(text)
    return m.group() if m else ""


def _find(source: str, draft: Draft, lo: int, hi: int) -> int:
    """Where a block without a start line starts in ``source[lo:hi]``, or -1."""
    if draft.pattern is not None:
        m = draft.pattern.search(source, lo, hi)
        if m is not None:
            return m.start()
    word = _anchor(draft.text)
    return source.find(word, lo, hi) if word else -1


def _past(known: int | None, prev: int) -> bool:
    return known is not None and known > prev


def place(drafts: Sequence[Draft], source: str, *, universal_newlines: bool = False) -> list[LayoutElement]:
    r"""Give each draft a span and return the elements.

    A block starts at the beginning of its line (or, sharing a line with the block
    before it, at its first word) and runs up to where the next block starts,
    trailing whitespace left out. Starts never go backwards.

    Args:
        drafts: The blocks in reading order.
        source: The text the line numbers count in.
        universal_newlines: Count lines as ``str.splitlines`` does (docutils) rather
            than at ``"\\n"`` only (libxml2).
    """
    starts = _line_starts(source, universal=universal_newlines)
    known = [starts[d.line] if d.line is not None and 0 <= d.line < len(starts) else None for d in drafts]
    positions: list[int] = []
    prev = -1
    ahead = 0  # the next known start past ``prev``; ``prev`` only grows, so this only moves on
    for i, draft in enumerate(drafts):
        pos = known[i]
        if pos is None or pos <= prev:
            lo = max(prev + 1, pos or 0)
            ahead = max(ahead, i + 1)
            while ahead < len(known) and not _past(known[ahead], prev):
                ahead += 1
            nxt = known[ahead] if ahead < len(known) else None
            hi = nxt if nxt is not None else lo + _SEARCH_WINDOW
            if draft.before is not None:
                hi = min(hi, starts[min(draft.before + 1, len(starts) - 1)])
            found = _find(source, draft, lo, max(lo, hi))
            pos = found if found >= 0 else pos
        pos = max(pos if pos is not None else prev, prev, 0)
        positions.append(pos)
        prev = pos
    elements = []
    for i, draft in enumerate(drafts):
        start = positions[i]
        end = positions[i + 1] if i + 1 < len(positions) else len(source)
        while end > start and source[end - 1].isspace():
            end -= 1
        while start < end and source[start].isspace():
            start += 1
        elements.append(draft.build(draft.element_id, i, span=Span(start, end)))
    return elements


def _roman(n: int) -> str:
    out = []
    for value, numeral in (
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ):
        count, n = divmod(n, value)
        out.append(numeral * count)
    return "".join(out)


def _alpha(n: int) -> str:
    out = ""
    while n > 0:
        n, rem = divmod(n - 1, 26)
        out = chr(ord("a") + rem) + out
    return out


def format_number(n: int, style: str) -> str:
    """``n`` as a list marker of ``style`` (``1``, ``a``, ``A``, ``i``, ``I``), without the dot."""
    if n <= 0 or style == "1" or n > 3999:
        return str(n)
    text = _alpha(n) if style in "aA" else _roman(n)
    return text.upper() if style.isupper() else text

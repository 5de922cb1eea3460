"""Plain-text reader: numbering and line layout become layout elements.

Plain text, and text extracted from PDFs, shows its structure only through
numbering, indentation and where lines break. This reader walks the lines once,
with a few lines of look-ahead, and decides for every line what it is:

* page furniture: page-number footers (``- 12 -``, ``Page 12``, ``12 / 40``), lines
  repeated at the top of many pages, and, in text with page breaks, the running
  headers and footers at the edges of most pages;
* navigation links alone on a line ("Back to list", 「一覧に戻る」): furniture, never a
  section's text or title;
* contents lines (dotted leaders, the entries under a 「目次」/"Contents" title): text,
  line by line, never steps or headings (both found by
  :mod:`procedure_rag._readers.text_furniture`);
* headings: heading numbers (``第1章``, ``1.1``, ``【…】``, ``■``; a number stays in the
  heading's text, a symbol does not), underlined titles,
  numbered lines that introduce a body rather than a procedure, and, conservatively,
  short title-like lines told apart by what follows: a longer paragraph, the same line
  again (PDF text that prints a title and then starts the body with it), or a menu
  path whose ``>`` glyphs were lost (a run of very short labels, kept as one text
  element joined by `` > ``) and then a paragraph; a heading with no blank line
  before it nests under the last one that had one;
* list items: every style of :data:`~procedure_rag._language.numbering.DEFAULT_STEP_STYLES`,
  nested by indentation and by a change of numbering style;
* notes and cautions (``Note:``, ``注意``, ``※``), aligned tables, indented code;
* paragraphs, with hard-wrapped lines joined back together.

Where a loader's page text has neither blank lines nor indentation, where a line ends
tells the rest: a line that stops short of its column, where the next line's first word
would have fitted, was broken by its writer (:meth:`_Reader.hard_break`): a list item ends
there, and a title under a list may start there.

The heading rules live in :mod:`procedure_rag._readers.headings` (a mixin of the
reader); lines, pages and blocks in :mod:`procedure_rag._readers.text_lines`.

Every non-blank line belongs to exactly one element and every element's span
covers its whole source lines, so the spans cover every non-whitespace character
of the input. The reader runs in linear time: lines are matched only at their
start, look-ahead is bounded, and element text is sliced from the source once.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import replace
from functools import cache

from procedure_rag._language.labels import LEADING_LABEL, leading_label
from procedure_rag._language.numbering import (
    HeadingStyle,
    StepMarker,
    StepStyle,
    marker_ordinal,
    match_step_marker,
)
from procedure_rag._readers.draft import element_id_for, list_id_for
from procedure_rag._readers.furniture_rules import CONTENTS_HINTS, NAVIGATION_HINTS, is_navigation
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.pdf_text import same_length_lookalikes
from procedure_rag._readers.slide_titles import SlideTitles
from procedure_rag._readers.text_lines import (
    CONTINUES_JA,
    CONTINUES_LINE,
    RULE,
    Block,
    Line,
    OpenItem,
    Pages,
    display_width,
    ends_sentence,
    ends_with_connector,
    is_cjk,
    iter_lines,
)
from procedure_rag._readers.unmarked_steps import MAX_GAP, UNMARKED_STYLE, unmarked_steps
from procedure_rag._types import ElementKind, LayoutElement, Span

__all__ = ["iter_plain_text", "iter_plain_text_within", "read_plain_text"]

# Cells apart by a tab or two spaces; not the spacing after a sentence's end (Chromium's
# Japanese text puts two spaces after 「。」 inside a paragraph).
_CELL_SEP = re.compile(r"\t+|(?<![。．！？.!?])[ \u3000]{2,}")
_CODEISH = re.compile(
    r"[=;{}]|\$ |^\$|^#\s|^>>>|\w\(.*\)|^(?:sudo|cd|pip|npm|git|yum|apt|docker|curl|wget|python|def|class|"
    r"import)\b"
)
_MAX_PENDING = 3  # paragraphs held back while deciding whether a list continues


def _cells(s: str) -> tuple[int, tuple[int, ...], bool] | None:
    """Split a table row candidate: ``(cell count, cell start columns, tab-separated)``."""
    if len(s) > 1000:
        return None
    if s.startswith("|") and s.endswith("|") and s.count("|") >= 3:
        return s.count("|") - 1, (), True
    seps = list(_CELL_SEP.finditer(s))
    if not seps:
        return None
    starts = (0, *(display_width(s[: m.end()], 1001) for m in seps))
    return len(seps) + 1, starts, "\t" in s


def _same_table(a: tuple[int, tuple[int, ...], bool], b: tuple[int, tuple[int, ...], bool]) -> bool:
    if a[0] != b[0] or a[0] < 2:
        return False
    if a[2] or b[2]:  # tab- or pipe-separated: no alignment to check
        return True
    return all(abs(x - y) <= 2 for x, y in zip(a[1], b[1], strict=True))


# Kana and kanji, no punctuation: a Japanese word's letters.
_JA_LETTER = re.compile(r"[\u3041-\u3096\u30a1-\u30fa\u30fc\u3400-\u9fff]")
# The last sentence of a Japanese item that announces what comes next: 「次のコマンドを実行します。」
_JA_FOLLOWING = re.compile(r"(?:次の|以下の|下記の)[^。！？]{0,24}。$")
_FURNITURE = frozenset({ElementKind.PAGE_HEADER, ElementKind.PAGE_FOOTER})


class _Reader(SlideTitles):
    """One pass over the lines of one text; yields elements in reading order."""

    def __init__(
        self,
        text: str,
        source_id: str,
        step_styles: tuple[StepStyle, ...],
        heading_styles: tuple[HeadingStyle, ...],
        *,
        whole: bool = True,
        batch_running: frozenset[tuple[str, str]] = frozenset(),
        slides: bool = False,
        unmarked: Mapping[int, int] | None = None,
    ) -> None:
        self.text = text
        self.slides = slides
        self.whole = whole  # a whole text, not a run inside a file whose headings it shows
        self.source_id = source_id
        self.step_styles = step_styles
        self.heading_styles = heading_styles
        self.pages = Pages(text, batch_running)
        # Unnumbered steps (Word text): first line's body -> the marker the step is read with.
        self.unmarked = {
            body: StepMarker(f"{ordinal}.", 0, UNMARKED_STYLE, ordered=True)
            for body, ordinal in (unmarked or {}).items()
        }
        self.paragraph_lines = unmarked is not None
        # Word text: a step's paragraphs (its notes, its sub-items) have no indentation to show.
        self.max_pending = MAX_GAP if unmarked is not None else _MAX_PENDING
        self.lines = iter_lines(text)
        self.ahead: deque[Line] = deque()
        self.queue: deque[Block] = deque()
        self.order = 0
        self.cur: Block | None = None
        self.cur_indent = 0
        self.stack: list[OpenItem] = []
        self.list_id: str | None = None
        self.lists = 0
        self.pending: list[Block] = []
        self.pending_parent: OpenItem | None = None
        self.prev_closed = True
        self.prev_line: Line | None = None
        self.heading_levels: dict[str, int] = {}
        self.last_level = 0
        self.block_inferred = False  # an inferred heading has come after a blank line
        self.opening = True  # no block but running headers and footers yet
        self.broke = False  # the writer broke the line before this one (see hard_break)
        self.col = 0  # the widest line of the open block
        self.item_lead = False  # whether the block closed last is an item ending with a colon
        widths = sorted(display_width(s) for s in text[:200_000].splitlines() if s.strip())
        self.wrap = max(40, widths[len(widths) * 9 // 10] if widths else 0)
        try:
            self.step_prefilter, self.special = _style_filters(step_styles, heading_styles)
        except TypeError:  # styles that cannot be hashed: built for this text alone
            self.step_prefilter, self.special = _style_filters.__wrapped__(step_styles, heading_styles)

    # ----- line access -------------------------------------------------------------------
    def peek(self, k: int = 0) -> Line | None:
        while len(self.ahead) <= k:
            line = next(self.lines, None)
            if line is None:
                return None
            self.ahead.append(line)
        return self.ahead[k]

    def take(self) -> Line | None:
        return self.ahead.popleft() if self.ahead else next(self.lines, None)

    def s(self, line: Line) -> str:
        return self.text[line.body : line.end]

    def tail(self, line: Line) -> str:
        return self.text[max(line.body, line.end - 40) : line.end]

    def marker(self, line: Line) -> StepMarker | None:
        if self.unmarked and (step := self.unmarked.get(line.body)) is not None:
            return step
        head = line.head
        if self.step_prefilter is not None and self.step_prefilter.match(head) is None:
            return None
        return _marker(head, self.step_styles)

    # ----- driving ------------------------------------------------------------------------
    def run(self) -> Iterator[LayoutElement]:
        while (line := self.take()) is not None:
            width = line.end - line.body
            if not line.head.isascii() and width < 2 * self.wrap:  # wide characters count two
                width = display_width(self.text[line.body : line.end], self.wrap + 1)
            self.feed(line, width)
            cur = self.cur
            # The widest line of the open block so far: the width its text is wrapped to.
            joined = cur is not None and cur.last is line and cur.first is not line
            self.col = max(self.col, width) if joined else width
            if self.queue and self.queue[0].done:
                yield from self.drain()
        self.close_cur()
        self.resolve_pending(inside=False)
        yield from self.drain()

    def drain(self) -> Iterator[LayoutElement]:
        while self.queue and self.queue[0].done and self.queue[0].resolved:
            yield self.element(self.queue.popleft())

    def feed(self, line: Line, width: int) -> None:
        if line.page_top:
            self.slide_top = True
        furniture = self.pages.furniture.get(line.body)
        if furniture is not None:
            self.new_block(furniture, line, [(line.body, line.end)], done=True)
            self.prev_closed = True
            return
        if line.end - line.body <= 40 and is_navigation(self.s(line)):
            # "Back to list", 「一覧に戻る」: the page's link, furniture; it ends its section,
            # the lists of the section too, so a title after it needs no more than a body.
            block = self.new_block(ElementKind.PAGE_FOOTER, line, [(line.body, line.end)], done=True)
            block.hints = NAVIGATION_HINTS
            self.resolve_pending(inside=False)
            self.prev_closed = True
            return
        if line.body in self.pages.contents:
            self.contents_line(line)
            return
        if self.cur is not None and self.cur.hints == CONTENTS_HINTS:
            self.close_cur()  # what follows contents lines is never part of them
        if self.at_slide_top(line) and self.try_slide_title(line):
            self.prev_line = line
            return
        # One regex call rules out rules, notes and heading numbers on ordinary lines.
        special = self.special is None or self.special.match(line.head) is not None
        prev = self.prev_line
        self.broke = (
            prev is not None
            and not line.blank_before
            and prev.end - prev.body < self.wrap
            and self.hard_break(prev, line, min(self.wrap, max(self.col, width)))
        )
        if not special and self.plain_continuation(line):
            return
        handled = (
            ((line.blank_before or special) and self.try_setext(line))
            or (
                special
                and (self.try_rule(line) or self.try_admonition(line) or self.try_heading_number(line))
            )
            or self.try_item(line)
            or (self.maybe_row(line.head) and self.try_table(line))
            or self.try_inferred_heading(line)
            or self.try_continue(line)
            or self.try_code(line)
        )
        if not handled:
            block = self.new_block(ElementKind.TEXT, line, [(line.body, line.end)])
            self.attach(block)
            self.cur = block
            self.cur_indent = line.indent
        if self.cur is not None:
            self.prev_closed = ends_sentence(self.tail(line))
        self.prev_line = line

    def plain_continuation(self, line: Line) -> bool:
        """Fast path for the common case: an ordinary wrapped line of an open paragraph."""
        cur = self.cur
        if (
            cur is None
            or cur.kind is not ElementKind.TEXT
            or cur.admonition
            or line.blank_before
            or self.prev_closed
            or self.broke
            or self.step_prefilter is None
            or self.step_prefilter.match(line.head) is not None
            or self.maybe_row(line.head)
        ):
            return False
        cur.last = line
        cur.pieces.append((line.body, line.end))
        self.prev_closed = ends_sentence(self.tail(line))
        self.prev_line = line
        return True

    def hard_break(self, a: Line, b: Line, column: int) -> bool:
        """Whether the break between lines ``a`` and ``b`` was the writer's, not the wrapping's.

        Text wrapped to a width breaks a line only where the next word does not fit. When
        ``b``'s first word (one character in Japanese) would have fit on ``a`` with room to
        spare, ``a`` ended where its writer ended it: a paragraph's last line, a title, the
        end of a list item. ``column`` is the width the text is wrapped to as far as the lines
        show it (the widest line of ``a``'s block, or ``b``), never over the document's: a note
        box or an indented list wraps narrower than the body. Never before a line that goes on
        with a sentence (lower case, a closing mark, a Japanese particle or small kana) nor
        after a dangling word.
        """
        first = b.head[0]
        if first.islower() or first in CONTINUES_LINE or first in CONTINUES_JA:
            return False
        if a.end - a.body >= column:  # a full line; display width is at least its length
            return False
        room = column - max(3, column // 10) - display_width(self.s(a), column)
        if room <= 0:
            return False
        if is_cjk(first):
            word = 2
        else:
            space = b.head.find(" ")
            word = 1 + display_width(b.head if space < 0 else b.head[:space], room + 1)
        return word <= room and not ends_with_connector(self.tail(a))

    @staticmethod
    def maybe_row(head: str) -> bool:
        return "\t" in head or "  " in head or "\u3000" in head or head.startswith("|")

    # ----- blocks --------------------------------------------------------------------------
    def new_block(
        self, kind: ElementKind, line: Line, pieces: list[tuple[int, int]], *, done: bool = False
    ) -> Block:
        self.close_cur()
        block = Block(kind, order=self.order, first=line, last=line, pieces=pieces, done=done)
        self.order += 1
        self.opening = self.opening and kind in _FURNITURE
        self.queue.append(block)
        return block

    def close_cur(self) -> None:
        cur = self.cur
        # An item that ends with a colon introduces what follows it ("run the following command:"),
        # and so does a Japanese one whose last sentence names what follows (「次のコマンドを実行します。」).
        if cur is not None and cur.kind is ElementKind.LIST_ITEM:
            # The item's last characters, across its wrapped lines (「…実行しま」「す。」).
            tail = "".join(self.text[max(cur.first.body, cur.last.end - 60) : cur.last.end].split())
            self.item_lead = tail.endswith((":", "：")) or _JA_FOLLOWING.search(tail) is not None
        else:
            self.item_lead = False
        if cur is not None:
            cur.done = True
            self.cur = None

    def eid(self, order: int) -> str:
        return element_id_for(self.source_id, order)

    def element(self, b: Block) -> LayoutElement:
        text = self.text
        if b.join == "raw":
            body = text[b.first.body : b.last.end]
        elif b.join == "lines":
            body = "\n".join(text[s:e] for s, e in b.pieces)
        elif b.join == "path":
            body = " > ".join(text[s:e] for s, e in b.pieces)
        else:
            body = _join_wrapped(text, b.pieces) if b.pieces else text[b.first.body : b.first.end]
        b.text = body
        return b.build(
            self.eid(b.order),
            b.order,
            span=Span(b.first.start, b.last.end),
            page=self.pages.page_at(b.first.body),
        )

    # ----- lists ---------------------------------------------------------------------------
    def close_list(self) -> None:
        self.stack.clear()
        self.list_id = None

    def resolve_pending(self, *, inside: bool) -> None:
        parent = self.pending_parent
        for block in self.pending:
            if inside and parent is not None:
                block.parent_id = parent.element_id
                block.list_id = self.list_id
            block.resolved = True
        self.pending.clear()
        self.pending_parent = None
        if not inside:
            self.close_list()

    def attach(self, block: Block) -> None:
        """Place a non-item block inside the open list, outside it, or hold it until that is known."""
        if not self.stack:
            return
        indent = block.first.indent
        if self.pending:  # whatever follows an undecided paragraph shares its fate
            if len(self.pending) < self.max_pending and indent >= self.pending[0].first.indent:
                block.resolved = False
                self.pending.append(block)
            else:
                self.resolve_pending(inside=False)
            return
        n = len(self.stack)
        while n and self.stack[n - 1].indent >= indent:
            n -= 1
        if self.item_lead and self.stack[-1].indent <= indent:
            n = len(self.stack)  # what an item's colon introduces is the item's, even level with it
        if n:  # indented under an open item: a block inside that item
            del self.stack[n:]
            block.parent_id = self.stack[-1].element_id
            block.list_id = self.list_id
        elif self.stack[0].indent == indent and len(self.pending) < self.max_pending:
            # Level with the items: inside only if the list goes on after it.
            while self.stack[-1].indent > indent:
                self.stack.pop()
            if not self.pending:
                self.pending_parent = self.stack[-1]
            block.resolved = False
            self.pending.append(block)
        else:
            self.resolve_pending(inside=False)

    def place(self, indent: int, style: str, ordinal: int | None) -> tuple[int, str]:
        """Where a new item goes: ``(entries kept on the stack, relation)``."""
        stack = self.stack
        n = len(stack)
        while n and stack[n - 1].indent > indent:
            n -= 1
        if n == 0:
            return 0, "root"
        if stack[n - 1].indent < indent:
            return n, "child"
        k = n - 1
        while k >= 0 and stack[k].indent == indent:
            if stack[k].style == style:
                prev = stack[k].ordinal
                restart = k == 0 and prev is not None and ordinal is not None and ordinal <= prev
                return k, "restart" if restart else "sibling"
            k -= 1
        return n, "child"

    def try_item(self, line: Line) -> bool:
        m = self.marker(line)
        if m is None:
            return False
        ordinal = marker_ordinal(m.marker)
        if self.numbered_heading(line, m, ordinal):
            level = self.heading_levels.get(m.style) or self.last_level + 1
            self.heading(line, line, rest=m.rest_start, number=m.marker, level=level, style=m.style)
            return True
        keep, relation = self.place(line.indent, m.style, ordinal)
        if self.pending:
            lead_in = self.text[self.pending[-1].last.end - 1] in ":："
            inside = relation == "sibling" or (relation == "child" and lead_in)
            self.resolve_pending(inside=inside)
            if not inside:
                keep, relation = 0, "root"
        if relation in ("root", "restart"):
            self.close_list()
            keep = 0
        del self.stack[keep:]
        if self.list_id is None:
            self.lists += 1
            self.list_id = list_id_for(self.source_id, self.lists)
        block = self.new_block(ElementKind.LIST_ITEM, line, [(line.body + m.rest_start, line.end)])
        block.level = len(self.stack)
        block.number = m.marker
        block.ordered = m.ordered
        block.parent_id = self.stack[-1].element_id if self.stack else None
        block.list_id = self.list_id
        block.hints = (("style", m.style),)
        self.stack.append(OpenItem(line.indent, m.style, ordinal, self.eid(block.order)))
        self.cur = block
        self.cur_indent = line.indent
        return True

    def continues(self, a: Line, b: Line, marker_indent: int) -> bool:
        """Whether line ``b`` is a wrapped continuation of line ``a`` (an item or a note).

        ``b`` is the line being fed and ``a`` the one fed before it, so :attr:`broke`
        (computed once per line in :meth:`feed`) tells whether the writer broke between them.
        """
        if b.indent > marker_indent:
            return True
        first = self.text[b.body]
        if first.islower() or first in CONTINUES_LINE or first in CONTINUES_JA:
            return True
        tail = self.tail(a)
        if ends_sentence(tail) or tail[-1] in ":：":
            return False
        if ends_with_connector(tail):
            return True
        if self.broke:
            return False
        # A Japanese line that stops inside a word (a letter on both sides of the break) was
        # wrapped, however narrow its box: 「…現在利用可能なバー」「ジョンと一致しない…」.
        return (
            _JA_LETTER.match(tail[-1]) is not None and _JA_LETTER.match(first) is not None
        ) or display_width(self.s(a), self.wrap) * 4 >= self.wrap * 3

    def try_continue(self, line: Line) -> bool:
        cur = self.cur
        if cur is None or cur.kind not in (ElementKind.TEXT, ElementKind.LIST_ITEM):
            return False
        # A label on a line of its own (「注意」, "Note") is the next paragraph's, a blank line between.
        label_alone = bool(cur.admonition) and not cur.pieces
        if line.blank_before and not label_alone:
            return False
        is_paragraph = cur.kind is ElementKind.TEXT and not cur.admonition
        if not (is_paragraph or label_alone or self.continues(cur.last, line, self.cur_indent)):
            return False
        cur.last = line
        cur.pieces.append((line.body, line.end))
        return True

    # ----- other blocks --------------------------------------------------------------------
    def contents_line(self, line: Line) -> None:
        """A contents line: text, line by line, with the contents lines before it on its page."""
        cur = self.cur
        if (
            cur is not None
            and cur.hints == CONTENTS_HINTS
            and self.pages.page_at(cur.last.body) == self.pages.page_at(line.body)
        ):
            cur.last = line
            cur.pieces.append((line.body, line.end))
        else:
            self.resolve_pending(inside=False)
            block = self.new_block(ElementKind.TEXT, line, [(line.body, line.end)])
            block.join = "lines"
            block.hints = CONTENTS_HINTS
            self.cur = block
            self.cur_indent = line.indent
        self.prev_closed = True
        self.prev_line = line

    def try_rule(self, line: Line) -> bool:
        if RULE.fullmatch(line.head) is None:
            return False
        if self.cur is not None:  # a separator under a block belongs to that block
            self.cur.last = line
            self.close_cur()
        else:
            block = self.new_block(ElementKind.TEXT, line, [(line.body, line.end)], done=True)
            block.hints = (("separator", "true"),)
        self.prev_closed = True
        return True

    def try_admonition(self, line: Line) -> bool:
        label, after = leading_label(line.head)
        if not label:
            return False
        rest = line.body + len(line.head) - len(after)
        block = self.new_block(ElementKind.TEXT, line, [(rest, line.end)] if rest < line.end else [])
        block.admonition = label
        self.attach(block)
        self.cur = block
        self.cur_indent = line.indent
        return True

    def try_table(self, line: Line) -> bool:
        row = _cells(self.s(line)) if line.end - line.body <= 1000 else None
        nxt = self.peek(0)
        if row is None or nxt is None or nxt.blank_before or self.marker(nxt) is not None:
            return False
        if self.pages.apart(nxt.body) or not _same_table(row, _cells(self.s(nxt)) or (0, (), False)):
            return False
        block = self.new_block(ElementKind.TABLE, line, [], done=False)
        block.join = "raw"
        while (
            (nxt := self.peek(0)) is not None
            and not nxt.blank_before
            and not self.pages.apart(nxt.body)
            and self.marker(nxt) is None
            and _same_table(row, _cells(self.s(nxt)) or (0, (), False))
        ):
            block.last = self.take() or nxt
        block.hints = (("columns", str(row[0])),)
        block.done = True
        self.attach(block)
        self.prev_closed = True
        return True

    def try_code(self, line: Line) -> bool:
        base = self.stack[-1].indent + 4 if self.stack and not self.pending else 0
        if not line.blank_before or line.indent < base + 4 or _CODEISH.search(line.head) is None:
            return False
        strip = line.body - line.start
        block = self.new_block(ElementKind.CODE, line, [(line.body, line.end)])
        block.join = "lines"
        while (nxt := self.peek(0)) is not None and nxt.indent >= line.indent:
            if self.pages.apart(nxt.body):
                break
            self.take()
            if nxt.blank_before:
                block.pieces.append((nxt.start, nxt.start))
            block.pieces.append((nxt.start + min(strip, nxt.body - nxt.start), nxt.end))
            block.last = nxt
        block.done = True
        self.attach(block)
        self.prev_closed = True
        return True


def _marker(head: str, styles: tuple[StepStyle, ...]) -> StepMarker | None:
    """The step marker ``head`` opens with, if any."""
    m = match_step_marker(head, styles)
    # "-foo", "--" and "*emphasis*" are not bullets: ASCII bullets need a space.
    if m is not None and not m.ordered and m.marker in "-*+" and m.rest_start == len(m.marker):
        return None
    return m


def _join_wrapped(text: str, pieces: list[tuple[int, int]]) -> str:
    """Join hard-wrapped lines: no space beside a CJK character, one space otherwise.

    Nor inside a Latin word that a Japanese line broke (「…以上の Win」「dows デバイス」,
    「…削除HoloLen」「sする」): Japanese is wrapped by characters, English words too.
    """
    out: list[str] = []
    last = ""
    japanese = False  # the line before holds Japanese
    for start, end in pieces:
        seg = text[start:end]
        if not seg:
            continue
        inside_word = japanese and last.isascii() and last.isalpha() and seg[0].isascii() and seg[0].islower()
        if out and not (is_cjk(last) or is_cjk(seg[0]) or inside_word):
            out.append(" ")
        out.append(seg)
        last = seg[-1]
        japanese = _JA_LETTER.search(seg) is not None
    return "".join(out)


@cache
def _style_filters(
    step_styles: tuple[StepStyle, ...], heading_styles: tuple[HeadingStyle, ...]
) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """The step prefilter and the "special line" pattern of the styles, built once per set of styles."""
    step_prefilter = _prefilter([st.pattern for st in step_styles])
    heading_prefilter = _prefilter([st.pattern for st in heading_styles])
    special = (
        re.compile(f"{RULE.pattern}|{LEADING_LABEL.pattern}|{heading_prefilter.pattern}", re.IGNORECASE)
        if heading_prefilter is not None
        else None
    )
    return step_prefilter, special


def _prefilter(patterns: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One alternation of every style, to reject ordinary lines with a single regex call."""
    flags = {p.flags for p in patterns}
    if len(flags) != 1:
        return None
    try:
        return re.compile(
            "|".join(f"(?:{p.pattern.replace('(?P<marker>', '(?:')})" for p in patterns), flags.pop()
        )
    except re.error:
        return None


def iter_plain_text(
    text: str,
    *,
    source_id: str,
    options: ReaderOptions = DEFAULT_READER_OPTIONS,
) -> Iterator[LayoutElement]:
    """Yield the layout elements of plain or PDF-extracted text, in reading order.

    Args:
        text: The document text. Any string is accepted; callers reject binary input.
        source_id: Id of the source; element ids are ``f"{source_id}#e{order}"`` and list
            ids ``f"{source_id}#l{n}"``, stable across runs.
        options: The reader options; their step and heading numbering styles are
            recognised, most specific first.

    Look-alike CJK glyphs that PDF extraction gives (Kangxi radicals such as ``⽤`` for
    ``用``, compatibility ideographs) are read as the characters they stand for, one
    for one, so spans still point into ``text``.

    Yields:
        :class:`LayoutElement` values whose spans cover every non-whitespace character
        of ``text``. Elements are held back only while the reader decides whether a
        paragraph between list items belongs to the list (a few paragraphs at most).
    """
    yield from _elements(text, source_id, options, whole=True)


def _elements(text: str, source_id: str, options: ReaderOptions, *, whole: bool) -> Iterator[LayoutElement]:
    if not text.strip():
        return
    # Look-alike glyphs of PDF-extracted text (⽤ for 用), one character for one: spans stay.
    text = same_length_lookalikes(text)
    unmarked = None
    if options.numbering_lost and whole:
        styles = options.step_styles
        unmarked = unmarked_steps(
            text,
            options.lexicons.values(),
            marked=lambda line: _marker(line.head, styles) is not None,
        )
    yield from _Reader(
        text,
        source_id,
        options.step_styles,
        options.heading_styles,
        whole=whole,
        batch_running=options.batch_running_lines if whole else frozenset(),
        slides=options.slides and whole,
        unmarked=unmarked,
    ).run()


def read_plain_text(
    text: str,
    *,
    source_id: str,
    options: ReaderOptions = DEFAULT_READER_OPTIONS,
) -> list[LayoutElement]:
    """Return :func:`iter_plain_text` as a list; empty or blank text gives ``[]``."""
    return list(iter_plain_text(text, source_id=source_id, options=options))


def iter_plain_text_within(
    text: str,
    *,
    source_id: str,
    run_id: str,
    offset: int,
    first_order: int,
    options: ReaderOptions = DEFAULT_READER_OPTIONS,
    below: int = 0,
) -> Iterator[LayoutElement]:
    """Yield the elements of a run of text that sits inside a larger extracted text.

    For readers that read parts of a file (a Word paragraph run, an Excel sheet laid out
    in cells, a PDF's body text) by the plain-text rules, whose headings come from the file
    (styles, fonts, tags), so no title is inferred from the steps under it: each element
    gets the enclosing document's id for its place (:func:`element_id_for` of ``source_id``
    and its order), orders go on from ``first_order``, spans point into the whole text
    (shifted by ``offset``), and parent ids follow the renaming.

    Args:
        text: The run's text.
        source_id: Id of the enclosing document.
        run_id: Id the run is read under (unique within the document).
        offset: Where ``text`` starts in the enclosing document's text.
        first_order: The reading order of the run's first element.
        options: The reader options.
        below: The level of the file's heading the run sits under (0: none): headings the
            rules find in the run are that many levels deeper, so they nest under it.
    """
    renamed: dict[str, str] = {}
    for index, element in enumerate(_elements(text, run_id, options, whole=False)):
        order = first_order + index
        new_id = element_id_for(source_id, order)
        renamed[element.element_id] = new_id
        span = element.span
        deeper = below if element.kind is ElementKind.SECTION_HEADER else 0
        yield replace(
            element,
            element_id=new_id,
            order=order,
            level=element.level + deeper,
            span=Span(offset + span.start, offset + span.end) if span is not None else None,
            parent_id=renamed.get(element.parent_id or "", element.parent_id),
        )

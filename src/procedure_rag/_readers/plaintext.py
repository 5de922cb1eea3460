"""Plain-text reader: numbering and line layout become layout elements.

Plain text, and text extracted from PDFs, shows its structure only through
numbering, indentation and where lines break. This reader walks the lines once,
with a few lines of look-ahead, and decides for every line what it is:

* page furniture: page-number footers (``- 12 -``, ``Page 12``, ``12 / 40``) and
  lines repeated at the top of many pages;
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

Every non-blank line belongs to exactly one element and every element's span
covers its whole source lines, so the spans cover every non-whitespace character
of the input. The reader runs in linear time: lines are matched only at their
start, look-ahead is bounded, and element text is sliced from the source once.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

from procedure_rag._language.labels import LEADING_LABEL, leading_label
from procedure_rag._language.numbering import (
    DEFAULT_HEADING_STYLES,
    DEFAULT_STEP_STYLES,
    FULLWIDTH_DIGITS,
    HeadingStyle,
    StepMarker,
    StepStyle,
    marker_ordinal,
    match_heading_number,
    match_step_marker,
)
from procedure_rag._types import ElementKind, LayoutElement, Span

__all__ = ["iter_plain_text", "read_plain_text"]

# Line breaks; only the form feed also breaks the page.
_BREAK = re.compile(r"\r\n|[\r\n\f\v\x1c\x1d\x1e\x85\u2028\u2029]")
_FOOTER = re.compile(
    r"(?:^|(?<=[\n\r\f]))[ \t]*(?P<body>"
    r"[-–—−][ \t]*(?P<a>\d{1,4})[ \t]*[-–—−]"
    r"|(?:Page|PAGE|page|P\.|p\.)[ \t]*(?P<b>\d{1,4})(?:[ \t]*(?:/|of)[ \t]*\d{1,4})?"
    r"|(?P<c>\d{1,4})[ \t]*/[ \t]*\d{1,4}"
    r"|(?P<d>\d{1,4})(?=[ \t\r\n\v]*\f)"  # a bare number only right before a page break
    r")[ \t]*(?=[\r\n\f]|\Z)"
)
_FIRST_LINE = re.compile(r"[\s]*([^\r\n\f]*)")
_RULE = re.compile(r"([-=~^*+#_`'\":.])\1{2,}")
_DEFINITION = re.compile(r"[^:：.。]{1,40}[:：]\s")
_CELL_SEP = re.compile(r"\t+|[ \u3000]{2,}")
_CODEISH = re.compile(
    r"[=;{}]|\$ |^\$|^#\s|^>>>|\w\(.*\)|^(?:sudo|cd|pip|npm|git|yum|apt|docker|curl|wget|python|def|class|"
    r"import)\b"
)
_WIDE = re.compile(
    "[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]"
)
_SENTENCE_END = frozenset(".!?。．！？")
_CLOSERS = "\"'”’」』)）]】"
_CONTINUES_LINE = frozenset(",.;:、。，．)）」』]")
# Words a wrapped line ends with when the sentence goes on (function words, not verbs).
_EN_CONNECTOR_WORDS = (
    "a an the to of in on at for with by from and or nor but as if is are was were be been being am your "
    "you this that these those then via into onto than when while which who whose where what how will "
    "would can could may might must shall should do does did has have had not so because after before "
    "about over under between through during without within upon per like such each every all any some "
    "its their our my his her won't can't don't doesn't isn't aren't didn't"
)
_EN_CONNECTORS = frozenset(_EN_CONNECTOR_WORDS.split())
_JA_CONNECTORS = frozenset("をにのはがでとへやもて、，")
# Step styles whose single-level numbers ("1.", "(1)", "1)") may also number headings.
_HEADING_CAPABLE = frozenset({"dotted", "dotted-fullwidth", "close-paren", "paren"})
_MATCH_PREFIX = 256  # markers sit at the start of a line; never run a pattern over a huge line
_LOOKAHEAD = 40  # lines a numbered heading candidate may look ahead
_MAX_PENDING = 3  # paragraphs held back while deciding whether a list continues
_MAX_PATH = 8  # labels a menu path under a heading may have
_STRONG = frozenset({"repeat", "path"})  # evidence that closes a list left open
_LABEL_PUNCTUATION = frozenset('.,;:!?"“”。、，．：；！？「」『』')


@dataclass(slots=True)
class _Line:
    start: int  # offset of the line's first character
    body: int  # offset of its first non-whitespace character
    end: int  # offset just past its last non-whitespace character
    indent: int  # leading whitespace in columns
    blank_before: bool  # a blank line, a page break or the start of the text precedes it
    head: str  # the first characters of the line, where markers are matched


@dataclass(slots=True)
class _Block:
    kind: ElementKind
    order: int
    first: _Line
    last: _Line
    pieces: list[tuple[int, int]] = field(default_factory=list)
    join: str = "wrap"  # "wrap": unwrap lines; "lines": keep line breaks; "raw": source slice;
    # "path": menu labels joined by " > "
    level: int = 0
    number: str = ""
    ordered: bool = False
    parent_id: str | None = None
    list_id: str | None = None
    admonition: str = ""
    hints: tuple[tuple[str, str], ...] = ()
    done: bool = False
    resolved: bool = True


@dataclass(slots=True)
class _Open:
    """An open list item on the nesting stack."""

    indent: int
    style: str
    ordinal: int | None
    element_id: str


class _Pages:
    """Page numbers by offset, from form feeds and page-number footers."""

    def __init__(self, text: str) -> None:
        footers: list[tuple[int, int, int]] = []  # (line end, number, body offset)
        for m in _FOOTER.finditer(text):
            number = next(g for g in m.group("a", "b", "c", "d") if g is not None)
            footers.append((m.end(), int(number), m.start("body")))
        bounds: list[tuple[int, int | None]] = [(end, num) for end, num, _ in footers]
        fi = 0
        ff = text.find("\f")
        while ff != -1:
            while fi < len(footers) and footers[fi][0] <= ff:
                fi += 1
            prev_end = footers[fi - 1][0] if fi else -1
            # A footer followed only by whitespace and the page break is one boundary.
            if prev_end < 0 or text[prev_end:ff].strip():
                bounds.append((ff, None))
            ff = text.find("\f", ff + 1)
        bounds.sort(key=lambda b: b[0])
        self.offsets = [b[0] for b in bounds]
        self.numbers = self._number(bounds)
        self.furniture: dict[int, ElementKind] = {body: ElementKind.PAGE_FOOTER for _, _, body in footers}
        self._find_headers(text)

    @staticmethod
    def _number(bounds: list[tuple[int, int | None]]) -> list[int]:
        own = [num for _, num in bounds] + [None]
        if all(n is None for n in own):
            return list(range(1, len(own) + 1))
        pages: list[int | None] = []
        for i, num in enumerate(own):
            prev = pages[i - 1] if i else None
            pages.append(num if num is not None else (prev + 1 if prev is not None else None))
        out = [0] * len(pages)
        nxt = 1
        for i in range(len(pages) - 1, -1, -1):
            value = pages[i]
            out[i] = value if value is not None else max(1, nxt - 1)
            nxt = out[i]
        return out

    def _find_headers(self, text: str) -> None:
        # The first line of each page; one repeated on three or more pages is a running header.
        firsts: list[tuple[str, int]] = []
        for pos in [0, *self.offsets]:
            m = _FIRST_LINE.match(text, pos)
            if m is not None and m.group(1).strip() and m.start(1) not in self.furniture:
                firsts.append((m.group(1).strip(), m.start(1)))
        counts = Counter(line for line, _ in firsts)
        for line, body in firsts:
            if counts[line] >= 3 and _width(line) <= 80:
                self.furniture[body] = ElementKind.PAGE_HEADER

    def page_at(self, offset: int) -> int:
        return self.numbers[bisect_right(self.offsets, offset)]


def _iter_lines(text: str) -> Iterator[_Line]:
    """Yield the non-blank lines of ``text`` with their offsets."""
    pos = 0
    blank = True
    for m in _BREAK.finditer(text):
        line = _make_line(text, pos, m.start(), blank)
        if line is None:
            blank = True
        else:
            blank = False
            yield line
        if m.group() == "\f":
            blank = True
        pos = m.end()
    line = _make_line(text, pos, len(text), blank)
    if line is not None:
        yield line


def _make_line(text: str, start: int, stop: int, blank_before: bool) -> _Line | None:
    raw = text[start:stop]
    head = raw.lstrip()
    if not head:
        return None
    body = start + len(raw) - len(head)
    indent = body - start
    if indent and raw[:indent].strip(" "):  # tabs and ideographic spaces are wider than one column
        indent = 0
        for ch in raw[: body - start]:
            indent += 4 - indent % 4 if ch == "\t" else 2 if ch == "\u3000" else 1
    end = start + len(raw.rstrip())
    return _Line(start, body, end, indent, blank_before, text[body : min(end, body + _MATCH_PREFIX)])


def _width(s: str, cap: int = 400) -> int:
    """Display width of ``s`` (wide characters count 2), looking at most ``cap`` characters."""
    s = s[:cap]
    if s.isascii():  # most lines: no wide character can be there
        return len(s)
    return len(s) + len(_WIDE.findall(s))


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x3000 <= o <= 0x30FF or 0x3400 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF


def _ends_sentence(tail: str) -> bool:
    tail = tail.rstrip().rstrip(_CLOSERS)
    return bool(tail) and tail[-1] in _SENTENCE_END


def _ends_with_connector(tail: str) -> bool:
    """Whether ``tail`` ends mid-phrase: a function word, a particle, a comma or a hyphen."""
    tail = tail.rstrip()
    if not tail:
        return False
    if tail[-1] in _JA_CONNECTORS or tail[-1] in ",-–":
        return True
    words = tail.rsplit(None, 1)
    return words[-1].lower() in _EN_CONNECTORS


def _short_title(s: str, max_width: int) -> bool:
    """Whether ``s`` can be heading text: short, and not a sentence."""
    return (
        bool(s)
        and _width(s, max_width + 1) <= max_width
        and not _ends_sentence(s)
        and s[-1] not in ",、，;；:："
        and "。" not in s
        and ". " not in s
    )


def _title_like(s: str) -> bool:
    """Whether ``s`` may be an unnumbered heading: short, no sentence, no label, no dangling word."""
    first = s[0]
    return (
        _short_title(s, 60)
        and ":" not in s
        and "：" not in s
        and not _ends_with_connector(s)
        and len(s.split()) <= 10
        and sum(c.isalpha() for c in s) >= 2
        and (first.isupper() or first.isdigit() or (_is_cjk(first) and first not in "（、。・〜"))
    )


def _ui_label(s: str) -> bool:
    """Whether ``s`` may be one label of a menu path: a few words, no punctuation, capitalised."""
    first = s[0]
    return (
        _width(s, 31) <= 30
        and len(s.split()) <= 4
        and not any(c in _LABEL_PUNCTUATION for c in s)
        and (first.isupper() or first.isdigit() or (_is_cjk(first) and first not in "（、。・〜「『"))
        and not _ends_with_connector(s)
    )


def _cells(s: str) -> tuple[int, tuple[int, ...], bool] | None:
    """Split a table row candidate: ``(cell count, cell start columns, tab-separated)``."""
    if len(s) > 1000:
        return None
    if s.startswith("|") and s.endswith("|") and s.count("|") >= 3:
        return s.count("|") - 1, (), True
    seps = list(_CELL_SEP.finditer(s))
    if not seps:
        return None
    starts = (0, *(_width(s[: m.end()], 1001) for m in seps))
    return len(seps) + 1, starts, "\t" in s


def _same_table(a: tuple[int, tuple[int, ...], bool], b: tuple[int, tuple[int, ...], bool]) -> bool:
    if a[0] != b[0] or a[0] < 2:
        return False
    if a[2] or b[2]:  # tab- or pipe-separated: no alignment to check
        return True
    return all(abs(x - y) <= 2 for x, y in zip(a[1], b[1], strict=True))


class _Reader:
    """One pass over the lines of one text; yields elements in reading order."""

    def __init__(
        self,
        text: str,
        source_id: str,
        step_styles: tuple[StepStyle, ...],
        heading_styles: tuple[HeadingStyle, ...],
    ) -> None:
        self.text = text
        self.source_id = source_id
        self.step_styles = step_styles
        self.heading_styles = heading_styles
        self.pages = _Pages(text)
        self.lines = _iter_lines(text)
        self.ahead: deque[_Line] = deque()
        self.queue: deque[_Block] = deque()
        self.order = 0
        self.cur: _Block | None = None
        self.cur_indent = 0
        self.stack: list[_Open] = []
        self.list_id: str | None = None
        self.lists = 0
        self.pending: list[_Block] = []
        self.pending_parent: _Open | None = None
        self.prev_closed = True
        self.prev_line: _Line | None = None
        self.heading_levels: dict[str, int] = {}
        self.last_level = 0
        self.block_inferred = False  # an inferred heading has come after a blank line
        widths = sorted(_width(s) for s in text[:200_000].splitlines() if s.strip())
        self.wrap = max(40, widths[len(widths) * 9 // 10] if widths else 0)
        try:
            self.step_prefilter, self.special = _style_filters(step_styles, heading_styles)
        except TypeError:  # styles that cannot be hashed: built for this text alone
            self.step_prefilter, self.special = _style_filters.__wrapped__(step_styles, heading_styles)

    # ----- line access -------------------------------------------------------------------
    def peek(self, k: int = 0) -> _Line | None:
        while len(self.ahead) <= k:
            line = next(self.lines, None)
            if line is None:
                return None
            self.ahead.append(line)
        return self.ahead[k]

    def take(self) -> _Line | None:
        return self.ahead.popleft() if self.ahead else next(self.lines, None)

    def s(self, line: _Line) -> str:
        return self.text[line.body : line.end]

    def tail(self, line: _Line) -> str:
        return self.text[max(line.body, line.end - 40) : line.end]

    def marker(self, line: _Line) -> StepMarker | None:
        head = line.head
        if self.step_prefilter is not None and self.step_prefilter.match(head) is None:
            return None
        m = match_step_marker(head, self.step_styles)
        # "-foo", "--" and "*emphasis*" are not bullets: ASCII bullets need a space.
        if m is not None and not m.ordered and m.marker in "-*+" and m.rest_start == len(m.marker):
            return None
        return m

    # ----- driving ------------------------------------------------------------------------
    def run(self) -> Iterator[LayoutElement]:
        while (line := self.take()) is not None:
            self.feed(line)
            if self.queue and self.queue[0].done:
                yield from self.drain()
        self.close_cur()
        self.resolve_pending(inside=False)
        yield from self.drain()

    def drain(self) -> Iterator[LayoutElement]:
        while self.queue and self.queue[0].done and self.queue[0].resolved:
            yield self.element(self.queue.popleft())

    def feed(self, line: _Line) -> None:
        furniture = self.pages.furniture.get(line.body)
        if furniture is not None:
            self.new_block(furniture, line, [(line.body, line.end)], done=True)
            self.prev_closed = True
            return
        # One regex call rules out rules, notes and heading numbers on ordinary lines.
        special = self.special is None or self.special.match(line.head) is not None
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
            self.prev_closed = _ends_sentence(self.tail(line))
        self.prev_line = line

    def plain_continuation(self, line: _Line) -> bool:
        """Fast path for the common case: an ordinary wrapped line of an open paragraph."""
        cur = self.cur
        if (
            cur is None
            or cur.kind is not ElementKind.TEXT
            or cur.admonition
            or line.blank_before
            or self.prev_closed
            or self.step_prefilter is None
            or self.step_prefilter.match(line.head) is not None
            or self.maybe_row(line.head)
        ):
            return False
        cur.last = line
        cur.pieces.append((line.body, line.end))
        self.prev_closed = _ends_sentence(self.tail(line))
        self.prev_line = line
        return True

    @staticmethod
    def maybe_row(head: str) -> bool:
        return "\t" in head or "  " in head or "\u3000" in head or head.startswith("|")

    # ----- blocks --------------------------------------------------------------------------
    def new_block(
        self, kind: ElementKind, line: _Line, pieces: list[tuple[int, int]], *, done: bool = False
    ) -> _Block:
        self.close_cur()
        block = _Block(kind, self.order, line, line, pieces, done=done)
        self.order += 1
        self.queue.append(block)
        return block

    def close_cur(self) -> None:
        if self.cur is not None:
            self.cur.done = True
            self.cur = None

    def eid(self, order: int) -> str:
        return f"{self.source_id}#e{order}"

    def element(self, b: _Block) -> LayoutElement:
        text = self.text
        if b.join == "raw":
            body = text[b.first.body : b.last.end]
        elif b.join == "lines":
            body = "\n".join(text[s:e] for s, e in b.pieces)
        elif b.join == "path":
            body = " > ".join(text[s:e] for s, e in b.pieces)
        else:
            body = _join_wrapped(text, b.pieces) if b.pieces else text[b.first.body : b.first.end]
        return LayoutElement(
            element_id=self.eid(b.order),
            kind=b.kind,
            text=body,
            order=b.order,
            span=Span(b.first.start, b.last.end),
            page=self.pages.page_at(b.first.body),
            level=b.level,
            number=b.number,
            ordered=b.ordered,
            parent_id=b.parent_id,
            list_id=b.list_id,
            admonition=b.admonition,
            hints=b.hints,
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

    def attach(self, block: _Block) -> None:
        """Place a non-item block inside the open list, outside it, or hold it until that is known."""
        if not self.stack:
            return
        indent = block.first.indent
        if self.pending:  # whatever follows an undecided paragraph shares its fate
            if len(self.pending) < _MAX_PENDING and indent >= self.pending[0].first.indent:
                block.resolved = False
                self.pending.append(block)
            else:
                self.resolve_pending(inside=False)
            return
        n = len(self.stack)
        while n and self.stack[n - 1].indent >= indent:
            n -= 1
        if n:  # indented under an open item: a block inside that item
            del self.stack[n:]
            block.parent_id = self.stack[-1].element_id
            block.list_id = self.list_id
        elif self.stack[0].indent == indent and len(self.pending) < _MAX_PENDING:
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

    def try_item(self, line: _Line) -> bool:
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
            self.list_id = f"{self.source_id}#l{self.lists}"
        block = self.new_block(ElementKind.LIST_ITEM, line, [(line.body + m.rest_start, line.end)])
        block.level = len(self.stack)
        block.number = m.marker
        block.ordered = m.ordered
        block.parent_id = self.stack[-1].element_id if self.stack else None
        block.list_id = self.list_id
        block.hints = (("style", m.style),)
        self.stack.append(_Open(line.indent, m.style, ordinal, self.eid(block.order)))
        self.cur = block
        self.cur_indent = line.indent
        return True

    def continues(self, a: _Line, b: _Line, marker_indent: int) -> bool:
        """Whether line ``b`` is a wrapped continuation of line ``a`` (an item or a note)."""
        if b.indent > marker_indent:
            return True
        first = self.text[b.body]
        if first.islower() or first in _CONTINUES_LINE:
            return True
        tail = self.tail(a)
        if _ends_sentence(tail) or tail[-1] in ":：":
            return False
        return _ends_with_connector(tail) or _width(self.s(a), self.wrap) * 4 >= self.wrap * 3

    def try_continue(self, line: _Line) -> bool:
        cur = self.cur
        if cur is None or line.blank_before or cur.kind not in (ElementKind.TEXT, ElementKind.LIST_ITEM):
            return False
        is_paragraph = cur.kind is ElementKind.TEXT and not cur.admonition
        label_alone = bool(cur.admonition) and not cur.pieces
        if not (is_paragraph or label_alone or self.continues(cur.last, line, self.cur_indent)):
            return False
        cur.last = line
        cur.pieces.append((line.body, line.end))
        return True

    # ----- headings ------------------------------------------------------------------------
    def heading(
        self,
        first: _Line,
        title: _Line,
        *,
        rest: int,
        number: str,
        level: int,
        style: str,
        last: _Line | None = None,
    ) -> None:
        self.resolve_pending(inside=False)
        raw = self.s(title)
        # A heading keeps its number in its text ("1.2 Setup", "第1章 設定"), as a Markdown
        # heading does, so that it reaches the section path; symbols ("■", "【") do not.
        skip = 0 if number else rest + (len(raw[rest:]) - len(raw[rest:].lstrip()))
        text_start = title.body + skip
        block = self.new_block(ElementKind.SECTION_HEADER, first, [(text_start, title.end)], done=True)
        block.last = last or title
        block.level = level
        block.number = number
        hints: list[tuple[str, str]] = [("raw", raw), ("style", style)]
        block.hints = tuple(hints)
        self.heading_levels.setdefault(style, level)
        self.last_level = level
        self.prev_closed = True

    def closed_before(self, line: _Line) -> bool:
        return line.blank_before or self.prev_closed

    def try_setext(self, line: _Line) -> bool:
        over = _RULE.fullmatch(line.head)
        title = self.peek(0) if over else line
        under = self.peek(1) if over else self.peek(0)
        if title is None or under is None or (title.blank_before and over) or under.blank_before:
            return False
        m = _RULE.fullmatch(under.head)
        if m is None or (over is not None and over.group(1) != m.group(1)) or _RULE.fullmatch(title.head):
            return False
        if not (over or line.blank_before) or _width(self.s(title), 121) > 120:
            return False
        key = f"underline{'+over' if over else ''}:{m.group(1)}"
        level = self.heading_levels.get(key) or len({k for k in self.heading_levels if "underline" in k}) + 1
        number, rest = self.title_number(title)
        if over:
            self.take()
        self.take()
        self.heading(line, title, rest=rest, number=number, level=level, style=key, last=under)
        return True

    def title_number(self, line: _Line) -> tuple[str, int]:
        head = line.head
        hm = match_heading_number(head, self.heading_styles)
        if hm is not None and any(c.isalnum() for c in hm[0]):
            return hm[0], hm[2]
        sm = match_step_marker(head, self.step_styles)
        if sm is not None and sm.ordered:
            return sm.marker, sm.rest_start
        return "", 0

    def try_heading_number(self, line: _Line) -> bool:
        s = line.head
        hm = match_heading_number(s, self.heading_styles)
        if hm is None or line.end - line.body > _MATCH_PREFIX:
            return False
        marker, level, rest = hm
        title = s[rest:].strip()
        symbol = not any(c.isalnum() for c in marker)
        if marker == "【":
            title = title.removesuffix("】").strip()
        if not title and not symbol:  # "第1章" alone: the number is the whole heading
            title, rest = marker, 0
        if not _short_title(title, 80) or (not symbol and level > 1 and not self.closed_before(line)):
            return False
        style = next((st.name for st in self.heading_styles if st.pattern.match(s)), "heading")
        self.heading(line, line, rest=rest, number="" if symbol else marker, level=level, style=style)
        if marker == "【":  # the heading text leaves out the closing bracket too
            block = self.queue[-1]
            block.pieces = [(block.pieces[0][0], line.body + s.rstrip().rfind("】"))]
        return True

    def numbered_heading(self, line: _Line, m: StepMarker, ordinal: int | None) -> bool:
        """Whether a ``1.`` / ``(1)`` / ``1)`` line numbers a heading rather than a step.

        Conservative on purpose: the line must be short, no sentence, flush left, not the
        next item of an open list, and introduce either sub-sections (``1.`` → ``1.1``) or
        a body of at least two paragraphs before its next sibling.
        """
        rest = self.s(line)[m.rest_start :].strip()
        if m.style not in _HEADING_CAPABLE or line.indent > 1 or not _short_title(rest, 80):
            return False
        if self.stack and self.place(line.indent, m.style, ordinal)[1] == "sibling":
            return False
        nxt = self.peek(0)
        if nxt is None or not self.closed_before(line):
            return False
        digits = re.sub(r"[^0-9０-９]", "", m.marker).translate(FULLWIDTH_DIGITS)
        hm = match_heading_number(nxt.head, self.heading_styles)
        if digits and hm is not None and hm[0].translate(FULLWIDTH_DIGITS).startswith(digits + "."):
            return True
        if not nxt.blank_before or self.marker(nxt) is not None:
            return False
        return self.has_long_body(m.style)

    def has_long_body(self, style: str) -> bool:
        lines = paragraphs = 0
        sentence = False
        for k in range(_LOOKAHEAD):
            ln = self.peek(k)
            if ln is None:
                break
            sm = self.marker(ln) if ln.indent <= 1 else None
            if sm is not None and sm.style == style:
                break
            lines += 1
            paragraphs += ln.blank_before
            sentence = sentence or _ends_sentence(self.tail(ln))
        return lines >= 3 and paragraphs >= 2 and sentence

    def try_inferred_heading(self, line: _Line) -> bool:
        """A short title-like line, told apart from text by what follows it (see :meth:`evidence`)."""
        if not self.closed_before(line) or (self.stack and not self.pending):
            return False
        s = self.s(line)
        if not _title_like(s):
            return False
        evidence = self.evidence(line, 0, _width(s, 61), chain=True)
        if evidence is None:
            return False
        # After a list, while a paragraph level with its items keeps it open, only strong
        # evidence closes it: a repeated title or a title over a menu path, not nested deeper.
        if self.pending and (evidence not in _STRONG or line.indent > self.pending[0].first.indent):
            return False
        style, level = self.inferred_level(line)
        repeat = self.take() if evidence == "repeat" else None
        self.heading(line, line, rest=0, number="", level=level, style=style, last=repeat)
        self.queue[-1].hints += (("inferred", "true"), ("inferred_by", evidence))
        if evidence == "path":
            self.ui_path()
        return True

    def inferred_level(self, line: _Line) -> tuple[str, int]:
        """``(style, level)`` of an inferred heading."""
        block = self.heading_levels.get("inferred")
        sub = block is not None and self.block_inferred and not line.blank_before
        self.block_inferred = self.block_inferred or line.blank_before
        if block is None:
            return "inferred", self.last_level + 1
        # PDF text keeps a blank line before a section title but not before the
        # sub-headings inside it; without that gap the heading is one level deeper.
        return ("inferred-sub", block + 1) if sub else ("inferred", block)

    def evidence(self, line: _Line, k: int, width: int, *, chain: bool) -> str | None:
        """Why the title-like ``line`` (followed by look-ahead line ``k``) is a heading, if it is.

        * ``"repeat"``: the next line repeats it verbatim (a title printed twice, as
          PDF extraction gives a heading that is also the first line of the body);
        * ``"path"``: a run of very short labels (a menu path whose ``>`` glyphs were
          lost, e.g. "Settings / General / Network") and then a body paragraph; a single
          label is enough only when a blank line sets the title apart;
        * ``"body"``: a longer paragraph follows straight away;
        * ``"heading"``: a blank line sets it apart and the next line is a heading by
          one of the rules above (a section title right above its first sub-heading).
        """
        nxt = self.peek(k)
        if nxt is None or nxt.body in self.pages.furniture:
            return None
        if not nxt.blank_before and self.s(nxt) == self.s(line):
            return "repeat" if self.repeat_ends(line, k + 1) else None
        run = self.path_run(k)
        if (
            run
            and (run >= 2 or line.blank_before)
            and self.above_labels(line, k, run)
            and self.body_follows(width, k + run, attached=True)
        ):
            return "path"
        if self.body_follows(width, k, lead=line.blank_before):
            return "body"
        s = self.s(nxt)
        chained = (
            chain
            and line.blank_before
            and not nxt.blank_before
            and _title_like(s)
            and self.evidence(nxt, k + 1, _width(s, 61), chain=False) is not None
        )
        return "heading" if chained else None

    def repeat_ends(self, title: _Line, k: int) -> bool:
        """Whether look-ahead line ``k``, after a title and its repeat, may follow a heading.

        Not a continuation, and, unless a blank line sets the title apart, not another
        short label either ("Yes / Yes / No" are repeated cells, not a title).
        """
        after = self.peek(k)
        if after is None or after.blank_before:
            return True
        s = self.s(after)
        return not (s[0].islower() or s[0] in _CONTINUES_LINE or (not title.blank_before and _ui_label(s)))

    def above_labels(self, line: _Line, k: int, run: int) -> bool:
        """Whether ``line`` reads as a title over the labels: more than one word, wider than each."""
        s = self.s(line)
        if len(s.split()) < 2 and not any(_is_cjk(c) for c in s[:8]):
            return False  # "Settings / General / Network": the first label, not a title
        width = _width(s, 61)
        labels = (self.peek(i) for i in range(k, k + run))
        return all(_width(self.s(ln), 31) <= width for ln in labels if ln is not None)

    def path_run(self, k: int) -> int:
        """How many short UI labels start at look-ahead line ``k`` (0 past :data:`_MAX_PATH`)."""
        n = 0
        while (ln := self.peek(k + n)) is not None and not ln.blank_before and _ui_label(self.s(ln)):
            if ln.body in self.pages.furniture or self.marker(ln) is not None:
                break
            n += 1
            if n > _MAX_PATH:  # a column of labels, not a path
                return 0
        return n

    def ui_path(self) -> None:
        """Emit the menu path under a heading as one text element, its labels joined by ``>``."""
        first = self.peek(0)
        if first is None:
            return
        block = self.new_block(ElementKind.TEXT, first, [], done=True)
        for _ in range(self.path_run(0)):
            ln = self.take()
            if ln is None:
                break
            block.pieces.append((ln.body, ln.end))
            block.last = ln
        block.join = "path"
        block.hints = (("ui_path", "true"),)
        self.prev_closed = True

    def body_follows(self, width: int, k: int = 0, *, attached: bool = False, lead: bool = False) -> bool:
        """Whether a paragraph starts at look-ahead line ``k``, under a title ``width`` wide.

        ``attached``: the paragraph may not be set apart by a blank line. ``lead``: the
        title starts a block, so one whole sentence wider than the title is body enough.
        """
        b1 = self.peek(k)
        if b1 is None or (attached and b1.blank_before) or not self.opens_paragraph(b1, k, width):
            return False
        s1 = self.s(b1)
        if lead and not b1.blank_before and _ends_sentence(s1) and _width(s1, 200) > max(width, 30):
            return True
        total, sentence = 0, False
        for i in range(k, k + 3):
            ln = self.peek(i)
            if ln is None or (i > k and ln.blank_before) or ln.body in self.pages.furniture:
                break
            total += _width(self.s(ln), 200)
            sentence = sentence or _ends_sentence(self.tail(ln))
        return (sentence or total >= 100) and total >= max(40, width * 3 // 2)

    def opens_paragraph(self, b1: _Line, k: int, width: int) -> bool:
        """Whether look-ahead line ``k`` (``b1``) can be the first line of a body paragraph."""
        if b1.body in self.pages.furniture or self.marker(b1) is not None:
            return False
        s1 = self.s(b1)
        if s1[0].islower() or s1[0] in _CONTINUES_LINE:
            return False
        b1_width = _width(s1, 31)
        b2 = self.peek(k + 1)
        # "In the / Guide / , move to…": a paragraph whose first line breaks at a UI label
        wraps_on = (
            _ends_with_connector(s1)
            and b2 is not None
            and not b2.blank_before
            and not (b2.head[0].islower() or b2.head[0] in _CONTINUES_LINE)
        )
        if not (b1_width >= 30 or (b1_width > width and _ends_sentence(s1)) or wraps_on):
            return False
        before = self.peek(k - 1) if k else self.prev_line
        # a short line inside a "Label: text" list is one of its labels
        return before is None or not (_DEFINITION.match(self.s(before)) and _DEFINITION.match(s1))

    # ----- other blocks --------------------------------------------------------------------
    def try_rule(self, line: _Line) -> bool:
        if _RULE.fullmatch(line.head) is None:
            return False
        if self.cur is not None:  # a separator under a block belongs to that block
            self.cur.last = line
            self.close_cur()
        else:
            block = self.new_block(ElementKind.TEXT, line, [(line.body, line.end)], done=True)
            block.hints = (("separator", "true"),)
        self.prev_closed = True
        return True

    def try_admonition(self, line: _Line) -> bool:
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

    def try_table(self, line: _Line) -> bool:
        row = _cells(self.s(line)) if line.end - line.body <= 1000 else None
        nxt = self.peek(0)
        if row is None or nxt is None or nxt.blank_before or self.marker(nxt) is not None:
            return False
        if nxt.body in self.pages.furniture or not _same_table(row, _cells(self.s(nxt)) or (0, (), False)):
            return False
        block = self.new_block(ElementKind.TABLE, line, [], done=False)
        block.join = "raw"
        while (
            (nxt := self.peek(0)) is not None
            and not nxt.blank_before
            and nxt.body not in self.pages.furniture
            and self.marker(nxt) is None
            and _same_table(row, _cells(self.s(nxt)) or (0, (), False))
        ):
            block.last = self.take() or nxt
        block.hints = (("columns", str(row[0])),)
        block.done = True
        self.attach(block)
        self.prev_closed = True
        return True

    def try_code(self, line: _Line) -> bool:
        base = self.stack[-1].indent + 4 if self.stack and not self.pending else 0
        if not line.blank_before or line.indent < base + 4 or _CODEISH.search(line.head) is None:
            return False
        strip = line.body - line.start
        block = self.new_block(ElementKind.CODE, line, [(line.body, line.end)])
        block.join = "lines"
        while (nxt := self.peek(0)) is not None and nxt.indent >= line.indent:
            if nxt.body in self.pages.furniture:
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


def _join_wrapped(text: str, pieces: list[tuple[int, int]]) -> str:
    """Join hard-wrapped lines: no space between CJK characters, one space otherwise."""
    out: list[str] = []
    last = ""
    for start, end in pieces:
        seg = text[start:end]
        if not seg:
            continue
        if out and not (_is_cjk(last) or _is_cjk(seg[0])):
            out.append(" ")
        out.append(seg)
        last = seg[-1]
    return "".join(out)


@cache
def _style_filters(
    step_styles: tuple[StepStyle, ...], heading_styles: tuple[HeadingStyle, ...]
) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """The step prefilter and the "special line" pattern of the styles, built once per set of styles."""
    step_prefilter = _prefilter([st.pattern for st in step_styles])
    heading_prefilter = _prefilter([st.pattern for st in heading_styles])
    special = (
        re.compile(f"{_RULE.pattern}|{LEADING_LABEL.pattern}|{heading_prefilter.pattern}", re.IGNORECASE)
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
    step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES,
    heading_styles: tuple[HeadingStyle, ...] = DEFAULT_HEADING_STYLES,
) -> Iterator[LayoutElement]:
    """Yield the layout elements of plain or PDF-extracted text, in reading order.

    Args:
        text: The document text. Any string is accepted; callers reject binary input.
        source_id: Id of the source; element ids are ``f"{source_id}#e{order}"`` and list
            ids ``f"{source_id}#l{n}"``, stable across runs.
        step_styles: Step numbering styles to recognise, most specific first.
        heading_styles: Heading numbering styles to recognise, most specific first.

    Yields:
        :class:`LayoutElement` values whose spans cover every non-whitespace character
        of ``text``. Elements are held back only while the reader decides whether a
        paragraph between list items belongs to the list (a few paragraphs at most).
    """
    if not text.strip():
        return
    yield from _Reader(text, source_id, step_styles, heading_styles).run()


def read_plain_text(
    text: str,
    *,
    source_id: str,
    step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES,
    heading_styles: tuple[HeadingStyle, ...] = DEFAULT_HEADING_STYLES,
) -> list[LayoutElement]:
    """Return :func:`iter_plain_text` as a list; empty or blank text gives ``[]``."""
    return list(
        iter_plain_text(text, source_id=source_id, step_styles=step_styles, heading_styles=heading_styles)
    )

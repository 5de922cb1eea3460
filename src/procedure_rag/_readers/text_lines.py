"""Lines of plain text, the pages they sit on, and the blocks the plain-text reader builds.

The plain-text reader (:mod:`procedure_rag._readers.plaintext`) and its heading rules
(:mod:`procedure_rag._readers.headings`) both look at text through these: a
:class:`Line` is a non-blank line with its offsets and indentation, :class:`Pages`
knows page numbers and running furniture by offset, and a :class:`Block` is an
element being built from lines.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from procedure_rag._readers.draft import ElementDraft
from procedure_rag._readers.text_contents import find_contents_lines, has_contents_cue
from procedure_rag._readers.text_furniture import find_running_lines
from procedure_rag._types import ElementKind

__all__ = [
    "CAPTION",
    "CONTINUES_JA",
    "CONTINUES_LINE",
    "MATCH_PREFIX",
    "RULE",
    "Block",
    "Line",
    "OpenItem",
    "Pages",
    "display_width",
    "ends_sentence",
    "ends_with_connector",
    "is_cjk",
    "iter_lines",
    "line_bounds",
]

# Line breaks; only the form feed also breaks the page.
_BREAK = re.compile(r"\r\n|[\r\n\f\v\x1c\x1d\x1e\x85\u2028\u2029]")
# A page-number line. Two patterns, the text's first line and a line after a break: one that
# opens with ``^`` or a look-behind is tried at every character, one that opens with a
# character class is found by a scan in C.
_FOOTER_LINE = (
    r"[ \t]*(?P<body>"
    r"[-–—−－][ \t]*(?P<a>\d{1,4})[ \t]*[-–—−－]"
    r"|(?:Page|PAGE|page|P\.|p\.)[ \t]*(?P<b>\d{1,4})(?:[ \t]*(?:/|of)[ \t]*\d{1,4})?"
    r"|(?P<c>\d{1,4})[ \t]*/[ \t]*\d{1,4}"
    r"|(?P<d>\d{1,4})(?=[ \t\r\n\v]*\f)"  # a bare number only right before a page break
    r")[ \t]*(?=[\r\n\f]|\Z)"
)
_FOOTER_FIRST = re.compile(_FOOTER_LINE)
_FOOTER_AFTER_BREAK = re.compile(r"[\n\r\f]" + _FOOTER_LINE)
_FORM_FEED = re.compile("\f")
_FIRST_LINE = re.compile(r"[\s]*([^\r\n\f]*)")
RULE = re.compile(r"([-=~^*+#_`'\":.])\1{2,}")
_WIDE_CHARS = "\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
# Runs of characters one column wide: a line of Japanese holds fewer of them than wide
# characters, so counting them is the shorter way to its width (1.9x over PDF page lines).
_NARROW_RUN = re.compile(f"[^{_WIDE_CHARS}]+")
_SENTENCE_END = frozenset(".!?。．！？")
_CLOSERS = "\"'”’」』)）]】"
CONTINUES_LINE = frozenset(",.;:、。，．)）」』]")
# Japanese that never starts a word: a line opening with it goes on from the line before.
CONTINUES_JA = frozenset("をんーぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ")
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
# A figure or table caption: a caption word and its number (図 2-6, 表 3, Figure 1, Table 1.2).
CAPTION = re.compile(
    r"^(?:図|表|写真|画面|Figure|Fig\.?|Table|Tab\.|Photo|Screen)\s*[0-9０-９]+(?:[-.‐－―–][0-9０-９]+)*(?:[\s.:：．]|$)",
    re.IGNORECASE,
)
MATCH_PREFIX = 256  # markers sit at the start of a line; never run a pattern over a huge line


@dataclass(slots=True)
class Line:
    start: int  # offset of the line's first character
    body: int  # offset of its first non-whitespace character
    end: int  # offset just past its last non-whitespace character
    indent: int  # leading whitespace in columns
    blank_before: bool  # a blank line, a page break or the start of the text precedes it
    head: str  # the first characters of the line, where markers are matched
    page_top: bool = False  # a page break precedes it (the page before may end mid-paragraph)


@dataclass(slots=True, kw_only=True)
class Block(ElementDraft):
    """An element being built from source lines; its text is sliced from them when it is done."""

    order: int
    first: Line
    last: Line
    pieces: list[tuple[int, int]] = field(default_factory=list)
    join: str = "wrap"  # "wrap": unwrap lines; "lines": keep line breaks; "raw": source slice;
    # "path": menu labels joined by " > "
    done: bool = False
    resolved: bool = True


@dataclass(slots=True)
class OpenItem:
    """An open list item on the nesting stack."""

    indent: int
    style: str
    ordinal: int | None
    element_id: str


class Pages:
    """Page numbers by offset, from form feeds and page-number footers; furniture and contents lines.

    Attributes:
        offsets: Where each page but the last ends.
        numbers: Each page's number.
        furniture: Body offset of each furniture line -> its kind (page-number footers,
            running headers and footers: see :mod:`procedure_rag._readers.text_furniture`).
        contents: Body offsets of contents lines.
    """

    def __init__(self, text: str, batch_running: frozenset[tuple[str, str]] = frozenset()) -> None:
        footers: list[tuple[int, int, int]] = []  # (line end, number, body offset)
        for m in _footer_lines(text):
            number = next(g for g in m.group("a", "b", "c", "d") if g is not None)
            footers.append((m.end(), int(number), m.start("body")))
        self.furniture: dict[int, ElementKind] = {body: ElementKind.PAGE_FOOTER for _, _, body in footers}
        paged = "\f" in text
        cue = has_contents_cue(text)
        lines = line_bounds(text) if paged or cue or batch_running else []
        numbered: list[tuple[int, int]] = [(end, num) for end, num, _ in footers]
        pages = _split_pages(text, lines) if paged else [lines]
        if paged or batch_running:  # running lines, and the numbers they print, of the pages
            running = find_running_lines(text, pages, self.furniture, batch_running)
            self.furniture.update(running.kinds)
            # A number printed on a page ends that page, as a footer would.
            numbered += [(pages[i][-1][1], num) for i, num in running.printed.items()]
            numbered.sort()
        bounds: list[tuple[int, int | None]] = list(numbered)
        fi = 0
        ff = text.find("\f")
        while ff != -1:
            while fi < len(numbered) and numbered[fi][0] <= ff:
                fi += 1
            prev_end = numbered[fi - 1][0] if fi else -1
            # A footer followed only by whitespace and the page break is one boundary.
            if prev_end < 0 or text[prev_end:ff].strip():
                bounds.append((ff, None))
            ff = text.find("\f", ff + 1)
        bounds.sort(key=lambda b: b[0])
        self.offsets = [b[0] for b in bounds]
        self.numbers = self._number(bounds)
        self._find_headers(text)
        self.contents = find_contents_lines(text, pages, self.furniture) if cue else frozenset()

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
            if counts[line] >= 3 and display_width(line) <= 80:
                self.furniture[body] = ElementKind.PAGE_HEADER

    def page_at(self, offset: int) -> int:
        return self.numbers[bisect_right(self.offsets, offset)]

    def apart(self, offset: int) -> bool:
        """Whether the line whose body starts at ``offset`` stands apart: furniture or contents."""
        return offset in self.furniture or offset in self.contents


def _footer_lines(text: str) -> Iterator[re.Match[str]]:
    """The page-number lines of ``text``, in order."""
    first = _FOOTER_FIRST.match(text)
    if first is not None:
        yield first
    yield from _FOOTER_AFTER_BREAK.finditer(text, first.end() if first is not None else 0)


def _split_pages(text: str, lines: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The lines of each page between form feeds."""
    breaks = [m.start() for m in _FORM_FEED.finditer(text)]
    pages: list[list[tuple[int, int]]] = [[] for _ in range(len(breaks) + 1)]
    for line in lines:
        pages[bisect_right(breaks, line[0])].append(line)
    return pages


# A non-blank line's text: from its first non-space character to its last, no line break
# inside (every line break is whitespace, so the line's ends are ``\S``).
_LINE_TEXT = re.compile(r"\S(?:[^\r\n\f\v\x1c\x1d\x1e\x85\u2028\u2029]*\S)?")


def line_bounds(text: str) -> list[tuple[int, int]]:
    """``(body, end)`` of each non-blank line of ``text``: :func:`iter_lines`' offsets, found in C."""
    return [m.span() for m in _LINE_TEXT.finditer(text)]


def iter_lines(text: str) -> Iterator[Line]:
    """Yield the non-blank lines of ``text`` with their offsets."""
    pos = 0
    blank = True
    page = False
    for m in _BREAK.finditer(text):
        line = _make_line(text, pos, m.start(), blank, page)
        if line is None:
            blank = True
        else:
            blank = page = False
            yield line
        if m.group() == "\f":
            blank = page = True
        pos = m.end()
    line = _make_line(text, pos, len(text), blank, page)
    if line is not None:
        yield line


def _make_line(text: str, start: int, stop: int, blank_before: bool, page_top: bool) -> Line | None:
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
    return Line(start, body, end, indent, blank_before, text[body : min(end, body + MATCH_PREFIX)], page_top)


def display_width(s: str, cap: int = 400) -> int:
    """Display width of ``s`` (wide characters count 2), looking at most ``cap`` characters."""
    s = s[:cap]
    if s.isascii():  # most lines: no wide character can be there
        return len(s)
    return 2 * len(s) - sum(map(len, _NARROW_RUN.findall(s)))


def is_cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x3000 <= o <= 0x30FF or 0x3400 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF


def ends_sentence(tail: str) -> bool:
    tail = tail.rstrip().rstrip(_CLOSERS)
    return bool(tail) and tail[-1] in _SENTENCE_END


def ends_with_connector(tail: str) -> bool:
    """Whether ``tail`` ends mid-phrase: a function word, a particle, a comma or a hyphen."""
    tail = tail.rstrip()
    if not tail:
        return False
    if tail[-1] in _JA_CONNECTORS or tail[-1] in ",-–":
        return True
    words = tail.rsplit(None, 1)
    return words[-1].lower() in _EN_CONNECTORS

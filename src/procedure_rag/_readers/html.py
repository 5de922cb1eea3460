"""HTML reader: help pages and exported manuals, parsed with lxml.

The page's own structure decides: ``<h1>``-``<h6>`` give heading levels, ``<ol>``/``<ul>``
give list items with the number a reader sees (``start``, ``type``, ``value``,
``reversed`` and ``list-style-type`` honoured), tables become Markdown pipe tables,
``<pre>`` becomes code, ``<figure>``/``<img>``/``<figcaption>`` pictures and captions,
admonition classes (``note``, ``warning``, Sphinx's ``div.admonition``, ``<aside>``)
notes. ``<b>``, ``<strong>`` and ``<kbd>`` stay as ``**…**`` so that step targets are
found; link targets are dropped. Script, style, ``<nav>`` and ``<head>`` are ignored.

Spans are line ranges: lxml tells on which source line each element's start tag
sits, so an element covers the source from its first line up to where the next
element starts (text without a tag of its own is found by its first word). Every
line of the page body lies in some span.

The reader takes ``str``. Bytes are decoded by :func:`decode_html` (byte-order mark,
then ``<meta charset>``, then UTF-8); a caller that wants spans into the text must
decode first and keep the ``str``.

The block machinery at the top (:class:`BlockEmitter`, :func:`place`) is shared
with the reStructuredText reader.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from procedure_rag._errors import ReaderError
from procedure_rag._language.labels import LABEL_WORDS, admonition_label, leading_label
from procedure_rag._language.numbering import DEFAULT_STEP_STYLES, StepMarker, StepStyle, match_step_marker
from procedure_rag._language.text import join_lines
from procedure_rag._readers.tables import pipe_table
from procedure_rag._types import ElementKind, LayoutElement, Span

_SURROGATE = re.compile("[\ud800-\udfff]")

if TYPE_CHECKING:
    from lxml.html import HtmlElement, HTMLParser  # type: ignore[import-untyped]

__all__ = [
    "BlockEmitter",
    "Draft",
    "decode_html",
    "format_number",
    "iter_html",
    "place",
    "read_html",
]

K = ElementKind

# ---------------------------------------------------------------------------------------------
# Shared by the markup readers (HTML, reStructuredText): blocks in reading order, then spans.
# ---------------------------------------------------------------------------------------------

# Step markers that read as steps on their own; "1." or "-" at the start of one
# paragraph is as often prose ("1. の設定は…") and needs a second marked line.
_WEAK_STYLES = frozenset({"dotted", "close-paren", "roman", "letter", "bullet", "bullet-cjk", "sphinx-auto"})
_WORD = re.compile(r"[A-Za-z0-9]{1,12}|[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]{1,6}")
_SEARCH_WINDOW = 20_000


@dataclass
class Draft:
    """An element before its span is known.

    ``line`` is the 0-based source line the block starts on, when the parser says;
    the span stage finds blocks without one by their first word.
    """

    element_id: str
    kind: ElementKind
    text: str
    line: int | None
    level: int = 0
    number: str = ""
    ordered: bool = False
    parent_id: str | None = None
    list_id: str | None = None
    admonition: str = ""
    hints: tuple[tuple[str, str], ...] = ()
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
            self._lists.append(_OpenList(f"{self.source_id}#l{self._lists_opened}", 0))
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
                item.element_id,
                K.LIST_ITEM,
                text,
                item.line if item.line is not None else line,
                level=item.level,
                number=item.number,
                ordered=item.ordered,
                parent_id=item.parent_id,
                list_id=item.list_id,
            )
        )
        return True

    # -- blocks -----------------------------------------------------------------------------
    def heading(
        self, text: str, level: int, line: int | None, *, kind: ElementKind = K.SECTION_HEADER
    ) -> None:
        """A heading; it stands outside any list."""
        self._flush_item()
        self._append(Draft(self._next_id(), kind, text, line, level=level))

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
                self._next_id(),
                kind,
                text,
                line,
                parent_id=parent,
                list_id=list_id,
                admonition=admonition,
                hints=hints,
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
            list_id = list_id or self._pseudo_list or f"{self.source_id}#l{self._lists_opened}"
            if self._pseudo_list is None and not self._lists:
                self._lists_opened += 1
        draft = Draft(
            self._next_id(),
            K.LIST_ITEM,
            text,
            line,
            level=level,
            number=marker.marker,
            ordered=marker.ordered,
            parent_id=parent,
            list_id=list_id,
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
        return f"{self.source_id}#e{len(self.drafts)}"

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
        elements.append(
            LayoutElement(
                element_id=draft.element_id,
                kind=draft.kind,
                text=draft.text,
                order=i,
                span=Span(start, end),
                level=draft.level,
                number=draft.number,
                ordered=draft.ordered,
                parent_id=draft.parent_id,
                list_id=draft.list_id,
                admonition=draft.admonition,
                hints=draft.hints,
            )
        )
    return elements


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

_BR = "\u2028"  # a line break the page asked for, as opposed to a wrapped source line
_SKIP = frozenset(
    {"script", "style", "noscript", "template", "head", "nav", "title", "iframe", "object", "embed", "svg"}
)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_LISTS = frozenset({"ol", "ul", "menu", "dir"})
_CODE_TAGS = frozenset({"pre", "listing", "xmp", "plaintext"})
_BLOCKS = frozenset(
    {
        *_HEADINGS,
        *_LISTS,
        *_CODE_TAGS,
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "aside",
        "blockquote",
        "li",
        "dl",
        "dt",
        "dd",
        "table",
        "figure",
        "figcaption",
        "caption",
        "hr",
        "address",
        "details",
        "summary",
        "center",
        "form",
        "fieldset",
        "legend",
        "body",
        "html",
        "tr",
        "td",
        "th",
        "thead",
        "tbody",
        "tfoot",
        "hgroup",
        "search",
        "dialog",
    }
)
_STRONG = frozenset({"b", "strong", "kbd"})
_INLINE_CODE = frozenset({"code", "tt", "samp"})
_ADMONITION_TAGS = frozenset({"div", "aside", "section", "p", "blockquote", "table"})
_MAX_DEPTH = 48  # deeper block nesting is read as flat text: no recursion limit to hit
_SPACE_RUN = re.compile(r"[ \t\f\v\u00a0]+")
_LINE_BREAKS = re.compile(r"[\r\n]+")
_LIST_STYLE = re.compile(r"list-style(?:-type)?\s*:\s*(?P<s>[a-z-]+)", re.IGNORECASE)
_CSS_TYPES = {
    "decimal": "1",
    "lower-alpha": "a",
    "lower-latin": "a",
    "upper-alpha": "A",
    "upper-latin": "A",
    "lower-roman": "i",
    "upper-roman": "I",
}
_LANGUAGE_CLASS = re.compile(r"(?:language|lang|highlight|brush)[-:]\s*(?P<lang>[\w+#.-]+)")
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]{0,300}\?>")
_META_CHARSET = re.compile(rb"<meta[^>]{0,500}?charset\s*=\s*[\"']?\s*(?P<cs>[A-Za-z0-9_:.\-]{1,40})", re.I)
_XML_ENCODING = re.compile(rb"\A\s*<\?xml[^>]{0,200}?encoding\s*=\s*[\"'](?P<cs>[A-Za-z0-9_.\-]{1,40})")
# Labels browsers treat as their Windows supersets (WHATWG Encoding Standard).
_CHARSET_ALIASES = {
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
}


def decode_html(data: bytes) -> str:
    """Decode an HTML page's bytes: byte-order mark, then the declared charset, then UTF-8.

    ``<meta charset>``, ``<meta http-equiv="Content-Type" content="…; charset=…">`` and
    an XML declaration are read from the first 4 KiB. ``Shift_JIS`` is decoded as
    Windows-31J (cp932) and ``ISO-8859-1`` as Windows-1252, as browsers do.

    Raises:
        ReaderError: For an unknown charset, or bytes that are not valid in the
            declared charset (or in UTF-8 when none is declared).
    """
    data = bytes(data)
    for bom, codec in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return _decode(data, codec, "byte-order mark")
    head = data[:4096]
    m = _XML_ENCODING.match(head) or _META_CHARSET.search(head)
    if m is None:
        return _decode(data, "utf-8", "no declared charset, so UTF-8")
    label = m.group("cs").decode("ascii").lower()
    codec = _CHARSET_ALIASES.get(label, label)
    if codec.startswith(("utf-16", "utf16")):  # a page that can declare it in ASCII is not UTF-16
        codec = "utf-8"
    try:
        codecs.lookup(codec)
    except LookupError:
        raise ReaderError("html", "charset", f"unknown charset {label!r}") from None
    return _decode(data, codec, f"declared charset {label!r}")


def _decode(data: bytes, codec: str, why: str) -> str:
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        problem = f"bytes are not valid {exc.encoding} ({why}): {exc.reason} at byte {exc.start}"
        raise ReaderError("html", "charset", problem) from None


def _tag(el: HtmlElement) -> str:
    """Lower-case tag name; ``""`` for comments and processing instructions."""
    tag = el.tag
    return tag.lower() if isinstance(tag, str) else ""


def _line(el: HtmlElement) -> int | None:
    line = el.sourceline
    return line - 1 if isinstance(line, int) and line > 0 else None


def _hidden(el: HtmlElement) -> bool:
    return el.get("hidden") is not None or el.get("aria-hidden") == "true"


def _classes(el: HtmlElement) -> list[str]:
    return (el.get("class") or "").lower().split()


def _render(el: HtmlElement, *, marks: bool = True, skip: HtmlElement | None = None) -> str:  # noqa: PLR0912 - one pass over the events
    """The visible text of ``el`` and its descendants (not its tail).

    ``<br>`` and block boundaries become :data:`_BR`; with ``marks``, ``<b>``,
    ``<strong>`` and ``<kbd>`` become ``**…**`` and inline code ```…```. List items
    get their bullet or number. Walks iteratively: nesting depth is no limit.
    """
    from lxml import etree  # type: ignore[import-untyped]  # noqa: PLC0415 - optional, imported on first use

    parts: list[str] = []
    opened: list[int] = []  # index in parts of each open "**" / "`", or -1 when not marked
    strong_depth = 0
    counters: list[list[int]] = []  # per open list: [next number] (0 for bullets)
    walker = etree.iterwalk(el, events=("start", "end"))
    for event, node in walker:
        tag = _tag(node)
        if event == "start":
            if not tag or (tag in _SKIP and node is not el) or node is skip or _hidden(node):
                walker.skip_subtree()
                opened.append(-2)
                continue
            mark = ""
            if tag in _BLOCKS or tag == "br":
                parts.append(_BR)
            if tag in _LISTS:
                counters.append([_int(node.get("start"), 1) if tag == "ol" else 0])
            elif tag == "li" and counters:
                n = counters[-1][0]
                parts.append(f"{n}. " if n else "- ")
                counters[-1][0] = n + 1 if n else 0
            elif tag == "img" and node.get("alt", "").strip():
                parts.append(f"![{node.get('alt', '').strip()}]")
            elif marks and tag in _STRONG and strong_depth == 0:
                mark = "**"
            elif marks and tag in _INLINE_CODE:
                mark = "`"
            strong_depth += tag in _STRONG
            opened.append(len(parts) if mark else -1)
            if mark:
                parts.append(mark)
            if node.text and tag not in ("textarea",):
                parts.append(node.text)
        else:
            index = opened.pop()
            if index >= 0:
                if "".join(parts[index + 1 :]).strip():
                    parts.append(parts[index])
                else:
                    parts[index] = ""
            if index != -2:
                strong_depth -= tag in _STRONG
                if tag in _LISTS and counters:
                    counters.pop()
                if tag in _BLOCKS:
                    parts.append(_BR)
            if node is not el and node.tail:
                parts.append(node.tail)
    return "".join(parts)


def _lines(raw: str) -> list[str]:
    """Visible lines of rendered text: wrapped source lines joined, spaces collapsed."""
    out = []
    for segment in raw.split(_BR):
        pieces = [p.strip() for p in _LINE_BREAKS.split(segment)]
        line = _SPACE_RUN.sub(" ", join_lines([p for p in pieces if p])).strip()
        if line:
            out.append(line)
    return out


def _int(value: str | None, default: int) -> int:
    try:
        return max(-(10**6), min(10**6, int(str(value).strip())))
    except ValueError:
        return default


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


@dataclass
class _Counter:
    next: int
    step: int
    style: str
    ordered: bool


class _HtmlWalker:
    """Walks the parsed page and feeds a :class:`BlockEmitter`."""

    def __init__(self, out: BlockEmitter) -> None:
        self.out = out
        self.counters: list[_Counter] = []
        self.figure_caption: list[str] = []

    def document(self, root: HtmlElement) -> None:
        body = root.find("body")
        if root.find(".//h1") is None:
            title = root.find(".//title")
            text = " ".join(_lines(_render(title, marks=False))) if title is not None else ""
            if title is not None and text:
                self.out.heading(text, 0, _line(title), kind=K.TITLE)
        self.container(body if body is not None else root, 0, _line(root))

    # -- containers and loose inline content -------------------------------------------------
    def container(self, el: HtmlElement, depth: int, line: int | None) -> None:
        run: list[str | HtmlElement] = [el.text] if el.text else []
        run_line = line
        for child in el:
            tag = _tag(child)
            if tag and tag not in _SKIP and not _hidden(child):
                if tag in _BLOCKS or (tag == "img" and not run_has_text(run)):
                    self.run(run, run_line)
                    run, run_line = [], None
                    self.block(child, depth + 1)
                else:
                    run.append(child)
            if child.tail:
                run.append(child.tail)
        self.run(run, run_line)

    def run(self, run: list[str | HtmlElement], line: int | None) -> None:
        """Inline content outside any block tag: a paragraph, a picture, or a code block."""
        pieces = [p for p in run if not (isinstance(p, str) and not p.strip())]
        if not pieces:
            return
        first = pieces[0]
        if line is None and not isinstance(first, str):
            line = _line(first)
        if all(not isinstance(p, str) and _tag(p) == "img" for p in pieces):
            for img in pieces:
                assert not isinstance(img, str)  # noqa: S101 - checked above
                self.picture(img)
            return
        if len(pieces) == 1 and not isinstance(first, str) and _tag(first) in _INLINE_CODE:
            code = first.text_content()
            if "\n" in code.strip():
                self.out.block(K.CODE, code.strip("\n").rstrip(), line)
                return
        raw = "".join(p if isinstance(p, str) else _render(p) for p in pieces)
        self.out.paragraph(_lines(raw), line)

    # -- blocks -------------------------------------------------------------------------------
    def block(self, el: HtmlElement, depth: int) -> None:  # noqa: PLR0912 - one dispatch table
        tag, line = _tag(el), _line(el)
        label = _admonition(el) if tag in _ADMONITION_TAGS else ""
        if depth > _MAX_DEPTH:
            self.out.paragraph(_lines(_render(el)), line)
        elif tag in _HEADINGS:
            text = " ".join(_lines(_render(el, marks=False)))
            if text:
                self.out.heading(text, int(tag[1]), line)
        elif label:
            self.admonition(el, label, line)
        elif tag in _LISTS:
            self.list(el, depth, line)
        elif tag == "li" and self.out.between_items():
            self.item(el, depth, line)
        elif tag == "table":
            self.table(el, depth, line)
        elif tag in _CODE_TAGS:
            self.code(el, line)
        elif tag == "img":
            self.picture(el)
        elif tag == "dt":
            self.out.block(K.TEXT, "\n".join(_lines(_render(el))), line, hints=(("term", "1"),))
        elif tag in ("figcaption", "caption"):
            self.out.block(K.CAPTION, " ".join(_lines(_render(el))), line)
        elif tag == "figure":
            self.figure(el, depth, line)
        elif tag not in ("hr",):
            self.container(el, depth, line)

    def admonition(self, el: HtmlElement, label: str, line: int | None) -> None:
        title = next(
            (c for c in el.iter() if c is not el and {"admonition-title", "title"} & set(_classes(c))), None
        )
        title_text = " ".join(_lines(_render(title, marks=False))) if title is not None else ""
        lines = _lines(_render(el, skip=title))
        if title_text and admonition_label(title_text) != label and title_text not in LABEL_WORDS["ja"]:
            lines.insert(0, title_text)
        self.out.block(K.TEXT, "\n".join(lines), line, admonition=label)

    def list(self, el: HtmlElement, depth: int, line: int | None) -> None:
        tag = _tag(el)
        ordered = tag == "ol"
        style = el.get("type") or ""
        css = _LIST_STYLE.search(el.get("style") or "")
        if css and css.group("s").lower() in _CSS_TYPES:
            style, ordered = _CSS_TYPES[css.group("s").lower()], True
        style = style if style in ("1", "a", "A", "i", "I") else "1"
        step = -1 if ordered and el.get("reversed") is not None else 1
        items = sum(1 for c in el if _tag(c) == "li")
        start = _int(el.get("start"), items if step < 0 else 1)
        self.counters.append(_Counter(start, step, style, ordered))
        self.out.open_list()
        self.container(el, depth, line)
        self.out.close_list()
        self.counters.pop()

    def item(self, el: HtmlElement, depth: int, line: int | None) -> None:
        counter = self.counters[-1] if self.counters else _Counter(1, 1, "1", False)
        number = "-"
        if counter.ordered:
            counter.next = _int(el.get("value"), counter.next)
            number = format_number(counter.next, counter.style) + "."
            counter.next += counter.step
        self.out.open_item(number, ordered=counter.ordered, line=line)
        self.container(el, depth, line)
        self.out.close_item()

    def table(self, el: HtmlElement, depth: int, line: int | None) -> None:
        rows = [tr for tr in el.iter("tr") if next(tr.iterancestors("table"), None) is el]
        cells = [[c for c in tr if _tag(c) in ("td", "th")] for tr in rows]
        if sum(len(r) for r in cells) <= 1:  # a layout table: one cell holding the content
            for cell in (c for r in cells for c in r):
                self.container(cell, depth, _line(cell))
            return
        grid: list[list[str]] = []
        for row in cells:
            out: list[str] = []
            for cell in row:
                out.append(" ".join(_lines(_render(cell))))
                out.extend([""] * (min(_int(cell.get("colspan"), 1), 100) - 1))
            grid.append(out)
        caption = el.find("caption")
        text = " ".join(_lines(_render(caption))) if caption is not None else ""
        if text:  # the caption reads first; the table is then found by its first cell
            self.out.block(K.CAPTION, text, line)
            line = None
        self.out.block(K.TABLE, pipe_table(grid), line)

    def code(self, el: HtmlElement, line: int | None) -> None:
        text = el.text_content()
        text = text[1:] if text.startswith("\n") else text
        classes = " ".join([el.get("class") or "", *((c.get("class") or "") for c in el.iter("code"))])
        lang = _LANGUAGE_CLASS.search(classes)
        hints = (("language", lang.group("lang")),) if lang else ()
        self.out.block(K.CODE, text.rstrip(), line, hints=hints)

    def picture(self, el: HtmlElement) -> None:
        alt = (el.get("alt") or el.get("title") or "").strip()
        text = alt or (self.figure_caption[-1] if self.figure_caption else "")
        src = (el.get("src") or "").strip()
        self.out.block(K.PICTURE, text, _line(el), hints=(("url", src),) if src else ())

    def figure(self, el: HtmlElement, depth: int, line: int | None) -> None:
        caption = el.find("figcaption")
        self.figure_caption.append(" ".join(_lines(_render(caption))) if caption is not None else "")
        self.container(el, depth, line)
        self.figure_caption.pop()


def run_has_text(run: Sequence[object]) -> bool:
    """Whether an inline run holds anything but whitespace."""
    return any(not isinstance(p, str) or p.strip() for p in run)


def _admonition(el: HtmlElement) -> str:
    classes = _classes(el)
    for name in classes:
        label = admonition_label(name)
        if label:
            return label
    role = (el.get("role") or "").lower()
    if role in ("note", "alert"):
        return "note" if role == "note" else "warning"
    if "admonition" in classes or _tag(el) == "aside":
        title = next((c for c in el.iter() if "admonition-title" in _classes(c)), None)
        named = admonition_label(" ".join(_lines(_render(title, marks=False)))) if title is not None else ""
        return named or "note"
    return ""


def iter_html(
    source: str | bytes, *, source_id: str, step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES
) -> Iterator[LayoutElement]:
    """Yield the layout elements of an HTML page in reading order.

    Args:
        source: The page as ``str``; bytes are decoded with :func:`decode_html`
            (spans then point into the decoded text).
        source_id: Id of the document; element ids start with it.
        step_styles: Step numbering styles recognised in paragraphs that are not
            HTML lists (``①``, ``（1）``, ``手順1``…).

    Yields:
        One element per block, each with a span (a line range) into the text.

    Raises:
        ReaderError: For undecodable bytes, input that is not text, text with an
            unpaired surrogate, or a page lxml cannot parse or stops reading part way
            (nesting deeper than libxml2's 2048 levels).
    """
    if isinstance(source, bytes | bytearray):
        source = decode_html(bytes(source))
    if not isinstance(source, str):
        raise ReaderError("html", "document", f"expected str or bytes, got {type(source).__name__}")
    if not source.strip():
        return
    surrogate = _SURROGATE.search(source)
    if surrogate is not None:  # libxml2 would stop there, keeping only what came before
        raise ReaderError("html", "document", f"holds an unpaired surrogate at offset {surrogate.start()}")
    try:
        import lxml.html  # noqa: PLC0415 - optional dependency, imported on first use
        from lxml import etree  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - lxml is a dependency
        msg = "reading HTML needs lxml: pip install 'lxml>=5'"
        raise ImportError(msg) from exc
    # lxml refuses str input that declares an encoding; blank it out, keeping offsets.
    text = _XML_DECLARATION.sub(lambda m: " " * len(m.group()), source, count=1)
    out = BlockEmitter(source_id, step_styles)
    try:
        # libxml2 drops whatever nests deeper than 255 elements unless told otherwise.
        parser = lxml.html.HTMLParser(huge_tree=True)
        root = lxml.html.document_fromstring(text, parser=parser)
        _check_parse(parser)
        _HtmlWalker(out).document(root)
    except etree.ParserError as exc:
        if "empty" in str(exc).lower():  # nothing but comments and markup: no blocks
            return
        raise ReaderError("html", "document", f"lxml cannot parse the page: {exc}") from None
    except ReaderError:
        raise
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise ReaderError("html", "document", f"lxml cannot parse the page: {exc}") from None
    except RecursionError:
        raise ReaderError("html", "document", "the page nests too deeply to read") from None
    yield from place(out.drafts, source)


def _check_parse(parser: HTMLParser) -> None:
    """Refuse a page libxml2 stopped reading part way, which it reports only in its error log.

    Past 2048 levels of nesting (even with ``huge_tree``) it stops with a fatal
    error and returns the tree read so far: the rest of the page would be lost.
    """
    fatal = next((e for e in parser.error_log if e.level_name == "FATAL"), None)
    if fatal is None:
        return
    if fatal.type_name == "ERR_RESOURCE_LIMIT":
        problem = f"the page nests too deeply to read (libxml2 stopped at line {fatal.line}: {fatal.message})"
    else:
        problem = f"lxml stopped reading the page at line {fatal.line}: {fatal.message}"
    raise ReaderError("html", "document", problem)


def read_html(
    source: str | bytes, *, source_id: str, step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES
) -> list[LayoutElement]:
    """Return :func:`iter_html` as a list."""
    return list(iter_html(source, source_id=source_id, step_styles=step_styles))

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

The walker feeds :class:`~procedure_rag._readers.markup.BlockEmitter`, which it
shares with the reStructuredText reader, and :func:`~procedure_rag._readers.markup.place`
gives the spans.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from procedure_rag._errors import ReaderError
from procedure_rag._language.labels import LABEL_WORDS, admonition_label
from procedure_rag._language.text import join_lines
from procedure_rag._readers.furniture_rules import CONTENTS_HINTS, NAVIGATION_HINTS, is_navigation
from procedure_rag._readers.markup import BlockEmitter, format_number, place
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.tables import pipe_table
from procedure_rag._types import ElementKind, LayoutElement

_SURROGATE = re.compile("[\ud800-\udfff]")

if TYPE_CHECKING:
    from lxml.html import HtmlElement, HTMLParser  # type: ignore[import-untyped]

__all__ = ["decode_html", "iter_html", "read_html"]

K = ElementKind

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
_LISTS = frozenset({"ul", "ol"})
# Between the links of a contents entry: nothing but spaces and separators.
_LINK_GLUE = re.compile(r"[\s,、・|/]*")
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


def _own_rows(table: HtmlElement) -> list[HtmlElement]:
    """The ``<tr>`` rows of ``table`` itself, in order, not those of the tables nested in it.

    A walk that stops at each nested table: every element is visited once by its own
    table, so tables nested a thousand deep cost linear time, not quadratic.
    """
    rows: list[HtmlElement] = []
    stack = list(reversed(table))
    while stack:
        el = stack.pop()
        tag = _tag(el)
        if tag == "tr":
            rows.append(el)
        if tag != "table":
            stack.extend(reversed(el))
    return rows


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
        if len(pieces) == 1 and not isinstance(first, str) and _tag(first) == "a":
            label = " ".join(first.text_content().split())
            if is_navigation(label):  # "Back to top", 「ページの先頭へ」: the page's link, furniture
                self.out.block(K.PAGE_FOOTER, label, line, hints=NAVIGATION_HINTS)
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
        entries = _contents_entries(el)
        if entries is not None:
            self.contents(entries, depth)
            return
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

    def contents(self, entries: Sequence[tuple[HtmlElement, str, Sequence[HtmlElement]]], depth: int) -> None:
        """A page's own table of contents: each entry a text marked contents, never a step."""
        for li, text, nested in entries:
            self.out.block(K.TEXT, text, _line(li), hints=CONTENTS_HINTS)
            for sub in nested:
                self.list(sub, depth + 1, _line(sub))

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
        rows = _own_rows(el)
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


def _contents_entries(el: HtmlElement) -> list[tuple[HtmlElement, str, list[HtmlElement]]] | None:
    """Each item's link texts and nested lists when ``el`` is the page's contents, else ``None``.

    A contents list is one whose every item is only links to places on the same page
    (``<a href="#…">``, nested lists aside). It names the page's sections; read as a list
    it would be a procedure whose steps are section titles.
    """
    entries = []
    for li in el:
        if not _tag(li):
            continue  # a comment or processing instruction
        if _tag(li) != "li" or _hidden(li):
            return None
        links: list[str] = []
        nested: list[HtmlElement] = []
        glue = [li.text or ""]
        for child in li:
            tag = _tag(child)
            if tag in _LISTS:
                nested.append(child)
            elif tag == "a" and (child.get("href") or "").startswith("#") and len(child) == 0:
                links.append(" ".join(_lines(_render(child, marks=False))))
            elif tag:
                return None
            glue.append(child.tail or "")
        if not links or not all(_LINK_GLUE.fullmatch(g) for g in glue) or not all(links):
            return None
        entries.append((li, " ".join(links), nested))
    return entries or None


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
    source: str | bytes, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of an HTML page in reading order.

    Args:
        source: The page as ``str``; bytes are decoded with :func:`decode_html`
            (spans then point into the decoded text).
        source_id: Id of the document; element ids start with it.
        options: The reader options; their step styles are recognised in paragraphs
            that are not HTML lists (``①``, ``（1）``, ``手順1``…).

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
    out = BlockEmitter(source_id, options.step_styles)
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
    source: str | bytes, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> list[LayoutElement]:
    """Return :func:`iter_html` as a list."""
    return list(iter_html(source, source_id=source_id, options=options))

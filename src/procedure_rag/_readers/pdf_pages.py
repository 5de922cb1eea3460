"""A PDF's pages as lines of characters with their font and box, through pypdfium2.

PDFium (the PDF engine of Chromium, via pypdfium2) gives every character with its
box, its font and the marked-content id that ties it to the tag tree of a tagged
PDF. This module is the only one that talks to PDFium: it opens the file (a clear
:class:`ReaderError` for a file that is not a PDF, damaged or encrypted), reads the
outline, and turns each page into :class:`PageLines` (lines split into cells at
wide gaps, each with its size, weight, box and tag), one page at a time, so a long
PDF never holds more than one page of characters. Boxes are in points from the
page's top-left corner.
"""

from __future__ import annotations

import ctypes
import itertools
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import IO

from procedure_rag._errors import ReaderError
from procedure_rag._language.numbering import LOST_NUMBER_ENDS, UNMAPPED_GLYPH
from procedure_rag._readers.pdf_grids import Edge, Grid, find_grids, grid_rows

__all__ = ["Cell", "Line", "OutlineEntry", "PageLines", "PdfFile", "PdfSource", "Rule"]

FORMAT = "pdf"
INSTALL_HINT = "reading PDF files needs pypdfium2: pip install 'procedure-rag[pdf]'"

PdfSource = bytes | bytearray | str | os.PathLike[str] | IO[bytes]

# A gap wider than this many ems between two characters of a line starts a new cell.
_CELL_GAP = 1.6
# Tag types that hold one block of text; a character belongs to its nearest one.
_BLOCK_TAGS = frozenset(
    {"P", "H", "H1", "H2", "H3", "H4", "H5", "H6", "LI", "LBody", "Lbl", "TD", "TH", "Caption", "Note"}
    | {"Title", "BlockQuote", "Code", "TOCI", "Figure", "Formula"}
)
# Tags inside a list item that are part of the item's own text (its label and body).
_IN_ITEM = frozenset({"Lbl", "LBody", "P"})
_BOLD_NAMES = ("bold", "black", "heavy", "demi", "semibold", "w6", "w7", "w8", "w9", "-b")
_FORCE_BOLD = 1 << 18
_FIXED_PITCH = 1
_MONO_NAMES = ("mono", "courier", "consol", "menlo", "code")
# A horizontal rule: a drawn path at most this many points high and this share of the page wide.
_RULE_HEIGHT = 2.0
_RULE_WIDTH = 0.4
# A path at most this many points across is a line; a box at least this share of the page both
# ways is its background; a path of more segments than this is a drawing, not a box.
_THIN = 3.0
_PAGE_SHARE = 0.9
_MAX_SEGMENTS = 64


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One bookmark: its depth (0 for the top), title and 1-based page (``None`` when it points nowhere)."""

    level: int
    title: str
    page: int | None


@dataclass(slots=True)
class Cell:
    """A run of a line's characters with no wide gap inside."""

    text: str
    left: float
    right: float


@dataclass(slots=True)
class Line:
    """One line of a page: its cells, box, dominant font size and weight, and tag.

    ``tag`` is the type of the tag-tree element the line's first character belongs to
    (``"H2"``, ``"LI"``, ``"TD"``…), ``tag_key`` identifies that element so that lines
    of one tagged paragraph stay together, and ``tag_path`` lists the types from the
    element up to the root.
    """

    cells: list[Cell]
    left: float
    top: float
    right: float
    bottom: float
    size: float
    bold: bool
    mono: bool = False
    tag: str = ""
    tag_key: int = 0
    tag_path: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The line's text, cells joined by one space."""
        return " ".join(c.text for c in self.cells)

    @property
    def height(self) -> float:
        return self.bottom - self.top


@dataclass(frozen=True, slots=True)
class Rule:
    """A horizontal line the page draws (a heading's underline, a table's border), in points."""

    left: float
    right: float
    top: float


@dataclass(slots=True)
class PageLines:
    """A page's lines in the order the page draws them, with its 1-based number and size in points.

    ``rules`` are the horizontal lines it draws, at least two fifths of the page wide;
    ``grids`` the tables its lines and boxes draw, whose text fills them as a table's does
    (:mod:`procedure_rag._readers.pdf_grids`); the lines' cells are split at their column borders.
    ``printed`` is the page number the page prints, once its running lines are found
    (:mod:`procedure_rag._readers.pdf_furniture`).
    """

    number: int
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)
    chars: int = 0
    rules: list[Rule] = field(default_factory=list)
    grids: list[Grid] = field(default_factory=list)
    printed: int | None = None


class PdfFile:
    """An open PDF: its page count, outline and pages as lines (see the module docstring)."""

    def __init__(self, source: PdfSource) -> None:
        try:
            import pypdfium2 as pdfium  # noqa: PLC0415 - optional dependency
            from pypdfium2 import raw  # noqa: PLC0415 - optional dependency
        except ImportError as exc:
            raise ImportError(INSTALL_HINT) from exc
        self._raw = raw
        # A path PDFium reads itself, as it needs it: the file's bytes are not held in Python.
        data = os.fspath(source) if isinstance(source, str | os.PathLike) else _read_bytes(source)
        head = _head(data)
        if b"%PDF-" not in head:
            raise ReaderError(FORMAT, "file", f"not a PDF: it starts with {head[:16]!r}, not %PDF-")
        try:
            self._doc = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise ReaderError(FORMAT, "file", _open_problem(exc)) from exc
        self.page_count = len(self._doc)
        if self.page_count == 0:
            raise ReaderError(FORMAT, "file", "cannot be read: it has no pages (truncated or damaged?)")

    def close(self) -> None:
        """Release PDFium's document."""
        self._doc.close()

    def __enter__(self) -> PdfFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def outline(self) -> list[OutlineEntry]:
        """The bookmarks in document order (an empty list when the PDF has none)."""
        out = []
        try:
            for item in self._doc.get_toc(max_depth=8):
                dest = item.get_dest()
                index = dest.get_index() if dest is not None else None
                title = (item.get_title() or "").strip()
                if title:
                    out.append(OutlineEntry(item.level, title, None if index is None else index + 1))
        except Exception:
            return []
        return out

    def pages(self) -> Iterator[PageLines]:
        """Yield each page's lines, one page loaded at a time."""
        for index in range(self.page_count):
            yield self.page(index)

    def page(self, index: int) -> PageLines:
        """The lines of page ``index`` (0-based)."""
        try:
            page = self._doc[index]
        except Exception as exc:
            raise ReaderError(FORMAT, f"page {index + 1}", f"cannot be read: {exc}") from exc
        try:
            width, height = page.get_size()
            rules, edges = _drawing(self._raw, page.raw, width, height)
            grids = find_grids(edges, width, height)
            textpage = page.get_textpage()
            try:
                tags = _tag_map(self._raw, page.raw)
                cuts = [cut for grid in grids for cut in grid.cuts()]
                lines, count = _read_lines(self._raw, textpage.raw, height, tags, cuts)
                # Only a table's borders split text: where a grid's text is no table (words
                # highlighted one by one), the lines are read again without its borders.
                tables = [g for g in grids if grid_rows(g, [line for line in lines if g.holds(line)])]
                if len(tables) < len(grids):
                    grids = tables
                    kept = [cut for grid in grids for cut in grid.cuts()]
                    if kept != cuts:
                        lines, count = _read_lines(self._raw, textpage.raw, height, tags, kept)
            finally:
                textpage.close()
        finally:
            page.close()
        return PageLines(index + 1, width, height, lines, count, rules, grids)


def _drawing(raw: ModuleType, page: object, width: float, height: float) -> tuple[list[Rule], list[Edge]]:
    """The page's horizontal rules (thin, wide paths, top to bottom) and the edges of its lines and boxes.

    Only path objects drawn on the page itself count (not inside a form), and neither
    invisible paths nor a box the size of the page (a slide's background).
    """
    rules = []
    edges: list[Edge] = []
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    for i in range(raw.FPDFPage_CountObjects(page)):
        obj = raw.FPDFPage_GetObject(page, i)
        if raw.FPDFPageObj_GetType(obj) != raw.FPDF_PAGEOBJ_PATH:
            continue
        if not raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            continue
        box = (left.value, height - top.value, right.value, height - bottom.value)
        if top.value - bottom.value <= _RULE_HEIGHT and right.value - left.value >= _RULE_WIDTH * width:
            rules.append(Rule(box[0], box[2], box[1]))
        if not raw.FPDFPath_GetDrawMode(obj, fill, stroke) or not (fill.value or stroke.value):
            continue
        if box[2] - box[0] >= _PAGE_SHARE * width and box[3] - box[1] >= _PAGE_SHARE * height:
            continue
        edges.extend(_edges_of(raw, obj, box, height))
    return sorted(rules, key=lambda r: r.top), edges


def _edges_of(
    raw: ModuleType, obj: object, box: tuple[float, float, float, float], height: float
) -> list[Edge]:
    """A path's straight horizontal and vertical pieces: a thin path is one, a box four sides."""
    left, top, right, bottom = box
    if bottom - top <= _THIN:
        return [Edge(True, (top + bottom) / 2, left, right)]
    if right - left <= _THIN:
        return [Edge(False, (left + right) / 2, top, bottom)]
    count = raw.FPDFPath_CountSegments(obj)
    if count > _MAX_SEGMENTS:
        return []
    matrix = raw.FS_MATRIX()
    if not raw.FPDFPageObj_GetMatrix(obj, matrix):
        return []
    x, y = ctypes.c_float(), ctypes.c_float()
    points: list[tuple[float, float] | None] = []
    start: tuple[float, float] | None = None
    for i in range(count):
        segment = raw.FPDFPath_GetPathSegment(obj, i)
        kind = raw.FPDFPathSegment_GetType(segment)
        if kind not in (raw.FPDF_SEGMENT_MOVETO, raw.FPDF_SEGMENT_LINETO):
            return []  # a curve: a shape, not a box
        raw.FPDFPathSegment_GetPoint(segment, x, y)
        point = (
            matrix.a * x.value + matrix.c * y.value + matrix.e,
            height - (matrix.b * x.value + matrix.d * y.value + matrix.f),
        )
        if kind == raw.FPDF_SEGMENT_MOVETO:
            points.append(None)  # no piece from the point before
            start = point
        points.append(point)
        if raw.FPDFPathSegment_GetClose(segment) and start is not None:
            points.append(start)
    out = []
    for a, b in itertools.pairwise(points):
        if a is None or b is None:
            continue
        if abs(a[1] - b[1]) <= 1 and abs(a[0] - b[0]) > 1:
            out.append(Edge(True, (a[1] + b[1]) / 2, min(a[0], b[0]), max(a[0], b[0])))
        elif abs(a[0] - b[0]) <= 1 and abs(a[1] - b[1]) > 1:
            out.append(Edge(False, (a[0] + b[0]) / 2, min(a[1], b[1]), max(a[1], b[1])))
    return out


def _head(data: bytes | str) -> bytes:
    """The first kilobyte of the PDF, where its ``%PDF-`` header is."""
    if isinstance(data, bytes):
        return data[:1024]
    try:
        with open(data, "rb") as f:
            return f.read(1024)
    except OSError as exc:
        raise ReaderError(FORMAT, "file", f"cannot be opened: {exc}") from exc


def _read_bytes(source: PdfSource) -> bytes:
    if isinstance(source, bytes | bytearray):
        return bytes(source)
    if isinstance(source, str | os.PathLike):
        try:
            with open(source, "rb") as f:
                return f.read()
        except OSError as exc:
            raise ReaderError(FORMAT, "file", f"cannot be opened: {exc}") from exc
    if hasattr(source, "read"):
        data = source.read()
        if isinstance(data, bytes | bytearray):
            return bytes(data)
        raise TypeError("a PDF file object must be opened in binary mode")
    msg = f"a PDF source must be bytes, a path or a binary file object, got {type(source).__name__}"
    raise TypeError(msg)


def _open_problem(exc: Exception) -> str:
    text = str(exc)
    if "password" in text.lower():
        return "is encrypted with a password; decrypt it first"
    return f"cannot be read (damaged or truncated?): {text}"


def _utf16(getter: Callable[..., int], handle: object) -> str:
    size = getter(handle, None, 0)
    if size <= 2:
        return ""
    buf = ctypes.create_string_buffer(size)
    getter(handle, buf, size)
    return buf.raw[: size - 2].decode("utf-16-le", errors="replace")


@dataclass(frozen=True, slots=True)
class _Tag:
    key: int
    kind: str
    path: tuple[str, ...]


def _tag_map(raw: ModuleType, page: object) -> dict[int, _Tag]:
    """Marked-content id -> the block tag holding it, for a tagged page (empty otherwise)."""
    tree = raw.FPDF_StructTree_GetForPage(page)
    if not tree:
        return {}
    out: dict[int, _Tag] = {}
    weak: set[int] = set()  # ids taken by an element that spans pages
    try:
        count = raw.FPDF_StructTree_CountChildren(tree)
        stack: list[tuple[object, tuple[str, ...], _Tag | None]] = [
            (raw.FPDF_StructTree_GetChildAtIndex(tree, i), (), None) for i in range(max(count, 0))
        ]
        stack.reverse()
        serial = 0
        while stack:
            element, path, block = stack.pop()
            if not element:
                continue
            kind = _utf16(raw.FPDF_StructElement_GetType, element)
            path = (kind, *path)
            if kind in _BLOCK_TAGS and not (block is not None and block.kind == "LI" and kind in _IN_ITEM):
                serial += 1
                block = _Tag(serial, kind, path)
            count = max(raw.FPDF_StructElement_GetMarkedContentIdCount(element), 0)
            ids = [raw.FPDF_StructElement_GetMarkedContentIdAtIndex(element, i) for i in range(count)]
            ids = [mcid for mcid in ids if mcid >= 0]
            # Ids count per page: an element that goes on to the next page lists that page's
            # ids too (they start again from 0), so its ids yield to an element of this page alone.
            spanning = any(b <= a for a, b in itertools.pairwise(ids))
            for mcid in ids:
                if block is None:
                    break
                if not spanning:
                    out[mcid] = block
                    weak.discard(mcid)
                elif mcid not in out:
                    out[mcid] = block
                    weak.add(mcid)
            children = raw.FPDF_StructElement_CountChildren(element)
            stack.extend(
                (raw.FPDF_StructElement_GetChildAtIndex(element, i), path, block)
                for i in range(max(children, 0) - 1, -1, -1)
            )
    finally:
        raw.FPDF_StructTree_Close(tree)
    return out


@dataclass(slots=True)
class _Font:
    size: float
    bold: bool
    tag: _Tag | None
    mono: bool = False


def _font_of(
    raw: ModuleType, textpage: object, index: int, tags: dict[int, _Tag], cache: dict[int, _Font]
) -> _Font:
    obj = raw.FPDFText_GetTextObject(textpage, index)
    # The pointer's value read from its own buffer: ctypes.cast would tie the two objects in
    # a reference cycle, one per character, left for the garbage collector (a page's worth
    # of garbage at a time, or more, on top of what reading holds).
    address = ctypes.c_void_p.from_buffer(obj).value or 0
    font = cache.get(address)
    if font is not None:
        return font
    matrix = raw.FS_MATRIX()
    raw.FPDFText_GetMatrix(textpage, index, matrix)
    scale = abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5 or 1.0
    size = float(raw.FPDFText_GetFontSize(textpage, index)) * scale  # the size as printed, in points
    bold = raw.FPDFText_GetFontWeight(textpage, index) >= 600
    tag = None
    mono = False
    if obj:
        handle = raw.FPDFTextObj_GetFont(obj)
        if handle:
            name = ctypes.create_string_buffer(128)
            raw.FPDFFont_GetBaseFontName(handle, name, 128)
            lowered = name.value.decode("latin-1").lower()
            bold = bold or any(word in lowered for word in _BOLD_NAMES)
            flags = raw.FPDFFont_GetFlags(handle)
            bold = bold or bool(flags & _FORCE_BOLD)
            mono = bool(flags & _FIXED_PITCH) or any(word in lowered for word in _MONO_NAMES)
        if tags:
            tag = tags.get(raw.FPDFPageObj_GetMarkedContentID(obj))
    font = _Font(size, bold, tag, mono)
    cache[address] = font
    return font


@dataclass(slots=True)
class _Char:
    text: str
    left: float
    top: float
    right: float
    bottom: float
    baseline: float
    font: _Font


#: Code points that end a list marker after its number: ``.``, ``．``, ``)``, ``）``.
_MARKER_ENDS = frozenset(map(ord, LOST_NUMBER_ENDS))


def _read_lines(
    raw: ModuleType,
    textpage: object,
    page_height: float,
    tags: dict[int, _Tag],
    cuts: list[tuple[float, float, float]],
) -> tuple[list[Line], int]:
    """The page's lines; their cells are also split at ``cuts``, a table's borders (``(x, top, bottom)``)."""
    count = raw.FPDFText_CountChars(textpage)
    box = raw.FS_RECTF()
    x = ctypes.c_double()
    y = ctypes.c_double()
    cache: dict[int, _Font] = {}
    lines: list[Line] = []
    current: list[_Char] = []
    shown = 0
    for i in range(max(count, 0)):
        code = raw.FPDFText_GetUnicode(textpage, i)
        if code in (0x0A, 0x0D):  # a line end PDFium found (drawn or generated)
            if current:
                _flush(current, lines, cuts)
                current = []
            continue
        if 0 < code < 0x110000 and chr(code).isspace():  # a space (also U+202F, U+3000…), drawn or generated
            if current and not current[-1].text.isspace():
                last = current[-1]
                current.append(
                    _Char(" ", last.right, last.top, last.right, last.bottom, last.baseline, last.font)
                )
            continue
        unmapped = code in (0xFFFE, 0xFFFF, 0) or raw.FPDFText_HasUnicodeMapError(textpage, i) == 1
        # A glyph without a character is left out, but for a list number the font does not map
        # (before a period that ends the marker): kept as U+FFFD, so the line stays a step.
        if unmapped and not (i + 1 < count and raw.FPDFText_GetUnicode(textpage, i + 1) in _MARKER_ENDS):
            continue
        # PDFium marks a hyphen that ends a line as 0x02
        text = UNMAPPED_GLYPH if unmapped else "-" if code == 0x02 else chr(code)
        raw.FPDFText_GetLooseCharBox(textpage, i, box)
        raw.FPDFText_GetCharOrigin(textpage, i, x, y)
        font = _font_of(raw, textpage, i, tags, cache)
        char = _Char(text, box.left, page_height - box.top, box.right, page_height - box.bottom,
                     page_height - y.value, font)  # fmt: skip
        shown_before = next((c for c in reversed(current) if not c.text.isspace()), None)
        starts_line = shown_before is None or _breaks(shown_before, char)
        if unmapped and not starts_line:
            continue
        if shown_before is not None and starts_line:
            _flush(current, lines, cuts)
            current = []
        current.append(char)
        if not text.isspace():
            shown += 1
    if current:
        _flush(current, lines, cuts)
    return lines, shown


def _breaks(prev: _Char, char: _Char) -> bool:
    """A new line starts: the baseline moved by half a line, or the text went back left."""
    em = max(prev.font.size, char.font.size, 1.0)
    if abs(char.baseline - prev.baseline) > 0.5 * em and not (char.top < prev.baseline < char.bottom):
        return True
    return char.right < prev.left - 2 * em


def _split(prev: _Char, char: _Char, cuts: list[tuple[float, float, float]]) -> bool:
    """Whether a table's border runs between two characters of a line."""
    middle = (char.top + char.bottom) / 2
    return any(prev.right - 1 <= x <= char.left + 1 and top <= middle <= bottom for x, top, bottom in cuts)


def _flush(chars: list[_Char], lines: list[Line], cuts: list[tuple[float, float, float]]) -> None:
    shown = [c for c in chars if not c.text.isspace()]
    if not shown:
        return
    cells: list[Cell] = []
    parts: list[str] = []
    start = shown[0].left
    prev: _Char | None = None
    for c in chars:
        if c.text.isspace():
            if parts and parts[-1] != " ":
                parts.append(" ")
            continue
        if prev is not None and (
            c.left - prev.right > _CELL_GAP * max(prev.font.size, c.font.size, 1.0)
            or (cuts and _split(prev, c, cuts))
        ):
            cells.append(Cell("".join(parts).strip(), start, prev.right))
            parts = []
            start = c.left
        parts.append(c.text)
        prev = c
    if prev is not None:
        cells.append(Cell("".join(parts).strip(), start, prev.right))
    sizes = Counter(round(c.font.size * 2) / 2 for c in shown)
    bold = sum(1 for c in shown if c.font.bold) * 2 > len(shown)
    tag = next((c.font.tag for c in shown if c.font.tag is not None), None)
    mono = sum(1 for c in shown if c.font.mono) * 2 > len(shown)
    lines.append(
        Line(
            [c for c in cells if c.text],
            min(c.left for c in shown),
            min(c.top for c in shown),
            max(c.right for c in shown),
            max(c.bottom for c in shown),
            sizes.most_common(1)[0][0],
            bold,
            mono,
            tag.kind if tag else "",
            tag.key if tag else 0,
            tag.path if tag else (),
        )
    )

"""A PowerPoint deck's parts as the reader needs them: slides in order, their shapes, layouts and masters.

:class:`Deck` reads ``ppt/presentation.xml`` (the slide list, PowerPoint's sections,
the slide size, the default text style) and, for each slide, its shapes in reading
order with their boxes on the slide (:class:`Shape`: groups opened, their child
coordinates mapped onto the slide), its title, what kind of slide it is, the list
styles its paragraphs take their bullets from (:meth:`Deck.chain`, through its layout
and master) and its speaker notes. Parts are parsed with the standard library
(:meth:`~procedure_rag._readers.ooxml.Package.read_xml`), each layout and master once.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from xml.etree import ElementTree as ET

from procedure_rag._errors import ReaderError
from procedure_rag._readers.ooxml import Package
from procedure_rag._readers.pptx_bullets import A, AutoNumbers, ListStyle, list_style, resolve
from procedure_rag._types import BBox, ElementKind

__all__ = [
    "FORMAT",
    "FURNITURE",
    "Deck",
    "P",
    "Shape",
    "Slide",
    "alt_text",
    "body_texts",
    "level_of",
    "paragraph_text",
    "table_rows",
]

FORMAT = "pptx"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_P14 = "{http://schemas.microsoft.com/office/powerpoint/2010/main}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_SHAPES = frozenset(f"{P}{tag}" for tag in ("sp", "pic", "graphicFrame", "cxnSp"))
_TITLES = frozenset({"title", "ctrTitle"})
#: Placeholders of running furniture and the kind they are.
FURNITURE = {
    "dt": ElementKind.PAGE_FOOTER,
    "ftr": ElementKind.PAGE_FOOTER,
    "sldNum": ElementKind.PAGE_FOOTER,
    "hdr": ElementKind.PAGE_HEADER,
}
#: An alt text that is only a file name (pandoc writes ``fig: images/a.png``), not a description.
_FILE_NAME = re.compile(r"(?:fig:)?\s*\S+\.(?:png|jpe?g|gif|bmp|tiff?|emf|wmf|svg|webp)", re.IGNORECASE)
#: Where a shape's rectangle is: shapes and pictures, groups, graphic frames (tables).
_XFRM_PATHS = (f"{P}spPr/{A}xfrm", f"{P}grpSpPr/{A}xfrm", f"{P}xfrm")
#: English Metric Units in a point (DrawingML's coordinates).
_EMU_PER_PT = 12700
#: A transform from a group's child coordinates to the slide's: ``slide = offset + child * scale``.
_Transform = tuple[float, float, float, float]
_IDENTITY: _Transform = (0.0, 0.0, 1.0, 1.0)
#: A rectangle in slide coordinates (EMU): x, y, width, height.
_Rect = tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class _Template:
    """A slide layout or master: its placeholders' list styles and places, and the layout's type."""

    kind: str = ""
    by_idx: dict[str, tuple[ListStyle, _Rect | None]] = field(default_factory=dict)
    by_type: dict[str, tuple[ListStyle, _Rect | None]] = field(default_factory=dict)
    text_styles: dict[str, ListStyle] = field(default_factory=dict)  # a master's: title, body, other
    master: _Template | None = None

    def placeholder(self, ph: tuple[str, str]) -> tuple[ListStyle, _Rect | None]:
        kind, idx = ph
        if idx and idx in self.by_idx:
            return self.by_idx[idx]
        return self.by_type.get(_master_type(kind), ({}, None))


@dataclass(frozen=True, slots=True)
class Shape:
    """A shape of a slide, in reading order: its element, its placeholder and its box on the slide."""

    element: ET.Element
    placeholder: tuple[str, str] | None
    box: BBox | None


@dataclass(frozen=True, slots=True)
class Slide:
    """A slide as the reader needs it.

    Attributes:
        number: Its place in the deck, from 1 (hidden slides counted).
        part: Its part in the zip.
        template: Its layout (with the master), when it names one.
        shapes: Its shapes in reading order, groups opened, hidden shapes left out.
        title: Its title's text (``""`` for none), on one line.
        title_shape: The shape holding the title.
        kind: ``"title"`` (a title slide: a ``ctrTitle`` or ``subTitle`` placeholder, or
            the ``title`` layout), ``"section"`` (the ``secHead`` layout, or a title and
            nothing else) or ``"content"``.
        section: The name of PowerPoint's section it is in, or ``""``.
        hidden: Whether it is hidden in the slide show (``show="0"``).
    """

    number: int
    part: str
    template: _Template | None
    shapes: list[Shape]
    title: str
    title_shape: Shape | None
    kind: str
    section: str
    hidden: bool


def _master_type(kind: str) -> str:
    """The master placeholder a placeholder type takes its styles from."""
    if kind in _TITLES:
        return "title"
    return kind if kind in FURNITURE else "body"


def _placeholder(shape: ET.Element) -> tuple[str, str] | None:
    """A shape's placeholder ``(type, idx)`` (type ``"obj"`` when not given), or ``None``."""
    for nv in shape:
        ph = nv.find(f"{P}nvPr/{P}ph")
        if ph is not None:
            return ph.get("type", "obj"), ph.get("idx", "")
    return None


def _hidden(shape: ET.Element) -> bool:
    props = shape.find(f"./*/{P}cNvPr")
    return props is not None and props.get("hidden") in ("1", "true")


def _number(element: ET.Element | None, name: str) -> float:
    value = element.get(name, "0") if element is not None else "0"
    try:
        return float(int(value))
    except ValueError:
        return 0.0


def _xfrm_rect(shape: ET.Element) -> _Rect | None:
    """A shape's own rectangle (``a:xfrm``: offset and extent), in its parent's coordinates."""
    xfrm = next((x for path in _XFRM_PATHS if (x := shape.find(path)) is not None), None)
    if xfrm is None:
        return None
    off, ext = xfrm.find(f"{A}off"), xfrm.find(f"{A}ext")
    return _number(off, "x"), _number(off, "y"), _number(ext, "cx"), _number(ext, "cy")


def _group_transform(group: ET.Element, outer: _Transform) -> _Transform:
    """The transform of a group's children: its child space (``chOff``, ``chExt``) onto its box."""
    xfrm = group.find(f"{P}grpSpPr/{A}xfrm")
    if xfrm is None:
        return outer
    off, ext = xfrm.find(f"{A}off"), xfrm.find(f"{A}ext")
    ch_off, ch_ext = xfrm.find(f"{A}chOff"), xfrm.find(f"{A}chExt")
    kx = _number(ext, "cx") / _number(ch_ext, "cx") if _number(ch_ext, "cx") else 1.0
    ky = _number(ext, "cy") / _number(ch_ext, "cy") if _number(ch_ext, "cy") else 1.0
    ox, oy, sx, sy = outer
    x = ox + (_number(off, "x") - _number(ch_off, "x") * kx) * sx
    y = oy + (_number(off, "y") - _number(ch_off, "y") * ky) * sy
    return x, y, kx * sx, ky * sy


def _leaves(tree: ET.Element | None) -> Iterator[tuple[ET.Element, _Transform]]:
    """The shapes of a shape tree in reading order with their groups' transforms (no recursion)."""
    stack = [(iter(tree if tree is not None else ()), _IDENTITY)]
    while stack:
        children, transform = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
        elif child.tag == f"{_MC}AlternateContent":  # the first choice: the fallback repeats it
            choice = child.find(f"{_MC}Choice")
            fallback = child.find(f"{_MC}Fallback")
            chosen = choice if choice is not None else fallback
            stack.append((iter(chosen if chosen is not None else ()), transform))
        elif _hidden(child):
            continue
        elif child.tag == f"{P}grpSp":
            stack.append((iter(child), _group_transform(child, transform)))
        elif child.tag in _SHAPES:
            yield child, transform


def paragraph_text(paragraph: ET.Element) -> str:
    """A paragraph's text (``a:t`` of its runs and fields, ``a:br`` as a line break), stripped."""
    pieces = []
    for child in paragraph.iter():
        if child.tag == f"{A}t":
            pieces.append(child.text or "")
        elif child.tag == f"{A}br":
            pieces.append("\n")
    return "\n".join(line.strip() for line in "".join(pieces).split("\n")).strip()


def body_texts(shape: ET.Element) -> list[str]:
    """The non-empty paragraph texts of a shape's text body."""
    body = shape.find(f"{P}txBody")
    texts = (paragraph_text(p) for p in body.iter(f"{A}p")) if body is not None else ()
    return [text for text in texts if text]


def level_of(ppr: ET.Element | None) -> int:
    """A paragraph's level (``a:pPr lvl``, 0 to 8)."""
    value = ppr.get("lvl", "0") if ppr is not None else "0"
    return int(value) if value.isdecimal() and int(value) < 9 else 0


def alt_text(picture: ET.Element) -> str:
    """A picture's alt text: its description, else its title; a bare file name is none."""
    props = picture.find(f"{P}nvPicPr/{P}cNvPr")
    for given in (props.get("descr", ""), props.get("title", "")) if props is not None else ():
        value = " ".join(given.split())
        if value and not _FILE_NAME.fullmatch(value):
            return value
    return ""


def table_rows(table: ET.Element) -> list[list[str]]:
    """A table's cell texts by row; a cell another one's merge covers (``hMerge``, ``vMerge``) is empty."""
    rows = []
    for tr in table.findall(f"{A}tr"):
        row = []
        for tc in tr.findall(f"{A}tc"):
            covered = tc.get("hMerge") in ("1", "true") or tc.get("vMerge") in ("1", "true")
            texts = (paragraph_text(p) for p in tc.iter(f"{A}p"))
            row.append("" if covered else " ".join(t for t in texts if t))
        rows.append(row)
    return rows


def _has_content(shape: Shape) -> bool:
    """Whether a shape shows something besides a title: text, a picture, a table or a chart."""
    if shape.element.tag == f"{P}sp":
        ph = shape.placeholder
        return bool(body_texts(shape.element)) and (ph is None or ph[0] not in FURNITURE)
    return shape.element.tag in (f"{P}pic", f"{P}graphicFrame")


class Deck:
    """The presentation part, its slides in order, and the layouts and masters they use."""

    def __init__(self, package: Package) -> None:
        self.package = package
        self.root = package.read_xml(package.main_part, FORMAT)
        self.names = set(package.zip.namelist())
        self.default_style = list_style(self.root.find(f"{P}defaultTextStyle"))
        size = self.root.find(f"{P}sldSz")
        self.size = (_number(size, "cx"), _number(size, "cy"))
        self.sections: dict[str, str] = {}  # slide id -> section name
        for section in self.root.iter(f"{_P14}section"):
            for slide_id in section.iter(f"{_P14}sldId"):
                self.sections[slide_id.get("id", "")] = section.get("name", "")
        self._templates: dict[str, _Template] = {}

    def related(self, part: str, kind: str) -> list[str]:
        """``part``'s related parts of ``kind`` (none when it has no relationships part)."""
        folder, base = posixpath.split(part)
        if posixpath.join(folder, "_rels", base + ".rels") not in self.names:
            return []
        return self.package.related(part, FORMAT, kind)

    def slide_parts(self) -> Iterator[tuple[int, str, str]]:
        """``(number, part, section name)`` of every slide, in the deck's order.

        Raises:
            ReaderError: Naming the part (or the presentation) of a slide the file lacks.
        """
        targets = self.package.relationships(self.package.main_part, FORMAT)
        id_list = self.root.find(f"{P}sldIdLst")
        for number, slide_id in enumerate(id_list if id_list is not None else (), start=1):
            part = targets.get(slide_id.get(_R_ID, ""), "")
            if part not in self.names:
                problem = f"{self.package.name}: slide {number} has no part in the file"
                raise ReaderError(FORMAT, part or self.package.main_part, problem)
            yield number, part, self.sections.get(slide_id.get("id", ""), "")

    def slide(self, number: int, part: str, section: str) -> Slide:
        """Read one slide (see :class:`Slide`)."""
        root = self.package.read_xml(part, FORMAT)
        layouts = self.related(part, "slideLayout")
        template = self.template(layouts[0], layout=True) if layouts else None
        shapes = [
            self._shape(element, transform, template)
            for element, transform in _leaves(root.find(f"{P}cSld/{P}spTree"))
        ]
        title_shape = next((s for s in shapes if s.placeholder and s.placeholder[0] in _TITLES), None)
        title = " ".join(" ".join(body_texts(title_shape.element)).split()) if title_shape else ""
        others = [s for s in shapes if s is not title_shape and _has_content(s)]
        types = {s.placeholder[0] for s in shapes if s.placeholder}
        layout_kind = template.kind if template is not None else ""
        if title and ({"ctrTitle", "subTitle"} & types or layout_kind == "title"):
            kind = "title"  # the deck's title when it is the first slide read, else a section slide
        elif title and (layout_kind == "secHead" or not others):
            kind = "section"
        else:
            kind = "content"
        hidden = root.get("show") in ("0", "false")
        return Slide(number, part, template, shapes, title, title_shape, kind, section, hidden)

    def _shape(self, element: ET.Element, transform: _Transform, template: _Template | None) -> Shape:
        ph = _placeholder(element)
        rect = _xfrm_rect(element)
        for source in (template, template.master if template is not None else None):
            if rect is None and ph is not None and source is not None:
                rect = source.placeholder(ph)[1]
        return Shape(element, ph, self._box(rect, transform))

    def _box(self, rect: _Rect | None, transform: _Transform) -> BBox | None:
        """A rectangle as a box on the slide (fractions of its size), clipped to it; ``None`` when off it."""
        width, height = self.size
        if rect is None or width <= 0 or height <= 0:
            return None
        ox, oy, sx, sy = transform
        x, y, w, h = rect
        left, top = (ox + x * sx) / width, (oy + y * sy) / height
        right, bottom = left + w * sx / width, top + h * sy / height
        left, top, right, bottom = (min(max(v, 0.0), 1.0) for v in (left, top, right, bottom))
        if right <= left or bottom <= top:
            return None
        return BBox(left, top, right, bottom, width / _EMU_PER_PT, height / _EMU_PER_PT, "pt")

    def template(self, part: str, *, layout: bool) -> _Template:
        """The layout (with its master) or master at ``part``, read once."""
        if part in self._templates:
            return self._templates[part]
        root = self.package.read_xml(part, FORMAT)
        by_idx: dict[str, tuple[ListStyle, _Rect | None]] = {}
        by_type: dict[str, tuple[ListStyle, _Rect | None]] = {}
        for shape, _ in _leaves(root.find(f"{P}cSld/{P}spTree")):
            ph = _placeholder(shape)
            if ph is None:
                continue
            entry = (list_style(shape.find(f"{P}txBody/{A}lstStyle")), _xfrm_rect(shape))
            if ph[1]:
                by_idx.setdefault(ph[1], entry)
            by_type.setdefault(_master_type(ph[0]), entry)
        master = None
        text_styles: dict[str, ListStyle] = {}
        if layout:
            masters = self.related(part, "slideMaster")
            master = self.template(masters[0], layout=False) if masters else None
        else:
            styles = root.find(f"{P}txStyles")
            for name, tag in (("title", "titleStyle"), ("body", "bodyStyle"), ("other", "otherStyle")):
                text_styles[name] = list_style(styles.find(f"{P}{tag}") if styles is not None else None)
        template = _Template(root.get("type", ""), by_idx, by_type, text_styles, master)
        self._templates[part] = template
        return template

    def chain(self, slide: Slide, shape: Shape) -> list[ListStyle]:
        """The list styles a shape's paragraphs take their bullets from, nearest first."""
        chain: list[ListStyle] = [list_style(shape.element.find(f"{P}txBody/{A}lstStyle"))]
        layout = slide.template
        master = layout.master if layout is not None else None
        ph = shape.placeholder
        if ph is None:
            if master is not None:
                chain.append(master.text_styles.get("other", {}))
            chain.append(self.default_style)
            return chain
        chain.extend(template.placeholder(ph)[0] for template in (layout, master) if template is not None)
        if master is not None:
            kind = _master_type(ph[0])
            chain.append(master.text_styles.get(kind if kind in ("title", "body") else "other", {}))
        return chain

    def notes(self, slide: Slide) -> str:
        """The slide's speaker notes as shown (numbers and bullets written out), or ``""``."""
        parts = self.related(slide.part, "notesSlide")
        if not parts:
            return ""
        root = self.package.read_xml(parts[0], FORMAT)
        lines: list[str] = []
        for shape, _ in _leaves(root.find(f"{P}cSld/{P}spTree")):
            if (_placeholder(shape) or ("",))[0] != "body":
                continue
            chain = [list_style(shape.find(f"{P}txBody/{A}lstStyle"))]
            numbers = AutoNumbers()
            for p in shape.iter(f"{A}p"):
                text = paragraph_text(p)
                if text:
                    ppr = p.find(f"{A}pPr")
                    marker = numbers.marker(level_of(ppr), resolve(ppr, level_of(ppr), chain))
                    lines.append(f"{marker} {text}" if marker else text)
        return "\n\n".join(lines)

"""Word documents (.docx, .docm): headings, Word's own numbering as shown, tables, pictures, notes.

The package is opened by :mod:`procedure_rag._readers.ooxml` (zip, size, OLE checks)
and its WordprocessingML read with the standard library's XML parser; nothing in it
is run (macros of a ``.docm`` are never loaded). What becomes what:

- **Headings**: a paragraph whose style (or a style it is based on) is named
  ``heading N`` / ``見出し N``, or that has an outline level, is a section header of
  that level; the ``Title`` style (``表題``) is the title.
- **Numbered paragraphs** (a ``numPr`` of their own or from their style) are list
  items whose ``number`` is the marker Word shows (:mod:`~procedure_rag._readers.docx_numbering`)
  and whose ``level`` is the list level (``ilvl``); a numbered heading keeps its number.
- **Other paragraphs** are read, a run of them at a time, by the plain-text reader, so
  numbers typed by hand (``①``, ``1.``) and labels (``注意:``, ``Note:``) mean what they
  mean in text.
- **Tables** are Markdown tables (a cell merged across columns or down rows is written
  once, the cells it covers left empty); **pictures** are their alt text; paragraphs in
  the ``Caption`` style (``図表番号``) are captions; **text boxes** are read after the
  paragraph that anchors them; **footnotes** come at the end.
- **Revisions**: inserted text is kept and deleted text left out; comments are left out.

A .docx has no pages (Word lays them out when it shows the file): elements carry no
page, and the hint ``("pages", "none")`` says so. The extracted text is every element
as shown, one after the other; every span points into it.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import IO
from xml.etree import ElementTree as ET

from procedure_rag._errors import ReaderError
from procedure_rag._readers.docx_formatting import RunFormats, body_paragraphs, formatted_headings
from procedure_rag._readers.docx_numbering import Level, Numbering, W
from procedure_rag._readers.draft import ElementDraft, list_id_for
from procedure_rag._readers.ooxml import DOCUMENT_CONTENT_TYPES, Package, open_package, source_bytes
from procedure_rag._readers.ooxml_writer import OfficeWriter
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.registry import Source
from procedure_rag._readers.tables import pipe_table
from procedure_rag._types import ElementKind, LayoutElement

__all__ = ["NO_PAGES_HINT", "iter_docx", "read_docx"]

_FORMAT = "docx"
#: The hint every element of a .docx carries: the file has no page numbers to give.
NO_PAGES_HINT = ("pages", "none")
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
_HEADING = re.compile(r"(?:heading|見出し)\s*([1-9])")
_TITLES = frozenset({"title", "表題", "タイトル"})
_CAPTIONS = frozenset({"caption", "図表番号"})
_CODE = frozenset({"source code", "sourcecode", "html preformatted", "code", "plain text"})
#: Elements whose text is never shown: deletions, moved-away text, field codes, comments.
_SKIPPED = frozenset(
    f"{W}{tag}" for tag in ("del", "moveFrom", "instrText", "delText", "commentReference", "rPr", "pPr")
)

DocxSource = bytes | bytearray | str | os.PathLike[str] | IO[bytes]
#: A paragraph's style names (its own first), heading level and Word numbering (numId, ilvl).
_StyleFacts = tuple[list[str], int | None, tuple[str, int] | None]


@dataclass(frozen=True, slots=True)
class _Style:
    name: str = ""
    based_on: str = ""
    outline: int | None = None
    num: tuple[str, int] | None = None


def read_docx(
    source: DocxSource, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Source:
    """Read a Word document's text and its layout elements (see the module docstring).

    Args:
        source: The document as bytes, a path, or a binary file object.
        source_id: Id of the document; element ids start with it, and messages name it.
        options: The reader options: step styles (for paragraphs numbered by hand),
            heading styles, ``max_uncompressed_bytes``.

    Returns:
        ``Source("docx", elements, text)``: the elements' spans point into ``text``.

    Raises:
        ReaderError: Record ``"file"`` for bytes that are not a Word document (not a
            zip, damaged, over ``max_uncompressed_bytes``, encrypted, a legacy ``.doc``);
            the part's name (``"word/document.xml"``) for a part missing or damaged.
    """
    data, name = source_bytes(source, source_id, fmt=_FORMAT, what="a Word source")
    package = open_package(
        data, fmt=_FORMAT, name=name, max_uncompressed_bytes=options.max_uncompressed_bytes
    )
    with package.zip:
        if package.main_type not in DOCUMENT_CONTENT_TYPES:
            problem = f"{name} is not a Word document: its main part is {package.main_type or 'untyped'}"
            raise ReaderError(_FORMAT, package.main_part, problem)
        parts = _parts(package)
        document = package.read_xml(package.main_part, _FORMAT)
        styles_root = package.read_xml(parts["styles"], _FORMAT) if "styles" in parts else None
        styles = _styles(styles_root)
        numbering = Numbering.parse(
            package.read_xml(parts["numbering"], _FORMAT) if "numbering" in parts else None
        )
        notes = _footnotes(package.read_xml(parts["footnotes"], _FORMAT) if "footnotes" in parts else None)
        writer = _Writer(source_id=source_id, options=options, styles=styles, numbering=numbering)
        body = document.find(f"{W}body")
        body = body if body is not None else document
        writer.find_formatted_headings(document, body, RunFormats.parse(styles_root))
        writer.blocks(body)
        writer.flush()
        for note_id in writer.footnote_refs:
            if notes.get(note_id):
                writer.add(ElementDraft(ElementKind.FOOTNOTE, notes[note_id], hints=(("footnote", note_id),)))
    return Source(_FORMAT, writer.elements, writer.text)


def iter_docx(
    source: DocxSource, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a Word document (see :func:`read_docx`)."""
    yield from read_docx(source, source_id=source_id, options=options).elements


def _parts(package: Package) -> dict[str, str]:
    """The main part's styles, numbering and footnotes parts, by role (those the file has)."""
    folder = posixpath.dirname(package.main_part)
    try:
        targets = list(package.relationships(package.main_part, _FORMAT).values())
    except ReaderError:  # no relationships: a document of plain paragraphs
        targets = []
    names = set(package.zip.namelist())
    out = {}
    for target in targets:
        role = posixpath.basename(target).removesuffix(".xml")
        if role in ("styles", "numbering", "footnotes") and target in names:
            out[role] = target
    for role in ("styles", "numbering", "footnotes"):  # a file whose relationships forget them
        fallback = posixpath.join(folder, f"{role}.xml")
        if role not in out and fallback in names:
            out[role] = fallback
    return out


def _val(element: ET.Element | None, tag: str) -> str | None:
    child = element.find(f"{W}{tag}") if element is not None else None
    return child.get(f"{W}val") if child is not None else None


def _num_pr(ppr: ET.Element | None) -> tuple[str, int] | None:
    num = ppr.find(f"{W}numPr") if ppr is not None else None
    if num is None:
        return None
    ilvl = _val(num, "ilvl")
    return _val(num, "numId") or "", int(ilvl) if ilvl and ilvl.isdecimal() else 0


def _outline(ppr: ET.Element | None) -> int | None:
    value = _val(ppr, "outlineLvl")
    return int(value) if value is not None and value.isdecimal() else None


def _styles(root: ET.Element | None) -> dict[str, _Style]:
    if root is None:
        return {}
    out = {}
    for style in root.iter(f"{W}style"):
        ppr = style.find(f"{W}pPr")
        out[style.get(f"{W}styleId", "")] = _Style(
            name=_val(style, "name") or "",
            based_on=_val(style, "basedOn") or "",
            outline=_outline(ppr),
            num=_num_pr(ppr),
        )
    return out


def _footnotes(root: ET.Element | None) -> dict[str, str]:
    if root is None:
        return {}
    return {
        note.get(f"{W}id", ""): "\n".join(filter(None, (_text(p)[0] for p in note.iter(f"{W}p"))))
        for note in root.iter(f"{W}footnote")
        if note.get(f"{W}type") in (None, "normal")
    }


def _text(paragraph: ET.Element) -> tuple[str, list[ET.Element]]:
    """A paragraph's text as shown, and what it holds besides (drawings, text boxes, footnote refs)."""
    pieces: list[str] = []
    extras: list[ET.Element] = []

    def walk(element: ET.Element) -> None:
        for child in element:
            tag = child.tag
            if tag in _SKIPPED:
                continue
            if tag == f"{W}t":
                pieces.append(child.text or "")
            elif tag == f"{W}tab":
                pieces.append("\t")
            elif tag in (f"{W}br", f"{W}cr"):
                pieces.append("\n")
            elif tag == f"{W}noBreakHyphen":
                pieces.append("-")
            elif tag in (f"{W}drawing", f"{W}pict", f"{W}footnoteReference", f"{W}object"):
                extras.append(child)
            elif tag == f"{_MC}AlternateContent":  # the first choice only: the fallback repeats it
                choice = child.find(f"{_MC}Choice")
                walk(choice if choice is not None else child)
            else:
                walk(child)  # runs, hyperlinks, insertions, fields' results, content controls

    walk(paragraph)
    return "".join(pieces).strip(), extras


def _cell_text(cell: ET.Element) -> str:
    return " ".join(filter(None, (_text(p)[0] for p in cell.iter(f"{W}p"))))


def _table_rows(table: ET.Element) -> list[list[str]]:
    rows = []
    for tr in table.findall(f"{W}tr"):
        row: list[str] = []
        for tc in tr.findall(f"{W}tc"):
            tcpr = tc.find(f"{W}tcPr")
            span = _val(tcpr, "gridSpan")
            merge = tcpr.find(f"{W}vMerge") if tcpr is not None else None
            continued = merge is not None and merge.get(f"{W}val", "continue") != "restart"
            row.append("" if continued else _cell_text(tc))
            row.extend([""] * (int(span) - 1 if span and span.isdecimal() and 1 < int(span) < 64 else 0))
        rows.append(row)
    return rows


@dataclass(kw_only=True)
class _Writer(OfficeWriter):
    """The extracted text and the elements whose spans point into it, in reading order."""

    styles: dict[str, _Style]
    numbering: Numbering
    footnote_refs: list[str] = field(default_factory=list)
    lists: dict[str, str] = field(default_factory=dict)  # numId -> list id
    items: list[tuple[int, str, str]] = field(default_factory=list)  # open list items: ilvl, id, list id
    formatted: dict[ET.Element, int] = field(default_factory=dict)  # headings by formatting, their levels
    # Each paragraph's style facts (style_of), found once for the check of the whole file.
    facts: dict[ET.Element, _StyleFacts] = field(default_factory=dict)

    def add(self, draft: ElementDraft, shown: str | None = None) -> str:
        """Append the element, marked as having no page (a .docx has none); its id."""
        draft.hints = (NO_PAGES_HINT, *draft.hints)
        return self.append(draft, shown)

    def blocks(self, container: ET.Element) -> None:
        for child in container:
            if child.tag == f"{W}p":
                self.paragraph(child)
            elif child.tag == f"{W}tbl":
                rows = _table_rows(child)
                table = pipe_table(rows)
                if table:
                    self.add(ElementDraft(ElementKind.TABLE, table))
            elif child.tag in (f"{W}sdt", f"{W}sdtContent", f"{W}customXml", f"{W}ins", f"{W}moveTo"):
                self.blocks(child)

    def _style_chain(self, style_id: str) -> Iterator[tuple[str, _Style]]:
        seen = set()
        while style_id and style_id not in seen and style_id in self.styles:
            seen.add(style_id)
            style = self.styles[style_id]
            yield style_id, style
            style_id = style.based_on

    def style_of(self, p: ET.Element) -> _StyleFacts:
        """A paragraph's style names (its own first), heading level and Word numbering, if any."""
        ppr = p.find(f"{W}pPr")
        style_id = _val(ppr, "pStyle") or ""
        chain = list(self._style_chain(style_id))
        names = [unicodedata.normalize("NFKC", n or i).lower() for i, s in chain for n in (s.name,)]
        names = names or [unicodedata.normalize("NFKC", style_id).lower()]
        outline = _outline(ppr)
        if outline is None:
            outline = next((s.outline for _, s in chain if s.outline is not None), None)
        heading = next((int(m.group(1)) for n in names if (m := _HEADING.fullmatch(n))), None)
        if heading is None and outline is not None and outline < 9:
            heading = outline + 1
        num = _num_pr(ppr) or next((s.num for _, s in chain if s.num is not None), None)
        return names, heading, num

    def find_formatted_headings(self, document: ET.Element, body: ET.Element, formats: RunFormats) -> None:
        """Find the headings told by formatting (:mod:`.docx_formatting`): none if a style marks some."""
        self.facts = {p: self.style_of(p) for p in document.iter(f"{W}p")}
        if any(heading is not None or names[0] in _TITLES for names, heading, _ in self.facts.values()):
            return
        self.formatted = formatted_headings(
            body_paragraphs(body),
            formats,
            numbered=[p for p, (_, _, num) in self.facts.items() if num is not None],
            step_styles=self.options.step_styles,
        )

    def paragraph(self, p: ET.Element) -> None:
        text, extras = _text(p)
        names, heading, num = self.facts.get(p) or self.style_of(p)
        heading = self.formatted.get(p) if heading is None else heading
        marker = self.numbering.next_marker(*num) if num is not None and text else None
        if text:
            self._paragraph(text, names, heading, num, marker)
        self._extras(extras)

    def _paragraph(
        self,
        text: str,
        names: list[str],
        heading: int | None,
        num: tuple[str, int] | None,
        marker: tuple[str, Level] | None,
    ) -> None:
        number = marker[0] if marker is not None else ""
        ordered = marker[1].ordered if marker is not None else False
        shown = f"{number} {text}" if number else text
        # A list level that shows no marker (pandoc writes one for a list item's next
        # paragraphs, code and notes): a paragraph of the item open at that level.
        continued = marker is not None and not number and num is not None
        owner = (
            next((it for it in reversed(self.items) if it[0] <= num[1]), None) if continued and num else None
        )
        parent, list_id = (owner[1], owner[2]) if owner is not None else (None, None)
        if names[0] in _TITLES:
            self.items.clear()
            self.add(ElementDraft(ElementKind.TITLE, text), text)
        elif heading is not None:
            self.items.clear()
            self.add(ElementDraft(ElementKind.SECTION_HEADER, shown, level=heading, number=number), shown)
        elif names[0] in _CAPTIONS:
            self.add(ElementDraft(ElementKind.CAPTION, shown), shown)
        elif names[0] in _CODE:
            self.add(ElementDraft(ElementKind.CODE, text, parent_id=parent, list_id=list_id), text)
        elif number and num is not None:
            self._item(text, number, num, ordered=ordered)
        elif continued:
            self.flush()
            self.pending.append(text)
            self.flush(parent=parent, list_id=list_id)
        else:
            self.pending.append(text)

    def _item(self, text: str, number: str, num: tuple[str, int], *, ordered: bool) -> None:
        num_id, ilvl = num
        list_id = self.lists.setdefault(num_id, list_id_for(self.source_id, len(self.lists)))
        while self.items and self.items[-1][0] >= ilvl:
            self.items.pop()
        parent = self.items[-1][1] if self.items else None
        draft = ElementDraft(
            ElementKind.LIST_ITEM, text, level=ilvl, number=number, ordered=ordered,
            parent_id=parent, list_id=list_id,
        )  # fmt: skip
        self.items.append((ilvl, self.add(draft, f"{number} {text}" if number else text), list_id))

    def _extras(self, extras: list[ET.Element]) -> None:
        for extra in extras:
            if extra.tag == f"{W}footnoteReference":
                self.footnote_refs.append(extra.get(f"{W}id", ""))
                continue
            for prop in extra.iter(f"{_WP}docPr"):
                alt = (prop.get("descr") or prop.get("title") or "").strip()
                if alt:
                    self.add(ElementDraft(ElementKind.PICTURE, alt))
            for box in extra.iter(f"{W}txbxContent"):
                self.blocks(box)

    def flush(self, parent: str | None = None, list_id: str | None = None) -> None:
        """Read the plain paragraphs held back, as one text, by the plain-text reader.

        ``parent`` is the list item they belong to, if any (``list_id`` its list): their top
        elements' parent.
        """
        for element in self.plain_run():
            self.elements.append(
                replace(
                    element,
                    parent_id=element.parent_id or parent,
                    list_id=element.list_id or list_id,
                    page=None,  # the plain-text reader counts pages from 1: a .docx has none
                    hints=(NO_PAGES_HINT, *element.hints),
                )
            )

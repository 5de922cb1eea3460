"""PowerPoint decks (.pptx, .pptm): slide titles as sections, bullets and numbers as shown, tables, notes.

The package is opened by :mod:`procedure_rag._readers.ooxml` (zip, size, OLE checks)
and its PresentationML read with the standard library's XML parser; nothing in it is
run (macros of a ``.pptm`` are never loaded). Slides are read in the deck's order
(``p:sldIdLst``); a hidden slide (``show="0"``) is skipped unless
``include_hidden_slides``. Each element's ``page`` is its slide's number (its place in
the deck, hidden slides counted) and its box its shape's rectangle on the slide
(:mod:`~procedure_rag._readers.pptx_deck`). What becomes what:

- **Titles**: the first slide's title, when it is a title slide (a ``ctrTitle`` or
  ``subTitle`` placeholder, or the ``title`` layout), is the deck's title. A *section slide* (the
  ``secHead`` layout, or a slide that holds a title and nothing else) is a section
  header; every other slide's title is a section header one level under the section
  slides (when the deck has any), and PowerPoint's own sections (``p14:sectionLst``)
  sit above both. A slide without a title goes on in the section before it, and so
  does a slide whose title is the one before it again, alone or marked as going on
  (``(continued)``, ``（続き）``, ``(2/2)``: :func:`~procedure_rag._language.text.title_key`):
  that title is kept as a running header (a page header, which the chunker leaves out
  by default) and the list of the slide before goes on, so a procedure over two
  slides stays one list.
- **Text**: shapes are read in the slide's reading order (the order of its shape
  tree, which is the order PowerPoint's reading-order pane and screen readers use),
  the title first, grouped shapes in their group's place. A paragraph with a bullet
  or an automatic number (its own, or from the layout's and master's list styles:
  :mod:`~procedure_rag._readers.pptx_bullets`) is a list item whose ``number`` is what
  PowerPoint shows (``1.``, ``a)``, ``①``, ``•``) and whose ``level`` is the
  paragraph's level; a paragraph without one is part of the item above it when it
  is indented under it, else text read by the plain-text reader, so numbers typed by
  hand and labels (``注意:``, ``Note:``) mean what they mean in text (a short line those
  rules would make a heading by its layout alone stays text: sections come from titles).
- **Tables** are Markdown tables (a merged cell written once, the cells it covers
  left empty); **pictures** are their alt text (``descr``, else ``title``; a bare file
  name is not alt text); dates, footers and slide numbers are page footers.
- **Speaker notes** (``include_speaker_notes``, on by default) are read by the
  plain-text reader after the content of the section their slide belongs to, so that
  they never cut a procedure apart; they carry the hint ``("speaker_notes", "true")``.

Charts, SmartArt and embedded objects are not read. The extracted text is every
element as shown, one after the other; every span points into it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import IO

from procedure_rag._errors import ReaderError
from procedure_rag._language.text import title_key
from procedure_rag._readers.draft import ElementDraft, list_id_for
from procedure_rag._readers.ooxml import PRESENTATION_CONTENT_TYPES, open_package, source_bytes
from procedure_rag._readers.ooxml_writer import OfficeWriter
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.pptx_bullets import A, AutoNumbers, ListStyle, resolve
from procedure_rag._readers.pptx_deck import (
    FORMAT,
    FURNITURE,
    Deck,
    P,
    Shape,
    Slide,
    alt_text,
    body_texts,
    level_of,
    paragraph_text,
    table_rows,
)
from procedure_rag._readers.registry import Source
from procedure_rag._readers.tables import pipe_table
from procedure_rag._types import BBox, ElementKind, LayoutElement

__all__ = ["NOTES_HINT", "iter_pptx", "read_pptx"]

_FORMAT = FORMAT
#: The hint every element read from a slide's speaker notes carries.
NOTES_HINT = ("speaker_notes", "true")
_TABLE = "http://schemas.openxmlformats.org/drawingml/2006/table"

PptxSource = bytes | bytearray | str | os.PathLike[str] | IO[bytes]


def read_pptx(
    source: PptxSource, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Source:
    """Read a deck's text and its layout elements (see the module docstring).

    Args:
        source: The deck as bytes, a path, or a binary file object.
        source_id: Id of the document; element ids start with it, and messages name it.
        options: The reader options: step styles (for paragraphs numbered by hand),
            heading styles, ``max_uncompressed_bytes``, ``include_hidden_slides``,
            ``include_speaker_notes``.

    Returns:
        ``Source("pptx", elements, text)``: the elements' spans point into ``text``.

    Raises:
        ReaderError: Record ``"file"`` for bytes that are not a deck (not a zip,
            damaged, over ``max_uncompressed_bytes``, encrypted, a legacy ``.ppt``);
            the part's name (``"ppt/slides/slide3.xml"``) for a part missing or damaged.
    """
    data, name = source_bytes(source, source_id, fmt=_FORMAT, what="a PowerPoint source")
    package = open_package(
        data, fmt=_FORMAT, name=name, max_uncompressed_bytes=options.max_uncompressed_bytes
    )
    with package.zip:
        if package.main_type not in PRESENTATION_CONTENT_TYPES:
            problem = f"{name} is not a PowerPoint deck: its main part is {package.main_type or 'untyped'}"
            raise ReaderError(_FORMAT, package.main_part, problem)
        deck = Deck(package)
        slides = [deck.slide(number, part, section) for number, part, section in deck.slide_parts()]
        slides = [slide for slide in slides if options.include_hidden_slides or not slide.hidden]
        writer = _Writer(source_id=source_id, options=options)
        writer.deck(deck, slides)
    return Source(_FORMAT, writer.elements, writer.text)


def iter_pptx(
    source: PptxSource, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a deck (see :func:`read_pptx`)."""
    yield from read_pptx(source, source_id=source_id, options=options).elements


def _title_box(slide: Slide) -> BBox | None:
    return slide.title_shape.box if slide.title_shape is not None else None


@dataclass(kw_only=True)
class _Writer(OfficeWriter):
    """The extracted text and the elements whose spans point into it, slide by slide."""

    page: int = 1
    box: BBox | None = None  # the box of the shape being read
    level: int = 0  # the level of the heading the text sits under
    last_title: str | None = None  # the key of the slide title the text sits under (title_key)
    notes: list[tuple[int, str]] = field(default_factory=list)  # the section's speaker notes, by slide
    items: list[tuple[int, str, str]] = field(default_factory=list)  # open list items: level, id, list id
    lists: int = 0

    def add(self, draft: ElementDraft, shown: str | None = None) -> str:
        """Append the element on the slide being read (its number and the shape's box); its id."""
        return self.append(draft, shown, page=self.page, bbox=self.box)

    def deck(self, deck: Deck, slides: Sequence[Slide]) -> None:
        base = 1 if any(slide.section for slide in slides) else 0
        dividers = any(s.kind == "section" or (s.kind == "title" and i) for i, s in enumerate(slides))
        levels = (base + 1, base + 2 if dividers else base + 1)  # section slides', other slides'
        section = ""
        for index, slide in enumerate(slides):
            self.page = slide.number
            deck_title = slide.kind == "title" and index == 0
            if deck_title:  # above PowerPoint's sections
                self.heading(ElementDraft(ElementKind.TITLE, slide.title), 0, _title_box(slide))
            if slide.section and slide.section != section:
                section = slide.section
                self.heading(ElementDraft(ElementKind.SECTION_HEADER, section, level=1), 1)
            going_on = not deck_title and self.title(slide, levels)
            self.slide(deck, slide, keep_list=going_on)
            if self.options.include_speaker_notes:
                notes = deck.notes(slide)
                if notes:
                    self.notes.append((slide.number, notes))
        self.flush_notes()

    def title(self, slide: Slide, levels: tuple[int, int]) -> bool:
        """Write a slide's title; whether the slide goes on in the section before it, list and all."""
        box = _title_box(slide)
        if slide.kind in ("title", "section"):
            self.heading(
                ElementDraft(ElementKind.SECTION_HEADER, slide.title, level=levels[0]), levels[0], box
            )
            return False
        if not slide.title:
            return True
        key = title_key(slide.title)
        if key == self.last_title:  # the title again: a running header, and the list goes on
            self.box = box
            self.add(ElementDraft(ElementKind.PAGE_HEADER, slide.title))
            return True
        self.heading(ElementDraft(ElementKind.SECTION_HEADER, slide.title, level=levels[1]), levels[1], box)
        self.last_title = key
        return False

    def heading(self, draft: ElementDraft, level: int, box: BBox | None = None) -> None:
        page = self.page
        self.flush_notes()
        self.page, self.box = page, box
        self.items.clear()
        self.level = level
        self.last_title = None
        self.add(draft)

    def slide(self, deck: Deck, slide: Slide, *, keep_list: bool) -> None:
        for shape in slide.shapes:
            if shape is slide.title_shape:
                continue
            self.box = shape.box
            element, ph = shape.element, shape.placeholder
            if element.tag == f"{P}sp" and ph is not None and ph[0] in FURNITURE:
                text = "\n".join(body_texts(element))
                if text:
                    self.add(ElementDraft(FURNITURE[ph[0]], text))
            elif element.tag == f"{P}sp" and element.find(f"{P}txBody") is not None:
                self.text_body(shape, deck.chain(slide, shape), keep_list=keep_list)
                keep_list = False
            elif element.tag == f"{P}pic":
                alt = alt_text(element)
                if alt:
                    self.add(ElementDraft(ElementKind.PICTURE, alt))
            elif element.tag == f"{P}graphicFrame":
                table = element.find(f"{A}graphic/{A}graphicData[@uri='{_TABLE}']/{A}tbl")
                text = pipe_table(table_rows(table)) if table is not None else ""
                if text:
                    self.add(ElementDraft(ElementKind.TABLE, text))
        self.box = None

    def text_body(self, shape: Shape, chain: list[ListStyle], *, keep_list: bool) -> None:
        """The paragraphs of a shape: list items where a bullet or number shows, else text."""
        if not keep_list:
            self.items.clear()
        numbers = AutoNumbers()
        body = shape.element.find(f"{P}txBody")
        for p in body.findall(f"{A}p") if body is not None else ():
            text = paragraph_text(p)
            if not text:
                continue
            ppr = p.find(f"{A}pPr")
            level = level_of(ppr)
            bullet = resolve(ppr, level, chain)
            marker = numbers.marker(level, bullet)
            if marker:
                self.item(text, marker, level, ordered=bullet.kind == "number")
                continue
            owner = next((item for item in reversed(self.items) if item[0] < level), None)
            if owner is not None:  # indented under a list item: a paragraph of that item
                self.flush()
                self.pending.append(text)
                self.flush(parent=owner[1], list_id=owner[2])
            else:
                self.items.clear()
                self.pending.append(text)
        self.flush()

    def item(self, text: str, number: str, level: int, *, ordered: bool) -> None:
        if self.items:
            list_id = self.items[-1][2]
        else:
            list_id = list_id_for(self.source_id, self.lists)
            self.lists += 1
        while self.items and self.items[-1][0] >= level:
            self.items.pop()
        parent = self.items[-1][1] if self.items else None
        draft = ElementDraft(
            ElementKind.LIST_ITEM, text, level=level, number=number, ordered=ordered,
            parent_id=parent, list_id=list_id,
        )  # fmt: skip
        self.items.append((level, self.add(draft, f"{number} {text}"), list_id))

    def flush(
        self, parent: str | None = None, list_id: str | None = None, hints: tuple[tuple[str, str], ...] = ()
    ) -> None:
        """Read the plain paragraphs held back, as one text, by the plain-text reader.

        ``parent`` is the list item they belong to, if any (``list_id`` its list): their
        top elements' parent. A numbered heading found in them sits under the slide's title;
        a short line the plain-text rules would take for a heading by its layout alone is
        text (bullet points without bullets).
        """
        for element in self.plain_run():  # a numbered heading (第1章, 1.1) nests under the slide's title
            kind = element.kind
            if kind is ElementKind.SECTION_HEADER and ("inferred", "true") in element.hints:
                kind = ElementKind.TEXT  # a short line on a slide: its sections come from titles
            self.elements.append(
                replace(
                    element,
                    kind=kind,
                    parent_id=element.parent_id or parent,
                    list_id=element.list_id or list_id,
                    page=self.page,  # the plain-text reader counts pages from 1: the slide's number
                    bbox=self.box,
                    hints=(*hints, *element.hints),
                )
            )

    def flush_notes(self) -> None:
        """Write the speaker notes of the section's slides, each under its slide's number."""
        self.flush()
        box, self.box = self.box, None  # the notes are not on the slide
        for page, notes in self.notes:
            self.page = page
            self.pending.append(notes)
            self.flush(hints=(NOTES_HINT,))
        self.notes = []
        self.box = box

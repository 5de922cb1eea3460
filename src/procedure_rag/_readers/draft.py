"""The element draft every reader builds, and the one recipe for element and list ids.

A reader learns an element's kind, text and list structure (level, number,
parent item, list, admonition, hints) before it knows where the element sits: its
span, page, box or order. :class:`ElementDraft` holds the first part and
:meth:`ElementDraft.build` adds the second, giving the :class:`LayoutElement`.
Readers that keep more while they read (a start line, source lines, a record's
hierarchy) subclass it with keyword-only fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from procedure_rag._types import BBox, ElementKind, LayoutElement, Span

__all__ = [
    "HEADING_FROM",
    "INFERRED_HEADINGS",
    "INFERRED_TABLES",
    "TABLE_FROM",
    "ElementDraft",
    "element_id_for",
    "list_id_for",
]

#: The hint naming what a reader found a heading by: ``"tags"`` or ``"outline"`` (a PDF's
#: own structure), ``"fonts"`` (size, weight or a rule drawn under it), ``"text"`` (the
#: shape of a line of extracted text). Readers of formats that declare their headings
#: (Markdown, HTML, Word styles) leave it out.
HEADING_FROM = "heading_from"
#: The ``heading_from`` values of headings inferred from the print rather than declared.
INFERRED_HEADINGS = frozenset({"fonts", "text"})
#: The hint naming what a reader found a table by, where nothing declared it: ``"rules"`` (the
#: lines and cell boxes a PDF page draws, no table tag) or ``"alignment"`` (lines of a PDF split
#: into aligned cells).
TABLE_FROM = "table_from"
#: The ``table_from`` values: tables inferred from the print rather than declared.
INFERRED_TABLES = frozenset({"rules", "alignment"})


def element_id_for(source_id: str, order: int) -> str:
    """The id of the element at reading-order ``order``: ``"{source_id}#e{order}"``."""
    return f"{source_id}#e{order}"


def list_id_for(source_id: str, n: int) -> str:
    """The id of a list, ``"{source_id}#l{n}"``; each reader says what ``n`` counts."""
    return f"{source_id}#l{n}"


@dataclass(slots=True)
class ElementDraft:
    """What a reader knows of an element before its place: see :class:`LayoutElement`.

    Mutable on purpose: a reader often settles a field later (the parent of a
    paragraph held back until the list it follows goes on or ends).
    """

    kind: ElementKind
    text: str = ""
    level: int = 0
    number: str = ""
    ordered: bool = False
    parent_id: str | None = None
    list_id: str | None = None
    admonition: str = ""
    hints: tuple[tuple[str, str], ...] = ()

    def build(
        self,
        element_id: str,
        order: int,
        *,
        span: Span | None = None,
        page: int | None = None,
        bbox: BBox | None = None,
        record_id: str = "",
        section_path: tuple[str, ...] = (),
    ) -> LayoutElement:
        """The element, placed: its id, reading order and where it sits in the source."""
        return LayoutElement(
            element_id=element_id,
            kind=self.kind,
            text=self.text,
            order=order,
            span=span,
            page=page,
            bbox=bbox,
            level=self.level,
            number=self.number,
            ordered=self.ordered,
            parent_id=self.parent_id,
            list_id=self.list_id,
            admonition=self.admonition,
            hints=self.hints,
            section_path=section_path,
            record_id=record_id,
        )

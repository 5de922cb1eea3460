"""Value objects shared by every pipeline stage.

Everything here is immutable: stages return new objects instead of mutating the
ones they were given, so a list of elements can be reused across runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from procedure_rag._language.numbering import step_number

__all__ = [
    "MAX_HEADING_LEVEL",
    "SCHEMA_VERSION",
    "BBox",
    "Chunk",
    "ChunkLevel",
    "ChunkType",
    "ElementKind",
    "LayoutElement",
    "ProcedureStep",
    "Span",
]

#: Version of the metadata layout written on every chunk. Bump it when a key
#: changes meaning so that stored indexes can be recognised as stale.
SCHEMA_VERSION = 1

#: Deepest heading level a reader gives: a parser's deeper nesting (no document has it)
#: is read at this level, so that section paths stay short however deep the input goes.
MAX_HEADING_LEVEL = 64


class ElementKind(StrEnum):
    """What a layout element is, independent of the source format."""

    TITLE = "title"
    SECTION_HEADER = "section_header"
    LIST_ITEM = "list_item"
    TEXT = "text"
    TABLE = "table"
    PICTURE = "picture"
    CAPTION = "caption"
    CODE = "code"
    FORMULA = "formula"
    PAGE_HEADER = "page_header"
    PAGE_FOOTER = "page_footer"
    FOOTNOTE = "footnote"
    FRONT_MATTER = "front_matter"
    FORM = "form"


class ChunkType(StrEnum):
    """What a chunk mainly holds."""

    PROCEDURE = "procedure"
    TEXT = "text"
    TABLE = "table"
    CODE = "code"
    PICTURE = "picture"


class ChunkLevel(StrEnum):
    """Where a chunk sits in the parent/child hierarchy."""

    CHILD = "child"
    PARENT = "parent"


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open character range ``[start, end)`` into the source text."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            msg = f"invalid span [{self.start}, {self.end})"
            raise ValueError(msg)


@dataclass(frozen=True, slots=True)
class BBox:
    """A box on a page, in the one convention every reader converts to.

    ``left``, ``top``, ``right`` and ``bottom`` are fractions of the page's width and
    height (0 to 1), measured from the page's top-left corner, so boxes from any
    parser compare and draw the same way. ``page_width`` and ``page_height`` give the
    page size in ``unit`` (``"pt"``, ``"px"`` or ``"inch"``) when the source states it;
    multiply to get back the parser's own coordinates.

    Raises:
        ValueError: When a coordinate is outside 0..1 or the box is inverted.
    """

    left: float
    top: float
    right: float
    bottom: float
    page_width: float | None = None
    page_height: float | None = None
    unit: str = ""

    def __post_init__(self) -> None:
        coords = (self.left, self.top, self.right, self.bottom)
        # A little slack: parsers round, and a box touching the edge may overshoot by a hair.
        if any(not -0.01 <= c <= 1.01 for c in coords):
            msg = f"box {coords} is outside the page (coordinates are fractions of the page, 0 to 1)"
            raise ValueError(msg)
        if self.right < self.left or self.bottom < self.top:
            msg = f"box {coords} is inverted (right < left or bottom < top)"
            raise ValueError(msg)

    def as_list(self) -> list[float]:
        """``[left, top, right, bottom]`` rounded to 4 places, for metadata."""
        return [round(c, 4) for c in (self.left, self.top, self.right, self.bottom)]


@dataclass(frozen=True, slots=True)
class LayoutElement:
    """One block of a document as a reader saw it.

    Attributes:
        element_id: Stable id, unique within the source.
        kind: What the block is.
        text: The block's own text (markup markers such as ``#`` or ``>`` removed,
            inline markup kept).
        order: Reading-order number, starting at 0.
        span: Where the block sits in the source text, when the source is text.
        page: 1-based page number, when known.
        bbox: Box on the page, when known.
        level: Heading level for section headers, nesting depth for list items
            (0 = top level), 0 otherwise.
        number: The list marker or heading number as written (``"1."``, ``"①"``,
            ``"手順3"``), empty when there is none.
        ordered: Whether a list item belongs to a numbered list.
        parent_id: Element id of the enclosing list item (for nested items and for
            blocks inside an item), or ``None``.
        list_id: Id shared by the items (and the blocks inside them) of one list.
        admonition: Admonition label for notes and cautions (``"note"``,
            ``"warning"``, ``"注意"``…), empty otherwise.
        hints: Parser-specific facts kept for later stages (image url, code language…).
        record_id: The id of the record this element came from in the parser's own
            output (an Unstructured ``element_id``, a Docling ``self_ref``, a Textract
            block ``Id``…), so chunks can cite it; empty for text sources.
        section_path: Headings that govern the element, outermost first. Filled in by
            the sections stage.
    """

    element_id: str
    kind: ElementKind
    text: str
    order: int
    span: Span | None = None
    page: int | None = None
    bbox: BBox | None = None
    level: int = 0
    number: str = ""
    ordered: bool = False
    parent_id: str | None = None
    list_id: str | None = None
    admonition: str = ""
    hints: tuple[tuple[str, str], ...] = ()
    section_path: tuple[str, ...] = ()
    record_id: str = ""

    def with_section_path(self, path: tuple[str, ...]) -> LayoutElement:
        """Return a copy with ``section_path`` set (faster than ``dataclasses.replace``)."""
        return self._placed(self.page, self.hints, path)

    def with_page(self, page: int | None, hints: tuple[tuple[str, str], ...]) -> LayoutElement:
        """Return a copy with ``page`` and ``hints`` set (faster than ``dataclasses.replace``)."""
        return self._placed(page, hints, self.section_path)

    def _placed(
        self, page: int | None, hints: tuple[tuple[str, str], ...], path: tuple[str, ...]
    ) -> LayoutElement:
        return LayoutElement(
            self.element_id,
            self.kind,
            self.text,
            self.order,
            self.span,
            page,
            self.bbox,
            self.level,
            self.number,
            self.ordered,
            self.parent_id,
            self.list_id,
            self.admonition,
            hints,
            path,
            self.record_id,
        )

    def hint(self, key: str, default: str = "") -> str:
        """Return the parser hint ``key`` or ``default``."""
        for k, v in self.hints:
            if k == key:
                return v
        return default


@dataclass(frozen=True, slots=True)
class ProcedureStep:
    """One numbered or bulleted step, parsed into its parts.

    Every field is a string; an empty string means the step does not state it.
    ``number`` is the marker as printed (``"1."``, ``"①"``, ``"手順3"``, ``"-"``);
    :attr:`step_number` is the number a reader names (``"1"``, ``"①"``, ``"3"``, ``""``).
    """

    number: str
    text: str
    action: str = ""
    target: str = ""
    condition: str = ""
    result: str = ""
    caution: str = ""
    depth: int = 0
    parent_number: str = ""
    element_id: str = ""
    page: int | None = None
    bbox: BBox | None = None
    is_continuation: bool = False

    @property
    def step_number(self) -> str:
        """The marker without its trailing punctuation or step word (``"1."`` → ``"1"``, ``"-"`` → ``""``).

        See :func:`procedure_rag._language.numbering.step_number`.
        """
        return step_number(self.number)

    def to_dict(self) -> dict[str, Any]:
        """Return the step as a JSON-serialisable dict (empty fields dropped)."""
        out: dict[str, Any] = {"number": self.number, "step_number": self.step_number, "action": self.action}
        for key in ("target", "condition", "result", "caution", "parent_number"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.depth:
            out["depth"] = self.depth
        if self.page is not None:
            out["page"] = self.page
        if self.bbox is not None:
            out["bbox"] = self.bbox.as_list()
        if self.is_continuation:
            out["continued"] = True
        return out


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable piece of a document with everything known about it.

    Attributes:
        chunk_id: Stable id: the same input gives the same id on every run.
        text: The text to embed and to show; begins with the heading path.
        chunk_type: What the chunk mainly holds.
        level: Child (a block) or parent (a section or a run of children).
        section_path: Headings that govern the chunk, outermost first.
        steps: The procedure steps the chunk holds, in order.
        lead_in: The sentence before the list that sets its condition, if any.
        condition: The condition that governs the whole list (from the lead-in).
        source_spans: Merged character ranges of the source that the chunk covers
            (the whitespace between two of its elements counts as covered, so a run of
            elements is one range).
        context_spans: Merged ranges of the source the chunk repeats as context
            (the lead-in and the steps above a part that opens inside a list, the
            condition paragraph after a cut list), which another chunk covers; not
            counted in ``source_spans``.
        element_ids: Ids of the layout elements the chunk was built from.
        related_elements: Pictures, tables, code and forms next to the steps, as
            ``(element_id, kind, chunk_id)``; ``chunk_id`` is empty when the element
            sits in this same chunk.
        page: First page the chunk sits on, when known.
        parent_id: Id of the parent chunk (children only).
        child_ids: Ids of the children (parents only).
        source_id: Id of the source document.
        language: ``"ja"`` or ``"en"``.
        continued: True for every part after the first of a list or step that was
            split to fit the budget.
        boxes: Where the chunk's elements sit, as ``(page, bbox)`` in reading order
            (one per element that has a box).
        source_record_refs: Ids of the parser records the chunk was built from
            (see :attr:`LayoutElement.record_id`).
        sheet: Name of the workbook sheet the chunk comes from (Excel sources; the
            elements' ``sheet`` hint), else ``""``.
    """

    chunk_id: str
    text: str
    chunk_type: ChunkType
    level: ChunkLevel
    section_path: tuple[str, ...]
    source_id: str
    language: str
    steps: tuple[ProcedureStep, ...] = ()
    lead_in: str = ""
    condition: str = ""
    source_spans: tuple[Span, ...] = ()
    context_spans: tuple[Span, ...] = ()
    element_ids: tuple[str, ...] = ()
    related_elements: tuple[tuple[str, str, str], ...] = ()
    page: int | None = None
    parent_id: str | None = None
    child_ids: tuple[str, ...] = ()
    continued: bool = False
    boxes: tuple[tuple[int | None, BBox], ...] = ()
    source_record_refs: tuple[str, ...] = ()
    sheet: str = ""

    @property
    def start_index(self) -> int | None:
        """Character offset of the first source character the chunk covers."""
        return self.source_spans[0].start if self.source_spans else None

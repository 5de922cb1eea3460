"""The text an Office reader extracts and the elements whose spans point into it.

The Word and PowerPoint readers write their structural elements (headings, list items,
tables, captions) one by one, and hold plain paragraphs back until the next structural
element: those are read together by the plain-text rules, so a numbered line typed by
hand or a 「※」 note in them is found as in any text, and a title they find there nests
under the file's last heading. Each reader's writer subclasses
:class:`OfficeWriter` for what its format adds (pages, boxes, hints).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from procedure_rag._readers.draft import ElementDraft, element_id_for
from procedure_rag._readers.options import ReaderOptions
from procedure_rag._readers.plaintext import iter_plain_text_within
from procedure_rag._types import BBox, ElementKind, LayoutElement, Span

__all__ = ["OfficeWriter"]


@dataclass(kw_only=True)
class OfficeWriter:
    """The extracted text (``parts``) and its elements, in reading order."""

    source_id: str
    options: ReaderOptions
    parts: list[str] = field(default_factory=list)
    elements: list[LayoutElement] = field(default_factory=list)
    position: int = 0
    pending: list[str] = field(default_factory=list)  # plain paragraphs, read together
    runs: int = 0
    heading_level: int = 0  # of the last heading the file marks (0: none, or the title)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def append(
        self,
        draft: ElementDraft,
        shown: str | None = None,
        *,
        page: int | None = None,
        bbox: BBox | None = None,
    ) -> str:
        """Append ``shown`` (the element as the text shows it) and the element spanning it; its id.

        The plain paragraphs held back are read first.
        """
        self.flush()
        shown = draft.text if shown is None else shown
        order = len(self.elements)
        element_id = element_id_for(self.source_id, order)
        span = Span(self.position, self.position + len(shown))
        self.elements.append(draft.build(element_id, order, span=span, page=page, bbox=bbox))
        if draft.kind in (ElementKind.SECTION_HEADER, ElementKind.TITLE):
            self.heading_level = draft.level if draft.kind is ElementKind.SECTION_HEADER else 0
        self._write(shown + "\n\n")
        return element_id

    def flush(self) -> None:
        """Read the plain paragraphs held back; a subclass adjusts what the plain-text rules found."""
        self.elements.extend(list(self.plain_run()))

    def plain_run(self) -> Iterator[LayoutElement]:
        """The elements the plain-text rules find in the paragraphs held back, read as one text.

        The text is written after the last element (the caller appends each, in order).
        """
        if not self.pending:
            return
        text = "\n\n".join(self.pending)
        self.pending = []
        self.runs += 1
        yield from iter_plain_text_within(
            text,
            source_id=self.source_id,
            run_id=f"{self.source_id}#p{self.runs}",
            offset=self.position,
            first_order=len(self.elements),
            options=self.options,
            below=self.heading_level,
        )
        self._write(text + "\n\n")

    def _write(self, text: str) -> None:
        self.parts.append(text)
        self.position += len(text)

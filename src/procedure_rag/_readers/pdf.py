r"""PDF reader: characters with their fonts and boxes, read into headings, steps and tables.

No model runs here. PDFium (:mod:`procedure_rag._readers.pdf_pages`) gives each
page's lines with their font size, weight, box and tag;
:mod:`procedure_rag._readers.pdf_structure` groups them into blocks and decides
what each block is from the best evidence the file has (its tag tree, its outline,
then font statistics); :mod:`procedure_rag._readers.pdf_furniture` finds running
headers, footers and contents pages; :mod:`procedure_rag._readers.pdf_passes` lays the
pages out in passes over them spooled to a temporary file, so memory does not grow with
the page count. This module writes the blocks out as layout
elements: headings with their level, list items with their markers and nesting
(:class:`~procedure_rag._readers.layout_json.ListAssembler`), notes by their label,
tables as Markdown, captions, and headers and footers (dropped by the chunker by
default). Every element has its 1-based ``page`` and its ``bbox``; a printed page
number that differs from the PDF page is kept as the hint ``printed_page``, and a
heading's evidence as the hint ``heading_from`` (``"tags"``, ``"outline"``, ``"fonts"``,
or ``"text"`` where only the shape of a line told); a table no tag declares has the hint
``table_from``: ``"rules"`` (the lines and cell boxes the page draws,
:mod:`procedure_rag._readers.pdf_grids`) or ``"alignment"`` (lines split into aligned cells).

Pages without a text layer (scans) give one :class:`UserWarning` naming them; the
rest is read. For scanned PDFs use OCR or a layout parser (Docling, Unstructured,
a cloud service) and chunk its output; see ``docs/readers/pdf.md``.
"""

from __future__ import annotations

import re
import warnings
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from procedure_rag._language.labels import leading_label
from procedure_rag._language.numbering import match_step_marker
from procedure_rag._readers.draft import HEADING_FROM, TABLE_FROM, ElementDraft, element_id_for
from procedure_rag._readers.furniture_rules import CONTENTS_HINTS
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.pdf_pages import Line, PageLines, PdfFile, PdfSource
from procedure_rag._readers.pdf_passes import RECORD_TYPES, PageLayout, PdfLayout
from procedure_rag._readers.pdf_spool import Spool
from procedure_rag._readers.pdf_structure import Block
from procedure_rag._readers.pdf_text import fix_line, with_plain_bullet, wrap_joint
from procedure_rag._readers.plaintext import iter_plain_text_within
from procedure_rag._readers.registry import Source
from procedure_rag._readers.tables import pipe_table
from procedure_rag._readers.text_window import TextWindow
from procedure_rag._types import BBox, ElementKind, LayoutElement, Span

__all__ = ["PdfSource", "extract_pdf_text", "iter_pdf", "read_pdf"]

_FORMAT = "pdf"
# What a line cannot be broken inside: a word, up to and with its first Japanese character.
_FIRST_WORD = re.compile(r"[^\s\u2e80-\uffef]{0,12}[\u2e80-\uffef]?")
_KINDS = {
    "heading": ElementKind.SECTION_HEADER,
    "title": ElementKind.TITLE,
    "caption": ElementKind.CAPTION,
    "header": ElementKind.PAGE_HEADER,
    "footer": ElementKind.PAGE_FOOTER,
    "contents": ElementKind.TEXT,
}


def read_pdf(source: PdfSource, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS) -> Source:
    r"""Read a PDF's layout elements and its text.

    Args:
        source: The PDF as bytes, a path, or a binary file object.
        source_id: Id of the document; element ids start with it.
        options: The reader options (step and heading numbering styles).

    Returns:
        ``Source("pdf", elements, text)``: ``text`` holds the elements' texts, pages
        joined by form feeds (``"\f"``); the elements' spans point into it.

    Raises:
        ReaderError: For input that is not a PDF, a damaged, truncated or encrypted
            file (record ``"file"``), or a page that cannot be read (``"page N"``).
        ImportError: When pypdfium2 is not installed.
    """
    text = TextWindow()
    return Source(_FORMAT, list(_written(source, _Writer(source_id, options, text))), text.text())


def iter_pdf(
    source: PdfSource,
    *,
    source_id: str,
    options: ReaderOptions = DEFAULT_READER_OPTIONS,
    text: TextWindow | None = None,
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a PDF (see :func:`read_pdf`), page by page.

    The pages are laid out first (in passes over them spooled to a temporary file,
    :mod:`procedure_rag._readers.pdf_passes`), then each element is yielded as its page
    is written out; the elements are not kept, so memory does not grow with the page
    count. Headers and footers come last, as in :func:`read_pdf`.

    Args:
        source: The PDF as bytes, a path, or a binary file object.
        source_id: Id of the document; element ids start with it.
        options: The reader options.
        text: Where the text the spans point into is written, as :func:`read_pdf`'s
            ``text``; each element's text is there when the element is yielded. The
            caller releases what it no longer needs. ``None`` keeps no text.
    """
    yield from _written(source, _Writer(source_id, options, text))


def _written(source: PdfSource, writer: _Writer) -> Iterator[LayoutElement]:
    """Lay out the PDF and write its pages out through ``writer``, yielding each element written."""
    with PdfFile(source) as pdf:
        layout = PdfLayout.of(pdf)
    with layout:
        _warn_without_text(layout.without_text)
        writer.start(layout)
        with writer:
            for record in layout.pages():
                writer.page(record)
                for block in record.blocks:
                    writer.block(block, record.page)
                # A run of body text across pages holds the pages it has not written out: only
                # their lines that it needs, not the rest of them.
                record.page.lines = []
                yield from writer.take()
            yield from writer.finish()


def extract_pdf_text(source: PdfSource) -> list[str]:
    """Return each page's text, lines in the order the page draws them (headers and footers included)."""
    with PdfFile(source) as pdf:
        return ["\n".join(line.text for line in page.lines) for page in pdf.pages()]


def _warn_without_text(empty: list[int]) -> None:
    if not empty:
        return
    runs: list[list[int]] = []
    for n in empty:
        if runs and runs[-1][-1] == n - 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    named = ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)
    word = "page" if len(empty) == 1 else "pages"
    warnings.warn(f"no text layer on {word} {named}: use OCR or a layout parser", UserWarning, stacklevel=4)


@dataclass
class _RunLine:
    start: int
    end: int
    page: PageLines
    line: Line


@dataclass
class _Writer:
    """Writes the blocks out as elements and their text, so each element gets a span.

    Body text between two structural blocks (headings, tables, captions, contents) is
    one run, read by the plain-text rules (step markers, nesting by indentation,
    lead-ins, notes, menu paths) across page breaks; each element it gives gets the
    page and box of the lines its span covers. Elements written wait in ``out`` until
    taken (:meth:`take`); the text goes to ``text`` when there is one (a span needs only
    its position). Headers and footers are written last, after the body text; until then
    they wait in a spool on disk.
    """

    source_id: str
    options: ReaderOptions
    text: TextWindow | None
    body: float = 10.0
    heading_evidence: str = "fonts"
    margin: float = 0.0
    right: float = 0.0
    out: list[LayoutElement] = field(default_factory=list)
    count: int = 0
    position: int = 0
    run: list[str] = field(default_factory=list)
    run_lines: list[_RunLine] = field(default_factory=list)
    run_start: int = 0
    run_length: int = 0
    runs: int = 0
    level: int = 0
    pages: int = 0
    furniture: Spool[tuple[Block, PageLines]] | None = None

    def start(self, layout: PdfLayout) -> None:
        self.body = layout.body
        self.heading_evidence = layout.heading_evidence

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.furniture is not None:
            self.furniture.close()

    def take(self) -> list[LayoutElement]:
        """The elements written since the last call."""
        out, self.out = self.out, []
        return out

    def page(self, record: PageLayout) -> None:
        if self.pages:
            if self.run_lines:
                self._run_text("\f")
            else:
                self._write("\f")
        self.pages += 1
        self.margin, self.right = record.margin, record.right

    def block(self, block: Block, page: PageLines) -> None:
        if block.kind in ("header", "footer"):
            if self.furniture is None:
                self.furniture = Spool(RECORD_TYPES)
            # The page without its lines: a header needs only its number, size and printed number.
            self.furniture.append((block, replace(page, lines=[], rules=[], grids=[])))
        elif block.kind in ("text", "item"):
            self._add_to_run(block, page)
        else:
            self.flush()
            self._structural(block, page)

    def finish(self) -> Iterator[LayoutElement]:
        """Write out the last run, then the headers and footers, yielding each element written.

        One at a time: the furniture of every page is written here, and held as a list
        it would grow with the page count.
        """
        self.flush()
        yield from self.take()
        if self.furniture is not None:
            for block, page in self.furniture:
                self._structural(block, page)
                yield from self.take()

    def _hints(self, page: PageLines) -> tuple[tuple[str, str], ...]:
        printed = page.printed
        return (("printed_page", str(printed)),) if printed is not None and printed != page.number else ()

    def _structural(self, block: Block, page: PageLines) -> None:
        hints = self._hints(page)
        if block.kind == "table":
            if block.table_from:
                hints = (*hints, (TABLE_FROM, block.table_from))
            draft = ElementDraft(ElementKind.TABLE, pipe_table(block.rows), hints=hints)
        else:
            if block.kind == "contents":
                hints = (*hints, *CONTENTS_HINTS)
            if block.kind == "heading":
                self.level = block.level
                hints = (*hints, (HEADING_FROM, self.heading_evidence))
            elif block.kind == "title":
                self.level = 0
            draft = ElementDraft(_KINDS[block.kind], block.text, level=block.level, hints=hints)
        if draft.text:
            bbox = _box(block.lines, page)
            self._add(
                draft.build(
                    self._next_id(),
                    self.count,
                    span=Span(self.position, self.position + len(draft.text)),
                    page=page.number,
                    bbox=bbox,
                    record_id=f"page {page.number}",
                )
            )
            self._write(draft.text + "\n\n")

    def _add_to_run(self, block: Block, page: PageLines) -> None:
        em = max(self.body, 1.0)
        for i, line in enumerate(block.lines):
            text = with_plain_bullet(fix_line(line.text))
            if self.run_lines and self._wraps(self.run_lines[-1], line, text, page, first=not i):
                self._join_wrapped(text, page, line)
                continue
            if self.run_lines:
                prev = self.run_lines[-1]
                gap = prev.page is page and line.top - prev.line.bottom > 0.45 * max(
                    line.size, prev.line.size
                )
                self._run_text(
                    "\n\n"
                    if gap or (line is block.lines[0] and prev.page is page and _apart(prev.line, line))
                    else "\n"
                )
            indent = " " * min(40, max(0, round((line.left - self.margin) / (0.5 * em))))
            self._run_text(indent)
            indented = line.left > self.margin + 0.5 * em
            unmarked = match_step_marker(text) is None
            if block.kind == "item" and line is block.lines[0] and indented and unmarked:
                text = "• " + text  # a tagged list item whose bullet is a drawing, not text
            start = self.run_length
            self._run_text(text)
            self.run_lines.append(_RunLine(start, self.run_length, page, line))

    def _wraps(self, last: _RunLine, line: Line, text: str, page: PageLines, *, first: bool) -> bool:
        """Whether ``line`` goes on the run's last line wrapped: that line ran to the text's right edge.

        It did when the first word of ``line`` would not have fitted after it. The first
        line of a block goes on the line before it only on the same page, in the same
        size and weight, starting where it starts (or up to two characters left of
        it: a paragraph's indented first line) and not split from it by tags (a paragraph
        gap measured between line boxes misleads where a tall glyph makes a box taller).
        Lines in a monospaced font (commands, code) and lines that open with a step
        marker or a note label (``※``, ``Note:``) keep their break.
        """
        prev = last.line
        if (
            prev.mono
            or line.mono
            or match_step_marker(text, self.options.step_styles) is not None
            or leading_label(text)[0]
        ):
            return False
        if first and (
            last.page is not page
            or _apart(prev, line)
            or (line.tag_key and prev.tag_key)
            or not prev.left - 2 * line.size <= line.left <= prev.left + 0.5 * line.size
        ):
            return False
        right = self.right
        if right <= 0:
            return False
        # Japanese breaks after any character; other scripts after a word.
        found = _FIRST_WORD.match(text)
        word = found.group() if found is not None else ""
        wide = sum(1.0 if ch > "\u2e7f" else 0.55 for ch in word)
        return prev.right + (wide + 0.3) * line.size > right

    def _join_wrapped(self, text: str, page: PageLines, line: Line) -> None:
        """Write ``text`` onto the run's last line, joined as its script wants (see :func:`wrap_joint`)."""
        drop, joint = wrap_joint(self.run[-1], text)
        if drop:
            self.run[-1] = self.run[-1][:-drop]
            self.run_length -= drop
        self._run_text(joint)
        start = self.run_length
        self._run_text(text)
        self.run_lines.append(_RunLine(start, self.run_length, page, line))

    def _run_text(self, text: str) -> None:
        if not self.run:
            self.run_start = self.position
        self.run.append(text)
        self.run_length += len(text)

    def flush(self) -> None:
        if not self.run_lines:
            self.run.clear()
            self.run_length = 0
            return
        text = "".join(self.run)
        self.runs += 1
        # The plain-text rules guess headings from a line's shape; the layout's own
        # evidence (tags, outline, fonts), where it found headings, is better.
        strong = self.heading_evidence != "none"
        starts = [r.start for r in self.run_lines]
        for element in iter_plain_text_within(
            text,
            source_id=self.source_id,
            run_id=f"{self.source_id}#r{self.runs}",
            offset=self.position,
            first_order=self.count,
            options=self.options,
        ):
            span = element.span
            lines = self.run_lines
            if span is not None:
                first = max(0, bisect_right(starts, span.start - self.position) - 1)
                last = max(first, bisect_right(starts, span.end - self.position - 1) - 1)
                lines = self.run_lines[first : last + 1]
            page = lines[0].page
            on_page = [r.line for r in lines if r.page is page]
            kind, level = element.kind, element.level
            if kind in (ElementKind.SECTION_HEADER, ElementKind.TITLE):
                if strong:
                    kind, level = ElementKind.TEXT, 0
                else:
                    kind, level = ElementKind.SECTION_HEADER, self.level + max(element.level, 1)
            hints = (*element.hints, *self._hints(page))
            if kind is ElementKind.SECTION_HEADER:
                hints = (*hints, (HEADING_FROM, "text"))
            placed = replace(element, kind=kind, level=level, page=page.number, bbox=_box(on_page, page))
            self._add(replace(placed, hints=hints, record_id=f"page {page.number}"))
        self._write(text + "\n\n")
        self.run.clear()
        self.run_lines.clear()
        self.run_length = 0

    def _next_id(self) -> str:
        return element_id_for(self.source_id, self.count)

    def _add(self, element: LayoutElement) -> None:
        self.out.append(element)
        self.count += 1

    def _write(self, text: str) -> None:
        if self.text is not None:
            self.text.append(text)
        self.position += len(text)


def _apart(prev: Line, line: Line) -> bool:
    """Two blocks of a run that the page sets apart: another size or weight."""
    return abs(prev.size - line.size) > 0.6 or prev.bold != line.bold


def _box(lines: list[Line], page: PageLines) -> BBox | None:
    if not lines:
        return None

    def frac(value: float, size: float) -> float:
        return min(1.0, max(0.0, value / size)) if size > 0 else 0.0

    return BBox(
        frac(min(ln.left for ln in lines), page.width),
        frac(min(ln.top for ln in lines), page.height),
        frac(max(ln.right for ln in lines), page.width),
        frac(max(ln.bottom for ln in lines), page.height),
        page.width,
        page.height,
        "pt",
    )

"""A PDF's layout in passes over its pages, which wait on disk, so memory does not grow with pages.

Running lines, the body font, headings, contents lists and the text's right edge are
decided over the whole document, so no page can be written out before the last is read.
Rather than hold every page's lines, each pass reads the pages one at a time from a
:class:`~procedure_rag._readers.pdf_spool.Spool` and keeps only what it counts:

1. PDFium reads each page (:mod:`procedure_rag._readers.pdf_pages`) and it is spooled;
   the pass counts line sizes (the body size), tagged lines, heading tags, the shapes of
   margin lines (:class:`~procedure_rag._readers.pdf_furniture.RunningLines`) and pages
   without text.
2. Without an outline, the lines set larger than the body give the heading titles a
   contents page may list, each with the last page it is on.
3. Each page's running lines and contents page are decided, its lines grouped into
   blocks (:func:`~procedure_rag._readers.pdf_structure.page_blocks`) and spooled; the
   font statistics of the headings are counted
   (:class:`~procedure_rag._readers.pdf_headings.FontHeadings`).
4. Headings are decided (by the outline, read back page by page, or the font counts) and
   where each heading title is last is counted
   (:class:`~procedure_rag._readers.pdf_contents.LaterHeadings`).
5. The headings are decided again the same way, contents lists merged, each page's left
   text edge measured and its blocks spooled; the right ends of the body lines are
   counted in one-point bands.
6. The lines ending in the band the 90th percentile falls in give the right edge exactly.

Then :meth:`PdfLayout.pages` gives each page with its blocks for writing out.
What is held is bounded by distinct values (font sizes, margin-line shapes, heading
titles), the outline and the headings it matches, and the pages a list of items runs
over, not by the page count.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from procedure_rag._readers.pdf_contents import LaterHeadings, mark_contents_lists
from procedure_rag._readers.pdf_furniture import RunningLines, contents_page, heading_key
from procedure_rag._readers.pdf_grids import Grid, GridCell
from procedure_rag._readers.pdf_headings import FontHeadings, outline_headings
from procedure_rag._readers.pdf_pages import Cell, Line, OutlineEntry, PageLines, PdfFile, Rule
from procedure_rag._readers.pdf_spool import Spool
from procedure_rag._readers.pdf_structure import Block, heading_tag, large, margin, page_blocks

__all__ = ["RECORD_TYPES", "PageLayout", "PdfLayout"]

# The share of body lines the right text edge is beyond.
_RIGHT_SHARE = 0.9


@dataclass
class PageLayout:
    """A page laid out: its lines, its blocks in reading order, and its body text's left and right edges."""

    page: PageLines
    blocks: list[Block]
    margin: float
    right: float = 0.0


#: What the spools of a layout hold: pages, their lines and drawings, blocks.
RECORD_TYPES: tuple[type, ...] = (PageLayout, PageLines, Line, Cell, Rule, Grid, GridCell, Block)


@dataclass
class PdfLayout:
    """The layout of an open PDF (see the module docstring); close it to delete its spool.

    Attributes:
        body: The body text's font size (the size most of the text has).
        heading_evidence: ``"tags"``, ``"outline"``, ``"fonts"``, or ``"none"`` when the
            fonts gave no heading.
        without_text: Numbers of the pages with no text layer.
    """

    body: float = 10.0
    heading_evidence: str = "fonts"
    without_text: list[int] = field(default_factory=list)
    _spools: list[Spool[Any]] = field(default_factory=list)
    _final: Spool[PageLayout] | None = None
    _edges: dict[int, float] = field(default_factory=dict)
    _fonts: FontHeadings | None = None
    _outline_found: dict[tuple[int, int], int] | None = None

    @classmethod
    def of(cls, pdf: PdfFile) -> PdfLayout:
        """Lay out ``pdf``'s pages; its spools are deleted if that fails."""
        layout = cls()
        try:
            layout._lay_out(pdf)
        except BaseException:
            layout.close()
            raise
        return layout

    def pages(self) -> Iterator[PageLayout]:
        """Each page laid out, in order, read back one at a time."""
        if self._final is None:
            return
        for record in self._final:
            record.right = self._edges.get(round(record.page.width), 0.0)
            yield record

    def close(self) -> None:
        """Delete the spooled pages."""
        for spool in self._spools:
            spool.close()

    def __enter__(self) -> PdfLayout:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _spool(self) -> Spool[Any]:
        spool: Spool[Any] = Spool(RECORD_TYPES)
        self._spools.append(spool)
        return spool

    def _lay_out(self, pdf: PdfFile) -> None:
        outline = pdf.outline()
        raw: Spool[PageLines] = self._spool()
        running = RunningLines()
        sizes: Counter[float] = Counter()
        tag_headings = False
        for page in pdf.pages():
            running.add(page)
            for line in page.lines:
                sizes[line.size] += len(line.text)
                tag_headings = tag_headings or heading_tag(line)
            if page.chars == 0:
                self.without_text.append(page.number)
            raw.append(page)
        self.body = sizes.most_common(1)[0][0] if sizes else 10.0
        self.heading_evidence = "tags" if tag_headings else "outline" if outline else "fonts"
        staged = self._stage(raw, running, self._last_pages(raw, outline))
        raw.close()
        later = LaterHeadings()
        for record in self._decided(staged, outline):
            later.add(record.blocks)
        if self._fonts is not None and not self._fonts.found:
            self.heading_evidence = "none"
        final: Spool[PageLayout] = self._spool()
        bands: dict[int, Counter[int]] = {}
        for record in mark_contents_lists(self._decided(staged, outline), _blocks_of, later):
            record.margin = margin(record.page, record.blocks)
            counts = bands.setdefault(round(record.page.width), Counter())
            counts.update(math.floor(right) for right in _rights(record))
            final.append(record)
        staged.close()
        self._final = final
        self._edges = _right_edges(final, bands)

    def _last_pages(self, raw: Spool[PageLines], outline: list[OutlineEntry]) -> dict[str, int]:
        """The headings known before blocks are (bookmarks, else lines set large) -> their last page."""
        out: dict[str, int] = {}
        if outline:
            for entry in outline:
                key = heading_key(entry.title)
                out[key] = max(out.get(key, -1), entry.page or 0)
            return out
        for page in raw:
            for line in page.lines:
                if large(line, self.body):
                    out[heading_key(line.text)] = page.number
        return out

    def _stage(
        self, raw: Spool[PageLines], running: RunningLines, last_pages: dict[str, int]
    ) -> Spool[PageLayout]:
        staged: Spool[PageLayout] = self._spool()
        self._fonts = FontHeadings(self.body) if self.heading_evidence == "fonts" else None
        after = False
        for page in raw:
            furniture, page.printed = running.on_page(page)
            after = contents_page(page, furniture, last_pages, after=after)
            blocks = page_blocks(page, furniture, contents=after)
            if self._fonts is not None:
                self._fonts.count(blocks)
            staged.append(PageLayout(page, blocks, margin(page, blocks)))
        return staged

    def _decided(self, staged: Spool[PageLayout], outline: list[OutlineEntry]) -> Iterator[PageLayout]:
        """The staged pages with their headings decided (the same each time it is called)."""
        if self._fonts is not None:
            yield from self._fonts.decide(staged, _page_of, _blocks_of, _margin_of)
            return
        if self._outline_found is None:
            self._outline_found = outline_headings(len(staged), lambda i: staged[i].blocks, outline)
        found = self._outline_found
        for index, record in enumerate(staged):
            for block_index, block in enumerate(record.blocks):
                level = found.get((index, block_index))
                if level is not None:
                    block.kind, block.level = "heading", level
            yield record


def _page_of(record: PageLayout) -> PageLines:
    return record.page


def _blocks_of(record: PageLayout) -> list[Block]:
    return record.blocks


def _margin_of(record: PageLayout) -> float:
    return record.margin


def _rights(record: PageLayout) -> Iterable[float]:
    return (line.right for b in record.blocks if b.kind in ("text", "item") for line in b.lines)


def _right_edges(final: Spool[PageLayout], bands: dict[int, Counter[int]]) -> dict[int, float]:
    """The right edge of the body text of each page width: where the document's full lines end.

    Taken over the whole document (pages of one size share their margins), so that a
    page with little text, labels in a figure, still has the document's edge: the right
    end most body lines do not pass (the 90th percentile of pages that size). The
    percentile's one-point band is found from ``bands``, then its exact value by one
    more pass over the lines ending in that band.
    """
    wanted: dict[int, tuple[int, int]] = {}  # width -> (band, rank in band)
    for width, counts in bands.items():
        total = sum(counts.values())
        if total:
            wanted[width] = _nth(counts, int(_RIGHT_SHARE * (total - 1)))
    if not wanted:
        return {}
    values: dict[int, Counter[float]] = {width: Counter() for width in wanted}
    for record in final:
        width = round(record.page.width)
        if width in wanted:
            band = wanted[width][0]
            values[width].update(r for r in _rights(record) if math.floor(r) == band)
    return {width: _nth(values[width], rank)[0] for width, (_, rank) in wanted.items()}


def _nth(counts: Counter[Any], rank: int) -> tuple[Any, int]:
    """The ``rank``-th (0-based) of the values counted, in order, and its rank among its equals."""
    for value in sorted(counts):
        if rank < counts[value]:
            return value, rank
        rank -= counts[value]
    raise IndexError(rank)

"""Amazon Textract layout reader (``AnalyzeDocument`` / ``StartDocumentAnalysis`` with ``LAYOUT``).

Textract returns one flat list of ``Blocks``. ``LAYOUT_*`` blocks come in reading
order, page by page; their ``CHILD`` relationships point at ``LINE`` blocks (whose
``WORD`` children make the line) or, for ``LAYOUT_LIST``, at the ``LAYOUT_TEXT``
blocks of its items. Geometry is already a fraction of the page from its top-left
corner; Textract states no page size. Section headers carry no level: their
numbering gives one, else they sit one below the title.
"""

from __future__ import annotations

from collections.abc import Iterator

from procedure_rag._language.numbering import match_heading_number, match_step_marker
from procedure_rag._language.text import join_lines
from procedure_rag._readers.draft import ElementDraft
from procedure_rag._readers.layout_json import ElementSink, Fields, ListAssembler, rect_box
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.tables import pipe_table
from procedure_rag._types import BBox, ElementKind, LayoutElement

__all__ = ["iter_textract", "read_textract"]

_FMT = "textract"
# Deepest CHILD nesting read: Textract's own is four (list, text, line, word).
_MAX_DEPTH = 32
_SIMPLE = {
    "LAYOUT_HEADER": ElementKind.PAGE_HEADER,
    "LAYOUT_FOOTER": ElementKind.PAGE_FOOTER,
    "LAYOUT_PAGE_NUMBER": ElementKind.PAGE_FOOTER,
    "LAYOUT_FIGURE": ElementKind.PICTURE,
    "LAYOUT_KEY_VALUE": ElementKind.FORM,
}


def read_textract(
    source: object, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> list[LayoutElement]:
    """Return :func:`iter_textract` as a list."""
    return list(iter_textract(source, source_id=source_id, options=options))


def iter_textract(
    source: object, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a Textract layout analysis.

    Args:
        source: The parsed JSON response (``{"Blocks": [...], ...}``).
        source_id: Id of the document; element ids start with it.
        options: The reader options: step styles find the markers the service
            left in paragraph text, heading styles the levels it does not give.

    Raises:
        ReaderError: For malformed input, naming the block (its ``Id``): wrong types,
            missing blocks or pages, CHILD links in a cycle or nested deeper than 32.
    """
    reader = _Reader(Fields.of(_FMT, "response", source), source_id, options)
    for block in reader.layout_blocks():
        start = len(reader.sink.elements)
        reader.layout(block)
        yield from reader.sink.elements[start:]


class _Reader:
    def __init__(self, response: Fields, source_id: str, options: ReaderOptions) -> None:
        self.sink = ElementSink(source_id)
        self.options = options
        self.lists = ListAssembler(self.sink, options.step_styles)
        self.blocks: dict[str, Fields] = {}
        for i, raw in enumerate(response.get_list("Blocks", required=True)):
            block = Fields.of(_FMT, f"Blocks[{i}]", raw)
            block_id = block.get_str("Id", required=True)
            if block_id in self.blocks:
                raise Fields(_FMT, block_id, block.data).error("Id is used by more than one block")
            block = Fields(_FMT, block_id, block.data)
            block.get_str("BlockType", required=True)
            self.blocks[block_id] = block
        self.pages = {self._page_number(b) for b in self.blocks.values() if b.get_str("BlockType") == "PAGE"}

    def layout_blocks(self) -> list[Fields]:
        """Top-level layout blocks in the order returned (items of a list are read with the list)."""
        layout = [b for b in self.blocks.values() if b.get_str("BlockType").startswith("LAYOUT_")]
        parent: dict[str, str] = {}
        for b in layout:
            for child in self.children(b):
                if child.get_str("BlockType").startswith("LAYOUT_"):
                    parent[child.record] = b.record
        for b in layout:  # a block nested under itself would never be read: say so
            seen = {b.record}
            up = parent.get(b.record)
            while up is not None:
                if up in seen:
                    raise b.error("CHILD relationships form a cycle")
                if len(seen) > _MAX_DEPTH:
                    raise b.error(f"layout blocks nest more than {_MAX_DEPTH} deep")
                seen.add(up)
                up = parent.get(up)
        return [b for b in layout if b.record not in parent]

    def children(self, block: Fields) -> list[Fields]:
        """The blocks a block's ``CHILD`` relationships point at."""
        out = []
        for i, raw in enumerate(block.get_list("Relationships")):
            rel = Fields.of(_FMT, block.record, raw)
            if rel.get_str("Type", required=True) != "CHILD":
                continue
            for child_id in rel.get_list("Ids", required=True):
                child = self.blocks.get(child_id) if isinstance(child_id, str) else None
                if child is None:
                    raise block.error(
                        f"Relationships[{i}] points at block {child_id!r}, which does not exist"
                    )
                out.append(child)
        return out

    # -- geometry and text -----------------------------------------------------------------

    def _page_number(self, block: Fields) -> int:
        page = block.get_int("Page", minimum=1)
        return 1 if page is None else page  # synchronous single-page responses may leave Page out

    def _where(self, block: Fields) -> tuple[int, BBox | None]:
        page = self._page_number(block)
        if self.pages and page not in self.pages:
            raise block.error(f"page {page} does not exist (pages: {sorted(self.pages)})")
        geometry = block.get_obj("Geometry")
        box = geometry.get_obj("BoundingBox") if geometry else None
        if box is None:
            return page, None
        left, top = box.need_num("Left"), box.need_num("Top")
        width, height = box.need_num("Width"), box.need_num("Height")
        return page, rect_box(block, [(left, top), (left + width, top + height)])

    def text(self, block: Fields, path: tuple[str, ...] = (), seen: set[str] | None = None) -> str:
        """A block's text: its own ``Text`` (lines, words), else its children's, line by line.

        A block reached twice under one block (listed twice, or under two of its
        descendants) gives its text once: read again per path, a few shared blocks
        per level would double the text at every level.
        """
        if block.record in path:
            raise block.error("CHILD relationships form a cycle")
        if len(path) > _MAX_DEPTH:  # Textract nests a few levels (list, text, line, word)
            raise block.error(f"CHILD relationships nest more than {_MAX_DEPTH} deep")
        own = block.get_str("Text")
        if own:
            return own
        seen = {block.record} if seen is None else seen
        children = []
        for child in self.children(block):
            if child.record not in seen:
                seen.add(child.record)
                children.append(child)
        inner = (*path, block.record)
        if block.get_str("BlockType") in ("LINE", "WORD"):
            return " ".join(self.text(c, inner, seen) for c in children)
        return join_lines([self.text(c, inner, seen).strip() for c in children])

    # -- layout blocks ---------------------------------------------------------------------

    def layout(self, block: Fields) -> None:
        """Read one top-level layout block."""
        kind = block.get_str("BlockType")
        page, bbox = self._where(block)
        if kind == "LAYOUT_LIST":
            self._list(block)
            return
        if kind == "LAYOUT_TABLE":
            table = ElementDraft(ElementKind.TABLE, self._table(block))
            self.lists.block(table, record_id=block.record, page=page, bbox=bbox)
            return
        text = self.text(block)
        if kind in ("LAYOUT_TITLE", "LAYOUT_SECTION_HEADER"):
            self.lists.close()
            numbered = match_heading_number(text, self.options.heading_styles)
            level = 1 if kind == "LAYOUT_TITLE" else numbered[1] if numbered else 2
            heading = ElementKind.TITLE if kind == "LAYOUT_TITLE" else ElementKind.SECTION_HEADER
            self.sink.add(
                ElementDraft(heading, text, level=level), record_id=block.record, page=page, bbox=bbox
            )
        elif kind in _SIMPLE:
            if _SIMPLE[kind] in (ElementKind.PICTURE, ElementKind.FORM):
                self.lists.close()
            draft = ElementDraft(_SIMPLE[kind], text, hints=(("type", kind),))
            self.sink.add(draft, record_id=block.record, page=page, bbox=bbox)
        else:  # LAYOUT_TEXT and any layout type added after this reader was written
            self.lists.text(text, record_id=block.record, page=page, bbox=bbox)

    def _list(self, block: Fields) -> None:
        # No close(): a list that goes on after a figure or a page break continues the open one;
        # the assembler starts a new list when the numbering restarts.
        items = [c for c in self.children(block) if c.get_str("BlockType").startswith("LAYOUT_")]
        if not items:  # a list whose children are lines: one item per line
            items = self.children(block)
        placed = [(self._where(item), item) for item in items]
        # Child ids need not be in reading order; the items' positions are.
        placed.sort(
            key=lambda p: (p[0][0], p[0][1].top if p[0][1] else 0.0, p[0][1].left if p[0][1] else 0.0)
        )
        for (page, bbox), item in placed:
            text = self.text(item, (block.record,))
            if match_step_marker(text.lstrip(), self.options.step_styles) is not None:
                self.lists.text(text, record_id=item.record, page=page, bbox=bbox)
            else:  # Textract often drops bullet glyphs
                self.lists.item("-", text, ordered=False, record_id=item.record, page=page, bbox=bbox)

    def _table(self, block: Fields) -> str:
        """A Markdown table from TABLE/CELL children (TABLES feature), else one row per line."""
        tables = [c for c in self.children(block) if c.get_str("BlockType") == "TABLE"]
        if not tables:
            return pipe_table([[self.text(c, (block.record,))] for c in self.children(block)])
        cells: dict[tuple[int, int], str] = {}
        headers: set[int] = set()
        for table in tables:
            for cell in self.children(table):
                if cell.get_str("BlockType") not in ("CELL", "MERGED_CELL"):
                    continue
                row = cell.need_int("RowIndex", minimum=1)
                col = cell.need_int("ColumnIndex", minimum=1)
                cells[row, col] = self.text(cell, (block.record, table.record))
                if "COLUMN_HEADER" in cell.get_list("EntityTypes"):
                    headers.add(row)
        rows_n = max((r for r, _ in cells), default=0)
        cols_n = max((c for _, c in cells), default=0)
        grid = [[cells.get((r, c), "") for c in range(1, cols_n + 1)] for r in range(1, rows_n + 1)]
        header_rows = next((r - 1 for r in range(1, rows_n + 1) if r not in headers), rows_n)
        return pipe_table(grid, header_rows=header_rows)

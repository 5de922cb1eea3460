"""Google Document AI layout parser reader (``Document.documentLayout``).

The layout parser returns a tree of blocks: ``textBlock`` (``type`` ``heading-1``…,
``paragraph``, ``subtitle``, ``header``, ``footer``; child ``blocks`` nest under
headings), ``listBlock`` (``listEntries`` of blocks, ``type`` ``ordered`` or
``unordered``), ``tableBlock`` (``headerRows``/``bodyRows`` of cells holding blocks,
``caption``) and, in newer versions, ``imageBlock``. Each block has a ``blockId``,
a ``pageSpan`` and sometimes a ``boundingBox``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from procedure_rag._language.labels import leading_label
from procedure_rag._language.numbering import match_step_marker
from procedure_rag._readers.draft import ElementDraft
from procedure_rag._readers.layout_json import (
    ElementSink,
    Fields,
    ListAssembler,
    rect_box,
)
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.tables import pipe_table
from procedure_rag._types import BBox, ElementKind, LayoutElement

__all__ = ["iter_google_docai", "read_google_docai"]

_FMT = "google"
_HEADING = re.compile(r"^heading-(\d)$")
_FURNITURE = {"header": ElementKind.PAGE_HEADER, "footer": ElementKind.PAGE_FOOTER}
_UNITS = {"points": "pt", "pixels": "px", "inches": "inch", "inch": "inch", "pt": "pt", "px": "px"}
# Nesting deeper than this is a malformed (or self-referencing) document, not a manual.
_MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class _Where:
    page: int | None
    bbox: BBox | None


@dataclass(frozen=True, slots=True)
class _Context:
    heading_level: int = 0
    parent_id: str | None = None
    list_id: str | None = None
    list_level: int = 0
    depth: int = 0


def read_google_docai(
    source: object, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> list[LayoutElement]:
    """Return :func:`iter_google_docai` as a list."""
    return list(iter_google_docai(source, source_id=source_id, options=options))


def iter_google_docai(
    source: object, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a Document AI layout parser result.

    Args:
        source: The parsed JSON: a ``Document`` (``{"documentLayout": …}``) or a
            response wrapping one (``{"document": {…}}``).
        source_id: Id of the document; element ids start with it.
        options: The reader options: step styles find the markers the service left
            in paragraph and list-entry text.

    Raises:
        ReaderError: For malformed input, naming the block (its ``blockId``).
    """
    root = Fields.of(_FMT, "document", source)
    document = root.get_obj("document") or root
    layout = document.need_obj("documentLayout", record="documentLayout")
    reader = _Reader(document, source_id, options)
    for i, block in enumerate(layout.get_list("blocks", required=True)):
        start = len(reader.sink.elements)
        reader.block(block, f"blocks/{i}", _Context(), _Where(None, None))
        yield from reader.sink.elements[start:]


class _Reader:
    def __init__(self, document: Fields, source_id: str, options: ReaderOptions) -> None:
        self.sink = ElementSink(source_id)
        self.step_styles = options.step_styles
        self.lists = ListAssembler(self.sink, self.step_styles)
        self.pages: list[tuple[float, float, str] | None] = []
        for i, raw in enumerate(document.get_list("pages")):
            page = Fields.of(_FMT, f"pages/{i}", raw)
            dim = page.get_obj("dimension")
            width = dim.get_num("width") if dim else None
            height = dim.get_num("height") if dim else None
            unit = dim.get_str("unit") if dim else ""
            ok = width and height and width > 0 and height > 0
            self.pages.append((width, height, _UNITS.get(unit, unit)) if ok else None)  # type: ignore[arg-type]
        self.on_path: set[int] = set()

    def block(self, raw: object, path: str, ctx: _Context, outer: _Where) -> None:
        """Read one block and its children."""
        fields = Fields.of(_FMT, path, raw)
        fields = Fields(_FMT, fields.get_str("blockId") or path, fields.data)
        if id(raw) in self.on_path or ctx.depth > _MAX_DEPTH:
            raise fields.error("blocks nest in a cycle (or deeper than any document)")
        where = self._where(fields, outer)
        self.on_path.add(id(raw))
        try:
            if (text := fields.get_obj("textBlock")) is not None:
                self._text(text, fields.record, ctx, where)
            elif (lst := fields.get_obj("listBlock")) is not None:
                self._list(lst, fields.record, ctx, where)
            elif (table := fields.get_obj("tableBlock")) is not None:
                self._table(table, fields.record, ctx, where)
            elif (image := fields.get_obj("imageBlock")) is not None:
                self._image(image, fields.record, ctx, where)
            else:
                raise fields.error("block has none of textBlock, listBlock, tableBlock, imageBlock")
        finally:
            self.on_path.discard(id(raw))

    def _children(self, fields: Fields, record: str, ctx: _Context, where: _Where) -> None:
        for i, child in enumerate(fields.get_list("blocks")):
            self.block(child, f"{record}/blocks/{i}", ctx, where)

    # -- geometry --------------------------------------------------------------------------

    def _where(self, fields: Fields, outer: _Where) -> _Where:
        page = outer.page
        span = fields.get_obj("pageSpan")
        if span is not None:
            start = span.need_int("pageStart", minimum=1)
            end = span.get_int("pageEnd", minimum=1)
            if end is not None and start is not None and end < start:
                raise fields.error(f"pageSpan ends (page {end}) before it starts (page {start})")
            if self.pages and start is not None and start > len(self.pages):
                raise fields.error(f"page {start} does not exist (the document has {len(self.pages)} pages)")
            page = start
        box = fields.get_obj("boundingBox")
        bbox = self._box(fields, box, page) if box is not None else None
        return _Where(page, bbox)

    def _box(self, fields: Fields, poly: Fields, page: int | None) -> BBox | None:
        size = self.pages[page - 1] if page is not None and 0 < page <= len(self.pages) else None
        normalized = poly.get_list("normalizedVertices")
        vertices = normalized or poly.get_list("vertices")
        if not vertices:
            return None
        if not normalized and size is None:
            return None  # pixel vertices without a page size cannot be made fractions
        points = []
        for raw in vertices:
            vertex = Fields.of(_FMT, fields.record, raw)
            # proto3 JSON leaves out zeros: a missing coordinate is 0.
            points.append((vertex.get_num("x") or 0.0, vertex.get_num("y") or 0.0))
        scale = (1.0, 1.0) if normalized or size is None else (size[0], size[1])
        return rect_box(
            fields,
            points,
            scale=scale,
            page_size=(size[0], size[1]) if size else None,
            unit=size[2] if size else "",
        )

    # -- blocks ----------------------------------------------------------------------------

    def _text(self, text_block: Fields, record: str, ctx: _Context, where: _Where) -> None:
        text = " ".join(text_block.get_str("text").split())
        kind = text_block.get_str("type", "paragraph")
        heading = _HEADING.match(kind)
        if heading is not None and ctx.list_id is None:
            self.lists.close()
            # The parser's nesting wins over the number in the type name when they disagree.
            level = max(int(heading.group(1)), ctx.heading_level + 1)
            self.sink.add(
                ElementDraft(ElementKind.SECTION_HEADER, text, level=level),
                record_id=record,
                page=where.page,
                bbox=where.bbox,
            )
            self._children(text_block, record, _Context(level, depth=ctx.depth + 1), where)
            return
        if kind in _FURNITURE:
            self.sink.add(
                ElementDraft(_FURNITURE[kind], text, hints=(("type", kind),)),
                record_id=record,
                page=where.page,
                bbox=where.bbox,
            )
        elif ctx.list_id is not None:
            inner = ElementDraft(
                ElementKind.TEXT,
                text,
                admonition=leading_label(text)[0],
                parent_id=ctx.parent_id,
                list_id=ctx.list_id,
            )
            self.sink.add(inner, record_id=record, page=where.page, bbox=where.bbox)
        elif text:
            self.lists.text(text, record_id=record, page=where.page, bbox=where.bbox, hints=(("type", kind),))
        self._children(text_block, record, ctx, where)

    def _list(self, list_block: Fields, record: str, ctx: _Context, where: _Where) -> None:
        ordered = list_block.get_str("type") == "ordered"
        self.lists.close()
        top = ctx.list_id is None
        list_id = ctx.list_id or self.sink.next_list_id()
        level = ctx.list_level + (0 if top else 1)
        for n, raw in enumerate(list_block.get_list("listEntries", required=True), start=1):
            entry = Fields.of(_FMT, f"{record}/listEntries/{n - 1}", raw)
            blocks = entry.get_list("blocks")
            first = Fields.of(_FMT, f"{entry.record}/blocks/0", blocks[0]) if blocks else None
            first_text = first.get_obj("textBlock") if first is not None else None
            parent_id = ctx.parent_id
            rest = blocks
            if first is not None and first_text is not None:
                item_id = first.get_str("blockId") or first.record
                item_where = self._where(Fields(_FMT, item_id, first.data), where)
                text = " ".join(first_text.get_str("text").split())
                marker = match_step_marker(text, self.step_styles)
                if marker is not None:  # the service kept the number in the text
                    number, text = marker.marker, text[marker.rest_start :].strip()
                else:
                    number = f"{n}." if ordered else "-"
                draft = ElementDraft(
                    ElementKind.LIST_ITEM,
                    text,
                    level=level,
                    number=number,
                    ordered=ordered,
                    parent_id=ctx.parent_id,
                    list_id=list_id,
                )
                item = self.sink.add(draft, record_id=item_id, page=item_where.page, bbox=item_where.bbox)
                parent_id = item.element_id
                inner = _Context(ctx.heading_level, parent_id, list_id, level, ctx.depth + 1)
                self._children(first_text, item_id, inner, item_where)
                rest = blocks[1:]
            inner = _Context(ctx.heading_level, parent_id, list_id, level, ctx.depth + 1)
            for i, child in enumerate(rest, start=len(blocks) - len(rest)):
                self.block(child, f"{entry.record}/blocks/{i}", inner, where)

    def _table(self, table_block: Fields, record: str, ctx: _Context, where: _Where) -> None:
        self.lists.close()
        rows: list[list[str]] = []
        header_rows = 0
        for part in ("headerRows", "bodyRows"):
            for r, raw_row in enumerate(table_block.get_list(part)):
                row = Fields.of(_FMT, f"{record}/{part}/{r}", raw_row)
                cells = []
                for c, raw_cell in enumerate(row.get_list("cells")):
                    cell = Fields.of(_FMT, f"{row.record}/cells/{c}", raw_cell)
                    cells.append(" ".join(self._plain(cell, cell.record, ctx.depth + 1)))
                    cells.extend([""] * ((cell.get_int("colSpan", minimum=1) or 1) - 1))
                rows.append(cells)
                header_rows += part == "headerRows"
        table = ElementDraft(
            ElementKind.TABLE,
            pipe_table(rows, header_rows=header_rows),
            parent_id=ctx.parent_id,
            list_id=ctx.list_id,
        )
        self.sink.add(table, record_id=record, page=where.page, bbox=where.bbox)
        caption = " ".join(table_block.get_str("caption").split())
        if caption:
            self.sink.add(
                ElementDraft(ElementKind.CAPTION, caption, parent_id=ctx.parent_id, list_id=ctx.list_id),
                record_id=f"{record}/caption",
                page=where.page,
            )

    def _plain(self, fields: Fields, record: str, depth: int) -> list[str]:
        """The text of a cell's blocks, flattened."""
        if depth > _MAX_DEPTH:
            raise fields.error("blocks nest deeper than any document")
        out: list[str] = []
        for i, raw in enumerate(fields.get_list("blocks")):
            block = Fields.of(_FMT, f"{record}/blocks/{i}", raw)
            for key in ("textBlock", "listBlock", "tableBlock"):
                inner = block.get_obj(key)
                if inner is None:
                    continue
                if key == "textBlock":
                    out.append(" ".join(inner.get_str("text").split()))
                    out.extend(self._plain(inner, block.record, depth + 1))
                elif key == "listBlock":
                    for entry in inner.get_list("listEntries"):
                        out.extend(self._plain(Fields.of(_FMT, block.record, entry), block.record, depth + 1))
        return [t for t in out if t]

    def _image(self, image: Fields, record: str, ctx: _Context, where: _Where) -> None:
        annotations = image.get_obj("annotations")
        description = annotations.get_str("description") if annotations else ""
        text = " ".join((description or image.get_str("imageText")).split())
        url = image.get_str("gcsUri")
        picture = ElementDraft(
            ElementKind.PICTURE,
            text,
            hints=(("url", url),) if url else (),
            parent_id=ctx.parent_id,
            list_id=ctx.list_id,
        )
        self.sink.add(picture, record_id=record, page=where.page, bbox=where.bbox)

"""Azure AI Document Intelligence layout reader (``prebuilt-layout``, API 2023-07-31 and later).

The analyze result is flat: ``paragraphs``, ``tables`` and ``figures`` each carry
``spans`` into the reading-order ``content`` and ``boundingRegions`` (page number
and polygon in the page's unit). ``sections`` is a tree over them (elements
``"/paragraphs/3"``, ``"/sections/1"``…); its depth gives heading levels. Table
cells and figure text are paragraphs too, referenced from the table or figure;
they are read as part of it, not twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from procedure_rag._errors import ReaderError
from procedure_rag._language.numbering import match_heading_number
from procedure_rag._readers.draft import ElementDraft
from procedure_rag._readers.layout_json import ElementSink, Fields, ListAssembler, rect_box
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.tables import pipe_table
from procedure_rag._types import MAX_HEADING_LEVEL, BBox, ElementKind, LayoutElement

__all__ = ["iter_azure", "read_azure"]

_FMT = "azure"
_REF = re.compile(r"^/(paragraphs|tables|figures|sections)/(\d+)$")
_UNITS = {"inch": "inch", "pixel": "px"}
_ROLE_KINDS = {
    "pageHeader": ElementKind.PAGE_HEADER,
    "pageFooter": ElementKind.PAGE_FOOTER,
    "pageNumber": ElementKind.PAGE_FOOTER,
    "footnote": ElementKind.FOOTNOTE,
    "formulaBlock": ElementKind.FORMULA,
}
# Markdown output (contentFormat "markdown") wraps some paragraphs in markup.
_MD_COMMENT = re.compile(r'^<!--\s*\w+="(?P<text>.*)"\s*-->$', re.DOTALL)
_MD_HEADING = re.compile(r"^#{1,6}\s+|\n[=-]{3,}\s*$")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>])")


@dataclass(frozen=True, slots=True)
class _Page:
    width: float
    height: float
    unit: str


@dataclass(frozen=True, slots=True)
class _Item:
    """A top-level paragraph, table or figure, with where it starts in ``content``."""

    offset: int
    ref: str
    fields: Fields


def read_azure(
    source: object, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> list[LayoutElement]:
    """Return :func:`iter_azure` as a list."""
    return list(iter_azure(source, source_id=source_id, options=options))


def iter_azure(
    source: object, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of an Azure Document Intelligence layout result.

    Args:
        source: The parsed JSON: the operation result (``{"analyzeResult": …}``) or
            the analyze result itself.
        source_id: Id of the document; element ids start with it.
        options: The reader options: step styles find the markers the service
            left in paragraph text, heading styles the levels it does not give.

    Raises:
        ReaderError: For malformed input, naming the record (``/paragraphs/3``…): wrong
            types, dangling references, sections that form a cycle or share a section.
    """
    root = Fields.of(_FMT, "analyzeResult", source)
    result = root.get_obj("analyzeResult") or root
    yield from _Reader(result, source_id, options).read()


class _Reader:
    def __init__(self, result: Fields, source_id: str, options: ReaderOptions) -> None:
        self.result = result
        self.sink = ElementSink(source_id)
        self.lists = ListAssembler(self.sink, options.step_styles)
        self.heading_styles = options.heading_styles
        self.markdown = result.get_str("contentFormat") == "markdown"
        self.pages = self._pages()
        self.paragraphs = result.get_list("paragraphs")
        self.tables = result.get_list("tables")
        self.figures = result.get_list("figures")
        self.levels = self._heading_levels()

    def read(self) -> Iterator[LayoutElement]:
        claimed = self._claimed()
        items = [
            _Item(self._offset(f), f"/{kind}/{i}", f)
            for kind, records in (
                ("paragraphs", self.paragraphs),
                ("tables", self.tables),
                ("figures", self.figures),
            )
            for i, record in enumerate(records)
            if (f := Fields.of(_FMT, f"/{kind}/{i}", record)) and f.record not in claimed
        ]
        items.sort(key=lambda item: item.offset)  # stable: ties keep paragraphs first
        for item in items:
            start = len(self.sink.elements)
            if item.ref.startswith("/paragraphs/"):
                self._paragraph(item.fields)
            elif item.ref.startswith("/tables/"):
                self._table(item.fields)
            else:
                self._figure(item.fields)
            yield from self.sink.elements[start:]

    # -- structure -------------------------------------------------------------------------

    def _pages(self) -> dict[int, _Page]:
        pages: dict[int, _Page] = {}
        for i, raw in enumerate(self.result.get_list("pages", required=True)):
            page = Fields.of(_FMT, f"/pages/{i}", raw)
            number = page.need_int("pageNumber", minimum=1)
            width = page.need_num("width")
            height = page.need_num("height")
            if width <= 0 or height <= 0:
                raise page.error(f"page size must be positive, got {width} x {height}")
            unit = page.get_str("unit", "pixel")
            pages[number] = _Page(width, height, _UNITS.get(unit, unit))
        return pages

    def _resolve(self, ref: object, owner: Fields) -> tuple[str, int]:
        m = _REF.match(ref) if isinstance(ref, str) else None
        if m is None:
            raise owner.error(
                f"element reference {ref!r} is not '/paragraphs/N', '/tables/N', '/figures/N', '/sections/N'"
            )
        kind, index = m.group(1), int(m.group(2))
        size = {"paragraphs": len(self.paragraphs), "tables": len(self.tables), "figures": len(self.figures)}
        if index >= size.get(kind, len(self.result.get_list("sections"))):
            raise owner.error(f"element reference {ref!r} points past the end of {kind}")
        return kind, index

    def _heading_levels(self) -> dict[str, int]:
        """Heading level of each heading paragraph, from the depth of its section."""
        sections = self.result.get_list("sections")
        children: dict[int, list[tuple[str, int]]] = {}
        referenced: dict[int, int] = {}  # section -> the section it is an element of
        for i, raw in enumerate(sections):
            sec = Fields.of(_FMT, f"/sections/{i}", raw)
            children[i] = [self._resolve(ref, sec) for ref in sec.get_list("elements")]
            for kind, index in children[i]:
                if kind != "sections":
                    continue
                if index in referenced:  # sections form a tree: a shared one would be read once per path
                    problem = (
                        f"is an element of both /sections/{referenced[index]} and /sections/{i}: "
                        "sections form a cycle, or share a section"
                    )
                    raise ReaderError(_FMT, f"/sections/{index}", problem)
                referenced[index] = i
        levels: dict[str, int] = {}
        seen: set[int] = set()
        for root in (i for i in range(len(sections)) if i not in referenced):
            first = children[root][0] if children[root] else None
            offset = (
                1 if first and first[0] == "paragraphs" and self._role(first[1]) == "sectionHeading" else 0
            )
            self._walk(root, offset, children=children, levels=levels, seen=seen)
        if sections and len(seen) < len(sections):
            missing = next(i for i in range(len(sections)) if i not in seen)
            raise ReaderError(_FMT, f"/sections/{missing}", "sections form a cycle")
        return levels

    def _walk(
        self,
        root: int,
        depth: int,
        *,
        children: dict[int, list[tuple[str, int]]],
        levels: dict[str, int],
        seen: set[int],
    ) -> None:
        """Give the headings under section ``root`` their levels, depth first, without recursion.

        A section inside itself is a cycle. Levels stop growing at :data:`MAX_HEADING_LEVEL`.
        """
        on_path: set[int] = set()
        # ("section", index, level) opens a section, ("leave", index, 0) closes it, and
        # ("heading", paragraph, level) gives a heading its level, in document order.
        stack: list[tuple[str, int, int]] = [("section", root, depth)]
        while stack:
            what, index, level = stack.pop()
            if what == "leave":
                on_path.discard(index)
            elif what == "heading":
                levels.setdefault(f"/paragraphs/{index}", min(level, MAX_HEADING_LEVEL))
            else:
                if index in on_path:
                    raise ReaderError(_FMT, f"/sections/{index}", "sections form a cycle")
                on_path.add(index)
                seen.add(index)
                stack.append(("leave", index, 0))
                for kind, child in reversed(children[index]):
                    if kind == "sections":
                        stack.append(("section", child, level + 1))
                    elif kind == "paragraphs" and self._role(child) in ("sectionHeading", "title"):
                        stack.append(("heading", child, level))

    def _role(self, index: int) -> str:
        return Fields.of(_FMT, f"/paragraphs/{index}", self.paragraphs[index]).get_str("role")

    def _claimed(self) -> set[str]:
        """Paragraphs read as part of a table or figure."""
        claimed: set[str] = set()
        for kind, records in (("tables", self.tables), ("figures", self.figures)):
            for i, raw in enumerate(records):
                owner = Fields.of(_FMT, f"/{kind}/{i}", raw)
                refs = list(owner.get_list("elements"))
                for j, cell in enumerate(owner.get_list("cells")):
                    refs.extend(Fields.of(_FMT, f"{owner.record}/cells/{j}", cell).get_list("elements"))
                for part in ("caption", "footnotes"):
                    value = owner.data.get(part)
                    for sub in value if isinstance(value, list) else [value] if value else []:
                        refs.extend(Fields.of(_FMT, f"{owner.record}/{part}", sub).get_list("elements"))
                for ref in refs:
                    ref_kind, index = self._resolve(ref, owner)
                    if ref_kind == "paragraphs":
                        claimed.add(f"/paragraphs/{index}")
        return claimed

    # -- geometry --------------------------------------------------------------------------

    def _offset(self, fields: Fields) -> int:
        spans = fields.get_list("spans", required=True)
        if not spans:
            raise fields.error("'spans' is empty: the record has no place in the reading order")
        span = Fields.of(_FMT, fields.record, spans[0])
        offset = span.need_int("offset", minimum=0)
        span.need_int("length", minimum=0)
        return offset

    def _where(self, fields: Fields) -> tuple[int | None, BBox | None]:
        """Page and box of a record: its first region's page, the rectangle of that page's polygons."""
        regions = [Fields.of(_FMT, fields.record, r) for r in fields.get_list("boundingRegions")]
        if not regions:
            return None, None
        page_number = regions[0].need_int("pageNumber", minimum=1)
        page = self.pages.get(page_number)
        if page is None:
            raise fields.error(f"page {page_number} does not exist (pages: {sorted(self.pages)})")
        points: list[tuple[float, float]] = []
        for region in regions:
            if region.need_int("pageNumber") != page_number:
                continue
            polygon = region.get_list("polygon", required=True)
            if (
                len(polygon) < 2
                or len(polygon) % 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in polygon)
            ):
                raise fields.error("'polygon' must be an even-length list of numbers (x1, y1, x2, y2, …)")
            points.extend(zip(polygon[::2], polygon[1::2], strict=True))  # type: ignore[arg-type]
        box = rect_box(
            fields,
            points,
            scale=(page.width, page.height),
            page_size=(page.width, page.height),
            unit=page.unit,
        )
        return page_number, box

    # -- records ---------------------------------------------------------------------------

    def _content(self, fields: Fields, *, required: bool = True) -> str:
        text = fields.get_str("content", required=required)
        if self.markdown:
            comment = _MD_COMMENT.match(text.strip())
            text = comment.group("text") if comment else _MD_ESCAPE.sub(r"\1", _MD_HEADING.sub("", text))
        return " ".join(text.split())

    def _paragraph(self, fields: Fields) -> None:
        role = fields.get_str("role")
        text = self._content(fields)
        page, bbox = self._where(fields)
        if role in ("title", "sectionHeading"):
            self.lists.close()
            level = self.levels.get(fields.record)
            if level is None:  # no sections tree: numbering, else one below the title
                numbered = match_heading_number(text, self.heading_styles)
                level = numbered[1] if numbered else 2
            kind = ElementKind.TITLE if role == "title" else ElementKind.SECTION_HEADER
            self.sink.add(
                ElementDraft(kind, text, level=max(level, 1)), record_id=fields.record, page=page, bbox=bbox
            )
        elif role in _ROLE_KINDS:
            # Running furniture interrupts a list that flows over a page break; it does not end it.
            furniture = ElementDraft(_ROLE_KINDS[role], text, hints=(("role", role),))
            self.sink.add(furniture, record_id=fields.record, page=page, bbox=bbox)
        else:
            self.lists.text(text, record_id=fields.record, page=page, bbox=bbox)

    def _table(self, fields: Fields) -> None:
        rows_n = fields.need_int("rowCount", minimum=0)
        cols_n = fields.need_int("columnCount", minimum=0)
        grid = [[""] * cols_n for _ in range(rows_n)]
        header = [True] * rows_n
        for j, raw in enumerate(fields.get_list("cells", required=True)):
            cell = Fields.of(_FMT, f"{fields.record}/cells/{j}", raw)
            row = cell.need_int("rowIndex", minimum=0)
            col = cell.need_int("columnIndex", minimum=0)
            if row >= rows_n or col >= cols_n:
                raise cell.error(f"cell ({row}, {col}) is outside the {rows_n} x {cols_n} table")
            grid[row][col] = self._content(cell, required=False)
            header[row] = header[row] and cell.get_str("kind") == "columnHeader"
        header_rows = next((i for i, h in enumerate(header) if not h), rows_n)
        page, bbox = self._where(fields)
        table = self.lists.block(
            ElementDraft(ElementKind.TABLE, pipe_table(grid, header_rows=header_rows)),
            record_id=fields.record,
            page=page,
            bbox=bbox,
        )
        caption = fields.get_obj("caption", record=f"{fields.record}/caption")
        if caption is not None:
            cap_page, cap_box = self._where(caption)
            draft = ElementDraft(
                ElementKind.CAPTION, self._content(caption), parent_id=table.parent_id, list_id=table.list_id
            )
            self.sink.add(draft, record_id=caption.record, page=cap_page, bbox=cap_box)

    def _figure(self, fields: Fields) -> None:
        caption = fields.get_obj("caption", record=f"{fields.record}/caption")
        inner = [
            self._content(Fields.of(_FMT, ref, self.paragraphs[self._resolve(ref, fields)[1]]))
            for ref in fields.get_list("elements")
            if isinstance(ref, str) and ref.startswith("/paragraphs/")
        ]
        caption_text = self._content(caption) if caption is not None else ""
        body = " ".join(t for t in inner if t and t != caption_text)
        page, bbox = self._where(fields)
        hints: list[tuple[str, str]] = [("figure_text", body)] if body and caption_text else []
        figure_id = fields.get_str("id")
        if figure_id:
            hints.append(("figure_id", figure_id))
        # The caption is the picture's text; without one, the words printed inside the figure are.
        picture = ElementDraft(ElementKind.PICTURE, caption_text or body, hints=tuple(hints))
        self.lists.block(picture, record_id=fields.record, page=page, bbox=bbox)

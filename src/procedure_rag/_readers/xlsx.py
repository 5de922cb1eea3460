r"""Excel workbooks (.xlsx, .xlsm): each sheet a section; procedure sheets as steps, others as tables or text.

The reader opens the package with :mod:`procedure_rag._readers.ooxml` (refusing a
damaged zip, an encrypted or legacy file, a zip bomb) and reads each visible sheet
with openpyxl in read-only mode, taking the values Excel cached for formulas: no
formula is evaluated and no macro of an ``.xlsm`` is run (openpyxl never loads them).

A sheet is one section, its name the heading. Then, by what the sheet holds:

- **A procedure sheet**: a header row (or two, merged cells and all) whose cells
  name the columns' roles (:mod:`procedure_rag._readers.xlsx_header`). Each row
  below it with an action, result, caution or condition becomes an ordered list
  item: its number from the No. column, its text the row's cells (the action first,
  the others as ``label: value`` lines, line breaks kept), and the hints
  ``step_action``, ``step_result``, ``step_caution``, ``step_condition`` that the
  step parser takes over its text rules. Rows holding only a number (an empty
  template) are skipped; rows above the header are paragraphs.
- **A table**: a grid (its first row and most rows hold two cells or more) is one
  Markdown table, its first row the header, so the chunker splits it by rows and
  repeats the header.
- **Text laid out in cells**: anything else is read line by line (a row's cells
  joined) by the plain-text reader, so ``(1)`` or ``1.`` rows are steps there too.

The extracted text is the sheets' text in that form, one after the other; every
element's span points into it, and every element has the hint ``("sheet", name)``.
"""

from __future__ import annotations

import datetime as dt
import io
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, TYPE_CHECKING, cast

from procedure_rag._errors import ReaderError
from procedure_rag._readers.draft import ElementDraft, element_id_for, list_id_for
from procedure_rag._readers.ooxml import WORKBOOK_CONTENT_TYPES, Package, open_package, source_bytes
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.plaintext import iter_plain_text_within
from procedure_rag._readers.registry import Source
from procedure_rag._readers.tables import pipe_table
from procedure_rag._readers.xlsx_header import FIELD_ROLES, Header, find_header
from procedure_rag._types import ElementKind, LayoutElement, Span

if TYPE_CHECKING:
    from openpyxl import Workbook
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

__all__ = ["cell_text", "iter_xlsx", "read_sheet_rows", "read_xlsx"]

_FORMAT = "xlsx"
_INSTALL_HINT = "reading Excel files needs openpyxl: pip install 'procedure-rag[office]'"
_SHEET_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_CELL_REF = re.compile(r"([A-Z]{1,3})([0-9]{1,7})")
_BLANK_RUNS = re.compile(r"\n{3,}")
_CELL_JOIN = "  "  # a row's cells on one line, read by the plain-text reader
#: A grid is a table when at least this share of its rows hold two cells or more.
_TABLE_ROW_SHARE = 0.5

XlsxSource = bytes | bytearray | str | os.PathLike[str] | IO[bytes]


def read_xlsx(
    source: XlsxSource, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Source:
    """Read a workbook's text and its layout elements (see the module docstring).

    Args:
        source: The workbook as bytes, a path, or a binary file object.
        source_id: Id of the document; element ids start with it, and messages name it.
        options: The reader options: step styles, ``max_uncompressed_bytes``,
            ``include_hidden_sheets``.

    Returns:
        ``Source("xlsx", elements, text)``: the elements' spans point into ``text``.

    Raises:
        ReaderError: Record ``"file"`` for bytes that are not a workbook (not a zip,
            damaged, over ``max_uncompressed_bytes``, encrypted, a legacy ``.xls``);
            the part's name (``"xl/worksheets/sheet1.xml"``) for a part that cannot be read.
        ImportError: When openpyxl is not installed.
    """
    data, name = source_bytes(source, source_id, fmt=_FORMAT, what="an Excel source")
    package = open_package(
        data, fmt=_FORMAT, name=name, max_uncompressed_bytes=options.max_uncompressed_bytes
    )
    with package.zip:
        if package.main_type not in WORKBOOK_CONTENT_TYPES:
            problem = f"{name} is not a workbook: its main part is {package.main_type or 'untyped'}"
            raise ReaderError(_FORMAT, package.main_part, problem)
        parts = _sheet_parts(package)
        writer = _Writer(source_id, options)
        for index, sheet in enumerate(_open_workbook(data, name).worksheets):
            if sheet.sheet_state != "visible" and not options.include_hidden_sheets:
                continue
            part = parts.get(sheet.title, package.main_part)
            rows = _rows(cast("ReadOnlyWorksheet", sheet), name, part)
            merged = _merged_ranges(package, part)
            writer.sheet(sheet.title, index, rows, merged)
    return Source(_FORMAT, writer.elements, writer.text)


def read_sheet_rows(
    rows: list[list[str]], *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Source:
    """Read one sheet given as its rows of cell texts (a loader's text of it: :mod:`.pandas_rows`).

    The sheet is read as a sheet of a workbook is (a procedure sheet's rows as steps, a grid
    as a table, other text line by line), without a section of its own: the loader named
    no sheet. Merged cells are not known: a header cell left empty under a labelled cell is
    taken as merged down from it (「No」 over the two rows of a header whose lower row names
    the fields).
    """
    writer = _Writer(source_id, options)
    writer.sheet(None, 0, rows, _header_merges(rows))
    return Source(_FORMAT, writer.elements, writer.text)


def _header_merges(rows: list[list[str]]) -> list[tuple[int, int, int, int]]:
    """Ranges ``(top, left, bottom, right)`` merging each label over a one-row header down into it."""
    header = find_header(rows, set())
    if header is None or header.rows != 1 or header.first_row == 0:
        return []
    top, row = header.first_row - 1, rows[header.first_row]
    above = rows[top]
    return [(top, c, top + 1, c) for c in range(len(row)) if not row[c] and c < len(above) and above[c]]


def iter_xlsx(
    source: XlsxSource, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a workbook (see :func:`read_xlsx`)."""
    yield from read_xlsx(source, source_id=source_id, options=options).elements


def _open_workbook(data: bytes, name: str) -> Workbook:
    try:
        from openpyxl import load_workbook  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    try:
        return load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # openpyxl raises many types (zlib, XML, KeyError...) on a damaged part
        raise ReaderError(_FORMAT, "file", f"{name} cannot be read: {type(exc).__name__}: {exc}") from exc


def _sheet_parts(package: Package) -> dict[str, str]:
    """Each sheet's part in the zip, by sheet name (from the workbook and its relationships)."""
    targets = package.relationships(package.main_part, _FORMAT)
    workbook = package.read_xml(package.main_part, _FORMAT)
    parts = {
        sheet.get("name", ""): targets.get(sheet.get(_REL_ID, ""), "")
        for sheet in workbook.iter(f"{_SHEET_NS}sheet")
    }
    names = set(package.zip.namelist())
    for title, part in parts.items():
        if part not in names:  # openpyxl would skip the sheet without a word
            problem = f"{package.name}: sheet {title!r} has no part in the file"
            raise ReaderError(_FORMAT, part or package.main_part, problem)
    return parts


def _rows(sheet: ReadOnlyWorksheet, name: str, part: str) -> list[list[str]]:
    """The sheet's cell texts, row by row from row 1 (trailing empty cells dropped)."""
    try:
        sheet.reset_dimensions()  # a sheet's stated dimension may be wrong: read every cell
        out = []
        for values in sheet.iter_rows(values_only=True):  # type: ignore[misc] # the stubs type it for Worksheet
            row = [cell_text(value) for value in values]
            while row and not row[-1]:
                row.pop()
            out.append(row)
    except Exception as exc:  # openpyxl raises many types (zlib, XML, KeyError...) on a damaged part
        raise ReaderError(
            _FORMAT, part, f"{name}: the sheet cannot be read: {type(exc).__name__}: {exc}"
        ) from exc
    while out and not any(out[-1]):
        out.pop()
    return out


def cell_text(value: object) -> str:
    """A cell's value as text: numbers as Excel shows them plainly, dates in ISO form, line breaks kept."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.time):
        return value.strftime("%H:%M" if not value.second else "%H:%M:%S")
    text = str(value).replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))


def _merged_ranges(package: Package, part: str) -> list[tuple[int, int, int, int]]:
    """The sheet's merged ranges as 0-based ``(first row, first column, last row, last column)``."""
    out = []
    for element in package.iter_elements(part, _FORMAT, "mergeCell"):
        first, _, last = element.get("ref", "").partition(":")
        start, end = _cell_ref(first), _cell_ref(last or first)
        if start is not None and end is not None:
            out.append((start[0], start[1], end[0], end[1]))
    return out


def _cell_ref(ref: str) -> tuple[int, int] | None:
    match = _CELL_REF.fullmatch(ref.replace("$", ""))
    if match is None:
        return None
    column = 0
    for letter in match.group(1):
        column = column * 26 + ord(letter) - ord("A") + 1
    return int(match.group(2)) - 1, column - 1


@dataclass
class _Writer:
    """The extracted text and the elements whose spans point into it, sheet by sheet."""

    source_id: str
    options: ReaderOptions
    parts: list[str] = field(default_factory=list)
    elements: list[LayoutElement] = field(default_factory=list)
    position: int = 0
    hints: tuple[tuple[str, str], ...] = ()

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def add(self, draft: ElementDraft, shown: str) -> None:
        """Append ``shown`` (the element as the text shows it) and the element spanning it."""
        order = len(self.elements)
        draft.hints = (*self.hints, *draft.hints)
        span = Span(self.position, self.position + len(shown))
        self.elements.append(draft.build(element_id_for(self.source_id, order), order, span=span))
        self._write(shown + "\n\n")

    def _write(self, text: str) -> None:
        self.parts.append(text)
        self.position += len(text)

    def sheet(
        self,
        title: str | None,
        index: int,
        rows: list[list[str]],
        merged: Sequence[tuple[int, int, int, int]],
    ) -> None:
        """Write one sheet: its name as a section (when known), then its rows by what they hold."""
        if title is not None:
            self.hints = (("sheet", title),)
            self.add(ElementDraft(ElementKind.SECTION_HEADER, title, level=1), title)
        filled, merged_down = _fill_header_merges(rows, merged)
        header = find_header(filled, merged_down)
        if header is not None:
            self._procedure(rows, header, list_id_for(self.source_id, index))
        elif _is_table(rows):
            self._table(rows)
        else:
            self._lines(rows, index)

    def _procedure(self, rows: list[list[str]], header: Header, list_id: str) -> None:
        for row in rows[: header.first_row]:
            if any(row):
                line = " ".join(cell for cell in row if cell)
                self.add(ElementDraft(ElementKind.TEXT, line), line)
        for row in rows[header.end :]:
            step = _step(row, header)
            if step is None:
                continue
            if step.kind is ElementKind.LIST_ITEM:
                step.list_id = list_id
                self.add(step, f"{step.number} {step.text}" if step.number else step.text)
            else:
                self.add(step, step.text)

    def _table(self, rows: list[list[str]]) -> None:
        grid = [row for row in rows if any(row)]
        width = max(len(row) for row in grid)
        used = [c for c in range(width) if any(c < len(row) and row[c] for row in grid)]
        table = pipe_table([[row[c] if c < len(row) else "" for c in used] for row in grid])
        self.add(ElementDraft(ElementKind.TABLE, table), table)

    def _lines(self, rows: list[list[str]], index: int) -> None:
        lines = [_CELL_JOIN.join(cell for cell in row if cell) for row in rows]
        text = _BLANK_RUNS.sub("\n\n", "\n".join(lines).strip("\n"))  # rows left empty (under pictures)
        for element in iter_plain_text_within(
            text,
            source_id=self.source_id,
            run_id=f"{self.source_id}#s{index}",
            offset=self.position,
            first_order=len(self.elements),
            options=self.options,
        ):
            self.elements.append(
                replace(
                    element,
                    # Under the sheet's heading: a heading in the sheet's text is one level down.
                    level=element.level + 1 if element.kind is ElementKind.SECTION_HEADER else element.level,
                    hints=(*self.hints, *element.hints),
                )
            )
        if text:
            self._write(text + "\n\n")


def _fill_header_merges(
    rows: list[list[str]], merged: Sequence[tuple[int, int, int, int]]
) -> tuple[list[list[str]], set[tuple[int, int]]]:
    """Rows with each merged range filled with its top-left cell's text, and the cells filled from above."""
    filled = [list(row) for row in rows]
    down: set[tuple[int, int]] = set()
    for top, left, bottom, right in merged:
        if top >= len(filled) or bottom - top > len(filled) or right - left > 16384:
            continue
        value = filled[top][left] if left < len(filled[top]) else ""
        for r in range(top, min(bottom, len(filled) - 1) + 1):
            row = filled[r]
            row.extend([""] * (right + 1 - len(row)))
            for c in range(left, right + 1):
                if (r, c) != (top, left):
                    row[c] = value
                    if r > top:
                        down.add((r, c))
    return filled, down


def _step(row: Sequence[str], header: Header) -> ElementDraft | None:
    """A data row as a step (a list item with its fields as hints), a paragraph, or ``None`` when empty."""
    cells = [
        (header.labels[c], header.roles[c], row[c]) for c in range(min(len(row), header.width)) if row[c]
    ]
    number = next((value for _, role, value in cells if role == "number"), "")
    shown = [(label, role, value) for label, role, value in cells if role != "number"]
    if not shown:
        return None  # nothing but a number: an empty template row
    fields = {role: "\n".join(v for _, r, v in shown if r == role) for role in FIELD_ROLES}
    action_first = sorted(shown, key=lambda cell: cell[1] != "action")
    lines = [value if role == "action" else f"{label}: {value}" for label, role, value in action_first]
    text = "\n".join(lines)
    if not any(fields.values()):
        return ElementDraft(ElementKind.TEXT, text)
    hints = tuple((f"step_{role}", value) for role, value in fields.items() if value)
    return ElementDraft(ElementKind.LIST_ITEM, text, number=number, ordered=True, hints=hints)


def _is_table(rows: list[list[str]]) -> bool:
    """Whether a sheet is a grid: its first row and most of its rows hold two cells or more."""
    grid = [row for row in rows if any(row)]
    wide = [sum(1 for cell in row if cell) >= 2 for row in grid]
    return bool(grid) and wide[0] and sum(wide) >= _TABLE_ROW_SHARE * len(grid)

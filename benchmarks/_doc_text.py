"""The benchmark's own view of a PDF, Word or Excel file, read without the product.

pypdf's ``extract_text()`` per page (what the snippet gold was taken from), a Word file's
paragraphs (``w:p`` of ``word/document.xml``, tables' included, as python-docx lists
them), a workbook's cells sheet by sheet (openpyxl's cached values, row by row), and a
PDF's outline with the page each entry points at. Read once per file.
"""

from __future__ import annotations

import functools
import zipfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OutlineEntry", "document_text", "docx_paragraphs", "outline", "pdf_pages", "sheet_texts"]

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


@functools.cache
def pdf_pages(path: Path) -> tuple[str, ...]:
    """pypdf's ``extract_text()`` of every page, in page order."""
    from pypdf import PdfReader  # noqa: PLC0415 - the test extra

    return tuple(page.extract_text() for page in PdfReader(path).pages)


@functools.cache
def docx_paragraphs(path: Path) -> tuple[str, ...]:
    """The text of every paragraph of a Word file's body, in document order."""
    from lxml import etree  # type: ignore[import-untyped]  # noqa: PLC0415 - a dependency of the core

    with zipfile.ZipFile(path) as archive:
        root = etree.fromstring(archive.read("word/document.xml"))
    return tuple("".join(t.text or "" for t in p.iter(f"{_W}t")) for p in root.iter(f"{_W}p"))


@functools.cache
def sheet_texts(path: Path) -> tuple[str, ...]:
    """Each sheet's cells as text (a row's cells on one line, tab-separated), in sheet order."""
    from openpyxl import load_workbook  # noqa: PLC0415 - the office extra

    book = load_workbook(path, read_only=True, data_only=True)
    try:
        return tuple("\n".join(map(_row, sheet.iter_rows(values_only=True))) for sheet in book.worksheets)
    finally:
        book.close()


def _row(values: tuple[object, ...]) -> str:
    return "\t".join("" if v is None else str(v) for v in values)


def document_text(path: Path) -> tuple[str, ...]:
    """A PDF's page texts, a Word file's paragraphs as one page, or a workbook's sheets (a page each)."""
    suffix = path.suffix.lower()
    if suffix == ".docx":
        return ("\n".join(docx_paragraphs(path)),)
    if suffix in (".xlsx", ".xlsm"):
        return sheet_texts(path)
    return pdf_pages(path)


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One bookmark: its title, its ancestors' titles (outermost first) and its page (0-based)."""

    title: str
    path: tuple[str, ...]  # ancestors and itself
    page: int


@functools.cache
def outline(path: Path) -> tuple[OutlineEntry, ...]:
    """A PDF's outline, flattened in document order; empty when it has none."""
    from pypdf import PdfReader  # noqa: PLC0415

    reader = PdfReader(path)
    out: list[OutlineEntry] = []

    def walk(items: list[object], above: tuple[str, ...]) -> None:
        last: tuple[str, ...] = above
        for item in items:
            if isinstance(item, list):
                walk(item, last)
                continue
            title = str(getattr(item, "title", "") or "").strip()
            page = reader.get_destination_page_number(item)  # type: ignore[arg-type]
            last = (*above, title)
            if title and page is not None and page >= 0:
                out.append(OutlineEntry(title, last, page))

    walk(list(reader.outline), ())
    return tuple(out)

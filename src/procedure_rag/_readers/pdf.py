"""PDF reader, the plain path: pypdf's text per page, read by the plain-text reader.

No layout model runs here. pypdf extracts each page twice: in its plain mode, which
keeps the characters and the spaces between them as the page draws them, and in
its layout mode, which also keeps where a line starts (indentation) and where the
page leaves vertical gaps (blank lines), but may drop the space between a step
number and its text (``1.Type-C``) when they sit in separate cells. When both modes
see the same lines, each line is taken from the plain mode and indented and spaced
as in the layout mode; when they disagree, the plain mode alone is used for that
page. Pages are joined with form feeds, so the plain-text reader
(:func:`procedure_rag._readers.plaintext.iter_plain_text`) finds the page breaks, and each
element's ``page`` is set to the PDF page it starts on (1-based, as a viewer counts
it); a printed page number that differs is kept as the hint ``printed_page``.

For headings by font size, tables as cells, reading order across columns or
scanned pages, use a layout parser (Docling, Unstructured, a cloud service) and
chunk its output instead; see ``docs/readers/pdf.md``.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING

from procedure_rag._errors import ReaderError
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.registry import PagedText, Source, iter_paged_text
from procedure_rag._types import LayoutElement

if TYPE_CHECKING:
    from pypdf import PageObject, PdfReader

__all__ = ["extract_pdf_text", "iter_pdf", "read_pdf"]

_FORMAT = "pdf"
_INSTALL_HINT = "reading PDF files needs pypdf: pip install 'procedure-rag[pdf]'"
_SPACES = re.compile(r"\s+")
_INDENT = re.compile(r"[ \t]*")

PdfSource = bytes | bytearray | str | os.PathLike[str] | IO[bytes]


def read_pdf(source: PdfSource, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS) -> Source:
    r"""Read a PDF's text and its layout elements.

    Args:
        source: The PDF as bytes, a path, or a binary file object.
        source_id: Id of the document; element ids start with it.
        options: The reader options, for the plain-text reader of the extracted text.

    Returns:
        ``Source("pdf", elements, text)``: ``text`` is the extracted text, pages joined
        by form feeds (``"\f"``); the elements' spans point into it.

    Raises:
        ReaderError: For input that is not a PDF, a damaged or encrypted file
            (record ``"file"``), or a page whose text cannot be extracted
            (record ``"page N"``).
        ImportError: When pypdf is not installed.
    """
    paged = PagedText.join(extract_pdf_text(source))
    return Source(_FORMAT, list(iter_paged_text(paged, source_id=source_id, options=options)), paged.text)


def iter_pdf(
    source: PdfSource, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a PDF (see :func:`read_pdf`)."""
    yield from read_pdf(source, source_id=source_id, options=options).elements


def extract_pdf_text(source: PdfSource) -> list[str]:
    """Return the text of each page of a PDF, in page order (see the module docstring).

    Raises:
        ReaderError: As :func:`read_pdf`.
        ImportError: When pypdf is not installed.
    """
    reader = _open(source)
    out = []
    for number, page in enumerate(reader.pages, start=1):
        try:
            out.append(_page_text(page))
        except Exception as exc:  # pypdf raises many types on a damaged content stream
            raise ReaderError(_FORMAT, f"page {number}", f"cannot extract its text: {exc}") from exc
    return out


def _open(source: PdfSource) -> PdfReader:
    try:
        from pypdf import PdfReader  # noqa: PLC0415 - optional dependency
        from pypdf.errors import PyPdfError  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    stream = _stream(source)
    head = stream.read(1024)
    stream.seek(0)
    if b"%PDF-" not in head:
        raise ReaderError(_FORMAT, "file", f"not a PDF: it starts with {head[:16]!r}, not %PDF-")
    try:
        reader = PdfReader(stream)
        if reader.is_encrypted and not reader.decrypt(""):  # an owner password alone still opens
            raise ReaderError(_FORMAT, "file", "is encrypted with a password; decrypt it first")
        len(reader.pages)  # reads the page tree, where truncated files fail
    except ReaderError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise ReaderError(_FORMAT, "file", f"cannot be read: {type(exc).__name__}: {exc}") from exc
    return reader


def _stream(source: PdfSource) -> IO[bytes]:
    if isinstance(source, bytes | bytearray):
        return io.BytesIO(bytes(source))
    if isinstance(source, str | os.PathLike):
        try:
            with open(source, "rb") as f:
                return io.BytesIO(f.read())
        except OSError as exc:
            raise ReaderError(_FORMAT, "file", f"cannot be opened: {exc}") from exc
    if hasattr(source, "read") and hasattr(source, "seek"):
        return source
    msg = f"a PDF source must be bytes, a path or a binary file object, got {type(source).__name__}"
    raise TypeError(msg)


def _page_text(page: PageObject) -> str:
    plain = page.extract_text(extraction_mode="plain").replace("\f", "\n")
    layout = page.extract_text(extraction_mode="layout").replace("\f", "\n")
    plain_lines = [line.strip() for line in plain.splitlines() if line.strip()]
    layout_lines = layout.splitlines()
    shown = [line for line in layout_lines if line.strip()]
    if [_SPACES.sub("", line) for line in shown] != [_SPACES.sub("", line) for line in plain_lines]:
        return plain.strip("\n")
    lines: list[str] = []
    taken = iter(plain_lines)
    for line in layout_lines:
        if not line.strip():
            if lines and lines[-1]:
                lines.append("")  # a vertical gap: one blank line
            continue
        indent = _INDENT.match(line)
        lines.append((indent.group() if indent else "") + next(taken))
    return "\n".join(lines).strip("\n")

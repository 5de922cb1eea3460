"""Which reader reads a source, and the one call that runs it.

A reader turns one source into :class:`LayoutElement` objects. Text formats
(Markdown, plain or PDF-extracted text, HTML, reStructuredText) read a ``str`` and
give every element its character span; layout formats (Unstructured, Docling, Azure
Document Intelligence, Google Document AI, Amazon Textract) read a parser's output,
as the library's own objects or their JSON, and give pages and boxes instead.

Readers are imported when first used, so a missing optional library only matters
to the user who asks for that format. Every reader takes the same
:class:`~procedure_rag._readers.options.ReaderOptions` and is reached through
:func:`read_source` (or, lazily for text, :func:`iter_text`), which enforce its limits.

Adding a reader: its module, with ``iter_<name>(source, *, source_id, options)``
yielding elements built from :class:`~procedure_rag._readers.draft.ElementDraft`;
its row in ``_READERS`` (how it takes its source, where it lives, its suffixes); and
its tests, including a row in ``tests/test_reader_options.py``. Nothing else names a
format. To be told from content alone by :func:`detect_format`, add its sign to
``_text_format`` or ``_layout_format`` below; an Office Open XML format gives its
package's main content types in its row (``content_types``) instead.
"""

from __future__ import annotations

import importlib
import json
import re
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from procedure_rag._errors import ReaderError
from procedure_rag._readers import ooxml
from procedure_rag._readers.draft import HEADING_FROM
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.text_window import TextWindow
from procedure_rag._types import ElementKind, LayoutElement

__all__ = [
    "EXTRACTED_SUFFIXES",
    "FILE_FORMATS",
    "FORMATS",
    "LAYOUT_FORMATS",
    "SUFFIXES",
    "TEXT_FORMATS",
    "PagedText",
    "ReaderEntry",
    "Source",
    "decode_text",
    "detect_format",
    "detect_text_format",
    "iter_file",
    "iter_paged_text",
    "iter_text",
    "read_source",
    "reader",
    "source_text",
    "streams",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
#: UTF-8 takes at most four bytes a character: more bytes than this cannot fit the limit.
_MAX_UTF8_BYTES = 4


@dataclass(frozen=True, slots=True)
class ReaderEntry:
    """One format's reader: where it lives, what it takes, and the file suffixes that name it.

    Attributes:
        takes: ``"text"``: a ``str`` (or bytes) its elements' spans point into;
            ``"layout"``: a parser's output, objects or JSON (loaded and checked
            against the limits before the reader sees it); ``"file"``: bytes or a
            path, read by a function that returns the whole :class:`Source` (the
            text it extracted and the elements).
        module: The reader's module, imported on first use.
        function: Its reader: ``f(source, *, source_id, options) -> Iterator[LayoutElement]``
            (``-> Source`` for ``"file"``).
        suffixes: File suffixes that mean the format.
        decoder: For a text format whose files name their own encoding, the function of
            ``module`` that decodes its bytes (``decode(data) -> str``); empty for UTF-8.
        content_types: For an Office Open XML format, the content types of its
            package's main part, by which :func:`detect_format` tells a zip's bytes.
        stream: For a ``"file"`` format whose reader can yield its elements as it
            goes, that function of ``module``: ``f(source, *, source_id, options, text)
            -> Iterator[LayoutElement]``, writing the text to the
            :class:`~procedure_rag._readers.text_window.TextWindow` ``text``
            (:func:`iter_file`).
    """

    takes: str
    module: str
    function: str
    suffixes: tuple[str, ...] = ()
    decoder: str = ""
    content_types: tuple[str, ...] = ()
    stream: str = ""


#: Every format and its reader; the one place a reader is named.
_READERS: Mapping[str, ReaderEntry] = {
    "markdown": ReaderEntry(
        "text", "procedure_rag._readers.markdown", "iter_markdown", (".md", ".markdown", ".mdx")
    ),
    "text": ReaderEntry("text", "procedure_rag._readers.plaintext", "iter_plain_text", (".txt", ".text")),
    "html": ReaderEntry(
        "text", "procedure_rag._readers.html", "iter_html", (".html", ".htm", ".xhtml"), decoder="decode_html"
    ),
    "rst": ReaderEntry("text", "procedure_rag._readers.rst", "iter_rst", (".rst", ".rest")),
    "pdf": ReaderEntry("file", "procedure_rag._readers.pdf", "read_pdf", (".pdf",), stream="iter_pdf"),
    # .xls is here to be refused with how to convert it (ooxml.ole_problem).
    "xlsx": ReaderEntry(
        "file",
        "procedure_rag._readers.xlsx",
        "read_xlsx",
        (".xlsx", ".xlsm", ".xltx", ".xltm", ".xls"),
        content_types=ooxml.WORKBOOK_CONTENT_TYPES,
    ),
    # .doc is here to be refused with how to convert it (ooxml.ole_problem).
    "docx": ReaderEntry(
        "file",
        "procedure_rag._readers.docx",
        "read_docx",
        (".docx", ".docm", ".dotx", ".dotm", ".doc"),
        content_types=ooxml.DOCUMENT_CONTENT_TYPES,
    ),
    # .ppt is here to be refused with how to convert it (ooxml.ole_problem).
    "pptx": ReaderEntry(
        "file",
        "procedure_rag._readers.pptx",
        "read_pptx",
        (".pptx", ".pptm", ".ppsx", ".ppsm", ".potx", ".potm", ".ppt"),
        content_types=ooxml.PRESENTATION_CONTENT_TYPES,
    ),
    "unstructured": ReaderEntry("layout", "procedure_rag._readers.unstructured", "iter_unstructured"),
    "docling": ReaderEntry("layout", "procedure_rag._readers.docling", "iter_docling"),
    "azure": ReaderEntry("layout", "procedure_rag._readers.azure", "iter_azure"),
    "google": ReaderEntry("layout", "procedure_rag._readers.google_docai", "iter_google_docai"),
    "textract": ReaderEntry("layout", "procedure_rag._readers.textract", "iter_textract"),
}

#: Formats whose source is text; their elements carry character spans.
TEXT_FORMATS = tuple(name for name, entry in _READERS.items() if entry.takes == "text")
#: Formats whose source is a layout parser's output; their elements carry pages and boxes.
LAYOUT_FORMATS = tuple(name for name, entry in _READERS.items() if entry.takes == "layout")
#: Formats read whole from a file (bytes or a path), with the text they extract.
FILE_FORMATS = tuple(name for name, entry in _READERS.items() if entry.takes == "file")
#: Every format name a user may give, besides ``"auto"``.
FORMATS = tuple(_READERS)

#: File suffixes and the format they mean.
SUFFIXES: Mapping[str, str] = {suffix: name for name, entry in _READERS.items() for suffix in entry.suffixes}


#: Suffixes of binary files whose text a loader extracts: that text is never markup. PDF's
#: is here because a loader's page text is not the file (:data:`FILE_FORMATS` read files).
EXTRACTED_SUFFIXES = frozenset(
    {
        *(suffix for entry in _READERS.values() if entry.takes == "file" for suffix in entry.suffixes),
        *(".doc", ".docx", ".odt", ".rtf", ".xls", ".xlsx", ".ods", ".ppt", ".pptx", ".odp"),
    }
)
#: Known HTML element names, for telling an HTML fragment from text that names a tag in passing.
_HTML_TAG = re.compile(
    r"</?(?:html|head|body|div|span|p|br|hr|a|img|ul|ol|li|dl|dt|dd|h[1-6]|table|thead|tbody|tr|th|td"
    r"|section|article|nav|main|header|footer|aside|pre|code|strong|em|b|i|blockquote|figure|figcaption"
    r"|kbd|details|summary)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
#: Tags that make a text HTML: one may be a tag named in passing.
_MIN_HTML_TAGS = 2
#: A reST section title's underline (three or more of one punctuation character under a text line).
_RST_UNDERLINE = re.compile(r"^[^\s].*\n([=\-~^\"'`#*+:.])\1{2,}[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Source:
    """A source made ready for chunking.

    Attributes:
        format: The format it was read as.
        elements: Its layout elements, in reading order.
        text: The text the elements' spans point into (empty for layout formats).
    """

    format: str
    elements: list[LayoutElement]
    text: str = ""


def detect_format(source: object, *, suffix: str | None = None) -> str:
    """Name the format of ``source``.

    Args:
        source: Text, bytes, a path, a parser's JSON (``dict`` or ``list``) or a
            parser library's own objects.
        suffix: A file suffix hint (``".rst"``), e.g. from document metadata.

    Returns:
        One of :data:`FORMATS`. Text without other signs is ``"markdown"`` when it
        looks like Markdown, else ``"text"``.
    """
    hinted = SUFFIXES.get((suffix or "").lower())
    if hinted is not None:
        return hinted
    if isinstance(source, Path):
        if source.suffix.lower() != ".json":
            return SUFFIXES.get(source.suffix.lower(), "text")
        source = source.read_bytes()  # a parser's saved output: told by its shape below
    if isinstance(source, bytes | bytearray):
        if bytes(source[:5]) == b"%PDF-":
            return "pdf"
        office = _office_format(bytes(source))
        if office is not None:
            return office
        # Only for telling the format: the reader validates the bytes properly.
        source = bytes(source).decode("utf-8", errors="replace")
    if isinstance(source, str):
        return _text_format(source)
    return _layout_format(source)


def _office_format(data: bytes) -> str | None:
    """An Office file's format, told by its package's main content type; ``None`` for other bytes.

    Raises:
        ReaderError: For an OLE compound file (a legacy or password-protected Office
            file), which no reader reads: the message says what to do.
    """
    if data.startswith(ooxml.OLE_SIGNATURE):
        raise ReaderError("office", "file", ooxml.ole_problem(data, suffix=ooxml.ole_suffix(data)))
    main = ooxml.main_content_type(data)
    return next((name for name, entry in _READERS.items() if main and main in entry.content_types), None)


def _text_format(text: str) -> str:
    from procedure_rag._readers.markdown import looks_like_markdown  # noqa: PLC0415 - import cycle

    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):  # JSON text: a parser's output, told by its shape
        try:
            parsed = json.loads(stripped)
        except (ValueError, RecursionError):  # not JSON (or JSON no reader can read): text
            parsed = None
        if isinstance(parsed, dict | list):
            return _layout_format(parsed)
    head = text[:2000].lstrip().lower()
    if head.startswith(("<!doctype html", "<html")) or ("<body" in head and "</" in head):
        return "html"
    if _looks_like_rst(text[:20000]):
        return "rst"
    return "markdown" if looks_like_markdown(text) else "text"


def detect_text_format(text: str, *, suffix: str | None = None) -> str:
    """Name the format of a text a loader gave (a framework document's content), ``suffix`` a hint.

    Unlike :func:`detect_format`, the content decides and the suffix only confirms:
    the suffix of a binary file (:data:`EXTRACTED_SUFFIXES`: ``.pdf``, ``.docx``,
    ``.xlsx``…) means text extracted from it, read as ``"text"``; a markup suffix
    (``.html``, ``.md``, ``.rst``) names its format only when the text bears that
    markup's signs (two tags; one Markdown heading, list line, fence, link, code span or
    emphasis; a reST directive, role or title underline), since a loader may have
    extracted the text already;
    any other suffix (``.txt``) names its format; else the text tells it.

    Returns:
        One of :data:`FORMATS`, never one of :data:`FILE_FORMATS`.
    """
    suffix = (suffix or "").lower()
    if suffix in EXTRACTED_SUFFIXES:
        return "text"
    hinted = SUFFIXES.get(suffix)
    sniffed = _text_format(text)
    if hinted is None or hinted == sniffed:
        return sniffed
    if hinted == "html":
        return hinted if len(_HTML_TAG.findall(text[:20000])) >= _MIN_HTML_TAGS else sniffed
    if hinted == "rst":
        head = text[:20000]
        return hinted if "\n.. " in head or ":`" in head or _RST_UNDERLINE.search(head) else sniffed
    if hinted == "markdown":
        from procedure_rag._readers.markdown import bears_markdown  # noqa: PLC0415 - import cycle

        return hinted if sniffed == "text" and bears_markdown(text) else sniffed
    return hinted


def _looks_like_rst(head: str) -> bool:
    # Directives and explicit roles are the signs Markdown never writes.
    return head.count("\n.. ") + head.count(":ref:`") + head.count(":menuselection:`") >= 2


def _layout_format(source: object) -> str:
    """Tell a parser's output by its shape: the objects' module, or its JSON keys."""
    first = source[0] if isinstance(source, list) and source else None
    keys = set(source) if isinstance(source, Mapping) else set()
    document = source.get("document") if isinstance(source, Mapping) else None
    module = type(source).__module__
    first_module = type(first).__module__ if first is not None else ""
    tests = (
        ("docling", module.startswith("docling") or source_get(source, "schema_name") == "DoclingDocument"),
        ("unstructured", first_module.startswith("unstructured") or source_get(first, "type") is not None),
        ("azure", "analyzeResult" in keys or {"paragraphs", "pages"} <= keys),
        ("google", "documentLayout" in keys or source_get(document, "documentLayout") is not None),
        ("textract", "Blocks" in keys),
    )
    for name, matches in tests:
        if matches:
            return name
    msg = f"cannot tell the format of a {type(source).__name__}; name it with source_format=..."
    raise ValueError(msg)


def source_get(source: object, key: str) -> object:
    """``source[key]`` for a mapping, else ``None``."""
    return source.get(key) if isinstance(source, Mapping) else None


def reader(fmt: str) -> Callable[..., Iterator[LayoutElement]]:
    """The reader function of a text or layout format (imported on first use).

    Raises:
        ValueError: For an unknown format, or one read whole by :func:`read_source` (PDF).
    """
    entry = _entry(fmt)
    if entry.takes == "file":
        msg = f"{fmt!r} is read whole, with the text it extracts: use read_source"
        raise ValueError(msg)
    return cast("Callable[..., Iterator[LayoutElement]]", _function(entry))


def decode_text(data: bytes | bytearray, *, fmt: str, max_chars: int | None) -> str:
    """The text of a text format's file: decoded as the format says (HTML names its charset), else UTF-8.

    Raises:
        ValueError: For bytes over the limit (see :func:`check_size`) or not valid in
            their encoding (:class:`~procedure_rag.ReaderError` for a declared charset).
    """
    entry = _entry(fmt)
    if not entry.decoder:
        return decode_utf8(data, max_chars, what="input")
    check_size(len(data), max_chars, unit="bytes")
    decode = cast("Callable[[bytes], str]", _function(entry, entry.decoder))
    return decode(bytes(data))


def source_text(
    data: bytes, *, fmt: str, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> str:
    """The text a source's chunk spans point into: a file's text, a PDF's extracted text, or "" for layout.

    Raises:
        ValueError: As :func:`read_source` and :func:`decode_text` do.
    """
    entry = _entry(fmt)
    if entry.takes == "file":
        return read_source(data, source_id=source_id, fmt=fmt, options=options).text
    if entry.takes == "layout":
        return ""  # a parser's output: chunks carry pages and boxes, no spans
    return decode_text(data, fmt=fmt, max_chars=options.max_input_chars)


def _function(entry: ReaderEntry, name: str = "") -> object:
    return getattr(importlib.import_module(entry.module), name or entry.function)


def _entry(fmt: str) -> ReaderEntry:
    try:
        return _READERS[fmt]
    except KeyError:
        msg = f"no reader for format {fmt!r}; formats: {', '.join(FORMATS)}"
        raise ValueError(msg) from None


def check_size(size: int, max_chars: int | None, *, unit: str = "characters", so_far: bool = False) -> None:
    """Refuse an input longer than ``max_chars`` characters.

    Args:
        size: The input's length, in ``unit``.
        max_chars: The limit (:attr:`ChunkerOptions.max_input_chars`); ``None`` means none.
        unit: ``"characters"``, or ``"bytes"`` for undecoded input: UTF-8 bytes more
            than four times the limit cannot hold few enough characters.
        so_far: ``size`` is what a streaming reader has written so far, not the whole.

    Raises:
        ValueError: Naming the size, the limit and the option that raises it.
    """
    if max_chars is None:
        return
    if unit == "characters" and size > max_chars:
        problem = (
            f"input is {'at least ' if so_far else ''}{size:,} characters, over the limit of {max_chars:,}"
        )
    elif unit != "characters" and size > _MAX_UTF8_BYTES * max_chars:
        problem = f"input is {size:,} {unit}, more than the limit of {max_chars:,} characters can take"
    else:
        return
    msg = f"{problem} (ChunkerOptions.max_input_chars: raise it, or set it to None for no limit)"
    raise ValueError(msg)


def decode_utf8(data: bytes | bytearray, max_chars: int | None, *, what: str, bom: bool = False) -> str:
    """Decode UTF-8 input, refusing first what cannot fit ``max_chars``.

    Args:
        data: The undecoded input.
        max_chars: The limit (:attr:`ChunkerOptions.max_input_chars`); ``None`` means none.
        what: What the input is, for the message (``"input"``, ``"JSON"``).
        bom: Whether a leading byte-order mark is allowed (and dropped).

    Raises:
        ValueError: For input over the limit (see :func:`check_size`) or bytes that are
            not UTF-8; the message names the byte.
    """
    check_size(len(data), max_chars, unit="bytes")  # before decoding what cannot fit
    try:
        return bytes(data).decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        msg = f"{what} is not valid UTF-8: {exc.reason} at byte {exc.start}"
        raise ValueError(msg) from None


def load_json(source: object, *, max_chars: int | None = None, max_depth: int | None = None) -> object:
    """Parse ``source`` as JSON when it is a JSON string or bytes; return anything else as is.

    Parsed JSON (and a ``dict`` or ``list`` given with ``max_depth``) is checked by
    :func:`check_json`.

    Args:
        source: JSON text or UTF-8 bytes (a byte-order mark is allowed), or anything else.
        max_chars: Most characters the JSON text may have; ``None`` means no limit.
        max_depth: Deepest nesting of objects and arrays; ``None`` means no limit.

    Raises:
        ValueError: For bytes that are not UTF-8, text that is not JSON, JSON over a
            limit or holding an unpaired surrogate; the message names the problem.
    """
    if isinstance(source, bytes | bytearray):
        source = decode_utf8(source, max_chars, what="JSON", bom=True)
    if not isinstance(source, str):
        if max_depth is not None and isinstance(source, Mapping | list):
            check_json(source, max_depth=max_depth)
        return source
    check_size(len(source), max_chars)
    try:
        parsed = json.loads(source.removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        msg = f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        raise ValueError(msg) from None
    except RecursionError:
        limit = f" (max_json_depth is {max_depth})" if max_depth is not None else ""
        msg = f"JSON nests too deeply for Python's JSON parser{limit}"
        raise ValueError(msg) from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        msg = f"not valid JSON: {exc}"
        raise ValueError(msg) from None
    check_json(parsed, max_depth=max_depth)
    return parsed


def check_json(value: object, *, max_depth: int | None) -> None:
    """Check parsed JSON: nesting no deeper than ``max_depth``, no unpaired surrogate in a string.

    Walks every object, array and string once, without recursion (a shared or
    cyclic container is visited once).

    Raises:
        ValueError: Naming the depth and the option, or the string with the surrogate.
    """
    stack: list[tuple[object, int]] = [(value, 1)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            bad = _SURROGATE.search(item)
            if bad is not None:
                msg = f"JSON string {item[:40]!r} holds an unpaired surrogate at offset {bad.start()}"
                raise ValueError(msg)
            continue
        if not isinstance(item, Mapping | list | tuple) or id(item) in seen:
            continue
        seen.add(id(item))
        if max_depth is not None and depth > max_depth:
            msg = (
                f"JSON nests more than {max_depth} levels deep "
                "(ChunkerOptions.max_json_depth: raise it, or set it to None for no limit)"
            )
            raise ValueError(msg)
        if isinstance(item, Mapping):
            stack.extend((key, depth) for key in item)
            stack.extend((child, depth + 1) for child in item.values())
        else:
            stack.extend((child, depth + 1) for child in item)


def iter_text(
    text: str, *, source_id: str, fmt: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the elements of ``text``, read lazily by the reader of the text format ``fmt``.

    Args:
        text: The document.
        source_id: Id of the document; element ids start with it.
        fmt: One of :data:`TEXT_FORMATS`.
        options: Styles, lexicons and limits for the reader.

    Raises:
        ValueError: For a format that is not a text format, or text over
            ``options.max_input_chars``.
    """
    if _entry(fmt).takes != "text":
        msg = f"{fmt!r} is not a text format; text formats: {', '.join(TEXT_FORMATS)}"
        raise ValueError(msg)
    check_size(len(text), options.max_input_chars)
    return reader(fmt)(text, source_id=source_id, options=options)


def loader_sheet_rows(
    text: str, *, options: ReaderOptions = DEFAULT_READER_OPTIONS, unnamed: bool = False
) -> list[list[str]] | None:
    """The rows of a sheet a pandas-based loader wrote, or ``None`` when ``text`` is no such sheet.

    LlamaIndex's ``PandasExcelReader`` writes each row as ``header: value, header: value``
    (:func:`procedure_rag._readers.pandas_rows.sheet_rows`, which reads the cells back);
    ``unnamed``: the text's source is not known to be a workbook, so only a column pandas
    named ``Unnamed: i`` in its place tells the loader's format. Read them with
    :func:`read_loader_sheet`.

    Raises:
        ValueError: For text over ``options.max_input_chars``.
    """
    from procedure_rag._readers.pandas_rows import sheet_rows  # noqa: PLC0415 - a sheet's text only

    check_size(len(text), options.max_input_chars)
    return sheet_rows(text, unnamed=unnamed)


def read_loader_sheet(
    rows: list[list[str]], *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Source:
    """A sheet's rows (:func:`loader_sheet_rows`) read as the Excel reader reads a sheet."""
    read_rows = cast("Callable[..., Source]", _function(_entry("xlsx"), "read_sheet_rows"))
    return read_rows(rows, source_id=source_id, options=options)


def read_source(
    source: object, *, source_id: str, fmt: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Source:
    """Read a source of any format with its reader, the limits of ``options`` enforced.

    Args:
        source: The source (text or bytes for the text formats; a path or bytes for
            ``pdf``; objects or JSON for the layout formats).
        source_id: Id of the document; element ids start with it.
        fmt: One of :data:`FORMATS`.
        options: Styles, lexicons and limits for the reader: ``max_input_chars``
            bounds the source (text, JSON text, or a PDF's extracted text),
            ``max_json_depth`` a layout format's JSON.

    Raises:
        ValueError: For an unknown format, a source over a limit, or a source the
            reader cannot use (:class:`~procedure_rag.ReaderError` names the record).
    """
    entry = _entry(fmt)
    if entry.takes == "file":
        read_file = cast("Callable[..., Source]", _function(entry))
        read = read_file(source, source_id=source_id, options=options)
        check_size(len(read.text), options.max_input_chars)
        return read
    if entry.takes == "layout":
        try:
            source = load_json(source, max_chars=options.max_input_chars, max_depth=options.max_json_depth)
        except ValueError as exc:
            raise ReaderError(fmt, "document", str(exc)) from None
    elif isinstance(source, str | bytes | bytearray):
        check_size(
            len(source), options.max_input_chars, unit="characters" if isinstance(source, str) else "bytes"
        )
    elements = list(reader(fmt)(source, source_id=source_id, options=options))
    text = source if isinstance(source, str) and entry.takes == "text" else ""
    return Source(fmt, elements, text)


def streams(fmt: str) -> bool:
    """Whether the reader of the file format ``fmt`` yields its elements as it reads (:func:`iter_file`)."""
    return bool(_entry(fmt).stream)


def iter_file(
    source: object,
    *,
    source_id: str,
    fmt: str,
    text: TextWindow,
    options: ReaderOptions = DEFAULT_READER_OPTIONS,
) -> Iterator[LayoutElement]:
    """Yield the elements of a file format's source, its text written to ``text`` as they come.

    A reader that streams (PDF: page by page, see :func:`streams`) is read as it goes,
    so neither the elements nor the text need be held whole: each element's text is in
    ``text`` when it is yielded, and the caller releases what it has used. Another
    file reader reads the file whole first. ``options.max_input_chars`` is checked on
    the text as it grows.

    Raises:
        ValueError: For a format that is not a file format, or text over the limit
            (raised when the text passes it, after the elements before it were yielded);
            :class:`~procedure_rag.ReaderError` for a source the reader cannot use.
    """
    entry = _entry(fmt)
    if entry.takes != "file":
        msg = f"{fmt!r} is not a file format; file formats: {', '.join(FILE_FORMATS)}"
        raise ValueError(msg)
    if not entry.stream:
        read = read_source(source, source_id=source_id, fmt=fmt, options=options)
        text.append(read.text)
        yield from read.elements
        return
    stream = cast("Callable[..., Generator[LayoutElement]]", _function(entry, entry.stream))
    elements = stream(source, source_id=source_id, options=options, text=text)
    try:  # closed at once when the limit stops it, so the reader deletes its spool
        for element in elements:
            check_size(len(text), options.max_input_chars, so_far=True)
            yield element
    finally:
        elements.close()
    check_size(len(text), options.max_input_chars)


@dataclass(frozen=True, slots=True)
class PagedText:
    r"""Pages of text joined into one text by form feeds (``"\f"``), in page order.

    Attributes:
        text: The pages joined by ``"\f"``; a form feed inside a page became a line
            break (one character for one, so offsets into a page stay offsets into it).
        starts: Where each page starts in ``text``.
        numbers: Each page's 1-based page number.
    """

    text: str
    starts: tuple[int, ...]
    numbers: tuple[int, ...]

    @classmethod
    def join(cls, pages: Sequence[str], numbers: Sequence[int] | None = None) -> PagedText:
        """Join ``pages``; ``numbers`` (one per page) default to 1, 2, 3 and so on."""
        cleaned = [page.replace("\f", "\n") for page in pages]
        starts: list[int] = []
        offset = 0
        for page in cleaned:
            starts.append(offset)
            offset += len(page) + 1
        return cls("\f".join(cleaned), tuple(starts), tuple(numbers or range(1, len(pages) + 1)))

    def index_at(self, offset: int) -> int:
        """The index of the page holding ``offset`` of :attr:`text` (a page break: the page it ends)."""
        return max(0, bisect_right(self.starts, offset) - 1)


def iter_paged_text(
    paged: PagedText, *, source_id: str, fmt: str = "text", options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the elements of paged text, each one's ``page`` the number of the page it starts on.

    The reader of the text format ``fmt`` reads :attr:`PagedText.text` (the plain-text
    reader also finds the page breaks there); a page number it read from the page
    itself (a footer's ``- 12 -``) that differs is kept as the hint ``printed_page``. A
    heading found in the text gets the hint ``heading_from="text"``: the shape of a line
    of extracted text is all it rests on.
    No size limit is checked here: the caller checks the joined text.
    """
    for el in reader(fmt)(paged.text, source_id=source_id, options=options):
        page = paged.numbers[paged.index_at(el.span.start if el.span is not None else 0)]
        hints = el.hints
        if el.page is not None and el.page != page:
            hints = (*hints, ("printed_page", str(el.page)))
        if el.kind is ElementKind.SECTION_HEADER and not el.hint(HEADING_FROM):
            hints = (*hints, (HEADING_FROM, "text"))  # a guess from the shape of a line of a page
        yield el.with_page(page, hints)

"""Which reader reads a source, and the one call that runs it.

A reader turns one source into :class:`LayoutElement` objects. Text formats
(Markdown, plain or PDF-extracted text, HTML, reStructuredText) read a ``str`` and
give every element its character span; layout formats (Unstructured, Docling, Azure
Document Intelligence, Google Document AI, Amazon Textract) read a parser's output,
as the library's own objects or their JSON, and give pages and boxes instead.

Readers are imported when first used, so a missing optional library only matters
to the user who asks for that format.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from procedure_rag._chunking.options import DEFAULT_MAX_INPUT_CHARS, DEFAULT_MAX_JSON_DEPTH
from procedure_rag._errors import ReaderError
from procedure_rag._types import LayoutElement

__all__ = [
    "FORMATS",
    "LAYOUT_FORMATS",
    "SUFFIXES",
    "TEXT_FORMATS",
    "Source",
    "detect_format",
    "read_source",
]

#: Formats whose source is text; their elements carry character spans.
TEXT_FORMATS = ("markdown", "text", "html", "rst")
#: Formats whose source is a layout parser's output; their elements carry pages and boxes.
LAYOUT_FORMATS = ("unstructured", "docling", "azure", "google", "textract")
#: Every format name a user may give, besides ``"auto"``.
FORMATS = (*TEXT_FORMATS, "pdf", *LAYOUT_FORMATS)

_SURROGATE = re.compile("[\ud800-\udfff]")
#: UTF-8 takes at most four bytes a character: more bytes than this cannot fit the limit.
_MAX_UTF8_BYTES = 4

#: File suffixes and the format they mean.
SUFFIXES: Mapping[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".rst": "rst",
    ".rest": "rst",
    ".pdf": "pdf",
}

# format -> (module, function); each function is ``f(source, *, source_id) -> Iterator[LayoutElement]``.
# PDF is read by ``procedure_rag._readers.pdf.read_pdf``, which also returns the extracted text.
_READERS: Mapping[str, tuple[str, str]] = {
    "html": ("procedure_rag._readers.html", "iter_html"),
    "rst": ("procedure_rag._readers.rst", "iter_rst"),
    "unstructured": ("procedure_rag._readers.unstructured", "iter_unstructured"),
    "docling": ("procedure_rag._readers.docling", "iter_docling"),
    "azure": ("procedure_rag._readers.azure", "iter_azure"),
    "google": ("procedure_rag._readers.google_docai", "iter_google_docai"),
    "textract": ("procedure_rag._readers.textract", "iter_textract"),
}


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
        # Only for telling the format: the reader validates the bytes properly.
        source = bytes(source).decode("utf-8", errors="replace")
    if isinstance(source, str):
        return _text_format(source)
    return _layout_format(source)


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
    """The reader function for ``fmt`` (imported on first use)."""
    try:
        module_name, function = _READERS[fmt]
    except KeyError:
        msg = f"no reader for format {fmt!r}; formats: {', '.join(FORMATS)}"
        raise ValueError(msg) from None
    module = importlib.import_module(module_name)
    return cast("Callable[..., Iterator[LayoutElement]]", getattr(module, function))


def check_size(size: int, max_chars: int | None, *, unit: str = "characters") -> None:
    """Refuse an input longer than ``max_chars`` characters.

    Args:
        size: The input's length, in ``unit``.
        max_chars: The limit (:attr:`ChunkerOptions.max_input_chars`); ``None`` means none.
        unit: ``"characters"``, or ``"bytes"`` for undecoded input: UTF-8 bytes more
            than four times the limit cannot hold few enough characters.

    Raises:
        ValueError: Naming the size, the limit and the option that raises it.
    """
    if max_chars is None:
        return
    if unit == "characters" and size > max_chars:
        problem = f"input is {size:,} characters, over the limit of {max_chars:,}"
    elif unit != "characters" and size > _MAX_UTF8_BYTES * max_chars:
        problem = f"input is {size:,} {unit}, more than the limit of {max_chars:,} characters can take"
    else:
        return
    msg = f"{problem} (ChunkerOptions.max_input_chars: raise it, or set it to None for no limit)"
    raise ValueError(msg)


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
        check_size(len(source), max_chars, unit="bytes")
        try:
            source = bytes(source).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            msg = f"JSON is not valid UTF-8: {exc.reason} at byte {exc.start}"
            raise ValueError(msg) from None
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


def read_source(
    source: object,
    *,
    source_id: str,
    fmt: str,
    max_input_chars: int | None = DEFAULT_MAX_INPUT_CHARS,
    max_json_depth: int | None = DEFAULT_MAX_JSON_DEPTH,
) -> Source:
    """Read a source of a format other than Markdown and plain text.

    Args:
        source: The source (text for ``html``/``rst``; a path or bytes for ``pdf``;
            objects or JSON for the layout formats).
        source_id: Id of the document; element ids start with it.
        fmt: One of ``html``, ``rst``, ``pdf`` or :data:`LAYOUT_FORMATS`.
        max_input_chars: Most characters the source (text, JSON text, or a PDF's
            extracted text) may have; ``None`` means no limit.
        max_json_depth: Deepest nesting of a layout format's JSON; ``None`` means no limit.

    Raises:
        ValueError: For an unknown format, a source over a limit, or a source the
            reader cannot use (:class:`~procedure_rag.ReaderError` names the record).
    """
    if fmt == "pdf":
        pdf = importlib.import_module("procedure_rag._readers.pdf")  # written with the PDF reader
        read_pdf = cast("Source", pdf.read_pdf(source, source_id=source_id))
        check_size(len(read_pdf.text), max_input_chars)
        return read_pdf
    read = reader(fmt)
    if fmt in LAYOUT_FORMATS:
        try:
            source = load_json(source, max_chars=max_input_chars, max_depth=max_json_depth)
        except ValueError as exc:
            raise ReaderError(fmt, "document", str(exc)) from None
    elif isinstance(source, str | bytes | bytearray):
        check_size(len(source), max_input_chars, unit="characters" if isinstance(source, str) else "bytes")
    elements = list(read(source, source_id=source_id))
    text = source if isinstance(source, str) and fmt in TEXT_FORMATS else ""
    return Source(fmt, elements, text)

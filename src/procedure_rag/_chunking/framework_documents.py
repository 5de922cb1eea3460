"""Framework documents (LangChain ``Document``s, LlamaIndex nodes) grouped into sources and chunked.

A framework document's text is what gets read: a path in its metadata is never
opened. Loaders give three shapes, and :func:`iter_record_groups` tells them apart:

* one document per Unstructured element (``UnstructuredLoader(mode="elements")``,
  LlamaIndex's ``UnstructuredReader``): each run of them from one file is one source,
  read by the Unstructured reader (:func:`procedure_rag._readers.unstructured.iter_records`);
* one document per page (``PyPDFLoader``, ``PyMuPDFLoader``, ``PDFPlumberLoader``,
  ``SimpleDirectoryReader``'s PDF reader, Textract, Document Intelligence, LlamaParse by
  page): each run of them from one file, pages in order, is one source, read as its
  pages joined by form feeds (:class:`PagedText`), so a procedure crossing a page
  break stays whole and every chunk knows its pages;
* one document per file: it stands alone.

:func:`iter_document_chunks` chunks one group and says what each chunk's framework
document carries. Both adapters call these two, so that they group and read alike.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeGuard, TypeVar

from procedure_rag._chunking.chunker import validate_text
from procedure_rag._language.lexicons import detect_language
from procedure_rag._language.numbering import UNMAPPED_GLYPH
from procedure_rag._readers.furniture_rules import shape
from procedure_rag._readers.registry import (
    EXTRACTED_SUFFIXES,
    FILE_FORMATS,
    FORMATS,
    TEXT_FORMATS,
    PagedText,
    check_size,
    detect_text_format,
    iter_paged_text,
    iter_text,
    loader_sheet_rows,
    read_loader_sheet,
)
from procedure_rag._readers.unstructured import ELEMENT_METADATA_KEYS, is_element_metadata, iter_records
from procedure_rag._types import ElementKind

if TYPE_CHECKING:
    from procedure_rag._chunking.chunker import ProcedureChunker
    from procedure_rag._types import Chunk, LayoutElement

__all__ = [
    "DocumentChunk",
    "GroupKind",
    "RecordGroup",
    "RunningLineMemory",
    "iter_document_chunks",
    "iter_record_groups",
]

_T = TypeVar("_T")

#: Metadata keys naming the file a document came from, in order of preference: LangChain's
#: loaders write ``source``, LlamaIndex's ``SimpleDirectoryReader`` ``file_path``, Unstructured
#: ``filename``.
_SOURCE_KEYS = ("source", "file_path", "filename")
#: LlamaIndex's file readers used alone (``PDFReader().load_data(path)``) write only the file's
#: name, ``file_name``: enough to tell one file's pages from the next file's, not to name the
#: source in an index (two folders may each hold a ``manual.pdf``).
_FILE_NAME = "file_name"
#: The page edge a running line of each kind sits at.
_EDGES = {ElementKind.PAGE_HEADER: "top", ElementKind.PAGE_FOOTER: "bottom"}

#: How a group's documents are read: Unstructured elements of one file, pages of one
#: file, or one whole text.
GroupKind = Literal["elements", "pages", "text"]


@dataclass(frozen=True, slots=True)
class RecordGroup(Generic[_T]):
    """Consecutive framework documents read as one source.

    Attributes:
        items: The documents, in order (a page run's in page order).
        kind: ``"elements"`` for a run of Unstructured element documents of one file,
            ``"pages"`` for a run of page documents of one file, ``"text"`` for one
            whole-text document.
        source: The file they came from (``source``, ``file_path`` or ``filename``
            metadata), when stated; the adapters name the group's source by it. A bare
            ``file_name`` groups pages but names no source (the texts are hashed).
        metadata: Metadata every document of the group shares, element-only keys
            (:data:`ELEMENT_METADATA_KEYS`) and page keys left out; a whole-text
            document's own.
    """

    items: tuple[_T, ...]
    kind: GroupKind
    source: str | None
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DocumentChunk:
    """A chunk of a group, with what its framework document carries besides the chunk's keys.

    Attributes:
        chunk: The chunk. For a page run, its spans (``source_spans``,
            ``context_spans``) point into the pages joined by form feeds
            (:class:`PagedText`), and its ``page`` is the page it starts on.
        document: Index in the group's documents of the one the chunk starts on.
        metadata: The document metadata the chunk carries (before
            :func:`procedure_rag.chunk_metadata` adds its own keys): a page run's chunk
            has the metadata of the page it starts on and ``pages``, the JSON list of
            the pages it covers; an element run's, the metadata its elements share; a
            whole-text document's, its own.
        start: Offset in that document's text of the first source character the
            chunk covers (``start_index``, ``start_char_idx``); ``None`` without spans.
        end: Offset in that document's text where the chunk's last span ends
            (``end_char_idx``); ``None`` without spans, or when it ends on a later page.
        source_text: The document text the chunk stands for, verbatim: from its first
            span that is not repeated context (a lead-in another chunk holds) to its
            last span's end (for a page run, across a page break with the form feed
            between the pages); ``None`` for an element run or a chunk without spans.
        source_start: Offset of ``source_text`` in that document's text (``start_index``
            in the adapters' ``text_mode="source"``), so that
            ``text[source_start:source_start + len(source_text)] == source_text`` for a
            chunk within one document.
    """

    chunk: Chunk
    document: int
    metadata: dict[str, Any]
    start: int | None
    end: int | None
    source_text: str | None = None
    source_start: int | None = None


def _source_of(metadata: Mapping[str, Any]) -> str | None:
    """The file a document came from, as its metadata names it (see :data:`_SOURCE_KEYS`)."""
    for key in _SOURCE_KEYS:
        value = metadata.get(key)
        if isinstance(value, str | PurePath) and str(value):
            return str(value)
    return None


def _file_of(metadata: Mapping[str, Any]) -> str | None:
    """:func:`_source_of`, else the file's bare name (:data:`_FILE_NAME`): what a run's pages share."""
    source = _source_of(metadata)
    if source is not None:
        return source
    name = metadata.get(_FILE_NAME)
    return name if isinstance(name, str) and name else None


def _shared(metadatas: Sequence[Mapping[str, Any]], *, leave_out: frozenset[str]) -> dict[str, Any]:
    first = metadatas[0]
    return {
        key: value
        for key, value in first.items()
        if key not in leave_out and all(key in m and m[key] == value for m in metadatas[1:])
    }


#: The keys page-wise loaders number their pages by.
_PAGE_KEYS = frozenset({"page", "page_label", "page_number"})


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _page_of(metadata: Mapping[str, Any]) -> tuple[str, int | None] | None:
    """``(key, 1-based page)`` of a page document, ``None`` for any other document.

    ``page_number`` (Unstructured) counts from 1. ``page`` counts from 0 beside
    ``total_pages`` (LangChain's PDF parsers: PyPDF, PyMuPDF, PDFPlumber, PyPDFium2,
    which write both) and from 1 without it (Textract, Document Intelligence).
    ``page_label`` (LlamaIndex's PDF reader) is the label the PDF prints: a number
    when it is one, else ``None``. A document needs a source to be a page of it.
    """
    if _file_of(metadata) is None or is_element_metadata(metadata):
        return None
    number = metadata.get("page_number")
    if _is_int(number):
        return "page_number", number
    page = metadata.get("page")
    if _is_int(page):
        return "page", page + 1 if "total_pages" in metadata else page
    label = metadata.get("page_label")
    if isinstance(label, str) and label.strip():
        return "page_label", int(label) if label.strip().isdecimal() else None
    return None


def _continues(
    run: Sequence[Mapping[str, Any]], meta: Mapping[str, Any], page: tuple[str, int | None]
) -> bool:
    """Whether a page document goes on the run of pages before it (same file, key, later page)."""
    last = run[-1]
    before = _page_of(last)
    if before is None or before[0] != page[0] or _file_of(last) != _file_of(meta):
        return False
    # Numbered pages only go forward; a label that is no number (i, ii) goes on the run.
    return before[1] is None or page[1] is None or page[1] > before[1]


def iter_record_groups(
    items: Iterable[_T], metadata: Callable[[_T], Mapping[str, Any]]
) -> Iterator[RecordGroup[_T]]:
    """Group framework documents: runs of element documents, runs of pages, and whole-text ones.

    Args:
        items: Documents (or nodes) in order.
        metadata: Gives an item's metadata.

    Yields:
        One group per run of consecutive element documents with the same source, one
        per run of consecutive page documents of one source and page key whose pages go
        forward (see :func:`_page_of`; a repeated or earlier page starts a new run), and
        one per other document, in input order.
    """
    run: list[_T] = []
    run_meta: list[Mapping[str, Any]] = []
    run_kind: GroupKind = "text"

    def flush() -> Iterator[RecordGroup[_T]]:
        if run:
            leave_out = ELEMENT_METADATA_KEYS if run_kind == "elements" else _PAGE_KEYS
            yield RecordGroup(
                tuple(run), run_kind, _source_of(run_meta[0]), _shared(run_meta, leave_out=leave_out)
            )
            run.clear()
            run_meta.clear()

    for item in items:
        meta = metadata(item)
        page = _page_of(meta)
        kind: GroupKind = "elements" if is_element_metadata(meta) else "pages" if page is not None else "text"
        if kind == "text":
            yield from flush()
            yield RecordGroup((item,), "text", _source_of(meta), dict(meta))
            continue
        if run and (
            kind != run_kind
            or (kind == "elements" and _file_of(run_meta[0]) != _file_of(meta))
            or (page is not None and not _continues(run_meta, meta, page))
        ):
            yield from flush()
        run_kind = kind
        run.append(item)
        run_meta.append(meta)
    yield from flush()


def _named_format(chunker: ProcedureChunker, metadata: Mapping[str, Any]) -> str | None:
    """The format the user named: the chunker's option, else a ``source_format`` metadata key."""
    named = chunker.options.source_format
    if named == "auto":
        value = metadata.get("source_format")
        named = value if isinstance(value, str) and value in FORMATS else "auto"
    return None if named == "auto" else named


def _text_of_files(fmt: str | None) -> str | None:
    """``fmt``, a file format (``"pdf"``) being the text extracted from such a file: ``"text"``."""
    return "text" if fmt in FILE_FORMATS else fmt


#: Suffixes of spreadsheets, whose text a pandas-based loader may have written row by row.
_SHEET_SUFFIXES = frozenset({".xlsx", ".xlsm", ".xls"})

#: Suffixes of word-processor files, which number their lists themselves: the text a loader
#: extracts from one (``Docx2txtLoader``, LlamaIndex's ``DocxReader``) holds no list number.
_NUMBERED_BY_WORD = frozenset({".docx", ".docm", ".doc", ".odt"})


def _suffix(metadata: Mapping[str, Any]) -> str | None:
    source = _file_of(metadata)
    return PurePath(source).suffix.lower() if source else None


def iter_document_chunks(
    chunker: ProcedureChunker,
    kind: GroupKind,
    documents: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    metadata: Mapping[str, Any],
    source_id: str | None,
    running: RunningLineMemory | None = None,
) -> Iterator[DocumentChunk]:
    """Yield the chunks of one group of framework documents (see :func:`iter_record_groups`).

    A document's text is read, never a path its metadata names. Its format is the one
    the user named (the chunker's ``source_format``, else a ``source_format`` metadata
    key; a file format such as ``"pdf"`` means text extracted from such a file, read as
    ``"text"``), else the text's own, its source's suffix a hint
    (:func:`~procedure_rag._readers.registry.detect_text_format`: ``.pdf``, ``.docx``…
    mean extracted text; ``.html``, ``.md``, ``.rst`` count only when the text is such
    markup).

    Args:
        chunker: The chunker to use.
        kind: The group's kind (:attr:`RecordGroup.kind`).
        documents: ``(text, metadata)`` of the group's documents, in the group's order.
        metadata: The group's shared metadata (:attr:`RecordGroup.metadata`).
        source_id: Id of the source; ``None`` hashes the texts.
        running: The running lines earlier page runs of the same input showed: a page
            run's are dropped at its pages' edges too, and it adds its own.

    Raises:
        ValueError: For unusable text or records (:class:`ReaderError` names the record),
            or documents over the options' ``max_input_chars`` (an element or page run
            counts the characters of all its documents).
    """
    if kind == "pages":
        yield from _page_chunks(chunker, documents, source_id=source_id, running=running)
        return
    if kind == "elements":
        check_size(sum(len(text) for text, _ in documents), chunker.options.max_input_chars)
        sid = source_id or _hashed("\x1e".join(text for text, _ in documents))
        for chunk in chunker.iter_chunks_from_elements(iter_records(documents, source_id=sid), source_id=sid):
            yield _whole(chunk, metadata)
        return
    ((text, own),) = documents
    named = _named_format(chunker, own)
    suffix = _suffix(own)
    options = chunker.options.reader_options
    # A sheet a pandas-based loader wrote row by row (LlamaIndex's PandasExcelReader, which
    # names no file when used alone): its cells read back, the sheet read as the Excel reader
    # reads one.
    maybe_sheet = named is None and (suffix is None or suffix in _SHEET_SUFFIXES)
    rows = loader_sheet_rows(text, options=options, unnamed=suffix is None) if maybe_sheet else None
    if rows is not None:
        sid = source_id or _hashed(text)
        sheet = read_loader_sheet(rows, source_id=sid, options=options)
        for chunk in _extracted_chunks(chunker, sheet.text, sid, lambda _: sheet.elements):
            yield _whole(chunk, metadata)
        return
    fmt = _text_of_files(named) or detect_text_format(text, suffix=suffix)
    if fmt == "text" and (named in FILE_FORMATS or suffix in EXTRACTED_SUFFIXES):
        # A file's extracted text in one document (PyPDFLoader(mode="single")): read as pages are.
        text = _glyphs_shown(text)
        if named == "docx" or suffix in _NUMBERED_BY_WORD:
            options = replace(options, numbering_lost=True)
        chunks = _extracted_chunks(
            chunker, text, source_id, lambda sid: iter_text(text, source_id=sid, fmt="text", options=options)
        )
    else:
        chunks = chunker.iter_chunks_from_source(text, source_id=source_id, source_format=fmt)
    # Spans point into the text itself only for the text formats (a layout parser's JSON
    # is read into a text of its own).
    verbatim = text if fmt in TEXT_FORMATS else None
    for chunk in chunks:
        yield _whole(chunk, metadata, verbatim)


class RunningLineMemory:
    """Running headers and footers of the page runs of one input list, group after group.

    A document of one page shows no repetition, so its running header (「HoloLens 2
    operations guide」 over every page of a site's exported pages) reads as its title.
    One instance serves one input list: each page run adds the shapes of the running
    lines its reader found, ``(edge, line with digits as #)``, and later runs take a
    line of such a shape at that edge of a page as running too. Only what came before
    counts, so a list and its lazy twin read alike.
    """

    _MAX = 64  # shapes kept: a list's running lines are few; the first ones stay

    def __init__(self) -> None:
        self.shapes: frozenset[tuple[str, str]] = frozenset()

    def watch(self, elements: Iterable[LayoutElement]) -> Iterator[LayoutElement]:
        """Yield ``elements``, remembering the shapes of the running lines among them."""
        for el in elements:
            edge = _EDGES.get(el.kind)
            if edge is not None and len(self.shapes) < self._MAX:
                self.shapes |= {(edge, shape(el.text))}
            yield el


class SourceIds:
    """The source ids of one input list's groups: unique per position where none is named.

    The core derives the source id of a document that names none from its text, so two
    identical texts would get the same chunk ids (and a vector store would refuse the
    second set). One instance serves one input list, group after group: a named source
    is kept as it is; the first group with a given text keeps the derived id (``None``
    here: the core derives it, so a text without a twin keeps its ids); the n-th group
    with that text gets ``sha1:<hash of its texts>#n``. The same input list gives the
    same ids on every run.
    """

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def __call__(self, named: str | None, texts: Sequence[str]) -> str | None:
        """The source id to give :func:`iter_document_chunks` for one group.

        Args:
            named: The source the group's metadata names, if any.
            texts: The texts of the group's documents, in order.
        """
        if named is not None:
            return named
        derived = _hashed("\x1e".join(texts))
        count = self._seen[derived] = self._seen.get(derived, 0) + 1
        return None if count == 1 else f"{derived}#{count}"


def _hashed(text: str) -> str:
    return "sha1:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]  # noqa: S324 - an id, not security


def _own_range(chunk: Chunk) -> tuple[int, int] | None:
    """Where the chunk's own source lies: its first span that is no repeated context, to its end.

    A part that opens inside a list repeats the lead-in and the enclosing steps' first
    lines (``context_spans``), which lie before the part, under an earlier chunk; a part
    of a cut list may end with the condition paragraph after the list, under a later one.
    """
    spans = chunk.source_spans
    if not spans:
        return None
    context = chunk.context_spans
    own = [s for s in spans if not any(c.start <= s.start and s.end <= c.end for c in context)] or spans
    return own[0].start, own[-1].end


def _whole(chunk: Chunk, metadata: Mapping[str, Any], text: str | None = None) -> DocumentChunk:
    spans = chunk.source_spans
    own = _own_range(chunk) if text is not None else None
    return DocumentChunk(
        chunk,
        0,
        dict(metadata),
        spans[0].start if spans else None,
        spans[-1].end if spans else None,
        None if own is None or text is None else text[own[0] : own[1]],
        None if own is None else own[0],
    )


def _page_chunks(
    chunker: ProcedureChunker,
    documents: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    source_id: str | None,
    running: RunningLineMemory | None,
) -> Iterator[DocumentChunk]:
    """The chunks of a run of pages, read as one text: the pages joined by form feeds."""
    metas = [meta for _, meta in documents]
    paged = PagedText.join([_glyphs_shown(text) for text, _ in documents], _page_numbers(metas))
    options = chunker.options.reader_options
    if running is not None and running.shapes:
        options = replace(options, batch_running_lines=running.shapes)
    if _from_presentation(metas[0]):
        options = replace(options, slides=True)
    fmt = _text_of_files(_named_format(chunker, metas[0])) or detect_text_format(
        paged.text, suffix=_suffix(metas[0])
    )
    if fmt not in TEXT_FORMATS:
        fmt = "text"  # page texts are text, whatever the first page looks like
    chunks = _extracted_chunks(
        chunker,
        paged.text,
        source_id,
        lambda sid: _watched(running, iter_paged_text(paged, source_id=sid, fmt=fmt, options=options)),
    )
    for chunk in chunks:
        spans = chunk.source_spans
        if not spans:
            yield DocumentChunk(chunk, 0, dict(metas[0]), None, None)
            continue
        first = paged.index_at(spans[0].start)
        last = paged.index_at(max(spans[-1].end - 1, spans[-1].start))
        covered = sorted({paged.numbers[i] for span in spans for i in _indexes(paged, span.start, span.end)})
        offset = paged.starts[first]
        own = _own_range(chunk) or (spans[0].start, spans[-1].end)
        own_first = paged.index_at(own[0])
        yield DocumentChunk(
            chunk,
            first,
            {**metas[first], "pages": json.dumps(covered, separators=(",", ":"))},
            spans[0].start - offset,
            spans[-1].end - offset if last == first else None,
            paged.text[own[0] : own[1]],
            own[0] - paged.starts[own_first] if own_first == first else None,
        )


#: What a presentation program writes in a PDF's ``Creator`` or ``Producer`` (lower case).
_PRESENTATION_PROGRAMS = ("powerpoint", "impress", "keynote")


def _from_presentation(metadata: Mapping[str, Any]) -> bool:
    """Whether a loader's page metadata says a presentation program wrote the PDF (its pages are slides).

    ``PyPDFLoader`` and ``PyMuPDFLoader`` give ``creator`` and ``producer``,
    ``PDFPlumberLoader`` ``Creator`` and ``Producer``.
    """
    for key, value in metadata.items():
        if isinstance(value, str) and key.lower() in ("creator", "producer"):
            program = value.lower()
            if any(name in program for name in _PRESENTATION_PROGRAMS):
                return True
    return False


def _watched(running: RunningLineMemory | None, elements: Iterable[LayoutElement]) -> Iterable[LayoutElement]:
    return elements if running is None else running.watch(elements)


def _extracted_chunks(
    chunker: ProcedureChunker,
    text: str,
    source_id: str | None,
    elements: Callable[[str], Iterable[LayoutElement]],
) -> Iterator[Chunk]:
    """:meth:`ProcedureChunker.iter_chunks` for text a loader extracted: ``elements(source_id)`` read it.

    ``text`` has been through :func:`_glyphs_shown`.
    """
    validate_text(text, max_chars=chunker.options.max_input_chars)
    if not text.replace("\f", "").strip():
        return
    sid = source_id or _hashed(text)
    language = chunker.options.language
    language = detect_language(text) if language == "auto" else language
    yield from chunker.iter_chunks_from_elements(
        elements(sid), source_id=sid, language=language, source_text=text
    )


def _glyphs_shown(text: str) -> str:
    """Extracted text with each NUL written as :data:`UNMAPPED_GLYPH`, one character for one.

    Not a file decoded as text: a NUL there is a glyph the PDF maps to no character (pypdf
    gives one for the step numbers of some fonts), so it is no sign of a binary file, and
    chunks must not carry it on: PostgreSQL, for one, stores no NUL in text.
    """
    return text.replace("\x00", UNMAPPED_GLYPH) if "\x00" in text else text


def _page_numbers(metas: Sequence[Mapping[str, Any]]) -> list[int]:
    """The pages' 1-based numbers: their own, or 1, 2, 3 for labels that do not number them in order."""
    numbers = [page[1] if (page := _page_of(meta)) is not None else None for meta in metas]
    known = [n for n in numbers if n is not None]
    if len(known) == len(numbers) and all(a < b for a, b in pairwise(known)):
        return known
    return list(range(1, len(metas) + 1))


def _indexes(paged: PagedText, start: int, end: int) -> range:
    return range(paged.index_at(start), paged.index_at(max(end - 1, start)) + 1)

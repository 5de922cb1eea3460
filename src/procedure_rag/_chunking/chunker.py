"""The chunker: the pipeline as a short list of passes.

read -> section paths -> units -> blocks -> child chunks -> parents
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from procedure_rag._chunking.assembly import build_children, build_parents, chunk_id, merge_spans
from procedure_rag._chunking.combining import combine_small_sections
from procedure_rag._chunking.cutting import SourceText
from procedure_rag._chunking.lengths import Measure, tiktoken_length
from procedure_rag._chunking.options import ChunkerOptions
from procedure_rag._chunking.packing import Block, pack_section, render_element
from procedure_rag._chunking.sections import iter_with_section_paths
from procedure_rag._chunking.units import Section, iter_sections
from procedure_rag._language.lexicons import LANGUAGE_SAMPLE, Lexicon, detect_language
from procedure_rag._readers.registry import (
    FILE_FORMATS,
    FORMATS,
    TEXT_FORMATS,
    check_size,
    decode_text,
    decode_utf8,
    detect_format,
    iter_file,
    iter_text,
    read_source,
    streams,
)
from procedure_rag._readers.text_window import TextWindow
from procedure_rag._types import Chunk, ChunkLevel, ChunkType, ElementKind, LayoutElement

__all__ = ["ProcedureChunker", "chunk", "iter_chunks", "validate_text"]

_CONTROL = re.compile("[\x00-\x08\x0e-\x1f]")
_SNIFF = 8192


def validate_text(text: str | bytes, *, max_chars: int | None = None) -> str:
    """Return ``text`` as a ``str`` fit for chunking.

    Args:
        text: The document, as ``str`` or UTF-8 ``bytes``.
        max_chars: Most characters it may have (:attr:`ChunkerOptions.max_input_chars`);
            ``None`` means no limit.

    Raises:
        TypeError: When ``text`` is neither ``str`` nor ``bytes``.
        ValueError: When the text is longer than ``max_chars`` (the message names its
            size, the limit and the option), bytes are not valid UTF-8, the text holds
            unpaired surrogates, or it looks like a binary file (NUL or many control
            characters).
    """
    if isinstance(text, bytes | bytearray):
        text = decode_utf8(text, max_chars, what="input")
    if not isinstance(text, str):
        msg = f"text must be str or bytes, got {type(text).__name__}"
        raise TypeError(msg)
    check_size(len(text), max_chars)
    head = text[:_SNIFF]
    if "\x00" in head:
        msg = f"input looks binary: NUL character at offset {head.index(chr(0))}"
        raise ValueError(msg)
    controls = len(_CONTROL.findall(head))
    if head and controls * 10 > len(head):
        msg = f"input looks binary: {controls} control characters in the first {len(head)}"
        raise ValueError(msg)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        msg = f"input holds an unpaired surrogate at offset {exc.start}"
        raise ValueError(msg) from exc
    return text


def check_source_format(source_format: str) -> str:
    """``source_format`` when it is ``"auto"`` or one of :data:`procedure_rag.FORMATS`.

    Raises:
        ValueError: Naming the value and the formats there are.
    """
    if source_format != "auto" and source_format not in FORMATS:
        msg = f"source_format must be 'auto' or one of {', '.join(FORMATS)}, got {source_format!r}"
        raise ValueError(msg)
    return source_format


class ProcedureChunker:
    """Turns a document into procedure-block chunks (children) and their parents.

    Args:
        options: Validated options; the defaults give 400-token children with
            parents, language detected per document.
    """

    def __init__(self, options: ChunkerOptions | None = None) -> None:
        self._options = options or ChunkerOptions()
        self._length: Callable[[str], int] = self._options.length_function or tiktoken_length()
        self._measure = Measure(self._length)
        self._reader_options = self._options.reader_options

    @property
    def options(self) -> ChunkerOptions:
        """The validated options."""
        return self._options

    def length(self, text: str) -> int:
        """Measure ``text`` with the configured length function."""
        return self._length(text)

    def read(self, text: str, *, source_id: str) -> Iterator[LayoutElement]:
        """Yield the layout elements of ``text``, read as the options' ``source_format``."""
        fmt = self._options.source_format
        if fmt == "auto":
            fmt = detect_format(text)
        return iter_text(text, source_id=source_id, fmt=fmt, options=self._reader_options)

    def iter_chunks(self, text: str | bytes, *, source_id: str | None = None) -> Iterator[Chunk]:
        """Yield the chunks of one document.

        Children come in reading order; each parent (when parents are emitted)
        comes right after its last child.

        Args:
            text: The document, as ``str`` or UTF-8 ``bytes``.
            source_id: Id of the document; chunk ids derive from it. ``None`` uses
                a hash of the text.

        Raises:
            ValueError: For unusable input (see :func:`validate_text`). Empty or
                whitespace-only text yields nothing.
        """
        text = validate_text(text, max_chars=self._options.max_input_chars)
        if not text.strip():
            return
        sid = source_id or "sha1:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]  # noqa: S324
        language = self._options.language
        if language == "auto":
            language = detect_language(text)
        yield from self.iter_chunks_from_elements(
            self.read(text, source_id=sid), source_id=sid, language=language, source_text=text
        )

    def iter_chunks_from_source(
        self,
        source: object,
        *,
        source_id: str | None = None,
        source_format: str = "auto",
        suffix: str | None = None,
    ) -> Iterator[Chunk]:
        """Yield the chunks of any source a reader understands.

        Args:
            source: Text or UTF-8 bytes (Markdown, plain text, HTML, reStructuredText),
                a path to such a file or to a PDF, PDF bytes, or a layout parser's
                output: Unstructured elements or their JSON, a Docling document or its
                JSON, Azure Document Intelligence, Google Document AI or Amazon Textract
                layout JSON.
            source_id: Id of the document. A path's default is the path; parser
                output has no default and must be given one.
            source_format: One of :data:`procedure_rag.FORMATS`, or ``"auto"`` to tell
                it from the source (and ``suffix``).
            suffix: A file suffix hint for ``"auto"`` (``".rst"``).

        Raises:
            ValueError: For an unknown format, a source that cannot be read
                (:class:`~procedure_rag.ReaderError` names the record), a source
                over the options' ``max_input_chars`` or ``max_json_depth`` (the
                message names the size and the option), or parser output without
                ``source_id``.
        """
        check_source_format(source_format)
        fmt = detect_format(source, suffix=suffix) if source_format == "auto" else source_format
        if isinstance(source, Path):
            source_id = source_id or str(source)
            size = source.stat().st_size  # a missing file fails here, before anything is read
            if fmt in TEXT_FORMATS:  # a binary file's size says nothing of its text
                check_size(size, self._options.max_input_chars, unit="bytes")
            if not streams(fmt):  # a streaming reader opens the path itself
                source = source.read_bytes()
        if fmt in TEXT_FORMATS:
            if isinstance(source, bytes | bytearray):
                source = decode_text(source, fmt=fmt, max_chars=self._options.max_input_chars)
            if not isinstance(source, str):
                msg = f"a {fmt} source must be text, bytes or a path, got {type(source).__name__}"
                raise TypeError(msg)
            text = validate_text(source, max_chars=self._options.max_input_chars)
            same = fmt == self._options.source_format
            chunker = self if same else ProcedureChunker(replace(self._options, source_format=fmt))
            yield from chunker.iter_chunks(text, source_id=source_id)
            return
        if source_id is None:
            if not isinstance(source, bytes | bytearray):
                msg = f"source_id is required for {fmt} input (it has no name of its own)"
                raise ValueError(msg)
            source_id = "sha1:" + hashlib.sha1(bytes(source)).hexdigest()[:16]  # noqa: S324
        language = self._options.language
        if fmt in FILE_FORMATS:
            # The text comes with the elements and is released section by section: a long
            # PDF is chunked page by page, its text and elements never held whole.
            window = TextWindow()
            elements = iter_file(
                source, source_id=source_id, fmt=fmt, text=window, options=self._reader_options
            )
            yield from self.iter_chunks_from_elements(
                elements,
                source_id=source_id,
                language=None if language == "auto" else language,
                source_text=window,
            )
            return
        read = read_source(source, source_id=source_id, fmt=fmt, options=self._reader_options)
        yield from self.iter_chunks_from_elements(
            read.elements,
            source_id=source_id,
            language=None if language == "auto" else language,
            source_text=read.text,
        )

    def chunk(self, text: str | bytes, *, source_id: str | None = None) -> list[Chunk]:
        """Return :meth:`iter_chunks` as a list."""
        return list(self.iter_chunks(text, source_id=source_id))

    def iter_chunks_from_elements(
        self,
        elements: Iterable[LayoutElement],
        *,
        source_id: str,
        language: str | None = None,
        source_text: str | TextWindow = "",
    ) -> Iterator[Chunk]:
        """Yield chunks from the elements a reader produced.

        Args:
            elements: Layout elements in reading order.
            source_id: Id of the document.
            language: ``"ja"`` or ``"en"``; ``None`` detects it from the source text
                (from the element texts when there is none).
            source_text: The source the element spans point into; needed to map the
                pieces of an over-budget line, and the rows of a table or code block, back
                to it. A streaming reader's :class:`TextWindow` (``elements`` must then
                come in the order of their spans, each one's text written before it
                comes) is released up to the section being packed.

        Elements are read as the chunks are made, section by section, so a huge
        document is never held as elements all at once.
        """
        if language is None or language == "auto":
            language, elements = _detect_language(elements, source_text)
        window = source_text if isinstance(source_text, TextWindow) else None
        lexicon = self._options.lexicons[language]
        pending: list[LayoutElement] = []  # headings of sections that had no text of their own
        held: list[Chunk] = []  # the last section's chunks, yielded once the next section has text
        sections = iter_sections(
            iter_with_section_paths(elements), lexicon, drop_kinds=self._options.drop_kinds
        )
        if self._options.combine_small_sections is not False:
            sections = combine_small_sections(
                sections,
                size=self._section_size,
                budget=lambda path: self._room(path, lexicon),
                inferred_only=self._options.combine_small_sections is None,
            )
        for section in sections:
            if window is not None:
                _release_before(window, section, pending)
            header, shown, header_size = self._header(section.path, lexicon)
            blocks = pack_section(
                section,
                source=source_text,
                budget=self._options.chunk_size,
                measure=self._measure,
                lexicon=lexicon,
                header=header,
                header_size=header_size,
                # Headings the header line does not show whole open the first block,
                # so that their words reach some chunk.
                prefix=[
                    e
                    for e in [*pending, *(e for u in section.units for e in u.carried)]
                    if _is_heading(e) and e.text and e.text not in shown
                ],
            )
            with_lines = []
            for block in blocks:
                if not block.lines:
                    pending.extend(block.carried)
                    continue
                block.carried = pending + block.carried
                pending = []
                with_lines.append(block)
            if not with_lines:
                continue
            yield from held
            children = build_children(
                with_lines,
                section.units,
                source_id=source_id,
                language=language,
                lexicon=lexicon,
                header=header,
                source=source_text,
            )
            held = self._with_parents(
                children,
                header,
                [block.cost() for block in with_lines],
                source=source_text,
                blocks=with_lines,
            )
        yield from held
        if pending:
            yield from self._trailing_chunks(pending, source_id, language, lexicon, source_text)

    def _section_size(self, section: Section) -> int:
        """A section's text as the packer renders it: its elements and the headings its units carry.

        List items with their numbers and indents, notes with their labels: an estimate
        that leaves out what packing adds would let a combined section overflow its
        chunk by a line.
        """
        line = self._measure.line
        depth_of: dict[str, int] = {}
        total = 0
        for u in section.units:
            for e in (*u.carried, *u.elements):
                if not e.text or e.text.isspace():
                    continue
                if e.kind is ElementKind.LIST_ITEM:
                    depth_of[e.element_id] = e.level
                total += line(render_element(e, depth_of))
        return total

    def _room(self, path: tuple[str, ...], lexicon: Lexicon) -> int:
        """What a chunk's lines may take under the header line of ``path``."""
        return self._options.chunk_size - self._header(path, lexicon)[2]

    def _header(self, path: tuple[str, ...], lexicon: Lexicon) -> tuple[str, tuple[str, ...], int]:
        """The heading-path line of a section's chunks, the headings it shows whole, and its size.

        The line takes at most a third of the budget: outer headings give way to
        "…" first, then the innermost heading is cut. Headings it does not show
        whole open the section's first chunk instead (see ``prefix``).
        """
        if not path:
            return "", (), 0
        limit = self._options.chunk_size // 3
        label = f"{lexicon.section_label}: "
        full = label + " > ".join(path)
        size = self._measure.line(full)
        if size <= limit:
            return full, path, size
        inner = f"{label}… > {path[-1]}" if len(path) > 1 else label + path[-1]
        size = self._measure.line(inner)
        if size <= limit:
            return inner, path[-1:], size
        lo, hi = 0, len(path[-1])
        while lo < hi:  # the longest prefix of the innermost heading that fits
            mid = (lo + hi + 1) // 2
            if self._measure.line(f"{label}{path[-1][:mid]}…") <= limit:
                lo = mid
            else:
                hi = mid - 1
        cut = f"{label}{path[-1][:lo]}…"
        return cut, (), self._measure.line(cut)

    def _with_parents(
        self,
        children: Sequence[Chunk],
        header: str,
        costs: Sequence[int],
        *,
        source: SourceText | None = None,
        blocks: Sequence[Block] | None = None,
    ) -> list[Chunk]:
        if not self._options.emit_parents:
            return list(children)
        out: list[Chunk] = []
        for parent, members in build_parents(
            children,
            header=header,
            budget=self._options.effective_parent_chunk_size,
            max_children=self._options.max_children_per_parent,
            length_of_body=costs,
            source=source,
            blocks=blocks,
        ):
            out.extend(members)
            out.append(parent)
        return out

    def _trailing_chunks(
        self,
        pending: list[LayoutElement],
        source_id: str,
        language: str,
        lexicon: Lexicon,
        source: SourceText,
    ) -> list[Chunk]:
        """A chunk for headings (and markup) after the last text: their words must reach some chunk."""
        path = next((e.section_path for e in reversed(pending) if e.section_path), ())
        headings = [e.text for e in pending if _is_heading(e) and e.text]
        header = f"{lexicon.section_label}: {' > '.join(path)}" if path else lexicon.section_label
        text = "\n".join([header, *(h for h in headings if h not in path)])
        spans = merge_spans([e.span for e in pending], source)
        child = Chunk(
            chunk_id=chunk_id(source_id, ChunkLevel.CHILD, spans[0].start if spans else 0, text),
            text=text,
            chunk_type=ChunkType.TEXT,
            level=ChunkLevel.CHILD,
            section_path=path,
            source_id=source_id,
            language=language,
            source_spans=spans,
            element_ids=tuple(e.element_id for e in pending),
        )
        return self._with_parents([child], header, [self._length(text)], source=source)


def _is_heading(el: LayoutElement) -> bool:
    return el.kind in (ElementKind.SECTION_HEADER, ElementKind.TITLE)


def _detect_language(
    elements: Iterable[LayoutElement], source_text: str | TextWindow
) -> tuple[str, Iterable[LayoutElement]]:
    """The document's language, from the head of its text, and the elements still to be read.

    A streaming reader's window is read into until it holds the sample
    :func:`detect_language` takes (or the elements run out), so the answer is the one
    the whole text gives.
    """
    if isinstance(source_text, str) and source_text:
        return detect_language(source_text), elements
    stream = iter(elements)
    head: list[LayoutElement] = []
    if isinstance(source_text, TextWindow):
        for element in stream:
            head.append(element)
            if len(source_text) >= LANGUAGE_SAMPLE:
                break
        if len(source_text):
            return detect_language(source_text[0:LANGUAGE_SAMPLE]), itertools.chain(head, stream)
    head.extend(itertools.islice(stream, max(0, 200 - len(head))))
    return detect_language("\n".join(e.text for e in head[:200])), itertools.chain(head, stream)


def _release_before(window: TextWindow, section: Section, pending: list[LayoutElement]) -> None:
    """Release the window's text before the first span this section or a pending heading may need.

    Elements come in the order of their spans, so what later sections hold lies after
    this section's first element.
    """
    starts = [
        e.span.start
        for e in itertools.chain(pending, (e for u in section.units for e in (*u.carried, *u.elements)))
        if e.span is not None
    ]
    if starts:
        window.release(min(starts))


def iter_chunks(
    text: str | bytes, *, source_id: str | None = None, options: ChunkerOptions | None = None
) -> Iterator[Chunk]:
    """Yield the chunks of ``text``; see :meth:`ProcedureChunker.iter_chunks`."""
    return ProcedureChunker(options).iter_chunks(text, source_id=source_id)


def chunk(
    text: str | bytes, *, source_id: str | None = None, options: ChunkerOptions | None = None
) -> list[Chunk]:
    """Return the chunks of ``text`` as a list."""
    return list(iter_chunks(text, source_id=source_id, options=options))

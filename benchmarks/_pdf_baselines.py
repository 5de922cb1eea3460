"""The methods that read files (PDF, Word) for ``benchmarks/retrieval.py``, and what they skip.

Baselines are what a LangChain or LlamaIndex user does with the frameworks' own loaders:

- ``langchain-pypdf-recursive``: ``PyPDFLoader(path).load()`` (one document per page), then
  ``RecursiveCharacterTextSplitter.from_tiktoken_encoder`` (400 / 80, default separators).
- ``llamaindex-pages-sentence``: one LlamaIndex ``Document`` per page with the text and the
  metadata ``PDFReader`` of llama-index-readers-file gives (``page_label``, ``file_name``;
  its recipe: pypdf's ``extract_text()`` per page), then ``SentenceSplitter`` (400 / 80),
  embedded with the metadata (LlamaIndex's default). The recipe is rebuilt rather than the
  reader called so that the baseline's figures do not depend on which extras are installed:
  llama-index-readers-file 0.7 requires ``pypdf<7``, and only the test extra installs it
  (for ``SimpleDirectoryReader``'s PDF pages in the framework tests).
- ``langchain-docx2txt-recursive``: ``Docx2txtLoader(path).load()``, then the same recursive
  splitter.
- ``llamaindex-pandas-excel-sentence``: ``SimpleDirectoryReader``'s default for ``.xlsx``,
  llama-index-readers-file's ``PandasExcelReader`` (each sheet one document, a line per row,
  ``header: value, …``), then ``SentenceSplitter`` (400 / 80), embedded with the metadata.

Ours, through the product's public paths, so the figures follow the reader:

- ``procedure-rag-file``: ``ProcedureChunker.iter_chunks_from_source(path)`` (the file read
  by the product's own reader), multi-vector retrieval with default options.
- ``procedure-rag-pypdfloader``: the one-line swap,
  ``ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400).split_documents(PyPDFLoader(path).load())``.
- ``procedure-rag-docx2txt``: the same swap for a Word user,
  ``….split_documents(Docx2txtLoader(path).load())`` (docx2txt drops Word's automatic list
  numbers and heading styles: the text is one paragraph per line pair).
- ``procedure-rag-pandas-excel``: the one-line swap for an Excel user of LlamaIndex:
  ``ProcedureNodeParser(chunk_size=400).get_nodes_from_documents(…)`` on ``PandasExcelReader``'s
  documents (the parser reads the rows back into cells and the sheet as the Excel reader does).
- ``procedure-rag-loader``: the loader swapped instead, ``ProcedureLoader(path, splitter=…).load()``
  (the file read by the product's reader, through LangChain).

The file methods of ours read PDF, Word and Excel (``.xlsx``) files; the swaps read the formats
of their loader.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from _pdf_structure import ChunkView, corpus_facts, structure_figures
from _retrieval_eval import Source

__all__ = [
    "FILES",
    "FILE_SKIPPED",
    "file_methods",
    "ours_file_documents",
]

ENCODING = "cl100k_base"
PDF = frozenset({"pdf"})
DOCX = frozenset({"docx"})
XLSX = frozenset({"xlsx"})
FILES = PDF | DOCX | XLSX

#: Baselines the issue names that do not run here, and why.
FILE_SKIPPED = [
    {
        "method": "unstructured-partition-pdf-fast-chunk-by-title",
        "reason": "partition_pdf imports unstructured_inference and pdfminer.six at module load, even for "
        "strategy='fast'; unstructured's [pdf] extra brings them with torch, transformers, onnx, opencv and "
        "the CUDA wheels (several GB) and pins pypdf below 7, which would replace the pypdf this project "
        "reads PDFs with. Not installed.",
    },
    {
        "method": "llamaindex-pdfreader (llama-index-readers-file)",
        "reason": "requires pypdf<7, and only the test extra installs it; its PDFReader recipe (pypdf "
        "extract_text per page, metadata page_label and file_name) is rebuilt in llamaindex-pages-sentence, "
        "whatever extras are installed.",
    },
]


def _path(source: Source) -> Path:
    if source.path is None:
        msg = f"{source.doc}: a file method needs the file's path"
        raise ValueError(msg)
    return source.path


def _recursive(settings: Any) -> Any:  # noqa: ANN401 - a LangChain splitter
    from langchain_text_splitters import RecursiveCharacterTextSplitter  # noqa: PLC0415

    from procedure_rag._chunking.lengths import llama_index_tiktoken_cache  # noqa: PLC0415

    # LangChain's splitter asks tiktoken, which reads TIKTOKEN_CACHE_DIR: point it at the
    # files llama-index-core ships (this benchmark process only; the package never sets it).
    cache_dir = llama_index_tiktoken_cache()
    if cache_dir is not None:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache_dir))
    return RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=ENCODING, chunk_size=settings.chunk_size, chunk_overlap=settings.chunk_overlap
    )


def _pypdf_pages(source: Source) -> list[Any]:
    from langchain_community.document_loaders import PyPDFLoader  # noqa: PLC0415

    pages = PyPDFLoader(str(_path(source))).load()
    for page in pages:  # the benchmark's document id; a path in metadata is never read again
        page.metadata["source"] = source.doc
    return pages


def split_langchain_pypdf(source: Source, settings: Any) -> list[tuple[str, str]]:  # noqa: ANN401
    return [
        (d.page_content, d.page_content) for d in _recursive(settings).split_documents(_pypdf_pages(source))
    ]


def split_langchain_docx2txt(source: Source, settings: Any) -> list[tuple[str, str]]:  # noqa: ANN401
    from langchain_community.document_loaders import Docx2txtLoader  # noqa: PLC0415

    documents = Docx2txtLoader(str(_path(source))).load()
    return [(d.page_content, d.page_content) for d in _recursive(settings).split_documents(documents)]


def split_llama_pages(source: Source, settings: Any) -> list[tuple[str, str]]:  # noqa: ANN401
    from llama_index.core import Document  # noqa: PLC0415
    from llama_index.core.node_parser import SentenceSplitter  # noqa: PLC0415
    from llama_index.core.schema import MetadataMode  # noqa: PLC0415
    from pypdf import PdfReader  # noqa: PLC0415

    path = _path(source)
    reader = PdfReader(path)
    documents = [
        Document(
            text=page.extract_text(),
            metadata={"page_label": reader.page_labels[i], "file_name": path.name},
        )
        for i, page in enumerate(reader.pages)
    ]
    parser = SentenceSplitter(chunk_size=settings.chunk_size, chunk_overlap=settings.chunk_overlap)
    nodes = parser.get_nodes_from_documents(documents)
    return [(n.get_content(MetadataMode.NONE), n.get_content(MetadataMode.EMBED)) for n in nodes]


def _pandas_excel(source: Source) -> list[Any]:
    """``PandasExcelReader``'s documents of a workbook (SimpleDirectoryReader's default for ``.xlsx``)."""
    from llama_index.readers.file import PandasExcelReader  # noqa: PLC0415 - the test extra

    return PandasExcelReader().load_data(_path(source), extra_info={"file_name": source.doc})


def split_llama_pandas_excel(source: Source, settings: Any) -> list[tuple[str, str]]:  # noqa: ANN401
    from llama_index.core.node_parser import SentenceSplitter  # noqa: PLC0415
    from llama_index.core.schema import MetadataMode  # noqa: PLC0415

    parser = SentenceSplitter(chunk_size=settings.chunk_size, chunk_overlap=settings.chunk_overlap)
    nodes = parser.get_nodes_from_documents(_pandas_excel(source))
    return [(n.get_content(MetadataMode.NONE), n.get_content(MetadataMode.EMBED)) for n in nodes]


def ours_pandas_excel_documents(sources: Sequence[Source], settings: Any) -> list[tuple[str, dict[str, Any]]]:  # noqa: ANN401
    """The one-line swap for Excel in LlamaIndex: our node parser on ``PandasExcelReader``'s documents."""
    from llama_index_procedures import ProcedureNodeParser  # noqa: PLC0415

    # cl100k tokens (LlamaIndex's global tokenizer), parents emitted: as the other swaps.
    parser = ProcedureNodeParser(chunk_size=settings.chunk_size, emit_parents=True)
    documents = []
    for source in sources:
        for document in _pandas_excel(source):
            document.metadata["source"] = source.doc  # the benchmark's id; a .xlsx name
            documents.append(document)
    return [(n.get_content(), dict(n.metadata)) for n in parser.get_nodes_from_documents(documents)]


def ours_file_documents(sources: Sequence[Source], settings: Any) -> list[tuple[str, dict[str, Any]]]:  # noqa: ANN401
    """Our chunks (children and parents) of each file, read by the product from its path."""
    from procedure_rag import ChunkerOptions, ProcedureChunker, chunk_metadata  # noqa: PLC0415

    chunker = ProcedureChunker(
        ChunkerOptions(chunk_size=settings.chunk_size, length_function=settings.our_length())
    )
    return [
        (chunk.text, chunk_metadata(chunk, {"source": source.doc}))
        for source in sources
        for chunk in chunker.iter_chunks_from_source(_path(source), source_id=source.doc)
    ]


def ours_pypdfloader_documents(sources: Sequence[Source], settings: Any) -> list[tuple[str, dict[str, Any]]]:  # noqa: ANN401
    """The one-line swap: our splitter on ``PyPDFLoader``'s page documents."""
    pages = [page for source in sources for page in _pypdf_pages(source)]
    return [(d.page_content, dict(d.metadata)) for d in _swap_splitter(settings).split_documents(pages)]


def _swap_splitter(settings: Any) -> Any:  # noqa: ANN401
    """Our splitter as the swaps use it: tiktoken's budget, parents emitted (as the file method's)."""
    from langchain_procedures import ProcedureTextSplitter  # noqa: PLC0415

    return ProcedureTextSplitter.from_tiktoken_encoder(
        encoding_name=ENCODING, chunk_size=settings.chunk_size, emit_parents=True
    )


def _named(source: Source, documents: Iterable[Any]) -> Iterator[Any]:
    """``documents`` with ``source`` the benchmark's document id, as for the pages."""
    for document in documents:
        document.metadata["source"] = source.doc
        yield document


def ours_docx2txt_documents(sources: Sequence[Source], settings: Any) -> list[tuple[str, dict[str, Any]]]:  # noqa: ANN401
    """The one-line swap for Word: our splitter on ``Docx2txtLoader``'s document."""
    from langchain_community.document_loaders import Docx2txtLoader  # noqa: PLC0415

    documents = [d for s in sources for d in _named(s, Docx2txtLoader(str(_path(s))).load())]
    return [(d.page_content, dict(d.metadata)) for d in _swap_splitter(settings).split_documents(documents)]


def ours_loader_documents(sources: Sequence[Source], settings: Any) -> list[tuple[str, dict[str, Any]]]:  # noqa: ANN401
    """The loader swapped in: ``ProcedureLoader`` reads each file, the splitter's options chunk it."""
    from langchain_procedures import ProcedureLoader  # noqa: PLC0415

    splitter = _swap_splitter(settings)
    return [
        (d.page_content, dict(d.metadata))
        for s in sources
        for d in _named(s, ProcedureLoader(_path(s), splitter=splitter).lazy_load())
    ]


def view_of(text: str, metadata: Mapping[str, Any] | None, doc: str) -> ChunkView:
    """What the structure figures read of one chunk (ours: with its page, path and steps)."""
    if metadata is None:
        return ChunkView(doc, text)
    from procedure_rag import read_metadata  # noqa: PLC0415

    meta = read_metadata(metadata)
    steps = tuple((str(s.get("action") or ""), s.get("page")) for s in meta.get("steps") or ())
    page = meta.get("page")
    return ChunkView(
        str(meta.get("source", doc)),
        text,
        page=int(page) if page is not None else None,
        section_path=tuple(meta.get("section_path") or ()),
        steps=steps,
    )


def describe_pdf(sources: Sequence[Source], views: Sequence[ChunkView]) -> dict[str, Any]:
    """Structure figures of a method's chunks over a corpus of PDFs (see ``_pdf_structure``)."""
    facts = corpus_facts([_path(s) for s in sources])
    by_doc = {s.doc: facts[_path(s)] for s in sources}
    figures = structure_figures(views, by_doc)
    figures["documents"] = {
        "outlined": sum(1 for f in by_doc.values() if f.outline),
        "with_running_lines": sum(1 for f in by_doc.values() if f.running),
        "with_toc": sum(1 for f in by_doc.values() if f.toc_entries),
        "toc_entries": sum(f.toc_entries for f in by_doc.values()),
        "running_lines": sorted({r for f in by_doc.values() for r in f.running})[:8],
    }
    return figures


Describe = Callable[[Sequence[Source], Sequence[ChunkView]], dict[str, Any]]


def file_methods(settings: Any, *, flat: Callable[..., Any], ours: Callable[..., Any]) -> list[Any]:  # noqa: ANN401
    """The PDF and Word methods, built with ``retrieval.py``'s ``flat_method`` and ``ours_method``."""
    size, overlap = settings.chunk_size, settings.chunk_overlap
    budget = f"{size} tokens, overlap {overlap}"
    return [
        flat(
            "langchain-pypdf-recursive",
            f"LangChain PyPDFLoader pages, RecursiveCharacterTextSplitter.from_tiktoken_encoder, {budget}",
            split_langchain_pypdf,
            formats=PDF,
            describe=describe_pdf,
        ),
        flat(
            "llamaindex-pages-sentence",
            "pypdf pages as LlamaIndex Documents (PDFReader's text and metadata), SentenceSplitter, "
            f"{budget}; embedded with the metadata (LlamaIndex's default)",
            split_llama_pages,
            formats=PDF,
            describe=describe_pdf,
        ),
        flat(
            "langchain-docx2txt-recursive",
            f"LangChain Docx2txtLoader, RecursiveCharacterTextSplitter.from_tiktoken_encoder, {budget}",
            split_langchain_docx2txt,
            formats=DOCX,
        ),
        flat(
            "llamaindex-pandas-excel-sentence",
            "SimpleDirectoryReader's default for .xlsx (PandasExcelReader: a document per sheet, a line "
            f"per row as 'header: value, …'), SentenceSplitter, {budget}; embedded with the metadata",
            split_llama_pandas_excel,
            formats=XLSX,
        ),
        ours(
            "procedure-rag-file",
            f"ProcedureChunker.iter_chunks_from_source(path) ({size} tokens): the product's reader on the "
            "file; multi-vector, core retrieve() with default options",
            documents=ours_file_documents,
            formats=FILES,
            describe=lambda sources, views: describe_pdf(sources, views) if _all_pdf(sources) else {},
        ),
        ours(
            "procedure-rag-file-context-800",
            "as procedure-rag-file, each hit with the parts of its section that carry a caution or a "
            "condition, then the other parts of its list, within 800 tokens (procedure-aware context)",
            documents=ours_file_documents,
            formats=FILES,
            context_budget=800,
        ),
        ours(
            "procedure-rag-pypdfloader",
            "the one-line swap: ProcedureTextSplitter.from_tiktoken_encoder(chunk_size="
            f"{size}).split_documents(PyPDFLoader(path).load()); multi-vector, default options",
            documents=ours_pypdfloader_documents,
            formats=PDF,
            describe=describe_pdf,
        ),
        ours(
            "procedure-rag-docx2txt",
            "the one-line swap for Word: ProcedureTextSplitter.from_tiktoken_encoder(chunk_size="
            f"{size}).split_documents(Docx2txtLoader(path).load()); multi-vector, default options",
            documents=ours_docx2txt_documents,
            formats=DOCX,
        ),
        ours(
            "procedure-rag-pandas-excel",
            "the one-line swap for Excel in LlamaIndex: ProcedureNodeParser(chunk_size="
            f"{size}).get_nodes_from_documents(PandasExcelReader().load_data(path)); multi-vector, "
            "default options",
            documents=ours_pandas_excel_documents,
            formats=XLSX,
        ),
        ours(
            "procedure-rag-loader",
            "the loader swapped instead: ProcedureLoader(path, splitter=ProcedureTextSplitter."
            f"from_tiktoken_encoder(chunk_size={size}, emit_parents=True)).load(); multi-vector, "
            "default options",
            documents=ours_loader_documents,
            formats=FILES,
            describe=lambda sources, views: describe_pdf(sources, views) if _all_pdf(sources) else {},
        ),
    ]


def _all_pdf(sources: Sequence[Source]) -> bool:
    return all(s.fmt == "pdf" for s in sources)


def structure_json(figures: Mapping[str, Any]) -> str:
    """One line of the figures, for the log."""
    keys = ("chunks", "chunks_with_running_lines", "toc_steps", "outlined_chunks", "section_path_right")
    return json.dumps({k: figures[k] for k in keys if k in figures}, ensure_ascii=False)

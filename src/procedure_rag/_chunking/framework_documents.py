"""Framework documents (LangChain ``Document``s, LlamaIndex nodes) grouped into sources and chunked.

Unstructured loaders give one framework document per element
(``UnstructuredLoader(mode="elements")``, LlamaIndex's ``UnstructuredReader``); other
loaders give one document per file. :func:`iter_record_groups` groups a stream of
them: each run of element documents of one file becomes one source, read by the
Unstructured reader (:func:`procedure_rag._readers.unstructured.iter_records`);
every other document stands alone. :func:`iter_document_chunks` chunks one group.
Both adapters call these two, so that they group and read documents alike.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from procedure_rag._readers.registry import FORMATS, SUFFIXES, check_size
from procedure_rag._readers.unstructured import ELEMENT_METADATA_KEYS, is_element_metadata, iter_records

if TYPE_CHECKING:
    from procedure_rag._chunking.chunker import ProcedureChunker
    from procedure_rag._types import Chunk

__all__ = ["RecordGroup", "format_hint", "iter_document_chunks", "iter_record_groups"]

_T = TypeVar("_T")

#: Metadata keys naming the file a document came from, in order of preference.
_SOURCE_KEYS = ("source", "file_path", "filename")


@dataclass(frozen=True, slots=True)
class RecordGroup(Generic[_T]):
    """Consecutive framework documents read as one source.

    Attributes:
        items: The documents, in order.
        element_wise: True for a run of Unstructured element documents of one file;
            False for one whole-text document.
        source: The file they came from (``source``, ``file_path`` or ``filename``
            metadata), when stated.
        metadata: Metadata every document of the group shares, element-only keys
            (:data:`ELEMENT_METADATA_KEYS`) left out; a whole-text document's own.
    """

    items: tuple[_T, ...]
    element_wise: bool
    source: str | None
    metadata: dict[str, Any]


def _source_of(metadata: Mapping[str, Any]) -> str | None:
    for key in _SOURCE_KEYS:
        value = metadata.get(key)
        if isinstance(value, str | PurePath) and str(value):
            return str(value)
    return None


def _shared(metadatas: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    first = metadatas[0]
    return {
        key: value
        for key, value in first.items()
        if key not in ELEMENT_METADATA_KEYS and all(key in m and m[key] == value for m in metadatas[1:])
    }


def iter_record_groups(
    items: Iterable[_T], metadata: Callable[[_T], Mapping[str, Any]]
) -> Iterator[RecordGroup[_T]]:
    """Group framework documents: runs of element documents of one file, and whole-text ones.

    Args:
        items: Documents (or nodes) in order.
        metadata: Gives an item's metadata.

    Yields:
        One group per run of consecutive element documents with the same source, and
        one per other document, in input order.
    """
    run: list[_T] = []
    run_meta: list[Mapping[str, Any]] = []

    def flush() -> Iterator[RecordGroup[_T]]:
        if run:
            yield RecordGroup(tuple(run), True, _source_of(run_meta[0]), _shared(run_meta))
            run.clear()
            run_meta.clear()

    for item in items:
        meta = metadata(item)
        if is_element_metadata(meta):
            if run_meta and _source_of(run_meta[0]) != _source_of(meta):
                yield from flush()
            run.append(item)
            run_meta.append(meta)
            continue
        yield from flush()
        yield RecordGroup((item,), False, _source_of(meta), dict(meta))
    yield from flush()


def format_hint(metadata: Mapping[str, Any]) -> tuple[str, str | None]:
    """The format a whole-text document's metadata names: ``(source_format, suffix)``.

    A ``source_format`` key naming one of :data:`procedure_rag.FORMATS` wins; else
    the suffix of ``source``, ``file_path`` or ``filename`` when it is a known one
    (``".rst"``); else ``("auto", None)``.
    """
    named = metadata.get("source_format")
    if isinstance(named, str) and named in FORMATS:
        return named, None
    source = _source_of(metadata)
    suffix = PurePath(source).suffix.lower() if source else ""
    return ("auto", suffix) if suffix in SUFFIXES else ("auto", None)


def iter_document_chunks(
    chunker: ProcedureChunker,
    documents: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    element_wise: bool,
    source_id: str | None,
) -> Iterator[Chunk]:
    """Yield the chunks of one group of framework documents (see :func:`iter_record_groups`).

    Args:
        chunker: The chunker to use.
        documents: ``(text, metadata)`` of the group's documents.
        element_wise: Read the documents as the Unstructured elements of one source
            (:func:`iter_records`). Otherwise ``documents`` is one whole-text
            document, read as the chunker's ``source_format`` when the user named
            one, else as its metadata names it (:func:`format_hint`), else as the
            text itself says.
        source_id: Id of the source; ``None`` hashes the texts.

    Raises:
        ValueError: For unusable text or records (:class:`ReaderError` names the record),
            or documents over the options' ``max_input_chars`` (an element-wise group
            counts the characters of all its elements).
    """
    if element_wise:
        check_size(sum(len(text) for text, _ in documents), chunker.options.max_input_chars)
        sid = (
            source_id
            or "sha1:"
            + hashlib.sha1(  # noqa: S324 - an id, not security
                "\x1e".join(text for text, _ in documents).encode("utf-8")
            ).hexdigest()[:16]
        )
        yield from chunker.iter_chunks_from_elements(iter_records(documents, source_id=sid), source_id=sid)
        return
    ((text, metadata),) = documents
    if chunker.options.source_format != "auto":
        yield from chunker.iter_chunks(text, source_id=source_id)
        return
    fmt, suffix = format_hint(metadata)
    yield from chunker.iter_chunks_from_source(text, source_id=source_id, source_format=fmt, suffix=suffix)

"""Writing a multi-vector index: raw chunks in the docstore, representations in a vector store.

The lifecycle lives here, once, for both adapters. :func:`write_chunks` files chunks by
source; for each source it

1. deletes what an earlier run left behind (stale vectors, and pending vectors of a
   write that died part way), except vectors this call writes again,
2. records the vectors it is about to write (pending), writes the new ones to the
   vector store, each replacing (metadata included) what its id held (vectors already
   live for an unchanged chunk are not written again, and a text the source's vectors
   held before is not embedded again: its vector comes from the ledger),
3. commits the source's chunks and live vectors to the docstore in one transaction,
4. deletes the source's vectors that are no longer wanted.

Sources are written in groups (:data:`WRITE_GROUP` vectors, or one larger source): the
group's sources are locked together, their vectors go to the vector store in one
``add`` (a vector store call costs tens of milliseconds whatever it holds, and a manual
library has thousands of small documents), then each source commits on its own.

So re-adding a document replaces its chunks and vectors, nothing stale stays, nothing
is duplicated (ids are stable), and a run killed at any point is completed by the next.
The vector store is reached through :class:`VectorBackend`, which each adapter
implements over its framework's stores.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Protocol

from procedure_rag._metadata import (
    JSON_KEYS,
    chunk_from_metadata,
    document_value,
    is_filter_key,
    same_metadata,
)
from procedure_rag._representations.offline.generator import generate_representations
from procedure_rag._representations.types import Representation
from procedure_rag._store.docstore import Docstore
from procedure_rag._store.records import StoredChunk, StoreValue
from procedure_rag._types import Chunk, ChunkLevel

__all__ = [
    "FILTER_EXCLUDED_KEYS",
    "IndexReport",
    "RepresentationSource",
    "VectorBackend",
    "VectorRecord",
    "delete_chunks",
    "delete_sources",
    "filter_metadata",
    "make_representations",
    "stored_chunk",
    "vector_records",
    "write_chunks",
]

#: Chunk metadata keys not copied onto vectors: structure the docstore keeps (JSON
#: lists, long texts); every other scalar key (``source``, ``language``, ``section``,
#: ``has_condition``…, and the document's own keys) is there for store filters, and so
#: is ``step_numbers`` (a short JSON list a callable filter can read).
FILTER_EXCLUDED_KEYS = frozenset(
    {*JSON_KEYS, "schema_version", "chunk_id", "condition", "lead_in"} - {"step_numbers"}
)

#: Longer string values are not copied onto vectors (filters compare short values).
_MAX_FILTER_VALUE = 512

#: Vectors a group of sources sends the vector store in one ``add`` (a larger source goes alone).
WRITE_GROUP = 512

#: Either representations made already, or a callable that makes them for chunks.
RepresentationSource = Sequence[Representation] | Callable[[Sequence[Chunk]], Sequence[Representation]]


@dataclass(frozen=True, slots=True)
class VectorRecord:
    """One representation as a vector store keeps it.

    Attributes:
        vector_id: The representation's stable id (the store's id).
        text: The text to embed and store.
        metadata: Flat metadata: the chunk's filter keys, then ``doc_id`` (or the
            caller's id key), ``representation`` (the kind) and the representation's own.
    """

    vector_id: str
    text: str
    metadata: Mapping[str, StoreValue]

    @property
    def kind(self) -> str:
        """The representation kind."""
        return str(self.metadata.get("representation", "raw"))


class VectorBackend(Protocol):
    """What the writer needs from a vector store; each adapter implements it."""

    def add(
        self, records: Sequence[VectorRecord], *, known: Mapping[str, Sequence[float]] | None = None
    ) -> Sequence[Sequence[float]] | None:
        """Embed and store ``records``, each replacing the record with its id (metadata included).

        The writer relies on it: what a killed run left under an id this run writes
        again is not deleted first (see :func:`write_chunks`). ``known`` holds vectors by
        text that the index holds already (the same model made them): a backend that
        embeds may take them instead of embedding those texts again.

        Returns:
            The embeddings, in the order of ``records``, when the backend made them
            itself (the ledger keeps them for exact re-scoring); ``None`` when the store
            embedded them out of sight.
        """

    def delete(self, ids: Sequence[str]) -> None:
        """Delete the vectors with ``ids`` (ids not stored are ignored)."""


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one :func:`write_chunks` (or delete) call did.

    Attributes:
        sources: The sources written, in first-seen order.
        chunks_added: Chunks stored for the first time.
        chunks_updated: Chunks whose text or metadata changed.
        chunks_kept: Chunks stored before and unchanged.
        chunks_removed: Chunks of those sources that are gone.
        vectors_added: Vectors written (embedded) by this call.
        vectors_kept: Vectors already live for unchanged chunks, not embedded again.
        vectors_removed: Vectors deleted from the vector store (stale ones, and ones a
            crashed run left behind).
    """

    sources: tuple[str, ...] = ()
    chunks_added: int = 0
    chunks_updated: int = 0
    chunks_kept: int = 0
    chunks_removed: int = 0
    vectors_added: int = 0
    vectors_kept: int = 0
    vectors_removed: int = 0

    def __add__(self, other: IndexReport) -> IndexReport:
        return IndexReport(
            sources=self.sources + tuple(s for s in other.sources if s not in self.sources),
            chunks_added=self.chunks_added + other.chunks_added,
            chunks_updated=self.chunks_updated + other.chunks_updated,
            chunks_kept=self.chunks_kept + other.chunks_kept,
            chunks_removed=self.chunks_removed + other.chunks_removed,
            vectors_added=self.vectors_added + other.vectors_added,
            vectors_kept=self.vectors_kept + other.vectors_kept,
            vectors_removed=self.vectors_removed + other.vectors_removed,
        )


def stored_chunk(text: str, metadata: Mapping[str, object], *, position: int = 0) -> StoredChunk:
    """A framework document (text and metadata) as the docstore keeps it.

    Args:
        text: The chunk text.
        metadata: Its metadata, as ``chunk_metadata`` wrote it (through a splitter or
            node parser of this package).
        position: The document's position in the caller's list, for messages.

    Raises:
        ValueError: When the metadata has no ``chunk_id`` (the document was not split by
            this package) or a value is not a scalar; the message names the position.
    """
    chunk_id = metadata.get("chunk_id")
    if not isinstance(chunk_id, str) or not chunk_id:
        msg = (
            f"document {position} has no 'chunk_id' in its metadata: split documents with "
            "ProcedureTextSplitter (LangChain) or ProcedureNodeParser (LlamaIndex) before indexing them"
        )
        raise ValueError(msg)
    try:
        stored = {key: value for key, raw in metadata.items() if (value := document_value(raw)) is not None}
        return StoredChunk(chunk_id, text, stored)
    except ValueError as exc:
        msg = f"document {position}: {exc}"
        raise ValueError(msg) from exc


def filter_metadata(chunk: StoredChunk) -> dict[str, StoreValue]:
    """The chunk metadata every vector of the chunk carries, for store filters.

    Keys a store would read as an operator or refuses (``$or``, ``#document``,
    ``chroma:…``; see :func:`~procedure_rag._metadata.is_filter_key`) stay in the
    docstore only: a document's metadata is data, and never part of a filter.
    """
    return {
        key: value
        for key, value in chunk.metadata.items()
        if key not in FILTER_EXCLUDED_KEYS
        and is_filter_key(key)
        and not (isinstance(value, str) and len(value) > _MAX_FILTER_VALUE)
    }


def vector_records(
    representations: Iterable[Representation],
    chunks_by_id: Mapping[str, StoredChunk],
    *,
    id_key: str = "doc_id",
) -> list[VectorRecord]:
    """One record per representation, with its chunk's filter metadata.

    Raises:
        ValueError: When a representation points at a chunk not in ``chunks_by_id``.
    """
    records: list[VectorRecord] = []
    seen: set[str] = set()
    for rep in representations:
        chunk = chunks_by_id.get(rep.chunk_id)
        if chunk is None:
            msg = (
                f"a {rep.kind.value} representation points at chunk {rep.chunk_id!r}, "
                "which is not being indexed"
            )
            raise ValueError(msg)
        if rep.representation_id in seen:
            continue
        seen.add(rep.representation_id)
        metadata: dict[str, StoreValue] = {
            **filter_metadata(chunk),
            **rep.store_metadata(),  # type: ignore[dict-item] # store_metadata holds scalars only
        }
        metadata[id_key] = rep.chunk_id
        records.append(VectorRecord(rep.representation_id, rep.text, metadata))
    return records


def write_chunks(
    chunks: Sequence[StoredChunk],
    *,
    store: Docstore,
    backend: VectorBackend,
    representations: RepresentationSource | None = None,
    id_key: str = "doc_id",
) -> IndexReport:
    """Index ``chunks``: each source present becomes exactly these chunks and their vectors.

    Parent chunks go to the docstore only (parent expansion reads them); child chunks get
    representations. A source's chunks must all come in one call: the chunks of a
    source already indexed that are not in ``chunks`` are removed.

    Args:
        chunks: The chunks, any number of sources, document order within each.
        store: The docstore and vector ledger.
        backend: The vector store.
        representations: Representations made already (for these chunks), or a callable
            making them from core chunks; ``None`` for the deterministic generators.
        id_key: The vector metadata key naming the raw chunk.

    Returns:
        What was added, kept and removed.

    Raises:
        ValueError: When a chunk occurs twice or a given representation points at a
            chunk not among ``chunks``. Nothing is written then.
    """
    by_id: dict[str, StoredChunk] = {}
    by_source: dict[str, list[StoredChunk]] = {}
    for chunk in chunks:
        if chunk.chunk_id in by_id:
            msg = f"chunk {chunk.chunk_id!r} occurs twice"
            raise ValueError(msg)
        by_id[chunk.chunk_id] = chunk
        by_source.setdefault(chunk.source_id, []).append(chunk)
    reps = make_representations(chunks, representations)
    records = vector_records(reps, by_id, id_key=id_key)
    records_by_source: dict[str, list[VectorRecord]] = {}
    for record in records:
        records_by_source.setdefault(by_id[str(record.metadata[id_key])].source_id, []).append(record)

    # Leftovers this call writes again are replaced by the write, not deleted first.
    report = IndexReport(vectors_removed=_clean(store, backend, keep={r.vector_id for r in records}))
    reuse = _Reuse(Counter(r.text for r in records))
    for group in _groups(by_source, records_by_source):
        report += _write_group(
            [
                _Source(source_id, by_source[source_id], records_by_source.get(source_id, []))
                for source_id in group
            ],
            store=store,
            backend=backend,
            id_key=id_key,
            reuse=reuse,
        )
    return report


def delete_sources(source_ids: Iterable[str], *, store: Docstore, backend: VectorBackend) -> IndexReport:
    """Remove every chunk and vector of ``source_ids`` (unknown ones are ignored)."""
    report = IndexReport(vectors_removed=_clean(store, backend))
    for source_id in dict.fromkeys(source_ids):
        with store.writing(source_id):
            commit = store.commit_source(source_id, [], {})
            _delete_vectors(store, backend, commit.stale_vectors)
        report += IndexReport(
            sources=(source_id,),
            chunks_removed=len(commit.chunks.removed),
            vectors_removed=len(commit.stale_vectors),
        )
    return report


def check_delete_selector(source_ids: Sequence[str] | None, ids: Sequence[str] | None) -> None:
    """Raise ValueError unless exactly one of ``source_ids`` and ``ids`` is given (a delete's selector)."""
    if (source_ids is None) == (ids is None):
        msg = "give either source_ids or ids to delete"
        raise ValueError(msg)


def delete_chunks(chunk_ids: Iterable[str], *, store: Docstore, backend: VectorBackend) -> IndexReport:
    """Remove chunks by id, with their vectors (unknown ids are ignored)."""
    wanted = list(dict.fromkeys(chunk_ids))
    present = sum(1 for found in store.get(wanted) if found is not None)
    cleaned = _clean(store, backend)
    stale = store.remove_chunks(wanted)
    _delete_vectors(store, backend, stale)
    return IndexReport(chunks_removed=present, vectors_removed=cleaned + len(stale))


def make_representations(
    chunks: Sequence[StoredChunk], representations: RepresentationSource | None
) -> Sequence[Representation]:
    """The representations :func:`write_chunks` indexes for ``chunks``.

    ``representations`` given as a sequence are used as they are; as a callable (or
    ``None``: the deterministic generators), it is called with the child chunks rebuilt
    from their metadata (parents get no vectors).
    """
    if representations is not None and not callable(representations):
        return representations
    children = [
        chunk_from_metadata(chunk.text, chunk.metadata)
        for chunk in chunks
        if chunk.metadata.get("chunk_level", ChunkLevel.CHILD.value) != ChunkLevel.PARENT.value
    ]
    make = generate_representations if representations is None else representations
    return make(children)


@dataclass(frozen=True, slots=True)
class _Source:
    """One source of a write: its chunks and the records of its child chunks."""

    source_id: str
    chunks: Sequence[StoredChunk]
    records: Sequence[VectorRecord]


@dataclass(slots=True)
class _Reuse:
    """Vectors embedded by this call for texts that later groups write again.

    ``left`` counts each text's records not yet written; a vector is kept only while a
    later record still needs it, so memory holds repeated texts, not every vector.
    """

    left: Counter[str]
    vectors: dict[str, Sequence[float]] = field(default_factory=dict)

    def written(self, records: Sequence[VectorRecord], vectors: Sequence[Sequence[float]] | None) -> None:
        for position, record in enumerate(records):
            self.left[record.text] -= 1
            if self.left[record.text] > 0:
                if vectors is not None:
                    self.vectors.setdefault(record.text, vectors[position])
            else:
                self.vectors.pop(record.text, None)


def _groups(
    by_source: Mapping[str, Sequence[StoredChunk]], records_by_source: Mapping[str, Sequence[VectorRecord]]
) -> Iterator[list[str]]:
    """The sources in order, grouped until a group holds :data:`WRITE_GROUP` records."""
    group: list[str] = []
    size = 0
    for source_id in by_source:
        group.append(source_id)
        size += len(records_by_source.get(source_id, ()))
        if size >= WRITE_GROUP:
            yield group
            group, size = [], 0
    if group:
        yield group


@dataclass(frozen=True, slots=True)
class _Plan:
    """What one source of a group writes: the records to embed and store, and its live vectors."""

    source: _Source
    to_write: Sequence[VectorRecord]
    vectors: Mapping[str, str]  # vector id -> chunk id, every record of the source


def _plan(source: _Source, store: Docstore, id_key: str) -> _Plan:
    """Which of a source's records go to the vector store (under its writing lock)."""
    live = set(store.vector_ids(source.source_id))
    before = {
        found.chunk_id: found for found in store.get(c.chunk_id for c in source.chunks) if found is not None
    }
    unchanged = {
        c.chunk_id
        for c in source.chunks
        if (old := before.get(c.chunk_id)) is not None
        and old.text == c.text
        and same_metadata(old.metadata, c.metadata)
    }
    to_write = [
        r for r in source.records if r.vector_id not in live or str(r.metadata[id_key]) not in unchanged
    ]
    return _Plan(source, to_write, {r.vector_id: str(r.metadata[id_key]) for r in source.records})


def _ledger_vectors(
    store: Docstore, source_ids: Sequence[str], texts: Set[str]
) -> dict[str, Sequence[float]]:
    """Vectors by text among ``texts`` that the sources' live vectors hold in the ledger."""
    chunk_ids = [chunk_id for source_id in source_ids for chunk_id in store.ids_for_source(source_id)]
    found: dict[str, Sequence[float]] = {}
    for vector in store.vectors_of_chunks(chunk_ids):
        if vector.embedding is not None and vector.text in texts and vector.text not in found:
            found[vector.text] = array("f", vector.embedding).tolist()
    return found


def _write_group(
    sources: Sequence[_Source], *, store: Docstore, backend: VectorBackend, id_key: str, reuse: _Reuse
) -> IndexReport:
    """Write a group of sources: one vector store ``add`` for all, then one commit per source."""
    with store.writing_sources([source.source_id for source in sources]):
        plans = [_plan(source, store, id_key) for source in sources]
        for plan in plans:
            store.begin_vectors(
                plan.source.source_id, {r.vector_id: plan.vectors[r.vector_id] for r in plan.to_write}
            )
        to_write = [record for plan in plans for record in plan.to_write]
        written: Sequence[Sequence[float]] | None = None
        if to_write:
            texts = {record.text for record in to_write}
            known = {
                **_ledger_vectors(store, [plan.source.source_id for plan in plans if plan.to_write], texts),
                **{text: reuse.vectors[text] for text in texts & reuse.vectors.keys()},
            }
            written = backend.add(to_write, known=known)
        writing = {record.vector_id for record in to_write}
        reuse.written([r for plan in plans for r in plan.source.records if r.vector_id not in writing], None)
        reuse.written(to_write, written)
        embeddings = (
            None if written is None else dict(zip((r.vector_id for r in to_write), written, strict=True))
        )
        report = IndexReport()
        stale: list[str] = []
        for plan in plans:
            source = plan.source
            details = {r.vector_id: (r.kind, r.text) for r in source.records}
            commit = store.commit_source(
                source.source_id, source.chunks, plan.vectors, details=details, embeddings=embeddings
            )
            stale += commit.stale_vectors
            result = commit.chunks
            report += IndexReport(
                sources=(source.source_id,),
                chunks_added=len(result.added),
                chunks_updated=len(result.updated),
                chunks_kept=len(result.kept),
                chunks_removed=len(result.removed),
                vectors_added=len(plan.to_write),
                vectors_kept=len(source.records) - len(plan.to_write),
                vectors_removed=len(commit.stale_vectors),
            )
        _delete_vectors(store, backend, stale)
    return report


def _clean(store: Docstore, backend: VectorBackend, *, keep: Set[str] = frozenset()) -> int:
    """Delete what an earlier call left behind (stale vectors, pending ones of a write that died).

    Vectors in ``keep`` are left alone: the caller is about to write them again under
    the same ids (an id is a hash of the chunk and the text, so the content is the
    same), and the write replaces them. Deleting them first would also be risky on
    Chroma: a vector deleted and added again under the same id can become unreachable
    by search while ``get`` still returns it (chroma-core/chroma#7758, seen on 1.5.9
    when the vector was written by another process: the case of a run that was killed).
    Writing the same vector again is risky there too; the Chroma backends keep it
    (:func:`~procedure_rag._chroma.collection.upsert`).

    A source's leftovers are deleted under its writing lock
    (:meth:`~procedure_rag._store.docstore.Docstore.writing`); a source another writer
    holds is left to it (its pending vectors are that writer's, not a dead run's).
    """
    removed = 0
    for source_id in store.stale_sources():
        with store.writing(source_id, wait=False) as held:
            if not held:
                continue
            leftovers = [vector_id for vector_id in store.stale_vectors(source_id) if vector_id not in keep]
            _delete_vectors(store, backend, leftovers)
            removed += len(leftovers)
    return removed


def _delete_vectors(store: Docstore, backend: VectorBackend, ids: Sequence[str]) -> None:
    if ids:
        backend.delete(list(ids))
        store.forget_vectors(ids)

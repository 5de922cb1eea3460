"""The docstore interface: raw chunks, the vector ledger, the lexical index, the index info.

Every index keeps, beside its vector store, one docstore: each chunk's text and flat
metadata by id, filed by source; the vector ledger (every vector written for each source,
pending / live / stale, see :mod:`procedure_rag._store.ledger`); the lexical index over
the child chunks' words; and an info table with the schema version and the embedding
model. :class:`Docstore` is what the writer, the retrievers and the command line ask of
it. Two backends implement it and pass one contract test suite:

- :class:`~procedure_rag._store.chunk_store.ChunkStore`: a SQLite file (or memory), the
  embedded default, one machine;
- :class:`~procedure_rag._store.pg_chunk_store.PostgresChunkStore`: a PostgreSQL
  database, shared by every machine that serves the index.

The crash-safety contract is the same on both: a source's chunks and its live vectors
commit in one transaction, a reader sees a source as it was before a commit or after
it, never half of it, and a write killed at any point is completed by the next run
(:mod:`procedure_rag._store.writer`). :meth:`Docstore.writing` is the per-source lock
that lets several writers of different sources run at once (on PostgreSQL; the SQLite
file serialises its writers and assumes one indexing run at a time).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager

from procedure_rag._closing import Closing
from procedure_rag._models.identity import EmbeddingIdentity
from procedure_rag._store.ledger import LedgerVector
from procedure_rag._store.lexical_index import LexicalHit
from procedure_rag._store.records import IndexInfo, ReplaceResult, Scalar, SourceCommit, StoredChunk

__all__ = ["Docstore"]


class Docstore(Closing, ABC):
    """Raw chunks by id, the vector ledger and the lexical index of one index.

    Thread-safe; a context manager (:meth:`close` on exit). The methods' full contracts
    are the SQLite store's (:class:`~procedure_rag._store.chunk_store.ChunkStore`), the
    reference backend.
    """

    # -- what it is ---------------------------------------------------------------

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the store lives, for messages: a file path, or a URL without its password."""

    @property
    @abstractmethod
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""

    # -- chunks ---------------------------------------------------------------------

    @abstractmethod
    def put(self, records: Iterable[StoredChunk]) -> None:
        """Store ``records``, replacing chunks with the same ids, in one transaction."""

    @abstractmethod
    def get(self, ids: Iterable[str]) -> list[StoredChunk | None]:
        """The chunks with ``ids``, in that order; ``None`` for an id not stored."""

    @abstractmethod
    def delete(self, ids: Iterable[str]) -> int:
        """Delete the chunks with ``ids``; returns how many were deleted."""

    @abstractmethod
    def ids_for_source(self, source_id: str) -> list[str]:
        """The ids filed under ``source_id``, in the order they were last written."""

    @abstractmethod
    def replace_source(self, source_id: str, records: Iterable[StoredChunk]) -> ReplaceResult:
        """Make ``records`` the chunks of ``source_id``, in one transaction."""

    @abstractmethod
    def sources(self) -> list[str]:
        """The source ids with at least one chunk, sorted."""

    @abstractmethod
    def __len__(self) -> int:
        """How many chunks the store holds."""

    # -- lexical search -------------------------------------------------------------

    @property
    @abstractmethod
    def lexical(self) -> bool:
        """Whether the store keeps a lexical index."""

    @abstractmethod
    def lexical_search(self, query: str, n: int) -> list[LexicalHit]:
        """The best ``n`` child chunks for ``query`` by BM25 over their words."""

    # -- chunks and vectors together --------------------------------------------------

    @abstractmethod
    def commit_source(
        self,
        source_id: str,
        records: Iterable[StoredChunk],
        vectors: Mapping[str, str],
        *,
        details: Mapping[str, tuple[str, str]] | None = None,
        embeddings: Mapping[str, Sequence[float]] | None = None,
    ) -> SourceCommit:
        """Make ``records`` the chunks of ``source_id`` and ``vectors`` its live vectors, at once."""

    @abstractmethod
    def remove_chunks(self, ids: Iterable[str]) -> tuple[str, ...]:
        """Delete chunks by id and mark their vectors stale; returns the stale vector ids."""

    # -- the vector ledger ----------------------------------------------------------

    @abstractmethod
    def vector_details(self, vector_ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """``vector id -> (chunk id, kind, text)`` of the live vectors among ``vector_ids``."""

    @abstractmethod
    def vector_states(self, vector_ids: Iterable[str]) -> dict[str, str]:
        """``vector id -> state`` of the ids the ledger lists."""

    @abstractmethod
    def vectors_of_chunks(self, chunk_ids: Iterable[str]) -> list[LedgerVector]:
        """Every live vector of ``chunk_ids``, with its kind, text and embedding."""

    @abstractmethod
    def begin_vectors(self, source_id: str, vectors: Mapping[str, str]) -> None:
        """Record ``vectors`` (vector id -> chunk id) as about to be written for ``source_id``."""

    @abstractmethod
    def vector_ids(self, source_id: str | None = None, *, state: str = "live") -> list[str]:
        """Vector ids in ``state``, of one source or all."""

    @abstractmethod
    def stale_vectors(self, source_id: str | None = None) -> list[str]:
        """Vectors to delete from the vector store (stale, and pending but not live), of one source or all."""

    @abstractmethod
    def stale_sources(self) -> list[str]:
        """The sources with vectors :meth:`stale_vectors` lists, sorted."""

    @abstractmethod
    def forget_vectors(self, ids: Iterable[str]) -> None:
        """Drop the ledger rows of vectors that were deleted from the vector store."""

    @contextmanager
    def writing(self, source_id: str, *, wait: bool = True) -> Iterator[bool]:
        """Hold the lock that one writer of ``source_id`` holds while it writes the source.

        The writer holds it from recording a source's vectors as pending until its stale
        vectors are deleted, and a writer cleaning what a killed run left behind holds it
        for that source, so two writers never touch one source's vectors at once. Yields
        whether the lock is held: with ``wait=False``, ``False`` when another writer holds
        it (then leave the source to that writer). The SQLite store has no such lock (it
        yields ``True``: one indexing run at a time per file).
        """
        yield True

    @contextmanager
    def writing_sources(self, source_ids: Sequence[str]) -> Iterator[None]:
        """Hold the writer locks of several sources at once, waiting for each.

        They are taken in sorted order, so two writers locking overlapping groups queue
        rather than deadlock. The writer holds a group's locks while it writes the group.
        """
        with ExitStack() as stack:
            for source_id in sorted(set(source_ids)):
                stack.enter_context(self.writing(source_id))
            yield

    # -- index info -----------------------------------------------------------------

    @abstractmethod
    def set_info(self, key: str, value: Scalar) -> None:
        """Record ``value`` under ``key`` in the info table."""

    @abstractmethod
    def get_info(self, key: str) -> Scalar | None:
        """The value recorded under ``key``, or ``None``."""

    @abstractmethod
    def index_info(self) -> IndexInfo:
        """The schema version and the recorded embedding model and dimension."""

    @abstractmethod
    def check_embedding(self, identity: EmbeddingIdentity) -> None:
        """Record the embedding model on first use; afterwards, insist on the same one."""

    @abstractmethod
    def close(self) -> None:
        """Release the store; closing twice is harmless."""

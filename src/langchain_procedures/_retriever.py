"""``ProcedureMultiVectorRetriever``: langchain-classic's ``MultiVectorRetriever``, done right.

Same fields (``vectorstore``, ``docstore`` or ``byte_store``, ``id_key``, ``search_type``,
``search_kwargs``), plus a top-level ``k`` that counts raw chunks, scores and the
matched representations in each result's metadata, fusion, routing and parent
expansion, and an add / re-add / delete lifecycle that leaves nothing stale. The
ranking and the lifecycle are the core's (:mod:`procedure_rag._retrieval.retrieve`,
:mod:`procedure_rag._store.writer`); this class wires LangChain's stores to them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from enum import StrEnum
from typing import Any, Self

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable
from langchain_core.stores import BaseStore, ByteStore
from langchain_core.vectorstores import VectorStore
from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from langchain_procedures._docstore import BaseStoreMirror, ProcedureDocStore
from langchain_procedures._models import LangChainModel
from langchain_procedures._vector_backend import DocumentFilter, Layout, VectorStoreBackend, searcher
from procedure_rag import Chunk, DocstoreError, Representation
from procedure_rag._core_api import (
    DEFAULT_COLLECTION,
    LEXICAL_WEIGHT,
    PROBE_TEXT,
    ChromaTarget,
    Closing,
    CollectionBackend,
    EmbeddingIdentity,
    FusionMethod,
    IndexReport,
    RawChunks,
    RepresentationSource,
    RetrievalOptions,
    Retrieved,
    VectorBackend,
    describe_model,
    docstore_path,
    is_postgres_url,
    lexical_pass,
    open_collection,
    represent,
    retrieve,
    stored_chunk,
)

__all__ = ["ProcedureMultiVectorRetriever", "SearchType"]


class SearchType(StrEnum):
    """The vector search the retriever runs: langchain-classic's ``SearchType``, by value.

    Defined here rather than imported: langchain-classic takes about 2 s to import, for
    three names. Its own members are accepted too (they are these strings).
    """

    similarity = "similarity"
    similarity_score_threshold = "similarity_score_threshold"
    mmr = "mmr"


class ProcedureMultiVectorRetriever(BaseRetriever, Closing):
    """Search several representations per raw chunk; return ``k`` distinct raw chunks.

    Each returned ``Document`` is a raw chunk from the docstore (``id`` = chunk id) whose
    metadata also holds ``score`` (the fused score, higher is better) and ``matched``
    (a JSON list of the representations that hit: ``kind``, ``text``, ``score``), plus
    ``routing`` and ``expanded_from`` when those options apply.

    Build one with :meth:`from_persist_directory` (embedded Chroma and a SQLite docstore
    in one folder, readable from LlamaIndex too) or from any LangChain ``VectorStore`` and
    ``BaseStore``; fill it with :meth:`add_documents`. It is a context manager:
    ``with ProcedureMultiVectorRetriever.from_persist_directory(...) as retriever:``
    calls :meth:`close` on the way out. Unknown keyword arguments raise (pydantic's
    ``extra="forbid"``). It cannot be pickled: it holds open stores (see
    :meth:`__getstate__`); open one per process instead.

    Args:
        vectorstore: Holds the representation vectors (metadata ``id_key`` names the raw
            chunk, ``representation`` the kind).
        docstore: Raw chunks by id; a :class:`ProcedureDocStore` in memory by default.
            With another store, the ledger that finds a source's old vectors lives in
            memory, so re-adding a source replaces its vectors only within one process.
        byte_store: A byte store to wrap as the docstore instead (as ``MultiVectorRetriever``).
        id_key: The vector metadata key naming the raw chunk.
        search_type: ``similarity``, ``similarity_score_threshold`` (``search_kwargs``
            gives ``score_threshold``) or ``mmr`` (scores are then MMR ranks).
        search_kwargs: Passed to the store's search; ``filter`` is a metadata filter in
            the store's syntax (a dict), or a callable taking a vector's ``Document`` and
            returning whether it may be a hit (on any store, Chroma included: the adapter
            applies it, without exact re-scoring); ``k``, when given, is the first number
            of vectors asked (never fewer than the default's, ``RetrievalOptions.start``).
        k: Raw chunks returned; vectors are fetched until ``k`` distinct chunks are found
            or the store is exhausted.
        fusion: How a chunk's hits make its score: ``"sum"`` (default: the raw text's
            score plus a little of each other kind's best), ``"max"``, ``"rrf"``,
            ``"weighted"``.
        weights: Per-kind weights for ``"sum"`` and ``"weighted"``.
        kinds: Only these representation kinds count (``None``: all).
        expand_parents: Return each child's parent chunk (needs parents in the docstore:
            split with ``emit_parents=True``).
        context_budget: Return each hit with the parts of its section that complete it
            (the section's other hits, then the parts carrying a caution or a
            condition), within this many ``cl100k_base`` tokens per result; the parts
            are named in ``context_ids``. Needs parents in the docstore; excludes
            ``expand_parents``. ``None`` (default): off.
        route_questions: Move up chunks carrying what the question asks about
            (condition, caution, result, steps); the rule is in ``routing``.
        demote_repeats: Move a result most of whose lines a better result already shows
            (the same steps under another tab, an include in two pages) below the others
            found; ``repeat_of`` names the better one. ``True`` by default.
        lexical_weight: What the chunk's BM25 score over its words (divided by the
            best one) adds to its fused score; ``0`` turns the lexical index off. It is
            asked only with a :class:`ProcedureDocStore` (which keeps the index), no
            ``filter`` and the ``similarity`` search type; chunks it finds are re-scored
            with the rest.
        representation_model: A chat model (or Runnable) writing the representations in
            :meth:`add_documents`; ``None`` for the offline deterministic ones.
    """

    # A misspelt option (``kk=3``) raises instead of being dropped.
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    vectorstore: VectorStore
    docstore: BaseStore[str, Document] = Field(default_factory=ProcedureDocStore)
    byte_store: ByteStore | None = None
    id_key: str = "doc_id"
    search_type: SearchType = SearchType.similarity
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    k: int = 5
    fusion: FusionMethod = "sum"
    weights: dict[str, float] | None = None
    kinds: list[str] | None = None
    expand_parents: bool = False
    context_budget: int | None = None
    route_questions: bool = False
    lexical_weight: float = LEXICAL_WEIGHT
    demote_repeats: bool = True
    representation_model: Runnable[Any, Any] | LangChainModel | None = None

    _options: RetrievalOptions = PrivateAttr()
    _raw: RawChunks = PrivateAttr()
    _layout: Layout | None = PrivateAttr(default=None)
    _opened: tuple[Callable[[], None], ...] = PrivateAttr(default=())

    @model_validator(mode="before")
    @classmethod
    def _shim_docstore(cls, values: Any) -> Any:  # noqa: ANN401 - pydantic hands raw input over
        if isinstance(values, dict) and values.get("byte_store") is not None:
            try:
                from langchain_classic.storage._lc_store import create_kv_docstore  # noqa: PLC0415
            except ImportError as exc:
                msg = "byte_store needs langchain-classic's document store: pip install langchain-classic"
                raise ImportError(msg) from exc

            values = {**values, "docstore": create_kv_docstore(values["byte_store"])}
        return values

    def model_post_init(self, context: Any, /) -> None:  # noqa: ANN401 - pydantic's signature
        """Validate the options once; pick where the raw chunks and the ledger live."""
        options = RetrievalOptions(
            k=self.k,
            fusion=self.fusion,
            weights=self.weights,
            kinds=None if self.kinds is None else frozenset(self.kinds),
            expand_parents=self.expand_parents,
            context_budget=self.context_budget,
            route_questions=self.route_questions,
            lexical_weight=self.lexical_weight,
            demote_repeats=self.demote_repeats,
        )
        start = self.search_kwargs.get("k")
        # search_kwargs' k is the first number of vectors asked: never fewer than the default.
        self._options = (
            options if start is None else replace(options, fetch_start=max(int(start), options.start))
        )
        docstore = self.docstore
        self._raw = RawChunks(
            docstore.store if isinstance(docstore, ProcedureDocStore) else BaseStoreMirror(docstore)
        )

    # -- building ---------------------------------------------------------------

    @classmethod
    def from_persist_directory(
        cls,
        persist_directory: str | os.PathLike[str],
        *,
        embedding: Embeddings,
        collection_name: str = DEFAULT_COLLECTION,
        **kwargs: Any,  # noqa: ANN401 - the retriever's own fields
    ) -> Self:
        """Open (or create) the index in a folder: embedded Chroma and ``docstore.sqlite3``.

        Args:
            persist_directory: The index folder.
            embedding: The embedding model; the index records it and refuses another.
            collection_name: The representations collection.
            **kwargs: The retriever's fields (``k``, ``fusion``…).

        Raises:
            EmbeddingMismatchError: When the index was built with another model.
        """
        target = ChromaTarget(persist_directory=os.fspath(persist_directory))
        docstore = ProcedureDocStore(docstore_path(persist_directory))
        return cls._open(target, embedding, collection_name, docstore, kwargs)

    @classmethod
    def from_chroma_server(
        cls,
        host: str,
        port: int = 8000,
        *,
        embedding: Embeddings,
        docstore_file: str | os.PathLike[str],
        collection_name: str = DEFAULT_COLLECTION,
        **kwargs: Any,  # noqa: ANN401 - the retriever's own fields
    ) -> Self:
        """Open (or create) the index on a Chroma server (``chroma run``), docstore in a file.

        ``docstore_file`` may be a ``postgresql://`` URL too (see :meth:`from_servers`).

        Raises:
            EmbeddingMismatchError: When the collection was built with another model.
        """
        target = ChromaTarget(host=host, port=port)
        return cls._open(target, embedding, collection_name, ProcedureDocStore(docstore_file), kwargs)

    @classmethod
    def from_servers(
        cls,
        chroma_host: str,
        chroma_port: int = 8000,
        *,
        docstore_url: str,
        embedding: Embeddings,
        collection_name: str = DEFAULT_COLLECTION,
        **kwargs: Any,  # noqa: ANN401 - the retriever's own fields
    ) -> Self:
        """Open (or create) an index kept on servers: a Chroma server and a PostgreSQL docstore.

        Every process (on any machine) that opens the same two servers reads and writes
        the same index.

        Args:
            chroma_host: The Chroma server's host (``chroma run``).
            chroma_port: Its port.
            docstore_url: ``postgresql://user:password@host:port/database`` (libpq's options
                allowed; ``schema=NAME`` for the PostgreSQL schema, default ``procedure_rag``).
            embedding: The embedding model; the index records it and refuses another.
            collection_name: The representations collection.
            **kwargs: The retriever's fields (``k``, ``fusion``…).

        Raises:
            DocstoreError: When the URL is not a PostgreSQL URL or the database cannot be
                opened (one line saying why).
            EmbeddingMismatchError: When the index was built with another model.
        """
        if not is_postgres_url(docstore_url):
            msg = f"docstore_url must be a postgresql:// URL, got {docstore_url!r}"
            raise DocstoreError(msg)
        target = ChromaTarget(host=chroma_host, port=chroma_port)
        return cls._open(target, embedding, collection_name, ProcedureDocStore(docstore_url), kwargs)

    @classmethod
    def _open(
        cls,
        target: ChromaTarget,
        embedding: Embeddings,
        collection_name: str,
        docstore: ProcedureDocStore,
        kwargs: dict[str, Any],
    ) -> Self:
        try:
            from langchain_chroma import Chroma  # noqa: PLC0415 - only for the Chroma layout
        except ImportError as exc:
            msg = "the Chroma layout needs langchain-chroma: pip install 'procedure-rag[langchain-chroma]'"
            raise ImportError(msg) from exc

        identity = EmbeddingIdentity.from_probe(
            describe_model(embedding), embedding.embed_documents([PROBE_TEXT])[0]
        )
        client = target.client()
        try:
            collection = open_collection(client, identity, name=collection_name)
            docstore.store.check_embedding(identity)
            vectorstore = Chroma(client=client, collection_name=collection_name, embedding_function=embedding)
            retriever = cls(vectorstore=vectorstore, docstore=docstore, **kwargs)
        except BaseException:
            docstore.close()
            client.close()
            raise
        # Searches go to the collection and the ledger directly (ids and distances only).
        retriever._layout = Layout(collection, retriever._raw)
        retriever._opened = (docstore.close, client.close)
        return retriever

    def close(self) -> None:
        """Release the Chroma client and the docstore a factory opened; closing twice is harmless.

        An embedded Chroma client reads the collection's nearest-neighbour index once and
        keeps it until every client of the folder is closed, so a process that goes on
        after indexing (or lets another process index the folder) should close the
        retrievers it opened with :meth:`from_persist_directory` or
        :meth:`from_chroma_server`. Stores passed in by the caller are left open.
        """
        opened, self._opened = self._opened, ()
        for close in opened:
            close()

    def __getstate__(self) -> dict[Any, Any]:
        """Refuse pickling with a reason, rather than fail deep inside a store.

        Raises:
            TypeError: Always: the retriever holds open stores (a database connection
                for the vector ledger at least) that no other process could use.
        """
        msg = (
            f"{type(self).__name__} cannot be pickled: it holds open stores (vectorstore "
            f"{type(self.vectorstore).__name__}, docstore {type(self.docstore).__name__}, "
            "and the vector ledger's database connection); open one in each process instead "
            "(from_persist_directory, from_chroma_server or the constructor)"
        )
        raise TypeError(msg)

    # -- lifecycle --------------------------------------------------------------

    def add_documents(
        self,
        documents: Sequence[Document],
        *,
        representations: Sequence[Representation]
        | Callable[[Sequence[Chunk]], Sequence[Representation]]
        | None = None,
    ) -> IndexReport:
        """Index raw chunks: docstore entries and representation vectors, written together.

        Each source present in ``documents`` becomes exactly these chunks: chunks and
        vectors it had before and has no longer are deleted, unchanged ones are not
        embedded again. Pass all chunks of a source in one call.

        Args:
            documents: Chunks from :class:`~langchain_procedures.ProcedureTextSplitter`
                (parents included, when split with ``emit_parents=True``).
            representations: Representations made already, or a callable making them;
                ``None``: ``representation_model``'s, or the deterministic ones.

        Returns:
            What was added, kept and removed.

        Raises:
            ValueError: When a document was not split by this package (no ``chunk_id``),
                its metadata holds a non-scalar value, or a chunk occurs twice. Nothing
                is written then.
        """
        stored = [stored_chunk(d.page_content, d.metadata, position=i) for i, d in enumerate(documents)]
        return self._raw.write(
            stored,
            backend=self._backend(),
            representations=self._representations(representations),
            id_key=self.id_key,
        )

    def delete(
        self, *, source_ids: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> IndexReport:
        """Delete whole sources, or chunks by id, with their vectors.

        Raises:
            ValueError: When neither or both of ``source_ids`` and ``ids`` are given.
        """
        return self._raw.delete(source_ids=source_ids, ids=ids, backend=self._backend())

    # -- retrieval --------------------------------------------------------------

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        filter: DocumentFilter | None = None,
    ) -> list[Document]:
        """The ``k`` best raw chunks for ``query``, best first, with scores.

        ``filter`` (or ``search_kwargs["filter"]``) is a dict in the store's syntax, or a
        callable taking each representation's vector ``Document`` (as
        ``InMemoryVectorStore`` takes), applied by the adapter on every store (see
        :func:`~langchain_procedures._vector_backend.searcher`). Under either, the lexical
        index is not asked: it cannot apply a filter.
        """
        options = self._options if k is None else replace(self._options, k=k)
        where = filter if filter is not None else self.search_kwargs.get("filter")
        found = searcher(
            self.vectorstore,
            query,
            search_type=self.search_type.value,
            search_kwargs=self.search_kwargs,
            id_key=self.id_key,
            where=where,
            layout=self._layout,
        )
        result = retrieve(
            query,
            search=found.search,
            rescore=found.rescore,
            lookup=self.docstore.mget,
            metadata_of=lambda document: document.metadata,
            options=options,
            # With a score threshold or MMR the search type decides what may be a result.
            lexical=lexical_pass(
                self._raw,
                filtered=where is not None,
                similarity_only=self.search_type == SearchType.similarity,
            ),
            text_of=lambda document: document.page_content,
        )
        if result.missing:
            run_manager.on_text(
                f"skipped {len(result.missing)} chunk id(s) missing from the docstore: "
                + ", ".join(result.missing[:10])
            )
        return [_result_document(item) for item in result.items]

    # -- helpers ----------------------------------------------------------------

    def _representations(self, given: RepresentationSource | None) -> RepresentationSource | None:
        if given is not None or self.representation_model is None:
            return given
        model = self.representation_model
        wrapped = model if isinstance(model, LangChainModel) else LangChainModel(model)
        return lambda chunks: represent(chunks, model=wrapped)

    def _backend(self) -> VectorBackend:
        embeddings = self.vectorstore.embeddings
        if self._layout is None or embeddings is None:
            return VectorStoreBackend(self.vectorstore)
        # On the layout, embed here: the ledger keeps the vectors for exact re-scoring.
        return CollectionBackend(self._layout.collection, embeddings)


def _result_document(item: Retrieved[Document]) -> Document:
    document = item.item
    return Document(
        page_content=document.page_content if item.text is None else item.text,
        metadata={**document.metadata, **item.metadata},
        id=item.doc_id,
    )

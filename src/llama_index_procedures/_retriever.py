"""``ProcedureMultiVectorRetriever``: the multi-vector index as a LlamaIndex retriever.

Search representations (summaries, questions, keywords, the chunk itself), fuse the hits
of each raw chunk, return the raw nodes: ``k`` distinct ones, each with its score and
the representations that matched. Ranking, over-fetching, routing and parent expansion
are the core's (:func:`procedure_rag._retrieval.retrieve.retrieve`), and so is the add/replace/
delete lifecycle (:mod:`procedure_rag._store.writer`); this module wires them to LlamaIndex's
stores. The default layout (:mod:`procedure_rag._chroma.collection`) is the LangChain adapter's:
one index folder reads through either framework.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, Self, TypedDict, Unpack

from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.callbacks import CallbackManager
from llama_index.core.llms import LLM
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle, TextNode, TransformComponent
from llama_index.core.storage.docstore.types import BaseDocumentStore
from llama_index.core.vector_stores.types import BasePydanticVectorStore, MetadataFilters

from llama_index_procedures._index_store import (
    IndexBackend,
    chroma_metadata,
    embedding_identity,
    is_chroma,
    kind_filters,
    node_lookup,
    raw_chunks,
    stored_chunks,
    to_hits,
    vector_filter,
)
from llama_index_procedures._models import LlamaIndexModel
from procedure_rag import DocstoreError, RepresentationCache
from procedure_rag._core_api import (
    DEFAULT_COLLECTION,
    LEXICAL_WEIGHT,
    ChromaTarget,
    ChunkStore,
    Closing,
    Docstore,
    EmbeddingIdentity,
    EmbeddingMismatchError,
    Found,
    FusionMethod,
    Hit,
    IndexReport,
    RepresentationSource,
    RetrievalOptions,
    Retrieved,
    check_dimension,
    check_query,
    docstore_path,
    is_postgres_url,
    lexical_pass,
    open_collection,
    open_docstore,
    read_retrying,
    represent,
    rescore_pass,
    retrieve,
)

__all__ = ["ProcedureIndexer", "ProcedureMultiVectorRetriever"]

_CHROMA_HINT = (
    "the Chroma layout needs LlamaIndex's Chroma integration: pip install 'procedure-rag[llama-index-chroma]'"
)

#: Where raw chunks live: a docstore (SQLite or PostgreSQL), a SQLite file or ``postgresql://``
#: URL, or any LlamaIndex docstore.
DocstoreLike = Docstore | BaseDocumentStore | str | os.PathLike[str]


class RetrieverOptions(TypedDict, total=False):
    """The options the factories pass on to :class:`ProcedureMultiVectorRetriever`."""

    k: int
    fusion: FusionMethod
    weights: Mapping[str, float] | None
    kinds: Collection[str] | None
    filters: MetadataFilters | None
    expand_parents: bool
    context_budget: int | None
    route_questions: bool
    lexical_weight: float
    demote_repeats: bool
    representation_model: LLM | LlamaIndexModel | None
    representation_cache: RepresentationCache | None
    id_key: str
    callback_manager: CallbackManager | None


class ProcedureMultiVectorRetriever(BaseRetriever, Closing):
    """Retrieve ``k`` distinct raw nodes through their search representations.

    Each raw chunk (a node from :class:`~llama_index_procedures.ProcedureNodeParser`)
    is stored once in a docstore; its representations are embedded into a vector store
    with ``doc_id`` (the chunk id) and ``representation`` (the kind) in their metadata. A
    query searches the representations, groups the hits by chunk, fuses their scores and
    returns the raw nodes, best first, over-fetching vectors until ``k`` distinct chunks
    are found or the store has no more. Each returned node's metadata carries ``score``
    and ``matched`` (JSON: kind, text and score of each representation that hit), and
    ``routing`` / ``expanded_from`` when those options are on. A vector whose chunk is
    missing from the docstore is skipped and logged (logger ``procedure_rag``).

    It is a context manager (``with ... as retriever:`` calls :meth:`close` on the way
    out); its options serialise (:meth:`to_dict`, :meth:`to_json`), its open stores do
    not, and pickling it raises a ``TypeError`` that says so.

    Example:
        ```python
        from llama_index.core import SimpleDirectoryReader
        from llama_index_procedures import (
            OfflineEmbedding,
            ProcedureMultiVectorRetriever,
            ProcedureNodeParser,
        )

        retriever = ProcedureMultiVectorRetriever.from_persist_directory(
            "./index", embed_model=OfflineEmbedding(), k=5
        )
        docs = SimpleDirectoryReader("manuals").load_data()
        retriever.add_nodes(ProcedureNodeParser().get_nodes_from_documents(docs))
        hits = retriever.retrieve("How do I hard-restart it?")
        ```

    Args:
        vector_store: The representations: any LlamaIndex vector store, or a
            ``VectorStoreIndex`` over one. A store that keeps no text (such as
            ``SimpleVectorStore``) keeps the representation nodes in the index's docstore:
            pass the ``VectorStoreIndex`` to keep them across runs (a bare store gets an
            in-memory one).
        embed_model: Embeds representations and queries. The index records the model
            (its name and the vector of a probe text) and refuses any other.
        docstore: The raw chunks: a docstore (SQLite ``ChunkStore`` or ``PostgresChunkStore``),
            a ``postgresql://`` URL, the path of a SQLite file, any LlamaIndex
            ``BaseDocumentStore``, or ``None`` for an
            in-memory chunk store. The chunk store is also the ledger that finds stale
            vectors on re-indexing; with a ``BaseDocumentStore`` that ledger is in memory,
            so re-indexing in a later process cannot remove the vectors of chunks that
            changed in between (use a chunk store for an index that lasts).
        k: Raw nodes to return.
        fusion: How the hits of one chunk make its score: ``"sum"`` (the weighted sum of
            each kind's best hit), ``"max"``, ``"rrf"`` (reciprocal rank) or
            ``"weighted"``.
        weights: Weight per representation kind, for ``"sum"`` and ``"weighted"``.
        kinds: Only hits on these representation kinds count (``None``: all).
        filters: Metadata filters passed to every vector store query (vectors carry their
            chunk's scalar metadata: ``source``, ``language``, ``section``…).
        expand_parents: Return each child's parent node instead (children of one parent
            become one result; ``expanded_from`` lists them). Needs parents in the
            docstore: parse with ``ProcedureNodeParser(emit_parents=True)``.
        context_budget: Return each hit with the parts of its section that complete it
            (the section's other hits, then the parts carrying a caution or a
            condition), within this many ``cl100k_base`` tokens per result; the node's
            text is the assembled one and ``context_ids`` names the parts. Needs parents
            in the docstore; excludes ``expand_parents``. ``None`` (default): off.
        route_questions: Classify the question (condition, caution, operation…) and move
            up chunks carrying that field; the rule applied goes into ``routing``.
        demote_repeats: Move a result most of whose lines a better result already shows
            (the same steps under another tab, an include in two pages) below the others
            found; ``repeat_of`` names the better one. ``True`` by default.
        lexical_weight: What the chunk's BM25 score over its words (divided by the
            best one) adds to its fused score; ``0`` turns the lexical index off. It is
            asked only when the docstore is a chunk store (which keeps the index) and
            no ``filters`` apply; chunks it finds are re-scored with the rest.
        representation_model: A LlamaIndex LLM (or ``LlamaIndexModel``) writing the
            representations in :meth:`add_nodes`; ``None`` for the offline deterministic
            generators.
        representation_cache: Cache of the model's replies (ignored without a model).
        id_key: The vector metadata key naming the raw chunk.
        callback_manager: LlamaIndex callbacks.

    Raises:
        ValueError: For an option out of range, an unknown fusion method or kind name
            (the message names it), or an empty ``id_key``.
        TypeError: For an argument of the wrong type.
        EmbeddingMismatchError: When the vector store or the docstore was built with
            another embedding model (the message names both); nothing is read or written.
    """

    def __init__(
        self,
        *,
        vector_store: BasePydanticVectorStore | VectorStoreIndex,
        embed_model: BaseEmbedding,
        docstore: DocstoreLike | None = None,
        k: int = 5,
        fusion: FusionMethod = "sum",
        weights: Mapping[str, float] | None = None,
        kinds: Collection[str] | None = None,
        filters: MetadataFilters | None = None,
        expand_parents: bool = False,
        context_budget: int | None = None,
        route_questions: bool = False,
        lexical_weight: float = LEXICAL_WEIGHT,
        demote_repeats: bool = True,
        representation_model: LLM | LlamaIndexModel | None = None,
        representation_cache: RepresentationCache | None = None,
        id_key: str = "doc_id",
        callback_manager: CallbackManager | None = None,
    ) -> None:
        if isinstance(kinds, str):
            msg = f"kinds must be a collection of kind names, not the str {kinds!r}"
            raise TypeError(msg)
        self._options = RetrievalOptions(
            k=k,
            fusion=fusion,
            weights=weights,
            kinds=None if kinds is None else frozenset(kinds),
            expand_parents=expand_parents,
            context_budget=context_budget,
            route_questions=route_questions,
            lexical_weight=lexical_weight,
            demote_repeats=demote_repeats,
        )
        self._filters = _check_filters(filters)
        self._id_key = _check_id_key(id_key)
        self._model = _check_model(representation_model)
        self._cache = representation_cache
        if not isinstance(embed_model, BaseEmbedding):
            msg = f"embed_model must be a LlamaIndex BaseEmbedding, got {type(embed_model).__name__}"
            raise TypeError(msg)
        self._embed_model = embed_model
        self._index = _as_index(vector_store, embed_model)
        self._identity = embedding_identity(embed_model)
        recorded = EmbeddingIdentity.from_metadata(chroma_metadata(self._index))
        if recorded is not None:
            recorded.check_same(self._identity, "the Chroma collection")
        opened = _open_docstore(docstore)
        self._lookup_store = opened
        self._raw = raw_chunks(opened)
        self._lookup = node_lookup(opened)
        # What close() releases: the ledger when it was opened here (from a path, or in
        # memory), and the Chroma client when a factory opened one.
        self._opened: list[Callable[[], None]] = (
            [] if isinstance(docstore, Docstore) else [self._raw.ledger.close]
        )
        try:
            self._raw.ledger.check_embedding(self._identity)
        except EmbeddingMismatchError:
            self.close()
            raise
        self._chroma = is_chroma(self._index)
        self._vector_filter = vector_filter(self._filters)
        self._backend = IndexBackend(self._index, embed_model, self._identity, self._id_key)
        super().__init__(callback_manager=callback_manager)

    @classmethod
    def from_persist_directory(
        cls,
        persist_directory: str | os.PathLike[str],
        *,
        embed_model: BaseEmbedding,
        collection_name: str = DEFAULT_COLLECTION,
        **options: Unpack[RetrieverOptions],
    ) -> Self:
        """Open (or create) the default index in a folder: embedded Chroma and a SQLite docstore.

        The folder holds Chroma's files (the representations collection, cosine space)
        and ``docstore.sqlite3`` (the raw chunks): the layout the LangChain adapter's
        retriever reads and writes too.

        Args:
            persist_directory: The index folder (created when missing).
            embed_model: The embedding model; an existing index must have been built with it.
            collection_name: The representations collection.
            **options: The retriever's options (see the class).

        Raises:
            EmbeddingMismatchError: When the index was built with another model.
            ImportError: When the ``llama-index-chroma`` extra is not installed.
        """
        target = ChromaTarget(persist_directory=os.fspath(persist_directory))
        docstore = docstore_path(persist_directory)
        return cls._from_chroma(target, docstore, embed_model, collection_name, options)

    @classmethod
    def from_chroma_server(
        cls,
        host: str,
        port: int = 8000,
        *,
        embed_model: BaseEmbedding,
        docstore: DocstoreLike,
        collection_name: str = DEFAULT_COLLECTION,
        **options: Unpack[RetrieverOptions],
    ) -> Self:
        """Open (or create) the representations collection on a Chroma server (``chroma run``).

        Args:
            host: The server's host.
            port: Its port.
            embed_model: The embedding model; an existing collection must have been built
                with it.
            docstore: The raw chunks (see the class); every machine must reach the same one.
            collection_name: The representations collection.
            **options: The retriever's options (see the class).

        Raises:
            EmbeddingMismatchError: When the collection was built with another model.
            ImportError: When the ``llama-index-chroma`` extra is not installed.
        """
        target = ChromaTarget(host=host, port=port)
        return cls._from_chroma(target, docstore, embed_model, collection_name, options)

    @classmethod
    def from_servers(
        cls,
        chroma_host: str,
        chroma_port: int = 8000,
        *,
        docstore_url: str,
        embed_model: BaseEmbedding,
        collection_name: str = DEFAULT_COLLECTION,
        **options: Unpack[RetrieverOptions],
    ) -> Self:
        """Open (or create) an index kept on servers: a Chroma server and a PostgreSQL docstore.

        Every process (on any machine) that opens the same two servers reads and writes
        the same index.

        Args:
            chroma_host: The Chroma server's host (``chroma run``).
            chroma_port: Its port.
            docstore_url: ``postgresql://user:password@host:port/database`` (libpq's options
                allowed; ``schema=NAME`` for the PostgreSQL schema, default ``procedure_rag``).
            embed_model: The embedding model; an existing index must have been built with it.
            collection_name: The representations collection.
            **options: The retriever's options (see the class).

        Raises:
            DocstoreError: When the URL is not a PostgreSQL URL or the database cannot be
                opened (one line saying why).
            EmbeddingMismatchError: When the index was built with another model.
            ImportError: When ``llama-index-vector-stores-chroma`` is not installed.
        """
        if not is_postgres_url(docstore_url):
            msg = f"docstore_url must be a postgresql:// URL, got {docstore_url!r}"
            raise DocstoreError(msg)
        target = ChromaTarget(host=chroma_host, port=chroma_port)
        return cls._from_chroma(target, docstore_url, embed_model, collection_name, options)

    @classmethod
    def _from_chroma(
        cls,
        target: ChromaTarget,
        docstore: DocstoreLike,
        embed_model: BaseEmbedding,
        collection_name: str,
        options: RetrieverOptions,
    ) -> Self:
        try:
            from llama_index.vector_stores.chroma import ChromaVectorStore  # noqa: PLC0415 - optional
        except ImportError as exc:
            raise ImportError(_CHROMA_HINT) from exc
        client = target.client()
        try:
            collection = open_collection(client, embedding_identity(embed_model), name=collection_name)
            retriever = cls(
                vector_store=ChromaVectorStore(chroma_collection=collection),
                embed_model=embed_model,
                docstore=docstore,
                **options,
            )
        except BaseException:
            client.close()
            raise
        retriever._opened.append(client.close)
        return retriever

    def close(self) -> None:
        """Release the Chroma client a factory opened and a docstore opened from a path.

        An embedded Chroma client reads the collection's nearest-neighbour index once and
        keeps it until every client of the folder is closed, so a process that goes on
        after indexing (or lets another process index the folder) should close what it
        opened. Stores passed in as objects are left open; closing twice is harmless.
        """
        opened, self._opened = self._opened, []
        for close in opened:
            close()

    def __getstate__(self) -> dict[str, Any]:
        """Refuse pickling with a reason, rather than fail deep inside a store.

        Raises:
            TypeError: Always: the retriever holds open stores (a database connection
                for the vector ledger at least) that no other process could use.
        """
        msg = (
            f"{type(self).__name__} cannot be pickled: it holds open stores (vector store "
            f"{type(self._index.vector_store).__name__}, docstore {type(self._lookup_store).__name__}, "
            "and the vector ledger's database connection); open one in each process instead "
            "(from_persist_directory, from_chroma_server or the constructor with the "
            "options of to_dict())"
        )
        raise TypeError(msg)

    def to_dict(self) -> dict[str, Any]:
        """The retriever's options as JSON-ready data (the stores and models are not in it).

        The keys are the constructor's option names (``filters`` as
        ``MetadataFilters.model_dump()``), and ``class_name``.
        """
        options = self._options
        return {
            "class_name": type(self).__name__,
            "k": options.k,
            "fusion": options.fusion,
            "weights": None if options.weights is None else dict(options.weights),
            "kinds": None if options.kinds is None else sorted(options.kinds),
            "filters": None if self._filters is None else self._filters.model_dump(mode="json"),
            "expand_parents": options.expand_parents,
            "context_budget": options.context_budget,
            "route_questions": options.route_questions,
            "lexical_weight": options.lexical_weight,
            "demote_repeats": options.demote_repeats,
            "id_key": self._id_key,
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @property
    def options(self) -> RetrievalOptions:
        """The validated ranking options."""
        return self._options

    @property
    def index(self) -> VectorStoreIndex:
        """The ``VectorStoreIndex`` over the representations."""
        return self._index

    @property
    def embedding_identity(self) -> EmbeddingIdentity:
        """The embedding model as the index records it."""
        return self._identity

    def add_nodes(
        self, nodes: Sequence[BaseNode], *, representations: RepresentationSource | None = None
    ) -> IndexReport:
        """Index raw nodes: the docstore gets the nodes, the vector store their representations.

        Every source present becomes exactly these nodes: re-adding a changed document
        replaces its old nodes and vectors (nothing stale, nothing duplicated; vectors of
        unchanged chunks are not embedded again), so pass all nodes of a document in one
        call. Parent nodes go to the docstore only (parent expansion reads them).

        Args:
            nodes: Nodes from :class:`~llama_index_procedures.ProcedureNodeParser`.
            representations: Representations made already, or a callable making them
                from core chunks; ``None`` for the retriever's ``representation_model``
                (or the deterministic generators).

        Returns:
            What was added, kept and removed.

        Raises:
            ValueError: When a node was not made by the node parser or occurs twice (the
                message names its position or id); nothing is written then.
        """
        source = self._representations() if representations is None else representations
        return self._raw.write(
            stored_chunks(nodes), backend=self._backend, representations=source, id_key=self._id_key
        )

    def delete(
        self, *, source_ids: Iterable[str] | None = None, chunk_ids: Iterable[str] | None = None
    ) -> IndexReport:
        """Remove raw chunks and their vectors, by source document or by chunk id.

        Unknown ids are ignored.

        Raises:
            ValueError: When neither ``source_ids`` nor ``chunk_ids`` is given.
            TypeError: When one of them is a single str.
        """
        if source_ids is None and chunk_ids is None:
            msg = "give source_ids or chunk_ids to delete"
            raise ValueError(msg)
        if isinstance(source_ids, str) or isinstance(chunk_ids, str):
            msg = "source_ids and chunk_ids must be collections of ids, not a str"
            raise TypeError(msg)
        report = IndexReport()
        if source_ids is not None:
            report += self._raw.delete_sources(list(source_ids), backend=self._backend)
        if chunk_ids is not None:
            report += self._raw.delete_chunks(list(chunk_ids), backend=self._backend)
        return report

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = check_query(query_bundle.query_str)
        embedding = query_bundle.embedding or self._embed_model.get_agg_embedding_from_queries(
            query_bundle.embedding_strs
        )
        return self._rank(query, embedding)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = check_query(query_bundle.query_str)
        embedding = query_bundle.embedding or await self._embed_model.aget_agg_embedding_from_queries(
            query_bundle.embedding_strs
        )
        # The stores are synchronous: search in a worker thread, not on the event loop.
        return await asyncio.to_thread(self._rank, query, embedding)

    def _rank(self, query: str, embedding: Sequence[float]) -> list[NodeWithScore]:
        """The shared step of both retrieves: search, fuse, look up and cut, for one vector."""
        check_dimension(self._identity, len(embedding), "the query embedding")
        bundle = QueryBundle(query_str=query, embedding=list(embedding))

        searched: list[Hit] = []  # the last search's hits, for the ledger's re-scoring

        def search(n: int, kinds: frozenset[str]) -> Found:
            vectors = self._index.as_retriever(similarity_top_k=n, filters=kind_filters(self._filters, kinds))
            found = read_retrying(lambda: vectors.retrieve(bundle))
            searched[:] = to_hits(found, id_key=self._id_key, chroma=self._chroma)
            return Found(hits=list(searched), exhausted=len(found) < n)

        # Chroma hands back the stored vectors of given chunks: each candidate's every
        # representation is then scored exactly (other stores: the searches' hits).
        rescore = rescore_pass(
            self._index.vector_store.client.get if self._chroma else None,
            embedding,
            raw=self._raw,
            vector_filter=self._vector_filter,
            searched=searched,
            id_key=self._id_key,
        )
        result = retrieve(
            query,
            search=search,
            lookup=self._lookup,
            metadata_of=_metadata_of,
            options=self._options,
            rescore=rescore,
            lexical=lexical_pass(self._raw, filtered=self._filters is not None),
            text_of=_text_of,
        )
        return [_result(item) for item in result.items]

    def _representations(self) -> RepresentationSource | None:
        if self._model is None:
            return None
        return partial(represent, model=self._model, cache=self._cache)


class ProcedureIndexer(TransformComponent):
    """An ``IngestionPipeline`` step that indexes the nodes it is given and passes them on.

    ``IngestionPipeline(transformations=[ProcedureNodeParser(), ProcedureIndexer(retriever)])``
    runs parser → representations → embeddings → store; :attr:`last_report` says what
    the last run wrote. Each run must carry all nodes of the documents it holds (see
    :meth:`ProcedureMultiVectorRetriever.add_nodes`). A pipeline's cache skips a step
    whose input it has seen, and so would skip indexing into another index: build such a
    pipeline with ``disable_cache=True``. It holds open stores, so it runs with
    ``num_workers=1``.

    Args:
        retriever: The retriever whose index receives the nodes.
    """

    retriever: ProcedureMultiVectorRetriever = Field(
        exclude=True, description="The retriever whose index receives the nodes."
    )
    _last_report: IndexReport | None = PrivateAttr(default=None)

    def __init__(self, retriever: ProcedureMultiVectorRetriever, /, **data: Any) -> None:  # noqa: ANN401 - pydantic's
        # pydantic fills the field; mypy reads the base class's signature.
        super().__init__(retriever=retriever, **data)  # type: ignore[call-arg]

    @classmethod
    def class_name(cls) -> str:
        """Name used as the key when the component is serialised."""
        return "ProcedureIndexer"

    @property
    def last_report(self) -> IndexReport | None:
        """What the last call wrote (``None`` before the first)."""
        return self._last_report

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:  # noqa: ANN401 - the base's
        """Index ``nodes`` and return them unchanged."""
        self._last_report = self.retriever.add_nodes(nodes)
        return nodes

    async def acall(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:  # noqa: ANN401 - the base's
        """:meth:`__call__` in a worker thread (the stores are synchronous), for ``arun``."""
        return await asyncio.to_thread(self.__call__, nodes, **kwargs)


def _metadata_of(node: TextNode) -> Mapping[str, object]:
    return node.metadata


def _text_of(node: TextNode) -> str:
    return node.text


def _result(item: Retrieved[TextNode]) -> NodeWithScore:
    update: dict[str, Any] = {"metadata": {**item.item.metadata, **item.metadata}}
    if item.text is not None:
        update["text"] = item.text
    node = item.item.model_copy(update=update)
    return NodeWithScore(node=node, score=item.score)


def _as_index(vector_store: object, embed_model: BaseEmbedding) -> VectorStoreIndex:
    if isinstance(vector_store, VectorStoreIndex):
        return vector_store
    if isinstance(vector_store, BasePydanticVectorStore):
        storage = StorageContext.from_defaults(vector_store=vector_store)
        return VectorStoreIndex(nodes=[], storage_context=storage, embed_model=embed_model)
    msg = (
        "vector_store must be a LlamaIndex vector store or VectorStoreIndex, "
        f"got {type(vector_store).__name__}"
    )
    raise TypeError(msg)


def _open_docstore(docstore: object) -> Docstore | BaseDocumentStore:
    if docstore is None:
        return ChunkStore()
    if isinstance(docstore, Docstore | BaseDocumentStore):
        return docstore
    if isinstance(docstore, str | os.PathLike):
        return open_docstore(docstore)
    msg = (
        "docstore must be a ChunkStore, the path of its SQLite file, a postgresql:// URL, a LlamaIndex "
        f"BaseDocumentStore or None, got {type(docstore).__name__}"
    )
    raise TypeError(msg)


def _check_filters(filters: object) -> MetadataFilters | None:
    if filters is None or isinstance(filters, MetadataFilters):
        return filters
    msg = f"filters must be LlamaIndex MetadataFilters or None, got {type(filters).__name__}"
    raise TypeError(msg)


def _check_id_key(id_key: object) -> str:
    if not isinstance(id_key, str) or not id_key:
        msg = f"id_key must be a non-empty str, got {id_key!r}"
        raise ValueError(msg)
    return id_key


def _check_model(model: object) -> LlamaIndexModel | None:
    if model is None or isinstance(model, LlamaIndexModel):
        return model
    if isinstance(model, LLM):
        return LlamaIndexModel(model)
    msg = (
        "representation_model must be a LlamaIndex LLM, a LlamaIndexModel or None, "
        f"got {type(model).__name__}"
    )
    raise TypeError(msg)

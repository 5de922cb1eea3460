"""The default index layout on Chroma: one folder, a representations collection, a docstore.

Both adapters open the same folder the same way, so an index written through LangChain
reads through LlamaIndex and back::

    index/                      (persist_directory)
      chroma.sqlite3, <uuid>/   Chroma's own files: the representations collection
      docstore.sqlite3          the raw chunks and the vector ledger (ChunkStore)

The collection uses cosine space with HNSW settings chosen for recall
(:data:`HNSW_SETTINGS`), no Chroma embedding function (vectors always come from the
caller's model: Chroma's default one would download a model), and records the
embedding model that built it in its metadata. Opening it with another model fails
with :class:`EmbeddingMismatchError` before anything is read or written.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from procedure_rag._metadata import same_metadata
from procedure_rag._models.identity import EmbeddingIdentity, EmbeddingMismatchError

__all__ = [
    "DEFAULT_COLLECTION",
    "DOCSTORE_FILE",
    "HNSW_SETTINGS",
    "ID_KEY",
    "LAYOUT_VERSION",
    "UPSERT_BATCH",
    "ChromaTarget",
    "check_dimension",
    "copy_collection",
    "docstore_path",
    "held_records",
    "open_collection",
    "read_retrying",
    "upsert",
]

DEFAULT_COLLECTION = "procedure_rag"
DOCSTORE_FILE = "docstore.sqlite3"
LAYOUT_VERSION = 1

#: The vector metadata key naming the raw chunk (the retrievers' default ``id_key``).
ID_KEY = "doc_id"

#: Records per Chroma call in :func:`upsert` (Chroma bounds a call's batch).
UPSERT_BATCH = 512

#: Cosine space; a wider graph and search beam than Chroma's defaults (16 neighbours,
#: ef 100), so over-fetching a few hundred vectors still finds the true nearest ones.
HNSW_SETTINGS: Mapping[str, Any] = MappingProxyType(
    {"space": "cosine", "ef_construction": 200, "ef_search": 128, "max_neighbors": 32}
)

_PREFIX = "procedure_rag:"

#: How a Chroma server (chromadb 1.5) fails a read that meets records a concurrent
#: delete removed; reading again sees the collection after the delete.
_RACED_READS = ("Error finding id", "Error getting embedding")
_READ_ATTEMPTS = 3

#: The largest difference in any component between a stored vector and a new one under
#: the same id that still counts as the same vector (the same model, the same text:
#: float noise at most).
_SAME_VECTOR = 1e-6

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ChromaTarget:
    """Where the collection lives: a folder (embedded) or a server.

    Attributes:
        persist_directory: The index folder, for an embedded persistent Chroma.
        host: A Chroma server's host (``chroma run``), instead of a folder.
        port: The server's port.
    """

    persist_directory: str | None = None
    host: str | None = None
    port: int = 8000

    def __post_init__(self) -> None:
        if (self.persist_directory is None) == (self.host is None):
            msg = "give either persist_directory (embedded Chroma) or host (a Chroma server), exactly one"
            raise ValueError(msg)

    def client(self) -> Any:  # noqa: ANN401 - chromadb's client classes are not exported types
        """A Chroma client for this target (``chromadb`` is imported here)."""
        try:
            import chromadb  # noqa: PLC0415 - heavy; only when an index is opened
            from chromadb.config import Settings  # noqa: PLC0415
        except ImportError as exc:
            msg = "the index needs Chroma: pip install 'procedure-rag[chroma]'"
            raise ImportError(msg) from exc

        settings = Settings(anonymized_telemetry=False)
        if self.persist_directory is not None:
            Path(self.persist_directory).mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=self.persist_directory, settings=settings)
        return chromadb.HttpClient(host=str(self.host), port=self.port, settings=settings)


def docstore_path(persist_directory: str | os.PathLike[str]) -> Path:
    """The docstore file beside the collection in ``persist_directory``."""
    return Path(persist_directory) / DOCSTORE_FILE


def open_collection(
    client: Any,  # noqa: ANN401 - any chromadb client
    identity: EmbeddingIdentity,
    *,
    name: str = DEFAULT_COLLECTION,
    hnsw: Mapping[str, Any] = HNSW_SETTINGS,
) -> Any:  # noqa: ANN401 - chromadb.Collection
    """Open (or create) the representations collection for a model with ``identity``.

    A new collection gets ``hnsw`` settings, no embedding function and the identity in
    its metadata. An existing one must have been built with the same model: its
    recorded identity decides; a collection from elsewhere without a record is checked
    by the dimension of a stored vector, and then gets the record.

    Raises:
        EmbeddingMismatchError: When the collection was built with another model or
            dimension; the message names both.
        ValueError: When the collection's record is unreadable.
    """
    where = f"the collection {name!r}"
    existing = {collection.name for collection in client.list_collections()}
    if name not in existing:
        metadata = {f"{_PREFIX}layout": LAYOUT_VERSION, **identity.to_metadata(_PREFIX)}
        return client.get_or_create_collection(
            name=name,
            embedding_function=None,
            metadata=metadata,
            configuration={"hnsw": dict(hnsw)},
        )
    collection = client.get_collection(name=name, embedding_function=None)
    recorded = EmbeddingIdentity.from_metadata(collection.metadata, _PREFIX)
    if recorded is not None:
        recorded.check_same(identity, where)
        return collection
    space = ((collection.configuration or {}).get("hnsw") or {}).get("space", "l2")
    if space != "cosine":
        msg = (
            f"{where} uses the {space!r} distance; procedure-rag scores with cosine similarity: "
            "index into a new collection"
        )
        raise ValueError(msg)
    stored_dimension = _stored_dimension(collection)
    if stored_dimension is not None and stored_dimension != identity.dimension:
        msg = (
            f"{where} holds vectors of dimension {stored_dimension}, but the embedding model "
            f"{identity.name!r} gives dimension {identity.dimension}: use the model it was built with"
        )
        raise EmbeddingMismatchError(msg)
    metadata = {**(collection.metadata or {}), **identity.to_metadata(_PREFIX)}
    metadata.pop("hnsw:space", None)  # legacy keys cannot be changed after creation
    collection.modify(metadata=metadata)
    return collection


def _stored_dimension(collection: Any) -> int | None:  # noqa: ANN401 - chromadb.Collection
    peeked = collection.peek(limit=1)
    embeddings = peeked.get("embeddings")
    if embeddings is None or len(embeddings) == 0:
        return None
    return len(embeddings[0])


def check_dimension(identity: EmbeddingIdentity, vector_length: int, what: str) -> None:
    """Raise when a vector of ``vector_length`` cannot go into an index of ``identity``.

    Raises:
        EmbeddingMismatchError: Naming ``what``, both lengths and the model.
    """
    if vector_length != identity.dimension:
        msg = (
            f"{what} has dimension {vector_length}, but the index holds vectors of dimension "
            f"{identity.dimension} from {identity.name!r}"
        )
        raise EmbeddingMismatchError(msg)


#: What the collection holds under an id: its document, metadata and vector.
Held = tuple[str | None, dict[str, Any], Sequence[float] | None]


def held_records(collection: Any, ids: Sequence[str]) -> dict[str, Held]:  # noqa: ANN401 - chromadb.Collection
    """``id -> (document, metadata, vector)`` of the records the collection holds among ``ids``.

    Read :data:`UPSERT_BATCH` ids at a time; ids not held are missing from the answer.
    """
    held: dict[str, Held] = {}
    for start in range(0, len(ids), UPSERT_BATCH):
        part = list(ids[start : start + UPSERT_BATCH])
        stored = collection.get(ids=part, include=["metadatas", "documents", "embeddings"])
        found = list(stored["ids"])
        stored_metadatas = stored.get("metadatas") or [None] * len(found)
        stored_documents = stored.get("documents") or [None] * len(found)
        stored_vectors = stored.get("embeddings")
        if stored_vectors is None:
            stored_vectors = [None] * len(found)
        held.update(
            (vector_id, (document, dict(metadata or {}), vector))
            for vector_id, document, metadata, vector in zip(
                found, stored_documents, stored_metadatas, stored_vectors, strict=True
            )
        )
    return held


def upsert(
    collection: Any,  # noqa: ANN401 - chromadb.Collection
    *,
    ids: Sequence[str],
    embeddings: Sequence[Sequence[float]],
    metadatas: Sequence[Mapping[str, Any]],
    documents: Sequence[str],
    held: Mapping[str, Held] | None = None,
) -> list[list[float]]:
    """Write records by id, each replacing the record stored under its id, metadata included.

    Chroma's own ``upsert`` merges the new metadata into a stored record's, so a key the
    chunk no longer has would stay on its vectors (and a filter on it would still match
    them): keys stored but not given are removed here (Chroma removes a key set to
    ``None``). Replacing in place, rather than deleting and adding again, also keeps
    the vector reachable by search (chroma-core/chroma#7758: a vector deleted and added
    again under the same id may not be found by ``query``).

    A record whose id is stored with the same text and vector keeps them: only changed
    metadata is written (``update``, without the vector), an unchanged record not at all.
    That is the common case (an id names a chunk and a text, and the collection's model is
    checked), above all when a run completes a killed one: it embeds again what the killed
    run stored. Sending a vector again under an id Chroma holds goes through its HNSW
    update path, which on chromadb 1.5.9 now and then leaves a record out of the graph:
    ``get`` returns it, no ``query`` finds it (#7758 again, without any delete).

    Records go :data:`UPSERT_BATCH` at a time. A ``None`` metadata value is written as
    ``""``, as ``ChromaVectorStore.add`` writes it (Chroma refuses ``None`` there; here it
    is what removes a key). ``held`` is what :func:`held_records` read for ``ids`` just
    before (a caller that read it to reuse vectors); ``None`` reads it here.

    Returns:
        The vectors the collection holds for ``ids`` afterwards, in order: a kept vector
        is returned rather than the new one, so a ledger records what Chroma holds.
    """
    result: list[list[float]] = []
    for start in range(0, len(ids), UPSERT_BATCH):
        batch = slice(start, start + UPSERT_BATCH)
        written = [{key: "" if v is None else v for key, v in m.items()} for m in metadatas[batch]]
        records = _Records(ids[batch], embeddings[batch], written, documents[batch])
        stored = held_records(collection, records.ids) if held is None else held
        result += _upsert_batch(collection, records, stored)
    return result


@dataclass(frozen=True, slots=True)
class _Records:
    """One batch of :func:`upsert`'s records, field by field."""

    ids: Sequence[str]
    embeddings: Sequence[Sequence[float]]
    metadatas: Sequence[Mapping[str, Any]]
    documents: Sequence[str]


def _upsert_batch(collection: Any, records: _Records, held: Mapping[str, Held]) -> list[list[float]]:  # noqa: ANN401
    """:func:`upsert` for one batch, given what the collection holds under its ids."""
    ids, embeddings, documents = records.ids, records.embeddings, records.documents
    metadatas = records.metadatas
    result = [list(vector) for vector in embeddings]
    written: list[int] = []  # new ids, or a new vector or text under a stored id
    changed: list[int] = []  # the stored vector and text kept, the metadata replaced
    for position, vector_id in enumerate(ids):
        old = held.get(vector_id)
        if (
            old is None
            or old[0] != documents[position]
            or old[2] is None
            or not _same_vector(old[2], embeddings[position])
        ):
            written.append(position)
            continue
        result[position] = [float(x) for x in old[2]]
        if not same_metadata(old[1], metadatas[position]):
            changed.append(position)

    def replacing(position: int) -> dict[str, Any]:
        old_keys = set(held[ids[position]][1]) if ids[position] in held else set()
        return {**dict.fromkeys(old_keys - set(metadatas[position])), **metadatas[position]}

    if written:
        collection.upsert(
            ids=[ids[p] for p in written],
            embeddings=[list(embeddings[p]) for p in written],
            metadatas=[replacing(p) for p in written],
            documents=[documents[p] for p in written],
        )
    if changed:
        # Metadata only: a document without its vector would be embedded by Chroma.
        collection.update(ids=[ids[p] for p in changed], metadatas=[replacing(p) for p in changed])
    return result


def _same_vector(stored: Sequence[float], new: Sequence[float]) -> bool:
    """Whether ``new`` is ``stored`` again, up to float noise (:data:`_SAME_VECTOR`)."""
    import numpy as np  # noqa: PLC0415 - chromadb brings it; the core imports without it

    a = np.asarray(stored, dtype=np.float32)
    b = np.asarray(new, dtype=np.float32)
    return a.shape == b.shape and bool(np.max(np.abs(a - b), initial=0.0) <= _SAME_VECTOR)


def read_retrying(read: Callable[[], T]) -> T:
    """``read()``, read again when a Chroma server fails it for a record deleted meanwhile.

    A Chroma server (chromadb 1.5) fails a query or get with ``InternalError: Error
    executing plan: Internal error: Error finding id`` (or ``Error getting embedding``)
    when a writer deletes one of the records it matched during the read: seen a few
    times in thousands of queries from 32 threads beside a re-indexing writer. A read
    has no effect, so it is repeated, up to three times; any other error, and the last
    one, propagate.
    """
    for _ in range(_READ_ATTEMPTS - 1):
        try:
            return read()
        except Exception as exc:
            if not any(message in str(exc) for message in _RACED_READS):
                raise
    return read()


def copy_collection(source: Any, target_client: Any, *, name: str = DEFAULT_COLLECTION) -> int:  # noqa: ANN401
    """Copy every record of the collection ``source`` into ``name`` on ``target_client``.

    The target collection is opened (or created) for the model ``source`` records, with
    the layout's settings; records keep their ids, vectors, texts and metadata (written
    by :func:`upsert`, so records already there unchanged are not written again).

    Returns:
        How many records were copied.

    Raises:
        ValueError: When ``source`` records no embedding model (not a collection of this layout).
        EmbeddingMismatchError: When the target collection was built with another model.
    """
    identity = EmbeddingIdentity.from_metadata(source.metadata, _PREFIX)
    if identity is None:
        msg = f"the collection {source.name!r} records no embedding model: not a procedure-rag collection"
        raise ValueError(msg)
    target = open_collection(target_client, identity, name=name)
    copied = 0
    while True:
        batch = source.get(
            include=["embeddings", "metadatas", "documents"], limit=UPSERT_BATCH, offset=copied
        )
        ids = list(batch["ids"])
        if not ids:
            return copied
        upsert(
            target,
            ids=ids,
            embeddings=[list(map(float, vector)) for vector in batch["embeddings"]],
            metadatas=[dict(m or {}) for m in batch["metadatas"]],
            documents=[d or "" for d in batch["documents"]],
        )
        copied += len(ids)

"""What every docstore keeps and returns: stored chunks, what a write did, the index info.

The value types of the docstore interface (:mod:`procedure_rag._store.docstore`) and the
checks and encodings every backend shares, so a SQLite file and a PostgreSQL database
refuse the same records with the same messages and store the same JSON: a record's
fields checked before any write (:func:`record_rows`), metadata as compact JSON
(:func:`dumps`, never pickle), a stored row read back (:func:`decode_chunk`), and which
chunks of a source a replacement adds, keeps, updates and removes (:func:`plan_replace`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeAlias

from procedure_rag._models.identity import EmbeddingIdentity

__all__ = [
    "EMBEDDING_DIMENSION_KEY",
    "EMBEDDING_MODEL_KEY",
    "SCHEMA_VERSION_KEY",
    "STORE_SCHEMA_VERSION",
    "IndexInfo",
    "ReplacePlan",
    "ReplaceResult",
    "Row",
    "Scalar",
    "SourceCommit",
    "StoreValue",
    "StoredChunk",
    "canonical",
    "check_record",
    "check_scalar",
    "check_vectors_of",
    "decode_chunk",
    "dumps",
    "plan_replace",
    "record_rows",
    "schema_version_error",
]

#: A metadata or info value: what every vector store takes as it is.
Scalar: TypeAlias = str | int | float | bool
#: A metadata value as the store keeps it: a scalar, or a non-empty list of scalars of one
#: type (Chroma stores such lists and filters them with ``$contains``).
StoreValue: TypeAlias = Scalar | list[str] | list[int] | list[float] | list[bool]

#: The layout of the store's tables; a file written with a higher number is refused.
STORE_SCHEMA_VERSION = 2

#: Info keys :meth:`ChunkStore.check_embedding` reads and writes.
EMBEDDING_MODEL_KEY = "procedure_rag:embedding"
EMBEDDING_DIMENSION_KEY = "procedure_rag:dimension"
SCHEMA_VERSION_KEY = "schema_version"


@dataclass(frozen=True)
class StoredChunk:
    """One chunk as the store keeps it: id, text and flat metadata.

    The metadata is copied into a read-only mapping. Its ``source_id`` (when present)
    is the source the chunk is filed under; its ``chunk_id`` (when present) must be
    ``chunk_id``.

    Args:
        chunk_id: The chunk's id (non-empty).
        text: The chunk's text.
        metadata: Flat metadata: string keys, ``str``/``int``/``float``/``bool`` values
            (finite floats) or non-empty lists of one of those types
            (:func:`~procedure_rag._metadata.document_value` makes any value one).

    Raises:
        ValueError: When a field is of the wrong kind; the message names the chunk id
            and, for metadata, the key.
    """

    chunk_id: str
    text: str
    metadata: Mapping[str, StoreValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_record(self.chunk_id, self.text, self.metadata)
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    @property
    def source_id(self) -> str:
        """The metadata's ``source_id``, or ``""``."""
        return str(self.metadata.get("source_id", ""))


@dataclass(frozen=True)
class ReplaceResult:
    """What :meth:`ChunkStore.replace_source` did, as chunk ids.

    Attributes:
        added: Ids that were not stored before, in the records' order.
        removed: Ids that were stored for the source and are gone, sorted.
        kept: Ids stored before with the same text and metadata, in the records' order.
            Their rows were not rewritten; their vectors need no new embedding.
        updated: Ids stored before whose text or metadata changed, in the records' order.
    """

    added: tuple[str, ...]
    removed: tuple[str, ...]
    kept: tuple[str, ...]
    updated: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceCommit:
    """What :meth:`ChunkStore.commit_source` did.

    Attributes:
        chunks: The chunk ids added, removed, kept and updated.
        stale_vectors: Vector ids of the source that are no longer wanted: delete them
            from the vector store, then call :meth:`ChunkStore.forget_vectors`.
    """

    chunks: ReplaceResult
    stale_vectors: tuple[str, ...]


@dataclass(frozen=True)
class IndexInfo:
    """The store's schema version and the embedding model its index was built with.

    Attributes:
        schema_version: :data:`STORE_SCHEMA_VERSION` of the file.
        embedding_model: The model identity recorded by :meth:`ChunkStore.check_embedding`,
            or ``None`` before the first call.
        embedding_dimension: The vector dimension recorded with it, or ``None``.
    """

    schema_version: int
    embedding_model: str | None
    embedding_dimension: int | None

    @classmethod
    def read(cls, get: Callable[[str], Scalar | None]) -> IndexInfo:
        """The record a store's ``info`` table holds, each key read with ``get``."""
        version = get(SCHEMA_VERSION_KEY)
        model = get(EMBEDDING_MODEL_KEY)
        dimension = get(EMBEDDING_DIMENSION_KEY)
        return cls(
            schema_version=int(version) if isinstance(version, int) else STORE_SCHEMA_VERSION,
            embedding_model=model if isinstance(model, str) else None,
            embedding_dimension=dimension if isinstance(dimension, int) else None,
        )


def record_embedding(
    identity: EmbeddingIdentity,
    get: Callable[[str], Scalar | None],
    put: Callable[[str, Scalar], None],
) -> EmbeddingIdentity | None:
    """Record ``identity`` in a store's ``info`` table if no model is recorded yet.

    Returns:
        The model recorded before, for the caller to check against ``identity`` once its
        transaction is over; ``None`` when ``identity`` was recorded now.
    """
    keys = identity.to_metadata()
    recorded = EmbeddingIdentity.from_metadata({k: v for k in keys if (v := get(k)) is not None})
    if recorded is None:
        for key, value in keys.items():
            put(key, value)
    return recorded


def check_record(chunk_id: object, text: object, metadata: object) -> None:
    """Raise ValueError, naming the chunk id, when a record's fields are of the wrong kind."""
    if not isinstance(chunk_id, str) or not chunk_id:
        msg = f"chunk id must be a non-empty str, got {chunk_id!r}"
        raise ValueError(msg)
    if not isinstance(text, str):
        msg = f"chunk {chunk_id!r}: text must be a str, got {type(text).__name__}"
        raise ValueError(msg)
    if not isinstance(metadata, Mapping):
        msg = f"chunk {chunk_id!r}: metadata must be a mapping, got {type(metadata).__name__}"
        raise ValueError(msg)
    for key, value in metadata.items():
        if not isinstance(key, str):
            msg = f"chunk {chunk_id!r}: metadata key {key!r} is not a str"
            raise ValueError(msg)
        what = f"chunk {chunk_id!r}: metadata {key!r}"
        if isinstance(value, list):
            _check_list(value, what)
        else:
            check_scalar(value, what)
    for key, expected in (("chunk_id", chunk_id), ("source_id", None)):
        value = metadata.get(key)
        if value is not None and (not isinstance(value, str) or (expected is not None and value != expected)):
            msg = f"chunk {chunk_id!r}: metadata {key!r} is {value!r}"
            raise ValueError(msg)


def _check_list(value: list[object], what: str) -> None:
    kinds = {type(item) for item in value}
    if len(kinds) != 1 or not kinds <= {str, int, float, bool}:
        msg = f"{what} must be a non-empty list of str, int, float or bool of one type, got {value!r}"
        raise ValueError(msg)
    for item in value:
        check_scalar(item, what)


def check_scalar(value: object, what: str) -> None:
    if not isinstance(value, str | int | float):  # bool is an int
        msg = f"{what} must be a str, int, float or bool, got {type(value).__name__}"
        raise ValueError(msg)
    if isinstance(value, float) and not math.isfinite(value):
        msg = f"{what} must be a finite number, got {value!r}"
        raise ValueError(msg)


def record_rows(records: Iterable[StoredChunk]) -> list[Row]:
    """``(chunk_id, source_id, text, metadata JSON)`` per record, all checked before any write."""
    rows: list[Row] = []
    seen: set[str] = set()
    for record in records:
        if not isinstance(record, StoredChunk):
            msg = f"records must be StoredChunk, got {type(record).__name__}"
            raise TypeError(msg)
        # Checked again: a frozen dataclass can still be forced past __post_init__.
        check_record(record.chunk_id, record.text, record.metadata)
        if record.chunk_id in seen:
            msg = f"chunk {record.chunk_id!r} occurs twice"
            raise ValueError(msg)
        seen.add(record.chunk_id)
        rows.append((record.chunk_id, record.source_id, record.text, dumps(dict(record.metadata))))
    return rows


def decode_chunk(chunk_id: str, text: str, metadata: str) -> StoredChunk:
    if not isinstance(metadata, str):  # a BLOB another program wrote: never decoded as bytes
        msg = f"chunk {chunk_id!r}: stored metadata is a {type(metadata).__name__}, not JSON text"
        raise ValueError(msg)
    try:
        decoded = json.loads(metadata)
    except json.JSONDecodeError as exc:
        msg = f"chunk {chunk_id!r}: stored metadata is not valid JSON: {exc.msg}"
        raise ValueError(msg) from exc
    return StoredChunk(chunk_id, text, decoded)


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def canonical(metadata_json: str) -> str:
    """Key order does not make metadata different; ``1`` and ``True`` do (so no dict ``==``)."""
    return json.dumps(json.loads(metadata_json), ensure_ascii=False, sort_keys=True)


#: ``(chunk_id, source_id, text, metadata JSON)``: a record as every backend writes it.
Row: TypeAlias = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class ReplacePlan:
    """What :func:`plan_replace` decided for one source: the result, and the rows to write.

    Attributes:
        result: The ids added, removed, kept and updated.
        new: Rows to insert, with their position among the records.
        changed: Rows to rewrite (text or metadata changed), with their position.
        kept: Ids whose rows stay (only their order is written), with their position.
    """

    result: ReplaceResult
    new: tuple[tuple[int, Row], ...]
    changed: tuple[tuple[int, Row], ...]
    kept: tuple[tuple[int, str], ...]


def plan_replace(source_id: str, rows: list[Row], before: Mapping[str, tuple[str, str]]) -> ReplacePlan:
    """Which of ``rows`` are new, changed and kept, given the source's stored ``before``.

    Args:
        source_id: The source being replaced.
        rows: Its records, as :func:`record_rows` gives them, in document order.
        before: The source's stored chunks: chunk id -> (text, metadata JSON).

    Raises:
        ValueError: When a row names another source (the message names the chunk).
    """
    for chunk_id, row_source, _, _ in rows:
        if row_source not in ("", source_id):
            msg = f"chunk {chunk_id!r} has source_id {row_source!r}, not {source_id!r}"
            raise ValueError(msg)
    old = {chunk_id: (text, canonical(metadata)) for chunk_id, (text, metadata) in before.items()}
    incoming = {row[0] for row in rows}
    new: list[tuple[int, Row]] = []
    changed: list[tuple[int, Row]] = []
    kept: list[tuple[int, str]] = []
    for i, (chunk_id, _, text, metadata) in enumerate(rows):
        stored = old.get(chunk_id)
        row = (chunk_id, source_id, text, metadata)
        if stored is None:
            new.append((i, row))
        elif stored == (text, canonical(metadata)):
            kept.append((i, chunk_id))
        else:
            changed.append((i, row))
    result = ReplaceResult(
        added=tuple(row[0] for _, row in new),
        removed=tuple(sorted(set(old) - incoming)),
        kept=tuple(chunk_id for _, chunk_id in kept),
        updated=tuple(row[0] for _, row in changed),
    )
    return ReplacePlan(result=result, new=tuple(new), changed=tuple(changed), kept=tuple(kept))


def check_vectors_of(rows: list[Row], vectors: Mapping[str, str]) -> None:
    """Raise ValueError when a vector (vector id -> chunk id) points at a chunk not among ``rows``."""
    wanted = {row[0] for row in rows}
    for vector_id, chunk_id in vectors.items():
        if chunk_id not in wanted:
            msg = f"vector {vector_id!r} points at chunk {chunk_id!r}, which is not among the records"
            raise ValueError(msg)


def schema_version_error(version: object, where: str) -> ValueError | None:
    """The error for a store at ``where`` holding schema ``version``, or ``None`` when it is ours."""
    if isinstance(version, bool) or not isinstance(version, int) or version > STORE_SCHEMA_VERSION:
        return ValueError(
            f"{where} has store schema version {version!r}; this version of "
            f"procedure-rag reads version {STORE_SCHEMA_VERSION}: upgrade procedure-rag to open it"
        )
    if version != STORE_SCHEMA_VERSION:
        return ValueError(f"{where} has unknown store schema version {version!r}")
    return None

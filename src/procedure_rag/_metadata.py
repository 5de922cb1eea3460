"""Chunk metadata as flat, store-ready dicts, and the way back.

Every value written is a ``str``, ``int``, ``float`` or ``bool`` so that any
vector store (Chroma included) takes it as it is. Nested structures are JSON
strings; :func:`read_metadata` turns them back into lists and dicts.

A document's own metadata (front matter, a LangChain ``Document.metadata``, a
LlamaIndex node's metadata) is data, never a query: its values become scalars the
same way (a dict shaped like a filter operator, ``{"$ne": "x"}``, is stored as the
text ``'{"$ne":"x"}'``), and its keys are kept as they are in the docstore, but a key
a vector store would read as an operator or refuses (``$or``, ``#document``,
``chroma:…``, ``""``) is not copied onto vectors (:func:`is_filter_key`), so it can
neither break a write nor change what a filtered search returns.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring
from typing import Any

from procedure_rag._types import SCHEMA_VERSION, BBox, Chunk, ChunkLevel, ChunkType, ProcedureStep, Span

__all__ = [
    "JSON_KEYS",
    "OPTIONAL_KEYS",
    "STRUCTURAL_KEYS",
    "chunk_from_metadata",
    "chunk_metadata",
    "document_value",
    "is_chunk_metadata",
    "is_filter_key",
    "read_metadata",
    "same_metadata",
]

#: Keys whose values are JSON strings.
JSON_KEYS = (
    "section_path",
    "steps",
    "step_numbers",
    "related_elements",
    "source_spans",
    "context_spans",
    "child_ids",
    "element_ids",
    "pages",
    "boxes",
    "source_record_refs",
)

#: Keys this package writes (document metadata keys are kept besides them).
STRUCTURAL_KEYS = (
    "schema_version",
    "chunk_id",
    "chunk_type",
    "chunk_level",
    "parent_id",
    "source_id",
    "language",
    "section",
    "section_path",
    "steps",
    "step_numbers",
    "step_count",
    "condition",
    "lead_in",
    "has_condition",
    "has_caution",
    "has_result",
    "related_elements",
    "source_spans",
    "context_spans",
    "element_ids",
    "child_ids",
    "continued",
    "page",
    "pages",
    "boxes",
    "source_record_refs",
    "sheet",
    "start_index",
)


#: Keys written only when there is something to say: pages and boxes for sources that
#: have them, parser record ids for parser output, the sheet for workbooks,
#: ``start_index`` when an adapter asks.
OPTIONAL_KEYS = ("page", "pages", "boxes", "source_record_refs", "sheet", "start_index")


#: Key prefixes vector stores read as something other than a field: Chroma's filter
#: operators (``$and``, ``$or``, ``$ne``, ``$contains``…) and document fields
#: (``#document``), and its reserved keys (``chroma:document``; other ``chroma:``
#: keys it silently drops).
_OPERATOR_PREFIXES = ("$", "#", "chroma:")


#: ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` without building
#: an encoder on every call (a chunk's metadata holds seven JSON values).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _dumps(value: object) -> str:
    return _ENCODER.encode(value)


def _dumps_strs(values: Iterable[str]) -> str:
    """``_dumps(list(values))`` for strings, without the encoder's walk."""
    return "[" + ",".join(map(encode_basestring, values)) + "]"


def _dumps_spans(spans: Iterable[Span]) -> str:
    """``_dumps([[s.start, s.end] for s in spans])``, without the encoder's walk."""
    return "[" + ",".join([f"[{s.start:d},{s.end:d}]" for s in spans]) + "]"


def is_filter_key(key: str) -> bool:
    """Whether a metadata key may be copied onto vectors, where store filters read it.

    False for the empty key and for keys a vector store reads as an operator or
    reserves (starting with ``$``, ``#`` or ``chroma:``): Chroma refuses such a key in
    a write, and a filter naming it would be an operator, not a field. The docstore
    keeps such keys with the chunk; only the vectors go without them.
    """
    return bool(key) and not key.startswith(_OPERATOR_PREFIXES)


def document_value(value: object) -> str | int | float | bool | list[Any] | None:
    """A document metadata value as the stores keep it, or ``None`` to leave it out.

    ``str``, ``int``, finite ``float`` and ``bool`` stay as they are; so does a non-empty
    list (or tuple, or set, sorted) of one of those types, which Chroma stores and filters
    with ``$contains``; ``None`` is left out (Chroma refuses it, and it says nothing a
    filter could match); other lists and dicts become JSON text (so a dict shaped like a
    filter operator is inert text); anything else (a date, a path, ``nan``) its ``str``.
    """
    if value is None:
        return None
    if isinstance(value, str | int | bool) or (isinstance(value, float) and math.isfinite(value)):
        return value
    if isinstance(value, Mapping | list | tuple | set | frozenset):
        plain = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        if not isinstance(plain, Mapping) and _one_scalar_type(plain):
            return list(plain)
        try:
            return json.dumps(plain, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
        except (TypeError, ValueError, RecursionError):  # odd keys, nan inside, absurd nesting
            return str(plain)
    return str(value)


def _one_scalar_type(items: Iterable[object]) -> bool:
    """Whether ``items`` is non-empty and all ``str``, all ``int``, all finite ``float`` or all ``bool``."""
    kinds = {type(item) for item in items}
    if len(kinds) != 1 or not kinds <= {str, int, float, bool}:
        return False
    return all(math.isfinite(item) for item in items if isinstance(item, float))


def _document_metadata(metadata: Mapping[Any, Any]) -> dict[str, Any]:
    """A deep copy of the document's metadata, as LangChain's splitters copy it.

    Values are kept as they are, ``None`` included (both frameworks' own splitters keep
    them); :func:`document_value` makes them what a store keeps when they are written.

    Raises:
        ValueError: When a key is not a str (the message names it).
    """
    for key in metadata:
        if not isinstance(key, str):
            msg = f"document metadata key {key!r} is a {type(key).__name__}, not a str"
            raise ValueError(msg)
    return copy.deepcopy(dict(metadata))


def chunk_metadata(chunk: Chunk, document_metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return the metadata of ``chunk`` as a flat dict.

    Args:
        chunk: The chunk.
        document_metadata: The input document's own metadata. It is copied first (a
            deep copy, values as they are, ``None`` included, as the frameworks' own
            splitters copy it); this package's keys are written over it.

    Returns:
        A new dict: the document's values as they were, then this package's keys,
        every one a scalar (nested values as JSON strings).

    Raises:
        ValueError: When a document metadata key is not a str.
    """
    out: dict[str, Any] = _document_metadata(document_metadata or {})
    steps = [s.to_dict() for s in chunk.steps]
    out.update(
        {
            "schema_version": SCHEMA_VERSION,
            "chunk_id": chunk.chunk_id,
            "chunk_type": chunk.chunk_type.value,
            "chunk_level": chunk.level.value,
            "parent_id": chunk.parent_id or "",
            "source_id": chunk.source_id,
            "language": chunk.language,
            "section": " > ".join(chunk.section_path),
            "section_path": _dumps_strs(chunk.section_path),
            "steps": _dumps(steps),
            "step_numbers": _dumps_strs(dict.fromkeys(n for s in chunk.steps if (n := s.step_number))),
            "step_count": len(steps),
            "condition": chunk.condition,
            "lead_in": chunk.lead_in,
            "has_condition": bool(chunk.condition) or any(s.condition for s in chunk.steps),
            "has_caution": any(s.caution for s in chunk.steps),
            "has_result": any(s.result for s in chunk.steps),
            "related_elements": _dumps(
                [{"element_id": e, "kind": k, "chunk_id": c} for e, k, c in chunk.related_elements]
            ),
            "source_spans": _dumps_spans(chunk.source_spans),
            "context_spans": _dumps_spans(chunk.context_spans),
            "element_ids": _dumps_strs(chunk.element_ids),
            "child_ids": _dumps_strs(chunk.child_ids),
            "continued": chunk.continued,
        }
    )
    if chunk.page is not None:
        out["page"] = chunk.page
    if chunk.boxes:
        out["pages"] = _dumps(sorted({p for p, _ in chunk.boxes if p is not None}))
        out["boxes"] = _dumps([_box(page, box) for page, box in chunk.boxes])
    if chunk.source_record_refs:
        out["source_record_refs"] = _dumps(list(chunk.source_record_refs))
    if chunk.sheet:
        out["sheet"] = chunk.sheet
    return out


def _box(page: int | None, box: BBox) -> dict[str, object]:
    out: dict[str, object] = {"page": page, "bbox": box.as_list()}
    if box.page_width is not None and box.page_height is not None:
        out["page_size"] = [box.page_width, box.page_height, box.unit]
    return out


def read_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of ``metadata`` with the JSON-string keys decoded.

    Keys that are absent or already decoded are left as they are.

    Raises:
        ValueError: When a JSON key holds a string that is not valid JSON.
    """
    out = dict(metadata)
    for key in JSON_KEYS:
        value = out.get(key)
        if isinstance(value, str):
            try:
                out[key] = json.loads(value)
            except json.JSONDecodeError as exc:
                msg = f"metadata key {key!r} is not valid JSON: {exc.msg}"
                raise ValueError(msg) from exc
    return out


#: Keys :func:`chunk_from_metadata` cannot do without.
_REQUIRED_KEYS = ("schema_version", "chunk_id", "chunk_type", "chunk_level", "source_id", "language")


def is_chunk_metadata(metadata: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` is a chunk's, as :func:`chunk_metadata` of this schema wrote it.

    The adapters pass such documents through unchanged rather than chunking a chunk
    again (a loader's output given to the splitter).
    """
    return metadata.get("schema_version") == SCHEMA_VERSION and all(k in metadata for k in _REQUIRED_KEYS)


def chunk_from_metadata(text: str, metadata: Mapping[str, Any]) -> Chunk:
    """Rebuild the :class:`Chunk` that :func:`chunk_metadata` described.

    This is the way back for chunks that went through a framework as text plus
    flat metadata (a LangChain ``Document``, a LlamaIndex ``TextNode``), so that
    later stages that need the structure (representation generators) do not have
    to chunk the document again. JSON-string values are decoded as by
    :func:`read_metadata`; extra keys (the input document's own) are ignored.

    The metadata does not keep everything: :meth:`ProcedureStep.to_dict` drops a
    step's full ``text`` (markup and result sentence included), so the rebuilt step's
    ``text`` is its ``action`` unless the step dict has a ``text``; a step's
    ``element_id`` is empty; boxes keep 4 decimal places.
    ``chunk_metadata(chunk_from_metadata(t, m))`` gives back ``m``'s structural keys.

    Args:
        text: The chunk's text (``page_content`` / the node's text).
        metadata: Metadata written by :func:`chunk_metadata`.

    Returns:
        The chunk.

    Raises:
        ValueError: When a required key is missing, the schema version is not
            :data:`SCHEMA_VERSION`, a value is of the wrong kind, or a JSON key
            holds invalid JSON.
    """
    missing = [key for key in _REQUIRED_KEYS if key not in metadata]
    if missing:
        msg = f"metadata lacks {', '.join(missing)}: it was not written by chunk_metadata"
        raise ValueError(msg)
    if metadata["schema_version"] != SCHEMA_VERSION:
        msg = (
            f"metadata schema_version is {metadata['schema_version']!r}, this version reads {SCHEMA_VERSION}"
        )
        raise ValueError(msg)
    meta = read_metadata(metadata)
    try:
        return Chunk(
            chunk_id=str(meta["chunk_id"]),
            text=text,
            chunk_type=ChunkType(meta["chunk_type"]),
            level=ChunkLevel(meta["chunk_level"]),
            section_path=tuple(meta.get("section_path", ())),
            source_id=str(meta["source_id"]),
            language=str(meta["language"]),
            steps=tuple(_step(step) for step in meta.get("steps", ())),
            lead_in=str(meta.get("lead_in", "")),
            condition=str(meta.get("condition", "")),
            source_spans=tuple(Span(start, end) for start, end in meta.get("source_spans", ())),
            context_spans=tuple(Span(start, end) for start, end in meta.get("context_spans", ())),
            element_ids=tuple(meta.get("element_ids", ())),
            related_elements=tuple(
                (e["element_id"], e["kind"], e["chunk_id"]) for e in meta.get("related_elements", ())
            ),
            page=meta.get("page"),
            parent_id=meta.get("parent_id") or None,
            child_ids=tuple(meta.get("child_ids", ())),
            continued=bool(meta.get("continued", False)),
            boxes=tuple(
                (box.get("page"), _bbox(box["bbox"], box.get("page_size"))) for box in meta.get("boxes", ())
            ),
            source_record_refs=tuple(meta.get("source_record_refs", ())),
            sheet=str(meta.get("sheet", "")),
        )
    except (KeyError, TypeError) as exc:
        msg = f"metadata of chunk {meta['chunk_id']!r} is malformed: {exc!r}"
        raise ValueError(msg) from exc


def _step(data: Mapping[str, Any]) -> ProcedureStep:
    """The inverse of :meth:`ProcedureStep.to_dict`, as far as it goes."""
    bbox = data.get("bbox")
    return ProcedureStep(
        number=data["number"],
        text=data.get("text") or data["action"],
        action=data["action"],
        target=data.get("target", ""),
        condition=data.get("condition", ""),
        result=data.get("result", ""),
        caution=data.get("caution", ""),
        depth=data.get("depth", 0),
        parent_number=data.get("parent_number", ""),
        page=data.get("page"),
        bbox=None if bbox is None else _bbox(bbox, None),
        is_continuation=bool(data.get("continued", False)),
    )


def _bbox(coords: list[float], page_size: list[Any] | None) -> BBox:
    left, top, right, bottom = coords
    if page_size is None:
        return BBox(left, top, right, bottom)
    width, height, unit = page_size
    return BBox(left, top, right, bottom, width, height, unit)


def same_metadata(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    """Equal metadata, where ``1`` and ``True`` differ (a filter on ``True`` misses ``1``)."""
    return json.dumps(dict(a), sort_keys=True) == json.dumps(dict(b), sort_keys=True)

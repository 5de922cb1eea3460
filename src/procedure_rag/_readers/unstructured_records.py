"""Unstructured records read into entries: the intake of the Unstructured reader.

The same records reach the reader as ``unstructured`` ``Element`` objects (read
duck-typed), their JSON, or ``(text, metadata)`` pairs of framework documents. This
module reads any of them into :class:`Entry` values, one per element that carries
text: the kind, the text (tables from ``text_as_html``), page, box and the parser's
hierarchy (``category_depth``, ``parent_id``), every field checked, so that a bad
record raises a :class:`ReaderError` naming it. The passes over the entries (notes,
sections, lists and step numbers) are :mod:`procedure_rag._readers.unstructured`.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from procedure_rag._errors import ReaderError
from procedure_rag._readers.draft import ElementDraft
from procedure_rag._readers.tables import html_table_to_markdown
from procedure_rag._types import BBox, ElementKind

__all__ = ["FORMAT", "KINDS", "Entry", "as_records", "read_entries"]

FORMAT = "unstructured"

#: Unstructured categories and the kinds they become; ``None`` means "no element"
#: (a page break carries no text).
KINDS: Mapping[str, ElementKind | None] = {
    "Title": ElementKind.SECTION_HEADER,
    "Section-header": ElementKind.SECTION_HEADER,
    "Headline": ElementKind.SECTION_HEADER,
    "Subheadline": ElementKind.SECTION_HEADER,
    "NarrativeText": ElementKind.TEXT,
    "UncategorizedText": ElementKind.TEXT,
    "Text": ElementKind.TEXT,
    "Paragraph": ElementKind.TEXT,
    "Abstract": ElementKind.TEXT,
    "CompositeElement": ElementKind.TEXT,
    "Address": ElementKind.TEXT,
    "EmailAddress": ElementKind.TEXT,
    "Link": ElementKind.TEXT,
    "ListItem": ElementKind.LIST_ITEM,
    "List-item": ElementKind.LIST_ITEM,
    "BulletedText": ElementKind.LIST_ITEM,
    "Table": ElementKind.TABLE,
    "TableChunk": ElementKind.TABLE,
    "Image": ElementKind.PICTURE,
    "Picture": ElementKind.PICTURE,
    "Figure": ElementKind.PICTURE,
    "FigureCaption": ElementKind.CAPTION,
    "Caption": ElementKind.CAPTION,
    "Header": ElementKind.PAGE_HEADER,
    "Page-header": ElementKind.PAGE_HEADER,
    "Footer": ElementKind.PAGE_FOOTER,
    "Page-footer": ElementKind.PAGE_FOOTER,
    "PageNumber": ElementKind.PAGE_FOOTER,
    "Footnote": ElementKind.FOOTNOTE,
    "Formula": ElementKind.FORMULA,
    "CodeSnippet": ElementKind.CODE,
    "FormKeysValues": ElementKind.FORM,
    "Form": ElementKind.FORM,
    "PageBreak": None,
}

# Coordinate systems: (y axis points down, unit of the page size).
_SYSTEMS: Mapping[str, tuple[bool, str]] = {
    "PixelSpace": (True, "px"),
    "PointSpace": (False, "pt"),
    "RelativeCoordinateSystem": (False, ""),
    "CoordinateSystem": (True, ""),
}


# -- records -----------------------------------------------------------------------------------


def _record_name(metadata: Mapping[str, Any], index: int) -> str:
    rid = metadata.get("element_id")
    return rid if isinstance(rid, str) and rid else f"#{index}"


def _object_record(element: object, index: int) -> tuple[object, dict[str, Any]]:
    """``(text, metadata)`` of an ``unstructured`` ``Element`` (read duck-typed)."""
    to_dict = getattr(getattr(element, "metadata", None), "to_dict", None)
    metadata = to_dict() if callable(to_dict) else {}
    if not isinstance(metadata, dict):
        raise ReaderError(FORMAT, f"#{index}", "metadata.to_dict() did not return a dict")
    element_id = getattr(element, "id", None) or getattr(element, "element_id", None)
    metadata.update(category=getattr(element, "category", None), element_id=element_id)
    return getattr(element, "text", None), metadata


def _dict_record(record: Mapping[str, Any], index: int) -> tuple[object, dict[str, Any]]:
    """``(text, metadata)`` of one ``elements_to_json`` record."""
    metadata = record.get("metadata", {})
    if not isinstance(metadata, Mapping):
        name = _record_name(record, index)
        raise ReaderError(FORMAT, name, f"metadata is a {type(metadata).__name__}, not an object")
    if "type" not in record:
        raise ReaderError(FORMAT, _record_name(record, index), "has no 'type'")
    return record.get("text"), {
        **metadata,
        "category": record["type"],
        "element_id": record.get("element_id"),
    }


def as_records(source: object) -> Iterator[tuple[object, Mapping[str, Any]]]:
    if not isinstance(source, list | tuple):
        msg = f"expected a list of elements or element dicts, got {type(source).__name__}"
        raise ReaderError(FORMAT, "source", msg)
    for index, element in enumerate(source):
        if isinstance(element, Mapping):
            yield _dict_record(element, index)
        elif hasattr(element, "category") and hasattr(element, "text"):
            yield _object_record(element, index)
        else:
            msg = f"is a {type(element).__name__}, not an Unstructured element or element dict"
            raise ReaderError(FORMAT, f"#{index}", msg)


def _expand_originals(
    records: Iterable[tuple[object, Mapping[str, Any]]],
) -> Iterator[tuple[int, object, Mapping[str, Any]]]:
    """Number the records, replacing a chunk (``CompositeElement``) by its ``orig_elements``."""
    index = 0
    for text, metadata in records:
        packed = metadata.get("orig_elements") if isinstance(metadata, Mapping) else None
        if isinstance(packed, str) and packed:
            for orig_text, orig_meta in as_records(_unpack(packed, _record_name(metadata, index))):
                yield index, orig_text, orig_meta
                index += 1
            continue
        yield index, text, metadata
        index += 1


def _unpack(packed: str, name: str) -> object:
    """Decode ``orig_elements`` (Base64 of zlib-compressed JSON) without importing unstructured."""
    try:
        return json.loads(zlib.decompress(base64.b64decode(packed, validate=True)))
    except (binascii.Error, zlib.error, ValueError) as exc:
        raise ReaderError(FORMAT, name, f"orig_elements cannot be decoded: {exc}") from exc


# -- one record -> one entry ---------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class Entry(ElementDraft):
    """One element on its way to a :class:`LayoutElement`, with the parser's hierarchy.

    ``name`` is the record's ``element_id`` (``#index`` without one), ``depth`` its
    ``category_depth`` and ``parent`` its ``parent_id``; the passes fill in ``path``
    (the section path), ``item_parent`` (the index of the enclosing list item) and
    ``marked`` (the text opened with a step marker, kept as the number).
    """

    name: str
    page: int | None = None
    bbox: BBox | None = None
    depth: int | None = None
    parent: str | None = None
    path: tuple[str, ...] = ()
    item_parent: int | None = None
    marked: bool = False


def _int_field(metadata: Mapping[str, Any], key: str, name: str, minimum: int) -> int | None:
    value = metadata.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ReaderError(FORMAT, name, f"{key} is a {type(value).__name__}, not an int")
    if value < minimum:
        problem = (
            f"page_number {value} is not a page (pages count from 1)"
            if key == "page_number"
            else f"{key} {value} is negative"
        )
        raise ReaderError(FORMAT, name, problem)
    return value


def _number(value: object) -> float | None:
    """A finite number, else ``None`` (NaN, infinities and integers past a float are no coordinates)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _points(points: object, name: str) -> tuple[list[float], list[float]]:
    """``(xs, ys)`` of ``[[x, y], …]``; anything else raises :class:`ReaderError`."""
    xs: list[float] = []
    ys: list[float] = []
    if isinstance(points, Sequence) and not isinstance(points, str):
        for point in points:
            if isinstance(point, Sequence) and len(point) == 2:
                x, y = _number(point[0]), _number(point[1])
                if x is not None and y is not None:
                    xs.append(x)
                    ys.append(y)
                    continue
            break
        else:
            if xs:
                return xs, ys
    raise ReaderError(FORMAT, name, f"coordinates points {points!r} are not [x, y] number pairs")


def _bbox(coordinates: object, name: str) -> BBox | None:
    """Normalise Unstructured ``coordinates`` (points in a coordinate system) to a top-left box."""
    if coordinates is None:
        return None
    if not isinstance(coordinates, Mapping):
        raise ReaderError(FORMAT, name, f"coordinates is a {type(coordinates).__name__}, not an object")
    if coordinates.get("points") is None:
        return None
    xs, ys = _points(coordinates["points"], name)
    system = coordinates.get("system")
    if not isinstance(system, str) or system not in _SYSTEMS:
        raise ReaderError(FORMAT, name, f"unknown coordinate system {system!r}")
    y_down, unit = _SYSTEMS[system]
    width, height = _number(coordinates.get("layout_width")), _number(coordinates.get("layout_height"))
    if width is None or height is None or width <= 0 or height <= 0:
        problem = f"coordinates in {system} have no page size (layout_width, layout_height)"
        raise ReaderError(FORMAT, name, problem)
    # Cartesian systems (PointSpace, relative) count y up from the bottom of the page.
    top, bottom = (min(ys), max(ys)) if y_down else (height - max(ys), height - min(ys))
    try:
        return BBox(
            min(xs) / width,
            top / height,
            max(xs) / width,
            bottom / height,
            width if unit else None,
            height if unit else None,
            unit,
        )
    except ValueError:
        problem = f"coordinates {coordinates['points']!r} are outside the {system} {width:g}x{height:g} page"
        raise ReaderError(FORMAT, name, problem) from None


def _entry(index: int, text: object, metadata: Mapping[str, Any]) -> Entry | None:
    if not isinstance(metadata, Mapping):
        raise ReaderError(FORMAT, f"#{index}", f"metadata is a {type(metadata).__name__}, not an object")
    name = _record_name(metadata, index)
    category = metadata.get("category")
    if category is None:
        raise ReaderError(FORMAT, name, "has no 'type' (category)")
    if not isinstance(category, str):
        raise ReaderError(FORMAT, name, f"type is a {type(category).__name__}, not a str")
    if not isinstance(text, str):
        raise ReaderError(FORMAT, name, f"text is a {type(text).__name__}, not a str")
    kind = KINDS.get(category, ElementKind.TEXT)
    page = _int_field(metadata, "page_number", name, 1)
    depth = _int_field(metadata, "category_depth", name, 0)
    bbox = _bbox(metadata.get("coordinates"), name)
    parent = metadata.get("parent_id")
    if parent is not None and not isinstance(parent, str):
        raise ReaderError(FORMAT, name, f"parent_id is a {type(parent).__name__}, not a str")
    if kind is None:
        return None
    hints: tuple[tuple[str, str], ...] = (("category", category),)
    url = metadata.get("image_url") or metadata.get("image_path")
    if kind is ElementKind.PICTURE and isinstance(url, str):
        hints += (("url", url),)
    html = metadata.get("text_as_html")
    if kind is ElementKind.TABLE and isinstance(html, str) and html.strip():
        text = html_table_to_markdown(html) or text
    elif kind not in (ElementKind.CODE, ElementKind.TABLE, ElementKind.FORMULA):
        text = text.strip()
    if not text.strip() and not (kind is ElementKind.PICTURE and url):
        return None
    return Entry(kind, text, hints=hints, name=name, page=page, bbox=bbox, depth=depth, parent=parent or None)


def _check_parents(entries: Sequence[Entry]) -> None:
    """Raise :class:`ReaderError` for a ``parent_id`` cycle."""
    parent_of = {e.name: e.parent for e in entries}
    done: set[str] = set()
    for e in entries:
        chain: list[str] = []
        node: str | None = e.name
        while node is not None and node not in done:
            if node in chain:
                cycle = " -> ".join([*chain[chain.index(node) :], node])
                raise ReaderError(FORMAT, node, f"parent_id cycle: {cycle}")
            chain.append(node)
            node = parent_of.get(node)
        done.update(chain)


def read_entries(records: Iterable[tuple[object, Mapping[str, Any]]]) -> list[Entry]:
    """The entries of ``(text, metadata)`` records, a chunk's ``orig_elements`` in its place.

    Raises:
        ReaderError: For a malformed record or a ``parent_id`` cycle, naming the record.
    """
    entries = [
        e
        for index, text, metadata in _expand_originals(records)
        if (e := _entry(index, text, metadata)) is not None
    ]
    _check_parents(entries)
    return entries

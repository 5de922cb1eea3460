"""Reader for Unstructured elements, and for framework documents made of them.

Unstructured (``partition_*``) gives a flat list of elements: ``Title``,
``NarrativeText``, ``ListItem``, ``Table``, ``Image``… with metadata that keeps the
parser's hierarchy (``category_depth``, ``parent_id``), the page and the box. The
same records reach us in three shapes, all read here as ``(text, metadata)`` pairs
whose metadata holds ``category`` and ``element_id``:

* the library's own ``Element`` objects (read duck-typed, so ``unstructured`` is
  never imported);
* their JSON (``elements_to_json``: dicts with ``type``, ``element_id``, ``text``,
  ``metadata``);
* framework documents, one per element, as ``UnstructuredLoader(mode="elements")``
  and LlamaIndex's ``UnstructuredReader`` yield them (:func:`iter_records`; the
  adapters group them with :func:`iter_record_groups`).

Unstructured strips list markers (``<ol>`` numbers, bullets). Step numbers come
back by this rule, in order of evidence:

1. an item (or a paragraph) whose text still opens with a marker keeps it as
   written (:func:`~procedure_rag._language.numbering.match_step_marker`);
2. otherwise the items of one list are numbered ``"1."``, ``"2."``… in reading
   order (each nested list from 1 under its parent item) when the list is
   *ordered*: its lead-in, the paragraph right before a top-level list or the
   parent item's own text for a nested one, introduces steps in the chunker's
   own terms (the lexicon's lead-in: ends with ``:``/``：``, "the following
   steps", 次の手順, "To …,"); or the heading right above the list names a
   procedure (:data:`PROCEDURE_HEADINGS`: "… procedure", "How to …", 手順,
   〜するには); or more than half of its items read as steps
   (:data:`STEP_SENTENCES`: 〜します。/〜してください。, "Select …", "Press …");
3. otherwise the items are bullets (``"-"``).

A list is a run of consecutive ``ListItem`` elements; pictures, captions and
blocks whose ``parent_id`` is an item or whose box is indented past the items'
left edge sit inside the item before them and do not break the run. Two lists
with nothing between them read as one (Unstructured gives no list boundary).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from procedure_rag._errors import ReaderError
from procedure_rag._language.labels import leading_label
from procedure_rag._language.lexicons import LEXICONS, Lexicon, detect_language, split_sentences
from procedure_rag._language.numbering import match_heading_number, match_step_marker
from procedure_rag._readers.registry import FORMATS, SUFFIXES, check_size, load_json
from procedure_rag._readers.tables import pipe_table
from procedure_rag._types import MAX_HEADING_LEVEL, BBox, Chunk, ElementKind, LayoutElement

if TYPE_CHECKING:
    from procedure_rag._chunking.chunker import ProcedureChunker

__all__ = [
    "ELEMENT_METADATA_KEYS",
    "PROCEDURE_HEADINGS",
    "STEP_SENTENCES",
    "RecordGroup",
    "format_hint",
    "is_element_metadata",
    "iter_document_chunks",
    "iter_record_groups",
    "iter_records",
    "iter_unstructured",
    "read_unstructured",
]

_FORMAT = "unstructured"
_T = TypeVar("_T")

#: Unstructured categories and the kinds they become; ``None`` means "no element"
#: (a page break carries no text).
_KINDS: Mapping[str, ElementKind | None] = {
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

#: Metadata keys that describe one element rather than its document; a chunk made of
#: many elements does not inherit them.
ELEMENT_METADATA_KEYS = frozenset(
    {
        "category",
        "element_id",
        "parent_id",
        "category_depth",
        "coordinates",
        "text_as_html",
        "page_number",
        "orig_elements",
        "image_url",
        "image_path",
        "image_base64",
        "image_mime_type",
        "emphasized_text_contents",
        "emphasized_text_tags",
        "link_texts",
        "link_urls",
        "link_start_indexes",
        "detection_class_prob",
        "is_continuation",
        "header_footer_type",
        "key_value_pairs",
        "table_as_cells",
    }
)

# Coordinate systems: (y axis points down, unit of the page size).
_SYSTEMS: Mapping[str, tuple[bool, str]] = {
    "PixelSpace": (True, "px"),
    "PointSpace": (False, "pt"),
    "RelativeCoordinateSystem": (False, ""),
    "CoordinateSystem": (True, ""),
}

#: Sentences that read as a step, per language: a list most of whose items match is
#: numbered even without a lead-in (Japanese manuals often have none).
STEP_SENTENCES: Mapping[str, re.Pattern[str]] = {
    "ja": re.compile(r"(?:ます|ください|しょう)[。．]?\s*$"),
    "en": re.compile(
        r"^(?:(?:On|In|From|Under|At)\b[^,.]{1,80},\s*)?(?:Select|Click|Tap|Press|Open|Close|Go|Enter|"
        r"Type|Choose|Connect|Disconnect|Unplug|Plug|Wait|Hold|Turn|Change|Check|Ensure|Make|Install|"
        r"Run|Sign|Restart|Use|Follow|Set|Add|Remove|Delete|Save|Navigate|Download|Copy|Paste|Insert|"
        r"Release|Drag|Scroll|Swipe|Switch|Confirm|Verify|Find|Locate|Launch|Start|Stop|Reboot|"
        r"Configure|Create|Edit|Update|Upload|Log|Attach|Apply|Specify|Review|Repeat)\b"
    ),
}

#: Headings that name a procedure, per language: a list right under one is numbered.
PROCEDURE_HEADINGS: Mapping[str, re.Pattern[str]] = {
    "ja": re.compile(r"手順|方法|やり方|するには|ためには|操作"),
    "en": re.compile(r"\b(?:procedures?|steps?|how to|instructions)\b|^To\s", re.IGNORECASE),
}

# Room (fraction of the page width) a block must start right of a list's items to sit inside one.
_INDENT = 0.01


# -- records -----------------------------------------------------------------------------------


def _record_name(metadata: Mapping[str, Any], index: int) -> str:
    rid = metadata.get("element_id")
    return rid if isinstance(rid, str) and rid else f"#{index}"


def _object_record(element: object, index: int) -> tuple[object, dict[str, Any]]:
    """``(text, metadata)`` of an ``unstructured`` ``Element`` (read duck-typed)."""
    to_dict = getattr(getattr(element, "metadata", None), "to_dict", None)
    metadata = to_dict() if callable(to_dict) else {}
    if not isinstance(metadata, dict):
        raise ReaderError(_FORMAT, f"#{index}", "metadata.to_dict() did not return a dict")
    element_id = getattr(element, "id", None) or getattr(element, "element_id", None)
    metadata.update(category=getattr(element, "category", None), element_id=element_id)
    return getattr(element, "text", None), metadata


def _dict_record(record: Mapping[str, Any], index: int) -> tuple[object, dict[str, Any]]:
    """``(text, metadata)`` of one ``elements_to_json`` record."""
    metadata = record.get("metadata", {})
    if not isinstance(metadata, Mapping):
        name = _record_name(record, index)
        raise ReaderError(_FORMAT, name, f"metadata is a {type(metadata).__name__}, not an object")
    if "type" not in record:
        raise ReaderError(_FORMAT, _record_name(record, index), "has no 'type'")
    return record.get("text"), {
        **metadata,
        "category": record["type"],
        "element_id": record.get("element_id"),
    }


def _as_records(source: object) -> Iterator[tuple[object, Mapping[str, Any]]]:
    if not isinstance(source, list | tuple):
        msg = f"expected a list of elements or element dicts, got {type(source).__name__}"
        raise ReaderError(_FORMAT, "source", msg)
    for index, element in enumerate(source):
        if isinstance(element, Mapping):
            yield _dict_record(element, index)
        elif hasattr(element, "category") and hasattr(element, "text"):
            yield _object_record(element, index)
        else:
            msg = f"is a {type(element).__name__}, not an Unstructured element or element dict"
            raise ReaderError(_FORMAT, f"#{index}", msg)


def _expand_originals(
    records: Iterable[tuple[object, Mapping[str, Any]]],
) -> Iterator[tuple[int, object, Mapping[str, Any]]]:
    """Number the records, replacing a chunk (``CompositeElement``) by its ``orig_elements``."""
    index = 0
    for text, metadata in records:
        packed = metadata.get("orig_elements") if isinstance(metadata, Mapping) else None
        if isinstance(packed, str) and packed:
            for orig_text, orig_meta in _as_records(_unpack(packed, _record_name(metadata, index))):
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
        raise ReaderError(_FORMAT, name, f"orig_elements cannot be decoded: {exc}") from exc


# -- one record -> one entry ---------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    """One element on its way to a :class:`LayoutElement`."""

    name: str
    kind: ElementKind
    text: str
    page: int | None = None
    bbox: BBox | None = None
    depth: int | None = None
    parent: str | None = None
    hints: tuple[tuple[str, str], ...] = ()
    admonition: str = ""
    number: str = ""
    ordered: bool = False
    level: int = 0
    path: tuple[str, ...] = ()
    item_parent: int | None = None
    list_id: str | None = None
    marked: bool = False


def _int_field(metadata: Mapping[str, Any], key: str, name: str, minimum: int) -> int | None:
    value = metadata.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ReaderError(_FORMAT, name, f"{key} is a {type(value).__name__}, not an int")
    if value < minimum:
        problem = (
            f"page_number {value} is not a page (pages count from 1)"
            if key == "page_number"
            else f"{key} {value} is negative"
        )
        raise ReaderError(_FORMAT, name, problem)
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
    raise ReaderError(_FORMAT, name, f"coordinates points {points!r} are not [x, y] number pairs")


def _bbox(coordinates: object, name: str) -> BBox | None:
    """Normalise Unstructured ``coordinates`` (points in a coordinate system) to a top-left box."""
    if coordinates is None:
        return None
    if not isinstance(coordinates, Mapping):
        raise ReaderError(_FORMAT, name, f"coordinates is a {type(coordinates).__name__}, not an object")
    if coordinates.get("points") is None:
        return None
    xs, ys = _points(coordinates["points"], name)
    system = coordinates.get("system")
    if not isinstance(system, str) or system not in _SYSTEMS:
        raise ReaderError(_FORMAT, name, f"unknown coordinate system {system!r}")
    y_down, unit = _SYSTEMS[system]
    width, height = _number(coordinates.get("layout_width")), _number(coordinates.get("layout_height"))
    if width is None or height is None or width <= 0 or height <= 0:
        problem = f"coordinates in {system} have no page size (layout_width, layout_height)"
        raise ReaderError(_FORMAT, name, problem)
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
        raise ReaderError(_FORMAT, name, problem) from None


def _entry(index: int, text: object, metadata: Mapping[str, Any]) -> _Entry | None:
    if not isinstance(metadata, Mapping):
        raise ReaderError(_FORMAT, f"#{index}", f"metadata is a {type(metadata).__name__}, not an object")
    name = _record_name(metadata, index)
    category = metadata.get("category")
    if category is None:
        raise ReaderError(_FORMAT, name, "has no 'type' (category)")
    if not isinstance(category, str):
        raise ReaderError(_FORMAT, name, f"type is a {type(category).__name__}, not a str")
    if not isinstance(text, str):
        raise ReaderError(_FORMAT, name, f"text is a {type(text).__name__}, not a str")
    kind = _KINDS.get(category, ElementKind.TEXT)
    page = _int_field(metadata, "page_number", name, 1)
    depth = _int_field(metadata, "category_depth", name, 0)
    bbox = _bbox(metadata.get("coordinates"), name)
    parent = metadata.get("parent_id")
    if parent is not None and not isinstance(parent, str):
        raise ReaderError(_FORMAT, name, f"parent_id is a {type(parent).__name__}, not a str")
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
    return _Entry(name, kind, text, page, bbox, depth, parent or None, hints)


# -- tables ----------------------------------------------------------------------------------------


class _TableParser(HTMLParser):
    """Rows of cells of the first table in ``text_as_html`` (``colspan`` repeats a blank cell)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._span = 1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self._cell = []
            span = dict(attrs).get("colspan") or "1"
            self._span = int(span) if span.isdigit() and 0 < int(span) < 100 else 1
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].extend(["".join(self._cell)] + [""] * (self._span - 1))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_table_to_markdown(html: str) -> str:
    """Return an HTML table as a Markdown pipe table (first row as header), or ``""``."""
    parser = _TableParser()
    parser.feed(html)
    parser.close()
    return pipe_table(parser.rows)


# -- passes --------------------------------------------------------------------------------------


def _mark(entries: list[_Entry]) -> list[_Entry]:
    """Markers and note labels the parser left in the text.

    A list item or paragraph that opens with a step marker keeps it as its number
    (and a paragraph becomes an item). A paragraph that opens with a note label
    becomes a note; a block that is only a label ("Note", "注意") gives its label to
    the paragraph after it.
    """
    out: list[_Entry] = []
    label = ""
    for e in entries:
        if e.kind in (ElementKind.LIST_ITEM, ElementKind.TEXT):
            marker = match_step_marker(e.text)
            if marker is not None:
                e.kind, e.number, e.ordered, e.marked = (
                    ElementKind.LIST_ITEM,
                    marker.marker,
                    marker.ordered,
                    True,
                )
                e.text = e.text[marker.rest_start :]
        if e.kind in (ElementKind.TEXT, ElementKind.SECTION_HEADER):
            found, rest = leading_label(e.text)
            if found:
                if not rest.strip(" :：\u3000"):
                    label = found  # a label alone: it names the next paragraph
                    continue
                e.kind, e.admonition = ElementKind.TEXT, found
        if label and e.kind is ElementKind.TEXT and not e.admonition:
            e.admonition = label
        label = ""
        out.append(e)
    return out


def _check_parents(entries: Sequence[_Entry]) -> None:
    """Raise :class:`ReaderError` for a ``parent_id`` cycle."""
    parent_of = {e.name: e.parent for e in entries}
    done: set[str] = set()
    for e in entries:
        chain: list[str] = []
        node: str | None = e.name
        while node is not None and node not in done:
            if node in chain:
                cycle = " -> ".join([*chain[chain.index(node) :], node])
                raise ReaderError(_FORMAT, node, f"parent_id cycle: {cycle}")
            chain.append(node)
            node = parent_of.get(node)
        done.update(chain)


def _sections(entries: Sequence[_Entry]) -> None:
    """Heading levels and section paths; the parser's hierarchy first.

    A heading's level is its ``category_depth`` + 1; without a depth, one more than
    its parent heading's (``parent_id``); without either, its numbering
    (``1.2`` is level 2), else 1. Other elements take the path of the heading their
    ``parent_id`` chain reaches, else of the last heading before them.
    """
    by_name = {e.name: e for e in entries}
    stack: list[tuple[int, str]] = []
    ancestors: dict[str, _Entry | None] = {}
    for e in entries:
        parent = by_name.get(e.parent or "")
        if e.kind is ElementKind.SECTION_HEADER:
            if e.depth is not None:
                level = e.depth + 1
            elif parent is not None and parent.kind is ElementKind.SECTION_HEADER:
                level = parent.level + 1
                stack = [(k + 1, text) for k, text in enumerate(parent.path)]
            else:
                numbered = match_heading_number(e.text)
                level = numbered[1] if numbered else 1
            # However deep the parser nests, paths stay short (and building them linear).
            level = min(level, MAX_HEADING_LEVEL)
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, e.text))
            e.level, e.path = level, tuple(text for _, text in stack)
            continue
        heading = _heading_ancestor(e, by_name, ancestors)
        e.path = heading.path if heading is not None else tuple(text for _, text in stack)


def _heading_ancestor(
    e: _Entry, by_name: Mapping[str, _Entry], known: dict[str, _Entry | None]
) -> _Entry | None:
    """The nearest heading up ``e``'s ``parent_id`` chain; ``known`` remembers each element's.

    (Remembering keeps a long chain of non-heading parents linear; the chain has no
    cycle, :func:`_check_parents` saw to that.)
    """
    chain: list[str] = []
    node = by_name.get(e.parent or "")
    while node is not None and node.kind is not ElementKind.SECTION_HEADER and node.name not in known:
        chain.append(node.name)
        node = by_name.get(node.parent or "")
    if node is not None and node.kind is not ElementKind.SECTION_HEADER:
        node = known[node.name]
    for name in chain:
        known[name] = node
    return node


_FURNITURE = (ElementKind.PAGE_HEADER, ElementKind.PAGE_FOOTER)
_INSIDE_KINDS = (ElementKind.PICTURE, ElementKind.CAPTION)


class _Lists:
    """Groups runs of items into lists and numbers them (see the module docstring)."""

    def __init__(self, entries: list[_Entry], lexicon: Lexicon, source_id: str) -> None:
        self.entries = entries
        self.lexicon = lexicon
        self.steps = STEP_SENTENCES[lexicon.language]
        self.source_id = source_id

    def run(self) -> None:
        run: list[int] = []
        lead: int | None = None
        last: int | None = None  # the entry before the current one, page furniture skipped
        for i, e in enumerate(self.entries):
            if e.kind in _FURNITURE:
                continue
            if e.kind is ElementKind.LIST_ITEM:
                if not run:
                    lead = last
                run.append(i)
            elif run and self._inside(e, run):
                run.append(i)
            elif run:
                self._close(run, lead)
                run = []
            last = i
        if run:
            self._close(run, lead)

    def _inside(self, e: _Entry, run: list[int]) -> bool:
        items = [self.entries[i] for i in run if self.entries[i].kind is ElementKind.LIST_ITEM]
        if e.kind in _INSIDE_KINDS or any(e.parent == item.name for item in items):
            return True
        first = items[0].bbox
        return (
            e.bbox is not None
            and first is not None
            and e.bbox.left > first.left + _INDENT
            and e.kind is not ElementKind.SECTION_HEADER
        )

    def _close(self, run: list[int], lead: int | None) -> None:
        entries = self.entries
        list_id = f"{self.source_id}#l{run[0]}"
        items = [i for i in run if entries[i].kind is ElementKind.LIST_ITEM]
        depths = [d for i in items if (d := entries[i].depth) is not None]
        base = min(depths, default=0)
        stack: list[int] = []  # open items, outermost first
        children: dict[int | None, list[int]] = {}
        owner: int | None = None
        for i in run:
            e = entries[i]
            e.list_id = list_id
            if e.kind is not ElementKind.LIST_ITEM:
                named = next((j for j in items if entries[j].name == e.parent), None)
                e.item_parent = named if named is not None else owner
                continue
            named = next((j for j in stack if entries[j].name == e.parent), None)
            if e.depth is not None:
                e.level = e.depth - base
            elif named is not None:
                e.level = entries[named].level + 1
            while stack and entries[stack[-1]].level >= e.level:
                stack.pop()
            e.level = min(e.level, len(stack))  # a depth that jumps two levels nests one
            e.item_parent = stack[-1] if stack else None
            children.setdefault(e.item_parent, []).append(i)
            stack.append(i)
            owner = i
        for parent, members in children.items():
            intro = entries[lead] if parent is None and lead is not None else None
            if parent is not None:
                intro = entries[parent]
            self._number(members, intro)

    def _number(self, members: list[int], intro: _Entry | None) -> None:
        items = [self.entries[i] for i in members]
        ordered = self._introduces_steps(intro) or self._read_as_steps(items)
        count = 0
        for e in items:
            if e.marked:
                continue
            count += 1
            e.number, e.ordered = (f"{count}.", True) if ordered else ("-", False)

    def _introduces_steps(self, intro: _Entry | None) -> bool:
        if intro is not None and intro.kind is ElementKind.SECTION_HEADER:
            return bool(PROCEDURE_HEADINGS[self.lexicon.language].search(intro.text))
        if intro is None or intro.kind not in (ElementKind.TEXT, ElementKind.LIST_ITEM) or intro.admonition:
            return False
        sentences = [s.strip() for s in split_sentences(intro.text) if s.strip()]
        last = sentences[-1] if sentences else intro.text
        return bool(self.lexicon.lead_in.search(last))

    def _read_as_steps(self, items: list[_Entry]) -> bool:
        first_sentences = [(split_sentences(e.text) or [e.text])[0].strip() for e in items]
        matches = sum(1 for s in first_sentences if self.steps.search(s))
        return len(items) >= 2 and matches * 2 > len(items)


def _elements(entries: Sequence[_Entry], source_id: str) -> Iterator[LayoutElement]:
    for order, e in enumerate(entries):
        parent = None if e.item_parent is None else f"{source_id}#e{e.item_parent}"
        yield LayoutElement(
            element_id=f"{source_id}#e{order}",
            kind=e.kind,
            text=e.text,
            order=order,
            page=e.page,
            bbox=e.bbox,
            level=e.level,
            number=e.number,
            ordered=e.ordered,
            parent_id=parent,
            list_id=e.list_id,
            admonition=e.admonition,
            hints=e.hints,
            section_path=e.path,
            record_id=e.name if not e.name.startswith("#") else "",
        )


# -- public ----------------------------------------------------------------------------------------


def iter_records(
    records: Iterable[tuple[object, Mapping[str, Any]]], *, source_id: str
) -> Iterator[LayoutElement]:
    """Yield the layout elements of Unstructured records given as ``(text, metadata)`` pairs.

    This is the shape of framework documents made by Unstructured loaders: the
    metadata holds ``category`` and ``element_id`` beside the element's own metadata
    (``page_number``, ``coordinates``, ``parent_id``, ``category_depth``,
    ``text_as_html``…). A chunk's ``orig_elements`` are read in its place.

    Args:
        records: ``(text, metadata)`` per element, in reading order.
        source_id: Id of the document; element ids start with it.

    Raises:
        ReaderError: For a record without a category, text that is not a ``str``,
            a page number below 1, a box outside its coordinate system, a
            ``parent_id`` cycle; the message names the element id (or ``#index``).
    """
    entries = [
        e
        for index, text, metadata in _expand_originals(records)
        if (e := _entry(index, text, metadata)) is not None
    ]
    _check_parents(entries)
    entries = _mark(entries)
    _sections(entries)
    language = detect_language("\n".join(e.text for e in entries[:200]))
    _Lists(entries, LEXICONS[language], source_id).run()
    yield from _elements(entries, source_id)


def iter_unstructured(source: object, *, source_id: str) -> Iterator[LayoutElement]:
    """Yield the layout elements of Unstructured output.

    Args:
        source: A list of ``unstructured`` ``Element`` objects (read duck-typed:
            ``category``, ``text``, ``id``, ``metadata.to_dict()``), or their JSON
            (``elements_to_json`` output, parsed or as a string).
        source_id: Id of the document; element ids start with it.

    Raises:
        ReaderError: For malformed records (see :func:`iter_records`), or a source
            that is not a list.
    """
    try:
        loaded = load_json(source)
    except ValueError as exc:
        raise ReaderError(_FORMAT, "source", str(exc)) from None
    return iter_records(_as_records(loaded), source_id=source_id)


def read_unstructured(source: object, *, source_id: str) -> list[LayoutElement]:
    """Return :func:`iter_unstructured` as a list."""
    return list(iter_unstructured(source, source_id=source_id))


def is_element_metadata(metadata: Mapping[str, Any]) -> bool:
    """Whether a framework document's metadata says it is one Unstructured element.

    True when ``category`` names an Unstructured category (``Title``,
    ``NarrativeText``, ``ListItem``…), as ``UnstructuredLoader(mode="elements")``
    writes it.
    """
    category = metadata.get("category")
    return isinstance(category, str) and category in _KINDS


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

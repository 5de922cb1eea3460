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
  adapters group them with
  :func:`procedure_rag._chunking.framework_documents.iter_record_groups`).

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

Records are read into entries by :mod:`procedure_rag._readers.unstructured_records`;
this module runs the passes over them (notes, sections, lists and step numbers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from procedure_rag._errors import ReaderError
from procedure_rag._language.labels import leading_label
from procedure_rag._language.lexicons import Lexicon, detect_language, split_sentences
from procedure_rag._language.numbering import HeadingStyle, StepStyle, match_heading_number, match_step_marker
from procedure_rag._readers.draft import element_id_for, list_id_for
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.registry import load_json
from procedure_rag._readers.unstructured_records import FORMAT, KINDS, Entry, as_records, read_entries
from procedure_rag._types import MAX_HEADING_LEVEL, ElementKind, LayoutElement

__all__ = [
    "ELEMENT_METADATA_KEYS",
    "PROCEDURE_HEADINGS",
    "STEP_SENTENCES",
    "is_element_metadata",
    "iter_records",
    "iter_unstructured",
    "read_unstructured",
]


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


# -- passes --------------------------------------------------------------------------------------


def _mark(entries: list[Entry], step_styles: tuple[StepStyle, ...]) -> list[Entry]:
    """Markers and note labels the parser left in the text.

    A list item or paragraph that opens with a step marker keeps it as its number
    (and a paragraph becomes an item). A paragraph that opens with a note label
    becomes a note; a block that is only a label ("Note", "注意") gives its label to
    the paragraph after it.
    """
    out: list[Entry] = []
    label = ""
    for e in entries:
        if e.kind in (ElementKind.LIST_ITEM, ElementKind.TEXT):
            marker = match_step_marker(e.text, step_styles)
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


def _sections(entries: Sequence[Entry], heading_styles: tuple[HeadingStyle, ...]) -> None:
    """Heading levels and section paths; the parser's hierarchy first.

    A heading's level is its ``category_depth`` + 1; without a depth, one more than
    its parent heading's (``parent_id``); without either, its numbering
    (``1.2`` is level 2), else 1. Other elements take the path of the heading their
    ``parent_id`` chain reaches, else of the last heading before them.
    """
    by_name = {e.name: e for e in entries}
    stack: list[tuple[int, str]] = []
    ancestors: dict[str, Entry | None] = {}
    for e in entries:
        parent = by_name.get(e.parent or "")
        if e.kind is ElementKind.SECTION_HEADER:
            if e.depth is not None:
                level = e.depth + 1
            elif parent is not None and parent.kind is ElementKind.SECTION_HEADER:
                level = parent.level + 1
                stack = [(k + 1, text) for k, text in enumerate(parent.path)]
            else:
                numbered = match_heading_number(e.text, heading_styles)
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


def _heading_ancestor(e: Entry, by_name: Mapping[str, Entry], known: dict[str, Entry | None]) -> Entry | None:
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

    def __init__(self, entries: list[Entry], lexicon: Lexicon, source_id: str) -> None:
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

    def _inside(self, e: Entry, run: list[int]) -> bool:
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
        list_id = list_id_for(self.source_id, run[0])
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

    def _number(self, members: list[int], intro: Entry | None) -> None:
        items = [self.entries[i] for i in members]
        ordered = self._introduces_steps(intro) or self._read_as_steps(items)
        count = 0
        for e in items:
            if e.marked:
                continue
            count += 1
            e.number, e.ordered = (f"{count}.", True) if ordered else ("-", False)

    def _introduces_steps(self, intro: Entry | None) -> bool:
        if intro is not None and intro.kind is ElementKind.SECTION_HEADER:
            return bool(PROCEDURE_HEADINGS[self.lexicon.language].search(intro.text))
        if intro is None or intro.kind not in (ElementKind.TEXT, ElementKind.LIST_ITEM) or intro.admonition:
            return False
        sentences = [s.strip() for s in split_sentences(intro.text) if s.strip()]
        last = sentences[-1] if sentences else intro.text
        return bool(self.lexicon.lead_in.search(last))

    def _read_as_steps(self, items: list[Entry]) -> bool:
        first_sentences = [(split_sentences(e.text) or [e.text])[0].strip() for e in items]
        matches = sum(1 for s in first_sentences if self.steps.search(s))
        return len(items) >= 2 and matches * 2 > len(items)


def _elements(entries: Sequence[Entry], source_id: str) -> Iterator[LayoutElement]:
    for order, e in enumerate(entries):
        e.parent_id = None if e.item_parent is None else element_id_for(source_id, e.item_parent)
        yield e.build(
            element_id_for(source_id, order),
            order,
            page=e.page,
            bbox=e.bbox,
            record_id=e.name if not e.name.startswith("#") else "",
            section_path=e.path,
        )


# -- public ----------------------------------------------------------------------------------------


def iter_records(
    records: Iterable[tuple[object, Mapping[str, Any]]],
    *,
    source_id: str,
    options: ReaderOptions = DEFAULT_READER_OPTIONS,
) -> Iterator[LayoutElement]:
    """Yield the layout elements of Unstructured records given as ``(text, metadata)`` pairs.

    This is the shape of framework documents made by Unstructured loaders: the
    metadata holds ``category`` and ``element_id`` beside the element's own metadata
    (``page_number``, ``coordinates``, ``parent_id``, ``category_depth``,
    ``text_as_html``…). A chunk's ``orig_elements`` are read in its place.

    Args:
        records: ``(text, metadata)`` per element, in reading order.
        source_id: Id of the document; element ids start with it.
        options: The reader options: step styles find the markers left in the text,
            heading styles the levels the parser does not give, and the lexicon of
            the detected language tells a list's lead-in.

    Raises:
        ReaderError: For a record without a category, text that is not a ``str``,
            a page number below 1, a box outside its coordinate system, a
            ``parent_id`` cycle; the message names the element id (or ``#index``).
    """
    entries = _mark(read_entries(records), options.step_styles)
    _sections(entries, options.heading_styles)
    language = detect_language("\n".join(e.text for e in entries[:200]))
    _Lists(entries, options.lexicons[language], source_id).run()
    yield from _elements(entries, source_id)


def iter_unstructured(
    source: object, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of Unstructured output.

    Args:
        source: A list of ``unstructured`` ``Element`` objects (read duck-typed:
            ``category``, ``text``, ``id``, ``metadata.to_dict()``), or their JSON
            (``elements_to_json`` output, parsed or as a string).
        source_id: Id of the document; element ids start with it.
        options: The reader options (see :func:`iter_records`).

    Raises:
        ReaderError: For malformed records (see :func:`iter_records`), or a source
            that is not a list.
    """
    try:
        loaded = load_json(source)
    except ValueError as exc:
        raise ReaderError(FORMAT, "source", str(exc)) from None
    return iter_records(as_records(loaded), source_id=source_id, options=options)


def read_unstructured(
    source: object, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> list[LayoutElement]:
    """Return :func:`iter_unstructured` as a list."""
    return list(iter_unstructured(source, source_id=source_id, options=options))


def is_element_metadata(metadata: Mapping[str, Any]) -> bool:
    """Whether a framework document's metadata says it is one Unstructured element.

    True when ``category`` names an Unstructured category (``Title``,
    ``NarrativeText``, ``ListItem``…), as ``UnstructuredLoader(mode="elements")``
    writes it.
    """
    category = metadata.get("category")
    return isinstance(category, str) and category in KINDS

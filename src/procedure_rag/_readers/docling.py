"""Docling reader: a ``DoclingDocument`` (or its JSON export) becomes layout elements.

Docling already knows the layout: labels, heading levels, list groups with their
markers, tables as cell grids, pictures with captions, and a provenance (page and
box) for every item. This reader walks the document tree in reading order and
translates each item; it adds only what Docling leaves implicit:

* list nesting: a list group inside a list item makes its items one level deeper,
  with ``parent_id`` set to the enclosing item and ``list_id`` shared with the top
  list; blocks inside an item (a picture, a code block, a note) get the same ids;
* list markers: Docling's ``marker`` as written; when it is empty, the marker at the
  start of the text, or the item's position (``"1."``) in an enumerated list;
* paragraphs that start with a step marker (``①``, ``手順3``, ``(1)``) are list items,
  as are notes that open with a label (``Note:``, ``注意``) admonitions;
* heading levels: Docling's own; when every section header has the same level (a
  PDF conversion that found no hierarchy), a heading number (``1.2``, ``第2節``) gives it;
* boxes: converted from Docling's bottom-left or top-left page coordinates to
  fractions of the page from the top-left corner, in points.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeGuard

from procedure_rag._errors import ReaderError
from procedure_rag._language.labels import leading_label
from procedure_rag._language.numbering import match_heading_number, match_step_marker
from procedure_rag._readers.draft import ElementDraft, element_id_for, list_id_for
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._readers.tables import pipe_table
from procedure_rag._types import BBox, ElementKind, LayoutElement

if TYPE_CHECKING:
    from docling_core.types.doc import (
        DoclingDocument,
        GroupItem,
        NodeItem,
        PictureItem,
        ProvenanceItem,
        RefItem,
        TableItem,
    )
    from pydantic import ValidationError

__all__ = ["iter_docling", "read_docling"]

_FORMAT = "docling"
_INSTALL_HINT = "reading Docling documents needs docling-core: pip install 'procedure-rag[docling]'"

# Docling labels -> our kinds; labels not listed (text, paragraph, reference, checkbox…) are text.
_KINDS: Mapping[str, ElementKind] = {
    "title": ElementKind.TITLE,
    "section_header": ElementKind.SECTION_HEADER,
    "list_item": ElementKind.LIST_ITEM,
    "caption": ElementKind.CAPTION,
    "footnote": ElementKind.FOOTNOTE,
    "formula": ElementKind.FORMULA,
    "code": ElementKind.CODE,
    "page_header": ElementKind.PAGE_HEADER,
    "page_footer": ElementKind.PAGE_FOOTER,
    "table": ElementKind.TABLE,
    "document_index": ElementKind.TABLE,
    "picture": ElementKind.PICTURE,
    "chart": ElementKind.PICTURE,
    "form": ElementKind.FORM,
    "key_value_region": ElementKind.FORM,
}
_COLLECTIONS = ("texts", "groups", "tables", "pictures", "key_value_items", "form_items")
_SELF_REF = re.compile(r"#/[a-z_]+(?:/\d+)?")
_LIST_GROUPS = frozenset({"list", "ordered_list"})
# Text that is part of the page: background and invisible layers are not read.
_LAYERS = frozenset({"body", "furniture", "notes"})


def iter_docling(
    source: object, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a Docling document in reading order.

    Args:
        source: A ``docling_core.types.doc.DoclingDocument``, or its JSON export as a
            ``dict`` (``schema_name`` ``"DoclingDocument"``).
        source_id: Id of the document; element ids are ``f"{source_id}#e{order}"``.
        options: The reader options: step styles find markers in paragraph and item
            text, heading styles the levels of a flat conversion.

    Yields:
        One element per Docling item (list groups and other groups give none), with
        ``record_id`` set to the item's ``self_ref``, ``page`` and ``bbox`` from its
        first provenance, and the item's other pages and character span in ``hints``.

    Raises:
        ReaderError: For a source that is not a Docling document, JSON that does not
            validate, a reference to a missing item, a cycle in the tree, a page
            missing from ``pages``, or a box outside its page.
        ImportError: When docling-core is not installed.
    """
    document = _as_document(source)
    yield from _Walker(document, source_id, options).run()


def read_docling(
    source: object, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> list[LayoutElement]:
    """Return :func:`iter_docling` as a list."""
    return list(iter_docling(source, source_id=source_id, options=options))


def _as_document(source: object) -> DoclingDocument:
    try:
        from docling_core.types.doc import DoclingDocument  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc

    from pydantic import ValidationError  # noqa: PLC0415 - comes with docling-core

    if isinstance(source, DoclingDocument):
        return source
    if not isinstance(source, Mapping):
        problem = f"expected a DoclingDocument or its JSON export, got {type(source).__name__}"
        raise ReaderError(_FORMAT, "document", problem)
    if source.get("schema_name") != "DoclingDocument":
        problem = f"schema_name is {source.get('schema_name')!r}, expected 'DoclingDocument'"
        raise ReaderError(_FORMAT, "document", problem)
    _precheck(source)
    try:
        return DoclingDocument.model_validate(source)
    except ValidationError as exc:
        raise _validation_error(exc) from exc
    # Docling's own validators raise these for a broken tree (an item without a parent
    # is an AttributeError on None); a lone surrogate fails when it encodes a string.
    except (IndexError, KeyError, TypeError, AttributeError, RuntimeError, UnicodeError) as exc:
        raise ReaderError(_FORMAT, "document", f"does not validate: {type(exc).__name__}: {exc}") from exc


def _validation_error(exc: ValidationError) -> ReaderError:
    """The first real problem of a failed validation, named by its record.

    Pydantic tries every member of Docling's item union: an item with a bad field
    fails once per member, mostly on ``label``. Those label mismatches are noise.
    """
    errors = exc.errors()
    # The union members whose label did not match are not the item's type.
    wrong = {e["loc"][:3] for e in errors if e["type"] == "literal_error" and e["loc"][-1:] == ("label",)}
    problems: dict[tuple[str, str], None] = {}
    for error in errors:
        if error["loc"][:3] in wrong and len(error["loc"]) > 3:
            continue
        record, where = _error_location(error["loc"], error["msg"])
        problems[(record, f"{where}{error['msg']}")] = None
    if not problems:  # only label mismatches: the label itself is wrong
        record, _ = _error_location(exc.errors()[0]["loc"], "")
        return ReaderError(_FORMAT, record, f"label is not one Docling knows ({exc.error_count()} problems)")
    (record, problem), *rest = problems
    more = f" (and {len(rest)} more problems)" if rest else ""
    return ReaderError(_FORMAT, record, problem + more)


def _error_location(loc: tuple[int | str, ...], message: str) -> tuple[str, str]:
    """``("texts", 3, "SectionHeaderItem", "level")`` -> ``("#/texts/3", "level: ")``."""
    if len(loc) >= 2 and isinstance(loc[0], str) and isinstance(loc[1], int):
        record, rest = f"#/{loc[0]}/{loc[1]}", loc[2:]
    elif loc and isinstance(loc[0], str):
        record, rest = f"#/{loc[0]}", loc[1:]
    else:  # a document-wide check (the hierarchy): its message names the item
        named = _SELF_REF.search(message)
        record, rest = (named.group() if named else "document"), loc
    # Pydantic names the union member it tried (``SectionHeaderItem``); the field path is what helps.
    path = ".".join(str(p) for p in rest if not (isinstance(p, str) and p[:1].isupper()))
    return record, f"{path}: " if path else ""


def _records(document: Mapping[str, object]) -> Iterator[tuple[str, Mapping[str, object]]]:
    """Every node of a Docling JSON export with its ``self_ref``, skipping ill-typed ones."""
    for root in ("body", "furniture"):
        node = document.get(root)
        if isinstance(node, Mapping):
            yield f"#/{root}", node
    for key in _COLLECTIONS:
        nodes = document.get(key)
        for i, node in enumerate(nodes if isinstance(nodes, list) else ()):
            if isinstance(node, Mapping):
                yield f"#/{key}/{i}", node


def _precheck(document: Mapping[str, object]) -> None:
    """Find what docling-core's validation would hide or fail on without naming the item.

    Its validators raise a bare ``IndexError`` for a reference to a missing item and
    clamp a box that lies outside its page; both are errors in the source.
    """
    known = {ref for ref, _ in _records(document)}
    pages = document.get("pages")
    for ref, node in _records(document):
        for key in ("children", "captions", "footnotes", "references"):
            links = node.get(key)
            for link in links if isinstance(links, list) else ():
                target = link.get("$ref") if isinstance(link, Mapping) else None
                if isinstance(target, str) and target not in known:
                    raise ReaderError(_FORMAT, ref, f"refers to {target}, which does not exist")
        provs = node.get("prov")
        for prov in provs if isinstance(provs, list) else ():
            _precheck_box(ref, prov, pages)


def _precheck_box(ref: str, prov: object, pages: object) -> None:
    bbox = prov.get("bbox") if isinstance(prov, Mapping) else None
    page_no = prov.get("page_no") if isinstance(prov, Mapping) else None
    if not isinstance(bbox, Mapping) or not isinstance(page_no, int) or not isinstance(pages, Mapping):
        return  # validation reports wrong types
    page = pages.get(str(page_no), pages.get(page_no))
    size = page.get("size") if isinstance(page, Mapping) else None
    if page is None:
        raise ReaderError(_FORMAT, ref, _missing_page(page_no, pages))
    coords = [bbox.get(k) for k in ("l", "t", "r", "b")]
    dims = [size.get(k) for k in ("width", "height")] if isinstance(size, Mapping) else []
    numbers = [*coords, *dims]
    if len(numbers) != 6 or not all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers):
        return
    origin = bbox.get("coord_origin", "TOPLEFT")
    if origin not in ("TOPLEFT", "BOTTOMLEFT"):
        return
    try:
        left, top, right, bottom = (float(c) for c in coords)  # type: ignore[arg-type]  # checked above
        width, height = (float(d) for d in dims)  # type: ignore[arg-type]  # checked above
    except OverflowError:  # an integer past the largest float
        raise ReaderError(_FORMAT, ref, f"page {page_no}: a box coordinate is too large a number") from None
    _fractions(ref, page_no, (left, top, right, bottom), str(origin), (width, height))


def _missing_page(page_no: int, pages: Iterable[object]) -> str:
    known = ", ".join(sorted(map(str, pages), key=lambda k: (len(k), k))) or "none"
    return f"page {page_no} is not in the document's pages ({known})"


def _fractions(
    ref: str, page_no: int, box: tuple[float, float, float, float], origin: str, size: tuple[float, float]
) -> BBox:
    """A Docling box as fractions of its page from the top-left corner, in points."""
    width, height = size
    if width <= 0 or height <= 0:
        raise ReaderError(_FORMAT, f"#/pages/{page_no}", f"page size {width} x {height} is not positive")
    left, top, right, bottom = box
    if origin.upper() == "BOTTOMLEFT":
        top, bottom = height - top, height - bottom
    try:
        return BBox(left / width, top / height, right / width, bottom / height, width, height, "pt")
    except ValueError as exc:
        raise ReaderError(_FORMAT, ref, f"page {page_no}: {exc}") from exc


@dataclass(slots=True)
class _ListContext:
    list_id: str
    depth: int  # nesting depth of the items (0 = top)
    parent_id: str | None  # element id of the enclosing item
    items: int = 0  # items seen so far in this group, for positional numbers
    enumerated: bool = False


@dataclass(slots=True)
class _Run:
    """Paragraphs that start with step markers, read as one list until a heading or a real list."""

    list_id: str | None = None


@dataclass(slots=True)
class _Walker:
    doc: DoclingDocument
    source_id: str
    options: ReaderOptions
    order: int = 0
    emitted: set[str] = field(default_factory=set)
    steps: _Run = field(default_factory=_Run)
    flat_headings: bool = False

    def __post_init__(self) -> None:
        levels = {getattr(t, "level", 1) for t in self.doc.texts if _label(t) == "section_header"}
        self.flat_headings = len(levels) <= 1

    def run(self) -> Iterator[LayoutElement]:
        yield from self.walk(self.doc.body, None, frozenset())
        with warnings.catch_warnings():  # deprecated since page furniture moved into the body
            warnings.simplefilter("ignore", DeprecationWarning)
            furniture = getattr(self.doc, "furniture", None)  # older exports keep it apart
        if furniture is not None:
            yield from self.walk(furniture, None, frozenset())

    def walk(
        self, node: NodeItem, context: _ListContext | None, ancestors: frozenset[str]
    ) -> Iterator[LayoutElement]:
        """Yield the elements of ``node``'s children (depth first, in reading order)."""
        ancestors = ancestors | {node.self_ref}
        for ref in node.children:
            child = self.resolve(ref, node.self_ref)
            if child.self_ref in ancestors:
                raise ReaderError(
                    _FORMAT, child.self_ref, f"is its own ancestor (a cycle under {node.self_ref})"
                )
            if _value(getattr(child, "content_layer", "body")) not in _LAYERS:
                continue
            yield from self.visit(child, context, ancestors)

    def visit(
        self, item: NodeItem, context: _ListContext | None, ancestors: frozenset[str]
    ) -> Iterator[LayoutElement]:
        label = _label(item)
        if _is_group(item):
            if label in _LIST_GROUPS:
                yield from self.walk(item, self.list_context(context, label), ancestors)
            elif label == "inline":
                yield from self.inline(item, context)
            else:
                yield from self.walk(item, context, ancestors)
            return
        if item.self_ref in self.emitted:  # a caption already read beside its table or picture
            return
        element = self.element(item, label, context)
        yield element
        if element.kind is ElementKind.LIST_ITEM:
            # Blocks inside the item, and lists nested in it, hang under it.
            inner = _ListContext(element.list_id or "", element.level + 1, element.element_id)
            yield from self.walk(item, inner, ancestors)
        elif element.kind in (ElementKind.TABLE, ElementKind.PICTURE, ElementKind.CODE):
            # Their children are captions (read here) or text inside a picture (left to the picture).
            yield from self.attachments(item, context)
        else:
            yield from self.walk(item, context, ancestors)

    def list_context(self, outer: _ListContext | None, label: str) -> _ListContext:
        self.steps.list_id = None
        if outer is None:  # a top-level list: its id is the order of its first item
            return _ListContext(
                list_id_for(self.source_id, self.order), 0, None, enumerated=label == "ordered_list"
            )
        depth = outer.depth if outer.parent_id is not None else outer.depth + 1
        return _ListContext(outer.list_id, depth, outer.parent_id, enumerated=label == "ordered_list")

    def resolve(self, ref: RefItem, owner: str) -> NodeItem:
        try:
            target = ref.resolve(self.doc)
        except (IndexError, AttributeError, ValueError, RuntimeError) as exc:
            raise ReaderError(_FORMAT, owner, f"refers to {ref.cref}, which does not exist") from exc
        if not hasattr(target, "self_ref") or not hasattr(target, "children"):
            raise ReaderError(_FORMAT, owner, f"refers to {ref.cref}, which is not an item")
        return target  # type: ignore[no-any-return]  # RefItem.resolve is untyped

    def attachments(self, item: NodeItem, context: _ListContext | None) -> Iterator[LayoutElement]:
        """Captions and footnotes of a table, picture or code block, right after it."""
        for key, kind in (("captions", ElementKind.CAPTION), ("footnotes", ElementKind.FOOTNOTE)):
            for ref in getattr(item, key, ()):
                target = self.resolve(ref, item.self_ref)
                if target.self_ref not in self.emitted:
                    text = str(getattr(target, "text", ""))
                    yield self.make(target, ElementDraft(kind, text), context)

    def inline(self, group: NodeItem, context: _ListContext | None) -> Iterator[LayoutElement]:
        """An inline group (text runs with their own formatting) is one paragraph."""
        parts = [self.resolve(ref, group.self_ref) for ref in group.children]
        text = " ".join(str(getattr(p, "text", "")) for p in parts).strip()
        first = next((p for p in parts if getattr(p, "prov", None)), group)
        self.emitted.update(p.self_ref for p in parts)
        element = self.make(first, ElementDraft(ElementKind.TEXT, text), context, record_id=group.self_ref)
        yield self.maybe_step(element, context)

    def element(self, item: NodeItem, label: str, context: _ListContext | None) -> LayoutElement:
        if _is_table(item) or _is_picture(item) or _is_form(item):
            return self.floating(item, context)
        kind = _KINDS.get(label, ElementKind.TEXT)
        text = str(getattr(item, "text", "") or getattr(item, "orig", "") or "")
        if kind is ElementKind.LIST_ITEM:
            return self.list_item(item, text, context)
        if kind in (ElementKind.SECTION_HEADER, ElementKind.TITLE):
            self.steps.list_id = None
            return self.heading(item, kind, text)
        hints = _code_hints(item) if kind is ElementKind.CODE else ()
        element = self.make(item, ElementDraft(kind, text, hints=hints), context)
        return self.maybe_step(element, context) if kind is ElementKind.TEXT else element

    def floating(self, item: NodeItem, context: _ListContext | None) -> LayoutElement:
        if _is_table(item):
            return self.make(item, ElementDraft(ElementKind.TABLE, _pipe_table(item)), context)
        if _is_picture(item):
            hints = (("url", uri),) if (uri := _image_uri(item)) else ()
            return self.make(
                item, ElementDraft(ElementKind.PICTURE, self.alt_text(item), hints=hints), context
            )
        return self.make(item, ElementDraft(ElementKind.FORM, _form_text(item)), context)

    def heading(self, item: NodeItem, kind: ElementKind, text: str) -> LayoutElement:
        level = int(getattr(item, "level", 1)) if kind is ElementKind.SECTION_HEADER else 0
        number = ""
        if kind is ElementKind.SECTION_HEADER and self.flat_headings:
            found = match_heading_number(text, self.options.heading_styles)
            if found is not None:
                number, level, _ = found
        return self.make(item, ElementDraft(kind, text, level=level, number=number), None)

    def list_item(self, item: NodeItem, text: str, context: _ListContext | None) -> LayoutElement:
        if context is None:  # an item outside any list group: a list of its own
            context = _ListContext(list_id_for(self.source_id, self.order), 0, None)
        context.items += 1
        enumerated = bool(getattr(item, "enumerated", False)) or context.enumerated
        number = str(getattr(item, "marker", "") or "").strip()
        if number and text.startswith(number) and text[len(number) : len(number) + 1].isspace():
            text = text[len(number) :]  # some converters keep the marker in the text as well
        if not number:
            found = match_step_marker(text, self.options.step_styles)
            if found is not None:
                number, text, enumerated = found.marker, text[found.rest_start :], found.ordered
            else:
                number = f"{context.items}." if enumerated else "-"
        draft = ElementDraft(
            ElementKind.LIST_ITEM,
            text,
            level=context.depth,
            number=number,
            ordered=enumerated,
            parent_id=context.parent_id,
            list_id=context.list_id,
        )
        return self.make(item, draft, None)

    def maybe_step(self, element: LayoutElement, context: _ListContext | None) -> LayoutElement:
        """A paragraph that opens with a step marker is a list item; one with a label is a note.

        Inside a list (``context``) a paragraph is the item's own, never a new item, but a
        label still makes it a note ("Note: …" after a step's command).
        """
        if not element.text:
            return element
        found = match_step_marker(element.text, self.options.step_styles) if context is None else None
        if found is not None:
            if self.steps.list_id is None:
                self.steps.list_id = list_id_for(self.source_id, element.order)
            return replace(
                element,
                kind=ElementKind.LIST_ITEM,
                text=element.text[found.rest_start :],
                number=found.marker,
                ordered=found.ordered,
                list_id=self.steps.list_id,
            )
        label, _ = leading_label(element.text)
        return replace(element, admonition=label) if label else element

    def alt_text(self, item: NodeItem) -> str:
        description = getattr(getattr(item, "meta", None), "description", None)
        text = getattr(description, "text", None)
        if isinstance(text, str) and text:
            return text
        if "meta" not in getattr(type(item), "model_fields", {}):  # docling-core before ``meta``
            for annotation in getattr(item, "annotations", ()):
                if getattr(annotation, "kind", "") == "description":
                    return str(annotation.text)
        captions = [self.resolve(ref, item.self_ref) for ref in getattr(item, "captions", ())]
        return " ".join(str(getattr(c, "text", "")) for c in captions).strip()

    def make(
        self,
        item: NodeItem,
        draft: ElementDraft,
        context: _ListContext | None,
        *,
        record_id: str | None = None,
    ) -> LayoutElement:
        """Build the next element; blocks inside a list item hang under it."""
        self.emitted.add(item.self_ref)
        if context is not None and draft.kind is not ElementKind.LIST_ITEM:
            draft.parent_id, draft.list_id = context.parent_id, context.list_id
        page, bbox, prov_hints = self.provenance(item)
        draft.text = draft.text.strip()
        draft.hints += prov_hints
        order = self.order
        self.order += 1
        return draft.build(
            element_id_for(self.source_id, order),
            order,
            page=page,
            bbox=bbox,
            record_id=record_id or item.self_ref,
        )

    def provenance(self, item: NodeItem) -> tuple[int | None, BBox | None, tuple[tuple[str, str], ...]]:
        provs: list[ProvenanceItem] = list(getattr(item, "prov", ()) or ())
        if not provs:
            return None, None, ()
        first = provs[0]
        bbox = self.box(item.self_ref, first)
        hints: list[tuple[str, str]] = []
        pages = sorted({p.page_no for p in provs})
        for page_no in pages[1:]:
            self.page_size(item.self_ref, page_no)  # every page it names must exist
        if len(pages) > 1:
            hints.append(("pages", ",".join(map(str, pages))))
        charspan = getattr(first, "charspan", None)
        if charspan:
            hints.append(("charspan", f"{charspan[0]},{charspan[1]}"))
        return first.page_no, bbox, tuple(hints)

    def page_size(self, self_ref: str, page_no: int) -> tuple[float, float]:
        page = self.doc.pages.get(page_no)
        if page is None:
            raise ReaderError(_FORMAT, self_ref, _missing_page(page_no, self.doc.pages))
        return float(page.size.width), float(page.size.height)

    def box(self, self_ref: str, prov: ProvenanceItem) -> BBox:
        size = self.page_size(self_ref, prov.page_no)
        b = prov.bbox
        return _fractions(self_ref, prov.page_no, (b.l, b.t, b.r, b.b), _value(b.coord_origin), size)


def _value(value: object) -> str:
    """An enum's value (Docling's labels are ``str`` enums) or the string itself."""
    return str(getattr(value, "value", value))


def _label(item: object) -> str:
    return _value(getattr(item, "label", ""))


def _is_group(item: object) -> TypeGuard[GroupItem]:
    from docling_core.types.doc import GroupItem  # noqa: PLC0415 - optional dependency

    return isinstance(item, GroupItem)


def _is_table(item: object) -> TypeGuard[TableItem]:
    from docling_core.types.doc import TableItem  # noqa: PLC0415 - optional dependency

    return isinstance(item, TableItem)


def _is_picture(item: object) -> TypeGuard[PictureItem]:
    from docling_core.types.doc import PictureItem  # noqa: PLC0415 - optional dependency

    return isinstance(item, PictureItem)


def _is_form(item: object) -> bool:
    from docling_core.types.doc import FormItem, KeyValueItem  # noqa: PLC0415 - optional dependency

    return isinstance(item, KeyValueItem | FormItem)


def _code_hints(item: object) -> tuple[tuple[str, str], ...]:
    language = _value(getattr(item, "code_language", "") or "")
    return (("language", language),) if language and language != "unknown" else ()


def _pipe_table(item: TableItem) -> str:
    """The table as a Markdown pipe table; its leading column-header rows are the header."""
    heads = item.data.grid
    n_head = 0
    while n_head < len(heads) - 1 and all(c.column_header for c in heads[n_head]):
        n_head += 1
    return pipe_table([[c.text for c in row] for row in heads], header_rows=n_head)


def _form_text(item: object) -> str:
    cells = getattr(getattr(item, "graph", None), "cells", None) or ()
    return "\n".join(str(c.text) for c in cells if getattr(c, "text", ""))


def _image_uri(item: object) -> str:
    image = getattr(item, "image", None)
    uri = str(getattr(image, "uri", "") or "")
    return "" if uri.startswith("data:") else uri

"""What the cloud layout readers (Azure, Google, Textract) share.

The three services return JSON with the same gaps: lists are paragraphs whose
text starts with a marker, notes are paragraphs that start with a label, and
nothing stops a field from holding the wrong type. This module holds the typed
accessors that turn a bad field into a :class:`ReaderError` naming the record,
box conversion, and :class:`ListAssembler`, which turns a run of
paragraphs into list items with levels, parents and list ids.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from procedure_rag._errors import ReaderError
from procedure_rag._language.labels import leading_label
from procedure_rag._language.numbering import DEFAULT_STEP_STYLES, StepStyle, match_step_marker
from procedure_rag._readers.draft import ElementDraft, element_id_for, list_id_for
from procedure_rag._types import BBox, ElementKind, LayoutElement

__all__ = [
    "ElementSink",
    "Fields",
    "ListAssembler",
    "rect_box",
]

# A first number of a list: "1.", "1)", "(1)", "①", "a.", "Step 1", "手順1".
_FIRST = re.compile(r"^(?:\D*?[1１]\D*|[(（]?[aａi][)）.]?|①|❶|[A-Z]-1[.:)]?)$")
# How much further right (fraction of the page width) a paragraph must start to nest.
_INDENT = 0.015


@dataclass(frozen=True, slots=True)
class Fields:
    """Typed access to one record of a parser's JSON; a bad field raises :class:`ReaderError`.

    Attributes:
        fmt: The reader's format name, for error messages.
        record: The record's id (or JSON path) for error messages.
        data: The record itself.
    """

    fmt: str
    record: str
    data: Mapping[str, object]

    @classmethod
    def of(cls, fmt: str, record: str, data: object) -> Fields:
        """Wrap ``data``, which must be a JSON object."""
        if not isinstance(data, Mapping):
            raise ReaderError(fmt, record, f"expected an object, got {type(data).__name__}")
        return cls(fmt, record, data)

    def error(self, problem: str) -> ReaderError:
        """A :class:`ReaderError` about this record."""
        return ReaderError(self.fmt, self.record, problem)

    def _get(self, key: str, kinds: tuple[type, ...], name: str, *, required: bool) -> object:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.error(f"missing {key!r}")
            return None
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise self.error(f"{key!r} must be {name}, got {type(value).__name__}")
        return value

    def get_str(self, key: str, default: str = "", *, required: bool = False) -> str:
        """A string field."""
        value = self._get(key, (str,), "a string", required=required)
        return default if value is None else str(value)

    def get_int(self, key: str, *, minimum: int | None = None) -> int | None:
        """An integer field, or ``None`` when absent (JSON numbers with no fraction count)."""
        value = self._get(key, (int, float), "an integer", required=False)
        if not isinstance(value, int | float):
            return None
        if isinstance(value, float) and not value.is_integer():
            raise self.error(f"{key!r} must be an integer, got {value}")
        number = int(value)
        if minimum is not None and number < minimum:
            raise self.error(f"{key!r} must be at least {minimum}, got {number}")
        return number

    def need_int(self, key: str, minimum: int | None = None) -> int:
        """A required integer field."""
        number = self.get_int(key, minimum=minimum)
        if number is None:
            raise self.error(f"missing {key!r}")
        return number

    def get_num(self, key: str) -> float | None:
        """A finite number field, or ``None`` when absent."""
        value = self._get(key, (int, float), "a number", required=False)
        if not isinstance(value, int | float):
            return None
        try:
            number = float(value)
        except OverflowError:  # an integer past the largest float
            raise self.error(
                f"{key!r} must be a finite number, got an integer of {len(str(value))} digits"
            ) from None
        if not math.isfinite(number):  # Python's JSON reads NaN and Infinity; no parser means them
            raise self.error(f"{key!r} must be a finite number, got {number}")
        return number

    def need_num(self, key: str) -> float:
        """A required number field."""
        number = self.get_num(key)
        if number is None:
            raise self.error(f"missing {key!r}")
        return number

    def get_list(self, key: str, *, required: bool = False) -> list[object]:
        """A list field (empty when absent)."""
        value = self._get(key, (list, tuple), "a list", required=required)
        return [] if value is None else list(value)  # type: ignore[call-overload]

    def get_obj(self, key: str, *, record: str | None = None, required: bool = False) -> Fields | None:
        """A nested object, wrapped (``None`` when absent and not required)."""
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.error(f"missing {key!r}")
            return None
        return Fields.of(self.fmt, record or self.record, value)

    def need_obj(self, key: str, *, record: str | None = None) -> Fields:
        """A required nested object, wrapped."""
        value = self.get_obj(key, record=record)
        if value is None:
            raise self.error(f"missing {key!r}")
        return value


def rect_box(
    fields: Fields,
    points: Iterable[tuple[float, float]],
    *,
    scale: tuple[float, float] = (1.0, 1.0),
    page_size: tuple[float, float] | None = None,
    unit: str = "",
) -> BBox | None:
    """The bounding rectangle of ``points`` as a :class:`BBox` in page fractions.

    Args:
        fields: The record the points belong to (named in errors).
        points: ``(x, y)`` pairs, top-left origin.
        scale: Divide x and y by these to get fractions (the page size in the points' unit).
        page_size: Page width and height to record on the box.
        unit: The page size's unit.

    Raises:
        ReaderError: When the box is outside the page or inverted.
    """
    pts = list(points)
    if not pts:
        return None
    try:
        xs = [x / scale[0] for x, _ in pts]
        ys = [y / scale[1] for _, y in pts]
    except OverflowError:  # an integer coordinate past the largest float
        raise fields.error("a coordinate is too large to be a number on the page") from None
    width, height = page_size or (None, None)
    try:
        return BBox(min(xs), min(ys), max(xs), max(ys), width, height, unit)
    except ValueError as exc:
        raise fields.error(str(exc)) from None


@dataclass
class ElementSink:
    """Numbers elements in reading order and gives them ids."""

    source_id: str
    elements: list[LayoutElement] = field(default_factory=list)

    def next_id(self) -> str:
        """The element id the next :meth:`add` will use."""
        return element_id_for(self.source_id, len(self.elements))

    def next_list_id(self) -> str:
        """The id of a list whose first element the next :meth:`add` writes."""
        return list_id_for(self.source_id, len(self.elements))

    def add(
        self, draft: ElementDraft, *, record_id: str, page: int | None = None, bbox: BBox | None = None
    ) -> LayoutElement:
        """Append the element of ``draft``, found at ``page`` and ``bbox``, and return it."""
        el = draft.build(self.next_id(), len(self.elements), page=page, bbox=bbox, record_id=record_id)
        self.elements.append(el)
        return el


@dataclass
class _Open:
    element_id: str
    left: float
    ordered: bool


@dataclass
class ListAssembler:
    """Turns paragraphs whose text starts with a step marker into list items.

    Cloud layout services see lines, not lists: ``"1. Unplug the cable"`` is a
    paragraph like any other. Runs of such paragraphs become one list; an item that
    starts further right than the item before nests under it, and a plain paragraph
    that starts right of the last item's marker is a block inside that item. Anything
    else closes the list.
    """

    sink: ElementSink
    step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES
    _stack: list[_Open] = field(default_factory=list)
    _list_id: str | None = None

    def close(self) -> None:
        """End the current list (a heading, a table, a page furniture element…)."""
        self._stack.clear()
        self._list_id = None

    def text(
        self,
        text: str,
        *,
        record_id: str,
        page: int | None,
        bbox: BBox | None,
        hints: tuple[tuple[str, str], ...] = (),
        ordered_hint: bool | None = None,
    ) -> LayoutElement:
        """Add a paragraph: a list item when it starts with a marker, else text (maybe inside an item)."""
        marker = match_step_marker(text.lstrip(), self.step_styles)
        if marker is None:
            note = ElementDraft(ElementKind.TEXT, text, admonition=leading_label(text)[0], hints=hints)
            return self.block(note, record_id=record_id, page=page, bbox=bbox)
        ordered = marker.ordered if ordered_hint is None else ordered_hint
        rest = text.lstrip()[marker.rest_start :].strip()
        return self.item(
            marker.marker, rest, ordered=ordered, record_id=record_id, page=page, bbox=bbox, hints=hints
        )

    def block(
        self, draft: ElementDraft, *, record_id: str, page: int | None, bbox: BBox | None
    ) -> LayoutElement:
        """Add a block that is not an item: inside the open item it is indented under, else after the list."""
        parent = self._enclosing(bbox.left if bbox is not None else 0.0)
        if parent is None:
            self.close()
        draft.parent_id = parent.element_id if parent else None
        draft.list_id = self._list_id if parent else None
        return self.sink.add(draft, record_id=record_id, page=page, bbox=bbox)

    def item(
        self,
        number: str,
        text: str,
        *,
        ordered: bool,
        record_id: str,
        page: int | None,
        bbox: BBox | None,
        hints: tuple[tuple[str, str], ...] = (),
    ) -> LayoutElement:
        """Add one list item with its marker already split off."""
        left = bbox.left if bbox is not None else 0.0
        parent = self._enclosing(left)
        if parent is None and self._stack and self._restarts(number, ordered):
            self.close()
        if self._list_id is None:
            self._list_id = self.sink.next_list_id()
        draft = ElementDraft(
            ElementKind.LIST_ITEM,
            text,
            level=self._depth(parent),
            number=number,
            ordered=ordered,
            parent_id=parent.element_id if parent else None,
            list_id=self._list_id,
            hints=hints,
        )
        el = self.sink.add(draft, record_id=record_id, page=page, bbox=bbox)
        depth = self._depth(parent)
        del self._stack[depth:]
        self._stack.append(_Open(el.element_id, left, ordered))
        return el

    def _depth(self, parent: _Open | None) -> int:
        return 0 if parent is None else self._stack.index(parent) + 1

    def _enclosing(self, left: float) -> _Open | None:
        """The open item a block at ``left`` sits in (blocks nest strictly right of their item)."""
        for opened in reversed(self._stack):
            if left > opened.left + _INDENT:
                return opened
        return None

    def _restarts(self, number: str, ordered: bool) -> bool:
        """A top-level item that starts a new list: numbering restarts, or the list kind changes."""
        top = self._stack[0]
        return top.ordered != ordered or (ordered and _FIRST.match(number) is not None)

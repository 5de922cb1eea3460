"""Units: the pieces of a section that must not be cut apart.

A unit is a list with its lead-in sentence and the notes bound to its steps, a
paragraph, a picture, a table, or a code block. Headings and bare markup
(rules, reference definitions) carry no text of their own: their spans ride
along with the next unit so that every source character stays covered.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from procedure_rag._language.lexicons import Lexicon, split_sentences
from procedure_rag._language.numbering import marker_ordinal, marker_shape
from procedure_rag._types import ElementKind, LayoutElement

__all__ = ["Section", "Unit", "iter_sections"]

_CARRIER_KINDS = (ElementKind.SECTION_HEADER, ElementKind.TITLE)
_SOLO_KINDS = {ElementKind.TABLE: "table", ElementKind.CODE: "code"}
#: Units a list may hold between two of its steps and still go on (a step's body paragraphs,
#: its screenshot, the command it runs), when its numbering does.
MAX_BETWEEN_STEPS = 4


@dataclass
class Unit:
    """A run of elements kept together.

    Attributes:
        kind: ``"list"``, ``"text"``, ``"picture"``, ``"table"`` or ``"code"``.
        elements: The unit's elements in reading order (lead-in first for lists).
        lead_in: The list's lead-in element, when it has one.
        carried: Headings and bare markup that ride with this unit (for their spans).
        list_id: The list the unit's next item must belong to, to join it.
        resumed: Whether the list went on after units between its steps (see
            :func:`_resumed_list`).
        body_items: Ids of the items of a bulleted list that stood between two steps:
            the body of the step before them, not steps of the list's own.
    """

    kind: str
    elements: list[LayoutElement] = field(default_factory=list)
    lead_in: LayoutElement | None = None
    carried: list[LayoutElement] = field(default_factory=list)
    list_id: str | None = None
    resumed: bool = False
    body_items: set[str] = field(default_factory=set)


@dataclass
class Section:
    """The units of one section path."""

    path: tuple[str, ...]
    units: list[Unit]


def _is_lead_in(el: LayoutElement, lexicon: Lexicon) -> bool:
    if el.kind is not ElementKind.TEXT or el.admonition or el.list_id or not el.text:
        return False
    sentences = [s for s in split_sentences(el.text) if s.strip()]
    last = sentences[-1].strip() if sentences else el.text
    return bool(lexicon.lead_in.search(last) or lexicon.condition.match(last))


def _binds_after_list(el: LayoutElement) -> bool:
    """Notes and pictures right after a list belong to its last step."""
    return (el.kind is ElementKind.TEXT and bool(el.admonition)) or el.kind is ElementKind.PICTURE


def _list_unit(el: LayoutElement, prev: Unit | None, units: list[Unit], lexicon: Lexicon) -> Unit:
    """Start a list unit; the paragraph right before it becomes its lead-in when it reads as one."""
    unit = Unit("list", [el], list_id=el.list_id)
    if (
        prev is not None
        and prev.kind == "text"
        and len(prev.elements) == 1
        and _is_lead_in(prev.elements[0], lexicon)
    ):
        units.pop()
        unit.lead_in = prev.elements[0]
        unit.elements.insert(0, prev.elements[0])
        unit.carried.extend(prev.carried)
    units.append(unit)
    return unit


def _continues(last: LayoutElement, item: LayoutElement) -> bool:
    """Whether ``item`` is the step after ``last``: same level and marker shape, the next number."""
    if not (last.ordered and item.ordered and last.number and item.number) or last.level != item.level:
        return False
    before, after = marker_ordinal(last.number), marker_ordinal(item.number)
    return (
        before is not None and after == before + 1 and marker_shape(last.number) == marker_shape(item.number)
    )


def _resumed_list(item: LayoutElement, units: list[Unit]) -> Unit | None:
    """The list ``item`` goes on with after a few units between, moved into it; else ``None``.

    A list whose first step follows on from the last step of the list a few units
    before it (``② 属性の削除`` after ``① 属性の追加`` and its description, ``2.`` after
    ``1.`` and a command a Markdown author did not indent) is that list going on: what
    stands between is the body of the step before it, as a paragraph indented under the
    step would be, so a cut falls between steps, not inside one. Only the nearest
    numbered list may go on, and no numbered list stands between (a bulleted one may: the
    step's options or fields written flush left); a heading ends the section, so never
    stands between.
    """
    for back in range(1, min(len(units), MAX_BETWEEN_STEPS + 1) + 1):
        unit = units[-back]
        if unit.kind != "list" or _bulleted(unit):
            continue  # a bulleted list between is the step's body too (its options, its fields)
        last = next((el for el in reversed(unit.elements) if el.kind is ElementKind.LIST_ITEM), None)
        if last is None or not _continues(last, item):
            return None
        between = units[len(units) - back + 1 :]
        del units[len(units) - back + 1 :]
        for held in between:
            unit.elements.extend(held.elements)
            unit.carried.extend(held.carried)
            unit.body_items.update(el.element_id for el in held.elements if el.kind is ElementKind.LIST_ITEM)
        unit.list_id = item.list_id
        unit.resumed = True
        return unit
    return None


def _bulleted(unit: Unit) -> bool:
    """Whether a list unit's items are all bullets (no number orders them)."""
    return not any(el.ordered for el in unit.elements if el.kind is ElementKind.LIST_ITEM)


def _longest_body(unit: Unit) -> int:
    """How many elements stand under the list's longest step, or 0 if a step but the last has none."""
    items = [el for el in unit.elements if el is not unit.lead_in]
    level = min((el.level for el in items if el.kind is ElementKind.LIST_ITEM), default=0)
    roots = [i for i, el in enumerate(items) if el.kind is ElementKind.LIST_ITEM and el.level == level]
    bodies = [b - a - 1 for a, b in itertools.pairwise(roots)]
    return max(bodies) if bodies and min(bodies) > 0 else 0


def _last_bodies(units: list[Unit]) -> None:
    """Give a resumed list's last step the paragraphs after it, where every step before has a body.

    Laid out as ``① label`` / description, ``② label`` / description…, the paragraphs
    after the last label are its description as much as the others are theirs: as many
    as the longest description before holds.
    """
    for i, unit in enumerate(units):
        if not unit.resumed:
            continue
        most = _longest_body(unit)
        while (
            most > 0
            and i + 1 < len(units)
            and (after := units[i + 1]).kind == "text"
            and len(after.elements) == 1
            and not after.elements[0].admonition
        ):
            unit.elements.extend(after.elements)
            unit.carried.extend(after.carried)
            del units[i + 1]
            most -= 1


def _units_of(elements: list[LayoutElement], lexicon: Lexicon) -> list[Unit]:
    units: list[Unit] = []
    pending: list[LayoutElement] = []
    for el in elements:
        blank = not el.text or el.text.isspace()
        if el.kind in _CARRIER_KINDS or (blank and el.kind is not ElementKind.LIST_ITEM):
            pending.append(el)
            continue
        prev_list = units[-1] if units and units[-1].kind == "list" else None
        unit: Unit
        if el.list_id is not None and prev_list is not None and prev_list.list_id == el.list_id:
            unit = prev_list
            unit.elements.append(el)
        elif el.list_id is not None and (resumed := _resumed_list(el, units)) is not None:
            unit = resumed
            unit.elements.append(el)
        elif el.list_id is not None:
            unit = _list_unit(el, units[-1] if units else None, units, lexicon)
        elif prev_list is not None and _binds_after_list(el) and not pending:
            unit = prev_list
            unit.elements.append(el)
        else:
            kind = _SOLO_KINDS.get(el.kind) or ("picture" if el.kind is ElementKind.PICTURE else "text")
            unit = Unit(kind, [el])
            units.append(unit)
        unit.carried.extend(pending)
        pending.clear()
    if pending:
        if units:
            units[-1].carried.extend(pending)
        else:
            units.append(Unit("carrier", [], carried=list(pending)))
    _last_bodies(units)
    return units


def iter_sections(
    elements: Iterable[LayoutElement], lexicon: Lexicon, *, drop_kinds: frozenset[ElementKind]
) -> Iterator[Section]:
    """Group elements (with section paths) into sections of units, in reading order.

    Elements of ``drop_kinds`` are left out. A section that holds only its heading
    yields a section whose single unit is a ``"carrier"``: the chunk stage gives
    its span to the next chunk. Every heading starts a section, even one whose path
    is the same as the section before it (two sibling headings with the same text).
    """
    current: list[LayoutElement] = []
    path: tuple[str, ...] | None = None
    for el in elements:
        if el.kind in drop_kinds:
            continue
        if path is not None and (el.section_path != path or (el.kind in _CARRIER_KINDS and current)):
            yield Section(path, _units_of(current, lexicon))
            current = []
        path = el.section_path
        current.append(el)
    if path is not None:
        yield Section(path, _units_of(current, lexicon))

"""Units: the pieces of a section that must not be cut apart.

A unit is a list with its lead-in sentence and the notes bound to its steps, a
paragraph, a picture, a table, or a code block. Headings and bare markup
(rules, reference definitions) carry no text of their own: their spans ride
along with the next unit so that every source character stays covered.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from procedure_rag._language.lexicons import Lexicon, split_sentences
from procedure_rag._types import ElementKind, LayoutElement

__all__ = ["Section", "Unit", "iter_sections"]

_CARRIER_KINDS = (ElementKind.SECTION_HEADER, ElementKind.TITLE)
_SOLO_KINDS = {ElementKind.TABLE: "table", ElementKind.CODE: "code"}


@dataclass
class Unit:
    """A run of elements kept together.

    Attributes:
        kind: ``"list"``, ``"text"``, ``"picture"``, ``"table"`` or ``"code"``.
        elements: The unit's elements in reading order (lead-in first for lists).
        lead_in: The list's lead-in element, when it has one.
        carried: Headings and bare markup that ride with this unit (for their spans).
        bound_after: Notes and pictures that directly follow the list, bound to its last step.
    """

    kind: str
    elements: list[LayoutElement] = field(default_factory=list)
    lead_in: LayoutElement | None = None
    carried: list[LayoutElement] = field(default_factory=list)
    list_id: str | None = None


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

"""Chunks: blocks become child chunks with steps and metadata; runs of children become parents."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import fields, replace
from operator import attrgetter

from procedure_rag._chunking.cutting import SourceText
from procedure_rag._chunking.packing import Block
from procedure_rag._chunking.units import Unit
from procedure_rag._language.labels import leading_label
from procedure_rag._language.lexicons import Lexicon
from procedure_rag._language.step_fields import CAUTION_LABELS, lead_in_condition, parse_step, unlabelled
from procedure_rag._readers.text_window import TextWindow
from procedure_rag._types import Chunk, ChunkLevel, ChunkType, ElementKind, LayoutElement, ProcedureStep, Span

__all__ = ["build_children", "build_parents", "chunk_id", "merge_spans"]

_BLOCK_TYPES = {
    "table": ChunkType.TABLE,
    "code": ChunkType.CODE,
    "picture": ChunkType.PICTURE,
    "text": ChunkType.TEXT,
}
_RELATED_KINDS = (ElementKind.PICTURE, ElementKind.TABLE, ElementKind.CODE, ElementKind.FORM)


def chunk_id(source_id: str, level: ChunkLevel, start: int, text: str) -> str:
    """A stable id from the source id, the level, the position and the text."""
    digest = hashlib.sha1(  # noqa: S324 - an id, not a security boundary
        f"{source_id}\x1f{level.value}\x1f{start}\x1f{text}".encode("utf-8", "surrogatepass")
    )
    return digest.hexdigest()[:32]


def merge_spans(spans: Sequence[Span | None], source: SourceText | None = None) -> tuple[Span, ...]:
    """Sort and merge overlapping or touching spans, and with ``source``, spans only whitespace parts.

    A chunk covers the blank lines between its paragraphs: one range for a run of
    elements, not one per element (a chunk's spans are kept in memory and in every
    store's metadata). A page break (a form feed, as pages are joined) keeps two spans
    apart, so the spans still tell which pages a chunk covers.
    """
    ordered = sorted((s for s in spans if s is not None and s.end > s.start), key=lambda s: s.start)
    out: list[Span] = []
    for span in ordered:
        if out and (span.start <= out[-1].end or _blank(source, out[-1].end, span.start)):
            if span.end > out[-1].end:
                out[-1] = Span(out[-1].start, span.end)
        else:
            out.append(span)
    return tuple(out)


_BLANK = re.compile(r"[^\S\f]*")  # whitespace, page breaks left out


def _blank(source: SourceText | None, start: int, end: int) -> bool:
    """Whether ``source[start:end]`` is known and nothing but whitespace, with no page break."""
    if source is None or end > len(source):
        return False
    if isinstance(source, str):  # searched in place, not copied
        return _BLANK.fullmatch(source, start, end) is not None
    if isinstance(source, TextWindow) and start < source.released:
        return False
    return _BLANK.fullmatch(source[start:end]) is not None


def _bound_notes(units: Sequence[Unit], owners: dict[str, LayoutElement]) -> dict[str, list[str]]:
    """Notes bound to steps, by step element id, over whole list units.

    A note binds to the step right before it within the item it sits in (a note after
    a sub-step is that sub-step's), else to that item, else to the step right before it;
    a paragraph between a list and a note breaks the bond. A bulleted sub-item that
    opens with a note label (「- ※ …」) is also a note of its step. Worked out on the
    whole list, not on one part of it, so a step keeps its note when the note falls in
    the next part. Tips are not cautions. ``owners`` receives each bound note's step,
    by the note's element id.
    """
    cautions: dict[str, list[str]] = {}
    for unit in units:
        items: dict[str, LayoutElement] = {}
        last_item: LayoutElement | None = None
        last_sub: LayoutElement | None = None  # the sub-step a note inside its item follows
        for el in unit.elements:
            if el.kind is ElementKind.LIST_ITEM:
                items[el.element_id] = el
                parent = items.get(el.parent_id or "")
                if parent is not None and not el.ordered and leading_label(el.text)[0] in CAUTION_LABELS:
                    cautions.setdefault(parent.element_id, []).append(el.text)
                last_item = last_sub = el
            elif el.kind is ElementKind.TEXT and el.admonition and el is not unit.lead_in:
                owner = items.get(el.parent_id or "", last_item)
                if last_sub is not None and el.parent_id is not None and last_sub.parent_id == el.parent_id:
                    owner = last_sub  # right after a sub-step, in the item that holds both
                if owner is not None and el.admonition in CAUTION_LABELS:
                    cautions.setdefault(owner.element_id, []).append(el.text)
                    owners[el.element_id] = owner
                elif owner is not None:
                    owners[el.element_id] = owner
            elif el.kind is not ElementKind.PICTURE and el is not unit.lead_in:
                last_sub = None  # a paragraph after a sub-step: a note after it is its item's
                if el.parent_id is None:
                    last_item = None  # a paragraph between the list and a note: the note is not the step's
    return cautions


def _steps(
    block: Block,
    lexicon: Lexicon,
    cautions: dict[str, list[str]],
    note_owners: dict[str, LayoutElement],
    parsed: dict[tuple[int, str], ProcedureStep],
) -> tuple[ProcedureStep, ...]:
    """Parse the list items of a block, each with the notes bound to it (``cautions``, by item id).

    A note that left its step for this block brings the step along (its line is
    repeated above the note), marked as a continuation. ``note_owners`` gives each
    bound note's step; ``parsed`` keeps the steps parsed for earlier blocks: a step
    cut into many blocks is parsed once, not once per block.
    """
    items: list[LayoutElement] = []
    continued: set[str] = set()
    seen: set[str] = set()
    for line in block.lines:
        el = line.element
        owner = _repeated_owner(block, note_owners.get(el.element_id)) if el is not None else None
        if owner is not None and owner.element_id not in seen:
            seen.add(owner.element_id)
            continued.add(owner.element_id)
            items.append(owner)
        if el is None or el.kind is not ElementKind.LIST_ITEM:
            continue
        if line.continued and (el.element_id not in seen or el.element_id != items[0].element_id):
            continued.add(el.element_id)
        if el.element_id not in seen:
            seen.add(el.element_id)
            items.append(el)
    # Steps repeated above a part that opens inside them give their numbers too.
    numbers = {i.element_id: i.number for i in (*block.context, *items)}
    out = []
    for item in items:
        parent_number = numbers.get(item.parent_id or "", "")
        step = parsed.get((id(item), parent_number))
        if step is None:
            step = parsed[id(item), parent_number] = parse_step(
                item,
                lexicon,
                parent_number=parent_number,
                extra_caution=" ".join(unlabelled(note) for note in cautions.get(item.element_id, [])),
            )
        if item.element_id in continued:
            step = replace(step, is_continuation=True)
        out.append(step)
    return tuple(out)


def _repeated_owner(block: Block, step: LayoutElement | None) -> LayoutElement | None:
    """``step``, the step of a note in ``block``, when the block repeats its line above the note."""
    if step is None or step.span is None:
        return None
    start, end = step.span.start, step.span.end
    repeated = any(
        line.element is None and line.shows is not None and start <= line.shows.start < end
        for line in block.lines
    )
    return step if repeated else None


def _related(block: Block, units: Sequence[Unit], index: dict[int, int]) -> list[LayoutElement]:
    """Pictures, tables, code and forms inside the block or in the units next to its list.

    ``index`` gives each unit's position in ``units``, by ``id``.
    """
    found: list[LayoutElement] = [
        line.element
        for line in block.lines
        if line.element is not None and line.element.kind in _RELATED_KINDS
    ]
    if block.kind == "list":
        for unit in block.units:
            i = index.get(id(unit))
            if i is None or unit.kind != "list":
                continue
            for j in (i - 1, i + 1):
                if 0 <= j < len(units) and units[j].kind in ("picture", "table", "code"):
                    found.extend(e for e in units[j].elements if e.kind in _RELATED_KINDS)
    unique: dict[str, LayoutElement] = {}
    for el in found:
        unique.setdefault(el.element_id, el)
    return list(unique.values())


def build_children(
    blocks: Sequence[Block],
    units: Sequence[Unit],
    *,
    source_id: str,
    language: str,
    lexicon: Lexicon,
    header: str,
    source: SourceText | None = None,
) -> list[Chunk]:
    """Turn the blocks of one section into child chunks (without parent ids yet).

    Blocks must have lines; the caller moves the spans of line-less blocks elsewhere.
    ``source``, the text the spans point into, lets spans join over the blank lines
    between them (see :func:`merge_spans`).
    """
    continued_head = f"{header} {lexicon.continued_label}" if header else ""
    index = {id(u): i for i, u in enumerate(units)}
    # Notes bound to steps, worked out once per list (a long list spans many blocks).
    cautions: dict[str, list[str]] = {}
    seen_units: set[int] = set()
    conditions: dict[int, str] = {}  # lead-in condition by id of the lead-in
    parsed: dict[tuple[int, str], ProcedureStep] = {}
    drafts: list[tuple[Block, str, str, list[LayoutElement], tuple[Span, ...], ChunkType]] = []
    owner: dict[str, str] = {}
    note_owners: dict[str, LayoutElement] = {}  # a bound note's step, by the note's element id
    for block in blocks:
        head = continued_head if block.continued else header
        body = [line.text.rstrip() for line in block.lines]
        text = "\n".join([head, *body] if head else body)
        # The block's elements in order, each once (an element cut into pieces has several lines).
        unique: dict[int, LayoutElement] = {}
        for line in block.lines:
            if line.element is not None:
                unique.setdefault(id(line.element), line.element)
        elements = list(unique.values())
        spans = merge_spans([line.span for line in block.lines] + [e.span for e in block.carried], source)
        if block.kind == "list":
            for unit in block.units:
                if id(unit) not in seen_units:
                    seen_units.add(id(unit))
                    for item_id, notes in _bound_notes([unit], note_owners).items():
                        cautions.setdefault(item_id, []).extend(notes)
            ordered = any(e.ordered for e in elements if e.kind is ElementKind.LIST_ITEM)
            chunk_type = ChunkType.PROCEDURE if ordered or block.lead_in is not None else ChunkType.TEXT
        else:
            chunk_type = _BLOCK_TYPES[block.kind]
        cid = chunk_id(source_id, ChunkLevel.CHILD, spans[0].start if spans else 0, text)
        for el in elements:
            owner.setdefault(el.element_id, cid)
        drafts.append((block, cid, text, elements, spans, chunk_type))
    children: list[Chunk] = []
    for block, cid, text, elements, spans, chunk_type in drafts:
        lead = block.lead_in
        condition = ""
        if lead is not None:
            if id(lead) not in conditions:
                conditions[id(lead)] = lead_in_condition(lead.text, lexicon)
            condition = conditions[id(lead)]
        pages = [e.page for e in elements if e.page is not None]
        children.append(
            Chunk(
                chunk_id=cid,
                text=text,
                chunk_type=chunk_type,
                level=ChunkLevel.CHILD,
                section_path=block.path,
                source_id=source_id,
                language=language,
                steps=_steps(block, lexicon, cautions, note_owners, parsed) if block.kind == "list" else (),
                lead_in=lead.text if lead is not None else "",
                condition=condition,
                source_spans=spans,
                context_spans=merge_spans([line.shows for line in block.lines], source),
                element_ids=tuple(e.element_id for e in elements),
                related_elements=tuple(
                    (
                        el.element_id,
                        el.kind.value,
                        "" if owner.get(el.element_id) == cid else owner.get(el.element_id, ""),
                    )
                    for el in _related(block, units, index)
                ),
                page=min(pages) if pages else None,
                continued=block.continued,
                boxes=tuple((e.page, e.bbox) for e in elements if e.bbox is not None),
                source_record_refs=tuple(
                    dict.fromkeys(e.record_id for e in [*block.carried, *elements] if e.record_id)
                ),
                sheet=next((value for e in elements for key, value in e.hints if key == "sheet"), ""),
            )
        )
    return children


def build_parents(
    children: Sequence[Chunk],
    *,
    header: str,
    budget: int,
    max_children: int,
    length_of_body: Sequence[int],
    source: SourceText | None = None,
    blocks: Sequence[Block] | None = None,
) -> list[tuple[Chunk, list[Chunk]]]:
    """Group consecutive children of one section into parents.

    Args:
        children: Child chunks of one section, in order.
        header: The section's heading-path line.
        budget: Parent budget (measured on the children's bodies).
        max_children: Most children per parent.
        length_of_body: Size of each child's body (its text without the header line).
        source: The text the spans point into (see :func:`merge_spans`).
        blocks: The blocks the children were made of, one each: with them a parent
            shows each piece of the source once (see :func:`_parent_body`); without,
            it joins its children's bodies as they are.

    Returns:
        ``(parent, children with parent_id set)`` pairs in order.
    """
    runs: list[list[int]] = []
    size = 0
    for i, cost in enumerate(length_of_body):
        if runs and len(runs[-1]) < max_children and size + cost <= budget:
            runs[-1].append(i)
            size += cost
        else:
            runs.append([i])
            size = cost
    out: list[tuple[Chunk, list[Chunk]]] = []
    for run in runs:
        members = [children[i] for i in run]
        spans = merge_spans([s for c in members for s in c.source_spans], source)
        if blocks is not None:
            body = _parent_body([blocks[i] for i in run], spans)
        else:  # a child of its header line alone adds no line
            body = "\n".join(b for c in members if (b := _body(c, header)))
        text = f"{header}\n{body}" if header and body else header or body
        types = [c.chunk_type for c in members]
        pages = [c.page for c in members if c.page is not None]
        first = members[0]
        parent = Chunk(
            chunk_id=chunk_id(first.source_id, ChunkLevel.PARENT, spans[0].start if spans else 0, text),
            text=text,
            chunk_type=ChunkType.PROCEDURE if ChunkType.PROCEDURE in types else types[0],
            level=ChunkLevel.PARENT,
            section_path=first.section_path,
            source_id=first.source_id,
            language=first.language,
            steps=tuple(s for c in members for s in c.steps),
            lead_in=next((c.lead_in for c in members if c.lead_in), ""),
            condition=next((c.condition for c in members if c.condition), ""),
            source_spans=spans,
            element_ids=tuple(dict.fromkeys(e for c in members for e in c.element_ids)),
            related_elements=tuple(dict.fromkeys(r for c in members for r in c.related_elements)),
            page=min(pages) if pages else None,
            child_ids=tuple(c.chunk_id for c in members),
            boxes=tuple(b for c in members for b in c.boxes),
            source_record_refs=tuple(dict.fromkeys(r for c in members for r in c.source_record_refs)),
            sheet=first.sheet,  # one section, so one sheet
        )
        if len(members) == 1:
            parent = _sharing(parent, first)
        out.append((parent, [_with_parent_id(c, parent.chunk_id) for c in members]))
    return out


_CHUNK_FIELDS = tuple(f.name for f in fields(Chunk))
_chunk_values = attrgetter(*_CHUNK_FIELDS)
_PARENT_ID = _CHUNK_FIELDS.index("parent_id")


# What a parent of one child may hold as the very objects its child holds.
_SHARED = tuple(
    _CHUNK_FIELDS.index(name)
    for name in (
        "text",
        "steps",
        "source_spans",
        "element_ids",
        "related_elements",
        "boxes",
        "source_record_refs",
    )
)


def _sharing(parent: Chunk, child: Chunk) -> Chunk:
    """``parent`` holding its only child's objects wherever they are equal.

    Most parents have one child (a section that fits one chunk: 832 of 1,081 on the
    HoloLens pages, 1,256 of 1,276 on E-Manual), and then the parent's text is the
    child's: one string kept, not two.
    """
    values = list(_chunk_values(parent))
    theirs = _chunk_values(child)
    for i in _SHARED:
        if values[i] == theirs[i]:
            values[i] = theirs[i]
    return Chunk(*values)


def _with_parent_id(child: Chunk, parent_id: str) -> Chunk:
    """``dataclasses.replace(child, parent_id=parent_id)``, at half its cost (one per child)."""
    values = list(_chunk_values(child))
    values[_PARENT_ID] = parent_id
    return Chunk(*values)


def _parent_body(blocks: Sequence[Block], spans: Sequence[Span]) -> str:
    """The lines of a parent's children, each piece of the source shown once.

    A child repeats context another child holds (a cut list's lead-in, the steps a part
    opens under, the condition paragraph after the list); joined into one parent, the
    repeat is left out where the parent holds the original, and shown once where it does
    not: the first time for what comes before the parent's text (a lead-in), the last for
    what comes after it (the paragraph after the list), so the parent reads as the section.
    """
    lines = [line for block in blocks for line in block.lines]
    own = [line.text for line in lines if line.element is not None]
    end = max((s.end for s in spans), default=0)
    keep = [True] * len(lines)
    placed: dict[tuple[int, int], int] = {}  # where each repeat not held as original is shown
    repeated: set[str] = set()
    for i, line in enumerate(lines):
        if line.element is not None:  # the parent's own text
            continue
        if line.shows is None:  # a lead-in's condition, a table's header rows: once, if not held
            keep[i] = line.text not in repeated and not any(line.text in text for text in own)
            repeated.add(line.text)
            continue
        key = (line.shows.start, line.shows.end)
        if _covered(spans, line.shows):
            keep[i] = False
        elif key not in placed:
            placed[key] = i
        elif line.shows.start >= end:  # after the parent's text: the last repeat stays
            keep[placed[key]] = False
            placed[key] = i
        else:
            keep[i] = False
    return "\n".join(line.text.rstrip() for line, kept in zip(lines, keep, strict=True) if kept)


def _covered(spans: Sequence[Span], part: Span) -> bool:
    return any(s.start <= part.start and part.end <= s.end for s in spans)


def _body(child: Chunk, header: str) -> str:
    """The child's text without its heading-path line."""
    first, _, rest = child.text.partition("\n")
    if header and first.startswith(header):
        return rest
    return child.text

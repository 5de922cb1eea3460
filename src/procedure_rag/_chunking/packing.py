"""Packing: units of a section grouped into blocks under the size budget.

Each element is rendered to one line and measured once; a block's size is its
header plus the sum of its lines, so grouping is linear in the document.

Rules, in order of priority:
* never split inside a step, or between a lead-in and the first of its steps;
* a list over budget splits between steps, and every part repeats the heading
  path and the lead-in; a short paragraph right after it that opens with a
  condition (「…場合は、…」, "If …, …") ends every part, the list cut keeping room
  for it;
* a step over budget (with its sub-steps) splits between its sub-steps, keeping
  each sub-procedure whole where it fits, and a part that opens inside a step
  repeats the first line of every step it sits under;
* a single step (or paragraph) over budget splits at sentence ends, and every
  piece after the first says it continues; a sentence longer than the budget is
  cut at a space or, failing that, anywhere;
* a note (``※ …``, ``Note: …``) that does not fit takes the paragraph before it
  along to the next block, and a command line that moves takes the sentence that
  introduces it, where they fit and are not all the block holds (a note speaks of
  what stands right before it);
* tables and code blocks are blocks of their own; a table over budget splits by
  rows with its header rows repeated, code by lines; but a table that only the print of
  a PDF told (hint ``table_from``: its ruling lines or the alignment of its lines) is
  packed as the text around it where it fits after the text before it.

How one line's text is cut, and how its pieces map back to the source, is
:mod:`procedure_rag._chunking.cutting`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from procedure_rag._chunking.cutting import SourceText, hard_split, source_lines, split_text, sub_spans
from procedure_rag._chunking.lengths import Measure
from procedure_rag._chunking.units import Section, Unit
from procedure_rag._language.lexicons import Lexicon
from procedure_rag._language.step_fields import lead_in_condition, opening_condition
from procedure_rag._readers.draft import INFERRED_TABLES, TABLE_FROM
from procedure_rag._types import ElementKind, LayoutElement, Span

__all__ = ["Block", "Line", "labelled", "pack_section"]

_BULLETS = {"-", "*", "+"}
_BEFORE_ITEMS = 1 << 30
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")


@dataclass(frozen=True, slots=True)
class Line:
    """One rendered line of a block and where it came from.

    Attributes:
        text: The rendered text.
        cost: Its size (including the line break) under the length function.
        element: The element it renders, or ``None`` for repeated context.
        span: The part of the source it covers (``None`` for repeated context).
        continued: True when this line continues a step or paragraph cut to fit.
        shows: For repeated context, the part of the source it repeats, when known.
    """

    text: str
    cost: int
    element: LayoutElement | None
    span: Span | None
    continued: bool = False
    shows: Span | None = None


@dataclass
class Block:
    """A future child chunk: lines of one section under the budget.

    Lines are added with :meth:`add` and :meth:`extend`, which keep the block's
    size, so that asking it costs nothing however long the block grows.
    """

    path: tuple[str, ...]
    kind: str
    lines: list[Line] = field(default_factory=list)
    lead_in: LayoutElement | None = None
    carried: list[LayoutElement] = field(default_factory=list)
    continued: bool = False
    units: list[Unit] = field(default_factory=list)
    context: list[LayoutElement] = field(default_factory=list)
    size: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        self.size = sum(line.cost for line in self.lines)

    def add(self, line: Line) -> None:
        """Append one line."""
        self.lines.append(line)
        self.size += line.cost

    def extend(self, lines: list[Line]) -> None:
        """Append lines."""
        self.lines.extend(lines)
        self.size += sum(line.cost for line in lines)

    def cost(self) -> int:
        """Size of the block's lines (the header is accounted for by the packer)."""
        return self.size


def _opens_with_note(block: Block) -> bool:
    first = block.lines[0].element if block.lines else None
    return first is not None and bool(first.admonition)


_COMMAND = re.compile(r"^\s*(?:\$|>|PS>|[A-Za-z]:\\>)\s+\S")


def _opens_with_command(block: Block) -> bool:
    """Whether the part opens with a command line (``$ pip install …``, ``PS> Get-…``)."""
    return bool(block.lines) and _COMMAND.match(block.lines[0].text) is not None


def _ends_with(items: list[Any], tail: list[Any]) -> bool:
    """Whether ``items`` ends with the very objects of ``tail``."""
    start = len(items) - len(tail)
    return start >= 0 and all(a is b for a, b in zip(items[start:], tail, strict=True))


def labelled(admonition: str, text: str) -> str:
    """``"Note: text"``, unless the text already opens with its label (``"※ …"``, ``"注意: …"``)."""
    label = admonition.capitalize() if admonition.isascii() else admonition
    if text.lstrip("*_【").casefold().startswith(admonition.casefold()):
        return text
    if not any(ch.isalnum() for ch in label):  # a mark, not a word: "※ text", as printed
        return f"{label} {text}"
    return f"{label}: {text}"


def render_element(el: LayoutElement, depth_of: dict[str, int]) -> str:
    """Render one element as a line of chunk text."""
    if el.kind is ElementKind.LIST_ITEM:
        indent = "  " * el.level
        number = "-" if el.number in _BULLETS else el.number
        return f"{indent}{number} {el.text}".rstrip() if number else f"{indent}{el.text}"
    indent = "  " * (depth_of.get(el.parent_id, -1) + 1) if el.parent_id else ""
    if el.kind is ElementKind.PICTURE:
        url = el.hint("url")
        return f"{indent}![{el.text}]({url})" if url else f"{indent}[{el.text}]"
    if el.kind in (ElementKind.TABLE, ElementKind.CODE):
        return el.text
    if el.admonition:
        return f"{indent}{labelled(el.admonition, el.text)}"
    return f"{indent}{el.text}"


@dataclass
class _StepNode:
    """A step's lines (its item and what is bound to it) and the steps nested under it."""

    element: LayoutElement
    lines: list[Line]
    level: int
    children: list[_StepNode] = field(default_factory=list)
    cost: int = 0

    def all_lines(self) -> list[Line]:
        """Its lines and those of every step under it, in reading order."""
        out: list[Line] = []
        todo = [self]
        while todo:  # iterative: lists nest a thousand deep in the wild
            node = todo.pop()
            out.extend(node.lines)
            todo.extend(reversed(node.children))
        return out


@dataclass
class _ListState:
    """The part being filled while a list is cut, and the parts done."""

    block: Block
    parts: list[Block] = field(default_factory=list)
    has_step: bool = False
    may_break: bool = False

    def add(self, lines: list[Line]) -> None:
        self.block.extend(lines)
        self.has_step = self.has_step or bool(lines)


def _step_tree(
    unit: Unit, lead: LayoutElement | None, lines_of: Callable[[LayoutElement], list[Line]]
) -> list[_StepNode]:
    """The list's steps as a tree, in reading order; other elements join the step before them.

    So do the items of a bulleted list that stood between two steps (``Unit.body_items``).
    """
    roots: list[_StepNode] = []
    stack: list[_StepNode] = []
    for el in unit.elements:
        if el is lead:
            continue
        lines = lines_of(el)
        if (el.kind is ElementKind.LIST_ITEM and el.element_id not in unit.body_items) or not stack:
            # Anything before the first item stands alone: the next item closes it.
            level = el.level if el.kind is ElementKind.LIST_ITEM else _BEFORE_ITEMS
            while stack and stack[-1].level >= level:
                stack.pop()
            node = _StepNode(el, lines, level)
            (stack[-1].children if stack else roots).append(node)
            stack.append(node)
        else:
            stack[-1].lines.extend(lines)
    _add_costs(roots)
    return roots


def _add_costs(roots: list[_StepNode]) -> None:
    """Set each node's cost: its lines and everything under it (children before parents)."""
    order: list[_StepNode] = []
    todo = list(roots)
    while todo:
        node = todo.pop()
        order.append(node)
        todo.extend(node.children)
    for node in reversed(order):
        node.cost = sum(line.cost for line in node.lines) + sum(child.cost for child in node.children)


class _Packer:
    """Packs the units of one section into blocks."""

    def __init__(
        self, source: SourceText, budget: int, m: Measure, lexicon: Lexicon, header_cost: int
    ) -> None:
        self.source = source
        self.budget = budget
        self.m = m
        self.lexicon = lexicon
        self.avail = max(1, budget - header_cost)
        self.depth_of: dict[str, int] = {}
        # Cut lists and the condition paragraph after each: (list, paragraph, its repeat).
        self.tails: list[tuple[Unit, Unit, Line]] = []

    def lines_of(self, el: LayoutElement, *, reserve: int = 0) -> list[Line]:
        """Render and measure an element; cut it when it alone is over budget.

        A list item is cut in its text, never between its number and the text: the
        first piece keeps the number, later pieces say they continue. ``reserve``
        keeps room in every piece for a line that will precede it.
        """
        if el.kind is ElementKind.LIST_ITEM:
            self.depth_of[el.element_id] = el.level
        text = render_element(el, self.depth_of)
        if not self.m.surely_over(text, self.avail - reserve, line=True):
            cost = self.m.line(text)
            if cost <= self.avail - reserve:
                return [Line(text, cost, el, el.span)]
        if el.kind in (ElementKind.TABLE, ElementKind.CODE):
            return self._table_or_code_lines(el)
        indent = text[: len(text) - len(text.lstrip())]
        body = el.text if el.kind is ElementKind.LIST_ITEM and text.endswith(el.text) else text.lstrip()
        first_prefix = text[: len(text) - len(body)]
        later_prefix = f"{indent}{self.lexicon.continued_label} "
        room = self.avail - reserve - max(self.m.line(first_prefix), self.m.line(later_prefix))
        # A blank piece joins its neighbour rather than being dropped: the pieces must tile
        # ``body`` for their source spans to line up (and a blank line is no chunk line).
        pieces: list[str] = []
        for piece in split_text(body, max(1, room), self.m):
            if pieces and (not piece.strip() or not pieces[-1].strip()):
                pieces[-1] += piece
            else:
                pieces.append(piece)
        spans = sub_spans(self.source, el.span, body, pieces)
        out = []
        for i, (piece, span) in enumerate(zip(pieces, spans, strict=True)):
            rendered = f"{first_prefix if i == 0 else later_prefix}{piece.strip()}"
            out.append(Line(rendered, self.m.line(rendered), el, span, continued=i > 0))
        return out

    def _table_or_code_lines(self, el: LayoutElement) -> list[Line]:
        rows = [r for r in el.text.split("\n") if r.strip()]
        spans: list[Span | None] = list(source_lines(el, self.source)) if el.span and self.source else []
        if len(rows) != len(spans):
            # Rows that are not the source's own lines (a parser's table rendered as
            # Markdown, or no source text at all): every row points at the whole element.
            spans = [el.span] * len(rows)
        out: list[Line] = []
        for row, span in zip(rows, spans, strict=False):
            cost = self.m.line(row)
            if cost > self.avail:
                pieces = hard_split(row, max(1, self.avail - self.m.newline), self.m)
                for i, (piece, sub) in enumerate(
                    zip(pieces, sub_spans(self.source, span, row, pieces), strict=True)
                ):
                    out.append(Line(piece, self.m.line(piece), el, sub, continued=i > 0))
            else:
                out.append(Line(row, cost, el, span))
        return out

    def pack(self, section: Section, prefix: list[LayoutElement]) -> Iterator[Block]:
        *full, current = self._prefix_blocks(section.path, prefix)
        yield from full
        parts: list[Block] = []  # the parts added to ``current``, in order
        for i, unit in enumerate(section.units):
            if unit.kind == "carrier":
                current.carried.extend(unit.carried)
                continue
            if unit.kind == "table" and self._packs_as_text(unit, current):
                unit_parts = [self._table_part(unit)]
            elif unit.kind in ("table", "code"):
                if current.lines:
                    yield current
                    current = Block(section.path, "text")
                carried, current.carried = current.carried, []
                yield from self._solo(unit, section.path, carried)
                parts = []
                continue
            else:
                unit_parts = self._list_parts(unit) if unit.kind == "list" else self._text_parts(unit)
                tail = self._tail_of(section.units, i) if len(unit_parts) > 1 else None
                if tail is not None:
                    # Cut again keeping room for the condition paragraph after the list.
                    unit_parts = self._list_parts(unit, tail[1].cost)
                    self.tails.append((unit, *tail))
            for part in unit_parts:
                if current.lines and current.size + part.size > self.avail:
                    kept = self._keep_with_note(current, parts, part)
                    yield current
                    current = Block(section.path, "text")
                    parts = []
                    for moved in kept:
                        self._add_part(current, moved)
                        parts.append(moved)
                self._add_part(current, part)
                parts.append(part)
        if current.lines or current.carried:
            yield current

    def close_with_tails(self, blocks: list[Block]) -> None:
        """End every part of a cut list with the condition paragraph that follows the list.

        A paragraph right after a list that opens with a condition (「… が表示されない
        場合は、…」, "If you don't see …, …") speaks of the list's steps, as a lead-in
        does: when the list is cut, the parts that do not hold the paragraph end with it
        as repeated context, so a step's part keeps what to do when the step does not go
        as written. :meth:`pack` cut such a list keeping room for it (it is at most a
        third of the budget) and recorded it in :attr:`tails`; a part is never made to
        overflow.
        """
        if not self.tails:
            return
        holding: dict[int, list[Block]] = {}  # the blocks of each unit, by id
        for block in blocks:
            for held in {id(u): u for u in block.units}:
                holding.setdefault(held, []).append(block)
        for unit, tail, repeat in self.tails:
            for block in holding.get(id(unit), []):
                if not any(u is tail for u in block.units) and block.size + repeat.cost <= self.avail:
                    block.add(repeat)

    def _tail_of(self, units: list[Unit], i: int) -> tuple[Unit, Line] | None:
        """The unit after list ``units[i]`` and its line as repeated context, or ``None``.

        Only a paragraph of one short line that opens with a condition; a note box after
        a list is bound to the list's last step instead.
        """
        if units[i].kind != "list" or i + 1 >= len(units):
            return None
        tail = units[i + 1]
        if tail.kind != "text" or len(tail.elements) != 1 or tail.carried:
            return None
        el = tail.elements[0]
        if el.admonition or el.span is None or not opening_condition(el.text, self.lexicon):
            return None
        lines = self.lines_of(el)
        if len(lines) != 1 or lines[0].cost > self.avail // 3:
            return None
        return tail, Line(lines[0].text, lines[0].cost, None, None, shows=lines[0].span)

    def _packs_as_text(self, unit: Unit, current: Block) -> bool:
        """Whether a table goes with the text before it: only the print told it, and it fits there.

        A table a PDF draws or aligns, and no tag declares (a slide's parameter table under
        its step), may be a table or only a layout; where it fits in the block after the
        text before it, it stays with its step and notes, as their text would, instead of
        making a chunk of its own.
        """
        el = unit.elements[0]
        if el.hint(TABLE_FROM) not in INFERRED_TABLES:
            return False
        cost = self.m.line(el.text)
        return current.size + cost <= self.avail

    def _table_part(self, unit: Unit) -> Block:
        """A table as a part of the text around it: its rows as lines."""
        part = Block((), "text", carried=list(unit.carried), units=[unit])
        part.extend(self.lines_of(unit.elements[0]))
        return part

    def _keep_with_note(self, current: Block, parts: list[Block], part: Block) -> list[Block]:
        """Take the paragraph before a note that opens the next block off ``current``, to go with it.

        A note (``※ …``, ``Note: …``) speaks of what stands right before it: where the
        note does not fit, the paragraph before it moves on with it, and so does the
        sentence before a command line (``$ pip install …``) that moves, which introduces
        it; as long as they fit one block with the note, are not all ``current`` holds, and
        none is a note itself (a run of notes keeps the first with what it speaks of).
        Returns the parts taken off, in order.
        """
        if not _opens_with_note(part):
            return []
        taken: list[Block] = []
        size = part.size
        for previous in reversed(parts[1:]):
            if (
                previous.kind != "text"
                or previous.continued
                or previous.lead_in is not None
                or previous.carried
                or _opens_with_note(previous)
                or size + previous.size > self.avail
            ):
                break
            taken.insert(0, previous)
            size += previous.size
            if not _opens_with_command(previous):
                break
        if taken and _opens_with_command(taken[0]):
            return []  # a command without the sentence that introduces it stays where it is
        lines = [line for t in taken for line in t.lines]
        units = [unit for t in taken for unit in t.units]
        if not taken or not _ends_with(current.lines, lines) or not _ends_with(current.units, units):
            return []
        del current.lines[-len(lines) :]
        del current.units[-len(units) :]
        current.size -= size - part.size
        return taken

    @staticmethod
    def _add_part(current: Block, part: Block) -> None:
        """Append a part's lines, units and carried elements to ``current``; set its kind."""
        if not current.lines:
            current.continued = part.continued
        current.extend(part.lines)
        current.carried.extend(part.carried)
        current.units.extend(part.units)
        if part.lead_in is not None and current.lead_in is None:
            current.lead_in = part.lead_in
        if part.kind == "list":
            current.kind = "list"
        elif current.kind == "text" and part.kind == "picture" and len(current.units) == 1:
            current.kind = "picture"
        elif part.kind == "text" and current.kind == "picture":
            current.kind = "text"

    def _prefix_blocks(self, path: tuple[str, ...], prefix: list[LayoutElement]) -> list[Block]:
        """Blocks of the headings the header line does not show, as many as they need to fit.

        The last block (empty when there is no prefix) stays open for the section's units.
        """
        blocks = [Block(path, "text")]
        for h in prefix:
            line = Line(h.text, self.m.line(h.text), h, h.span)
            if blocks[-1].lines and blocks[-1].size + line.cost > self.avail:
                blocks.append(Block(path, "text"))
            blocks[-1].add(line)
        return blocks

    def _text_parts(self, unit: Unit) -> list[Block]:
        lines: list[Line] = []
        for el in unit.elements:
            lines.extend(self.lines_of(el))
        parts: list[Block] = []
        block = Block((), unit.kind, carried=list(unit.carried), units=[unit])
        for line in lines:
            if block.lines and block.size + line.cost > self.avail:
                parts.append(block)
                block = Block((), unit.kind, continued=True, units=[unit])
            block.add(line)
        parts.append(block)
        return parts

    def _repeats(self, lead: LayoutElement | None, lead_lines: list[Line]) -> list[Line]:
        """What a continued part may repeat of the lead-in: the whole of it, or its condition."""
        if lead is None:
            return []
        out = []
        if len(lead_lines) == 1 and lead_lines[0].cost <= self.avail // 3:
            out.append(Line(lead_lines[0].text, lead_lines[0].cost, None, None, shows=lead_lines[0].span))
        condition = lead_in_condition(lead.text, self.lexicon)
        if condition and (not out or out[0].text != condition):
            out.append(Line(condition, self.m.line(condition), None, None))
        return out

    def _list_parts(self, unit: Unit, reserve: int = 0) -> list[Block]:
        """Cut a list into parts, each leaving ``reserve`` free (see :meth:`_list_parts_in`).

        With a reserve the list is cut by a packer ``reserve`` narrower, which shares
        this one's state (the list depths, the tails), so this one's budget never changes.
        """
        if not reserve:
            return self._list_parts_in(unit)
        narrower = copy.copy(self)
        narrower.avail = max(1, self.avail - reserve)
        return narrower._list_parts_in(unit)

    def _list_parts_in(self, unit: Unit) -> list[Block]:
        """Cut a list into parts: between steps, each part opening with the lead-in again.

        A step (with its sub-steps and bound notes) that does not fit the rest of the
        current part starts a new part. A step longer than a whole part is cut between
        its sub-steps, keeping each sub-procedure whole where it fits, and a part that
        opens inside a step repeats the steps it sits under (``1. Settings UI:`` /
        ``2. Wi-Fi proxy (21H1 and later):``), so the condition that governs the
        sub-steps stays with them; only a step with no sub-steps that fits nowhere is
        cut between its lines. A short lead-in stays with the first step; a long one
        is ordinary text that may end a part of its own.
        """
        lead = unit.lead_in
        lead_lines = self.lines_of(lead) if lead is not None else []
        repeats = self._repeats(lead, lead_lines)
        lead_sticks = sum(line.cost for line in lead_lines) <= self.avail // 3
        # Steps cut to fit leave room for the shortest repeat, so every part can open with it.
        reserve = repeats[-1].cost if repeats else 0
        roots = _step_tree(unit, lead, lambda el: self.lines_of(el, reserve=reserve))
        state = _ListState(Block((), "list", lead_in=lead, carried=list(unit.carried), units=[unit]))
        for line in lead_lines:  # a long lead-in is text like any other: it may fill parts of its own
            if state.block.lines and state.block.size + line.cost > self.avail:
                state.parts.append(state.block)
                state.block = Block((), "list", lead_in=lead, continued=True, units=[unit])
            state.block.add(line)
        # Whether the current part holds a step yet (lead-in and repeated lines are not
        # steps): every line of a node renders a step or what sits under it.
        state.may_break = bool(lead_lines) and not lead_sticks
        for node in roots:
            self._place(node, state, unit, repeats)
        state.parts.append(state.block)
        return state.parts

    def _place(self, root: _StepNode, state: _ListState, unit: Unit, repeats: list[Line]) -> None:
        """Put one step and everything under it into the parts, cutting only when it must."""
        todo: list[tuple[_StepNode, tuple[_StepNode, ...]]] = [(root, ())]
        while todo:  # iterative: lists nest a thousand deep in the wild
            node, above = todo.pop()
            cost = node.cost
            if state.block.size + cost <= self.avail:
                state.add(node.all_lines())
                continue
            if state.has_step or state.may_break:
                self._fresh(state, unit, repeats, above, cost if cost <= self.avail else node.lines[0].cost)
                if state.block.size + cost <= self.avail:
                    state.add(node.all_lines())
                    continue
            for line in node.lines:
                if state.has_step and state.block.size + line.cost > self.avail:
                    # A note or picture of the step opening a part repeats the step's first line;
                    # a piece of a cut sentence follows on directly (it says it continues).
                    own = line.element is node.element or line is node.lines[0]
                    context = () if line.continued else above if own else (*above, node)
                    self._fresh(state, unit, repeats, context, line.cost)
                state.add([line])
            below = (*above, node)
            todo.extend((child, below) for child in reversed(node.children))

    def _fresh(
        self,
        state: _ListState,
        unit: Unit,
        repeats: list[Line],
        above: tuple[_StepNode, ...],
        next_cost: int,
    ) -> None:
        """Close the current part; open the next with the lead-in and the steps it sits under."""
        state.parts.append(state.block)
        block = Block((), "list", lead_in=unit.lead_in, continued=True, units=[unit])
        # The part opens with the whole lead-in (else its condition: steps were cut to
        # leave room for the shortest repeat), then the first lines of the enclosing steps,
        # as many as stay small; when not all fit, the steps (innermost first) win.
        context: list[_StepNode] = []
        lines: list[Line] = []
        total = 0
        for node in reversed(above):  # innermost first, while they stay small
            if not node.lines:
                continue
            first = node.lines[0]
            if total + first.cost > self.avail // 3:
                break
            total += first.cost
            context.insert(0, node)
            lines.insert(0, Line(first.text, first.cost, None, None, shows=first.span))
        repeat, kept = (repeats[-1] if repeats else None), 0
        for count in range(len(lines), -1, -1):
            room = self.avail - next_cost - sum(line.cost for line in lines[len(lines) - count :])
            if room >= 0:
                repeat, kept = next((r for r in repeats if r.cost <= room), None), count
                break
        if repeat is not None:
            block.add(repeat)
        block.extend(lines[len(lines) - kept :])
        block.context = [node.element for node in context[len(context) - kept :]]
        state.block = block
        state.has_step = False
        state.may_break = False

    def _solo(self, unit: Unit, path: tuple[str, ...], carried: list[LayoutElement]) -> Iterator[Block]:
        el = unit.elements[0]
        lines = self.lines_of(el)
        header: list[Line] = []
        if el.kind is ElementKind.TABLE and len(lines) > 2 and _TABLE_RULE.match(lines[1].text):
            header = [Line(line.text, line.cost, None, None) for line in lines[:2]]
        block = Block(path, unit.kind, carried=list(carried) + list(unit.carried), units=[unit])
        header_cost = sum(line.cost for line in header)
        for i, line in enumerate(lines):
            if block.lines and block.size + line.cost > self.avail:
                yield block
                block = Block(path, unit.kind, continued=True, units=[unit])
                # Header rows open a part that starts a row, not one that continues a cut row.
                if header and i >= 2 and not line.continued and header_cost + line.cost <= self.avail:
                    block.extend(header)
            block.add(line)
        yield block


def pack_section(
    section: Section,
    *,
    source: SourceText,
    budget: int,
    measure: Measure,
    lexicon: Lexicon,
    header: str,
    header_size: int | None = None,
    prefix: list[LayoutElement] | None = None,
) -> list[Block]:
    """Pack the units of ``section`` into blocks whose text fits ``budget``.

    Args:
        section: The section's units.
        source: The source text the section's spans point into (table and code rows
            and the pieces of a cut line are mapped back to it): the whole text, or a
            streaming reader's window holding at least the section's part.
        budget: The child chunk budget.
        measure: The length function, with its fixed costs measured once.
        lexicon: The document's language rules.
        header: The heading-path line every block of the section starts with.
        header_size: ``measure.line(header)`` when the caller knows it already.
        prefix: Headings that open the first block as lines of their own: those the
            header line does not show whole, so that their words reach a chunk.

    Returns:
        The blocks in reading order.
    """
    # The header line, the continuation label a later part appends to it, and the
    # break after the header; the last body line has no break of its own.
    if header_size is None:
        header_size = measure.line(header) if header else 0
    header_cost = header_size if header else 0
    header_cost += measure.line(f" {lexicon.continued_label}") - 2 * measure.newline
    packer = _Packer(source, budget, measure, lexicon, header_cost)
    blocks = list(packer.pack(section, prefix or []))
    packer.close_with_tails(blocks)
    for block in blocks:
        block.path = section.path
    return blocks

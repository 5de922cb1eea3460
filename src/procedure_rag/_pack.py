"""Packing: units of a section grouped into blocks under the size budget.

Each element is rendered to one line and measured once; a block's size is its
header plus the sum of its lines, so grouping is linear in the document.

Rules, in order of priority:
* never split inside a step, or between a lead-in and the first of its steps;
* a list over budget splits between steps, and every part repeats the heading
  path and the lead-in;
* a single step (or paragraph) over budget splits at sentence ends, and every
  piece after the first says it continues; a sentence longer than the budget is
  cut at a space or, failing that, anywhere;
* tables and code blocks are blocks of their own; a table over budget splits by
  rows with its header rows repeated, code by lines.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from procedure_rag._lexicon import Lexicon, split_sentences
from procedure_rag._steps import lead_in_condition
from procedure_rag._types import ElementKind, LayoutElement, Span
from procedure_rag._units import Section, Unit

__all__ = ["Block", "Line", "Measure", "pack_section"]

_BULLETS = {"-", "*", "+"}
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
    """

    text: str
    cost: int
    element: LayoutElement | None
    span: Span | None
    continued: bool = False


@dataclass
class Block:
    """A future child chunk: lines of one section under the budget."""

    path: tuple[str, ...]
    kind: str
    lines: list[Line] = field(default_factory=list)
    lead_in: LayoutElement | None = None
    carried: list[LayoutElement] = field(default_factory=list)
    continued: bool = False
    units: list[Unit] = field(default_factory=list)

    def cost(self) -> int:
        """Size of the block's lines (the header is accounted for by the packer)."""
        return sum(line.cost for line in self.lines)


class Measure:
    """The length function, plus the size of a line break and of labels, measured once."""

    def __init__(self, length: Callable[[str], int]) -> None:
        self.length = length
        self.newline = max(length("\n"), 0)
        self._labels: dict[str, int] = {}

    def line(self, text: str) -> int:
        """Size of ``text`` as one line of a chunk."""
        return self.length(text) + self.newline

    def label(self, text: str) -> int:
        """Size of a short label line, measured once per label."""
        cost = self._labels.get(text)
        if cost is None:
            cost = self._labels[text] = self.line(text)
        return cost


def _label(admonition: str) -> str:
    return admonition.capitalize() if admonition.isascii() else admonition


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
        return f"{indent}{_label(el.admonition)}: {el.text}"
    return f"{indent}{el.text}"


def _split_text(text: str, avail: int, m: Measure) -> list[str]:
    """Cut ``text`` into pieces of at most ``avail``: at sentence ends, then at spaces."""
    pieces: list[str] = []
    current = ""
    current_cost = 0
    for sentence in split_sentences(text):
        cost = m.length(sentence)
        if cost > avail:
            if current:
                pieces.append(current)
                current, current_cost = "", 0
            pieces.extend(_hard_split(sentence, avail, m))
            continue
        if current and current_cost + cost > avail:
            pieces.append(current)
            current, current_cost = "", 0
        current += sentence
        current_cost += cost
    if current:
        pieces.append(current)
    return pieces


def _hard_split(text: str, avail: int, m: Measure) -> list[str]:
    """Cut a sentence longer than the budget, preferring spaces. Linear in ``len(text)``."""
    total = max(m.length(text), 1)
    step = max(1, int(len(text) * avail / total * 0.9))
    pieces: list[str] = []
    pos = 0
    while pos < len(text):
        end = min(len(text), pos + step)
        if end < len(text):
            space = text.rfind(" ", pos + step // 2, end)
            if space > pos:
                end = space + 1
        piece = text[pos:end]
        while m.length(piece) > avail and len(piece) > 1:
            piece = piece[: max(1, len(piece) * 3 // 4)]
        pieces.append(piece)
        pos += len(piece)
    return pieces


def _find_start(source: str, head: str, start: int, end: int) -> int:
    """Where ``head`` (its first 20 non-space characters) begins in ``source[start:end]``, or -1.

    Line breaks and indentation in the source may sit between any two characters,
    since rendering joined wrapped lines.
    """
    chars = [re.escape(ch) for ch in head if not ch.isspace()][:20]
    if not chars:
        return -1
    m = re.compile(r"\s*".join(chars)).search(source, start, end)
    return m.start() if m else -1


def _sub_spans(source: str, span: Span | None, text: str, pieces: list[str]) -> list[Span | None]:
    """Share ``span`` among consecutive ``pieces`` of ``text``; the sub-spans tile the span.

    Each piece after the first starts where its first word occurs in the source
    (searched forward from the previous boundary), so a highlighted piece begins
    at its own sentence; when the word is not found (markup changed it), the
    boundary falls in proportion to the characters before it.
    """
    if span is None:
        return [None] * len(pieces)
    bounds = [span.start]
    consumed = 0
    for piece in pieces[:-1]:
        consumed += len(piece)
        guess = span.start + (span.end - span.start) * consumed // max(len(text), 1)
        found = _find_start(source, text[consumed : consumed + 40], bounds[-1], span.end)
        bounds.append(max(bounds[-1], found if found >= 0 else guess))
    bounds.append(span.end)
    return [Span(a, b) for a, b in itertools.pairwise(bounds)]


def _source_lines(el: LayoutElement, source: str) -> list[Span]:
    """Spans of the source lines of a table or code element (one per rendered line)."""
    assert el.span is not None  # noqa: S101 - callers check
    spans: list[Span] = []
    pos = el.span.start
    for raw in source[el.span.start : el.span.end].splitlines(keepends=True):
        stripped = raw.rstrip("\r\n")
        if stripped.strip():
            spans.append(Span(pos, pos + len(stripped)))
        pos += len(raw)
    return spans


class _Packer:
    """Packs the units of one section into blocks."""

    def __init__(self, source: str, budget: int, m: Measure, lexicon: Lexicon, header_cost: int) -> None:
        self.source = source
        self.budget = budget
        self.m = m
        self.lexicon = lexicon
        self.avail = max(1, budget - header_cost)
        self.depth_of: dict[str, int] = {}

    def lines_of(self, el: LayoutElement) -> list[Line]:
        """Render and measure an element; cut it when it alone is over budget."""
        if el.kind is ElementKind.LIST_ITEM:
            self.depth_of[el.element_id] = el.level
        text = render_element(el, self.depth_of)
        cost = self.m.line(text)
        if cost <= self.avail:
            return [Line(text, cost, el, el.span)]
        if el.kind in (ElementKind.TABLE, ElementKind.CODE) and el.span is not None:
            return self._table_or_code_lines(el)
        indent = text[: len(text) - len(text.lstrip())]
        body = text[len(indent) :]
        pieces = _split_text(
            body, max(1, self.avail - self.m.line(indent + self.lexicon.continued_label)), self.m
        )
        spans = _sub_spans(self.source, el.span, body, pieces)
        out = []
        for i, (piece, span) in enumerate(zip(pieces, spans, strict=True)):
            rendered = (
                f"{indent}{piece.strip()}"
                if i == 0
                else f"{indent}{self.lexicon.continued_label} {piece.strip()}"
            )
            out.append(Line(rendered, self.m.line(rendered), el, span, continued=i > 0))
        return out

    def _table_or_code_lines(self, el: LayoutElement) -> list[Line]:
        spans = _source_lines(el, self.source)
        rows = el.text.split("\n")
        rows = [r for r in rows if r.strip()]
        if len(rows) != len(spans):  # unusual layout: fall back to one span for all rows
            spans = [el.span] * len(rows) if el.span else []
        out: list[Line] = []
        for row, span in zip(rows, spans, strict=False):
            cost = self.m.line(row)
            if cost > self.avail:
                pieces = _hard_split(row, max(1, self.avail - self.m.newline), self.m)
                for i, (piece, sub) in enumerate(
                    zip(pieces, _sub_spans(self.source, span, row, pieces), strict=True)
                ):
                    out.append(Line(piece, self.m.line(piece), el, sub, continued=i > 0))
            else:
                out.append(Line(row, cost, el, span))
        return out

    def pack(self, section: Section, prefix: list[str]) -> Iterator[Block]:
        current = Block(section.path, "text", lines=[Line(t, self.m.line(t), None, None) for t in prefix])
        for unit in section.units:
            if unit.kind == "carrier":
                current.carried.extend(unit.carried)
                continue
            if unit.kind in ("table", "code"):
                if current.lines:
                    yield current
                    current = Block(section.path, "text")
                carried, current.carried = current.carried, []
                yield from self._solo(unit, section.path, carried)
                continue
            parts = self._list_parts(unit) if unit.kind == "list" else self._text_parts(unit)
            for part in parts:
                if current.lines and current.cost() + part.cost() > self.avail:
                    yield current
                    current = Block(section.path, "text")
                if not current.lines:
                    current.continued = part.continued
                current.lines.extend(part.lines)
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
        if current.lines or current.carried:
            yield current

    def _text_parts(self, unit: Unit) -> list[Block]:
        lines: list[Line] = []
        for el in unit.elements:
            lines.extend(self.lines_of(el))
        parts: list[Block] = []
        block = Block((), unit.kind, carried=list(unit.carried), units=[unit])
        for line in lines:
            if block.lines and block.cost() + line.cost > self.avail:
                parts.append(block)
                block = Block((), unit.kind, continued=True, units=[unit])
            block.lines.append(line)
        parts.append(block)
        return parts

    def _list_parts(self, unit: Unit) -> list[Block]:
        lead = unit.lead_in
        lead_lines = self.lines_of(lead) if lead is not None else []
        repeat: Line | None = None
        if lead is not None:
            repeat_text = lead_lines[0].text if len(lead_lines) == 1 else ""
            if not repeat_text or self.m.line(repeat_text) > self.avail // 3:
                repeat_text = lead_in_condition(lead.text, self.lexicon) or ""
            if repeat_text:
                repeat = Line(repeat_text, self.m.line(repeat_text), None, None)
        groups: list[list[Line]] = []
        top = min((e.level for e in unit.elements if e.kind is ElementKind.LIST_ITEM), default=0)
        for el in unit.elements:
            if el is lead:
                continue
            starts_group = el.kind is ElementKind.LIST_ITEM and el.level == top
            if starts_group or not groups:
                groups.append([])
            groups[-1].extend(self.lines_of(el))
        parts: list[Block] = []
        block = Block(
            (), "list", lines=list(lead_lines), lead_in=lead, carried=list(unit.carried), units=[unit]
        )
        repeat_cost = repeat.cost if repeat is not None else 0
        for group in groups:
            group_cost = sum(line.cost for line in group)
            if block.cost() + group_cost <= self.avail:
                block.lines.extend(group)
                continue
            for line in group:
                has_step = any(x.element is not None and x.element is not lead for x in block.lines)
                if has_step and block.cost() + line.cost > self.avail:
                    parts.append(block)
                    block = Block((), "list", lead_in=lead, continued=True, units=[unit])
                    if repeat is not None and repeat_cost + line.cost <= self.avail:
                        block.lines.append(repeat)
                block.lines.append(line)
            # A group that did not fit whole ends its block, so the next step starts fresh.
        parts.append(block)
        return parts

    def _solo(self, unit: Unit, path: tuple[str, ...], carried: list[LayoutElement]) -> Iterator[Block]:
        el = unit.elements[0]
        lines = self.lines_of(el)
        header: list[Line] = []
        if el.kind is ElementKind.TABLE and len(lines) > 2 and _TABLE_RULE.match(lines[1].text):
            header = [Line(line.text, line.cost, None, None) for line in lines[:2]]
        block = Block(path, unit.kind, carried=list(carried) + list(unit.carried), units=[unit])
        header_cost = sum(line.cost for line in header)
        for i, line in enumerate(lines):
            if block.lines and block.cost() + line.cost > self.avail:
                yield block
                block = Block(path, unit.kind, continued=True, units=[unit])
                if header and i >= 2 and header_cost + line.cost <= self.avail:
                    block.lines.extend(header)
            block.lines.append(line)
        yield block


def pack_section(
    section: Section,
    *,
    source: str,
    budget: int,
    measure: Measure,
    lexicon: Lexicon,
    header: str,
    prefix: list[str] | None = None,
) -> list[Block]:
    """Pack the units of ``section`` into blocks whose text fits ``budget``.

    Args:
        section: The section's units.
        source: The whole source text (table and code rows are mapped back to it).
        budget: The child chunk budget.
        measure: The length function, with its fixed costs measured once.
        lexicon: The document's language rules.
        header: The heading-path line every block of the section starts with.
        prefix: Lines that open the first block: headings of empty sections just
            before this one that its own path does not name, so their words stay.

    Returns:
        The blocks in reading order.
    """
    header_cost = measure.line(header) if header else 0
    header_cost += measure.label(lexicon.continued_label)
    packer = _Packer(source, budget, measure, lexicon, header_cost)
    blocks = list(packer.pack(section, prefix or []))
    for block in blocks:
        block.path = section.path
    return blocks

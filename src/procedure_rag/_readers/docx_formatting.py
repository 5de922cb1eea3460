"""Headings a Word file marks by formatting alone: bold throughout, or larger than its body.

Many Word manuals use no heading style: the author makes a title bold, or larger, by hand
(Word's direct formatting), and the file says nothing else about it. Such a document's
headings are told from its formatting, as a reader sees them, and only in a document
where no paragraph has a heading style or an outline level (where one has, bold is
emphasis):

- the body's size is the size most of the document's characters have;
- a paragraph is set apart when every run of its text is bold, or is at least one point
  larger than the body (sizes and bold resolved through the run's own properties, its
  character style, the paragraph's style and the document's defaults, as Word does);
- it is a heading when it is set apart, short and not a sentence (:func:`short_title`),
  not numbered (by Word or by hand), not a note label (``注意``, ``Note:``), not in a table,
  and something follows it;
- a kind of formatting that most paragraphs have is the body's, not a heading's: a class
  counts only while it holds at most a third of the paragraphs;
- levels follow size, larger first; bold at the body's size comes last;
- a list holds no headings: titles numbered by hand (``①``, ``②``…, ``1.``, ``2.``…) with
  headings between them are sections, one level above the highest heading they hold, and
  a lone heading before the first of them (no larger than those) titles them all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import pairwise
from xml.etree import ElementTree as ET

from procedure_rag._language.labels import leading_label
from procedure_rag._language.numbering import StepStyle, marker_ordinal, match_step_marker
from procedure_rag._readers.docx_numbering import W
from procedure_rag._readers.headings import short_title

__all__ = ["RunFormats", "body_paragraphs", "formatted_headings"]

#: Word's size when nothing sets one: 10 points, in half-points.
_DEFAULT_SIZE = 20
#: How much larger than the body a heading is at least, in half-points (one point).
_LARGER = 2
#: The largest share of paragraphs one heading class may hold.
_MOST_SHARE = 1 / 3
_MAX_LEVEL = 6
_OFF = frozenset({"0", "false", "off", "none"})
# Containers whose paragraphs are the body's (content controls, revisions): not tables, not boxes.
_BODY_CONTAINERS = frozenset(f"{W}{tag}" for tag in ("sdt", "sdtContent", "customXml", "ins", "moveTo"))
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_SKIPPED_RUN_PARTS = frozenset(f"{W}{tag}" for tag in ("del", "moveFrom", "instrText", "delText"))


def _flag(rpr: ET.Element | None, tag: str) -> bool | None:
    """A toggle property (``<w:b/>``, ``<w:b w:val="0"/>``) of a run's properties; ``None`` if unset."""
    element = rpr.find(f"{W}{tag}") if rpr is not None else None
    if element is None:
        return None
    return element.get(f"{W}val", "true").lower() not in _OFF


def _size(rpr: ET.Element | None) -> int | None:
    element = rpr.find(f"{W}sz") if rpr is not None else None
    value = element.get(f"{W}val", "") if element is not None else ""
    return int(value) if value.isdecimal() else None


@dataclass(frozen=True, slots=True)
class _StyleRun:
    based_on: str
    bold: bool | None
    size: int | None


@dataclass(frozen=True, slots=True)
class RunFormats:
    """Bold and size of runs, resolved as Word resolves them (``word/styles.xml``)."""

    styles: dict[str, _StyleRun]
    default_bold: bool = False
    default_size: int = _DEFAULT_SIZE

    @classmethod
    def parse(cls, root: ET.Element | None) -> RunFormats:
        """The styles' run properties and the document defaults (none: Word's own)."""
        if root is None:
            return cls({})
        styles = {}
        for style in root.iter(f"{W}style"):
            rpr = style.find(f"{W}rPr")
            based = style.find(f"{W}basedOn")
            styles[style.get(f"{W}styleId", "")] = _StyleRun(
                based_on=based.get(f"{W}val", "") if based is not None else "",
                bold=_flag(rpr, "b"),
                size=_size(rpr),
            )
        defaults = root.find(f"{W}docDefaults/{W}rPrDefault/{W}rPr")
        return cls(
            styles,
            default_bold=bool(_flag(defaults, "b")),
            default_size=_size(defaults) or _DEFAULT_SIZE,
        )

    def _chain(self, style_id: str) -> Iterator[_StyleRun]:
        seen: set[str] = set()
        while style_id and style_id not in seen and style_id in self.styles:
            seen.add(style_id)
            style = self.styles[style_id]
            yield style
            style_id = style.based_on

    def of_run(self, rpr: ET.Element | None, paragraph_style: str) -> tuple[bool, int]:
        """``(bold, size in half-points)`` of a run with properties ``rpr`` in a paragraph of that style."""
        char_style = rpr.find(f"{W}rStyle") if rpr is not None else None
        char_id = char_style.get(f"{W}val", "") if char_style is not None else ""
        bold, size = _flag(rpr, "b"), _size(rpr)
        for style in (*self._chain(char_id), *self._chain(paragraph_style)):
            bold = style.bold if bold is None else bold
            size = style.size if size is None else size
        return (self.default_bold if bold is None else bold), (size or self.default_size)


@dataclass(frozen=True, slots=True)
class _Paragraph:
    element: ET.Element
    text: str
    bold: bool  # every run of its text
    size: int  # the smallest size of its text
    chars: Counter[int]  # characters per size
    indented: bool  # opens with white space


def _runs(paragraph: ET.Element) -> Iterator[ET.Element]:
    """The runs whose text the paragraph shows, as the reader's ``_text`` walks them."""
    for child in paragraph:
        if child.tag == f"{W}r":
            yield child
        elif child.tag == f"{_MC}AlternateContent":  # the first choice only: the fallback repeats it
            choice = child.find(f"{_MC}Choice")
            yield from _runs(choice if choice is not None else child)
        elif child.tag not in _SKIPPED_RUN_PARTS and child.tag != f"{W}pPr":
            yield from _runs(child)  # hyperlinks, insertions, fields, content controls


def _measure(paragraph: ET.Element, formats: RunFormats) -> _Paragraph:
    ppr = paragraph.find(f"{W}pPr")
    style = ppr.find(f"{W}pStyle") if ppr is not None else None
    style_id = style.get(f"{W}val", "") if style is not None else ""
    pieces: list[str] = []
    chars: Counter[int] = Counter()
    bold = True
    for run in _runs(paragraph):
        text = "".join(t.text or "" for t in run.findall(f"{W}t"))
        if not text.strip():
            continue
        run_bold, size = formats.of_run(run.find(f"{W}rPr"), style_id)
        bold = bold and run_bold
        chars[size] += len(text.strip())
        pieces.append(text)
    raw = "".join(pieces)
    text = raw.strip()
    indented = raw[:1].isspace()
    return _Paragraph(paragraph, text, bold and bool(text), min(chars) if chars else 0, chars, indented)


def body_paragraphs(container: ET.Element) -> Iterator[ET.Element]:
    """The paragraphs of the body, in order: not those in tables or text boxes."""
    for child in container:
        if child.tag == f"{W}p":
            yield child
        elif child.tag in _BODY_CONTAINERS:
            yield from body_paragraphs(child)


def formatted_headings(
    paragraphs: Iterable[ET.Element],
    formats: RunFormats,
    *,
    numbered: Iterable[ET.Element],
    step_styles: tuple[StepStyle, ...],
) -> dict[ET.Element, int]:
    """The body paragraphs that are headings by their formatting, and their levels (1 first).

    Args:
        paragraphs: The body's paragraphs in order (:func:`body_paragraphs`), in a document
            with no heading style or outline level in use.
        formats: The document's run formatting.
        numbered: The paragraphs Word numbers (a ``numPr`` of their own or their style's).
        step_styles: The step numbering a reader knows in text (a line numbered by hand).
    """
    measured = [_measure(p, formats) for p in paragraphs]
    measured = [p for p in measured if p.text]
    totals: Counter[int] = Counter()
    for p in measured:
        totals.update(p.chars)
    if not totals:
        return {}
    body = totals.most_common(1)[0][0]
    skipped = set(numbered)
    classes: dict[ET.Element, tuple[int, bool]] = {}
    for p in measured[:-1]:  # the last paragraph heads nothing
        larger = p.size >= body + _LARGER
        if not (p.bold or larger) or p.element in skipped or not short_title(p.text, 80):
            continue
        if leading_label(p.text)[0] or match_step_marker(p.text, step_styles) is not None:
            continue
        classes[p.element] = (p.size if larger else body, p.bold)
    counts = Counter(classes.values())
    kept = sorted(
        (c for c, n in counts.items() if n <= len(measured) * _MOST_SHARE), key=lambda c: (-c[0], not c[1])
    )
    levels = {c: i + 1 for i, c in enumerate(kept)}
    headings = {element: levels[c] for element, c in classes.items() if c in levels}
    parts = _numbered_sections(measured, headings, skipped, step_styles)
    if parts:
        # The numbered titles take the level of the highest heading they hold, those one
        # deeper; the one heading before the first of them, if no larger, titles them all.
        top = min(parts.values())
        order = {p.element: i for i, p in enumerate(measured)}
        first = min(order[e] for e in parts)
        before = [e for e in headings if order[e] < first]
        lead = before[0] if len(before) == 1 and headings[before[0]] >= top else None
        shift = 1 + (lead is not None)
        headings = {e: level + shift * (level >= top) for e, level in headings.items()}
        headings.update(dict.fromkeys(parts, top + shift - 1))
        if lead is not None:
            headings[lead] = top
    return {element: min(level, _MAX_LEVEL) for element, level in headings.items()}


def _numbered_sections(
    measured: list[_Paragraph],
    headings: Mapping[ET.Element, int],
    skipped: Collection[ET.Element],
    step_styles: tuple[StepStyle, ...],
) -> dict[ET.Element, int]:
    """Titles numbered by hand (①, ②, ③) with headings by formatting between them; the top level they hold.

    A list holds no headings: where a heading stands between two numbers of a series
    (``1`` then ``2``…, each flush left, a title rather than a sentence), the numbers
    title the parts the headings divide.
    """
    runs: dict[str, list[list[int]]] = {}  # marker style -> runs of paragraph indexes numbered 1, 2, 3…
    for i, p in enumerate(measured):
        m = match_step_marker(p.text, step_styles) if not p.indented and p.element not in skipped else None
        ordinal = marker_ordinal(m.marker) if m is not None and m.ordered else None
        if m is None or ordinal is None:
            continue
        style_runs = runs.setdefault(m.style, [])
        title = short_title(p.text[m.rest_start :].strip(), 80)
        if ordinal == 1 or not style_runs or len(style_runs[-1]) != ordinal - 1:
            style_runs.append([])
        style_runs[-1].append(i if title else -1)
    out: dict[ET.Element, int] = {}
    for run in (r for style_runs in runs.values() for r in style_runs):
        if len(run) < 2 or -1 in run:
            continue
        held = [
            headings[measured[j].element]
            for a, b in pairwise(run)
            for j in range(a + 1, b)
            if measured[j].element in headings
        ]
        if held:
            out.update(dict.fromkeys((measured[i].element for i in run), min(held)))
    return out

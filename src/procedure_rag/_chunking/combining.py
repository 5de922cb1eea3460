"""Small sections combined: consecutive short sections of one parent chunked together.

A manual often writes a procedure as a run of short headed sections (「1. データセットを
選択する」, 「2. …」, each a sentence or two), or opens a section with a line of text before
its first subsection. Chunked one section at a time, each becomes a chunk far under the
budget, and a question about two neighbouring steps finds them in no one chunk. As
Unstructured's ``chunk_by_title`` does with ``combine_text_under_n_chars``, consecutive
sections are chunked as one while they fit the budget together: each next section is a
sibling of the one before it, or its first subsection, under the same parent. The combined
section keeps the first one's path (the chunk's ``section_path`` is where it starts); the
headings of the sections after it become lines of its text, where they stood.

By default (``ChunkerOptions.combine_small_sections=None``) a section joins the run only
when its heading was inferred from the print: from font size, weight or a rule in a PDF
without tags or outline, or from the shape of a line in text extracted from pages (hint
``heading_from``). Such a heading may be a step written large, a label or a sub-heading of
a page given to a screenshot, and its section is often a line or two; a heading that a
Markdown, HTML or Word author, or a PDF's tags or outline, declare keeps its section apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from procedure_rag._chunking.units import Section, Unit
from procedure_rag._readers.draft import HEADING_FROM, INFERRED_HEADINGS
from procedure_rag._types import ElementKind

__all__ = ["combine_small_sections"]

_HEADINGS = (ElementKind.SECTION_HEADER, ElementKind.TITLE)


def _follows(before: tuple[str, ...], after: tuple[str, ...], parent: tuple[str, ...]) -> bool:
    """Whether ``after`` is inside ``parent`` and a child of ``before`` or of one of its ancestors.

    Its next sibling, its first subsection, a sibling of an ancestor: not a section that
    skips a level.
    """
    if after[: len(parent)] != parent or len(after) <= len(parent):
        return False
    return before[: len(after) - 1] == after[:-1]


def _inferred(section: Section) -> bool:
    """Whether the section opens with a heading inferred from the print (see ``HEADING_FROM``)."""
    first = section.units[0] if section.units else None
    return first is not None and any(
        e.kind in _HEADINGS and e.hint(HEADING_FROM) in INFERRED_HEADINGS for e in first.carried
    )


def _with_heading_lines(section: Section) -> list[Unit]:
    """The section's units, its own heading (carried by its first unit) made a text unit before them."""
    units = list(section.units)
    if not units:
        return units
    first = units[0]
    headings = [e for e in first.carried if e.kind in _HEADINGS and e.text]
    if not headings:
        return units
    rest = [e for e in first.carried if not (e.kind in _HEADINGS and e.text)]
    lines = [Unit("text", [replace(h, kind=ElementKind.TEXT, level=0)]) for h in headings]
    units[0] = replace(first, carried=rest)
    return [*lines, *units]


def combine_small_sections(
    sections: Iterable[Section],
    *,
    size: Callable[[Section], int],
    budget: Callable[[tuple[str, ...]], int],
    inferred_only: bool = False,
) -> Iterator[Section]:
    """Yield ``sections`` with runs of small consecutive ones combined (see the module docstring).

    Args:
        sections: The document's sections in reading order.
        size: The size of a section's text, its headings included, without its header line.
        budget: What the text of a combined section with a given path may take at most.
        inferred_only: Append to a run only sections whose heading was inferred from
            the print (the hint ``heading_from`` is ``"fonts"`` or ``"text"``); the
            run's first section may be any.
    """
    run: Section | None = None
    last: tuple[str, ...] = ()
    total: int | None = None  # the run's size, measured only once a section may join it
    for section in sections:
        if not section.path or any(u.kind in ("table", "code") for u in section.units):
            if run is not None:
                yield run
                run = None
            yield section
            continue
        cost: int | None = None
        if (
            run is not None
            and (not inferred_only or _inferred(section))
            and _follows(last, section.path, run.path[:-1])
        ):
            total = size(run) if total is None else total
            cost = size(section)
            if total + cost <= budget(run.path):
                run = Section(run.path, [*run.units, *_with_heading_lines(section)])
                total += cost
                last = section.path
                continue
        if run is not None:
            yield run
        run, last, total = section, section.path, cost
    if run is not None:
        yield run

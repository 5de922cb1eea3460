"""Sub-steps written on the continuation lines of a step (``1. Open.`` then ``   a. Cut.``).

In Markdown the first paragraph of a list item is one block, whatever its lines hold,
so sub-steps that CommonMark does not know as list markers (``a.``, ``(1)``, ``①``,
``手順1``, ``・``) and that sit right under the step's first line stay in the step's
text. Japanese manuals write ``(1)`` and ``①`` sub-steps this way all the time.

A continuation line that starts with something number-like is not always a step: a
wrapped sentence can put ``2. Take``, ``(2) below`` or ``a. m.`` at the start of a
line. A line starts a sub-step when its marker

* continues a sequence already open in the paragraph (``b.`` after ``a.``, ``②``
  after ``①``: the same style and the next position), or
* starts a new sequence, that is states the first position (``a.``, ``(1)``, ``①``,
  ``i.``) or none (``・``, ``#.``), and either the line before ends a sentence or a
  clause (``.``, ``。``, ``:``…) or a later line of the paragraph continues it.

So ``2. Take``, ``(2) below`` or ``e. g.`` never start a sub-step on their own, and
``a. m.`` or ``i. e.`` do only right after a full stop with no ``b.`` / ``ii.`` to
follow. A new sequence inside an open one nests under it (``①`` under ``(1)``), as a
change of numbering style does in plain text; a marker that continues an outer
sequence closes the inner ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

from procedure_rag._language.numbering import (
    DEFAULT_STEP_STYLES,
    ROMAN_VALUES,
    StepMarker,
    StepStyle,
    marker_core,
    marker_ordinal,
    match_step_marker,
)

__all__ = ["SubStep", "find_substeps"]

# A line ends a sentence or a clause: what may stand before a list in running text.
_CLAUSE_END = frozenset(".!?:。．！？：")
_CLOSERS = "\"'”’」』)）]】"
_NEGATIVE_CIRCLED = re.compile("[\u2776-\u277f\u24eb-\u24f4]")


@dataclass(frozen=True, slots=True)
class SubStep:
    """A continuation line that starts a sub-step.

    Attributes:
        line: Index of the line in the paragraph (0 is the step's own first line).
        marker: The marker found at the start of the line.
        depth: 1 for a sub-step of the step, 2 for one under a sub-step, and so on.
    """

    line: int
    marker: StepMarker
    depth: int


#: A sequence of markers: the style (``roman`` counted with ``letter``) and how it counts.
_Series: TypeAlias = tuple[str, str]


def _readings(m: StepMarker) -> list[tuple[_Series, int | None]]:
    """The sequences ``m`` may belong to, each with the position it states there.

    ``i.``, ``v.`` and ``x.`` read both as letters and as roman numerals; a marker that
    states no position (``・``, ``#.``) is its own sequence, position ``None``.
    """
    style = "letter" if m.style == "roman" else m.style
    core = marker_core(m.marker)
    if core.isalpha() and core.isascii():
        out: list[tuple[_Series, int | None]] = []
        if len(core) == 1:
            out.append(((style, "letter"), ord(core) - ord("a") + 1))
        if core in ROMAN_VALUES:
            out.append(((style, "roman"), ROMAN_VALUES[core]))
        return out
    ordinal = marker_ordinal(m.marker)
    if ordinal is None:
        return [((style, m.marker), None)]
    if any(ch.isdigit() for ch in m.marker):
        return [((style, "digits"), ordinal)]
    return [((style, "negative" if _NEGATIVE_CIRCLED.match(m.marker) else "circled"), ordinal)]


def _ends_clause(line: str) -> bool:
    tail = line.rstrip().rstrip(_CLOSERS)
    return bool(tail) and tail[-1] in _CLAUSE_END


def find_substeps(lines: Sequence[str], styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES) -> list[SubStep]:
    """Find the continuation lines of a step's first paragraph that start sub-steps.

    Args:
        lines: The paragraph's lines, leading whitespace removed; ``lines[0]`` is the
            step's own first line (after its marker) and never starts a sub-step.
        styles: The step numbering styles to recognise.

    Returns:
        The sub-steps in order (empty when the paragraph has none).
    """
    marks = [None, *(match_step_marker(ln, styles) for ln in lines[1:])]
    readings = [_readings(m) if m is not None else [] for m in marks]
    # The last line that continues each sequence from its start ("b." or "②"; for "・" a second "・").
    seconds: dict[_Series, int] = {}
    for i, found in enumerate(readings):
        for series, ordinal in found:
            if ordinal in (None, 2):
                seconds[series] = i
    open_: list[tuple[_Series, int | None]] = []  # the open sequences, outermost first
    out: list[SubStep] = []
    for i, found in enumerate(readings):
        level = _continued(open_, found)
        if level is None:
            level = _started(open_, found, i, seconds, _ends_clause(lines[i - 1]) if i else False)
        mark = marks[i]
        if level is not None and mark is not None:  # a line with readings has a marker
            out.append(SubStep(i, mark, level))
    return out


def _continued(
    open_: list[tuple[_Series, int | None]], found: list[tuple[_Series, int | None]]
) -> int | None:
    """The depth of the open sequence the marker continues (closing deeper ones), or ``None``."""
    for depth in range(len(open_), 0, -1):
        series, last = open_[depth - 1]
        for candidate, ordinal in found:
            if candidate == series and (ordinal is None or (last is not None and ordinal == last + 1)):
                del open_[depth:]
                open_[depth - 1] = (series, ordinal)
                return depth
    return None


def _started(
    open_: list[tuple[_Series, int | None]],
    found: list[tuple[_Series, int | None]],
    i: int,
    seconds: dict[_Series, int],
    after_clause: bool,
) -> int | None:
    """The depth of the sequence the marker starts (under the innermost open one), or ``None``."""
    opened = {series for series, _ in open_}
    for series, ordinal in found:
        if ordinal not in (None, 1) or series in opened:
            continue
        if after_clause or seconds.get(series, -1) > i:
            open_.append((series, ordinal))
            return len(open_)
    return None

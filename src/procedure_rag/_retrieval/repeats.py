"""Repeats: a result whose lines a better result already shows moves below the others.

Manuals repeat themselves: the same steps under each tab of a page (an Intune template,
a provisioning package, a custom profile), one include in several pages, a section copied
into two chapters. Several copies in one top ``k`` fill a reader's context with one text
and push out what the question also needs. A result at least :data:`REPEAT_SHARE` of whose
lines (its section-path line left out) one better-ranked result shows moves below the
candidates that are no repeat, in its order; it is not dropped, since nothing else may be
found. LangChain's ``EmbeddingsRedundantFilter`` drops near-duplicates by an embedding
threshold; lines of text are what a reader sees twice, and need no vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

__all__ = ["REPEAT_KEY", "REPEAT_SHARE", "demote_repeats", "shown_lines"]

T = TypeVar("T")

#: The result metadata key naming the better result a repeat repeats.
REPEAT_KEY = "repeat_of"
#: The share of a result's lines a better result must show for it to be a repeat.
REPEAT_SHARE = 0.6


def shown_lines(text: str, metadata: Mapping[str, object]) -> frozenset[str]:
    """The lines a chunk shows, space-normalised, without the section-path line it opens with."""
    lines = text.splitlines()
    body = lines[1:] if metadata.get("section") else lines
    return frozenset(" ".join(line.split()) for line in body if line.strip())


def demote_repeats(items: Sequence[T], lines_of: Callable[[T], frozenset[str]]) -> list[tuple[T, int | None]]:
    """``items`` (best first) with each repeat moved after the others, and which item it repeats.

    Returns:
        ``(item, index in items of the better item it repeats, or None)``, the items that
        repeat none first, in their order, then the repeats in theirs.
    """
    kept: list[tuple[T, int | None]] = []
    repeats: list[tuple[T, int | None]] = []
    shown: list[tuple[int, frozenset[str]]] = []
    for index, item in enumerate(items):
        lines = lines_of(item)
        source = next(
            (i for i, better in shown if lines and len(lines & better) >= REPEAT_SHARE * len(lines)), None
        )
        if source is None:
            kept.append((item, None))
        else:
            repeats.append((item, source))
        shown.append((index, lines))
    return kept + repeats

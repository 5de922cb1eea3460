"""Cutting: one line's text cut to the budget, and each piece given its share of the source.

A step or paragraph over budget is cut at sentence ends (:func:`split_text`), a
sentence longer than the budget at a space or, failing that, anywhere
(:func:`hard_split`). The pieces' source spans tile the element's span
(:func:`sub_spans`), so that every piece highlights its own sentences; table and code
rows map to their own source lines (:func:`source_lines`).
"""

from __future__ import annotations

import itertools
from typing import Protocol

from procedure_rag._chunking.lengths import Measure
from procedure_rag._language.lexicons import split_sentences
from procedure_rag._types import LayoutElement, Span

__all__ = ["SourceText", "hard_split", "source_lines", "split_text", "sub_spans"]


class SourceText(Protocol):
    """The text element spans point into, only ever sliced by span offsets.

    A ``str``, or a streaming reader's :class:`~procedure_rag._readers.text_window.TextWindow`.
    """

    def __getitem__(self, key: slice, /) -> str: ...

    def __len__(self) -> int: ...


def split_text(text: str, avail: int, m: Measure) -> list[str]:
    """Cut ``text`` into pieces of at most ``avail``: at sentence ends, then at spaces."""
    pieces: list[str] = []
    current = ""
    current_cost = 0
    for sentence in split_sentences(text):
        cost = avail + 1 if m.surely_over(sentence, avail) else m.length(sentence)
        if cost > avail:
            if current:
                pieces.append(current)
                current, current_cost = "", 0
            pieces.extend(hard_split(sentence, avail, m))
            continue
        if current and current_cost + cost > avail:
            pieces.append(current)
            current, current_cost = "", 0
        current += sentence
        current_cost += cost
    if current:
        pieces.append(current)
    return pieces


def hard_split(text: str, avail: int, m: Measure) -> list[str]:
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

    ``source`` is the element's own text (its span's slice), so the search never
    looks past the element.

    Line breaks and indentation in the source may sit between any two characters,
    since rendering joined wrapped lines.
    """
    words = head.split()
    if not words:
        return -1
    found = source.find(words[0][:12], start, end)  # usually the piece starts with a whole word
    if found >= 0 and len(words[0]) >= 6:
        return found
    chars = [ch for ch in head if not ch.isspace()][:20]
    spaced = _find_spaced(source, chars, start, end)
    return spaced if spaced >= 0 else found


def _find_spaced(source: str, chars: list[str], start: int, end: int) -> int:
    """Where ``chars`` first occur in ``source[start:end]`` with only whitespace between them, or -1.

    What a regular expression of the escaped characters joined by optional whitespace
    finds, without compiling a pattern for every piece (each piece's is new, so ``re``'s
    cache never held it: compiling was a tenth of splitting PDF loader pages).
    """
    if not chars:
        return start
    first, rest = chars[0], chars[1:]
    pos = source.find(first, start, end)
    while pos >= 0:
        i = pos + 1
        for ch in rest:
            while i < end and source[i].isspace():
                i += 1
            if i >= end or source[i] != ch:
                break
            i += 1
        else:
            return pos
        pos = source.find(first, pos + 1, end)
    return -1


def sub_spans(source: SourceText, span: Span | None, text: str, pieces: list[str]) -> list[Span | None]:
    """Share ``span`` among consecutive ``pieces`` of ``text``; the sub-spans tile the span.

    Each piece after the first starts where its first word occurs in the source
    (searched forward from the previous boundary), so a highlighted piece begins
    at its own sentence; when the word is not found (markup changed it), the
    boundary falls in proportion to the characters before it.
    """
    if span is None:
        return [None] * len(pieces)
    if len(pieces) < 2:
        return [span] * len(pieces)
    # The span's own text, searched with offsets relative to its start.
    own = source[span.start : span.end]
    bounds = [span.start]
    consumed = 0
    for piece in pieces[:-1]:
        consumed += len(piece)
        guess = span.start + (span.end - span.start) * consumed // max(len(text), 1)
        # The previous piece fills at least half its length of source (markup only adds),
        # so the search starts past it: its own first word must not be found again.
        floor = min(span.end, bounds[-1] + max(1, len(piece.strip()) // 2))
        found = _find_start(own, text[consumed : consumed + 40], floor - span.start, len(own))
        found = found + span.start if found >= 0 else -1
        bound = max(bounds[-1], found if found >= 0 else guess)
        # Each piece keeps at least one source character while the span has enough: a piece
        # with an empty span would make a chunk that covers nothing (and ids that collide).
        lo, hi = bounds[-1] + 1, span.end - (len(pieces) - len(bounds))
        bounds.append(min(max(bound, lo), hi) if lo <= hi else bound)
    bounds.append(span.end)
    return [Span(a, b) for a, b in itertools.pairwise(bounds)]


def source_lines(el: LayoutElement, source: SourceText) -> list[Span]:
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

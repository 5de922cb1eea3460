"""Section paths: which headings govern each element.

The reader's own hierarchy wins: a section header carries its level (from
Markdown ``#`` marks, a layout parser's depth, or a numbering pattern in plain
text). A heading closes every open heading of the same or a deeper level, so a
level jump (``###`` right after ``#``) and a reset (``#`` after ``###``) both come
out right.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from procedure_rag._types import ElementKind, LayoutElement

__all__ = ["iter_with_section_paths"]

_HEADINGS = (ElementKind.SECTION_HEADER, ElementKind.TITLE)


def iter_with_section_paths(elements: Iterable[LayoutElement]) -> Iterator[LayoutElement]:
    """Yield each element with ``section_path`` set from the headings before it.

    A heading's own path ends with itself. Elements that already carry a
    non-empty path (a reader that knows better) keep it.
    """
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()  # the stack's texts, rebuilt only when a heading changes it
    for el in elements:
        if el.kind in _HEADINGS and el.text:
            level = max(el.level, 1) if el.kind is ElementKind.SECTION_HEADER else 0
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, el.text))
            path = tuple(text for _, text in stack)
        if el.section_path:
            yield el
            continue
        yield el.with_section_path(path)

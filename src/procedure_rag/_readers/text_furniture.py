"""Running headers and footers of plain text extracted from pages.

A PDF loader (LangChain's ``PyPDFLoader``, LlamaIndex's PDF reader) gives one text per
page; joined by form feeds, the plain-text reader reads them as one text. A running
line, by the rules of :mod:`procedure_rag._readers.furniture_rules`, is one of the
first or the last two non-blank lines of a page whose shape (digits as ``#``) is at the
same edge of more than half of the pages with text, and of two at least
(``12/1/26, 10:00 AM Title`` and ``file:///… 3/5`` printed by a browser, ``HoloLens
operations guide`` over every page, ``6Exastro`` where pypdf glued the page number to
the header). Guards:

* a shape seen in the middle of pages too (a table's header row repeated on each page,
  "Back to top" closing every section) is not running;
* a second line from the edge is running only when the line nearer the edge is
  furniture too;
* a shape of fewer than three characters besides its digits is running only when it
  is a page number (``- # -``);
* a page keeps one line at least (a short page's only body line may look like one).

A running line that prints one number (``Exastro 12``, ``－ 12 －``) gives its page's
printed number. Contents lines are found by :mod:`procedure_rag._readers.text_contents`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from procedure_rag._readers.furniture_rules import printed_number, shape, single_number
from procedure_rag._types import ElementKind

__all__ = ["RunningLines", "TextLine", "find_running_lines"]

#: ``(body offset, end offset)`` of a non-blank line.
TextLine = tuple[int, int]

_EDGE = 2  # lines from a page's top and from its bottom where running lines are
_AWAY = 0.1  # a running shape is seen away from the edges at most this share of its pages
_MIN_CHARS = 3  # characters besides digits a running line needs, unless it is a page number
_MAX_LINE = 300  # longer lines are never furniture (and are not shaped)


@dataclass(frozen=True, slots=True)
class RunningLines:
    """What :func:`find_running_lines` found.

    Attributes:
        kinds: Body offset of each running line -> ``PAGE_HEADER`` or ``PAGE_FOOTER``.
        printed: Page index -> the number a running line prints on it.
    """

    kinds: dict[int, ElementKind] = field(default_factory=dict)
    printed: dict[int, int] = field(default_factory=dict)


def find_running_lines(
    text: str,
    pages: Sequence[Sequence[TextLine]],
    known: Mapping[int, ElementKind],
    batch: frozenset[tuple[str, str]] = frozenset(),
) -> RunningLines:
    """Find the running headers and footers of pages of text (see the module docstring).

    Args:
        text: The whole text.
        pages: Each page's non-blank lines, in order.
        known: Furniture found before (page-number footers): it counts as furniture at an
            edge, and its page keeps the number it printed.
        batch: ``(edge, shape)`` of running lines other documents of the same input showed:
            running here at that edge whatever their count (a one-page document's header).
    """
    shapes = [[shape(text[b:e]) if e - b <= _MAX_LINE else "" for b, e in lines] for lines in pages]
    edges: Counter[tuple[str, str]] = Counter()
    middle: Counter[str] = Counter()
    for page in shapes:
        n = len(page)
        seen = {("top", s) for s in page[:_EDGE]} | {("bottom", s) for s in page[max(0, n - _EDGE) :]}
        edges.update(key for key in seen if key[1])
        middle.update(page[_EDGE : n - _EDGE])
    with_text = sum(1 for lines in pages if lines)

    def running(where: str, s: str) -> bool:
        if (where, s) in batch:
            return True
        count = edges[(where, s)]
        return bool(s) and count >= 2 and 2 * count > with_text and middle[s] <= _AWAY * count

    found = RunningLines()
    for index, (lines, page) in enumerate(zip(pages, shapes, strict=True)):
        numbered = any(body in known for body, _ in lines)
        left = sum(1 for body, _ in lines if body not in known)  # a page keeps a line of its own
        for where, indexes in _edges(len(lines)):
            for i in indexes:
                body, end = lines[i]
                if body in known or body in found.kinds:
                    continue
                if left <= 1:
                    break
                line = text[body:end]
                number = printed_number(line)
                if not running(where, page[i]) or (
                    number is None and len(page[i].replace("#", "")) < _MIN_CHARS
                ):
                    break
                found.kinds[body] = ElementKind.PAGE_HEADER if where == "top" else ElementKind.PAGE_FOOTER
                left -= 1
                number = number if number is not None else single_number(line)
                if number is not None and not numbered:
                    found.printed.setdefault(index, number)
    return found


def _edges(n: int) -> tuple[tuple[str, range], tuple[str, range]]:
    """The indexes of a page's top and bottom lines, each from the edge inwards."""
    return ("top", range(min(_EDGE, n))), ("bottom", range(n - 1, max(-1, n - 1 - _EDGE), -1))

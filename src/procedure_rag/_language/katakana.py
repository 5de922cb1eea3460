"""Known words inside a katakana compound the dictionary does not know.

Sudachi reads a run of katakana it does not know as one word, and takes the known words
beside it along: 「プロビジョニングパッケージ」 is one word, while the same compound
written with a space, 「プロビジョニング パッケージ」, is two. Manuals and the questions
about them write such compounds both ways (a translation spaces them, the page does not),
so the lexical index also keeps the known words found at either end of an unknown
compound, longest first, and what is left between them: the two spellings then share
their words. Every part is four characters or more: 「テッド」 in 「コネクテッド」 and
「プロ」 before 「ビジョニング」 are no words of those compounds.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["KATAKANA_COMPOUND", "katakana_parts"]

#: A katakana run long enough to hold two words of four characters or more.
KATAKANA_COMPOUND = re.compile(r"[\u30a1-\u30fa\u30fc]{8,}")
_MIN_PART = 4  # characters of a known word taken off a compound


def katakana_parts(word: str, known: Callable[[str], str | None]) -> tuple[str, ...]:
    """The words inside the unknown katakana compound ``word``, or ``()`` when none is known.

    Args:
        word: The compound, as the analyser gave it.
        known: The normalised form of a text the dictionary has as one word, else ``None``.

    Returns:
        The known words taken off its start, what is left between them, and the known
        words taken off its end, in reading order; every part is four characters or more.
    """
    head: list[str] = []
    tail: list[str] = []
    rest = word
    found = True
    while found and len(rest) >= _MIN_PART:
        found = False
        # Longest first; what is left is nothing or a word-sized piece, never a fragment.
        for n in range(len(rest), _MIN_PART - 1, -1):
            if 0 < len(rest) - n < _MIN_PART:
                continue
            if (form := known(rest[:n])) is not None:
                head.append(form)
                rest, found = rest[n:], True
                break
            if (form := known(rest[-n:])) is not None:
                tail.insert(0, form)
                rest, found = rest[:-n], True
                break
    if not head and not tail:
        return ()
    return (*head, *([rest] if rest else []), *tail)

"""Where sentences end: after 。．！？ and .!? that are not an abbreviation, outside brackets.

The words are data, both languages side by side: a period after ``e.g``, ``Fig``,
``No`` (before a number) or ``例`` does not end a sentence; after ``etc`` or ``Inc``
it ends one only when a capital letter follows, and no Latin sentence starts with a
lower-case word. A mark inside a pair of brackets or Japanese quotes
(``(see Fig. 3.)``, 「保存しました。」) or a code span ends nothing either.
"""

from __future__ import annotations

import re
from bisect import bisect_right

__all__ = ["ABBREVIATIONS", "BRACKETS", "split_sentences"]

# Where a sentence may end: found first, then the cut is placed.
_END_MARK = re.compile(r"[。．！？]|[.!?](?:\*\*|__)?[)\]\"'”’]?(?=\s)")

#: Text right before a period that makes it no sentence end, with what must follow the
#: period for that to hold (``None``: anything). Matched against the text up to the period.
ABBREVIATIONS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...] = (
    (re.compile(r"(?:^|[\s(（\[])(?:e\.g|i\.e|cf|vs|approx|fig|figs|eq|mr|mrs|ms|dr|incl|esp)$", re.I), None),
    # Before a number only: "No. 3", "p. 12", "Ver. 2" (a "No." button ends a sentence).
    (re.compile(r"(?:^|[\s(（\[])(?:no|nos|p|pp|vol|ver|ch|sec|art|tab)$", re.I), re.compile(r"\s?\d")),
    # "etc." and company suffixes end a sentence when the next one starts.
    (re.compile(r"(?:^|[\s(（\[])(?:etc|inc|ltd|co|corp)$", re.I), re.compile(r"\s+[^\sA-Z]")),
    (re.compile(r"(?:^|[\s、。])例$"), None),  # 例. …
)

# A Latin sentence does not start with a lower-case word.
_LOWER_NEXT = re.compile(r"\s+[a-z]")

#: Pairs of brackets and quotes whose inside holds no sentence end.
BRACKETS = {")": "(", "）": "（", "]": "[", "」": "「", "』": "『", "】": "【", "”": "“"}
_OPENERS = frozenset(BRACKETS.values())
_OPENS = re.compile("[" + re.escape("".join(_OPENERS)) + "`]")
_PAIR_CHARS = re.compile("[" + re.escape("".join(BRACKETS) + "".join(_OPENERS)) + "`\n]")
# A pair further apart than this is not one (a stray bracket must not swallow a page).
_MAX_PAIR = 400


def _inside_pairs(text: str) -> tuple[list[int], list[int]]:
    """Start and end offsets of the matched bracket pairs of ``text``, outermost only, in order."""
    stack: list[tuple[str, int]] = []
    pairs: list[tuple[int, int]] = []
    tick = -1  # an open code span (`…`): no sentence ends inside code
    for m in _PAIR_CHARS.finditer(text):
        i, ch = m.start(), m.group()
        if ch == "`":
            if tick >= 0:
                pairs.append((tick, i))
                tick = -1
            else:
                tick = i
        elif ch in _OPENERS:
            stack.append((ch, i))
        elif ch in BRACKETS and stack:
            # Close the nearest matching opener; openers above it were strays.
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth][0] == BRACKETS[ch]:
                    start = stack[depth][1]
                    del stack[depth:]
                    if i - start <= _MAX_PAIR:
                        pairs.append((start, i))
                    break
        elif ch == "\n":
            stack.clear()  # a pair does not run over a line break
            tick = -1
    pairs.sort()
    starts: list[int] = []
    ends: list[int] = []
    for start, end in pairs:
        if ends and start < ends[-1]:
            continue  # nested in the previous pair
        starts.append(start)
        ends.append(end)
    return starts, ends


def _abbreviation(text: str, period: int) -> bool:
    """Whether the period at ``period`` closes an abbreviation rather than a sentence."""
    before = text[max(0, period - 12) : period]
    for pattern, follows in ABBREVIATIONS:
        if pattern.search(before) and (follows is None or follows.match(text, period + 1)):
            return True
    return False


def split_sentences(text: str) -> list[str]:
    """Split ``text`` after 。．！？ and after .!? followed by whitespace (see the module docstring).

    The pieces concatenate back to ``text`` exactly.
    """
    marks = list(_END_MARK.finditer(text))
    if not marks:
        return [text]
    starts, ends = _inside_pairs(text) if _OPENS.search(text) else ([], [])
    pieces: list[str] = []
    start = 0
    for match in marks:
        at = match.start()
        i = bisect_right(starts, at) - 1
        if i >= 0 and at < ends[i]:
            continue
        if text[at] == "." and _abbreviation(text, at):
            continue
        if text[at] in ".!?" and _LOWER_NEXT.match(text, match.end()):
            continue  # "… **Create a database?** option to Yes": the sentence goes on
        end = match.end()
        if end > start:
            pieces.append(text[start:end])
            start = end
    if start < len(text):
        pieces.append(text[start:])
    return pieces or [text]

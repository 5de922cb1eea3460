"""Word lists as regular-expression alternations that Python's ``re`` tries quickly.

``re`` tries the branches of ``(?:select|click|tap|…)`` one after another at every
position it tests; under ``re.IGNORECASE`` it cannot even skip a branch by its first
letter. Grouped by that letter, ``(?:s(?:elect)|c(?:lick)|t(?:ap)|…)``, one comparison
rules out all the words of every other letter. The grouped form matches what the plain
one matches, at the same place and with the same length: words of different first
letters never match the same text, and within a letter the words keep their order,
so the first word that matches is the same word.
"""

from __future__ import annotations

__all__ = ["by_first_letter", "split_alternatives"]


def split_alternatives(pattern: str) -> list[str]:
    """The top-level branches of ``pattern`` (``|`` outside groups, classes and escapes)."""
    branches: list[str] = []
    depth = 0
    in_class = False
    start = 0
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern.startswith(("[]", "[^]"), i):  # a "]" first in a class is a character
                i += 2 if pattern[i + 1] == "]" else 3
                continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            branches.append(pattern[start:i])
            start = i + 1
        i += 1
    branches.append(pattern[start:])
    return branches


def by_first_letter(words: str) -> str:
    """``words`` (``"select|click|…"``) as a group whose branches are grouped by first letter.

    Only when every branch opens with a letter or digit that no quantifier follows, an
    ASCII one or one without case (kana, kanji); otherwise ``words`` comes back in a
    plain group, unchanged.
    """
    branches = split_alternatives(words)
    if not all(_groupable(b) for b in branches):
        return f"(?:{words})"
    groups: dict[str, list[str]] = {}
    for branch in branches:
        groups.setdefault(branch[0].lower(), []).append(branch)
    parts = []
    for rest in groups.values():
        first = rest[0][0]
        if len(rest) == 1:
            parts.append(rest[0])
        elif all(b[0] == first for b in rest):
            parts.append(f"{first}(?:{'|'.join(b[1:] for b in rest)})")
        else:  # the same letter in two cases: leave the words whole, in their order
            parts.append(f"(?:{'|'.join(rest)})")
    return f"(?:{'|'.join(parts)})"


def _groupable(branch: str) -> bool:
    first = branch[:1]
    if not first.isalnum() or branch[1:2] in ("?", "*", "+", "{"):
        return False
    # A cased letter beyond ASCII may fold to another first letter under re.IGNORECASE.
    return first.isascii() or first.lower() == first.upper()

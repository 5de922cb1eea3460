"""Text repairs for what PDFs do to text: look-alike glyphs, letter spacing, wrapped lines.

* **Look-alike glyphs.** PDFs printed from browsers and some office programs map
  CJK characters to Kangxi radicals or compatibility ideographs (``⽤`` U+2F64 for
  ``用``, ``⼀`` for ``一``) and Latin ligatures to one glyph (``ﬁ``). Those
  characters, and only those, get NFKC; full-width letters and circled numbers
  (``①``, a step marker) stay as printed.
* **Letter spacing.** Justified Japanese lines come out with a space between every
  character (「ア ン ダ ー バ ー」); three or more Japanese characters each standing
  alone between spaces are joined. A space between two words (「アプリ ストア」) stays.
* **Wrapped lines.** A paragraph's lines are joined without a space where either
  side is Japanese, with one in other scripts, and a word hyphenated at the line
  end (``config-`` / ``uration``) is put back together.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

__all__ = ["fix_line", "join_wrapped", "same_length_lookalikes", "with_plain_bullet", "wrap_joint"]

# Kangxi radicals, CJK radicals supplement, compatibility ideographs (and their
# supplement), alphabetic presentation forms (ligatures ﬁ ﬂ ﬀ …).
_LOOKALIKE = re.compile("[\u2e80-\u2fdf\uf900-\ufaff\ufb00-\ufb06\U0002f800-\U0002fa1f]")
_CJK = (
    "\u3000-\u303f"  # CJK punctuation
    "\u3040-\u30ff"  # hiragana, katakana
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"  # full-width punctuation
    "\uff66-\uff9f"  # half-width katakana
)
# Three or more Japanese characters, each alone between single spaces: letter spacing.
_SPACED = re.compile(f"(?<![^ ])[{_CJK}](?: [{_CJK}](?![^ ])){{2,}}")
_CJK_END = re.compile(f"[{_CJK}]$")
_CJK_START = re.compile(f"^[{_CJK}]")
_HYPHENATED = re.compile(r"[a-z]{2}-$")
# A word that goes on with another hyphen, a dot, an underscore or a slash is a name
# (``dash-`` / ``html-components``, a package), not a hyphenated word: its hyphen stays.
_NAME_GOES_ON = re.compile(r"^[a-z]+[-_./]")
# A path or an address cut after a slash (``/home/`` / ``user/…``) goes on with no space.
_PATH_CUT = re.compile(r"\w/$")


def fix_line(text: str) -> str:
    """A line's text, look-alike glyphs mapped and letter spacing between Japanese characters removed."""
    if _LOOKALIKE.search(text):
        text = _LOOKALIKE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    if " " in text:
        text = _SPACED.sub(lambda m: m.group().replace(" ", ""), text)
    return text


@cache
def _one_for_one() -> dict[int, str]:
    """Look-alike glyphs whose NFKC form is one character, as a translation table."""
    ranges = ((0x2E80, 0x2FDF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
    table: dict[int, str] = {}
    for low, high in ranges:
        for code in range(low, high + 1):
            mapped = unicodedata.normalize("NFKC", chr(code))
            if len(mapped) == 1 and mapped != chr(code):
                table[code] = mapped
    return table


def same_length_lookalikes(text: str) -> str:
    """``text`` with look-alike CJK glyphs (``⽤``) written as the characters they stand for.

    Each is replaced by one character, so offsets into ``text`` stay valid: for text
    another tool extracted from a PDF (a loader's page), whose spans the caller keeps.
    """
    if not _LOOKALIKE.search(text):
        return text
    # Replaced where found: ``str.translate`` with a table looks up every character (they are
    # a few in a page; translating whole pages took 4% of splitting loader pages).
    table = _one_for_one()
    return _LOOKALIKE.sub(lambda m: table.get(ord(m.group()), m.group()), text)


def join_wrapped(first: str, second: str) -> str:
    """``first`` and the line it wraps into, joined as the script wants."""
    if not first:
        return second
    if not second:
        return first
    drop, joint = wrap_joint(first, second)
    return first[: len(first) - drop] + joint + second


def wrap_joint(first: str, second: str) -> tuple[int, str]:
    """How to join a wrapped line to the next: characters to drop from ``first``'s end, and what goes between.

    Nothing between where either side is Japanese; a hyphen at the end of a word
    dropped when the next line goes on in lower case (a hyphenated word), kept with
    nothing between when that goes on as a name (``dash-`` / ``html-components``);
    nothing after a slash that cuts a path; one space otherwise.
    """
    if _CJK_END.search(first) or _CJK_START.match(second):
        return 0, ""
    if _HYPHENATED.search(first) and second[:1].islower():
        return (0, "") if _NAME_GOES_ON.match(second) else (1, "")
    if _PATH_CUT.search(first) and second[:1].isalnum():
        return 0, ""
    return 0, " "


# Bullet glyphs PDFs draw (symbol fonts map them to private-use code points).
_BULLETS = re.compile("^(?:[\ue000-\uf8ff]|[⚫◼◻▸►▶➢➤✓✔❖•–◦‣⁃∙])[ \t\u3000]*(?=\\S)")


def with_plain_bullet(text: str) -> str:
    """``text`` with a leading bullet glyph written as ``•``, the bullet the step rules know."""
    m = _BULLETS.match(text)
    if m is None or m.group().startswith("•"):
        return text
    return "• " + text[m.end() :]

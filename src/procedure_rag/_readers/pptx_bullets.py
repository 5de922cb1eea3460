"""The bullet or number PowerPoint shows before a paragraph, from DrawingML's list styles.

A paragraph of a text body has a level (``a:pPr lvl``, 0 to 8) and a bullet: none
(``a:buNone``), a character (``a:buChar``), a picture (``a:buBlip``) or an automatic
number (``a:buAutoNum type="arabicPeriod" startAt="3"``). A paragraph that sets none
takes the bullet of its level from the first list style that sets one: the shape's own
``a:lstStyle``, then the placeholder it fills on the slide layout, then that
placeholder on the slide master, then the master's text style for its kind
(``p:titleStyle``, ``p:bodyStyle``, ``p:otherStyle``); the caller gives that chain.

Automatic numbers count as PowerPoint counts them, within one text body: numbered
paragraphs of one level with the same scheme and start value go on one sequence,
which starts at ``startAt`` (1 by default); a deeper paragraph leaves it as it is, a
shallower one or one of the same level numbered otherwise (or not at all) ends it.
Empty paragraphs show no bullet and are not counted. A number is written in its
scheme (``ST_TextAutonumberScheme``): ``arabicPeriod`` ``1.``, ``alphaLcParenR``
``a)``, ``romanUcPeriod`` ``I.``, ``arabicParenBoth`` ``(1)``, ``arabicDbPeriod``
``１．``, ``circleNumDbPlain`` ``①``, ``ea1JpnChsDbPeriod`` ``一．``…
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from xml.etree import ElementTree as ET

from procedure_rag._readers.docx_numbering import format_number

__all__ = [
    "NO_BULLET",
    "A",
    "AutoNumbers",
    "Bullet",
    "ListStyle",
    "bullet_of",
    "format_autonumber",
    "list_style",
    "resolve",
]

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_LEVEL_TAG = re.compile(r"lvl([1-9])pPr")
#: Fonts whose characters are pictures (PowerPoint's bullets ``§``, ``Ø``, ``ü`` in Wingdings).
_SYMBOL_FONTS = ("wingdings", "webdings", "symbol", "marlett", "starsymbol", "opensymbol")
#: What a symbol font's character shows, by its code in the font (private-use or Latin-1).
_SYMBOL_GLYPHS: Mapping[int, str] = {
    0xA7: "▪", 0xD8: "➢", 0xFC: "✓", 0x6C: "●", 0x6E: "■", 0x71: "❑", 0x76: "❖", 0xB7: "•", 0xE0: "➢",
}  # fmt: skip
#: ``ST_TextAutonumberScheme`` name starts, in order, and the number format they write.
_SCHEME_FORMATS = (
    ("alphaLc", "lowerLetter"),
    ("alphaUc", "upperLetter"),
    ("romanLc", "lowerRoman"),
    ("romanUc", "upperRoman"),
    ("arabicDb", "decimalFullWidth"),
    ("circleNumWdBlack", "blackCircle"),
    ("circleNum", "circle"),
    ("ea1Jpn", "ideographDigital"),
    ("ea1", "japaneseCounting"),
)
#: Scheme name ends and the text around the number.
_SCHEME_TEXTS = (
    ("DbPeriod", "{}．"),
    ("ParenBoth", "({})"),
    ("ParenR", "{})"),
    ("Period", "{}."),
    ("Minus", "{}-"),
)
#: Circled numbers the schemes show, 1 to 10, then plain digits (ECMA-376 21.1.2.1.32).
_CIRCLED = 10


@dataclass(frozen=True, slots=True)
class Bullet:
    """A paragraph's bullet.

    Attributes:
        kind: ``"none"``, ``"char"`` (a character or a picture), or ``"number"``.
        char: The character shown, for ``"char"``.
        scheme: The numbering scheme, for ``"number"`` (``"arabicPeriod"``).
        start: The first number of a sequence, for ``"number"``.
    """

    kind: str
    char: str = ""
    scheme: str = ""
    start: int = 1


NO_BULLET = Bullet("none")
#: Bullets of a list style by level (0 to 8), for the levels it sets one.
ListStyle = Mapping[int, Bullet]


def _glyph(char: str, font: str) -> str:
    if not char:
        return "•"
    if font.lower().startswith(_SYMBOL_FONTS):
        code = ord(char[0])
        return _SYMBOL_GLYPHS.get(code - 0xF000 if code >= 0xF000 else code, "•")
    return char[0]


def _start(value: str | None) -> int:
    return int(value) if value and value.isdecimal() and 0 < int(value) < 32768 else 1


def bullet_of(ppr: ET.Element | None) -> Bullet | None:
    """The bullet a paragraph's properties (``a:pPr``, ``a:lvl2pPr``) set; ``None`` when they inherit it."""
    if ppr is None:
        return None
    font = next((child.get("typeface", "") for child in ppr if child.tag == f"{A}buFont"), "")
    for child in ppr:
        if child.tag == f"{A}buNone":
            return NO_BULLET
        if child.tag == f"{A}buAutoNum":
            return Bullet(
                "number", scheme=child.get("type", "arabicPeriod"), start=_start(child.get("startAt"))
            )
        if child.tag == f"{A}buChar":
            return Bullet("char", char=_glyph(child.get("char", ""), font))
        if child.tag == f"{A}buBlip":
            return Bullet("char", char="•")
    return None


def list_style(element: ET.Element | None) -> dict[int, Bullet]:
    """The bullets a list style (``a:lstStyle``, ``p:bodyStyle``…) sets, by level."""
    out: dict[int, Bullet] = {}
    for child in element if element is not None else ():
        match = _LEVEL_TAG.fullmatch(child.tag.rpartition("}")[2])
        bullet = bullet_of(child) if match else None
        if match and bullet is not None:
            out[int(match.group(1)) - 1] = bullet
    return out


def resolve(ppr: ET.Element | None, level: int, chain: Sequence[ListStyle]) -> Bullet:
    """A paragraph's bullet: its own, else its level's in the first style of ``chain`` that sets one."""
    own = bullet_of(ppr)
    if own is not None:
        return own
    return next((style[level] for style in chain if level in style), NO_BULLET)


def format_autonumber(value: int, scheme: str) -> str:
    """``value`` as the automatic-numbering ``scheme`` shows it (``3, "romanLcParenBoth"`` -> ``(iii)``).

    An unknown scheme (Thai, Hindi, the bidirectional ones) writes digits with the
    scheme's punctuation.
    """
    fmt = next((f for prefix, f in _SCHEME_FORMATS if scheme.startswith(prefix)), "decimal")
    text = next((t for suffix, t in _SCHEME_TEXTS if scheme.endswith(suffix)), "{}")
    if fmt in ("circle", "blackCircle"):
        base = 0x2460 if fmt == "circle" else 0x2776
        number = chr(base + value - 1) if 1 <= value <= _CIRCLED else str(value)
    else:
        number = format_number(value, fmt)
    return text.format(number)


@dataclass
class AutoNumbers:
    """The number sequences open in one text body, by level (see the module docstring)."""

    runs: dict[int, tuple[str, int, int]] = field(default_factory=dict)  # level -> scheme, start, value

    def marker(self, level: int, bullet: Bullet) -> str:
        """What a (non-empty) paragraph of ``level`` shows before its text: ``""`` for no bullet."""
        for deeper in [key for key in self.runs if key > level]:
            del self.runs[deeper]
        if bullet.kind != "number":
            self.runs.pop(level, None)
            return bullet.char
        run = self.runs.get(level)
        same = run is not None and run[:2] == (bullet.scheme, bullet.start)
        value = run[2] + 1 if run is not None and same else bullet.start
        self.runs[level] = (bullet.scheme, bullet.start, value)
        return format_autonumber(value, bullet.scheme)

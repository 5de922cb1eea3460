"""Word's automatic numbering, rendered as Word shows it, from ``word/numbering.xml``.

A numbered paragraph names a list instance (``numId``) and a level (``ilvl``). The
instance points to an abstract definition whose levels give the number format
(``numFmt``: ``decimal``, ``decimalEnclosedCircle`` ①, ``aiueoFullWidth`` ア, ``iroha``,
``upperRoman``…), the text around the numbers (``lvlText``: ``"%1."``, ``"第%1章"``,
``"%1.%2"``) and the start value. Instances of one abstract definition continue one
sequence, as Word counts them, unless an instance overrides a level's start
(``startOverride``), which restarts that level the first time the instance is used.
Using a level restarts every deeper level.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from xml.etree import ElementTree as ET

__all__ = ["Level", "Numbering", "format_number"]

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_PLACEHOLDER = re.compile(r"%([1-9])")
_AIUEO = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン"
_IROHA = "イロハニホヘトチリヌルヲワカヨタレソツネナラムウヰノオクヤマケフコエテアサキユメミシヱヒモセス"
_KANJI_DIGITS = "〇一二三四五六七八九"
_ROMAN = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)  # fmt: skip
#: Most list levels Word defines (``ilvl`` 0 to 8).
MAX_LEVELS = 9


def _roman(n: int) -> str:
    out = []
    for value, letters in _ROMAN:
        count, n = divmod(n, value)
        out.append(letters * count)
    return "".join(out)


def _letter(n: int) -> str:
    # Word repeats the letter past z: aa, bb...
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def _cycle(alphabet: str) -> Callable[[int], str]:
    return lambda n: alphabet[(n - 1) % len(alphabet)]


def _circled(n: int) -> str:
    if 1 <= n <= 20:
        return chr(0x2460 + n - 1)
    if 21 <= n <= 35:
        return chr(0x3251 + n - 21)
    if 36 <= n <= 50:
        return chr(0x32B1 + n - 36)
    return str(n)  # Word falls back to plain digits too


def _full_width(n: int) -> str:
    return "".join(chr(ord(d) - ord("0") + ord("０")) for d in str(n))


def _kanji_digits(n: int) -> str:
    return "".join(_KANJI_DIGITS[int(d)] for d in str(n))


def _kanji_counting(n: int) -> str:
    """一, 十, 二十三, 百五: the counting form (up to 9999)."""
    if n <= 0 or n > 9999:
        return str(n)
    out = []
    for value, unit in ((1000, "千"), (100, "百"), (10, "十")):
        count, n = divmod(n, value)
        if count:
            out.append(("" if count == 1 else _KANJI_DIGITS[count]) + unit)
    if n:
        out.append(_KANJI_DIGITS[n])
    return "".join(out)


_FORMATS: Mapping[str, Callable[[int], str]] = {
    "decimal": str,
    "decimalZero": lambda n: f"{n:02d}",
    "decimalHalfWidth": str,
    "decimalFullWidth": _full_width,
    "decimalFullWidth2": _full_width,
    "decimalEnclosedCircle": _circled,
    "decimalEnclosedCircleChinese": _circled,
    "decimalEnclosedParen": lambda n: chr(0x2474 + n - 1) if 1 <= n <= 20 else f"({n})",
    "decimalEnclosedFullstop": lambda n: chr(0x2488 + n - 1) if 1 <= n <= 20 else f"{n}.",
    "lowerLetter": _letter,
    "upperLetter": lambda n: _letter(n).upper(),
    "lowerRoman": lambda n: _roman(n).lower(),
    "upperRoman": _roman,
    "aiueo": _cycle(_AIUEO),
    "aiueoFullWidth": _cycle(_AIUEO),
    "iroha": _cycle(_IROHA),
    "irohaFullWidth": _cycle(_IROHA),
    "ideographDigital": _kanji_digits,
    "japaneseDigitalTenThousand": _kanji_digits,
    "japaneseCounting": _kanji_counting,
    "chineseCounting": _kanji_counting,
    "chineseCountingThousand": _kanji_counting,
    "ideographTraditional": _cycle("甲乙丙丁戊己庚辛壬癸"),
    "none": lambda _: "",
}


def format_number(value: int, fmt: str) -> str:
    """``value`` written in Word's number format ``fmt`` (an unknown format: plain digits)."""
    return _FORMATS.get(fmt, str)(value)


@dataclass(frozen=True, slots=True)
class Level:
    """One level of a list definition: its number format, its text (``"%1."``) and its start value."""

    fmt: str = "decimal"
    text: str = "%1."
    start: int = 1
    legal: bool = False  # isLgl: the numbers of higher levels in decimal

    @property
    def ordered(self) -> bool:
        return self.fmt != "bullet"


@dataclass
class Numbering:
    """The list definitions of a document and the counters of the lists read so far."""

    abstract: dict[str, dict[int, Level]] = field(default_factory=dict)
    instances: dict[str, tuple[str, dict[int, int], dict[int, Level]]] = field(default_factory=dict)
    counters: dict[str, list[int | None]] = field(default_factory=dict)
    started: set[str] = field(default_factory=set)

    @classmethod
    def parse(cls, root: ET.Element | None) -> Numbering:
        """Read ``numbering.xml``'s root (``None`` when the document has no numbering)."""
        out = cls()
        if root is None:
            return out
        for definition in root.iter(f"{W}abstractNum"):
            out.abstract[definition.get(f"{W}abstractNumId", "")] = _levels(definition)
        for num in root.iter(f"{W}num"):
            ref = num.find(f"{W}abstractNumId")
            starts: dict[int, int] = {}
            levels: dict[int, Level] = {}
            for override in num.iter(f"{W}lvlOverride"):
                ilvl = _int(override.get(f"{W}ilvl"), 0)
                start = override.find(f"{W}startOverride")
                if start is not None:
                    starts[ilvl] = _int(start.get(f"{W}val"), 1)
                lvl = override.find(f"{W}lvl")
                if lvl is not None:
                    levels[ilvl] = _level(lvl)
            abstract_id = ref.get(f"{W}val", "") if ref is not None else ""
            out.instances[num.get(f"{W}numId", "")] = (abstract_id, starts, levels)
        return out

    def level(self, num_id: str, ilvl: int) -> Level | None:
        """The level ``ilvl`` of list instance ``num_id``, or ``None`` for no numbering (``numId`` 0)."""
        instance = self.instances.get(num_id)
        if instance is None:
            return None
        abstract_id, _, overrides = instance
        return overrides.get(ilvl) or self.abstract.get(abstract_id, {}).get(ilvl)

    def next_marker(self, num_id: str, ilvl: int) -> tuple[str, Level] | None:
        """Count one more paragraph of ``num_id`` at ``ilvl``; its marker as shown, and its level."""
        ilvl = min(max(ilvl, 0), MAX_LEVELS - 1)
        level = self.level(num_id, ilvl)
        if level is None:
            return None
        abstract_id, starts, _ = self.instances[num_id]
        counters = self.counters.setdefault(abstract_id, [None] * MAX_LEVELS)
        if num_id not in self.started:
            self.started.add(num_id)
            for at, start in starts.items():
                if 0 <= at < MAX_LEVELS:
                    counters[at] = start - 1
        current = counters[ilvl]
        counters[ilvl] = level.start if current is None else current + 1
        for deeper in range(ilvl + 1, MAX_LEVELS):
            counters[deeper] = None
        return self._render(num_id, level, counters), level

    def _render(self, num_id: str, level: Level, counters: list[int | None]) -> str:
        def number(match: re.Match[str]) -> str:
            at = int(match.group(1)) - 1
            shown = self.level(num_id, at) or Level()
            value = counters[at]
            value = shown.start if value is None else value
            return str(value) if level.legal and shown.ordered else format_number(value, shown.fmt)

        if not level.ordered:
            return level.text.strip()
        return _PLACEHOLDER.sub(number, level.text).strip()


def _levels(definition: ET.Element) -> dict[int, Level]:
    return {_int(lvl.get(f"{W}ilvl"), 0): _level(lvl) for lvl in definition.findall(f"{W}lvl")}


def _level(lvl: ET.Element) -> Level:
    def val(tag: str) -> str | None:
        child = lvl.find(f"{W}{tag}")
        return child.get(f"{W}val") if child is not None else None

    legal = lvl.find(f"{W}isLgl")
    return Level(
        fmt=val("numFmt") or "decimal",
        text=val("lvlText") or "",
        start=_int(val("start"), 1),
        legal=legal is not None and legal.get(f"{W}val", "1") not in ("0", "false"),
    )


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default

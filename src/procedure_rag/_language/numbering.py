"""Step markers and heading numbers, as data.

A step number is kept as the string the author wrote (``"1."``, ``"①"``,
``"（１）"``, ``"手順3"``); the patterns below find where a marker ends, and
:func:`step_number` gives the number a reader names and a filter compares: the
marker without its trailing punctuation or its step word (``"1."`` → ``"1"``,
``"手順３："`` → ``"3"``), brackets kept when they enclose it (``"（１）"`` → ``"(1)"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "BULLET_MARKERS",
    "DEFAULT_HEADING_STYLES",
    "DEFAULT_STEP_STYLES",
    "FULLWIDTH_DIGITS",
    "LOST_NUMBER_ENDS",
    "ROMAN_VALUES",
    "UNMAPPED_GLYPH",
    "HeadingStyle",
    "StepMarker",
    "StepStyle",
    "marker_core",
    "marker_ordinal",
    "marker_shape",
    "match_heading_number",
    "match_step_marker",
    "step_number",
]

_DIGITS = "0-9０-９"
_ROMAN = r"(?:i{1,3}|iv|v|vi{1,3}|ix|x|xi{1,2})"
_CIRCLED = "\u2460-\u2473\u2776-\u277f\u24eb-\u24f4"  # ①-⑳ ❶-❿ ⓫-⓴
# After a marker: ASCII or ideographic space, or (for full-width markers) text.
_GAP = r"(?:[ \t\u3000]+|(?=[^\s]))"
_KANA_KANJI = "\u3040-\u30ff\u3400-\u9fff"
_KATAKANA_KANJI = "\u30a0-\u30ff\u3400-\u9fff"  # no hiragana: what particles are written in
# After a circled number, what makes it a reference to items rather than a step: another
# circled number after a range or list mark (「①～⑥」, 「④、⑤」, 「①と②」), or a particle
# before a word (「②で非表示中の…」, 「①のメニュー」).
_CIRCLED_RANGE = rf"[～〜~\-－、,・と][ \t\u3000]*[{_CIRCLED}]"
_CIRCLED_NAMED = rf"[でをのがに](?=[{_KATAKANA_KANJI}「『\[])"
# After "1.": a space, or, in Japanese text, the step's first word ("1.設定を開く", "5.SAVEボタンを押す");
# never a Latin word alone ("3.Net", "1.5 GB") nor a particle ("1.で設定した": step 1 named).
_DOTTED_GAP = rf"(?:[ \t\u3000]+|(?=[{_KATAKANA_KANJI}]|[A-Za-z][A-Za-z0-9_-]*[ \u3000]?[{_KANA_KANJI}]))"


@dataclass(frozen=True, slots=True)
class StepStyle:
    """One way of numbering steps.

    Attributes:
        name: Short name used in tests and error messages.
        pattern: Regex matched at the start of a line; group ``marker`` is the number
            as written.
        ordered: Whether the marker carries an order (``False`` for bullets).
    """

    name: str
    pattern: re.Pattern[str]
    ordered: bool = True


@dataclass(frozen=True, slots=True)
class StepMarker:
    """A step marker found at the start of a line."""

    marker: str
    rest_start: int
    style: str
    ordered: bool


#: What a glyph the PDF maps to no character shows as: Unicode's replacement character (the
#: framework adapters write a NUL of extracted text so, PyMuPDF prints such a glyph so, and our
#: PDF reader keeps a list number's so).
UNMAPPED_GLYPH = "\ufffd"
#: What ends a list marker after its number: where :data:`UNMAPPED_GLYPH` stands before one of
#: these, the line is a numbered step whose number is lost.
LOST_NUMBER_ENDS = ".．)）"


def _style(name: str, marker: str, gap: str = r"[ \t\u3000]+", *, ordered: bool = True) -> StepStyle:
    return StepStyle(name, re.compile(rf"(?P<marker>{marker}){gap}(?=\S)"), ordered)


#: Step numbering styles, most specific first. Users may pass their own tuple.
DEFAULT_STEP_STYLES: tuple[StepStyle, ...] = (
    _style("step-word", rf"(?:[Ss]tep|STEP)\s*[{_DIGITS}]+[.:：．)]?"),
    _style("tejun", rf"(?:手順|ステップ)\s*[{_DIGITS}]+[.:：．)）]?", _GAP),
    _style("letter-dash", rf"[A-Z]-[{_DIGITS}]+[.:)]?"),
    # Not a reference to other items: 「①～⑥で登録した情報から…」, 「④、⑤の内容で…」, 「①と②を選択…」,
    # 「②で非表示中の建物を…」, 「①のメニューから…」 (a particle right after the number: no step opens so).
    _style("circled", rf"[{_CIRCLED}](?![ \t\u3000]*(?:{_CIRCLED_RANGE}|{_CIRCLED_NAMED}))", _GAP),
    _style("paren", rf"[(（](?:[{_DIGITS}]{{1,3}}|[a-zA-Zａ-ｚ]|{_ROMAN})[)）]", _GAP),
    _style("sphinx-auto", r"#\."),
    _style("dotted-fullwidth", rf"[{_DIGITS}]{{1,3}}[．]", _GAP),
    _style("dotted", rf"[{_DIGITS}]{{1,3}}\.(?![0-9])", _DOTTED_GAP),
    _style("close-paren", rf"[{_DIGITS}]{{1,3}}[)）]", _GAP),
    _style("roman", rf"{_ROMAN}[.)]"),
    _style("letter", r"[a-z][.)]"),
    # A number the PDF maps to no character before its period: a numbered item whose number
    # is lost, as pypdf gives the step numbers of some fonts.
    _style("unmapped", f"{UNMAPPED_GLYPH}[{LOST_NUMBER_ENDS}]", _GAP),
    # ASCII bullets need a space after them ("-5 degrees", "*emphasis*" are not items);
    # Japanese bullets often run straight into the text.
    _style("bullet", r"[-*+]", ordered=False),
    _style("bullet-cjk", r"[・•●○◦▪◆◇]", _GAP, ordered=False),
)

#: Characters that start an unordered item in plain text.
BULLET_MARKERS = "-*+・•●○◦▪◆◇"


def match_step_marker(line: str, styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES) -> StepMarker | None:
    """Find a step marker at the start of ``line``.

    Args:
        line: One line of text, leading whitespace already removed.
        styles: The numbering styles to try, in order.

    Returns:
        The marker and where the step text starts, or ``None`` when the line does
        not start with a marker.
    """
    screen = _any_marker(styles)
    if screen is not None and screen.match(line) is None:
        return None
    for style in styles:
        m = style.pattern.match(line)
        if m is not None:
            return StepMarker(m.group("marker"), m.end(), style.name, style.ordered)
    return None


#: Roman numerals a step marker may use, with their values.
ROMAN_VALUES = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10}
#: Full-width digits to ASCII ones, for ``str.translate``.
FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
# The circled number blocks: (first code point, the number it stands for, how many).
_CIRCLED_BLOCKS = ((0x2460, 1, 20), (0x2776, 1, 10), (0x24EB, 11, 10))


def marker_core(marker: str) -> str:
    """A marker without brackets, dots and spaces, lower-cased (``"(iv)"`` → ``"iv"``)."""
    return re.sub(r"[()（）.．\s]", "", marker).lower()


def marker_ordinal(marker: str) -> int | None:
    """The position a marker states (``"3."`` → 3, ``"③"`` → 3, ``"b)"`` → 2, ``"iv."`` → 4).

    A single ``i``, ``v`` or ``x`` reads as a roman numeral. ``None`` for markers that
    state no position (bullets, ``#.``).
    """
    digits = re.findall(r"[0-9０-９]+", marker)
    if digits:
        return int(digits[-1].translate(FULLWIDTH_DIGITS))
    for ch in marker:
        o = ord(ch)
        for first, base, count in _CIRCLED_BLOCKS:
            if first <= o < first + count:
                return o - first + base
    core = marker_core(marker)
    if core in ROMAN_VALUES:
        return ROMAN_VALUES[core]
    if len(core) == 1 and core.isalpha():
        return ord(core) - ord("a") + 1 if "a" <= core <= "z" else None
    return None


_DIGIT_RUN = re.compile(f"[{_DIGITS}]+")
_CIRCLED_NUMBER = re.compile(f"[{_CIRCLED}]")
_LETTERS = re.compile(r"[A-Za-zＡ-Ｚａ-ｚ]+")


def marker_shape(marker: str) -> str:
    """A marker with its position left out: ``"3."`` → ``"#."``, ``"③"`` → ``"①"``, ``"(b)"`` → ``"(a)"``.

    Digits become ``#`` (``"Step 2"`` → ``"Step #"``); failing digits, a circled number
    becomes ``①`` and a letter or roman numeral ``a``. Two markers of one list share a shape.
    """
    marker = marker.strip()
    if _DIGIT_RUN.search(marker):
        return _DIGIT_RUN.sub("#", marker)
    if _CIRCLED_NUMBER.search(marker):
        return _CIRCLED_NUMBER.sub("①", marker)
    return _LETTERS.sub("a", marker)


#: How a printed marker becomes its step number, tried in order: a step word before the
#: number (``Step 2``, ``手順3``, ``ステップ1``) leaves the number; a number in a pair of
#: brackets keeps them (``(1)``, ``（a）``); anything else loses its trailing
#: punctuation (``1.``, ``1)``, ``Step 2:``, ``A-1.``). Users with their own step
#: styles pass their own rules to :func:`step_number`.
STEP_NUMBER_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"^(?:[Ss]tep|STEP|手順|ステップ)\s*(?P<n>[{_DIGITS}]+)[.:：．)）]?$"), r"\g<n>"),
    (re.compile(r"^(?P<open>[(（])(?P<n>[^()（）]+)(?P<close>[)）])$"), r"(\g<n>)"),
    (re.compile(r"^(?P<n>.*?)[\s.．:：)）、,]*$"), r"\g<n>"),
)
# Full-width ASCII (digits, letters, brackets) to ASCII, so "１" and "1" are one number.
_HALF_WIDTH = str.maketrans({chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)})


def step_number(marker: str, rules: tuple[tuple[re.Pattern[str], str], ...] = STEP_NUMBER_RULES) -> str:
    """The step number a marker prints, as a reader names it and a filter compares it.

    ``"1."`` → ``"1"``, ``"1)"`` → ``"1"``, ``"（１）"`` → ``"(1)"``, ``"①"`` → ``"①"``,
    ``"A-1."`` → ``"A-1"``, ``"Step 2:"`` → ``"2"``, ``"手順３"`` → ``"3"``, ``"iv."`` →
    ``"iv"``; a bullet (``"-"``, ``"・"``) and ``""`` give ``""``. Full-width digits,
    letters and brackets become ASCII ones; circled numbers stay as printed.
    """
    if rules is STEP_NUMBER_RULES:
        return _default_step_number(marker)
    return _step_number(marker, rules)


@lru_cache(maxsize=4096)
def _default_step_number(marker: str) -> str:
    # Markers repeat ("1.", "2.", "・"), and ``Match.expand`` parses its template on every call.
    return _step_number(marker, STEP_NUMBER_RULES)


def _step_number(marker: str, rules: tuple[tuple[re.Pattern[str], str], ...]) -> str:
    marker = marker.strip()
    if not marker or all(ch in BULLET_MARKERS for ch in marker):
        return ""
    for pattern, replacement in rules:
        m = pattern.match(marker)
        if m is not None:
            return m.expand(replacement).strip().translate(_HALF_WIDTH)
    return marker.translate(_HALF_WIDTH)


# Screens built so far, by ``id`` of the styles tuple (kept, so the id stays its own).
# Hashing the styles themselves would hash every compiled pattern on every line.
_SCREENS: dict[int, tuple[tuple[StepStyle, ...], re.Pattern[str] | None]] = {}


def _any_marker(styles: tuple[StepStyle, ...]) -> re.Pattern[str] | None:
    """One pattern that matches where any of ``styles`` does, to turn most lines away at once.

    ``None`` when the patterns cannot be joined (different flags, other named groups).
    """
    known = _SCREENS.get(id(styles))
    if known is not None and known[0] is styles:
        return known[1]
    if len(_SCREENS) >= 64:  # many short-lived style tuples: start over rather than grow
        _SCREENS.clear()
    screen = _joined(styles)
    _SCREENS[id(styles)] = (styles, screen)
    return screen


def _joined(styles: tuple[StepStyle, ...]) -> re.Pattern[str] | None:
    flags = {style.pattern.flags for style in styles}
    sources = [style.pattern.pattern for style in styles]
    if len(flags) != 1 or any("(?P=" in source for source in sources):
        return None
    joined = "|".join(f"(?:{source.replace('(?P<marker>', '(?:')})" for source in sources)
    try:
        return re.compile(joined, flags.pop())
    except re.error:
        return None


@dataclass(frozen=True, slots=True)
class HeadingStyle:
    """A heading numbering pattern for sources without markup.

    Attributes:
        name: Short name.
        pattern: Regex matched at the start of a line; group ``marker`` is the number.
        level: Fixed heading level, or 0 to derive it from the dots in the marker
            (``1.2.3`` is level 3).
    """

    name: str
    pattern: re.Pattern[str]
    level: int


#: Heading numbers for plain text, most specific first.
DEFAULT_HEADING_STYLES: tuple[HeadingStyle, ...] = (
    HeadingStyle(
        "chapter", re.compile(rf"(?P<marker>第[{_DIGITS}一二三四五六七八九十百]+[章部編])[ \t\u3000]*"), 1
    ),
    HeadingStyle(
        "section", re.compile(rf"(?P<marker>第[{_DIGITS}一二三四五六七八九十百]+節)[ \t\u3000]*"), 2
    ),
    HeadingStyle(
        "subsection", re.compile(rf"(?P<marker>第[{_DIGITS}一二三四五六七八九十百]+項)[ \t\u3000]*"), 3
    ),
    HeadingStyle(
        "decimal",
        # ``3.2.1 概要``; in Japanese also with no space (``3.2.1オペレーション作成``, as text
        # extraction gives it), but not before a counter or unit (``1.5倍``, ``2.5秒``).
        re.compile(
            rf"(?P<marker>[{_DIGITS}]{{1,3}}(?:[.．][{_DIGITS}]{{1,3}})+[.．]?)"
            rf"(?:[ \t\u3000]+(?=\S)|(?=[\u30a0-\u30ff\u4e00-\u9fff])(?![倍秒分時日月年個回件台枚人円%％度]))"
        ),
        0,
    ),
    HeadingStyle("bracket", re.compile(r"(?P<marker>【)(?=[^】\n]+】\s*$)"), 2),
    HeadingStyle("square", re.compile(r"(?P<marker>[■□◆])[ \t\u3000]*(?=\S)"), 3),
)


def match_heading_number(
    line: str, styles: tuple[HeadingStyle, ...] = DEFAULT_HEADING_STYLES
) -> tuple[str, int, int] | None:
    """Find a heading number at the start of ``line``.

    Returns:
        ``(marker, level, rest_start)`` or ``None``.
    """
    for style in styles:
        m = style.pattern.match(line)
        if m is not None:
            marker = m.group("marker")
            level = style.level or len(re.findall(r"[0-9０-９]+", marker))
            return marker, level, m.end()
    return None

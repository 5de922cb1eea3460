"""Parsing and validating what a model wrote for one representation kind.

:func:`parse_output` turns a model's reply into the texts of the representations
(one per question; one for every other kind) or raises :class:`ValueError` saying
what is wrong with it. The generator retries on that error and, in the end, falls
back to the deterministic generator. The bounds per kind are data
(:data:`OUTPUT_RULES`), as are the words that differ by language.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from procedure_rag._representation_types import RepresentationKind

__all__ = ["OUTPUT_RULES", "OutputRule", "OutputShape", "parse_list", "parse_output"]

_K = RepresentationKind


class OutputShape(StrEnum):
    """How a reply is read."""

    TEXT = "text"  # one text
    LIST = "list"  # items, one representation each
    JOINED_LIST = "joined_list"  # items, joined into one representation
    CAPTION = "caption"  # a caption line, then a description


@dataclass(frozen=True, slots=True)
class OutputRule:
    """What a valid reply for one kind looks like.

    Attributes:
        shape: How the reply is read.
        min_items / max_items: How many items a list needs; surplus items past
            ``max_items`` are dropped, too few is an error.
        min_chars / max_chars: Length bounds of every item (of the whole text for
            text shapes).
        every_item_in_language: Whether each item must be in the chunk's language
            (keywords may be product names in Latin script, so only their whole
            list must be).
    """

    shape: OutputShape
    min_chars: int
    max_chars: int
    min_items: int = 1
    max_items: int = 1
    every_item_in_language: bool = True


#: Bounds per kind. Generous on purpose: they catch broken output, and the prompt
#: asks for the length that is wanted.
OUTPUT_RULES: Mapping[RepresentationKind, OutputRule] = MappingProxyType(
    {
        _K.SUMMARY: OutputRule(OutputShape.TEXT, min_chars=10, max_chars=400),
        _K.QUESTION: OutputRule(OutputShape.LIST, min_chars=5, max_chars=200, min_items=2, max_items=8),
        _K.KEYWORDS: OutputRule(
            OutputShape.JOINED_LIST,
            min_chars=1,
            max_chars=60,
            min_items=2,
            max_items=30,
            every_item_in_language=False,
        ),
        _K.TABLE_SUMMARY: OutputRule(OutputShape.TEXT, min_chars=10, max_chars=800),
        _K.CODE_DOCSTRING: OutputRule(OutputShape.TEXT, min_chars=10, max_chars=1500),
        _K.IMAGE_CAPTION: OutputRule(OutputShape.CAPTION, min_chars=5, max_chars=1500),
    }
)

#: How joined list items are separated, per language.
_JOINERS: Mapping[str, str] = MappingProxyType({"ja": "、", "en": ", "})

#: Openings of a refusal instead of an answer, per language.
_REFUSALS: Mapping[str, re.Pattern[str]] = MappingProxyType(
    {
        "en": re.compile(r"(?i)^(?:i'?m sorry|i am sorry|sorry,|i can(?:no|')t|as an ai\b)"),
        "ja": re.compile(r"^(?:申し訳(?:ございません|ありません)|すみません|お手伝いできません)"),
    }
)

_LANGUAGE_NAMES: Mapping[str, str] = MappingProxyType({"ja": "Japanese", "en": "English"})

_JA_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_LETTER = re.compile(r"[^\W\d_]")
_WORD_CHAR = re.compile(r"\w")
_FENCE = re.compile(r"^```[\w-]*[ \t]*\n(?P<body>.*?)\n?```\s*$", re.DOTALL)
# A list marker: bullets, "1." "1)" "(1)" "（1）" "①" "Q1:"; full-width digits too.
_MARKER = re.compile(
    r"^\s*(?:[-*+•・●▪◦]|(?:Q|q)?[0-9０-９]{1,3}\s*[.)．）:：、]|[(（][0-9０-９]{1,3}[)）]|[①-⑳])\s*"
)
_INLINE_SEPARATORS = re.compile(r"\s*[,，、;；]\s*")
_LABEL = re.compile(
    r"(?i)^(?:summary|caption|description|docstring|keywords|questions|"
    r"要約|キャプション|説明|キーワード|質問)\s*[:：]\s*"
)
_WRAPPERS = ('"""', "'''", "**", '"', "'", "`")
_SPACE = re.compile(r"\s+")


def parse_list(text: str) -> list[str]:
    """The items of a list a model wrote: a JSON array, marked lines, or one item per line.

    Lines with a list marker (bullet, number) win: unmarked lines beside them are a
    preamble or a closing remark and are dropped. A single unmarked line is split at
    commas (``、`` in Japanese). Markers, wrapping quotes and bold marks are removed;
    empty items are dropped. Never raises.
    """
    text = _unfence(text.strip())
    from_json = _json_items(text)
    if from_json is not None:
        return [item for item in (_clean(i) for i in from_json) if item]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    marked = [_MARKER.sub("", line, count=1) for line in lines if _MARKER.match(line)]
    if marked:
        items = marked
    elif len(lines) == 1:
        items = _INLINE_SEPARATORS.split(lines[0])
    else:
        items = lines
    return [item for item in (_clean(i) for i in items) if item]


def parse_output(kind: RepresentationKind, text: str, *, source_text: str, language: str) -> tuple[str, ...]:
    """The representation texts in a model's reply, validated.

    Args:
        kind: The kind that was asked for (not ``raw``).
        text: The model's reply.
        source_text: The chunk text the prompt held, to catch a reply that echoes it.
        language: The chunk's language; ``"ja"`` and ``"en"`` are checked.

    Returns:
        One text per question for ``question``; a single text for every other kind.

    Raises:
        ValueError: When the reply is empty, a refusal, an echo of the chunk text,
            in the wrong language, has too few items, or an item outside the length
            bounds. The message starts with the kind.
    """
    rule = OUTPUT_RULES.get(kind)
    if rule is None:
        msg = f"{kind.value}: not a model-generated kind"
        raise ValueError(msg)
    try:
        return _parse(rule, text, source_text=source_text, language=language)
    except ValueError as exc:
        msg = f"{kind.value}: {exc}"
        raise ValueError(msg) from None


def _parse(rule: OutputRule, text: str, *, source_text: str, language: str) -> tuple[str, ...]:
    reply = _unfence(text.strip())
    if not _WORD_CHAR.search(reply):
        msg = "empty output" if not reply else f"output holds no words: {_preview(reply)}"
        raise ValueError(msg)
    refusal = _REFUSALS.get(language)
    if refusal is not None and refusal.match(reply):
        msg = f"the model declined: {_preview(reply)}"
        raise ValueError(msg)
    if _echoes(reply, source_text):
        msg = f"output echoes the chunk text instead of representing it: {_preview(reply)}"
        raise ValueError(msg)
    items = _items(rule, reply)
    _check_items(rule, items)
    _check_language(rule, items, language)
    if rule.shape is OutputShape.JOINED_LIST:
        return (_JOINERS.get(language, ", ").join(items),)
    return tuple(items)


def _items(rule: OutputRule, reply: str) -> list[str]:
    if rule.shape is OutputShape.TEXT:
        lines = [_LABEL.sub("", line.rstrip()) for line in reply.splitlines()]
        return [_clean_text("\n".join(lines))]
    if rule.shape is OutputShape.CAPTION:
        lines = [_LABEL.sub("", line.strip()) for line in reply.splitlines() if line.strip()]
        return [_clean_text("\n".join(line for line in lines if line))]
    items: list[str] = []
    seen: set[str] = set()
    for item in parse_list(reply):
        key = _SPACE.sub(" ", item).casefold()
        if key not in seen:
            seen.add(key)
            items.append(item)
    if len(items) < rule.min_items:
        msg = f"{len(items)} item(s) in the output, at least {rule.min_items} needed: {_preview(reply)}"
        raise ValueError(msg)
    return items[: rule.max_items]


def _check_items(rule: OutputRule, items: list[str]) -> None:
    for number, item in enumerate(items, 1):
        if not _LETTER.search(item) and not item.strip().isdigit():
            msg = f"item {number} holds no words: {_preview(item)}"
            raise ValueError(msg)
        if not rule.min_chars <= len(item) <= rule.max_chars:
            msg = (
                f"item {number} is {len(item)} characters long, outside {rule.min_chars}..{rule.max_chars}: "
                f"{_preview(item)}"
            )
            raise ValueError(msg)


def _check_language(rule: OutputRule, items: list[str], language: str) -> None:
    name = _LANGUAGE_NAMES.get(language)
    if name is None:
        return
    if language == "ja":
        checked = items if rule.every_item_in_language else ["".join(items)]
        for item in checked:
            if not _JA_CHAR.search(item):
                msg = f"output is not in {name} (no Japanese characters): {_preview(item)}"
                raise ValueError(msg)
        return
    joined = "".join(items)
    letters = len(_LETTER.findall(joined))
    if letters and len(_JA_CHAR.findall(joined)) * 2 > letters:
        msg = f"output is not in {name} (mostly Japanese characters): {_preview(joined)}"
        raise ValueError(msg)


def _echoes(reply: str, source_text: str) -> bool:
    """Whether the reply is the chunk text (or most of it) copied back."""
    answer = _normalise(reply)
    whole = _normalise(source_text)
    _, _, rest = source_text.partition("\n")
    for source in {whole, _normalise(rest)}:
        if len(source) < 20:  # a one-line chunk may be its own best summary
            continue
        if answer in source and len(answer) >= 0.6 * len(source):
            return True
        if source in answer and len(answer) <= 1.25 * len(source):
            return True
    return False


def _json_items(text: str) -> list[str] | None:
    if not text.startswith(("[", "{")):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        value = lists[0] if len(lists) == 1 else None
    if not isinstance(value, list):
        return None
    return [str(v) for v in value if isinstance(v, str | int | float) and not isinstance(v, bool)]


def _unfence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group("body").strip() if match else text


def _clean(item: str) -> str:
    item = _SPACE.sub(" ", item).strip()
    item = _LABEL.sub("", item)
    return _strip_wrappers(item).rstrip(",，、").strip()


def _clean_text(text: str) -> str:
    return _strip_wrappers(text.strip())


def _strip_wrappers(text: str) -> str:
    changed = True
    while changed:
        changed = False
        for wrapper in _WRAPPERS:
            if len(text) > 2 * len(wrapper) and text.startswith(wrapper) and text.endswith(wrapper):
                text = text[len(wrapper) : -len(wrapper)].strip()
                changed = True
    return text


def _normalise(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _preview(text: str, limit: int = 60) -> str:
    flat = _SPACE.sub(" ", text).strip()
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")

"""Parsing, validating and bounding what a model wrote for one representation kind.

:func:`parse_output` turns a model's reply into the texts of the representations
(one per question; one for every other kind) or raises :class:`ValueError` saying
what is wrong with it. The generator retries on that error and, in the end, falls
back to the deterministic generator. Nothing a model writes reaches a store without
passing here, so the bounds are enforced here, as data:

- a reply longer than :data:`MAX_REPLY_CHARS` is rejected before it is read;
- control characters, invisible format characters, lone surrogates, terminal escape
  sequences, reasoning blocks (``<think>…</think>``), chat-template tokens and HTML
  tags are removed (:func:`sanitise`);
- a reply that looks like JSON must parse, and hold text (or a list of texts);
- list items that are not text, are empty, hold no words, fall outside the kind's
  length bounds or repeat an earlier item are dropped, at most ``max_items`` are kept,
  and fewer than ``min_items`` left is an error;
- single texts outside the kind's length bounds are an error (cutting a summary short
  would store half a sentence).

The bounds per kind are :data:`OUTPUT_RULES`; the words that differ by language are
tables beside them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from procedure_rag._language.lexicons import by_language
from procedure_rag._representations.types import RepresentationKind

__all__ = [
    "MAX_REPLY_CHARS",
    "OUTPUT_RULES",
    "OutputRule",
    "OutputShape",
    "output_problem",
    "parse_list",
    "parse_output",
    "sanitise",
]

_K = RepresentationKind

#: The longest reply read at all, in characters. The longest valid output (30
#: keywords, or a 1,500-character caption) is a tenth of it; a longer reply is a
#: runaway model, and reading it (a megabyte, ten thousand list items) costs time for
#: nothing. It is rejected, so retried, then filled in by the fallback.
MAX_REPLY_CHARS = 16_000


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
            text shapes). A list item outside them is dropped; a text outside them
            is an error.
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

    @property
    def max_text_chars(self) -> int:
        """The longest text one representation of this kind can hold (joined lists: all items)."""
        if self.shape is OutputShape.JOINED_LIST:
            return self.max_items * (self.max_chars + 2)
        return self.max_chars

    @property
    def max_texts(self) -> int:
        """How many representations one reply can make."""
        return self.max_items if self.shape is OutputShape.LIST else 1


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
# A label the model put before its answer, bold or not ("Summary:", "**Summary:**").
_LABEL = re.compile(
    r"(?i)^(?:\*\*)?(?:summary|caption|description|docstring|keywords|questions|"
    r"要約|キャプション|説明|キーワード|質問)(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*"
)
_WRAPPERS = ('"""', "'''", "**", '"', "'", "`")
_SPACE = re.compile(r"\s+")

# -- sanitising: what never reaches a store ------------------------------------------------

# Reasoning that some models print before the answer; an unclosed block runs to the end.
_REASONING = re.compile(r"(?is)<(think|thinking|reasoning)>.*?(?:</\1>|\Z)")
# Chat-template tokens leaking into the text: <|im_end|>, <|eot_id|>, </s>, [INST].
_SPECIAL_TOKENS = re.compile(r"<\|[^|<>\n]{0,40}\|>|</?s>|\[/?INST\]")
# Terminal escape sequences (colours, cursor moves): the whole sequence, not only the ESC.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
# HTML tags that break a line, and inline ones that only style it.
_BREAK_TAGS = re.compile(r"(?i)</?(?:br|p|div|li|ul|ol|tr|hr|h[1-6])\b[^<>]{0,200}>")
_INLINE_TAGS = re.compile(
    r"(?i)</?(?:b|i|u|em|strong|span|code|pre|font|small|sup|sub|mark|a)\b[^<>]{0,200}>"
)
# Control characters (C0 but tab and newline, DEL, C1), invisible format characters
# (zero-width spaces and joiners, bidirectional overrides, BOM, soft hyphen), lone
# surrogates (which cannot even be encoded as UTF-8) and non-characters.
_FORBIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\ufffe\uffff\ud800-\udfff]"
)
_LINE_BREAKS = re.compile("\r\n?|[\u2028\u2029\x85]")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")

# A reply that opens like JSON (an object, or an array of strings, numbers, arrays…);
# "[Settings] > [Display]" does not.
_JSON_START = re.compile(r"^(?:\{|\[\s*(?:[\"{\[\]0-9-]|true\b|false\b|null\b|$))")


def sanitise(text: str) -> str:
    r"""``text`` without what must never be stored or embedded.

    Removes reasoning blocks, chat-template tokens, terminal escape sequences, HTML
    tags (line-breaking ones become a newline), control and invisible format
    characters, lone surrogates and non-characters; line breaks become ``\n`` and
    runs of blank lines one blank line. Letters, digits, punctuation, tabs and
    newlines are kept as they are.
    """
    text = _LINE_BREAKS.sub("\n", text)
    text = _REASONING.sub("", text)
    text = _SPECIAL_TOKENS.sub("", text)
    text = _ANSI.sub("", text)
    text = _BREAK_TAGS.sub("\n", text)
    text = _INLINE_TAGS.sub("", text)
    text = _FORBIDDEN.sub("", text)
    return _BLANK_LINES.sub("\n\n", text)


def parse_list(text: str) -> list[str]:
    """The items of a list a model wrote: a JSON array, marked lines, or one item per line.

    Lines with a list marker (bullet, number) win: unmarked lines beside them are a
    preamble or a closing remark and are dropped. A single unmarked line is split at
    commas (``、`` in Japanese). Markers, wrapping quotes and bold marks are removed;
    empty items, and JSON items that are not strings, are dropped. Never raises.
    """
    text = _unfence(sanitise(text).strip())
    from_json = _json_items(text)
    if from_json is not None:
        return [item for item in (_clean(i) for i in from_json) if item]
    return [item for item in (_clean(i) for i in _lines(text)) if item]


def parse_output(kind: RepresentationKind, text: str, *, source_text: str, language: str) -> tuple[str, ...]:
    """The representation texts in a model's reply, validated and bounded.

    Args:
        kind: The kind that was asked for (not ``raw``).
        text: The model's reply.
        source_text: The chunk text the prompt held, to catch a reply that echoes it.
        language: The chunk's language; ``"ja"`` and ``"en"`` are checked.

    Returns:
        One text per question for ``question`` (at most ``max_items``); a single text
        for every other kind. No text holds a control character, and every one is
        within :data:`OUTPUT_RULES`' bounds.

    Raises:
        ValueError: When the reply is not a string, longer than
            :data:`MAX_REPLY_CHARS`, empty, a refusal, an echo of the chunk text,
            malformed JSON or JSON of the wrong shape, in the wrong language, has too
            few valid items, or a text outside the length bounds. The message starts
            with the kind.
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


def output_problem(kind: RepresentationKind, texts: Sequence[object]) -> str | None:
    """What is wrong with ``texts`` as the stored output of ``kind``, or ``None``.

    The check the generator runs on cached outputs before it serves them (a cache file
    written by an older version, or by hand, is not trusted): the count, the type and
    length of each text, and no forbidden character. It does not parse anything.
    """
    rule = OUTPUT_RULES.get(kind)
    if rule is None:
        return f"{kind.value} is not a model-generated kind"
    if isinstance(texts, str) or not 1 <= len(texts) <= rule.max_texts:
        count = "a str" if isinstance(texts, str) else f"{len(texts)} texts"
        return f"{count} where 1 to {rule.max_texts} are allowed"
    for number, text in enumerate(texts, 1):
        if not isinstance(text, str) or not text.strip():
            return f"text {number} is empty or not a str"
        if len(text) > rule.max_text_chars:
            return f"text {number} is {len(text)} characters long, more than {rule.max_text_chars}"
        if _FORBIDDEN.search(text):
            return f"text {number} holds a control or invisible character"
    return None


def _parse(rule: OutputRule, text: object, *, source_text: str, language: str) -> tuple[str, ...]:
    if not isinstance(text, str):
        msg = f"output is a {type(text).__name__}, not text"
        raise ValueError(msg)
    if len(text) > MAX_REPLY_CHARS:
        msg = f"output is {len(text)} characters long, more than {MAX_REPLY_CHARS}: {_preview(text)}"
        raise ValueError(msg)
    reply = _unfence(sanitise(text).strip())
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
    if rule.shape in (OutputShape.LIST, OutputShape.JOINED_LIST):
        items = _list_items(rule, reply)
    else:
        items = [_text(rule, reply)]
    _check_language(rule, items, language)
    if rule.shape is OutputShape.JOINED_LIST:
        return (by_language(_JOINERS, language).join(items),)
    return tuple(items)


def _text(rule: OutputRule, reply: str) -> str:
    """The one text of a text or caption reply, checked against the bounds."""
    if _JSON_START.match(reply):
        reply = _json_text(rule, _decode_json(reply))
    if rule.shape is OutputShape.CAPTION:
        lines = [_LABEL.sub("", line.strip()) for line in reply.splitlines() if line.strip()]
        text = _clean_text("\n".join(line for line in lines if line))
    else:
        text = _clean_text("\n".join(_LABEL.sub("", line.rstrip()) for line in reply.splitlines()))
    problem = _item_problem(rule, text)
    if problem is not None:
        msg = f"item 1 {problem}"
        raise ValueError(msg)
    return text


def _list_items(rule: OutputRule, reply: str) -> list[str]:
    """The valid items of a list reply, deduplicated, at most ``max_items`` of them."""
    candidates = _json_list(_decode_json(reply)) if _JSON_START.match(reply) else _lines(reply)
    items: list[str] = []
    dropped: list[str] = []
    seen: set[str] = set()
    number = 0
    for candidate in candidates:
        if not isinstance(candidate, str):
            number += 1
            dropped.append(f"item {number} is a {_json_type(candidate)}, not text")
            continue
        item = _clean(candidate)
        if not item:
            continue
        number += 1
        problem = _item_problem(rule, item)
        if problem is not None:
            dropped.append(f"item {number} {problem}")
            continue
        key = _SPACE.sub(" ", item).casefold()
        if key in seen:
            continue
        seen.add(key)
        items.append(item)
        if len(items) == rule.max_items:
            break
    if len(items) < rule.min_items:
        if dropped:
            msg = f"{dropped[0]} ({len(items)} valid item(s) left, at least {rule.min_items} needed)"
        else:
            msg = f"{len(items)} item(s) in the output, at least {rule.min_items} needed: {_preview(reply)}"
        raise ValueError(msg)
    return items


def _item_problem(rule: OutputRule, item: str) -> str | None:
    if not _LETTER.search(item) and not item.strip().isdigit():
        return f"holds no words: {_preview(item)}"
    if not rule.min_chars <= len(item) <= rule.max_chars:
        return f"is {len(item)} characters long, outside {rule.min_chars}..{rule.max_chars}: {_preview(item)}"
    return None


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


# -- JSON replies -------------------------------------------------------------------------


def _decode_json(reply: str) -> object:
    try:
        return json.loads(reply)
    except json.JSONDecodeError as exc:
        msg = f"output looks like JSON but does not parse ({exc.msg}; truncated?): {_preview(reply)}"
        raise ValueError(msg) from None
    except RecursionError:
        msg = f"output is JSON nested too deeply to read: {_preview(reply)}"
        raise ValueError(msg) from None


def _json_list(value: object) -> Sequence[object]:
    """The items of a JSON list reply: an array, an object holding one array, or a string of lines."""
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            value = lists[0]
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return _lines(sanitise(value))
    msg = f"output is JSON of the wrong shape: a {_json_type(value)}, not a list of texts"
    raise ValueError(msg)


def _json_text(rule: OutputRule, value: object) -> str:
    """The text of a JSON text reply: a string, or an object (array) of strings.

    A caption may come as several strings (caption, description), one per line; any
    other kind needs exactly one.
    """
    if isinstance(value, str):
        return sanitise(value)
    parts = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else None
    texts = parts is not None and all(isinstance(part, str) for part in parts)
    if texts and parts and (len(parts) == 1 or rule.shape is OutputShape.CAPTION):
        return sanitise("\n".join(str(part) for part in parts))
    msg = f"output is JSON of the wrong shape: a {_json_type(value)}, not one text"
    raise ValueError(msg)


def _json_items(text: str) -> list[str] | None:
    """The string items of a JSON list (or of an object holding one list), else ``None``."""
    if not text.startswith(("[", "{")):
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        value = lists[0] if len(lists) == 1 else None
    if not isinstance(value, list):
        return None
    return [sanitise(v) for v in value if isinstance(v, str)]


def _json_type(value: object) -> str:
    names = {dict: "JSON object", list: "JSON array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number" if isinstance(value, int | float) else type(value).__name__)


# -- text helpers -------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    """The candidate items of a plain-text list: marked lines, or every line, or one line split."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    marked = [_MARKER.sub("", line, count=1) for line in lines if _MARKER.match(line)]
    if marked:
        return marked
    if len(lines) == 1:
        return _INLINE_SEPARATORS.split(lines[0])
    return lines


def _unfence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group("body").strip() if match else text


def _clean(item: str) -> str:
    # Sanitised again: a JSON item's escapes (\u001b, \u0000) decode to junk of their own.
    item = _SPACE.sub(" ", sanitise(item)).strip()
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
    flat = _SPACE.sub(" ", text[: limit * 4]).strip()
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")

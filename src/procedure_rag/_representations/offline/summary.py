"""Extractive summary of a chunk, and the text helpers the other generators share.

The summary is made of what the chunk already says: the innermost headings, the
condition that governs it, its first action (or first sentence) and the UI elements
it names. Nothing is paraphrased, so it can never state something the manual does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from procedure_rag._language.lexicons import ENGLISH, LEXICONS, Lexicon, by_language, split_sentences
from procedure_rag._types import Chunk, ChunkType

__all__ = [
    "FENCE",
    "SummaryWords",
    "body_text",
    "clip",
    "lexicon_for",
    "not_prose",
    "plain",
    "sentences",
    "summary",
]

_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_TAG = re.compile(r"<[^>\n]{1,200}>")
_EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|(?<!\w)_(?=\S)|(?<=\S)_(?!\w)|`")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")
_SPACE = re.compile(r"[ \t\u3000]+")
#: A code fence line (``` or ~~~), opening or closing.
FENCE = re.compile(r"^\s*(```|~~~)")


def lexicon_for(chunk: Chunk) -> Lexicon:
    """The built-in lexicon of the chunk's language (English for unknown languages)."""
    # The built-in ENGLISH, not LEXICONS["en"]: LEXICONS is public and may have been changed.
    return LEXICONS.get(chunk.language, ENGLISH)


def plain(text: str) -> str:
    """``text`` without inline Markdown: link targets, emphasis, tags and escapes go; words stay."""
    text = _AUTOLINK.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub(" ", text)
    text = _EMPHASIS.sub("", text)
    text = _ESCAPE.sub(r"\1", text)
    return _SPACE.sub(" ", text).strip()


def body_text(chunk: Chunk) -> str:
    """The chunk's text without the heading-path line the chunker puts first."""
    label = lexicon_for(chunk).section_label + ":"
    first, sep, rest = chunk.text.partition("\n")
    if first.startswith(label):
        return rest
    return chunk.text if not sep else first + sep + rest


def sentences(text: str, *, skip_code: bool = True) -> list[str]:
    """Plain sentences of ``text``, one list item or paragraph line at a time.

    Fenced code, image lines and table rows are skipped: they are not prose.
    """
    out: list[str] = []
    in_code = False
    for raw in text.splitlines():
        if FENCE.match(raw):
            in_code = not in_code
            continue
        line = raw.strip()
        if (in_code and skip_code) or not_prose(line):
            continue
        line = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line)
        out.extend(s.strip() for s in split_sentences(plain(line)) if s.strip())
    return out


def not_prose(line: str) -> bool:
    """Whether a stripped line is no prose: empty, a table row or an image line."""
    return not line or line.startswith(("|", "![")) or line.count("|") >= 2


def clip(text: str, limit: int, *, words: bool) -> str:
    """Cut ``text`` to ``limit`` words (``words=True``) or characters, marking the cut with "…"."""
    if words:
        tokens = text.split()
        return text if len(tokens) <= limit else " ".join(tokens[:limit]).rstrip(",;:") + "…"
    return text if len(text) <= limit else text[: limit - 1].rstrip("、，, ") + "…"


@dataclass(frozen=True, slots=True)
class SummaryWords:
    """How a summary is put together in one language.

    Attributes:
        limit: The length budget.
        by_words: Whether ``limit`` counts words (English) or characters (Japanese).
        path_join: Between the innermost headings.
        after_path: Between the heading path and the rest.
        sentence_end: Closes a clause that does not end a sentence of its own.
        condition: Template for the governing condition (``{condition}``).
        condition_end: What closes a condition clause and is left out of the summary
            (the particle of 「〜場合は」).
        targets: Template for the UI elements named (``{targets}``).
        list_join: Between UI element names.
    """

    limit: int
    by_words: bool
    path_join: str
    after_path: str
    sentence_end: str
    condition: str
    targets: str
    list_join: str
    condition_end: re.Pattern[str] = re.compile(r"(?!)")


SUMMARY_WORDS: dict[str, SummaryWords] = {
    "ja": SummaryWords(
        limit=100,
        by_words=False,
        path_join=" > ",
        after_path="：",
        sentence_end="。",
        condition="{condition}。",
        targets="操作対象：{targets}。",
        list_join="、",
        condition_end=re.compile(r"(?:(?<=場合)|(?<=とき)|(?<=時)|(?<=際))(?:には|では|でも|は|も)$"),
    ),
    "en": SummaryWords(
        limit=30,
        by_words=True,
        path_join=" > ",
        after_path=": ",
        sentence_end=".",
        condition="{condition}: ",
        targets="Uses {targets}.",
        list_join=", ",
    ),
}


def _end(text: str, words: SummaryWords) -> str:
    text = text.strip()
    return text if not text or text[-1] in "。．.!?！？:：" else text + words.sentence_end


def summary(chunk: Chunk) -> str:
    """Return a short extractive summary of ``chunk``.

    About 100 characters for Japanese, 30 words for English: the innermost one or two
    headings, the governing condition, the first action (or, for prose, the first
    sentence) and up to three UI elements the steps name.
    """
    words = by_language(SUMMARY_WORDS, chunk.language)
    path = words.path_join.join(chunk.section_path[-2:])
    condition = chunk.condition or next((s.condition for s in chunk.steps if s.condition), "")
    procedure = chunk.chunk_type is ChunkType.PROCEDURE
    first = next((s.action for s in chunk.steps if s.action and not s.condition), "") if procedure else ""
    if not first:
        first = next(iter(sentences(body_text(chunk))), "")
        if condition and first.startswith(condition):
            condition = ""
    targets = list(dict.fromkeys(s.target for s in chunk.steps if s.target))[:3]
    condition = words.condition_end.sub("", condition)
    parts = [words.condition.format(condition=condition) if condition else "", _end(first, words)]
    if targets:
        parts.append(words.targets.format(targets=words.list_join.join(targets)))
    sep = "" if not words.by_words else " "
    rest = sep.join(p for p in parts if p).replace(": " + " ", ": ")
    text = (path + words.after_path + rest) if path and rest else (path or rest)
    return clip(text.strip(), words.limit, words=words.by_words)

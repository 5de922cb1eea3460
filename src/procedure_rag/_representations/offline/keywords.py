"""Keywords of a chunk: codes and numbers, UI labels, product names and content words.

Content words are made by :mod:`procedure_rag._language.words` (Japanese through
SudachiPy in split mode C, or by character runs without it; English by a stopword
list); the codes, labels and product names are found here, by patterns that hold for
both languages.

Keywords are ranked by kind (codes, UI labels, product names, then words) only to
decide which survive the bound; the list comes back in order of first appearance.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from procedure_rag._language.lexicons import JAPANESE, by_language
from procedure_rag._language.words import (
    ENGLISH_STOPWORDS,
    IMPERATIVE_VERBS,
    english_content_words,
    japanese_content_words,
)
from procedure_rag._representations.offline.summary import body_text, plain
from procedure_rag._types import Chunk

__all__ = ["KEYWORD_LIMIT", "KeywordWords", "keyword_words", "keywords"]

#: Most keywords one chunk gets.
KEYWORD_LIMIT = 30

# Codes and numbers, most specific first: error codes, versions, builds, part numbers.
_CODE = re.compile(
    r"(?<![\w.])(?:"
    r"0x[0-9A-Fa-f]{4,}"  # error codes: 0x80070005
    r"|\d+(?:\.\d+){2,}"  # dotted versions and builds: 1.19050.1301.0, 10.0.19041
    r"|\d{5}\.\d+"  # builds: 19041.1103
    r"|[12]\d[HhQq][12]"  # half-year releases: 20H2, 21H1
    r"|v\d+(?:\.\d+)+"  # v2.0
    r"|[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+"  # part and model names: QUSB_BULK, HS-USB, USB-C
    r"|(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{2,}\d[A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"  # SM-G973F, 2FA, A12
    r")(?![\w])"
)
_URL = re.compile(r"<https?://[^>\s]+>|https?://\S+")
_FENCE_BLOCK = re.compile(r"^(```|~~~)[^\n]*\n.*?(?:^\1\s*$|\Z)", re.MULTILINE | re.DOTALL)
# A product name: capitalised words in a row, digits allowed after the first (HoloLens 2).
_PRODUCT = re.compile(
    r"\b[A-Z][\w-]*[A-Z][\w-]*(?:[ \t]+(?:\d+|[A-Z][\w-]+))*\b|\b(?:[A-Z][a-z][\w-]*[ \t]+){1,3}[A-Z][\w-]+\b"
)
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_SENTENCE_END = re.compile(r"[。．!?！？]|\.\s|\.$")
_LABEL_MAX = 30


@dataclass(frozen=True, slots=True)
class KeywordWords:
    """How keywords are found and joined in one language.

    Attributes:
        words: Yields the content words of a text (after codes, labels and products).
        joiner: Between keywords in the representation text.
    """

    words: Callable[[str], Iterator[tuple[int, str]]]
    joiner: str


KEYWORD_WORDS: dict[str, KeywordWords] = {
    "ja": KeywordWords(words=japanese_content_words, joiner="、"),
    "en": KeywordWords(words=english_content_words, joiner=" "),
}


def keyword_words(language: str) -> KeywordWords:
    """The keyword rules of ``language`` (English for unknown languages)."""
    return by_language(KEYWORD_WORDS, language)


def _candidates(text: str, language: str) -> Iterator[tuple[int, int, str]]:
    """``(rank, position, keyword)``: rank 0 codes, 1 UI labels, 2 products, 3 words."""
    for m in _CODE.finditer(text):
        yield 0, m.start(), m.group()
    for m in JAPANESE.ui_label.finditer(text):
        for label in plain(next((g for g in m.groups() if g), "")).split(" > "):
            if label and len(label) <= _LABEL_MAX and not _SENTENCE_END.search(label):
                yield 1, m.start(), label
    for m in _PRODUCT.finditer(text):
        words = m.group().split()
        while words and (words[0].lower() in ENGLISH_STOPWORDS or words[0].lower() in IMPERATIVE_VERBS):
            words.pop(0)
        if words:
            yield 2, m.end() - len(" ".join(words)), " ".join(words)
    for start, word in keyword_words(language).words(text):
        yield 3, start, word


def keywords(chunk: Chunk, *, limit: int = KEYWORD_LIMIT) -> list[str]:
    """Return the chunk's keywords: at most ``limit``, no duplicates, in order of first appearance.

    Codes and numbers (0x80070005, 20H2, 1.19050.1301.0), UI labels (「保存」, [Save],
    **Save**), product names (HoloLens 2, Advanced Recovery Companion) and content
    words (Japanese via SudachiPy, or kanji and katakana runs without it; English by a
    stopword list) all count. Link targets and fenced code are left out: paths and markup
    are not what people ask about.
    """
    body = _FENCE_BLOCK.sub(" ", body_text(chunk))
    text = "\n".join((" > ".join(chunk.section_path[-2:]), _URL.sub(" ", _LINK.sub(r"\1", body))))
    best: dict[str, tuple[int, int, str]] = {}
    for rank, start, found in _candidates(text, chunk.language):
        word = found.strip(" .,:;'\"-")
        key = word.casefold()
        if not word or key in ENGLISH_STOPWORDS:
            continue
        seen = best.get(key)
        if seen is None:
            best[key] = (rank, start, word)
        else:
            best[key] = (min(seen[0], rank), min(seen[1], start), seen[2] if seen[1] <= start else word)
    kept = sorted(best.values())[:limit]
    return [word for _, _, word in sorted(kept, key=lambda item: item[1])]

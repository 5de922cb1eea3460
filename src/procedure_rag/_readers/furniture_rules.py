"""What page furniture and contents entries look like as text, for every reader that looks for them.

The PDF reader (:mod:`procedure_rag._readers.pdf_furniture`, lines with their place on
the page) and the plain-text reader (:mod:`procedure_rag._readers.text_furniture`,
pages of extracted text) find the same things by the same rules:

* a line is compared by its **shape**: NFKC, no whitespace, case folded, every run of
  digits as ``#`` (``Exastro 12`` and ``13Exastro`` are ``exastro#`` and ``#exastro``), so
  a running header or footer is the same line on every page;
* a line that is only a **page number** (``12``, ``- 12 -``, ``－ 15 －``, ``Page 3 of 9``,
  ``3 / 62``, ``12 ページ``) prints that number;
* a **contents entry** ends in a dotted leader and a page number (``概要 ........ 3``), or
  is a numbered line that is no sentence (``1. はじめに``), under a 「目次」/"Contents" title;
* a **navigation link** alone on its line (``Back to list``, ``Back to top``,
  「一覧に戻る」, 「ページの先頭へ」) is the page's link, printed with it: no text of a
  section, and never its title.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "CONTENTS_HINTS",
    "DASHES",
    "NAVIGATION_HINTS",
    "NUMBER_PREFIX",
    "SENTENCE",
    "entry_title",
    "is_contents_title",
    "is_navigation",
    "normalised",
    "printed_number",
    "shape",
    "single_number",
    "toc_line",
]

#: The hint every reader puts on a contents entry or list it keeps as text (never steps):
#: a PDF's or a text's contents, a Markdown or HTML page's list of in-page links.
CONTENTS_HINTS: tuple[tuple[str, str], ...] = (("contents", "true"),)

#: The dashes a printed page number sits between (``- 3 -``, ``－ 3 －``, ``ー 3 ー``, ``〜 3 〜``).
DASHES = "-－—–−‐ー~〜"
_PAGE_NUMBER = re.compile(
    rf"^(?:[{DASHES}\s]*(?P<a>\d{{1,4}})[{DASHES}\s]*"
    r"|(?:page|p\.|ページ)\s*(?P<b>\d{1,4})(?:\s*(?:of|/)\s*\d{1,4})?"
    r"|(?P<c>\d{1,4})\s*/\s*\d{1,4}"
    r"|(?P<d>\d{1,4})\s*(?:ページ|頁))$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_DOTTED = re.compile(r"(?:[.．·・…‥]\s*){3,}\s*[0-9０-９]{1,4}\s*$")
_CONTENTS = re.compile(r"^(?:目\s*次|もくじ|contents|table of contents|inhalt|sommaire)$", re.IGNORECASE)
#: A help page's links back up, as a line prints them (normalised: no spaces, lower case).
_NAVIGATION = re.compile(
    r"^[\[(（【「<＜↑▲^△]*"
    r"(?:(?:back|return|go)to(?:the)?(?:list|top|topofpage|contents|tableofcontents|index)"
    r"|pagetop|topofpage|top(?=[↑▲△])|(?<=[↑▲△])top"
    r"|(?:一覧|目次|トップ|トップページ|ページトップ|(?:この)?ページの(?:先頭|トップ)|ページ上部|先頭|上)(?:に|へ)戻る"
    r"|(?:ページトップ|(?:この)?ページの(?:先頭|トップ)|ページ上部|top)へ)"
    r"[\])）】」>＞↑▲△]*$"
)
#: The hints of a navigation link the text, Markdown and HTML readers keep as furniture.
NAVIGATION_HINTS: tuple[tuple[str, str], ...] = (("navigation", "true"),)
#: A heading or entry number at the start of a line (``第2章``, ``1.3``, ``(4)``), and the space after it.
NUMBER_PREFIX = re.compile(r"^(?:第?[0-9０-９]+[章節.．]?(?:[0-9０-９]+[.．]?)*|[(（][0-9０-９]+[)）])\s*")
#: A sentence, not an entry: a full stop, or a polite verb ending.
SENTENCE = re.compile(r"[。．]|(?:ます|です|ください)$")
#: How much of a line's end the leader rule looks at (a leader and its number are short).
_TAIL = 200


def normalised(text: str) -> str:
    """NFKC, no whitespace, lower case: how furniture and headings are compared."""
    return "".join(unicodedata.normalize("NFKC", text).split()).casefold()


def shape(text: str) -> str:
    """:func:`normalised`, every run of digits as ``#``: a running line is the same on every page."""
    return _DIGITS.sub("#", normalised(text))


def printed_number(text: str) -> int | None:
    """The number of a line that is only a page number (``- 12 -``, ``Page 3 of 9``), else ``None``."""
    m = _PAGE_NUMBER.match(unicodedata.normalize("NFKC", text).strip())
    if m is None:
        return None
    return int(next(g for g in m.group("a", "b", "c", "d") if g is not None))


def single_number(text: str) -> int | None:
    """The number a running line prints when it holds exactly one (``Exastro 12``), else ``None``."""
    numbers = _DIGITS.findall(unicodedata.normalize("NFKC", text))
    return int(numbers[0]) if len(numbers) == 1 else None


def is_contents_title(text: str) -> bool:
    """Whether ``text`` is a contents page's title (「目次」, "Contents"…)."""
    return len(text) <= 40 and _CONTENTS.match(unicodedata.normalize("NFKC", text).strip()) is not None


def is_navigation(text: str) -> bool:
    """Whether ``text`` is only a link of the page back up ("Back to list", 「ページの先頭へ」)."""
    return len(text) <= 40 and _NAVIGATION.match(normalised(text)) is not None


def toc_line(text: str) -> bool:
    """Whether a line ends in a dotted leader and a page number."""
    return _DOTTED.search(unicodedata.normalize("NFKC", text[-_TAIL:])) is not None


def entry_title(text: str) -> str:
    """A contents entry or heading as the two are matched: its number and leader gone, normalised."""
    text = unicodedata.normalize("NFKC", text).strip()
    text = _DOTTED.sub("", text)
    return normalised(NUMBER_PREFIX.sub("", text))

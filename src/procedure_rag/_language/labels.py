"""Note and caution labels: the words that make a block a note, and where a text opens with one.

Every reader asks the same two questions: which label does a block's own marking
give it (an HTML class, a reST directive, an admonition title), and does a text
open with a printed label (``Note:``, ``【注意】``, ``※``, ``**Important:**``)? The
words are data, Japanese and English side by side; the label an element gets is
the English word in lower case (``"note"``, ``"warning"``, ``"caution"``,
``"important"``, ``"tip"``) or the Japanese label as printed (``"注意"``, ``"※"``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["BLOCK_NAMES", "LABEL_WORDS", "LEADING_LABEL", "admonition_label", "leading_label"]

#: Words printed at the start of a note, per language, and the label each gives.
LABEL_WORDS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "en": MappingProxyType(
            {
                "note": "note",
                "notes": "note",
                "notice": "note",
                "caution": "caution",
                "warning": "warning",
                "danger": "warning",
                "important": "important",
                "tip": "tip",
                "tips": "tip",
            }
        ),
        "ja": MappingProxyType(
            {
                "注意": "注意",
                "ご注意": "注意",
                "重要": "重要",
                "警告": "警告",
                "注": "注",
                "ヒント": "ヒント",
                "メモ": "メモ",
                "補足": "補足",
                "ポイント": "ポイント",
                "※": "※",
            }
        ),
    }
)

#: Other names markup gives a note block (HTML classes, reST directives, Sphinx
#: admonition titles), never read as a printed label: "Error: …" opens a message.
BLOCK_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "info": "note",
        "seealso": "note",
        "see also": "note",
        "todo": "note",
        "error": "warning",
        "attention": "caution",
        "hint": "tip",
    }
)

_LABELS: Mapping[str, str] = {word: label for words in LABEL_WORDS.values() for word, label in words.items()}
_WORDS = "|".join(re.escape(w) for w in sorted(_LABELS, key=len, reverse=True) if w != "※")
_JA_STRONG = "|".join(("注意", "重要", "警告"))  # labels that open a note followed by a space alone
_EN_UPPER = "|".join(w.upper() for w in ("note", "caution", "warning", "important", "tip"))
_BOLD = r"(?:\*\*|__)?"
_SPACE = r"[ \t\u3000]"

#: A printed label at the start of a text (leading whitespace already removed). It
#: has no named groups so that other patterns can include it.
LEADING_LABEL = re.compile(
    rf"{_BOLD}[【［\[<＜〈《(（](?:{_WORDS})[】］\]>＞〉》)）]{_BOLD}[ \t\u3000:：]*"  # 【注意】 [Note]
    rf"|{_BOLD}(?:{_WORDS}){_BOLD}{_SPACE}*[:：]{_BOLD}{_SPACE}*"  # Note: / 注意： / **Note:**
    rf"|{_BOLD}(?:{_WORDS}){_BOLD}{_SPACE}*(?:\r?\n|$)"  # NOTE alone on its line
    rf"|※(?:[0-9０-９]{{1,2}}(?![0-9０-９/／.．:：年月-]))?{_SPACE}*"  # ※ / ※1, not ※2019/12/15
    rf"|(?:{_JA_STRONG}){_SPACE}+"  # 注意　…
    rf"|(?-i:{_EN_UPPER}){_SPACE}{{2,}}",  # NOTE  … (PDF text whose icon was lost)
    re.IGNORECASE,
)
# What surrounds the word in a match: brackets, bold marks, colons, spaces, a note number.
_AROUND = re.compile(r"[【［\[<＜〈《(（】］\]>＞〉》)）*_:：\s0-9０-９]+")


def admonition_label(name: str) -> str:
    """The label a note block's name gives (``"hint"`` -> ``"tip"``, ``"注意"``), or ``""``.

    Args:
        name: An HTML class, a reST directive name or an admonition title; a
            trailing colon is ignored.
    """
    name = name.strip().rstrip(":：").strip()
    if name in _LABELS:
        return _LABELS[name]
    return _LABELS.get(name.lower()) or BLOCK_NAMES.get(name.lower(), "")


def leading_label(text: str) -> tuple[str, str]:
    r"""The note label ``text`` opens with, and the text after it.

    ``"注意：電源を切る"`` gives ``("注意", "電源を切る")``, ``"**Note:** Be careful."``
    ``("note", "Be careful.")``, ``"NOTE\nText"`` ``("note", "Text")``, ``"※1 …"``
    ``("※", "…")``.

    Returns:
        ``(label, rest)``; ``("", text)`` when the text opens with no label.
    """
    body = text.lstrip()
    m = LEADING_LABEL.match(body)
    if m is None:
        return "", text
    word = _AROUND.sub("", m.group())
    return _LABELS.get(word.lower(), word), body[m.end() :]

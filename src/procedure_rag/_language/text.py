"""Small text helpers shared by the readers and the renderer."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["is_cjk", "join_lines", "title_case", "title_key"]

_CJK = re.compile(r"[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]")
#: The words that mark a title as going on from the one before it, Japanese and English.
_CONTINUED_WORDS = r"(?:continued|cont'd|cont\.|contd\.?|続き|つづき|続|[0-9]+\s*/\s*[0-9]+)"
#: That mark at the end of a title (NFKC-normalised): in brackets, or after a space or a dash.
_CONTINUED = re.compile(
    rf"(?:\s*[(\[【〔]\s*{_CONTINUED_WORDS}\s*[)\]】〕]|(?:^|\s+|\s*[-–—:]\s*){_CONTINUED_WORDS})\s*$",
    re.IGNORECASE,
)


def is_cjk(ch: str) -> bool:
    """Whether ``ch`` is a Japanese (or other CJK) character or full-width punctuation."""
    return bool(ch) and _CJK.match(ch) is not None


#: The words an English title in title case leaves in lower case ("Install Apps via App Installer").
_TITLE_SMALL_WORDS = frozenset(
    ["a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to", "via",
     "vs", "with"]
)  # fmt: skip


def title_case(s: str) -> bool:
    """Whether ``s`` is an English title in title case: two words or more, each capitalised but small ones.

    ``"VPN via UI"`` and ``"Web Installer"`` are; ``"Select the PWA download button"``, a
    Japanese title and one word alone are not.
    """
    words = s.split()
    return (
        len(words) >= 2
        and s.isascii()
        and words[0][0].isupper()
        and all(w[0].isupper() or w[0].isdigit() or w in _TITLE_SMALL_WORDS for w in words)
    )


def join_lines(lines: list[str]) -> str:
    """Join wrapped lines: no space between two CJK characters, one space otherwise."""
    if len(lines) == 1:
        return lines[0]
    out: list[str] = []
    for line in lines:
        if not line:
            continue
        if out and not (is_cjk(out[-1][-1]) and is_cjk(line[0])):
            out.append(" ")
        out.append(line)
    return "".join(out)


def title_key(title: str) -> str:
    """A title as compared with the one before it, the mark that it goes on left out.

    NFKC, case and spacing are ignored, and so is a mark at the end that the title goes
    on from the one before (``(continued)``, ``(cont.)``, ``（続き）``, ``(2/3)``):

    ``title_key("Hard restart (continued)") == title_key("Hard restart")``, and
    ``title_key("ハード再起動（続き）") == title_key("ハード再起動 (1/2)")``.
    """
    text = unicodedata.normalize("NFKC", title)
    return " ".join(_CONTINUED.sub("", text).split()).casefold()

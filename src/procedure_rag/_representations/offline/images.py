"""Image caption: alt text, figure captions and the sentences that point at the figure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from procedure_rag._language.lexicons import by_language
from procedure_rag._representations.offline.summary import body_text, clip, plain, sentences
from procedure_rag._types import Chunk

__all__ = ["ImageWords", "find_images", "has_images", "image_caption"]

_IMAGE = re.compile(r"!\[(?P<alt>[^\]\n]*)\]\((?P<url>[^)\s]*)[^)]*\)")
# "*図2-1 地域情報登録ボタンを押下*", "Figure 3: The sign-in screen", "図 1　画面"
_FIGURE = re.compile(
    r"^\s*[*_]*(?P<cap>(?:図|Figure|Fig\.)\s*[\d０-９]+(?:[-‐‑.．][\d０-９]+)*[:：.\s　][^*\n]*?)[*_]*\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_MAX_CHARS = 400


@dataclass(frozen=True, slots=True)
class ImageWords:
    """Words that point at a figure, and how a caption is put together, in one language."""

    refers: re.Pattern[str]
    label: str
    join: str


IMAGE_WORDS: dict[str, ImageWords] = {
    "ja": ImageWords(
        refers=re.compile(r"(?<![地意構指])図|画像|スクリーンショット|イメージ|写真|画面例|下記のように表示"),
        label="画像：",
        join="。",
    ),
    "en": ImageWords(
        refers=re.compile(
            r"\b(?:image|screenshot|figure|picture|diagram|illustration|shown|as follows|below)\b", re.I
        ),
        label="Image: ",
        join=". ",
    ),
}


def find_images(text: str) -> list[tuple[str, str]]:
    """``(alt, url)`` of every Markdown image in ``text``."""
    return [(plain(m.group("alt")), m.group("url")) for m in _IMAGE.finditer(text)]


def has_images(chunk: Chunk) -> bool:
    """Whether the chunk holds a picture: an image line or a figure caption."""
    return bool(_IMAGE.search(chunk.text) or _FIGURE.search(chunk.text))


def image_caption(chunk: Chunk) -> str:
    """Return a caption for the chunk's pictures.

    Alt texts first, then figure captions (図2-1 …, Figure 3: …), then the sentences
    that refer to a figure; an image without any of these is named by its file name
    and the heading. Returns "" for a chunk without pictures.
    """
    words = by_language(IMAGE_WORDS, chunk.language)
    body = body_text(chunk)
    images = find_images(body)
    figures = [plain(m.group("cap")) for m in _FIGURE.finditer(body)]
    if not images and not figures:
        return ""
    names = [alt or PurePosixPath(url).stem.replace("_", " ").replace("-", " ") for alt, url in images]
    refs = [s for s in sentences(body) if words.refers.search(s) and s not in figures]
    pieces = list(dict.fromkeys(p.rstrip("。.") for p in (*names, *figures, *refs) if p))
    if (
        chunk.section_path
        and not any(words.refers.search(p) for p in pieces[len(names) :])
        and not any(names)
    ):
        pieces.append(chunk.section_path[-1])
    return clip(words.label + words.join.join(pieces), _MAX_CHARS, words=False)

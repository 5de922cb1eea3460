"""Prompts for model-backed representations: one per kind, in the chunk's language.

A prompt is a system message (what the output is for, the rules every kind shares)
and a user message (the heading path, the chunk text, then what to write). The
wording lives in one :class:`PromptTexts` value per language, side by side, so no
code branches on the language. Bump :data:`PROMPT_VERSION` whenever a prompt or the
parsing of its output changes: it is part of every cache key, so cached outputs of
an older prompt are never served for a newer one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from procedure_rag._language.lexicons import by_language
from procedure_rag._models.text_model import ImagePart, Message
from procedure_rag._representations.types import RepresentationKind
from procedure_rag._types import Chunk

__all__ = [
    "PROMPT_TEXTS",
    "PROMPT_VERSION",
    "PromptTexts",
    "build_prompt",
    "chunk_body",
    "prompt_digest",
]

#: Version of the prompts and of their output parsing; part of every cache key.
PROMPT_VERSION = "2"

# A parent chunk can hold a whole chapter; past this the prompt is cut (the
# representation is about the passage's topic, which its first pages carry).
_MAX_TEXT_CHARS = 12_000

_K = RepresentationKind


@dataclass(frozen=True, slots=True)
class PromptTexts:
    """The wording of every prompt in one language.

    Attributes:
        language: ISO 639-1 code.
        system: The system message: what representations are for and the shared rules.
        heading_label: Label of the heading path line in the user message.
        content_labels: Label of the chunk text, per kind (the passage, the table…).
        instructions: What to write, per kind.
        no_image_note: Added to the image caption instruction when no image is attached.
    """

    language: str
    system: str
    heading_label: str
    content_labels: Mapping[RepresentationKind, str]
    instructions: Mapping[RepresentationKind, str]
    no_image_note: str


ENGLISH_PROMPTS = PromptTexts(
    language="en",
    system=(
        "You write search representations of a passage from an operation manual, runbook or "
        "administrator guide. They are embedded and searched in place of the passage, so they must "
        "name what a user would search for: the topic, screen, menu and button names, product names, "
        "the conditions under which the passage applies, and numbers. Use only facts stated in the "
        "passage; never invent any. Write in English. Output only what is asked for: no preamble, "
        "no explanation, no closing remark."
    ),
    heading_label="Heading path",
    content_labels=MappingProxyType(
        {
            _K.SUMMARY: "Passage",
            _K.QUESTION: "Passage",
            _K.KEYWORDS: "Passage",
            _K.TABLE_SUMMARY: "Table",
            _K.CODE_DOCSTRING: "Code",
            _K.IMAGE_CAPTION: "Figure (alt text and caption)",
        }
    ),
    instructions=MappingProxyType(
        {
            _K.SUMMARY: (
                "Write a retrieval summary of the passage in one or two sentences. Name the topic, "
                "the proper nouns (products, screens, buttons), the conditions under which it applies "
                "and any numbers."
            ),
            _K.QUESTION: (
                "Write 3 to 5 questions that a user would ask and that this passage answers. Word them "
                "the way a user would ask, not in the passage's own words. Output a numbered list, one "
                "question per line."
            ),
            _K.KEYWORDS: (
                "List 5 to 15 search keywords for this passage: topic words, UI labels, product names, "
                "error codes and numbers. Output a bulleted list, one keyword or short phrase per line."
            ),
            _K.TABLE_SUMMARY: (
                "In one to three sentences, say what this table shows (what its rows and columns are) "
                "and what stands out in it, such as a zero stock, a maximum or minimum, or an exception."
            ),
            _K.CODE_DOCSTRING: (
                "Write a docstring for this code: its purpose, its arguments and its return value (or "
                "what it outputs). If it is not a function, say what it does and what input it expects."
            ),
            _K.IMAGE_CAPTION: (
                "Describe this figure. On the first line, write a short caption (at most 15 words). "
                "From the second line on, describe in detail the components, screens and flows the "
                "figure shows."
            ),
        }
    ),
    no_image_note=(
        "No image is attached: describe only what the alt text and caption above state, and do not "
        "guess at anything else in the figure."
    ),
)

JAPANESE_PROMPTS = PromptTexts(
    language="ja",
    system=(
        "あなたは操作マニュアル・手順書・管理者ガイドの一節から検索用の表現を作成します。"
        "作成した表現は一節の代わりに埋め込まれて検索されるため、ユーザーが検索に使う語"
        "（トピック、画面名・メニュー名・ボタン名、製品名、一節が当てはまる条件、数値）を必ず含めてください。"
        "一節に書かれている事実だけを使い、書かれていないことは作らないでください。日本語で書いてください。"
        "求められたものだけを出力し、前置き・説明・締めの言葉は書かないでください。"
    ),
    heading_label="見出し",
    content_labels=MappingProxyType(
        {
            _K.SUMMARY: "本文",
            _K.QUESTION: "本文",
            _K.KEYWORDS: "本文",
            _K.TABLE_SUMMARY: "表",
            _K.CODE_DOCSTRING: "コード",
            _K.IMAGE_CAPTION: "図（代替テキストとキャプション）",
        }
    ),
    instructions=MappingProxyType(
        {
            _K.SUMMARY: (
                "この一節の検索用要約を 80〜120 文字で書いてください。トピック、固有名詞（製品名・画面名・"
                "ボタン名）、当てはまる条件、数値を含めてください。"
            ),
            _K.QUESTION: (
                "この一節が答えになる、ユーザーが実際に尋ねそうな質問を 3〜5 個書いてください。"
                "一節の言い回しではなく、ユーザーが尋ねる言葉で書いてください。"
                "番号付きリストで、1 行に 1 つずつ出力してください。"
            ),
            _K.KEYWORDS: (
                "この一節の検索キーワードを 5〜15 個挙げてください（トピックを表す語、画面の表示名、製品名、"
                "エラーコード、数値）。箇条書きで、1 行に 1 つずつ出力してください。"
            ),
            _K.TABLE_SUMMARY: (
                "この表が何を示しているか（行と列がそれぞれ何か）と、目立つ点（在庫ゼロ、最大値・最小値、"
                "例外など）を 1〜3 文で説明してください。"
            ),
            _K.CODE_DOCSTRING: (
                "このコードの docstring を書いてください。目的、引数、戻り値（または出力）を含めてください。"
                "関数でない場合は、何をするか、入力として何を期待するかを書いてください。"
            ),
            _K.IMAGE_CAPTION: (
                "この図を説明してください。1 行目に短いキャプション（30 文字以内）を書き、2 行目以降に、"
                "図に示された構成要素・画面・処理の流れを詳しく説明してください。"
            ),
        }
    ),
    no_image_note=(
        "画像は添付されていません。上の代替テキストとキャプションに書かれていることだけを説明し、"
        "図のそれ以外の内容は推測しないでください。"
    ),
)

#: Prompt wording per language; chunks in any other language get English prompts.
PROMPT_TEXTS: Mapping[str, PromptTexts] = MappingProxyType({"en": ENGLISH_PROMPTS, "ja": JAPANESE_PROMPTS})


def chunk_body(chunk: Chunk) -> str:
    """The chunk text without its leading heading path line (the prompt states the path itself)."""
    text = chunk.text
    if chunk.section_path:
        first, sep, rest = text.partition("\n")
        if sep and chunk.section_path[-1] in first:
            return rest.strip()
    return text.strip()


def build_prompt(
    chunk: Chunk, kind: RepresentationKind, *, images: Sequence[ImagePart] = ()
) -> tuple[Message, ...]:
    """The messages that ask a model for a ``kind`` representation of ``chunk``.

    Args:
        chunk: The chunk to represent; its ``language`` picks the wording.
        kind: Any kind but ``raw``.
        images: Images of the figure, attached to the user message (image captions
            only; pass none when the model cannot see images).

    Returns:
        A system message and a user message.

    Raises:
        ValueError: For the ``raw`` kind (it is the chunk text, never prompted), or
            images given for a kind other than ``image_caption``.
    """
    texts = by_language(PROMPT_TEXTS, chunk.language)
    if kind not in texts.instructions:
        msg = f"no prompt for the {kind.value!r} kind (it is not generated by a model)"
        raise ValueError(msg)
    if images and kind is not _K.IMAGE_CAPTION:
        msg = f"images can only be sent for image captions, not for {kind.value!r}"
        raise ValueError(msg)
    body = chunk_body(chunk)
    if len(body) > _MAX_TEXT_CHARS:
        body = body[:_MAX_TEXT_CHARS] + " …"
    instruction = texts.instructions[kind]
    if kind is _K.IMAGE_CAPTION and not images:
        instruction = f"{instruction}\n{texts.no_image_note}"
    parts = []
    if chunk.section_path:
        parts.append(f"{texts.heading_label}: {' > '.join(chunk.section_path)}")
    parts.append(f"{texts.content_labels[kind]}:\n{body}")
    parts.append(instruction)
    return (
        Message("system", texts.system),
        Message("user", "\n\n".join(parts), tuple(images)),
    )


def prompt_digest(messages: Sequence[Message]) -> str:
    """A sha256 over everything a prompt sends: roles, texts and image contents."""
    payload = [[m.role, m.text, [image.digest() for image in m.images]] for m in messages]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()

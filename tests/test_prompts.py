"""Prompts for model-backed representations, and the parsing of what models write back."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from procedure_rag import ProcedureChunker
from procedure_rag._models.text_model import ImagePart, Message
from procedure_rag._representations.llm.parse import OUTPUT_RULES, parse_list, parse_output
from procedure_rag._representations.llm.prompts import (
    JAPANESE_PROMPTS,
    PROMPT_TEXTS,
    PROMPT_VERSION,
    build_prompt,
    chunk_body,
    prompt_digest,
)
from procedure_rag._representations.types import RepresentationKind
from procedure_rag._types import Chunk

K = RepresentationKind
MODEL_KINDS = [
    kind for kind in K if kind not in (K.RAW, K.STEP, K.SENTENCE)
]  # the chunk's own text, never prompted
JA_CHAR = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
RECOVERY = Path("hololens") / "{language}" / "hololens-recovery.md"


@pytest.fixture(scope="module")
def chunks_by_language(tests_data: Path) -> dict[str, Chunk]:
    """The first child chunk with a heading path of the recovery page, per language."""
    chunker = ProcedureChunker()
    out = {}
    for language in ("en", "ja"):
        path = tests_data / str(RECOVERY).format(language=language)
        chunks = chunker.chunk(path.read_text(encoding="utf-8"), source_id=path.name)
        out[language] = next(c for c in chunks if c.level == "child" and c.section_path)
        assert out[language].language == language
    return out


# -- prompts ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", MODEL_KINDS)
@pytest.mark.parametrize("language", ["en", "ja"])
def test_prompt_is_in_the_chunk_language_and_holds_heading_and_text(
    chunks_by_language: dict[str, Chunk], language: str, kind: RepresentationKind
) -> None:
    chunk = chunks_by_language[language]
    system, user = build_prompt(chunk, kind)
    texts = PROMPT_TEXTS[language]

    assert (system.role, user.role) == ("system", "user")
    assert system.text == texts.system
    # The instructions are in the chunk's language: Japanese prompts hold Japanese,
    # English ones none at all (the chunk text in the user message aside).
    assert bool(JA_CHAR.search(system.text)) is (language == "ja")
    assert bool(JA_CHAR.search(texts.instructions[kind])) is (language == "ja")
    assert texts.instructions[kind] in user.text
    assert f"{texts.heading_label}: {' > '.join(chunk.section_path)}" in user.text
    assert chunk_body(chunk) in user.text
    assert user.images == ()


def test_chunk_body_drops_the_heading_line_only(chunks_by_language: dict[str, Chunk]) -> None:
    chunk = chunks_by_language["ja"]
    heading, _, rest = chunk.text.partition("\n")
    assert chunk_body(chunk) == rest.strip()
    assert chunk.section_path[-1] in heading


@pytest.mark.parametrize(
    ("kind", "wanted"),
    [
        (K.SUMMARY, "80〜120 文字"),
        (K.QUESTION, "3〜5 個"),
        (K.TABLE_SUMMARY, "在庫ゼロ"),
        (K.CODE_DOCSTRING, "引数"),
        (K.KEYWORDS, "箇条書き"),
        (K.IMAGE_CAPTION, "キャプション"),
    ],
)
def test_japanese_instructions_ask_for_what_the_kind_is_for(kind: RepresentationKind, wanted: str) -> None:
    assert wanted in JAPANESE_PROMPTS.instructions[kind]


def test_unknown_language_gets_english_prompts(chunks_by_language: dict[str, Chunk]) -> None:
    chunk = chunks_by_language["en"]
    other = replace(chunk, language="de")
    assert build_prompt(other, K.SUMMARY) == build_prompt(chunk, K.SUMMARY)


def test_image_caption_prompt_attaches_images_or_says_there_are_none(
    chunks_by_language: dict[str, Chunk],
) -> None:
    chunk = chunks_by_language["ja"]
    image = ImagePart(data=b"\x89PNG", url=None, mime_type="image/png")
    _, with_image = build_prompt(chunk, K.IMAGE_CAPTION, images=[image])
    _, without = build_prompt(chunk, K.IMAGE_CAPTION)
    assert with_image.images == (image,)
    assert JAPANESE_PROMPTS.no_image_note not in with_image.text
    assert JAPANESE_PROMPTS.no_image_note in without.text


@pytest.mark.parametrize(
    ("kind", "images", "message"),
    [
        (K.RAW, (), "no prompt for the 'raw' kind"),
        (K.STEP, (), "no prompt for the 'step' kind"),
        (K.SENTENCE, (), "no prompt for the 'sentence' kind"),
        (K.SUMMARY, (ImagePart(None, "https://x/a.png", "image/png"),), "images can only be sent"),
    ],
)
def test_build_prompt_rejects(
    chunks_by_language: dict[str, Chunk],
    kind: RepresentationKind,
    images: tuple[ImagePart, ...],
    message: str,
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        build_prompt(chunks_by_language["en"], kind, images=images)


def test_prompt_digest_covers_text_and_image_bytes(chunks_by_language: dict[str, Chunk]) -> None:
    chunk = chunks_by_language["en"]
    png = ImagePart(data=b"one", url=None, mime_type="image/png")
    digests = {
        prompt_digest(build_prompt(chunk, K.SUMMARY)),
        prompt_digest(build_prompt(chunk, K.QUESTION)),
        prompt_digest(build_prompt(chunk, K.IMAGE_CAPTION, images=[png])),
        prompt_digest(build_prompt(chunk, K.IMAGE_CAPTION, images=[ImagePart(b"two", None, "image/png")])),
    }
    assert len(digests) == 4
    assert prompt_digest(build_prompt(chunk, K.SUMMARY)) == prompt_digest(build_prompt(chunk, K.SUMMARY))
    assert PROMPT_VERSION


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ImagePart(None, None, "image/png"), "an ImagePart needs data or url"),
        (lambda: ImagePart(b"x", None, "text/plain"), "mime_type must be an image type"),
        (lambda: Message("tool", "x"), "role must be one of system, user, assistant, got 'tool'"),
    ],
)
def test_message_values_are_validated(make: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        make()  # type: ignore[operator]


def test_image_part_as_url() -> None:
    assert ImagePart(b"ab", None, "image/png").as_url() == "data:image/png;base64,YWI="
    assert ImagePart(None, "https://example.com/a.png", "image/png").as_url() == "https://example.com/a.png"


# -- parsing ------------------------------------------------------------------------------

THREE = ["Reset the device", "Reflash with ARC", "Hold the power button"]


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("1. Reset the device\n2. Reflash with ARC\n3. Hold the power button", id="numbered"),
        pytest.param(
            "1) Reset the device\n2) Reflash with ARC\n3) Hold the power button", id="paren-numbered"
        ),
        pytest.param("(1) Reset the device\n(2) Reflash with ARC\n(3) Hold the power button", id="bracketed"),
        pytest.param("- Reset the device\n- Reflash with ARC\n- Hold the power button", id="dash-bullets"),
        pytest.param(
            "* Reset the device\n* **Reflash with ARC**\n• Hold the power button", id="mixed-bullets"
        ),
        pytest.param('["Reset the device", "Reflash with ARC", "Hold the power button"]', id="json-array"),
        pytest.param(
            '```json\n{"items": ["Reset the device", "Reflash with ARC", "Hold the power button"]}\n```',
            id="fenced-json-object",
        ),
        pytest.param("Reset the device\nReflash with ARC\n\nHold the power button\n", id="one-per-line"),
        pytest.param("Reset the device, Reflash with ARC, Hold the power button", id="comma-separated"),
        pytest.param(
            "Here are the items:\n1. Reset the device\n2. Reflash with ARC\n3. Hold the power button\n"
            "Hope it helps!",
            id="preamble-and-remark-dropped",
        ),
    ],
)
def test_parse_list_english(reply: str) -> None:
    assert parse_list(reply) == THREE


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(
            "１．デバイスを再起動\n２．ARC で再フラッシュ\n３．電源ボタンを長押し", id="full-width-numbers"
        ),
        pytest.param("①デバイスを再起動\n②ARC で再フラッシュ\n③電源ボタンを長押し", id="circled-numbers"),
        pytest.param("・デバイスを再起動\n・ARC で再フラッシュ\n・電源ボタンを長押し", id="nakaguro-bullets"),
        pytest.param("デバイスを再起動、ARC で再フラッシュ、電源ボタンを長押し", id="touten-separated"),
        pytest.param(
            "（1）デバイスを再起動\n（2）ARC で再フラッシュ\n（3）電源ボタンを長押し", id="full-width-parens"
        ),
    ],
)
def test_parse_list_japanese(reply: str) -> None:
    assert parse_list(reply) == ["デバイスを再起動", "ARC で再フラッシュ", "電源ボタンを長押し"]


@pytest.mark.parametrize("reply", ["", "   \n ", "[]", "```\n```", "- \n- \n"])
def test_parse_list_of_nothing_is_empty(reply: str) -> None:
    assert parse_list(reply) == []


SOURCE_EN = (
    "Section: Restart HoloLens 2\nIf the device is unresponsive, press and hold the Power button for "
    "15 seconds until all the indicator lights turn off, then press it again to restart."
)
SOURCE_JA = (
    "関連見出し: HoloLens 2 を再起動する\nデバイスが応答しない場合は、"
    "すべてのインジケーター ライトが消えるまで電源ボタンを 15 秒間長押しし、もう一度押して再起動します。"
)
SOURCES = {"en": SOURCE_EN, "ja": SOURCE_JA}


@pytest.mark.parametrize(
    ("kind", "language", "reply", "expected"),
    [
        pytest.param(
            K.SUMMARY,
            "en",
            "Summary: Restart an unresponsive HoloLens 2 by holding Power for 15 seconds.",
            ("Restart an unresponsive HoloLens 2 by holding Power for 15 seconds.",),
            id="summary-label-stripped",
        ),
        pytest.param(
            K.QUESTION,
            "ja",
            "1. HoloLens 2 が反応しないときは？\n2. 電源ボタンは何秒押す？\n"
            "3. HoloLens 2 が反応しないときは？",
            ("HoloLens 2 が反応しないときは？", "電源ボタンは何秒押す？"),
            id="questions-deduplicated",
        ),
        pytest.param(
            K.KEYWORDS,
            "ja",
            "- HoloLens 2\n- 再起動\n- 電源ボタン\n- 15 秒",
            ("HoloLens 2、再起動、電源ボタン、15 秒",),
            id="keywords-joined-ja",
        ),
        pytest.param(
            K.KEYWORDS,
            "en",
            '["HoloLens 2", "restart", "Power button", "15 seconds"]',
            ("HoloLens 2, restart, Power button, 15 seconds",),
            id="keywords-joined-en",
        ),
        pytest.param(
            K.IMAGE_CAPTION,
            "en",
            "Caption: HoloLens 2 power button\nDescription: The button sits on the back of the headband.",
            ("HoloLens 2 power button\nThe button sits on the back of the headband.",),
            id="caption-and-description",
        ),
        pytest.param(
            K.CODE_DOCSTRING,
            "en",
            '"""Restart the device.\n\nArgs:\n    force: Skip the prompt.\n"""',
            ("Restart the device.\n\nArgs:\n    force: Skip the prompt.",),
            id="docstring-quotes-stripped",
        ),
    ],
)
def test_parse_output_accepts(
    kind: RepresentationKind, language: str, reply: str, expected: tuple[str, ...]
) -> None:
    assert parse_output(kind, reply, source_text=SOURCES[language], language=language) == expected


def test_parse_output_keeps_at_most_max_items() -> None:
    reply = "\n".join(f"{n}. How do I restart HoloLens 2 in case {n}?" for n in range(1, 13))
    parsed = parse_output(K.QUESTION, reply, source_text=SOURCE_EN, language="en")
    assert len(parsed) == OUTPUT_RULES[K.QUESTION].max_items


@pytest.mark.parametrize(
    ("kind", "language", "reply", "message"),
    [
        pytest.param(K.SUMMARY, "en", "", "summary: empty output", id="empty"),
        pytest.param(K.SUMMARY, "en", " \n\t ", "summary: empty output", id="whitespace"),
        pytest.param(K.SUMMARY, "en", "!!! ??? ...", "summary: output holds no words", id="punctuation"),
        pytest.param(K.SUMMARY, "en", "1.\n2.\n3.", "summary: item 1 holds no words", id="bare-markers"),
        pytest.param(K.QUESTION, "en", "[]", "question: output holds no words", id="empty-json"),
        pytest.param(
            K.QUESTION,
            "en",
            '["How do I restart HoloLens?"]',
            "question: 1 item(s) in the output",
            id="one-item",
        ),
        pytest.param(
            K.QUESTION, "en", "Sure! Here they are.", "question: 1 item(s) in the output", id="no-list"
        ),
        pytest.param(K.SUMMARY, "en", SOURCE_EN, "summary: output echoes the chunk text", id="echo"),
        pytest.param(
            K.SUMMARY,
            "ja",
            SOURCE_JA.partition("\n")[2],
            "summary: output echoes the chunk text",
            id="echo-body",
        ),
        pytest.param(
            K.SUMMARY,
            "ja",
            "Restart HoloLens 2 by holding the Power button for 15 seconds.",
            "summary: output is not in Japanese",
            id="english-for-ja",
        ),
        pytest.param(
            K.QUESTION,
            "ja",
            "1. HoloLens 2 が反応しないときは？\n2. How long do I hold Power?",
            "question: output is not in Japanese",
            id="one-english-question-for-ja",
        ),
        pytest.param(
            K.SUMMARY,
            "en",
            "電源ボタンを 15 秒間長押しして HoloLens 2 を再起動します。",
            "summary: output is not in English",
            id="japanese-for-en",
        ),
        pytest.param(
            K.SUMMARY,
            "en",
            "I'm sorry, but I can't help with that.",
            "summary: the model declined",
            id="refusal",
        ),
        pytest.param(
            K.SUMMARY, "en", "Restart " * 60, "summary: item 1 is 479 characters long", id="too-long"
        ),
        pytest.param(
            K.QUESTION, "en", "- Why?\n- How?", "question: item 1 is 4 characters long", id="too-short"
        ),
        pytest.param(K.RAW, "en", "anything", "raw: not a model-generated kind", id="raw"),
        pytest.param(K.STEP, "en", "anything", "step: not a model-generated kind", id="step"),
        pytest.param(K.SENTENCE, "en", "anything", "sentence: not a model-generated kind", id="sentence"),
    ],
)
def test_parse_output_rejects(kind: RepresentationKind, language: str, reply: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_output(kind, reply, source_text=SOURCES[language], language=language)

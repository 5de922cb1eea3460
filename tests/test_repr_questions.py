"""Questions from step fields and headings: rule tables, then real chunks."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from procedure_rag import Chunk, ChunkerOptions, ChunkLevel, ChunkType, ProcedureStep, chunk
from procedure_rag._representations.offline.questions import MAX_QUESTIONS, MIN_QUESTIONS, questions
from procedure_rag._representations.offline.questions_en import ENGLISH_QUESTIONS
from procedure_rag._representations.offline.questions_ja import JAPANESE_QUESTIONS

DATA = Path(__file__).resolve().parent / "data"
_KANA = re.compile(r"[\u3040-\u30ff]")


@cache
def _children(relative: str) -> tuple[Chunk, ...]:
    return tuple(c for c in chunk((DATA / relative).read_text(encoding="utf-8"), source_id=relative))


def _find(relative: str, heading: str) -> Chunk:
    """The section's procedure: its first chunk that holds steps, else its first chunk."""
    section = [c for c in _children(relative) if c.section_path and c.section_path[-1] == heading]
    return next((c for c in section if c.steps), section[0])


def _procedure(heading: str, language: str, *steps: ProcedureStep) -> Chunk:
    return Chunk(
        chunk_id="c",
        text=f"{heading}\n1. step",
        chunk_type=ChunkType.PROCEDURE,
        level=ChunkLevel.CHILD,
        section_path=(heading,),
        source_id="s",
        language=language,
        steps=steps or (ProcedureStep(number="1.", text="step", action="step"),),
    )


@pytest.mark.parametrize(
    ("heading", "language", "expected"),
    [
        ("Hard-restart procedure", "en", "What is the hard-restart procedure?"),
        ("Standard restart procedure", "en", "What is the standard restart procedure?"),
        ("Connecting to Wi-Fi after setup", "en", "How do I connect to Wi-Fi after setup?"),
        ("Configuring Autopilot for HoloLens 2", "en", "How do I configure Autopilot for HoloLens 2?"),
        ("Restart the device", "en", "How do I restart the device?"),
        ("Clean-reflash the device", "en", "How do I clean-reflash the device?"),
        ("How to reset your HoloLens", "en", "How do I reset my HoloLens?"),
        ("2. Enable MDM automatic enrollment", "en", "How do I enable MDM automatic enrollment?"),
        # gerunds back to their verb: known verbs first, then the spelling rules
        ("Deleting a Samsung account from the TV", "en", "How do I delete a Samsung account from the TV?"),
        ("Diagnosing TV operational issues", "en", "How do I diagnose TV operational issues?"),
        ("Using the sleep timer", "en", "How do I use the sleep timer?"),
        ("Controlling the TV with a keyboard", "en", "How do I control the TV with a keyboard?"),
        ("Scheduling a recording", "en", "How do I schedule a recording?"),
        ("Sharing content", "en", "How do I share content?"),
        ("Setting up the remote", "en", "How do I set up the remote?"),
        ("ハード再起動の手順", "ja", "ハード再起動の手順は？"),
        ("ハード再起動の手順", "ja", "ハード再起動するには？"),
        ("標準の再起動手順", "ja", "標準の再起動の手順は？"),
        ("デバイスをリセットする", "ja", "デバイスをリセットするには？"),
        ("デバイスを再起動します", "ja", "デバイスを再起動するには？"),
        ("2 地域情報の登録", "ja", "地域情報を登録するには？"),
        ("2-1 《履歴情報を登録する》", "ja", "履歴情報を登録するには？"),
        ("HoloLens OS の要件を確認します:", "ja", "HoloLens OS の要件を確認するには？"),
        # every heading number a reader keeps in the heading text is left out
        ("1.2 Setting up the remote", "en", "How do I set up the remote?"),
        ("(a) Restart the device", "en", "How do I restart the device?"),
        ("第一章　デバイスをリセットする", "ja", "デバイスをリセットするには？"),
        ("第3項 デバイスを再起動します", "ja", "デバイスを再起動するには？"),
        ("２．３ デバイスをリセットする", "ja", "デバイスをリセットするには？"),
        ("① デバイスをリセットする", "ja", "デバイスをリセットするには？"),
    ],
)
def test_heading_becomes_a_question(heading: str, language: str, expected: str) -> None:
    assert expected in questions(_procedure(heading, language))


@pytest.mark.parametrize("heading", ["During setup", "Something went wrong", "Morning routine"])
def test_a_word_ending_in_ing_that_is_no_gerund_makes_no_verb(heading: str) -> None:
    first = heading.split(maxsplit=1)[0].lower()
    assert not any(q.startswith("How do I") for q in questions(_procedure(heading, "en"))), first


@pytest.mark.parametrize(
    ("condition", "language", "expected"),
    [
        (
            "If the standard reset procedure didn't work",
            "en",
            "What should I do if the standard reset procedure didn't work?",
        ),
        ("When your device is not detected", "en", "What should I do when my device is not detected?"),
        ("If you are prompted for a password", "en", "What should I do if I am prompted for a password?"),
        ("If so", "en", ""),
        (
            "標準のリセット手順が機能しない場合",
            "ja",
            "標準のリセット手順が機能しない場合はどうすればよいですか？",
        ),
        ("HoloLens の電源が入っているとき", "ja", "HoloLens の電源が入っているときはどうすればよいですか？"),
        (
            "ARC がデバイスを検出できなかったら",
            "ja",
            "ARC がデバイスを検出できなかったらどうすればよいですか？",
        ),
        ("次の場合", "ja", ""),
    ],
)
def test_condition_becomes_a_question(condition: str, language: str, expected: str) -> None:
    words = JAPANESE_QUESTIONS if language == "ja" else ENGLISH_QUESTIONS
    assert words.condition(condition) == expected


@pytest.mark.parametrize(
    ("language", "step", "expected"),
    [
        (
            "en",
            ProcedureStep(
                number="1.", text="Select **Settings**.", action="Select Settings.", target="Settings"
            ),
            "Where do I select Settings?",
        ),
        (
            "en",
            ProcedureStep(
                number="2.",
                text="Press the **power** button.",
                action="Press the power button.",
                target="power",
                result="The LEDs light up.",
            ),
            "What happens after I press the power button?",
        ),
        (
            "ja",
            ProcedureStep(
                number="1.", text="**[設定]** を選択します。", action="[設定] を選択します。", target="設定"
            ),
            "[設定]はどこで選択しますか？",
        ),
        (
            "ja",
            ProcedureStep(
                number="3.",
                text="**[電源]** ボタンを短く押します。",
                action="[電源] ボタンを短く押します。",
                target="電源",
                result="LED が点灯します。",
            ),
            "[電源] ボタンを短く押すとどうなりますか？",
        ),
        (
            "en",
            ProcedureStep(number="1.", text="Reset it.", action="Reset it.", caution="Note: data is erased."),
            "What should I watch out for when I reset the device?",
        ),
        (
            "ja",
            ProcedureStep(
                number="1.", text="実行します。", action="実行します。", caution="※データは消去されます。"
            ),
            "デバイスをリセットするときの注意点は？",
        ),
    ],
)
def test_step_fields_become_questions(language: str, step: ProcedureStep, expected: str) -> None:
    heading = "デバイスをリセットする" if language == "ja" else "Reset the device"
    assert expected in questions(_procedure(heading, language, step))


@pytest.mark.parametrize(
    ("relative", "heading", "expected"),
    [
        (
            "hololens/en/hololens-recovery.md",
            "Hard-restart procedure",
            "What should I do if the standard reset procedure didn't work?",
        ),
        (
            "hololens/en/hololens-recovery.md",
            "Reset the device",
            "Can I reset my device directly from my headset?",
        ),
        (
            "hololens/en/hololens-network.md",
            "Connecting to Wi-Fi after setup",
            "How do I connect to Wi-Fi after setup?",
        ),
        (
            "hololens/ja/hololens-recovery.md",
            "ハード再起動の手順",
            "標準のリセット手順が機能しない場合はどうすればよいですか？",
        ),
        (
            "hololens/ja/hololens-recovery.md",
            "デバイスをリセットする",
            "ヘッドセットから直接デバイスをリセットできますか？",
        ),
        (
            "ja-native/areamanagement-dashboard-tool/markdown/manual/userMan.md",
            "2 地域情報の登録",
            "[地域情報登録] ボタンはいつ押しますか？",
        ),
    ],
)
def test_real_chunks_ask_what_they_answer(relative: str, heading: str, expected: str) -> None:
    assert expected in questions(_find(relative, heading))


REAL = [
    "hololens/en/hololens-recovery.md",
    "hololens/en/hololens-network.md",
    "hololens/ja/hololens-recovery.md",
    "hololens/ja/hololens2-autopilot.md",
    "ja-native/areamanagement-dashboard-tool/markdown/manual/userMan.md",
    "ja-native/growi-docs/docs/ja/guide/features/page_operation.md",
    "emanual/galaxy-s10-sections-57-65.txt",
]


def _key(question: str) -> str:
    return re.sub(r"[\W_]+", "", question).casefold()


@pytest.mark.parametrize("relative", REAL)
def test_question_invariants_on_real_chunks(relative: str) -> None:
    for c in _children(relative):
        asked = questions(c)
        assert MIN_QUESTIONS <= len(asked) <= MAX_QUESTIONS, (c.section_path, asked)
        assert len({_key(q) for q in asked}) == len(asked), asked
        japanese = [bool(_KANA.search(q)) for q in asked]
        assert all(japanese) if c.language == "ja" else not any(japanese), asked


@pytest.mark.parametrize("heading", ["1.2 Setting up the remote", "第1章 リモコンを設定する"])
def test_a_plain_text_heading_number_stays_out_of_the_questions(heading: str) -> None:
    """The plain-text reader keeps the number in the heading (and the section path), not in questions."""
    text = f"{heading}\n\n1. Open the cover.\n2. Insert the batteries.\n"
    (child,) = (
        c
        for c in chunk(text, source_id="s", options=ChunkerOptions(source_format="text"))
        if c.level is ChunkLevel.CHILD
    )
    assert child.section_path == (heading,)
    number = heading.split(maxsplit=1)[0]
    asked = questions(child)
    assert asked
    assert not [q for q in asked if number in q]

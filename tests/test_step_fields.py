"""Step fields through the chunker (issue 19): notes as cautions, sentence ends, step numbers.

The rules are the step-field annotation guide's (``../shared/data/step-fields/README.md``);
``tests/test_step_rules.py`` has the one-sentence tables, these cases need a whole
document: a note bound to its step, a sub-step's own note, a ※ bullet under a step, a
hard line break after an item's title, and the step numbers in the chunk metadata.
"""

from __future__ import annotations

import json

import pytest

from procedure_rag import (
    ChunkerOptions,
    ElementKind,
    LayoutElement,
    ProcedureChunker,
    ProcedureStep,
    chunk_from_metadata,
    chunk_metadata,
    read_metadata,
)
from procedure_rag._language.lexicons import LEXICONS, split_sentences
from procedure_rag._language.numbering import step_number
from procedure_rag._language.step_fields import parse_step
from procedure_rag._store.writer import FILTER_EXCLUDED_KEYS


def steps_of(markdown: str) -> list[ProcedureStep]:
    options = ChunkerOptions(chunk_size=400, emit_parents=False, source_format="markdown")
    chunks = ProcedureChunker(options).chunk(markdown, source_id="doc")
    seen: dict[str, ProcedureStep] = {}
    for chunk in chunks:
        for step in chunk.steps:
            seen.setdefault(step.element_id, step)
    return list(seen.values())


def parsed(text: str, lang: str) -> ProcedureStep:
    return parse_step(LayoutElement("e", ElementKind.LIST_ITEM, text, 0, number="1."), LEXICONS[lang])


# ----- the cases ---------------------------------------------------------------------


def test_a_note_marked_with_the_reference_mark_is_the_steps_caution_not_a_condition() -> None:
    steps = steps_of(
        "# 経費精算\n\n1. 申請画面を開きます。\n2. [修正] を選択します。\n"
        "3. 金額欄に修正後の金額を入力します。\n\n※ 10万円を超える場合は、部長承認が必要です。\n"
    )
    third = steps[2]
    assert third.caution == "10万円を超える場合は、部長承認が必要です。"
    assert third.condition == ""
    assert third.target == "金額"
    assert [s.caution for s in steps[:2]] == ["", ""]


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("Open Settings, e.g. the gear icon.", "Open Settings, e.g. the gear icon."),
        ("See Fig. 3 and select Reset.", "See Fig. 3 and select Reset."),
        (
            "Select No. 2 in the list, i.e. the second entry.",
            "Select No. 2 in the list, i.e. the second entry.",
        ),
        ("Add the apps, etc. then restart.", "Add the apps, etc. then restart."),
    ],
)
def test_abbreviations_do_not_end_the_action(text: str, action: str) -> None:
    assert parsed(text, "en").action == action


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("Select No. Then close the app.", ["Select No.", " Then close the app."]),
        ("Add apps etc. Then save.", ["Add apps etc.", " Then save."]),
        ("Create a profile (see Fig. 2.). Each one.", ["Create a profile (see Fig. 2.).", " Each one."]),
        ("Toggle **Use it?** option to Yes. Done.", ["Toggle **Use it?** option to Yes.", " Done."]),
        ("asked **Who owns it?** Select it.", ["asked **Who owns it?**", " Select it."]),
        ("「保存しました。」と表示されます。次へ。", ["「保存しました。」と表示されます。", "次へ。"]),
        ("例. `example.com. IN CNAME x`", ["例. `example.com. IN CNAME x`"]),
        ("Run `setup.exe. Then` now. Next.", ["Run `setup.exe. Then` now.", " Next."]),
        ("Press. Open (unclosed. Then x.", ["Press.", " Open (unclosed.", " Then x."]),
    ],
)
def test_sentence_ends(text: str, pieces: list[str]) -> None:
    assert split_sentences(text) == pieces
    assert "".join(split_sentences(text)) == text


# ----- notes bound to steps ---------------------------------------------------------------------


def test_a_note_right_after_a_sub_step_is_the_sub_steps() -> None:
    steps = steps_of(
        "# Heat\n\n1. If it overheats, follow these steps:\n"
        "    1. Ensure **Full** telemetry is enabled.\n"
        "    >[!CAUTION]\n    > Telemetry is not retroactive.\n\n"
        "    2. Reproduce the heating issue.\n"
    )
    parent, first, second = steps
    assert first.caution == "Telemetry is not retroactive."
    assert parent.caution == second.caution == ""


def test_a_note_after_a_paragraph_inside_an_item_is_the_items() -> None:
    steps = steps_of(
        "# Wi-Fi\n\n1. Create a profile for your Wi-Fi network.\n"
        "    - **Manual**: Enter the proxy address.\n\n"
        "    For more information, see the proxy page.\n\n"
        "    > [!NOTE]\n    > Assign the profile to device groups.\n\n"
        "    > [!TIP]\n    > You can also export a profile from a PC.\n\n"
        "2. Assign the profile.\n"
    )
    item, bullet, _ = steps
    assert item.caution == "Assign the profile to device groups."  # the tip is no caution
    assert bullet.caution == ""


def test_a_bulleted_note_under_a_step_is_its_caution() -> None:
    steps = steps_of(
        "# ドメイン\n\n1. 指定するドメインの発行\n2. 独自ドメインを CNAME レコードに設定\n"
        "    - 例. `example.com. IN CNAME production.growi.cloud.`\n"
        "    - ※独自ドメインと IP アドレスを直接紐づけることは推奨しません。\n"
        "3. 証明書の用意\n"
    )
    second = next(s for s in steps if s.number == "2.")
    assert second.caution == "独自ドメインと IP アドレスを直接紐づけることは推奨しません。"
    assert next(s for s in steps if s.number == "3.").caution == ""


def test_a_tip_alone_gives_no_caution() -> None:
    options = ChunkerOptions(chunk_size=400, emit_parents=False, source_format="markdown")
    (chunk,) = ProcedureChunker(options).chunk(
        "# Start\n\n1. Select **Start**.\n\n   > [!TIP]\n   > You can also say Go to Start.\n", source_id="d"
    )
    assert chunk.steps[0].caution == ""
    assert chunk_metadata(chunk)["has_caution"] is False
    assert "You can also say Go to Start." in chunk.text  # the text keeps the tip


def test_a_hard_line_break_after_an_items_title_keeps_the_title_apart() -> None:
    steps = steps_of(
        "# ログイン画面\n\n①ログインボタン  \n登録済みのユーザーIDとパスワードを入力後、"
        "ログインボタンを押下して本システムへログインします。\n\n"
        "②サインアップ  \n新規にユーザを登録する場合は、このボタンをクリックします。  \n"
        "なお、このページに登録できるユーザは住民だけです。\n"
    )
    login, signup = steps
    assert login.text.startswith("ログインボタン\n登録済み")  # not one word 「ログインボタン登録済み」
    assert (login.target, login.condition) == ("ログイン", "登録済みのユーザーIDとパスワードを入力後")
    assert login.action == "ログインボタンを押下して本システムへログインします。"
    assert (signup.target, signup.condition) == ("サインアップ", "新規にユーザを登録する場合は")
    assert signup.caution == "このページに登録できるユーザは住民だけです。"


# ----- step numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("marker", "number"),
    [
        ("1.", "1"),
        ("12.", "12"),
        ("1)", "1"),
        ("2）", "2"),
        ("１．", "1"),
        ("(1)", "(1)"),
        ("（１）", "(1)"),
        ("(a)", "(a)"),
        ("①", "①"),
        ("❶", "❶"),
        ("A-1", "A-1"),
        ("B-3.", "B-3"),
        ("Step 2", "2"),
        ("Step 2:", "2"),
        ("STEP 3", "3"),
        ("手順3", "3"),
        ("手順３：", "3"),
        ("ステップ1", "1"),
        ("a)", "a"),
        ("iv.", "iv"),
        ("-", ""),
        ("・", ""),
        ("", ""),
    ],
)
def test_step_number_is_the_marker_without_its_punctuation(marker: str, number: str) -> None:
    assert step_number(marker) == number
    assert ProcedureStep(number=marker, text="x").step_number == number


def test_step_numbers_in_the_chunk_metadata() -> None:
    options = ChunkerOptions(chunk_size=400, emit_parents=False, source_format="markdown")
    (chunk,) = ProcedureChunker(options).chunk(
        "# Reset\n\n1. Open **Settings**.\n1. Select **Reset**.\n    - Wait a moment.\n1. Select **OK**.\n",
        source_id="d",
    )
    meta = chunk_metadata(chunk)
    assert isinstance(meta["step_numbers"], str)  # a scalar for any store
    decoded = read_metadata(meta)
    assert decoded["step_numbers"] == ["1", "2", "3"]  # Markdown's 1. 1. 1. as rendered; the bullet has none
    assert [(s["number"], s["step_number"]) for s in decoded["steps"]] == [
        ("1.", "1"),
        ("2.", "2"),
        ("-", ""),
        ("3.", "3"),
    ]
    assert [s["step_number"] for s in decoded["steps"] if s["step_number"] == "3"] == ["3"]
    assert chunk_metadata(chunk_from_metadata(chunk.text, meta)) == meta
    # on vectors, for a callable filter: json.loads(doc.metadata["step_numbers"])
    assert "step_numbers" not in FILTER_EXCLUDED_KEYS
    assert json.loads(meta["step_numbers"]) == ["1", "2", "3"]


def test_a_lexicon_without_step_words_still_parses_steps() -> None:
    # A user's own language (dataclasses.replace of a built-in lexicon) starts with no step words.
    from dataclasses import replace  # noqa: PLC0415

    from procedure_rag._language.step_words import NO_STEP_WORDS  # noqa: PLC0415

    bare = replace(LEXICONS["en"], step_words=NO_STEP_WORDS)
    step = parse_step(
        LayoutElement("e", ElementKind.LIST_ITEM, "Select **Save**. Then wait.", 0, number="1."), bare
    )
    assert step.action == "Select Save."  # the first sentence
    assert (step.condition, step.caution) == ("", "")
    assert step.step_number == "1"


def test_kangxi_radicals_from_pdf_text_read_as_kanji() -> None:
    # Chromium's PDFs extract some kanji as Kangxi radicals (⽰ U+2F70 for 示): the rules still apply.
    step = parsed("「保存」ボタンを押すと、確認画⾯が表⽰されます。", "ja")
    assert (step.action, step.result) == ("「保存」ボタンを押す", "確認画面が表示されます。")


def test_steps_share_equal_strings_instead_of_holding_copies() -> None:
    # Numbers and short targets recur all through a manual, and many actions are the
    # whole step: a kept chunk list holds each once (issue 20's memory).
    first = steps_of("# A\n\n1. Open the cover.\n2. Select **OK**.\n")
    second = steps_of("# B\n\n1. Close the lid.\n2. Select **OK** again.\n")
    assert [s.number for s in first] == [s.number for s in second] == ["1.", "2."]
    assert all(a.number is b.number for a, b in zip(first, second, strict=True))
    assert first[1].target == second[1].target == "OK"
    assert first[1].target is second[1].target
    plain = first[0]
    assert plain.action == plain.text == "Open the cover."
    assert plain.action is plain.text
    marked = first[1]  # the action drops the markup, so it is its own string
    assert marked.action == "Select OK."
    assert marked.text == "Select **OK**."

"""The plain-text reader: numbering, headings, lists, notes, tables, pages and invariants."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procedure_rag._language.numbering import DEFAULT_STEP_STYLES
from procedure_rag._language.text import title_case
from procedure_rag._readers.furniture_rules import is_navigation
from procedure_rag._readers.options import ReaderOptions
from procedure_rag._readers.plaintext import iter_plain_text, read_plain_text
from procedure_rag._types import ElementKind, LayoutElement, Span

K = ElementKind


def read(text: str, source_id: str = "doc") -> list[LayoutElement]:
    return read_plain_text(text, source_id=source_id)


def kinds(elements: list[LayoutElement]) -> list[ElementKind]:
    return [e.kind for e in elements]


def assert_invariants(text: str, elements: list[LayoutElement], source_id: str = "doc") -> None:
    """Spans cover every non-whitespace character, in order, without overlap; ids follow order."""
    covered = bytearray(len(text))
    last_end = 0
    for i, e in enumerate(elements):
        assert e.order == i
        assert e.element_id == f"{source_id}#e{i}"
        assert e.span is not None
        assert e.span.start >= last_end, f"element {i} overlaps the one before"
        assert e.span.end <= len(text)
        last_end = e.span.end
        covered[e.span.start : e.span.end] = b"\x01" * (e.span.end - e.span.start)
    lost = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert lost == [], f"characters not covered: {[text[i] for i in lost[:10]]}"


# ----- numbering styles -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "number", "ordered", "text"),
    [
        ("1. Open the Settings app.", "1.", True, "Open the Settings app."),
        ("1. 設定画面を開きます。", "1.", True, "設定画面を開きます。"),
        ("2) Tap Accounts.", "2)", True, "Tap Accounts."),
        ("2） アカウントを選択します。", "2）", True, "アカウントを選択します。"),
        ("１．設定画面を開きます。", "１．", True, "設定画面を開きます。"),
        ("① Turn on the power.", "①", True, "Turn on the power."),
        ("①電源を入れます。", "①", True, "電源を入れます。"),
        ("(1) Enter the password.", "(1)", True, "Enter the password."),
        ("（１）パスワードを入力します。", "（１）", True, "パスワードを入力します。"),
        ("A-1 Open the cover.", "A-1", True, "Open the cover."),
        ("B-3 カバーを閉じます。", "B-3", True, "カバーを閉じます。"),
        ("Step 2 Tap OK.", "Step 2", True, "Tap OK."),
        ("STEP 3: Restart the device.", "STEP 3:", True, "Restart the device."),
        ("手順3 再起動します。", "手順3", True, "再起動します。"),
        ("ステップ1 電源を切ります。", "ステップ1", True, "電源を切ります。"),
        ("a) Select a network.", "a)", True, "Select a network."),
        ("iv. Confirm the settings.", "iv.", True, "Confirm the settings."),
        ("#. Build the project.", "#.", True, "Build the project."),
        ("- Check the cable.", "-", False, "Check the cable."),
        ("* Check the cable.", "*", False, "Check the cable."),
        ("• Check the cable.", "•", False, "Check the cable."),
        ("・ケーブルを確認します。", "・", False, "ケーブルを確認します。"),
        ("● 電源を確認します。", "●", False, "電源を確認します。"),
        # Japanese text runs on from "1." without a space: a word in kanji or katakana, or a
        # Latin word that a Japanese one follows
        ("2.設定画面を開きます。", "2.", True, "設定画面を開きます。"),
        ("3.OKボタンを押します。", "3.", True, "OKボタンを押します。"),
        ("4.mask が切り出されているか確認する", "4.", True, "mask が切り出されているか確認する"),
        # a number the PDF maps to no character (U+FFFD, as a NUL of extracted text shows)
        ("\ufffd. データセットを選択する", "\ufffd.", True, "データセットを選択する"),
        ("\ufffd) Open the cover.", "\ufffd)", True, "Open the cover."),
    ],
)
def test_step_marker_styles(line: str, number: str, ordered: bool, text: str) -> None:
    (item,) = read(line)
    assert item.kind is K.LIST_ITEM
    assert (item.number, item.ordered, item.text, item.level) == (number, ordered, text, 0)
    assert item.list_id == "doc#l1"
    assert item.parent_id is None


@pytest.mark.parametrize(
    "line",
    [
        "-not a bullet",
        "--verbose is an option.",
        "*emphasis* is not a bullet.",
        "1.5 times faster than before.",
        "3.Net Framework is required.",
        "1.で指定したファイルだけが上書きされる。",  # step 1 named, a particle after it
        "\ufffd is shown for a character the font does not map.",
    ],
)
def test_lines_that_only_look_like_markers_are_text(line: str) -> None:
    (el,) = read(line)
    assert el.kind is K.TEXT


# ----- heading styles ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "level", "number", "text"),
    [
        # a number stays in the heading text (it reaches the section path, as in Markdown)
        ("第1章 はじめに", 1, "第1章", "第1章 はじめに"),
        ("第一章　概要", 1, "第一章", "第一章　概要"),
        ("第2節 設定の変更", 2, "第2節", "第2節 設定の変更"),
        ("第3項 詳細", 3, "第3項", "第3項 詳細"),
        ("1.1 Overview", 2, "1.1", "1.1 Overview"),
        ("1.1. 概要", 2, "1.1.", "1.1. 概要"),
        ("2.3.1 Network settings", 3, "2.3.1", "2.3.1 Network settings"),
        ("２．３ ネットワーク設定", 2, "２．３", "２．３ ネットワーク設定"),
        ("第4章", 1, "第4章", "第4章"),
        # a symbol is decoration: left out
        ("【操作手順】", 2, "", "操作手順"),
        ("■ 設定方法", 3, "", "設定方法"),
        ("■ Before you begin", 3, "", "Before you begin"),
    ],
)
def test_heading_styles(line: str, level: int, number: str, text: str) -> None:
    heading, body = read(f"{line}\nThe body of the section follows here.\n")
    assert heading.kind is K.SECTION_HEADER
    assert (heading.level, heading.number, heading.text) == (level, number, text)
    assert heading.hint("raw") == line
    assert body.kind is K.TEXT


@pytest.mark.parametrize(
    "line",
    [
        "第1章で説明したとおり、設定は必要です。",  # a sentence that starts with a chapter reference
        "■ 本製品をご使用になる前に必ずお読みください。",
        "1.5 GHz and faster processors are supported for this mode of operation.",
    ],
)
def test_heading_numbers_in_sentences_are_not_headings(line: str) -> None:
    assert K.SECTION_HEADER not in kinds(read(f"前の文です。\n{line}\n"))


def test_underlined_titles_are_headings_with_levels_by_underline() -> None:
    text = (
        "=====\nInstall\n=====\n\nIntro.\n\n"
        "1. Prepare\n----------\n\nBody.\n\n"
        "1.1. Time zone\n~~~~~~~~~\n\nSet it.\n"
    )
    heads = [e for e in read(text) if e.kind is K.SECTION_HEADER]
    assert [(h.text, h.level, h.number) for h in heads] == [
        ("Install", 1, ""),
        ("1. Prepare", 2, "1."),
        ("1.1. Time zone", 3, "1.1."),
    ]
    assert_invariants(text, read(text))


# ----- numbered lines: heading or step ----------------------------------------------------


def test_numbered_line_introducing_subsections_is_a_heading() -> None:
    text = "1. 事前準備\n\nインストールの前に確認します。\n\n1.1. タイムゾーンを設定する\n\n設定します。\n"
    els = read(text)
    assert [(e.kind, e.number, e.text) for e in els[:1]] == [(K.SECTION_HEADER, "1.", "1. 事前準備")]
    assert els[2].kind is K.SECTION_HEADER
    assert els[2].level > els[0].level


def test_numbered_line_with_long_body_is_a_heading() -> None:
    text = (
        "1. Overview\n\nThis guide explains how to set up the device.\nIt covers the network.\n\n"
        "Read it before you start.\n\n2. Setup\n\nConnect the cable first.\nThen turn it on.\n\n"
        "The light turns green.\n"
    )
    heads = [(e.number, e.text, e.level) for e in read(text) if e.kind is K.SECTION_HEADER]
    assert heads == [("1.", "1. Overview", 1), ("2.", "2. Setup", 1)]


@pytest.mark.parametrize(
    "text",
    [
        "1. Open Settings\n2. Tap Accounts\n3. Tap Add account\n",
        "1. 設定画面を開く\n2. アカウントを選択する\n",
        "1. [設定]画面を開きます。\n\n設定画面が表示されます。\n\n2. [OK]をクリックします。\n",
        "1. Open Settings\n\nThe Settings screen appears.\n\n2. Tap OK\n\nThe account is added.\n",
        "(1) 電源を入れる\n(2) ログインする\n",
    ],
)
def test_numbered_steps_stay_steps(text: str) -> None:
    els = read(text)
    assert K.SECTION_HEADER not in kinds(els)
    assert kinds(els).count(K.LIST_ITEM) == 2 + ("Add account" in text)


# ----- inferred headings (PDF text without numbering) -------------------------------------


def test_short_title_line_before_longer_paragraph_is_a_heading() -> None:
    text = (
        "You can move forwards and backwards 24 hours and then the day will be announced.\n"
        "Setting up the content for Ambient Mode\n"
        "You can select the content and change the settings for Ambient Mode. Press the Select button\n"
        "to open the menu.\n"
    )
    els = read(text)
    assert [e.kind for e in els] == [K.TEXT, K.SECTION_HEADER, K.TEXT]
    assert els[1].text == "Setting up the content for Ambient Mode"
    assert els[1].hint("inferred") == "true"
    assert els[2].text.startswith("You can select")
    assert els[2].text.endswith("to open the menu.")


@pytest.mark.parametrize(
    "text",
    [
        # the line before does not end a sentence: a wrapped line, not a title
        "Use the up and down buttons to move to the\nSystem Manager\n"
        "menu, and then press the Select button.\n",
        # ends with a function word
        "Done.\nPress the\nbutton on the remote control to open the Settings menu screen.\n",
        # a menu path: the next line is no paragraph
        "Done.\nSettings\nGeneral\nSystem Manager\n",
        # next line continues the sentence
        "Done.\nSelect the Clock Mode\nmenu, press the Select button, and then select Auto.\n",
        # a label of a "Label: text" list
        "Phone: Launch the call screen.\nAdd\nCalculator: Launch the Calculator app and do your sums.\n",
        # too long to be a title
        "Done.\n" + "Word " * 14 + "\nThis is the paragraph that follows the long line, and it ends here.\n",
    ],
)
def test_inferred_headings_are_conservative(text: str) -> None:
    assert K.SECTION_HEADER not in kinds(read(text))


def test_japanese_inferred_heading() -> None:
    text = (
        "以上で設定は完了です。\nパスワードの変更\n"
        "パスワードを変更するには、設定画面で変更ボタンを押してから新しいパスワードを入力します。\n"
    )
    els = read(text)
    assert [(e.kind, e.text) for e in els][1] == (K.SECTION_HEADER, "パスワードの変更")


# PDF text where a title is told apart by what follows it: a verbatim repeat (the title is
# also the first line of the section text), a menu path whose ">" glyphs were lost (a run of
# very short labels) and then a body, or a blank line before it and a heading right after.
BODY_EN = "If the TV is connected to the Internet, the software updates itself.\n"
BODY_JA = "テレビがインターネットに接続されていると、ソフトウェアが自動的に更新されます。\n"


@pytest.mark.parametrize(
    ("text", "headings", "evidence", "path"),
    [
        pytest.param(
            "Flexible security\nFlexible security\nUse biometrics to securely unlock your device.\n",
            ["Flexible security"], ["repeat"], None, id="repeat-en",
        ),
        pytest.param(
            "以上です。\n顔認証\n顔認証\n顔認証を有効にすると、画面のロックを顔で解除できます。\n",
            ["顔認証"], ["repeat"], None, id="repeat-ja",
        ),
        pytest.param(
            "Done.\n\nGetting started\nGetting started\nGalaxy S10e\nGalaxy S10\n",
            ["Getting started"], ["repeat"], None, id="repeat-then-labels-after-blank",
        ),
        pytest.param(
            "Done.\nUpdating the TV automatically\nSettings\nSupport\nSoftware Update\nAuto Update\n"
            + BODY_EN,
            ["Updating the TV automatically"], ["path"], "Settings > Support > Software Update > Auto Update",
            id="path-en",
        ),
        pytest.param(
            "以上です。\nソフトウェアの自動更新\n設定\nサポート\nソフトウェア更新\n" + BODY_JA,
            ["ソフトウェアの自動更新"], ["path"], "設定 > サポート > ソフトウェア更新", id="path-ja",
        ),
        pytest.param(
            "Done.\n\nTroubleshooting connection issues\nTry Now\n" + BODY_EN,
            ["Troubleshooting connection issues"], ["path"], "Try Now", id="one-label-after-blank",
        ),
        pytest.param(
            "Done.\n\nSetting up IPv6\nConfiguring the IPv6 settings\nSettings\nGeneral\nNetwork\n" + BODY_EN,
            ["Setting up IPv6", "Configuring the IPv6 settings"], ["heading", "path"],
            "Settings > General > Network",
            id="title-over-subheading",
        ),
        pytest.param(
            "Done.\n\nViewing Broadcast Information\nSee an overview of each channel's program lineup.\n",
            ["Viewing Broadcast Information"], ["body"], None, id="one-sentence-after-blank",
        ),
        pytest.param(
            "以上です。\n\n番組表の表示\n各チャンネルの番組の概要を確認できます。\n",
            ["番組表の表示"], ["body"], None, id="one-sentence-after-blank-ja",
        ),
    ],
)  # fmt: skip
def test_pdf_title_evidence(text: str, headings: list[str], evidence: list[str], path: str | None) -> None:
    els = read(text)
    heads = [e for e in els if e.kind is K.SECTION_HEADER]
    assert [(h.text, h.hint("inferred_by")) for h in heads] == list(zip(headings, evidence, strict=True))
    paths = [e.text for e in els if e.hint("ui_path") == "true"]
    assert paths == ([path] if path else [])
    assert els[-1].kind is K.TEXT
    assert not els[-1].hint("ui_path")
    assert_invariants(text, els)


@pytest.mark.parametrize(
    "text",
    [
        # the first label of a path is not a title over it
        "Done.\nSettings\nGeneral\nSystem Manager\n" + BODY_EN,
        "以上です。\n設定\n一般\nネットワーク\n" + BODY_JA,
        # a title no wider than its labels
        "Done.\nDevice list\nSettings\nExternal Device Manager\n" + BODY_EN,
        # figure labels with no body after them
        "Done.\nCable Box/Disc Player\nHDMI\nGame Console\n- 20 -\n",
        "Done.\nUpdating the TV automatically\nSettings\nSupport\nSoftware Update\n",
        # a column of labels, longer than any menu path
        "Done.\nSound modes of the television\n" + "".join(f"Mode {i}\n" for i in range(9)) + BODY_EN,
        # one label is a path only when a blank line sets the title apart
        "Done.\nTroubleshooting connection issues\nTry Now\n" + BODY_EN,
        # repeated table cells
        "Done.\nYes\nYes\nNo\nNo\n",
        # the repeated line runs on into a sentence
        "Done.\nAmbient Mode\nAmbient Mode\n, you can set up and enjoy visual information.\n",
        # inside an open list (right after an item)
        "1. Open the menu.\n2. Select Update.\nUpdating the TV automatically\nSettings\nSupport\n"
        "Software Update\n" + BODY_EN,
        # the line before runs on
        "If you agree to the terms and conditions,\nAuto Update\nAuto Update\nis set to automatically.\n",
        # a short line after a blank line with a sentence no wider than it
        "Done.\n\nUsing Other Functions\nView other functions.\n",
    ],
)
def test_pdf_title_evidence_is_conservative(text: str) -> None:
    els = read(text)
    assert K.SECTION_HEADER not in kinds(els)
    assert_invariants(text, els)


def test_repeated_title_is_one_heading_over_both_lines() -> None:
    text = "Widgets\nWidgets\nAdd widgets to your home screens for quick access to info or apps.\n"
    head, body = read(text)
    assert (head.kind, head.text, head.span) == (K.SECTION_HEADER, "Widgets", Span(0, 15))
    assert body.text.startswith("Add widgets")


def test_menu_path_under_a_title_is_one_text_element() -> None:
    text = "Done.\nResetting Your Network\nSettings\nGeneral\nNetwork\nReset Network\nTry Now\n" + BODY_EN
    els = read(text)
    assert [e.kind for e in els] == [K.TEXT, K.SECTION_HEADER, K.TEXT, K.TEXT]
    path = els[2]
    assert path.text == "Settings > General > Network > Reset Network > Try Now"
    assert text[path.span.start : path.span.end] == "Settings\nGeneral\nNetwork\nReset Network\nTry Now"
    assert els[3].text == BODY_EN.strip()


def test_title_over_a_path_closes_a_list_left_open() -> None:
    text = (
        "Use a shielded cable.\n* Shielded Twist Pair\nThe TV will not connect if the speed is low.\n"
        "Establishing a wireless connection\nSettings\nGeneral\nNetwork\n" + BODY_EN
    )
    els = read(text)
    head = next(e for e in els if e.kind is K.SECTION_HEADER)
    assert head.text == "Establishing a wireless connection"
    assert [e.list_id for e in els[els.index(head) :]] == [None, None, None]
    # weaker evidence (a body alone) leaves the list undecided, as before
    weak = text.replace("Settings\nGeneral\nNetwork\n", "")
    assert K.SECTION_HEADER not in kinds(read(weak))


def test_headings_without_a_blank_line_nest_under_those_with_one() -> None:
    text = (
        "Updating the software\nDo not turn off the TV until the update is complete, or it may break.\n"
        "Updating through the Internet\nSettings\nSupport\nSoftware Update\n" + BODY_EN + "\n"
        "Updating the TV automatically\nSettings\nSupport\nAuto Update\n" + BODY_EN
    )
    heads = [(e.text, e.level) for e in read(text) if e.kind is K.SECTION_HEADER]
    assert heads == [
        ("Updating the software", 1),
        ("Updating through the Internet", 2),
        ("Updating the TV automatically", 1),
    ]


# ----- continuation lines -----------------------------------------------------------------


def test_hard_wrapped_english_step_is_joined_with_a_space() -> None:
    text = (
        "1. Use the up and down directional buttons to move to the System Manager menu, and then press\n"
        "the Select button.\n2. Select the Time menu.\n"
    )
    first, second = read(text)
    assert first.text.endswith("and then press the Select button.")
    assert first.span is not None
    assert text[first.span.start : first.span.end].endswith("button.")
    assert second.number == "2."


def test_hard_wrapped_japanese_step_is_joined_without_a_space() -> None:
    text = (
        "1. 設定画面で[パスワード変更]を選択し、現在のパスワードと新しいパスワードを\n"
        "入力します。\n2. [OK]を押します。\n"
    )
    first, second = read(text)
    assert (
        first.text == "設定画面で[パスワード変更]を選択し、現在のパスワードと新しいパスワードを入力します。"
    )
    assert second.kind is K.LIST_ITEM


def test_indented_and_lowercase_lines_continue_a_step() -> None:
    text = "1. Open the Settings\n   app on the device.\n2. Tap Accounts\nand then tap Add.\n"
    first, second = read(text)
    assert first.text == "Open the Settings app on the device."
    assert second.text == "Tap Accounts and then tap Add."


def test_result_sentence_between_steps_belongs_to_the_list() -> None:
    text = "1. Open Settings.\nThe Settings screen appears.\n2. Tap Accounts.\n"
    step1, result, step2 = read(text)
    assert (result.kind, result.text) == (K.TEXT, "The Settings screen appears.")
    assert result.parent_id == step1.element_id
    assert result.list_id == step1.list_id == step2.list_id


def test_paragraph_after_a_list_closes_it() -> None:
    text = "1. Open Settings.\n2. Tap OK.\n\nThat is all there is to it.\n\n1. Start again.\n"
    a, b, para, c = read(text)
    assert (para.parent_id, para.list_id) == (None, None)
    assert a.list_id == b.list_id != c.list_id
    assert c.list_id is not None


def test_paragraph_ends_at_blank_line_and_joins_wrapped_lines() -> None:
    text = "First line of a paragraph\nthat wraps here.\n\nSecond paragraph.\n"
    first, second = read(text)
    assert first.text == "First line of a paragraph that wraps here."
    assert second.text == "Second paragraph."


# ----- nesting ----------------------------------------------------------------------------


def test_nesting_by_indentation() -> None:
    text = "1. Open Settings.\n   - Wi-Fi\n   - Bluetooth\n2. Tap OK.\n"
    one, wifi, bt, two = read(text)
    assert [e.level for e in (one, wifi, bt, two)] == [0, 1, 1, 0]
    assert wifi.parent_id == bt.parent_id == one.element_id
    assert two.parent_id is None
    assert len({e.list_id for e in (one, wifi, bt, two)}) == 1


def test_nesting_by_change_of_numbering_style() -> None:
    text = (
        "1. 設定画面を開きます。\n(1) 現在の値を確認します。\n"
        "(2) 新しい値を入力します。\n2. [OK]を押します。\n"
    )
    one, sub1, sub2, two = read(text)
    assert [e.level for e in (one, sub1, sub2, two)] == [0, 1, 1, 0]
    assert sub1.parent_id == sub2.parent_id == one.element_id
    assert two.parent_id is None


def test_indented_paragraph_belongs_to_the_item() -> None:
    text = "1. Open Settings.\n\n   The Settings screen lists every option.\n\n2. Tap OK.\n"
    one, para, two = read(text)
    assert para.kind is K.TEXT
    assert (para.parent_id, para.list_id) == (one.element_id, one.list_id)
    assert two.list_id == one.list_id


def test_heading_starts_a_new_list() -> None:
    text = "- a\n- b\n\n■ 次の手順\n\n- c\n"
    a, b, _, c = read(text)
    assert a.list_id == b.list_id != c.list_id


def test_thousand_deep_indentation_does_not_recurse() -> None:
    text = "".join(" " * i + "- item\n" for i in range(1000))
    els = read(text)
    assert len(els) == 1000
    assert els[-1].level == 999
    assert els[-1].parent_id == els[-2].element_id
    assert_invariants(text, els)


# ----- notes, tables, code ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "label", "body"),
    [
        ("Note: Back up your data first.", "note", "Back up your data first."),
        ("NOTE: Back up your data first.", "note", "Back up your data first."),
        ("Caution: Do not unplug the device.", "caution", "Do not unplug the device."),
        ("Warning: Hot surface.", "warning", "Hot surface."),
        ("Important: Keep the receipt.", "important", "Keep the receipt."),
        ("Tip: Hold the button to skip.", "tip", "Hold the button to skip."),
        ("NOTE\nBack up your data first.", "note", "Back up your data first."),
        ("注意：電源を切らないでください。", "注意", "電源を切らないでください。"),
        ("注意　電源を切らないでください。", "注意", "電源を切らないでください。"),
        ("重要：必ずバックアップしてください。", "重要", "必ずバックアップしてください。"),
        ("警告：高温部に触れないでください。", "警告", "高温部に触れないでください。"),
        ("※ 一部の機種では使用できません。", "※", "一部の機種では使用できません。"),
        ("【注意】電源を切らないでください。", "注意", "電源を切らないでください。"),
    ],
)
def test_admonitions(text: str, label: str, body: str) -> None:
    (note,) = read(text)
    assert (note.kind, note.admonition, note.text) == (K.TEXT, label, body)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("NOTE\n\nBack up your data first.", "note"),  # a Word file's paragraphs, a PDF's gap
        ("【注意】\n\n電源を切らないでください。", "注意"),
        ("注意\n\n電源を切らないでください。", "注意"),
    ],
)
def test_a_label_alone_takes_the_paragraph_after_a_blank_line(text: str, label: str) -> None:
    (note,) = read(text)
    assert (note.kind, note.admonition) == (K.TEXT, label)
    assert note.text == text.split("\n\n")[1]


def test_a_label_alone_takes_one_paragraph_only() -> None:
    text = "1. Unplug the cable.\n2. Plug it in.\n\nCaution\n\nDo not bend the pins.\n\nThe light is green.\n"
    _, _, caution, after = read(text)
    assert (caution.admonition, caution.text) == ("caution", "Do not bend the pins.")
    assert (after.admonition, after.text) == ("", "The light is green.")


def test_note_is_not_a_sentence_starting_with_note() -> None:
    (el,) = read("Note that the device restarts.")
    assert el.admonition == ""


def test_note_after_a_step_stays_in_the_list() -> None:
    text = "1. Unplug the cable.\nNote: Wait ten seconds.\n2. Plug it back in.\n"
    one, note, two = read(text)
    assert note.admonition == "note"
    assert note.parent_id == one.element_id
    assert two.list_id == one.list_id


@pytest.mark.parametrize(
    "text",
    [
        "Name    Value   Unit\nWidth   12      mm\nHeight  30      mm\n",
        "Name\tValue\tUnit\nWidth\t12\tmm\n",
        "| Name | Value |\n|------|-------|\n| Width | 12 |\n",
        "項目　　値\n幅　　　12\n",
    ],
)
def test_aligned_rows_are_a_table(text: str) -> None:
    (table,) = read(text)
    assert table.kind is K.TABLE
    assert table.text == text.strip()


@pytest.mark.parametrize(
    "text",
    [
        "Name    Value\nA single row is not a table.\n",
        "1.  Open  Settings\n2.  Tap  OK\n",  # double spaces inside steps
        "Name    Value   Unit\nWidth 12 mm\n",
    ],
)
def test_table_detection_is_conservative(text: str) -> None:
    assert K.TABLE not in kinds(read(text))


def test_indented_code_after_blank_line() -> None:
    text = (
        "Run the following command.\n\n    $ pip install procedure-rag\n    $ procedure-rag --help\n\nDone.\n"
    )
    para, code, done = read(text)
    assert code.kind is K.CODE
    assert code.text == "$ pip install procedure-rag\n$ procedure-rag --help"
    assert (para.kind, done.kind) == (K.TEXT, K.TEXT)


# ----- pages ------------------------------------------------------------------------------


def test_dash_footers_number_the_pages() -> None:
    text = "First page text.\n- 150 -\nSecond page text.\n- 151 -\nThird page text.\n"
    els = read(text)
    assert [(e.kind, e.page) for e in els] == [
        (K.TEXT, 150),
        (K.PAGE_FOOTER, 150),
        (K.TEXT, 151),
        (K.PAGE_FOOTER, 151),
        (K.TEXT, 152),
    ]
    assert els[1].text == "- 150 -"


def test_form_feeds_count_pages() -> None:
    text = "Page one.\n\fPage two.\n\f\fPage four.\n"
    assert [e.page for e in read(text)] == [1, 2, 4]


@pytest.mark.parametrize("footer", ["- 7 -", "7", "Page 7", "page 7 of 40", "7 / 40"])
def test_footer_forms(footer: str) -> None:
    text = f"Text on page seven.\n{footer}\n\fText on page eight.\n"
    els = read(text)
    assert [(e.kind, e.page) for e in els] == [(K.TEXT, 7), (K.PAGE_FOOTER, 7), (K.TEXT, 8)]


def test_bare_number_is_a_footer_only_before_a_page_break() -> None:
    els = read("Resolution\n1920\nis supported.\n")
    assert K.PAGE_FOOTER not in kinds(els)


def test_footer_closes_the_paragraph() -> None:
    els = read("Press the Select button to open the\n- 12 -\nmenu.\n")
    assert kinds(els) == [K.TEXT, K.PAGE_FOOTER, K.TEXT]
    assert [e.page for e in els] == [12, 12, 13]


def test_repeated_page_top_lines_are_page_headers() -> None:
    text = "".join(f"User Guide\nBody of page {n}.\n\f" for n in range(1, 5))
    els = read(text)
    headers = [e for e in els if e.kind is K.PAGE_HEADER]
    assert [h.page for h in headers] == [1, 2, 3, 4]
    assert all(h.text == "User Guide" for h in headers)


# ----- invariants -------------------------------------------------------------------------

SYNTHETIC = [
    "第1章 はじめに\n\n本書では設定を説明します。\n\n1. 設定画面を開きます。\n(1) 値を確認します。\n"
    "注意：電源を切らないでください。\n2. 完了です。\n",
    "Overview\n\nThis guide explains the device in detail for new users.\n\n- 1 -\n\f1. Open\n   the app.\n",
    "  \t\n\n   indented text\r\nwith CRLF\r\n\r\n■ 見出し\r\n本文。\r\n",
    "Name    Value\nA       1\n\n    x = 1\n\n=====\n-----\n* * *\n【】\n【注意】\n※\n",
    "\f\f- 3 -\n\v\x1c\u2028\u2029text\x85more\n",
]


@pytest.mark.parametrize("text", SYNTHETIC)
def test_spans_cover_every_non_whitespace_character_synthetic(text: str) -> None:
    assert_invariants(text, read(text))


# Pieces the random documents are built from: markers, headings, notes, footers, breaks.
PIECES = (
    "1. ", "(2) ", "① ", "- ", "・", "Step 3 ", "第1章 ", "1.1 ", "【注意】", "Note: ", "※",
    "Open Settings", "設定画面を開きます。", "the Select button.", "  ", "    ", "\t", "\n",
    "\n\n", "\f", "- 12 -", "=====", "|", "a", "。", ".", ":", "Title Line", "\r\n", "\u3000",
    "Settings", "Try Now", "Title Line\nTitle Line\n",
)  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=60))
@settings(max_examples=300, deadline=None)
def test_spans_cover_every_non_whitespace_character_random(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert_invariants(text, read(text))


def test_ids_are_stable_across_runs() -> None:
    text = SYNTHETIC[0]
    assert read(text, "a.txt") == read(text, "a.txt")
    assert all(e.element_id.startswith("a.txt#e") for e in read(text, "a.txt"))


@pytest.mark.parametrize("text", ["", "   ", "\n\n\f\n", "\u3000\t"])
def test_empty_input_gives_no_elements(text: str) -> None:
    assert read(text) == []


@pytest.mark.parametrize("text", ["\x00\x01\x02", "\ud800 lone surrogate", "\ufeffBOM first", "\x7f" * 3])
def test_odd_input_does_not_raise(text: str) -> None:
    assert_invariants(text, read(text))


def test_iter_is_lazy_and_matches_the_list() -> None:
    text = SYNTHETIC[0]
    it = iter_plain_text(text, source_id="doc")
    assert isinstance(it, Iterator)
    first = next(it)
    assert [first, *it] == read(text)


def test_custom_step_styles_are_used() -> None:
    bullets_only = tuple(s for s in DEFAULT_STEP_STYLES if s.name == "bullet")
    els = read_plain_text(
        "1. Not a step here.\n- a step\n", source_id="d", options=ReaderOptions(step_styles=bullets_only)
    )
    assert kinds(els) == [K.TEXT, K.LIST_ITEM]


# ----- speed ------------------------------------------------------------------------------


def test_ten_megabytes_is_fast() -> None:
    unit = (
        "1. Open the Settings app and tap Accounts to see\nthe list of accounts.\n"
        "注意：電源を切らないでください。\n- 12 -\nSetting up the content\n"
        "You can select the content and change the settings for Ambient Mode here.\n\n"
    )
    text = unit * (10_000_000 // len(unit))
    start = time.perf_counter()
    els = read(text)
    assert time.perf_counter() - start < 30
    assert len(els) > 100_000


@pytest.mark.parametrize(
    "text",
    [
        "word " * 200_000,
        "1." * 500_000,
        "【" + "a】" * 300_000,
        "1.1" * 300_000 + " x",
        "1. " + " " * 1_000_000 + "x",
        "Name  " * 200_000,
    ],
)
def test_one_megabyte_line_is_fast(text: str) -> None:
    start = time.perf_counter()
    els = read(text)
    assert time.perf_counter() - start < 5
    assert len(els) == 1


# ----- real E-Manual sections (E-Manual QA, Apache-2.0) -----------------------------------

# Excerpt of samsung_tv:section_244 "Using the guide", kept here so the golden checks run
# without the shared data folder. E-Manual QA, Apache-2.0.
EMANUAL_244_EXCERPT = """\
sure what the day is, you can move forwards and backwards 24 hours and then the day will be announced.
To view a program on now
In the
Guide
, move to the program currently broadcasting, and then press the Select button to go to live TV on the
selected channel and program.
- 151 -
Other options in the guide
In the
Guide
, move to a broadcast scheduled program, and then press the Select button. A pop-up menu listing the
functions below appears. For the program you are currently watching, press and hold the Select button.
"""


def test_emanual_excerpt_golden() -> None:
    els = read(EMANUAL_244_EXCERPT, "samsung_tv:section_244")
    assert [(e.kind, e.text[:26], e.page) for e in els] == [
        (K.TEXT, "sure what the day is, you ", 151),
        (K.SECTION_HEADER, "To view a program on now", 151),
        (K.TEXT, "In the Guide , move to the", 151),
        (K.PAGE_FOOTER, "- 151 -", 151),
        (K.SECTION_HEADER, "Other options in the guide", 152),
        (K.TEXT, "In the Guide , move to a b", 152),
    ]
    assert_invariants(EMANUAL_244_EXCERPT, els, "samsung_tv:section_244")


@pytest.fixture(scope="module")
def emanual_docs(shared_data: Path) -> dict[str, str]:
    path = shared_data / "emanual" / "docs.jsonl"
    with path.open(encoding="utf-8") as f:
        return {d["doc_id"]: d["text"] for d in map(json.loads, f)}


def test_emanual_every_doc_is_covered(emanual_docs: dict[str, str]) -> None:
    for doc_id, text in emanual_docs.items():
        assert_invariants(text, read(text, doc_id), doc_id)


def test_emanual_guide_section_pages_and_headings(emanual_docs: dict[str, str]) -> None:
    els = read(emanual_docs["samsung_tv:section_244"], "tv244")
    footers = [(e.text, e.page) for e in els if e.kind is K.PAGE_FOOTER]
    assert footers == [("- 150 -", 150), ("- 151 -", 151), ("- 152 -", 152)]
    assert els[0].page == 150
    assert els[-1].page == 153
    heads = [e.text for e in els if e.kind is K.SECTION_HEADER]
    assert "To view a program on now" in heads
    assert "Other options in the guide" in heads
    # An option over its one-line description, right before another such pair, is a term of
    # the options' list, not a section ("Schedule Recording" has a longer description).
    assert "Schedule Viewing" not in heads
    assert any("Schedule Viewing You can schedule viewing" in e.text for e in els if e.kind is K.TEXT)
    assert "Schedule Recording" in heads
    assert not {"Guide", "Press the", "Settings", "Clock"} & set(heads)


def test_emanual_galaxy_section_heading(emanual_docs: dict[str, str]) -> None:
    els = read(emanual_docs["galaxy_s10:section_61"], "s10")
    assert (els[0].kind, els[0].text) == (K.SECTION_HEADER, "Face recognition management")
    assert all(e.kind is K.TEXT for e in els[1:])
    assert all(e.page == 1 for e in els)


def test_emanual_home_screen_subheadings(emanual_docs: dict[str, str]) -> None:
    els = read(emanual_docs["samsung_tv:section_69"], "tv69")
    heads = [e.text for e in els if e.kind is K.SECTION_HEADER]
    assert "Notification" in heads
    assert "Moving an item on the Home Screen" in heads
    assert [e.page for e in els if e.kind is K.PAGE_FOOTER] == [50, 51, 52]


EMANUAL = Path(__file__).parent / "data" / "emanual"
# Sub-headings inside the TV excerpt's sections; headings in the PDF too, not section titles.
TV_SUBHEADINGS = [
    "Updating through the Internet",
    "Updating through a USB device",
    "Establishing a wired Internet connection",
    "Establishing a wireless Internet connection",
    "Checking the Internet connection status",
    "Configuring the IPv6 connection settings",
    "Checking the Internet connection set up over IPv6",
    "No network cable found",
    "Wireless network connection failed",
    "Connected to a local network, but not to the Internet",
]


@pytest.mark.parametrize(
    ("name", "subheadings"),
    [("galaxy-s10-sections-57-65", []), ("samsung-tv-sections-10-28", TV_SUBHEADINGS)],
)
def test_emanual_excerpt_section_titles_are_headings(name: str, subheadings: list[str]) -> None:
    text = (EMANUAL / f"{name}.txt").read_text(encoding="utf-8")
    with (EMANUAL / f"{name}.sections.jsonl").open(encoding="utf-8") as f:
        sections = [json.loads(line) for line in f]
    els = read(text, name)
    heads = [e for e in els if e.kind is K.SECTION_HEADER]
    assert [(h.text, h.span.start) for h in heads if h.level == 1] == [
        (s["title"], s["start"]) for s in sections
    ]
    assert [h.text for h in heads if h.level == 2] == subheadings
    assert {h.level for h in heads} <= {1, 2}
    assert_invariants(text, els, name)


def test_emanual_tv_menu_paths() -> None:
    text = (EMANUAL / "samsung-tv-sections-10-28.txt").read_text(encoding="utf-8")
    paths = [e.text for e in read(text) if e.hint("ui_path") == "true"]
    assert paths[:3] == [
        "Settings > Support > Software Update > Update Now > Try Now",
        "Settings > Support > Software Update > Update Now",
        "Settings > Support > Software Update > Auto Update > Try Now",
    ]
    assert "Settings > General > Network > Expert Settings > Power On with Mobile" in paths
    assert len(paths) == 17


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # Section titles of the HoloLens pages (network, app installer, moving platform).
        ("VPN via UI", True),
        ("Connect HoloLens to Enterprise Wi-Fi Network", True),
        ("Supported Environments and Known Limitations", True),
        ("USB-C External Microphone Support", True),
        # Sentence case, steps, one word, Japanese: not title case.
        ("Installation method", False),
        ("Select the PWA download button and install the app", False),
        ("Troubleshooting", False),
        ("ネットワーク 設定", False),
        ("Wi-Fi 設定 Menu", False),
    ],
)
def test_title_case_is_every_word_capitalised_but_small_ones(line: str, expected: bool) -> None:
    assert title_case(line) is expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Back to list", True),
        ("[Back to top]", True),
        ("Return to the top", True),
        ("一覧に戻る", True),
        ("↑ページの先頭へ", True),
        ("目次へ戻る", True),
        ("このページのトップへ", True),
        ("▲TOP", True),
        ("TOP▲", True),
        # A step, a title and a lone word that only look like one.
        ("Go back to a previous version", False),
        ("Back to the list of errors", False),
        ("戻る", False),
        ("Page", False),
        ("TOP", False),
        ("Stop▲", False),
    ],
)
def test_navigation_lines(line: str, expected: bool) -> None:
    assert is_navigation(line) is expected


def test_a_navigation_line_between_sections_is_furniture_not_a_title() -> None:
    text = (
        "Reset the device\n\n"
        "1. Hold the power button for 15 seconds.\n"
        "2. Release it and wait for the lights.\n\n"
        "Back to top\n\n"
        "Update the firmware\n\n"
        "Open Settings and select Update to look for new firmware now.\n"
    )
    elements = list(iter_plain_text(text, source_id="doc"))
    kinds = [(e.kind, e.text) for e in elements]
    assert (ElementKind.PAGE_FOOTER, "Back to top") in kinds
    assert all(e.text != "Back to top" for e in elements if e.kind is not ElementKind.PAGE_FOOTER)
    titles = [e.text for e in elements if e.kind is ElementKind.SECTION_HEADER]
    assert "Back to top" not in titles


OPTIONS = """\
Print quality

Choose how the printer balances speed and detail.

Draft
Prints fast with less toner, for proofs you read once.

Normal
Is the default quality for everyday documents.

Best
Prints slowly at full resolution, for photos and handouts.
"""


def test_an_option_list_is_text_not_a_section_per_option() -> None:
    # Each term over its one-sentence description has the shape of a title over a body; a
    # run of them is a definition list: its terms stay text, the list one block of text.
    elements = read(OPTIONS)
    assert [e.text for e in elements if e.kind is K.SECTION_HEADER] == ["Print quality"]
    assert all(e.kind is K.TEXT for e in elements[1:])
    assert [e.text.split()[0] for e in elements[2:]] == ["Draft", "Normal", "Best"]


def test_a_title_over_a_longer_body_stays_a_title_after_an_option_list() -> None:
    # A title over a body of two lines is a title, also right after the list's last term.
    text = (
        OPTIONS
        + "\nPaper Trays\nThe printer has two trays. Load plain paper in tray 1 and envelopes in tray 2.\n"
    )
    text += "Each tray holds up to 250 sheets of 80 g/m² paper.\n"
    headings = [e.text for e in read(text) if e.kind is K.SECTION_HEADER]
    assert headings == ["Print quality", "Paper Trays"]

"""Rule tables: step markers, heading numbers, step fields, lead-in conditions, language.

One row per numbering style, per field form, per condition form, Japanese and English side
by side. Expected values come from the design (DESIGN.md, "Sections" and "Steps") and from
what a reader of the sentence understands, not from the code's output. Step sentences are
taken from the HoloLens pages in tests/data where one exists.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from procedure_rag import ENGLISH, JAPANESE, ElementKind, LayoutElement, detect_language, match_step_marker
from procedure_rag._language.lexicons import LEXICONS
from procedure_rag._language.numbering import match_heading_number
from procedure_rag._language.step_fields import lead_in_condition, parse_step, ui_targets

LEX = {"en": ENGLISH, "ja": JAPANESE}


# ----- step markers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "marker", "ordered", "rest"),
    [
        ("1. Open the Settings app.", "1.", True, "Open the Settings app."),
        ("1. 設定画面を開きます。", "1.", True, "設定画面を開きます。"),
        ("12. Select Next.", "12.", True, "Select Next."),
        ("1) Unplug the cable.", "1)", True, "Unplug the cable."),
        ("2） ケーブルを抜きます。", "2）", True, "ケーブルを抜きます。"),
        ("１．設定画面を開きます。", "１．", True, "設定画面を開きます。"),
        ("１． 設定画面を開きます。", "１．", True, "設定画面を開きます。"),
        ("①電源を入れます。", "①", True, "電源を入れます。"),
        ("① Turn on the power.", "①", True, "Turn on the power."),
        ("⑤ 待ちます。", "⑤", True, "待ちます。"),
        ("⑩設定を保存します。", "⑩", True, "設定を保存します。"),
        ("⑳最後に閉じます。", "⑳", True, "最後に閉じます。"),
        ("❶ 電源を入れます。", "❶", True, "電源を入れます。"),
        ("(1) Enter the password.", "(1)", True, "Enter the password."),
        ("(12) Enter the password.", "(12)", True, "Enter the password."),
        ("（１）パスワードを入力します。", "（１）", True, "パスワードを入力します。"),
        ("（2） パスワードを入力します。", "（2）", True, "パスワードを入力します。"),
        ("(a) Select a network.", "(a)", True, "Select a network."),
        ("A-1 Open the cover.", "A-1", True, "Open the cover."),
        ("B-3 カバーを閉じます。", "B-3", True, "カバーを閉じます。"),
        ("Step 2 Tap OK.", "Step 2", True, "Tap OK."),
        ("Step 2: Tap OK.", "Step 2:", True, "Tap OK."),
        ("STEP 3 Restart the device.", "STEP 3", True, "Restart the device."),
        ("手順3 再起動します。", "手順3", True, "再起動します。"),
        ("手順３：再起動します。", "手順３：", True, "再起動します。"),
        ("ステップ1 電源を切ります。", "ステップ1", True, "電源を切ります。"),
        ("a) Select a network.", "a)", True, "Select a network."),
        ("b. Select a network.", "b.", True, "Select a network."),
        ("iv. Confirm the settings.", "iv.", True, "Confirm the settings."),
        ("ii) Confirm the settings.", "ii)", True, "Confirm the settings."),
        ("#. Build the project.", "#.", True, "Build the project."),
        ("- Check the cable.", "-", False, "Check the cable."),
        ("* Check the cable.", "*", False, "Check the cable."),
        ("+ Check the cable.", "+", False, "Check the cable."),
        ("• Check the cable.", "•", False, "Check the cable."),
        ("・ケーブルを確認します。", "・", False, "ケーブルを確認します。"),
        ("・ ケーブルを確認します。", "・", False, "ケーブルを確認します。"),
        ("● 電源を確認します。", "●", False, "電源を確認します。"),
    ],
)
def test_step_marker(line: str, marker: str, ordered: bool, rest: str) -> None:
    found = match_step_marker(line)
    assert found is not None
    assert (found.marker, found.ordered, line[found.rest_start :]) == (marker, ordered, rest)


@pytest.mark.parametrize(
    "line",
    [
        "1.5 GHz processor and 4 GB of memory.",
        "2.0 以降のバージョンが必要です。",
        "e.g. the Settings app.",
        "i.e. the Settings app.",
        "Open the Settings app.",
        "設定画面を開きます。",
        "2021年10月15日に更新されました。",
        "-5 degrees is too cold.",
        "*emphasis* is not a bullet.",
        "(see the note below)",
        "Step by step instructions follow.",
        "A-Z order is used.",
        "#include <stdio.h>",
        "100% charged.",
        # Circled numbers that name other items: a range or a list of them opens the sentence
        # (the PLATEAU disaster-prevention and fluid-dynamics manuals).
        "①～⑥で登録した情報から個別品計画を作成、ダウンロードします。",
        "④、⑤の内容で架空建物の作成を実行します。",
        "①と②を選択した情報でシミュレーション結果を描画表示します。",
        "② ～ ⑥の設定で横断歩道を追加します。",
        # …or a particle after it: the item is named, not opened (the fluid-dynamics, crowd
        # simulation and tree-management manuals).
        "②で非表示中の建物の削除を実行します。",
        "①のメニューからは4つの画面へ遷移が可能です。",
        "⑤ で選択中のノードを参照します。",
        "②のリストをエクセルでエクスポートします。",
    ],
)
def test_not_a_step_marker(line: str) -> None:
    assert match_step_marker(line) is None


# ----- heading numbers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "marker", "level", "rest"),
    [
        ("第1章 概要", "第1章", 1, "概要"),
        ("第１章　概要", "第１章", 1, "概要"),
        ("第三章 設定", "第三章", 1, "設定"),
        ("第2節 ネットワークの設定", "第2節", 2, "ネットワークの設定"),
        ("第3項 プロキシ", "第3項", 3, "プロキシ"),
        ("1.1 Overview", "1.1", 2, "Overview"),
        ("1.1 概要", "1.1", 2, "概要"),
        ("1.1.1 Network settings", "1.1.1", 3, "Network settings"),
        ("2.3.1. Proxy", "2.3.1.", 3, "Proxy"),
        ("１．２ 概要", "１．２", 2, "概要"),
        ("【設定方法】", "【", 2, "設定方法】"),
        ("【 注意事項 】", "【", 2, " 注意事項 】"),
        ("■ 基本操作", "■", 3, "基本操作"),
        ("■基本操作", "■", 3, "基本操作"),
        ("□ 応用操作", "□", 3, "応用操作"),
        # Text extracted from a PDF often loses the space after a Japanese heading's number.
        ("3.2.1オペレーション作成", "3.2.1", 3, "オペレーション作成"),
        ("3.3実行結果の確認（2/2）", "3.3", 2, "実行結果の確認（2/2）"),
    ],
)
def test_heading_number(line: str, marker: str, level: int, rest: str) -> None:
    found = match_heading_number(line)
    assert found is not None
    got_marker, got_level, rest_start = found
    assert (got_marker, got_level, line[rest_start:]) == (marker, level, rest)


@pytest.mark.parametrize(
    "line",
    [
        "1. Open the Settings app.",
        "設定画面を開きます。",
        "【重要】電源を切らないでください。",  # a label at the start of a sentence, not a heading
        "第1回の会議",
        "Chapter one",
        "1.5倍の速さで再生します。",  # a number and its counter, not a heading number
        "2.5秒待ちます。",
        "10.0.1で修正されました。",
    ],
)
def test_not_a_heading_number(line: str) -> None:
    assert match_heading_number(line) is None


# ----- step fields ------------------------------------------------------------------------------


def step(text: str, lang: str, number: str = "1.") -> dict[str, str]:
    el = LayoutElement("doc#e0", ElementKind.LIST_ITEM, text, 0, number=number, ordered=True)
    s = parse_step(el, LEX[lang])
    return {
        "number": s.number,
        "action": s.action,
        "target": s.target,
        "condition": s.condition,
        "result": s.result,
        "caution": s.caution,
    }


HARD_RESTART_EN = (
    "Hold down the **volume down** + **power** buttons for 15 seconds. The device will automatically restart."
)
HARD_RESTART_JA = (
    "**[ボリューム ダウン]** ボタン +  **[電源]** ボタンを 15 秒間押したままにします。"
    " デバイスが自動的に再起動します。"
)


@pytest.mark.parametrize(
    ("lang", "text", "field", "expected"),
    [
        # action: the first sentence, markup removed
        ("en", HARD_RESTART_EN, "action", "Hold down the volume down + power buttons for 15 seconds."),
        (
            "ja",
            HARD_RESTART_JA,
            "action",
            "[ボリューム ダウン] ボタン + [電源] ボタンを 15 秒間押したままにします。",
        ),
        ("en", "Connect the device to the host PC.", "action", "Connect the device to the host PC."),
        ("ja", "デバイスをホスト PC に接続します。", "action", "デバイスをホスト PC に接続します。"),
        # the number is kept as written
        ("ja", "電源を入れます。", "number", "1."),
        # target: quoted or bracketed labels
        ("ja", "「保存」を選択します。", "target", "保存"),
        ("ja", "『設定ガイド』を参照します。", "target", "設定ガイド"),
        ("ja", "**[IPv4 構成]** ボタンを選択します。", "target", "IPv4 構成"),
        ("ja", "[設定] を選択します。", "target", "設定"),
        ("en", "Select [Wi-Fi] and connect.", "target", "Wi-Fi"),
        # the last element operated; a menu path gives its last item
        (
            "en",
            "Open the **Settings** app, and then select **Network & Internet** > **Wi-Fi**.",
            "target",
            "Wi-Fi",
        ),
        ("en", HARD_RESTART_EN, "target", "power"),
        ("ja", HARD_RESTART_JA, "target", "電源"),
        ("en", "Press :kbd:`Ctrl+S` to save.", "target", "Ctrl+S"),
        ("en", "Select :guilabel:`Apply`.", "target", "Apply"),
        # target: UI nouns, Japanese, without the generic UI word
        ("ja", "保存ボタンを押します。", "target", "保存"),
        ("ja", "ユーザー名欄に入力します。", "target", "ユーザー名"),
        ("ja", "設定画面を開きます。", "target", "設定"),
        ("ja", "詳細タブを選択します。", "target", "詳細"),
        ("ja", "ファイルメニューを開きます。", "target", "ファイル"),
        ("ja", "同意するチェックボックスをオンにします。", "target", "同意する"),
        ("ja", "確認ダイアログを閉じます。", "target", "確認"),
        ("ja", "スタート メニューを開きます。", "target", "スタート"),
        # a particle is not part of the UI element's name (tests/data ja provisioning page)
        ("ja", "ユーザーにサインイン画面を提示します。", "target", "サインイン"),
        # target: UI nouns, English, without the generic UI word
        ("en", "Select the Save button.", "target", "Save"),
        ("en", "Enter the address in the Proxy Address field.", "target", "Proxy Address"),
        ("en", "Open the Network Settings screen.", "target", "Network Settings"),
        ("en", "Select the Accounts tab.", "target", "Accounts"),
        ("en", "Open the Start menu and select Settings.", "target", "Settings"),
        ("en", "Select the Remember Me checkbox.", "target", "Remember Me"),
        ("en", "Close the Confirm dialog.", "target", "Confirm"),
        ("en", "Go to the Settings page.", "target", "Settings"),
        ("en", "Open the Details pane.", "target", "Details"),
        ("en", "Select the Privacy Statement link.", "target", "Privacy Statement"),
        # Microsoft style writes UI names in sentence case (tests/data en provisioning page)
        ("en", "Present the sign in screen to the user.", "target", "sign in"),
        # an object operated without a UI word
        ("en", "Connect the device to the host PC.", "target", "device"),
        ("ja", "パスワードを入力します。", "target", "パスワード"),
        ("en", "Enter your password.", "target", "password"),
        # condition: a leading clause with the particle that closes it, Japanese
        (
            "ja",
            "ポリシーがない場合は、別の USB ケーブルを試してください。",
            "condition",
            "ポリシーがない場合は",
        ),
        (
            "ja",
            "ポリシーがない場合は、別の USB ケーブルを試してください。",
            "action",
            "別の USB ケーブルを試してください。",
        ),
        ("ja", "Wi-Fi に接続したときは、ネットワーク名を確認します。", "condition", "Wi-Fi に接続したときは"),
        ("ja", "必要なら、プロキシを設定します。", "condition", "必要なら"),
        ("ja", "初回起動の際は、管理者でサインインします。", "condition", "初回起動の際は"),
        (
            "ja",
            "GitHub アカウントの場合は `GitHub で登録` ボタンを押します",
            "condition",
            "GitHub アカウントの場合は",
        ),
        ("ja", "ログイン後、左メニューのリンクを押下", "condition", "ログイン後"),
        ("ja", "必要があればオプションを設定してください。", "condition", "必要があれば"),
        # a delay is not a condition
        ("ja", "電源ボタンを押します。 5秒後、すべての LED が消灯します。", "condition", ""),
        # 「AするとBが表示されます」: the action ends at the verb and B is its result
        ("ja", "電源を入れると、ロゴが表示されます。", "condition", ""),
        ("ja", "電源を入れると、ロゴが表示されます。", "action", "電源を入れる"),
        ("ja", "電源を入れると、ロゴが表示されます。", "result", "ロゴが表示されます。"),
        # an event that is not the reader's is a condition
        ("ja", "登録が完了すると、アプリを起動します。", "condition", "登録が完了すると"),
        ("ja", "設定画面を開きます。", "condition", ""),
        # condition: a leading clause, English
        (
            "en",
            "If your device is not showing as a HoloLens device, check the drivers.",
            "condition",
            "If your device is not showing as a HoloLens device",
        ),
        (
            "en",
            "If your device is not showing as a HoloLens device, check the drivers.",
            "action",
            "check the drivers.",
        ),
        (
            "en",
            "When the Wi-Fi status appears, select the network.",
            "condition",
            "When the Wi-Fi status appears",
        ),
        (
            "en",
            "Once the device restarts, sign in with your account.",
            "condition",
            "Once the device restarts",
        ),
        ("en", "Unless you use a proxy, skip this step.", "condition", "Unless you use a proxy"),
        ("en", "After the download completes, select Install.", "condition", "After the download completes"),
        (
            "en",
            "For devices that are sent to clients, reset passwords.",
            "condition",
            "For devices that are sent to clients",
        ),
        ("en", "For more information, see the FAQ.", "condition", ""),
        ("en", "Connect the device to the host PC.", "condition", ""),
        # condition: a clause closing the action ("when prompted"), which stops the action there
        (
            "en",
            "Select **Yes** when prompted for confirmation.",
            "condition",
            "when prompted for confirmation",
        ),
        ("en", "Select **Yes** when prompted for confirmation.", "action", "Select Yes"),
        ("en", "You can pause the update again, if it is necessary.", "condition", "if it is necessary"),
        # the first of several conditions
        (
            "en",
            "If the profile fails, apply it on a PC. If it also fails, follow the guide.",
            "condition",
            "If the profile fails",
        ),
        # a delay is not a condition
        ("en", "Press the power button. After 5 seconds, all LEDs will be off.", "condition", ""),
        # result: a later sentence stating what happens
        ("en", HARD_RESTART_EN, "result", "The device will automatically restart."),
        ("ja", HARD_RESTART_JA, "result", "デバイスが自動的に再起動します。"),
        ("en", "Select Install. The installation begins.", "result", "The installation begins."),
        (
            "ja",
            "[パスワード] タブを選択します。パスワード画面が表示されます。",
            "result",
            "パスワード画面が表示されます。",
        ),
        ("en", "Connect the device to the host PC.", "result", ""),
        ("en", "Click Export. It will save to your desktop.", "result", "It will save to your desktop."),
        (
            "en",
            "Select Build. The build page displays the progress.",
            "result",
            "The build page displays the progress.",
        ),
        # a step that only reports what the system does has a result and no action
        ("en", "The application will install and launch.", "action", ""),
        (
            "en",
            "The application will install and launch.",
            "result",
            "The application will install and launch.",
        ),
        ("ja", "データベースが更新され、更新完了画面が表示される。", "action", ""),
        # caution: notes marked in the text, the marking label dropped, Japanese
        (
            "ja",
            "[保存] を選択します。注意: 保存には時間がかかります。",
            "caution",
            "保存には時間がかかります。",
        ),
        (
            "ja",
            "[OK] を選択します。ただし、管理者のみ実行できます。",
            "caution",
            "ただし、管理者のみ実行できます。",
        ),
        ("ja", "[削除] を選択します。※ 元に戻せません。", "caution", "元に戻せません。"),
        (
            "ja",
            "[リセット] を選択します。重要: データが消去されます。",
            "caution",
            "データが消去されます。",
        ),
        ("ja", "[初期化] を選択します。警告: すべて消去されます。", "caution", "すべて消去されます。"),
        ("ja", "[削除] を選択します。※ 元に戻せません。", "action", "[削除] を選択します。"),
        (
            "ja",
            "[保存] を選択します。なお、保存には時間がかかります。",
            "caution",
            "保存には時間がかかります。",
        ),
        # a ※ note after the step's text, on the same line, with no sentence end before it
        (
            "ja",
            "QR コードを読み取ってログインを行う ※別途設定が必要です。",
            "caution",
            "別途設定が必要です。",
        ),
        (
            "ja",
            "QR コードを読み取ってログインを行う ※別途設定が必要です。",
            "action",
            "QR コードを読み取ってログインを行う",
        ),
        # a ※ right after a word is a reference mark, not a note
        ("ja", "npm install を実行してください※。", "caution", ""),
        # caution: notes marked in the text, the marking label dropped, English
        (
            "en",
            "Select Update & Security. Note: this can take a while.",
            "caution",
            "this can take a while.",
        ),
        (
            "en",
            "Select OK. Important: do not unplug the device.",
            "caution",
            "do not unplug the device.",
        ),
        (
            "en",
            "Select Delete. Caution: the files are removed.",
            "caution",
            "the files are removed.",
        ),
        (
            "en",
            "Select Reset. Warning: all data will be erased.",
            "caution",
            "all data will be erased.",
        ),
        (
            "en",
            "Remove password expiration. However, this option may increase the risk.",
            "caution",
            "However, this option may increase the risk.",
        ),
        ("en", "Select Reset. Note that all data will be erased.", "caution", "all data will be erased."),
        # a tip is not a caution
        ("en", 'Select Start. Tip: you can also say "Go to Start".', "caution", ""),
        ("en", "Select Reset. Warning: all data will be erased.", "action", "Select Reset."),
        # a negative instruction is part of the action, not a caution
        (
            "en",
            "Connect the device. Start the device, but do not continue past the fit page.",
            "action",
            "Connect the device. Start the device, but do not continue past the fit page.",
        ),
        ("en", "Connect the device to the host PC.", "caution", ""),
    ],
)
def test_step_field(lang: str, text: str, field: str, expected: str) -> None:
    assert step(text, lang)[field] == expected


def test_step_keeps_nesting_and_bound_caution() -> None:
    el = LayoutElement(
        "doc#e3", ElementKind.LIST_ITEM, "別の USB ケーブルを試してください。", 3, level=1, number="2."
    )
    s = parse_step(el, JAPANESE, parent_number="5.", extra_caution="注意: **必ず** 純正品を使います。")
    assert (s.number, s.step_number, s.depth, s.parent_number, s.element_id) == ("2.", "2", 1, "5.", "doc#e3")
    assert s.caution == "必ず 純正品を使います。"


# ----- lead-in conditions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "text", "condition"),
    [
        (
            "en",
            "If the standard reset procedure didn't work, use the hard-restart procedure:",
            "If the standard reset procedure didn't work",
        ),
        (
            "en",
            "When a user starts the Autopilot self-deploying process, Autopilot completes the following:",
            "When a user starts the Autopilot self-deploying process",
        ),
        (
            "en",
            "Once the above instructions are completed, your HoloLens 2 users will go through the following:",
            "Once the above instructions are completed",
        ),
        (
            "en",
            "This section covers the device. If the device is enrolled, do the following:",
            "If the device is enrolled",
        ),
        ("en", "If you use a **proxy**, follow these steps:", "If you use a proxy"),
        ("en", "Follow these steps to enable the deployment path:", ""),
        ("en", "To confirm you are connected, check the Wi-Fi status in the **Start** menu:", ""),
        (
            "ja",
            "標準のリセット手順が機能しない場合は、ハード再起動の手順を使用してください。",
            "標準のリセット手順が機能しない場合は",
        ),
        ("ja", "承認済みの場合は、次の手順を実行します。", "承認済みの場合は"),
        ("ja", "デバイスを登録するときは、次の手順を実行します。", "デバイスを登録するときは"),
        ("ja", "管理者なら、次の手順を実行します。", "管理者なら"),
        ("ja", "初回起動の際には、次の手順を実行します。", "初回起動の際には"),
        ("ja", "プロキシを使う場合、以下の手順で設定します。", "プロキシを使う場合"),
        ("ja", "この節では設定を説明します。承認済みの場合は、次の手順を実行します。", "承認済みの場合は"),
        ("ja", "展開パスを有効にする手順は、次のとおりです。", ""),
        ("ja", "次の手順を実行します。", ""),
    ],
)
def test_lead_in_condition(lang: str, text: str, condition: str) -> None:
    assert lead_in_condition(text, LEX[lang]) == condition


# ----- language --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("設定画面でパスワード変更を選択します。", "ja"),
        ("Select Settings, then Change password.", "en"),
        ("HoloLens 2 デバイスを Windows Autopilot for HoloLens 2 で Azure AD に参加させます。", "ja"),
        ("ｶﾀｶﾅ only half-width katakana here: ｾｯﾃｲ ｦ ﾋﾗｷﾏｽ and more English words in the line", "ja"),
        ("Open the **Settings** app and select 「保存」 when asked.", "en"),
        ("", "en"),
        ("12345 67890 !!!", "en"),
    ],
)
def test_detect_language(text: str, language: str) -> None:
    assert detect_language(text) == language


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("hololens/en/hololens-recovery.md", "en"),
        ("hololens/ja/hololens-recovery.md", "ja"),
        ("hololens/ja/hololens2-autopilot.md", "ja"),
        ("ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md", "ja"),
        ("emanual/samsung-tv-sections-10-28.txt", "en"),
    ],
)
def test_detect_language_of_real_pages(tests_data: Path, path: str, language: str) -> None:
    assert detect_language((tests_data / path).read_text(encoding="utf-8")) == language


@pytest.mark.parametrize(
    ("lang", "text", "target"),
    [
        # the object of an operating word wins over a label met on the way
        ("en", "Preform the **Start gesture** and select **Settings**.", "Settings"),
        ("en", "Under **Required Frameworks**, select **Download**.", "Download"),
        # a label only mentioned in an aside ranks after the operated one
        (
            "en",
            "Open Device Manager (for Windows 10 press the **Windows** key, then select **Device Manager**).",
            "Device Manager",
        ),
        ("en", "Press and hold the **power** button for 15 seconds.", "power"),
        ("ja", "**スタート ジェスチャ** を実行し、 **[設定]** を選択します。", "設定"),
        ("ja", "「グループ名」欄に名前を入力し、「Create」をクリックします。", "Create"),
        ("ja", "**[電源]** ボタンを 15 秒間押し続けます。", "電源"),
    ],
)
def test_the_operated_label_is_the_target(lang: str, text: str, target: str) -> None:
    assert ui_targets(text, LEXICONS[lang])[0] == target


@pytest.mark.parametrize(
    ("sentence", "condition", "action"),
    [
        # no comma: the condition ends before the first action verb
        (
            "If you are prompted for a network password type it and then select Next.",
            "If you are prompted for a network password",
            "type it and then select Next.",
        ),
        # a comma marks the end itself, even when a verb sits inside the condition
        (
            "If the battery level is critically low and you try to turn on the device, one light blinks.",
            "If the battery level is critically low and you try to turn on the device",
            "one light blinks.",
        ),
    ],
)
def test_where_an_english_condition_ends(sentence: str, condition: str, action: str) -> None:
    element = LayoutElement("e", ElementKind.LIST_ITEM, sentence, 0, number="1.")
    step = parse_step(element, LEXICONS["en"])
    assert (step.condition, step.action) == (condition, action)

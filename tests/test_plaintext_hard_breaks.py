"""Hard-wrapped text (a PDF's page text): where the writer broke a line, not the wrapping.

A loader's page text has no blank lines and no indentation: paragraphs, titles and
list items are told apart only by where lines end. A line that ends short of the
column, where the next line's first word would have fit, ended there on purpose.
"""

from __future__ import annotations

import textwrap

from procedure_rag._readers.plaintext import iter_plain_text_within, read_plain_text
from procedure_rag._types import ElementKind, LayoutElement

K = ElementKind


def read(text: str) -> list[LayoutElement]:
    return read_plain_text(text, source_id="doc")


def wrap(paragraph: str, width: int = 72) -> str:
    return "\n".join(textwrap.wrap(paragraph, width)) + "\n"


INTRO = (
    "The backup agent copies the database files to the storage account every\n"
    "night. Before you change its schedule, make sure that no restore job is\n"
    "running: a running job keeps the files locked.\n"
)
BODY = (
    "If the agent stops while it copies a file, the next run starts that file\n"
    "again from the beginning, so an interrupted night costs no data.\n"
)


def headings(elements: list[LayoutElement]) -> list[str]:
    return [e.text for e in elements if e.kind is K.SECTION_HEADER]


def test_lines_after_a_lead_in_are_its_items_not_headings() -> None:
    text = INTRO.replace("locked.", "locked, so you must:") + "Stop the restore job\n" + BODY
    assert headings(read(text)) == []


def test_a_title_over_a_numbered_procedure_is_a_heading() -> None:
    text = INTRO + "Restoring one file\n1. Stop the agent.\n2. Copy the file back.\n"
    els = read(text)
    assert headings(els) == ["Restoring one file"]
    assert [e.kind for e in els[-2:]] == [K.LIST_ITEM, K.LIST_ITEM]


def test_a_title_over_a_new_procedure_closes_the_list_before_it() -> None:
    text = (
        "1. Stop the agent.\n2. Copy the file back.\n"
        "Restoring the whole database\n1. Stop the service.\n2. Replace the data folder.\n"
    )
    els = read(text)
    assert headings(els) == ["Restoring the whole database"]
    lists = [e.list_id for e in els if e.kind is K.LIST_ITEM]
    assert lists[0] == lists[1] != lists[2] == lists[3]


def test_a_paragraph_stays_one_element_across_short_lines() -> None:
    # Splitting paragraphs at short lines was measured and not kept: E-Manual's text breaks
    # lines at UI labels, and its retrieval fell by a point on every metric.
    text = INTRO + BODY
    assert [e.kind for e in read(text)] == [K.TEXT]


def test_a_full_line_goes_on_even_after_a_sentence() -> None:
    # A sentence that happens to end at the column's edge does not end the paragraph.
    text = wrap("Stop the agent first. " * 12)
    assert [e.kind for e in read(text)] == [K.TEXT]


def test_an_item_ends_where_the_next_word_would_have_fit() -> None:
    text = "• Disk usage of the storage account (shown in the portal)\n" + BODY
    els = read(text)
    assert els[0].kind is K.LIST_ITEM
    assert els[0].text == "Disk usage of the storage account (shown in the portal)"
    assert els[1].text.startswith("If the agent stops")


def test_an_item_narrower_than_the_body_keeps_its_wrapped_lines() -> None:
    body = (
        "バックアップ エージェントは毎晩、データベースのファイルをストレージ アカウントに\n"
        "コピーします。コピーの間はファイルがロックされ、ほかのジョブは待たされます。\n"
    )
    item = (
        "• 復元ジョブの実行中はスケジュールを変更しないでください。ファイル\n"
        "がロックされ、次の実行が失敗します。\n"
    )
    els = read(body + item)
    assert [e.kind for e in els] == [K.TEXT, K.LIST_ITEM]
    assert els[1].text.endswith("ファイルがロックされ、次の実行が失敗します。")


def test_a_line_opening_with_what_never_starts_a_japanese_word_continues_the_step() -> None:
    text = "1. 画面に表示された一覧から、復元するファイル\nを選択します。\n2. [復元] をクリックします。\n"
    els = read(text)
    assert [e.kind for e in els] == [K.LIST_ITEM, K.LIST_ITEM]
    assert els[0].text == "画面に表示された一覧から、復元するファイルを選択します。"


def test_labels_under_each_other_are_not_taken_apart() -> None:
    # Two short lines: nothing shows the column, so nothing is a hard break.
    text = "When you press the\nbutton in\nAmbient Mode\n, the browser screen appears.\n"
    assert [e.kind for e in read(text)] == [K.TEXT]


def test_a_run_inside_a_file_infers_no_title_from_the_steps_under_it() -> None:
    # A Word file or a PDF has its headings from styles, fonts or tags: a label over a
    # sub-procedure in its body text is no section.
    text = "Check the library paths first.\nFile settings\n1. Set the file numbers.\n2. Set the folder.\n"
    assert headings(read(text)) == ["File settings"]
    run = list(iter_plain_text_within(text, source_id="doc", run_id="doc/r1", offset=0, first_order=0))
    assert headings(run) == []


def test_rows_of_a_table_in_page_text_are_not_headings() -> None:
    # pypdf gives a table's rows as short lines, cells apart by one space: a row over the
    # next row is no title over a body.
    text = (
        "The following packages were missing from the environment after the first start.\n"
        "Package Command (conda or pip)\n"
        "1 numpy conda install numpy available\n"
        "2 scipy conda install scipy available\n"
        "Both can be installed with one command, and the service then starts without errors.\n"
    )
    assert headings(read(text)) == []


def test_a_numbered_question_over_sub_sections_on_the_next_page_is_a_heading() -> None:
    # A chapter's title alone on a divider page; its first sub-section after the next
    # page's running header.
    pages = [
        "Operations Guide\nCheck the job log after every run. The log lists each copied file.\n",
        "5. What if a restore fails?\n",
        "Operations Guide\n5.1 The file is locked\nStop the agent and run the restore again.\n",
        "Operations Guide\n5.2 The disk is full\nFree space on the target disk and try again.\n",
    ]
    els = read("\f".join(pages))
    assert headings(els)[:2] == ["5. What if a restore fails?", "5.1 The file is locked"]
    assert not [e for e in els if e.kind is K.LIST_ITEM]


def test_a_numbered_question_alone_is_a_step() -> None:
    text = "Answer each question before you start.\n1. Is the agent stopped?\n2. Is the disk free?\n"
    assert [e.kind for e in read(text)] == [K.TEXT, K.LIST_ITEM, K.LIST_ITEM]


def test_a_title_over_a_short_first_line_and_a_body_is_still_a_heading() -> None:
    # One short line under a title is the body's lead (or a subtitle), not a table's row.
    text = (
        "Precautions for the backup agent\n\nRead before changing the schedule\n"
        "The agent copies the database files every night, and a running restore job keeps "
        "them locked until it ends.\n"
    )
    assert headings(read(text))[:1] == ["Precautions for the backup agent"]


def test_a_title_over_steps_after_a_bullet_list_is_a_heading() -> None:
    text = (
        "Pick where the backups go.\n• A storage account in the same region.\n"
        "• A share on the local network.\n"
        "Scheduling the backup\n1. Open the agent's settings.\n2. Set the hour of the nightly run.\n"
    )
    els = read(text)
    assert headings(els) == ["Scheduling the backup"]
    assert [e.number for e in els if e.kind is K.LIST_ITEM][-2:] == ["1.", "2."]


def test_a_japanese_title_may_open_with_a_lowercase_command_name() -> None:
    # A title naming a script or command over its body, as Japanese manuals write them.
    text = (
        "バックアップは毎晩自動で実行されます。\n\n"
        "restore_db.sh を使ってデータベースを戻す\n"
        "復元には restore_db.sh を実行します。引数にはバックアップファイルのパスを指定します。"
        "実行中はサービスを停止しておいてください。\n"
    )
    assert headings(read(text)) == ["restore_db.sh を使ってデータベースを戻す"]


def test_a_lowercase_latin_line_without_japanese_is_no_title() -> None:
    text = (
        "バックアップは毎晩自動で実行されます。\n\n"
        "restore_db.sh --target backup\n"
        "復元には restore_db.sh を実行します。引数にはバックアップファイルのパスを指定します。"
        "実行中はサービスを停止しておいてください。\n"
    )
    assert headings(read(text)) == []


def test_a_japanese_table_header_row_over_a_long_row_is_no_title() -> None:
    # pypdf gives a table's header row as one line, its cells apart by a space; kanji on
    # both sides of that space make no Japanese title.
    text = (
        "ジョブの設定画面で次の値を入力します。\n"
        "設定名 入力する値\n"
        "ジョブ名 ジョブを識別するための任意の名前、一覧画面と実行履歴に表示されます\n"
        "実行間隔 分単位で指定します\n"
    )
    assert headings(read(text)) == []
    # A title spaced beside Latin text or between katakana words stays a title.
    titled = text.replace("設定名 入力する値\n", "\nジョブ スケジューラの設定\n")
    assert headings(read(titled))[:1] == ["ジョブ スケジューラの設定"]


def test_what_an_items_colon_introduces_stays_in_the_item() -> None:
    # Page text has no indentation: the command under "run the following command:" is
    # level with the items, and still the step's.
    text = (
        "Restore the database from the nightly copy.\n"
        "1. Stop the agent service.\n"
        "2. From an administrator command prompt, run the following command:\n"
        'C:\\Tools>restore-db --from "D:\\Backups\\nightly" --target main --verify\n'
        "Start the agent again once the command has finished without errors.\n"
    )
    els = read(text)
    items = [e for e in els if e.kind is K.LIST_ITEM]
    command = next(e for e in els if e.text.startswith("C:"))
    assert command.parent_id == items[1].element_id
    # Without the colon, a paragraph level with the items after the last one is outside the list.
    plain = read(text.replace("run the following command:", "run the restore command."))
    assert next(e for e in plain if e.text.startswith("C:")).parent_id is None


def test_a_japanese_item_naming_what_follows_keeps_it() -> None:
    # 「次のコマンドを実行します。」 announces the command under it, wrapped over two lines.
    text = (
        "バックアップから復元します。\n"
        "1. エージェントのサービスを停止します。\n"
        "2. 管理者のコマンド プロンプトを開き、次のコマンドを実行しま\n"
        "す。\n"
        'C:\\Tools>restore-db --from "D:\\Backups\\nightly" --verify\n'
        "コマンドが終わったら、エージェントを再び起動します。\n"
    )
    els = read(text)
    items = [e for e in els if e.kind is K.LIST_ITEM]
    assert next(e for e in els if e.text.startswith("C:")).parent_id == items[1].element_id


def test_two_spaces_after_a_sentence_are_no_table_cells() -> None:
    # Chromium's Japanese page text puts two spaces after 「。」 inside a paragraph; two such
    # lines under each other are no table.
    text = (
        "このコード例のバージョン番号は、現在のバー\n"
        "ジョンと一致しない場合があります。  例とは異なるダウンロ\n"
        "ード場所を選択した可能性もあります。  必要に応じてコマン\n"
        "ドを変更します。\n"
    )
    assert K.TABLE not in [e.kind for e in read(text)]
    rows = "ジョブ名  ジョブを識別する名前\n実行間隔  分単位の数値\n再試行数  失敗したときの回数\n"
    assert [e.kind for e in read(rows)] == [K.TABLE]


def test_a_japanese_note_wrapped_narrower_than_the_body_stays_whole() -> None:
    # A note box wraps narrower than the body: its lines stop inside words (「バー」「ジョン」),
    # which no writer breaks.
    body = "バックアップ エージェントは毎晩データベースのファイルを保存先のストレージにコピーします。\n"
    note = (
        "注意 このコマンド例のバージョン番号は、現在のバー\n"
        "ジョンと一致しない場合があります。必要に応じてコマ\n"
        "ンドを変更します。\n"
    )
    els = read(body + note + body)
    notes = [e for e in els if e.admonition]
    assert len(notes) == 1
    assert notes[0].text.endswith("必要に応じてコマンドを変更します。")
    # A line that ends a word is still read by its width: a short title stays a line of its own.
    titled = read(body + "\nエージェントの設定\n" + body)
    assert "エージェントの設定" in [e.text for e in titled]


# ----- a document's title, after its running header ------------------------------------------
# A loader's page text of a printed manual: the running header opens every page, then the
# document's title, at once a sub-heading and its body. Nothing but the header comes before
# the title: the start of the text sets it apart as a blank line would.
BACKUP_PAGES = (
    "Contoso Backup administration guide\n"
    "Back up the order database\n"
    "Overview\n" + INTRO + "Before you begin\n"
    "1. Sign in to the backup console as an operator.\n"
    "2. Check that the storage account has room for one more copy.\n"
    "Page 1\f"
    "Contoso Backup administration guide\n"
    "Schedule the copy\n"
    "1. Open the agent's settings.\n2. Set the start time to 01:00.\n" + BODY + "Page 2\f"
    "Contoso Backup administration guide\n"
    "Restore a copy\n"
    "1. Stop the agent.\n2. Copy the files back.\n3. Start the agent.\n"
    "Page 3"
)
BACKUP_PAGES_JA = (
    "Contoso Backup 管理ガイド\n"
    "受注データベースをバックアップする\n"
    "概要\n"
    "バックアップ エージェントは毎晩、データベースのファイルをストレージ アカウントに\n"
    "コピーします。スケジュールを変える前に、復元ジョブが動いていないことを確かめて\n"
    "ください。動いているジョブはファイルをロックします。\n"
    "事前の準備\n"
    "1. バックアップ コンソールにオペレーターとしてサインインします。\n"
    "2. ストレージ アカウントにもう 1 つコピーを置く空きがあることを確かめます。\n"
    "1 ページ\f"
    "Contoso Backup 管理ガイド\n"
    "コピーのスケジュールを設定する\n"
    "1. エージェントの設定を開きます。\n2. 開始時刻を 01:00 にします。\n"
    "2 ページ\f"
    "Contoso Backup 管理ガイド\n"
    "コピーを復元する\n"
    "1. エージェントを止めます。\n2. ファイルを元の場所にコピーします。\n3. エージェントを開始します。\n"
    "3 ページ"
)


def heading_levels(elements: list[LayoutElement]) -> list[tuple[str, int | None]]:
    return [(e.text, e.level) for e in elements if e.kind is K.SECTION_HEADER]


def test_the_title_after_a_running_header_is_over_the_sections() -> None:
    els = read(BACKUP_PAGES)
    assert [e.text for e in els if e.kind is K.PAGE_HEADER] == ["Contoso Backup administration guide"] * 3
    levels = heading_levels(els)
    assert levels[0] == ("Back up the order database", 1)
    assert levels[1:] == [
        ("Overview", 2),
        ("Before you begin", 2),
        ("Schedule the copy", 2),
        ("Restore a copy", 2),
    ]


def test_the_title_after_a_running_header_is_over_the_sections_in_japanese() -> None:
    levels = heading_levels(read(BACKUP_PAGES_JA))
    assert levels[0] == ("受注データベースをバックアップする", 1)
    assert levels[1:] == [
        ("概要", 2),
        ("事前の準備", 2),
        ("コピーのスケジュールを設定する", 2),
        ("コピーを復元する", 2),
    ]


def test_a_title_pair_after_text_still_needs_a_blank_line() -> None:
    # Past the opening, two title-like lines after a sentence are no title and sub-heading
    # unless a blank line sets them apart: here they are a paragraph's lines.
    text = INTRO + "Storage Account Settings\nRetention Policy\n" + BODY
    assert headings(read(text)) == []


# ----- a title over a bulleted list ------------------------------------------------------------


def test_a_title_over_a_list_of_sentences_is_a_heading() -> None:
    text = (
        INTRO + "Known limitations\n"
        "• The agent skips files that another process holds open, and logs\n"
        "their names.\n"
        "• A copy of more than 2 TB is split into parts of 2 TB each.\n" + BODY
    )
    els = read(text)
    assert headings(els) == ["Known limitations"]
    assert [e.kind for e in els[2:4]] == [K.LIST_ITEM, K.LIST_ITEM]


def test_a_title_over_a_list_of_sentences_is_a_heading_in_japanese() -> None:
    text = (
        "バックアップ エージェントは毎晩、データベースのファイルをコピーします。\n"
        "既知の制限事項\n"
        "• ほかのプロセスが開いているファイルはコピーされず、その名前がログに残ります。\n"
        "• 2 TB を超えるコピーは 2 TB ごとに分けられます。\n"
    )
    assert headings(read(text)) == ["既知の制限事項"]


def test_a_line_over_short_bulleted_labels_is_no_heading() -> None:
    # A column of short labels under a short line is a list and its label, not a section.
    text = INTRO + "Supported storage\n• Azure Blob\n• Amazon S3\n• Local disk\n" + BODY
    assert headings(read(text)) == []


def test_a_line_after_an_unfinished_sentence_over_bullets_is_no_heading() -> None:
    text = (
        "The agent copies the files to one of\n"
        "The Storage Accounts Below\n"
        "• A storage account in the same region as the database.\n"
    )
    assert headings(read(text)) == []


# ----- a title wrapped over two lines ----------------------------------------------------------


def test_a_title_wrapped_over_two_lines_is_one_heading() -> None:
    # A title set larger than the body wraps sooner: its last word goes on alone.
    text = INTRO + "Move the backup storage to another region after\nmigration\n" + BODY
    els = read(text)
    assert headings(els) == ["Move the backup storage to another region after migration"]
    assert els[1].span is not None
    assert text[els[1].span.start : els[1].span.end].endswith("after\nmigration")


def test_a_japanese_title_wrapped_inside_a_latin_word_is_one_heading() -> None:
    text = (
        "バックアップ エージェントは毎晩、データベースのファイルをコピーします。\n"
        "移行後にバックアップのストレージを別のリージョンの Azur\n"
        "e へ移す\n"
        "移行が終わったら、バックアップのストレージを新しいリージョンに作り直します。"
        "古いストレージは 30 日間残します。\n"
    )
    assert headings(read(text)) == ["移行後にバックアップのストレージを別のリージョンの Azure へ移す"]


def test_a_paragraph_whose_last_word_wrapped_is_no_title() -> None:
    # The first line ends a sentence's clause, not a title: the pair is a paragraph's end.
    text = INTRO + "Copies that are older than thirty days are removed, and so\nare their logs.\n" + BODY
    assert headings(read(text)) == []


def test_a_latin_word_a_japanese_line_broke_is_joined() -> None:
    text = "設定アプリで [更新とセキュリティ] を選び、Win\ndows Update を開きます。\n"
    (el,) = read(text)
    assert el.text == "設定アプリで [更新とセキュリティ] を選び、Windows Update を開きます。"

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

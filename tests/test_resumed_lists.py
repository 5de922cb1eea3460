"""A list that goes on after what stands between its steps: each step keeps its body.

Markdown ends a list at any paragraph or code block that is not indented under an item, so
a runbook whose command sits flush left between ``1.`` and ``2.``, a manual that puts a
figure caption under each step, or a screen description laid out as ``① label`` and a
paragraph under it, reads as many one-step lists. When the next list's first number follows
on from the last step (same marker shape, same level), it is the same list going on: what
stands between is the body of the step before it, and a list cut to fit the budget is cut
between steps, never between a step and its command, caption or description.

The cases come from documents other than the one that suggested the rule (a PLATEAU
simulator's screen descriptions): a runbook of our own writing, the PLATEAU area-management
manual, GROWI's group page, and screen descriptions of our own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from procedure_rag import Chunk, ChunkerOptions, ProcedureChunker


def children(text: str | bytes, budget: int = 400) -> list[Chunk]:
    options = ChunkerOptions(chunk_size=budget, emit_parents=False)
    return ProcedureChunker(options).chunk(text, source_id="doc")


def holding(chunks: list[Chunk], needle: str) -> Chunk:
    (found,) = [c for c in chunks if needle in c.text]
    return found


def with_step(chunks: list[Chunk], number: str) -> Chunk:
    """The chunk that holds step ``number`` itself (not repeated as a later part's context)."""
    (found,) = [c for c in chunks if any(s.number == number and not s.is_continuation for s in c.steps)]
    return found


RUNBOOK = {
    "en": (
        "# Restore a backup\n\nRestore the console's database from last night's backup.\n\n"
        "1. Stop the console service on the server.\n\n```\nsudo systemctl stop backup-console\n```\n\n"
        "2. Copy the backup file into the data folder.\n\n"
        "The file is named after the date it was taken, for example `2026-12-01.tar`.\n\n"
        "3. Unpack the archive over the current data.\n\n"
        "```\nsudo tar -xf 2026-12-01.tar -C /var/lib/backup-console\n```\n\n"
        "4. Start the service again and sign in to check that your jobs are listed.\n"
    ),
    "ja": (
        "# バックアップから戻す\n\n前夜のバックアップからコンソールのデータベースを戻します。\n\n"
        "1. サーバーでコンソールのサービスを停止します。\n\n```\nsudo systemctl stop backup-console\n```\n\n"
        "2. バックアップ ファイルをデータ フォルダーにコピーします。\n\n"
        "ファイル名は取得した日付です（例: `2026-12-01.tar`）。\n\n"
        "3. 現在のデータの上にアーカイブを展開します。\n\n"
        "```\nsudo tar -xf 2026-12-01.tar -C /var/lib/backup-console\n```\n\n"
        "4. サービスを再開し、サインインしてジョブが一覧にあることを確認します。\n"
    ),
}
COMMANDS = ("sudo systemctl stop backup-console", "sudo tar -xf 2026-12-01.tar")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_command_between_steps_is_the_step_before_it(lang: str) -> None:
    # At the default budget the whole procedure is one chunk; before, each command was a
    # code chunk of its own and the steps around it two or three more.
    (only,) = children(RUNBOOK[lang])
    assert [s.number for s in only.steps] == ["1.", "2.", "3.", "4."]
    assert all(command in only.text for command in COMMANDS)


@pytest.mark.parametrize(("lang", "budget"), [("en", 100), ("ja", 120)])
def test_a_cut_list_is_cut_between_a_step_with_its_command_and_the_next(lang: str, budget: int) -> None:
    chunks = [c for c in children(RUNBOOK[lang], budget=budget) if c.steps]
    assert [[s.number for s in c.steps] for c in chunks] == [["1.", "2."], ["3.", "4."]]
    for chunk, command in zip(chunks, COMMANDS, strict=True):
        assert command in chunk.text
    # The second part goes on with the list and says so.
    assert [c.continued for c in chunks] == [False, True]


SCREEN = (
    "# 予約画面\n\n予約の登録と取り消しを行う画面です。\n\n"
    "① 日付\n\n予約する日を選択します。\n\n"
    "② 時間帯\n\n予約する時間帯を選択します。空いていない時間帯は灰色で表示されます。\n\n"
    "③ 登録\n\nクリックすると予約が登録され、確認メールが送信されます。\n\n"
    "登録した予約は「予約一覧」タブで確認できます。\n\n"
    "④ 取消\n\nクリックすると入力内容を破棄して画面を閉じます。\n"
)


def test_screen_items_keep_their_descriptions_when_the_list_is_cut() -> None:
    chunks = children(SCREEN, budget=100)
    assert [[s.number for s in c.steps] for c in chunks] == [["①", "②"], ["③"], ["④"]]
    for number, description in [
        ("②", "空いていない時間帯は灰色で表示されます。"),
        ("③", "登録した予約は「予約一覧」タブで確認できます。"),
        # The paragraph after the last item is its description too: every item has one.
        ("④", "入力内容を破棄して画面を閉じます。"),
    ]:
        assert description in with_step(chunks, number).text


def test_figure_captions_and_notes_stay_with_their_steps(tests_data: Path) -> None:
    # The PLATEAU area-management manual puts a figure caption, and at times a ※ note, under
    # each numbered step, flush left: eight one-step lists to Markdown.
    text = (tests_data / "ja-native/areamanagement-dashboard-tool/markdown/manual/userMan.md").read_text(
        encoding="utf-8"
    )
    chunks = [c for c in children(text) if c.section_path == ("5 登録情報の公開承認",)]
    step4 = with_step(chunks, "4.")
    assert "※履歴情報を含む、エリアマネジメント・イベント活動の場合" in step4.text
    assert "図5‑4 公開承認状況の更新" in step4.text
    assert [s.number for c in chunks for s in c.steps] == [f"{n}." for n in range(1, 9)]
    # Parts open on a step: none starts with a step's caption or note.
    for chunk in chunks:
        first = chunk.text.split("\n")[1]
        assert first[0].isdigit() or not chunk.steps


def test_screenshots_between_steps_do_not_cut_the_procedure(tests_data: Path) -> None:
    # GROWI's group page shows a screenshot under each step, flush left: five one-step lists to
    # Markdown, which the packer filled in as text and cut between steps 4 and 5.
    text = (tests_data / "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md").read_text(
        encoding="utf-8"
    )
    chunks = [c for c in children(text) if c.section_path == ("グループ管理", "グループの親子設定")]
    (procedure,) = [c for c in chunks if c.steps]
    assert [s.number for s in procedure.steps] == ["1.", "2.", "3.", "4.", "5."]
    assert "![group17](/assets/images/ja/group17.png)" in procedure.text


@pytest.mark.parametrize(
    ("text", "last"),
    [
        # Numbering starts again: a second procedure.
        (
            "# A\n\n1. Open the app.\n\n2. Sign in.\n\nThen reset the device.\n\n"
            "1. Open Settings.\n\n2. Select Reset.\n",
            "2. Select Reset.",
        ),
        # Another marker shape.
        ("# A\n\n1. Open the app.\n\nIt starts in a few seconds.\n\n(2) Sign in.\n", "(2) Sign in."),
        # Another level: the next item is a sub-step of nothing before it.
        ("# A\n\n1. Open the app.\n\nIt starts in a few seconds.\n\n- 2. Sign in.\n", "2. Sign in."),
        # Another list stands between: only the nearest list may go on.
        (
            "# A\n\n1. Open the app.\n\nOn the first run:\n\n1. Accept the terms.\n2. Choose a language.\n\n"
            "Then:\n\n2. Sign in.\n",
            "2. Sign in.",
        ),
        # Too much between.
        (
            "# A\n\n1. Open the app.\n\n"
            + "".join(f"Paragraph {i} about the app.\n\n" for i in range(5))
            + "2. Sign in.\n",
            "2. Sign in.",
        ),
    ],
)
def test_a_list_that_does_not_follow_on_stays_apart(text: str, last: str) -> None:
    # Packed as separate units: the chunk of the last step does not go on with the first list.
    chunks = children(text, budget=20)
    assert len(chunks) > 1
    assert not holding(chunks, last).continued
    assert last not in holding(chunks, "1. Open the app.").text


@pytest.mark.parametrize(("first", "second"), [("1.", "2."), ("b.", "c."), ("(iii)", "(iv)"), ("④", "⑤")])
def test_a_list_that_follows_on_is_cut_as_one_list(first: str, second: str) -> None:
    # The control of the test above: the same budget, the list going on after a paragraph.
    text = f"# A\n\n{first} Open the app.\n\nIt starts in a few seconds.\n\n{second} Sign in.\n"
    chunks = children(text, budget=20)
    assert [c.continued for c in chunks] == [False, True]
    assert [s.number for c in chunks for s in c.steps if not s.is_continuation] == [first, second]


def test_a_bulleted_list_under_a_step_is_its_body() -> None:
    # A Markdown author's bullets under step 1, not indented: a bullet list between two
    # numbered lists. It is step 1's body; only an ordered list between keeps them apart.
    text = (
        "# Schedule a job\n\n1. Create the job and fill in its fields.\n\n"
        "- Name: nightly\n- Start time: 01:00\n- Target: the file server\n\n"
        "2. Save the job.\n\n3. Check that it is listed under Jobs.\n"
    )
    chunks = children(text, budget=50)
    first = with_step(chunks, "1.")
    assert "Target: the file server" in first.text
    assert len(chunks) > 1
    assert all(c.continued for c in chunks if c is not first)

"""Word files read by docx2txt (Docx2txtLoader, LlamaIndex's DocxReader): steps without their numbers.

Word numbers its lists itself, so the text docx2txt extracts holds the steps as bare
paragraphs. The fixtures are Word files pandoc wrote (``tests/data/docx/make_docx.py``):
an admin guide of our own writing in English and Japanese (``tests/data/written/``) and a page of
the GROWI manual, a Japanese-native manual none of the rules came from.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_procedures import ProcedureTextSplitter
from procedure_rag import read_metadata
from procedure_rag._language.lexicons import LEXICONS
from procedure_rag._language.numbering import DEFAULT_STEP_STYLES, match_step_marker
from procedure_rag._readers.unmarked_steps import unmarked_steps


def _docx2txt(path: Path) -> list[Document]:
    with warnings.catch_warnings():  # langchain-community says it is being sunset
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_community.document_loaders import Docx2txtLoader  # noqa: PLC0415

    return Docx2txtLoader(str(path)).load()


def _sections(documents: list[Document]) -> dict[str, list[dict[str, Any]]]:
    """Each chunk's last section title -> its steps (chunks of one section joined)."""
    sections: dict[str, list[dict[str, Any]]] = {}
    for doc in ProcedureTextSplitter.from_tiktoken_encoder().split_documents(documents):
        meta = read_metadata(doc.metadata)
        title = meta["section_path"][-1] if meta["section_path"] else ""
        sections.setdefault(title, []).extend(meta["steps"])
    return sections


def _actions(steps: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(s["step_number"], s["action"]) for s in steps]


def test_docx2txt_steps_come_back_numbered_under_their_sections(tests_data: Path) -> None:
    sections = _sections(_docx2txt(tests_data / "docx/backup-console-en.docx"))
    schedule = sections["Schedule a nightly backup"]
    # After the lead-in "To schedule a nightly backup:"; the last step has no full stop and its
    # result after it, so it is no title.
    assert _actions(schedule) == [
        ("1", "Sign in to the Backup Console with an administrator account."),
        ("2", "Select Jobs > New job."),
        ("3", "In Source, select the file server to back up."),
        ("4", "In Start time, enter a time outside office hours, for example 01:00."),
        ("5", "Click Save"),
    ]
    assert "Click Save" not in sections
    restore = sections["Restore a folder"]
    # The note before the lead-in is no step; a step may open with its condition.
    assert [s["step_number"] for s in restore] == ["1", "2", "3", "4"]
    assert restore[2]["condition"] == "If the folder was moved since then"
    assert restore[2]["action"] == "enter its new path in Target."
    # No lead-in: the title right over the steps opens the list.
    replace_disk = sections["Replace a backup disk"]
    assert replace_disk[0]["action"] == "Stop the running jobs from Jobs > Stop all."
    assert sections["Retention"] == []


def test_japanese_steps_ask_politely_and_a_lead_in_that_instructs_is_no_step(tests_data: Path) -> None:
    sections = _sections(_docx2txt(tests_data / "docx/backup-console-ja.docx"))
    schedule = sections["夜間バックアップを予約する"]
    # 「…するには、次の手順を実行します。」 introduces the steps; the result after them reports.
    assert [s["step_number"] for s in schedule] == ["1", "2", "3", "4", "5"]
    assert schedule[0]["action"] == "管理者アカウントでバックアップ コンソールにサインインします。"
    assert schedule[-1]["action"] == "[保存] をクリックします。"
    restore = sections["フォルダーを復元する"]
    assert len(restore) == 4
    assert "注意" not in restore[0]["action"]
    assert sections["保存期間"] == []  # 「…保存されます。」「…変更できます。」 state, they ask nothing


def test_a_japanese_native_manual_page_gets_its_steps(tests_data: Path) -> None:
    # GROWI's group page: lists right under their titles, actions with their results
    # (「…をクリックすると、…が追加されます。」).
    sections = _sections(_docx2txt(tests_data / "docx/growi-group-ja.docx"))
    create = sections["グループの作成"]
    assert [s["action"] for s in create] == [
        "管理メニューの「グループ管理」に移動します。",
        "「新規グループの作成」ボタンをクリックします。",
        "「グループ名」と「説明」を記入して、「Create」ボタンをクリックします。",
    ]
    add = sections["グループへのユーザーの追加"]
    assert len(add) == 4
    assert add[3]["action"].startswith("入力し、「add」をクリック")
    # The section's first paragraph says what the user can do: no step.
    nested = sections["グループの親子設定"]
    assert [s["step_number"] for s in nested] == ["1", "2", "3", "4", "5"]
    assert nested[0]["action"] == "グループ一覧から、子グループを作成したいグループを選択します。"


def test_the_rule_is_for_word_text_only(tests_data: Path) -> None:
    # The same text from a source that is no Word file (a .txt) keeps its paragraphs: plain text
    # writes its list markers, so a run of instructions there is prose.
    (doc,) = _docx2txt(tests_data / "docx/backup-console-en.docx")
    as_text = Document(page_content=doc.page_content, metadata={"source": "backup-console-en.txt"})
    sections = _sections([as_text])
    assert all(steps == [] for steps in sections.values())
    # A source_format key names the text's origin where no file name does.
    named = ProcedureTextSplitter.from_tiktoken_encoder().split_documents(
        [Document(page_content=doc.page_content, metadata={"source_format": "docx"})]
    )
    assert sum(d.metadata["step_count"] for d in named) == 12


def test_llama_index_docx_reader_gives_the_same_steps(tests_data: Path) -> None:
    from llama_index.core import SimpleDirectoryReader  # noqa: PLC0415

    from llama_index_procedures import ProcedureNodeParser  # noqa: PLC0415

    # SimpleDirectoryReader reads .docx with llama-index-readers-file's DocxReader (docx2txt).
    reader = SimpleDirectoryReader(input_files=[str(tests_data / "docx/backup-console-ja.docx")])
    nodes = ProcedureNodeParser().get_nodes_from_documents(reader.load_data())
    steps = [s for n in nodes for s in read_metadata(n.metadata)["steps"]]
    assert len(steps) == 12
    assert steps[5]["action"] == "[ジョブ] を選択し、フォルダーをバックアップしたジョブを選択します。"


def _found(text: str) -> list[tuple[int, str]]:
    found = unmarked_steps(
        text, LEXICONS.values(), marked=lambda ln: match_step_marker(ln.head, DEFAULT_STEP_STYLES) is not None
    )
    return [(n, text[offset:].split("\n", 1)[0]) for offset, n in found.items()]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A lone instruction after prose is a sentence, not a one-step list.
        ("Backups run at night.\n\nRestart the server after an update.\n\nIt takes a minute.", []),
        # Two in a run are a list, and a title over them is no step.
        (
            "Update the agent\n\nStop the service.\n\nRun the installer.\n\nThe service starts again.",
            [(1, "Stop the service."), (2, "Run the installer.")],
        ),
        # Typed numbers are the reader's own: the unmarked rule leaves that list alone.
        ("To update:\n\n1. Stop the service.\n\n2. Run the installer.", []),
        # A step's note and the paragraphs under it (up to five) keep the list open; "Note that …"
        # opens with a verb but is no step.
        (
            "To update:\n\nStop the service.\n\nNote that it may take a minute.\n\nIts icon turns grey."
            "\n\nRun the installer.",
            [(1, "Stop the service."), (2, "Run the installer.")],
        ),
        (
            "To set up:\n\nConnect to the internet.\n\nThe time zone is set from the network.\n\n"
            "Note You can go back to this step.\n\nAlso note that the password times out.\n\n"
            "The device looks for a profile.\n\nClick Accept on the licence screen.",
            [(1, "Connect to the internet."), (2, "Click Accept on the licence screen.")],
        ),
        # A title-like step goes on with an open list (its number too); a label that is no
        # instruction ends it and leads a new one.
        (
            "To set a proxy:\n\nOpen Settings.\n\nScroll down to Proxy\n\nEnter the address.\n\n"
            "Per-network proxy:\n\nOpen the network's page.\n\nEnter the address.",
            [
                (1, "Open Settings."),
                (2, "Scroll down to Proxy"),
                (3, "Enter the address."),
                (1, "Open the network's page."),
                (2, "Enter the address."),
            ],
        ),
        # Japanese: a terse step ends on what it operates; 「…に注意してください」 is the step's note.
        (
            "設定するには:\n\n[設定] を開きます。\n\n[詳細] を選択\n\n"
            "設定は再起動後に有効になることに注意してください。\n\n[保存] をクリックします。",
            [(1, "[設定] を開きます。"), (2, "[詳細] を選択"), (3, "[保存] をクリックします。")],
        ),
        # A modal sentence says what one can do: not a step.
        ("To update:\n\nYou can stop the service.\n\nYou can run the installer.", []),
    ],
)
def test_unmarked_step_runs(text: str, expected: list[tuple[int, str]]) -> None:
    assert _found(text) == expected

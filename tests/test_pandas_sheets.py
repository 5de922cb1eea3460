"""Excel sheets as LlamaIndex's PandasExcelReader writes them (SimpleDirectoryReader's default for .xlsx).

Each sheet is one document, a line per row, ``header: value, header: value``, the sheet's first
row made the column names. The splitter and the node parser read the cells back and read the
sheet as the Excel reader reads the file: the real sheets of tests/data/xlsx/ (published
templates and a procedure, copied byte for byte) give the file reader's steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

from langchain_procedures import ProcedureLoader, ProcedureTextSplitter
from llama_index_procedures import ProcedureNodeParser
from procedure_rag import read_metadata
from procedure_rag._readers.pandas_rows import sheet_rows

SHEETS = [
    "xlsx/ja_neos21_sagyo-tejunsho-template.xlsx",
    "xlsx/ja_neos21_test-shiyousho-template.xlsx",
    "xlsx/en_nii-weko_file-download-implementation-procedure.xlsx",
]


def _fields(metadatas: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (s["number"], s["action"], s.get("result"), s.get("caution"), s.get("condition"))
        for meta in metadatas
        for s in read_metadata(meta)["steps"]
    ]


def _pandas_documents(path: Path) -> list[Any]:
    from llama_index.core import SimpleDirectoryReader  # noqa: PLC0415

    return SimpleDirectoryReader(input_files=[str(path)]).load_data()


@pytest.mark.parametrize("name", SHEETS)
def test_pandas_rows_give_the_file_readers_steps(tests_data: Path, name: str) -> None:
    path = tests_data / name
    documents = _pandas_documents(path)
    assert "Unnamed: 1: " in documents[0].text  # the loader's own text, as users get it
    nodes = ProcedureNodeParser().get_nodes_from_documents(documents)
    ours = _fields([n.metadata for n in nodes])
    from_file = _fields([d.metadata for d in ProcedureLoader(path).load()])
    assert ours == from_file
    assert ours  # each sheet has steps


@pytest.mark.parametrize("name", SHEETS)
def test_the_reader_alone_names_no_file_and_its_sheets_are_still_read(tests_data: Path, name: str) -> None:
    # PandasExcelReader().load_data(path) writes no metadata: the text alone tells the format, by a
    # column pandas named "Unnamed: i" in its own place (every sheet here has an empty header cell).
    from llama_index.readers.file import PandasExcelReader  # noqa: PLC0415

    path = tests_data / name
    documents = PandasExcelReader().load_data(path)
    assert all(d.metadata == {} for d in documents)
    nodes = ProcedureNodeParser().get_nodes_from_documents(documents)
    assert _fields([n.metadata for n in nodes]) == _fields([d.metadata for d in ProcedureLoader(path).load()])


def test_a_text_of_records_with_no_source_stays_text() -> None:
    # Two rows with every column would do for a workbook's text; with no source, a column named
    # in pandas' way is needed.
    text = "Name: Kiosk, Mode: single app\nName: Lobby, Mode: multi app"
    assert sheet_rows(text) is not None
    docs = ProcedureTextSplitter.from_tiktoken_encoder().split_documents([Document(page_content=text)])
    assert "Name: Kiosk, Mode: single app" in docs[0].page_content


def test_a_procedure_sheets_columns_are_step_fields_through_the_langchain_splitter(tests_data: Path) -> None:
    path = tests_data / "xlsx/ja_neos21_sagyo-tejunsho-template.xlsx"
    source = {"source": str(path)}
    documents = [Document(page_content=d.text, metadata=source) for d in _pandas_documents(path)]
    chunks = ProcedureTextSplitter.from_tiktoken_encoder().split_documents(documents)
    steps = [s for c in chunks for s in read_metadata(c.metadata)["steps"]]
    assert [s["number"] for s in steps] == ["1", "2"]
    assert steps[0]["action"] == "スタートメニューより「コマンドプロンプト」を開く。"
    assert steps[0]["result"] == "・コマンドプロンプトが起動できること。"
    # The same text from a source that is no sheet stays text: no columns, so no result field.
    as_text = Document(page_content=documents[0].page_content, metadata={"source": "notes.txt"})
    plain = ProcedureTextSplitter.from_tiktoken_encoder().split_documents([as_text])
    results = [s.get("result") for c in plain for s in read_metadata(c.metadata)["steps"]]
    assert steps[0]["result"] not in results


def test_sheet_rows_reads_cells_back() -> None:
    text = (
        "No: 1, Unnamed: 1: Open the console, then sign in: as admin, Expected: Shown, No.1: A\n"
        "No: 2, Unnamed: 1: Run the job\nand wait, Expected: , No.1: B"
    )
    assert sheet_rows(text) == [
        ["No", "", "Expected", "No"],
        ["1", "Open the console, then sign in: as admin", "Shown", "A"],
        ["2", "Run the job\nand wait", "", "B"],
    ]


def test_a_number_column_pandas_wrote_as_floats_is_read_as_the_sheet_shows_it() -> None:
    # pandas reads a column of numbers with an empty cell as floats: 1.0, 2.0.
    text = "No: 1.0, Action: Open it., Result: It opens.\nNo: , Action: See the note., Result: \n"
    text += "No: 2.0, Action: Close it., Result: It closes."
    rows = sheet_rows(text)
    assert rows is not None
    assert [row[0] for row in rows] == ["No", "1", "", "2"]
    assert sheet_rows("Version: 2.0, Note: a\nVersion: 2.5, Note: b") == [
        ["Version", "Note"],
        ["2.0", "a"],
        ["2.5", "b"],
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Just a note: with a colon, and more text",  # one row, no pandas column name in place
        "Title\nname: value, other: value",  # the first line names no column
        "",
    ],
)
def test_other_text_is_no_sheet(text: str) -> None:
    assert sheet_rows(text) is None


_CELL = st.text(alphabet="ab XY,:.1手順", max_size=12).map(str.strip)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_CELL, min_size=3, max_size=3), min_size=1, max_size=5), st.text(max_size=60))
def test_pandas_text_round_trips_and_other_text_never_raises(grid: list[list[str]], noise: str) -> None:
    # The loader's format: the first row made the column names, "Unnamed: i" for an empty one.
    names = ["No", "Unnamed: 1", "手順"]
    rows = [", ".join(f"{name}: {cell}" for name, cell in zip(names, row, strict=True)) for row in grid]
    # A value holding "name: " after ", " can pass for a column in a one-row sheet; real
    # sheets have their columns confirmed by every row (test_sheet_rows_reads_cells_back).
    assume(all(": " not in cell for row in grid for cell in row))
    assert sheet_rows("\n".join(rows)) == [["No", "", "手順"], *grid]
    sheet_rows(noise)  # any text: a sheet or None, never an error

"""The Excel reader on real workbooks (tests/data/xlsx, copies of ../shared/data/real-docs) and on bad input.

The main assertions are on the real files: the 作業手順書 and テスト仕様書 templates (procedure
sheets with merged two-row headers) and NII WEKO's procedure laid out in cells. Small
workbooks built here with openpyxl cover what the real files do not hold (a hidden sheet,
an English header, a table split by rows, a formula, macros). openpyxl writes no cached
values for formulas, so the formula case writes its cached value into the sheet XML itself.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import Document as LlamaDocument
from openpyxl import Workbook

from langchain_procedures import ProcedureTextSplitter
from llama_index_procedures import ProcedureNodeParser
from procedure_rag import ChunkerOptions, ChunkLevel, ProcedureChunker, ReaderError, chunk_metadata
from procedure_rag._cli.main import main
from procedure_rag._readers.registry import detect_format, read_source
from procedure_rag._types import Chunk, ElementKind

DATA = Path(__file__).resolve().parent / "data" / "xlsx"
SAGYO = DATA / "ja_neos21_sagyo-tejunsho-template.xlsx"
SHIYOU = DATA / "ja_neos21_test-shiyousho-template.xlsx"
WEKO = DATA / "en_nii-weko_file-download-implementation-procedure.xlsx"
CHUNKER = ProcedureChunker(ChunkerOptions(length_function=len, chunk_size=400))


def chunks_of(source: object, chunker: ProcedureChunker = CHUNKER, **kwargs: object) -> list[Chunk]:
    return [
        c
        for c in chunker.iter_chunks_from_source(source, source_id="book", **kwargs)  # type: ignore[arg-type]
        if c.level == ChunkLevel.CHILD
    ]


def steps_of(chunks: list[Chunk]) -> list[tuple[str, str, str, str, str]]:
    return [(s.number, s.action, s.result, s.caution, s.condition) for c in chunks for s in c.steps]


def workbook(build: Callable[[Workbook], None]) -> bytes:
    book = Workbook()
    build(book)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


# ----- real files ---------------------------------------------------------------------------------


def test_sagyo_rows_are_steps_with_fields_from_their_columns() -> None:
    chunks = chunks_of(SAGYO)
    assert steps_of(chunks) == [
        (
            "1",
            "スタートメニューより「コマンドプロンプト」を開く。",
            "・コマンドプロンプトが起動できること。",
            "",
            "",
        ),
        (
            "2",
            "コマンドプロンプトにて以下のコマンドを入力・実行する。\n\n> ssh 10.120.0.0",  # line breaks kept
            "・○○サーバに SSH 接続できること。\n・プロンプトが「ADMIN_SERVER >」と表示されていること。",
            "",
            "",
        ),
    ]
    # Rows 3-10 of the template hold only their number: no steps, no text.
    text = "\n".join(c.text for c in chunks)
    assert "\n3 " not in text
    # The other columns stay in the step's text, labelled.
    assert "1 スタートメニューより「コマンドプロンプト」を開く。\n概要: ○○サーバに SSH 接続する\n" in text
    assert "作業結果: OK" in text


def test_sagyo_sheet_is_the_section_and_reaches_the_metadata() -> None:
    chunks = chunks_of(SAGYO)
    assert {c.section_path for c in chunks} == {("作業手順書",)}
    assert {c.sheet for c in chunks} == {"作業手順書"}
    meta = chunk_metadata(chunks[0])
    assert meta["sheet"] == "作業手順書"
    assert "page" not in meta


def test_shiyousho_header_under_a_merged_group_row_gives_the_one_step() -> None:
    chunks = chunks_of(SHIYOU)
    assert steps_of(chunks) == [
        (
            "1",
            "1. ブラウザで https://example.com に遷移する。\n2. 「○○」リンクを押下する。",
            "1. 操作手順 1. の結果、「トップ」画面が表示されること。\n"
            "2. 操作手順 2. の結果、「○○」画面が表示されること。",
            "",
            "",
        )
    ]
    text = "\n".join(c.text for c in chunks)
    assert "テスト対象 ○○仕様書" in text  # the row above the header, as a paragraph
    assert "観点: 「○○」画面が初期表示されること。" in text
    # The master list right of the table (OK / NG / 未実施) makes no steps of rows 2 and 3.
    assert "未実施" not in text


def test_weko_cells_are_read_as_text_with_their_numbered_steps() -> None:
    chunks = chunks_of(WEKO)
    numbered = [s.number for c in chunks for s in c.steps if s.number.startswith("(")]
    assert numbered == ["(1)", "(2)", "(3)", "(4)"]
    assert {c.section_path[0] for c in chunks} == {"file-download"}
    bullets = [s.action for c in chunks for s in c.steps if s.number == "-"]
    assert bullets[0] == "Enable the registration of signal receivers"
    assert len(bullets) == 9


#: Each file's header rows (1-based): their cells are the steps' labels, not text of their own.
HEADER_ROWS = {SAGYO: range(3, 5), SHIYOU: range(5, 7), WEKO: range(0)}


@pytest.mark.parametrize("path", list(HEADER_ROWS), ids=lambda p: p.name)
def test_spans_point_into_the_extracted_text_and_no_cell_is_lost(path: Path) -> None:
    from openpyxl import load_workbook  # noqa: PLC0415

    source = read_source(path, source_id="book", fmt="xlsx")
    for el in source.elements:
        assert el.span is not None
        shown = source.text[el.span.start : el.span.end]
        assert shown.startswith(el.number) if el.number else True
        assert el.text.split()[0] in shown
        assert dict(el.hints)["sheet"]
    words = set(source.text.split())
    book = load_workbook(path, read_only=True, data_only=True)
    right_of_table = {"OK", "NG", "未実施"}  # the master list of a dropdown, beside the table
    for sheet in book.worksheets:
        for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
            if number in HEADER_ROWS[path]:
                continue
            for value in row:
                if isinstance(value, str) and value.strip() and value not in right_of_table:
                    assert set(value.split()) <= words, value


# ----- small workbooks for what the real files do not hold -----------------------------------------


def _english_procedure(book: Workbook) -> None:
    sheet = book.active
    assert sheet is not None
    sheet.title = "Replace filter"
    sheet.append(["Step", "Procedure", None, "Notes", "Prerequisite"])
    sheet.append([None, "Action", "Expected result", None, None])
    sheet.merge_cells("A1:A2")
    sheet.merge_cells("B1:C1")
    sheet.merge_cells("D1:D2")
    sheet.merge_cells("E1:E2")
    sheet.append([1, "Turn the power off.", "The lamp goes out.", "Wait 10 minutes.", "The pump is idle."])
    sheet.append([2, "Open the cover.\nLift the filter.", "The filter is free.", None, None])
    sheet.append([3, None, None, None, None])
    hidden = book.create_sheet("Internal")
    hidden.append(["Step", "Action"])
    hidden.append([1, "Secret step."])
    hidden.sheet_state = "hidden"
    table = book.create_sheet("Parts")
    table.append(["Part", "Code"])
    for n in range(40):
        table.append([f"Filter {n}", f"F-{n:03}"])


ENGLISH = workbook(_english_procedure)


def test_a_two_row_merged_english_header_gives_every_field() -> None:
    chunks = chunks_of(ENGLISH)
    assert steps_of(chunks) == [
        ("1", "Turn the power off.", "The lamp goes out.", "Wait 10 minutes.", "The pump is idle."),
        ("2", "Open the cover.\nLift the filter.", "The filter is free.", "", ""),
    ]


def test_hidden_sheets_are_skipped_unless_asked_for() -> None:
    assert "Secret step." not in "\n".join(c.text for c in chunks_of(ENGLISH))
    with_hidden = ProcedureChunker(ChunkerOptions(length_function=len, include_hidden_sheets=True))
    hidden = [c for c in chunks_of(ENGLISH, with_hidden) if c.sheet == "Internal"]
    assert steps_of(hidden) == [("1", "Secret step.", "", "", "")]


def test_another_sheet_is_a_table_split_by_rows_with_its_header_repeated() -> None:
    parts = [c for c in chunks_of(ENGLISH) if c.sheet == "Parts"]
    assert len(parts) > 1
    for chunk in parts:
        assert chunk.section_path == ("Parts",)
        assert "| Part | Code |\n|---|---|" in chunk.text
    rows = [line for c in parts for line in c.text.splitlines() if line.startswith("| Filter ")]
    assert rows == [f"| Filter {n} | F-{n:03} |" for n in range(40)]


def _with_formula(book: Workbook) -> None:
    sheet = book.active
    assert sheet is not None
    sheet.append(["Item", "Count"])
    sheet.append(["Filters", "=1+1"])


def _cached(data: bytes, value: str) -> bytes:
    """The workbook with ``value`` as the formula's cached result (openpyxl writes none)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                body, count = re.subn(
                    rb"<f>1\+1</f><v\s*/?>(</v>)?", b"<f>1+1</f><v>" + value.encode() + b"</v>", body
                )
                assert count == 1, body
            dst.writestr(info, body)
    return out.getvalue()


def test_formulas_give_their_cached_values_and_are_never_evaluated() -> None:
    plain = workbook(_with_formula)
    text = read_source(plain, source_id="b", fmt="xlsx").text
    assert "1+1" not in text  # no formula text, and no value: nothing was evaluated
    assert "| Filters |  |" in text
    cached = read_source(_cached(plain, "7"), source_id="b", fmt="xlsx").text  # a value no evaluation gives
    assert "| Filters | 7 |" in cached


def _as_xlsm(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "[Content_Types].xml":
                body = body.replace(
                    b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                    b"application/vnd.ms-excel.sheet.macroEnabled.main+xml",
                )
            dst.writestr(info, body)
        dst.writestr(
            "xl/vbaProject.bin",
            b'Attribute VB_Name = "Module1"\nSub Auto_Open()\nShell "rm -rf /"\nEnd Sub\n',
        )
    return out.getvalue()


def test_an_xlsm_is_read_and_its_macros_are_left_alone(tmp_path: Path) -> None:
    xlsm = _as_xlsm(ENGLISH)
    assert detect_format(xlsm) == "xlsx"
    path = tmp_path / "book.xlsm"
    path.write_bytes(xlsm)
    chunks = chunks_of(path)
    assert [s.number for s in chunks[0].steps] == ["1", "2"]
    assert "Auto_Open" not in "\n".join(c.text for c in chunks)


# ----- bad input --------------------------------------------------------------------------------------

OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504


def _bomb() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        with zipfile.ZipFile(io.BytesIO(ENGLISH)) as src:
            for info in src.infolist():
                zf.writestr(info.filename, src.read(info))
        zf.writestr("xl/media/zeros.bin", b"\x00" * 3_000_000)
    return out.getvalue()


BAD = [
    ("truncated", lambda: SAGYO.read_bytes()[:5000], "file", "book is a damaged or truncated zip: "),
    (
        "not-a-zip",
        lambda: b"No,Action\n1,Open\n",
        "file",
        "book is not an Office Open XML file: it does not start as a zip does",
    ),
    (
        "legacy-xls",
        lambda: OLE + "Workbook".encode("utf-16-le"),
        "file",
        "soffice --headless --convert-to xlsx",
    ),
    ("encrypted", lambda: OLE + "EncryptedPackage".encode("utf-16-le"), "file", "book is password-protected"),
    ("zip-bomb", _bomb, "file", r"book unpacks to 3,\d{3},\d{3} bytes, over the limit of 1,000,000 \("),
    (
        "no-content-types",
        lambda: _drop(ENGLISH, "[Content_Types].xml"),
        "[Content_Types].xml",
        "book: the part",
    ),
    (
        "no-sheet",
        lambda: _drop(ENGLISH, "xl/worksheets/sheet1.xml"),
        "xl/worksheets/sheet1.xml",
        "book: sheet .Replace filter. has no part",
    ),
    ("a-docx", lambda: _retype(ENGLISH), "xl/workbook.xml", "book is not a workbook: its main part is "),
]


def _drop(data: bytes, name: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename != name:
                dst.writestr(info, src.read(info))
    return out.getvalue()


def _retype(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "[Content_Types].xml":
                body = body.replace(b"spreadsheetml.sheet.main+xml", b"wordprocessingml.document.main+xml")
            dst.writestr(info, body)
    return out.getvalue()


@pytest.mark.parametrize(("make", "record", "problem"), [row[1:] for row in BAD], ids=[row[0] for row in BAD])
def test_bad_workbooks_raise_reader_errors_naming_file_and_part(
    make: Callable[[], bytes], record: str, problem: str
) -> None:
    limited = ProcedureChunker(ChunkerOptions(max_uncompressed_bytes=1_000_000))
    with pytest.raises(ReaderError) as caught:
        chunks_of(make(), limited, source_format="xlsx")
    assert (caught.value.source_format, caught.value.record) == ("xlsx", record)
    assert re.search(problem, caught.value.problem), caught.value.problem


def test_the_bomb_reads_with_no_limit() -> None:
    unlimited = ProcedureChunker(ChunkerOptions(length_function=len, max_uncompressed_bytes=None))
    assert steps_of(chunks_of(_bomb(), unlimited))


def test_an_xls_file_is_told_to_be_converted(tmp_path: Path) -> None:
    path = tmp_path / "old.xls"
    path.write_bytes(OLE + "Workbook".encode("utf-16-le"))
    with pytest.raises(ReaderError, match=r"convert it first: soffice --headless --convert-to xlsx"):
        chunks_of(path)


def test_ole_bytes_without_a_suffix_are_refused_by_detection() -> None:
    with pytest.raises(ReaderError, match="password-protected"):
        detect_format(OLE + "EncryptedPackage".encode("utf-16-le"))


# ----- detection and every way in ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "suffix"),
    [(SAGYO, None), (SAGYO.read_bytes(), None), (b"", ".xlsx"), (b"", ".XLSM"), (_as_xlsm(ENGLISH), None)],
    ids=["path", "bytes-by-signature", "suffix", "suffix-xlsm", "xlsm-by-signature"],
)
def test_detection_by_suffix_and_by_signature(source: object, suffix: str | None) -> None:
    assert detect_format(source, suffix=suffix) == "xlsx"


def test_a_zip_of_another_kind_is_not_a_workbook() -> None:
    assert detect_format(_retype(ENGLISH)) != "xlsx"


def test_the_cli_splits_a_workbook(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["split", "--jsonl", str(SAGYO)])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    records = [json.loads(line) for line in out.splitlines()]
    steps = [s for r in records if r["metadata"]["chunk_level"] == "child" for s in r["metadata"]["steps"]]
    assert [(s["number"], s["result"].split("。")[0]) for s in steps] == [
        ("1", "・コマンドプロンプトが起動できること"),
        ("2", "・○○サーバに SSH 接続できること"),
    ]
    assert {r["metadata"]["sheet"] for r in records} == {"作業手順書"}


def test_adapters_read_a_workbook_documents_text_and_never_open_a_path() -> None:
    # A framework document holds text a loader extracted, not the workbook: its ``.xlsx``
    # suffix means "text extracted from a workbook", read by the plain-text rules, and a
    # path written in that text is never opened.
    extracted = read_source(SAGYO.read_bytes(), source_id="book", fmt="xlsx").text
    langchain = ProcedureTextSplitter(chunk_size=400, length_function=len)
    docs = langchain.split_documents(
        [Document(page_content=extracted, metadata={"source": "作業手順書.xlsx"})]
    )
    assert docs
    assert "sheet" not in docs[0].metadata
    joined = "\n".join(d.page_content for d in docs)
    for line in (
        "スタートメニューより「コマンドプロンプト」を開く。",
        "プロンプトが「ADMIN_SERVER >」と表示されていること。",
    ):
        assert line in extracted
        assert line in joined
    path_docs = langchain.split_documents(
        [Document(page_content=str(SAGYO), metadata={"source": "作業手順書.xlsx"})]
    )
    assert path_docs
    assert all("作業内容" not in d.page_content for d in path_docs)
    parser = ProcedureNodeParser(chunk_size=400)
    nodes = parser.get_nodes_from_documents(
        [LlamaDocument(text=str(SAGYO), metadata={"file_path": "作業手順書.xlsx"})]
    )
    assert nodes
    assert all("作業内容" not in n.get_content() for n in nodes)
    assert all("sheet" not in n.metadata for n in nodes)


def test_element_kinds_of_a_procedure_sheet() -> None:
    source = read_source(SAGYO.read_bytes(), source_id="book", fmt="xlsx")
    assert [e.kind for e in source.elements] == [
        ElementKind.SECTION_HEADER,
        ElementKind.TEXT,
        ElementKind.LIST_ITEM,
        ElementKind.LIST_ITEM,
    ]
    assert len({e.list_id for e in source.elements if e.kind is ElementKind.LIST_ITEM}) == 1

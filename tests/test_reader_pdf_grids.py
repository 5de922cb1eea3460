"""Tables from the ruling lines and cell boxes a PDF page draws (``pdf_grids``).

* ``pdf/hololens-provisioning-ja.table{,.tagged}.libreoffice.pdf``: LibreOffice Writer's PDF of
  a HoloLens section with a bordered table and a note in a bordered box, without and with tags;
* ``real-docs/…exastro….pdf``: a Japanese install guide saved from PowerPoint, whose
  parameter tables are a box per cell and a line per border, cells spanning rows;
* ``pdf/hololens-provisioning-en.toc.chromium.pdf``: Chromium's tagged PDF, whose table
  the tag tree declares;
* ``real-docs/…sapphire….pages-1-8.pdf``: a manual printed from a browser, untagged, with
  ruled tables, one running over a page break, and words highlighted in a list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from procedure_rag import ChunkerOptions, ChunkLevel, ProcedureChunker
from procedure_rag._readers.pdf import read_pdf
from procedure_rag._readers.pdf_grids import Edge, Grid, find_grids, grid_rows
from procedure_rag._readers.pdf_pages import Cell, Line, PdfFile
from procedure_rag._types import ElementKind

DATA = Path(__file__).resolve().parent / "data"
LIBREOFFICE = DATA / "pdf" / "hololens-provisioning-ja.table.libreoffice.pdf"
TAGGED = DATA / "pdf" / "hololens-provisioning-ja.table.tagged.libreoffice.pdf"
EXASTRO = DATA / "real-docs" / "ja_exastro_ita-azure-setting-samples_install.pages-1-16.pdf"
CHROMIUM = DATA / "pdf" / "hololens-provisioning-en.toc.chromium.pdf"
SAPPHIRE = DATA / "real-docs" / "ja_yamagata-u_sapphire_app-manual.pages-1-8.pdf"
PAGE = (600.0, 800.0)


def box(left: float, top: float, right: float, bottom: float) -> list[Edge]:
    return [
        Edge(True, top, left, right),
        Edge(True, bottom, left, right),
        Edge(False, left, top, bottom),
        Edge(False, right, top, bottom),
    ]


def line(text: str, left: float, top: float, right: float) -> Line:
    return Line([Cell(text, left, right)], left, top, right, top + 10, 10.0, False)


def lines_in(grid: Grid, texts: dict[tuple[int, int], str]) -> list[Line]:
    """One line in the middle of each named cell ``(row, col)``."""
    out = []
    for cell in grid.cells:
        text = texts.get((cell.row, cell.col))
        if text:
            middle = (cell.top + cell.bottom) / 2
            out.append(line(text, cell.left + 2, middle - 5, cell.right - 2))
    return out


def ruled(xs: list[float], ys: list[float]) -> list[Edge]:
    """A table drawn with a line per border, each line a little apart from the exact grid."""
    return [Edge(True, y + 0.5, xs[0] - 1, xs[-1] + 1) for y in ys] + [
        Edge(False, x - 0.5, ys[0] - 1, ys[-1] + 1) for x in xs
    ]


def test_lines_drawn_per_border_make_a_grid_of_rows_and_columns() -> None:
    (grid,) = find_grids(ruled([50, 150, 400], [100, 120, 140, 160]), *PAGE)
    assert (grid.rows, grid.cols, len(grid.cells)) == (3, 2, 6)
    texts = {
        (0, 0): "項目",
        (0, 1): "入力内容",
        (1, 0): "名前",
        (1, 1): "仮想マシン名",
        (2, 0): "サイズ",
        (2, 1): "SKU",
    }
    assert grid_rows(grid, lines_in(grid, texts)) == [
        ["項目", "入力内容"],
        ["名前", "仮想マシン名"],
        ["サイズ", "SKU"],
    ]


def test_a_box_per_cell_makes_a_grid_and_a_cell_may_span_rows() -> None:
    # PowerPoint: one filled box per cell; "パラメータ" spans two rows.
    edges = [
        *box(50, 100, 150, 120), *box(150, 100, 400, 120),
        *box(50, 120, 100, 160), *box(100, 120, 150, 140), *box(150, 120, 400, 140),
        *box(100, 140, 150, 160), *box(150, 140, 400, 160),
    ]  # fmt: skip
    (grid,) = find_grids(edges, *PAGE)
    spanning = [c for c in grid.cells if c.row_end - c.row == 2]
    assert len(spanning) == 1
    texts = {
        (0, 0): "項目",
        (0, 2): "入力内容",
        (1, 0): "パラメータ",
        (1, 1): "名前",
        (1, 2): "リソースグループ名",
    }
    texts |= {(2, 1): "ロケーション", (2, 2): "Azureリージョン"}
    assert grid_rows(grid, lines_in(grid, texts)) == [
        ["項目", "", "入力内容"],
        ["パラメータ", "名前", "リソースグループ名"],
        ["", "ロケーション", "Azureリージョン"],
    ]


@pytest.mark.parametrize(
    ("edges", "texts"),
    [
        (box(50, 100, 400, 160), {(0, 0): "注意: 手順は HoloLens 2 に適用されます。"}),  # a framed note
        (box(0, 0, 600, 800), {(0, 0): "本文"}),  # a border round the page
        (
            [*box(50, 100, 400, 120), *box(50, 120, 400, 200)],
            {(0, 0): "注意", (1, 0): "本文です。"},
        ),  # a title bar
        ([Edge(True, 110, 50, 300), Edge(True, 130, 50, 300)], {}),  # underlines
    ],
    ids=["framed-note", "page-border", "callout-with-title-bar", "underlines"],
)
def test_boxes_and_rules_that_are_no_table(edges: list[Edge], texts: dict[tuple[int, int], str]) -> None:
    grids = find_grids(edges, *PAGE)
    assert all(grid_rows(grid, lines_in(grid, texts)) == [] for grid in grids)


def test_lines_highlighted_one_by_one_are_no_table() -> None:
    # A browser's <mark>: a box per word, side by side, each line its own widths.
    edges = [
        *box(50, 100, 80, 118),
        *box(80, 100, 130, 118),
        *box(50, 118, 110, 136),
        *box(110, 118, 150, 136),
    ]
    (grid,) = find_grids(edges, *PAGE)
    highlighted = [line("dash", 52, 104, 78), line("(0.38.0)", 82, 104, 128)]
    highlighted += [line("dash-auth", 52, 122, 108), line("(1.3.2)", 112, 122, 148)]
    assert grid_rows(grid, highlighted) == []


def test_a_table_that_runs_over_the_page_bottom_is_cut_there() -> None:
    # Chromium prints a long table across pages: the last row's borders run past the page.
    edges = ruled([50, 150, 400], [700, 720, 760])
    edges += [Edge(False, x, 760, 900) for x in (50, 150, 400)]
    (grid,) = find_grids(edges, *PAGE)
    assert grid.rows == 3
    assert grid.bottom == PAGE[1]


# ----- real PDFs ------------------------------------------------------------------------------


def test_libreoffice_ruled_table_is_a_markdown_table_with_its_header() -> None:
    elements = read_pdf(LIBREOFFICE, source_id="doc").elements
    (table,) = [e for e in elements if e.kind is ElementKind.TABLE]
    assert table.hint("table_from") == "rules"
    rows = table.text.splitlines()
    assert rows[:2] == ["| 設定 | 説明 |", "|---|---|"]
    assert rows[2] == "| 証明書 | 証明書を HoloLens に展開します。 |"
    assert len(rows) == 6
    assert table.bbox is not None
    assert table.page == 1
    # The note in a bordered box is text, not a one-cell table.
    assert any(e.kind is not ElementKind.TABLE and "1809" in e.text for e in elements)


def test_powerpoint_cells_drawn_apart_are_one_table_row_by_row() -> None:
    # Page 7 of the Exastro guide: its alignment split "No. サービス名" and lost the last row.
    elements = read_pdf(EXASTRO, source_id="doc").elements
    (table,) = [e for e in elements if e.kind is ElementKind.TABLE and e.page == 7]
    assert table.hint("table_from") == "rules"
    assert table.text.splitlines() == [
        "| No. | サービス名 | 利用条件 |",
        "|---|---|---|",
        "| 1 | Exastro IT Automation | バージョン1.9.1/1.10.0/1.10.2 |",
        "| 2 | Terraform Cloud | 1.1.7 |",
        "| 3 | Terraform Azure Provider（azurerm） | 3.0.2 |",
    ]


def test_a_slides_parameter_table_stays_with_its_step_and_notes(shared_data: Path) -> None:
    # Page 27: a step, then a table with a cell spanning rows (「パラメータ」 set vertically)
    # and notes inside its cells. It fits after the step: the slide is one chunk.
    path = shared_data / "real-docs" / "ja_exastro_ita-azure-setting-samples_install.pdf"
    elements = read_pdf(path, source_id="doc").elements
    (table,) = [e for e in elements if e.kind is ElementKind.TABLE and e.page == 27]
    assert table.hint("table_from") == "rules"
    assert table.text.splitlines()[:4] == [
        "| 項目 |  | 入力内容 |",
        "|---|---|---|",
        "| オペレーション |  | 仮想マシンを作成する際の任意のオペレーション名 |",
        "| パラメータ | 代入順序 | 1~5までの数字を記入する。数字は1から順番に増加させる。"
        "※一つのオペレーションに対して1,3,5のようするのはAzureモデルでは非許容 |",
    ]
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400))
    chunks = [c for c in chunker.iter_chunks_from_source(path) if c.level is ChunkLevel.CHILD]
    (slide,) = [c for c in chunks if "作成したいサブネットを登録します" in c.text]
    for text in ("入力内容", "1~5までの数字を記入する", "Azureモデルでは非許容", "サブネットのアドレス範囲"):
        assert text in slide.text


@pytest.mark.parametrize("path", [TAGGED, CHROMIUM], ids=["libreoffice-ruled", "chromium"])
def test_a_tagged_table_keeps_its_tags(path: Path) -> None:
    # LibreOffice's tagged export of the ruled table: the grid is drawn, but the tags declare it.
    (table,) = [e for e in read_pdf(path, source_id="doc").elements if e.kind is ElementKind.TABLE]
    assert not table.hint("table_from")
    if path == TAGGED:
        with PdfFile(path) as pdf:
            assert len(pdf.page(0).grids) == 1
        assert table.text.splitlines()[:3] == [
            "| 設定 | 説明 |",
            "|---|---|",
            "| 証明書 | 証明書を HoloLens に展開します。 |",
        ]


def test_a_dense_drawing_of_lines_is_not_searched_for_cells() -> None:
    # Graph paper, a chart's grid: a hundred lines each way is a drawing, not a table.
    edges = [Edge(True, 10 + 7.5 * i, 0, 590) for i in range(100)]
    edges += [Edge(False, 10 + 5.5 * i, 0, 790) for i in range(100)]
    assert find_grids(edges, *PAGE) == []


def test_words_highlighted_in_a_list_stay_text_split_nowhere() -> None:
    # The browser-printed manual marks changed versions, word by word, in a bulleted list on
    # page 7: a grid of boxes whose text is no table, so its borders split no line either.
    elements = read_pdf(SAPPHIRE, source_id="doc").elements
    assert not any(e.kind is ElementKind.TABLE and "0.38.0" in e.text for e in elements)
    assert any("dash (0.38.0) dash-auth (1.3.2)" in e.text for e in elements if e.page == 7)

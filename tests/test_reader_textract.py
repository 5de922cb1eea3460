"""Amazon Textract layout reader: real documents as ``AnalyzeDocument`` (LAYOUT) returns them.

Fixtures: ``tests/data/layout_json/textract/`` (built by ``make_fixtures.py``); the checks
shared with the other layout JSON readers are in ``test_reader_layout_json.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from procedure_rag import ElementKind
from procedure_rag._readers.textract import read_textract

FMT = "textract"
EN = "textract/hololens-recovery-en.json"
TV = "textract/samsung-tv-sections-10-28.json"
# The malformed cases name their records at collection, before any fixture runs.
_EN_DATA = json.loads((Path(__file__).parent / "data" / "layout_json" / EN).read_text(encoding="utf-8"))

Mutation = Callable[[dict[str, object]], object]


def test_lists_items_and_page_numbers(layout_checks: ModuleType) -> None:
    elements = read_textract(layout_checks.load(EN), source_id="en")
    bullets = [e for e in elements if e.text.startswith("When the device is charging")]
    assert [(e.number, e.level, e.ordered) for e in bullets] == [("-", 1, False)]  # the glyph was dropped
    steps = [e for e in elements if e.kind is ElementKind.LIST_ITEM and e.ordered]
    assert [e.number for e in steps[:4]] == ["1.", "2.", "3.", "4."]
    assert len({e.list_id for e in steps[:4]}) == 1
    tv = read_textract(layout_checks.load(TV), source_id="tv")
    assert [e.text for e in tv if e.hint("type") == "LAYOUT_PAGE_NUMBER"] == ["- 17 -", "- 18 -", "- 19 -"]


def _table_response() -> dict[str, object]:
    """A LAYOUT_TABLE over a TABLE (TABLES feature) whose cells hold words."""
    box = {"BoundingBox": {"Width": 0.6, "Height": 0.1, "Left": 0.1, "Top": 0.2}}
    words = {
        f"w{i}": text
        for i, text in enumerate(["Menu", "Path", "Software", "Update", "Settings", ">", "Support"])
    }
    cells = [
        ("c1", 1, 1, ["w0"]),
        ("c2", 1, 2, ["w1"]),
        ("c3", 2, 1, ["w2", "w3"]),
        ("c4", 2, 2, ["w4", "w5", "w6"]),
    ]
    blocks: list[dict[str, object]] = [{"BlockType": "PAGE", "Id": "p", "Page": 1, "Geometry": box}]
    blocks += [{"BlockType": "WORD", "Id": i, "Text": t, "Page": 1} for i, t in words.items()]
    blocks += [
        {
            "BlockType": "CELL",
            "Id": cid,
            "RowIndex": r,
            "ColumnIndex": c,
            "Page": 1,
            "EntityTypes": ["COLUMN_HEADER"] if r == 1 else [],
            "Relationships": [{"Type": "CHILD", "Ids": ids}],
        }
        for cid, r, c, ids in cells
    ]
    blocks.append(
        {
            "BlockType": "TABLE",
            "Id": "t",
            "Page": 1,
            "Relationships": [{"Type": "CHILD", "Ids": ["c1", "c2", "c3", "c4"]}],
        }
    )
    blocks.append(
        {
            "BlockType": "LAYOUT_TABLE",
            "Id": "lt",
            "Page": 1,
            "Geometry": box,
            "Relationships": [{"Type": "CHILD", "Ids": ["t"]}],
        }
    )
    return {"Blocks": blocks}


def test_table_cells_make_a_markdown_table() -> None:
    (table,) = read_textract(_table_response(), source_id="t")
    assert (table.kind, table.record_id, table.page) == (ElementKind.TABLE, "lt", 1)
    assert table.text.splitlines() == [
        "| Menu | Path |",
        "|---|---|",
        "| Software Update | Settings > Support |",
    ]
    assert table.bbox is not None
    assert table.bbox.as_list() == [0.1, 0.2, 0.7, 0.3]


def _blocks(data: dict[str, object]) -> list[dict[str, object]]:
    return data["Blocks"]


def _first(data: dict[str, object], kind: str) -> dict[str, object]:
    return next(b for b in _blocks(data) if b["BlockType"] == kind)


def _list_cycle(data: dict[str, object]) -> None:
    layout_list = _first(data, "LAYOUT_LIST")
    item = next(b for b in _blocks(data) if b["Id"] == layout_list["Relationships"][0]["Ids"][0])
    item["Relationships"][0]["Ids"].append(layout_list["Id"])


def _record(kind: str) -> str:
    return str(_first(_EN_DATA, kind)["Id"])


MALFORMED = [
    ("no Blocks", lambda d: d.pop("Blocks"), "response", "missing 'Blocks'"),
    ("block not an object", lambda d: _blocks(d).__setitem__(3, None), "Blocks[3]", "expected an object"),
    ("no Id", lambda d: _blocks(d)[0].pop("Id"), "Blocks[0]", "missing 'Id'"),
    (
        "dangling child id",
        lambda d: _first(d, "LAYOUT_TITLE")["Relationships"][0]["Ids"].append("nope"),
        _record("LAYOUT_TITLE"),
        "'nope', which does not exist",
    ),
    (
        "box off the page",
        lambda d: _first(d, "LAYOUT_TITLE")["Geometry"]["BoundingBox"].__setitem__("Left", 1.7),
        _record("LAYOUT_TITLE"),
        "outside the page",
    ),
    (
        "box width missing",
        lambda d: _first(d, "LAYOUT_TITLE")["Geometry"]["BoundingBox"].pop("Width"),
        _record("LAYOUT_TITLE"),
        "missing 'Width'",
    ),
    (
        "page that does not exist",
        lambda d: _first(d, "LAYOUT_TITLE").__setitem__("Page", 12),
        _record("LAYOUT_TITLE"),
        "page 12 does not exist",
    ),
    (
        "text not a string",
        lambda d: _first(d, "LINE").__setitem__("Text", 5),
        _record("LINE"),
        "'Text' must be a string",
    ),
    ("relationship cycle", _list_cycle, _record("LAYOUT_LIST"), "cycle"),
]


@pytest.mark.parametrize(
    ("mutate", "record", "problem"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_malformed_input_names_the_record(
    mutate: Mutation, record: str, problem: str, layout_checks: ModuleType
) -> None:
    layout_checks.check_malformed(FMT, EN, mutate, record, problem)

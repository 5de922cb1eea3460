"""Azure Document Intelligence layout reader: real documents laid out as ``prebuilt-layout`` returns them.

Fixtures: ``tests/data/layout_json/azure/`` (built by ``make_fixtures.py``); the checks
shared with the other layout JSON readers are in ``test_reader_layout_json.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from procedure_rag import ElementKind
from procedure_rag._readers.azure import read_azure

FMT = "azure"
EN = "azure/hololens-recovery-en.json"

Mutation = Callable[[dict[str, object]], object]


def test_kinds_roles_and_nesting(layout_checks: ModuleType) -> None:
    elements = read_azure(layout_checks.load(EN), source_id="en")
    kinds = {e.kind for e in elements}
    assert {ElementKind.TITLE, ElementKind.PAGE_HEADER, ElementKind.PAGE_FOOTER, ElementKind.PICTURE} <= kinds
    detected = next(e for e in elements if e.text.startswith("The device will be automatically detected"))
    step = next(e for e in elements if e.element_id == detected.parent_id)
    assert (step.kind, step.number) == (ElementKind.LIST_ITEM, "1.")
    assert detected.list_id == step.list_id
    nested = next(e for e in elements if e.text.startswith("When the device is charging"))
    assert (nested.level, nested.number, nested.ordered) == (1, "•", False)
    warning = next(e for e in elements if e.text.startswith("Warning:"))
    assert warning.admonition == "warning"
    assert all(e.record_id.startswith(("/paragraphs/", "/figures/")) for e in elements)


def _table_result(*, markdown: bool = False) -> dict[str, object]:
    """A page with a heading, a table with a caption (cells are paragraphs too), in the service's shape."""
    box = [1.0, 1.0, 7.0, 1.0, 7.0, 2.0, 1.0, 2.0]
    region = [{"pageNumber": 1, "polygon": box}]
    rows = [("Menu", "Path"), ("Software Update", "Settings > Support > Software Update")]
    heading = "## Updating the TV's Software" if markdown else "Updating the TV's Software"
    paragraphs: list[dict[str, object]] = [
        {
            "role": "sectionHeading",
            "content": heading,
            "spans": [{"offset": 0, "length": 26}],
            "boundingRegions": region,
        }
    ]
    cells = []
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            paragraphs.append(
                {
                    "content": text,
                    "spans": [{"offset": 30 + 10 * r + c, "length": 1}],
                    "boundingRegions": region,
                }
            )
            cell = {
                "rowIndex": r,
                "columnIndex": c,
                "content": text,
                "elements": [f"/paragraphs/{len(paragraphs) - 1}"],
            }
            cells.append({**cell, "kind": "columnHeader"} if r == 0 else cell)
    paragraphs.append(
        {"content": "Table 1: menu paths", "spans": [{"offset": 80, "length": 19}], "boundingRegions": region}
    )
    caption = {
        "content": "Table 1: menu paths",
        "boundingRegions": region,
        "elements": [f"/paragraphs/{len(paragraphs) - 1}"],
    }
    table = {
        "rowCount": 2,
        "columnCount": 2,
        "cells": cells,
        "spans": [{"offset": 30, "length": 40}],
        "boundingRegions": region,
        "caption": caption,
    }
    result = {
        "content": "x" * 100,
        "pages": [{"pageNumber": 1, "width": 8.5, "height": 11, "unit": "inch"}],
        "paragraphs": paragraphs,
        "tables": [table],
    }
    if markdown:
        result["contentFormat"] = "markdown"
    return {"analyzeResult": result}


@pytest.mark.parametrize("markdown", [False, True])
def test_table_cells_are_read_once_as_a_markdown_table(markdown: bool) -> None:
    elements = read_azure(_table_result(markdown=markdown), source_id="t")
    assert [(e.kind, e.record_id) for e in elements] == [
        (ElementKind.SECTION_HEADER, "/paragraphs/0"),
        (ElementKind.TABLE, "/tables/0"),
        (ElementKind.CAPTION, "/tables/0/caption"),
    ]
    assert elements[0].text == "Updating the TV's Software"
    assert elements[1].text.splitlines() == [
        "| Menu | Path |",
        "|---|---|",
        "| Software Update | Settings > Support > Software Update |",
    ]
    assert elements[1].bbox is not None
    assert elements[1].bbox.as_list() == [
        round(1 / 8.5, 4),
        round(1 / 11, 4),
        round(7 / 8.5, 4),
        round(2 / 11, 4),
    ]


def _result(data: dict[str, object]) -> dict[str, object]:
    result = data["analyzeResult"]
    assert isinstance(result, dict)
    return result


def _paragraph(data: dict[str, object], index: int) -> dict[str, object]:
    paragraph = _result(data)["paragraphs"][index]
    assert isinstance(paragraph, dict)
    return paragraph


MALFORMED = [
    ("missing pages", lambda d: _result(d).pop("pages"), "analyzeResult", "missing 'pages'"),
    (
        "polygon off the page",
        lambda d: _paragraph(d, 3)["boundingRegions"][0]["polygon"].__setitem__(2, 30.0),
        "/paragraphs/3",
        "outside the page",
    ),
    (
        "odd polygon",
        lambda d: _paragraph(d, 3)["boundingRegions"][0]["polygon"].pop(),
        "/paragraphs/3",
        "even-length list",
    ),
    (
        "unknown page",
        lambda d: _paragraph(d, 3)["boundingRegions"][0].__setitem__("pageNumber", 9),
        "/paragraphs/3",
        "page 9 does not exist",
    ),
    (
        "content not a string",
        lambda d: _paragraph(d, 4).__setitem__("content", 42),
        "/paragraphs/4",
        "'content' must be a string",
    ),
    ("no spans", lambda d: _paragraph(d, 5).pop("spans"), "/paragraphs/5", "missing 'spans'"),
    (
        "paragraph not an object",
        lambda d: _result(d)["paragraphs"].__setitem__(6, "text"),
        "/paragraphs/6",
        "expected an object",
    ),
    (
        "dangling section element",
        lambda d: _result(d)["sections"][1]["elements"].append("/paragraphs/9999"),
        "/sections/1",
        "points past the end",
    ),
    (
        "bad section element",
        lambda d: _result(d)["sections"][1]["elements"].append("#/paragraphs/1"),
        "/sections/1",
        "is not '/paragraphs/N'",
    ),
    (
        "section cycle",
        lambda d: _result(d)["sections"][2]["elements"].append("/sections/1"),
        "/sections/1",
        "cycle",
    ),
    (
        "figure on a missing page",
        lambda d: _result(d)["figures"][0]["boundingRegions"][0].__setitem__("pageNumber", 0),
        "/figures/0",
        "'pageNumber' must be at least 1",
    ),
    (
        "page size zero",
        lambda d: _result(d)["pages"][0].__setitem__("width", 0),
        "/pages/0",
        "must be positive",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "record", "problem"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_malformed_input_names_the_record(
    mutate: Mutation, record: str, problem: str, layout_checks: ModuleType
) -> None:
    layout_checks.check_malformed(FMT, EN, mutate, record, problem)

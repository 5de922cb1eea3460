"""Google Document AI layout parser reader: real documents as ``documentLayout`` blocks.

Fixtures: ``tests/data/layout_json/google/`` (built by ``make_fixtures.py``); the checks
shared with the other layout JSON readers are in ``test_reader_layout_json.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from procedure_rag import ElementKind
from procedure_rag._readers.google_docai import read_google_docai

FMT = "google"
EN = "google/hololens-recovery-en.json"

Mutation = Callable[[dict[str, object]], object]


def test_list_blocks_give_numbers_levels_and_parents(layout_checks: ModuleType) -> None:
    elements = read_google_docai(layout_checks.load(EN), source_id="en")
    dism = next(e for e in elements if e.text.startswith("Use DISM"))
    assert (dism.number, dism.level, dism.ordered) == ("3.", 2, True)
    parent = next(e for e in elements if e.element_id == dism.parent_id)
    assert parent.text.startswith("If the destination PC has no internet connectivity")
    assert (parent.number, parent.level) == ("-", 1)
    note = next(e for e in elements if e.parent_id == dism.element_id and e.admonition)
    assert note.admonition == "note"
    assert dism.list_id == parent.list_id == note.list_id
    assert {e.kind for e in elements} >= {
        ElementKind.PAGE_HEADER,
        ElementKind.PAGE_FOOTER,
        ElementKind.PICTURE,
    }


def _table_doc() -> dict[str, object]:
    def text(block_id: str, value: str, kind: str = "paragraph") -> dict[str, object]:
        return {
            "blockId": block_id,
            "textBlock": {"text": value, "type": kind},
            "pageSpan": {"pageStart": 1, "pageEnd": 1},
        }

    table = {
        "headerRows": [{"cells": [{"blocks": [text("3", "Menu")]}, {"blocks": [text("4", "Path")]}]}],
        "bodyRows": [
            {
                "cells": [
                    {"blocks": [text("5", "Software Update")]},
                    {"blocks": [text("6", "Settings > Support > Software Update")]},
                ]
            }
        ],
        "caption": "Table 1: menu paths",
    }
    heading = text("1", "Updating the TV's Software", "heading-2")
    heading["textBlock"]["blocks"] = [
        {"blockId": "2", "tableBlock": table, "pageSpan": {"pageStart": 1, "pageEnd": 1}}
    ]
    return {"documentLayout": {"blocks": [heading]}}


def test_table_block_is_a_markdown_table_with_its_caption() -> None:
    elements = read_google_docai({"document": _table_doc()}, source_id="t")
    assert [(e.kind, e.record_id, e.level) for e in elements] == [
        (ElementKind.SECTION_HEADER, "1", 2),
        (ElementKind.TABLE, "2", 0),
        (ElementKind.CAPTION, "2/caption", 0),
    ]
    assert elements[1].text.splitlines()[0] == "| Menu | Path |"
    assert elements[1].text.splitlines()[2] == "| Software Update | Settings > Support > Software Update |"


def _blocks(data: dict[str, object]) -> list[dict[str, object]]:
    return data["document"]["documentLayout"]["blocks"]


def _title(data: dict[str, object]) -> dict[str, object]:
    return next(b for b in _blocks(data) if b["textBlock"]["type"] == "heading-1")


def _first_child(data: dict[str, object]) -> dict[str, object]:
    return _title(data)["textBlock"]["blocks"][0]


def _first_list(data: dict[str, object]) -> dict[str, object]:
    return next(b for b in _title(data)["textBlock"]["blocks"] if "listBlock" in b)["listBlock"]


def _cycle(data: dict[str, object]) -> None:
    child = _first_child(data)
    child["textBlock"]["blocks"] = [child]


MALFORMED = [
    (
        "no documentLayout",
        lambda d: d["document"].pop("documentLayout"),
        "document",
        "missing 'documentLayout'",
    ),
    (
        "blocks not a list",
        lambda d: d["document"]["documentLayout"].__setitem__("blocks", {}),
        "documentLayout",
        "'blocks' must be a list",
    ),
    ("empty block", lambda d: _first_child(d).pop("textBlock"), "3", "none of textBlock"),
    (
        "text not a string",
        lambda d: _first_child(d)["textBlock"].__setitem__("text", ["a"]),
        "3",
        "'text' must be a string",
    ),
    (
        "page that does not exist",
        lambda d: _first_child(d)["pageSpan"].update(pageStart=40, pageEnd=40),
        "3",
        "page 40 does not exist",
    ),
    (
        "page span backwards",
        lambda d: _first_child(d)["pageSpan"].update(pageStart=2, pageEnd=1),
        "3",
        "before it starts",
    ),
    (
        "box outside the page",
        lambda d: _first_child(d)["boundingBox"]["normalizedVertices"][1].__setitem__("x", 3.5),
        "3",
        "outside the page",
    ),
    (
        "vertex not an object",
        lambda d: _first_child(d)["boundingBox"]["normalizedVertices"].__setitem__(0, 0.5),
        "3",
        "expected an object",
    ),
    ("block cycle", _cycle, "3", "cycle"),
    ("list entries missing", lambda d: _first_list(d).pop("listEntries"), "7", "missing 'listEntries'"),
]


@pytest.mark.parametrize(
    ("mutate", "record", "problem"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_malformed_input_names_the_record(
    mutate: Mutation, record: str, problem: str, layout_checks: ModuleType
) -> None:
    layout_checks.check_malformed(FMT, EN, mutate, record, problem)

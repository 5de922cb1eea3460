"""The Unstructured reader: elements built from real pages with Unstructured's own classes.

The fixtures in tests/data/unstructured/ are ``elements_to_json`` output of elements built
from the HoloLens recovery page (PixelSpace, 1700 x 2200 px) and a GROWI admin page
(PointSpace, 612 x 792 pt); see build.py there and tests/data/SOURCES.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from unstructured.chunking.title import chunk_by_title
from unstructured.documents.coordinates import PixelSpace, PointSpace, RelativeCoordinateSystem
from unstructured.documents.elements import (
    CoordinatesMetadata,
    Element,
    ElementMetadata,
    Image,
    ListItem,
    NarrativeText,
    Table,
    Title,
)
from unstructured.staging.base import elements_from_json, elements_to_json

from procedure_rag import (
    BBox,
    Chunk,
    ChunkerOptions,
    ChunkType,
    ElementKind,
    ProcedureChunker,
    ReaderError,
    chunk_metadata,
    detect_format,
    read_metadata,
)
from procedure_rag._readers.registry import reader
from procedure_rag._readers.unstructured import iter_unstructured, read_unstructured

DOCS = {
    "en": ("hololens-recovery.en.json", (1700, 2200, "px")),
    "ja": ("group.ja.json", (612, 792, "pt")),
}
# Titles Unstructured gives for note labels; they become the notes' admonition.
LABEL_TITLES = {"Note", "Important", "Warning", "Tip", "メモ", "重要", "警告", "ヒント"}
FURNITURE = {"Header", "Footer"}

# How the elements reach the reader: the library's objects, their JSON parsed, their JSON text.
SHAPES: dict[str, Callable[[list[dict[str, Any]]], object]] = {
    "objects": lambda records: elements_from_json(text=json.dumps(records)),
    "dicts": lambda records: records,
    "json": json.dumps,
}


@pytest.fixture(scope="module")
def records(tests_data: Path) -> dict[str, list[dict[str, Any]]]:
    return {
        lang: json.loads((tests_data / "unstructured" / name).read_text(encoding="utf-8"))
        for lang, (name, _) in DOCS.items()
    }


def _chunks(source: object, lang: str, **options: Any) -> list[Chunk]:
    chunker = ProcedureChunker(ChunkerOptions(emit_parents=False, **options))
    return list(chunker.iter_chunks_from_source(source, source_id=DOCS[lang][0]))


@pytest.fixture(scope="module")
def chunks(records: dict[str, list[dict[str, Any]]]) -> dict[str, list[Chunk]]:
    return {lang: _chunks(records[lang], lang) for lang in DOCS}


def _procedure(chunks: list[Chunk], heading: str) -> Chunk:
    (found,) = [c for c in chunks if c.section_path[-1:] == (heading,) and c.steps]
    return found


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("lang", DOCS)
def test_every_shape_gives_the_same_elements(
    records: dict[str, list[dict[str, Any]]], lang: str, shape: Callable[[list[dict[str, Any]]], object]
) -> None:
    source = shape(records[lang])
    assert detect_format(source) == "unstructured"  # JSON text too: told by its shape
    assert read_unstructured(source, source_id="a") == read_unstructured(records[lang], source_id="a")
    assert reader("unstructured") is iter_unstructured


def _title_paths(records: list[dict[str, Any]]) -> tuple[set[tuple[str, ...]], set[str]]:
    """Paths of the Titles (from ``category_depth``), and the Titles with content of their own."""
    stack: list[str] = []
    paths: set[tuple[str, ...]] = set()
    with_content: set[str] = set()
    for r in records:
        if r["type"] == "Title" and r["text"] not in LABEL_TITLES:
            stack = [*stack[: r["metadata"]["category_depth"]], r["text"]]
            paths.add(tuple(stack))
        elif r["type"] not in FURNITURE and stack:
            with_content.add(stack[-1])
    return paths, with_content


@pytest.mark.parametrize("lang", DOCS)
def test_section_paths_follow_the_titles(
    records: dict[str, list[dict[str, Any]]], chunks: dict[str, list[Chunk]], lang: str
) -> None:
    paths, with_content = _title_paths(records[lang])
    got = {c.section_path for c in chunks[lang]}
    assert got <= paths
    assert {p[-1] for p in got} == with_content
    assert len(max(got, key=len)) == (3 if lang == "en" else 2)


# (language, heading, step numbers, how each step's text opens)
PROCEDURES = [
    pytest.param(
        "en",
        "Standard restart procedure",
        ["1.", "2.", "3.", "4."],
        ["Unplug", "Press", "Wait", "Connect"],
        id="en-heading-names-procedure",
    ),
    pytest.param(
        "en",
        "Hard-restart procedure",
        ["1.", "2.", "3.", "4."],
        ["Unplug", "Hold", "Connect", "Open"],
        id="en-lead-in-colon",
    ),
    pytest.param(
        "en",
        "Normal flashing procedure",
        ["1.", "2."],
        ["While", "Select"],
        id="en-text-and-picture-inside-a-step",
    ),
    pytest.param(
        "ja",
        "グループの作成",
        ["1.", "2.", "3.", "4."],
        ["管理メニューの", "「新規グループの作成」ボタンを", "「グループ名」と", "左上に"],
        id="ja-steps-read-as-steps-across-pictures",
    ),
    pytest.param(
        "ja",
        "グループへのユーザーの追加",
        ["1.", "2.", "3.", "4."],
        [
            "グループ一覧に",
            "グループ一覧の「＋」をクリックします",
            "グループ一覧の「＋」をクリックすると",
            "入力し",
        ],
        id="ja-caution-after-the-list",
    ),
]


@pytest.mark.parametrize(("lang", "heading", "numbers", "openings"), PROCEDURES)
def test_steps_come_back_numbered_in_order(
    chunks: dict[str, list[Chunk]], lang: str, heading: str, numbers: list[str], openings: list[str]
) -> None:
    chunk = _procedure(chunks[lang], heading)
    assert chunk.chunk_type is ChunkType.PROCEDURE
    assert [s.number for s in chunk.steps] == numbers
    assert [s.text[: len(o)] for s, o in zip(chunk.steps, openings, strict=True)] == openings
    for step in chunk.steps:
        assert step.page is not None
        assert step.bbox is not None
        assert f"{step.number} " in chunk.text


def test_lead_in_condition_caution_and_pictures_are_attached(chunks: dict[str, list[Chunk]]) -> None:
    hard = _procedure(chunks["en"], "Hard-restart procedure")
    assert hard.condition == "If the standard reset procedure didn't work"
    assert any(kind == "picture" for _, kind, _ in hard.related_elements)
    users = _procedure(chunks["ja"], "グループへのユーザーの追加")
    assert "登録されているユーザー名ではない場合" in users.steps[-1].caution
    assert [kind for _, kind, _ in users.related_elements] == ["picture"] * 4
    important = chunks["en"][0]
    assert important.text.splitlines()[1].startswith("Important: Before you start")


@pytest.mark.parametrize("lang", DOCS)
def test_pages_and_boxes_reach_the_metadata(
    records: dict[str, list[dict[str, Any]]], chunks: dict[str, list[Chunk]], lang: str
) -> None:
    ids = {r["element_id"] for r in records[lang]}
    pages = {r["metadata"]["page_number"] for r in records[lang]}
    width, height, unit = DOCS[lang][1]
    for chunk in chunks[lang]:
        meta = read_metadata(chunk_metadata(chunk))
        assert meta["page"] == chunk.page
        assert set(meta["pages"]) <= pages
        assert meta["boxes"]
        for box in meta["boxes"]:
            assert box["page_size"] == [width, height, unit]
            left, top, right, bottom = box["bbox"]
            assert 0 <= left < right <= 1
            assert 0 <= top < bottom <= 1
        assert set(meta["source_record_refs"]) <= ids
    assert {p for c in chunks[lang] for p, _ in c.boxes} == pages


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text))


@pytest.mark.parametrize("lang", DOCS)
def test_nothing_is_lost(
    records: dict[str, list[dict[str, Any]]], chunks: dict[str, list[Chunk]], lang: str
) -> None:
    source = " ".join(r["text"] for r in records[lang] if r["type"] not in FURNITURE)
    chunked = " ".join(c.text for c in chunks[lang])
    assert _words(source) - _words(chunked) == set()


def _element(cls: type[Element], text: str, **metadata: Any) -> Element:
    return cls(text, metadata=ElementMetadata(**metadata))


def _numbers(elements: list[Element]) -> list[str]:
    return [e.number for e in read_unstructured(elements, source_id="t") if e.kind is ElementKind.LIST_ITEM]


NESTED = [
    _element(NarrativeText, "Do this:"),
    _element(ListItem, "Check the ports:", category_depth=1),
    _element(ListItem, "USB", category_depth=2),
    _element(ListItem, "HDMI", category_depth=2),
    _element(ListItem, "Restart", category_depth=1),
]

# One row per list-number rule (see procedure_rag._readers.unstructured's module docstring).
LIST_RULES = [
    pytest.param(
        [
            _element(NarrativeText, "To reset the device, do the following:"),
            _element(ListItem, "Open the lid"),
            _element(ListItem, "Remove the battery"),
        ],
        ["1.", "2."],
        id="en-lead-in",
    ),
    pytest.param(
        [
            _element(NarrativeText, "パスワードを変更するには、次の手順を実行します。"),
            _element(ListItem, "設定画面を開く"),
            _element(ListItem, "パスワード変更を選択"),
        ],
        ["1.", "2."],
        id="ja-lead-in",
    ),
    pytest.param(
        [
            _element(NarrativeText, "The kit contains the parts below."),
            _element(ListItem, "A charger"),
            _element(ListItem, "A cable"),
        ],
        ["-", "-"],
        id="no-evidence-bullets",
    ),
    pytest.param(
        [_element(ListItem, "「保存」をクリックします。"), _element(ListItem, "画面を閉じます。")],
        ["1.", "2."],
        id="ja-items-read-as-steps",
    ),
    pytest.param(
        [
            _element(Title, "How to pair the remote"),
            _element(ListItem, "Hold the button"),
            _element(ListItem, "Done"),
        ],
        ["1.", "2."],
        id="heading-names-procedure",
    ),
    pytest.param(
        [_element(ListItem, "① 電源を入れる"), _element(ListItem, "② 待つ")],
        ["①", "②"],
        id="marker-kept-in-text",
    ),
    pytest.param(
        [_element(NarrativeText, "1. Unplug the cable."), _element(NarrativeText, "2. Wait 3 seconds.")],
        ["1.", "2."],
        id="numbered-paragraphs-are-items",
    ),
    pytest.param(
        [
            _element(NarrativeText, "Follow these steps:"),
            _element(ListItem, "Select Settings"),
            _element(Image, "Settings screen"),
            _element(ListItem, "Select Reset"),
        ],
        ["1.", "2."],
        id="picture-inside-the-list",
    ),
    pytest.param(NESTED, ["1.", "1.", "2.", "2."], id="nested-list-numbered-under-its-parent"),
]


@pytest.mark.parametrize(("elements", "numbers"), LIST_RULES)
def test_list_number_rules(elements: list[Element], numbers: list[str]) -> None:
    assert _numbers(elements) == numbers


def test_nested_items_know_their_parent_and_list() -> None:
    items = [e for e in read_unstructured(NESTED, source_id="t") if e.kind is ElementKind.LIST_ITEM]
    assert [e.level for e in items] == [0, 1, 1, 0]
    assert [e.parent_id for e in items] == [None, items[0].element_id, items[0].element_id, None]
    assert len({e.list_id for e in items}) == 1


def _coords(points: tuple[tuple[float, float], ...], system: Any) -> CoordinatesMetadata:
    return CoordinatesMetadata(points=points, system=system)


@pytest.mark.parametrize(
    ("coordinates", "expected"),
    [
        pytest.param(
            _coords(((170, 220), (170, 440), (850, 440), (850, 220)), PixelSpace(1700, 2200)),
            BBox(0.1, 0.1, 0.5, 0.2, 1700, 2200, "px"),
            id="pixel-space-top-left",
        ),
        pytest.param(
            _coords(((61.2, 712.8), (61.2, 633.6), (306, 633.6), (306, 712.8)), PointSpace(612, 792)),
            BBox(0.1, 0.1, 0.5, 0.2, 612, 792, "pt"),
            id="point-space-bottom-left",
        ),
        pytest.param(
            _coords(((0.1, 0.9), (0.1, 0.8), (0.5, 0.8), (0.5, 0.9)), RelativeCoordinateSystem()),
            BBox(0.1, 0.1, 0.5, 0.2, None, None, ""),
            id="relative-bottom-left",
        ),
    ],
)
def test_boxes_are_normalised_to_the_top_left(coordinates: CoordinatesMetadata, expected: BBox) -> None:
    (element,) = read_unstructured(
        [_element(Title, "Setup", coordinates=coordinates, page_number=2)], source_id="t"
    )
    assert element.page == 2
    assert element.bbox is not None
    assert element.bbox.as_list() == expected.as_list()
    assert (element.bbox.page_width, element.bbox.page_height, element.bbox.unit) == (
        expected.page_width,
        expected.page_height,
        expected.unit,
    )


@pytest.mark.parametrize(
    ("html", "markdown"),
    [
        pytest.param(
            "<table><tr><th>Light</th><th>Meaning</th></tr><tr><td>1</td><td>Below 20%</td></tr></table>",
            "| Light | Meaning |\n|---|---|\n| 1 | Below 20% |",
            id="header-cells",
        ),
        pytest.param(
            "<table><tbody><tr><td>a</td><td>b|c</td></tr><tr><td colspan='2'>wide</td></tr></tbody></table>",
            "| a | b\\|c |\n|---|---|\n| wide |  |",
            id="pipes-and-colspan",
        ),
    ],
)
def test_tables_become_pipe_tables(html: str, markdown: str) -> None:
    table = _element(Table, "flattened text", text_as_html=html)
    (element,) = read_unstructured([table], source_id="t")
    assert (element.kind, element.text) == (ElementKind.TABLE, markdown)
    (chunk,) = _chunks([table], "en")
    assert chunk.chunk_type is ChunkType.TABLE
    assert markdown.splitlines()[0] in chunk.text


def test_chunked_output_is_read_through_its_original_elements(
    records: dict[str, list[dict[str, Any]]],
) -> None:
    elements = elements_from_json(text=json.dumps(records["en"]))
    composites = chunk_by_title(elements, max_characters=1500)
    assert len(composites) < len(elements)
    packed = json.loads(elements_to_json(composites))
    assert all("orig_elements" in r["metadata"] for r in packed)
    assert read_unstructured(packed, source_id="a") == read_unstructured(records["en"], source_id="a")


def _base() -> list[dict[str, Any]]:
    return [
        {"type": "Title", "element_id": "t1", "text": "Setup", "metadata": {"page_number": 1}},
        {"type": "NarrativeText", "element_id": "n1", "text": "Do this:", "metadata": {"parent_id": "t1"}},
        {"type": "ListItem", "element_id": "l1", "text": "Open it", "metadata": {"parent_id": "t1"}},
    ]


def _set(index: int, path: str, value: object) -> Callable[[list[dict[str, Any]]], object]:
    def mutate(records: list[dict[str, Any]]) -> object:
        target = records[index]
        *parents, key = path.split(".")
        for part in parents:
            target = target[part]
        if value is _DELETE:
            del target[key]
        else:
            target[key] = value
        return records

    return mutate


_DELETE = object()
_PIXELS = {"system": "PixelSpace", "layout_width": 1700, "layout_height": 2200}

MALFORMED = [
    pytest.param(_set(1, "type", _DELETE), "n1", "has no 'type'", id="missing-type"),
    pytest.param(_set(2, "type", 3), "l1", "type is a int, not a str", id="type-not-str"),
    pytest.param(_set(2, "text", None), "l1", "text is a NoneType, not a str", id="text-not-str"),
    pytest.param(
        _set(1, "metadata", []), "n1", "metadata is a list, not an object", id="metadata-not-object"
    ),
    pytest.param(
        _set(2, "metadata.coordinates", {"points": [[100, 2100], [1800, 2300]], **_PIXELS}),
        "l1",
        "coordinates [[100, 2100], [1800, 2300]] are outside the PixelSpace 1700x2200 page",
        id="box-outside-the-page",
    ),
    pytest.param(
        _set(2, "metadata.coordinates", {"points": [[1, 2]], "system": "Mars"}),
        "l1",
        "unknown coordinate system 'Mars'",
        id="unknown-system",
    ),
    pytest.param(
        _set(2, "metadata.coordinates", {"points": [[1, 2]], "system": "PixelSpace"}),
        "l1",
        "coordinates in PixelSpace have no page size (layout_width, layout_height)",
        id="no-page-size",
    ),
    pytest.param(
        _set(2, "metadata.coordinates", {"points": [["a", 2]], **_PIXELS}),
        "l1",
        "coordinates points [['a', 2]] are not [x, y] number pairs",
        id="points-not-numbers",
    ),
    pytest.param(
        _set(0, "metadata.parent_id", "l1"), "t1", "parent_id cycle: t1 -> l1 -> t1", id="parent-cycle"
    ),
    pytest.param(_set(1, "metadata.parent_id", "n1"), "n1", "parent_id cycle: n1 -> n1", id="own-parent"),
    pytest.param(
        _set(1, "metadata.page_number", 0),
        "n1",
        "page_number 0 is not a page (pages count from 1)",
        id="page-0",
    ),
    pytest.param(
        _set(1, "metadata.page_number", "2"), "n1", "page_number is a str, not an int", id="page-not-int"
    ),
    pytest.param(
        _set(2, "metadata.category_depth", -1), "l1", "category_depth -1 is negative", id="negative-depth"
    ),
    pytest.param(
        lambda records: [*records, {"text": "x", "metadata": {}}],
        "#3",
        "has no 'type'",
        id="no-id-names-index",
    ),
    pytest.param(
        lambda records: [*records, 7],
        "#3",
        "is a int, not an Unstructured element or element dict",
        id="not-a-record",
    ),
    pytest.param(
        lambda records: {"elements": records},
        "source",
        "expected a list of elements or element dicts, got dict",
        id="not-a-list",
    ),
    pytest.param(lambda records: "[{", "source", "not valid JSON", id="bad-json"),
]


@pytest.mark.parametrize(("mutate", "record", "problem"), MALFORMED)
def test_malformed_input_names_the_record(
    mutate: Callable[[list[dict[str, Any]]], object], record: str, problem: str
) -> None:
    with pytest.raises(ReaderError) as caught:
        read_unstructured(mutate(_base()), source_id="t")
    assert caught.value.record == record
    assert caught.value.problem.startswith(problem)
    assert str(caught.value).startswith(f"unstructured record {record!r}: ")

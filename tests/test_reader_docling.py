"""The Docling reader, on real DoclingDocuments built from real pages.

The documents are built with docling-core's own API from the HoloLens recovery page
(en and ja): each element our Markdown reader finds becomes the Docling item a
converter would produce (title, section headers with levels, list groups nested in
list items with their markers, notes with their printed label, pictures with captions
and image refs, code), laid out on A4 pages with page footers as furniture and a
provenance box per item. One export is stored as JSON for the JSON path
(``tests/data/docling/``; rewrite it with ``PROCEDURE_RAG_REGENERATE_GOLDEN=1``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from docling_core.types.doc import (
    BoundingBox,
    ContentLayer,
    CoordOrigin,
    DocItemLabel,
    DoclingDocument,
    ImageRef,
    NodeItem,
    ProvenanceItem,
    Size,
    TableCell,
    TableData,
)
from docling_core.types.doc.labels import CodeLanguageLabel

from procedure_rag import ChunkerOptions, ChunkLevel, ProcedureChunker, ReaderError, chunk_metadata
from procedure_rag._metadata import read_metadata
from procedure_rag._readers.docling import read_docling
from procedure_rag._readers.markdown import read_markdown
from procedure_rag._types import BBox, Chunk, ElementKind, LayoutElement

DATA = Path(__file__).resolve().parent / "data"
JSON_FIXTURE = DATA / "docling" / "hololens-recovery-en.docling.json"
REGENERATE = "PROCEDURE_RAG_REGENERATE_GOLDEN"
PAGES = {"en": DATA / "hololens/en/hololens-recovery.md", "ja": DATA / "hololens/ja/hololens-recovery.md"}
A4 = Size(width=595.0, height=842.0)
MARGIN, TOP, BOTTOM, LINE = 56.0, 60.0, 70.0, 14.0
# How a rendered Microsoft Learn page prints the note boxes, per language.
LABELS = {
    "en": {"note": "Note", "important": "Important", "warning": "Warning", "tip": "Tip"},
    "ja": {"note": "注意", "important": "重要", "warning": "警告", "tip": "ヒント"},
}
K = ElementKind


def plain(markdown_text: str) -> str:
    """Inline Markdown as a converter prints it: emphasis marks and escapes gone."""
    text = re.sub(r"\*+", "", markdown_text)
    return re.sub(r"\\(?=[\s\W]|$)", "", text).strip()


@dataclass
class Built:
    doc: DoclingDocument
    boxes: dict[str, tuple[int, BBox]] = field(default_factory=dict)  # self_ref -> expected page, box


class _Layout:
    """Places items top to bottom on A4 pages; a new page (with its footer) when one is full."""

    def __init__(self, doc: DoclingDocument, origin: CoordOrigin, built: Built) -> None:
        self.doc, self.origin, self.built = doc, origin, built
        self.page = 0
        self.y = 0.0
        self.new_page()

    def new_page(self) -> None:
        if self.page:
            footer = self.doc.add_text(
                label=DocItemLabel.PAGE_FOOTER, text=f"- {self.page} -", content_layer=ContentLayer.FURNITURE
            )
            self.place(footer, 24.0, indent=240.0, at=A4.height - BOTTOM + 30)
        self.page += 1
        self.doc.add_page(page_no=self.page, size=A4)
        self.y = TOP

    def height(self, el: LayoutElement, text: str) -> float:
        if el.kind is K.PICTURE:
            return 160.0
        per_line = 44 if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text) else 90
        lines = sum(max(1, -(-len(line) // per_line)) for line in text.splitlines() or [""])
        return lines * LINE + (10.0 if el.kind in (K.SECTION_HEADER, K.TITLE) else 4.0)

    def place(self, item: NodeItem, height: float, *, indent: float = 0.0, at: float | None = None) -> None:
        top = self.y if at is None else at
        if at is None and top + height > A4.height - BOTTOM:
            self.new_page()
            top = self.y
        left, right, bottom = MARGIN + indent, A4.width - MARGIN, top + height
        if self.origin is CoordOrigin.BOTTOMLEFT:
            bbox = BoundingBox(
                l=left, t=A4.height - top, r=right, b=A4.height - bottom, coord_origin=self.origin
            )
        else:
            bbox = BoundingBox(l=left, t=top, r=right, b=bottom, coord_origin=self.origin)
        text = getattr(item, "text", "")
        item.prov.append(ProvenanceItem(page_no=self.page, bbox=bbox, charspan=(0, len(text))))  # type: ignore[attr-defined]
        expected = BBox(
            left / A4.width, top / A4.height, right / A4.width, bottom / A4.height, A4.width, A4.height, "pt"
        )
        self.built.boxes[item.self_ref] = (self.page, expected)
        if at is None:
            self.y = bottom + 6.0


def table_data(pipe_table: str) -> TableData:
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in pipe_table.splitlines()
        if line.strip() and not re.fullmatch(r"[\s|:-]+", line)
    ]
    cells = [
        TableCell(
            text=plain(text),
            start_row_offset_idx=r,
            end_row_offset_idx=r + 1,
            start_col_offset_idx=c,
            end_col_offset_idx=c + 1,
            column_header=r == 0,
        )
        for r, row in enumerate(rows)
        for c, text in enumerate(row)
    ]
    return TableData(num_rows=len(rows), num_cols=len(rows[0]), table_cells=cells)


def build(markdown_path: Path, lang: str, origin: CoordOrigin = CoordOrigin.BOTTOMLEFT) -> Built:
    """A DoclingDocument with the items a converter would give for the page at ``markdown_path``."""
    doc = DoclingDocument(name=markdown_path.stem)
    built = Built(doc)
    layout = _Layout(doc, origin, built)
    items: dict[str, NodeItem] = {}  # our element id -> the Docling item made from it
    groups: dict[str, NodeItem] = {}  # enclosing item id (or list id at the top) -> its list group
    for el in read_markdown(markdown_path.read_text(encoding="utf-8"), source_id=markdown_path.stem):
        parent = items.get(el.parent_id or "")
        depth = el.level if el.kind is K.LIST_ITEM else (el.level + 1 if parent is not None else 0)
        text = plain(el.text)
        item: NodeItem
        if el.kind is K.FRONT_MATTER or not text:
            continue
        if el.kind is K.SECTION_HEADER:
            item = doc.add_title(text) if el.level == 1 else doc.add_heading(text, level=el.level - 1)
        elif el.kind is K.LIST_ITEM:
            key = el.parent_id or el.list_id or ""
            if key not in groups:
                groups[key] = doc.add_list_group(parent=parent)
            item = doc.add_list_item(text, enumerated=el.ordered, marker=el.number, parent=groups[key])
        elif el.kind is K.PICTURE:
            image = ImageRef(
                mimetype="image/png", dpi=96, size=Size(width=800, height=450), uri=Path(el.hint("url"))
            )
            item = doc.add_picture(parent=parent, image=image)
            caption = doc.add_text(label=DocItemLabel.CAPTION, text=text, parent=item)
            item.captions.append(caption.get_ref())  # type: ignore[attr-defined]
            layout.place(item, layout.height(el, text), indent=18.0 * depth)
            layout.place(caption, LINE, indent=18.0 * depth)
            items[el.element_id] = item
            continue
        elif el.kind is K.CODE:
            body = "\n".join(text.splitlines()[1:-1])  # the fence lines are markup
            item = doc.add_code(body, code_language=CodeLanguageLabel.BASH, parent=parent)
        elif el.kind is K.TABLE:
            item = doc.add_table(data=table_data(el.text), parent=parent)
        else:
            if el.admonition:
                text = f"{LABELS[lang][el.admonition]}: {text}"
            item = doc.add_text(label=DocItemLabel.TEXT, text=text, parent=parent)
        items[el.element_id] = item
        layout.place(item, layout.height(el, text), indent=18.0 * depth)
    layout.new_page()  # the last page's footer
    doc.pages.pop(layout.page)
    return built


@pytest.fixture(scope="module", params=["en", "ja"])
def lang(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def built(lang: str) -> Built:
    return build(PAGES[lang], lang)


def chunks_of(source: object, *, chunk_size: int = 4000, source_format: str = "auto") -> list[Chunk]:
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=chunk_size))
    return list(chunker.iter_chunks_from_source(source, source_id="doc", source_format=source_format))


def children(chunks: list[Chunk]) -> list[Chunk]:
    return [c for c in chunks if c.level is ChunkLevel.CHILD]


def markdown_chunks(lang: str) -> list[Chunk]:
    return children(chunks_of(PAGES[lang].read_text(encoding="utf-8"), chunk_size=4000))


def steps_by_section(chunks: list[Chunk]) -> dict[tuple[str, ...], list[tuple[str, int, bool]]]:
    out: dict[tuple[str, ...], list[tuple[str, int, bool]]] = {}
    for c in chunks:
        out.setdefault(c.section_path, []).extend((s.number, s.depth, bool(s.caution)) for s in c.steps)
    return {path: steps for path, steps in out.items() if steps}


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


# ----- the documents, through the chunker ----------------------------------------------------


def test_section_paths_are_the_pages_headings(built: Built, lang: str) -> None:
    got = {c.section_path for c in children(chunks_of(built.doc))}
    expected = {c.section_path for c in markdown_chunks(lang)}
    assert got == expected
    assert len(got) >= 9


def test_steps_are_recovered_in_order_with_their_numbers_depths_and_cautions(built: Built, lang: str) -> None:
    got = steps_by_section(children(chunks_of(built.doc)))
    assert got == steps_by_section(markdown_chunks(lang))
    hard_restart = next(steps for path, steps in got.items() if len(path) == 3 and len(steps) == 4)
    assert [number for number, _, _ in hard_restart] == ["1.", "2.", "3.", "4."]
    deep = [step for steps in got.values() for step in steps if step[1] == 2]
    assert [number for number, _, _ in deep] == ["1.", "2.", "3."]  # "Download ARC…": level-3 steps
    assert any(caution for _, _, caution in deep)  # the note after the DISM command binds to its step


def test_lead_in_becomes_the_condition_of_its_list(built: Built, lang: str) -> None:
    lead_in = {
        "en": "If the standard reset procedure didn't work",
        "ja": "標準のリセット手順が機能しない場合は",
    }[lang]
    (chunk,) = [c for c in children(chunks_of(built.doc)) if c.lead_in.startswith(lead_in)]
    assert chunk.condition
    assert [s.number for s in chunk.steps] == ["1.", "2.", "3.", "4."]


def test_pictures_and_captions_attach_to_their_steps(built: Built) -> None:
    elements = read_docling(built.doc, source_id="doc")
    pictures = [e for e in elements if e.kind is K.PICTURE]
    assert all(p.hint("url").startswith("images/") and p.text for p in pictures)
    in_steps = [p for p in pictures if p.parent_id is not None]
    by_id = {e.element_id: e for e in elements}
    assert in_steps
    assert all(
        by_id[p.parent_id].kind is K.LIST_ITEM and p.list_id == by_id[p.parent_id].list_id for p in in_steps
    )
    captions = [e for e in elements if e.kind is K.CAPTION]
    assert [c.order for c in captions] == [p.order + 1 for p in pictures]
    procedures = [c for c in children(chunks_of(built.doc)) if c.steps]
    assert any(kind == "picture" for c in procedures for _, kind, _ in c.related_elements)


def test_page_box_and_record_reach_chunk_metadata(built: Built) -> None:
    chunks = children(chunks_of(built.doc, chunk_size=200))
    metas = [read_metadata(chunk_metadata(c)) for c in chunks]
    assert {m["page"] for m in metas} == set(range(1, len(built.doc.pages) + 1))
    for meta in metas:
        assert meta["page"] == min(meta["pages"])
        assert all(ref.startswith("#/") for ref in meta["source_record_refs"])
        for box in meta["boxes"]:
            assert box["page_size"] == [595.0, 842.0, "pt"]
            left, top, right, bottom = box["bbox"]
            assert 0 <= left < right <= 1
            assert 0 <= top < bottom <= 1
    assert any(len(m["pages"]) > 1 for m in metas)  # a chunk that runs over a page break


@pytest.mark.parametrize("origin", [CoordOrigin.BOTTOMLEFT, CoordOrigin.TOPLEFT])
def test_boxes_are_fractions_from_the_top_left_whatever_the_origin(origin: CoordOrigin) -> None:
    built = build(PAGES["en"], "en", origin)
    elements = read_docling(built.doc, source_id="doc")
    got = {e.record_id: (e.page, e.bbox) for e in elements if e.bbox is not None}
    assert got.keys() == built.boxes.keys()
    for ref, (page, box) in built.boxes.items():
        assert got[ref][0] == page
        assert got[ref][1] == pytest.approx(box), ref


def test_nothing_of_the_text_is_lost(built: Built) -> None:
    elements = read_docling(built.doc, source_id="doc")
    source = {w for item, _ in built.doc.iterate_items() for w in words(getattr(item, "text", ""))}
    source |= {w for e in elements if e.kind is K.TABLE for w in words(e.text)}
    chunked = set().union(*(words(c.text) for c in children(chunks_of(built.doc, chunk_size=200))))
    assert source - chunked == set()


def test_page_footers_are_read_as_furniture_and_dropped(built: Built) -> None:
    elements = read_docling(built.doc, source_id="doc")
    footers = [e for e in elements if e.kind is K.PAGE_FOOTER]
    assert [e.text for e in footers] == [f"- {n} -" for n in range(1, len(built.doc.pages) + 1)]
    assert not any("- 1 -" in c.text for c in chunks_of(built.doc))


def test_element_ids_follow_reading_order_and_records_are_self_refs(built: Built) -> None:
    elements = read_docling(built.doc, source_id="doc")
    assert [e.element_id for e in elements] == [f"doc#e{i}" for i in range(len(elements))]
    refs = {item.self_ref for item, _ in built.doc.iterate_items(with_groups=False)}
    assert {e.record_id for e in elements} <= refs | {
        "#/texts/" + str(i) for i in range(len(built.doc.texts))
    }


def test_notes_carry_their_printed_label_as_admonition(built: Built, lang: str) -> None:
    notes = [e.admonition for e in read_docling(built.doc, source_id="doc") if e.admonition]
    expected = {"en": {"important", "note", "warning", "tip"}, "ja": {"重要", "注意", "警告", "ヒント"}}[lang]
    assert set(notes) == expected


# ----- the JSON export ----------------------------------------------------------------------


def test_json_fixture_reads_like_the_document_it_was_exported_from() -> None:
    built = build(PAGES["en"], "en")
    if os.environ.get(REGENERATE) == "1":
        JSON_FIXTURE.write_text(json.dumps(built.doc.export_to_dict(), ensure_ascii=False, indent=1) + "\n")
    stored = json.loads(JSON_FIXTURE.read_text(encoding="utf-8"))
    assert stored["schema_name"] == "DoclingDocument"
    assert read_docling(stored, source_id="doc") == read_docling(built.doc, source_id="doc")


@pytest.mark.parametrize("as_", [Path, lambda p: p.read_bytes(), lambda p: p.read_text(encoding="utf-8")])
def test_json_export_by_path_bytes_or_text(as_: Callable[[Path], object]) -> None:
    source = as_(JSON_FIXTURE)
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=4000))
    chunks = list(chunker.iter_chunks_from_source(source, source_id="doc", source_format="docling"))
    assert chunks == chunks_of(json.loads(JSON_FIXTURE.read_text(encoding="utf-8")))


def test_regeneration_flag_is_off() -> None:
    assert os.environ.get(REGENERATE, "") in ("", "0")


# ----- docling-specific rules ---------------------------------------------------------------


def _doc_with(*texts: tuple[DocItemLabel, str], level: int | None = None) -> DoclingDocument:
    doc = DoclingDocument(name="rules")
    for label, text in texts:
        if label is DocItemLabel.SECTION_HEADER:
            doc.add_heading(text, level=level or 1)
        else:
            doc.add_text(label=label, text=text)
    return doc


@pytest.mark.parametrize(
    ("text", "kind", "number", "admonition"),
    [
        ("① 電源ボタンを押します。", K.LIST_ITEM, "①", ""),
        ("手順3 再起動します。", K.LIST_ITEM, "手順3", ""),
        ("(2) Select Network.", K.LIST_ITEM, "(2)", ""),
        ("Note: This function requires an Internet connection.", K.TEXT, "", "note"),
        ("注意：電源を切らないでください。", K.TEXT, "", "注意"),
        ("※ 一部の機種では表示されません。", K.TEXT, "", "※"),
        ("The TV turns off and on automatically.", K.TEXT, "", ""),
    ],
)
def test_paragraphs_that_open_with_a_marker_or_a_label(
    text: str, kind: ElementKind, number: str, admonition: str
) -> None:
    (el,) = read_docling(_doc_with((DocItemLabel.TEXT, text)), source_id="d")
    assert (el.kind, el.number, el.admonition) == (kind, number, admonition)
    assert el.list_id == ("d#l0" if kind is K.LIST_ITEM else None)


@pytest.mark.parametrize(
    ("levels", "expected"),
    [
        ([1, 1, 1], [1, 2, 3]),  # no hierarchy from the parser: heading numbers give it
        ([1, 2, 2], [1, 2, 2]),  # the parser's own levels win
    ],
)
def test_heading_levels(levels: list[int], expected: list[int]) -> None:
    doc = DoclingDocument(name="levels")
    for text, level in zip(["1 Connections", "1.1 Network", "1.1.1 Wired"], levels, strict=True):
        doc.add_heading(text, level=level)
    assert [e.level for e in read_docling(doc, source_id="d")] == expected


def test_list_items_without_markers_are_numbered_by_position() -> None:
    doc = DoclingDocument(name="markers")
    ordered = doc.add_list_group()
    for text in ("Open Settings.", "Select General."):
        doc.add_list_item(text, enumerated=True, marker="", parent=ordered)
    bullets = doc.add_list_group()
    doc.add_list_item("A LAN cable.", enumerated=False, marker="", parent=bullets)
    doc.add_list_item("2. Tap OK.", enumerated=False, marker="", parent=bullets)
    got = [(e.number, e.ordered, e.text, e.list_id) for e in read_docling(doc, source_id="d")]
    assert got == [
        ("1.", True, "Open Settings.", "d#l0"),
        ("2.", True, "Select General.", "d#l0"),
        ("-", False, "A LAN cable.", "d#l2"),
        ("2.", True, "Tap OK.", "d#l2"),
    ]


def test_tables_become_pipe_tables_with_their_captions() -> None:
    doc = DoclingDocument(name="table")
    doc.add_page(page_no=1, size=A4)
    table = doc.add_table(
        data=table_data("| Setting | Value |\n|---|---|\n| Wired | CAT 7 (STP) |\n| IP | v6 |")
    )
    caption = doc.add_text(label=DocItemLabel.CAPTION, text="Table 1. Network settings", parent=table)
    table.captions.append(caption.get_ref())
    table_el, caption_el = read_docling(doc, source_id="d")
    assert table_el.kind is K.TABLE
    assert table_el.text == "| Setting | Value |\n|---|---|\n| Wired | CAT 7 (STP) |\n| IP | v6 |"
    assert (caption_el.kind, caption_el.text) == (K.CAPTION, "Table 1. Network settings")


# ----- malformed input ----------------------------------------------------------------------


def _first(d: dict[str, Any], label: str) -> int:
    return next(i for i, t in enumerate(d["texts"]) if t["label"] == label)


def _set_text(label: str, key: str, value: object) -> Callable[[dict[str, Any]], str]:
    def mutate(d: dict[str, Any]) -> str:
        i = _first(d, label)
        d["texts"][i][key] = value
        return f"#/texts/{i}"

    return mutate


def _set_box(key: str, value: object) -> Callable[[dict[str, Any]], str]:
    def mutate(d: dict[str, Any]) -> str:
        i = _first(d, "list_item")
        d["texts"][i]["prov"][0]["bbox"][key] = value
        return f"#/texts/{i}"

    return mutate


def _schema(d: dict[str, Any]) -> str:
    d["schema_name"] = "DocTags"
    return "document"


def _page_size(d: dict[str, Any]) -> str:
    d["pages"]["1"]["size"]["width"] = 0.0
    return "#/pages/1"


def _no_pages(d: dict[str, Any]) -> str:
    d["pages"] = {}
    return "#/texts/0"


def _dangling(d: dict[str, Any]) -> str:
    d["body"]["children"].append({"$ref": "#/texts/99999"})
    return "#/body"


def _cycle(d: dict[str, Any]) -> str:
    group = d["groups"][0]
    group["children"].append({"$ref": group["self_ref"]})
    return group["self_ref"]


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (_schema, "schema_name is 'DocTags', expected 'DoclingDocument'"),
        (_set_text("text", "text", 42), "text: Input should be a valid string"),
        (_set_text("section_header", "level", "two"), "level: Input should be a valid integer"),
        (_set_text("list_item", "enumerated", "perhaps"), "enumerated: Input should be a valid boolean"),
        (_set_box("l", "left"), "prov.0.bbox.l: Input should be a valid number"),
        (_set_box("r", 9999.0), "is outside the page"),
        (
            _set_box("coord_origin", "CENTER"),
            "prov.0.bbox.coord_origin: Input should be 'TOPLEFT' or 'BOTTOMLEFT'",
        ),
        (_page_size, "page size 0.0 x 842.0 is not positive"),
        (_no_pages, "page 1 is not in the document's pages (none)"),
        (_dangling, "refers to #/texts/99999, which does not exist"),
        (_cycle, "Document hierarchy is inconsistent"),
    ],
    ids=[
        "schema",
        "text-type",
        "level-type",
        "bool-type",
        "bbox-type",
        "bbox-outside",
        "origin",
        "page-size",
        "no-pages",
        "ref",
        "cycle",
    ],
)
def test_malformed_json_names_the_record(mutate: Callable[[dict[str, Any]], str], problem: str) -> None:
    d = json.loads(JSON_FIXTURE.read_text(encoding="utf-8"))
    record = mutate(d)
    with pytest.raises(ReaderError, match=re.escape(problem)) as info:
        chunks_of(d, source_format="docling")
    assert (info.value.source_format, info.value.record) == ("docling", record)


def _in_memory_cycle(doc: DoclingDocument) -> str:
    group = doc.groups[0]
    group.children.append(group.get_ref())
    return group.self_ref


def _in_memory_bbox(doc: DoclingDocument) -> str:
    item = next(t for t in doc.texts if t.prov)
    item.prov[0].bbox.r = 9999.0
    return item.self_ref


@pytest.mark.parametrize(
    ("mutate", "problem"), [(_in_memory_cycle, "is its own ancestor"), (_in_memory_bbox, "outside")]
)
def test_malformed_documents_in_memory_name_the_item(
    mutate: Callable[[DoclingDocument], str], problem: str
) -> None:
    built = build(PAGES["en"], "en")
    record = mutate(built.doc)
    with pytest.raises(ReaderError, match=problem) as info:
        chunks_of(built.doc)
    assert info.value.record == record


@pytest.mark.parametrize(
    ("source", "error", "message"),
    [
        (b'{"schema_name": "DoclingDocument", ', ValueError, "not valid JSON"),
        ([1, 2, 3], ReaderError, "expected a DoclingDocument or its JSON export, got list"),
    ],
)
def test_input_that_is_no_docling_json(source: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        chunks_of(source, source_format="docling")

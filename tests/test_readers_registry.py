"""Format detection, the one-call entry point for any source, and what layout facts reach chunks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from procedure_rag import (
    BBox,
    ChunkerOptions,
    ElementKind,
    LayoutElement,
    ProcedureChunker,
    ReaderError,
    chunk_metadata,
    detect_format,
    read_metadata,
)

CHUNKER = ProcedureChunker(ChunkerOptions(chunk_size=400, length_function=len))


@pytest.mark.parametrize(
    ("source", "suffix", "expected"),
    [
        ("anything", ".md", "markdown"),
        ("anything", ".RST", "rst"),
        ("anything", ".htm", "html"),
        ("anything", ".pdf", "pdf"),
        ("# Title\n\n1. Do this.\n", None, "markdown"),
        ("Plain words on a line.\nAnother line.\n", None, "text"),
        ("<!DOCTYPE html><html><body><h1>T</h1></body></html>", None, "html"),
        ("Title\n=====\n\n.. note::\n   x\n\n.. warning::\n   y\n", None, "rst"),
        (b"%PDF-1.7\n...", None, "pdf"),
        (Path("manual.rst"), None, "rst"),
        ({"analyzeResult": {"paragraphs": []}}, None, "azure"),
        ({"documentLayout": {"blocks": []}}, None, "google"),
        ({"document": {"documentLayout": {"blocks": []}}}, None, "google"),
        ({"Blocks": []}, None, "textract"),
        ({"schema_name": "DoclingDocument"}, None, "docling"),
        ([{"type": "Title", "text": "T"}], None, "unstructured"),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, str) else v[:12],
)
def test_detect_format(source: object, suffix: str | None, expected: str) -> None:
    assert detect_format(source, suffix=suffix) == expected


def test_detect_format_names_what_it_cannot_tell() -> None:
    with pytest.raises(ValueError, match="cannot tell the format of a dict; name it with source_format="):
        detect_format({"unknown": 1})


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"source_format": "odp"}, ValueError, "source_format must be 'auto' or one of markdown, text"),
        ({"source_format": "textract"}, ValueError, "source_id is required for textract input"),
    ],
)
def test_source_errors(kwargs: dict[str, str], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        list(CHUNKER.iter_chunks_from_source({"Blocks": []}, **kwargs))


def test_a_path_is_read_with_its_suffix_and_named_by_it(tmp_path: Path, tests_data: Path) -> None:
    page = tmp_path / "recovery.md"
    page.write_bytes((tests_data / "hololens/en/hololens-recovery.md").read_bytes())
    chunks = list(CHUNKER.iter_chunks_from_source(page))
    assert {c.source_id for c in chunks} == {str(page)}
    assert any(c.condition == "If the standard reset procedure didn't work" for c in chunks)
    # the same text given as a string gives the same chunks
    same = list(CHUNKER.iter_chunks_from_source(page.read_text(encoding="utf-8"), source_id=str(page)))
    assert [c.chunk_id for c in same] == [c.chunk_id for c in chunks]


def test_invalid_utf8_file_names_the_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# T\n\n\xff\xfe broken")
    with pytest.raises(ValueError, match="input is not valid UTF-8"):
        list(CHUNKER.iter_chunks_from_source(bad))


def test_reader_error_names_format_record_and_problem() -> None:
    error = ReaderError("textract", "b-17", "BoundingBox Left is 1.7, outside the page")
    assert isinstance(error, ValueError)
    assert str(error) == "textract record 'b-17': BoundingBox Left is 1.7, outside the page"


@pytest.mark.parametrize(
    ("coords", "message"),
    [
        ((0.1, 0.1, 1.3, 0.2), "outside the page"),
        ((0.5, 0.1, 0.2, 0.2), "inverted"),
        ((-0.2, 0, 0.1, 0.1), "outside"),
    ],
)
def test_boxes_are_fractions_of_the_page(coords: tuple[float, float, float, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BBox(*coords)


def _element(
    order: int, kind: ElementKind, text: str, page: int, top: float, **extra: object
) -> LayoutElement:
    return LayoutElement(
        element_id=f"doc#e{order}",
        kind=kind,
        text=text,
        order=order,
        page=page,
        bbox=BBox(0.1, top, 0.9, top + 0.05, 612.0, 792.0, "pt"),
        record_id=f"rec-{order}",
        **extra,  # type: ignore[arg-type]
    )


def test_pages_boxes_and_record_ids_reach_chunk_metadata() -> None:
    """Parser output: no text spans, but every chunk says where on which page it came from."""
    elements = [
        _element(0, ElementKind.SECTION_HEADER, "Hard-restart procedure", 3, 0.10, level=2),
        _element(1, ElementKind.TEXT, "If the standard reset didn't work, use the hard restart:", 3, 0.16),
        _element(
            2, ElementKind.LIST_ITEM, "Unplug the cable.", 3, 0.22, number="1.", ordered=True, list_id="L"
        ),
        _element(
            3,
            ElementKind.LIST_ITEM,
            "Hold the power button.",
            4,
            0.05,
            number="2.",
            ordered=True,
            list_id="L",
        ),
    ]
    (child,) = [
        c for c in CHUNKER.iter_chunks_from_elements(elements, source_id="doc") if c.level.value == "child"
    ]
    meta = read_metadata(chunk_metadata(child))
    assert meta["page"] == 3
    assert meta["pages"] == [3, 4]
    assert [b["page"] for b in meta["boxes"]] == [3, 3, 4]  # the heading rides along without a box of its own
    assert meta["boxes"][0] == {"page": 3, "bbox": [0.1, 0.16, 0.9, 0.21], "page_size": [612.0, 792.0, "pt"]}
    assert meta["source_record_refs"] == ["rec-0", "rec-1", "rec-2", "rec-3"]
    assert [(s["number"], s.get("page")) for s in meta["steps"]] == [("1.", 3), ("2.", 4)]
    assert meta["condition"] == "If the standard reset didn't work"
    assert json.loads(chunk_metadata(child)["boxes"])  # stored as a JSON string


@pytest.mark.parametrize(
    ("payload", "expected"),
    [({"Blocks": []}, "textract"), ([{"type": "Title", "text": "T"}], "unstructured")],
)
def test_saved_parser_json_is_told_by_its_shape(tmp_path: Path, payload: object, expected: str) -> None:
    saved = tmp_path / "manual.json"
    saved.write_text(json.dumps(payload), encoding="utf-8")
    assert detect_format(saved) == expected
    assert detect_format(saved.read_bytes()) == expected
    assert detect_format(saved.read_text(encoding="utf-8")) == expected


# ----- the registry is the one place a reader is named --------------------------------------

SRC = Path(__file__).resolve().parents[1] / "src"
READERS_DIR = SRC / "procedure_rag" / "_readers"
#: Importers outside ``_readers/`` allowed to name a reader module, and why: framework documents
#: that carry Unstructured element metadata are grouped by that reader's own record rules.
ALLOWED_READER_IMPORTS = {
    ("procedure_rag/_chunking/framework_documents.py", "procedure_rag._readers.unstructured")
}


def _reader_modules() -> set[str]:
    from procedure_rag._readers import registry  # noqa: PLC0415

    return {entry.module for entry in registry._READERS.values()}


def _imported_modules(path: Path) -> set[str]:
    import ast  # noqa: PLC0415

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_every_registered_reader_exists_and_takes_the_reader_options() -> None:
    import importlib  # noqa: PLC0415
    import inspect  # noqa: PLC0415

    from procedure_rag._readers import registry  # noqa: PLC0415

    for name, entry in registry._READERS.items():
        function = getattr(importlib.import_module(entry.module), entry.function)
        parameters = inspect.signature(function).parameters
        assert {"source_id", "options"} <= set(parameters), (name, list(parameters))
        if entry.decoder:
            assert callable(getattr(importlib.import_module(entry.module), entry.decoder)), name


def test_outside_the_readers_only_the_registry_names_a_reader() -> None:
    # Adding a reader touches its module, its registry row and its tests: the chunker, the CLI
    # and both adapters reach readers through the registry, so none may import one itself.
    readers = _reader_modules()
    assert len(readers) >= 9
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if READERS_DIR in path.parents:
            continue
        relative = path.relative_to(SRC).as_posix()
        for module in sorted(_imported_modules(path) & readers):
            if (relative, module) not in ALLOWED_READER_IMPORTS:
                offenders.append(f"{relative} imports {module}")
    assert offenders == []

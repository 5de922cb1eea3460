"""Every reader takes the same options, through the one dispatch: one row per format.

Each row is a small real source of its format whose steps are numbered in a style no
default knows (``Stage 1:``). With that style in :attr:`ChunkerOptions.step_styles`
every reader reads the two paragraphs as steps; without it none does. The limits
(``max_input_chars``, ``max_json_depth``) are refused for every format alike.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable

import pytest
from docling_core.types.doc import DocItemLabel, DoclingDocument

from procedure_rag import ChunkerOptions, ProcedureChunker, StepStyle
from procedure_rag._readers.options import ReaderOptions
from procedure_rag._readers.registry import FORMATS, LAYOUT_FORMATS, read_source

STAGE = StepStyle("stage", re.compile(r"(?P<marker>Stage \d+:)[ \t]+(?=\S)"))
STEPS = ("Stage 1: Open the cover.", "Stage 2: Press the reset button.")


def _pdf(lines: tuple[str, ...]) -> bytes:
    """A one-page PDF printing ``lines`` in Helvetica, one under the other."""
    text = " ".join(f"({line}) Tj 0 -16 Td" for line in lines)
    stream = f"BT /F1 12 Tf 72 720 Td {text} ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _xlsx(lines: tuple[str, ...]) -> bytes:
    """A workbook whose one sheet holds ``lines`` in column A, one a row (text laid out in cells)."""
    from openpyxl import Workbook  # noqa: PLC0415 - only this row needs it

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Reset"
    for line in lines:
        sheet.append([line])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _docling() -> dict[str, object]:
    doc = DoclingDocument(name="reset")
    doc.add_heading("Reset", level=1)
    for step in STEPS:
        doc.add_text(label=DocItemLabel.TEXT, text=step)
    return doc.export_to_dict()


def _azure() -> dict[str, object]:
    offsets = [0, len(STEPS[0]) + 1]
    paragraphs = [
        {"content": step, "spans": [{"offset": offset, "length": len(step)}]}
        for step, offset in zip(STEPS, offsets, strict=True)
    ]
    pages = [{"pageNumber": 1, "width": 8.5, "height": 11, "unit": "inch"}]
    return {"analyzeResult": {"content": "\n".join(STEPS), "pages": pages, "paragraphs": paragraphs}}


def _docx(lines: tuple[str, ...]) -> bytes:
    """A Word document holding ``lines`` as plain paragraphs (numbered by hand), built from its parts."""
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = "".join(f"<w:p><w:r><w:t>{line}</w:t></w:r></w:p>" for line in lines)
    main = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
    parts = {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        f'<Override PartName="/word/document.xml" ContentType="{main}"/></Types>',
        "_rels/.rels": '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="r1" Type="{rel}" Target="word/document.xml"/></Relationships>',
        "word/document.xml": f'<w:document xmlns:w="{w}"><w:body>{body}</w:body></w:document>',
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, text in parts.items():
            zf.writestr(name, text)
    return out.getvalue()


def _shape(placeholder: str, paragraphs: str) -> str:
    """A slide's shape filling ``placeholder`` with ``paragraphs``."""
    props = f'<p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr>{placeholder}</p:nvPr></p:nvSpPr>'
    return f"<p:sp>{props}<p:txBody>{paragraphs}</p:txBody></p:sp>"


def _pptx(lines: tuple[str, ...]) -> bytes:
    """A deck of one slide holding ``lines`` as unbulleted paragraphs (numbered by hand), from its parts."""
    a = "http://schemas.openxmlformats.org/drawingml/2006/main"
    p = "http://schemas.openxmlformats.org/presentationml/2006/main"
    r = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    paragraphs = "".join(
        f"<a:p><a:pPr><a:buNone/></a:pPr><a:r><a:t>{line}</a:t></a:r></a:p>" for line in lines
    )
    main = "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
    rel = f"{r}/officeDocument"
    rels = "http://schemas.openxmlformats.org/package/2006/relationships"
    parts = {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        f'<Override PartName="/ppt/presentation.xml" ContentType="{main}"/></Types>',
        "_rels/.rels": f'<Relationships xmlns="{rels}"><Relationship Id="r1" Type="{rel}" '
        'Target="ppt/presentation.xml"/></Relationships>',
        "ppt/presentation.xml": f'<p:presentation xmlns:p="{p}" xmlns:r="{r}"><p:sldIdLst>'
        '<p:sldId id="256" r:id="s1"/></p:sldIdLst></p:presentation>',
        "ppt/_rels/presentation.xml.rels": f'<Relationships xmlns="{rels}"><Relationship Id="s1" '
        f'Type="{r}/slide" Target="slides/slide1.xml"/></Relationships>',
        "ppt/slides/slide1.xml": f'<p:sld xmlns:a="{a}" xmlns:p="{p}"><p:cSld><p:spTree>'
        + _shape('<p:ph type="title"/>', "<a:p><a:r><a:t>Reset</a:t></a:r></a:p>")
        + _shape('<p:ph idx="1"/>', paragraphs)
        + "</p:spTree></p:cSld></p:sld>",
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, text in parts.items():
            zf.writestr(name, text)
    return out.getvalue()


SOURCES: dict[str, Callable[[], object]] = {
    "markdown": lambda: "# Reset\n\n" + "\n".join(STEPS) + "\n",
    "text": lambda: "Reset\n\n" + "\n".join(STEPS) + "\n",
    "html": lambda: "<html><body><h1>Reset</h1><p>" + "<br>".join(STEPS) + "</p></body></html>",
    "rst": lambda: "Reset\n=====\n\n" + "\n".join(STEPS) + "\n",
    "pdf": lambda: _pdf(STEPS),
    "xlsx": lambda: _xlsx(STEPS),
    "docx": lambda: _docx(STEPS),
    "pptx": lambda: _pptx(STEPS),
    "unstructured": lambda: [
        {"type": "NarrativeText", "element_id": f"e{i}", "text": step, "metadata": {}}
        for i, step in enumerate(STEPS)
    ],
    "docling": _docling,
    "azure": _azure,
    "google": lambda: {
        "documentLayout": {
            "blocks": [
                {"blockId": str(i), "textBlock": {"type": "paragraph", "text": step}}
                for i, step in enumerate(STEPS)
            ]
        }
    },
    "textract": lambda: {
        "Blocks": [{"Id": f"b{i}", "BlockType": "LAYOUT_TEXT", "Text": step} for i, step in enumerate(STEPS)]
    },
}


def test_every_format_has_a_row() -> None:
    assert tuple(SOURCES) == FORMATS


def _step_numbers(fmt: str, options: ChunkerOptions) -> list[str]:
    chunker = ProcedureChunker(options)
    chunks = chunker.iter_chunks_from_source(SOURCES[fmt](), source_id="reset", source_format=fmt)
    return [step.number for chunk in chunks if chunk.level == "child" for step in chunk.steps]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_custom_step_style_reaches_every_reader(fmt: str) -> None:
    custom = ChunkerOptions(length_function=len, step_styles=(STAGE,))
    assert _step_numbers(fmt, custom) == ["Stage 1:", "Stage 2:"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_without_the_style_no_reader_sees_those_steps(fmt: str) -> None:
    assert _step_numbers(fmt, ChunkerOptions(length_function=len)) == []


def _as_input(fmt: str) -> object:
    """The source as a reader is handed it: layout formats as JSON text, so that its size counts."""
    source = SOURCES[fmt]()
    return json.dumps(source) if fmt in LAYOUT_FORMATS else source


@pytest.mark.parametrize("fmt", FORMATS)
def test_max_input_chars_is_enforced_for_every_format(fmt: str) -> None:
    with pytest.raises(ValueError, match=r"over the limit of 20 \(ChunkerOptions.max_input_chars"):
        read_source(_as_input(fmt), source_id="reset", fmt=fmt, options=ReaderOptions(max_input_chars=20))


@pytest.mark.parametrize("fmt", LAYOUT_FORMATS)
def test_max_json_depth_is_enforced_for_every_layout_format(fmt: str) -> None:
    with pytest.raises(
        ValueError, match=r"JSON nests more than 2 levels deep \(ChunkerOptions.max_json_depth"
    ):
        read_source(SOURCES[fmt](), source_id="reset", fmt=fmt, options=ReaderOptions(max_json_depth=2))


@pytest.mark.parametrize("fmt", ["xlsx", "docx", "pptx"])
def test_max_uncompressed_bytes_reaches_the_office_readers(fmt: str) -> None:
    source = SOURCES[fmt]()
    with pytest.raises(ValueError, match=r"over the limit of 100 \(ChunkerOptions.max_uncompressed_bytes"):
        read_source(source, source_id="reset", fmt=fmt, options=ReaderOptions(max_uncompressed_bytes=100))
    assert read_source(source, source_id="reset", fmt=fmt, options=ReaderOptions()).elements


def test_the_chunker_hands_the_readers_its_own_options() -> None:
    options = ChunkerOptions(
        step_styles=(STAGE,),
        max_input_chars=1000,
        max_json_depth=9,
        max_uncompressed_bytes=5000,
        include_hidden_sheets=True,
        include_hidden_slides=True,
        include_speaker_notes=False,
    )
    assert options.reader_options == ReaderOptions(
        step_styles=(STAGE,),
        heading_styles=options.heading_styles,
        lexicons=options.lexicons,
        max_input_chars=1000,
        max_json_depth=9,
        max_uncompressed_bytes=5000,
        include_hidden_sheets=True,
        include_hidden_slides=True,
        include_speaker_notes=False,
    )

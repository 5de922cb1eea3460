"""The PDF plain path, on PDFs made from real manual text (tests/data/pdf/, see SOURCES.md).

``samsung-tv-17-19.pdf`` holds the E-Manual TV excerpt's printed pages 17-19 line for
line; ``hololens-recovery-ja.pdf`` the HoloLens ja recovery page up to "デバイスをリセットする",
laid out with numbered and nested bulleted lists. Both print ``- n -`` page footers.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from pypdf import PdfWriter

from procedure_rag import ChunkerOptions, ChunkLevel, ProcedureChunker, ReaderError, chunk_metadata
from procedure_rag._metadata import read_metadata
from procedure_rag._readers.pdf import extract_pdf_text, read_pdf
from procedure_rag._types import Chunk, ElementKind

DATA = Path(__file__).resolve().parent / "data"
TV = DATA / "pdf" / "samsung-tv-17-19.pdf"
JA = DATA / "pdf" / "hololens-recovery-ja.pdf"
K = ElementKind


def chunks_of(source: object, *, chunk_size: int = 4000, source_format: str = "auto") -> list[Chunk]:
    # Each section alone (no combining of small ones), so that chunks show the reader's headings.
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=chunk_size, combine_small_sections=False))
    chunks = chunker.iter_chunks_from_source(source, source_id="doc", source_format=source_format)
    return [c for c in chunks if c.level is ChunkLevel.CHILD]


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def tv_titles() -> list[str]:
    """The titles of the sections printed on pages 17-19 (from the excerpt's index)."""
    text = (DATA / "emanual/samsung-tv-sections-10-28.txt").read_text(encoding="utf-8")
    end = text.index("- 19 -")
    rows = (DATA / "emanual/samsung-tv-sections-10-28.sections.jsonl").read_text(encoding="utf-8")
    return [row["title"] for row in map(json.loads, rows.splitlines()) if row["start"] < end]


@pytest.mark.parametrize(
    "as_", [lambda p: p, lambda p: p.read_bytes(), str, lambda p: io.BytesIO(p.read_bytes())]
)
def test_read_pdf_takes_a_path_bytes_or_a_file(as_: Callable[[Path], object]) -> None:
    source = read_pdf(as_(TV), source_id="doc")  # type: ignore[arg-type]
    assert source.format == "pdf"
    assert source.text.count("\f") == 2
    for el in source.elements:
        assert el.span is not None
        assert el.text.split()[0] in source.text[el.span.start : el.span.end]


def test_tv_section_paths_are_the_manuals_headings() -> None:
    paths = list(dict.fromkeys(c.section_path for c in chunks_of(TV)))
    headings = [path[-1] for path in paths]
    # Every section title of the dataset, in order, by its font (13 pt bold over 9.5 pt text),
    # including the one the text alone cannot tell from its body (a one-sentence warning follows).
    titles = tv_titles()
    assert [h for h in headings if h in titles] == titles
    # The fixture sets every title in one font, so they are one level; lines set like the body
    # text are not headings when the fonts show where the headings are.
    assert ("Getting support through Remote Management",) in paths
    assert not any("Updating through the Internet" in path for path in paths)
    section = [c.text for c in chunks_of(TV) if c.section_path[-1].endswith("to the latest version")]
    assert any("Updating through the Internet" in text for text in section)


def test_pages_are_pdf_pages_and_printed_numbers_are_kept() -> None:
    elements = read_pdf(TV, source_id="doc").elements
    footers = [(e.page, e.hint("printed_page"), e.text) for e in elements if e.kind is K.PAGE_FOOTER]
    assert footers == [(1, "17", "- 17 -"), (2, "18", "- 18 -"), (3, "19", "- 19 -")]
    metas = [read_metadata(chunk_metadata(c)) for c in chunks_of(TV, chunk_size=150)]
    assert {m["page"] for m in metas} == {1, 2, 3}
    assert all(m.get("boxes") for m in metas)  # every chunk shows where it is on its pages
    assert not any("- 17 -" in c.text for c in chunks_of(TV))


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("pdf", [TV, JA], ids=["tv", "ja"])
def test_nothing_of_the_text_is_lost(pdf: Path) -> None:
    # Wrapped Japanese lines are joined without a space, so compare text with spaces removed,
    # sentence by sentence (a chunk may end at any sentence end).
    footers = {e.text for e in read_pdf(pdf, source_id="doc").elements if e.kind is K.PAGE_FOOTER}
    chunked = squash("".join(c.text for c in chunks_of(pdf, chunk_size=200)))
    pieces = [
        squash(piece)
        for line in "\n".join(extract_pdf_text(pdf)).splitlines()
        if line.strip() not in footers
        for piece in re.split(r"(?<=[。.!?])", line)
        if piece.strip()
    ]
    assert [piece for piece in pieces if piece not in chunked] == []


def test_numbered_steps_are_recovered_in_order_with_their_lead_in() -> None:
    procedures = [c for c in chunks_of(JA, chunk_size=400) if any(s.number == "1." for s in c.steps)]
    assert [[s.number for s in c.steps] for c in procedures] == [["1.", "2.", "3.", "4."]] * 2
    assert procedures[0].steps[0].text.startswith("Type-C ケーブルを抜いて")
    assert procedures[1].condition.endswith("標準のリセット手順が機能しない場合は")  # the lead-in
    assert all(c.page == 2 for c in procedures)


def test_nested_bullets_keep_their_depth_and_notes_their_label() -> None:
    elements = read_pdf(JA, source_id="doc").elements
    bullets = [(e.number, e.level) for e in elements if e.kind is K.LIST_ITEM and e.number == "・"]
    assert bullets == [("・", 0), ("・", 0), *[("・", 1)] * 4, ("・", 0)]
    assert [e.admonition for e in elements if e.admonition] == ["重要", "注意", "注意"]
    assert elements[0].kind is K.TITLE  # alone in the largest size, on the first page
    assert elements[0].text == "HoloLens 2 を再起動、リセット、または回復する"


# ----- unreadable input -----------------------------------------------------------------------


def _encrypted(password: str) -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(TV.read_bytes()))
    writer.encrypt(user_password=password, owner_password="owner", algorithm="RC4-128")  # noqa: S106 - a test file
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_pdf_with_only_an_owner_password_reads() -> None:
    assert read_pdf(_encrypted(""), source_id="doc").text == read_pdf(TV, source_id="doc").text


@pytest.mark.parametrize(
    ("make", "record", "problem"),
    [
        (lambda: TV.read_bytes()[:900], "file", "cannot be read"),
        (lambda: b"%PDF-1.7\n" + bytes(range(256)) * 4, "file", "cannot be read"),
        (lambda: b"PK\x03\x04 a zip file", "file", "not a PDF: it starts with b'PK\\x03\\x04"),
        (lambda: b"# Title\n" * 3, "file", "not a PDF"),
        (lambda: _encrypted("secret"), "file", "is encrypted with a password; decrypt it first"),
    ],
    ids=["truncated", "garbage-after-header", "zip", "text", "encrypted"],
)
def test_unreadable_pdfs_raise_reader_errors(make: Callable[[], bytes], record: str, problem: str) -> None:
    with pytest.raises(ReaderError, match=re.escape(problem)) as info:
        chunks_of(make(), source_format="pdf")
    assert (info.value.source_format, info.value.record) == ("pdf", record)


def test_a_missing_file_is_a_reader_error(tmp_path: Path) -> None:
    with pytest.raises(ReaderError, match="cannot be opened") as info:
        read_pdf(tmp_path / "missing.pdf", source_id="doc")
    assert info.value.record == "file"


def test_a_list_number_the_font_does_not_map_keeps_its_step(shared_data: Path) -> None:
    # Page 9 of the Sapphire manual numbers the mask-file steps with glyphs its font maps to
    # no character: kept as U+FFFD before their period (left out anywhere else), the lines
    # stay a numbered list instead of one paragraph.
    pdf = shared_data / "real-docs" / "ja_yamagata-u_sapphire_app-manual.pdf"
    chunks = list(ProcedureChunker().iter_chunks_from_source(pdf, source_id="sapphire"))
    children = [c for c in chunks if c.level is ChunkLevel.CHILD and c.page == 9]
    (listed,) = [c for c in children if "データセットを選択する" in c.text]
    assert [s.number for s in listed.steps] == ["\ufffd."] * 5
    assert listed.steps[0].action == "データセットを選択する"
    assert "\ufffd" not in "".join(c.text.replace("\ufffd.", "") for c in chunks)

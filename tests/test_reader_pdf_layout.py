"""The PDF reader on real PDFs: tags, outline, fonts, page furniture, contents pages, boxes.

* ``pdf/hololens-recovery-{en,ja}.chromium.pdf``: the HoloLens recovery pages printed by
  Chromium (tagged, with an outline, a running header and footer on every page);
* ``real-docs/…sapphire….pdf``: a Japanese app manual printed from a browser without tags
  or outline (Kangxi-radical look-alike glyphs, headings only by font size);
* ``real-docs/…exastro….pdf``: a Japanese install guide saved from PowerPoint (slide titles,
  a contents slide listing every section, a ``Exastro n`` footer on every slide);
* ``pdf/hololens-recovery-en.ruled.pdf``: the recovery page printed with body-size headings
  over a border, without tags or outline;
* ``pdf/hololens-FAQ-{en,ja}.libreoffice.pdf``, ``pdf/certificate-manager-en.libreoffice.pdf``:
  shared HoloLens pages made into Word by pandoc and exported by LibreOffice (a list of links
  to the page's own sections at the top; a running header on a two-page document).
"""

from __future__ import annotations

import io
import re
import unicodedata
import warnings
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from procedure_rag import ChunkerOptions, ChunkLevel, ProcedureChunker, chunk_metadata
from procedure_rag._metadata import read_metadata
from procedure_rag._readers.pdf import read_pdf
from procedure_rag._readers.pdf_pages import PdfFile
from procedure_rag._readers.pdf_text import join_wrapped
from procedure_rag._types import Chunk, ElementKind

DATA = Path(__file__).resolve().parent / "data"
CHROMIUM = {lang: DATA / "pdf" / f"hololens-recovery-{lang}.chromium.pdf" for lang in ("en", "ja")}
LIBREOFFICE = DATA / "pdf" / "hololens-recovery-en.libreoffice.pdf"
FAQ = {lang: DATA / "pdf" / f"hololens-FAQ-{lang}.libreoffice.pdf" for lang in ("en", "ja")}
CERTIFICATES = DATA / "pdf" / "certificate-manager-en.libreoffice.pdf"
RULED = DATA / "pdf" / "hololens-recovery-en.ruled.pdf"
SAPPHIRE = DATA / "real-docs" / "ja_yamagata-u_sapphire_app-manual.pages-1-8.pdf"
EXASTRO = DATA / "real-docs" / "ja_exastro_ita-azure-setting-samples_install.pages-1-16.pdf"
K = ElementKind


def chunks_of(path: Path, *, chunk_size: int = 400) -> list[Chunk]:
    # Each section alone (no combining of small ones), so that chunks show the reader's headings.
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=chunk_size, combine_small_sections=False))
    return [
        c for c in chunker.iter_chunks_from_source(path, source_id=path.name) if c.level is ChunkLevel.CHILD
    ]


def markdown_headings(lang: str) -> list[str]:
    text = (DATA / "hololens" / lang / "hololens-recovery.md").read_text(encoding="utf-8")
    found = re.finditer(r"^(#{1,6})\s+(.+)$", text, flags=re.MULTILINE)
    return [re.sub(r"<[^>]+>", "", m.group(2)).strip() for m in found]  # anchors are not printed


def squash(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


# ----- tagged and outlined: Chromium -----------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_tagged_headings_are_the_pages_headings_in_order(lang: str) -> None:
    elements = read_pdf(CHROMIUM[lang], source_id="doc").elements
    headings = [e.text for e in elements if e.kind is K.SECTION_HEADER]
    assert headings[1:] == markdown_headings(lang)  # after the title pandoc printed


def test_word_style_tags_whose_paragraphs_go_on_over_a_page_break() -> None:
    # LibreOffice (as Word) tags a paragraph that goes on to the next page once, with the next
    # page's content ids beside its own: they must not take the place of that page's heading.
    headings = [e.text for e in read_pdf(LIBREOFFICE, source_id="doc").elements if e.kind is K.SECTION_HEADER]
    assert headings == markdown_headings("en")


@pytest.mark.parametrize(
    "path", [CHROMIUM["en"], CHROMIUM["ja"], LIBREOFFICE], ids=["chromium-en", "chromium-ja", "libreoffice"]
)
def test_section_paths_follow_the_outline(path: Path) -> None:
    with PdfFile(path) as pdf:
        outline = [e.title for e in pdf.outline()]
    chunks = chunks_of(path)
    assert chunks
    right = [c for c in chunks if c.section_path and c.section_path[-1] in outline]
    assert len(right) / len(chunks) >= 0.95


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_running_header_and_footer_stay_out_of_the_chunks(lang: str) -> None:
    elements = read_pdf(CHROMIUM[lang], source_id="doc").elements
    furniture = [e for e in elements if e.kind in (K.PAGE_HEADER, K.PAGE_FOOTER)]
    pages = {e.page for e in elements}
    assert {e.page for e in furniture} == pages  # one header and one footer a page
    assert all(re.search(r"\d+/\d+$", e.text) for e in furniture if e.kind is K.PAGE_FOOTER)
    text = "\n".join(c.text for c in chunks_of(CHROMIUM[lang]))
    assert "file://" not in text
    assert not re.search(r"^\S*\s?\d/\d$", text, flags=re.MULTILINE)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_list_of_the_documents_own_later_headings_is_contents_not_steps(lang: str) -> None:
    # The FAQ opens with a bulleted list of links to its own sections (an "In this article"
    # list): kept as text, never made steps, and the sections themselves stay headings.
    elements = read_pdf(FAQ[lang], source_id="doc").elements
    headings = {squash(e.text) for e in elements if e.kind is K.SECTION_HEADER}
    (contents,) = [e for e in elements if e.hint("contents") == "true"]
    entries = [squash(line.lstrip("•").strip()) for line in contents.text.splitlines()]
    assert len(entries) >= 10
    assert sum(entry in headings for entry in entries) >= 0.5 * len(entries)  # translated: not all
    steps = [squash(s.text) for c in chunks_of(FAQ[lang]) for s in c.steps]
    assert steps  # the page's real lists ("Make sure that you're connected to Wi-Fi"…) are steps
    assert not set(steps) & set(entries)


def test_a_list_of_instructions_is_not_contents_although_the_page_has_headings() -> None:
    source = read_pdf(CERTIFICATES, source_id="doc")
    assert not [e for e in source.elements if e.hint("contents") == "true"]
    steps = [s.text for c in chunks_of(CERTIFICATES) for s in c.steps]
    assert "Connect your HoloLens 2 to a PC." in steps


def test_the_running_header_of_a_two_page_document_is_furniture() -> None:
    elements = read_pdf(CERTIFICATES, source_id="doc").elements
    headers = [e for e in elements if e.kind is K.PAGE_HEADER]
    assert [(e.page, e.text) for e in headers] == [
        (1, "HoloLens 2 operations guide"),
        (2, "HoloLens 2 operations guide"),
    ]
    assert not any("operations guide" in c.text for c in chunks_of(CERTIFICATES))


def test_a_one_page_tagged_documents_running_lines_are_artifacts() -> None:
    # No repetition inside one page can tell a running header; the tag tree does: LibreOffice
    # leaves the header and the page number out of it (pagination artifacts).
    path = DATA / "pdf" / "hololens1-install-localized-ja.libreoffice.pdf"
    elements = read_pdf(path, source_id="doc").elements
    furniture = [(e.kind, e.text) for e in elements if e.kind in (K.PAGE_HEADER, K.PAGE_FOOTER)]
    assert furniture == [(K.PAGE_HEADER, "HoloLens 2 運用ガイド"), (K.PAGE_FOOTER, "－ 1 －")]
    assert not any("運用ガイド" in c.text for c in chunks_of(path))


def test_numbered_steps_and_drawn_bullets_are_list_items_with_their_depth() -> None:
    elements = read_pdf(CHROMIUM["en"], source_id="doc").elements
    by_id = {e.element_id: e for e in elements}
    standard = next(e for e in elements if e.text == "Standard restart procedure")
    steps = [e for e in elements if e.kind is K.LIST_ITEM and e.order > standard.order][:4]
    assert [s.number for s in steps] == ["1.", "2.", "3.", "4."]
    assert steps[0].text.startswith("Unplug the Type-C cable")
    # Chromium draws bullets as shapes; the tags say they are list items, and nested ones nest.
    nested = [e for e in elements if e.kind is K.LIST_ITEM and e.level == 1]
    assert nested
    assert all(by_id[e.parent_id].kind is K.LIST_ITEM for e in nested if e.parent_id)
    assert any(e.text.startswith("When the device is charging") for e in nested)


@pytest.mark.parametrize(
    "path", [CHROMIUM["en"], CHROMIUM["ja"], SAPPHIRE, EXASTRO], ids=lambda p: p.name[:24]
)
def test_every_element_and_every_step_has_its_page_and_box(path: Path) -> None:
    source = read_pdf(path, source_id="doc")
    assert all(e.page is not None and e.bbox is not None for e in source.elements)
    for e in source.elements:
        assert e.bbox is not None
        assert 0 <= e.bbox.left < e.bbox.right <= 1
        assert 0 <= e.bbox.top < e.bbox.bottom <= 1
        assert e.span is not None
        assert source.text[e.span.start : e.span.end].strip()
    steps = [s for c in chunks_of(path) for s in c.steps]
    assert all(s.page is not None and s.bbox is not None for s in steps)
    # Every chunk with a body (not a heading the page ends on) shows where it is.
    metas = [read_metadata(chunk_metadata(c)) for c in chunks_of(path) if "\n" in c.text]
    assert metas
    assert all(m.get("boxes") for m in metas)


def test_a_box_is_where_the_text_is_drawn() -> None:
    # The box of the first step, cut out of the page, holds that step's text and no other line.
    source = read_pdf(CHROMIUM["en"], source_id="doc")
    step = next(e for e in source.elements if e.kind is K.LIST_ITEM and e.number == "1.")
    assert step.bbox is not None
    assert step.page is not None
    with PdfFile(CHROMIUM["en"]) as pdf:
        page = pdf.page(step.page - 1)
    inside = [
        line.text
        for line in page.lines
        if line.top >= step.bbox.top * page.height - 1 and line.bottom <= step.bbox.bottom * page.height + 1
    ]
    assert squash(" ".join(inside)) == squash("1. " + step.text)


# ----- untagged, no outline: fonts, furniture, contents ----------------------------------------


def test_headings_by_font_size_and_kangxi_glyphs_fixed() -> None:
    elements = read_pdf(SAPPHIRE, source_id="doc").elements
    assert elements[0].kind is K.TITLE
    assert elements[0].text == "Sapphire アプリマニュアル"
    levels = {e.text: e.level for e in elements if e.kind is K.SECTION_HEADER}
    assert levels["Python 環境の構築"] == 1  # 30 pt
    assert levels["Anaconda 仮想環境の作成"] == 2  # 22 pt
    text = "".join(e.text for e in elements)
    assert "利用" in text
    assert not re.search("[\u2e80-\u2fdf]", text)


def test_wrapped_lines_are_joined_as_their_script_wants() -> None:
    # The browser-printed manual: a sentence wrapped at the right margin (also where the
    # line boxes leave a paragraph-sized gap), a command wrapped inside a package name, a
    # note line that ends where the line before it could have gone on.
    text = read_pdf(SAPPHIRE, source_id="doc").text
    assert "手動で指定する必要があります。" in text  # Japanese: no space
    assert "dash-core-components dash-html-components\n" in text  # a name's hyphen kept, no space
    assert "\n※ Anaconda 仮想環境では pip install" in text  # a note label keeps its line
    english = read_pdf(CHROMIUM["en"], source_id="doc").text
    assert "Right-click the device, and select Properties. A dialog box" in english  # one space


def test_wrapped_line_joints() -> None:
    assert join_wrapped("必要があり", "ます。") == "必要があります。"
    assert join_wrapped("the con-", "figuration file") == "the configuration file"
    assert join_wrapped("dash dash-", "html-components") == "dash dash-html-components"
    assert join_wrapped("cd /home/", "user/data") == "cd /home/user/data"
    assert join_wrapped("Select OK.", "Then wait") == "Select OK. Then wait"


def test_body_size_headings_underlined_by_a_rule_are_headings() -> None:
    # The manual's h3 headings are set in the body's size and (to PDFium) weight; only the
    # rule drawn under each tells them from body text. A struck-through command is no rule
    # under the line above it.
    elements = read_pdf(SAPPHIRE, source_id="doc").elements
    levels = {e.text: e.level for e in elements if e.kind is K.SECTION_HEADER}
    assert levels["必要なモジュールのインストール"] == 2
    assert levels["モジュールのインストール方法"] == 3
    assert levels["conda install で Dash 関連のモジュールをインストールするとき"] == 3
    assert not any("derickl" in heading for heading in levels)


def test_untagged_pdf_without_outline_whose_headings_only_a_rule_marks() -> None:
    # The recovery page printed with every heading at body size over a border, tags and
    # outline removed: the rules alone give the page's headings, in order.
    with PdfFile(RULED) as pdf:
        assert not pdf.outline()
        assert not any(line.tag for page in pdf.pages() for line in page.lines)
    elements = read_pdf(RULED, source_id="doc").elements
    headings = [e.text for e in elements if e.kind is K.SECTION_HEADER]
    assert headings[1:] == markdown_headings("en")
    assert not any(e.kind is K.SECTION_HEADER and e.text.endswith(".") for e in elements)


def test_a_numbered_sequence_of_headings_nests_by_its_numbers() -> None:
    headings = [
        (e.level, e.text) for e in read_pdf(EXASTRO, source_id="doc").elements if e.kind is K.SECTION_HEADER
    ]
    assert (1, "1. はじめに") in headings
    assert (2, "1.1 はじめに") in headings
    assert (1, "2. Azureモデルを使う準備") in headings
    assert (2, "2.1 ITAの準備") in headings


def test_contents_slides_are_neither_steps_nor_headings() -> None:
    source = read_pdf(EXASTRO, source_id="doc")
    contents = [e for e in source.elements if e.hint("contents") == "true"]
    assert {e.page for e in contents} == {2, 3, 4}
    assert not any(e.kind is K.LIST_ITEM and e.page in (2, 3, 4) for e in source.elements)
    assert not any(s.page in (2, 3, 4) for c in chunks_of(EXASTRO) for s in c.steps)


def test_slide_footers_are_dropped_and_their_numbers_kept() -> None:
    source = read_pdf(EXASTRO, source_id="doc")
    footers = [e for e in source.elements if e.kind is K.PAGE_FOOTER]
    assert {e.page for e in footers} == {6, 7, 8, 9, 10, 11, 13, 14, 15}  # every content slide
    assert all(e.text.startswith("Exastro ") for e in footers)
    slide = next(e for e in source.elements if e.text == "1.1 はじめに")
    assert slide.hint("printed_page") == "6" or slide.page == 6
    assert not any("Exastro 1" in c.text for c in chunks_of(EXASTRO))


def test_bullets_drawn_from_a_symbol_font_are_steps() -> None:
    chunks = chunks_of(EXASTRO)
    ita = next(c for c in chunks if c.section_path[-1:] == ("2.1 ITAの準備",) and c.steps)
    assert [s.text[:8] for s in ita.steps][:3] == ["サーバが準備出来", "ITAはバージョ", "ita_answ"]


# ----- bad input -------------------------------------------------------------------------------


def _with_blank_pages(path: Path, before: int, count: int) -> bytes:
    reader = PdfReader(path)
    writer = PdfWriter()
    for i, page in enumerate(reader.pages, start=1):
        for _ in range(count if i == before else 0):
            writer.add_blank_page(width=float(page.mediabox.width), height=float(page.mediabox.height))
        writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_pages_without_text_give_one_warning_naming_them_and_the_rest_is_read() -> None:
    data = _with_blank_pages(SAPPHIRE, before=2, count=2)  # a scan's pages have no text
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = read_pdf(data, source_id="doc")
    messages = [str(w.message) for w in caught]
    assert messages == ["no text layer on pages 2–3: use OCR or a layout parser"]
    assert squash(source.text) == squash(read_pdf(SAPPHIRE, source_id="doc").text)


def test_narrow_no_break_spaces_are_spaces_even_where_a_line_holds_nothing_else() -> None:
    # The Japanese HoloLens page says 「手順 \u202f 4. で解凍した」; LibreOffice's PDF of it has a
    # line of nothing but that space, on which the reader stopped before (StopIteration).
    chunks = chunks_of(DATA / "pdf" / "hololens1-install-localized-ja.libreoffice.pdf")
    text = " ".join(chunk.text for chunk in chunks)
    assert "手順4.で解凍したフォルダーに" in squash(text)
    assert "\u202f" not in text


def test_a_tagged_table_is_a_chunk_of_its_own() -> None:
    # Chromium writes Table tags: a declared table keeps its own chunk, however small.
    path = DATA / "pdf" / "hololens-provisioning-en.toc.chromium.pdf"
    (table,) = [e for e in read_pdf(path, source_id="doc").elements if e.kind is ElementKind.TABLE]
    assert not table.hint("table_from")
    row = table.text.splitlines()[2].strip("| ").split(" |")[0]
    (chunk,) = [c for c in chunks_of(path) if row in c.text]
    assert chunk.chunk_type.value == "table"

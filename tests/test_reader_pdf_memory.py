"""A long PDF is read and chunked page by page with bounded memory (issue 16 §3), its spool always deleted.

The layout is decided over the whole document in passes over pages spooled to a
temporary file (``procedure_rag._readers.pdf_passes``); reading ten times the pages must
not take much more memory. The PDFs are a real PDF's pages repeated by pypdf.
"""

from __future__ import annotations

import gc
import os
import tracemalloc
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from procedure_rag import ChunkerOptions, ProcedureChunker, ReaderError
from procedure_rag._readers import pdf_pages
from procedure_rag._readers.pdf import iter_pdf, read_pdf

DATA = Path(__file__).resolve().parent / "data"
SOURCE = DATA / "real-docs" / "ja_yamagata-u_sapphire_app-manual.pages-1-8.pdf"


def repeated(tmp: Path, pages: int) -> Path:
    reader = PdfReader(SOURCE)
    writer = PdfWriter()
    for i in range(pages):
        writer.add_page(reader.pages[i % len(reader.pages)])
    out = tmp / f"repeated-{pages}.pdf"
    with out.open("wb") as f:
        writer.write(f)
    return out


def streamed_peak(path: Path) -> int:
    """tracemalloc's peak while every element of ``path`` is read and dropped."""
    tracemalloc.start()
    try:
        for _ in iter_pdf(path, source_id="doc"):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    tmp = tmp_path_factory.mktemp("long-pdf")
    return {pages: repeated(tmp, pages) for pages in (1, 30, 300)}


def test_ten_times_the_pages_takes_little_more_memory(pdfs: dict[int, Path]) -> None:
    read_pdf(pdfs[1], source_id="warm")  # imports and first-use caches are not reading's memory
    small = streamed_peak(pdfs[30])
    large = streamed_peak(pdfs[300])
    # Every page kept until the last was laid out made this about 8 (0.7 MB, then 5.6 MB);
    # with the pages spooled it is about 1.6 (0.37 MB, 0.60 MB: what grows is bounded, as
    # CPython's free lists of small objects, which tracemalloc counts, fill up).
    assert large / small < 2.5, (small, large)


def test_streamed_elements_are_the_whole_results(pdfs: dict[int, Path]) -> None:
    whole = read_pdf(pdfs[30], source_id="doc")
    assert list(iter_pdf(pdfs[30], source_id="doc")) == whole.elements
    assert [e.page for e in whole.elements if e.page is not None][-1] == 30


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files through /proc")
def test_spool_is_deleted_when_reading_stops_early(pdfs: dict[int, Path]) -> None:
    before = open_files()
    elements = iter_pdf(pdfs[30], source_id="doc")
    next(elements)
    assert open_files() > before  # the spooled pages
    elements.close()
    assert open_files() == before


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files through /proc")
def test_spool_is_deleted_when_a_page_fails(pdfs: dict[int, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    page = pdf_pages.PdfFile.page

    def failing(self: pdf_pages.PdfFile, index: int) -> pdf_pages.PageLines:
        if index == 12:
            raise ReaderError("pdf", f"page {index + 1}", "cannot be read: damaged")
        return page(self, index)

    monkeypatch.setattr(pdf_pages.PdfFile, "page", failing)
    before = open_files()
    with pytest.raises(ReaderError, match="page 13"):
        read_pdf(pdfs[30], source_id="doc")
    assert open_files() == before


# ----- the spool's records: JSON, never pickles --------------------------------------------------


def test_a_spooled_page_comes_back_equal_with_its_shared_lines_shared() -> None:
    from procedure_rag._readers.pdf_pages import PdfFile  # noqa: PLC0415
    from procedure_rag._readers.pdf_passes import RECORD_TYPES, PageLayout  # noqa: PLC0415
    from procedure_rag._readers.pdf_spool import Spool  # noqa: PLC0415
    from procedure_rag._readers.pdf_structure import Block  # noqa: PLC0415

    with PdfFile(SOURCE) as pdf:
        page = next(p for p in pdf.pages() if len(p.lines) >= 3)
    record = PageLayout(page, [Block("text", page.lines[:2], page.number)], 12.5)
    with Spool[PageLayout](RECORD_TYPES) as spool:
        spool.append(record)
        spool.append(record)
        back = spool[0]
        assert back == record
        assert back.page.lines[0].tag_path == record.page.lines[0].tag_path  # tuples stay tuples
        # The layout tells lines apart by identity: a block's line is its page's line.
        assert back.blocks[0].lines[0] is back.page.lines[0]
        assert spool[1] == record
        assert spool[1] is not back  # each read builds its own objects


def test_a_spool_refuses_what_it_was_not_given() -> None:
    from procedure_rag._readers.pdf_pages import OutlineEntry  # noqa: PLC0415
    from procedure_rag._readers.pdf_spool import Spool  # noqa: PLC0415

    with Spool[object](()) as spool:
        with pytest.raises(TypeError, match="cannot hold OutlineEntry objects"):
            spool.append([OutlineEntry(1, "Title", 1)])
        with pytest.raises(TypeError, match="cannot hold set objects"):
            spool.append({1})


# ----- chunking a PDF file: the chunker takes the reader's stream, not its whole result ---------


def chunked_peak(path: Path) -> int:
    """tracemalloc's peak while every chunk of ``path`` is made and dropped.

    Unreachable cycles are collected every fifty chunks, so that what is measured is
    what the chunker holds, not how far the collector lags or free lists have filled.
    """
    chunker = ProcedureChunker()
    gc.collect()
    tracemalloc.start()
    try:
        for i, _ in enumerate(chunker.iter_chunks_from_source(path)):
            if i % 50 == 0:
                gc.collect()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_chunking_ten_times_the_pages_takes_little_more_memory(pdfs: dict[int, Path]) -> None:
    list(ProcedureChunker().iter_chunks_from_source(pdfs[1]))  # imports, caches, the token encoding
    small = chunked_peak(pdfs[30])
    large = chunked_peak(pdfs[300])
    # Chunking the reader's whole result (elements and text, about 7.5 KB a page) made this
    # about 9 (0.38 MB, then 3.3 MB); streamed, about 1.25 (0.28 MB, 0.34 MB): no more than
    # reading alone.
    assert large / small < 2.0, (small, large)


STREAMED = [
    SOURCE,
    DATA / "pdf" / "hololens-recovery-ja.chromium.pdf",
    DATA / "pdf" / "hololens-provisioning-ja.table.tagged.libreoffice.pdf",
    DATA / "pdf" / "hololens-recovery-en.ruled.pdf",
]


@pytest.mark.parametrize("path", STREAMED, ids=lambda p: p.name)
def test_chunks_of_a_streamed_pdf_are_those_of_its_whole_text(path: Path) -> None:
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=120))  # small: lines and tables are cut
    whole = read_pdf(path, source_id=str(path))
    expected = list(
        chunker.iter_chunks_from_elements(whole.elements, source_id=str(path), source_text=whole.text)
    )
    streamed = list(chunker.iter_chunks_from_source(path))
    assert streamed == expected
    label = chunker.options.lexicons[streamed[0].language].continued_label
    assert any(label in c.text for c in streamed)  # pieces were mapped back to the window's text


def test_a_pdf_over_the_text_limit_is_refused_and_its_file_size_is_not_its_text(tmp_path: Path) -> None:
    path = DATA / "pdf" / "certificate-manager-en.libreoffice.pdf"  # 57 KB of PDF, 3,249 characters
    assert list(ProcedureChunker(ChunkerOptions(max_input_chars=4000)).iter_chunks_from_source(path))
    before = open_files() if Path("/proc/self/fd").is_dir() else 0
    with pytest.raises(
        ValueError, match=r"^input is at least [\d,]+ characters, over the limit of 3,000 "
    ) as caught:
        list(ProcedureChunker(ChunkerOptions(max_input_chars=3000)).iter_chunks_from_source(path))
    assert str(caught.value).endswith(
        "(ChunkerOptions.max_input_chars: raise it, or set it to None for no limit)"
    )
    if before:
        assert open_files() == before  # the reader's spool is deleted

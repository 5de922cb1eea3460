"""The one-line swap on real PDFs: page furniture leaves the chunks, a table of contents is text.

``ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400).split_documents(PyPDFLoader(path).load())``:
the pages, joined by form feeds, are read by the plain-text reader, which finds running
headers and footers by repetition and keeps contents lines as text (never steps or
headings). Every PDF here goes through the real ``PyPDFLoader``:

* Chromium-printed pages (``pdf/*.chromium.pdf``): the browser's header (date, title)
  and footer (file URL, ``n/N``) on every page;
* a PowerPoint-exported manual (``real-docs/ja_exastro_…pages-1-16.pdf``): ``Exastro``
  over most pages with the page number glued to it by pypdf (``6Exastro``);
* contents pages: LibreOffice's table of contents with dotted leaders under 「目次」
  (``pdf/hololens-provisioning-ja.toc.libreoffice.pdf``), pandoc's numbered "Contents"
  list printed by Chromium (``pdf/hololens-provisioning-en.toc.chromium.pdf``), and the
  Exastro manual's 目次 of numbered lines (the whole file, from the shared data).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_procedures import ProcedureTextSplitter
from procedure_rag import read_metadata
from procedure_rag._readers.pdf_text import same_length_lookalikes

with warnings.catch_warnings():  # langchain-community announces its sunset on import
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.document_loaders import PyPDFLoader

EXASTRO = "ja_exastro_ita-azure-setting-samples_install"
BROWSER_HEADER = re.compile(r"\d{1,2}/\d{1,2}/\d{2}, \d{1,2}:\d{2} [AP]M \S.*")
BROWSER_FOOTER = re.compile(r"(?:ﬁ|fi)le:///\S+ \d+/\d+")
# pypdf versions differ in the space before the page number and in where they break lines.
LEADER = re.compile(r"\.{4,}\s*\d+")


@pytest.fixture(scope="module")
def splitter() -> ProcedureTextSplitter:
    return ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400)


def _split(splitter: ProcedureTextSplitter, path: Path) -> tuple[list[Document], list[Document]]:
    pages = PyPDFLoader(str(path)).load()
    return pages, splitter.split_documents(pages)


def _lines(page: Document) -> list[str]:
    return [line.strip() for line in page.page_content.splitlines() if line.strip()]


def _flat(text: str) -> str:
    """Whitespace ignored (the reader joins wrapped lines), look-alike glyphs read as what they stand for."""
    return "".join(same_length_lookalikes(text).split())


def _lost(pages: list[Document], chunks: list[Document]) -> list[str]:
    """The page lines no chunk holds (see :func:`_flat`)."""
    held = "\n".join(_flat(d.page_content) for d in chunks)
    return [line for page in pages for line in _lines(page) if _flat(line) not in held]


def _glued_headers(pages: list[Document]) -> list[str]:
    """The first lines of the pages that are ``Exastro`` and the page number pypdf glued to it."""
    tops = [lines[0] for lines in map(_lines, pages) if lines]
    return [line for line in tops if re.fullmatch(r"\d+Exastro", line)]


def _steps(chunks: list[Document]) -> list[dict[str, Any]]:
    return [step for d in chunks for step in read_metadata(d.metadata).get("steps") or ()]


@pytest.mark.parametrize(
    "name",
    [
        "hololens-recovery-en.chromium.pdf",
        "hololens-recovery-ja.chromium.pdf",
        "hololens-provisioning-en.toc.chromium.pdf",
    ],
)
def test_browser_header_and_footer_are_all_the_swap_leaves_out(
    tests_data: Path, splitter: ProcedureTextSplitter, name: str
) -> None:
    pages, chunks = _split(splitter, tests_data / "pdf" / name)
    running = [line for page in pages for line in _lines(page)[-2:]]
    assert all(BROWSER_HEADER.fullmatch(line) for line in running[0::2])
    assert all(BROWSER_FOOTER.fullmatch(line) for line in running[1::2])
    assert _lost(pages, chunks) == running
    assert not [d.page_content for d in chunks if "file:///" in d.page_content or "ﬁle:///" in d.page_content]


def test_glued_page_number_and_header_are_all_the_swap_leaves_out(
    tests_data: Path, splitter: ProcedureTextSplitter
) -> None:
    pages, chunks = _split(splitter, tests_data / "real-docs" / f"{EXASTRO}.pages-1-16.pdf")
    glued = _glued_headers(pages)
    assert len(glued) > len(pages) / 2
    assert _lost(pages, chunks) == glued
    # The page number pypdf glued to it is the page's own: no printed_page differs.
    assert all("printed_page" not in d.metadata for d in chunks)


def test_pages_without_furniture_lose_nothing(tests_data: Path, splitter: ProcedureTextSplitter) -> None:
    pages, chunks = _split(
        splitter, tests_data / "real-docs" / "ja_yamagata-u_sapphire_app-manual.pages-1-8.pdf"
    )
    assert _lost(pages, chunks) == []


def test_dotted_contents_under_a_title_are_text(tests_data: Path, splitter: ProcedureTextSplitter) -> None:
    pages, chunks = _split(splitter, tests_data / "pdf" / "hololens-provisioning-ja.toc.libreoffice.pdf")
    first = _lines(pages[0])
    entries = [line for line in first if LEADER.search(line)]
    assert first[0] == "目次"
    assert sum(len(LEADER.findall(line)) for line in entries) >= 12
    (toc,) = [d for d in chunks if _flat(entries[0]) in _flat(d.page_content)]
    assert all(_flat(entry) in _flat(toc.page_content) for entry in entries)
    assert read_metadata(toc.metadata)["chunk_type"] == "text"
    assert not [step for step in _steps(chunks) if "...." in step["action"]]
    assert not [d for d in chunks if "目次" in read_metadata(d.metadata)["section_path"]]
    assert _lost(pages, chunks) == []


def test_dotted_contents_without_a_title_are_text(tests_data: Path, splitter: ProcedureTextSplitter) -> None:
    pages = PyPDFLoader(str(tests_data / "pdf" / "hololens-provisioning-ja.toc.libreoffice.pdf")).load()
    pages[0].page_content = pages[0].page_content.replace("目次\n", "", 1)
    chunks = splitter.split_documents(pages)
    assert not [step for step in _steps(chunks) if "...." in step["action"]]
    (toc,) = [d for d in chunks if "...." in d.page_content]
    assert read_metadata(toc.metadata)["chunk_type"] == "text"


def test_numbered_contents_under_a_title_are_text(tests_data: Path, splitter: ProcedureTextSplitter) -> None:
    pages, chunks = _split(splitter, tests_data / "pdf" / "hololens-provisioning-en.toc.chromium.pdf")
    first = _lines(pages[0])
    start = first.index("Contents")
    end = first.index("1 Configure HoloLens by using a")  # the first heading, wrapped in the body
    listed = "\n".join(first[start:end])
    (toc,) = [d for d in chunks if listed in d.page_content]  # kept line by line, as the contents
    headings = {tuple(read_metadata(d.metadata)["section_path"]) for d in chunks}
    assert ("1.1 Provisioning package HoloLens wizard",) in headings  # its heading in the body stays one
    assert not [step for step in _steps(chunks) if step.get("page") == 1]
    assert toc.metadata["page"] == 1


def test_contents_pages_make_no_steps(shared_data: Path, splitter: ProcedureTextSplitter) -> None:
    pages, chunks = _split(splitter, shared_data / "real-docs" / f"{EXASTRO}.pdf")
    assert _lines(pages[1])[0] == "目次"
    listed = [line for page in pages[1:4] for line in _lines(page)]
    assert len(listed) > 30
    assert not [step for step in _steps(chunks) if step["page"] in (2, 3, 4)]
    # The chapter page after the contents keeps its heading: a section slide (PowerPoint wrote
    # the PDF) titling the slides after it.
    assert _lines(pages[4]) == ["1. はじめに"]
    assert [d for d in chunks if list(read_metadata(d.metadata)["section_path"])[-1:] == ["1. はじめに"]]
    assert _lost(pages, chunks) == _glued_headers(pages)


# --- A one-page document's running header, known from the other documents of the input ---

FAQ_JA = "hololens-FAQ-ja.libreoffice.pdf"  # five pages under 「HoloLens 2 運用ガイド」
ONE_PAGE_JA = "hololens1-install-localized-ja.libreoffice.pdf"  # one page under the same header
GUIDE_JA = "HoloLens 2 運用ガイド"


def _one_page_chunks(chunks: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (text, read_metadata(meta))
        for text, meta in chunks
        if str(meta.get("source", meta.get("file_path"))).endswith(ONE_PAGE_JA)
    ]


def test_a_one_page_documents_running_header_is_known_from_the_others(
    splitter: ProcedureTextSplitter, tests_data: Path
) -> None:
    faq = PyPDFLoader(str(tests_data / "pdf" / FAQ_JA)).load()
    one = PyPDFLoader(str(tests_data / "pdf" / ONE_PAGE_JA)).load()
    assert len(one) == 1
    assert _lines(one[0])[0] == GUIDE_JA
    assert _lines(faq[1])[0] == GUIDE_JA
    # Alone, one page shows no repetition: its header reads as a title over the page.
    alone = _one_page_chunks([(d.page_content, d.metadata) for d in splitter.split_documents(one)])
    assert alone[0][1]["section_path"][0] == GUIDE_JA
    # After a document whose pages repeat it, it is a running header there too, and
    # dropped; the lazy twin reads alike.
    for chunks in (splitter.split_documents(faq + one), list(splitter.lazy_split_documents(faq + one))):
        mine = _one_page_chunks([(d.page_content, d.metadata) for d in chunks])
        assert mine
        for text, meta in mine:
            assert GUIDE_JA not in meta["section_path"]
            assert GUIDE_JA not in text
        assert mine[0][1]["section_path"][0].startswith("HoloLens")
    # The earlier document is read as it is alone.
    faq_alone = [d.page_content for d in splitter.split_documents(faq)]
    assert [d.page_content for d in splitter.split_documents(faq + one)][: len(faq_alone)] == faq_alone


def test_the_node_parser_knows_a_running_header_from_the_other_documents(tests_data: Path) -> None:
    from llama_index.core import Document as LlamaDocument  # noqa: PLC0415

    from llama_index_procedures import ProcedureNodeParser  # noqa: PLC0415

    docs = [
        LlamaDocument(
            text=page.page_content, metadata={"file_path": page.metadata["source"], "page_label": str(i + 1)}
        )
        for name in (FAQ_JA, ONE_PAGE_JA)
        for i, page in enumerate(PyPDFLoader(str(tests_data / "pdf" / name)).load())
    ]
    nodes = ProcedureNodeParser(chunk_size=400).get_nodes_from_documents(docs)
    mine = _one_page_chunks([(n.get_content(), n.metadata) for n in nodes])
    assert mine
    assert all(GUIDE_JA not in meta["section_path"] and GUIDE_JA not in text for text, meta in mine)

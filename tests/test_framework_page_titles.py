"""The one-line swap keeps a document's title over its sections: page text has no heading levels.

``ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400).split_documents(PyPDFLoader(path).load())``
reads the pages' text, where every heading is a line like any other. The plain-text reader
takes a title set apart (by a blank line, or by the start of the text) for a level above the
headings that follow without one. Two things of printed pages must not hide that gap:

* a running header above the title (LibreOffice's page style, a Word header): it is no
  text, so the title under it still opens the text;
* a page break right above a later heading: a page may break anywhere in a section, so a
  heading at the top of a page is no new top-level section.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from langchain_core.documents import Document

from langchain_procedures import ProcedureTextSplitter
from procedure_rag import read_metadata

with warnings.catch_warnings():  # langchain-community announces its sunset on import
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.document_loaders import PyPDFLoader


@pytest.fixture(scope="module")
def splitter() -> ProcedureTextSplitter:
    return ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400)


def _paths(chunks: list[Document]) -> list[list[str]]:
    return [list(read_metadata(d.metadata)["section_path"]) for d in chunks]


def _with_running_lines(pages: list[Document], header: str, footer: str) -> list[Document]:
    """The pages as a page style prints them: ``header`` on top, ``footer`` (``{n}``: the page) below."""
    return [
        Document(page_content=f"{header}\n{p.page_content}\n{footer.format(n=n)}", metadata=p.metadata)
        for n, p in enumerate(pages, start=1)
    ]


@pytest.mark.parametrize(
    ("name", "header", "footer", "title"),
    [
        # LibreOffice's own page style printed no header here: one is added to the page text.
        (
            "hololens-recovery-en.libreoffice.pdf",
            "HoloLens 2 operations guide",
            "Page {n}",
            "Restart, reset, or recover HoloLens 2",
        ),
        # Here it printed one, 「HoloLens 2 運用ガイド」, over the title.
        ("hololens-FAQ-ja.libreoffice.pdf", None, None, "ホログラムと相互作用のトラブルシューティング"),
    ],
)
def test_the_title_under_a_running_header_is_over_every_section(
    tests_data: Path,
    splitter: ProcedureTextSplitter,
    name: str,
    header: str | None,
    footer: str | None,
    title: str,
) -> None:
    pages = PyPDFLoader(str(tests_data / "pdf" / name)).load()
    if header is None or footer is None:
        header = pages[0].page_content.splitlines()[0].strip()
        assert pages[0].page_content.splitlines()[1].strip() == title
    else:
        assert pages[0].page_content.splitlines()[0].strip() == title
        plain_paths = _paths(splitter.split_documents(pages))
        pages = _with_running_lines(pages, header, footer)
    chunks = splitter.split_documents(pages)
    paths = _paths(chunks)
    assert all(path[:1] == [title] for path in paths), paths
    assert sum(len(path) >= 2 for path in paths) > len(paths) / 2  # the sections are under it
    assert not [d for d in chunks if header in d.page_content]
    if footer is not None:  # the same sections as the pages without the running lines
        assert paths == plain_paths


def test_a_heading_at_the_top_of_a_page_stays_under_the_title(
    tests_data: Path, splitter: ProcedureTextSplitter
) -> None:
    pages = PyPDFLoader(str(tests_data / "pdf" / "hololens-recovery-en.libreoffice.pdf")).load()
    title = pages[0].page_content.splitlines()[0].strip()  # Restart, reset, or recover HoloLens 2
    heading = "Restart the device"
    # The page break moved to right above the heading: the text before it ends the page before.
    (at,) = [i for i, p in enumerate(pages) if f"\n{heading}\n" in p.page_content]
    before, after = pages[at].page_content.split(f"\n{heading}\n")
    moved = [
        *pages[:at],
        Document(page_content=before, metadata=pages[at].metadata),
        Document(page_content=f"{heading}\n{after}", metadata={**pages[at].metadata, "page": at + 1}),
        *[
            Document(page_content=p.page_content, metadata={**p.metadata, "page": p.metadata["page"] + 1})
            for p in pages[at + 1 :]
        ],
    ]
    chunks = splitter.split_documents(moved)
    assert [d for d in chunks if heading in d.page_content]
    paths = _paths(chunks)
    assert all(path[:1] == [title] for path in paths), paths
    assert [title, heading] in paths
    # The sections after it are its siblings, as when no page break is there.
    assert [path for path in paths if heading in path] == [[title, heading]]


def test_a_title_case_title_after_a_list_and_its_paragraph_opens_a_section(
    tests_data: Path, splitter: ProcedureTextSplitter
) -> None:
    # Page text shows no indent: a paragraph after a list may be its last step's, so a title-like
    # line after it needs more than a body under it. A title in title case ("VPN via UI") with a
    # body under it is a section title, not a line of the step's paragraph.
    pages = PyPDFLoader(str(tests_data / "pdf" / "hololens-network-en.chromium.pdf")).load()
    chunks = splitter.split_documents(pages)
    paths = _paths(chunks)
    assert ["HoloLens network", "Connect HoloLens to Enterprise Wi-Fi Network"] in paths
    vpn = next(d for d in chunks if "1. Select a VPN provider." in d.page_content)
    assert _paths([vpn]) == [["HoloLens network", "VPN via UI"]]
    # The steps of the section before end where the title starts.
    wifi = next(d for d in chunks if "Look at the top left of the Start menu" in d.page_content)
    assert "Enterprise Wi-Fi profiles use Extensible Authentication Protocol" not in wifi.page_content


@pytest.mark.parametrize(("lang", "link"), [("en", "Back to list"), ("ja", "一覧に戻る")])
def test_a_pages_link_back_up_is_neither_text_nor_title(
    tests_data: Path, splitter: ProcedureTextSplitter, lang: str, link: str
) -> None:
    # The kiosk reference ends each code sample's section with a link back to the list; page
    # text prints it as a line like a title. It is the page's link, kept out of every chunk.
    path = tests_data / "pdf" / f"hololens-kiosk-reference-{lang}.chromium.pdf"
    pages = PyPDFLoader(str(path)).load()
    assert sum(p.page_content.count(link) for p in pages) == 8
    chunks = splitter.split_documents(pages)
    assert not [d for d in chunks if link in d.page_content]
    assert not [p for p in _paths(chunks) if link in p]
    # Only the links are left out: the sections' own text is all there.
    samples = "Multiple app global assigned access profile" if lang == "en" else "グローバルに割り当てられた"
    assert sum(d.page_content.count(samples) for d in chunks) >= 1

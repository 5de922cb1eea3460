"""Slide titles in the pages of a PDF a presentation program wrote, read through a PDF loader.

``PyPDFLoader`` gives a deck exported by LibreOffice Impress or PowerPoint a document per
slide, its ``creator`` naming the program. Each slide opens with its title, which the page
text shows as one more line: without the deck's cue, the Japanese decks below had no
section at all, a title ran into the paragraph under it, and lines inside a slide were taken
for titles. The decks are the PowerPoint fixtures of ``tests/data/pptx/`` exported by
Impress (``make_pptx.py``); the real PowerPoint PDF is the Exastro guide's first pages.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from langchain_core.documents import Document

from langchain_procedures import ProcedureTextSplitter
from procedure_rag import read_metadata
from procedure_rag._chunking.framework_documents import _from_presentation

with warnings.catch_warnings():  # langchain-community announces its sunset on import
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.document_loaders import PyPDFLoader

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def splitter() -> ProcedureTextSplitter:
    return ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400)


def _pages(name: str) -> list[Document]:
    return PyPDFLoader(str(DATA / "pdf" / name)).load()


def _paths(chunks: list[Document]) -> list[list[str]]:
    return [list(read_metadata(d.metadata)["section_path"]) for d in chunks]


def _with_creator(pages: list[Document], creator: str) -> list[Document]:
    return [
        Document(
            page_content=p.page_content, metadata={**p.metadata, "creator": creator, "producer": creator}
        )
        for p in pages
    ]


def test_the_loader_names_the_presentation_program() -> None:
    pages = _pages("hololens-restart-deck-ja.impress.pdf")
    assert pages[0].metadata["creator"] == "Impress"
    assert _from_presentation(pages[0].metadata)
    assert _from_presentation(
        {"Creator": "Microsoft® PowerPoint® for Microsoft 365"}
    )  # PDFPlumberLoader's key
    assert _from_presentation(
        {"producer": "macOS Version 14.2 (Build 23C64) Quartz PDFContext", "creator": "Keynote"}
    )
    for creator in ("Microsoft® Word for Microsoft 365", "Writer", "Chromium", "PyPDF"):
        assert not _from_presentation({"creator": creator, "producer": creator})
    assert not _from_presentation({"page": 0, "source": "impress.pdf"})


def test_japanese_slide_titles_are_sections(splitter: ProcedureTextSplitter) -> None:
    chunks = splitter.split_documents(_pages("hololens-restart-deck-ja.impress.pdf"))
    paths = _paths(chunks)
    # A section slide over the slides after it; a title alone is no sentence, 「します」 or not.
    assert ["デバイスを再起動します", "ハード再起動の手順"] in paths
    assert ["バッテリを確認する"] in paths
    hard = chunks[paths.index(["デバイスを再起動します", "ハード再起動の手順"])].page_content
    # The title no longer runs into the paragraph under it.
    assert "\n標準のリセット手順が機能しない場合は" in hard
    assert "ハード再起動の手順標準" not in hard


def test_a_procedure_over_two_slides_stays_one(splitter: ProcedureTextSplitter) -> None:
    """The second slide's title is the first's again, marked 「（続き）」: the list goes on."""
    chunks = splitter.split_documents(_pages("hololens-restart-deck-ja.impress.pdf"))
    paths = _paths(chunks)
    assert not [path for path in paths if any("続き" in heading for heading in path)]
    hard = chunks[paths.index(["デバイスを再起動します", "ハード再起動の手順"])]
    numbers = [step["number"] for step in read_metadata(hard.metadata)["steps"]]
    assert numbers[0] == "1."
    assert numbers[-2:] == ["3.", "4."]  # the second slide's steps, in the same list
    assert "ハード再起動の手順（続き）" not in hard.page_content
    assert "メモ: 可能であれば" in hard.page_content  # the second slide's note


def test_the_same_text_from_a_word_processor_keeps_the_text_rules(splitter: ProcedureTextSplitter) -> None:
    pages = _with_creator(_pages("hololens-restart-deck-ja.impress.pdf"), "Writer")
    paths = _paths(splitter.split_documents(pages))
    assert ["デバイスを再起動します", "ハード再起動の手順"] not in paths


def test_english_slide_titles_are_sections(splitter: ProcedureTextSplitter) -> None:
    paths = _paths(splitter.split_documents(_pages("hololens-recovery-en.impress.pdf")))
    assert ["CLEAN-REFLASH THE DEVICE", "Normal flashing procedure"] in paths
    # A title in capitals wrapped over two lines is one title (a section slide's, alone on it).
    assert ["TROUBLESHOOT ADVANCED RECOVERY COMPANION"] in paths
    assert ["DOWNLOAD ARC WITHOUT USING THE APP STORE"] in paths


def test_wrapped_japanese_titles_are_one_title(splitter: ProcedureTextSplitter) -> None:
    paths = _paths(splitter.split_documents(_pages("hololens-recovery-ja.impress.pdf")))
    headings = {heading for path in paths for heading in path}
    assert "HoloLens 2 を再起動、リセット、または回復する" in headings  # 「…また」「は回復する」
    assert "ADVANCED RECOVERY COMPANIONのトラブルシューティング" in headings  # 「…COMPANION」「のトラブル…」
    assert ["デバイスを再起動します", "標準の再起動手順"] in paths


def test_no_title_is_guessed_inside_a_slide(splitter: ProcedureTextSplitter) -> None:
    """A slide's narrow lines: the first line of a paragraph is no title over the rest."""
    paths = _paths(splitter.split_documents(_pages("hololens-recovery-ja.impress.pdf")))
    headings = {heading for path in paths for heading in path}
    for first_line in (
        "これらのアクセサリが使用できない場合は",
        "デバイスが正常に起動し、動作している場合は",
    ):
        assert not any(h.startswith(first_line) for h in headings), headings
    without = _paths(
        splitter.split_documents(_with_creator(_pages("hololens-recovery-ja.impress.pdf"), "Writer"))
    )
    assert any(h.startswith("これらのアクセサリが使用できない場合は") for path in without for h in path), (
        "the text rules took this line for a title; if they no longer do, this test checks nothing"
    )


def test_a_real_powerpoint_pdf(splitter: ProcedureTextSplitter) -> None:
    """The Exastro guide's first pages, with the ``creator`` the whole file has (the cut lost it)."""
    pages = PyPDFLoader(
        str(DATA / "real-docs" / "ja_exastro_ita-azure-setting-samples_install.pages-1-16.pdf")
    ).load()
    pages = _with_creator(pages, "Microsoft® PowerPoint® for Microsoft 365")
    chunks = splitter.split_documents(pages)
    paths = _paths(chunks)
    # The section slide 「1. はじめに」 titles its first subsection's slide, which follows it.
    assert ["Setting samples", "1. はじめに"] in paths
    assert ["Setting samples", "1.2 連携サービスとの動作確認"] in paths
    assert ["Setting samples", "2.1 ITAの準備"] in paths


def test_a_wrapped_title_printed_again_goes_on(splitter: ProcedureTextSplitter) -> None:
    """A title slide, then the same title on a section slide in capitals, wrapped over two lines.

    The first three pages, as ``PyPDFLoader`` gives them, of the HoloLens network page made into
    an Impress deck (``benchmarks/make_pdfs.py --variants impress-pdf``): the wrapped title is
    compared as it reads, its lines joined by a space, so it is the title slide's again.
    """
    meta = {"producer": "LibreOffice 7.4", "creator": "Impress", "source": "hololens-network.pdf"}
    texts = [
        "Connect HoloLens to a network",
        "CONNECT HOLOLENS TO A \nNETWORK",
        "T o do most things on your HoloLens, you have to be \nconnected to a network. HoloLens contains a \n"
        "802.11ac-capable, 2x2 Wi-Fi radio.",
    ]
    pages = [Document(page_content=t, metadata={**meta, "page": i}) for i, t in enumerate(texts)]
    (chunk,) = splitter.split_documents(pages)
    assert list(read_metadata(chunk.metadata)["section_path"]) == ["Connect HoloLens to a network"]
    assert "CONNECT HOLOLENS" not in chunk.page_content
    assert "connected to a network" in chunk.page_content

"""Framework documents are content, never paths; page documents of one file are one document.

Real loaders on real PDFs: LangChain's ``PyPDFLoader`` and LlamaIndex's
``SimpleDirectoryReader`` (its PDF reader lives in ``llama-index-readers-file``; where
that is not installed, documents with the metadata its ``PDFReader`` writes stand in).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from llama_index.core import Document as LlamaDocument
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.schema import BaseNode, NodeRelationship

from langchain_procedures import ProcedureTextSplitter
from llama_index_procedures import ProcedureNodeParser
from procedure_rag import ChunkLevel, read_metadata
from procedure_rag._readers.pdf_text import same_length_lookalikes

with warnings.catch_warnings():  # langchain-community announces its sunset on import
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.document_loaders import PyPDFLoader

DATA = Path(__file__).resolve().parent / "data"
PDFS = ("hololens-recovery-ja.pdf", "samsung-tv-17-19.pdf")


@pytest.fixture(scope="module")
def splitter() -> ProcedureTextSplitter:
    return ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400, add_start_index=True)


def _pages(path: Path) -> list[Document]:
    return PyPDFLoader(str(path)).load()


def _covered(spans: list[list[int]], starts: list[int]) -> list[int]:
    """The 1-based pages a chunk's spans touch, pages starting at ``starts`` of the joined text."""
    pages = set()
    for start, end in spans:
        first = max(i for i, s in enumerate(starts) if s <= start)
        last = max(i for i, s in enumerate(starts) if s <= max(end - 1, start))
        pages.update(range(first + 1, last + 2))
    return sorted(pages)


def _starts(texts: list[str]) -> list[int]:
    starts, offset = [], 0
    for text in texts:
        starts.append(offset)
        offset += len(text) + 1
    return starts


def _check_page_chunks(
    chunks: list[tuple[str, dict[str, Any]]],
    texts: list[str],
    *,
    offset_key: str,
    page_of: Callable[[int], str],
) -> None:
    """Every chunk's page, pages, page label and start offset agree with the page documents."""
    joined = "\f".join(texts)
    starts = _starts(texts)
    seen: set[int] = set()
    for _, flat in chunks:
        meta = read_metadata(flat)
        spans = meta["source_spans"]
        assert meta["pages"] == _covered(spans, starts)
        assert meta["page"] == meta["pages"][0]
        assert meta["page_label"] == page_of(meta["page"])  # the metadata of the page it starts on
        page_text = texts[meta["page"] - 1]
        start = meta[offset_key]
        assert page_text[start : start + 20] == joined[spans[0][0] : spans[0][0] + 20]
        seen.update(meta["pages"])
    assert seen == {i + 1 for i, text in enumerate(texts) if text.strip()}


@pytest.mark.parametrize("name", PDFS)
def test_pypdf_loader_one_line_swap(tests_data: Path, splitter: ProcedureTextSplitter, name: str) -> None:
    pages = _pages(tests_data / "pdf" / name)
    assert len(pages) > 1
    out = splitter.split_documents(pages)
    assert out
    _check_page_chunks(
        [(d.page_content, d.metadata) for d in out],
        [p.page_content for p in pages],
        offset_key="start_index",
        page_of=lambda page: pages[page - 1].metadata["page_label"],
    )
    # PyPDFLoader's own keys: the 0-based ``page`` becomes the 1-based page every reader gives.
    assert {d.metadata["source_id"] for d in out} == {str(tests_data / "pdf" / name)}
    assert out[0].metadata["total_pages"] == len(pages)


def test_transform_documents_reads_pages_alike(tests_data: Path, splitter: ProcedureTextSplitter) -> None:
    pages = _pages(tests_data / "pdf" / PDFS[0])
    split = splitter.split_documents(pages)
    transformed = list(splitter.transform_documents(pages))
    assert [(d.id, d.page_content, d.metadata) for d in transformed] == [
        (d.id, d.page_content, d.metadata) for d in split
    ]


def test_section_crossing_a_page_break_stays_whole(tests_data: Path, splitter: ProcedureTextSplitter) -> None:
    pages = _pages(tests_data / "pdf" / "hololens-recovery-ja.pdf")
    # Page 2 ends with the reset instruction; page 3 goes on with what the reset does.
    assert "の順に選択します" in pages[1].page_content
    assert "この方法でリセットすると" in pages[2].page_content
    (chunk,) = [d for d in splitter.split_documents(pages) if "の順に選択します" in d.page_content]
    assert "この方法でリセットすると" in chunk.page_content
    assert (chunk.metadata["page"], json.loads(chunk.metadata["pages"])) == (2, [2, 3])


def test_numbered_step_crossing_a_page_break_stays_whole(
    shared_data: Path, splitter: ProcedureTextSplitter
) -> None:
    pages = _pages(shared_data / "real-docs" / "ja_yamagata-u_sapphire_app-manual.pdf")
    # Step 2 of the mask procedure starts on page 11; its note goes on at the top of page 12.
    step, rest = "2. 画⾯に表⽰された画像上でウェルをひとつ枠取りをする", "何度でも囲い直すことが可能"
    assert step in pages[10].page_content
    assert rest in pages[11].page_content
    out = splitter.split_documents(pages)
    # The chunks read the look-alike glyphs (⽤) as the characters they stand for (用).
    step, rest = same_length_lookalikes(step), same_length_lookalikes(rest)
    (chunk,) = [d for d in out if step in d.page_content]
    assert rest in chunk.page_content
    assert json.loads(chunk.metadata["pages"]) == [11, 12]
    (crossing,) = [s for s in json.loads(chunk.metadata["steps"]) if s["number"] == "2."]
    assert "ウェルをひとつ枠取りをする" in crossing["action"]
    assert crossing["page"] == 11  # the PDF page it starts on, not a number printed on it
    with_text = {i + 1 for i, page in enumerate(pages) if page.page_content.strip()}
    assert {p for d in out for p in json.loads(d.metadata["pages"])} == with_text


@pytest.mark.parametrize("mode", ["page", "single"])
def test_a_glyph_without_a_character_is_not_binary(
    shared_data: Path, splitter: ProcedureTextSplitter, mode: str
) -> None:
    # pypdf gives NUL for the step numbers of page 9 of this manual: a glyph without a
    # character, shown as U+FFFD, one for one (PostgreSQL stores no NUL in text).
    docs = PyPDFLoader(
        str(shared_data / "real-docs" / "ja_yamagata-u_sapphire_app-manual.pdf"), mode=mode
    ).load()
    assert any("\x00" in d.page_content for d in docs)
    out = splitter.split_documents(docs)
    assert any("\ufffd. データセットを選択する" in d.page_content for d in out)
    assert not any("\x00" in d.page_content or "\x00" in json.dumps(d.metadata) for d in out)
    # The lines it opens are the steps of a numbered list whose numbers are lost.
    (listed,) = [d for d in out if "\ufffd. データセットを選択する" in d.page_content]
    steps = json.loads(listed.metadata["steps"])
    assert listed.metadata["chunk_type"] == "procedure"
    assert [s["number"] for s in steps] == ["\ufffd."] * 5
    assert steps[0]["action"].startswith("データセットを選択")


def test_nul_is_refused_outside_extracted_text(splitter: ProcedureTextSplitter) -> None:
    extracted = Document(
        page_content="Steps\n\x00. Open Settings.\n2. Select Reset.", metadata={"source": "m.pdf"}
    )
    assert "\ufffd. Open Settings." in splitter.split_documents([extracted])[0].page_content
    with pytest.raises(ValueError, match="input looks binary: NUL character at offset 6"):
        splitter.split_documents(
            [Document(page_content=extracted.page_content, metadata={"source": "m.txt"})]
        )


def test_a_metadata_path_is_never_opened(
    tests_data: Path, tmp_path: Path, splitter: ProcedureTextSplitter
) -> None:
    other = tmp_path / "manual.md"
    other.write_text("# Other\n\nTEXT OF THE FILE ON DISK\n", encoding="utf-8")
    content = "Resetting the TV\nTo reset the TV:\n1. Open Settings.\n2. Select Reset."
    for source in (other, tests_data / "pdf" / "samsung-tv-17-19.pdf"):
        (chunk,) = splitter.split_documents(
            [Document(page_content=content, metadata={"source": str(source)})]
        )
        assert "Open Settings." in chunk.page_content
        assert "TEXT OF THE FILE" not in chunk.page_content
        assert "Updating the TV" not in chunk.page_content
        assert chunk.metadata["step_count"] == 2
    # A file format named for a text means the text extracted from such a file.
    named = Document(page_content=content, metadata={"source_format": "pdf", "source": str(other)})
    (chunk,) = splitter.split_documents([named])
    assert chunk.metadata["step_count"] == 2


LIST_TEXT = "Resetting the TV\nTo reset the TV:\n1. Open Settings.\n2. Select General.\n3. Select Reset."
# Plain text whose heading lines Markdown and reST would run into one paragraph.
PLAIN_JA = (
    "第1章 準備\n1.1 電源の切り方\n"
    + "手順1 電源ボタンを押します。\n手順2 ケーブルを抜きます。\n手順3 1 分待ちます。"
)


@pytest.mark.parametrize(
    ("content", "source", "section_path"),
    [
        pytest.param(LIST_TEXT, "https://example.com/manual/reset.html", [], id="html-extracted"),
        pytest.param(
            PLAIN_JA,
            "https://example.com/manual/power.html",
            ["第1章 準備", "1.1 電源の切り方"],
            id="html-plain",
        ),
        pytest.param(PLAIN_JA, "manual/power.md", ["第1章 準備", "1.1 電源の切り方"], id="md-plain"),
        pytest.param(PLAIN_JA, "manual/power.rst", ["第1章 準備", "1.1 電源の切り方"], id="rst-plain"),
    ],
)
def test_a_markup_suffix_counts_only_for_markup(
    splitter: ProcedureTextSplitter, content: str, source: str, section_path: list[str]
) -> None:
    (chunk,) = splitter.split_documents([Document(page_content=content, metadata={"source": source})])
    meta = read_metadata(chunk.metadata)
    assert meta["section_path"] == section_path
    assert meta["steps"][0]["action"] in {"Open Settings.", "電源ボタンを押します。"}
    assert meta["step_count"] == 3


@pytest.mark.parametrize(
    ("content", "source", "expected"),
    [
        pytest.param(
            "<ol><li>Open Settings.</li><li>Select Reset.</li></ol>",
            "a.html",
            ["Open Settings.", "Select Reset."],
            id="html",
        ),
        pytest.param(
            "Reset\n=====\n\nTo reset:\n\n#. Open Settings.\n#. Select Reset.\n", "a.rst", ["Reset"], id="rst"
        ),
        pytest.param("# Reset\n\n1. Open Settings.\n2. Select Reset.\n", "a.md", ["Reset"], id="md"),
    ],
)
def test_markup_under_its_suffix_is_still_markup(
    splitter: ProcedureTextSplitter, content: str, source: str, expected: list[str]
) -> None:
    (chunk,) = splitter.split_documents([Document(page_content=content, metadata={"source": source})])
    meta = read_metadata(chunk.metadata)
    if source.endswith(".html"):
        assert [s["action"] for s in meta["steps"]] == expected
        assert "<li>" not in chunk.page_content
    else:
        assert meta["section_path"] == expected
        assert meta["step_count"] == 2


def test_one_markdown_sign_confirms_a_md_suffix(splitter: ProcedureTextSplitter) -> None:
    content = "see copyright page [ja](https://example.com/ja/c.html) [en](https://example.com/en/c.html)"
    (chunk,) = splitter.split_documents([Document(page_content=content, metadata={"source": "LICENSE.md"})])
    assert chunk.page_content == "see copyright page ja en"
    (plain,) = splitter.split_documents([Document(page_content=content, metadata={"source": "LICENSE.txt"})])
    assert "https://example.com/ja/c.html" in plain.page_content


@pytest.mark.parametrize("suffix", [".pdf", ".docx", ".xlsx", ".pptx", ".doc"])
def test_a_binary_suffix_means_extracted_text(splitter: ProcedureTextSplitter, suffix: str) -> None:
    # A page that opens with a shell comment: read as Markdown, it would be a heading.
    content = "# apt-get install agent\nInstalling the agent\nThen restart the service."
    (chunk,) = splitter.split_documents(
        [Document(page_content=content, metadata={"source": "guide" + suffix})]
    )
    meta = read_metadata(chunk.metadata)
    assert "apt-get install agent" not in " ".join(meta["section_path"])
    assert "# apt-get install agent" in chunk.page_content


# --- grouping rules: which documents are pages of one file, and how each loader counts ---


def _page_doc(source: str, text: str, **meta: Any) -> Document:
    return Document(page_content=text, metadata={"source": source, **meta})


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        pytest.param(
            [{"page": 0, "total_pages": 2}, {"page": 1, "total_pages": 2}], [1, 2], id="langchain-pdf"
        ),
        pytest.param([{"page": 1}, {"page": 2}], [1, 2], id="textract-1-based"),
        pytest.param([{"page_number": 3}, {"page_number": 4}], [3, 4], id="page-number"),
        pytest.param([{"page_label": "7"}, {"page_label": "8"}], [7, 8], id="numeric-labels"),
        pytest.param([{"page_label": "ii"}, {"page_label": "1"}], [1, 2], id="roman-labels-counted"),
    ],
)
def test_page_keys(splitter: ProcedureTextSplitter, keys: list[dict[str, Any]], expected: list[int]) -> None:
    texts = ["Reset\nTo reset the TV:\n1. Open Settings.", "2. Select Reset.\n3. Enter the PIN."]
    docs = [_page_doc("m.pdf", text, **k) for text, k in zip(texts, keys, strict=True)]
    (chunk,) = splitter.split_documents(docs)
    assert chunk.metadata["step_count"] == 3
    assert (chunk.metadata["page"], json.loads(chunk.metadata["pages"])) == (expected[0], expected)


@pytest.mark.parametrize(
    ("docs", "runs"),
    [
        pytest.param(
            [_page_doc("a.pdf", "Alpha one.", page=0), _page_doc("b.pdf", "Beta one.", page=1)],
            [["Alpha one."], ["Beta one."]],
            id="new-source",
        ),
        pytest.param(
            [_page_doc("a.pdf", "Alpha one.", page=1), _page_doc("a.pdf", "Alpha again.", page=1)],
            [["Alpha one."], ["Alpha again."]],
            id="page-repeats",
        ),
        pytest.param(
            [
                _page_doc("a.pdf", "Alpha one.", page_label="1"),
                _page_doc("a.pdf", "Alpha again.", page_label="1"),
            ],
            [["Alpha one."], ["Alpha again."]],
            id="label-repeats",
        ),
        pytest.param(
            [_page_doc("a.pdf", "Alpha one.", page=0), _page_doc("a.pdf", "Alpha label.", page_label="2")],
            [["Alpha one."], ["Alpha label."]],
            id="other-key",
        ),
    ],
)
def test_page_runs_end(splitter: ProcedureTextSplitter, docs: list[Document], runs: list[list[str]]) -> None:
    out = splitter.split_documents(docs)
    assert [[d.page_content.splitlines()[-1]] for d in out] == runs


def test_a_page_key_without_a_source_is_left_alone(splitter: ProcedureTextSplitter) -> None:
    # Two documents that say nothing of a file are not taken for pages of one.
    docs = [Document(page_content=text, metadata={"page": 7}) for text in ("Alpha one.", "Beta one.")]
    out = splitter.split_documents(docs)
    assert [d.page_content for d in out] == ["Alpha one.", "Beta one."]
    assert all("pages" not in d.metadata for d in out)


# --- LlamaIndex: SimpleDirectoryReader's one Document per page ---


def _simple_directory_reader(path: Path) -> list[LlamaDocument]:
    pytest.importorskip("llama_index.readers.file", reason="SimpleDirectoryReader reads PDFs with it")
    from llama_index.core import SimpleDirectoryReader  # noqa: PLC0415 - after the skip

    return SimpleDirectoryReader(input_files=[str(path)]).load_data()


def _pdf_reader_pages(path: Path) -> list[LlamaDocument]:
    """llama-index-readers-file's ``PDFReader`` used alone: ``page_label`` and ``file_name``, no path."""
    pytest.importorskip("llama_index.readers.file", reason="the PDF reader of LlamaIndex")
    from llama_index.readers.file import PDFReader  # noqa: PLC0415 - after the skip

    docs: list[LlamaDocument] = PDFReader().load_data(path)
    assert set(docs[0].metadata) == {"page_label", "file_name"}
    return docs


@pytest.fixture(
    params=[_simple_directory_reader, _pdf_reader_pages], ids=["SimpleDirectoryReader", "PDFReader"]
)
def llama_pages(request: pytest.FixtureRequest, tests_data: Path) -> list[LlamaDocument]:
    docs: list[LlamaDocument] = request.param(tests_data / "pdf" / "hololens-recovery-ja.pdf")
    return docs


def test_node_parser_reads_page_documents_as_one(llama_pages: list[LlamaDocument]) -> None:
    assert len(llama_pages) == 3
    nodes = ProcedureNodeParser(chunk_size=400).get_nodes_from_documents(llama_pages)
    children = [n for n in nodes if n.metadata["chunk_level"] == ChunkLevel.CHILD.value]
    by_id = {d.doc_id: i for i, d in enumerate(llama_pages)}
    texts = [d.text for d in llama_pages]
    joined, starts = "\f".join(texts), _starts(texts)
    for node in nodes:
        meta = read_metadata(node.metadata)
        source = node.relationships[NodeRelationship.SOURCE]
        assert by_id[source.node_id] == meta["page"] - 1  # SOURCE: the page the node starts on
        assert meta["pages"] == _covered(meta["source_spans"], starts)
        assert meta["page_label"] == llama_pages[meta["page"] - 1].metadata["page_label"]
        start = meta["source_spans"][0][0]
        assert node.start_char_idx is not None
        assert texts[meta["page"] - 1][node.start_char_idx :][:20] == joined[start : start + 20]
        if len(meta["pages"]) > 1:
            assert node.end_char_idx is None
    (crossing,) = [n for n in children if "の順に選択します" in n.get_content()]
    assert "この方法でリセットすると" in crossing.get_content()
    assert json.loads(crossing.metadata["pages"]) == [2, 3]


def test_ingestion_pipeline_reads_pages_alike(llama_pages: list[LlamaDocument]) -> None:
    parser = ProcedureNodeParser(chunk_size=400)
    direct: list[BaseNode] = parser.get_nodes_from_documents(llama_pages)
    piped = IngestionPipeline(transformations=[ProcedureNodeParser(chunk_size=400)]).run(
        documents=llama_pages
    )
    assert [(n.node_id, n.get_content(), n.metadata) for n in piped] == [
        (n.node_id, n.get_content(), n.metadata) for n in direct
    ]
    sources = {n.metadata["source_id"] for n in piped}
    if "file_path" in llama_pages[0].metadata:
        assert sources == {llama_pages[0].metadata["file_path"]}
    else:  # a bare file name groups the pages but names no source: two folders may hold one each
        (source,) = sources
        assert source != llama_pages[0].metadata["file_name"]


def test_pages_of_two_files_of_one_name_are_two_sources(tests_data: Path) -> None:
    # PDFReader used alone names a file by its bare name: manual.pdf from two folders.
    first = _pdf_reader_pages(tests_data / "pdf" / "hololens-recovery-ja.pdf")
    second = _pdf_reader_pages(tests_data / "pdf" / "hololens-recovery-en.chromium.pdf")
    for doc in [*first, *second]:
        doc.metadata["file_name"] = "manual.pdf"
    nodes = ProcedureNodeParser(chunk_size=400).get_nodes_from_documents([*first, *second])
    by_source: dict[str, set[str]] = {}
    for node in nodes:
        by_source.setdefault(node.metadata["source_id"], set()).add(node.metadata["language"])
    assert sorted(map(sorted, by_source.values())) == [["en"], ["ja"]]


def test_node_parser_reads_pdf_reader_pages_with_a_glyph_without_a_character(shared_data: Path) -> None:
    # LlamaIndex's PDFReader names the file by file_name alone; pypdf gives NUL for the step
    # numbers of page 9 of this manual. The pages are one text, and the NUL is no binary file.
    pages = _pdf_reader_pages(shared_data / "real-docs" / "ja_yamagata-u_sapphire_app-manual.pdf")
    assert any("\x00" in d.text for d in pages)
    nodes = ProcedureNodeParser(chunk_size=400).get_nodes_from_documents(pages)
    assert any("\ufffd. データセットを選択する" in n.get_content() for n in nodes)
    assert not any("\x00" in n.get_content() or "\x00" in json.dumps(n.metadata) for n in nodes)
    step = same_length_lookalikes("2. 画⾯に表⽰された画像上でウェルをひとつ枠取りをする")
    (crossing,) = [
        n for n in nodes if step in n.get_content() and n.metadata["chunk_level"] == ChunkLevel.CHILD.value
    ]
    assert same_length_lookalikes("何度でも囲い直すことが可能") in crossing.get_content()
    assert json.loads(crossing.metadata["pages"]) == [11, 12]


def test_both_adapters_combine_small_sections_of_page_texts_unless_told_not_to() -> None:
    # A PowerPoint-made manual through PyPDFLoader: numbered slide titles found in page text
    # (hint heading_from="text") open sections of a line or two, combined by default.
    pages = _pages(DATA / "real-docs" / "ja_exastro_ita-azure-setting-samples_install.pages-1-16.pdf")
    paths: dict[object, set[tuple[str, ...]]] = {}
    for combine in (None, False):
        splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400, combine_small_sections=combine)
        langchain = {
            tuple(read_metadata(d.metadata)["section_path"]) for d in splitter.split_documents(pages)
        }
        parser = ProcedureNodeParser(chunk_size=400, combine_small_sections=combine)
        nodes = parser.get_nodes_from_documents(
            [LlamaDocument(text=p.page_content, metadata=p.metadata) for p in pages]
        )
        llama = {tuple(read_metadata(n.metadata)["section_path"]) for n in nodes}
        assert langchain == llama
        paths[combine] = langchain
    apart = paths[False] - paths[None]  # sections that only stand alone when not combined
    assert ("Setting samples", "2.2 Azureモデルのインポート") in apart

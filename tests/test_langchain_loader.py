"""ProcedureLoader: real Word, Excel, PowerPoint and PDF files, against the core and Docx2txtLoader."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

from langchain_procedures import (
    OfflineEmbeddings,
    ProcedureLoader,
    ProcedureMultiVectorRetriever,
    ProcedureTextSplitter,
)
from procedure_rag import ChunkerOptions, ProcedureChunker, chunk_metadata, read_metadata

# Real files of tests/data, made by real tools (pandoc, LibreOffice, Chromium) or published as
# they are (the Osaka University manual, the NII and neos21 procedure sheets).
FILES = [
    "docx/hololens-recovery-en.docx",
    "docx/hololens-provisioning-ja.docx",
    "docx/ja_osaka-u_cf-libs_python-manual.docx",
    "xlsx/ja_neos21_sagyo-tejunsho-template.xlsx",
    "xlsx/en_nii-weko_file-download-implementation-procedure.xlsx",
    "pptx/hololens-recovery-en.pptx",
    "pdf/hololens-recovery-ja.chromium.pdf",
]


def _docx2txt(path: Path) -> list[Document]:
    with warnings.catch_warnings():  # langchain-community says it is being sunset
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_community.document_loaders import Docx2txtLoader  # noqa: PLC0415

    return Docx2txtLoader(str(path)).load()


@pytest.mark.parametrize("name", FILES)
def test_documents_are_the_cores_chunks_of_the_file(tests_data: Path, name: str) -> None:
    path = tests_data / name
    docs = ProcedureLoader(path).load()
    chunks = list(ProcedureChunker(ChunkerOptions(emit_parents=False)).iter_chunks_from_source(path))
    assert len(docs) == len(chunks) > 0
    for doc, chunk in zip(docs, chunks, strict=True):
        assert doc.id == chunk.chunk_id
        assert doc.page_content == chunk.text.strip()
        assert doc.metadata == chunk_metadata(chunk, {"source": str(path)})


def test_word_numbering_and_headings_that_docx2txt_loses_are_kept(tests_data: Path) -> None:
    # Word's automatic numbering is no text: Docx2txtLoader gives the steps without their numbers and
    # the headings as plain lines. The splitter takes instructions for steps again
    # (tests/test_unmarked_steps.py), but the sub-steps and the heading levels are gone; the
    # loader reads the numbering and the styles.
    path = tests_data / "docx/hololens-recovery-en.docx"
    ours = ProcedureLoader(path).load()
    swapped = ProcedureTextSplitter.from_tiktoken_encoder().split_documents(_docx2txt(path))
    assert 0 < sum(d.metadata["step_count"] for d in swapped) < sum(d.metadata["step_count"] for d in ours)
    assert sum(d.metadata["step_count"] for d in ours) >= 20
    restart = next(
        d for d in ours if read_metadata(d.metadata)["section_path"][-1:] == ["Restart the device"]
    )
    assert "Section: Restart, reset, or recover HoloLens 2 > Restart the device" in restart.page_content
    steps = [d for d in ours if d.metadata["chunk_type"] == "procedure"]
    numbers = [read_metadata(d.metadata)["step_numbers"] for d in steps]
    assert ["1", "2", "3", "4"] in numbers


def test_a_procedure_sheet_gives_its_columns_as_step_fields(tests_data: Path) -> None:
    docs = ProcedureLoader(tests_data / "xlsx/ja_neos21_sagyo-tejunsho-template.xlsx").load()
    steps = [s for d in docs for s in read_metadata(d.metadata)["steps"]]
    # The template's two work rows: the action column and the expected-result column, apart.
    assert [s["number"] for s in steps] == ["1", "2"]
    assert steps[0]["action"] == "スタートメニューより「コマンドプロンプト」を開く。"
    assert steps[0]["result"] == "・コマンドプロンプトが起動できること。"
    assert "SSH 接続できること" in steps[1]["result"]


def test_parents_and_options_come_from_the_splitter_given(tests_data: Path) -> None:
    path = tests_data / "pptx/hololens-recovery-en.pptx"
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=200, emit_parents=True)
    docs = ProcedureLoader(path, splitter=splitter).load()
    levels = {d.metadata["chunk_level"] for d in docs}
    assert levels == {"child", "parent"}
    children = [d for d in docs if d.metadata["chunk_level"] == "child"]
    assert len(children) > len(ProcedureLoader(path).load())  # a smaller budget: more children


def test_several_files_in_order_and_lazily(tests_data: Path, tmp_path: Path) -> None:
    first, second = tests_data / FILES[0], tests_data / FILES[5]
    docs = ProcedureLoader([first, str(second)]).load()
    sources = list(dict.fromkeys(d.metadata["source"] for d in docs))
    assert sources == [str(first), str(second)]
    # Lazily: the first file's chunks come out before the missing second file is opened.
    missing = tmp_path / "gone.docx"
    it = ProcedureLoader([first, missing]).lazy_load()
    assert next(it).metadata["source"] == str(first)
    with pytest.raises(FileNotFoundError, match=r"gone\.docx"):
        list(it)


def test_the_splitter_passes_the_loaders_chunks_through(tests_data: Path) -> None:
    # A pipeline that keeps its splitter line after the loader gets the same chunks, not chunks of chunks.
    docs = ProcedureLoader(tests_data / FILES[0]).load()
    plain = Document(
        page_content="# Reset\n\n1. Hold **Power**.\n2. Release it.\n", metadata={"source": "a.md"}
    )
    out = ProcedureTextSplitter.from_tiktoken_encoder().split_documents([*docs, plain])
    assert [(d.id, d.page_content, d.metadata) for d in out[: len(docs)]] == [
        (d.id, d.page_content, d.metadata) for d in docs
    ]
    rest = out[len(docs) :]
    assert len(rest) == 1
    assert rest[0].metadata["source"] == "a.md"
    assert rest[0].metadata["step_count"] == 2
    out[0].metadata["source"] = "changed"  # the metadata is a copy
    assert docs[0].metadata["source"] == str(tests_data / FILES[0])


def test_bad_input_is_refused_naming_it(tests_data: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.docx"
    broken.write_bytes(b"this is no zip")
    with pytest.raises(ValueError, match=r"broken\.docx is not an Office Open XML file"):
        ProcedureLoader(broken).load()
    with pytest.raises(ValueError, match="source_format must be 'auto' or one of"):
        ProcedureLoader(tests_data / FILES[0], source_format="word")
    with pytest.raises(TypeError, match="file_path must be a path or a list of paths, got int"):
        ProcedureLoader([tests_data / FILES[0], 3])  # type: ignore[list-item]
    assert isinstance(ProcedureLoader(tests_data / FILES[0]), BaseLoader)


def test_loaded_word_file_answers_through_the_retriever_on_real_chroma(
    tests_data: Path, tmp_path: Path
) -> None:
    # The loader's documents indexed as the splitter's are (real Chroma, the bundled model), and the
    # answer to a question about the Word file's procedure comes back with its numbered steps.
    path = tests_data / "docx/hololens-recovery-en.docx"
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        tmp_path / "index", embedding=OfflineEmbeddings(), k=3
    )
    retriever.add_documents(ProcedureLoader(path).load())
    hits = retriever.invoke("The standard restart did not work. Which buttons do I hold to force a restart?")
    top = read_metadata(hits[0].metadata)
    assert top["source"] == str(path)
    assert top["section_path"][-1] == "Hard-restart procedure"
    assert [s["step_number"] for s in top["steps"]][:2] == ["1", "2"]
    assert "volume down + power buttons" in hits[0].page_content

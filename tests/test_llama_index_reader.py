"""ProcedureReader in SimpleDirectoryReader, and ProcedureNodeParser passing its documents through."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
from llama_index.core.schema import MetadataMode, NodeRelationship, TextNode

from llama_index_procedures import OfflineEmbedding, ProcedureNodeParser, ProcedureReader
from procedure_rag import ChunkerOptions, ProcedureChunker, read_metadata

# Real files of tests/data made by real tools or published as they are.
FILES = [
    "docx/hololens-recovery-en.docx",
    "docx/ja_osaka-u_cf-libs_python-manual.docx",
    "xlsx/ja_neos21_sagyo-tejunsho-template.xlsx",
    "pptx/hololens-recovery-ja.pptx",
    "pdf/hololens-recovery-en.chromium.pdf",
]


def _extractors(reader: ProcedureReader) -> dict[str, ProcedureReader]:
    return dict.fromkeys((".docx", ".xlsx", ".pptx", ".pdf"), reader)


@pytest.mark.parametrize("name", FILES)
def test_simple_directory_reader_gives_the_cores_chunks(tests_data: Path, name: str) -> None:
    path = tests_data / name
    reader = SimpleDirectoryReader(input_files=[path], file_extractor=_extractors(ProcedureReader()))
    docs = reader.load_data()
    chunks = list(ProcedureChunker(ChunkerOptions(emit_parents=False)).iter_chunks_from_source(path))
    assert [(d.id_, d.text) for d in docs] == [(c.chunk_id, c.text) for c in chunks]
    assert all(d.metadata["file_name"] == path.name and d.metadata["source_id"] == str(path) for d in docs)
    # Our keys stay out of what is embedded, as with the parser's own nodes: the text opens with the path.
    embedded = docs[0].get_content(metadata_mode=MetadataMode.EMBED)
    assert "chunk_id" not in embedded
    assert "steps" not in embedded.split("\n\n")[0]


def test_word_steps_that_the_default_docx_reader_loses_are_kept(tests_data: Path) -> None:
    path = tests_data / "docx/hololens-recovery-en.docx"
    parser = ProcedureNodeParser()
    default = parser.get_nodes_from_documents(SimpleDirectoryReader(input_files=[path]).load_data())
    ours = parser.get_nodes_from_documents(ProcedureReader().load_data(path))
    # docx2txt drops the list numbers: the parser takes instructions for steps again
    # (tests/test_unmarked_steps.py), not their nesting; the reader reads Word's numbering.
    found = sum(n.metadata["step_count"] for n in default)
    assert 0 < found < sum(n.metadata["step_count"] for n in ours)
    assert sum(n.metadata["step_count"] for n in ours) >= 20
    hard = next(n for n in ours if read_metadata(n.metadata)["section_path"][-1] == "Hard-restart procedure")
    assert [s["step_number"] for s in read_metadata(hard.metadata)["steps"]][:3] == ["1", "2", "3"]


def test_the_parser_passes_them_through_with_parents_and_children_linked(tests_data: Path) -> None:
    path = tests_data / "docx/hololens-recovery-en.docx"
    parser = ProcedureNodeParser(emit_parents=True)
    docs = ProcedureReader(parser=parser).load_data(path)
    nodes = parser.get_nodes_from_documents(docs)
    assert [(n.node_id, n.get_content()) for n in nodes] == [(d.id_, d.text) for d in docs]
    by_id = {n.node_id: n for n in nodes}
    parents = [n for n in nodes if n.metadata["chunk_level"] == "parent"]
    children = [n for n in nodes if n.metadata["chunk_level"] == "child"]
    assert parents
    assert children
    for child in children:
        link = child.relationships[NodeRelationship.PARENT]
        assert link.node_id == child.metadata["parent_id"]
        assert child.node_id in [c.node_id for c in by_id[link.node_id].child_nodes or []]
    assert all(n.relationships[NodeRelationship.SOURCE].node_id == n.node_id for n in nodes)
    # The nodes as the parser makes them from text give the same tree.
    assert {n.node_id: n.metadata["parent_id"] for n in children} == {
        d.id_: d.metadata["parent_id"] for d in docs if d.metadata["chunk_level"] == "child"
    }


def test_a_mixed_list_chunks_only_what_is_not_chunked_yet(tests_data: Path) -> None:
    from llama_index.core import Document  # noqa: PLC0415

    docs = ProcedureReader().load_data(tests_data / FILES[2])
    plain = Document(text="# Reset\n\n1. Hold **Power**.\n2. Release it.\n", metadata={"source": "a.md"})
    nodes = ProcedureNodeParser().get_nodes_from_documents([*docs, plain])
    assert [n.node_id for n in nodes[: len(docs)]] == [d.id_ for d in docs]
    rest = nodes[len(docs) :]
    assert [n.metadata["step_count"] for n in rest] == [2]


def test_bad_input_is_refused_naming_it(tests_data: Path, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"gone\.pptx"):
        ProcedureReader().load_data(tmp_path / "gone.pptx")
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"not a zip at all")
    with pytest.raises(ValueError, match=r"broken\.xlsx is not an Office Open XML file"):
        ProcedureReader().load_data(broken)
    with pytest.raises(ValueError, match="source_format must be 'auto' or one of"):
        ProcedureReader(source_format="excel")
    with pytest.raises(ValueError, match="reads local files only"):
        ProcedureReader().load_data(tests_data / FILES[0], fs=object())


def test_a_vector_index_of_the_nodes_answers_from_the_word_file(tests_data: Path) -> None:
    path = tests_data / "docx/hololens-recovery-en.docx"
    nodes = ProcedureNodeParser().get_nodes_from_documents(ProcedureReader().load_data(path))
    index = VectorStoreIndex(nodes, embed_model=OfflineEmbedding())
    hits = index.as_retriever(similarity_top_k=3).retrieve(
        "The standard restart did not work. Which buttons do I hold to force a restart?"
    )
    top = hits[0].node
    assert isinstance(top, TextNode)
    assert read_metadata(top.metadata)["section_path"][-1] == "Hard-restart procedure"
    assert "volume down + power buttons" in top.get_content()

"""Chunk offsets as LangChain and LlamaIndex mean them, on real pages (issue 18).

LangChain's splitters promise ``text[start_index:start_index + len(chunk)] == chunk``
(``add_start_index=True``); LlamaIndex's parsers, ``text[start_char_idx:end_char_idx] ==
node.text``. Both adapters keep that promise with ``text_mode="source"`` (the chunk's
text is the exact source slice), where the recursive splitter keeps it too; with the
rendered text (section path and lead-in first, steps renumbered) the offset is that of
the first source character the chunk covers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter
from llama_index.core import Document as LlamaDocument
from llama_index.core.schema import MetadataMode
from pydantic import ValidationError

from langchain_procedures import ProcedureTextSplitter
from llama_index_procedures import ProcedureNodeParser
from procedure_rag import read_metadata

DATA = Path(__file__).parent / "data"
PAGES = [
    DATA / "hololens" / "en" / "hololens-recovery.md",
    DATA / "hololens" / "en" / "hololens-network.md",
    DATA / "hololens" / "ja" / "hololens-recovery.md",
    *sorted((DATA / "ja-native" / "growi-docs").rglob("*.md"))[:3],
    *sorted((DATA / "emanual").rglob("*.txt"))[:1],
]


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", PAGES, ids=lambda p: "/".join(p.parts[-2:]))
@pytest.mark.parametrize("strip", [True, False])
def test_langchain_start_index_locates_each_chunk_in_source_mode(path: Path, strip: bool) -> None:
    text = _read(path)
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(
        chunk_size=300, add_start_index=True, text_mode="source", emit_parents=True, strip_whitespace=strip
    )
    docs = splitter.split_documents([Document(text, metadata={"source": path.name})])
    assert len(docs) > 3
    for doc in docs:
        start = doc.metadata["start_index"]
        assert text[start : start + len(doc.page_content)] == doc.page_content, doc.metadata["chunk_id"]
    # The section path is in the metadata.
    assert all(d.metadata["section"] for d in docs if d.metadata["chunk_type"] == "procedure")
    assert splitter.split_text(text) == [d.page_content for d in docs]
    # The same promise LangChain's recursive splitter keeps on the same page.
    recursive = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=0, add_start_index=True)
    for doc in recursive.create_documents([text]):
        start = doc.metadata["start_index"]
        assert text[start : start + len(doc.page_content)] == doc.page_content


@pytest.mark.parametrize("path", PAGES[:3], ids=lambda p: "/".join(p.parts[-2:]))
def test_langchain_start_index_in_rendered_mode_is_the_first_source_character(path: Path) -> None:
    text = _read(path)
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=300, add_start_index=True)
    docs = splitter.split_documents([Document(text, metadata={"source": path.name})])
    for doc in docs:
        assert doc.metadata["start_index"] == read_metadata(doc.metadata)["source_spans"][0][0]
    # Rendered text is not a slice of the source: it opens with the section path.
    assert any(d.page_content not in text for d in docs)


def test_langchain_page_documents_offsets_point_into_the_page() -> None:
    text = _read(PAGES[0])
    cut = text.index("\n## ", len(text) // 2)
    pages = [
        Document(part, metadata={"source": "recovery.pdf", "page": i, "total_pages": 2})
        for i, part in enumerate([text[:cut], text[cut:]])
    ]
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(
        chunk_size=200, add_start_index=True, text_mode="source"
    )
    docs = splitter.split_documents(pages)
    within = [d for d in docs if "\f" not in d.page_content]
    assert {d.metadata["page"] for d in within} == {1, 2}
    for doc in within:
        page = pages[doc.metadata["page"] - 1].page_content
        start = doc.metadata["start_index"]
        assert page[start : start + len(doc.page_content)] == doc.page_content


@pytest.mark.parametrize("path", PAGES, ids=lambda p: "/".join(p.parts[-2:]))
def test_llama_index_char_indexes_locate_each_node_in_source_mode(path: Path) -> None:
    text = _read(path)
    parser = ProcedureNodeParser(chunk_size=300, text_mode="source", emit_parents=True)
    nodes = parser.get_nodes_from_documents([LlamaDocument(text=text, metadata={"source": path.name})])
    assert {n.metadata["chunk_level"] for n in nodes} == {"child", "parent"}
    for node in nodes:
        assert node.start_char_idx is not None
        assert node.end_char_idx is not None
        assert text[node.start_char_idx : node.end_char_idx] == node.text, node.node_id
    # The heading path reaches the embedding as metadata.
    headed = next(n for n in nodes if n.metadata["section"])
    assert f"section: {headed.metadata['section']}" in headed.get_content(metadata_mode=MetadataMode.EMBED)


def test_llama_index_rendered_indexes_bound_the_source_covered() -> None:
    text = _read(PAGES[0])
    nodes = ProcedureNodeParser(chunk_size=300, emit_parents=True).get_nodes_from_documents(
        [LlamaDocument(text=text)]
    )
    for node in nodes:
        spans = read_metadata(node.metadata)["source_spans"]
        assert (node.start_char_idx, node.end_char_idx) == (spans[0][0], spans[-1][1])


def test_text_mode_is_checked() -> None:
    with pytest.raises(ValueError, match=r"^text_mode must be 'rendered' or 'source', got 'verbatim'$"):
        ProcedureTextSplitter(text_mode="verbatim")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="text_mode"):
        ProcedureNodeParser(text_mode="verbatim")

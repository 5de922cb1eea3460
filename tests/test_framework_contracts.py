"""The frameworks' own contracts, kept by both adapters (issue 18).

Each test says what a LangChain or LlamaIndex user relies on, in that framework's terms:
filters in either of the forms the stores take, unknown keyword arguments refused, ids
unique per document position, retrievers that close in a ``with`` block and say why they
cannot be pickled.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import chromadb
import pytest
from langchain_chroma import Chroma
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core import Document as LlamaDocument
from llama_index.core.ingestion import IngestionCache, IngestionPipeline
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters
from pydantic import ValidationError

import langchain_procedures
import llama_index_procedures
from langchain_procedures import OfflineEmbeddings, ProcedureTextSplitter
from langchain_procedures._docstore import ProcedureDocStore
from llama_index_procedures import OfflineEmbedding, ProcedureNodeParser

EN, JA = "en/restart.md", "ja/restart.md"
QUESTION = "How do I hard-restart the headset?"
#: Two short manuals (small, so that each test indexes in a second or two).
MANUALS = {
    EN: """# Restart the headset

## Hard-restart

If the headset stops responding, hard-restart it.

1. Press and hold the Power button for 15 seconds.
2. Release the button when the lights turn off.
3. Press the Power button again to start the headset.

## Reset to factory settings

1. Open Settings.
2. Select Update & Security, then Recovery.
3. Select Reset this device.

> Note: resetting removes every app and account.

## Charge the battery

1. Connect the USB-C cable.
2. Wait until the lights show a full battery.
""",
    JA: """# ヘッドセットの再起動

## ハード再起動

ヘッドセットが応答しない場合は、ハード再起動します。

1. 電源ボタンを 15 秒間長押しします。
2. ライトが消えたらボタンを離します。
3. もう一度電源ボタンを押してヘッドセットを起動します。

## 初期状態に戻す

1. 設定を開きます。
2. 更新とセキュリティ、回復の順に選択します。
3. このデバイスをリセットするを選択します。
""",
}


def _text(name: str) -> str:
    return MANUALS[name]


@cache
def _embeddings() -> OfflineEmbeddings:
    return OfflineEmbeddings()


@cache
def _embedding() -> OfflineEmbedding:
    return OfflineEmbedding()


@cache
def _lc_chunks() -> tuple[Document, ...]:
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=60)
    docs = [Document(page_content=_text(name), metadata={"source": name}) for name in (EN, JA)]
    return tuple(splitter.split_documents(docs))


# -- 1. filters: a dict and a callable, on Chroma and on the in-memory store ----------


def _in_memory(_: Path) -> langchain_procedures.ProcedureMultiVectorRetriever:
    return langchain_procedures.ProcedureMultiVectorRetriever(
        vectorstore=InMemoryVectorStore(_embeddings()), docstore=ProcedureDocStore(), k=3
    )


def _plain_chroma(path: Path) -> langchain_procedures.ProcedureMultiVectorRetriever:
    client = chromadb.PersistentClient(path=str(path / "plain"))
    vectorstore = Chroma(client=client, collection_name="plain", embedding_function=_embeddings())
    return langchain_procedures.ProcedureMultiVectorRetriever(
        vectorstore=vectorstore, docstore=ProcedureDocStore(), k=3
    )


def _layout(path: Path) -> langchain_procedures.ProcedureMultiVectorRetriever:
    return langchain_procedures.ProcedureMultiVectorRetriever.from_persist_directory(
        path / "layout", embedding=_embeddings(), k=3
    )


def _only_en(document: Document) -> bool:
    return bool(document.metadata["source"] == EN)


@pytest.mark.parametrize("store", [_in_memory, _plain_chroma, _layout], ids=["in-memory", "chroma", "layout"])
@pytest.mark.parametrize("where", [{"source": EN}, _only_en], ids=["dict", "callable"])
def test_langchain_filter_as_dict_or_callable(
    tmp_path: Path,
    store: Callable[[Path], langchain_procedures.ProcedureMultiVectorRetriever],
    where: dict[str, str] | Callable[[Document], bool],
) -> None:
    retriever = store(tmp_path)
    retriever.add_documents(list(_lc_chunks()))

    per_call = retriever.invoke(QUESTION, filter=where)
    retriever.search_kwargs = {"filter": where}
    configured = retriever.invoke(QUESTION)

    assert len(per_call) == 3
    assert {hit.metadata["source"] for hit in per_call} == {EN}
    assert [hit.id for hit in configured] == [hit.id for hit in per_call]
    retriever.close()


def test_langchain_dict_and_callable_filters_agree_where_the_store_scores(tmp_path: Path) -> None:
    retriever = _plain_chroma(tmp_path)
    retriever.add_documents(list(_lc_chunks()))

    as_dict = retriever.invoke(QUESTION, filter={"source": EN})
    as_callable = retriever.invoke(QUESTION, filter=_only_en)

    assert [hit.id for hit in as_callable] == [hit.id for hit in as_dict]
    assert [hit.metadata["score"] for hit in as_callable] == pytest.approx(
        [hit.metadata["score"] for hit in as_dict]
    )


def test_langchain_operator_dict_on_the_in_memory_store_says_what_to_pass(tmp_path: Path) -> None:
    retriever = _in_memory(tmp_path)
    retriever.add_documents(list(_lc_chunks()))
    with pytest.raises(ValueError, match=r"only ask equality of metadata keys, got '\$and'"):
        retriever.invoke(QUESTION, filter={"$and": [{"source": EN}]})


def _llama_nodes() -> list[Any]:
    docs = [LlamaDocument(text=_text(name), metadata={"source": name}) for name in (EN, JA)]
    return ProcedureNodeParser(chunk_size=60, emit_parents=False).get_nodes_from_documents(docs)


@pytest.mark.parametrize("chroma", [False, True], ids=["simple", "chroma"])
def test_llama_index_metadata_filters_on_simple_and_chroma(tmp_path: Path, chroma: bool) -> None:
    only_en = MetadataFilters(filters=[MetadataFilter(key="source", value=EN)])
    options: dict[str, Any] = {"embed_model": _embedding(), "k": 3, "filters": only_en}
    if chroma:
        retriever = llama_index_procedures.ProcedureMultiVectorRetriever.from_persist_directory(
            tmp_path, **options
        )
    else:
        retriever = llama_index_procedures.ProcedureMultiVectorRetriever(
            vector_store=SimpleVectorStore(), **options
        )
    with retriever:
        retriever.add_nodes(_llama_nodes())
        hits = retriever.retrieve(QUESTION)

    assert len(hits) == 3
    assert {hit.node.metadata["source"] for hit in hits} == {EN}


# -- 2. unknown keyword arguments raise, as with pydantic's extra="forbid" ------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: ProcedureNodeParser(chunk_sizee=300),
        lambda: ProcedureNodeParser.from_dict({**ProcedureNodeParser().to_dict(), "chunk_sizee": 300}),
        lambda: ProcedureNodeParser.from_json(json.dumps({"chunk_sizee": 300})),
    ],
    ids=["constructor", "from_dict", "from_json"],
)
def test_llama_index_node_parser_refuses_an_unknown_argument(build: Callable[[], object]) -> None:
    with pytest.raises(
        ValidationError, match=r"unknown argument 'chunk_sizee' \(did you mean 'chunk_size'\?\)"
    ):
        build()


def test_llama_index_node_parser_still_builds_through_the_framework_paths(tmp_path: Path) -> None:
    """from_dict/to_dict, JSON, pickling and IngestionPipeline's cache (it hashes to_dict())."""
    parser = ProcedureNodeParser(chunk_size=60, emit_parents=False)
    data = parser.to_dict()

    assert ProcedureNodeParser.from_dict(data).to_dict() == data
    assert ProcedureNodeParser.from_json(parser.to_json()).to_dict() == data
    assert pickle.loads(pickle.dumps(parser)).to_dict() == data  # noqa: S301 - our own bytes
    cache = IngestionCache()
    docs = [LlamaDocument(text=_text(EN), doc_id="en")]
    first = IngestionPipeline(transformations=[parser], cache=cache).run(documents=docs)
    again = IngestionPipeline(transformations=[ProcedureNodeParser.from_dict(data)], cache=cache).run(
        documents=docs
    )
    assert [node.node_id for node in again] == [node.node_id for node in first]


def _misspelt_by_constructor(_: Path) -> object:
    return langchain_procedures.ProcedureMultiVectorRetriever(
        vectorstore=InMemoryVectorStore(_embeddings()), kk=3
    )


def _misspelt_by_factory(path: Path) -> object:
    return langchain_procedures.ProcedureMultiVectorRetriever.from_persist_directory(
        path, embedding=_embeddings(), kk=3
    )


@pytest.mark.parametrize(
    "build", [_misspelt_by_constructor, _misspelt_by_factory], ids=["constructor", "factory"]
)
def test_langchain_retriever_refuses_an_unknown_field(
    tmp_path: Path, build: Callable[[Path], object]
) -> None:
    with pytest.raises(ValidationError, match=r"kk\n  Extra inputs are not permitted"):
        build(tmp_path)


# -- 3. ids unique per document position, stable across runs -------------------------


def _twins() -> list[Document]:
    """Two identical texts and no ``source``, and a third text between them."""
    return [
        Document(page_content=_text(EN)),
        Document(page_content=_text(JA)),
        Document(page_content=_text(EN)),
    ]


def test_langchain_identical_texts_without_source_get_their_own_ids_in_chroma(tmp_path: Path) -> None:
    splitter = ProcedureTextSplitter(chunk_size=200)
    chunks = splitter.split_documents(_twins())
    ids = [chunk.id for chunk in chunks]
    client = chromadb.PersistentClient(path=str(tmp_path))
    store = Chroma(client=client, collection_name="twins", embedding_function=_embeddings())

    added = store.add_documents(chunks)

    assert len(set(ids)) == len(ids)
    assert added == ids
    assert [chunk.id for chunk in splitter.split_documents(_twins())] == ids  # stable across runs
    alone = splitter.split_documents(_twins()[:1])
    assert ids[: len(alone)] == [chunk.id for chunk in alone]  # the first keeps the ids it had


def test_llama_index_identical_texts_without_source_get_their_own_node_ids() -> None:
    parser = ProcedureNodeParser(chunk_size=60)
    docs = [LlamaDocument(text=doc.page_content) for doc in _twins()]
    nodes = parser.get_nodes_from_documents(docs)
    ids = [node.node_id for node in nodes]

    SimpleDocumentStore().add_documents(nodes, allow_update=False)  # raises on a repeated id

    assert len(set(ids)) == len(ids)
    again = [LlamaDocument(text=doc.page_content) for doc in _twins()]  # new random doc ids
    assert [node.node_id for node in parser.get_nodes_from_documents(again)] == ids


# -- 4. retrievers close in a with block, and say why they cannot be pickled ----------


def test_langchain_retriever_is_a_context_manager_that_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[object] = []
    cls = langchain_procedures.ProcedureMultiVectorRetriever

    def spy(self: object) -> None:
        closed.append(self)

    monkeypatch.setattr(cls, "close", spy)
    with cls.from_persist_directory(tmp_path, embedding=_embeddings()) as retriever:
        assert isinstance(retriever, cls)
    assert closed == [retriever]


def test_llama_index_retriever_is_a_context_manager_that_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[object] = []
    cls = llama_index_procedures.ProcedureMultiVectorRetriever

    def spy(self: object) -> None:
        closed.append(self)

    monkeypatch.setattr(cls, "close", spy)
    with cls.from_persist_directory(tmp_path, embed_model=_embedding()) as retriever:
        assert isinstance(retriever, cls)
    assert closed == [retriever]


def test_a_closed_retriever_releases_the_folder(tmp_path: Path) -> None:
    """After the with block, another retriever of the folder sees what the first wrote."""
    with langchain_procedures.ProcedureMultiVectorRetriever.from_persist_directory(
        tmp_path, embedding=_embeddings()
    ) as writer:
        writer.add_documents(list(_lc_chunks()))
    with llama_index_procedures.ProcedureMultiVectorRetriever.from_persist_directory(
        tmp_path, embed_model=_embedding(), k=2
    ) as reader:
        assert len(reader.retrieve(QUESTION)) == 2


def test_langchain_retriever_pickling_names_what_cannot_be_pickled(tmp_path: Path) -> None:
    with (
        langchain_procedures.ProcedureMultiVectorRetriever.from_persist_directory(
            tmp_path, embedding=_embeddings()
        ) as retriever,
        pytest.raises(
            TypeError,
            match=r"cannot be pickled: it holds open stores \(vectorstore Chroma, docstore ProcedureDocStore",
        ),
    ):
        pickle.dumps(retriever)


def test_llama_index_retriever_pickling_names_what_cannot_be_pickled() -> None:
    retriever = llama_index_procedures.ProcedureMultiVectorRetriever(
        vector_store=SimpleVectorStore(), embed_model=_embedding()
    )
    with pytest.raises(
        TypeError,
        match=r"cannot be pickled: it holds open stores \(vector store SimpleVectorStore, docstore Chunk",
    ):
        pickle.dumps(retriever)


def test_llama_index_retriever_options_serialise_and_build_the_same_retriever() -> None:
    only_en = MetadataFilters(filters=[MetadataFilter(key="source", value=EN)])
    retriever = llama_index_procedures.ProcedureMultiVectorRetriever(
        vector_store=SimpleVectorStore(),
        embed_model=_embedding(),
        k=3,
        kinds=["raw", "question"],
        filters=only_en,
    )
    data = json.loads(retriever.to_json())

    assert data == retriever.to_dict()
    assert data["class_name"] == "ProcedureMultiVectorRetriever"
    options = {key: value for key, value in data.items() if key != "class_name"}
    options["filters"] = MetadataFilters.model_validate(options["filters"])
    again = llama_index_procedures.ProcedureMultiVectorRetriever(
        vector_store=SimpleVectorStore(), embed_model=_embedding(), **options
    )
    assert again.to_dict() == data
    assert again.options == retriever.options

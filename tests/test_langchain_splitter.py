"""ProcedureTextSplitter against real LangChain objects, real Chroma and real manuals."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings
from langchain_classic.retrievers import ParentDocumentRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import RunnableLambda
from langchain_core.stores import InMemoryStore
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import TextSplitter

from langchain_procedures import ProcedureTextSplitter
from procedure_rag import STRUCTURAL_KEYS, ChunkerOptions, ProcedureChunker, read_metadata
from procedure_rag._chunking.lengths import OrdinaryFirst, llama_index_tiktoken_cache, tiktoken_length
from procedure_rag._metadata import OPTIONAL_KEYS

LANGUAGES = ("en", "ja")

# Real manuals, as (path under tests/data, source format, language). The HoloLens page
# is read both as Markdown and as plain text; the E-Manual sections are PDF-extracted text.
CASES = [
    pytest.param("hololens/en/hololens-recovery.md", "markdown", "en", id="markdown-en"),
    pytest.param("hololens/ja/hololens-recovery.md", "markdown", "ja", id="markdown-ja"),
    pytest.param("hololens/en/hololens-recovery.md", "text", "en", id="text-en"),
    pytest.param("hololens/ja/hololens-recovery.md", "text", "ja", id="text-ja"),
    pytest.param("emanual/samsung-tv-sections-10-28.txt", "text", "en", id="text-en-emanual"),
]


def _page(lang: str) -> str:
    return f"hololens/{lang}/hololens-recovery.md"


@pytest.fixture(scope="module")
def load(tests_data: Path) -> Callable[[str], Document]:
    """Read a file of tests/data as a Document whose ``source`` is its path there."""

    def read(path: str) -> Document:
        text = (tests_data / path).read_text(encoding="utf-8")
        return Document(page_content=text, metadata={"source": path, "owner": "tests"})

    return read


@pytest.fixture(scope="module")
def pages(load: Callable[[str], Document]) -> list[Document]:
    """The HoloLens recovery page, English then Japanese."""
    return [load(_page(lang)) for lang in LANGUAGES]


def _by_level(docs: list[Document], level: str) -> list[Document]:
    return [d for d in docs if d.metadata["chunk_level"] == level]


@pytest.mark.parametrize("strip_whitespace", [True, False])
@pytest.mark.parametrize(("path", "source_format", "lang"), CASES)
def test_split_text_is_the_core_chunk_texts(
    load: Callable[[str], Document], path: str, source_format: str, lang: str, strip_whitespace: bool
) -> None:
    text = load(path).page_content
    splitter = ProcedureTextSplitter(
        chunk_size=300, source_format=source_format, language=lang, strip_whitespace=strip_whitespace
    )
    options = ChunkerOptions(
        chunk_size=300, length_function=len, source_format=source_format, language=lang, emit_parents=False
    )
    core = [c.text for c in ProcedureChunker(options).iter_chunks(text)]
    texts = splitter.split_text(text)
    assert len(texts) > 3
    assert texts == ([t.strip() for t in core] if strip_whitespace else core)


@pytest.mark.parametrize(("path", "source_format", "lang"), CASES)
def test_split_documents_metadata_round_trip(
    load: Callable[[str], Document], path: str, source_format: str, lang: str
) -> None:
    docs = ProcedureTextSplitter(source_format=source_format).split_documents([load(path)])
    assert docs
    assert len({d.id for d in docs}) == len(docs)
    assert any(d.metadata["step_count"] > 0 for d in docs)
    for doc in docs:
        meta = doc.metadata
        assert doc.id == meta["chunk_id"]
        assert (meta["source"], meta["owner"], meta["source_id"]) == (path, "tests", path)
        assert (meta["language"], meta["chunk_level"]) == (lang, "child")
        assert "start_index" not in meta
        assert set(STRUCTURAL_KEYS) - set(OPTIONAL_KEYS) <= set(meta)
        # Scalars only, so that Chroma and other stores take the metadata as it is.
        assert all(isinstance(v, str | int | float | bool) for v in meta.values()), meta
        decoded = read_metadata(meta)
        assert " > ".join(decoded["section_path"]) == meta["section"]
        assert len(decoded["steps"]) == meta["step_count"]
        assert decoded["child_ids"] == []


def test_document_metadata_is_deep_copied_as_it_is(load: Callable[[str], Document]) -> None:
    page = load(_page("en"))
    page.metadata["tags"] = ["manual"]
    docs = ProcedureTextSplitter().split_documents([page])
    page.metadata["tags"].append("changed")
    # As LangChain's splitters copy it: the list as it was when split, one copy per chunk.
    assert [d.metadata["tags"] for d in docs[:2]] == [["manual"], ["manual"]]
    assert docs[0].metadata["tags"] is not docs[1].metadata["tags"]


def test_ids_are_stable_and_depend_on_source(pages: list[Document]) -> None:
    splitter = ProcedureTextSplitter()
    text = pages[0].page_content
    named = [splitter.split_documents([Document(page_content=text, metadata={"source": s})]) for s in "ab"]
    # Without a "source" key the core derives the source id from the text.
    anonymous = [splitter.create_documents([text]) for _ in range(2)]
    ids = [[d.id for d in docs] for docs in (*named, *anonymous)]
    assert ids[0] == [
        d.id for d in splitter.split_documents([Document(page_content=text, metadata={"source": "a"})])
    ]
    assert ids[2] == ids[3]
    assert len({i for run in ids[:3] for i in run}) == 3 * len(ids[0])
    assert len({d.metadata["source_id"] for d in anonymous[0]}) == 1
    assert [d.page_content for d in anonymous[0]] == [d.page_content for d in named[0]]


@pytest.mark.parametrize("text", ["", "  \n\t\n"])
def test_blank_text_gives_nothing(text: str) -> None:
    splitter = ProcedureTextSplitter()
    assert splitter.split_text(text) == []
    assert splitter.create_documents([text]) == []


def test_create_documents_rejects_uneven_metadatas() -> None:
    with pytest.raises(ValueError, match=r"^got 1 metadatas for 2 texts$"):
        ProcedureTextSplitter().create_documents(["a", "b"], metadatas=[{}])


def test_chroma_takes_metadata_as_is(pages: list[Document], tmp_path: Path) -> None:
    docs = ProcedureTextSplitter(add_start_index=True, emit_parents=True).split_documents(pages)
    client = chromadb.PersistentClient(path=str(tmp_path), settings=Settings(anonymized_telemetry=False))
    # No embedding function: Chroma's default one downloads a model. Embeddings are given explicitly.
    collection = client.create_collection("chunks", embedding_function=None)
    embed = DeterministicFakeEmbedding(size=16)
    collection.add(
        ids=[str(d.id) for d in docs],
        documents=[d.page_content for d in docs],
        metadatas=[d.metadata for d in docs],
        embeddings=embed.embed_documents([d.page_content for d in docs]),
    )
    stored = collection.get(
        where={"$and": [{"language": "ja"}, {"chunk_level": "child"}]}, include=["metadatas", "documents"]
    )
    expected = {d.id: d for d in _by_level(docs, "child") if d.metadata["language"] == "ja"}
    assert set(stored["ids"]) == set(expected)
    for chunk_id, text, meta in zip(
        stored["ids"], stored["documents"] or [], stored["metadatas"] or [], strict=True
    ):
        assert text == expected[chunk_id].page_content
        assert dict(meta) == expected[chunk_id].metadata
    hits = collection.query(query_embeddings=[embed.embed_query(docs[0].page_content)], n_results=1)
    assert hits["ids"] == [[docs[0].id]]


# Markup the chunk text does not repeat: HTML anchors, admonition tags, heading, quote
# and list markers (CommonMark renumbers "1. 1. 1." lists), emphasis and code ticks, and
# link targets (a link reads as its text).
_MARKUP = re.compile(
    r"<[^>]+>|\[![A-Za-z]+\]|\]\([^)]*\)?|^[ \t>]*(?:#+|\d+[.)]|[-+*])[ \t]|[#>*`_\[\]!]", re.MULTILINE
)


def _plain(text: str) -> str:
    # Whitespace is dropped too: wrapped lines and removed markup leave it in different places.
    return "".join(_MARKUP.sub(" ", text).split())


@pytest.mark.parametrize("lang", LANGUAGES)
def test_start_index_is_where_the_chunk_evidence_begins(load: Callable[[str], Document], lang: str) -> None:
    text = load(_page(lang)).page_content
    docs = ProcedureTextSplitter(add_start_index=True).create_documents([text])
    misplaced = []
    for doc in docs:
        start = doc.metadata["start_index"]
        first_span = read_metadata(doc.metadata)["source_spans"][0]
        assert start == first_span[0]
        opening = _plain(text[start : first_span[1]])[:20]
        if opening not in _plain(doc.page_content):
            misplaced.append((start, opening))
    assert misplaced == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_from_tiktoken_encoder_keeps_children_within_budget(pages: list[Document], lang: str) -> None:
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400)
    count = tiktoken_length("cl100k_base")
    texts = splitter.split_text(pages[LANGUAGES.index(lang)].page_content)
    assert len(texts) > 3
    assert max(count(t) for t in texts) <= 400


@pytest.mark.parametrize(
    ("kwargs", "encoding"),
    [
        ({}, "cl100k_base"),
        ({"encoding_name": "o200k_base"}, "o200k_base"),
        ({"model_name": "gpt-4o"}, "o200k_base"),
        ({"model_name": "gpt-4"}, "cl100k_base"),
    ],
)
def test_from_tiktoken_encoder_counts_the_chosen_encoding(kwargs: dict[str, Any], encoding: str) -> None:
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400, **kwargs)
    # cl100k_base and o200k_base count this sentence differently.
    sample = "[設定] 画面で [パスワード変更] を選択します。"
    assert tiktoken_length("cl100k_base")(sample) != tiktoken_length("o200k_base")(sample)
    assert splitter.options.chunk_size == 400
    assert splitter.options.length_function is not None
    assert splitter.options.length_function(sample) == tiktoken_length(encoding)(sample)


@pytest.mark.parametrize(
    "special",
    [{}, {"allowed_special": "all"}, {"allowed_special": {"<|endoftext|>"}, "disallowed_special": ()}],
)
@pytest.mark.parametrize(
    "text",
    [
        "Press **OK**.",
        "設定画面を開きます。",
        "a <|endoftext|> b",
        "<|fim_prefix|>x",
        "a <| b",
        "bad \ud800 x",
        "",
    ],
)
def test_from_tiktoken_encoder_counts_as_langchain_does(
    special: dict[str, Any], text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ordinary text is counted with encode_ordinary; the rest as LangChain counts it,
    # or refused as LangChain refuses it (a disallowed special token).
    ours = ProcedureTextSplitter.from_tiktoken_encoder(**special).options.length_function
    # LangChain's own counter asks tiktoken's registry, which reads the files offline only
    # through TIKTOKEN_CACHE_DIR (ours reads them directly).
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(llama_index_tiktoken_cache()))
    theirs = TextSplitter._tiktoken_length_function("cl100k_base", None, **special)
    assert isinstance(ours, OrdinaryFirst)  # cl100k's special tokens all open with "<|"
    try:
        expected = theirs(text)
    except ValueError:
        assert "<|" in text
        assert not special  # only the default refuses special tokens
        with pytest.raises(ValueError, match="disallowed special token"):
            ours(text)
    else:
        assert ours(text) == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"model_name": "no-such-model"},
            "unknown model_name 'no-such-model': tiktoken does not know its encoding",
        ),
        (
            {"encoding_name": "p50k_base"},
            "encoding 'p50k_base' is not available offline (without a download); use one of "
            "cl100k_base, o200k_base, or set TIKTOKEN_CACHE_DIR to a tiktoken cache holding it",
        ),
        ({"chunk_overlap": 10}, "chunk_overlap must be 0 (procedure chunks never overlap), got 10"),
    ],
)
def test_from_tiktoken_encoder_errors(
    kwargs: dict[str, Any], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As for a user who has not pointed tiktoken at a cache of their own.
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        ProcedureTextSplitter.from_tiktoken_encoder(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chunk_size": 0}, "chunk_size must be > 0, got 0"),
        ({"chunk_size": -5}, "chunk_size must be > 0, got -5"),
        ({"chunk_overlap": 50}, "chunk_overlap must be 0 (procedure chunks never overlap), got 50"),
        ({"chunk_overlap": -1}, "chunk_overlap must be 0 (procedure chunks never overlap), got -1"),
        ({"language": "fr"}, "language must be one of auto, ja, en, got 'fr'"),
        ({"source_format": "pdf"}, "source_format must be one of auto, markdown, text, html, rst, got 'pdf'"),
        ({"parent_chunk_size": 100}, "parent_chunk_size must be >= chunk_size (400), got 100"),
        ({"max_children_per_parent": 0}, "max_children_per_parent must be >= 1, got 0"),
        ({"step_styles": ()}, "step_styles must not be empty"),
        ({"lexicons": {}}, "lexicons must hold 'ja' and 'en', missing ja, en"),
    ],
)
def test_bad_options_raise_pinned_messages(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=rf"^{re.escape(message)}$"):
        ProcedureTextSplitter(**kwargs)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_emit_parents_follow_their_children(pages: list[Document], lang: str) -> None:
    page = pages[LANGUAGES.index(lang)]
    docs = ProcedureTextSplitter(emit_parents=True).split_documents([page])
    children_only = ProcedureTextSplitter().split_documents([page])
    parents = _by_level(docs, "parent")
    assert parents
    assert [d.page_content for d in _by_level(docs, "child")] == [d.page_content for d in children_only]
    position = {d.id: i for i, d in enumerate(docs)}
    for parent in parents:
        child_ids = read_metadata(parent.metadata)["child_ids"]
        assert child_ids
        # Each parent comes right after its last child.
        assert max(position[c] for c in child_ids) == position[parent.id] - 1
        assert all(docs[position[c]].metadata["parent_id"] == parent.id for c in child_ids)
    claimed = [c for p in parents for c in read_metadata(p.metadata)["child_ids"]]
    assert sorted(claimed) == sorted(str(d.id) for d in _by_level(docs, "child"))


def test_child_splitter_of_parent_document_retriever(pages: list[Document]) -> None:
    vectorstore = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    splitter = ProcedureTextSplitter()
    retriever = ParentDocumentRetriever(
        vectorstore=vectorstore, docstore=InMemoryStore(), child_splitter=splitter
    )
    retriever.add_documents(pages)
    assert set(vectorstore.store) == {d.id for d in splitter.split_documents(pages)}
    found = retriever.invoke("How do I hard-reset HoloLens 2?")
    assert found
    assert {d.page_content for d in found} <= {d.page_content for d in pages}


def _lcel_batch(splitter: ProcedureTextSplitter, docs: list[Document]) -> list[Document]:
    per_document = RunnableLambda(splitter.split_documents).batch([[doc] for doc in docs])
    return [chunk for chunks in per_document for chunk in chunks]


ENTRY_POINTS: dict[str, Callable[[ProcedureTextSplitter, list[Document]], Any]] = {
    "transform_documents": lambda s, docs: s.transform_documents(docs),
    "atransform_documents": lambda s, docs: asyncio.run(s.atransform_documents(docs)),
    "lazy_split_documents": lambda s, docs: list(s.lazy_split_documents(iter(docs))),
    "lcel_invoke": lambda s, docs: (RunnableLambda(list) | RunnableLambda(s.split_documents)).invoke(docs),
    "lcel_batch": _lcel_batch,
}


@pytest.mark.parametrize("run", ENTRY_POINTS.values(), ids=ENTRY_POINTS.keys())
def test_every_entry_point_agrees_with_split_documents(
    pages: list[Document], run: Callable[[ProcedureTextSplitter, list[Document]], Any]
) -> None:
    splitter = ProcedureTextSplitter(add_start_index=True)
    expected = splitter.split_documents(pages)
    assert len(expected) > len(pages)
    assert list(run(splitter, pages)) == expected


# -- Unstructured element documents (UnstructuredLoader(mode="elements")) and format hints --

ELEMENT_PAGES = {"en": "unstructured/hololens-recovery.en.json", "ja": "unstructured/group.ja.json"}


def _element_documents(tests_data: Path, lang: str) -> list[Document]:
    """The fixture's elements as UnstructuredLoader(mode="elements") yields them."""
    path = ELEMENT_PAGES[lang]
    records = json.loads((tests_data / path).read_text(encoding="utf-8"))
    return [
        Document(
            page_content=r["text"],
            metadata={
                **r["metadata"],
                "category": r["type"],
                "element_id": r["element_id"],
                "source": path,
                "filename": Path(path).name,
            },
        )
        for r in records
    ]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_element_documents_are_read_as_one_document(tests_data: Path, lang: str) -> None:
    documents = _element_documents(tests_data, lang)
    docs = ProcedureTextSplitter(chunk_size=400).split_documents(documents)
    records = json.loads((tests_data / ELEMENT_PAGES[lang]).read_text(encoding="utf-8"))
    core = ProcedureChunker(ChunkerOptions(chunk_size=400, length_function=len, emit_parents=False))
    expected = list(core.iter_chunks_from_source(records, source_id=ELEMENT_PAGES[lang]))
    assert [(d.id, d.page_content) for d in docs] == [(c.chunk_id, c.text.strip()) for c in expected]
    procedures = [d for d in docs if d.metadata["chunk_type"] == "procedure"]
    assert procedures
    for doc in docs:
        meta = read_metadata(doc.metadata)
        # Shared document metadata stays; one element's own metadata does not.
        assert (meta["source"], meta["filename"]) == (ELEMENT_PAGES[lang], Path(ELEMENT_PAGES[lang]).name)
        assert not {"category", "element_id", "coordinates", "page_number", "category_depth"} & set(meta)
        assert meta["section_path"]
        assert meta["pages"]
        assert meta["boxes"]
        assert meta["source_record_refs"]
    numbers = [s["number"] for d in procedures for s in read_metadata(d.metadata)["steps"]]
    assert {"1.", "2.", "3.", "4."} <= set(numbers)


def test_whole_text_and_element_documents_mix(tests_data: Path, load: Callable[[str], Document]) -> None:
    splitter = ProcedureTextSplitter()
    elements = _element_documents(tests_data, "en")
    text_en, text_ja = load(_page("en")), load(_page("ja"))
    mixed = splitter.split_documents([text_en, *elements, text_ja])
    apart = [splitter.split_documents(docs) for docs in ([text_en], elements, [text_ja])]
    assert mixed == [d for docs in apart for d in docs]
    # Two files' elements back to back are two documents.
    both = splitter.split_documents([*elements, *_element_documents(tests_data, "ja")])
    assert {d.metadata["source_id"] for d in both} == set(ELEMENT_PAGES.values())


@pytest.mark.parametrize(
    ("metadata", "source_format"),
    [
        pytest.param({"source": "notes.txt"}, "text", id="suffix-txt"),
        pytest.param({"source": "notes.md"}, "markdown", id="suffix-md"),
        pytest.param({"source": "notes", "source_format": "text"}, "text", id="metadata-key"),
    ],
)
def test_metadata_names_the_format(
    load: Callable[[str], Document], metadata: dict[str, str], source_format: str
) -> None:
    text = load(_page("en")).page_content
    hinted = ProcedureTextSplitter().split_documents([Document(page_content=text, metadata=metadata)])
    named = ProcedureTextSplitter(source_format=source_format).split_documents(
        [Document(page_content=text, metadata=metadata)]
    )
    other = "markdown" if source_format == "text" else "text"
    assert [d.page_content for d in hinted] == [d.page_content for d in named]
    assert [d.page_content for d in hinted] != [
        d.page_content
        for d in ProcedureTextSplitter(source_format=other).split_documents(
            [Document(page_content=text, metadata=metadata)]
        )
    ]


def test_explicit_source_format_wins_over_metadata(load: Callable[[str], Document]) -> None:
    text = load(_page("en")).page_content
    splitter = ProcedureTextSplitter(source_format="markdown")
    docs = splitter.split_documents([Document(page_content=text, metadata={"source": "notes.txt"})])
    assert [d.page_content for d in docs] == splitter.split_text(text)

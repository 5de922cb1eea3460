"""Representations through LlamaIndex: the LLM wrapper, IndexNodes, RecursiveRetriever."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    ImageBlock,
    LLMMetadata,
    MessageRole,
    TextBlock,
)
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import LLM, CustomLLM, MockLLM
from llama_index.core.retrievers import RecursiveRetriever
from llama_index.core.schema import BaseNode, IndexNode, TextNode
from pydantic import Field

from langchain_procedures import representations_to_documents
from llama_index_procedures import (
    LlamaIndexModel,
    ProcedureNodeParser,
    agenerate_representation_nodes,
    generate_representation_nodes,
    representations_to_index_nodes,
)
from procedure_rag import Chunk, ChunkerOptions, ChunkType, ProcedureChunker
from procedure_rag._metadata import chunk_from_metadata
from procedure_rag._models.text_model import ImagePart, Message
from procedure_rag._representations.cache import RepresentationCache
from procedure_rag._representations.llm.generator import LLMGenerator
from procedure_rag._representations.llm.prompts import PROMPT_TEXTS
from procedure_rag._representations.offline.generator import generate_representations
from procedure_rag._representations.types import DEFAULT_KINDS, Representation, RepresentationKind

K = RepresentationKind
LANGUAGES = ("en", "ja")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
# Questions only (besides raw), so the scripted LLM needs two replies per language.
KINDS = {ChunkType.PROCEDURE: (K.RAW, K.QUESTION), ChunkType.TEXT: (K.RAW, K.QUESTION)}
REPLIES = {
    (K.QUESTION, "en"): "1. How do I recover a HoloLens?\n2. What if the HoloLens does not start?",
    (K.QUESTION, "ja"): "1. HoloLens を回復するには？\n2. HoloLens が起動しない場合は？",
    (K.IMAGE_CAPTION, "en"): "Recovery screen\nThe figure shows the recovery app.",
    (K.IMAGE_CAPTION, "ja"): "回復画面\n図は回復アプリを示しています。",
}
QUESTIONS = {
    "en": ["How do I recover a HoloLens?", "What if the HoloLens does not start?"],
    "ja": ["HoloLens を回復するには？", "HoloLens が起動しない場合は？"],
}


def prompt_of(messages: Sequence[ChatMessage]) -> tuple[str, RepresentationKind]:
    """The language and kind a generator prompt asks for, read from its wording."""
    system, user = messages
    assert (system.role, user.role) == (MessageRole.SYSTEM, MessageRole.USER)
    language = next(code for code, texts in PROMPT_TEXTS.items() if texts.system == system.content)
    kind = next(
        k for k, words in PROMPT_TEXTS[language].instructions.items() if words in (user.content or "")
    )
    return language, kind


class VisionMetadata(LLMMetadata):
    """Metadata of an integration that still declares whether it reads images."""

    is_multi_modal: bool = False


class ScriptedLLM(CustomLLM):
    """A chat LLM that answers each prompt from ``REPLIES`` and records what it got."""

    model_name: str = "scripted-1"
    multi_modal: bool | None = None
    fail: bool = False
    usage: dict[str, Any] = Field(default_factory=dict)
    raw: Any = None
    received: list[list[ChatMessage]] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        if self.multi_modal is None:
            return LLMMetadata(model_name=self.model_name, is_chat_model=True)
        return VisionMetadata(model_name=self.model_name, is_chat_model=True, is_multi_modal=self.multi_modal)

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self.received.append(list(messages))
        if self.fail:
            raise ConnectionError("endpoint unreachable")
        language, kind = prompt_of(messages)
        reply = ChatMessage(role=MessageRole.ASSISTANT, content=REPLIES[kind, language])
        return ChatResponse(message=reply, raw=self.raw, additional_kwargs=self.usage)

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self.chat(messages)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError


@pytest.fixture(scope="module")
def pages(tests_data: Path) -> dict[str, str]:
    return {
        lang: (tests_data / f"hololens/{lang}/hololens-recovery.md").read_text(encoding="utf-8")
        for lang in LANGUAGES
    }


@pytest.fixture(scope="module")
def nodes(pages: dict[str, str]) -> dict[str, list[BaseNode]]:
    """The recovery page's chunk nodes per language, from the node parser."""
    parser = ProcedureNodeParser(chunk_size=200)
    return {
        lang: parser.get_nodes_from_documents([Document(text=pages[lang], doc_id=f"hololens-{lang}")])
        for lang in LANGUAGES
    }


def pictures(text: str) -> list[Chunk]:
    # A small budget gives the recovery page's screenshots chunks of their own.
    chunks = ProcedureChunker(ChunkerOptions(chunk_size=50)).chunk(text, source_id="recovery")
    return [c for c in chunks if c.chunk_type is ChunkType.PICTURE]


def text_of(reps: Sequence[BaseNode]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for node in reps:
        out.setdefault((node.metadata["doc_id"], node.metadata["representation"]), []).append(
            node.get_content()
        )
    return out


# --- LlamaIndexModel ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("llm", "identity"),
    [
        pytest.param(ScriptedLLM(model_name="gpt-x"), "ScriptedLLM:gpt-x", id="model-name"),
        pytest.param(MockLLM(), "MockLLM", id="unknown-model-name"),
    ],
)
def test_identity_comes_from_the_llm(llm: LLM, identity: str) -> None:
    assert LlamaIndexModel(llm).identity == identity
    assert LlamaIndexModel(llm, identity="mine").identity == "mine"


def test_empty_identity_is_rejected() -> None:
    with pytest.raises(ValueError, match="identity must be a non-empty string or None"):
        LlamaIndexModel(ScriptedLLM(), identity="")


@pytest.mark.parametrize(
    ("declared", "given", "expected"),
    [(True, None, True), (False, None, False), (None, None, True), (True, False, False), (False, True, True)],
)
def test_image_support_comes_from_the_metadata_or_the_caller(
    declared: bool | None, given: bool | None, expected: bool
) -> None:
    assert (
        LlamaIndexModel(ScriptedLLM(multi_modal=declared), supports_images=given).supports_images is expected
    )


@pytest.mark.parametrize(
    ("usage", "raw", "tokens"),
    [
        pytest.param({"prompt_tokens": 11, "completion_tokens": 3}, None, (11, 3), id="additional-kwargs"),
        pytest.param({}, {"usage": {"input_tokens": 12, "output_tokens": 4}}, (12, 4), id="raw-dict"),
        pytest.param(
            {},
            type("Raw", (), {"usage": type("U", (), {"prompt_tokens": 13})()})(),
            (13, None),
            id="raw-object",
        ),
        pytest.param({}, None, (None, None), id="none"),
    ],
)
def test_complete_translates_messages_and_usage(
    usage: dict[str, Any], raw: object, tokens: tuple[int | None, int | None]
) -> None:
    llm = ScriptedLLM(usage=usage, raw=raw)
    ja = PROMPT_TEXTS["ja"]
    messages = [Message("system", ja.system), Message("user", f"本文\n{ja.instructions[K.QUESTION]}")]
    reply = LlamaIndexModel(llm).complete(messages)
    assert (reply.text, reply.input_tokens, reply.output_tokens) == (REPLIES[K.QUESTION, "ja"], *tokens)
    [received] = llm.received
    assert [(m.role, m.blocks) for m in received] == [
        (MessageRole.SYSTEM, [TextBlock(text=ja.system)]),
        (MessageRole.USER, [TextBlock(text=messages[1].text)]),
    ]


@pytest.mark.parametrize(
    "image",
    [
        pytest.param(ImagePart(data=PNG, url=None, mime_type="image/png"), id="bytes"),
        pytest.param(ImagePart(data=None, url="https://example.com/a.png", mime_type="image/png"), id="url"),
    ],
)
def test_images_become_image_blocks(image: ImagePart) -> None:
    llm = ScriptedLLM()
    en = PROMPT_TEXTS["en"]
    LlamaIndexModel(llm).complete(
        [Message("system", en.system), Message("user", en.instructions[K.IMAGE_CAPTION], (image,))]
    )
    text, block = llm.received[0][1].blocks
    assert isinstance(text, TextBlock)
    assert isinstance(block, ImageBlock)
    assert block.image_mimetype == "image/png"
    if image.data is not None:
        assert block.resolve_image().read() == PNG
    else:
        assert str(block.url) == image.url


# --- generation through the adapter --------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_replies_become_index_nodes(nodes: dict[str, list[BaseNode]], lang: str) -> None:
    llm = ScriptedLLM()
    reps = generate_representation_nodes(nodes[lang], llm=llm, kinds=KINDS)
    texts = text_of(reps)
    assert {chunk_id for chunk_id, _ in texts} == {n.node_id for n in nodes[lang]}
    for node in nodes[lang]:
        assert texts[node.node_id, "raw"] == [node.get_content()]
        assert texts[node.node_id, "question"] == QUESTIONS[lang]
    assert {prompt_of(m) for m in llm.received} == {(lang, K.QUESTION)}
    assert {n.metadata["generator"] for n in reps if n.metadata["representation"] == "question"} == {
        "ScriptedLLM:scripted-1"
    }


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_failing_llm_falls_back_with_nothing_lost(nodes: dict[str, list[BaseNode]], lang: str) -> None:
    llm = ScriptedLLM(fail=True)
    generator = LLMGenerator(LlamaIndexModel(llm), retries=1, backoff=0.0)
    chunk_nodes = nodes[lang]
    chunks = [chunk_from_metadata(n.get_content(), n.metadata) for n in chunk_nodes]
    reps = representations_to_index_nodes(generator.generate(chunks))
    # A model's kinds, made offline.
    offline = representations_to_index_nodes(generate_representations(chunks, defaults=DEFAULT_KINDS))
    assert [(n.node_id, n.get_content()) for n in reps] == [(n.node_id, n.get_content()) for n in offline]
    assert all(n.metadata["fallback"] for n in reps if n.metadata["representation"] != "raw")
    assert llm.received
    assert {error for _, _, error in generator.stats.failures} == {"ConnectionError: endpoint unreachable"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_cached_second_run_calls_no_llm(nodes: dict[str, list[BaseNode]], lang: str) -> None:
    with RepresentationCache() as cache:
        first_llm, second_llm = ScriptedLLM(), ScriptedLLM()
        first = generate_representation_nodes(nodes[lang], llm=first_llm, kinds=KINDS, cache=cache)
        second = generate_representation_nodes(nodes[lang], llm=second_llm, kinds=KINDS, cache=cache)
    assert first_llm.received
    assert second_llm.received == []
    assert [(n.node_id, n.metadata) for n in second] == [(n.node_id, n.metadata) for n in first]


def test_a_wrapped_llm_keeps_its_identity(nodes: dict[str, list[BaseNode]]) -> None:
    llm = LlamaIndexModel(ScriptedLLM(), identity="mine")
    reps = generate_representation_nodes(nodes["ja"], llm=llm, kinds=KINDS)
    assert {n.metadata["generator"] for n in reps if n.metadata["representation"] != "raw"} == {"mine"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_async_generation_matches_sync(nodes: dict[str, list[BaseNode]], lang: str) -> None:
    llm = ScriptedLLM()
    sync = generate_representation_nodes(nodes[lang], llm=llm, kinds=KINDS)
    calls = len(llm.received)
    async_ = asyncio.run(agenerate_representation_nodes(nodes[lang], llm=llm, kinds=KINDS))
    assert len(llm.received) == 2 * calls
    assert [(n.node_id, n.index_id, n.get_content()) for n in async_] == [
        (n.node_id, n.index_id, n.get_content()) for n in sync
    ]


@pytest.mark.parametrize("multi_modal", [True, False])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_picture_chunks_send_images_to_a_multimodal_llm(
    pages: dict[str, str], lang: str, multi_modal: bool
) -> None:
    chunks = pictures(pages[lang])
    assert chunks
    llm = ScriptedLLM(multi_modal=multi_modal)
    image = ImagePart(data=PNG, url=None, mime_type="image/png")
    generator = LLMGenerator(LlamaIndexModel(llm), image_loader=lambda _: (image,), retries=1, backoff=0.0)
    reps = asyncio.run(generator.agenerate(chunks))
    captions = [r.text for r in reps if r.kind is K.IMAGE_CAPTION]
    assert captions == [REPLIES[K.IMAGE_CAPTION, lang]] * len(chunks)
    assert [r.text for r in reps if r.kind is K.RAW] == [c.text for c in chunks]
    sent = [[b for b in m[1].blocks if isinstance(b, ImageBlock)] for m in llm.received]
    assert [len(blocks) for blocks in sent] == [1 if multi_modal else 0] * len(chunks)
    assert all(b.resolve_image().read() == PNG for blocks in sent for b in blocks)


# --- index nodes and RecursiveRetriever -----------------------------------------------------


def test_index_nodes_carry_what_langchain_documents_carry() -> None:
    reps = [
        Representation(chunk_id="c1", kind=K.QUESTION, text=f"Question {i}?", index=i, generator="g")
        for i in range(2)
    ] + [Representation(chunk_id="c2", kind=K.KEYWORDS, text="a b", fallback=True, metadata={"x": 1})]
    index_nodes = representations_to_index_nodes(reps, metadata={"tenant": "t"})
    documents = representations_to_documents(reps, metadata={"tenant": "t"})
    assert [(n.node_id, n.index_id, n.text, n.metadata) for n in index_nodes] == [
        (d.id, d.metadata["doc_id"], d.page_content, d.metadata) for d in documents
    ]
    # Only the text is embedded: metadata keys never reach the vector.
    assert all(n.get_content(metadata_mode="embed") == n.text for n in index_nodes)  # type: ignore[arg-type]


def retriever_over(index_nodes: list[IndexNode], chunk_nodes: Sequence[BaseNode]) -> RecursiveRetriever:
    index = VectorStoreIndex(index_nodes, embed_model=MockEmbedding(embed_dim=8))
    vector = index.as_retriever(similarity_top_k=len(index_nodes))
    return RecursiveRetriever(
        "vector", retriever_dict={"vector": vector}, node_dict={n.node_id: n for n in chunk_nodes}
    )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_recursive_retriever_returns_each_raw_node_once(nodes: dict[str, list[BaseNode]], lang: str) -> None:
    chunk_nodes = nodes[lang]
    index_nodes = generate_representation_nodes(chunk_nodes)
    assert len(index_nodes) > len(chunk_nodes)
    # MockEmbedding gives every text the same vector: all representations are hits.
    found = retriever_over(index_nodes, chunk_nodes).retrieve("How do I reset the device?")
    assert all(isinstance(hit.node, TextNode) and not isinstance(hit.node, IndexNode) for hit in found)
    assert sorted(hit.node.node_id for hit in found) == sorted(n.node_id for n in chunk_nodes)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_hit_on_any_representation_returns_its_raw_node(
    nodes: dict[str, list[BaseNode]], lang: str
) -> None:
    chunk_nodes = nodes[lang]
    by_chunk: dict[str, list[IndexNode]] = {}
    for node in generate_representation_nodes(chunk_nodes):
        by_chunk.setdefault(node.index_id, []).append(node)
    for chunk in chunk_nodes[:3]:
        [hit] = retriever_over(by_chunk[chunk.node_id], chunk_nodes).retrieve("query")
        assert hit.node is chunk

"""Representations through LangChain: the model wrapper, the documents, MultiVectorRetriever.

Also the core's way back from chunk metadata to a chunk (``chunk_from_metadata``), which
is what lets the adapters generate representations from split documents.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_classic.retrievers.multi_vector import MultiVectorRetriever
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.stores import InMemoryStore
from langchain_core.vectorstores import InMemoryVectorStore
from pydantic import Field

from langchain_procedures import (
    LangChainModel,
    ProcedureTextSplitter,
    agenerate_representation_documents,
    generate_representation_documents,
    representations_to_documents,
)
from procedure_rag import SCHEMA_VERSION, Chunk, ChunkerOptions, ChunkType, ProcedureChunker, chunk_metadata
from procedure_rag._metadata import chunk_from_metadata
from procedure_rag._models.text_model import ImagePart, Message
from procedure_rag._representations.cache import RepresentationCache
from procedure_rag._representations.llm.generator import LLMGenerator
from procedure_rag._representations.llm.prompts import PROMPT_TEXTS
from procedure_rag._representations.offline.generator import generate_representations
from procedure_rag._representations.types import DEFAULT_KINDS, Representation, RepresentationKind

K = RepresentationKind
LANGUAGES = ("en", "ja")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16  # the bytes only travel; nobody decodes them

# What the fake models answer, per kind and language, and the representation texts the
# generator must make of it (questions: one each; keywords: joined; the rest: as written).
REPLIES: dict[tuple[RepresentationKind, str], tuple[str, tuple[str, ...]]] = {
    (K.QUESTION, "en"): (
        "1. How do I restart a HoloLens that stopped responding?\n2. What if the device does not start?",
        ("How do I restart a HoloLens that stopped responding?", "What if the device does not start?"),
    ),
    (K.QUESTION, "ja"): (
        "1. HoloLens が応答しないときはどうすればよいですか？\n2. デバイスが起動しない場合は？",
        ("HoloLens が応答しないときはどうすればよいですか？", "デバイスが起動しない場合は？"),
    ),
    (K.SUMMARY, "en"): (
        "Summary: How to recover a HoloLens device that does not respond.",
        ("How to recover a HoloLens device that does not respond.",),
    ),
    (K.SUMMARY, "ja"): (
        "応答しない HoloLens デバイスを回復する方法。",
        ("応答しない HoloLens デバイスを回復する方法。",),
    ),
    (K.KEYWORDS, "en"): ("- HoloLens\n- restart\n- power button", ("HoloLens, restart, power button",)),
    (K.KEYWORDS, "ja"): ("- HoloLens\n- 再起動\n- 電源ボタン", ("HoloLens、再起動、電源ボタン",)),
    (K.CODE_DOCSTRING, "en"): (
        "Installs the app package on the device with DISM.",
        ("Installs the app package on the device with DISM.",),
    ),
    (K.CODE_DOCSTRING, "ja"): (
        "DISM でアプリ パッケージをデバイスにインストールします。",
        ("DISM でアプリ パッケージをデバイスにインストールします。",),
    ),
    (K.IMAGE_CAPTION, "en"): (
        "HoloLens screenshot\nThe figure shows the device screen.",
        ("HoloLens screenshot\nThe figure shows the device screen.",),
    ),
    (K.IMAGE_CAPTION, "ja"): (
        "HoloLens の画面\n図はデバイスの画面を示しています。",
        ("HoloLens の画面\n図はデバイスの画面を示しています。",),
    ),
}


def prompt_of(messages: Sequence[BaseMessage]) -> tuple[str, RepresentationKind]:
    """The language and kind a generator prompt asks for, read from its wording."""
    system, user = messages
    assert isinstance(system, SystemMessage)
    assert isinstance(user, HumanMessage)
    language = next(code for code, texts in PROMPT_TEXTS.items() if texts.system == system.text)
    kind = next(k for k, words in PROMPT_TEXTS[language].instructions.items() if words in user.text)
    return language, kind


def reply_to(messages: Sequence[BaseMessage]) -> str:
    language, kind = prompt_of(messages)
    return REPLIES[kind, language][0]


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers each prompt from ``REPLIES`` and records what it got."""

    model_name: str | None = None
    received: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-chat"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(messages)
        message = AIMessage(
            content=reply_to(messages),
            usage_metadata={"input_tokens": 100, "output_tokens": 10, "total_tokens": 110},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


class PromptRecorder(BaseCallbackHandler):
    """Records the messages a chat model was started with (for LangChain's own fakes)."""

    def __init__(self) -> None:
        self.prompts: list[list[BaseMessage]] = []

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        self.prompts.extend(messages)


def failing(messages: list[BaseMessage]) -> AIMessage:
    raise RuntimeError("model down")


# Every shape of model LangChainModel takes: a chat model, a Runnable answering a
# message, and a chain ending in a string parser.
MODELS: dict[str, Callable[[], Runnable[Any, Any]]] = {
    "chat-model": ScriptedChatModel,
    "runnable-message": lambda: RunnableLambda(lambda m: AIMessage(content=reply_to(m))),
    "runnable-str": lambda: RunnableLambda(lambda m: AIMessage(content=reply_to(m))) | StrOutputParser(),
}


@pytest.fixture(scope="module")
def pages(tests_data: Path) -> dict[str, str]:
    return {
        lang: (tests_data / f"hololens/{lang}/hololens-recovery.md").read_text(encoding="utf-8")
        for lang in LANGUAGES
    }


def core_chunks(text: str, lang: str, *, chunk_size: int = 400) -> list[Chunk]:
    options = ChunkerOptions(chunk_size=chunk_size, length_function=len, language=lang, emit_parents=True)
    return ProcedureChunker(options).chunk(text, source_id=f"hololens/{lang}/hololens-recovery.md")


def split(text: str, lang: str) -> list[Document]:
    splitter = ProcedureTextSplitter(chunk_size=400, language=lang, emit_parents=True, strip_whitespace=False)
    source = {"source": f"hololens/{lang}/hololens-recovery.md"}
    return splitter.create_documents([text], [source])


def generator(model: Runnable[Any, Any], **options: Any) -> LLMGenerator:
    return LLMGenerator(LangChainModel(model), retries=1, backoff=0.0, **options)


def model_reps(reps: Sequence[Representation]) -> list[Representation]:
    return [r for r in reps if r.kind is not K.RAW]


def keys(reps: Sequence[Representation]) -> set[tuple[str, RepresentationKind, int]]:
    return {(r.chunk_id, r.kind, r.index) for r in reps}


# --- chunk_from_metadata: the way back from flat metadata --------------------------------


def _without_unstored(chunk: Chunk) -> Chunk:
    """``chunk`` as its metadata describes it: steps keep no text of their own nor element id."""
    steps = tuple(dataclasses.replace(s, text=s.action, element_id="") for s in chunk.steps)
    return dataclasses.replace(chunk, steps=steps)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_chunk_from_metadata_rebuilds_the_chunk(pages: dict[str, str], lang: str) -> None:
    chunks = core_chunks(pages[lang], lang)
    assert any(c.steps for c in chunks)
    assert any(c.related_elements for c in chunks)
    assert any(c.child_ids for c in chunks)
    for chunk in chunks:
        assert chunk_from_metadata(chunk.text, chunk_metadata(chunk, {"owner": "x"})) == _without_unstored(
            chunk
        )


def test_chunk_from_metadata_keeps_pages_and_boxes(tests_data: Path) -> None:
    options = ChunkerOptions(chunk_size=400)
    source = tests_data / "docling/hololens-recovery-en.docling.json"
    chunks = list(ProcedureChunker(options).iter_chunks_from_source(source, source_id="docling-en"))
    assert any(c.boxes for c in chunks)
    assert any(s.bbox for c in chunks for s in c.steps)
    for chunk in chunks:
        meta = chunk_metadata(chunk)
        rebuilt = chunk_from_metadata(chunk.text, meta)
        assert chunk_metadata(rebuilt) == meta
        assert [(p, b.as_list()) for p, b in rebuilt.boxes] == [(p, b.as_list()) for p, b in chunk.boxes]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            lambda m: {k: v for k, v in m.items() if k not in {"chunk_id", "language"}},
            "metadata lacks chunk_id, language: it was not written by chunk_metadata",
            id="missing-keys",
        ),
        pytest.param(
            lambda m: {**m, "schema_version": SCHEMA_VERSION + 1},
            f"metadata schema_version is {SCHEMA_VERSION + 1}, this version reads {SCHEMA_VERSION}",
            id="schema-version",
        ),
        pytest.param(
            lambda m: {**m, "steps": "[{"},
            "metadata key 'steps' is not valid JSON",
            id="bad-json",
        ),
        pytest.param(
            lambda m: {**m, "steps": json.dumps([{"number": "1."}])},
            "metadata of chunk 'c1' is malformed: KeyError('action')",
            id="step-without-action",
        ),
        pytest.param(
            lambda m: {**m, "chunk_type": "poem"},
            "'poem' is not a valid ChunkType",
            id="unknown-type",
        ),
    ],
)
def test_chunk_from_metadata_rejects_foreign_metadata(
    change: Callable[[dict[str, Any]], dict[str, Any]], message: str
) -> None:
    chunk = core_chunks("# Restart\n\nIf it hangs:\n\n1. Hold Power.\n2. Release it.\n", "en")[0]
    meta = change(chunk_metadata(dataclasses.replace(chunk, chunk_id="c1")))
    with pytest.raises(ValueError, match=re.escape(message)):
        chunk_from_metadata(chunk.text, meta)


# --- LangChainModel ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "identity"),
    [
        pytest.param(FakeListChatModel(responses=["x"]), "fake-list-chat-model", id="llm-type"),
        pytest.param(ScriptedChatModel(model_name="m-1"), "scripted-chat:m-1", id="model-name"),
        pytest.param(RunnableLambda(reply_to), "RunnableLambda", id="runnable"),
    ],
)
def test_identity_comes_from_the_model(model: Runnable[Any, Any], identity: str) -> None:
    assert LangChainModel(model).identity == identity
    assert LangChainModel(model, identity="mine").identity == "mine"


def test_empty_identity_is_rejected() -> None:
    with pytest.raises(ValueError, match="identity must be a non-empty string or None"):
        LangChainModel(ScriptedChatModel(), identity="")


def test_complete_translates_messages_and_usage() -> None:
    model = ScriptedChatModel()
    en = PROMPT_TEXTS["en"]
    messages = [Message("system", en.system), Message("user", f"x\n{en.instructions[K.SUMMARY]}")]
    reply = LangChainModel(model).complete(messages)
    assert (reply.text, reply.input_tokens, reply.output_tokens) == (REPLIES[K.SUMMARY, "en"][0], 100, 10)
    [received] = model.received
    assert [type(m) for m in received] == [SystemMessage, HumanMessage]
    assert [m.content for m in received] == [m.text for m in messages]


@pytest.mark.parametrize(
    ("image", "block"),
    [
        pytest.param(
            ImagePart(data=PNG, url=None, mime_type="image/png"),
            {"type": "image", "base64": base64.b64encode(PNG).decode(), "mime_type": "image/png"},
            id="bytes",
        ),
        pytest.param(
            ImagePart(data=None, url="https://example.com/a.jpg", mime_type="image/jpeg"),
            {"type": "image", "url": "https://example.com/a.jpg", "mime_type": "image/jpeg"},
            id="url",
        ),
    ],
)
def test_images_become_standard_content_blocks(image: ImagePart, block: dict[str, str]) -> None:
    model = ScriptedChatModel()
    en = PROMPT_TEXTS["en"]
    user = Message("user", en.instructions[K.IMAGE_CAPTION], (image, image))
    LangChainModel(model).complete([Message("system", en.system), user])
    assert model.received[0][1].content_blocks == [{"type": "text", "text": user.text}, block, block]


def test_a_reply_that_is_no_message_is_an_error() -> None:
    with pytest.raises(TypeError, match="the model returned dict; expected a message or a string"):
        LangChainModel(RunnableLambda(lambda _: {"text": "x"})).complete([Message("user", "hi")])


# --- generation through the adapter --------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("make_model", MODELS.values(), ids=MODELS.keys())
def test_replies_become_representations(
    pages: dict[str, str], lang: str, make_model: Callable[[], Runnable[Any, Any]]
) -> None:
    chunks = core_chunks(pages[lang], lang)
    model = make_model()
    llm = generator(model)
    reps = llm.generate(chunks)
    assert keys([r for r in reps if r.kind is K.RAW]) == {(c.chunk_id, K.RAW, 0) for c in chunks}
    produced = model_reps(reps)
    assert produced
    assert llm.stats.fallbacks == 0
    for rep in produced:
        assert (rep.generator, rep.fallback) == (LangChainModel(model).identity, False)
        expected = REPLIES[rep.kind, lang][1]
        assert rep.text == expected[rep.index]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_prompts_reach_the_model_in_the_chunks_language(pages: dict[str, str], lang: str) -> None:
    model = ScriptedChatModel()
    chunks = core_chunks(pages[lang], lang)
    generator(model).generate(chunks)
    assert model.received
    assert {prompt_of(messages)[0] for messages in model.received} == {lang}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_langchain_fakes_are_models_too(pages: dict[str, str], lang: str) -> None:
    # One chunk and one kind, so that the fakes' canned replies meet the right prompt.
    chunk = next(c for c in core_chunks(pages[lang], lang) if c.chunk_type is ChunkType.PROCEDURE)
    reply, expected = REPLIES[K.QUESTION, lang]
    recorder = PromptRecorder()
    usage = {"input_tokens": 70, "output_tokens": 7, "total_tokens": 77}
    fakes: list[BaseChatModel] = [
        FakeListChatModel(responses=[reply], callbacks=[recorder]),
        GenericFakeChatModel(messages=iter([AIMessage(reply, usage_metadata=usage)]), callbacks=[recorder]),
    ]
    for fake in fakes:
        llm = generator(fake, kinds={ChunkType.PROCEDURE: (K.QUESTION,)})
        reps = llm.generate([chunk])
        assert [r.text for r in reps if r.kind is K.QUESTION] == list(expected)
    assert [prompt_of(p) for p in recorder.prompts] == [(lang, K.QUESTION)] * 2
    assert (llm.stats.input_tokens, llm.stats.output_tokens) == (70, 7)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_failing_model_falls_back_with_nothing_lost(pages: dict[str, str], lang: str) -> None:
    chunks = core_chunks(pages[lang], lang)
    llm = generator(RunnableLambda(failing))
    reps = llm.generate(chunks)
    offline = generate_representations(chunks, defaults=DEFAULT_KINDS)  # a model's kinds, made offline
    assert keys(reps) == keys(offline)
    assert [r.text for r in reps] == [r.text for r in offline]
    assert all(r.fallback for r in model_reps(reps))
    failed = {(chunk_id, kind) for chunk_id, kind, _ in llm.stats.failures}
    assert {(r.chunk_id, r.kind.value) for r in model_reps(reps)} <= failed
    assert {error for _, _, error in llm.stats.failures} == {"RuntimeError: model down"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_cached_second_run_calls_no_model(pages: dict[str, str], lang: str) -> None:
    chunks = core_chunks(pages[lang], lang)
    with RepresentationCache() as cache:
        first_model, second_model = ScriptedChatModel(), ScriptedChatModel()
        first = generate_representation_documents(chunks, model=first_model, cache=cache)
        second = generate_representation_documents(chunks, model=second_model, cache=cache)
    assert first_model.received
    assert second_model.received == []
    assert second == first


def test_a_wrapped_model_keeps_its_identity(pages: dict[str, str]) -> None:
    chunks = core_chunks(pages["en"], "en")
    docs = generate_representation_documents(
        chunks, model=LangChainModel(ScriptedChatModel(), identity="mine")
    )
    assert {d.metadata["generator"] for d in docs if d.metadata["representation"] != "raw"} == {"mine"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_async_generation_matches_sync(pages: dict[str, str], lang: str) -> None:
    chunks = core_chunks(pages[lang], lang)
    model = ScriptedChatModel()
    sync = generator(model).generate(chunks)
    calls = len(model.received)
    llm = generator(model)
    assert asyncio.run(llm.agenerate(chunks)) == sync
    assert len(model.received) == 2 * calls
    assert asyncio.run(agenerate_representation_documents(chunks, model=model)) == (
        representations_to_documents(sync)
    )


@pytest.mark.parametrize("supports_images", [True, False])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_picture_chunks_send_images_to_a_vision_model(
    pages: dict[str, str], lang: str, supports_images: bool
) -> None:
    # A small budget gives the recovery page's screenshots chunks of their own.
    pictures = [c for c in core_chunks(pages[lang], lang, chunk_size=50) if c.chunk_type is ChunkType.PICTURE]
    assert pictures
    model = ScriptedChatModel()
    asked: list[str] = []

    def load_images(chunk: Chunk) -> Sequence[ImagePart]:
        asked.append(chunk.chunk_id)
        return (ImagePart(data=PNG, url=None, mime_type="image/png"),)

    llm = LLMGenerator(
        LangChainModel(model, supports_images=supports_images),
        image_loader=load_images,
        retries=1,
        backoff=0.0,
    )
    reps = llm.generate(pictures)
    captions = [r.text for r in reps if r.kind is K.IMAGE_CAPTION]
    assert captions == [REPLIES[K.IMAGE_CAPTION, lang][1][0]] * len(pictures)
    # The raw text beside it, so the picture is found where captions weigh nothing.
    assert [r.text for r in reps if r.kind is K.RAW] == [c.text for c in pictures]
    image_blocks = [
        [b for b in messages[1].content_blocks if b["type"] == "image"] for messages in model.received
    ]
    expected = [{"type": "image", "base64": base64.b64encode(PNG).decode(), "mime_type": "image/png"}]
    assert image_blocks == [expected if supports_images else []] * len(pictures)


# --- documents and MultiVectorRetriever -----------------------------------------------------


def test_documents_carry_the_representation() -> None:
    rep = Representation(
        chunk_id="c1",
        kind=K.TABLE_SUMMARY,
        text="A table.",
        index=0,
        generator="g",
        metadata={"row_count": 3},
    )
    [doc] = representations_to_documents([rep], metadata={"tenant": "t", "row_count": 0})
    assert doc.id == rep.representation_id
    assert doc.page_content == "A table."
    assert doc.metadata == {
        "tenant": "t",
        "row_count": 3,
        "doc_id": "c1",
        "representation": "table_summary",
        "representation_index": 0,
        "generator": "g",
        "fallback": False,
    }


@pytest.mark.parametrize("lang", LANGUAGES)
def test_split_documents_give_the_representations_of_their_chunks(pages: dict[str, str], lang: str) -> None:
    docs = split(pages[lang], lang)
    chunks = core_chunks(pages[lang], lang)
    assert [d.id for d in docs] == [c.chunk_id for c in chunks]
    # A document is its chunk as far as the metadata tells (see chunk_from_metadata).
    described = [_without_unstored(c) for c in chunks]
    assert generate_representation_documents(docs) == generate_representation_documents(described)
    from_docs = generate_representation_documents(docs, model=ScriptedChatModel())
    assert from_docs == representations_to_documents(generator(ScriptedChatModel()).generate(described))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_split_documents_are_as_good_as_their_chunks(pages: dict[str, str], lang: str) -> None:
    chunks = core_chunks(pages[lang], lang)
    docs = split(pages[lang], lang)
    assert generate_representation_documents(docs) == generate_representation_documents(chunks)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_multi_vector_retriever_returns_the_raw_chunk(pages: dict[str, str], lang: str) -> None:
    chunk_docs = split(pages[lang], lang)
    rep_docs = generate_representation_documents(chunk_docs)
    retriever = MultiVectorRetriever(
        vectorstore=InMemoryVectorStore(DeterministicFakeEmbedding(size=64)),
        docstore=InMemoryStore(),
        id_key="doc_id",
    )
    retriever.vectorstore.add_documents(rep_docs)
    retriever.docstore.mset([(d.id, d) for d in chunk_docs])
    by_id = {d.id: d for d in chunk_docs}
    # The fake embedding is a hash of the text: a representation's own text finds it first,
    # so each kind is checked with a text no other chunk's representation shares.
    texts = Counter(d.page_content for d in rep_docs)
    for kind in {d.metadata["representation"] for d in rep_docs}:
        rep = next(d for d in rep_docs if d.metadata["representation"] == kind and texts[d.page_content] == 1)
        found = retriever.invoke(rep.page_content)
        assert found[0] == by_id[rep.metadata["doc_id"]]
        assert len({d.id for d in found}) == len(found)

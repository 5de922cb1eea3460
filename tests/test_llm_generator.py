"""The model-backed generator, driven by a fake model: order, concurrency, cache, retries, fallback."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from procedure_rag import ProcedureChunker
from procedure_rag._models.text_model import ImagePart, Message, ModelReply, TextModel
from procedure_rag._representations.cache import RepresentationCache
from procedure_rag._representations.llm.generator import GenerationStats, LLMGenerator
from procedure_rag._representations.llm.prompts import (
    PROMPT_TEXTS,
    PROMPT_VERSION,
    build_prompt,
    prompt_digest,
)
from procedure_rag._representations.offline.generator import DeterministicGenerator, default_kinds
from procedure_rag._representations.types import Representation, RepresentationKind
from procedure_rag._types import Chunk, ChunkType

K = RepresentationKind

# What a well-behaved model writes, per language and kind.
GOOD_REPLIES: dict[tuple[str, RepresentationKind], str] = {
    (
        "en",
        K.SUMMARY,
    ): "How to restart, reset or reflash HoloLens 2 when it stops responding, at 20 to 40 percent.",
    ("en", K.QUESTION): (
        "1. How do I restart a frozen HoloLens 2?\n2. What is the difference between reset and reflash?\n"
        "3. How much battery does HoloLens 2 need before recovery?"
    ),
    ("en", K.KEYWORDS): "- HoloLens 2\n- restart\n- reflash\n- Advanced Recovery Companion",
    ("en", K.TABLE_SUMMARY): "The table lists the HoloLens 2 recovery options and when each applies.",
    ("en", K.CODE_DOCSTRING): "Runs the HoloLens 2 network command and prints its result.",
    (
        "en",
        K.IMAGE_CAPTION,
    ): "HoloLens 2 recovery figure\nThe figure shows the device buttons and the recovery flow.",
    (
        "ja",
        K.SUMMARY,
    ): "HoloLens 2 が応答しないときに再起動・リセット・再フラッシュする手順と、バッテリ残量 20〜40% の条件。",
    ("ja", K.QUESTION): (
        "1. HoloLens 2 が固まったときはどう再起動しますか？\n2. リセットと再フラッシュの違いは何ですか？\n"
        "3. 回復の前にバッテリはどれくらい必要ですか？"
    ),
    ("ja", K.KEYWORDS): "- HoloLens 2\n- 再起動\n- 再フラッシュ\n- バッテリ",
    ("ja", K.TABLE_SUMMARY): "更新日時ごとのリリースと更新内容を一覧にした表で、最新は 2nd Release です。",
    (
        "ja",
        K.CODE_DOCSTRING,
    ): "リポジトリのフォルダ構成を示し、設定ファイルとソースコードの置き場所を説明します。",
    ("ja", K.IMAGE_CAPTION): "キービジュアル\nダッシュボードと 3D 都市モデルの全体像を示す図です。",
}
ITEMS_PER_KIND = {K.QUESTION: 3}


class RateLimitError(Exception):
    """What a provider SDK raises on HTTP 429."""


def asked(messages: Sequence[Message]) -> tuple[str, RepresentationKind]:
    """The language and kind a prompt asks for, read back from its wording."""
    system, user = messages
    for language, texts in PROMPT_TEXTS.items():
        if system.text == texts.system:
            kind = next(k for k, instruction in texts.instructions.items() if instruction in user.text)
            return language, kind
    raise AssertionError(f"not one of our prompts: {system.text[:40]!r}")


def good(_n: int, messages: Sequence[Message]) -> str | BaseException:
    return GOOD_REPLIES[asked(messages)]


Behaviour = Callable[[int, Sequence[Message]], str | BaseException]


class FakeModel:
    """A TextModel that answers from a script, records its calls and how many overlap."""

    def __init__(
        self,
        behaviour: Behaviour = good,
        *,
        identity: str = "fake:model-1",
        supports_images: bool = False,
        delay: float = 0.0,
    ) -> None:
        self.identity = identity
        self.supports_images = supports_images
        self.behaviour = behaviour
        self.delay = delay
        self.calls: list[tuple[Message, ...]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    def _enter(self, messages: Sequence[Message]) -> int:
        with self._lock:
            self.calls.append(tuple(messages))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return len(self.calls) - 1

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _reply(self, n: int, messages: Sequence[Message]) -> ModelReply:
        outcome = self.behaviour(n, messages)
        if isinstance(outcome, BaseException):
            raise outcome
        return ModelReply(outcome, input_tokens=100, output_tokens=20)

    def complete(self, messages: Sequence[Message]) -> ModelReply:
        n = self._enter(messages)
        try:
            time.sleep(self.delay)
            return self._reply(n, messages)
        finally:
            self._leave()

    async def acomplete(self, messages: Sequence[Message]) -> ModelReply:
        n = self._enter(messages)
        try:
            await asyncio.sleep(self.delay)
            return self._reply(n, messages)
        finally:
            self._leave()


Run = Callable[[LLMGenerator, Sequence[Chunk]], list[Representation]]


@pytest.fixture(params=["sync", "async"])
def run(request: pytest.FixtureRequest) -> Run:
    """Run a generator the sync way (threads) or the async way (event loop)."""
    if request.param == "sync":
        return lambda generator, chunks: generator.generate(chunks)
    return lambda generator, chunks: asyncio.run(generator.agenerate(chunks))


def _chunks_of(path: Path) -> list[Chunk]:
    return ProcedureChunker().chunk(path.read_text(encoding="utf-8"), source_id=path.name)


@pytest.fixture(scope="module")
def recovery_chunks(tests_data: Path) -> list[Chunk]:
    """Every chunk (children and parents) of the HoloLens recovery page, English then Japanese."""
    pages = [tests_data / "hololens" / language / "hololens-recovery.md" for language in ("en", "ja")]
    return [chunk for page in pages for chunk in _chunks_of(page)]


@pytest.fixture(scope="module")
def few_chunks(recovery_chunks: list[Chunk]) -> list[Chunk]:
    """One English and one Japanese child chunk."""
    return [
        next(c for c in recovery_chunks if c.language == lang and c.level == "child") for lang in ("en", "ja")
    ]


@pytest.fixture(scope="module")
def picture_page_chunks(tests_data: Path) -> list[Chunk]:
    """A Japanese README with a picture, tables and code, each in a chunk of its own."""
    page = tests_data / "ja-native" / "areamanagement-dashboard-tool" / "_license_evidence" / "README.md"
    chunks = _chunks_of(page)
    assert {ChunkType.PICTURE, ChunkType.TABLE, ChunkType.CODE} <= {c.chunk_type for c in chunks}
    return chunks


def pairs(chunks: Sequence[Chunk]) -> list[tuple[str, RepresentationKind]]:
    return [(c.chunk_id, kind) for c in chunks for kind in default_kinds(c)]


def model_pairs(chunks: Sequence[Chunk]) -> list[tuple[str, RepresentationKind]]:
    return [pair for pair in pairs(chunks) if pair[1] is not K.RAW]


def distinct_prompts(chunks: Sequence[Chunk]) -> int:
    """How many different prompts the chunks need (a parent holding one child asks what it asks)."""
    return len(
        {prompt_digest(build_prompt(c, k)) for c in chunks for k in default_kinds(c) if k is not K.RAW}
    )


def seen_pairs(reps: Sequence[Representation]) -> list[tuple[str, RepresentationKind]]:
    """(chunk, kind) in the order they first appear."""
    return list(dict.fromkeys((r.chunk_id, r.kind) for r in reps))


def generator(model: TextModel, **options: object) -> LLMGenerator:
    options = {"backoff": 0.001, **options}
    return LLMGenerator(model, **options)  # type: ignore[arg-type]


# -- the happy path ------------------------------------------------------------------------


def test_every_chunk_gets_every_kind_in_order(run: Run, recovery_chunks: list[Chunk]) -> None:
    model = FakeModel()
    gen = generator(model)
    reps = run(gen, recovery_chunks)

    assert seen_pairs(reps) == pairs(recovery_chunks)
    by_chunk = {c.chunk_id: c for c in recovery_chunks}
    for rep in reps:
        chunk = by_chunk[rep.chunk_id]
        if rep.kind is K.RAW:
            assert (rep.text, rep.generator) == (chunk.text, "deterministic")
            continue
        assert (rep.generator, rep.fallback) == ("fake:model-1", False)
        assert rep.metadata == {"prompt_version": PROMPT_VERSION}
    questions = [r for r in reps if r.kind is K.QUESTION]
    assert [r.index for r in questions[:3]] == [0, 1, 2]
    assert len(questions) == 3 * sum(1 for _, kind in pairs(recovery_chunks) if kind is K.QUESTION)

    calls = distinct_prompts(recovery_chunks)
    assert len(model.calls) == calls
    assert len(set(model.calls)) == calls  # no prompt sent twice
    assert gen.stats == GenerationStats(
        chunks=len(recovery_chunks),
        representations=len(reps),
        calls=calls,
        written=len(model_pairs(recovery_chunks)),
        reused=len(model_pairs(recovery_chunks)) - calls,
        input_tokens=100 * calls,
        output_tokens=20 * calls,
        elapsed=gen.stats.elapsed,
    )
    assert gen.stats.reused > 0  # parents holding a single child


def test_prompts_follow_the_chunk_language(recovery_chunks: list[Chunk]) -> None:
    model = FakeModel()
    generator(model).generate(recovery_chunks)
    by_prompt = {
        build_prompt(c, k): c.language for c in recovery_chunks for k in default_kinds(c) if k is not K.RAW
    }
    assert [asked(call)[0] for call in model.calls] == [by_prompt[call] for call in model.calls]
    assert {asked(call)[0] for call in model.calls} == {"en", "ja"}


def test_raw_never_calls_the_model(run: Run, recovery_chunks: list[Chunk]) -> None:
    model = FakeModel()
    raw_only = {ChunkType.PROCEDURE: (K.RAW,), ChunkType.TEXT: (K.RAW,)}
    reps = run(generator(model, kinds=raw_only), recovery_chunks)
    assert model.calls == []
    assert [r.text for r in reps] == [c.text for c in recovery_chunks]


@pytest.mark.parametrize(
    ("kind", "chunk_type"), [(K.STEP, ChunkType.PROCEDURE), (K.SENTENCE, ChunkType.TEXT)]
)
def test_step_and_sentence_vectors_never_call_the_model(
    run: Run, recovery_chunks: list[Chunk], kind: RepresentationKind, chunk_type: ChunkType
) -> None:
    # A step's or a sentence's text is the chunk's own (its section and its words), as raw is.
    # Sentences asked for alone stand in for the raw text, which a chunk they do not cover
    # gets instead (a raw text too, made offline).
    model = FakeModel()
    others = ChunkType.TEXT if chunk_type is ChunkType.PROCEDURE else ChunkType.PROCEDURE
    kinds = {chunk_type: (kind,), others: ()}
    reps = run(generator(model, kinds=kinds), recovery_chunks)
    assert model.calls == []
    expected = DeterministicGenerator(kinds=kinds).generate
    held = [c for c in recovery_chunks if c.chunk_type is chunk_type]
    assert [r.text for r in reps] == [r.text for c in held for r in expected(c)]
    assert any(r.kind is kind for r in reps)
    allowed = {kind, K.RAW} if kind is K.SENTENCE else {kind}
    assert all(r.kind in allowed and not r.fallback for r in reps)


@pytest.mark.parametrize("limit", [1, 3])
def test_concurrency_limit_is_held(run: Run, recovery_chunks: list[Chunk], limit: int) -> None:
    model = FakeModel(delay=0.02)
    chunks = recovery_chunks[:6]
    reps = run(generator(model, max_concurrency=limit), chunks)
    assert model.max_in_flight == limit  # reached, never passed
    assert seen_pairs(reps) == pairs(chunks)


def test_timed_out_calls_keep_their_slot(few_chunks: list[Chunk]) -> None:
    # A sync call past its timeout cannot be stopped: it holds its slot until the model
    # returns, so retries never push more calls onto the model than the limit.
    model = FakeModel(delay=0.15)
    gen = generator(model, max_concurrency=2, retries=1, timeout=0.05)
    reps = gen.generate(few_chunks)
    assert model.max_in_flight == 2
    assert seen_pairs(reps) == pairs(few_chunks)
    assert gen.stats.fallbacks == len(model_pairs(few_chunks))
    assert all("TimeoutError" in message for _, _, message in gen.stats.failures)


def test_summary_line() -> None:
    stats = GenerationStats(
        chunks=2,
        representations=9,
        calls=7,
        written=5,
        cache_hits=1,
        retries=2,
        fallbacks=1,
        input_tokens=5,
        output_tokens=3,
    )
    assert stats.summary() == (
        "9 representations of 2 chunks: 5 written by the model, 1 cache hits, 1 fallbacks; "
        "7 model calls, 2 retries, tokens 5 in / 3 out, 0.0s"
    )


def test_progress_bar_counts_every_pair(
    recovery_chunks: list[Chunk], capsys: pytest.CaptureFixture[str]
) -> None:
    chunks = recovery_chunks[:3]
    generator(FakeModel(), progress=True).generate(chunks)
    total = distinct_prompts(chunks)
    assert f"{total}/{total}" in capsys.readouterr().err


# -- the cache -------------------------------------------------------------------------------


def test_second_run_is_served_from_the_cache(run: Run, recovery_chunks: list[Chunk], tmp_path: Path) -> None:
    path = tmp_path / "representations.sqlite"
    prompts, jobs = distinct_prompts(recovery_chunks), len(model_pairs(recovery_chunks))
    with RepresentationCache(path) as cache:
        first_model = FakeModel()
        gen = generator(first_model, cache=cache)
        first = run(gen, recovery_chunks)
        assert len(cache) == prompts

        again = run(gen, recovery_chunks)
        assert (len(first_model.calls), gen.stats.calls, gen.stats.cache_hits) == (prompts, 0, jobs)
        assert again == first

    # A new process: a new generator over the same file makes no model call either.
    with RepresentationCache(path) as reopened:
        fresh_model = FakeModel()
        fresh = generator(fresh_model, cache=reopened)
        assert run(fresh, recovery_chunks) == first
        assert (fresh_model.calls, fresh.stats.cache_hits) == ([], jobs)


@pytest.mark.parametrize(
    ("change", "asked_again"),
    [
        pytest.param(
            lambda c: [replace(c[0], text=c[0].text + " More."), *c[1:]], "first", id="changed-chunk"
        ),
        pytest.param(lambda c: c, "none", id="unchanged"),
    ],
)
def test_only_changed_chunks_are_asked_again(
    recovery_chunks: list[Chunk], change: Callable[[list[Chunk]], list[Chunk]], asked_again: str
) -> None:
    chunks = recovery_chunks[:4]
    cache = RepresentationCache()
    generator(FakeModel(), cache=cache).generate(chunks)
    model = FakeModel()
    generator(model, cache=cache).generate(change(chunks))
    expected = distinct_prompts(chunks[:1]) if asked_again == "first" else 0
    assert len(model.calls) == expected


def test_another_model_does_not_share_cached_outputs(recovery_chunks: list[Chunk]) -> None:
    chunks = recovery_chunks[:4]
    cache = RepresentationCache()
    generator(FakeModel(identity="fake:a"), cache=cache).generate(chunks)
    other = FakeModel(identity="fake:b")
    reps = generator(other, cache=cache).generate(chunks)
    assert len(other.calls) == distinct_prompts(chunks)
    assert {r.generator for r in reps if r.kind is not K.RAW} == {"fake:b"}


# -- failures --------------------------------------------------------------------------------


def always(outcome: str | BaseException) -> Behaviour:
    return lambda _n, _messages: outcome


FAILURES = [
    pytest.param(
        always(RuntimeError("connection reset")), 0.0, "RuntimeError: connection reset", id="exception"
    ),
    pytest.param(
        always(RateLimitError("429 Too Many Requests")), 0.0, "RateLimitError: 429", id="rate-limit"
    ),
    pytest.param(always(""), 0.0, "empty output", id="empty"),
    pytest.param(always("!!! ### ???"), 0.0, "output holds no words", id="garbage"),
    pytest.param(
        lambda _n, m: {
            "en": "I'm sorry, I cannot help with that.",
            "ja": "申し訳ありませんが、お手伝いできません。",
        }[asked(m)[0]],
        0.0,
        "the model declined",
        id="refusal",
    ),
    pytest.param(lambda _n, m: m[1].text.split("\n\n")[-2].split(":\n", 1)[1], 0.0, "echoes", id="echo"),
    pytest.param(good, 0.3, "TimeoutError: model call took longer than 0.05s", id="timeout"),
    pytest.param(
        always(TimeoutError("read timed out")),
        0.0,
        "TimeoutError: read timed out",
        id="the-model's-own-timeout",
    ),
]


@pytest.mark.parametrize(("behaviour", "delay", "error"), FAILURES)
def test_failing_model_falls_back_and_loses_nothing(
    run: Run, few_chunks: list[Chunk], behaviour: Behaviour, delay: float, error: str
) -> None:
    model = FakeModel(behaviour, delay=delay)
    gen = generator(model, retries=2, timeout=0.05, max_concurrency=16)
    reps = run(gen, few_chunks)

    assert seen_pairs(reps) == pairs(few_chunks)
    assert all(rep.fallback is (rep.kind is not K.RAW) for rep in reps)
    assert {rep.generator for rep in reps} == {"deterministic"}
    jobs = model_pairs(few_chunks)
    stats = gen.stats
    assert (stats.calls, stats.retries, stats.fallbacks) == (3 * len(jobs), 2 * len(jobs), len(jobs))
    assert sorted((chunk_id, kind) for chunk_id, kind, _ in stats.failures) == sorted(
        (chunk_id, kind.value) for chunk_id, kind in jobs
    )
    assert all(error in message for _, _, message in stats.failures), stats.failures


def test_wrong_language_is_rejected_then_falls_back(run: Run, few_chunks: list[Chunk]) -> None:
    english_only: Behaviour = lambda _n, m: GOOD_REPLIES[("en", asked(m)[1])]  # noqa: E731
    gen = generator(FakeModel(english_only), retries=1)
    reps = run(gen, few_chunks)
    japanese = {c.chunk_id for c in few_chunks if c.language == "ja"}
    fell_back = {r.chunk_id for r in reps if r.fallback}
    assert fell_back == japanese
    assert all("not in Japanese" in message for _, _, message in gen.stats.failures)


def test_transient_errors_are_retried_without_fallback(run: Run, recovery_chunks: list[Chunk]) -> None:
    def flaky(n: int, messages: Sequence[Message]) -> str | BaseException:
        return RateLimitError("429 slow down") if n < 3 else good(n, messages)

    chunks = recovery_chunks[:5]
    model = FakeModel(flaky)
    gen = generator(model, retries=3)
    reps = run(gen, chunks)
    jobs = distinct_prompts(chunks)
    assert not any(r.fallback for r in reps)
    assert (gen.stats.calls, gen.stats.retries, gen.stats.fallbacks, gen.stats.failures) == (
        jobs + 3,
        3,
        0,
        [],
    )


def test_fallbacks_are_not_cached(few_chunks: list[Chunk]) -> None:
    cache = RepresentationCache()
    generator(FakeModel(always(RuntimeError("down"))), cache=cache, retries=0).generate(few_chunks)
    assert len(cache) == 0
    model = FakeModel()
    generator(model, cache=cache).generate(few_chunks)
    assert len(model.calls) == distinct_prompts(few_chunks)


def test_failures_are_logged(few_chunks: list[Chunk], caplog: pytest.LogCaptureFixture) -> None:
    generator(FakeModel(always(RuntimeError("down"))), retries=0).generate(few_chunks)
    assert "fallbacks used" in caplog.text


# -- images --------------------------------------------------------------------------------


@pytest.mark.parametrize("supports_images", [True, False])
def test_images_go_only_to_models_that_see_them(
    run: Run, picture_page_chunks: list[Chunk], supports_images: bool
) -> None:
    image = ImagePart(data=b"\xff\xd8jpeg", url=None, mime_type="image/jpeg")
    loaded: list[str] = []

    def load(chunk: Chunk) -> list[ImagePart]:
        loaded.append(chunk.chunk_id)
        return [image]

    model = FakeModel(supports_images=supports_images)
    reps = run(generator(model, image_loader=load), picture_page_chunks)

    caption_calls = [call for call in model.calls if asked(call)[1] is K.IMAGE_CAPTION]
    other_calls = [call for call in model.calls if asked(call)[1] is not K.IMAGE_CAPTION]
    assert caption_calls
    assert all(call[1].images == ((image,) if supports_images else ()) for call in caption_calls)
    assert all(not message.images for call in other_calls for message in call)
    captioned = sorted(r.chunk_id for r in reps if r.kind is K.IMAGE_CAPTION)
    assert sorted(loaded) == (captioned if supports_images else [])
    no_image_note = PROMPT_TEXTS["ja"].no_image_note
    assert all((no_image_note in call[1].text) is not supports_images for call in caption_calls)


# -- options -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_concurrency": 0}, "max_concurrency must be an int >= 1, got 0"),
        ({"max_concurrency": 2.5}, "max_concurrency must be an int >= 1, got 2.5"),
        ({"retries": -1}, "retries must be an int >= 0, got -1"),
        ({"backoff": -0.1}, "backoff must be a number of seconds >= 0, got -0.1"),
        ({"timeout": 0}, "timeout must be a number of seconds > 0, got 0"),
    ],
)
def test_options_are_validated(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        LLMGenerator(FakeModel(), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("model", "error", "message"),
    [
        (object(), TypeError, "model must implement TextModel"),
        (FakeModel(identity=""), ValueError, "model.identity must be a non-empty string"),
    ],
)
def test_model_is_checked(model: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        LLMGenerator(model)  # type: ignore[arg-type]

"""Model-backed representations: any chat model, concurrent, cached, retried, with a fallback.

The core talks to models through :class:`~procedure_rag._models.text_model.TextModel`, a
four-member protocol the LangChain and LlamaIndex adapters implement; nothing here imports
a framework.

For each chunk and each of its kinds (those
:func:`~procedure_rag._representations.offline.generator.default_kinds` gives, as the deterministic
generator does: its type's kinds, plus a table summary, docstring or caption when it
holds a table, code or a picture), :class:`LLMGenerator` takes the first of:

1. ``raw`` and ``step``: the chunk's own text (from the fallback generator, never a model);
2. the cache, when the same prompt went to the same model before;
3. the model, retried with exponential backoff and jitter (or as long as a
   rate-limit error's ``retry_after`` asks) on exceptions, timeouts and output that
   :func:`~procedure_rag._representations.llm.parse.parse_output` rejects (it also bounds and cleans
   what it accepts);
4. the fallback (deterministic) generator, marked ``fallback=True``, with the
   failure recorded in :attr:`LLMGenerator.stats`.

So a failing model never loses a chunk. A cached output is checked again before it
is served (:func:`~procedure_rag._representations.llm.parse.output_problem`); one that fails the
check is asked for again. A run is three passes: plan every chunk
and kind (raw, cache hit, or a prompt to send; identical prompts are sent once),
ask the model, assemble in chunk then kind order. Only the asking differs between
``generate`` (threads) and ``agenerate`` (the event loop); parsing, caching and
retry decisions are shared steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Protocol

from procedure_rag._models.text_model import ImagePart, Message, ModelReply, TextModel, retry_after
from procedure_rag._representations.cache import RepresentationCache
from procedure_rag._representations.llm.parse import output_problem, parse_output
from procedure_rag._representations.llm.prompts import PROMPT_VERSION, build_prompt, prompt_digest
from procedure_rag._representations.offline.generator import (
    DeterministicGenerator,
    default_kinds,
    generate_representations,
)
from procedure_rag._representations.types import Representation, RepresentationKind
from procedure_rag._types import Chunk, ChunkType

__all__ = [
    "GenerationStats",
    "LLMGenerator",
    "RepresentationCache",
    "RepresentationGenerator",
    "arepresent",
    "represent",
]

logger = logging.getLogger(__name__)

# The longest wait between two attempts, whatever the backoff and attempt number.
_MAX_DELAY = 60.0
# Kinds that are the chunk's own words, made offline whatever the model.
_OWN_TEXT = frozenset({RepresentationKind.RAW, RepresentationKind.STEP, RepresentationKind.SENTENCE})


class RepresentationGenerator(Protocol):
    """What the generator falls back to: :class:`~procedure_rag.DeterministicGenerator`."""

    @property
    def identity(self) -> str: ...

    def generate(self, chunk: Chunk, kinds: Sequence[RepresentationKind]) -> list[Representation]:
        """The representations of ``chunk`` of the given kinds, in kind order."""
        ...


@dataclass(slots=True)
class GenerationStats:
    """What one :meth:`LLMGenerator.generate` (or ``agenerate``) run did.

    Attributes:
        chunks: Chunks processed.
        representations: Representations returned.
        calls: Model calls made, failed attempts included.
        written: Chunk-kind pairs filled in from a model reply of this run (each pair
            counts, also when several share one prompt).
        cache_hits: Chunk-kind pairs served from the cache.
        reused: Chunk-kind pairs whose prompt another pair of the run sent too (a
            parent holding a single child asks what the child asks): one call serves both.
        retries: Attempts after a failed one.
        fallbacks: Chunk-kind pairs the fallback generator filled in.
        failures: ``(chunk_id, kind, error)`` for every fallback: the last error seen.
        input_tokens / output_tokens: Token usage summed over the replies that report it.
        elapsed: Wall-clock seconds.
    """

    chunks: int = 0
    representations: int = 0
    calls: int = 0
    written: int = 0
    cache_hits: int = 0
    reused: int = 0
    retries: int = 0
    fallbacks: int = 0
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    elapsed: float = 0.0

    def summary(self) -> str:
        """One line for a log: where the representations came from, calls, tokens and time.

        ``written``, ``cache_hits`` and ``fallbacks`` add up to every chunk-kind pair that
        is not ``raw`` or ``step``.
        """
        line = (
            f"{self.representations} representations of {self.chunks} chunks: "
            f"{self.written} written by the model, {self.cache_hits} cache hits, "
            f"{self.fallbacks} fallbacks; {self.calls} model calls, {self.retries} retries"
        )
        if self.reused:
            line += f", {self.reused} reused"
        if self.input_tokens or self.output_tokens:
            line += f", tokens {self.input_tokens} in / {self.output_tokens} out"
        return f"{line}, {self.elapsed:.1f}s"


# The texts a model wrote for a job, or the error that ended its last attempt.
_Outcome = tuple[str, ...] | Exception


@dataclass(frozen=True, slots=True)
class _Job:
    """A chunk-kind pair that needs the model: its prompt and cache key."""

    chunk: Chunk
    kind: RepresentationKind
    messages: tuple[Message, ...]
    key: str


class LLMGenerator:
    """Representations written by a model, for many chunks at once.

    Args:
        model: The model (see :class:`TextModel`; the framework adapters wrap theirs).
        kinds: Kinds per chunk type, overriding :data:`DEFAULT_KINDS` per type; a
            type named here gets exactly these kinds (no content kinds added).
        cache: Where model outputs are kept across runs; ``None`` keeps nothing.
        max_concurrency: Most model calls in flight at once.
        retries: Attempts after the first one fails, per prompt.
        backoff: Seconds before the first retry; doubled for every further one,
            with random jitter (between half and all of the delay). A failure that
            says how long to wait (a rate-limit error's ``retry_after``, or a
            ``Retry-After`` header on its ``response``) waits at least that long; no
            wait is longer than a minute.
        timeout: Seconds one model call may take (and a sync call may wait for a
            free slot).
        fallback: Fills in when the model fails, and supplies ``raw``; ``None``
            uses :class:`~procedure_rag.DeterministicGenerator`.
        image_loader: The images of a chunk that gets an image caption (a picture,
            or a procedure with a screenshot); sent with its prompt when the model
            ``supports_images``, not even loaded otherwise.
        progress: Show a progress bar (tqdm) while generating.

    Attributes:
        identity: The model's identity; the ``generator`` of model-made representations.
        stats: What the last run did (:class:`GenerationStats`), replaced by every run.
            Runs of one generator should not overlap.

    Raises:
        TypeError: When ``model`` does not implement :class:`TextModel`.
        ValueError: For an out-of-range option or an empty model identity.
    """

    def __init__(
        self,
        model: TextModel,
        *,
        kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
        cache: RepresentationCache | None = None,
        max_concurrency: int = 4,
        retries: int = 3,
        backoff: float = 0.5,
        timeout: float = 60.0,
        fallback: RepresentationGenerator | None = None,
        image_loader: Callable[[Chunk], Sequence[ImagePart]] | None = None,
        progress: bool = False,
    ) -> None:
        if not isinstance(model, TextModel):
            msg = (
                "model must implement TextModel (identity, supports_images, complete, acomplete), "
                f"got {type(model).__name__}"
            )
            raise TypeError(msg)
        if not isinstance(model.identity, str) or not model.identity:
            msg = "model.identity must be a non-empty string (it is part of every cache key)"
            raise ValueError(msg)
        _check_count("max_concurrency", max_concurrency, minimum=1)
        _check_count("retries", retries, minimum=0)
        if isinstance(backoff, bool) or not isinstance(backoff, int | float) or not backoff >= 0:
            msg = f"backoff must be a number of seconds >= 0, got {backoff!r}"
            raise ValueError(msg)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            msg = f"timeout must be a number of seconds > 0, got {timeout!r}"
            raise ValueError(msg)
        if fallback is None:
            fallback = DeterministicGenerator(kinds=kinds)
        self._model = model
        self._kinds = kinds
        self._cache = cache
        self._max_concurrency = max_concurrency
        self._retries = retries
        self._backoff = backoff
        self._timeout = timeout
        self._fallback = fallback
        self._image_loader = image_loader
        self._progress = progress
        self._random = random.Random()  # noqa: S311 - jitter, not cryptography
        self._lock = threading.Lock()
        self.identity: str = model.identity
        self.stats = GenerationStats()
        self._started = 0.0

    def __repr__(self) -> str:
        return (
            f"LLMGenerator(identity={self.identity!r}, max_concurrency={self._max_concurrency}, "
            f"retries={self._retries}, cache={self._cache!r})"
        )

    def generate(self, chunks: Sequence[Chunk]) -> list[Representation]:
        """The representations of ``chunks``, in chunk order, then kind order.

        Model calls run on a thread pool, at most ``max_concurrency`` at once; a call
        that times out keeps its slot until the model returns. :attr:`stats`
        describes this run afterwards.

        Raises:
            Exception: Whatever ``image_loader`` or the fallback generator raises;
                model failures are never raised, they fall back.
        """
        plan = self._start(chunks)
        jobs = _unique_jobs(plan)
        slots = threading.BoundedSemaphore(self._max_concurrency)
        callers = ThreadPoolExecutor(self._max_concurrency, thread_name_prefix="procedure-rag-llm")
        workers = ThreadPoolExecutor(self._max_concurrency, thread_name_prefix="procedure-rag-job")
        try:
            with self._progress_bar(len(jobs)) as advance:

                def ask(job: _Job) -> _Outcome:
                    outcome = self._ask(job, call=lambda messages: self._call(messages, slots, callers))
                    advance()
                    return outcome

                outcomes = list(workers.map(ask, jobs))
        finally:
            workers.shutdown(wait=True, cancel_futures=True)
            # A model call past its timeout may still be running: do not wait for it.
            callers.shutdown(wait=False, cancel_futures=True)
        return self._end(plan, {job.key: outcome for job, outcome in zip(jobs, outcomes, strict=True)})

    async def agenerate(self, chunks: Sequence[Chunk]) -> list[Representation]:
        """The representations of ``chunks``, like :meth:`generate`, on the running event loop.

        Model calls run concurrently, at most ``max_concurrency`` at once (an
        :class:`asyncio.Semaphore`); a call past ``timeout`` is cancelled.

        Raises:
            Exception: Whatever ``image_loader`` or the fallback generator raises.
        """
        plan = self._start(chunks)
        jobs = _unique_jobs(plan)
        slots = asyncio.Semaphore(self._max_concurrency)
        with self._progress_bar(len(jobs)) as advance:

            async def ask(job: _Job) -> _Outcome:
                outcome = await self._aask(job, slots=slots)
                advance()
                return outcome

            outcomes = await asyncio.gather(*(ask(job) for job in jobs))
        return self._end(plan, {job.key: outcome for job, outcome in zip(jobs, outcomes, strict=True)})

    # -- the two drivers: the same steps, waiting the sync or the async way ----------

    def _ask(self, job: _Job, *, call: Callable[[Sequence[Message]], ModelReply]) -> _Outcome:
        """The texts the model wrote for ``job``, or the last error once retries are spent."""
        attempt = 0
        while True:
            try:
                texts = self._parse(job, call(job.messages))
            except Exception as exc:  # any model failure is retried, then falls back
                if not self._retry(exc, attempt):
                    return exc
                attempt += 1
                time.sleep(self._delay(attempt, exc))
                continue
            self._store(job, texts)
            return texts

    async def _aask(self, job: _Job, *, slots: asyncio.Semaphore) -> _Outcome:
        """Like :meth:`_ask`, awaiting the model and the backoff."""
        attempt = 0
        while True:
            try:
                texts = self._parse(job, await self._acall(job.messages, slots))
            except Exception as exc:  # any model failure is retried, then falls back
                if not self._retry(exc, attempt):
                    return exc
                attempt += 1
                await asyncio.sleep(self._delay(attempt, exc))
                continue
            self._store(job, texts)
            return texts

    def _call(
        self, messages: Sequence[Message], slots: threading.BoundedSemaphore, callers: ThreadPoolExecutor
    ) -> ModelReply:
        if not slots.acquire(timeout=self._timeout):
            msg = f"no free model slot within {self._timeout}s (earlier calls are still running)"
            raise TimeoutError(msg)
        self._count_call()
        try:
            future: Future[ModelReply] = callers.submit(self._model.complete, messages)
        except BaseException:
            slots.release()
            raise
        # The slot is freed when the model returns, not when we stop waiting for it.
        future.add_done_callback(lambda _: slots.release())
        try:
            return future.result(timeout=self._timeout)
        except TimeoutError:
            if future.done():  # the model's own timeout, not ours: keep its message
                raise
            msg = f"model call took longer than {self._timeout}s"
            raise TimeoutError(msg) from None

    async def _acall(self, messages: Sequence[Message], slots: asyncio.Semaphore) -> ModelReply:
        async with slots:
            self._count_call()
            task = asyncio.ensure_future(self._model.acomplete(messages))
            done, _ = await asyncio.wait({task}, timeout=self._timeout)
            if not done:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task  # the slot is free only once the call has really stopped
                msg = f"model call took longer than {self._timeout}s"
                raise TimeoutError(msg)
            return task.result()

    # -- the shared steps ---------------------------------------------------------------

    def _start(self, chunks: Sequence[Chunk]) -> list[list[Representation] | _Job]:
        """Reset :attr:`stats`; per chunk and kind, the finished representations or a job."""
        self.stats = GenerationStats(chunks=len(chunks))
        self._started = time.perf_counter()
        return [self._plan(chunk, kind) for chunk in chunks for kind in default_kinds(chunk, self._kinds)]

    def _plan(self, chunk: Chunk, kind: RepresentationKind) -> list[Representation] | _Job:
        """The chunk's own text (``raw``, ``step``, ``sentence``), a cached one, or a model's job."""
        if kind in _OWN_TEXT:
            return self._fallback.generate(chunk, (kind,))
        images: Sequence[ImagePart] = ()
        if kind is RepresentationKind.IMAGE_CAPTION and self._image_loader and self._model.supports_images:
            images = self._image_loader(chunk)
        messages = build_prompt(chunk, kind, images=images)
        key = RepresentationCache.make_key(
            kind=kind.value,
            prompt_version=PROMPT_VERSION,
            model_identity=self.identity,
            content_digest=prompt_digest(messages),
        )
        job = _Job(chunk, kind, messages, key)
        cached = self._cache.get(key) if self._cache is not None else None
        if cached is None:
            return job
        problem = output_problem(kind, cached)
        if problem is not None:  # a cache file is not trusted: ask again, overwrite the entry
            logger.warning("%s: cached %s output ignored: %s", self.identity, kind.value, problem)
            return job
        self.stats.cache_hits += 1
        return self._representations(job, cached)

    def _end(
        self, plan: Sequence[list[Representation] | _Job], outcomes: Mapping[str, _Outcome]
    ) -> list[Representation]:
        """The representations in plan order; failed jobs filled in by the fallback."""
        out: list[Representation] = []
        for step in plan:
            if not isinstance(step, _Job):
                out.extend(step)
                continue
            outcome = outcomes[step.key]
            if isinstance(outcome, Exception):
                out.extend(self._fall_back(step, outcome))
            else:
                self.stats.written += 1
                out.extend(self._representations(step, outcome))
        stats = self.stats
        stats.reused = sum(isinstance(step, _Job) for step in plan) - len(outcomes)
        stats.representations = len(out)
        stats.elapsed = time.perf_counter() - self._started
        if stats.failures:
            logger.warning("%s: the model failed, fallbacks used: %s", self.identity, stats.summary())
        else:
            logger.info("%s: %s", self.identity, stats.summary())
        return out

    def _parse(self, job: _Job, reply: ModelReply) -> tuple[str, ...]:
        """The texts in ``reply``; raises :class:`ValueError` for output to reject."""
        if not isinstance(reply, ModelReply):  # a TextModel written against the protocol's grain
            msg = f"the model returned a {type(reply).__name__}, not a ModelReply"
            raise TypeError(msg)
        with self._lock:
            self.stats.input_tokens += reply.input_tokens or 0
            self.stats.output_tokens += reply.output_tokens or 0
        return parse_output(job.kind, reply.text, source_text=job.chunk.text, language=job.chunk.language)

    def _store(self, job: _Job, texts: tuple[str, ...]) -> None:
        if self._cache is not None:
            self._cache.put(
                job.key,
                texts,
                kind=job.kind.value,
                prompt_version=PROMPT_VERSION,
                model_identity=self.identity,
            )

    def _retry(self, error: Exception, attempt: int) -> bool:
        """Whether to try again after ``error`` on attempt ``attempt`` (0 = the first)."""
        logger.debug("%s: attempt %d failed: %s", self.identity, attempt + 1, _describe(error))
        if attempt >= self._retries:
            return False
        with self._lock:
            self.stats.retries += 1
        return True

    def _count_call(self) -> None:
        with self._lock:
            self.stats.calls += 1

    def _representations(self, job: _Job, texts: Sequence[str]) -> list[Representation]:
        return [
            Representation(
                job.chunk.chunk_id,
                job.kind,
                text,
                index=index,
                generator=self.identity,
                metadata={"prompt_version": PROMPT_VERSION},
            )
            for index, text in enumerate(texts)
        ]

    def _fall_back(self, job: _Job, error: Exception) -> list[Representation]:
        reps = self._fallback.generate(job.chunk, (job.kind,))
        self.stats.fallbacks += 1
        self.stats.failures.append((job.chunk.chunk_id, job.kind.value, _describe(error)))
        return [replace(rep, fallback=True) for rep in reps]

    def _delay(self, attempt: int, error: Exception) -> float:
        """Seconds to wait before attempt ``attempt`` (1 = first retry) after ``error``.

        Exponential backoff with jitter, or the wait ``error`` asks for when longer;
        never more than :data:`_MAX_DELAY`.
        """
        delay = min(self._backoff * 2 ** (attempt - 1), _MAX_DELAY)
        jittered = self._random.uniform(delay / 2, delay)
        asked = retry_after(error)
        return min(max(jittered, asked or 0.0), _MAX_DELAY)

    @contextlib.contextmanager
    def _progress_bar(self, total: int) -> Iterator[Callable[[], None]]:
        """A callable that advances a progress bar (a no-op unless ``progress``)."""
        if not self._progress:
            yield _nothing
            return
        try:
            from tqdm.auto import tqdm  # type: ignore[import-untyped]  # noqa: PLC0415 - optional
        except ImportError as exc:
            msg = "progress=True needs tqdm: pip install 'procedure-rag[progress]'"
            raise ImportError(msg) from exc
        bar = tqdm(total=total, desc=f"representations ({self.identity})", unit="rep")
        lock = threading.Lock()

        def advance() -> None:
            with lock:
                bar.update(1)

        try:
            yield advance
        finally:
            bar.close()


def _nothing() -> None:
    return None


def _unique_jobs(plan: Sequence[list[Representation] | _Job]) -> list[_Job]:
    """The jobs of ``plan``, one per prompt: a parent holding one child asks what the child asks."""
    unique: dict[str, _Job] = {}
    for step in plan:
        if isinstance(step, _Job):
            unique.setdefault(step.key, step)
    return list(unique.values())


def _describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _check_count(name: str, value: int, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        msg = f"{name} must be an int >= {minimum}, got {value!r}"
        raise ValueError(msg)


def represent(
    chunks: Sequence[Chunk],
    *,
    model: TextModel | None = None,
    kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
    cache: RepresentationCache | None = None,
    max_concurrency: int = 4,
) -> list[Representation]:
    """The representations of ``chunks``: offline without a model, else through it.

    This is the one-call form both adapters use; for retries, timeouts, images or
    stats, build an :class:`LLMGenerator` directly.
    """
    if model is None:
        return generate_representations(chunks, kinds=kinds)
    return LLMGenerator(model, kinds=kinds, cache=cache, max_concurrency=max_concurrency).generate(chunks)


async def arepresent(
    chunks: Sequence[Chunk],
    *,
    model: TextModel | None = None,
    kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
    cache: RepresentationCache | None = None,
    max_concurrency: int = 4,
) -> list[Representation]:
    """The async twin of :func:`represent` (model calls with ``acomplete``)."""
    if model is None:
        return generate_representations(chunks, kinds=kinds)
    generator = LLMGenerator(model, kinds=kinds, cache=cache, max_concurrency=max_concurrency)
    return await generator.agenerate(chunks)

"""The load tests' parts: the corpus and its versions, the writer's cycle, the readers, the checks.

Shared by tests/test_load.py (32 threads in one process beside a writer),
tests/test_serving_machines.py (readers and a writer in processes of their own, on a
Chroma server and a PostgreSQL docstore) and the processes they start
(tests/load_processes.py). The checks are those test_load.py's
docstring describes: every answer a complete raw chunk of some version, none stale once
a write call returned; and every read of the docstore sees each source whole.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from langchain_procedures import ProcedureMultiVectorRetriever as LangChainRetriever
from llama_index_procedures import ProcedureMultiVectorRetriever as LlamaIndexRetriever
from procedure_rag import ProcedureChunker, chunk_metadata
from procedure_rag._chroma.index import ChromaIndex
from procedure_rag._retrieval.retrieve import LEXICAL_KIND, RetrievalOptions
from procedure_rag._store.chunk_store import StoredChunk
from procedure_rag._store.opening import open_docstore
from procedure_rag._store.writer import make_representations, stored_chunk

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
K = 5
READERS = 32
#: Keys a result adds to the chunk's own metadata (see procedure_rag._retrieval.retrieve.Retrieved).
RESULT_KEYS = frozenset({"score", "matched", "routing", "expanded_from"})
QUESTIONS = (
    "How do I hard-restart HoloLens 2?",
    "What do I do if the device won't start?",
    "How do I reset the device?",
    "How do I clean-reflash HoloLens with ARC?",
    "HoloLens 2 を再起動するには？",
    "グループを作成するには？",
    "ページを削除するには？",
    "削除したページを復元する方法",
    "ユーザーをグループに追加する",
    "閲覧権限を設定する",
)

CHANGED = "en-hololens-recovery.md"
STEADY = "ja-group.md"
TOGGLED = "ja-page_operation.md"
PAGES = {
    CHANGED: "hololens/en/hololens-recovery.md",
    STEADY: "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md",
    TOGGLED: "ja-native/growi-docs/docs/ja/guide/features/page_operation.md",
}


def _edited(text: str) -> str:
    """The changed page: one step reworded, the last section gone (as the crash tests edit it)."""
    changed = text.replace("for 15 seconds", "for 20 seconds")
    return changed.partition("## Download ARC without using the app store")[0]


def _chunks(name: str, text: str) -> tuple[StoredChunk, ...]:
    return tuple(
        stored_chunk(c.text, chunk_metadata(c, {"source": name}))
        for c in ProcedureChunker().chunk(text, source_id=name)
    )


# ----- the writer's cycle and what each state of the index holds ---------------------------


@dataclass(frozen=True)
class Corpus:
    """Every version of every page."""

    versions: Mapping[str, tuple[StoredChunk, ...]]  # "<name>@v1" / "<name>@v2" -> chunks

    def chunks(self, state: Sequence[str]) -> list[StoredChunk]:
        return [chunk for version in state for chunk in self.versions[version]]

    @cached_property
    def by_id(self) -> dict[str, list[StoredChunk]]:
        """Chunk id -> every version of that chunk (same text: the id hashes it; metadata may differ)."""
        found: dict[str, list[StoredChunk]] = {}
        for chunks in self.versions.values():
            for chunk in chunks:
                found.setdefault(chunk.chunk_id, []).append(chunk)
        return found

    def ids_of(self, name: str) -> frozenset[str]:
        """Every chunk id any version of source ``name`` has."""
        return frozenset(
            chunk.chunk_id
            for version, chunks in self.versions.items()
            if version.partition("@")[0] == name
            for chunk in chunks
        )


def load_corpus() -> Corpus:
    versions = {}
    for name, page in PAGES.items():
        text = (DATA / page).read_text(encoding="utf-8")
        versions[f"{name}@v1"] = _chunks(name, text)
        if name == CHANGED:
            versions[f"{name}@v2"] = _chunks(name, _edited(text))
    return Corpus(versions)


#: The index's states: the start, then after each step of the cycle (back to the start).
START = (f"{CHANGED}@v1", f"{STEADY}@v1", f"{TOGGLED}@v1")
CYCLE: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    # (what the step does, the versions it writes, the state after it)
    ("re-add all, one page changed", (f"{CHANGED}@v2", f"{STEADY}@v1", f"{TOGGLED}@v1"),
     (f"{CHANGED}@v2", f"{STEADY}@v1", f"{TOGGLED}@v1")),
    ("delete one", (), (f"{CHANGED}@v2", f"{STEADY}@v1")),
    ("re-add, the page changed back", (f"{CHANGED}@v1", f"{STEADY}@v1"), (f"{CHANGED}@v1", f"{STEADY}@v1")),
    ("add one", (f"{TOGGLED}@v1",), START),
)  # fmt: skip


@dataclass(frozen=True)
class Expected:
    """What a state of the index holds, as the checks need it."""

    chunks: Mapping[str, str]  # chunk id -> metadata JSON (sorted keys)
    representations: frozenset[tuple[str, str, str]]  # (chunk id, kind, text)


def expected_state(corpus: Corpus, state: Sequence[str]) -> Expected:
    chunks = corpus.chunks(state)
    representations = frozenset(
        (rep.chunk_id, rep.kind.value, rep.text) for rep in make_representations(chunks, None)
    )
    return Expected({c.chunk_id: _json(c.metadata) for c in chunks}, representations)


def _json(metadata: Mapping[str, object]) -> str:
    return json.dumps(dict(metadata), sort_keys=True, ensure_ascii=False)


def digest(metadata: Mapping[str, object]) -> str:
    """A short hash of a chunk's metadata JSON (snapshots carry this, not the metadata)."""
    return hashlib.sha256(_json(metadata).encode("utf-8")).hexdigest()[:16]


def all_states(corpus: Corpus) -> list[Expected]:
    """What the index holds in each state: the start, then after each step of the cycle."""
    return [expected_state(corpus, START)] + [expected_state(corpus, after) for _, _, after in CYCLE]


@dataclass
class Step:
    """One write call: when it began and ended (``time.monotonic``), and the state it leaves."""

    began: float
    state: int
    ended: float = float("inf")


@dataclass
class WriterLog:
    """The writer's calls, in order; the index is in state 0 before the first."""

    steps: list[Step] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def valid_states(self, started: float, finished: float) -> set[int]:
        """The states a query running from ``started`` to ``finished`` may see.

        The state the last call finished before the query started left, and the states
        of every later call that began before the query finished (it may see them in part).
        """
        with self.lock:
            steps = list(self.steps)
        states = {0}
        for step in steps:  # in order: calls do not overlap
            if step.ended < started:
                states = {step.state}
            elif step.began < finished:
                states.add(step.state)
        return states


def run_writer(index: ChromaIndex, corpus: Corpus, log: WriterLog, *, seconds: float) -> int:
    """Go round the cycle until ``seconds`` have passed (at least once); return the calls made."""
    deadline = time.monotonic() + seconds
    calls = 0
    while True:
        for position, (_, writes, _) in enumerate(CYCLE, start=1):
            step = Step(began=time.monotonic(), state=position)
            with log.lock:
                log.steps.append(step)
            if writes:
                index.add(corpus.chunks(writes))
            else:
                index.delete(source_ids=[TOGGLED])
            step.ended = time.monotonic()
            calls += 1
        if time.monotonic() > deadline:
            return calls


def log_to_json(log: WriterLog) -> list[list[float]]:
    """The calls as ``[began, ended, state]`` (a writer process hands its log over so)."""
    return [[step.began, step.ended, step.state] for step in log.steps]


def log_from_json(rows: Sequence[Sequence[float]]) -> WriterLog:
    return WriterLog([Step(began=began, state=int(state), ended=ended) for began, ended, state in rows])


# ----- the readers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One query's results, as plain data: (chunk id, text, metadata, matched) per result."""

    reader: str
    question: str
    started: float
    finished: float
    results: tuple[tuple[str, str, dict[str, Any], list[dict[str, Any]]], ...]


#: ``question -> results``: one reader over its framework.
Ask = Callable[[str], tuple[tuple[str, str, dict[str, Any], list[dict[str, Any]]], ...]]


def _result(
    doc_id: str, text: str, metadata: Mapping[str, Any]
) -> tuple[str, str, dict[str, Any], list[Any]]:
    return doc_id, text, dict(metadata), json.loads(str(metadata["matched"]))


def core_reader(index: ChromaIndex) -> Ask:
    def ask(question: str) -> tuple[tuple[str, str, dict[str, Any], list[Any]], ...]:
        found = index.query(question, RetrievalOptions(k=K))
        return tuple(
            _result(item.doc_id, item.item.text, {**item.item.metadata, **item.metadata})
            for item in found.items
        )

    return ask


def langchain_reader(retriever: LangChainRetriever) -> Ask:
    def ask(question: str) -> tuple[tuple[str, str, dict[str, Any], list[Any]], ...]:
        return tuple(_result(str(d.id), d.page_content, d.metadata) for d in retriever.invoke(question))

    return ask


def llamaindex_reader(retriever: LlamaIndexRetriever) -> Ask:
    def ask(question: str) -> tuple[tuple[str, str, dict[str, Any], list[Any]], ...]:
        return tuple(
            _result(n.node.node_id, n.node.get_content(), n.node.metadata)
            for n in retriever.retrieve(question)
        )

    return ask


def reopening_reader(open_index: Callable[[], ChromaIndex]) -> Ask:
    """Opens a fresh index (its docstore's schema transaction runs beside the writer's) per query."""

    def ask(question: str) -> tuple[tuple[str, str, dict[str, Any], list[Any]], ...]:
        with open_index() as index:
            return core_reader(index)(question)

    return ask


@dataclass(frozen=True)
class Snapshot:
    """One read of every chunk id the corpus ever had, in one docstore call.

    Attributes:
        chunks: Chunk id -> :func:`digest` of its metadata, for the ids found.
    """

    reader: str
    started: float
    finished: float
    chunks: Mapping[str, str]


def snapshot_reader(location: str, corpus: Corpus) -> tuple[Callable[[], dict[str, str]], Callable[[], None]]:
    """What reads a :class:`Snapshot`'s chunks from the docstore at ``location``, and what closes it."""
    ids = sorted(corpus.by_id)
    store = open_docstore(location, create=False)

    def read() -> dict[str, str]:
        return {
            chunk_id: digest(found.metadata)
            for chunk_id, found in zip(ids, store.get(ids), strict=True)
            if found is not None
        }

    return read, store.close


@dataclass
class Load:
    """The readers' answers, docstore snapshots and failures, collected from every thread."""

    answers: list[Answer] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def read_until(stop: threading.Event, name: str, ask: Ask, offset: int, load: Load) -> None:
    position = offset
    while not stop.is_set():
        question = QUESTIONS[position % len(QUESTIONS)]
        position += 1
        started = time.monotonic()
        try:
            results = ask(question)
        except Exception:  # every failure is reported, none stops the others
            with load.lock:
                load.errors.append(f"{name}: {question!r}\n{traceback.format_exc()}")
            continue
        answer = Answer(name, question, started, time.monotonic(), results)
        with load.lock:
            load.answers.append(answer)


# ----- checks --------------------------------------------------------------------------------


def problems_of(answer: Answer, corpus: Corpus, states: Sequence[Expected], log: WriterLog) -> list[str]:
    """What is wrong with one answer (nothing, when all is well)."""
    where = f"{answer.reader} {answer.question!r}"
    ids = [doc_id for doc_id, _, _, _ in answer.results]
    problems = []
    if len(ids) > K:
        problems.append(f"{where}: {len(ids)} results for k={K}")
    if len(set(ids)) != len(ids):
        problems.append(f"{where}: a chunk returned twice: {ids}")
    allowed = [states[i] for i in sorted(log.valid_states(answer.started, answer.finished))]
    for doc_id, text, metadata, matched in answer.results:
        versions = corpus.by_id.get(doc_id, [])
        if not versions:
            problems.append(f"{where}: {doc_id} is no chunk the chunker made")
            continue
        if text != versions[0].text:
            problems.append(f"{where}: {doc_id} has text that is not its chunk's")
        own = _json({key: value for key, value in metadata.items() if key not in RESULT_KEYS})
        if own not in {_json(chunk.metadata) for chunk in versions}:
            problems.append(f"{where}: {doc_id} has metadata no version of its chunk had")
        if not any(state.chunks.get(doc_id) == own for state in allowed):
            problems.append(
                f"{where}: {doc_id} is stale (not in the index at any moment the query could see)"
            )
        for hit in matched:
            if hit["kind"] == LEXICAL_KIND:  # the question's words the chunk holds, not a stored text
                continue
            if not any((doc_id, hit["kind"], hit["text"]) in state.representations for state in allowed):
                problems.append(f"{where}: {doc_id} matched a {hit['kind']} representation it no longer had")
    return problems


def half_sources(snapshot: Snapshot, corpus: Corpus, states: Sequence[Expected], log: WriterLog) -> list[str]:
    """The sources ``snapshot`` saw other than whole: as no version the index held meanwhile."""
    allowed = [states[i] for i in sorted(log.valid_states(snapshot.started, snapshot.finished))]
    problems = []
    for name in PAGES:
        ids = corpus.ids_of(name)
        seen = {chunk_id: meta for chunk_id, meta in snapshot.chunks.items() if chunk_id in ids}
        wholes = [
            {chunk_id: digest(json.loads(meta)) for chunk_id, meta in state.chunks.items() if chunk_id in ids}
            for state in allowed
        ]
        if seen not in wholes:
            problems.append(
                f"{snapshot.reader}: {name} read as {len(seen)} chunks, none of its versions then "
                f"({', '.join(str(len(whole)) for whole in wholes)} chunks)"
            )
    return problems


def assert_load_was_clean(load: Load, corpus: Corpus, log: WriterLog) -> dict[str, int]:
    """No errors, no problem in any answer, no source read in part; return the queries per reader."""
    assert load.errors == [], f"{len(load.errors)} queries failed; the first:\n{load.errors[0]}"
    states = all_states(corpus)
    problems = [problem for answer in load.answers for problem in problems_of(answer, corpus, states, log)]
    problems += [problem for shot in load.snapshots for problem in half_sources(shot, corpus, states, log)]
    assert problems == [], f"{len(problems)} problems; the first ones:\n" + "\n".join(problems[:10])
    per_reader: dict[str, int] = {}
    for answer in load.answers:
        per_reader[answer.reader] = per_reader.get(answer.reader, 0) + 1
    return per_reader


@dataclass(frozen=True)
class Readers:
    """Named readers over one index, and what closes them.

    Attributes:
        shared: Readers the :data:`READERS` threads take turns at (each thread keeps one).
        solo: Readers with a thread of their own.
        close: Closes what the readers opened.
    """

    shared: Mapping[str, Ask]
    solo: Mapping[str, Ask]
    close: Callable[[], None]

    @property
    def names(self) -> set[str]:
        return {*self.shared, *self.solo}


def run_load(
    writer: ChromaIndex, readers: Readers, corpus: Corpus, *, seconds: float
) -> tuple[Load, WriterLog, int]:
    """The writer's cycle under load from :data:`READERS` threads (plus the reopening one)."""
    load = Load()
    log = WriterLog()
    stop = threading.Event()
    shared = sorted(readers.shared)
    assignment = [shared[i % len(shared)] for i in range(READERS)] + sorted(readers.solo)
    asks = {**readers.shared, **readers.solo}
    threads = [
        threading.Thread(target=read_until, args=(stop, name, asks[name], i, load), name=f"reader-{i}")
        for i, name in enumerate(assignment)
    ]
    for thread in threads:
        thread.start()
    try:
        calls = run_writer(writer, corpus, log, seconds=seconds)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return load, log, calls


def overlapping(load: Load, log: WriterLog) -> int:
    """Queries that ran while a write call was running."""
    return sum(
        1 for a in load.answers if any(s.began < a.finished and s.ended > a.started for s in log.steps)
    )

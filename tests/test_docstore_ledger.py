"""The vector ledger of the chunk store: pending / live / stale, commits, removals, reopening.

The ledger is what lets re-indexing and deleting find every vector a source ever wrote,
in any vector store. Each scenario below is a short script of ledger calls and the states
it must leave; the invariants (every vector in exactly one state, ``stale_vectors`` ==
pending + stale) are checked after every scenario.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from docstores import BACKENDS, SHARED_BACKENDS, open_store, store_location
from procedure_rag._store.chunk_store import ReplaceResult, SourceCommit, StoredChunk
from procedure_rag._store.docstore import Docstore

STATES = ("live", "pending", "stale")


def record(chunk_id: str, source_id: str = "doc") -> StoredChunk:
    return StoredChunk(chunk_id, f"text of {chunk_id}", {"source_id": source_id})


def states(store: Docstore, source_id: str | None = None) -> dict[str, list[str]]:
    return {state: store.vector_ids(source_id, state=state) for state in STATES}


def check_invariants(store: Docstore) -> None:
    by_state = states(store)
    every = [vector_id for ids in by_state.values() for vector_id in ids]
    assert len(every) == len(set(every)), "a vector is in two states"
    assert store.stale_vectors() == sorted(by_state["pending"] + by_state["stale"])


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Docstore]:
    with open_store(store_location(request, tmp_path, request.param)) as opened:
        yield opened


C12 = [record("c1"), record("c2")]
V12 = {"v1": "c1", "v2": "c2"}


Step = Callable[[Docstore], object]


def begin(vectors: dict[str, str]) -> Step:
    return lambda store: store.begin_vectors("doc", vectors)


def commit(vectors: dict[str, str], records: list[StoredChunk] = C12) -> Step:
    return lambda store: store.commit_source("doc", records, vectors)


def remove(*chunk_ids: str) -> Step:
    return lambda store: store.remove_chunks(chunk_ids)


def forget(*vector_ids: str) -> Step:
    return lambda store: store.forget_vectors(vector_ids)


# Each scenario: the calls in order, then the vector ids expected live, pending and stale.
SCENARIOS: dict[str, tuple[list[Step], tuple[list[str], list[str], list[str]]]] = {
    "begun, never committed (a crashed write)": ([begin(V12)], ([], ["v1", "v2"], [])),
    "begun then committed": ([begin(V12), commit(V12)], (["v1", "v2"], [], [])),
    "committed without begin": ([commit(V12)], (["v1", "v2"], [], [])),
    # A rewrite in flight may be half done: pending until the commit says otherwise.
    "begun again while live turns pending": ([commit(V12), begin(V12)], ([], ["v1", "v2"], [])),
    "live one rewritten, new one begun, both left pending": (
        [commit(V12), begin({"v1": "c1", "v3": "c1"})],
        (["v2"], ["v1", "v3"], []),
    ),
    "commit of fewer makes the old ones stale": (
        [commit(V12), commit({"v3": "c1"})],
        (["v3"], [], ["v1", "v2"]),
    ),
    "pending not in the commit become stale": (
        [begin({**V12, "v3": "c2"}), commit({"v1": "c1"})],
        (["v1"], [], ["v2", "v3"]),
    ),
    "source removed": ([commit(V12), commit({}, [])], ([], [], ["v1", "v2"])),
    "stale vector committed again is live": (
        [commit(V12), commit({"v1": "c1"}), commit(V12)],
        (["v1", "v2"], [], []),
    ),
    "chunk removed": ([commit(V12), remove("c1")], (["v2"], [], ["v1"])),
    "stale ones forgotten": ([commit(V12), commit({"v1": "c1"}), forget("v2")], (["v1"], [], [])),
}


@pytest.mark.parametrize("case", list(SCENARIOS))
def test_vector_states(store: Docstore, case: str) -> None:
    steps, (live, pending, stale) = SCENARIOS[case]
    for step in steps:
        step(store)
    assert states(store) == {"live": live, "pending": pending, "stale": stale}
    assert states(store, "doc") == states(store)
    assert states(store, "other source") == {"live": [], "pending": [], "stale": []}
    check_invariants(store)


def test_crashed_write_is_found_by_stale_vectors_and_cleared_by_the_next_commit(store: Docstore) -> None:
    commit(V12)(store)
    # A re-index begins two new vectors and dies before committing.
    store.begin_vectors("doc", {"v3": "c1", "v4": "c2"})
    assert store.stale_vectors() == ["v3", "v4"]
    assert store.vector_ids("doc") == ["v1", "v2"]

    committed = store.commit_source("doc", C12, {"v1": "c1", "v4": "c2"})

    assert committed.stale_vectors == ("v2", "v3")
    assert store.vector_ids("doc") == ["v1", "v4"]
    check_invariants(store)


def test_commit_reports_chunk_changes_and_stale_vectors(store: Docstore) -> None:
    first = store.commit_source("doc", C12, V12)
    assert first == SourceCommit(
        chunks=ReplaceResult(added=("c1", "c2"), removed=(), kept=()), stale_vectors=()
    )

    c3 = record("c3")
    second = store.commit_source("doc", [C12[0], c3], {"v1": "c1", "v3": "c3"})

    assert second == SourceCommit(
        chunks=ReplaceResult(added=("c3",), removed=("c2",), kept=("c1",)), stale_vectors=("v2",)
    )
    assert store.ids_for_source("doc") == ["c1", "c3"]
    assert store.get(["c2"]) == [None]


def test_sources_keep_their_own_vectors(store: Docstore) -> None:
    store.commit_source("a", [record("a1", "a")], {"va": "a1"})
    store.commit_source("b", [record("b1", "b")], {"vb": "b1"})

    assert store.commit_source("a", [], {}).stale_vectors == ("va",)
    assert store.vector_ids("b") == ["vb"]
    assert store.vector_ids() == ["vb"]
    assert store.vector_ids(state="stale") == ["va"]


def test_committing_a_vector_under_another_source_moves_it(store: Docstore) -> None:
    store.commit_source("a", [record("a1", "a")], {"v": "a1"})

    committed = store.commit_source("b", [record("b1", "b")], {"v": "b1"})

    assert committed.stale_vectors == ()
    assert store.vector_ids("a") == []
    assert store.vector_ids("b") == ["v"]
    # Re-indexing "a" without the vector must not take it from "b".
    assert store.commit_source("a", [record("a1", "a")], {}).stale_vectors == ()
    assert store.vector_ids("b") == ["v"]
    check_invariants(store)


def test_beginning_a_vector_live_under_another_source_makes_it_pending_there(store: Docstore) -> None:
    store.commit_source("a", [record("a1", "a")], {"v": "a1"})

    store.begin_vectors("b", {"v": "b1"})

    assert states(store, "a") == {"live": [], "pending": [], "stale": []}
    assert states(store, "b") == {"live": [], "pending": ["v"], "stale": []}
    store.commit_source("b", [record("b1", "b")], {"v": "b1"})
    assert store.vector_ids("b") == ["v"]
    check_invariants(store)


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        (
            {"v1": "c1", "v9": "nowhere"},
            "vector 'v9' points at chunk 'nowhere', which is not among the records",
        ),
        # c2 is stored for the source, but it is not among this commit's records.
        ({"v2": "c2"}, "vector 'v2' points at chunk 'c2', which is not among the records"),
    ],
)
def test_commit_refuses_a_vector_of_a_chunk_not_committed(
    store: Docstore, vectors: dict[str, str], message: str
) -> None:
    commit(V12)(store)
    before = (states(store), store.ids_for_source("doc"))

    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        store.commit_source("doc", [C12[0]], vectors)

    assert (states(store), store.ids_for_source("doc")) == before


def test_failed_commit_leaves_the_ledger_as_it_was(store: Docstore) -> None:
    commit(V12)(store)
    store.begin_vectors("doc", {"v3": "c1"})
    before = states(store)

    # The chunk check fails inside the transaction, after the vector check passed.
    with pytest.raises(ValueError, match=r"^chunk 'x' has source_id 'elsewhere', not 'doc'$"):
        store.commit_source("doc", [C12[0], record("x", "elsewhere")], {"v1": "c1"})

    assert states(store) == before
    assert store.ids_for_source("doc") == ["c1", "c2"]


def test_remove_chunks(store: Docstore) -> None:
    store.commit_source("doc", [*C12, record("c3")], {**V12, "v3": "c3", "v1b": "c1"})
    store.begin_vectors("doc", {"v1c": "c1"})

    removed = store.remove_chunks(["c1", "c3", "c1", "unknown"])

    # Every vector of the removed chunks, the pending one included, sorted.
    assert removed == ("v1", "v1b", "v1c", "v3")
    assert store.ids_for_source("doc") == ["c2"]
    assert states(store) == {"live": ["v2"], "pending": [], "stale": ["v1", "v1b", "v1c", "v3"]}
    assert store.remove_chunks(["unknown"]) == ()
    check_invariants(store)


def test_forget_vectors_forgets_only_rows_that_are_not_live(store: Docstore) -> None:
    commit({"live": "c1", "old": "c2"})(store)
    commit({"live": "c1"})(store)
    store.begin_vectors("doc", {"new": "c2"})
    assert states(store) == {"live": ["live"], "pending": ["new"], "stale": ["old"]}

    store.forget_vectors(["live", "new", "old", "never seen"])

    assert states(store) == {"live": ["live"], "pending": [], "stale": []}
    assert store.stale_vectors() == []


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
def test_ledger_survives_reopening_a_store(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str
) -> None:
    path = store_location(request, tmp_path, backend)
    with open_store(path) as first:
        first.commit_source("doc", C12, V12)
        first.commit_source("doc", C12, {"v1": "c1", "v3": "c2"})
        first.begin_vectors("doc", {"v4": "c2"})
        expected = states(first)
    assert expected == {"live": ["v1", "v3"], "pending": ["v4"], "stale": ["v2"]}

    with open_store(path) as reopened, open_store(path) as beside:
        assert states(reopened) == expected
        assert reopened.stale_vectors() == ["v2", "v4"]
        # A second store object on the same file sees what the other one commits.
        reopened.forget_vectors(["v2", "v4"])
        assert states(beside) == {"live": ["v1", "v3"], "pending": [], "stale": []}


def test_many_vectors_cross_the_batch_size(store: Docstore) -> None:
    # More ids than one SQL batch (500) in commit_source, remove_chunks and forget_vectors.
    records = [record(f"c{i:04d}") for i in range(1200)]
    vectors = {f"v{i:04d}": f"c{i:04d}" for i in range(1200)}
    store.commit_source("doc", records, vectors)

    assert (
        len(store.commit_source("doc", records[:100], dict(list(vectors.items())[:100])).stale_vectors)
        == 1100
    )
    assert len(store.remove_chunks([r.chunk_id for r in records[:100]])) == 100
    store.forget_vectors(store.stale_vectors())

    assert states(store) == {"live": [], "pending": [], "stale": []}
    assert len(store) == 0


def test_unknown_state_is_refused(store: Docstore) -> None:
    with pytest.raises(ValueError, match=r"^state must be 'live', 'pending' or 'stale', got 'dead'$"):
        store.vector_ids(state="dead")


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.begin_vectors("doc", V12),
        lambda s: s.commit_source("doc", C12, V12),
        lambda s: s.remove_chunks(["c1"]),
        lambda s: s.vector_ids(),
        lambda s: s.stale_vectors(),
        lambda s: s.forget_vectors(["v1"]),
    ],
    ids=["begin_vectors", "commit_source", "remove_chunks", "vector_ids", "stale_vectors", "forget_vectors"],
)
def test_ledger_calls_on_a_closed_store(store: Docstore, call: Callable[[Docstore], object]) -> None:
    store.close()
    with pytest.raises(
        ValueError, match=f"^{re.escape(f'the chunk store at {store.location!r} is closed')}$"
    ):
        call(store)

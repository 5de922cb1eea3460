"""The SQLite chunk store: round trips of real chunks, replace_source, atomicity, threads, info, closing."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from docstores import BACKENDS, SHARED_BACKENDS, open_store, store_location
from procedure_rag import ProcedureChunker, chunk_from_metadata, chunk_metadata
from procedure_rag._models.identity import EmbeddingIdentity, EmbeddingMismatchError
from procedure_rag._store.chunk_store import (
    STORE_SCHEMA_VERSION,
    ChunkStore,
    IndexInfo,
    ReplaceResult,
    StoredChunk,
)
from procedure_rag._store.docstore import Docstore

PAGES = {"en": "hololens/en/hololens-recovery.md", "ja": "hololens/ja/hololens-recovery.md"}


def real_chunks(tests_data: Path, language: str) -> list[StoredChunk]:
    path = PAGES[language]
    chunks = ProcedureChunker().chunk((tests_data / path).read_text(encoding="utf-8"), source_id=path)
    return [StoredChunk(c.chunk_id, c.text, chunk_metadata(c)) for c in chunks]


def record(chunk_id: str, source_id: str = "doc", text: str = "", **extra: Any) -> StoredChunk:
    return StoredChunk(chunk_id, text or f"text of {chunk_id}", {"source_id": source_id, **extra})


def snapshot(store: Docstore) -> dict[str, list[StoredChunk | None]]:
    return {source: store.get(store.ids_for_source(source)) for source in store.sources()}


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Docstore]:
    with open_store(store_location(request, tmp_path, request.param)) as opened:
        yield opened


@pytest.mark.parametrize("language", sorted(PAGES))
def test_real_chunks_round_trip(store: Docstore, tests_data: Path, language: str) -> None:
    records = real_chunks(tests_data, language)
    assert len(records) > 3
    store.put(records)

    ids = [r.chunk_id for r in records]
    assert store.get(ids) == records
    assert store.get([ids[2], "missing", ids[0]]) == [records[2], None, records[0]]
    assert store.ids_for_source(PAGES[language]) == ids
    assert store.sources() == [PAGES[language]]
    assert len(store) == len(records)
    for stored in store.get(ids):
        assert stored is not None
        # Types survive JSON (bools stay bools, ints stay ints) and the chunk can be rebuilt.
        assert {k: type(v) for k, v in stored.metadata.items()} == {
            k: type(v) for k, v in records[ids.index(stored.chunk_id)].metadata.items()
        }
        assert chunk_metadata(chunk_from_metadata(stored.text, stored.metadata)) == dict(stored.metadata)


def test_replace_source_removes_stale_and_keeps_unchanged(store: Docstore, tests_data: Path) -> None:
    en, ja = real_chunks(tests_data, "en"), real_chunks(tests_data, "ja")
    store.put(ja)
    source = PAGES["en"]
    first = store.replace_source(source, en)
    assert first == ReplaceResult(added=tuple(r.chunk_id for r in en), removed=(), kept=(), updated=())

    edited = StoredChunk(en[1].chunk_id, en[1].text, {**en[1].metadata, "reviewed": True})
    fresh = record("new-chunk", source)
    second = store.replace_source(source, [fresh, en[0], edited, *en[3:]])

    assert second.added == ("new-chunk",)
    assert second.removed == (en[2].chunk_id,)
    assert second.kept == (en[0].chunk_id, *(r.chunk_id for r in en[3:]))
    assert second.updated == (en[1].chunk_id,)
    assert (len(second.added), len(second.removed), len(second.kept)) == (1, 1, len(en) - 2)
    assert store.ids_for_source(source) == ["new-chunk", en[0].chunk_id, en[1].chunk_id] + [
        r.chunk_id for r in en[3:]
    ]
    assert store.get([en[1].chunk_id, en[2].chunk_id]) == [edited, None]
    assert len(store) == len(en) + len(ja)
    assert store.ids_for_source(PAGES["ja"]) == [r.chunk_id for r in ja]

    remaining = tuple(sorted(store.ids_for_source(source)))
    assert store.replace_source(source, []) == ReplaceResult(added=(), removed=remaining, kept=())
    assert store.sources() == [PAGES["ja"]]


def test_replace_source_again_keeps_everything(store: Docstore) -> None:
    records = [record(f"c{i}") for i in range(3)]
    store.replace_source("doc", records)
    assert store.replace_source("doc", records) == ReplaceResult(
        added=(), removed=(), kept=("c0", "c1", "c2"), updated=()
    )


def test_key_order_is_not_a_change_but_value_type_is(store: Docstore) -> None:
    store.replace_source("doc", [StoredChunk("c", "t", {"source_id": "doc", "a": 1, "b": "x"})])
    reordered = StoredChunk("c", "t", {"b": "x", "a": 1, "source_id": "doc"})
    assert store.replace_source("doc", [reordered]).kept == ("c",)
    as_bool = StoredChunk("c", "t", {"b": "x", "a": True, "source_id": "doc"})
    assert store.replace_source("doc", [as_bool]).updated == ("c",)
    assert store.get(["c"])[0] == as_bool
    stored = store.get(["c"])[0]
    assert stored is not None
    assert stored.metadata["a"] is True


def test_delete(store: Docstore) -> None:
    store.put([record("a"), record("b"), record("c", "other")])
    assert store.delete(["a", "c", "missing", "a"]) == 2
    assert store.get(["a", "b", "c"]) == [None, record("b"), None]
    assert store.sources() == ["doc"]
    assert len(store) == 1
    assert store.delete([]) == 0


def test_put_replaces_and_moves_between_sources(store: Docstore) -> None:
    store.put([record("a"), record("b")])
    store.put([record("a", "other", "new text")])
    assert store.get(["a"]) == [record("a", "other", "new text")]
    assert store.ids_for_source("doc") == ["b"]
    assert store.ids_for_source("other") == ["a"]


def test_get_many_ids_in_batches(store: Docstore) -> None:
    records = [record(f"c{i:04d}") for i in range(1200)]
    store.put(records)
    ids = [r.chunk_id for r in reversed(records)]
    assert store.get(ids) == list(reversed(records))
    assert store.delete(ids[:1100]) == 1100
    assert len(store) == 100


def _forced(chunk_id: str, text: object, metadata: object) -> StoredChunk:
    """A record that got past StoredChunk's own checks (the store must check again)."""
    forced = object.__new__(StoredChunk)
    for name, value in (("chunk_id", chunk_id), ("text", text), ("metadata", metadata)):
        object.__setattr__(forced, name, value)
    return forced


def _failing_after(records: list[StoredChunk]) -> Iterator[StoredChunk]:
    yield from records
    raise RuntimeError("reader failed")


REPLACE_FAILURES: dict[str, tuple[Callable[[list[StoredChunk]], Any], type[Exception], str]] = {
    "metadata value not a scalar": (
        lambda good: [*good, _forced("bad", "t", {"steps": {"a": 1}})],
        ValueError,
        "chunk 'bad': metadata 'steps' must be a str, int, float or bool, got dict",
    ),
    "text not a str": (
        lambda good: [*good, _forced("bad", b"bytes", {})],
        ValueError,
        "chunk 'bad': text must be a str, got bytes",
    ),
    "id twice": (lambda good: [*good, good[0]], ValueError, "chunk 'k0' occurs twice"),
    "record of another source": (
        lambda good: [*good, record("bad", "elsewhere")],
        ValueError,
        "chunk 'bad' has source_id 'elsewhere', not 'doc'",
    ),
    # Found inside the transaction, after stale rows were deleted and new ones inserted.
    "id stored under another source": (
        lambda good: [*good, StoredChunk("x0", "t")],
        ValueError,
        "chunk 'x0' is already stored under source 'other', not 'doc'",
    ),
    "records iterator fails": (_failing_after, RuntimeError, "reader failed"),
}


@pytest.mark.parametrize("case", sorted(REPLACE_FAILURES))
def test_failed_replace_leaves_previous_content(store: Docstore, case: str) -> None:
    make_records, error, message = REPLACE_FAILURES[case]
    store.put([record("old0"), record("old1"), record("x0", "other")])
    before = snapshot(store)
    good = [record("k0"), record("new", text="changed")]

    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        store.replace_source("doc", make_records(good))

    assert snapshot(store) == before
    assert len(store) == 3
    # The store still works after the rollback.
    assert store.replace_source("doc", good).removed == ("old0", "old1")


BAD_RECORDS: dict[str, tuple[Callable[[], StoredChunk], str]] = {
    # A list of one scalar type is what Chroma stores; any other list is not.
    "list of two types": (
        lambda: StoredChunk("c", "t", {"tags": ["a", 1]}),  # type: ignore[list-item]
        "chunk 'c': metadata 'tags' must be a non-empty list of str, int, float or bool of one type, "
        "got ['a', 1]",
    ),
    "empty list": (
        lambda: StoredChunk("c", "t", {"tags": []}),
        "chunk 'c': metadata 'tags' must be a non-empty list of str, int, float or bool of one type, got []",
    ),
    "None value": (
        lambda: StoredChunk("c", "t", {"parent_id": None}),  # type: ignore[dict-item]
        "chunk 'c': metadata 'parent_id' must be a str, int, float or bool, got NoneType",
    ),
    "dict value": (
        lambda: StoredChunk("c", "t", {"box": {"x": 1}}),  # type: ignore[dict-item]
        "chunk 'c': metadata 'box' must be a str, int, float or bool, got dict",
    ),
    "nan": (
        lambda: StoredChunk("c", "t", {"score": float("nan")}),
        "chunk 'c': metadata 'score' must be a finite number, got nan",
    ),
    "key not a str": (
        lambda: StoredChunk("c", "t", {1: "x"}),  # type: ignore[dict-item]
        "chunk 'c': metadata key 1 is not a str",
    ),
    "chunk_id disagrees": (
        lambda: StoredChunk("c", "t", {"chunk_id": "d"}),
        "chunk 'c': metadata 'chunk_id' is 'd'",
    ),
    "source_id not a str": (
        lambda: StoredChunk("c", "t", {"source_id": 3}),
        "chunk 'c': metadata 'source_id' is 3",
    ),
    "text not a str": (
        lambda: StoredChunk("c", None),  # type: ignore[arg-type]
        "chunk 'c': text must be a str, got NoneType",
    ),
    "empty id": (lambda: StoredChunk("", "t"), "chunk id must be a non-empty str, got ''"),
}


@pytest.mark.parametrize("case", sorted(BAD_RECORDS))
def test_bad_record_rejected(case: str) -> None:
    build, message = BAD_RECORDS[case]
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        build()


def test_stored_chunk_metadata_is_a_read_only_copy() -> None:
    metadata: dict[str, Any] = {"source_id": "doc"}
    chunk = StoredChunk("c", "t", metadata)
    metadata["source_id"] = "changed"
    assert chunk.source_id == "doc"
    with pytest.raises(TypeError):
        chunk.metadata["source_id"] = "x"  # type: ignore[index]


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
@pytest.mark.parametrize("own_store", [False, True], ids=["shared store", "store per thread"])
def test_concurrent_writers_and_readers(
    request: pytest.FixtureRequest, tmp_path: Path, own_store: bool, backend: str
) -> None:
    path = store_location(request, tmp_path, backend)
    threads, rounds = 8, 15
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def work(n: int, shared: Docstore) -> None:
        store = open_store(path) if own_store else shared
        try:
            start.wait()
            source = f"doc{n}"
            for i in range(rounds):
                # Each round drops the oldest chunk and adds one.
                result = store.replace_source(
                    source, [record(f"{source}-{j}", source) for j in range(i, i + 3)]
                )
                assert len(result.added) == (3 if i == 0 else 1)
                assert len(result.removed) == (0 if i == 0 else 1)
                got = store.get(store.ids_for_source(source))
                assert [c.chunk_id if c else None for c in got] == [f"{source}-{j}" for j in range(i, i + 3)]
                store.check_embedding(FAKE)
                assert len(store) >= 3
        except BaseException as exc:  # handed to the main thread, which fails the test
            errors.append(exc)
        finally:
            if own_store:
                store.close()

    with open_store(path) as shared:
        workers = [threading.Thread(target=work, args=(n, shared)) for n in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert errors == []
        assert shared.sources() == [f"doc{n}" for n in range(threads)]
        assert len(shared) == 3 * threads


def test_persists_across_reopen_as_json_in_wal_mode(tmp_path: Path, tests_data: Path) -> None:
    path = tmp_path / "chunks.sqlite"
    records = real_chunks(tests_data, "ja")
    with ChunkStore(path) as store:
        store.replace_source(PAGES["ja"], records)
        store.check_embedding(FAKE)
        store.set_info("built_by", "test")
    with ChunkStore(path) as reopened:
        assert reopened.get([r.chunk_id for r in records]) == records
        assert reopened.ids_for_source(PAGES["ja"]) == [r.chunk_id for r in records]
        assert reopened.get_info("built_by") == "test"
        assert reopened.index_info() == IndexInfo(STORE_SCHEMA_VERSION, "fake:model", 8)

    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        (stored,) = raw.execute(
            "SELECT metadata FROM chunks WHERE chunk_id = ?", (records[0].chunk_id,)
        ).fetchone()
    finally:
        raw.close()
    assert json.loads(stored) == dict(records[0].metadata)


def _set_raw_schema_version(path: Path, value: str) -> None:
    raw = sqlite3.connect(path)
    try:
        with raw:
            raw.execute("UPDATE info SET value = ? WHERE key = 'schema_version'", (value,))
    finally:
        raw.close()


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        ("3", "has store schema version 3; this version of procedure-rag reads version 2: upgrade"),
        ('"2"', "has store schema version '2'; this version of procedure-rag reads version 2: upgrade"),
        ("1", "has unknown store schema version 1"),
        ("0", "has unknown store schema version 0"),
    ],
)
def test_other_schema_version_refused(tmp_path: Path, stored: str, message: str) -> None:
    path = tmp_path / "chunks.sqlite"
    with ChunkStore(path) as store:
        assert store.index_info().schema_version == STORE_SCHEMA_VERSION
    _set_raw_schema_version(path, stored)
    with pytest.raises(ValueError, match=f"^{re.escape(f'the chunk store at {str(path)!r} {message}')}"):
        ChunkStore(path)


FAKE = EmbeddingIdentity("fake:model", 8, (1.0, 0.0, 0.0))


@pytest.mark.parametrize(
    "other",
    [
        EmbeddingIdentity("other:model", 8, (0.0, 1.0, 0.0)),
        EmbeddingIdentity("fake:model", 16, (1.0, 0.0, 0.0)),
    ],
    ids=["model", "dimension"],
)
def test_embedding_mismatch_names_both_models(store: Docstore, other: EmbeddingIdentity) -> None:
    assert store.index_info().embedding_model is None
    store.check_embedding(FAKE)
    store.check_embedding(FAKE)
    with pytest.raises(EmbeddingMismatchError, match=r"^the index at ") as raised:
        store.check_embedding(other)
    assert str(raised.value) == (
        f"the index at {store.location!r} was built with embedding model 'fake:model' (dimension 8), "
        f"not with {other.name!r} (dimension {other.dimension}): vectors of two models do not "
        "compare; use the model it was built with, or build a new index"
    )
    assert store.index_info() == IndexInfo(STORE_SCHEMA_VERSION, "fake:model", 8)


def test_same_model_under_another_name_passes(store: Docstore) -> None:
    # The probe decides: one model wrapped by the LangChain and the LlamaIndex adapter.
    store.check_embedding(FAKE)
    store.check_embedding(EmbeddingIdentity("OtherWrapper:fake", 8, (1.0, 0.0, 0.0)))
    assert store.index_info().embedding_model == "fake:model"


def test_info_values(store: Docstore) -> None:
    assert store.get_info("k") is None
    for value in ("text", 3, 0.5, False):
        store.set_info("k", value)
        assert store.get_info("k") == value
        assert type(store.get_info("k")) is type(value)
    with pytest.raises(ValueError, match=r"^info 'k' must be a str, int, float or bool, got list$"):
        store.set_info("k", [1])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^info key 'schema_version' is kept by the store itself$"):
        store.set_info("schema_version", 9)


CLOSED_CALLS: dict[str, Callable[[Docstore], object]] = {
    "put": lambda s: s.put([record("a")]),
    "get": lambda s: s.get(["a"]),
    "delete": lambda s: s.delete(["a"]),
    "ids_for_source": lambda s: s.ids_for_source("doc"),
    "replace_source": lambda s: s.replace_source("doc", []),
    "sources": lambda s: s.sources(),
    "len": len,
    "set_info": lambda s: s.set_info("k", 1),
    "get_info": lambda s: s.get_info("k"),
    "index_info": lambda s: s.index_info(),
    "check_embedding": lambda s: s.check_embedding(FAKE),
}


@pytest.mark.parametrize("call", sorted(CLOSED_CALLS))
def test_closed_store_raises(store: Docstore, call: str) -> None:
    store.close()
    store.close()
    assert store.closed
    assert repr(store) == f"{type(store).__name__}({store.location!r}, closed)"
    with pytest.raises(
        ValueError, match=f"^{re.escape(f'the chunk store at {store.location!r} is closed')}$"
    ):
        CLOSED_CALLS[call](store)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "chunks.sqlite"
    path.write_text("not sqlite " * 100, encoding="utf-8")
    with pytest.raises(sqlite3.DatabaseError):
        ChunkStore(path)

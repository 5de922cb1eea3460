"""The SQLite representation cache: round trips, persistence, counts, threads, closing."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from procedure_rag._representations.cache import RepresentationCache

KEY_PARTS = {"kind": "summary", "prompt_version": "1", "model_identity": "fake:m", "content_digest": "abc"}


@pytest.fixture(params=["memory", "file"])
def cache(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RepresentationCache]:
    path = ":memory:" if request.param == "memory" else tmp_path / "sub" / "cache.sqlite"
    with RepresentationCache(path) as opened:
        yield opened


def test_round_trip_and_counts(cache: RepresentationCache) -> None:
    assert cache.get("k1") is None
    cache.put("k1", ["質問1？", "question 2?"], kind="question", model_identity="m1")
    cache.put("k2", ["a summary"], kind="summary", model_identity="m2")

    assert cache.get("k1") == ("質問1？", "question 2?")
    assert cache.get("k2") == ("a summary",)
    assert (cache.hits, cache.misses) == (2, 1)
    assert len(cache) == 2
    assert cache.count(kind="question") == 1
    assert cache.count(model_identity="m2") == 1
    assert cache.count(kind="question", model_identity="m2") == 0


def test_put_replaces(cache: RepresentationCache) -> None:
    cache.put("k", ["old"])
    cache.put("k", ["new"])
    assert cache.get("k") == ("new",)
    assert len(cache) == 1


def test_clear(cache: RepresentationCache) -> None:
    cache.put("k", ["text"])
    cache.clear()
    assert len(cache) == 0


@pytest.mark.parametrize("part", sorted(KEY_PARTS))
def test_every_key_part_changes_the_key(part: str) -> None:
    changed = {**KEY_PARTS, part: KEY_PARTS[part] + "x"}
    assert RepresentationCache.make_key(**changed) != RepresentationCache.make_key(**KEY_PARTS)
    assert re.fullmatch(r"[0-9a-f]{64}", RepresentationCache.make_key(**KEY_PARTS))


def test_file_cache_persists_in_wal_mode_as_json(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with RepresentationCache(path) as cache:
        cache.put("k", ["キーワード、HoloLens"], kind="keywords")
    with RepresentationCache(path) as reopened:
        assert reopened.get("k") == ("キーワード、HoloLens",)

    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        (stored,) = raw.execute("SELECT texts FROM representations WHERE key = 'k'").fetchone()
    finally:
        raw.close()
    assert json.loads(stored) == ["キーワード、HoloLens"]


@pytest.mark.parametrize("stored", ["not json", "{}", "[]", "[1, 2]", '"text"'])
def test_unreadable_entry_is_a_miss(tmp_path: Path, stored: str) -> None:
    path = tmp_path / "cache.sqlite"
    with RepresentationCache(path) as cache:
        cache.put("k", ["fine"])
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("UPDATE representations SET texts = ? WHERE key = 'k'", (stored,))
    raw.close()
    with RepresentationCache(path) as cache:
        assert cache.get("k") is None
        assert cache.misses == 1


@pytest.mark.parametrize("texts", ["a string", ["ok", 3]])
def test_put_takes_strings_only(cache: RepresentationCache, texts: object) -> None:
    with pytest.raises(TypeError, match="texts must be a sequence of str"):
        cache.put("k", texts)  # type: ignore[arg-type]


def test_closed_cache_refuses_and_closing_twice_is_harmless(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with RepresentationCache(path) as cache:
        pass
    assert cache.closed
    cache.close()
    with pytest.raises(ValueError, match=re.escape(f"the representation cache at {str(path)!r} is closed")):
        cache.get("k")
    assert repr(cache) == f"RepresentationCache({str(path)!r}, closed)"


def test_threads_share_one_cache(cache: RepresentationCache) -> None:
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(40):
                cache.put(f"{n}-{i}", [f"text {n} {i}"])
                assert cache.get(f"{n}-{i}") == (f"text {n} {i}",)
        except BaseException as exc:  # collected: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache) == 8 * 40
    assert cache.hits == 8 * 40

"""The in-memory lexical index: the same hits as FTS5's BM25, and never out of date.

:class:`~procedure_rag._store.lexical_memory.MemoryLexicon` answers ``ChunkStore.lexical_search``;
:func:`~procedure_rag._store.lexical_index.search_lexical` (FTS5) is the reference it is compared with,
on generated chunks and questions, and after writes by another store object on the file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import procedure_rag._store.lexical_index as lexical
import procedure_rag._store.lexical_memory as memory
from procedure_rag._store.chunk_store import ChunkStore, StoredChunk
from procedure_rag._store.lexical_index import LexicalHit, generation, search_lexical
from procedure_rag._store.lexical_memory import MemoryLexicon, SQLiteLexicalSource

# Stems, codes, Japanese words, and a Japanese word whose normalised form has capitals
# (マイクロソフト is "Microsoft", which FTS5 matches case-blind with "microsoft").
WORDS = [
    "restart", "hololens", "power", "button", "wi-fi", "proxy", "network", "settings",
    "19041.1361", "usb-c", "microsoft", "マイクロソフト", "設定", "再起動", "デバイス", "バッテリ",
]  # fmt: skip


def chunk(chunk_id: str, text: str, **metadata: object) -> StoredChunk:
    return StoredChunk(chunk_id, text, {"source_id": "manual.md", **metadata})


def same_hits(ours: list[LexicalHit], fts5: list[LexicalHit]) -> None:
    """Equal ids, scores (to rounding) and order, except how a tie cut by the limit is split.

    Words held: FTS5's list compares the stored words case-sensitively, so it misses a
    word it matched case-blind (``Microsoft`` for "microsoft"); ours lists every word
    that matched, so it holds FTS5's and may hold more.
    """
    assert len(ours) == len(fts5)
    assert [hit.score for hit in ours] == pytest.approx([hit.score for hit in fts5], rel=1e-9)
    last = fts5[-1].score if fts5 else 0.0
    uncut = [h.chunk_id for h in fts5 if h.score != pytest.approx(last, rel=1e-9)]
    assert [h.chunk_id for h in ours[: len(uncut)]] == uncut
    by_id = {h.chunk_id: h.terms for h in ours}
    for hit in fts5:
        if hit.chunk_id in by_id:
            assert set(hit.terms) <= set(by_id[hit.chunk_id])


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.lists(st.sampled_from(WORDS), max_size=25).map(" ".join), min_size=1, max_size=40),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
    n=st.integers(1, 12),
)
def test_the_same_hits_as_fts5(texts: list[str], query: str, n: int) -> None:
    with ChunkStore() as store:
        store.put([chunk(f"c{i}", text) for i, text in enumerate(texts)])
        conn = store._connection()
        same_hits(MemoryLexicon().search(SQLiteLexicalSource(conn), query, n), search_lexical(conn, query, n))


def test_capitals_in_a_japanese_words_normal_form_match_as_in_fts5() -> None:
    with ChunkStore() as store:
        store.put(
            [chunk("en", "Send the file to Microsoft support"), chunk("ja", "マイクロソフトのサポートに送る")]
        )
        conn = store._connection()
        # "Microsoft", "サポート"
        ours = MemoryLexicon().search(SQLiteLexicalSource(conn), "マイクロソフトのサポート", 5)
        same_hits(ours, search_lexical(conn, "マイクロソフトのサポート", 5))
    assert {h.chunk_id: h.terms for h in ours} == {"ja": ("Microsoft", "サポート"), "en": ("Microsoft",)}


def test_a_word_fts5_splits_is_left_to_fts5(monkeypatch: pytest.MonkeyPatch) -> None:
    assert memory._tokens("DBサーバー ab_cd・ef") == ["dbサーバー", "ab_cd", "ef"]
    with ChunkStore() as store:
        store.put([chunk("a", "ab・cd zz"), chunk("b", "cd ab")])
        for module in (memory, lexical):  # a word with a separator, as Sudachi might make
            monkeypatch.setattr(module, "lexical_terms", lambda _query, _analyser=None: ["ab・cd"])
        lexicon = MemoryLexicon()
        hits = lexicon.search(SQLiteLexicalSource(store._connection()), "ab・cd", 5)
    assert [h.chunk_id for h in hits] == ["a"]  # FTS5's phrase "ab cd": only where cd follows ab
    assert lexicon.generation == -1  # answered by FTS5, nothing read


# ----- kept in step with every writer ------------------------------------------------------------


@pytest.fixture
def two_stores(tmp_path: Path) -> Iterator[tuple[ChunkStore, ChunkStore]]:
    path = tmp_path / "docstore.sqlite3"
    with ChunkStore(path) as reader, ChunkStore(path) as writer:
        yield reader, writer


def ids(store: ChunkStore, query: str) -> list[str]:
    return sorted(hit.chunk_id for hit in store.lexical_search(query, 10))


@pytest.mark.parametrize("gap", [0.0, 1e9], ids=["read-again", "fts5-until-the-gap"])
def test_another_writers_changes_are_seen_at_once(
    two_stores: tuple[ChunkStore, ChunkStore], monkeypatch: pytest.MonkeyPatch, gap: float
) -> None:
    reader, writer = two_stores
    monkeypatch.setattr(memory, "REREAD_GAP", gap)
    writer.put([chunk("a", "Reset the headset"), chunk("b", "Pair the clicker")])
    assert ids(reader, "reset") == ["a"]
    writer.put([chunk("c", "Reset the router")])
    assert ids(reader, "reset") == ["a", "c"]
    writer.put([chunk("a", "Recalibrate the headset")])
    assert ids(reader, "reset") == ["c"]
    assert ids(reader, "recalibrate") == ["a"]
    writer.delete(["c"])
    assert ids(reader, "reset") == []
    writer.replace_source("manual.md", [chunk("b", "Reset the clicker")])
    assert ids(reader, "reset clicker headset") == ["b"]
    conn = reader._connection()
    read_again = reader._lexicon.generation == generation(conn)
    assert read_again is (gap == 0.0)


def test_the_generation_moves_with_every_change_of_the_index_and_only_then(
    two_stores: tuple[ChunkStore, ChunkStore],
) -> None:
    reader, writer = two_stores
    conn = reader._connection()
    seen = [generation(conn)]
    writer.put([chunk("a", "Reset the headset"), chunk("p", "Parent", chunk_level="parent")])
    seen.append(generation(conn))
    reader.lexical_search("reset", 5)
    writer.get(["a"])
    seen.append(generation(conn))
    writer.put([chunk("a", "Reset the headset again")])
    seen.append(generation(conn))
    writer.delete(["a"])
    seen.append(generation(conn))
    with pytest.raises(ValueError, match="occurs twice"):
        writer.put([chunk("b", "x"), chunk("b", "y")])
    seen.append(generation(conn))
    assert seen[0] < seen[1] == seen[2] < seen[3] < seen[4] == seen[5]


def test_a_store_without_the_generation_counter_gets_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "REREAD_GAP", 0.0)
    path = tmp_path / "docstore.sqlite3"
    with ChunkStore(path) as store:
        store.put([chunk("a", "Sign in with Azure AD")])
    conn = sqlite3.connect(path)  # as a store written before the counter existed
    for name in ("lexical_generation_on_insert", "lexical_generation_on_delete"):
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TABLE lexical_generation")
    conn.commit()
    conn.close()
    with ChunkStore(path) as reader, ChunkStore(path) as writer:
        assert ids(reader, "Azure") == ["a"]
        writer.put([chunk("b", "Azure AD join")])
        assert ids(reader, "Azure") == ["a", "b"]
        assert reader._lexicon.generation == generation(reader._connection()) > 0

"""Japanese words without SudachiPy, and the analyser each lexical index records.

SudachiPy is installed in the test environment; "not installed" is
``words.japanese_morphology`` answering ``False`` (tests/test_package.py runs a fresh
interpreter where the packages are absent for real). The stores are real SQLite and a
real PostgreSQL cluster.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from procedure_rag._language import words
from procedure_rag._language.words import (
    BIGRAMS,
    SUDACHI,
    SUDACHI_PARTS,
    japanese_content_words,
    lexical_terms,
)
from procedure_rag._store.chunk_store import ChunkStore, StoredChunk
from procedure_rag._store.migrate import copy_docstore

# Two procedures from different manuals than the HoloLens pages: a printer and a router.
PRINTER = "用紙トレイを引き出し、用紙ガイドを用紙サイズに合わせます。"
ROUTER = "ルーターの電源を切り、ケーブルを抜いてから再起動してください。"


def chunk(chunk_id: str, text: str) -> StoredChunk:
    return StoredChunk(chunk_id, text, {"source_id": "manual.md"})


@pytest.fixture
def no_sudachi(monkeypatch: pytest.MonkeyPatch) -> None:
    """As without the ``ja`` extra: every caller asks ``japanese_morphology`` first."""
    monkeypatch.setattr(words, "japanese_morphology", lambda: False)


# ----- words -------------------------------------------------------------------------------------


def test_bigrams_are_the_pairs_of_each_kanji_and_katakana_run() -> None:
    # Hiragana and punctuation separate runs; a one-character run is its character; Latin
    # words are what they always are.
    assert lexical_terms("電源ボタンを押すとLEDが点灯", BIGRAMS) == [
        "led",
        "電源",
        "源ボ",
        "ボタ",
        "タン",
        "押",
        "点灯",
    ]
    assert lexical_terms("ｻｰﾊﾞｰ", BIGRAMS) == ["サー", "ーバ", "バー"]  # half-width katakana: NFKC first


def test_a_paraphrase_shares_bigrams_where_it_shares_characters() -> None:
    # 再起動 in the text, 起動し直す in the question: the dictionary forms differ, the
    # bigram 起動 is shared.
    assert "起動" in set(lexical_terms(ROUTER, BIGRAMS)) & set(lexical_terms("起動し直す方法", BIGRAMS))


def test_an_unknown_analyser_is_refused() -> None:
    expected = r"unknown lexical analyser 'mecab': expected one of sudachi\+katakana-parts, sudachi, bigr"
    with pytest.raises(ValueError, match=expected):
        lexical_terms("設定", "mecab")


@pytest.mark.usefixtures("no_sudachi")
def test_without_sudachi_content_words_are_kanji_and_katakana_runs(caplog: pytest.LogCaptureFixture) -> None:
    words._warn_character_rules.cache_clear()
    with caplog.at_level(logging.WARNING, logger="procedure_rag"):
        found = [word for _, word in japanese_content_words(PRINTER)]
        again = [word for _, word in japanese_content_words(ROUTER)]
    assert found == ["用紙トレイ", "用紙ガイド", "用紙サイズ"]  # one-character runs (引, 合) are no words
    assert again == ["ルーター", "電源", "ケーブル", "再起動"]
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1, warned  # once per process
    assert "pip install 'procedure-rag[ja]'" in warned[0]


@pytest.mark.usefixtures("no_sudachi")
def test_a_sudachi_index_without_sudachi_names_the_extra() -> None:
    with pytest.raises(ImportError, match=r"made with SudachiPy, which is not installed: pip install '"):
        lexical_terms(ROUTER, SUDACHI)
    assert lexical_terms("Restart the router", SUDACHI) == ["restart", "router"]  # English needs nothing


# ----- the analyser an index records ---------------------------------------------------------------


def test_a_new_index_records_what_is_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ChunkStore(tmp_path / "with.sqlite") as store:
        assert store.get_info("lexical_analyser") == SUDACHI_PARTS
    monkeypatch.setattr(words, "japanese_morphology", lambda: False)
    with ChunkStore(tmp_path / "without.sqlite") as store:
        assert store.get_info("lexical_analyser") == BIGRAMS


def test_an_index_keeps_its_analyser_whatever_is_installed_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "docstore.sqlite"
    monkeypatch.setattr(words, "japanese_morphology", lambda: False)
    with ChunkStore(path) as store:
        store.put([chunk("printer", PRINTER), chunk("router", ROUTER)])
    monkeypatch.undo()  # SudachiPy "installed" now: the questions are still cut into bigrams
    with ChunkStore(path) as store:
        assert store.get_info("lexical_analyser") == BIGRAMS
        store.put([chunk("later", "プリンターのトナーを交換します。")])
        assert next(h.chunk_id for h in store.lexical_search("ルーターを再起動する", 3)) == "router"
        assert [h.chunk_id for h in store.lexical_search("トナー交換", 3)] == ["later"]
        held = store._connection().execute("SELECT terms FROM lexical").fetchall()
    assert all("再起動" not in terms for (terms,) in held)  # no Sudachi words among the bigrams


def test_an_index_made_before_the_record_is_sudachis(tmp_path: Path) -> None:
    path = tmp_path / "docstore.sqlite"
    with ChunkStore(path) as store:
        store.put([chunk("router", ROUTER)])
    with sqlite3.connect(path) as conn:  # as a docstore written before the key existed
        conn.execute("DELETE FROM info WHERE key = 'lexical_analyser'")
    with ChunkStore(path) as store:
        assert store.get_info("lexical_analyser") == SUDACHI
        assert [h.chunk_id for h in store.lexical_search("ルーターの再起動", 3)] == ["router"]


def test_a_sudachi_index_opened_without_sudachi_answers_english_and_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "docstore.sqlite"
    with ChunkStore(path) as store:
        store.put([chunk("router", ROUTER), chunk("en", "Restart the router from the app.")])
    monkeypatch.setattr(words, "japanese_morphology", lambda: False)
    with ChunkStore(path) as store:
        assert [h.chunk_id for h in store.lexical_search("restart router", 3)] == ["en"]
        with pytest.raises(ImportError, match=r"pip install 'procedure-rag\[ja\]'"):
            store.lexical_search("ルーターの再起動", 3)


@pytest.mark.integration
def test_postgres_records_its_analyser_and_a_copy_recuts_the_words(
    postgres_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from procedure_rag._store.pg_chunk_store import PostgresChunkStore  # noqa: PLC0415 - psycopg is an extra

    monkeypatch.setattr(words, "japanese_morphology", lambda: False)
    with ChunkStore(tmp_path / "bigrams.sqlite") as source:
        source.put([chunk("printer", PRINTER), chunk("router", ROUTER)])
        assert source.get_info("lexical_analyser") == BIGRAMS
        monkeypatch.undo()
        url = postgres_cluster.fresh_url()
        with PostgresChunkStore(url) as target:
            copy_docstore(source, target, info_keys=("lexical_analyser",))
            assert target.get_info("lexical_analyser") == SUDACHI_PARTS  # its own, not the copied one
            assert next(h.chunk_id for h in target.lexical_search("ルーターを再起動", 3)) == "router"
            terms = dict(target._rows("SELECT chunk_id, terms FROM lexical"))
        assert "再起動" in terms["router"].split()  # cut again by Sudachi
    monkeypatch.setattr(words, "japanese_morphology", lambda: False)
    # Reopened without SudachiPy: still a Sudachi index.
    with PostgresChunkStore(url) as again, pytest.raises(ImportError, match=r"procedure-rag\[ja\]"):
        again.lexical_search("ルーターを再起動", 3)
    with PostgresChunkStore(postgres_cluster.fresh_url()) as fresh:
        assert fresh.get_info("lexical_analyser") == BIGRAMS
        fresh.replace_source("manual.md", [chunk("router", ROUTER), chunk("printer", PRINTER)])
        assert next(h.chunk_id for h in fresh.lexical_search("用紙サイズ", 3)) == "printer"


# ----- katakana compounds the dictionary does not know ---------------------------------------------

# A backup tool's and a fleet manager's terms, not the HoloLens pages': Sudachi knows
# バックアップ, スケジューラ, ポリシー and ジオフェンシング... as words, not these compounds.
SCHEDULER = "バックアップスケジューラを再起動します。"
SCHEDULER_SPACED = "バックアップ スケジューラの再起動方法"
GEOFENCE = "ジオフェンシングポリシーを割り当てます。"


def test_a_compound_and_its_spaced_spelling_share_their_words() -> None:
    joined = lexical_terms(SCHEDULER, SUDACHI_PARTS)
    spaced = lexical_terms(SCHEDULER_SPACED, SUDACHI_PARTS)
    # The compound, then its words.
    assert joined[:3] == ["バックアップスケジューラ", "バックアップ", "スケジューラ"]
    assert {"バックアップ", "スケジューラ", "再起動"} <= set(joined) & set(spaced)
    geofence = lexical_terms(GEOFENCE, SUDACHI_PARTS)
    assert geofence[:3] == ["ジオフェンシングポリシー", "ジオフェンシング", "ポリシー"]
    # Before: the compound alone, nothing shared with the spaced spelling but the verb.
    before = set(lexical_terms(SCHEDULER, SUDACHI)) & set(lexical_terms(SCHEDULER_SPACED, SUDACHI))
    assert before == {"再起動"}


def test_no_fragment_is_made_a_word() -> None:
    # Parts are four characters or more: 「コネクテッド」 keeps its 「テッド」, and a compound
    # no known word ends stays whole.
    assert lexical_terms("クラウドコネクテッドモード", SUDACHI_PARTS)[0] == "クラウドコネクテッドモード"
    for term in lexical_terms("クラウドコネクテッドモード", SUDACHI_PARTS):
        assert len(term) >= 4
    assert lexical_terms("ホゲフガピヨモゲラ", SUDACHI_PARTS) == lexical_terms("ホゲフガピヨモゲラ", SUDACHI)


def test_a_spaced_question_finds_the_compound_in_a_new_index_only(tmp_path: Path) -> None:
    # A new index cuts compounds; one made before keeps cutting its questions as it did.
    for analyser, found in ((SUDACHI_PARTS, ["scheduler"]), (SUDACHI, [])):
        path = tmp_path / f"{analyser}.sqlite"
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE info (key TEXT PRIMARY KEY, value TEXT)")
            conn.execute("INSERT INTO info VALUES ('lexical_analyser', ?)", (f'"{analyser}"',))
        with ChunkStore(path) as store:
            assert store.get_info("lexical_analyser") == analyser
            store.put([chunk("scheduler", SCHEDULER), chunk("router", ROUTER)])
            hits = [h.chunk_id for h in store.lexical_search("スケジューラ", 3)]
        assert hits == found

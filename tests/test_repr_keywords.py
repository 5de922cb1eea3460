"""Keywords: codes and versions, UI labels, products and content words, ja and en."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from procedure_rag import Chunk, ChunkLevel, ChunkType, chunk
from procedure_rag._language.words import japanese_tokenizer
from procedure_rag._representations.offline.keywords import KEYWORD_LIMIT, keywords

DATA = Path(__file__).resolve().parent / "data"


def _text_chunk(text: str, language: str) -> Chunk:
    return Chunk("c", text, ChunkType.TEXT, ChunkLevel.CHILD, (), "s", language)


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("The install fails with error 0x80070005 on the device.", "en", "0x80070005"),
        ("Update to Windows Holographic, version 20H2 or 21H1.", "en", "20H2"),
        ("Update to Windows Holographic, version 20H2 or 21H1.", "en", "21H1"),
        ("Install ARC version 1.19050.1301.0 offline.", "en", "1.19050.1301.0"),
        ("The device shows as a QUSB_BULK device.", "en", "QUSB_BULK"),
        ("Select **Update & Security** and then **Reset**.", "en", "Update & Security"),
        ("Open the Advanced Recovery Companion app.", "en", "Advanced Recovery Companion"),
        ("Windows Holographic バージョン 20H2 (ビルド 19041.1128) 以降", "ja", "19041.1128"),
        ("エラー コード 0x80180014 が表示されます。", "ja", "0x80180014"),
        ("「地域情報登録」ボタンを押下する。", "ja", "地域情報登録"),
        ("**[設定]** を選択します。", "ja", "設定"),
        ("地域情報登録画面がダッシュボード画面の上に表示される。", "ja", "ダッシュボード"),
        ("バッテリの残量を確認します。", "ja", "バッテリー"),  # Sudachi's normalised form
    ],
)
def test_keyword_rules(text: str, language: str, expected: str) -> None:
    assert expected in keywords(_text_chunk(text, language))


@pytest.mark.parametrize(
    ("text", "language", "absent"),
    [
        ("Make sure that the device is on.", "en", "the"),
        ("デバイスを再起動します。", "ja", "を"),
        ("デバイスを再起動します。", "ja", "為る"),
        ("デバイスを再起動します。", "ja", "ます"),
    ],
)
def test_function_words_are_dropped(text: str, language: str, absent: str) -> None:
    assert absent not in keywords(_text_chunk(text, language))


@pytest.mark.parametrize(
    "relative", ["hololens/en/hololens2-autopilot.md", "hololens/ja/hololens2-autopilot.md"]
)
def test_real_keywords_are_bounded_unique_and_in_text_order(relative: str) -> None:
    for c in chunk((DATA / relative).read_text(encoding="utf-8"), source_id=relative):
        found = keywords(c)
        assert 0 < len(found) <= KEYWORD_LIMIT
        assert len({k.casefold() for k in found}) == len(found)


def test_real_version_table_keeps_release_and_build() -> None:
    relative = "hololens/ja/hololens2-autopilot.md"
    chunks = chunk((DATA / relative).read_text(encoding="utf-8"), source_id=relative)
    found = {k for c in chunks for k in keywords(c)}
    assert {"20H2", "19041.1128", "19041.1103"} <= found


def test_tokenizer_is_one_per_thread() -> None:
    seen: list[object] = []
    thread = threading.Thread(target=lambda: seen.append(japanese_tokenizer()))
    thread.start()
    thread.join()
    assert japanese_tokenizer() is japanese_tokenizer()
    assert seen[0] is not japanese_tokenizer()

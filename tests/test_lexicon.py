"""Language detection and sentence splitting: pinned cases and the concatenation property."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procedure_rag._lexicon import detect_language, split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Press the Power button. Wait 10 s! Done? yes",
            ["Press the Power button.", " Wait 10 s!", " Done?", " yes"],
        ),
        ("電源を押します。待ちます！完了", ["電源を押します。", "待ちます！", "完了"]),
        ('He said "stop." Then (see 2.) it ends.', ['He said "stop."', " Then (see 2.)", " it ends."]),
        ("v1.2.3 and e.g.x stay whole", ["v1.2.3 and e.g.x stay whole"]),
        ("", [""]),
    ],
)
def test_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .!?)]\"'\n。．！？x")), max_size=60))
def test_sentences_concatenate_back_and_end_at_a_mark(text: str) -> None:
    pieces = split_sentences(text)
    assert "".join(pieces) == text
    for piece, following in itertools.pairwise(pieces):
        assert piece.rstrip(")]\"'")[-1:] in set(".!?。．！？")
        assert piece[-1] in "。．！？" or following[:1].isspace()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HoloLens 2 を再起動します。", "ja"),
        ("Restart HoloLens 2 from Settings > Update & Security.", "en"),
        # One letter in ten being Japanese is already a Japanese page.
        ("Settings Update Security Recovery Advanced 設定", "en"),
        ("Settings Update Security 設定を開く", "ja"),
        ("12345 !!!", "en"),
    ],
)
def test_language(text: str, expected: str) -> None:
    assert detect_language(text) == expected

"""Language detection and sentence splitting: pinned cases and the concatenation property."""

from __future__ import annotations

import dataclasses
import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procedure_rag._language.lexicons import (
    ENGLISH,
    JAPANESE,
    Lexicon,
    detect_language,
    split_sentences,
    ui_nouns,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Press the Power button. Wait 10 s! Done? yes",
            ["Press the Power button.", " Wait 10 s!", " Done? yes"],  # no sentence starts lower case
        ),
        ("電源を押します。待ちます！完了", ["電源を押します。", "待ちます！", "完了"]),
        # nothing inside brackets ends a sentence
        ('He said "stop." Then (see 2.) it ends.', ['He said "stop."', " Then (see 2.) it ends."]),
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


_UI_TEXTS = [
    "Select the Save button, then open the Settings tab.",
    "On the Sign In screen, type your password.",
    "Press the power key.",  # no UI word: the prefilter skips the scan
    "「保存」ボタンを押して、設定画面を開きます。",
    "電源を入れます。",
    "Open Advanced Options Dialog Box now",
    "",
]


@pytest.mark.parametrize("text", _UI_TEXTS)
@pytest.mark.parametrize("lexicon", [ENGLISH, JAPANESE], ids=["en", "ja"])
def test_ui_nouns_prefilter_gives_what_the_pattern_finds(lexicon: Lexicon, text: str) -> None:
    found = [(m.span(), m.groupdict()) for m in ui_nouns(lexicon, text)]
    assert found == [(m.span(), m.groupdict()) for m in lexicon.ui_noun.finditer(text)]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("the aA Sav button tab Ta画面ボタン欄をに 、")), max_size=40))
def test_ui_nouns_prefilter_never_drops_a_match(text: str) -> None:
    for lexicon in (ENGLISH, JAPANESE):
        assert [m.span() for m in ui_nouns(lexicon, text)] == [
            m.span() for m in lexicon.ui_noun.finditer(text)
        ]


def test_ui_nouns_of_a_replaced_pattern_are_not_prefiltered() -> None:
    # A lexicon with its own ui_noun must not be filtered by the built-in UI words.
    custom = dataclasses.replace(ENGLISH, ui_noun=re.compile(r"(?P<label>\bknob\b)"))
    assert [m.group("label") for m in ui_nouns(custom, "Turn the knob.")] == ["knob"]

"""The cheap checks that skip a step rule never skip one that would have found something.

Each gate is compared with the rule run ungated, on pinned texts and on generated ones
made of the characters the rules look for.
"""

from __future__ import annotations

import dataclasses
import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procedure_rag._language import lexicons, step_fields, step_words, targets
from procedure_rag._language.lexicons import ENGLISH, JAPANESE, Lexicon

_MARKUP_TEXT = st.text(
    alphabet=st.sampled_from(list("ab *_`[]()!<>/\n\t\u3000\u00a0\u2003　「」をクリック.、")), max_size=50
)


def _plain_markup_ungated(text: str) -> str:
    return re.sub(r"\s+", " ", targets._MARKUP.sub("", text)).strip()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "  ",
        "**Save** the [file](x.md) <b>now</b>",
        "a\u00a0\u2003b\n\tc ",
        "`code` __x__ ![p](q)",
        "plain",
    ],
)
def test_plain_markup_is_the_ungated_rule(text: str) -> None:
    assert targets.plain_markup(text) == _plain_markup_ungated(text)


@settings(max_examples=400, deadline=None)
@given(_MARKUP_TEXT)
def test_plain_markup_gate_never_changes_the_text(text: str) -> None:
    assert targets.plain_markup(text) == _plain_markup_ungated(text)


def _light_ungated(text: str) -> str:
    if step_fields._HAS_RADICAL.search(text):
        text = text.translate(step_fields._RADICALS)
    text = step_fields._PICTURE.sub("", text)
    text = step_fields._LINK.sub(r"\1", text)
    text = step_fields._TAG.sub("", text)
    text = html.unescape(text)
    return step_fields._SPACE.sub(" ", step_fields._BREAK.sub("\n", text)).strip()


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab \t\u3000\n&amp;![]()<>⽰※")), max_size=50))
def test_light_gates_never_change_the_text(text: str) -> None:
    assert step_fields._light(text) == _light_ungated(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab 。.※\t\u3000を行う")), max_size=40))
def test_note_split_gate_never_drops_a_note(text: str) -> None:
    pieces = step_fields._NOTE_MARK.split(text)
    expected = (
        (text, []) if len(pieces) == 1 else (pieces[0].strip(), [p.strip() for p in pieces[1:] if p.strip()])
    )
    assert step_fields._split_notes(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab ()（）。．.see参照x")), max_size=40))
def test_trailing_aside_needs_a_closing_bracket(text: str) -> None:
    if step_fields._TRAILING_ASIDE.search(text) is not None:
        assert ")" in text or "）" in text


def _objects(text: str, lexicon: Lexicon) -> list[tuple[int, int, str]]:
    return [(m.start, m.end, m.label) for m in targets._object_mentions(text, lexicon, ([], []))]


@pytest.mark.parametrize(
    ("text", "lexicon"),
    [
        ("「保存」ボタンをクリックします。", JAPANESE),
        ("設定画面を開き、パスワードを入力します。", JAPANESE),
        ("電源に接続します。", JAPANESE),
        ("Select the Save button.", ENGLISH),
    ],
)
def test_object_marker_gate_gives_what_the_scan_finds(text: str, lexicon: Lexicon) -> None:
    ungated = dataclasses.replace(
        lexicon, step_words=dataclasses.replace(lexicon.step_words, object_marker="")
    )
    assert _objects(text, lexicon) == _objects(text, ungated)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["設定", "画面", "を", "に", "の", "「保存」", "クリック", "入力", "します", "、", " "]
        ),
        max_size=10,
    )
)
def test_object_marker_gate_never_drops_an_object(words: list[str]) -> None:
    text = "".join(words)
    ungated = dataclasses.replace(
        JAPANESE, step_words=dataclasses.replace(JAPANESE.step_words, object_marker="")
    )
    assert _objects(text, JAPANESE) == _objects(text, ungated)


def _language_ungated(text: str) -> str:
    head = text[:4000]
    letters = sum(map(len, lexicons._LETTERS.findall(head)))
    if letters == 0:
        return "en"
    return "ja" if sum(map(len, lexicons._JA_CHARS.findall(head))) * 10 >= letters else "en"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab Z1.\n設定をｱ–“")), max_size=60))
def test_language_of_ascii_text_is_english_as_the_count_says(text: str) -> None:
    assert lexicons.detect_language(text) == _language_ungated(text)


_JA_OBJECT = JAPANESE.step_words.object_np
# The Japanese object rule without its "not inside a word" start: what it must keep finding.
_JA_OBJECT_EVERYWHERE = re.compile(
    _JA_OBJECT.pattern.removeprefix(step_words._JA_NOT_MID_WORD), _JA_OBJECT.flags
)


def test_japanese_object_rule_starts_with_the_word_check() -> None:
    assert _JA_OBJECT.pattern.startswith(step_words._JA_NOT_MID_WORD)


_JA_WORDS = ("設定", "画面", "ABC", "x.y", "を", "に", "の", "または", "「保存」", "**OK**", "[a]", "(b)")
_JA_WORDS_TOO = ("クリック", "入力", "します", "、", " ", "\u3000", "。", "々", "１")


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([*_JA_WORDS, *_JA_WORDS_TOO]), max_size=12))
def test_japanese_objects_found_mid_word_are_none(words: list[str]) -> None:
    text = "".join(words)
    found = [(m.span(), m.groupdict()) for m in _JA_OBJECT.finditer(text)]
    assert found == [(m.span(), m.groupdict()) for m in _JA_OBJECT_EVERYWHERE.finditer(text)]

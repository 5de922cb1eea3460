"""Word lists grouped by first letter match exactly what the plain alternation matches."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procedure_rag._language.alternation import by_first_letter, split_alternatives
from procedure_rag._language.step_words import EN_OPERATE_VERBS, EN_VERBS, JA_OPERATE_VERBS

_LISTS = {"en-verbs": EN_VERBS, "en-operate": EN_OPERATE_VERBS, "ja-operate": JA_OPERATE_VERBS}
# What follows the list in the step rules: a word end, spaces, an object, nothing.
_CONTEXTS = (r"{}", r"\b{}\b", r"\s(?P<verb>please|{})\b", r"\b{}\s+(?P<np>\w+)", r"を\s*{}(?!され|られ)")


def _found(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text)]


def _pairs(words: str, context: str, flags: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    return (
        re.compile(context.format(f"(?:{words})"), flags),
        re.compile(context.format(by_first_letter(words)), flags),
    )


def _word_soup(words: str) -> st.SearchStrategy[str]:
    """Texts made of the list's words, their prefixes and case variants, spaces and particles."""
    pieces = [w for w in split_alternatives(words) if "(" not in w]
    variants = [
        *pieces,
        *(p[: len(p) // 2] for p in pieces),
        *(p.upper() for p in pieces),
        *(p.title() for p in pieces),
    ]
    glue = [" ", "  ", "を", "を ", "file a ", "the ", "to ", ".", "され", "\n", "x"]
    return st.lists(st.sampled_from(variants + glue), max_size=12).map("".join)


@pytest.mark.parametrize("name", _LISTS)
def test_grouped_list_matches_the_plain_one_on_its_own_words(name: str) -> None:
    words = _LISTS[name]
    for word in split_alternatives(words):
        text = f"x {word.split('(')[0]} a y"
        for context in _CONTEXTS:
            for flags in (0, re.IGNORECASE):
                plain, grouped = _pairs(words, context, flags)
                assert _found(grouped, text) == _found(plain, text), (word, context, flags)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_grouped_list_matches_the_plain_one_on_any_text(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(_LISTS)))
    text = data.draw(_word_soup(_LISTS[name]))
    for context in _CONTEXTS:
        for flags in (0, re.IGNORECASE):
            plain, grouped = _pairs(_LISTS[name], context, flags)
            assert _found(grouped, text) == _found(plain, text)


def test_words_are_grouped_in_their_order() -> None:
    assert by_first_letter("select|click|set|close|tap") == "(?:s(?:elect|et)|c(?:lick|lose)|tap)"
    assert by_first_letter("押下|押し|開") == "(?:押(?:下|し)|開)"


@pytest.mark.parametrize(
    "words",
    [
        "(?:a|b)|c",  # a group first
        "a?b|ac",  # a quantifier on the first letter
        "\\d+|x",  # an escape first
        "Ärger|ärgern",  # a cased letter beyond ASCII
    ],
)
def test_lists_that_cannot_be_grouped_come_back_whole(words: str) -> None:
    assert by_first_letter(words) == f"(?:{words})"


def test_alternatives_split_only_at_the_top_level() -> None:
    assert split_alternatives("file(?= (?:a|an) )|go to|[|]|a\\|b") == [
        "file(?= (?:a|an) )",
        "go to",
        "[|]",
        "a\\|b",
    ]
    assert split_alternatives("[]|]x|y") == ["[]|]x", "y"]
    assert split_alternatives("") == [""]

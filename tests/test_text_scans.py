"""The plain-text reader's whole-text scans find what the single patterns they replace found.

A contents cue and the page-number lines are each looked for with two or three patterns
that open with a character class (a scan in C) instead of one that opens with ``^`` or a
look-behind (tried at every character). Each is compared here with the one pattern, kept
in this file as the reference, on pinned texts and on generated ones made of the
characters the patterns look for.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procedure_rag._readers import text_lines
from procedure_rag._readers.text_contents import has_contents_cue

_CUE_ONE_PATTERN = re.compile(
    r"(?:^|(?<=[\r\f]))[ \t\u3000]*(?:目[ \t\u3000]*次|もくじ|contents|table of contents|inhalt|sommaire)"
    r"[ \t\u3000]*(?=[\r\n\f]|\Z)"
    r"|(?:[.．·・…‥][ \t]*){3}[0-9０-９]",
    re.IGNORECASE | re.MULTILINE,
)
_FOOTER_ONE_PATTERN = re.compile(r"(?:^|(?<=[\n\r\f]))" + text_lines._FOOTER_LINE)

_PIECES = [
    "\n", "\r", "\r\n", "\f", "\v", " ", "\t", "\u3000", "x", "Setup", ".", "．", "・", "…", "‥", "·",
    "3", "12", "３", "目", "次", "もくじ", "Contents", "CONTENTS", "Table of Contents", "Inhalt",
    "sommaire", "-", "–", "－", "Page", "page", "P.", "p.", "/", "of",
    "- 12 -", "Page 3", "p. 4 of 9", "3 / 10", "目次", " .... 5",
]  # fmt: skip
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=24).map("".join)


def _footers(text: str) -> list[tuple[int, int, str | None]]:
    return [(m.start("body"), m.end(), m.group("a") or m.group("b") or m.group("c") or m.group("d"))
            for m in text_lines._footer_lines(text)]  # fmt: skip


def _footers_one_pattern(text: str) -> list[tuple[int, int, str | None]]:
    return [(m.start("body"), m.end(), m.group("a") or m.group("b") or m.group("c") or m.group("d"))
            for m in _FOOTER_ONE_PATTERN.finditer(text)]  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "",
        "目次\n1. Setup ..... 3",
        "Contents",
        "Intro\r  table of contents  \nnext",
        "Intro\fもくじ",
        "Step ‥‥‥ ３",
        "The contents of the box",
        "a. b. c. 4",
        "- 12 -\nSetting up\n- 13 -",
        "  Page 3 of 10\fnext\n7\f",
        "x\n3 / 10",
        "Page 4 is not a footer",
        "Intro\r- 12 -\nz",
    ],
)
def test_pinned_texts(text: str) -> None:
    assert has_contents_cue(text) == (_CUE_ONE_PATTERN.search(text) is not None)
    assert _footers(text) == _footers_one_pattern(text)


@settings(max_examples=600, deadline=None)
@given(_TEXT)
def test_contents_cue_is_the_one_pattern(text: str) -> None:
    assert has_contents_cue(text) == (_CUE_ONE_PATTERN.search(text) is not None)


@settings(max_examples=600, deadline=None)
@given(_TEXT)
def test_page_number_lines_are_the_one_patterns(text: str) -> None:
    assert _footers(text) == _footers_one_pattern(text)

"""Faster ways of doing what a plainer form did give what the plainer form gave.

Each is compared with the plainer form, kept in this file as the reference, on pinned
texts and on generated ones made of the characters it looks at:

* a contents cue and the page-number lines, looked for with two or three patterns that
  open with a character class (a scan in C) instead of one that opens with ``^`` or a
  look-behind (tried at every character);
* where a cut piece starts in its source, found by a loop instead of a regular
  expression compiled for every piece;
* look-alike CJK glyphs replaced where found instead of translating every character;
* step numbers of the default rules remembered per marker;
* the offsets of a text's lines, found by one pattern instead of building each line;
* a line's display width, from its runs of narrow characters instead of a list of its wide ones;
* a line's size remembered, so a section sized to decide whether it joins the one before it
  is not measured again when it is packed.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

from langchain_procedures import ProcedureTextSplitter
from procedure_rag._chunking import cutting
from procedure_rag._chunking.lengths import Measure, tiktoken_length
from procedure_rag._language import numbering
from procedure_rag._readers import pdf_text, text_lines
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


def _find_spaced_pattern(source: str, chars: list[str], start: int, end: int) -> int:
    m = re.compile(r"\s*".join(re.escape(ch) for ch in chars)).search(source, start, end)
    return m.start() if m else -1


_HEAD = st.text(alphabet=st.sampled_from(list("ab.*(\\あい")), min_size=1, max_size=5)
_SPACED_SOURCE = st.text(alphabet=st.sampled_from(list("ab.*(\\ \n\t\u3000\u00a0あい")), max_size=40)


@pytest.mark.parametrize(
    ("source", "head"),
    [
        ("設定を開\nきます。次に保存します。", "開きます。"),
        ("a.b a . b", "a.b"),
        ("x(y)\n  z", "(y) z"),
        ("no match here", "zz"),
        ("ab\u3000c abc", "abc"),
    ],
)
def test_piece_start_pinned(source: str, head: str) -> None:
    chars = [ch for ch in head if not ch.isspace()]
    for start in range(len(source) + 1):
        for end in (start, len(source) // 2, len(source)):
            assert cutting._find_spaced(source, chars, start, end) == _find_spaced_pattern(
                source, chars, start, end
            )


@settings(max_examples=600, deadline=None)
@given(_SPACED_SOURCE, _HEAD, st.data())
def test_piece_start_is_the_pattern_search(source: str, head: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(source)))
    end = data.draw(st.integers(start, len(source)))
    chars = list(head)
    assert cutting._find_spaced(source, chars, start, end) == _find_spaced_pattern(source, chars, start, end)


_GLYPHS = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0x2E80, max_codepoint=0x2FDF),
        st.characters(min_codepoint=0xF900, max_codepoint=0xFAFF),
        st.characters(min_codepoint=0xFB00, max_codepoint=0xFB06),
        st.sampled_from(list("用語 a\n")),
    ),
    max_size=30,
)


@settings(max_examples=400, deadline=None)
@given(_GLYPHS)
def test_lookalikes_are_the_translation(text: str) -> None:
    assert pdf_text.same_length_lookalikes(text) == text.translate(pdf_text._one_for_one())


@pytest.mark.parametrize(
    "marker",
    ["1.", "1)", "（１）", "①", "A-1.", "Step 2:", "手順３", "iv.", "-", "・", "", "  3. ", "(a)", "STEP 10"],
)
def test_step_number_remembered_is_the_rules(marker: str) -> None:
    numbering._default_step_number.cache_clear()
    computed = numbering.step_number(marker)  # worked out by the rules, then remembered
    remembered = numbering.step_number(marker)
    assert numbering._default_step_number.cache_info().hits == 1
    assert computed == remembered == numbering._step_number(marker, numbering.STEP_NUMBER_RULES)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("1２(（)）.．:：Sstep手順ステップ ・-①iv")), max_size=8))
def test_step_number_remembered_on_generated_markers(marker: str) -> None:
    assert numbering.step_number(marker) == numbering._step_number(marker, numbering.STEP_NUMBER_RULES)


_LINES = st.text(
    alphabet=st.sampled_from(list("ab あ\t\u3000\u00a0\r\n\f\v\x1c\x1d\x1e\x1f\x85\u2028\u2029")), max_size=40
)


@settings(max_examples=600, deadline=None)
@given(_LINES)
def test_line_bounds_are_the_lines(text: str) -> None:
    assert text_lines.line_bounds(text) == [(line.body, line.end) for line in text_lines.iter_lines(text)]


def _display_width_by_wide_chars(s: str, cap: int = 400) -> int:
    s = s[:cap]
    wide = re.compile(f"[{text_lines._WIDE_CHARS}]")
    return len(s) + len(wide.findall(s))


_WIDTH_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("ab 1.\t’éあア漢、。（）ＡＢ한\u1100\uffe6\uff61\u3000")),
        st.characters(min_codepoint=0x1000, max_codepoint=0xFFFF),
    ),
    max_size=60,
)


@settings(max_examples=600, deadline=None)
@given(_WIDTH_TEXT, st.integers(0, 70))
def test_display_width_counts_wide_characters_twice(text: str, cap: int) -> None:
    assert text_lines.display_width(text, cap) == _display_width_by_wide_chars(text, cap)


class _Recording:
    """The default token counter, recording every text it is given."""

    def __init__(self) -> None:
        self.tokens = tiktoken_length()
        self.texts: Counter[str] = Counter()

    def __call__(self, text: str) -> int:
        self.texts[text] += 1
        return self.tokens(text)


# Two pages of a PDF as a loader gives them, titles told by the shape of their lines: each
# section is small, so the splitter sizes each one to decide whether it joins the section
# before it, then packs them.
_PAGES = [
    "Replacing the filter\n\nTurn the unit off and unplug it.\nOpen the front cover.\n\n"
    "Cleaning the tray\n\nPull the tray out and wipe it with a dry cloth.",
    "Resetting the counter\n\nHold the Reset button for three seconds until the lamp blinks.\n\n"
    "Checking the seal\n\nLook for cracks along the rubber seal before closing the cover.",
]


def test_each_line_is_measured_once() -> None:
    recording = _Recording()
    pages = [
        Document(page_content=text, metadata={"source": "manual.pdf", "page": i})
        for i, text in enumerate(_PAGES)
    ]
    chunks = ProcedureTextSplitter(length_function=recording).split_documents(pages)
    assert len(chunks) == 1, "the small sections must be combined, or nothing was sized before packing"
    assert "Cleaning the tray" in chunks[0].page_content
    assert "Checking the seal" in chunks[0].page_content
    twice = {text: n for text, n in recording.texts.items() if n > 1 and text != "\n"}
    assert not twice, f"measured more than once: {twice}"


def test_line_sizes_are_remembered_within_bounds() -> None:
    calls: list[str] = []

    def length(text: str) -> int:
        calls.append(text)
        return len(text.split())

    measure = Measure(length)
    calls.clear()
    assert measure.line("one two three") == 3 + measure.newline
    assert measure.line("one two three") == 3 + measure.newline
    assert calls == ["one two three"]
    for i in range(5000):  # far more lines than it keeps: it starts again, never grows past its bound
        measure.line(f"line {i}")
    assert len(measure._lines) <= 1024
    assert measure.line("line 4999") == 2 + measure.newline

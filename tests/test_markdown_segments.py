"""Long Markdown documents are parsed in segments: the elements must be those of one parse."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import procedure_rag._readers.markdown_events as md
from procedure_rag._readers.markdown import read_markdown

# Blocks that a heading line does or does not close, Japanese text for multi-byte offsets,
# and definitions whose uses sit in other sections.
_BLOCKS = [
    "# 設定\n\n手順を説明します。\n",
    "## Steps\n\n1. Open **Settings**.\n2. Select [Network][net].\n   - a nested note\n",
    "```bash\n# a shell comment, not a heading\nls -l\n```\n",
    "~~~\n# still code\n~~~\n",
    "```\n# an unclosed fence runs to the end\n",
    "<div>\n# inside the HTML block\n</div>\n",
    "<!-- a comment\n# inside the comment\n-->\n",
    "> quoted\n> lines\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "[net]: https://example.com/net\n",
    "[net]: https://example.com/other\n",
    "See [net] and [^1].\n\n[^1]: A footnote.\n",
    "- item\n\n  continued paragraph\n",
    "Setext\n======\n",
    "#no-space is text\n",
    "\n\n",
]


def _whole_and_segmented(text: str, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    whole = read_markdown(text, source_id="d")
    with monkeypatch.context() as m:
        m.setattr(md, "SEGMENT_CHARS", size)
        segmented = read_markdown(text, source_id="d")
    assert segmented == whole


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_BLOCKS), min_size=2, max_size=24), st.integers(1, 200))
def test_segmented_parse_gives_the_elements_of_one_parse(blocks: list[str], size: int) -> None:
    text = "\n".join(blocks)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _whole_and_segmented(text, monkeypatch, size)


def test_front_matter_with_a_comment_line_is_not_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "---\ntitle: x\n# a YAML comment\n---\n\n# Real\n\ntext\n" * 3
    _whole_and_segmented(text, monkeypatch, 5)


def test_a_long_document_is_parsed_in_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(f"# Section {i}\n\n1. Step {i}.\n\n" for i in range(50))
    monkeypatch.setattr(md, "SEGMENT_CHARS", 100)
    segments = [(start, end) for start, end, _ in md.segment_events(text)]
    assert len(segments) > 5
    assert segments[0][0] == 0
    assert segments[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(segments))
    assert all(text[start:].startswith("# ") for start, _ in segments)


def test_no_cut_between_a_definition_and_its_use(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "# A\n\n[x]: /one\n\n" + "".join(f"# S{i}\n\ntext\n\n" for i in range(20)) + "# Z\n\nSee [x].\n"
    monkeypatch.setattr(md, "SEGMENT_CHARS", 10)
    segments = [(start, end) for start, end, _ in md.segment_events(text)]
    use = text.index("See [x]")
    assert any(start <= 4 and end > use for start, end in segments)
    _whole_and_segmented(text, monkeypatch, 10)


def _naive_uses(text: str, needles: list[str]) -> dict[str, list[int]]:
    folded = text.casefold()
    out: dict[str, list[int]] = {}
    for needle in needles:
        out[needle] = []
        pos = folded.find(needle)
        while pos >= 0:
            out[needle].append(pos)
            pos = folded.find(needle, pos + 1)
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab[] Xé\n", max_size=300),
    st.lists(st.text(alphabet="ab [Xé", min_size=1, max_size=4), min_size=1, max_size=5, unique=True),
    st.integers(1, 40),
)
@example(text="see [a [b] and [B]", labels=["b"], window=40)  # nested, and case-folded
@example(text="[b][b] [b]", labels=["b"], window=3)  # a use across a window's end
def test_label_uses_finds_every_use_in_one_pass(text: str, labels: list[str], window: int) -> None:
    """Every occurrence of every "[label]" (nested, overlapping, across windows), as str.find finds them."""
    needles = list(dict.fromkeys(f"[{label.casefold()}]" for label in labels))
    assert md._label_uses(text, needles, window=window) == _naive_uses(text, needles)

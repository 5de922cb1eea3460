"""No quadratic blow-up: the chunker's cost grows in proportion to the input on hostile shapes.

Each case builds one document at two sizes, chunks both, and compares the costs: the CPU time
(best of three, so that a busy shared machine does not decide) and the number of characters
handed to the length function (exact, so a stage that re-measures text it has measured before
shows up even when the clock is noisy). Both must grow at most a generous constant times the
growth of the input: linear work passes with room to spare, quadratic work (64x the time for
8x the input) fails. No test has an absolute time limit.

The default suite runs small documents (a 1 MB paragraph, 10k list items, 1k headings...); the
``stress`` marker (``pytest -m stress``) runs the full sizes of issue 8: a 10 MB paragraph, 100k
list items, 10k headings, lists and quotes nested thousands deep.

One known limit is left out on purpose: tiktoken's BPE is superlinear within one pre-tokenizer
piece, so megabytes of letters with no space or punctuation at all (one "word") cost more than
linear time to count, in our chunker and in LangChain's or LlamaIndex's token splitters alike.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from procedure_rag import ChunkerOptions, ProcedureChunker
from procedure_rag._chunking.lengths import Measure, tiktoken_length
from procedure_rag._readers.markdown_events import CharIndex

#: Cost may grow this many times faster than the input before a case fails. Quadratic work
#: grows as fast again as the input (8x input: 64x time), far past it.
SLACK = 2.5

SENTENCE = "Press the power button and hold it for ten seconds until the light turns off. "
SENTENCE_JA = "電源ボタンを押して、「設定」を選択します。画面が表示されたら[OK]をタップします。"


class CountingLength:
    """The default token counter, counting the characters it is given."""

    def __init__(self) -> None:
        self.tokens = tiktoken_length()
        self.characters = 0

    def __call__(self, text: str) -> int:
        self.characters += len(text)
        return self.tokens(text)


@dataclass(frozen=True)
class Cost:
    seconds: float
    characters_measured: int
    size: int
    chunks: int


def cost_of(text: str) -> Cost:
    """CPU seconds (best of three) and characters measured to chunk ``text``."""
    counting = CountingLength()
    chunker = ProcedureChunker(ChunkerOptions(length_function=counting))
    chunks = len(chunker.chunk(text))
    measured = counting.characters
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        chunker.chunk(text)
        best = min(best, time.process_time() - start)
    return Cost(best, measured, len(text), chunks)


def assert_linear(make: Callable[[int], str], small: int, factor: int) -> None:
    """Chunk ``make(small)`` and ``make(small * factor)``; costs grow at most SLACK x the input."""
    a, b = cost_of(make(small)), cost_of(make(small * factor))
    grew = b.size / a.size
    assert b.chunks > a.chunks, "the larger input must make more chunks, or the case tests nothing"
    assert b.characters_measured <= SLACK * grew * max(a.characters_measured, 1), (
        f"characters measured grew {b.characters_measured / max(a.characters_measured, 1):.1f}x "
        f"for {grew:.1f}x the input"
    )
    # A floor of 5 ms keeps a tiny small-size time from making the ratio noise.
    assert b.seconds <= SLACK * grew * max(a.seconds, 0.005), (
        f"time grew {b.seconds / a.seconds:.1f}x ({a.seconds:.3f}s -> {b.seconds:.3f}s) "
        f"for {grew:.1f}x the input"
    )


# -- document shapes: each takes a size (characters, items, headings or depth) ----------


def paragraph(chars: int) -> str:
    """One paragraph of ordinary sentences."""
    return (SENTENCE * (chars // len(SENTENCE) + 1))[:chars]


def paragraph_ja(chars: int) -> str:
    """One Japanese paragraph (no spaces; sentences end with 。)."""
    return (SENTENCE_JA * (chars // len(SENTENCE_JA) + 1))[:chars]


def run_on_sentence(chars: int) -> str:
    """One sentence with no end: cut at spaces only."""
    return paragraph(chars).replace(".", ",")


def numbered_items(n: int) -> str:
    return "".join(f"{i + 1}. Select **Settings {i}** and then select [OK].\n" for i in range(n))


def bullet_items_with_notes(n: int) -> str:
    """A bulleted list whose items each carry a note: the notes bind to the steps."""
    return "".join(f"- Open the tab {i}.\n\n  > [!NOTE]\n  > Note {i}.\n" for i in range(n))


def one_huge_step(chars: int) -> str:
    """A single numbered step longer than many chunks."""
    return "1. " + paragraph(chars) + "\n"


def headings(n: int) -> str:
    """Headings of every level, each with a line of text."""
    return "".join("#" * (i % 6 + 1) + f" Heading {i}\n\nText under heading {i}.\n\n" for i in range(n))


def nested_list(depth: int) -> str:
    """A list nested ``depth`` deep (the input grows as depth squared: indentation)."""
    return "".join("  " * i + f"- level {i} item\n" for i in range(depth))


def nested_quotes(depth: int) -> str:
    """A block quote nested ``depth`` deep, one line per level."""
    return "".join(">" * (i + 1) + f" quote {i}\n" for i in range(depth)) + "\n\nAfter.\n"


def long_table(rows: int) -> str:
    return "| # | Setting | Value |\n|---|---|---|\n" + "".join(
        f"| {i} | Option {i} | On |\n" for i in range(rows)
    )


def long_code(lines: int) -> str:
    return "```\n" + "".join(f"echo line {i}\n" for i in range(lines)) + "```\n"


# -- default suite: small sizes ----------------------------------------------------------

CASES = [
    pytest.param(paragraph, 125_000, 8, id="paragraph-1MB"),
    pytest.param(paragraph_ja, 60_000, 8, id="paragraph-ja"),
    pytest.param(run_on_sentence, 32_000, 8, id="sentence-without-end"),
    pytest.param(numbered_items, 1_250, 8, id="10k-list-items"),
    pytest.param(bullet_items_with_notes, 250, 8, id="items-with-notes"),
    pytest.param(one_huge_step, 25_000, 8, id="one-huge-step"),
    pytest.param(headings, 125, 8, id="1k-headings"),
    pytest.param(nested_list, 60, 4, id="nested-list"),
    pytest.param(nested_quotes, 100, 4, id="nested-quotes"),
    pytest.param(long_table, 1_000, 8, id="long-table"),
    pytest.param(long_code, 1_000, 8, id="long-code"),
]


@pytest.mark.parametrize(("make", "small", "factor"), CASES)
def test_cost_grows_linearly(make: Callable[[int], str], small: int, factor: int) -> None:
    assert_linear(make, small, factor)


def test_a_step_cut_into_many_chunks_is_parsed_once() -> None:
    """Every chunk holding a piece of one long step gets the same parsed step."""
    chunks = [c for c in ProcedureChunker().chunk(one_huge_step(60_000)) if c.level.value == "child"]
    steps = [c.steps[0] for c in chunks if c.steps]
    assert len(steps) > 10
    assert all(s.action == steps[0].action for s in steps)
    assert [s.is_continuation for s in steps[:2]] == [False, True]


# -- stress: the full sizes ----------------------------------------------------------------

STRESS = [
    pytest.param(paragraph, 1_000_000, 10, id="paragraph-10MB"),
    pytest.param(paragraph_ja, 500_000, 10, id="paragraph-ja-5M-chars"),
    pytest.param(numbered_items, 10_000, 10, id="100k-list-items"),
    pytest.param(bullet_items_with_notes, 2_000, 10, id="20k-items-with-notes"),
    pytest.param(one_huge_step, 200_000, 10, id="one-2MB-step"),
    pytest.param(headings, 1_000, 10, id="10k-headings"),
    pytest.param(nested_list, 300, 4, id="nested-list-1200-deep"),
    pytest.param(nested_quotes, 500, 4, id="nested-quotes-2000-deep"),
    pytest.param(long_table, 10_000, 10, id="100k-row-table"),
]


@pytest.mark.stress
@pytest.mark.parametrize(("make", "small", "factor"), STRESS)
def test_cost_grows_linearly_at_full_size(make: Callable[[int], str], small: int, factor: int) -> None:
    assert_linear(make, small, factor)


# -- the shortcuts that keep the cost linear are exact -------------------------------------


def test_counting_shortcut_never_claims_a_text_that_fits() -> None:
    """A text is called over a limit by its length alone only when counting agrees."""
    measure = Measure(tiktoken_length())
    texts = [paragraph(n) for n in (10, 500, 5_000, 60_000)] + [paragraph_ja(n) for n in (10, 5_000, 60_000)]
    texts.append("x" * 60_000)  # one long "word": the fewest characters per token
    claimed = 0
    for text in texts:
        for limit in (1, 40, 400):
            if measure.surely_over(text, limit):
                claimed += 1
                assert measure.length(text) > limit
            if measure.surely_over(text, limit, line=True):
                assert measure.line(text) > limit
    assert claimed > 0, "the shortcut must fire on long texts, or this test checks nothing"


def test_byte_to_character_index_is_exact_in_any_order() -> None:
    """The compact index of the Markdown reader agrees with counting from the start."""
    text = ("ascii and 日本語の文字 and émoji 🎉 " * 900)[:25_000]
    data = text.encode("utf-8")
    index = CharIndex(text)
    rng = random.Random(8)
    offsets = [rng.randrange(len(data) + 1) for _ in range(300)] + [0, len(data), 4096, 8192]
    for offset in offsets:
        expected = sum(1 for byte in data[:offset] if byte & 0xC0 != 0x80)
        assert index(offset) == expected, offset

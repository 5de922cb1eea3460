"""The sentence-splitter comparison (benchmarks/sentence_splitters.py) swaps the splitter it claims to."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import sentence_splitters as bench

from procedure_rag import ChunkerOptions, ProcedureChunker
from procedure_rag._language import sentences

PAGE = "# Reset\n\n1. Hold the power button. The light turns off.\n2. Select **Reset**.\n"


def _actions() -> list[str]:
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400, emit_parents=False))
    return [step.action for chunk in chunker.chunk(PAGE, source_id="reset.md") for step in chunk.steps]


def test_swapped_splitter_reaches_the_step_fields_and_is_put_back() -> None:
    own = _actions()
    with bench.swapped(lambda text: [text]):  # never cut: the result stays in the action
        whole = _actions()
    assert own[0] == "Hold the power button."
    assert whole[0].startswith("Hold the power button. The light turns off")
    assert _actions() == own
    assert all(
        getattr(sys.modules[name], "split_sentences") is sentences.split_sentences  # noqa: B009
        for name in bench.SPLITTER_USERS
    )


def test_our_splitter_is_always_a_candidate_and_missing_ones_say_how_to_install() -> None:
    found = bench.candidates()
    assert found["procedure-rag"] is sentences.split_sentences
    for name in ("pysbd", "blingfire"):
        assert callable(found[name]) or f"pip install {name}" in str(found[name])


def test_manual_lines_skip_readmes_and_short_lines(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("A readme line that is long enough to count.\n", encoding="utf-8")
    (tmp_path / "a.md").write_text("short\nA manual line that is long enough to count.\n", encoding="utf-8")
    assert bench.manual_lines(tmp_path) == ["A manual line that is long enough to count."]

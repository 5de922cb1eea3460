"""Small sections combined: consecutive short sections of one parent chunked as one."""

from __future__ import annotations

from pathlib import Path

from _invariants import assert_reading_order, children_of, dropped_spans, lost_characters
from procedure_rag import ChunkerOptions, ProcedureChunker

DATA = Path(__file__).resolve().parent / "data"

INTRO = " ".join(["This guide explains how the app reads time-lapse pictures of each well."] * 30)
STEPS_AS_HEADINGS = f"""\
# Guide

{INTRO}

## Mask maker

Make a mask file for each dataset.

### 1. Select the dataset

Open the Main tab and select the dataset.

### 2. Frame one well

Drag a frame around one well in the picture.

### 3. Save the parameters

Select SAVE, then select OK in the dialog.

# Inference

Run inference.py with the dataset folder.
"""


def children(text: str, **options: object) -> list:
    options = {"combine_small_sections": True, **options}
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400, **options))  # type: ignore[arg-type]
    return children_of(chunker.chunk(text, source_id="doc"))


def test_short_sibling_sections_of_one_parent_are_one_chunk_with_their_headings() -> None:
    chunks = children(STEPS_AS_HEADINGS)
    (first,) = [c for c in chunks if c.section_path == ("Guide", "Mask maker")]
    for heading in ("1. Select the dataset", "2. Frame one well", "3. Save the parameters"):
        assert heading in first.text
    assert "Select SAVE" in first.text
    # Another top-level section is another parent: never combined.
    assert [c.section_path for c in chunks][-2:] == [("Guide", "Mask maker"), ("Inference",)]
    assert "inference.py" not in first.text
    assert not lost_characters(STEPS_AS_HEADINGS, chunks)
    assert_reading_order(chunks)


def test_off_by_default_for_markup_one_chunk_per_section() -> None:
    # Markdown elements carry no page: the default (None) leaves its sections apart.
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400))
    chunks = children_of(chunker.chunk(STEPS_AS_HEADINGS, source_id="doc"))
    assert [c.section_path[-1] for c in chunks][-5:] == [
        "Mask maker",
        "1. Select the dataset",
        "2. Frame one well",
        "3. Save the parameters",
        "Inference",
    ]


def test_sections_that_do_not_fit_together_stay_apart() -> None:
    long = " ".join(["Check the cable and the power supply before you go on."] * 30)
    text = f"# Guide\n\n## Prepare\n\n{long}\n\n## Connect\n\n{long}\n"
    chunks = children(text)
    assert not [c for c in chunks if "Prepare" in c.text and "Connect" in c.text.split("\n", 1)[1]]
    assert ("Guide", "Connect") in {c.section_path for c in chunks}


def test_the_recovery_pages_two_restart_procedures_share_a_chunk() -> None:
    lang = "en"
    # A real page: "Restart the device" has a line of its own and two short procedures under it,
    # 390 tokens as the packer renders them (numbers and indents too): they fit 450 together.
    text = (DATA / "hololens" / lang / "hololens-recovery.md").read_text(encoding="utf-8")
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=450, combine_small_sections=True))
    chunks = children_of(chunker.chunk(text, source_id="doc"))
    standard, hard = (
        ("Standard restart procedure", "Hard-restart procedure")
        if lang == "en"
        else ("標準の再起動手順", "ハード再起動の手順")
    )
    together = [c for c in chunks if standard in c.text and hard in c.text]
    assert together, [c.section_path for c in chunks]
    assert not lost_characters(text, chunks, dropped_spans(chunker, text, "doc"))


def _together(chunks: list, *headings: str) -> list:
    return [c for c in chunks if all(h in c.text for h in headings)]


STANDARD, HARD = "Standard restart procedure", "Hard-restart procedure"


def test_by_default_sections_under_headings_inferred_from_the_print_are_combined() -> None:
    # The recovery page printed by Chromium with body-size headings a rule underlines, its
    # tags and outline removed: the headings are inferred from the print, so the two short
    # restart procedures share a chunk by default, under the first one's path.
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400))
    pdf = children_of(chunker.iter_chunks_from_source(DATA / "pdf" / "hololens-recovery-en.ruled.pdf"))
    together = _together(pdf, STANDARD, HARD)
    assert together, [c.section_path for c in pdf]
    assert together[0].section_path[-1] != HARD


def test_by_default_declared_headings_keep_their_sections_apart() -> None:
    # The same page as Markdown, and printed by Chromium with its tags and outline.
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400))
    markdown = (DATA / "hololens" / "en" / "hololens-recovery.md").read_text(encoding="utf-8")
    tagged = DATA / "pdf" / "hololens-recovery-en.chromium.pdf"
    for chunks in (
        children_of(chunker.chunk(markdown, source_id="doc")),
        children_of(chunker.iter_chunks_from_source(tagged)),
    ):
        assert not _together(chunks, STANDARD, HARD)
        assert HARD in {c.section_path[-1] for c in chunks}


def test_inferred_headings_stay_apart_when_asked() -> None:
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400, combine_small_sections=False))
    pdf = children_of(chunker.iter_chunks_from_source(DATA / "pdf" / "hololens-recovery-en.ruled.pdf"))
    assert HARD in {c.section_path[-1] for c in pdf}
    assert not _together(pdf, STANDARD, HARD)


def test_sections_combine_only_when_they_fit_as_the_packer_renders_them() -> None:
    # At 400 the same three sections (42 + 183 + 165 tokens with their list numbers and
    # indents, 382 of room under the header line) do not fit: no chunk overflows into a
    # second one that opens with the rest of the hard restart.
    text = (DATA / "hololens" / "en" / "hololens-recovery.md").read_text(encoding="utf-8")
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400, combine_small_sections=True))
    chunks = children_of(chunker.chunk(text, source_id="doc"))
    assert all(chunker.length(c.text) <= 400 for c in chunks)
    (hard,) = [c for c in chunks if c.section_path[-1] == "Hard-restart procedure"]
    assert not hard.continued

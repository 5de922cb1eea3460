"""Checks shared by the layout JSON readers (Azure, Google Document AI, Textract) on real documents.

Each row of ``LAYOUTS`` is one committed fixture (``tests/data/layout_json/<format>/``, built by
``make_fixtures.py``); the checks themselves are in ``tests/data/layout_json/checks.py`` (the
``layout_checks`` fixture). What only one format has (element kinds and roles, tables, malformed
input) stays in ``test_reader_azure.py``, ``test_reader_google_docai.py`` and ``test_reader_textract.py``.
"""

from __future__ import annotations

from types import ModuleType
from typing import NamedTuple

import pytest

LETTER_INCH = [8.5, 11.0, "inch"]
A4_PT = [595.0, 842.0, "pt"]

HARD_RESTART_EN = ("Hard-restart procedure", "If the standard reset procedure didn't work")
HARD_RESTART_JA = ("ハード再起動の手順", "標準のリセット手順が機能しない場合")
DISM_NOTE_EN = ("Use DISM to apply the package", "The version number in this code example")
DISM_NOTE_JA = (
    "DISM を使用して、依存関係とライセンスを持つパッケージを適用します",
    "このコード例のバージョン番号は",
)


class Layout(NamedTuple):
    """One fixture and what the shared checks expect of it."""

    fmt: str
    file: str
    page_size: list[object] | None
    """The ``page_size`` every box carries (``None``: the format states none)."""
    flat: bool = False
    """Section headers have no level: they all sit one below the title (Textract)."""
    steps: bool = True
    """The printed document has numbered procedures."""
    lead_in: tuple[str, str] | None = None
    """(heading, condition): the sentence before the steps under ``heading``."""
    caution: tuple[str, str] | None = None
    """(step words, caution): the note after that step."""


LAYOUTS = [
    Layout(
        "azure", "azure/hololens-recovery-en.json", LETTER_INCH, lead_in=HARD_RESTART_EN, caution=DISM_NOTE_EN
    ),
    Layout(
        "azure", "azure/hololens-recovery-ja.json", LETTER_INCH, lead_in=HARD_RESTART_JA, caution=DISM_NOTE_JA
    ),
    Layout(
        "google", "google/hololens-recovery-en.json", A4_PT, lead_in=HARD_RESTART_EN, caution=DISM_NOTE_EN
    ),
    Layout(
        "google", "google/hololens-recovery-ja.json", A4_PT, lead_in=HARD_RESTART_JA, caution=DISM_NOTE_JA
    ),
    Layout("textract", "textract/hololens-recovery-en.json", None, flat=True, lead_in=HARD_RESTART_EN),
    Layout("textract", "textract/samsung-tv-sections-10-28.json", None, flat=True, steps=False),
]


def _params(layouts: list[Layout]) -> list[object]:
    return [
        pytest.param(layout, id=layout.file.removesuffix(".json").replace("/", "-")) for layout in layouts
    ]


@pytest.mark.parametrize("layout", _params(LAYOUTS))
def test_section_paths_follow_the_printed_headings(layout: Layout, layout_checks: ModuleType) -> None:
    layout_checks.check_section_paths(layout.file, layout.fmt, flat=layout.flat)


@pytest.mark.parametrize("layout", _params([layout for layout in LAYOUTS if layout.steps]))
def test_numbered_steps_in_order_with_their_numbers(layout: Layout, layout_checks: ModuleType) -> None:
    layout_checks.check_steps(layout.file, layout.fmt)


@pytest.mark.parametrize("layout", _params([layout for layout in LAYOUTS if layout.lead_in]))
def test_lead_in_is_the_condition_of_its_steps(layout: Layout, layout_checks: ModuleType) -> None:
    assert layout.lead_in is not None
    heading, condition = layout.lead_in
    layout_checks.check_lead_in(layout.file, layout.fmt, heading, condition)


@pytest.mark.parametrize("layout", _params([layout for layout in LAYOUTS if layout.caution]))
def test_note_after_a_step_is_its_caution(layout: Layout, layout_checks: ModuleType) -> None:
    assert layout.caution is not None
    step_words, caution = layout.caution
    layout_checks.check_caution(layout.file, layout.fmt, step_words, caution)


@pytest.mark.parametrize("layout", _params(LAYOUTS))
def test_pages_and_boxes_reach_the_metadata(layout: Layout, layout_checks: ModuleType) -> None:
    layout_checks.check_pages_and_boxes(layout.file, layout.fmt, layout.page_size)


@pytest.mark.parametrize("layout", _params(LAYOUTS))
def test_fixture_is_what_the_generator_writes(layout: Layout, layout_checks: ModuleType) -> None:
    layout_checks.check_fixture_is_current(layout.file)


@pytest.mark.parametrize("layout", _params(LAYOUTS))
def test_no_word_is_lost(layout: Layout, layout_checks: ModuleType) -> None:
    layout_checks.check_no_words_lost(layout.file, layout.fmt)


def test_every_fixture_is_in_the_table(layout_checks: ModuleType) -> None:
    """A fixture added to the generator's plan gets the shared checks too."""
    committed = {p.relative_to(layout_checks.HERE).as_posix() for p in layout_checks.HERE.glob("*/*.json")}
    assert committed == {layout.file for layout in LAYOUTS}
    assert all(layout.file.startswith(f"{layout.fmt}/") for layout in LAYOUTS)

"""Running headers and footers, and contents lines, of plain text with page breaks: rule by rule.

The shapes are those real PDFs give through pypdf (see ``tests/test_framework_page_furniture.py``
for the PDFs themselves); each row here holds one rule or one guard on its own.
"""

from __future__ import annotations

import pytest

from procedure_rag._readers.plaintext import read_plain_text
from procedure_rag._readers.registry import PagedText, iter_paged_text
from procedure_rag._types import ElementKind, LayoutElement

K = ElementKind
FURNITURE = (K.PAGE_HEADER, K.PAGE_FOOTER)
BODIES = (
    "Open the Settings app.\nSelect Update & Security.",
    "Plug the device in.\nWait for the light to turn white.",
    "Select Reset this device.\nConfirm the reset.",
    "Hold the power button.\nRelease it after 15 seconds.",
)


def read(text: str) -> list[LayoutElement]:
    return read_plain_text(text, source_id="doc")


def furniture(elements: list[LayoutElement]) -> list[str]:
    return [e.text for e in elements if e.kind in FURNITURE]


def pages(top: str = "", bottom: str = "", bodies: tuple[str, ...] = BODIES) -> str:
    """Pages joined by form feeds, each with ``top`` and ``bottom`` lines (``{n}``: its number)."""
    out = []
    for n, body in enumerate(bodies, start=1):
        lines = [top.format(n=n), body, bottom.format(n=n)]
        out.append("\n".join(line for line in lines if line))
    return "\f".join(out)


@pytest.mark.parametrize(
    ("top", "bottom", "expected"),
    [
        # Chromium: the header (date, title) and the footer (URL, n/N) both at the page's bottom.
        (
            "",
            "12/1/26, 10:00 AM Device guide\nfile:///tmp/guide.html {n}/4",
            ["12/1/26, 10:00 AM Device guide", "file:///tmp/guide.html {n}/4"],
        ),
        # pypdf glues a page number and the header it sits beside.
        ("{n}Exastro", "", ["{n}Exastro"]),
        # A guide title over every page and a page number under it.
        ("HoloLens operations guide", "Page {n}", ["HoloLens operations guide", "Page {n}"]),
        # Japanese page numbers between fullwidth dashes.
        ("HoloLens 運用ガイド", "－ {n} －", ["HoloLens 運用ガイド", "－ {n} －"]),
    ],
    ids=["browser", "glued-number", "guide-title", "fullwidth-dashes"],
)
def test_running_lines_are_furniture(top: str, bottom: str, expected: list[str]) -> None:
    els = read(pages(top, bottom))
    want = [line.format(n=n) for n in range(1, len(BODIES) + 1) for line in expected]
    assert sorted(furniture(els)) == sorted(want)
    assert all(body.split("\n")[0] in "\n".join(e.text for e in els) for body in BODIES)


def test_a_running_line_on_two_pages_of_two() -> None:
    els = read(pages("HoloLens operations guide", "", BODIES[:2]))
    assert furniture(els) == ["HoloLens operations guide"] * 2


def test_text_without_page_breaks_has_no_running_lines() -> None:
    text = pages("12/1/26, 10:00 AM Device guide").replace("\f", "\n\n")
    assert furniture(read(text)) == []


@pytest.mark.parametrize(
    "text",
    [
        # On fewer than half of the pages.
        pages("", "See also", BODIES[:1]) + "\f" + pages("", "", BODIES[1:]),
        # At the bottom of every page, and in the middle of pages too.
        pages("", "See also", tuple(f"{b}\nSee also\nOne more line {i}." for i, b in enumerate(BODIES))),
        # A table's header row under the running header of every page, and in the middle of pages too.
        pages(
            "HoloLens operations guide\nSetting Value",
            "",
            tuple(f"Mode Auto\n{b}\nSetting Value\nTimeout 30\n{b.upper()}" for b in BODIES),
        ),
        # A step number alone on a line is too short to be a running line.
        pages("{n}.", "", BODIES),
    ],
    ids=["few-pages", "also-mid-page", "table-header", "short"],
)
def test_lines_that_only_look_running_stay(text: str) -> None:
    assert set(furniture(read(text))) <= {"HoloLens operations guide"}


def test_second_line_from_the_edge_needs_furniture_outside_it() -> None:
    # "Next steps" is second from the bottom of every page, but the line under it is body text.
    tails = ("See the FAQ.", "Call support.", "Read the guide.", "Visit the forum.")
    bodies = tuple(f"{body}\nNext steps\n{tail}" for body, tail in zip(BODIES, tails, strict=True))
    assert furniture(read(pages("", "", bodies))) == []
    # Under a running footer, the same line is furniture.
    assert furniture(read(pages("", "Next steps\nPage {n}", BODIES))).count("Next steps") == len(BODIES)


def test_a_page_keeps_its_only_line() -> None:
    # Every page's one line differs only by its number: a running line by shape, yet the page's text.
    text = "\f".join(f"Tour stop {n} of four" for n in range(1, 5))
    els = read(text)
    assert furniture(els) == []
    assert [e.text for e in els] == [f"Tour stop {n} of four" for n in range(1, 5)]


def test_the_number_a_running_line_prints_is_the_printed_page() -> None:
    paged = PagedText.join([f"Guide {n}\n{body}" for n, body in zip((11, 12, 13, 14), BODIES, strict=True)])
    els = list(iter_paged_text(paged, source_id="doc"))
    headers = [e for e in els if e.kind is K.PAGE_HEADER]
    assert [e.text for e in headers] == ["Guide 11", "Guide 12", "Guide 13", "Guide 14"]
    body = [e for e in els if e.kind is K.TEXT]
    assert {(e.page, dict(e.hints).get("printed_page")) for e in body} == {
        (1, "11"),
        (2, "12"),
        (3, "13"),
        (4, "14"),
    }


# ----- contents ---------------------------------------------------------------------------

CONTENTS_BODY = "\f".join(
    [
        "1. Overview\nThe device is set up in three steps.",
        "2. Setup\n1. Open the Settings app.\n2. Select Accounts.",
        "3. Reset\n1. Hold the power button for 15 seconds.\n2. Release it.",
    ]
)


def contents(elements: list[LayoutElement]) -> list[str]:
    return [e.text for e in elements if ("contents", "true") in e.hints]


@pytest.mark.parametrize(
    ("toc", "lines"),
    [
        # Dotted leaders and page numbers, without a title.
        ("1. Overview ........ 1\n2. Setup ........ 2\n3. Reset ........ 3", 3),
        # An entry wrapped over two lines between leader lines.
        (
            "1. Overview ........ 1\n2. Setting up the device\nfor the first time ........ 2\n"
            "3. Reset ....... 3",
            4,
        ),
        # A title, then entries whose titles come again later, in order.
        ("Contents\n1. Overview\n2. Setup\n3. Reset", 4),
        ("目次\n1. Overview\n2. Setup\n3. Reset", 4),
        # Under a title, one entry the text words differently.
        ("Contents\n1. Overview\n2. Setting up\n3. Reset", 4),
    ],
    ids=["leaders", "wrapped", "titled", "titled-ja", "one-differs"],
)
def test_contents_lines_are_text(toc: str, lines: int) -> None:
    els = read(f"{toc}\f{CONTENTS_BODY}")
    (block,) = contents(els)
    assert block == toc
    assert len(block.splitlines()) == lines
    # What follows reads as it does without the contents before it.
    alone = read(CONTENTS_BODY)
    assert [(e.kind, e.text) for e in els[1:]] == [(e.kind, e.text) for e in alone]


@pytest.mark.parametrize(
    "text",
    [
        # One or two leader lines are not a table of contents.
        "Wait for the download..... 5\nThen restart.",
        # A "Contents" heading over lines that never come again.
        "Contents\n1. The HoloLens 2 device.\n2. A USB-C cable.\n\nKeep the box.",
    ],
)
def test_lines_that_only_look_like_contents_stay(text: str) -> None:
    assert contents(read(text)) == []

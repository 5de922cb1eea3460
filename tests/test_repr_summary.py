"""Extractive summaries on real chunks, both languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from procedure_rag import Chunk, chunk
from procedure_rag._representations.offline.summary import summary

DATA = Path(__file__).resolve().parent / "data"


def _find(relative: str, heading: str) -> Chunk:
    """The section's procedure: its first chunk that holds steps, else its first chunk."""
    chunks = chunk((DATA / relative).read_text(encoding="utf-8"), source_id=relative)
    section = [c for c in chunks if c.section_path and c.section_path[-1] == heading]
    return next((c for c in section if c.steps), section[0])


@pytest.mark.parametrize(
    ("relative", "heading", "parts"),
    [
        (
            "hololens/en/hololens-recovery.md",
            "Hard-restart procedure",
            ("Hard-restart procedure", "If the standard reset procedure didn't work", "Unplug"),
        ),
        ("hololens/en/hololens-recovery.md", "Reset the device", ("Reset the device", "reset your device")),
        (
            "hololens/ja/hololens-recovery.md",
            "ハード再起動の手順",
            ("ハード再起動の手順", "標準のリセット手順が機能しない場合", "Type-C"),
        ),
        (
            "ja-native/areamanagement-dashboard-tool/markdown/manual/userMan.md",
            "2 地域情報の登録",
            ("2 地域情報の登録", "地域情報登録"),
        ),
    ],
)
def test_summary_names_heading_condition_and_task(
    relative: str, heading: str, parts: tuple[str, ...]
) -> None:
    text = summary(_find(relative, heading))
    for part in parts:
        assert part in text


@pytest.mark.parametrize(
    ("relative", "language"),
    [("hololens/en/hololens2-autopilot.md", "en"), ("hololens/ja/hololens2-autopilot.md", "ja")],
)
def test_summaries_stay_short(relative: str, language: str) -> None:
    for c in chunk((DATA / relative).read_text(encoding="utf-8"), source_id=relative):
        text = summary(c)
        assert text
        if language == "ja":
            assert len(text) <= 100
        else:
            assert len(text.split()) <= 31  # 30 words, the cut mark may hang on the last

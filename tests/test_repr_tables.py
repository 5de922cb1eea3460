"""Table summaries of real tables, ja and en, and the pipe-table reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from procedure_rag import ChunkType, chunk
from procedure_rag._representations.offline.tables import parse_pipe_table, table_summary

DATA = Path(__file__).resolve().parent / "data"
README = "ja-native/areamanagement-dashboard-tool/_license_evidence/README.md"


@pytest.mark.parametrize(
    ("relative", "heading", "columns", "rows", "phrases"),
    [
        (
            "hololens/en/hololens-provisioning.md",
            "What you can configure",
            ["Setting", "Description"],
            4,
            ("Columns: Setting, Description", "4 rows", "Certificates", "ConnectivityProfiles"),
        ),
        (
            "hololens/ja/hololens-provisioning.md",
            "構成内容",
            ["設定", "説明"],
            4,
            ("列：設定、説明", "4 行", "証明書"),
        ),
        (
            "hololens/en/hololens2-autopilot.md",
            "Review HoloLens OS requirements:",
            ["Minimum operating system version", "Feature supported", "Remarks"],
            2,
            ("Windows Holographic, version 2004",),
        ),
        (README, "更新履歴", ["更新日時", "リリース", "更新内容"], 2, ("2024/3/29", "2023/3/30")),
    ],
)
def test_real_table_summary(
    relative: str, heading: str, columns: list[str], rows: int, phrases: tuple[str, ...]
) -> None:
    chunks = chunk((DATA / relative).read_text(encoding="utf-8"), source_id=relative)
    table = next(c for c in chunks if c.chunk_type is ChunkType.TABLE and c.section_path[-1] == heading)
    text, meta = table_summary(table)
    assert meta == {"is_table": True, "columns": json.dumps(columns, ensure_ascii=False), "row_count": rows}
    for phrase in phrases:
        assert phrase in text


@pytest.mark.parametrize(
    ("text", "columns", "rows"),
    [
        ("| a | b |\n|---|---|\n| 1 | 2 |", ("a", "b"), (("1", "2"),)),
        ("a | b\n--- | ---\n1 | 2\n3 | 4", ("a", "b"), (("1", "2"), ("3", "4"))),
        ("| a \\| x | b |\n| :-- | --: |\n| **1** | [two](u) |", ("a | x", "b"), (("1", "two"),)),
        ("| 1 | 2 |\n| 3 | 4 |", (), (("1", "2"), ("3", "4"))),  # rows of a split table, header elsewhere
    ],
)
def test_pipe_table_reader(text: str, columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> None:
    table = parse_pipe_table(text)
    assert table is not None
    assert (table.columns, table.rows) == (columns, rows)


def test_text_without_table() -> None:
    assert parse_pipe_table("no table here\njust text") is None

"""Table summary: what a table is, its columns, how many rows and which row keys.

Reads the Markdown pipe table the chunker writes (with or without outer pipes). A
continuation chunk of a split table may carry rows without their header; it is then
summarised by its rows alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from procedure_rag._language.lexicons import by_language
from procedure_rag._representations.offline.summary import body_text, plain
from procedure_rag._types import Chunk

__all__ = ["ParsedTable", "TableWords", "parse_pipe_table", "table_summary"]

_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_MAX_KEYS = 10
_MAX_KEY_CHARS = 40
_MAX_CAPTION = 80


@dataclass(frozen=True, slots=True)
class ParsedTable:
    """A pipe table: its caption (the line before it), header cells and body rows."""

    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class TableWords:
    """How a table summary is worded in one language (templates, then joiners)."""

    what: str
    where: str
    columns: str
    rows: str
    keys: str
    join: str
    sentence_join: str


TABLE_WORDS: dict[str, TableWords] = {
    "ja": TableWords(
        what="表：{caption}",
        where="（{path}）",
        columns="列：{columns}",
        rows="{count} 行",
        keys="行：{keys}",
        join="、",
        sentence_join="。",
    ),
    "en": TableWords(
        what="Table: {caption}",
        where=" ({path})",
        columns="Columns: {columns}",
        rows="{count} rows",
        keys="Rows: {keys}",
        join=", ",
        sentence_join=". ",
    ),
}


def _cells(line: str) -> tuple[str, ...]:
    line = line.strip()
    line = line.removeprefix("|")
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    return tuple(plain(cell.replace("\\|", "|")) for cell in _CELL_SPLIT.split(line))


def parse_pipe_table(text: str) -> ParsedTable | None:
    """The first pipe table in ``text``, or ``None`` when it holds none.

    A table is a header line followed by a ``---|---`` rule, then rows; lines with
    pipes and no rule before them are rows of a table whose header is elsewhere.
    """
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _RULE.match(line) and i > 0 and "|" in lines[i - 1]:
            header = _cells(lines[i - 1])
            body = []
            for row in lines[i + 1 :]:
                if "|" not in row:
                    break
                if not _RULE.match(row) and _cells(row) != header:  # a repeated header
                    body.append(_cells(row))
            caption = next((plain(x) for x in reversed(lines[: i - 1]) if x.strip()), "")
            return ParsedTable(caption, header, tuple(body))
    rows = [i for i, line in enumerate(lines) if line.count("|") >= 2]
    if not rows:
        return None
    caption = next((plain(x) for x in reversed(lines[: rows[0]]) if x.strip()), "")
    return ParsedTable(caption, (), tuple(_cells(lines[i]) for i in rows))


def _key(row: tuple[str, ...]) -> str:
    key = next((c for c in row if c), "")
    return key if len(key) <= _MAX_KEY_CHARS else key[: _MAX_KEY_CHARS - 1] + "…"


def table_summary(chunk: Chunk) -> tuple[str, dict[str, str | int | float | bool]]:
    """Return a summary of the chunk's table and its metadata.

    The text names the table (its caption, else the innermost heading), where it
    sits (the heading path), its columns, its row count and up to ten row keys
    (first-column values). Metadata: ``is_table`` (True), ``columns`` (JSON list)
    and ``row_count``. A chunk without a table gives ``("", {})``.
    """
    table = parse_pipe_table(body_text(chunk))
    if table is None:
        return "", {}
    words = by_language(TABLE_WORDS, chunk.language)
    caption = table.caption if 0 < len(table.caption) <= _MAX_CAPTION else ""
    caption = caption or (chunk.section_path[-1] if chunk.section_path else "")
    path = " > ".join(chunk.section_path[-2:])
    parts = [words.what.format(caption=caption) + (words.where.format(path=path) if path else "")]
    if table.columns:
        parts.append(words.columns.format(columns=words.join.join(c for c in table.columns if c)))
    parts.append(words.rows.format(count=len(table.rows)))
    keys = list(dict.fromkeys(k for k in map(_key, table.rows) if k.strip("-—– ")))[:_MAX_KEYS]
    if keys:
        parts.append(words.keys.format(keys=words.join.join(keys)))
    text = words.sentence_join.join(parts) + words.sentence_join.strip()
    meta: dict[str, str | int | float | bool] = {
        "is_table": True,
        "columns": json.dumps(list(table.columns), ensure_ascii=False),
        "row_count": len(table.rows),
    }
    return text, meta

"""A sheet as pandas-based loaders write it: each row ``header: value, header: value, …``.

LlamaIndex's ``PandasExcelReader`` (``SimpleDirectoryReader``'s default for ``.xlsx`` and
``.xls``) reads each sheet with ``pandas.read_excel`` and writes one document per sheet,
a line per row::

    作業手順書: 1, Unnamed: 1: ○○サーバに SSH 接続する, Unnamed: 2: スタートメニューより…

The sheet's first row became the column names (``Unnamed: 3`` where its cell is empty,
``No.1`` for a second ``No``) and is not written as a row. :func:`sheet_rows` takes such
a text back to the sheet's rows, that first row included, so the Excel reader's rules
read it as they read the file (a procedure sheet's columns as step fields, a grid as a
table, text laid out in cells line by line).
"""

from __future__ import annotations

import re

__all__ = ["sheet_rows"]

_FIELD = ", "
_KEY = ": "
_UNNAMED = re.compile(r"Unnamed: (\d+)")
_PIECE_KEY = re.compile(r"(Unnamed: \d+|[^\n]*?): ")
_DEDUPED = re.compile(r"(.+)\.(\d+)")
_WHOLE_FLOAT = re.compile(r"-?\d+\.0")


def sheet_rows(text: str, *, unnamed: bool = False) -> list[list[str]] | None:
    """The sheet's rows, its header row first, or ``None`` when ``text`` is not such a sheet.

    The column names are read from the first row and kept where every row has them, in
    order; a text is taken for a sheet when at least one empty header cell is named
    ``Unnamed: i`` at its own column ``i``, or (unless ``unnamed``: a text whose source is
    not known to be a workbook) when it has two rows or more, each with every column.
    """
    cut = text.find("\n")
    first_line = text if cut < 0 else text[:cut]
    if _FIELD not in first_line:
        return None  # one column, or no such row: most texts stop here
    candidates = _candidates(first_line)
    # Columns are only ever dropped below: a text that cannot pass on its first row stops here.
    if not _looks_like_pandas(candidates, 2, unnamed=unnamed):
        return None
    lead = candidates[0] + _KEY
    if not text.startswith(lead):
        return None
    # A row starts a line with the first column's name (a value may hold line breaks).
    breaks = [m.start() for m in re.finditer("\n" + re.escape(lead), text)]
    bounds = zip([-1, *breaks], [*breaks, len(text)], strict=True)
    rows_text = [text[start + 1 : end] for start, end in bounds]
    headers = [candidates[0]] + [
        name for name in candidates[1:] if all(_FIELD + name + _KEY in row for row in rows_text)
    ]
    if not _looks_like_pandas(headers, len(rows_text), unnamed=unnamed):
        return None
    rows = []
    for row_text in rows_text:
        cells = _cells(row_text, headers)
        if cells is None:
            return None
        rows.append(cells)
    return [_header_row(headers), *_whole_numbers(rows)]


def _candidates(line: str) -> list[str]:
    """Column names as the first row shows them: each piece after ``", "`` that opens with ``name: ``."""
    names: list[str] = []
    for index, piece in enumerate(line.split(_FIELD)):
        m = _PIECE_KEY.match(piece)
        if m is None:
            if index == 0:
                return []
            continue  # a value that holds ", "
        names.append(m.group(1))
    return names


def _looks_like_pandas(headers: list[str], rows: int, *, unnamed: bool) -> bool:
    unnamed_in_place = any(
        (m := _UNNAMED.fullmatch(name)) is not None and int(m.group(1)) == column
        for column, name in enumerate(headers)
    )
    return len(headers) >= 2 and (unnamed_in_place or (rows >= 2 and not unnamed))


def _cells(row: str, headers: list[str]) -> list[str] | None:
    """A row's values, column by column; ``None`` when a column is missing."""
    values: list[str] = []
    at = len(headers[0]) + len(_KEY)
    for name in headers[1:]:
        sep = row.find(_FIELD + name + _KEY, at)
        if sep < 0:
            return None
        values.append(row[at:sep])
        at = sep + len(_FIELD) + len(name) + len(_KEY)
    values.append(row[at:])
    return [value.strip() for value in values]


def _whole_numbers(rows: list[list[str]]) -> list[list[str]]:
    """``rows`` with a column of whole numbers written back as integers.

    pandas reads a column of numbers with an empty cell as floats, so the loader writes the
    step numbers ``1, 2, 3`` as ``1.0, 2.0, 3.0``: where every value of a column is such a
    float, it is the integer the sheet shows.
    """
    width = len(rows[0]) if rows else 0
    columns = [[row[col] for row in rows if row[col]] for col in range(width)]
    whole = [col for col, cells in enumerate(columns) if cells and all(map(_WHOLE_FLOAT.fullmatch, cells))]
    if not whole:
        return rows
    return [[cell[:-2] if col in whole and cell else cell for col, cell in enumerate(row)] for row in rows]


def _header_row(headers: list[str]) -> list[str]:
    """The sheet's first row: pandas' names back to cell texts (``Unnamed: 3`` empty, ``No.1`` ``No``)."""
    row: list[str] = []
    for name in headers:
        if _UNNAMED.fullmatch(name):
            row.append("")
            continue
        m = _DEDUPED.fullmatch(name)
        row.append(m.group(1) if m is not None and m.group(1) in row else name)
    return row

"""Tables as Markdown pipe tables, the form the chunker splits by rows.

Every reader ends with a grid of cell texts; :func:`pipe_table` writes it the one
way the chunker expects: a header row, a ``|---|`` rule, then the rows.
:func:`html_table_to_markdown` reads the grid of an HTML table first (Unstructured's
``text_as_html``).
"""

from __future__ import annotations

from collections.abc import Sequence
from html.parser import HTMLParser

__all__ = ["html_table_to_markdown", "pipe_table"]


def _cell(text: str) -> str:
    """A cell on one line, with ``|`` escaped so that it stays inside its cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _merged(header: Sequence[Sequence[str]], width: int) -> list[str]:
    """Header rows as one row: each column's distinct texts, top to bottom."""
    return [
        " ".join(dict.fromkeys(row[c] for row in header if c < len(row) and row[c])) for c in range(width)
    ]


def pipe_table(rows: Sequence[Sequence[str]], *, header_rows: int = 1) -> str:
    """Render rows of cell texts as a Markdown pipe table.

    Args:
        rows: Cell texts, row by row. Empty rows are dropped and short rows padded
            with empty cells; cell text is put on one line and ``|`` escaped.
        header_rows: How many leading rows are the header. They are merged into
            one header row (a spanning cell repeated in the grid is written once);
            with 0 the first row is the header all the same.

    Returns:
        The table, or ``""`` when it has no cells.
    """
    grid = [[_cell(c) for c in row] for row in rows if row]
    width = max((len(row) for row in grid), default=0)
    if not width:
        return ""
    head = max(header_rows, 1)
    body = [[*row, *[""] * (width - len(row))] for row in grid[head:]]
    lines = ["| " + " | ".join(row) + " |" for row in (_merged(grid[:head], width), *body)]
    lines.insert(1, "|" + "---|" * width)
    return "\n".join(lines)


class _TableParser(HTMLParser):
    """Rows of cells of the first table in ``text_as_html`` (``colspan`` repeats a blank cell)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._span = 1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self._cell = []
            span = dict(attrs).get("colspan") or "1"
            self._span = int(span) if span.isdecimal() and 0 < int(span) < 100 else 1
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].extend(["".join(self._cell)] + [""] * (self._span - 1))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_table_to_markdown(html: str) -> str:
    """Return an HTML table as a Markdown pipe table (first row as header), or ``""``."""
    parser = _TableParser()
    parser.feed(html)
    parser.close()
    return pipe_table(parser.rows)

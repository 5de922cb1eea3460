"""Tables a PDF page draws: grids of ruling lines and cell boxes, and the text in their cells.

PowerPoint draws a table as a box per cell and a line per border; LibreOffice and Word
draw the borders as lines. Their text is placed cell by cell, often too close for the
alignment rules of :mod:`procedure_rag._readers.pdf_structure` to tell the columns
apart. Here the drawing tells them:

1. **Edges.** Every horizontal or vertical line, and every side of a box, the page draws
   (:mod:`procedure_rag._readers.pdf_pages` reads them), with positions within
   :data:`_SNAP` points snapped together and touching pieces of one line joined.
2. **Cells.** Where a horizontal and a vertical edge cross is a corner; a cell is the
   smallest rectangle whose four corners are corners joined by edges along its sides.
3. **Grids.** Cells that share a corner form one grid; its column and row boundaries
   are the cells' sides, and a cell may span several of each.

A grid is a table only when two of its rows hold text in two cells or more, and one
column border runs through every such row (:func:`grid_rows`): a box around a note, a
callout with a title bar, a frame around a figure, words highlighted one by one or a
heading's underline is none. This module is geometry only; it does not talk to PDFium.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from procedure_rag._readers.pdf_text import fix_line, join_wrapped

if TYPE_CHECKING:
    from procedure_rag._readers.pdf_pages import Line

__all__ = ["Edge", "Grid", "GridCell", "find_grids", "grid_rows"]

# Edges whose positions differ by at most this many points are one line (a border drawn
# both as a cell box's side and as a stroke, a stroke's width).
_SNAP = 3.0
# A cell is at least this many points wide and high (two strokes of one border are no cell).
_MIN_CELL = 4.0
# More edges than this on one page, or more crossings of horizontal and vertical lines than
# this, is a vector drawing (a chart, a map), not a table: it is not searched for cells.
_MAX_EDGES = 2000
_MAX_CROSSINGS = 5_000


@dataclass(frozen=True, slots=True)
class Edge:
    """A horizontal (``across``) or vertical line the page draws, in points from the top left.

    ``at`` is its y (horizontal) or x (vertical); it runs from ``start`` to ``end`` along
    the other axis.
    """

    across: bool
    at: float
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class GridCell:
    """A cell of a grid: its box in points and the rows and columns it spans (end excluded)."""

    left: float
    top: float
    right: float
    bottom: float
    row: int
    row_end: int
    col: int
    col_end: int


@dataclass(frozen=True, slots=True)
class Grid:
    """Cells that share corners: a table the page draws, if its text fills it (see :func:`grid_rows`)."""

    cells: tuple[GridCell, ...]
    rows: int
    cols: int

    @property
    def left(self) -> float:
        return min(c.left for c in self.cells)

    @property
    def top(self) -> float:
        return min(c.top for c in self.cells)

    @property
    def right(self) -> float:
        return max(c.right for c in self.cells)

    @property
    def bottom(self) -> float:
        return max(c.bottom for c in self.cells)

    def holds(self, line: Line) -> bool:
        """Whether the middle of ``line`` lies inside the grid."""
        x, y = (line.left + line.right) / 2, (line.top + line.bottom) / 2
        return self.left <= x <= self.right and self.top <= y <= self.bottom

    def cell_at(self, x: float, y: float) -> GridCell | None:
        """The cell holding the point, or the nearest one (text a little over a border)."""
        best, distance = None, float("inf")
        for cell in self.cells:
            dx = max(cell.left - x, 0.0, x - cell.right)
            dy = max(cell.top - y, 0.0, y - cell.bottom)
            if dx + dy < distance:
                best, distance = cell, dx + dy
        return best

    def cuts(self) -> list[tuple[float, float, float]]:
        """The vertical borders inside the grid as ``(x, top, bottom)``: text never runs across one."""
        out = {(c.left, c.top, c.bottom) for c in self.cells if c.col > 0}
        return sorted(out)


def find_grids(edges: Iterable[Edge], width: float, height: float) -> list[Grid]:
    """The grids the edges draw on a page this size, with two cells or more, top to bottom.

    See the module docstring. A table that runs over the top or bottom of the page
    (a browser prints a long table across pages) is cut there: the page's edge closes
    the cells that cross it.
    """
    edges = _on_page(list(edges), width, height)
    if len(edges) > _MAX_EDGES:
        return []
    across = _merged([e for e in edges if e.across])
    down = _merged([e for e in edges if not e.across])
    if len(across) * len(down) > _MAX_CROSSINGS:
        return []
    corners = {
        (v.at, h.at)
        for h in across
        for v in down
        if h.start - _SNAP <= v.at <= h.end + _SNAP and v.start - _SNAP <= h.at <= v.end + _SNAP
    }
    boxes = _cells(corners, across, down)
    return sorted((g for g in _grouped(boxes) if len(g.cells) >= 2), key=lambda g: (g.top, g.left))


def grid_rows(grid: Grid, lines: Sequence[Line]) -> list[list[str]]:
    """The cell texts of ``grid``, row by row, or ``[]`` when the text does not make it a table.

    Each run of a line's characters (a :class:`~procedure_rag._readers.pdf_pages.Cell`)
    goes to the grid cell holding its middle; a cell's runs are joined top to bottom as
    wrapped lines are. A cell that spans rows or columns is written in its first; rows
    and columns left empty are dropped. A table has two rows with text in two cells or
    more, and a column border they all have.
    """
    texts: dict[GridCell, str] = {}
    for line in sorted(lines, key=lambda ln: (ln.top, ln.left)):
        y = (line.top + line.bottom) / 2
        for run in line.cells:
            cell = grid.cell_at((run.left + run.right) / 2, y)
            if cell is not None:
                texts[cell] = join_wrapped(texts.get(cell, ""), fix_line(run.text))
    if not _tabular(grid, {cell for cell, text in texts.items() if text}):
        return []
    table = [[""] * grid.cols for _ in range(grid.rows)]
    for cell, text in texts.items():
        table[cell.row][cell.col] = text
    keep = [c for c in range(grid.cols) if any(row[c] for row in table)]
    return [[row[c] for c in keep] for row in table if any(row[c] for c in keep)]


def _tabular(grid: Grid, filled: set[GridCell]) -> bool:
    """Whether two rows or more hold text in two cells or more, and one column border runs through them all.

    A framed note or a box with a title bar has one cell a row; lines highlighted one
    by one have cells side by side, but each row its own borders.
    """
    common: set[int] | None = None
    rows = 0
    for row in range(grid.rows):
        cells = [c for c in grid.cells if c.row <= row < c.row_end]
        if sum(1 for c in cells if c in filled) < 2:
            continue
        rows += 1
        borders = {c.col for c in cells if c.col > 0}
        common = borders if common is None else common & borders
    return rows >= 2 and bool(common)


def _on_page(edges: list[Edge], width: float, height: float) -> list[Edge]:
    """The edges cut to the page; where vertical edges run over its top or bottom, that side is one too."""
    out = []
    over: dict[float, list[float]] = {}
    for e in edges:
        if e.across:
            if 0 <= e.at <= height and e.end > 0 and e.start < width:
                out.append(Edge(True, e.at, max(e.start, 0.0), min(e.end, width)))
            continue
        if not 0 <= e.at <= width or e.end < 0 or e.start > height:
            continue
        for side in (0.0, height):
            if e.start < side - _SNAP and e.end > side + _SNAP:
                over.setdefault(side, []).append(e.at)
        out.append(Edge(False, e.at, max(e.start, 0.0), min(e.end, height)))
    out.extend(Edge(True, side, min(xs), max(xs)) for side, xs in over.items() if len(xs) >= 2)
    return out


def _merged(edges: list[Edge]) -> list[Edge]:
    """Edges snapped to shared positions and joined where they touch or overlap."""
    out: list[Edge] = []
    group: list[Edge] = []

    def close() -> None:
        at = sum(e.at for e in group) / len(group)
        pieces = sorted((e.start, e.end) for e in group)
        start, end = pieces[0]
        for s, e in pieces[1:]:
            if s <= end + _SNAP:
                end = max(end, e)
            else:
                out.append(Edge(group[0].across, at, start, end))
                start, end = s, e
        out.append(Edge(group[0].across, at, start, end))

    for edge in sorted(edges, key=lambda e: e.at):
        if group and edge.at - group[-1].at > _SNAP:
            close()
            group = []
        group.append(edge)
    if group:
        close()
    return out


def _runs(edges: list[Edge]) -> dict[float, list[tuple[float, float]]]:
    """Merged edges by their position (positions of two merged lines are over ``_SNAP`` apart)."""
    out: dict[float, list[tuple[float, float]]] = {}
    for e in edges:
        out.setdefault(e.at, []).append((e.start, e.end))
    return out


def _covered(runs: dict[float, list[tuple[float, float]]], at: float, start: float, end: float) -> bool:
    """Whether a merged edge at ``at`` runs from ``start`` to ``end``."""
    return any(s - _SNAP <= start and end <= e + _SNAP for s, e in runs.get(at, ()))


def _cells(
    corners: set[tuple[float, float]], across: list[Edge], down: list[Edge]
) -> list[tuple[float, float, float, float]]:
    """The smallest rectangle below and right of each corner whose sides are drawn."""
    rows, cols = _runs(across), _runs(down)
    xs_at: dict[float, list[float]] = {}
    ys_at: dict[float, list[float]] = {}
    for x, y in sorted(corners):
        xs_at.setdefault(y, []).append(x)
        ys_at.setdefault(x, []).append(y)
    for values in (*xs_at.values(), *ys_at.values()):
        values.sort()
    out = []
    for x, y in sorted(corners, key=lambda p: (p[1], p[0])):
        below = [b for b in ys_at[x] if b >= y + _MIN_CELL]
        right = [r for r in xs_at[y] if r >= x + _MIN_CELL]
        found = None
        for b in below:
            if not _covered(cols, x, y, b):
                break
            for r in right:
                if not _covered(rows, y, x, r):
                    break
                if (r, b) in corners and _covered(cols, r, y, b) and _covered(rows, b, x, r):
                    found = (x, y, r, b)
                    break
            if found:
                break
        if found:
            out.append(found)
    return out


def _grouped(boxes: list[tuple[float, float, float, float]]) -> list[Grid]:
    """Cells sharing a corner, as grids with their row and column boundaries."""
    parent = list(range(len(boxes)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[tuple[float, float], int] = {}
    for i, (left, top, right, bottom) in enumerate(boxes):
        for corner in ((left, top), (right, top), (left, bottom), (right, bottom)):
            if corner in owner:
                parent[root(i)] = root(owner[corner])
            else:
                owner[corner] = i
    groups: dict[int, list[tuple[float, float, float, float]]] = {}
    for i, box in enumerate(boxes):
        groups.setdefault(root(i), []).append(box)
    grids = []
    for members in groups.values():
        xs = {x: i for i, x in enumerate(sorted({b[0] for b in members} | {b[2] for b in members}))}
        ys = {y: i for i, y in enumerate(sorted({b[1] for b in members} | {b[3] for b in members}))}
        cells = tuple(
            GridCell(*b, ys[b[1]], ys[b[3]], xs[b[0]], xs[b[2]])
            for b in sorted(members, key=lambda b: (b[1], b[0]))
        )
        grids.append(Grid(cells, len(ys) - 1, len(xs) - 1))
    return grids

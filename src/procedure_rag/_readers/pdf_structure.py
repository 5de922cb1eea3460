"""A PDF's lines grouped into blocks, and what each block is.

The best evidence the file has wins, in this order:

1. **Tags.** In a tagged PDF (Word, LibreOffice and Chromium write them) the lines
   of one tag element form one block, and ``H1``-``H6`` are headings, ``LI`` list
   items, ``Table`` a table, ``Caption`` a caption.
2. **The outline.** Without heading tags, a block whose text is a bookmark's
   title, on the bookmark's page, is a heading at the bookmark's depth.
3. **Fonts.** Otherwise a short block set in a size above the body text's (the
   size most of the text has) is a heading, the largest size the highest level;
   a short bold line at body size with body text after it is a heading below
   those, and so is a short line with a rule drawn right under it (the border a
   web page or a Word style draws under a heading). A title alone in the largest
   size on the first page is the title.

Whatever the evidence, a block is never a heading when it is a figure or table
caption (``図 2-6``, ``Table 1``), a row of a table, a sentence, or on a contents
page; a list of the document's own later headings is a contents list
(:mod:`procedure_rag._readers.pdf_contents`), never steps. Untagged lines form
blocks by geometry: one font size, no paragraph gap, and a new block at every
line that starts with a step marker. Tables are the tag tree's, then the grids the
page's ruling lines and cell boxes draw (:mod:`procedure_rag._readers.pdf_grids`),
then runs of lines split into aligned cells.

This module makes a page's blocks (:func:`page_blocks`), kinds as its tags say; the
outline and font rules, weighed over the whole document, are in
:mod:`procedure_rag._readers.pdf_headings`, and the passes over the pages that apply
them all in :mod:`procedure_rag._readers.pdf_passes`.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from procedure_rag._language.numbering import match_step_marker
from procedure_rag._readers.pdf_grids import grid_rows
from procedure_rag._readers.pdf_pages import Line, PageLines
from procedure_rag._readers.pdf_text import fix_line, join_wrapped, with_plain_bullet
from procedure_rag._readers.text_lines import CAPTION as _CAPTION

__all__ = ["HEADING_LINES", "Block", "heading_tag", "large", "margin", "page_blocks"]

_HEADING_TAG = re.compile(r"^H([1-6])$")
# A heading is at most this many lines.
HEADING_LINES = 2


@dataclass
class Block:
    """A run of lines that read as one element.

    ``kind`` is ``"heading"``, ``"title"``, ``"text"``, ``"item"`` (a tagged list
    item), ``"table"``, ``"caption"``, ``"contents"``, ``"header"`` or ``"footer"``.
    ``table_from`` says what found a table no tag declares: ``"rules"`` (the lines and
    boxes the page draws) or ``"alignment"`` (lines split into aligned cells).
    """

    kind: str
    lines: list[Line]
    page: int
    level: int = 0
    rows: list[list[str]] = field(default_factory=list)
    table_from: str = ""

    @property
    def text(self) -> str:
        """The block's text: its lines' fixed text, wrapped lines joined."""
        if self.kind == "contents":
            return "\n".join(fix_line(line.text) for line in self.lines)
        out = ""
        for line in self.lines:
            out = join_wrapped(out, fix_line(line.text))
        return with_plain_bullet(out)

    @property
    def size(self) -> float:
        return self.lines[0].size

    @property
    def bold(self) -> bool:
        return all(line.bold for line in self.lines)

    @property
    def left(self) -> float:
        return min(line.left for line in self.lines)

    @property
    def top(self) -> float:
        return min(line.top for line in self.lines)

    @property
    def right(self) -> float:
        return max(line.right for line in self.lines)

    @property
    def bottom(self) -> float:
        return max(line.bottom for line in self.lines)


def page_blocks(page: PageLines, furniture: set[int], *, contents: bool) -> list[Block]:
    """A page's blocks in reading order, then its headers and footers, kinds as its tags say.

    Args:
        page: The page's lines.
        furniture: The indexes of its header and footer lines.
        contents: Whether it is a contents page: its other lines are one contents block.
    """
    lines = [line for i, line in enumerate(page.lines) if i not in furniture]
    furn = [
        Block("header" if line.top < page.height / 2 else "footer", [line], page.number)
        for i, line in enumerate(page.lines)
        if i in furniture
    ]
    if contents:
        return [Block("contents", lines, page.number), *furn] if lines else furn
    return [*_reading_order(_blocks(lines, page), page.width), *furn]


def heading_tag(line: Line) -> bool:
    """Whether a line is tagged as a heading (``H1``-``H6``)."""
    return _HEADING_TAG.match(line.tag) is not None


def margin(page: PageLines, blocks: list[Block]) -> float:
    """The left edge of the page's body text: where an unindented line starts."""
    lefts = [line.left for b in blocks if b.kind in ("text", "item") for line in b.lines]
    if not lefts:
        return 0.0
    common = Counter(round(x) for x in lefts).most_common()
    # The leftmost edge many lines share (a few stray lines further left do not count).
    floor = min(lefts)
    shared = [x for x, n in common if n >= 2]
    return float(min(shared)) if shared else floor


def large(line: Line, body: float) -> bool:
    """Whether a line is set larger than the body text, alone in its cell: a heading candidate."""
    return line.size >= body * 1.1 and line.size >= body + 1 and len(line.cells) == 1


def _group(lines: Sequence[Line], page: int) -> list[Block]:
    blocks: list[Block] = []
    for line in lines:
        last = blocks[-1] if blocks else None
        if last is not None and _continues(last, line):
            last.lines.append(line)
            continue
        blocks.append(_new_block(line, page))
    return blocks


def _new_block(line: Line, page: int) -> Block:
    heading = _HEADING_TAG.match(line.tag)
    if heading:
        return Block("heading", [line], page, level=int(heading.group(1)))
    kinds = {"Title": "title", "Caption": "caption", "LI": "item"}
    return Block(kinds.get(line.tag, "text"), [line], page)


def _continues(block: Block, line: Line) -> bool:
    """Whether ``line`` goes on the paragraph ``block`` (see :func:`_set_apart`)."""
    last = block.lines[-1]
    if line.tag_key or last.tag_key:
        return line.tag_key == last.tag_key
    return not _set_apart(block, last, line)


def _set_apart(block: Block, last: Line, line: Line) -> bool:
    """Another size, weight, cell layout or typeface, a paragraph gap, a marker, a caption, an indent."""
    em = max(last.size, line.size, 1.0)
    styled = abs(line.size - last.size) > 0.6 or line.bold != last.bold or line.mono != last.mono
    cells = (len(line.cells) > 1) != (len(last.cells) > 1)
    gap = line.top < last.top or line.top - last.bottom > 0.45 * em
    text = with_plain_bullet(fix_line(line.text))
    starts = match_step_marker(text) is not None or _CAPTION.match(unicodedata.normalize("NFKC", text))
    first = block.lines[0]
    marked = match_step_marker(with_plain_bullet(fix_line(first.text))) is not None
    aligned = first.left - 1.5 * em <= line.left <= first.left + (4 if marked else 0.5) * em
    return styled or cells or gap or bool(starts) or not aligned


def _blocks(lines: list[Line], page: PageLines) -> list[Block]:
    """The page's blocks in drawing order: its ruled tables, and its other lines grouped."""
    tables = _ruled_tables(lines, page)
    out: list[Block] = []
    rest: list[Line] = []
    for line in lines:
        table = tables.get(id(line))
        if table is None:
            rest.append(line)
            continue
        out.extend(_tables(_group(rest, page.number)))
        rest = []
        if table.lines[0] is line:
            out.append(table)
    out.extend(_tables(_group(rest, page.number)))
    return out


def _ruled_tables(lines: list[Line], page: PageLines) -> dict[int, Block]:
    """The tables the page's ruling lines and cell boxes draw, by the id of each of their lines.

    A grid holds a table only when its text fills two rows and two columns
    (:func:`~procedure_rag._readers.pdf_grids.grid_rows`). The tag tree has the last
    word: a grid around tagged text that is no table of the tag tree is none.
    """
    out: dict[int, Block] = {}
    for grid in page.grids:
        inside = [line for line in lines if id(line) not in out and grid.holds(line)]
        if not inside or all(line.tag_key for line in inside):
            continue
        rows = grid_rows(grid, inside)
        if rows:
            table = Block("table", inside, page.number, rows=rows, table_from="rules")
            out.update((id(line), table) for line in inside)
    return out


def _tables(blocks: list[Block]) -> list[Block]:
    """Merge runs of blocks whose lines are split into aligned cells into table blocks."""
    out: list[Block] = []
    run: list[Block] = []

    def close() -> None:
        if len(run) >= 2 or (run and len(run[0].lines) >= 2):
            lines = [line for b in run for line in b.lines]
            rows = _rows(lines)
            if rows and len(rows) >= 2:
                found = "" if any(_in_tagged_table(b) for b in run) else "alignment"
                out.append(Block("table", lines, run[0].page, rows=rows, table_from=found))
                run.clear()
                return
        out.extend(run)
        run.clear()

    for block in blocks:
        tabular = block.kind in ("text", "item") and all(len(line.cells) > 1 for line in block.lines)
        in_table = _in_tagged_table(block)
        if tabular or in_table:
            run.append(block)
        else:
            close()
            out.append(block)
    close()
    return out


def _in_tagged_table(block: Block) -> bool:
    """Whether the block's lines sit in a table of the tag tree (a declared table)."""
    return any(t in ("Table", "TR", "TD", "TH") for line in block.lines for t in line.tag_path)


def _rows(lines: list[Line]) -> list[list[str]]:
    """Rows of cell texts: cells go to the column whose left edge they start nearest."""
    lefts = sorted(cell.left for line in lines for cell in line.cells)
    columns: list[float] = []
    for x in lefts:
        if not columns or x - columns[-1] > 12:
            columns.append(x)
    if len(columns) < 2:
        return []
    rows: list[list[str]] = []
    row_top: float | None = None
    for line in sorted(lines, key=lambda ln: ln.top):
        cells = [""] * len(columns)
        for cell in line.cells:
            col = (
                max(i for i, x in enumerate(columns) if x <= cell.left + 12)
                if cell.left + 12 >= columns[0]
                else 0
            )
            cells[col] = join_wrapped(cells[col], fix_line(cell.text))
        if rows and row_top is not None and (line.top - row_top < 2 or not cells[0]):
            rows[-1] = [join_wrapped(a, b) for a, b in zip(rows[-1], cells, strict=True)]
        else:
            rows.append(cells)
            row_top = line.top
    return rows


def _reading_order(blocks: list[Block], width: float) -> list[Block]:
    """The order the page draws its blocks in, with two fixes.

    A page laid out in two columns reads the left column first, then the right;
    and a heading that sits above everything else on the page but is drawn later
    (a slide's title placeholder) comes first.
    """
    middle = width / 2
    left = [b for b in blocks if b.right <= middle + 4]
    right = [b for b in blocks if b.left >= middle - 4]
    spanning = [b for b in blocks if b not in left and b not in right]
    if len(left) >= 3 and len(right) >= 3 and sum(len(b.text) for b in right) > 200:
        top = min(b.top for b in (*left, *right))
        head = sorted([b for b in spanning if b.bottom <= top + 2], key=lambda b: b.top)
        tail = sorted([b for b in spanning if b.bottom > top + 2], key=lambda b: b.top)
        return [*head, *sorted(left, key=lambda b: b.top), *sorted(right, key=lambda b: b.top), *tail]
    if blocks:
        highest = min(blocks, key=lambda b: b.top)
        titled = highest.size > blocks[0].size and len(highest.lines) <= HEADING_LINES
        if highest is not blocks[0] and titled:
            return [highest, *(b for b in blocks if b is not highest)]
    return blocks

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
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from procedure_rag._language.numbering import match_heading_number, match_step_marker
from procedure_rag._readers.pdf_contents import mark_contents_lists
from procedure_rag._readers.pdf_furniture import Furniture, find_furniture, normalised
from procedure_rag._readers.pdf_grids import grid_rows
from procedure_rag._readers.pdf_pages import Line, OutlineEntry, PageLines
from procedure_rag._readers.pdf_text import fix_line, join_wrapped, with_plain_bullet
from procedure_rag._readers.text_lines import CAPTION as _CAPTION
from procedure_rag._readers.text_lines import display_width

__all__ = ["Block", "Layout", "lay_out"]

_SENTENCE_END = re.compile(r"[。．.!！:：、,，]$|(?:ます|です|ください|ません|ました|でした)[)）」]?$")
_SENTENCE_INSIDE = re.compile(r"[。．][^\s」）)]")
_URL = re.compile(r"https?://|www\.", re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]")
# A font size is a heading size when at least this share of its blocks read as headings.
_HEADING_SHARE = 0.85
_HEADING_TAG = re.compile(r"^H([1-6])$")
# A heading is at most this wide (display columns) and this many lines.
_HEADING_WIDTH = 90
_HEADING_LINES = 2


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


@dataclass
class Layout:
    """The blocks of every page, in reading order, and the furniture found."""

    pages: list[PageLines]
    blocks: list[list[Block]]
    furniture: Furniture
    body: float = 10.0
    margins: dict[int, float] = field(default_factory=dict)
    heading_evidence: str = "fonts"
    rights: dict[int, float] = field(default_factory=dict)


def lay_out(pages: Sequence[PageLines], outline: Sequence[OutlineEntry]) -> Layout:
    """Group every page's lines into blocks and decide each block's kind (see the module docstring)."""
    body = _body_size(pages)
    candidates = [(p.number, line.text) for p in pages for line in p.lines if _large(line, body)]
    hints = [(e.page or 0, e.title) for e in outline] if outline else candidates
    furniture = find_furniture(pages, hints)
    tagged_headings = any(_HEADING_TAG.match(line.tag) for p in pages for line in p.lines)
    blocks: list[list[Block]] = []
    for page in pages:
        lines = [line for i, line in enumerate(page.lines) if (page.number, i) not in furniture.lines]
        furn = [
            Block("header" if line.top < page.height / 2 else "footer", [line], page.number)
            for i, line in enumerate(page.lines)
            if (page.number, i) in furniture.lines
        ]
        if page.number in furniture.contents:
            blocks.append([Block("contents", lines, page.number), *furn] if lines else furn)
            continue
        page_blocks = _blocks(lines, page)
        blocks.append([*_reading_order(page_blocks, page.width), *furn])
    evidence = "tags" if tagged_headings else "outline" if outline else "fonts"
    if evidence in ("tags", "outline"):
        _headings_from_outline(blocks, outline)  # with tags: the headings they missed (a title)
    elif evidence == "fonts":
        lefts = {
            page.number: _margin(page, page_blocks) for page, page_blocks in zip(pages, blocks, strict=True)
        }
        _headings_from_rules(blocks, pages, _headings_from_fonts(blocks, body, lefts), lefts)
        if not any(b.kind in ("heading", "title") for page_blocks in blocks for b in page_blocks):
            evidence = "none"
    mark_contents_lists(blocks)
    margins = {
        page.number: _margin(page, page_blocks) for page, page_blocks in zip(pages, blocks, strict=True)
    }
    return Layout(list(pages), blocks, furniture, body, margins, evidence, _right_edges(pages, blocks))


def _margin(page: PageLines, blocks: list[Block]) -> float:
    """The left edge of the page's body text: where an unindented line starts."""
    lefts = [line.left for b in blocks if b.kind in ("text", "item") for line in b.lines]
    if not lefts:
        return 0.0
    common = Counter(round(x) for x in lefts).most_common()
    # The leftmost edge many lines share (a few stray lines further left do not count).
    floor = min(lefts)
    shared = [x for x, n in common if n >= 2]
    return float(min(shared)) if shared else floor


def _right_edges(pages: Sequence[PageLines], blocks: list[list[Block]]) -> dict[int, float]:
    """The right edge of each page's body text: where the document's full lines end.

    Taken over the whole document (pages of one size share their margins), so that a
    page with little text, labels in a figure, still has the document's edge: the
    right end most body lines do not pass (the 90th percentile of pages that size).
    """
    by_width: dict[int, list[float]] = {}
    for page, page_blocks in zip(pages, blocks, strict=True):
        rights = by_width.setdefault(round(page.width), [])
        rights.extend(line.right for b in page_blocks if b.kind in ("text", "item") for line in b.lines)
    edges = {w: sorted(rights)[int(0.9 * (len(rights) - 1))] for w, rights in by_width.items() if rights}
    return {page.number: edges.get(round(page.width), 0.0) for page in pages}


def _body_size(pages: Sequence[PageLines]) -> float:
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _large(line: Line, body: float) -> bool:
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
        titled = highest.size > blocks[0].size and len(highest.lines) <= _HEADING_LINES
        if highest is not blocks[0] and titled:
            return [highest, *(b for b in blocks if b is not highest)]
    return blocks


def _headable(block: Block) -> bool:
    """Whether a block could be a heading: short, one cell, no sentence, no caption, no bullet."""
    if block.kind not in ("text", "heading", "title"):
        return False
    text = unicodedata.normalize("NFKC", block.text).strip()
    if len(_LETTERS.findall(text)) < 2 or _CAPTION.match(text) or len(block.lines) > _HEADING_LINES:
        return False
    if any(len(line.cells) > 1 for line in block.lines) or _URL.search(text):
        return False
    marker = match_step_marker(text)
    if marker is not None and not marker.ordered:
        return False
    if _SENTENCE_END.search(text) or _SENTENCE_INSIDE.search(text):
        return False
    words = len(text.split())
    return display_width(text) <= _HEADING_WIDTH and words <= 14


def _headings_from_outline(blocks: list[list[Block]], outline: Sequence[OutlineEntry]) -> None:
    flat = [b for page in blocks for b in page if b.kind in ("text", "title")]
    start = 0
    for entry in outline:
        want = normalised(entry.title)
        for i in range(start, len(flat)):
            block = flat[i]
            if entry.page is not None and block.page < entry.page:
                continue
            if entry.page is not None and block.page > entry.page + 1:
                break
            have = normalised(block.text)
            if have == want or (len(want) >= 4 and have.startswith(want) and len(have) <= len(want) + 8):
                block.kind = "heading"
                block.level = entry.level + 1
                start = i + 1
                break


def _headings_from_fonts(blocks: list[list[Block]], body: float, margins: dict[int, float]) -> int:
    """Headings by font size and bold body-size lines; returns the level body-size headings get.

    A bold line at body size is a heading only where body lines start (``margins``, per
    page): one further right is a label in a figure or a table.
    """
    flat = [b for page in blocks for b in page if b.kind in ("text", "title", "item")]
    by_size: dict[float, list[Block]] = {}
    for b in flat:
        if all(_large(line, body) for line in b.lines):
            by_size.setdefault(b.size, []).append(b)
    large = []
    for blocks_of_size in by_size.values():
        fit = [b for b in blocks_of_size if _headable(b)]
        if len(fit) >= _HEADING_SHARE * len(blocks_of_size):
            large.extend(fit)
    sizes = sorted({b.size for b in large}, reverse=True)
    first_page = min((b.page for b in flat), default=1)
    if sizes:
        top = [b for b in large if b.size == sizes[0]]
        if len(sizes) > 1 and all(b.page == first_page for b in top) and len(top) <= 2:
            for b in top:
                b.kind = "title"
            sizes = sizes[1:]
    ranks = {size: i for i, size in enumerate(sizes)}
    headings = [b for b in large if b.kind != "title"]
    depths = {id(b): _number_depth(b.text) for b in headings}
    shallowest: dict[float, int] = {}
    for b in headings:
        shallowest[b.size] = min(shallowest.get(b.size, 99), depths[id(b)] or 99)
    # One font size, numbered 3.2 and 3.2.2.1: the deeper number is the deeper heading.
    keys = {id(b): (ranks[b.size], max(0, (depths[id(b)] or shallowest[b.size]) - shallowest[b.size]))
            for b in headings}  # fmt: skip
    dense = {key: i + 1 for i, key in enumerate(sorted(set(keys.values())))}
    for b in headings:
        b.kind = "heading"
        b.level = dense[keys[id(b)]]
    levels = dense
    body_bold = _body_is_bold(flat, body)
    deepest = len(levels) + 1
    for i, b in enumerate(flat):
        nxt = flat[i + 1] if i + 1 < len(flat) else None
        if (
            b.kind == "text"
            and not body_bold
            and b.bold
            and len(b.lines) == 1
            and abs(b.size - body) <= 0.6
            and _headable(b)
            and _at_margin(b, margins)
            and nxt is not None
            and nxt.kind in ("text", "item")
            and not nxt.bold
            and _bold_heading_shape(b.text, nxt)
        ):
            b.kind = "heading"
            b.level = deepest
    return deepest


def _headings_from_rules(
    blocks: list[list[Block]], pages: Sequence[PageLines], level: int, margins: dict[int, float]
) -> None:
    """Short text blocks underlined by a rule across the text are headings at ``level``.

    The rule is the border a web page or a Word style draws under a heading. As with bold
    body-size lines, only a block where body lines start counts.
    """
    for page, page_blocks in zip(pages, blocks, strict=True):
        if not page.rules:
            continue
        for block in page_blocks:
            if (
                block.kind == "text"
                and _headable(block)
                and _at_margin(block, margins)
                and _underlined(block, page)
            ):
                block.kind, block.level = "heading", level


def _at_margin(block: Block, margins: dict[int, float]) -> bool:
    return block.left <= margins.get(block.page, 0.0) + 2 * block.size


def _underlined(block: Block, page: PageLines) -> bool:
    """Whether a rule runs right under ``block``, at least as wide as its text, no other line between."""
    em = block.size
    for rule in page.rules:
        if not block.bottom <= rule.top <= block.bottom + 1.5 * em:
            continue
        if rule.left > block.left + 0.5 * em or rule.right < block.right - 0.5 * em:
            continue
        mine = {id(line) for line in block.lines}
        return not any(
            id(line) not in mine and line.top < rule.top and line.bottom > block.bottom for line in page.lines
        )
    return False


def _number_depth(text: str) -> int:
    """How many numbers a decimal heading number has (``3.2.1 …`` → 3); 0 when it has none."""
    found = match_heading_number(unicodedata.normalize("NFKC", text).strip())
    if found is None:
        m = re.match(r"^\d{1,3}[.．]\s", unicodedata.normalize("NFKC", text))
        return 1 if m else 0
    return len(re.findall(r"\d+", found[0]))


def _bold_heading_shape(text: str, after: Block) -> bool:
    """A bold line that reads as a heading: numbered like one, or short and over a paragraph."""
    text = unicodedata.normalize("NFKC", text).strip()
    if match_heading_number(text) is not None or re.match(r"^[(（]?\d{1,2}[)）.]\s*\S", text):
        return True
    return display_width(text) <= 40 and len(after.lines) >= 2


def _body_is_bold(blocks: Sequence[Block], body: float) -> bool:
    counts = Counter(b.bold for b in blocks if abs(b.size - body) <= 0.6 for _ in b.text)
    return counts[True] > counts[False]

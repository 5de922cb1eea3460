"""Structure figures on PDFs, found by the benchmark itself (never by the product's reader).

For each PDF, from pypdf's page texts and outline (``_doc_text``):

- **Running lines** (headers, footers, page numbers): a line among the first or last two
  of a page whose normalised form (NFKC, whitespace removed, every run of digits as
  ``#``) is on most of the document's pages with text (more than half, and two or more),
  or on most pages of a corpus of three or more documents, and hardly ever away from
  the edges (a table header row a page repeats, or "Back to list" closing each section,
  is seen in the middle of pages too). A chunk **holds** one when
  its normalised text contains the line (digits matching any number); a line with fewer
  than three characters besides its numbers (``- # -``, ``#``) counts only as a whole
  chunk line.
- **Table-of-contents entries**: lines with dot leaders and a page number; the lines after
  a 目次 / Contents title (across pages while most of a page's lines are entries, an entry
  being a line whose title, its leading number removed, comes again later in the
  document); and runs of four or more lines each equal (number removed) to a later line of
  the document, in order. A **TOC step** is one of our steps on such a page whose text is
  such an entry's title.
- **Section paths against the outline** (PDFs with bookmarks): each outline entry is
  located in the document's text (its title searched from its page on, entries in order);
  each chunk at the first of its lines found there, searched from its page and from the
  previous chunk on; the entry covering a chunk is the last one located at or before it.
  A chunk's path is right when it equals that entry's titles from the outermost
  (normalised as above, case folded); its heading is right when its last element equals
  the entry's title.
"""

from __future__ import annotations

import bisect
import functools
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _doc_text import OutlineEntry, outline, pdf_pages

__all__ = [
    "ChunkView",
    "Corpus",
    "DocFacts",
    "corpus_facts",
    "doc_facts",
    "holds_running",
    "reading_speed",
    "structure_figures",
]

_SPACE = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")
_LEADER = re.compile(r"(?:\.{4,}|…{2,}|・{4,}|‥{2,}|(?:\s\.){4,}|_{4,}|-{4,})\s*\d+\s*$")
_TOC_TITLES = frozenset({"目次", "もくじ", "contents", "tableofcontents", "目录"})
_NUMBER = re.compile(r"^\s*(?:第?\d+(?:[.．]\d+)*[.．)）章節]?|[(（]\d+[)）]|[①-⑳]|[IVX]+\.)\s*")
_EDGE_LINES = 2
_MIN_RUN = 4
_MIN_LOCATE = 6
#: A running line is (almost) never away from a page's edges: at most this share of its edge count.
_AWAY = 0.1


def normalise(text: str) -> str:
    """NFKC, whitespace removed (the snippet rule)."""
    return _SPACE.sub("", unicodedata.normalize("NFKC", text))


def _shape(line: str) -> str:
    """A line as running lines are compared: normalised, each run of digits as ``#``."""
    return _DIGITS.sub("#", normalise(line))


def _title(line: str) -> str:
    """A TOC entry's or heading's title: normalised and case folded, its leading number removed."""
    return normalise(_NUMBER.sub("", _LEADER.sub("", line))).casefold()


def _lines(page: str) -> list[str]:
    return [line.strip() for line in page.splitlines() if line.strip()]


@dataclass(frozen=True)
class DocFacts:
    """What the benchmark found in one PDF."""

    pages: int
    running: tuple[str, ...]  # running lines, in their ``_shape`` form
    toc_pages: frozenset[int]  # 1-based
    toc_titles: frozenset[str]  # ``_title`` forms
    toc_entries: int
    outline: tuple[OutlineEntry, ...]
    text: str  # the normalised text of all pages
    page_starts: tuple[int, ...]  # offsets of each page in ``text``, and the end

    def page_span(self, page: int) -> tuple[int, int]:
        """Offsets in ``text`` of a 1-based page (the whole text when out of range)."""
        if 1 <= page <= self.pages:
            return self.page_starts[page - 1], self.page_starts[page]
        return 0, len(self.text)


def _edge_shapes(pages: Sequence[str]) -> tuple[list[set[str]], Counter[str]]:
    """Each page's edge lines (``_shape`` forms), and how often each shape is seen away from the edges."""
    edges, middle = [], Counter[str]()
    for page in pages:
        lines = [_shape(line) for line in _lines(page)]
        cut = min(_EDGE_LINES, len(lines) // 2)
        edges.append({shape for shape in lines[:_EDGE_LINES] + lines[-_EDGE_LINES:] if shape})
        middle.update(lines[cut : len(lines) - cut] if len(lines) > 2 * _EDGE_LINES else ())
    return edges, middle


def _running(pages: Sequence[str], corpus: Corpus) -> tuple[str, ...]:
    edges, middle = _edge_shapes(pages)
    with_text = sum(1 for page in pages if page.strip())
    counts = Counter(shape for page in edges for shape in page)
    mine = {s for s, n in counts.items() if n >= 2 and n > with_text / 2 and middle[s] <= n * _AWAY}
    if corpus.documents >= 3:
        mine |= {
            s
            for s in counts
            if corpus.edges[s] > corpus.pages / 2 and corpus.middle[s] <= corpus.edges[s] * _AWAY
        }
    return tuple(sorted(mine))


def _toc(pages: Sequence[str], running: Collection[str] = ()) -> tuple[frozenset[int], frozenset[str], int]:
    """TOC pages (1-based), entry titles, and the number of entries (see the module docstring)."""
    lines = [
        (number, line)
        for number, page in enumerate(pages, start=1)
        for line in _lines(page)
        if _shape(line) not in running
    ]
    titles = [_title(line) for _, line in lines]
    joined = "\n".join(titles)
    ends = []
    offset = 0
    for title in titles:
        offset += len(title)
        ends.append(offset)
        offset += 1

    def again(index: int) -> int:
        """Where the line's title comes again later in the document (-1: never)."""
        title = titles[index]
        return joined.find(title, ends[index]) if 2 <= len(title) <= 60 else -1

    entries: set[int] = {i for i, (_, line) in enumerate(lines) if _LEADER.search(line)}
    for i in (i for i, title in enumerate(titles) if title in _TOC_TITLES):
        entries.update(_titled_block(lines, i, again))
    entries.update(_toc_runs(lines, titles))
    toc_pages = frozenset(lines[i][0] for i in entries)
    return toc_pages, frozenset(titles[i] for i in entries), len(entries)


def _titled_block(lines: Sequence[tuple[int, str]], title: int, again: Callable[[int], int]) -> set[int]:
    """The entries after a 目次 / Contents line: on its page, then page by page while a page
    is mostly entries and its entries come again after the previous page's did.
    """
    entries: set[int] = set()
    last = -1
    j = title + 1
    while j < len(lines):
        page = lines[j][0]
        on_page = [k for k in range(j, len(lines)) if lines[k][0] == page]
        found = [k for k in on_page if again(k) >= 0]
        first_page = page == lines[title][0]
        if not first_page and (len(found) < 0.6 * len(on_page) or again(found[0]) < last):
            break
        entries.update(found)
        if found:
            last = again(found[-1])
        j = on_page[-1] + 1
    return entries


def _toc_runs(lines: Sequence[tuple[int, str]], titles: Sequence[str]) -> set[int]:
    """Runs of lines equal to later lines, in order and spread over three or more later pages
    (a TOC without a title or page numbers); one line between two such lines may differ.
    """
    later: dict[str, int] = {}
    nexts = [-1] * len(lines)
    for index in range(len(lines) - 1, -1, -1):
        title = titles[index]
        if 2 <= len(title) <= 60:
            nexts[index] = later.get(title, -1)
            later[title] = index
    out: set[int] = set()
    run: list[int] = []  # indices of the run's lines that come again

    def close() -> None:
        pages = {lines[nexts[i]][0] for i in run}
        if len(run) >= _MIN_RUN and len(pages) >= 3:
            out.update(range(run[0], run[-1] + 1))

    for index in range(len(lines)):
        target = nexts[index]
        if run and (index - run[-1] > 2 or (target >= 0 and target < nexts[run[-1]])):
            close()  # two lines that do not come again, or a line that comes again out of order
            run = []
        if target >= 0:
            run.append(index)
    close()
    return out


@functools.cache
def _pages_of(path: Path) -> tuple[str, ...]:
    return pdf_pages(path)


def corpus_facts(paths: Sequence[Path]) -> dict[Path, DocFacts]:
    """:class:`DocFacts` for every PDF of a corpus (running lines use the corpus too)."""
    texts = {path: _pages_of(path) for path in paths}
    corpus = Corpus.of(texts.values())
    return {path: doc_facts(pages, outline(path), corpus) for path, pages in texts.items()}


@dataclass(frozen=True)
class Corpus:
    """How often each edge line is seen across a corpus, for running lines shared by its documents."""

    edges: Counter[str]  # pages with the shape among their edge lines
    middle: Counter[str]  # lines of the shape away from the edges
    pages: int
    documents: int

    @classmethod
    def of(cls, documents: Iterable[Sequence[str]]) -> Corpus:
        """From each document's page texts."""
        edges: Counter[str] = Counter()
        middle: Counter[str] = Counter()
        pages = count = 0
        for texts in documents:
            on_edges, away = _edge_shapes(texts)
            edges.update(shape for page in on_edges for shape in page)
            middle.update(away)
            pages += len(texts)
            count += 1
        return cls(edges, middle, pages, count)


def doc_facts(
    pages: Sequence[str], entries: Sequence[OutlineEntry] = (), corpus: Corpus | None = None
) -> DocFacts:
    """:class:`DocFacts` of one document from its page texts and outline."""
    corpus = corpus or Corpus.of([pages])
    normalised = [normalise(page) for page in pages]
    starts = [0]
    for page in normalised:
        starts.append(starts[-1] + len(page))
    running = _running(pages, corpus)
    toc_pages, toc_titles, toc_entries = _toc(pages, running)
    return DocFacts(
        pages=len(pages),
        running=running,
        toc_pages=toc_pages,
        toc_titles=toc_titles,
        toc_entries=toc_entries,
        outline=tuple(entries),
        text="".join(normalised),
        page_starts=tuple(starts),
    )


@dataclass(frozen=True)
class ChunkView:
    """What the structure figures read of a chunk: document, text, and (ours) page, path, steps."""

    doc: str
    text: str
    page: int | None = None
    section_path: tuple[str, ...] | None = None  # None: the method has no section paths
    steps: tuple[tuple[str, int | None], ...] | None = None  # (text, page); None: no steps


@functools.cache
def _running_pattern(shape: str) -> re.Pattern[str]:
    return re.compile("".join(r"\d+" if part == "#" else re.escape(part) for part in re.split("(#)", shape)))


def holds_running(text: str, running: Sequence[str]) -> list[str]:
    """The running lines (``_shape`` forms) that ``text`` holds."""
    flat = normalise(text)
    shapes = {_shape(line) for line in text.splitlines()}
    found = []
    for shape in running:
        if len(shape.replace("#", "")) >= 3:
            if _running_pattern(shape).search(flat):
                found.append(shape)
        elif shape in shapes:
            found.append(shape)
    return found


def _locate_outline(facts: DocFacts) -> list[tuple[int, OutlineEntry]]:
    located: list[tuple[int, OutlineEntry]] = []
    cursor = 0
    for entry in facts.outline:
        start, _ = facts.page_span(entry.page + 1)
        _, end = facts.page_span(entry.page + 2)
        at = facts.text.find(normalise(entry.title), max(cursor, start), end)
        position = at if at >= 0 else max(cursor, start)
        located.append((position, entry))
        cursor = position
    return located


def _path_key(path: Sequence[str]) -> tuple[str, ...]:
    return tuple(normalise(p).casefold() for p in path)


def structure_figures(chunks: Sequence[ChunkView], facts: Mapping[str, DocFacts]) -> dict[str, Any]:
    """Running lines, TOC steps and section paths against the outline, over a method's chunks.

    Args:
        chunks: The method's chunks (children), in reading order per document.
        facts: Each document id's facts (from :func:`corpus_facts`).
    """
    out: dict[str, Any] = {"chunks": len(chunks)}
    holding: Counter[str] = Counter()
    with_running = 0
    for chunk in chunks:
        found = holds_running(chunk.text, facts[chunk.doc].running)
        with_running += bool(found)
        holding.update(found)
    out["chunks_with_running_lines"] = with_running
    out["running_lines_held"] = dict(holding.most_common(5))
    if any(c.steps is not None for c in chunks):
        toc_steps = steps = 0
        for chunk in chunks:
            doc = facts[chunk.doc]
            for text, page in chunk.steps or ():
                steps += 1
                where = page if page is not None else chunk.page
                toc_steps += where in doc.toc_pages and _title(text) in doc.toc_titles
        out["steps"] = steps
        out["toc_steps"] = toc_steps
    if any(c.section_path is not None for c in chunks) and any(f.outline for f in facts.values()):
        out.update(_against_outline(chunks, facts))
    return out


def _against_outline(chunks: Sequence[ChunkView], facts: Mapping[str, DocFacts]) -> dict[str, Any]:
    located_outlines = {doc: _locate_outline(f) for doc, f in facts.items() if f.outline}
    counted = path_right = heading_right = unlocated = 0
    cursor: dict[str, int] = {}
    wrong: list[str] = []
    for chunk in chunks:
        entries = located_outlines.get(chunk.doc)
        if entries is None or chunk.section_path is None:
            continue
        doc = facts[chunk.doc]
        start, end = doc.page_span(chunk.page or 0)
        position = -1
        for line in chunk.text.splitlines():
            key = normalise(line)
            if len(key) < _MIN_LOCATE:
                continue
            position = doc.text.find(key, max(start, cursor.get(chunk.doc, 0)), end + len(key))
            if position < 0:
                position = doc.text.find(key, start, end + len(key))
            if position >= 0:
                break
        if position < 0:
            unlocated += 1
            continue
        cursor[chunk.doc] = position
        counted += 1
        index = bisect.bisect_right([p for p, _ in entries], position) - 1
        expected = entries[index][1].path if index >= 0 else ()
        mine = _path_key(chunk.section_path)
        if mine == _path_key(expected):
            path_right += 1
        elif len(wrong) < 5:
            wrong.append(f"{' > '.join(chunk.section_path)!r} where the outline has {' > '.join(expected)!r}")
        heading_right += (mine[-1:] if mine else ()) == _path_key(expected[-1:])
    return {
        "outlined_chunks": counted,
        "outlined_chunks_not_located": unlocated,
        "section_path_right": path_right,
        "section_heading_right": heading_right,
        "section_path_wrong_examples": wrong,
    }


def reading_speed(
    paths: Sequence[Path],
    ours: Callable[[Path], object],
    ours_read: Callable[[Path], object],
    repeats: int = 3,
) -> dict[str, Any]:
    """Pages per second of pypdf's ``extract_text``, our reader, and our reader with chunking.

    Best of ``repeats`` interleaved runs over every file, wall and CPU time; ratios are ours
    over pypdf's (1.0 = as fast), by CPU time (steadier on a shared machine).
    """
    from pypdf import PdfReader  # noqa: PLC0415

    def pypdf_text(path: Path) -> object:
        return [page.extract_text() for page in PdfReader(path).pages]

    runs = {"pypdf_extract_text": pypdf_text, "ours_read": ours_read, "ours_read_and_chunk": ours}
    best: dict[str, list[float]] = {name: [float("inf"), float("inf")] for name in runs}
    pages = sum(len(_pages_of(path)) for path in paths)
    for _ in range(repeats):
        for name, run in runs.items():
            wall, cpu = time.perf_counter(), time.process_time()
            for path in paths:
                run(path)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
    out: dict[str, Any] = {"files": len(paths), "pages": pages, "repeats": repeats}
    for name, (wall, cpu) in best.items():
        out[name] = {"pages_per_s_wall": round(pages / wall, 1), "pages_per_s_cpu": round(pages / cpu, 1)}
    base = best["pypdf_extract_text"][1]
    out["ratio_read"] = round(base / best["ours_read"][1], 2)
    out["ratio_read_and_chunk"] = round(base / best["ours_read_and_chunk"][1], 2)
    return out

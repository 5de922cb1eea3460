"""Draw a document and its chunks as one self-contained HTML page.

The page shows the source text top to bottom. Each child chunk is a coloured block
(the palette alternates, so neighbours never share a colour) with, beside it, a card
that says what the chunk is and why it starts where it does: its number and short id,
type, section path, size, lead-in and condition, and a table of its steps with
conditions and cautions highlighted. Children of one parent sit inside an outline that
names the parent. Text no chunk covers is greyed; long runs of it fold away.

The page needs nothing from outside: CSS is inline, there is no script, and a content
security policy forbids loading anything, so a document that smuggles markup past the
escaping still cannot fetch or run anything.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from procedure_rag._types import Chunk, ChunkLevel, ChunkType, ProcedureStep

__all__ = ["render_document_html"]

#: Colours of child blocks, taken in turn: (band, dark band for the number, tint of the
#: block, highlight of the covered text). Neighbours differ; none is the yellow of a
#: condition or the red of a caution.
_PALETTE = (
    ("#3b82f6", "#1d4ed8", "#f5f9ff", "#dbeafe"),
    ("#22c55e", "#15803d", "#f5fdf7", "#d1fadf"),
    ("#a855f7", "#7e22ce", "#fbf7ff", "#f0e2ff"),
    ("#14b8a6", "#0f766e", "#f3fdfb", "#cdf7ef"),
    ("#ec4899", "#be185d", "#fff6fa", "#fde0ee"),
)

#: Step fields shown after the number and action, when any step of the chunk sets them.
_STEP_FIELDS = ("target", "condition", "result", "caution")

#: Uncovered text longer than this (characters or lines) folds into a ``<details>``.
_FOLD_CHARS = 400
_FOLD_LINES = 6

_CSS = """
:root {
  --sans: system-ui, -apple-system, "Segoe UI", "Hiragino Kaku Gothic ProN", "Hiragino Sans",
    "Yu Gothic UI", "Yu Gothic", Meiryo, "Noto Sans CJK JP", "Noto Sans JP", "Source Han Sans JP",
    "IPAPGothic", "IPAexGothic", "IPAGothic", sans-serif;
  --mono: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", "Noto Sans Mono CJK JP",
    "BIZ UDGothic", "MS Gothic", "IPAGothic", monospace;
  --grey: #8a8f98;
}
* { box-sizing: border-box; }
body { margin: 0; padding: 16px 20px 40px; font: 13px/1.5 var(--sans); color: #1f2328; background: #f6f7f9; }
h1 { font-size: 18px; margin: 0 0 4px; }
.stats { color: #57606a; margin: 0 0 8px; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 14px; margin: 0 0 10px; color: #57606a; font-size: 12px; }
.legend span { display: inline-flex; align-items: center; gap: 5px; }
.sw { display: inline-block; width: 14px; height: 11px; border-radius: 2px; }
.map { display: flex; height: 14px; border-radius: 3px; overflow: hidden; margin: 0 0 14px;
  border: 1px solid #d0d7de; background: #fff; }
.map a, .map span { display: block; height: 100%; min-width: 2px; }
.map .gap { background: repeating-linear-gradient(45deg, #e5e7eb 0 3px, #f3f4f6 3px 6px); }
.doc { display: flex; flex-direction: column; gap: 6px; }
.parent { border: 2px dashed #6e7781; border-radius: 8px; padding: 4px 6px 6px; background: #fff;
  display: flex; flex-direction: column; gap: 6px; }
.phead { font-size: 12px; color: #424a53; display: flex; flex-wrap: wrap; gap: 4px 10px;
  align-items: baseline; }
.phead b { color: #1f2328; }
.row { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.15fr); gap: 0;
  border-radius: 6px; overflow: hidden; background: #fff; border: 1px solid #d0d7de; }
.chunk { border-left: 6px solid var(--band); }
.chunk:target { outline: 3px solid #0969da; }
.chunk:hover { box-shadow: 0 0 0 2px var(--band); }
.src { margin: 0; padding: 6px 8px; font: 12px/1.55 var(--mono); white-space: pre-wrap;
  overflow-wrap: anywhere; background: var(--tint); }
.src .in { background: var(--hl); border-radius: 2px; }
.src .skip, .uncovered .src { color: var(--grey); }
.uncovered { border-left: 6px solid #c9ced6; }
.uncovered .src { background: repeating-linear-gradient(45deg, #f3f4f6 0 6px, #f8f9fa 6px 12px); }
.uncovered .card { color: var(--grey); font-style: italic; }
.folded { grid-template-columns: minmax(0, 1fr); }
.uncovered summary { cursor: pointer; padding: 4px 8px; color: var(--grey); font: 12px var(--mono);
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.card { padding: 6px 10px; border-left: 1px solid #d0d7de; min-width: 0; }
.head { display: flex; flex-wrap: wrap; gap: 4px 8px; align-items: baseline; }
.num { font-weight: 700; font-size: 14px; color: var(--band-dark); }
.id { font: 11px var(--mono); color: #57606a; }
.tag { font-size: 11px; padding: 0 6px; border-radius: 9px; background: #eaeef2; color: #424a53; }
.tag.procedure { background: #dafbe1; color: #116329; }
.tag.table, .tag.code { background: #ddf4ff; color: #0a3069; }
.tag.cont { background: #fff1e5; color: #953800; font-weight: 600; }
.tag.warn { background: #ffebe9; color: #82071e; font-weight: 600; }
.path { color: #57606a; font-size: 12px; margin-top: 2px; }
.path b { color: #1f2328; font-weight: 600; }
.why { font-size: 12px; margin-top: 3px; }
.why .k, .kv .k { color: #6e7781; }
.kv { font-size: 12px; margin-top: 2px; }
.size { display: inline-flex; align-items: center; gap: 4px; font-size: 11px; color: #57606a; }
.bar { display: inline-block; width: 60px; height: 6px; background: #eaeef2; border-radius: 3px;
  overflow: hidden; }
.bar i { display: block; height: 100%; background: var(--band); }
.bar.over i { background: #cf222e; }
mark.cond { background: #fff3a3; color: #4d2d00; padding: 0 2px; border-radius: 2px; }
mark.caut { background: #ffd7d5; color: #82071e; padding: 0 2px; border-radius: 2px; font-weight: 600; }
table.steps { border-collapse: collapse; width: 100%; margin-top: 5px; font-size: 12px; table-layout: auto; }
.steps th { text-align: left; font-weight: 600; color: #57606a; background: #f6f8fa; padding: 2px 5px;
  border-bottom: 1px solid #d0d7de; white-space: nowrap; }
.steps td { padding: 2px 5px; border-bottom: 1px solid #eaeef2; vertical-align: top; min-width: 4.5em;
  overflow-wrap: anywhere; }
.steps td.n { min-width: 0; white-space: nowrap; color: #57606a; font-family: var(--mono); }
.steps .d1 { padding-left: 1.2em; } .steps .d2 { padding-left: 2.4em; } .steps .d3 { padding-left: 3.6em; }
.steps td.c { background: #fffbdd; } .steps td.x { background: #fff0ef; color: #82071e; }
details.text { margin-top: 4px; font-size: 11px; }
details.text summary { cursor: pointer; color: #57606a; }
details.text pre { margin: 3px 0 0; white-space: pre-wrap; overflow-wrap: anywhere;
  font: 11px/1.45 var(--mono); background: #f6f8fa; padding: 4px 6px; border-radius: 4px; }
h2 { font-size: 15px; margin: 18px 0 6px; }
""" + "".join(
    f".p{i} {{ --band: {band}; --band-dark: {dark}; --tint: {tint}; --hl: {hl}; }}\n"
    for i, (band, dark, tint, hl) in enumerate(_PALETTE)
)


def _e(value: object) -> str:
    """Escape ``value`` for HTML text and quoted attribute values."""
    return html.escape(str(value), quote=True)


@dataclass(frozen=True, slots=True)
class _Row:
    """One stretch of the page: a child chunk's range of the text, or text no chunk covers.

    ``number`` counts child chunks in document order (1-based); 0 for uncovered text.
    """

    start: int
    end: int
    chunk: Chunk | None = None
    number: int = 0


@dataclass(frozen=True, slots=True)
class _Context:
    """What every card needs besides its own chunk."""

    text: str
    parent_numbers: dict[str, int]
    length: Callable[[str], int] | None
    budget: int | None


def render_document_html(
    text: str,
    chunks: Sequence[Chunk],
    *,
    title: str,
    length: Callable[[str], int] | None = None,
    budget: int | None = None,
) -> str:
    """Return a self-contained HTML page that draws ``text`` with its chunks as coloured blocks.

    Args:
        text: The document the chunks were made from; their ``source_spans`` are
            character offsets into it.
        chunks: The chunks of that document, children and parents in any order.
            Children are placed by their spans; parents outline their children.
            Chunks without spans are listed after the document.
        title: The page title (a file name, say); escaped like everything else.
        length: The chunker's length function; when given, every card shows the
            chunk's size.
        budget: The child chunk budget, in ``length``'s units; when given with
            ``length``, sizes are drawn against it.

    Returns:
        The page, as one string (UTF-8 when written, as its ``<meta charset>`` says).

    Raises:
        ValueError: When a chunk's span reaches past the end of ``text`` (the chunks
            were made from another text).
    """
    _check_spans(text, chunks)
    parents = [c for c in chunks if c.level is ChunkLevel.PARENT]
    children = sorted(
        (c for c in chunks if c.level is not ChunkLevel.PARENT and c.source_spans),
        key=lambda c: c.source_spans[0].start,
    )
    parent_numbers = _number_parents(parents, children)
    ctx = _Context(text, parent_numbers, length, budget)
    rows = list(_rows(text, children))
    language = next((c.language for c in chunks if c.language), "und")
    body = [
        _summary(title, text, chunks, rows, ctx),
        '<main class="doc">',
        *_document(rows, {p.chunk_id: p for p in parents}, ctx),
        "</main>",
        *_leftovers(chunks, children, parents, ctx),
    ]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            f'<html lang="{_e(language)}">',
            "<head>",
            '<meta charset="utf-8">',
            # Nothing may be loaded or run: the document text is untrusted.
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'\">",
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(title)}</title>",
            f"<style>{_CSS}</style>",
            "</head>",
            "<body>",
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


def _check_spans(text: str, chunks: Sequence[Chunk]) -> None:
    for chunk in chunks:
        for span in chunk.source_spans:
            if span.end > len(text):
                msg = (
                    f"chunk {chunk.chunk_id} has span [{span.start}, {span.end}) past the end of the "
                    f"text ({len(text)} characters): pass the text the chunks were made from"
                )
                raise ValueError(msg)


def _number_parents(parents: Sequence[Chunk], children: Sequence[Chunk]) -> dict[str, int]:
    """Number parents in the order their first child appears; parents with no placed child last."""
    known = {p.chunk_id for p in parents}
    order = [c.parent_id for c in children if c.parent_id in known]
    order += [p.chunk_id for p in parents]
    numbers: dict[str, int] = {}
    for chunk_id in order:
        if chunk_id is not None and chunk_id not in numbers:
            numbers[chunk_id] = len(numbers) + 1
    return numbers


def _rows(text: str, children: Sequence[Chunk]) -> Iterator[_Row]:
    """Walk the text once: uncovered stretches (whitespace-only ones dropped) and child blocks."""
    cursor = 0
    for number, chunk in enumerate(children, start=1):
        start = chunk.source_spans[0].start
        end = max(s.end for s in chunk.source_spans)
        if start > cursor and text[cursor:start].strip():
            yield _Row(cursor, start)
        yield _Row(start, end, chunk, number)
        cursor = max(cursor, end)
    if text[cursor:].strip():
        yield _Row(cursor, len(text))


def _group_key(rows: Sequence[_Row], i: int, parents: dict[str, Chunk]) -> str | None:
    """The parent whose outline row ``i`` sits in: uncovered text only between two of its children."""

    def parent_of(row: _Row | None) -> str | None:
        if row is None or row.chunk is None:
            return None
        return row.chunk.parent_id if row.chunk.parent_id in parents else None

    row = rows[i]
    if row.chunk is not None:
        return parent_of(row)
    before = parent_of(rows[i - 1]) if i > 0 else None
    after = parent_of(rows[i + 1]) if i + 1 < len(rows) else None
    return before if before == after else None


def _document(rows: Sequence[_Row], parents: dict[str, Chunk], ctx: _Context) -> Iterator[str]:
    keys = [_group_key(rows, i, parents) for i in range(len(rows))]
    previous: Chunk | None = None
    opened: set[str] = set()
    position = 0
    for key, group in itertools.groupby(keys):
        members = rows[position : position + len(list(group))]
        position += len(members)
        if key is not None:
            numbers = [r.number for r in members if r.chunk is not None]
            # Children of one parent are normally contiguous; if another chunk cuts in, the
            # outline opens again under the same name (the anchor stays on the first).
            yield _parent_head(parents[key], numbers, ctx, anchor=key not in opened)
            opened.add(key)
        for row in members:
            if row.chunk is None:
                yield _uncovered(ctx.text[row.start : row.end])
                continue
            yield _child(row, previous, ctx)
            previous = row.chunk
        if key is not None:
            yield "</section>"


def _parent_head(parent: Chunk, child_numbers: Sequence[int], ctx: _Context, *, anchor: bool = True) -> str:
    number = ctx.parent_numbers[parent.chunk_id]
    if not child_numbers:
        span = "none drawn"
    elif len(child_numbers) == 1:
        span = f"C{child_numbers[0]}"
    else:
        span = f"C{child_numbers[0]}–C{child_numbers[-1]}"
    parts = [
        f"<b>P{number}</b>",
        "<span>parent</span>",
        _id(parent.chunk_id),
        f'<span class="tag {_e(parent.chunk_type.value)}">{_e(parent.chunk_type.value)}</span>',
        f"<span>children {_e(span)}</span>",
        _size(parent, ctx, against_budget=False),
        _path(parent.section_path),
    ]
    id_attr = f' id="p{number}"' if anchor else ""
    return (
        f'<section class="parent"{id_attr} data-chunk-id="{_e(parent.chunk_id)}" data-level="parent">'
        f'<div class="phead">{" ".join(p for p in parts if p)}</div>'
    )


def _uncovered(segment: str) -> str:
    lines = segment.split("\n")
    while not lines[0].strip():  # blank lines around the stretch say nothing; its own indents stay
        lines.pop(0)
    while not lines[-1].strip():
        lines.pop()
    shown = "\n".join(lines).rstrip()
    label = f"not in any chunk · {len(segment)} characters"
    if len(shown) > _FOLD_CHARS or len(lines) > _FOLD_LINES:
        preview = " ⏎ ".join(lines[:3])[:100]
        inner = (
            f"<details><summary>{_e(label)} · {_e(preview)}…</summary>"
            f'<pre class="src">{_e(shown)}</pre></details>'
        )
        return f'<div class="row uncovered folded" data-uncovered="1">{inner}</div>'
    return (
        f'<div class="row uncovered" data-uncovered="1"><pre class="src">{_e(shown)}</pre>'
        f'<div class="card">{_e(label)}</div></div>'
    )


def _child(row: _Row, previous: Chunk | None, ctx: _Context) -> str:
    chunk = row.chunk
    assert chunk is not None  # noqa: S101 - _document passes chunk rows only
    colour = (row.number - 1) % len(_PALETTE)
    return (
        f'<div class="row chunk p{colour}" id="c{row.number}" data-chunk-id="{_e(chunk.chunk_id)}" '
        f'data-level="child">'
        f'<pre class="src">{"".join(_source_pieces(ctx.text, chunk))}</pre>'
        f'<div class="card">{_card(chunk, row.number, previous, ctx)}</div></div>'
    )


def _source_pieces(text: str, chunk: Chunk) -> Iterator[str]:
    """The chunk's stretch of the text: covered spans highlighted, what lies between greyed."""
    spans = sorted(chunk.source_spans, key=lambda s: s.start)
    cursor = spans[0].start
    for span in spans:
        if span.start > cursor:
            yield f'<span class="skip">{_e(text[cursor : span.start])}</span>'
        start = max(span.start, cursor)
        if span.end > start:
            yield f'<span class="in">{_e(text[start : span.end])}</span>'
        cursor = max(cursor, span.end)


def _card(chunk: Chunk, number: int, previous: Chunk | None, ctx: _Context) -> str:
    head = [
        f'<span class="num">C{number}</span>',
        _id(chunk.chunk_id),
        f'<span class="tag {_e(chunk.chunk_type.value)}">{_e(chunk.chunk_type.value)}</span>',
    ]
    if chunk.continued:
        head.append('<span class="tag cont">continued</span>')
    if chunk.page is not None:
        head.append(f'<span class="tag">page {chunk.page}</span>')
    head.append(_size(chunk, ctx, against_budget=True))
    overlap = _overlap(chunk, previous)
    if overlap:
        head.append(f'<span class="tag warn">overlaps C{number - 1} by {overlap} characters</span>')
    out = [
        f'<div class="head">{" ".join(h for h in head if h)}</div>',
        f'<div class="path">{_path(chunk.section_path)}</div>',
        f'<div class="why"><span class="k">starts here: </span>{_e(_why(chunk, previous))}</div>',
    ]
    out.extend(_lead_in(chunk))
    if chunk.steps:
        out.append(_steps_table(chunk.steps))
    out.append(
        f'<details class="text"><summary>chunk text ({len(chunk.text)} characters)</summary>'
        f"<pre>{_e(chunk.text)}</pre></details>"
    )
    return "".join(out)


def _overlap(chunk: Chunk, previous: Chunk | None) -> int:
    if previous is None:
        return 0
    return max(0, max(s.end for s in previous.source_spans) - chunk.source_spans[0].start)


def _why(chunk: Chunk, previous: Chunk | None) -> str:
    """Why the chunker began a chunk here, told from the chunk and the one before it."""
    if previous is None:
        return "first chunk of the document"
    if chunk.continued:
        return "continues the block above, which went over the budget"
    if chunk.section_path != previous.section_path:
        heading = chunk.section_path[-1] if chunk.section_path else "(no heading)"
        return f"new section: {heading}"
    if chunk.chunk_type in (ChunkType.TABLE, ChunkType.CODE):
        return f"a {chunk.chunk_type.value} is a block of its own"
    if previous.chunk_type in (ChunkType.TABLE, ChunkType.CODE):
        return f"after a {previous.chunk_type.value} block"
    return "the next paragraph or list did not fit in the chunk above"


def _lead_in(chunk: Chunk) -> Iterator[str]:
    """The lead-in with its condition marked, or the condition alone when it is not inside."""
    condition = chunk.condition
    if chunk.lead_in:
        if condition and condition in chunk.lead_in:
            before, _, after = chunk.lead_in.partition(condition)
            shown = f"{_e(before)}{_mark('cond', condition)}{_e(after)}"
            condition = ""
        else:
            shown = _e(chunk.lead_in)
        yield f'<div class="kv"><span class="k">lead-in: </span>{shown}</div>'
    if condition:
        yield f'<div class="kv"><span class="k">condition: </span>{_mark("cond", condition)}</div>'


def _steps_table(steps: Sequence[ProcedureStep]) -> str:
    fields = [name for name in _STEP_FIELDS if any(getattr(s, name) for s in steps)]
    head = "".join(f"<th>{name}</th>" for name in ("#", "action", *fields))
    body = []
    for step in steps:
        action = _e(step.action or step.text)
        if step.is_continuation:
            action += ' <span class="tag cont">continued</span>'
        cells = [f'<td class="n">{_e(step.number)}</td>', f'<td class="d{min(step.depth, 3)}">{action}</td>']
        for name in fields:
            value = getattr(step, name)
            if name == "condition" and value:
                cells.append(f'<td class="c">{_mark("cond", value)}</td>')
            elif name == "caution" and value:
                cells.append(f'<td class="x">{_mark("caut", value)}</td>')
            else:
                cells.append(f"<td>{_e(value)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f'<table class="steps"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _mark(kind: str, value: str) -> str:
    return f'<mark class="{kind}">{_e(value)}</mark>'


def _id(chunk_id: str) -> str:
    return f'<code class="id" title="{_e(chunk_id)}">{_e(chunk_id[:8])}</code>'


def _path(path: Sequence[str]) -> str:
    if not path:
        return '<span class="path">(no section)</span>'
    *outer, last = path
    shown = [_e(p) for p in outer] + [f"<b>{_e(last)}</b>"]
    return '<span class="path">' + " › ".join(shown) + "</span>"


def _size(chunk: Chunk, ctx: _Context, *, against_budget: bool) -> str:
    if ctx.length is None:
        return ""
    tokens = ctx.length(chunk.text)
    if not against_budget or not ctx.budget:
        return f'<span class="size">{tokens} tokens</span>'
    fill = min(100, round(100 * tokens / ctx.budget))
    over = " over" if tokens > ctx.budget else ""
    return (
        f'<span class="size"><span class="bar{over}"><i style="width:{fill}%"></i></span>'
        f"{tokens} / {ctx.budget} tokens</span>"
    )


def _summary(title: str, text: str, chunks: Sequence[Chunk], rows: Sequence[_Row], ctx: _Context) -> str:
    n_children = sum(1 for r in rows if r.chunk is not None)
    n_parents = sum(1 for c in chunks if c.level is ChunkLevel.PARENT)
    covered = _covered_share(text, rows)
    stats = (
        f"{n_children} child chunks · {n_parents} parents · {len(text)} characters"
        f" · {covered}% of the text in chunks"
    )
    if ctx.length is not None and ctx.budget:
        stats += f" · budget {ctx.budget} tokens"
    legend = [
        "<span>"
        + "".join(f'<i class="sw" style="background:{band}"></i>' for band, *_ in _PALETTE)
        + " child chunks (colours alternate)</span>",
        '<span><i class="sw" style="border:2px dashed #6e7781"></i> parent: outlines its children</span>',
        '<span><i class="sw" style="background:#e5e7eb"></i> not in any chunk</span>',
        '<span><mark class="cond">condition</mark></span>',
        '<span><mark class="caut">caution</mark></span>',
        '<span><span class="tag cont">continued</span> split to fit the budget</span>',
    ]
    return (
        f'<header><h1>{_e(title)}</h1><p class="stats">{_e(stats)}</p>'
        f'<div class="legend">{"".join(legend)}</div>'
        f'<nav class="map" aria-label="chunks along the document">{"".join(_map(rows))}</nav></header>'
    )


def _covered_share(text: str, rows: Sequence[_Row]) -> int:
    """Percentage of the text's non-space characters inside some chunk's spans."""
    total = sum(1 for ch in text if not ch.isspace())
    if not total:
        return 100
    inside = [False] * len(text)
    for row in rows:
        if row.chunk is not None:
            for span in row.chunk.source_spans:
                inside[span.start : span.end] = [True] * (span.end - span.start)
    covered = sum(1 for ch, flag in zip(text, inside, strict=True) if flag and not ch.isspace())
    return round(100 * covered / total)


def _map(rows: Sequence[_Row]) -> Iterator[str]:
    """A strip of the document, each stretch as wide as its share of the characters."""
    for row in rows:
        grow = max(1, row.end - row.start)
        if row.chunk is None:
            yield f'<span class="gap" style="flex:{grow}" title="not in any chunk"></span>'
        else:
            colour = (row.number - 1) % len(_PALETTE)
            yield (
                f'<a class="p{colour}" style="flex:{grow};background:var(--band)" href="#c{row.number}" '
                f'title="C{row.number}"></a>'
            )


def _leftovers(
    chunks: Sequence[Chunk],
    children: Sequence[Chunk],
    parents: Sequence[Chunk],
    ctx: _Context,
) -> Iterator[str]:
    """Chunks the document walk could not draw: no spans, or parents with no child drawn."""
    unplaced = [c for c in chunks if c.level is not ChunkLevel.PARENT and not c.source_spans]
    drawn_parents = {c.parent_id for c in children}
    lonely = [p for p in parents if p.chunk_id not in drawn_parents]
    if unplaced:
        yield "<h2>Chunks with no position in the text</h2>"
        for number, chunk in enumerate(unplaced, start=len(children) + 1):
            colour = (number - 1) % len(_PALETTE)
            yield (
                f'<div class="row chunk p{colour}" id="c{number}" data-chunk-id="{_e(chunk.chunk_id)}" '
                f'data-level="child"><pre class="src">{_e(chunk.text)}</pre>'
                f'<div class="card">{_card(chunk, number, None, ctx)}</div></div>'
            )
    if lonely:
        yield "<h2>Parents with no child drawn</h2>"
        for parent in lonely:
            yield _parent_head(parent, [], ctx) + "</section>"

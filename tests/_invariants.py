"""The chunker's invariants as plain functions, shared by the data-file tests and the property tests.

Each check returns what breaks the invariant (an empty list when it holds) or asserts, so that a
parametrized test over tests/data and a hypothesis property over generated manuals state the
same rules (DESIGN.md, "Blocks" and "Chunks"): no source text lost, children within the budget,
reading order kept, parents made of exactly their children.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from procedure_rag import LEXICONS, Chunk, ChunkLevel, ProcedureChunker
from procedure_rag._chunking.assembly import merge_spans
from procedure_rag._language.lexicons import split_sentences

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
# Words: runs of ASCII letters/digits, and runs of kana/kanji (punctuation and spaces split them).
WORD = re.compile(rf"[A-Za-z0-9]+|[{CJK}]+")
# What rendering may legitimately drop: link and image targets (CommonMark lets a target hold
# balanced parentheses: ``.../Proxy_Auto-Configuration_(PAC)_file``), HTML tags, entities, bare
# URLs, DocFX's styling lines in quotes ([!div class="..."]).
NOT_RENDERED = re.compile(
    r"\]\((?:[^()\n]|\([^()\n]*\))*\)|<[^>\n]{0,500}>|&#?\w+;|https?://[^\s)\]>|]+|(?i:\[!div\b[^\]\n]*\])"
)


def children_of(chunks: Sequence[Chunk]) -> list[Chunk]:
    return [c for c in chunks if c.level is ChunkLevel.CHILD]


def parents_of(chunks: Sequence[Chunk]) -> list[Chunk]:
    return [c for c in chunks if c.level is ChunkLevel.PARENT]


def dropped_spans(chunker: ProcedureChunker, text: str, source_id: str) -> list[tuple[int, int]]:
    """Spans of the elements the options leave out (page furniture, front matter)."""
    return [
        (e.span.start, e.span.end)
        for e in chunker.read(text, source_id=source_id)
        if e.kind in chunker.options.drop_kinds and e.span is not None
    ]


def body_lines(c: Chunk) -> list[str]:
    """The chunk's lines after its heading-path line (and after a repeated lead-in)."""
    lines = c.text.split("\n")
    if c.section_path or c.continued:
        lines = lines[1:]
    if c.continued and lines and lines[0] in (c.lead_in, c.condition):
        lines = lines[1:]
    return lines


def label_free(line: str, language: str) -> str:
    return line.replace(LEXICONS[language].continued_label, "").strip()


def lost_characters(text: str, chunks: Sequence[Chunk], dropped: Sequence[tuple[int, int]] = ()) -> list[int]:
    """Offsets of non-whitespace characters no child's source span (nor a dropped element) covers."""
    covered = bytearray(len(text))
    for start, end in dropped:
        covered[start:end] = b"\x01" * (end - start)
    for c in children_of(chunks):
        for s in c.source_spans:
            covered[s.start : s.end] = b"\x01" * (s.end - s.start)
    return [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]


def missing_words(
    text: str, chunks: Sequence[Chunk], dropped: Sequence[tuple[int, int]] = ()
) -> tuple[list[str], list[str]]:
    """``(missing, words)``: the source's words that show in no child, and all its words.

    Heading-path lines and repeated lead-ins are set aside and the bodies concatenated
    without whitespace or continuation labels, so a sentence cut to fit reads whole again.
    """
    source = list(text)
    for start, end in dropped:
        source[start:end] = " " * (end - start)
    words = WORD.findall(NOT_RENDERED.sub(" ", "".join(source)))
    bodies, headers = [], []
    for c in children_of(chunks):
        lines = c.text.split("\n")
        headers.extend(lines[: len(lines) - len(body_lines(c))])
        bodies.extend(label_free(line, c.language) for line in body_lines(c))
    stream = re.sub(r"\s+", "", "".join(bodies)).casefold()
    heads = re.sub(r"\s+", "", "".join(headers)).casefold()
    missing = [w for w in words if w.casefold() not in stream and w.casefold() not in heads]
    return missing, words


def over_budget(chunks: Sequence[Chunk], length: Callable[[str], int], budget: int) -> list[tuple[int, str]]:
    """Children over the budget that are not allowed to be.

    A child may pass the budget only when it holds a single sentence (or piece of one). The
    design ranks "never split a lead-in from its first step" above the budget, so a
    one-sentence lead-in followed by a single step is the other allowed overflow.
    """
    over = []
    for c in children_of(chunks):
        if length(c.text) <= budget:
            continue
        lines = [label_free(line, c.language) for line in body_lines(c)]
        one_sentence = len(lines) == 1 and len([s for s in split_sentences(lines[0]) if s.strip()]) == 1
        lead_and_step = (
            bool(c.lead_in)
            and len(lines) == 2
            and len(split_sentences(c.lead_in)) == 1
            and len(c.steps) == 1
            and not c.continued
        )
        if not (one_sentence or lead_and_step):
            over.append((length(c.text), c.text[:200]))
    return over


def assert_reading_order(chunks: Sequence[Chunk]) -> None:
    """Children start in source order; each parent comes right after its last child."""
    starts = [c.start_index for c in children_of(chunks)]
    assert None not in starts, "a child covers no source text"
    assert starts == sorted(starts)  # type: ignore[type-var]
    seen: set[str] = set()
    for c in chunks:
        if c.level is ChunkLevel.PARENT:
            assert set(c.child_ids) <= seen
            assert c.child_ids[-1] in seen
        seen.add(c.chunk_id)


def assert_parents_hold_exactly_their_children(chunks: Sequence[Chunk], text: str) -> None:
    """Every child names an existing parent, which lists exactly it and its siblings, spans merged.

    A parent's spans are its children's, joined where only whitespace of ``text`` (the
    source) lies between them; no chunk has two spans with only whitespace between them.
    """
    kids, parents = children_of(chunks), {p.chunk_id: p for p in parents_of(chunks)}
    for c in kids:
        assert c.parent_id in parents
    for p in parents.values():
        members = [c for c in kids if c.parent_id == p.chunk_id]
        assert tuple(c.chunk_id for c in members) == p.child_ids
        assert p.source_spans == merge_spans([s for c in members for s in c.source_spans], text)
        assert {c.section_path for c in members} == {p.section_path}
        assert_parent_reads_its_children(p, members)
    for c in chunks:
        gaps = [text[a.end : b.start] for a, b in zip(c.source_spans, c.source_spans[1:], strict=False)]
        assert all(gap.strip() for gap in gaps), f"spans of {c.chunk_id} apart by whitespace alone"


def assert_parent_reads_its_children(parent: Chunk, members: Sequence[Chunk]) -> None:
    """A parent's lines are its children's bodies in order, less only lines it shows anyway.

    What a parent leaves out of its children is repeated context (a cut list's lead-in
    in each part, or its condition): each line left out is in a line the parent keeps,
    so nothing is lost.
    """

    def body(c: Chunk) -> list[str]:
        lines = c.text.split("\n")
        return lines[1:] if c.section_path else lines

    joined = [line for c in members for line in body(c)]
    kept = body(parent)
    at = 0
    for line in kept:  # a subsequence of the children's lines
        while at < len(joined) and joined[at] != line:
            at += 1
        assert at < len(joined), f"parent {parent.chunk_id} has a line none of its children has: {line!r}"
        at += 1
    lost = [line for line in set(joined) - set(kept) if not any(line in k for k in kept)]
    assert not lost, f"parent {parent.chunk_id} lost lines of its children: {sorted(lost)[:3]}"


def assert_ids_distinct(chunks: Sequence[Chunk]) -> None:
    ids = [c.chunk_id for c in chunks]
    assert len(set(ids)) == len(ids), "two chunks share an id"

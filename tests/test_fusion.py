"""Fusion tables: methods, ties, ordering, dedup, k counting raw chunks, over-fetching, messages.

Expected orders come from the definitions in docs/RETRIEVAL.md ("Fusion"), worked by hand.
"""

from __future__ import annotations

import json
import re

import pytest

from procedure_rag._retrieval.fusion import Fused, Hit, fuse, matched_metadata


def hit(doc: str, kind: str, score: float, rep: str | None = None) -> Hit:
    return Hit(
        doc_id=doc,
        kind=kind,
        text=f"{kind} of {doc}",
        score=score,
        representation_id=rep or f"{doc}-{kind}-{score}",
    )


HITS = [
    hit("a", "question", 0.90),
    hit("b", "raw", 0.85),
    hit("a", "raw", 0.60),
    hit("c", "summary", 0.80),
    hit("b", "question", 0.70),
    hit("c", "raw", 0.50),
]


@pytest.mark.parametrize(
    ("method", "weights", "expected"),
    [
        # max: best hit per chunk.
        ("max", None, [("a", 0.90), ("b", 0.85), ("c", 0.80)]),
        # rrf (rrf_k=0 for readable numbers): raw list b,a,c; question list a,b; summary list c.
        # a and b tie at 1.5: a appears first.
        ("rrf", None, [("a", 1 + 1 / 2), ("b", 1 / 2 + 1), ("c", 1 / 3 + 1)]),
        # weighted: question halved, so b's raw hit wins; c's summary 0.8 * 1.0.
        ("weighted", {"question": 0.5}, [("b", 0.85), ("c", 0.80), ("a", 0.60)]),
        ("weighted", {"raw": 2.0, "summary": 0.0}, [("b", 1.70), ("a", 1.20), ("c", 1.00)]),
        ("weighted", None, [("a", 0.90), ("b", 0.85), ("c", 0.80)]),
    ],
)
def test_fuse_methods(
    method: str, weights: dict[str, float] | None, expected: list[tuple[str, float]]
) -> None:
    fused = fuse(HITS, k=10, method=method, weights=weights, rrf_k=0)  # type: ignore[arg-type]
    assert [f.doc_id for f in fused] == [doc for doc, _ in expected]
    assert [f.score for f in fused] == pytest.approx([score for _, score in expected])
    assert [f.rank for f in fused] == [1, 2, 3]


@pytest.mark.parametrize(
    ("hits", "method", "expected_order"),
    [
        # Equal scores keep first appearance.
        ([hit("x", "raw", 0.5), hit("y", "raw", 0.5), hit("z", "raw", 0.5)], "max", ["x", "y", "z"]),
        ([hit("y", "raw", 0.5), hit("x", "raw", 0.5)], "max", ["y", "x"]),
        # rrf tie: x first in raw, y first in question, same sum: first appearance wins.
        (
            [
                hit("x", "raw", 0.9),
                hit("y", "question", 0.9),
                hit("y", "raw", 0.8),
                hit("x", "question", 0.8),
            ],
            "rrf",
            ["x", "y"],
        ),
        # Input not sorted: scores decide, not positions.
        ([hit("x", "raw", 0.1), hit("y", "raw", 0.9)], "max", ["y", "x"]),
    ],
)
def test_fuse_ties_and_ordering(hits: list[Hit], method: str, expected_order: list[str]) -> None:
    assert [f.doc_id for f in fuse(hits, k=10, method=method)] == expected_order  # type: ignore[arg-type]


def test_fuse_each_chunk_once_and_matched_best_first() -> None:
    fused = fuse(HITS, k=10)
    assert len({f.doc_id for f in fused}) == len(fused) == 3
    a = fused[0]
    assert [h.kind for h in a.matched] == ["question", "raw"]
    assert all(h.doc_id == "a" for h in a.matched)


def test_fuse_drops_repeated_representations() -> None:
    twice = [hit("a", "raw", 0.9, rep="r1"), hit("a", "raw", 0.9, rep="r1"), hit("b", "raw", 0.5, rep="r2")]
    fused = fuse(twice, k=10)
    assert [len(f.matched) for f in fused] == [1, 1]


def test_rrf_counts_a_chunk_once_per_kind() -> None:
    # Five questions of "a" must not beat "b", which leads two lists.
    many = [hit("a", "question", 0.9 - i / 100, rep=f"q{i}") for i in range(5)]
    hits = [*many, hit("b", "question", 0.5), hit("b", "raw", 0.9)]
    fused = fuse(hits, k=2, method="rrf", rrf_k=0)
    assert [(f.doc_id, f.score) for f in fused] == [("b", 1 / 2 + 1), ("a", 1.0)]


@pytest.mark.parametrize(
    ("k", "expected"), [(1, ["a"]), (2, ["a", "b"]), (3, ["a", "b", "c"]), (9, ["a", "b", "c"])]
)
def test_k_counts_raw_chunks_not_vectors(k: int, expected: list[str]) -> None:
    assert [f.doc_id for f in fuse(HITS, k=k)] == expected


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        ({"raw"}, [("b", 0.85), ("a", 0.60), ("c", 0.50)]),
        (["summary"], [("c", 0.80)]),
        ({"table_summary"}, []),
    ],
)
def test_fuse_kind_filter(kinds: set[str] | list[str], expected: list[tuple[str, float]]) -> None:
    fused = fuse(HITS, k=10, kinds=kinds)
    assert [(f.doc_id, f.score) for f in fused] == expected
    assert all(h.kind in kinds for f in fused for h in f.matched)


def test_fuse_empty() -> None:
    assert fuse([], k=3) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be >= 1, got 0"),
        ({"k": -2}, "k must be >= 1, got -2"),
        ({"k": 1, "method": "mean"}, "method must be one of 'max', 'rrf', 'weighted', 'sum', got 'mean'"),
        (
            {"k": 1, "method": "weighted", "weights": {"raw": 1.0, "caption": 1.0, "faq": 2.0}},
            "unknown kind names in weights: caption, faq; known kinds: code_docstring, image_caption, "
            "keywords, question, raw, sentence, step, summary, table_summary",
        ),
        (
            {"k": 1, "kinds": ["raw", "titles"]},
            "unknown kind names in kinds: titles; known kinds: code_docstring, image_caption, "
            "keywords, question, raw, sentence, step, summary, table_summary",
        ),
        (
            {"k": 1, "weights": {"raw": 1.0}},
            "weights are used only with method='weighted' or 'sum', got method='max'",
        ),
        (
            {"k": 1, "method": "weighted", "weights": {"raw": -1.0}},
            "weight of kind 'raw' must be a finite number >= 0, got -1.0",
        ),
        ({"k": 1, "method": "rrf", "rrf_k": -1}, "rrf_k must be >= 0, got -1"),
        (
            {"k": 1, "method": "sum", "weights": {"raw": 1.0, "step": 0.5}},
            "a 'step' hit scores as its chunk's raw text: weigh 'raw' instead of 'step'",
        ),
        (
            {"k": 1, "method": "weighted", "weights": {"sentence": 0.9}},
            "a 'sentence' hit scores as its chunk's raw text: weigh 'raw' instead of 'sentence'",
        ),
    ],
)
def test_fuse_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        fuse(HITS, **kwargs)  # type: ignore[arg-type]


def test_matched_metadata() -> None:
    fused = fuse([hit("a", "question", 0.9), hit("a", "raw", 0.5)], k=1)[0]
    meta = matched_metadata(fused)
    assert meta["score"] == 0.9
    assert json.loads(str(meta["matched"])) == [
        {"kind": "question", "text": "question of a", "score": 0.9},
        {"kind": "raw", "text": "raw of a", "score": 0.5},
    ]
    assert matched_metadata(Fused("b", 0.1, (), 1)) == {"score": 0.1, "matched": "[]"}


def _h(doc: str, kind: str, score: float, n: int = 0) -> Hit:
    return Hit(
        doc_id=doc, kind=kind, text=f"{doc}-{kind}-{n}", score=score, representation_id=f"{doc}{kind}{n}"
    )


def test_sum_adds_each_kinds_best_hit_so_one_generic_hit_cannot_decide() -> None:
    # "a" has one very good generic question; "b" matches well on its raw text and its
    # summary and keywords. Max picks "a"; raw plus the mean of per-kind bests picks "b".
    hits = [
        _h("a", "question", 0.95),
        _h("a", "raw", 0.70),
        _h("b", "raw", 0.80),
        _h("b", "summary", 0.85),
        _h("b", "keywords", 0.80),
        _h("b", "question", 0.80, 1),
        _h("b", "question", 0.79, 2),  # a second question of the same kind adds nothing
    ]
    assert [f.doc_id for f in fuse(hits, k=2, method="max")] == ["a", "b"]
    summed = fuse(hits, k=2, method="sum")
    assert [f.doc_id for f in summed] == ["b", "a"]
    assert summed[0].score == pytest.approx(0.80 + 0.35 * (0.80 + 0.85 + 0.80) / 3)
    # "a" lacks a summary and keywords: they count at the lowest score of their kind.
    assert summed[1].score == pytest.approx(0.70 + 0.35 * (0.95 + 0.85 + 0.80) / 3)
    custom = fuse(hits, k=1, method="sum", weights={"question": 1.0})
    assert custom[0].doc_id == "a"  # only the kinds given count


@pytest.mark.parametrize("part", ["step", "sentence"])
@pytest.mark.parametrize("method", ["max", "sum", "weighted", "rrf"])
def test_a_step_or_sentence_hit_scores_as_its_chunks_raw_text(method: str, part: str) -> None:
    # "a" holds the step (or sentence) the question is about: its own vector matches better
    # than any raw text, and "a" comes back once, first, with the part among what matched.
    hits = [
        _h("b", "raw", 0.80),
        _h("a", part, 0.90),
        _h("a", part, 0.70, 1),
        _h("a", "raw", 0.60),
        _h("c", "raw", 0.50),
    ]
    fused = fuse(hits, k=3, method=method)
    assert [f.doc_id for f in fused] == ["a", "b", "c"]
    assert [h.kind for h in fused[0].matched] == [part, part, "raw"]
    if method == "sum":
        assert fused[0].score == pytest.approx(0.90)  # the best of raw and step, nothing added


def test_sum_does_not_hold_a_missing_step_against_a_chunk() -> None:
    # Text chunks have no steps: with steps scored as raw, "t" loses nothing for lacking
    # them, and a procedure's weaker steps do not count as an extra kind of evidence.
    hits = [_h("t", "raw", 0.80), _h("p", "raw", 0.78), _h("p", "step", 0.40)]
    fused = fuse(hits, k=2, method="sum")
    assert [(f.doc_id, f.score) for f in fused] == [("t", pytest.approx(0.80)), ("p", pytest.approx(0.78))]

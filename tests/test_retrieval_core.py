"""The retrieval loop: over-fetching, missing chunks, kinds, fusion, routing, parent expansion.

Pure logic, so the vector store and the docstore are plain callables over small tables:
``search(n, kinds)`` returns the best ``n`` hits of those kinds from a fixed list (and
records each call), the docstore is a dict of metadata dicts. Expected orders are worked
by hand from the definitions in docs/RETRIEVAL.md.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from procedure_rag._representations.types import RepresentationKind
from procedure_rag._retrieval.fusion import Hit, fuse
from procedure_rag._retrieval.retrieve import Found, RetrievalOptions, RetrievalResult, check_query, retrieve
from procedure_rag._retrieval.routing import QuestionType
from procedure_rag._store.lexical_index import LexicalHit

Item = Mapping[str, object]
RAW = frozenset({"raw"})


def hit(doc: str, score: float, kind: str = "raw", n: int = 0) -> Hit:
    return Hit(
        doc_id=doc, kind=kind, text=f"{kind} {n} of {doc}", score=score, representation_id=f"{doc}/{kind}/{n}"
    )


def runs(docs: str, per_doc: int = 3) -> list[Hit]:
    """``per_doc`` raw hits for each doc in turn, scores falling: a a a b b b c c c…"""
    return [hit(doc, 1.0 - i / 100, n=i) for i, doc in enumerate(d for d in docs for _ in range(per_doc))]


@dataclass
class Index:
    """A vector search over ``hits`` (best first) and a docstore of metadata dicts."""

    hits: list[Hit]
    docs: dict[str, dict[str, object]]
    calls: list[tuple[int, str]] = field(default_factory=list)
    looked_up: list[str] = field(default_factory=list)

    def search(self, n: int, kinds: frozenset[str]) -> Found:
        self.calls.append((n, "raw" if kinds == RAW else ",".join(sorted(kinds))))
        of_kinds = [h for h in self.hits if h.kind in kinds]
        return Found(of_kinds[:n], exhausted=len(of_kinds) < n)

    def lookup(self, ids: Sequence[str]) -> list[Item | None]:
        self.looked_up.extend(ids)
        return [self.docs.get(doc_id) for doc_id in ids]

    def run(self, query: str = "How do I restart it?", **options: Any) -> RetrievalResult[Item]:
        return retrieve(
            query,
            search=self.search,
            lookup=self.lookup,
            metadata_of=lambda item: item,
            options=RetrievalOptions(**options),
        )

    def asked(self) -> list[int]:
        return [n for n, _ in self.calls]


def index_of(
    hits: list[Hit], missing: str = "", metadata: Mapping[str, Mapping[str, object]] | None = None
) -> Index:
    """The hits, and a docstore entry ``{"id": …}`` (plus ``metadata``) per chunk not ``missing``."""
    docs: dict[str, dict[str, object]] = {h.doc_id: {"id": h.doc_id} for h in hits if h.doc_id not in missing}
    for doc_id, extra in (metadata or {}).items():
        docs.setdefault(doc_id, {"id": doc_id}).update(extra)
    return Index(hits, docs)


def ids(result: RetrievalResult[Item]) -> list[str]:
    return [r.doc_id for r in result.items]


# Each row: the hits, the docs missing from the docstore, the options, the searches' n, the ids.
OVER_FETCH: dict[str, tuple[str, str, dict[str, Any], list[int], str]] = {
    "stops as soon as k chunks are found": ("abcdef", "", {"k": 2, "fetch_start": 2}, [2, 4], "ab"),
    "k counts chunks, not vectors": ("abcdef", "", {"k": 3, "fetch_start": 2}, [2, 4, 8], "abc"),
    "default start is 40 * k, k at least 10": ("abcdef", "", {"k": 1}, [400], "a"),
    "a k over 10 asks for itself": ("abcdef", "", {"k": 12}, [480], "abcdef"),
    "store exhausted": ("ab", "", {"k": 5, "fetch_start": 4}, [4, 8], "ab"),
    "limit reached": ("abcdefghij", "", {"k": 5, "fetch_start": 2, "fetch_limit": 6}, [2, 4, 6], "ab"),
    "last ask is the limit": (
        "abcdefghij",
        "",
        {"k": 4, "fetch_start": 4, "fetch_limit": 10},
        [4, 8, 10],
        "abcd",
    ),
    "missing chunks do not count": ("abcdef", "a", {"k": 2, "fetch_start": 3}, [3, 6, 12], "bc"),
    "every chunk missing": ("abc", "abc", {"k": 2, "fetch_start": 3}, [3, 6, 12], ""),
    "empty store": ("", "", {"k": 3, "fetch_start": 5}, [5], ""),
}


@pytest.mark.parametrize("case", list(OVER_FETCH))
def test_over_fetching(case: str) -> None:
    docs, missing, options, calls, expected = OVER_FETCH[case]
    index = index_of(runs(docs), missing)

    result = index.run(**options)

    # One search over every kind per round, asking n.
    assert index.asked() == calls
    assert result.vectors_searched == calls[-1]
    assert ids(result) == list(expected)
    assert result.missing == tuple(missing)
    # Every id is looked up once, however many searches it takes.
    assert sorted(index.looked_up) == sorted(set(index.looked_up))


def test_missing_chunks_are_skipped_reported_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    index = index_of(runs("abcde", per_doc=1), missing="bd")

    with caplog.at_level(logging.WARNING, logger="procedure_rag"):
        result = index.run(k=3)

    assert ids(result) == ["a", "c", "e"]
    assert result.missing == ("b", "d")
    # Ranks count the items returned: 1, 2, 3, not the places skipped chunks held.
    assert [r.rank for r in result.items] == [1, 2, 3]
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("procedure_rag", "WARNING", "2 vector(s) point at chunks missing from the docstore (skipped): b, d")
    ]


def test_nothing_missing_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="procedure_rag"):
        result = index_of(runs("abc")).run(k=2)
    assert result.missing == ()
    assert caplog.records == []


MIXED = [
    hit("a", 0.9, "question"),
    hit("b", 0.85),
    hit("a", 0.6),
    hit("c", 0.8, "summary"),
    hit("b", 0.7, "question"),
    hit("a", 0.5, "keywords"),
]
ALL = ",".join(sorted(kind.value for kind in RepresentationKind))


@pytest.mark.parametrize(
    ("kinds", "searched", "expected"),
    [
        (
            None,
            [ALL],
            {"a": ["question", "raw", "keywords"], "b": ["raw", "question"], "c": ["summary"]},
        ),
        (frozenset({"raw"}), ["raw"], {"b": ["raw"], "a": ["raw"]}),
        (
            frozenset({"question", "summary"}),
            ["question,summary"],
            {"a": ["question"], "c": ["summary"], "b": ["question"]},
        ),
        (frozenset({"raw", "keywords"}), ["keywords,raw"], {"b": ["raw"], "a": ["raw", "keywords"]}),
        (frozenset({"table_summary"}), ["table_summary"], {}),
    ],
)
def test_kinds_go_to_the_store_and_filter_the_hits(
    kinds: frozenset[str] | None, searched: list[str], expected: dict[str, list[str]]
) -> None:
    index = index_of(MIXED)
    result = index.run(k=5, fusion="max", kinds=kinds)
    assert [label for _, label in index.calls] == searched
    assert {r.doc_id: [h.kind for h in r.matched] for r in result.items} == expected
    assert ids(result) == list(expected)


def test_a_store_ignoring_kinds_is_filtered_anyway() -> None:
    index = index_of(MIXED)
    index.search = lambda n, kinds: Found(MIXED[:n], exhausted=True)  # type: ignore[method-assign]
    result = index.run(k=5, fusion="max", kinds={"summary"})
    assert {r.doc_id: [h.kind for h in r.matched] for r in result.items} == {"c": ["summary"]}


@pytest.mark.parametrize(
    ("fusion", "weights", "by_hand"),
    [
        ("max", None, [("a", 0.9), ("b", 0.85), ("c", 0.8)]),
        # Per kind list (rrf_k 0): raw b, a; question a, b; summary c; keywords a.
        ("rrf", None, [("a", 1 / 2 + 1 + 1), ("b", 1 + 1 / 2), ("c", 1.0)]),
        ("weighted", {"question": 0.5}, [("b", 0.85), ("c", 0.8), ("a", 0.6)]),
        # "sum" is defined by fuse() (tests/test_fusion.py): retrieve must hand it through.
        ("sum", None, None),
        ("sum", {"raw": 1.0, "question": 1.0}, None),
    ],
)
def test_fusion_methods_pass_through(
    fusion: str, weights: dict[str, float] | None, by_hand: list[tuple[str, float]] | None
) -> None:
    result = index_of(MIXED).run(k=3, fusion=fusion, weights=weights, rrf_k=0)

    fused = fuse(MIXED, k=3, method=fusion, weights=weights, rrf_k=0)  # type: ignore[arg-type]
    expected = by_hand or [(f.doc_id, f.score) for f in fused]
    assert ids(result) == [doc for doc, _ in expected]
    assert [r.score for r in result.items] == pytest.approx([score for _, score in expected])
    for item in result.items:
        assert item.metadata["score"] == item.score
        matched = json.loads(str(item.metadata["matched"]))
        assert matched == [{"kind": h.kind, "text": h.text, "score": h.score} for h in item.matched]
        assert [h.score for h in item.matched] == sorted((h.score for h in item.matched), reverse=True)


def test_rescore_replaces_the_search_hits_of_the_candidates() -> None:
    # The search finds a and b by their raw texts only; rescoring scores every
    # representation of those two, and b's summary lifts it over a.
    index = index_of([hit("a", 0.9), hit("b", 0.8), hit("c", 0.7)])
    rescored = [hit("a", 0.9), hit("b", 0.8), hit("b", 0.95, "summary"), hit("a", 0.3, "question")]
    asked: list[list[str]] = []

    def rescore(doc_ids: Sequence[str]) -> list[Hit]:
        asked.append(list(doc_ids))
        return [h for h in rescored if h.doc_id in doc_ids]

    result = retrieve(
        "How do I restart it?",
        search=index.search,
        lookup=index.lookup,
        metadata_of=lambda item: item,
        options=RetrievalOptions(k=2, fusion="max", kinds=frozenset({"raw", "summary"}), fetch_start=2),
        rescore=rescore,
    )

    assert asked == [["a", "b"]]
    assert ids(result) == ["b", "a"]
    assert [(h.kind, h.score) for h in result.items[0].matched] == [("summary", 0.95), ("raw", 0.8)]
    # The question hit is of a kind not asked for.
    assert [h.kind for h in result.items[1].matched] == ["raw"]


ROUTED_DOCS = {
    "a": {"has_caution": False, "step_count": 0},
    "b": {"has_caution": True, "step_count": 1},
    "c": {"has_caution": False, "step_count": 3},
}
ROUTED_HITS = [hit("a", 0.9), hit("b", 0.88), hit("c", 0.87)]


@pytest.mark.parametrize(
    ("question", "question_type", "rule", "expected"),
    [
        ("What should I be careful about?", QuestionType.CAUTION, "has_caution >= 1", "bac"),
        ("注意することは？", QuestionType.CAUTION, "has_caution >= 1", "bac"),
        ("How do I restart it?", QuestionType.OPERATION, "step_count >= 1", "bca"),
        ("次は何をしますか？", QuestionType.SEQUENCE, "step_count >= 2", "cab"),
    ],
)
def test_routing(question: str, question_type: QuestionType, rule: str, expected: str) -> None:
    index = index_of(ROUTED_HITS, metadata=ROUTED_DOCS)
    carriers = (
        [doc for doc in expected if doc != "a"]
        if question_type is QuestionType.OPERATION
        else list(expected[:1])
    )

    result = index.run(question, k=3, route_questions=True, routing_boost=0.05)

    assert result.question_type is question_type
    assert ids(result) == list(expected)
    routing = {"type": question_type.value, "rule": rule, "boosted": carriers}
    for item in result.items:
        assert json.loads(str(item.metadata["routing"])) == routing
        boost = 0.05 if item.doc_id in carriers else 0.0
        assert item.score == pytest.approx(
            dict(zip("abc", (0.9, 0.88, 0.87), strict=True))[item.doc_id] + boost
        )


def test_no_routing_unless_asked() -> None:
    result = index_of(ROUTED_HITS, metadata=ROUTED_DOCS).run("What should I be careful about?", k=3)
    assert result.question_type is None
    assert ids(result) == ["a", "b", "c"]
    assert all("routing" not in item.metadata for item in result.items)


# c1, c2 and c5 are children of P; c3's parent Q is not in the docstore; c4 has no parent.
FAMILY = {"P": {}, "c1": {"parent_id": "P"}, "c2": {"parent_id": "P"}, "c3": {"parent_id": "Q"}, "c4": {}}
FAMILY_HITS = [hit("c3", 0.95), hit("c1", 0.9), hit("c4", 0.85), hit("c2", 0.8, "question")]


def test_parent_expansion() -> None:
    index = index_of(FAMILY_HITS, metadata=FAMILY)

    result = index.run(k=3, fusion="max", expand_parents=True)

    assert ids(result) == ["c3", "P", "c4"]
    assert [(r.rank, r.score) for r in result.items] == [(1, 0.95), (2, 0.9), (3, 0.85)]
    by_id = {r.doc_id: r for r in result.items}
    assert by_id["P"].item == {"id": "P"}
    assert json.loads(str(by_id["P"].metadata["expanded_from"])) == ["c1", "c2"]
    assert [h.doc_id for h in by_id["P"].matched] == ["c1", "c2"]
    assert by_id["P"].metadata["score"] == 0.9
    # A child whose parent is missing, and a chunk without a parent, stand for themselves.
    assert "expanded_from" not in by_id["c3"].metadata
    assert "expanded_from" not in by_id["c4"].metadata
    assert result.missing == ()


def test_parent_expansion_counts_k_in_results() -> None:
    # Four children of P come first: k=2 needs a second result, so the search goes on.
    hits = [hit(f"c{i}", 1.0 - i / 10) for i in range(4)] + [hit("d", 0.5)]
    family: dict[str, dict[str, object]] = {f"c{i}": {"parent_id": "P"} for i in range(4)}
    index = index_of(hits, metadata={**family, "P": {}})

    result = index.run(k=2, fusion="max", expand_parents=True, fetch_start=2)

    assert ids(result) == ["P", "d"]
    assert index.asked() == [2, 4, 8]
    assert json.loads(str(result.items[0].metadata["expanded_from"])) == ["c0", "c1", "c2", "c3"]


def test_parent_expansion_gathers_every_child_fetched() -> None:
    result = index_of(FAMILY_HITS, metadata=FAMILY).run(k=2, fusion="max", expand_parents=True)
    assert ids(result) == ["c3", "P"]
    assert json.loads(str(result.items[1].metadata["expanded_from"])) == ["c1", "c2"]


@pytest.mark.parametrize(
    ("query", "error", "message"),
    [
        (None, TypeError, "query must be a str, got NoneType"),
        (b"restart", TypeError, "query must be a str, got bytes"),
        ("", ValueError, "query is empty: ask a question"),
        (" \n\t", ValueError, "query is empty: ask a question"),
        ("\u3000", ValueError, "query is empty: ask a question"),
    ],
)
def test_bad_queries(query: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        check_query(query)
    index = index_of(runs("ab"))
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        index.run(query)  # type: ignore[arg-type]
    assert index.calls == []


KNOWN = ", ".join(sorted(kind.value for kind in RepresentationKind))


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"k": 0}, ValueError, "k must be >= 1, got 0"),
        ({"k": True}, TypeError, "k must be an int, got True"),
        ({"k": 2.0}, TypeError, "k must be an int, got 2.0"),
        ({"fusion": "mean"}, ValueError, "method must be one of 'max', 'rrf', 'weighted', 'sum', got 'mean'"),
        (
            {"kinds": {"raw", "tables"}},
            ValueError,
            f"unknown kind names in kinds: tables; known kinds: {KNOWN}",
        ),
        (
            {"weights": {"tables": 1.0}},
            ValueError,
            f"unknown kind names in weights: tables; known kinds: {KNOWN}",
        ),
        (
            {"fusion": "max", "weights": {"raw": 1.0}},
            ValueError,
            "weights are used only with method='weighted' or 'sum', got method='max'",
        ),
        ({"rrf_k": -1}, ValueError, "rrf_k must be >= 0, got -1"),
        ({"fetch_start": 0}, ValueError, "fetch_start must be >= 1, got 0"),
        ({"k": 1, "fetch_limit": 3}, ValueError, "fetch_limit must be >= fetch_start (400), got 3"),
        ({"rescore_candidates": 0}, ValueError, "rescore_candidates must be >= 1, got 0"),
        ({"fetch_start": 10, "fetch_limit": 5}, ValueError, "fetch_limit must be >= fetch_start (10), got 5"),
        ({"routing_boost": -0.1}, ValueError, "boost must be a finite number >= 0, got -0.1"),
        ({"routing_boost": float("inf")}, ValueError, "boost must be a finite number >= 0, got inf"),
    ],
)
def test_option_messages(options: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        RetrievalOptions(**options)


@pytest.mark.parametrize(
    ("options", "start", "limit"),
    [
        ({}, 400, 1600),  # k = 5 gathers candidates as k = 10 does
        ({"k": 2}, 400, 1600),
        ({"k": 20}, 800, 3200),
        ({"k": 2, "fetch_start": 500}, 500, 1600),
        ({"k": 2, "fetch_start": 3, "fetch_limit": 3}, 3, 3),
    ],
)
def test_fetch_bounds(options: dict[str, Any], start: int, limit: int) -> None:
    built = RetrievalOptions(**options)
    assert (built.start, built.limit) == (start, limit)


def test_kinds_are_frozen() -> None:
    kinds = RetrievalOptions(kinds={"raw", "summary"}).kinds  # type: ignore[arg-type] # a set is accepted
    assert kinds == frozenset({"raw", "summary"})
    assert isinstance(kinds, frozenset)


def test_only_the_best_candidates_are_rescored() -> None:
    index = index_of(runs("abcdefgh", per_doc=1))
    asked: list[list[str]] = []

    def rescore(doc_ids: Sequence[str]) -> list[Hit]:
        asked.append(list(doc_ids))
        return [h for h in index.hits if h.doc_id in doc_ids]

    result = retrieve(
        "How do I restart it?",
        search=index.search,
        lookup=index.lookup,
        metadata_of=lambda item: item,
        options=RetrievalOptions(k=2, fusion="max", fetch_start=8, rescore_candidates=3),
        rescore=rescore,
    )
    assert asked == [["a", "b", "c"]]
    assert ids(result) == ["a", "b"]


def test_candidates_the_rescore_does_not_cover_keep_their_searched_hits() -> None:
    # b's vectors were written outside the write path: the ledger knows none of them,
    # so the re-scoring returns nothing for b and b keeps the hit its search found.
    index = index_of([hit("a", 0.9), hit("b", 0.8), hit("c", 0.7)])

    def rescore(doc_ids: Sequence[str]) -> list[Hit]:
        return [hit("a", 0.6)] if "a" in doc_ids else []

    result = retrieve(
        "How do I restart it?",
        search=index.search,
        lookup=index.lookup,
        metadata_of=lambda item: item,
        options=RetrievalOptions(k=2, fusion="max", fetch_start=3, rescore_candidates=2),
        rescore=rescore,
    )
    assert ids(result) == ["b", "a"]
    assert [(h.kind, h.score) for h in result.items[0].matched] == [("raw", 0.8)]
    assert [(h.kind, h.score) for h in result.items[1].matched] == [("raw", 0.6)]


@pytest.mark.parametrize(("words", "first"), [(True, 10 * 10), (False, 40 * 10)])
def test_first_search_is_shallower_with_lexical_candidates(words: bool, first: int) -> None:
    """Lexical candidates make a deep first search unneeded (10·k vectors, else 40·k; k at least 10)."""
    index = index_of(runs("abcdefgh"))

    def lexical(query: str, n: int) -> list[LexicalHit]:
        return [LexicalHit("h", 3.0, ("restart",))] if words else []

    retrieve(
        "How do I restart it?",
        search=index.search,
        lookup=index.lookup,
        metadata_of=lambda item: item,
        options=RetrievalOptions(k=3),
        lexical=lexical,
    )
    assert index.asked()[0] == first


def test_a_small_k_is_ranked_from_the_candidates_of_ten() -> None:
    """A chunk found deep by one kind, whose raw text matches best, is found at k = 2.

    Its keywords vector is the 31st hit of the search, its raw vector was not searched up;
    re-scored, its raw text beats every other chunk's. With 8 * k = 16 candidates re-scored
    it was never seen at k = 2, while k = 10 re-scored it: the first results must not
    depend on how many are asked for.
    """
    others = [hit(f"c{i:02}", 0.9 - i / 1000) for i in range(40)]
    deep = hit("deep", 0.9 - 29.5 / 1000, "keywords")
    index = index_of([*others[:30], deep, *others[30:]])
    exact = {h.doc_id: [h] for h in others} | {"deep": [hit("deep", 0.95), deep]}

    def rescore(doc_ids: Sequence[str]) -> list[Hit]:
        return [h for doc_id in doc_ids for h in exact[doc_id]]

    def top(k: int) -> list[str]:
        return ids(
            retrieve(
                "How do I restart it?",
                search=index.search,
                lookup=index.lookup,
                metadata_of=lambda item: item,
                options=RetrievalOptions(k=k, fusion="sum", fetch_start=41),
                rescore=rescore,
            )
        )

    assert top(2) == ["deep", "c00"]
    assert top(2) == top(10)[:2]

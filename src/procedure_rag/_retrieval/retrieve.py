"""Retrieval over a multi-vector index: search, fuse, look up, route, expand, cut at k.

Both retrievers call :func:`retrieve` with small callables over their framework's
stores (a vector search returning :class:`~procedure_rag._retrieval.fusion.Hit`, optionally a
re-scoring of candidate chunks, a docstore lookup, and a way to read an item's
metadata) and get back ``k`` distinct raw items, best first, each with its score and
what matched.

Candidates come from one deep search over every kind (``40 * k`` vectors, so raw
texts are not crowded out by questions and summaries; ``10 * k`` when the lexical
index adds its own candidates, which measured the same). When the store can, every
representation of the best ``8 * k`` candidates is then scored exactly (``rescore``),
so fusion sees each chunk's best hit of every kind. When the docstore keeps a
lexical index (:mod:`procedure_rag._store.lexical_index`), the best ``2 * k`` chunks by BM25 over
their words join the re-scored candidates, and the best :data:`LEXICAL_BOOSTED` of them add
their normalised lexical score (weighted by ``lexical_weight``) to the fused one. Here ``k``
is at least :data:`CANDIDATES_FOR` (10), so a search for five ranks the candidates a search
for ten does. The loop asks for
more hits until ``k`` distinct items are found after items missing from the docstore
are skipped and after children are merged into parents, or until the store has
nothing more.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from procedure_rag._representations.types import RepresentationKind
from procedure_rag._retrieval.context import CONTEXT_KEY, ContextSource, with_context
from procedure_rag._retrieval.fusion import Fused, FusionMethod, Hit, fuse, matched_metadata
from procedure_rag._retrieval.repeats import REPEAT_KEY, demote_repeats, shown_lines
from procedure_rag._retrieval.routing import QuestionType, classify_question, route
from procedure_rag._store.lexical_index import LexicalHit

__all__ = [
    "ALL_KINDS",
    "CANDIDATES_FOR",
    "FETCH_PER_K",
    "LEXICAL_BOOSTED",
    "LEXICAL_KIND",
    "LEXICAL_WEIGHT",
    "Found",
    "Lexical",
    "Rescore",
    "RetrievalOptions",
    "RetrievalResult",
    "Retrieved",
    "Search",
    "check_query",
    "hits_from_vectors",
    "retrieve",
]

T = TypeVar("T")

#: Vectors asked first per result, so raw texts are not crowded out by other kinds.
FETCH_PER_K = 40
#: The same when the lexical index adds its own candidates.
LEXICAL_FETCH_PER_K = 10
#: Candidates (vectors searched, chunks re-scored, chunks asked of the lexical index) are
#: gathered for at least this many results, so a search for five ranks the candidates of one
#: for ten: at k = 5, half as deep as k = 10, chunks whose best searched hit ranks deep were
#: missed (HoloLens ja answered@1 / @5 .74 / .91 -> .76 / .93, Japanese-native
#: answered@1 .56 -> .62, no figure of any dev set lower; docs/RETRIEVAL.md).
CANDIDATES_FOR = 10
#: The best chunks by their words whose lexical score adds to their fused one, whatever ``k``
#: is asked; the lexical index's other candidates are ranked on their dense scores alone.
#: Adding the score of the best 20 at k = 5 (2 * 10) lifted HoloLens ja answered@5 .91 -> .95
#: and lowered E-Manual .84 -> .82; as candidates only they lift HoloLens ja to .93 and lower
#: nothing (docs/RETRIEVAL.md).
LEXICAL_BOOSTED = 10

#: Every representation kind's name.
ALL_KINDS = frozenset(kind.value for kind in RepresentationKind)

#: ``doc ids -> every representation hit of those chunks, scored exactly``.
Rescore = Callable[[Sequence[str]], Sequence[Hit]]


@dataclass(frozen=True, slots=True)
class Found:
    """One answer of a vector search.

    Attributes:
        hits: The best hits, best first.
        exhausted: True when the store has no more to give (it returned fewer than asked).
    """

    hits: Sequence[Hit]
    exhausted: bool


#: ``(n, kinds) -> the best n hits among representations of those kinds``.
Search = Callable[[int, frozenset[str]], Found]

_LOG = logging.getLogger("procedure_rag")

#: The kind of a lexical match among a result's matched hits.
LEXICAL_KIND = "lexical"

#: Default :attr:`RetrievalOptions.lexical_weight`.
LEXICAL_WEIGHT = 0.06

#: ``(question, n) -> the best n chunks by their words`` (a docstore's lexical index).
Lexical = Callable[[str, int], Sequence[LexicalHit]]


@dataclass(frozen=True, slots=True)
class RetrievalOptions:
    """How :func:`retrieve` ranks and cuts; validated when built.

    Attributes:
        k: Raw chunks to return.
        fusion: How a chunk's hits make its score (see :func:`~procedure_rag._retrieval.fusion.fuse`).
        weights: Weight per kind, for ``"weighted"`` and ``"sum"``.
        kinds: Only hits of these kinds count (``None``: all).
        rrf_k: The reciprocal-rank damping constant.
        expand_parents: Return each child's parent chunk instead (children of one parent
            become one result).
        route_questions: Classify the question and move up chunks carrying the field
            it asks about; the rule goes into the result metadata.
        routing_boost: What routing adds to a carrier's score.
        fetch_start: Vectors asked first (by default ``40 * k``: one unfiltered search,
            so raw texts are not crowded out of the candidates by other kinds; ``10 * k``
            when the lexical index is asked too, whose candidates make the depth matter
            no more: the retrieval benchmark's four sets measured the same from ``4 * k``).
            Here and below ``k`` counts as at least :data:`CANDIDATES_FOR` (10).
        fetch_limit: Most vectors asked (``160 * k`` by default).
        rescore_candidates: Candidate chunks re-scored when the store can (``8 * k`` by
            default), taken best first by their searched hits.
        lexical_weight: What a chunk's lexical (BM25) score, divided by the best one
            of the question, adds to its fused score when the store has a lexical
            index (``0`` turns it off). 0.06 is about the spread of the bundled e5
            model's similarities among a question's top chunks: an exact word match
            moves a chunk up a few places, not over every dense match (see
            docs/RETRIEVAL.md for the measurements).
        context_budget: Return each hit with the parts of its section that complete
            it, within this many tokens per result (``None``: off; see
            :mod:`procedure_rag._retrieval.context`): the other hits of its section,
            then the parts carrying a caution or a condition. Needs parents in the
            docstore, and excludes ``expand_parents``.
        demote_repeats: Move a result most of whose lines a better result already shows
            below the others found (:mod:`procedure_rag._retrieval.repeats`; the result
            metadata's ``repeat_of`` names the better one). Needs ``text_of``; not with
            ``expand_parents``.
    """

    k: int = 5
    fusion: FusionMethod = "sum"
    weights: Mapping[str, float] | None = None
    kinds: frozenset[str] | None = None
    rrf_k: int = 60
    expand_parents: bool = False
    route_questions: bool = False
    routing_boost: float = 0.05
    fetch_start: int | None = None
    fetch_limit: int | None = None
    rescore_candidates: int | None = None
    lexical_weight: float = LEXICAL_WEIGHT
    context_budget: int | None = None
    demote_repeats: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int):
            msg = f"k must be an int, got {self.k!r}"
            raise TypeError(msg)
        if self.kinds is not None and not isinstance(self.kinds, frozenset):
            object.__setattr__(self, "kinds", frozenset(self.kinds))
        # fuse() validates k, the method, weights, kinds and rrf_k with pinned messages.
        fuse([], k=self.k, method=self.fusion, weights=self.weights, kinds=self.kinds, rrf_k=self.rrf_k)
        route([], {}, QuestionType.GENERAL, boost=self.routing_boost)
        if self.fetch_start is not None and self.fetch_start < 1:
            msg = f"fetch_start must be >= 1, got {self.fetch_start}"
            raise ValueError(msg)
        if self.rescore_candidates is not None and self.rescore_candidates < 1:
            msg = f"rescore_candidates must be >= 1, got {self.rescore_candidates}"
            raise ValueError(msg)
        if (
            isinstance(self.lexical_weight, bool)
            or not isinstance(self.lexical_weight, int | float)
            or not 0 <= self.lexical_weight < math.inf
        ):
            msg = f"lexical_weight must be a finite number >= 0, got {self.lexical_weight!r}"
            raise ValueError(msg)
        if self.context_budget is not None:
            if isinstance(self.context_budget, bool) or not isinstance(self.context_budget, int):
                msg = f"context_budget must be an int or None, got {self.context_budget!r}"
                raise TypeError(msg)
            if self.context_budget < 1:
                msg = f"context_budget must be >= 1, got {self.context_budget}"
                raise ValueError(msg)
            if self.expand_parents:
                msg = "context_budget and expand_parents exclude each other: choose one"
                raise ValueError(msg)
        if self.fetch_limit is not None and self.fetch_limit < self.start:
            msg = f"fetch_limit must be >= fetch_start ({self.start}), got {self.fetch_limit}"
            raise ValueError(msg)

    @property
    def depth_k(self) -> int:
        """The ``k`` candidates are gathered for: ``k``, at least :data:`CANDIDATES_FOR`."""
        return max(self.k, CANDIDATES_FOR)

    @property
    def start(self) -> int:
        """The first number of vectors asked."""
        return FETCH_PER_K * self.depth_k if self.fetch_start is None else self.fetch_start

    @property
    def limit(self) -> int:
        """The most vectors asked."""
        return max(160 * self.depth_k, self.start) if self.fetch_limit is None else self.fetch_limit

    @property
    def lexical_depth(self) -> int:
        """Chunks asked of the lexical index (``2 * k``), re-scored with the rest.

        The best :data:`LEXICAL_BOOSTED` of them also add their lexical score.
        """
        return 2 * self.depth_k

    @property
    def rescore_depth(self) -> int:
        """Candidate chunks re-scored on the first search."""
        return 8 * self.depth_k if self.rescore_candidates is None else self.rescore_candidates


@dataclass(frozen=True, slots=True)
class Retrieved(Generic[T]):
    """One raw item found.

    Attributes:
        item: The docstore's item (a chunk, a framework document or node).
        doc_id: Its id.
        score: The fused score (with the routing boost, if any); higher is better.
        matched: The representation hits that found it, best first.
        rank: 1 for the best.
        metadata: Result metadata to merge into the item's: ``score``, ``matched`` (JSON),
            and ``routing`` / ``expanded_from`` / ``context_ids`` (JSON) / ``repeat_of``
            when those options apply.
        text: With ``context_budget``, the text to return for the item: its own, or
            with the parts of its section that complete it (``context_ids`` names
            them, the item's own among them, in section order); else ``None``.
    """

    item: T
    doc_id: str
    score: float
    matched: tuple[Hit, ...]
    rank: int
    metadata: Mapping[str, str | float] = field(default_factory=dict)
    text: str | None = None


@dataclass(frozen=True, slots=True)
class RetrievalResult(Generic[T]):
    """What :func:`retrieve` found.

    Attributes:
        items: At most ``k`` items, best first, each once.
        missing: Ids that vectors pointed at but the docstore did not hold (skipped).
        question_type: The question's type when routing was on, else ``None``.
        vectors_searched: How many vectors the last search asked for.
    """

    items: tuple[Retrieved[T], ...]
    missing: tuple[str, ...] = ()
    question_type: QuestionType | None = None
    vectors_searched: int = 0


def check_query(query: object) -> str:
    """Return ``query`` when it is a non-blank str.

    Raises:
        TypeError: When it is not a str.
        ValueError: When it is empty or only whitespace.
    """
    if not isinstance(query, str):
        msg = f"query must be a str, got {type(query).__name__}"
        raise TypeError(msg)
    if not query.strip():
        msg = "query is empty: ask a question"
        raise ValueError(msg)
    return query


def retrieve(
    query: str,
    *,
    search: Search,
    lookup: Callable[[Sequence[str]], Sequence[T | None]],
    metadata_of: Callable[[T], Mapping[str, object]],
    options: RetrievalOptions,
    rescore: Rescore | None = None,
    lexical: Lexical | None = None,
    text_of: Callable[[T], str] | None = None,
    context_length: Callable[[str], int] | None = None,
) -> RetrievalResult[T]:
    """Find ``options.k`` distinct raw items for ``query``.

    Args:
        query: The question (already checked with :func:`check_query` by the caller, or
            here).
        search: ``(n, kinds) ->`` the best ``n`` hits among representations of those
            kinds, and whether the store is exhausted; the caller embeds the query once
            and converts distances to similarities.
        lookup: Raw items by id, in order, ``None`` for an id the docstore lacks.
        metadata_of: An item's metadata (``parent_id`` and the routing keys are read).
        options: Ranking and cutting.
        rescore: Every representation of the given chunks, scored exactly (``None``
            when the store cannot; fusion then uses the searches' hits).
        lexical: The best chunks by their words (``None`` when the store has no
            lexical index). Asked once, ``lexical_depth`` deep, when raw texts are
            among the kinds and ``lexical_weight`` is above 0; the chunks it finds
            join the re-scoring, and each adds its weighted, normalised score.
        text_of: An item's text; needed with ``options.context_budget``.
        context_length: Measures a context against ``options.context_budget``
            (``None``: ``cl100k_base`` tokens, as the chunker's default budget).

    Returns:
        The items, the ids that were missing from the docstore, and the question type.

    Raises:
        ValueError: With ``options.context_budget`` and no ``text_of``.
    """
    check_query(query)
    context: ContextSource | None = None
    if options.context_budget is not None:
        if text_of is None:
            msg = "context_budget needs text_of: how to read an item's text"
            raise ValueError(msg)
        context = _context_source(lookup, metadata_of, text_of, context_length)
    question_type = classify_question(query) if options.route_questions else None
    wanted = ALL_KINDS if options.kinds is None else options.kinds
    words = _lexical_scores(query, lexical, wanted, options)
    start = options.start
    if options.fetch_start is None and words:
        start = min(start, LEXICAL_FETCH_PER_K * options.depth_k)
    n = start
    cache: dict[str, T | None] = {}
    while True:
        found = search(n, wanted)
        exhausted = found.exhausted
        hits = [hit for hit in found.hits if hit.kind in wanted]
        if rescore is not None and (hits or words):
            # Re-score the best candidates by their searched hits, and the chunks found
            # by their words; a deeper search re-scores proportionally more.
            how_many = options.rescore_depth * n // start
            best = [item.doc_id for item in _rank(hits, options)[:how_many]]
            hits = _rescored(hits, list(dict.fromkeys([*best, *words])), rescore, wanted)
        ranked = _with_words(_rank(hits, options), words, options.lexical_weight)
        # Look up only as deep as needed: routing and parents look a little further.
        grouping = options.expand_parents or context is not None
        depth = options.k * (4 if options.route_questions or grouping else 2)
        while True:
            _look_up(cache, [item.doc_id for item in ranked[:depth]], lookup)
            items, missing = _resolve(
                ranked[:depth],
                cache=cache,
                lookup=lookup,
                metadata_of=metadata_of,
                question_type=question_type,
                options=options,
                context=context,
                text_of=text_of,
            )
            if len(items) >= options.k or depth >= len(ranked):
                break
            depth *= 2
        if len(items) >= options.k or exhausted or n >= options.limit or not (hits or words):
            break
        n = min(n * 2, options.limit)
    if missing:
        _LOG.warning(
            "%d vector(s) point at chunks missing from the docstore (skipped): %s",
            len(missing),
            ", ".join(missing[:10]),
        )
    return RetrievalResult(
        items=tuple(items[: options.k]),
        missing=tuple(missing),
        question_type=question_type,
        vectors_searched=n,
    )


def _rescored(
    hits: Sequence[Hit], best: Sequence[str], rescore: Rescore, wanted: Collection[str]
) -> list[Hit]:
    """The best candidates' hits, scored exactly where the store knows their vectors.

    A candidate the re-scoring does not cover (vectors written outside the write
    path, so the ledger has no rows for it) keeps the hits its search found.
    """
    exact = [hit for hit in rescore(best) if hit.kind in wanted]
    covered = {hit.doc_id for hit in exact}
    chosen = set(best)
    kept = [hit for hit in hits if hit.doc_id in chosen and hit.doc_id not in covered]
    return exact + kept


def _lexical_scores(
    query: str, lexical: Lexical | None, wanted: Collection[str], options: RetrievalOptions
) -> dict[str, tuple[float, tuple[str, ...]]]:
    """Chunk id -> (BM25 score / the best one, the question's words it holds).

    Past the best :data:`LEXICAL_BOOSTED` chunks the share is 0: those join the re-scored
    candidates on their dense scores alone.
    """
    if lexical is None or options.lexical_weight <= 0 or RepresentationKind.RAW.value not in wanted:
        return {}
    found = sorted(
        (hit for hit in lexical(query, options.lexical_depth) if hit.score > 0), key=lambda hit: -hit.score
    )
    if not found:
        return {}
    best = found[0].score
    return {
        hit.chunk_id: (hit.score / best if rank < LEXICAL_BOOSTED else 0.0, hit.terms)
        for rank, hit in enumerate(found)
    }


def _with_words(
    ranked: Sequence[Fused], words: Mapping[str, tuple[float, tuple[str, ...]]], weight: float
) -> list[Fused]:
    """``ranked`` with each chunk's weighted lexical score added, ranked again.

    A chunk found only by its words (a store that cannot re-score) starts from the
    lowest fused score. Its lexical match is listed among the matched hits (kind
    ``"lexical"``, the words it shares with the question as text). A chunk whose share is
    0 (past the best :data:`LEXICAL_BOOSTED`) gets neither.
    """
    words = {doc_id: entry for doc_id, entry in words.items() if entry[0] > 0}
    if not words:
        return list(ranked)
    floor = min((item.score for item in ranked), default=0.0)
    base = {item.doc_id: item for item in ranked}
    order = list(base) + [doc_id for doc_id in words if doc_id not in base]
    scored: list[tuple[float, str, tuple[Hit, ...]]] = []
    for doc_id in order:
        item = base.get(doc_id)
        score, matched = (item.score, item.matched) if item is not None else (floor, ())
        if doc_id in words:
            share, terms = words[doc_id]
            score += weight * share
            matched = (*matched, Hit(doc_id, LEXICAL_KIND, " ".join(terms), share, f"{doc_id}:lexical"))
        scored.append((score, doc_id, matched))
    scored.sort(key=lambda entry: -entry[0])  # stable: ties keep the dense order
    return [
        Fused(doc_id=doc_id, score=score, matched=matched, rank=rank)
        for rank, (score, doc_id, matched) in enumerate(scored, start=1)
    ]


def _rank(hits: Sequence[Hit], options: RetrievalOptions) -> list[Fused]:
    distinct = len({hit.doc_id for hit in hits})
    if distinct == 0:
        return []
    return fuse(
        hits,
        k=distinct,
        method=options.fusion,
        weights=options.weights,
        kinds=options.kinds,
        rrf_k=options.rrf_k,
    )


def _look_up(
    cache: dict[str, T | None], ids: Sequence[str], lookup: Callable[[Sequence[str]], Sequence[T | None]]
) -> None:
    wanted = [doc_id for doc_id in dict.fromkeys(ids) if doc_id and doc_id not in cache]
    if wanted:
        cache.update(zip(wanted, lookup(wanted), strict=True))


def _resolve(
    ranked: Sequence[Fused],
    *,
    cache: dict[str, T | None],
    lookup: Callable[[Sequence[str]], Sequence[T | None]],
    metadata_of: Callable[[T], Mapping[str, object]],
    question_type: QuestionType | None,
    options: RetrievalOptions,
    context: ContextSource | None = None,
    text_of: Callable[[T], str] | None = None,
) -> tuple[list[Retrieved[T]], list[str]]:
    missing = [item.doc_id for item in ranked if cache.get(item.doc_id) is None]
    present = [item for item in ranked if cache.get(item.doc_id) is not None]
    extra: dict[str, str] = {}
    if question_type is not None:
        metadata_by_id = {item.doc_id: metadata_of(_known(cache, item.doc_id)) for item in present}
        routed = route(present, metadata_by_id, question_type, boost=options.routing_boost)
        present = list(routed.fused)
        extra = routed.metadata()
    if options.expand_parents:
        expanded = _expand(
            present, cache=cache, lookup=lookup, metadata_of=metadata_of, extra=extra, k=options.k
        )
        return expanded, missing
    repeats: dict[str, str] = {}
    if options.demote_repeats and text_of is not None:
        read = text_of

        def lines_of(fused: Fused) -> frozenset[str]:
            item = _known(cache, fused.doc_id)
            return shown_lines(read(item), metadata_of(item))

        demoted = demote_repeats(present, lines_of)
        repeats = {fused.doc_id: present[source].doc_id for fused, source in demoted if source is not None}
        present = [fused for fused, _ in demoted]
    if context is not None and options.context_budget is not None:
        items = [_known(cache, item.doc_id) for item in present]

        def cached(ids: Sequence[str]) -> list[T | None]:  # parents and siblings, looked up once
            _look_up(cache, ids, lookup)
            return [cache.get(i) for i in ids]

        source = ContextSource(cached, context.metadata_of, context.text_of, context.length)
        contexts = with_context(items, source, budget=options.context_budget, limit=options.k)
        kept = [(fused, found) for fused, found in zip(present, contexts, strict=True) if found is not None]
        return [
            Retrieved(
                item=_known(cache, fused.doc_id),
                doc_id=fused.doc_id,
                score=fused.score,
                matched=fused.matched,
                rank=rank,
                metadata={
                    **matched_metadata(fused),
                    **extra,
                    **_repeat_of(repeats, fused.doc_id),
                    CONTEXT_KEY: json.dumps(list(ids)),
                },
                text=text,
            )
            for rank, (fused, (text, ids)) in enumerate(kept[: options.k], start=1)
        ], missing
    results = [
        Retrieved(
            item=_known(cache, fused.doc_id),
            doc_id=fused.doc_id,
            score=fused.score,
            matched=fused.matched,
            rank=rank,
            metadata={**matched_metadata(fused), **extra, **_repeat_of(repeats, fused.doc_id)},
        )
        # Ranked again: chunks missing from the docstore leave no gaps.
        for rank, fused in enumerate(present[: options.k], start=1)
    ]
    return results, missing


def _repeat_of(repeats: Mapping[str, str], doc_id: str) -> dict[str, str]:
    return {REPEAT_KEY: repeats[doc_id]} if doc_id in repeats else {}


def _expand(
    present: Sequence[Fused],
    *,
    cache: dict[str, T | None],
    lookup: Callable[[Sequence[str]], Sequence[T | None]],
    metadata_of: Callable[[T], Mapping[str, object]],
    extra: Mapping[str, str],
    k: int,
) -> list[Retrieved[T]]:
    """Children of one parent become one result: the parent, at its best child's place."""
    parent_of = {
        item.doc_id: str(metadata_of(_known(cache, item.doc_id)).get("parent_id") or "") for item in present
    }
    _look_up(cache, [p for p in parent_of.values() if p], lookup)
    groups: dict[str, list[Fused]] = {}
    for item in present:
        parent = parent_of[item.doc_id]
        # A child whose parent is not stored stands for itself.
        key = parent if parent and cache.get(parent) is not None else item.doc_id
        groups.setdefault(key, []).append(item)
    results: list[Retrieved[T]] = []
    for rank, (key, members) in enumerate(list(groups.items())[:k], start=1):
        best = members[0]
        matched = tuple(sorted((hit for m in members for hit in m.matched), key=lambda hit: -hit.score))
        fused = Fused(doc_id=key, score=best.score, matched=matched, rank=rank)
        metadata: dict[str, str | float] = {**matched_metadata(fused), **extra}
        if key != best.doc_id:
            metadata["expanded_from"] = json.dumps([m.doc_id for m in members])
        results.append(
            Retrieved(
                item=_known(cache, key),
                doc_id=key,
                score=best.score,
                matched=matched,
                rank=rank,
                metadata=metadata,
            )
        )
    return results


def _context_source(
    lookup: Callable[[Sequence[str]], Sequence[T | None]],
    metadata_of: Callable[[T], Mapping[str, object]],
    text_of: Callable[[T], str],
    length: Callable[[str], int] | None,
) -> ContextSource:
    if length is None:
        from procedure_rag._chunking.lengths import tiktoken_length  # noqa: PLC0415 - only when asked

        length = tiktoken_length()
    return ContextSource(
        lookup=lookup,
        metadata_of=metadata_of,  # type: ignore[arg-type]
        text_of=text_of,  # type: ignore[arg-type]
        length=length,
    )


def _known(cache: Mapping[str, T | None], doc_id: str) -> T:
    item = cache[doc_id]
    if item is None:  # pragma: no cover - callers pass present ids only
        msg = f"chunk {doc_id!r} is not in the docstore"
        raise KeyError(msg)
    return item


def hits_from_vectors(
    query_vector: Sequence[float],
    *,
    ids: Sequence[str],
    texts: Sequence[str | None],
    metadatas: Sequence[Mapping[str, object] | None],
    embeddings: Sequence[Sequence[float]],
    id_key: str = "doc_id",
) -> list[Hit]:
    """Hits scored by cosine similarity to ``query_vector``, from stored vectors.

    This is the re-scoring pass for stores that hand back the vectors of given chunks
    (Chroma does, through a metadata filter on ``id_key``). Entries without ``id_key``
    are skipped.
    """
    import numpy as np  # noqa: PLC0415 - only where a store re-scores

    if not ids:
        return []
    matrix = np.asarray(embeddings, dtype=np.float32)
    query = np.asarray(query_vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    scores = (matrix @ query) / np.where(norms == 0, 1.0, norms)
    hits: list[Hit] = []
    for vector_id, text, metadata, score in zip(ids, texts, metadatas, scores.tolist(), strict=True):
        doc_id = (metadata or {}).get(id_key)
        if not doc_id:
            continue
        kind = (metadata or {}).get("representation", RepresentationKind.RAW.value)
        hits.append(Hit(str(doc_id), str(kind), text or "", float(score), vector_id))
    return hits

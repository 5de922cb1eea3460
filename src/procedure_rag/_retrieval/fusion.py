"""Fusion: many representation hits of one raw chunk become one ranked result.

A vector store holding several representations per raw chunk (its text, a summary,
questions, keywords…) returns hits on representations. This module groups them by
the raw chunk they point at (``doc_id``), scores each chunk once, and keeps the
best ``k`` chunks, so that ``k`` counts raw chunks, not vectors.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from procedure_rag._representations.types import RepresentationKind

__all__ = [
    "FUSION_METHODS",
    "SUM_WEIGHTS",
    "Fused",
    "FusionMethod",
    "Hit",
    "fuse",
    "matched_metadata",
]

FusionMethod = Literal["max", "rrf", "weighted", "sum"]

#: The methods :func:`fuse` knows.
FUSION_METHODS: tuple[FusionMethod, ...] = ("max", "rrf", "weighted", "sum")

#: Default per-kind weights of ``method="sum"``: the raw text's best score counts fully,
#: and the mean of the best question, summary and keywords scores adds 0.35 of itself
#: (table summaries, code docstrings and image captions exist for few chunks; counting
#: them measured worse). Deterministic
#: representations are generic per section, so with ``"max"`` one generic question wins
#: (answered@1 fell from .41 to .36 on the HoloLens Japanese questions with the bundled
#: e5 model); averaged as evidence beside the raw text they lift it instead (see
#: docs/RETRIEVAL.md for the measurements and the range of weights that gave the gain).
SUM_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"raw": 1.0, "question": 0.35, "summary": 0.35, "keywords": 0.35}
)

_KNOWN_KINDS = frozenset(kind.value for kind in RepresentationKind)
_RAW = RepresentationKind.RAW.value
_STEP = RepresentationKind.STEP.value
# Kinds whose hit is a hit on a part of the chunk's own text (small-to-big).
_PARTS = frozenset({_STEP, RepresentationKind.SENTENCE.value})


def _scored_as(kind: str) -> str:
    """The kind a hit scores as: a step's or a sentence's hit is its chunk's raw text (small-to-big)."""
    return _RAW if kind in _PARTS else kind


@dataclass(frozen=True, slots=True)
class Hit:
    """One representation found by a vector search.

    Attributes:
        doc_id: The raw chunk the representation points at.
        kind: The representation kind (a :class:`RepresentationKind` value).
        text: The representation's text.
        score: Similarity; higher is better (convert distances before).
        representation_id: The representation's stable id.
    """

    doc_id: str
    kind: str
    text: str
    score: float
    representation_id: str


@dataclass(frozen=True, slots=True)
class Fused:
    """One raw chunk with the hits that found it.

    Attributes:
        doc_id: The raw chunk.
        score: The fused score; higher is better.
        matched: The chunk's hits, best first.
        rank: Position in the fused list, 1 for the best.
    """

    doc_id: str
    score: float
    matched: tuple[Hit, ...]
    rank: int


def _check_k(k: int) -> None:
    if k < 1:
        msg = f"k must be >= 1, got {k}"
        raise ValueError(msg)


def _check_kind_names(names: Iterable[str], what: str) -> None:
    unknown = sorted(set(names) - _KNOWN_KINDS)
    if unknown:
        msg = (
            f"unknown kind names in {what}: {', '.join(unknown)}; "
            f"known kinds: {', '.join(sorted(_KNOWN_KINDS))}"
        )
        raise ValueError(msg)


def _check_options(
    *,
    k: int,
    method: str,
    weights: Mapping[str, float] | None,
    kinds: Collection[str] | None,
    rrf_k: int,
) -> None:
    _check_k(k)
    if method not in FUSION_METHODS:
        msg = f"method must be one of {', '.join(map(repr, FUSION_METHODS))}, got {method!r}"
        raise ValueError(msg)
    if weights is not None:
        if method not in ("weighted", "sum"):
            msg = f"weights are used only with method='weighted' or 'sum', got method={method!r}"
            raise ValueError(msg)
        _check_kind_names(weights, "weights")
        for part in sorted(_PARTS & set(weights)):
            msg = f"a {part!r} hit scores as its chunk's raw text: weigh 'raw' instead of {part!r}"
            raise ValueError(msg)
        for kind, weight in sorted(weights.items()):
            if not weight >= 0 or math.isinf(weight):
                msg = f"weight of kind {kind!r} must be a finite number >= 0, got {weight!r}"
                raise ValueError(msg)
    if kinds is not None:
        _check_kind_names(kinds, "kinds")
    if rrf_k < 0:
        msg = f"rrf_k must be >= 0, got {rrf_k}"
        raise ValueError(msg)


def _best_first(hits: Iterable[Hit]) -> list[Hit]:
    # Stable: among equal scores the store's own order stands.
    return sorted(hits, key=lambda hit: -hit.score)


def _rrf_scores(hits: Sequence[Hit], rrf_k: int) -> dict[str, float]:
    """Each kind is one ranked list; a chunk counts once per list, at its best rank."""
    scores: dict[str, float] = {}
    by_kind: dict[str, list[Hit]] = {}
    for hit in hits:
        by_kind.setdefault(_scored_as(hit.kind), []).append(hit)
    for kind_hits in by_kind.values():
        seen: set[str] = set()
        # Several questions of one chunk are one chunk to this list: the rank counts chunks.
        for hit in _best_first(kind_hits):
            if hit.doc_id in seen:
                continue
            seen.add(hit.doc_id)
            scores[hit.doc_id] = scores.get(hit.doc_id, 0.0) + 1.0 / (rrf_k + len(seen))
    return scores


def fuse(
    hits: Iterable[Hit],
    *,
    k: int,
    method: FusionMethod = "max",
    weights: Mapping[str, float] | None = None,
    kinds: Collection[str] | None = None,
    rrf_k: int = 60,
) -> list[Fused]:
    """Group ``hits`` by raw chunk and return the best ``k`` chunks, best first.

    Methods:
        ``"max"``: a chunk scores its best hit.
        ``"rrf"``: reciprocal-rank fusion; each kind is one ranked list, a chunk adds
        ``1 / (rrf_k + rank)`` for its best hit in each list (ranks from 1).
        ``"weighted"``: a chunk scores its best ``weights[kind] * score``; kinds not in
        ``weights`` weigh 1.0.
        ``"sum"``: a chunk scores ``weights["raw"]`` times its best raw hit plus the
        mean, over the other kinds among ``hits``, of ``weights[kind]`` times its best
        hit of that kind (``weights`` default to :data:`SUM_WEIGHTS`; only kinds with a
        weight count). A kind the chunk has no hit of counts at the lowest score of that
        kind among ``hits``, its upper bound when ``hits`` are a store's top results, so
        chunks are not rewarded for having more kinds. Every kind adds evidence, and no
        single generic representation decides alone. Give it every representation of
        the candidate chunks (a re-scoring pass) for exact scores.

    Every method scores a ``step`` or ``sentence`` hit as a hit on the chunk's raw text (a
    step's or a sentence's own vector finds the chunk that holds it: small-to-big): in one
    ranked list with the raw hits for ``"rrf"``, at the raw weight for ``"weighted"`` and
    ``"sum"``.

    Ties keep the order in which the chunks first appear in ``hits``. A representation
    seen twice (same ``representation_id``) counts once.

    Args:
        hits: Hits from one or more searches, any order.
        k: The most chunks to return.
        method: How a chunk's hits make its score.
        weights: Weight per kind name, for ``"weighted"`` and ``"sum"``.
        kinds: Keep only hits of these kinds (``None``: all).
        rrf_k: The ``"rrf"`` damping constant.

    Returns:
        At most ``k`` :class:`Fused`, each chunk once, ranked from 1.

    Raises:
        ValueError: When ``k < 1``, ``method`` is unknown, ``weights`` or ``kinds`` name
            unknown kinds, ``weights`` come with another method, a weight is negative or
            not finite, or ``rrf_k < 0``.
    """
    _check_options(k=k, method=method, weights=weights, kinds=kinds, rrf_k=rrf_k)
    kept: list[Hit] = []
    seen_ids: set[str] = set()
    for hit in hits:
        if (kinds is not None and hit.kind not in kinds) or hit.representation_id in seen_ids:
            continue
        seen_ids.add(hit.representation_id)
        kept.append(hit)

    by_doc: dict[str, list[Hit]] = {}
    for hit in kept:
        by_doc.setdefault(hit.doc_id, []).append(hit)

    scores: dict[str, float]
    if method == "rrf":
        scores = _rrf_scores(kept, rrf_k)
    elif method == "weighted":
        weight_of = dict(weights or {})
        scores = {
            doc: max(weight_of.get(_scored_as(hit.kind), 1.0) * hit.score for hit in doc_hits)
            for doc, doc_hits in by_doc.items()
        }
    elif method == "sum":
        weight_of = dict(SUM_WEIGHTS if weights is None else weights)
        floor: dict[str, float] = {}
        for hit in kept:
            kind = _scored_as(hit.kind)
            floor[kind] = min(floor.get(kind, hit.score), hit.score)
        scores = {doc: _kind_sum(doc_hits, weight_of, floor) for doc, doc_hits in by_doc.items()}
    else:
        scores = {doc: max(hit.score for hit in doc_hits) for doc, doc_hits in by_doc.items()}

    # by_doc keeps first appearance order; the stable sort keeps it among ties.
    ranked = sorted(by_doc, key=lambda doc: -scores[doc])[:k]
    return [
        Fused(doc_id=doc, score=scores[doc], matched=tuple(_best_first(by_doc[doc])), rank=rank)
        for rank, doc in enumerate(ranked, start=1)
    ]


def _kind_sum(hits: Sequence[Hit], weight_of: Mapping[str, float], floor: Mapping[str, float]) -> float:
    """Raw best plus the mean of the other weighted kinds' bests (missing ones at their floor)."""
    best: dict[str, float] = {}
    for hit in hits:
        kind = _scored_as(hit.kind)
        best[kind] = max(best.get(kind, hit.score), hit.score)
    total = weight_of.get(_RAW, 0.0) * best.get(_RAW, floor.get(_RAW, 0.0))
    others = [kind for kind in floor if kind != _RAW and weight_of.get(kind, 0.0) > 0]
    if others:
        total += sum(weight_of[kind] * best.get(kind, floor[kind]) for kind in others) / len(others)
    return total


def matched_metadata(fused: Fused) -> dict[str, str | float]:
    """Result metadata for one fused chunk.

    Returns:
        ``score`` (the fused score) and ``matched``: a JSON string of the chunk's
        hits as ``[{"kind", "text", "score"}, …]``, best first.
    """
    matched = [{"kind": hit.kind, "text": hit.text, "score": hit.score} for hit in fused.matched]
    return {
        "score": fused.score,
        "matched": json.dumps(matched, ensure_ascii=False, separators=(",", ":")),
    }

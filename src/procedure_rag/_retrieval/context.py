"""Procedure-aware context: a hit together with the parts of its section that complete it.

A procedure longer than the chunk budget is cut into parts. Every part repeats the
section path and the list's lead-in, and a step keeps its condition and its bound notes,
but what a step needs can still sit in another part of the same section: a note or a
condition written after the list ("If the option does not appear, …", 「〜が表示されない
場合は、…」), a note that fell into the next part, another step the question is about.
Parent expansion returns the whole section (up to four child budgets, all or nothing);
this pass returns each hit with only these parts of its section, within a token budget
the caller sets (per result):

1. the other hits of the same section (so one section is one result, at its best
   hit's rank, and a later hit that an earlier context holds drops out);
2. the parts that carry a caution or a condition: a step's (the chunk metadata's
   ``has_caution`` / ``has_condition``), or a line that opens with a note label
   (「注意」, ``Note:``, ※; a tip is no caution) or with a condition clause of the
   chunk's language (「〜場合は」, "If …", from the language's lexicon).

Each group is taken nearest part first; a part goes in only when the whole still fits
the budget, and the parts are shown in section order under the section path, once. The
siblings are the children of the hit's parent (its section, or a run of it), so the index
must hold parents (``emit_parents=True``), as for parent expansion; a hit without a
stored parent, or over the budget by itself, is returned as it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from procedure_rag._language.labels import leading_label
from procedure_rag._language.lexicons import LEXICONS, Lexicon
from procedure_rag._language.step_fields import CAUTION_LABELS

__all__ = ["CONTEXT_KEY", "ContextSource", "with_context"]

T = TypeVar("T")

#: The result metadata key listing the chunk ids a context holds, in section order.
CONTEXT_KEY = "context_ids"

# Marks a line opens with before its words: list markers, quote marks, bold.
_LINE_MARKS = " \t\u3000-*+>#|"


@dataclass(frozen=True, slots=True)
class ContextSource:
    """What the pass reads of the docstore.

    Attributes:
        lookup: Items by id, in order, ``None`` for an id the docstore lacks.
        metadata_of: An item's metadata (``parent_id``, ``child_ids``, ``lead_in``,
            ``language``, ``section``, ``has_caution``, ``has_condition``).
        text_of: An item's text.
        length: Measures a text against the budget.
    """

    lookup: Callable[[Sequence[str]], Sequence[object | None]]
    metadata_of: Callable[[object], Mapping[str, object]]
    text_of: Callable[[object], str]
    length: Callable[[str], int]


def with_context(
    items: Sequence[T], source: ContextSource, *, budget: int, limit: int | None = None
) -> list[tuple[str, tuple[str, ...]] | None]:
    """The context text of each item and the chunk ids it holds, best item first.

    An item whose chunk an earlier item's context already holds gives ``None``: it
    adds nothing. Hits of one section are one context: the best one's, holding the
    others first (they were found), then the parts carrying a caution or a condition.

    Args:
        items: The hits, best first (child chunks as the docstore keeps them).
        source: How to read the docstore.
        budget: Most units of ``source.length`` one context may measure.
        limit: Most contexts made; the items after them give ``None`` (``None``: all).

    Returns:
        Per item, ``(text, chunk ids in section order)`` (the item's own text and id
        when nothing is added), or ``None``.
    """
    parents = _parents(items, source)
    wanted_ids = [cid for parent in parents.values() for cid in _child_ids(parent, source)]
    siblings = dict(zip(wanted_ids, source.lookup(wanted_ids), strict=True)) if wanted_ids else {}
    found = {str(source.metadata_of(item).get("chunk_id") or "") for item in items}
    used: set[str] = set()
    out: list[tuple[str, tuple[str, ...]] | None] = []
    for item in items:
        metadata = source.metadata_of(item)
        own_id = str(metadata.get("chunk_id") or "")
        if (own_id and own_id in used) or (limit is not None and len(out) - out.count(None) >= limit):
            out.append(None)
            continue
        parent = parents.get(str(metadata.get("parent_id") or ""))
        if parent is None or not own_id:
            out.append((source.text_of(item), (own_id,) if own_id else ()))
            used.add(own_id)
            continue
        members = [
            (cid, item if cid == own_id else siblings.get(cid))
            for cid in _child_ids(parent, source)
            if cid == own_id or (siblings.get(cid) is not None and cid not in used)
        ]
        text, ids = _assemble(item, own_id, members, source, budget=budget, found=found)
        used.update(ids)
        out.append((text, ids))
    return out


def _parents(items: Sequence[object], source: ContextSource) -> dict[str, object]:
    ids = [
        pid for pid in dict.fromkeys(str(source.metadata_of(i).get("parent_id") or "") for i in items) if pid
    ]
    found = source.lookup(ids) if ids else []
    return {pid: parent for pid, parent in zip(ids, found, strict=True) if parent is not None}


def _child_ids(parent: object, source: ContextSource) -> list[str]:
    raw = source.metadata_of(parent).get("child_ids") or "[]"
    ids = json.loads(raw) if isinstance(raw, str) else raw
    return [str(cid) for cid in ids] if isinstance(ids, list) else []


def _assemble(
    item: object,
    own_id: str,
    members: Sequence[tuple[str, object | None]],
    source: ContextSource,
    *,
    budget: int,
    found: Collection[str],
) -> tuple[str, tuple[str, ...]]:
    text = source.text_of(item)
    position = next((i for i, (cid, _) in enumerate(members) if cid == own_id), None)
    if position is None or len(members) < 2 or source.length(text) > budget:
        return text, (own_id,)
    header = _header(text, source.metadata_of(item))
    ranked: list[tuple[int, int, int]] = []
    for i, (cid, sibling) in enumerate(members):
        if i == position or sibling is None:
            continue
        if cid in found:
            ranked.append((0, abs(i - position), i))
        elif _carries(sibling, source):
            ranked.append((1, abs(i - position), i))
    if not ranked:
        return text, (own_id,)
    bodies = {position: _body(text, header)}
    size = source.length(text)
    newline = source.length("\n")
    for _, _, i in sorted(ranked):
        body = _body(source.text_of(members[i][1]), header)
        cost = source.length(body) + newline
        if size + cost <= budget:
            bodies[i] = body
            size += cost
    if len(bodies) == 1:
        return text, (own_id,)
    chosen = sorted(bodies)
    parts = [bodies[i] for i in chosen]
    assembled = "\n".join([header, *parts] if header else parts)
    return assembled, tuple(members[i][0] for i in chosen)


def _header(text: str, metadata: Mapping[str, object]) -> str:
    """The section-path line a chunk's text opens with (``""`` without a section)."""
    if not metadata.get("section"):
        return ""
    first = text.partition("\n")[0]
    lexicon = _lexicon(metadata)
    # A part that continues its list says so after the path: the context shows the path alone.
    suffix = f" {lexicon.continued_label}"
    return first.removesuffix(suffix)


def _body(text: str, header: str) -> str:
    first, _, rest = text.partition("\n")
    if header and first.startswith(header):
        return rest
    return text


def _lexicon(metadata: Mapping[str, object]) -> Lexicon:
    return LEXICONS.get(str(metadata.get("language") or "en"), LEXICONS["en"])


def _carries(chunk: object, source: ContextSource) -> bool:
    """Whether a part holds a caution or a condition (its steps', or a line opening with one)."""
    metadata = source.metadata_of(chunk)
    if metadata.get("has_caution") or metadata.get("has_condition"):
        return True
    lexicon = _lexicon(metadata)
    lines = source.text_of(chunk).splitlines()
    body = lines[1:] if metadata.get("section") else lines
    for line in body:
        words = line.lstrip(_LINE_MARKS)
        if words and (leading_label(words)[0] in CAUTION_LABELS or lexicon.condition.match(words)):
            return True
    return False

"""The judging half of ``benchmarks/step_fields.py``: the gold set, alignment, field scores.

Nothing here chunks. The runner hands over each document's predicted steps in reading
order (their text and fields); these functions align them with the gold steps and say
how good the fields are. The rules are the gold set's README's (``step-fields/README.md``):

- **Normalise** both strings: NFKC; HTML entities unescaped; inline Markdown / reST
  markup rendered (links and images to their text, roles to their text, ``**``, ``*``,
  backticks, HTML tags and backslash escapes removed); whitespace removed (ja) or
  collapsed (en); surrounding punctuation and brackets stripped; English case-folded.
- **Score** a field: both empty 1; one empty 0; equal 1; otherwise character F1 (ja) or
  word F1 over ``\\w+`` tokens (en). ``number_norm`` and ``depth`` are exact matches.
- **Per field and language**: ``exact`` (share scoring 1), ``mean`` (over every gold
  step), ``mean|gold`` (over steps whose gold field is set), ``found`` (gold set → ours
  set), ``spurious`` (gold empty → ours set).
- **Alignment**: each gold step is matched to at most one predicted step of its document
  whose normalised text equals, contains or is contained in the gold line, else has a
  ``difflib`` ratio of at least 0.6 with it; the best class wins (equal, then contained
  either way, then the higher ratio), then the first in reading order after the
  previous match (a line repeated in a document is told apart by order). An unmatched
  gold step scores as all-empty.
- **Where missed text went**: a set gold field whose own score is under 0.5 is a miss;
  it went to the other predicted field (action, condition, result, caution) that holds
  the largest share of its characters / words (at least half); else ours left the field
  ``empty`` or holds ``other text`` in it (``no step`` when the step was not matched).
  The target is a label inside the action by definition, so a missed target is only
  ever ``empty`` or ``other text``.
"""

from __future__ import annotations

import difflib
import html
import json
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "FIELDS",
    "SCORED",
    "Aligned",
    "GoldStep",
    "Predicted",
    "align",
    "confusion",
    "f1",
    "load_gold",
    "normalise",
    "recall_share",
    "report",
    "score_field",
]

#: The text fields, in the order the gold set lists them.
FIELDS = ("action", "target", "condition", "result", "caution")
#: Everything scored: the text fields, then the two exact ones.
SCORED = (*FIELDS, "number_norm", "depth")
#: A field scoring under this is a miss, for the confusion.
MISS_BELOW = 0.5
#: Least ``difflib`` ratio for a predicted step to stand for a gold one.
MIN_RATIO = 0.6

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)|\[([^\]]+)\]\[[^\]]*\]")
_ROLE = re.compile(r":[\w.-]+:`([^`]*)`")
_REST_LINK = re.compile(r"`([^`<]+?)\s*<[^>]+>`_{1,2}")
_TAG = re.compile(r"<[^>\n]+>")
_ESCAPE = re.compile(r"\\(.)")
_MARKS = re.compile(r"\*\*|\*|`")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


def _edge(ch: str) -> bool:
    """Punctuation or a bracket, stripped from a value's ends."""
    return unicodedata.category(ch)[0] == "P" or ch in "<>|~^=+"


def normalise(text: str, lang: str) -> str:
    """``text`` as the scoring rule compares it (see the module docstring)."""
    text = html.unescape(unicodedata.normalize("NFKC", text))
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    text = _REST_LINK.sub(r"\1", text)
    text = _ROLE.sub(r"\1", text)
    text = _TAG.sub("", text)
    text = _ESCAPE.sub(r"\1", text)
    text = _MARKS.sub("", text)
    text = _SPACE.sub("", text) if lang == "ja" else _SPACE.sub(" ", text).strip()
    start, end = 0, len(text)
    while start < end and _edge(text[start]):
        start += 1
    while end > start and _edge(text[end - 1]):
        end -= 1
    text = text[start:end]
    return text if lang == "ja" else text.casefold()


def _units(normalised: str, lang: str) -> Counter[str]:
    """What F1 counts: characters (ja) or ``\\w+`` words (en)."""
    return Counter(normalised) if lang == "ja" else Counter(_WORD.findall(normalised))


def f1(predicted: str, gold: str, lang: str) -> float:
    """Character (ja) or word (en) F1 of two normalised strings."""
    ours, theirs = _units(predicted, lang), _units(gold, lang)
    common = sum((ours & theirs).values())
    if common == 0:
        return 0.0
    precision, recall = common / sum(ours.values()), common / sum(theirs.values())
    return 2 * precision * recall / (precision + recall)


def recall_share(predicted: str, gold: str, lang: str) -> float:
    """Share of the gold value's characters / words that the prediction holds (normalised)."""
    theirs = _units(gold, lang)
    total = sum(theirs.values())
    return sum((_units(predicted, lang) & theirs).values()) / total if total else 0.0


def score_field(predicted: str, gold: str, lang: str) -> float:
    """The scoring rule for one text field, on raw strings."""
    ours, theirs = normalise(predicted, lang), normalise(gold, lang)
    if not ours and not theirs:
        return 1.0
    if not ours or not theirs:
        return 0.0
    return 1.0 if ours == theirs else f1(ours, theirs, lang)


@dataclass(frozen=True, slots=True)
class GoldStep:
    """One annotated step of the gold set."""

    sid: str
    lang: str
    doc: str
    page: int | None
    line: str
    start: int
    fields: Mapping[str, str]
    number_norm: str
    depth: int


@dataclass(frozen=True, slots=True)
class Predicted:
    """One step as the system gives it: its text and its fields."""

    text: str
    fields: Mapping[str, str]
    number_norm: str = ""
    depth: int = 0


@dataclass(frozen=True, slots=True)
class Aligned:
    """A gold step and the predicted step it was matched with (``None``: none was)."""

    gold: GoldStep
    predicted: Predicted | None
    scores: Mapping[str, float] = field(default_factory=dict)


def load_gold(path: Path) -> list[GoldStep]:
    """Read the gold JSONL; raises ``ValueError`` naming the line of a malformed record."""
    steps = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            steps.append(
                GoldStep(
                    sid=r["sid"],
                    lang=r["lang"],
                    doc=r["doc"],
                    page=r.get("page"),
                    line=r["line"],
                    start=int(r.get("start", 0)),
                    fields={name: r.get(name, "") or "" for name in FIELDS},
                    number_norm=r.get("number_norm", "") or "",
                    depth=int(r.get("depth", 0)),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            msg = f"{path}:{n}: not a gold step record ({exc!r})"
            raise ValueError(msg) from exc
    return steps


def _match_class(ours: str, gold: str) -> float:
    """How well a predicted step's normalised text stands for a gold line: 3, 2, the ratio or 0."""
    if not ours or not gold:
        return 0.0
    if ours == gold:
        return 3.0
    if ours in gold or gold in ours:
        return 2.0  # containment: repeated lines are told apart by reading order
    ratio = difflib.SequenceMatcher(None, ours, gold, autojunk=False).ratio()
    return ratio if ratio >= MIN_RATIO else 0.0


def align(gold: Sequence[GoldStep], predicted: Sequence[Predicted]) -> list[Aligned]:
    """Match the gold steps of one document with its predicted steps (see the module docstring).

    ``gold`` is taken in source order (``start``), ``predicted`` in reading order.
    """
    if not gold:
        return []
    lang = gold[0].lang
    texts = [normalise(p.text, lang) for p in predicted]
    used: set[int] = set()
    last = -1
    out = []
    for g in sorted(gold, key=lambda s: s.start):
        line = normalise(g.line, lang)
        best: tuple[float, bool, int] | None = None
        for i, text in enumerate(texts):
            if i in used:
                continue
            quality = _match_class(text, line)
            if quality <= 0:
                continue
            # Equal quality: the first after the previous match, then the first at all.
            key = (quality, i > last, -i)
            if best is None or key > best:
                best = key
        if best is None:
            out.append(Aligned(g, None, _scores(g, None)))
            continue
        index = -best[2]
        used.add(index)
        last = index
        out.append(Aligned(g, predicted[index], _scores(g, predicted[index])))
    return out


def _scores(gold: GoldStep, ours: Predicted | None) -> dict[str, float]:
    empty = Predicted("", {})
    p = ours or empty
    scores = {name: score_field(p.fields.get(name, ""), gold.fields[name], gold.lang) for name in FIELDS}
    number = unicodedata.normalize("NFKC", p.number_norm) == unicodedata.normalize("NFKC", gold.number_norm)
    scores["number_norm"] = float(ours is not None and number)
    scores["depth"] = float(ours is not None and p.depth == gold.depth)
    return scores


def report(aligned: Iterable[Aligned]) -> dict[str, dict[str, dict[str, float | int]]]:
    """Per language (and ``all``), per scored field: n, exact, mean, mean|gold, found, spurious."""
    by_lang: dict[str, list[Aligned]] = {}
    for a in aligned:
        by_lang.setdefault(a.gold.lang, []).append(a)
        by_lang.setdefault("all", []).append(a)
    out: dict[str, dict[str, dict[str, float | int]]] = {}
    for lang, rows in sorted(by_lang.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        table: dict[str, dict[str, float | int]] = {}
        for name in SCORED:
            scores = [a.scores[name] for a in rows]
            cell: dict[str, float | int] = {
                "n": len(rows),
                "exact": _mean(s == 1.0 for s in scores),
                "mean": _mean(scores),
            }
            if name in FIELDS:
                set_gold = [a for a in rows if normalise(a.gold.fields[name], a.gold.lang)]
                empty_gold = [a for a in rows if a not in set_gold]
                cell["gold_set"] = len(set_gold)
                cell["mean_gold"] = _mean(a.scores[name] for a in set_gold)
                cell["found"] = _mean(_ours(a, name) for a in set_gold)
                cell["spurious"] = _mean(_ours(a, name) for a in empty_gold)
            table[name] = cell
        table["matched"] = {"n": len(rows), "mean": _mean(a.predicted is not None for a in rows)}
        out[lang] = table
    return out


def _ours(a: Aligned, name: str) -> bool:
    return a.predicted is not None and bool(normalise(a.predicted.fields.get(name, ""), a.gold.lang))


def _mean(values: Iterable[float | bool]) -> float:
    listed = [float(v) for v in values]
    return round(statistics.fmean(listed), 4) if listed else float("nan")


#: The confusion's columns besides the fields.
EMPTY, OTHER_TEXT, NO_STEP = "empty", "other text", "no step"
#: Where the text of a missed field may have gone (the target lies inside the action anyway).
DESTINATIONS = ("action", "condition", "result", "caution")


def where_it_went(a: Aligned, name: str) -> str | None:
    """For a missed gold field, the predicted field holding most of it; ``None`` when not missed."""
    gold = a.gold.fields[name]
    if not normalise(gold, a.gold.lang) or a.scores[name] >= MISS_BELOW:
        return None
    if a.predicted is None:
        return NO_STEP
    lang = a.gold.lang
    theirs = normalise(gold, lang)
    if name != "target":
        shares = {
            other: recall_share(normalise(a.predicted.fields.get(other, ""), lang), theirs, lang)
            for other in DESTINATIONS
            if other != name
        }
        best = max(shares, key=lambda other: shares[other])
        if shares[best] >= 0.5:
            return best
    return OTHER_TEXT if normalise(a.predicted.fields.get(name, ""), lang) else EMPTY


def confusion(aligned: Iterable[Aligned]) -> dict[str, dict[str, dict[str, int]]]:
    """Per language, per gold field: how many misses went to each predicted field, nowhere, no step."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for a in aligned:
        for name in FIELDS:
            went = where_it_went(a, name)
            if went is None:
                continue
            row = out.setdefault(a.gold.lang, {}).setdefault(name, {})
            row[went] = row.get(went, 0) + 1
    return out

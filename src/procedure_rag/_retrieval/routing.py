"""Routing: what a question asks about, and which chunks carry that field.

:func:`classify_question` reads cue patterns (data, Japanese and English side by
side) and names the kind of answer a question wants. :func:`route` then moves up
the fused chunks whose metadata says they carry that field (a condition, a
caution, a result, steps), and says which rule it applied.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from procedure_rag._language.lexicons import detect_language
from procedure_rag._retrieval.fusion import Fused

__all__ = [
    "QUESTION_LEXICONS",
    "ROUTING_RULES",
    "Cue",
    "QuestionLexicon",
    "QuestionType",
    "Routed",
    "RoutingRule",
    "classify_question",
    "route",
]


class QuestionType(StrEnum):
    """The kind of answer a question asks for."""

    OPERATION = "operation"
    CONDITION = "condition"
    CAUTION = "caution"
    SEQUENCE = "sequence"
    RESULT = "result"
    GENERAL = "general"


_Q = QuestionType


@dataclass(frozen=True, slots=True)
class Cue:
    """One pattern that votes for a question type.

    Attributes:
        question_type: The type it votes for.
        pattern: Searched anywhere in the question.
        weight: The vote. The phrase that asks (「どうなりますか」, "what happens")
            weighs more than the setting around it (「〜とき」, "when").
    """

    question_type: QuestionType
    pattern: re.Pattern[str]
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class QuestionLexicon:
    """Question cues of one language.

    Attributes:
        language: ISO 639-1 code.
        cues: Every cue that matches adds its weight to its type.
        tie_order: Among types with the same total, the first listed wins (the more
            specific asks first).
    """

    language: str
    cues: tuple[Cue, ...]
    tie_order: tuple[QuestionType, ...] = (_Q.RESULT, _Q.SEQUENCE, _Q.CAUTION, _Q.CONDITION, _Q.OPERATION)


_ASK = 2.0
_SETTING = 1.0

JAPANESE_QUESTIONS = QuestionLexicon(
    language="ja",
    cues=(
        # What happens after: the outcome, and where it shows.
        Cue(
            _Q.RESULT,
            re.compile(
                r"どうな(?:り|る|っ)|どう変わ|何が(?:変わ|起こ|起き)|どう(?:表示|見え)|どのように表示|"
                r"(?:どこで|どう(?:やって)?)(?:確認|分か|わか)|結果"
            ),
            _ASK,
        ),
        # What comes next or first.
        Cue(
            _Q.SEQUENCE,
            re.compile(
                r"次[はにの]|(?:その|この)(?:あと|後)|(?:た|て)(?:あと|後)|ほかに|他に|最初に|まず|順番|順序|"
                r"タイミング|残り|までの(?:操作|手順)"
            ),
            _ASK,
        ),
        Cue(_Q.SEQUENCE, re.compile(r"前に|(?:た|て)から"), _SETTING),
        # Is it safe, allowed, any downside.
        Cue(
            _Q.CAUTION,
            re.compile(
                r"注意|気を?つけ|大丈夫|問題(?:ない|ありません|はない)|デメリット|リスク|危険|安全|平気|"
                r"構いません|べき(?:です)?か|念のため"
            ),
            _ASK,
        ),
        Cue(
            _Q.CAUTION,
            re.compile(r"(?:でも|も)(?:でき|使え)ますか|(?:でき|使え|て(?:も)?いい)ますか"),
            _SETTING,
        ),
        # Under which circumstances: a clause, or a situation that does not work.
        Cue(_Q.CONDITION, re.compile(r"場合|とき|時[、に]|なら[、ば]|たら[、]|れば[、]|ても[、]"), _SETTING),
        Cue(
            _Q.CONDITION,
            re.compile(
                r"ません[。、が]|ないの(?:です|で)|見当たら|見つから|出ない|できない|使えない|"
                r"エラー|失敗|なぜ|どうして"
            ),
            _SETTING,
        ),
        # How and where to do it.
        Cue(
            _Q.OPERATION,
            re.compile(
                r"どこ|どう(?:やって|操作|設定)|方法|やり方|するには|"
                r"どの(?:ボタン|メニュー|画面|設定|項目|タブ|フォルダー?)|何(?:で|を(?:選|押|入力|使))"
            ),
            1.5,
        ),
        # Any other "what / which / how" question is taken as asking what to do.
        Cue(_Q.OPERATION, re.compile(r"何[をと]|どれ|どの|どちら|どう|どんな"), 0.5),
    ),
)

ENGLISH_QUESTIONS = QuestionLexicon(
    language="en",
    cues=(
        Cue(
            _Q.RESULT,
            re.compile(
                r"\bwhat (?:will )?happens?\b|\bwhat changes\b|"
                r"\bwhat (?:will|should|does) (?:it|I|the (?:\w+ ){0,3}?\w+) "
                r"(?:say|show|see|display|look like)\b|\bhow (?:does|will) .{1,60}(?:show up|appear|look)\b|"
                r"\bwhere (?:can|do|will) I see\b|\bresult\b",
                re.IGNORECASE,
            ),
            _ASK,
        ),
        Cue(
            _Q.SEQUENCE,
            re.compile(
                r"\bnext\b|\bafter (?:that|this)\b|\bthen what\b|\bwhat now\b|\bfirst\b|\banything else\b|"
                r"\bwhat else\b|\bstill need\b|\bto finish\b|\bin what order\b|\bwhich order\b",
                re.IGNORECASE,
            ),
            _ASK,
        ),
        Cue(_Q.SEQUENCE, re.compile(r"\bbefore\b|\bafter\b", re.IGNORECASE), _SETTING),
        Cue(
            _Q.CAUTION,
            re.compile(
                r"\bsafe\b|\bcareful\b|\bwarning\b|\bwatch out\b|\brisks?\b|\bdanger|\bharm|\bdamage|"
                r"\bok(?:ay)? to\b|\bdownsides?\b|\bcaveats?\b|\blimitations?\b|\bcan I just\b|"
                r"\bis it (?:ok|okay|fine|safe)\b|\bavoid\b|\bsupposed to\b",
                re.IGNORECASE,
            ),
            _ASK,
        ),
        Cue(_Q.CAUTION, re.compile(r"\b(?:can|may) I\b|\bis it possible\b", re.IGNORECASE), _SETTING),
        Cue(
            _Q.CONDITION,
            re.compile(r"\bif\b|\bwhen\b|\bunless\b|\bin case\b|\bwithout\b", re.IGNORECASE),
            _SETTING,
        ),
        Cue(
            _Q.CONDITION,
            re.compile(
                r"\b(?:can't|cannot|doesn't|don't|won't|isn't|hasn't|haven't|not|no)\b|\berrors?\b|\bfail|"
                r"\bwhy\b",
                re.IGNORECASE,
            ),
            _SETTING,
        ),
        Cue(
            _Q.OPERATION,
            re.compile(
                r"\bhow (?:do|can|should|would) (?:I|we|you)\b|\bhow to\b|\bwhere\b|"
                r"\bwhich (?:setting|button|menu|option|screen|tab|folder|cable|category)\b|"
                r"\bwhat (?:do|should) (?:I|we) (?:select|pick|choose|click|tap|use|enter|press)\b|"
                r"\bsteps? to\b|\bway to\b",
                re.IGNORECASE,
            ),
            1.5,
        ),
        Cue(_Q.OPERATION, re.compile(r"\bwhat\b|\bwhich\b|\bhow\b", re.IGNORECASE), 0.5),
    ),
)

#: The built-in question lexicons by language code.
QUESTION_LEXICONS: Mapping[str, QuestionLexicon] = {"ja": JAPANESE_QUESTIONS, "en": ENGLISH_QUESTIONS}


def classify_question(text: str, lexicon: QuestionLexicon | None = None) -> QuestionType:
    """Name the kind of answer ``text`` asks for.

    Every cue of the lexicon that matches adds its weight to its type; the heaviest
    type wins, ties going to the first in ``lexicon.tie_order``.

    Args:
        text: The question.
        lexicon: The cues; by default the built-in one of the question's language
            (:func:`~procedure_rag.detect_language`).

    Returns:
        The question type, :attr:`QuestionType.GENERAL` when no cue matches.
    """
    lex = lexicon or QUESTION_LEXICONS[detect_language(text)]
    totals: dict[QuestionType, float] = {}
    for cue in lex.cues:
        if cue.pattern.search(text):
            totals[cue.question_type] = totals.get(cue.question_type, 0.0) + cue.weight
    if not totals:
        return QuestionType.GENERAL
    order = {qtype: i for i, qtype in enumerate(lex.tie_order)}
    return min(totals, key=lambda qtype: (-totals[qtype], order.get(qtype, len(order))))


@dataclass(frozen=True, slots=True)
class RoutingRule:
    """Chunks whose ``metadata[key]`` is at least ``minimum`` carry the field asked for.

    Booleans count as 0 and 1, so ``minimum=1`` on ``has_caution`` means "is true".
    """

    question_type: QuestionType
    key: str
    minimum: int = 1

    def describe(self) -> str:
        """The rule as text, e.g. ``"step_count >= 2"``."""
        return f"{self.key} >= {self.minimum}"


#: Which metadata field answers which question type (the keys :func:`chunk_metadata` writes).
ROUTING_RULES: Mapping[QuestionType, RoutingRule] = {
    _Q.CONDITION: RoutingRule(_Q.CONDITION, "has_condition"),
    _Q.CAUTION: RoutingRule(_Q.CAUTION, "has_caution"),
    _Q.RESULT: RoutingRule(_Q.RESULT, "has_result"),
    # "What next" needs a chunk with a step after the one the user did.
    _Q.SEQUENCE: RoutingRule(_Q.SEQUENCE, "step_count", 2),
    _Q.OPERATION: RoutingRule(_Q.OPERATION, "step_count", 1),
}


@dataclass(frozen=True, slots=True)
class Routed:
    """The re-ranked chunks and what was done to them.

    Attributes:
        fused: The chunks, best first, ranked again from 1.
        question_type: The type routed for.
        rule: The rule applied, ``None`` when the type has none.
        boosted: Ids of the chunks that were moved up, in their new order.
    """

    fused: tuple[Fused, ...]
    question_type: QuestionType
    rule: RoutingRule | None
    boosted: tuple[str, ...]

    def metadata(self) -> dict[str, str]:
        """Result metadata: ``routing``, a JSON string ``{type, rule, boosted}``."""
        routing = {
            "type": self.question_type.value,
            "rule": None if self.rule is None else self.rule.describe(),
            "boosted": list(self.boosted),
        }
        return {"routing": json.dumps(routing, ensure_ascii=False, separators=(",", ":"))}


def _number(value: object) -> float:
    """A metadata value as a number; stores may hand booleans back as strings."""
    if isinstance(value, bool | int | float):
        return float(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in {"true", "false"}:
            return float(lowered == "true")
        try:
            return float(lowered)
        except ValueError:
            return 0.0
    return 0.0


def route(
    fused: Sequence[Fused],
    chunk_metadata_by_id: Mapping[str, Mapping[str, object]],
    question_type: QuestionType,
    *,
    boost: float = 0.05,
    rules: Mapping[QuestionType, RoutingRule] = ROUTING_RULES,
) -> Routed:
    """Move up the chunks that carry the field ``question_type`` asks about.

    A chunk carries it when its metadata satisfies ``rules[question_type]``; its score
    grows by ``boost`` and the list is sorted again (ties keep the old order). Chunks
    without metadata are left as they are.

    Args:
        fused: Fused chunks, best first.
        chunk_metadata_by_id: Chunk metadata (as :func:`chunk_metadata` writes it) by id.
        question_type: What the question asks about.
        boost: Added to the score of each chunk that carries the field.
        rules: The rule per question type.

    Returns:
        The re-ranked chunks with the rule applied and the ids boosted.

    Raises:
        ValueError: When ``boost`` is negative or not finite.
    """
    if not boost >= 0 or math.isinf(boost):
        msg = f"boost must be a finite number >= 0, got {boost!r}"
        raise ValueError(msg)
    rule = rules.get(question_type)
    carriers: set[str] = set()
    if rule is not None:
        for item in fused:
            metadata = chunk_metadata_by_id.get(item.doc_id, {})
            if _number(metadata.get(rule.key)) >= rule.minimum:
                carriers.add(item.doc_id)

    def score(item: Fused) -> float:
        return item.score + boost if item.doc_id in carriers else item.score

    ordered = sorted(fused, key=lambda item: -score(item))
    result = tuple(
        Fused(doc_id=item.doc_id, score=score(item), matched=item.matched, rank=rank)
        for rank, item in enumerate(ordered, start=1)
    )
    boosted = tuple(item.doc_id for item in result if item.doc_id in carriers)
    return Routed(fused=result, question_type=question_type, rule=rule, boosted=boosted)

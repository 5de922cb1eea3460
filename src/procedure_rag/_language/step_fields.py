"""Procedure steps: a list item's text parsed into action, target, condition, result, caution."""

from __future__ import annotations

import re
from bisect import bisect_right

from procedure_rag._language.lexicons import Lexicon, split_sentences, ui_nouns
from procedure_rag._types import LayoutElement, ProcedureStep

__all__ = ["lead_in_condition", "parse_step", "ui_targets"]

_MARKUP = re.compile(r"\*\*|__|`|\[(?=[^\]]*\]\()|\]\([^)]*\)|!\[|<[^>\n]{0,200}>")
_SPACE = re.compile(r"\s+")
_ASIDE = re.compile(r"\([^()\n]{0,300}\)|（[^（）\n]{0,300}）")


def _plain(text: str) -> str:
    """Drop inline Markdown markup (emphasis marks, link targets, tags) from a field value."""
    return _SPACE.sub(" ", _MARKUP.sub("", text)).strip()


def ui_targets(text: str, lexicon: Lexicon) -> list[str]:
    """Return the UI elements ``text`` names, the one the step operates first.

    Quoted or bracketed labels (「保存」, [Save], **Save**, :kbd:`Ctrl`) come before noun
    phrases ending in a UI word (ボタン, button, tab…). Among labels, the object of an
    operating word ("select **Settings**", 「[設定] を選択」) outside parentheses ranks
    first; a label only mentioned in an aside "(for Windows 10 press the **Windows**
    key…)" ranks last. Ties keep reading order.
    """
    return _ui_targets(text, None, lexicon)


def _ui_targets(text: str, plain: str | None, lexicon: Lexicon) -> list[str]:
    """:func:`ui_targets`, given ``_plain(text)`` when the caller has it already."""
    # Asides do not overlap and come in order: the last one starting at or before a
    # position is the only one that can hold it.
    aside_starts: list[int] = []
    aside_ends: list[int] = []
    for m in _ASIDE.finditer(text):
        aside_starts.append(m.start())
        aside_ends.append(m.end())
    ranked: list[tuple[int, int, str]] = []
    labels: set[str] = set()
    for position, m in enumerate(lexicon.ui_label.finditer(text)):
        label = next((g for g in m.groups() if g), "").strip()
        if not label or label in labels:
            continue
        labels.add(label)
        i = bisect_right(aside_starts, m.start()) - 1
        inside = i >= 0 and m.start() < aside_ends[i]
        operated = bool(
            lexicon.operate_before.search(text[max(0, m.start() - 40) : m.start()])
            or lexicon.operate_after.match(text, m.end())
        )
        ranked.append((-(2 * (not inside) + operated), position, label))
    found = [label for _, _, label in sorted(ranked)]
    if not found:
        for m in ui_nouns(lexicon, _plain(text) if plain is None else plain):
            label = next((g for g in m.groupdict().values() if g), "").strip()
            if label and label not in labels:
                labels.add(label)
                found.append(label)
    return found


def _condition(sentence: str, lexicon: Lexicon) -> tuple[str, str]:
    """Split a sentence into ``(condition, rest)``; condition is empty when none leads it.

    A condition with no comma ends before the first action verb after its opening
    words: "If you are prompted for a password type it and then select Next" gives
    "If you are prompted for a password" and "type it and then select Next".
    """
    sentence = sentence.strip()
    m = lexicon.condition.match(sentence)
    if m is None:
        return "", sentence
    cond, rest = m.group("cond").strip(), sentence[m.end() :].strip()
    if sentence[m.end() - 1] in ",:、，":  # the author marked where the condition ends
        return cond, rest
    verb = lexicon.action_verb.search(cond, _nth_space(cond, 3))
    if verb is not None:
        return cond[: verb.start()].strip(), sentence[verb.start("verb") :].strip()
    return cond, rest


def _nth_space(text: str, n: int) -> int:
    """Offset of the ``n``-th space in ``text`` (or its end): a condition's opening words."""
    position = -1
    for _ in range(n):
        position = text.find(" ", position + 1)
        if position < 0:
            return len(text)
    return position


def lead_in_condition(text: str, lexicon: Lexicon) -> str:
    """Return the condition a list's lead-in sentence sets, or ``""``.

    ``"If the standard reset didn't work, use the hard-restart procedure:"`` gives
    ``"If the standard reset didn't work"``.
    """
    for sentence in split_sentences(_plain(text)):
        cond, _ = _condition(sentence, lexicon)
        if cond:
            return cond
    return ""


def parse_step(
    element: LayoutElement, lexicon: Lexicon, *, parent_number: str = "", extra_caution: str = ""
) -> ProcedureStep:
    """Parse one list item into a :class:`ProcedureStep`.

    Args:
        element: A list item (or a pseudo-item split from a paragraph).
        lexicon: The document's language rules.
        parent_number: Number of the enclosing step, for nested steps.
        extra_caution: Text of a note or caution bound to this step from outside it.

    Returns:
        The step. The first sentence that is not a caution gives the action (its
        leading condition clause, if any, becomes the condition); later sentences
        that state an outcome give the result; warnings give the caution. A field
        the source states itself (the element's hints ``step_action``,
        ``step_result``, ``step_caution``, ``step_condition``: a procedure sheet's
        columns) is taken as given, and the text rules fill only the others.
    """
    given = {key.removeprefix("step_"): value for key, value in element.hints if key in _GIVEN_FIELDS}
    if given:
        return _given_step(
            element, given, parent_number=parent_number, extra_caution=extra_caution, lexicon=lexicon
        )
    plain = _plain(element.text)
    sentences = [stripped for s in split_sentences(plain) if (stripped := s.strip())]
    action = condition = ""
    results: list[str] = []
    cautions: list[str] = []
    conditions: list[str] = []
    for sentence in sentences:
        cond, rest = _condition(sentence, lexicon)
        if not cond and lexicon.caution.search(sentence) and (action or len(sentences) > 1):
            cautions.append(sentence)
            continue
        if cond:
            conditions.append(cond)
        if not action:
            action = rest or sentence
        elif lexicon.result.search(rest):
            results.append(sentence)
    if not action and cautions:
        action = cautions.pop(0)
    condition = "; ".join(conditions)
    if extra_caution:
        cautions.append(_plain(extra_caution))
    targets = _ui_targets(element.text, plain, lexicon)
    return _step(
        element,
        parent_number,
        action=action,
        target=targets[0] if targets else "",
        condition=condition,
        result=" ".join(results),
        caution=" ".join(cautions),
    )


#: Element hints that state a step's fields outright.
_GIVEN_FIELDS = frozenset({"step_action", "step_result", "step_caution", "step_condition"})


def _given_step(
    element: LayoutElement, given: dict[str, str], *, parent_number: str, extra_caution: str, lexicon: Lexicon
) -> ProcedureStep:
    """A step whose fields its source gives (see :func:`parse_step`); the target comes from the action."""
    action = given.get("action", "")
    targets = _ui_targets(action, _plain(action), lexicon) if action else []
    cautions = [c for c in (given.get("caution", ""), _plain(extra_caution) if extra_caution else "") if c]
    return _step(
        element,
        parent_number,
        action=action,
        target=targets[0] if targets else "",
        condition=given.get("condition", ""),
        result=given.get("result", ""),
        caution=" ".join(cautions),
    )


def _step(
    element: LayoutElement,
    parent_number: str,
    *,
    action: str,
    target: str,
    condition: str,
    result: str,
    caution: str,
) -> ProcedureStep:
    """The step of ``element`` with these fields; number, text, depth and place come from the element."""
    return ProcedureStep(
        number=element.number,
        text=element.text,
        action=action,
        target=target,
        condition=condition,
        result=result,
        caution=caution,
        depth=element.level,
        parent_number=parent_number,
        element_id=element.element_id,
        page=element.page,
        bbox=element.bbox,
    )

"""Procedure steps: a list item's text parsed into action, target, condition, result, caution."""

from __future__ import annotations

import re

from procedure_rag._lexicon import Lexicon, split_sentences
from procedure_rag._types import LayoutElement, ProcedureStep

__all__ = ["lead_in_condition", "parse_step", "ui_targets"]

_MARKUP = re.compile(r"\*\*|__|`|\[(?=[^\]]*\]\()|\]\([^)]*\)|!\[|<[^>\n]{0,200}>")
_SPACE = re.compile(r"\s+")


def _plain(text: str) -> str:
    """Drop inline Markdown markup (emphasis marks, link targets, tags) from a field value."""
    return _SPACE.sub(" ", _MARKUP.sub("", text)).strip()


def ui_targets(text: str, lexicon: Lexicon) -> list[str]:
    """Return the UI elements ``text`` names, in order, without duplicates.

    Quoted or bracketed labels (「保存」, [Save], **Save**, :kbd:`Ctrl`) come first;
    noun phrases ending in a UI word (ボタン, button, tab…) follow.
    """
    found: list[str] = []
    for m in lexicon.ui_label.finditer(text):
        label = next((g for g in m.groups() if g), "").strip()
        if label and label not in found:
            found.append(label)
    if not found:
        for m in lexicon.ui_noun.finditer(_plain(text)):
            label = next((g for g in m.groupdict().values() if g), "").strip()
            if label and label not in found:
                found.append(label)
    return found


def _condition(sentence: str, lexicon: Lexicon) -> tuple[str, str]:
    """Split a sentence into ``(condition, rest)``; condition is empty when none leads it."""
    m = lexicon.condition.match(sentence.strip())
    if m is None:
        return "", sentence.strip()
    return m.group("cond").strip(), sentence.strip()[m.end() :].strip()


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
        that state an outcome give the result; warnings give the caution.
    """
    sentences = [s.strip() for s in split_sentences(_plain(element.text)) if s.strip()]
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
    targets = ui_targets(element.text, lexicon)
    return ProcedureStep(
        number=element.number,
        text=element.text,
        action=action,
        target=targets[0] if targets else "",
        condition=condition,
        result=" ".join(results),
        caution=" ".join(cautions),
        depth=element.level,
        parent_number=parent_number,
        element_id=element.element_id,
        page=element.page,
        bbox=element.bbox,
    )

"""How questions are worded: :class:`QuestionWords` (one value per language), and the :class:`Task`.

The values themselves live side by side in :mod:`.questions_ja` and :mod:`.questions_en`;
:mod:`.questions` puts the questions of a chunk together from them. The heading
clean-up here holds for both languages.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from procedure_rag._language.numbering import match_heading_number, match_step_marker

__all__ = ["QuestionWords", "Task", "clean_heading", "strip_trailing"]

_NUMBERING = re.compile(
    r"^\s*(?:第\s*\d+\s*[章節]|\d+(?:[-‐‑.．]\d+)*[.．)]?|[（(]\d+[)）]|Step\s+\d+[:.]?)\s*"
)
_BRACKETS = re.compile(r"[《》【】〈〉]")
_TRAIL = re.compile(r"[\s。．.:：、,]+$")


@dataclass(frozen=True, slots=True)
class Task:
    """What a heading asks to do.

    Attributes:
        verb: The task as a verb phrase ("restart the device", "デバイスを再起動する"), or "".
        noun: The task as a noun phrase ("hard-restart", "ハード再起動"), or "" when the
            heading is an instruction.
    """

    verb: str
    noun: str


@dataclass(frozen=True, slots=True)
class QuestionWords:
    """How questions are worded in one language.

    Templates take ``{verb}``, ``{noun}``, ``{target}``, ``{condition}`` or
    ``{action}``; callables hold the rules that need more than a template.

    Attributes:
        task: Heading text -> :class:`Task`.
        direct: Heading text -> a question it already is, or "".
        how_verb / how_noun / about_noun: Questions from the task.
        condition: Condition clause -> "what should I do" question, or "".
        outcome: Condition clause -> "what happens" question, or "".
        target: Pairs of (action pattern, template) for the operated element; the
            first matching pattern wins; no match, no question.
        target_form: Target label, step action -> how the element is named when it is
            a labelled control ([設定], "the power button"), else "".
        verb_after_target: Whether the verb that operates a target follows it (Japanese
            word order) rather than precedes it.
        result: Step action -> "what happens after" question, or "".
        caution_verb / caution_noun: Questions about what to watch out for.
        sentence: A prose sentence -> a question it answers, or "".
        generic_verb / generic_noun: Fallbacks about the task; they pad to the minimum.
        generic_headings: Headings too vague alone ("Overview"): joined to their parent.
        join_parent: Template joining a vague heading to its parent (``{noun}``, ``{parent}``).
        fallback_noun: Used when a chunk has no heading and no text.
        imperative: Whether a step action is an instruction (not a description).
    """

    task: Callable[[str], Task]
    direct: Callable[[str], str]
    how_verb: str
    how_noun: str
    about_noun: str
    condition: Callable[[str], str]
    outcome: Callable[[str], str]
    target: tuple[tuple[re.Pattern[str], str], ...]
    target_form: Callable[[str, str], str]
    verb_after_target: bool
    result: Callable[[str], str]
    caution_verb: str
    caution_noun: str
    sentence: Callable[[str], str]
    generic_verb: tuple[str, ...]
    generic_noun: tuple[str, ...]
    generic_headings: frozenset[str]
    join_parent: str
    fallback_noun: str
    imperative: Callable[[str], bool]


def clean_heading(heading: str) -> str:
    """A heading without its numbering, decorative brackets and trailing punctuation."""
    return _TRAIL.sub("", _BRACKETS.sub("", _without_number(heading))).strip()


def _without_number(heading: str) -> str:
    """``heading`` without the number it opens with (``1.2``, ``第一章``, ``(a)``, ``①``, ``手順1``).

    The readers' own numbering rules come first, so that every number a reader keeps in a
    heading's text is recognised; then a looser pattern for numbers they do not know.
    """
    text = heading.lstrip()
    found = match_heading_number(text)
    if found is not None and any(ch.isalnum() for ch in found[0]):
        return text[found[2] :]
    marker = match_step_marker(text)
    if marker is not None and marker.ordered:
        return text[marker.rest_start :]
    return _NUMBERING.sub("", heading)


def strip_trailing(text: str) -> str:
    """``text`` without the spaces and punctuation it ends with."""
    return _TRAIL.sub("", text)

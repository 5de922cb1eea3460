"""Hypothetical questions a chunk answers, built from its own structure.

The section heading gives the task ("ハード再起動の手順" -> 「ハード再起動の手順は？」,
"Connecting to Wi-Fi after setup" -> "How do I connect to Wi-Fi after setup?"); each
step field gives one kind of question: the target where to operate, the condition what
to do when it holds, the result what happens after, the caution what to watch out for.
Prose chunks add questions from their first sentences.

Everything that knows words sits in one :class:`~.question_words.QuestionWords` value per
language (:mod:`.questions_ja`, :mod:`.questions_en`); this module only puts them together.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from procedure_rag._language.lexicons import by_language
from procedure_rag._representations.offline.question_words import QuestionWords, Task, clean_heading
from procedure_rag._representations.offline.questions_en import ENGLISH_QUESTIONS
from procedure_rag._representations.offline.questions_ja import JAPANESE_QUESTIONS
from procedure_rag._representations.offline.summary import body_text, lexicon_for, sentences
from procedure_rag._types import Chunk, ChunkType, ProcedureStep

__all__ = ["MAX_QUESTIONS", "MIN_QUESTIONS", "QUESTION_WORDS", "question_words", "questions"]

MIN_QUESTIONS = 3
MAX_QUESTIONS = 8

_ADMONITION = re.compile(
    r"^(?:※|(?:Note|Important|Warning|Caution|Tip|注意|重要|警告|注|メモ)\s*[:：])\s*", re.I
)

QUESTION_WORDS: dict[str, QuestionWords] = {"ja": JAPANESE_QUESTIONS, "en": ENGLISH_QUESTIONS}


def question_words(language: str) -> QuestionWords:
    """The question rules of ``language`` (English for unknown languages)."""
    return by_language(QUESTION_WORDS, language)


def _dedupe_key(question: str) -> str:
    """Questions that differ only in case, spacing or punctuation are the same question."""
    return "".join(c for c in unicodedata.normalize("NFKC", question).casefold() if c.isalnum())


def _heading_task(chunk: Chunk, words: QuestionWords) -> tuple[Task, str]:
    """The task of the innermost heading (vague ones joined to their parent), and its direct question."""
    if not chunk.section_path:
        first = next(iter(sentences(body_text(chunk))), "")
        noun = first[:40].strip() or words.fallback_noun
        return Task(verb="", noun=noun), ""
    heading = chunk.section_path[-1]
    task = words.task(heading)
    if clean_heading(heading).casefold() in words.generic_headings and len(chunk.section_path) > 1:
        parent = words.task(chunk.section_path[-2])
        task = Task(verb="", noun=words.join_parent.format(noun=task.noun, parent=parent.noun or parent.verb))
    return task, words.direct(heading)


def _from_heading(chunk: Chunk, task: Task, direct: str, words: QuestionWords) -> Iterator[str]:
    yield direct
    if task.verb:
        yield words.how_verb.format(verb=task.verb)
    if task.noun:
        yield (words.how_noun if chunk.steps else words.about_noun).format(noun=task.noun)


def _from_steps(steps: tuple[ProcedureStep, ...], words: QuestionWords) -> Iterator[str]:
    for step in steps:
        if step.condition:
            imperative = words.imperative(step.action)
            yield (words.condition if imperative else words.outcome)(step.condition.split("; ")[0])
    for step in steps:
        target = _target_question(step, words)
        if target:
            yield target
    for step in steps:
        if step.result and words.imperative(step.action):
            yield words.result(step.action)


def _target_question(step: ProcedureStep, words: QuestionWords) -> str:
    """The question about the element ``step`` operates, by the verb that operates it, or ""."""
    if not step.target:
        return ""
    # English names a thing before operating it ("for Windows 10, press the Windows key"):
    # the last mention is the operated one; Japanese operates right after the first.
    at = step.action.find(step.target) if words.verb_after_target else step.action.rfind(step.target)
    if at < 0:
        return ""
    form = words.target_form(step.target, step.action)
    # The verb that operates the target sits next to it: before it in English, after in Japanese.
    end = at + len(step.target)
    near = step.action[end : end + 30] if words.verb_after_target else step.action[max(at - 25, 0) : at]
    hits = [(m.start(), t) for pattern, t in words.target for m in pattern.finditer(near)]
    # The verb closest to the target operates it.
    pick = min(hits, default=None) if words.verb_after_target else max(hits, default=None)
    return pick[1].format(target=form) if form and pick else ""


def _from_prose(chunk: Chunk, words: QuestionWords) -> Iterator[str]:
    if chunk.chunk_type is ChunkType.PROCEDURE:
        return  # its sentences are steps, asked about through their fields
    lexicon = lexicon_for(chunk)
    for raw in sentences(body_text(chunk))[:6]:
        sentence = _ADMONITION.sub("", raw)
        m = lexicon.condition.match(sentence)
        if m:
            rest = sentence[m.end() :].strip()
            yield (words.condition if words.imperative(rest) else words.outcome)(m.group("cond"))
        else:
            yield words.sentence(sentence)


def _caution(chunk: Chunk, task: Task, words: QuestionWords) -> Iterator[str]:
    lexicon = lexicon_for(chunk)
    has_caution = any(s.caution for s in chunk.steps) or any(
        lexicon.caution.search(s) for s in sentences(body_text(chunk))
    )
    if has_caution:
        yield (
            words.caution_verb.format(verb=task.verb)
            if task.verb
            else words.caution_noun.format(noun=task.noun)
        )


def _parents(chunk: Chunk, words: QuestionWords) -> Iterator[str]:
    for heading in reversed(chunk.section_path[:-1]):
        task = words.task(heading)
        if task.verb:
            yield words.how_verb.format(verb=task.verb)


def questions(chunk: Chunk) -> list[str]:
    """Return 3 to 8 questions ``chunk`` answers, in its language, without duplicates.

    Order: the heading's task, the governing condition, the step conditions, targets
    and results, a caution question, questions from the first sentences of prose,
    generic questions about the heading; the enclosing headings' tasks only pad to 3.
    """
    words = question_words(chunk.language)
    task, direct = _heading_task(chunk, words)
    condition = chunk.condition and words.condition(chunk.condition)
    # (questions, stop once this many are kept): the enclosing headings' tasks are shared
    # by every chunk beneath them, so they only pad a chunk up to the minimum.
    sources: list[tuple[Iterator[str], int]] = [
        (_from_heading(chunk, task, direct, words), MAX_QUESTIONS),
        (iter([condition or ""]), MAX_QUESTIONS),
        (_from_steps(chunk.steps, words), MAX_QUESTIONS),
        (_caution(chunk, task, words), MAX_QUESTIONS),
        (_from_prose(chunk, words), MAX_QUESTIONS),
        ((g.format(verb=task.verb) for g in words.generic_verb if task.verb), MAX_QUESTIONS),
        ((g.format(noun=task.noun) for g in words.generic_noun if task.noun), MAX_QUESTIONS),
        (_parents(chunk, words), MIN_QUESTIONS),
    ]
    out: dict[str, str] = {}
    for source, cap in sources:
        for question in source:
            if len(out) >= cap:
                break
            key = _dedupe_key(question)
            if key and key not in out:
                out[key] = question
    return list(out.values())

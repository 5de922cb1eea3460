"""English question forms: how a heading, a step field or a sentence becomes a question.

Headings name tasks with an imperative ("Reset the device") or a gerund ("Resetting the
device"); both become "How do I reset the device?". "you" in the manual becomes "I" in
the question a user asks.
"""

from __future__ import annotations

import re

from procedure_rag._language.words import IMPERATIVE_VERBS
from procedure_rag._representations.offline.question_words import QuestionWords, Task, clean_heading

__all__ = ["ENGLISH_QUESTIONS"]

_TASK_SUFFIX = re.compile(r"\s+(?:procedures?|steps|instructions|process|workflow)$", re.IGNORECASE)
_DIRECT = (
    (re.compile(r"^How to (.+)$", re.IGNORECASE), "How do I {0}?"),
    (re.compile(r"^What you (?:can|need to) (.+)$", re.IGNORECASE), "What can I {0}?"),
    (re.compile(r"^(?:Why|When|Where|What|Which|How|Can|Do|Does|Is|Are)\b.*\?$", re.IGNORECASE), "{whole}"),
)
# Gerund endings back to the base form, most specific first (after the known verbs:
# "deleting" -> "delete", "diagnosing" -> "diagnose", "sharing" -> "share").
_GERUND = (
    (re.compile(r"(ss|ll|zz)ing$"), r"\1"),
    (re.compile(r"([bdgmnprt])\1ing$"), r"\1"),
    (
        re.compile(
            r"(at|iz|is|ur|us|ov|iv|av|rv|id|ag|ug|yz|ys|c|dg|rg|ng|bl|pl|tl|os|let|ut|ul"
            r"|[^aeiou]ar|[^aeo]ir|[^e]ak)ing$"
        ),
        r"\1e",
    ),
    (re.compile(r"ing$"), ""),
)
# Verbs whose gerund the rules above would get wrong ("controlling", "cancelling").
_KNOWN_VERBS = IMPERATIVE_VERBS | frozenset(("cancel", "control", "label", "model", "travel", "signal"))
# Words ending in "ing" that are no gerund.
_NOT_GERUNDS = frozenset(
    "anything ceiling during evening everything morning nothing something spring string thing".split()  # noqa: SIM905
)
_SWAP = (
    (re.compile(r"\byou are\b", re.IGNORECASE), "I am"),
    (re.compile(r"\byou're\b", re.IGNORECASE), "I'm"),
    (re.compile(r"\byour\b", re.IGNORECASE), "my"),
    (re.compile(r"\byours\b", re.IGNORECASE), "mine"),
    (re.compile(r"\byou\b", re.IGNORECASE), "I"),
)
_CONNECTIVE = re.compile(r"^(If|When|Whenever|Once|Unless|After|Before|While|In case|In the event)\b", re.I)
_NOT_IMPERATIVE = re.compile(r"^(?:the|a|an|one|your|it|this|that|these|those|you|there|all)\b", re.I)


def _lower_first(text: str) -> str:
    first, _, rest = text.partition(" ")
    keep = (first.isupper() and len(first) > 1) or any(c.isupper() for c in first[1:])
    return text if keep else (first[:1].lower() + first[1:] + (" " + rest if rest else ""))


def _swap(text: str) -> str:
    for pattern, repl in _SWAP:
        text = pattern.sub(repl, text)
    return text


def _verb(word: str) -> str:
    """The base form when ``word`` is an imperative verb or a gerund, else ""."""
    low = word.lower()
    last = low.rsplit("-", 1)[-1]
    if last in IMPERATIVE_VERBS:
        return low
    if not low.endswith("ing") or last in _NOT_GERUNDS:
        return ""
    if len(low) > 4:
        stem = low[:-3]
        for known in (stem, stem + "e", stem[:-1] if stem[-1:] == stem[-2:-1] else ""):
            if known and known.rsplit("-", 1)[-1] in _KNOWN_VERBS:
                return known
    if len(low) > 5:
        for pattern, repl in _GERUND:
            base, n = pattern.subn(repl, low)
            if n:
                return base
    return ""


def _task(heading: str) -> Task:
    text = clean_heading(heading)
    noun = _TASK_SUFFIX.sub("", text).strip()
    if noun != text:  # "Hard-restart procedure" names a procedure
        return Task(verb="", noun=_lower_first(noun or text))
    first, _, rest = text.partition(" ")
    base = _verb(first.rstrip(",;:"))
    if base:
        return Task(verb=_swap(f"{base}{first[len(first.rstrip(',;:')) :]} {rest}".strip()), noun="")
    return Task(verb="", noun=_lower_first(text))


def _direct(heading: str) -> str:
    text = clean_heading(heading) if not heading.rstrip().endswith("?") else heading.strip()
    for pattern, template in _DIRECT:
        m = pattern.match(text)
        if m:
            return template.format(*(_swap(g) for g in m.groups()), whole=text)
    return ""


def _condition(condition: str, *, happens: bool) -> str:
    condition = condition.strip(" ,;:")
    if len(condition.split()) < 3 or not _CONNECTIVE.match(condition):
        return ""
    clause = _swap(_lower_first(condition))
    return f"What happens {clause}?" if happens else f"What should I do {clause}?"


def _short_action(action: str) -> str:
    action = action.strip().rstrip(".")
    words = action.split()
    if len(words) > 14:
        action = re.split(r",|\band then\b|\(", action, maxsplit=1)[0].strip()
    return _swap(_lower_first(action))


def _result(action: str) -> str:
    return f"What happens after I {_short_action(action)}?" if action else ""


_SENTENCE = (
    (re.compile(r"^You can (.+?)\.?$"), "Can I {0}?"),
    (re.compile(r"^You (?:must|need to|have to|should) (.+?)\.?$"), "Do I need to {0}?"),
    (re.compile(r"^(?:There are|There is) (.+?)\.?$"), "What are the {0}?"),
)


def _sentence(sentence: str) -> str:
    if len(sentence.split()) > 25:
        return ""
    for pattern, template in _SENTENCE:
        m = pattern.match(sentence.strip())
        if m:
            return template.format(_swap(m.group(1)))
    return ""


def _target_form(target: str, text: str) -> str:
    # Targets are labels or UI noun phrases already; only a trailing UI word is added.
    m = re.search(re.escape(target) + r"\s+(button|tab|key|icon|menu|link|page)s?\b", text)
    return f"the {target} {m.group(1)}" if m else target


ENGLISH_QUESTIONS = QuestionWords(
    task=_task,
    direct=_direct,
    how_verb="How do I {verb}?",
    how_noun="What is the {noun} procedure?",
    about_noun="What is {noun}?",
    condition=lambda c: _condition(c, happens=False),
    outcome=lambda c: _condition(c, happens=True),
    target=(
        (
            re.compile(r"\b(?:select|click|tap|choose|check|turn (?:on|off)|toggle)\b", re.I),
            "Where do I select {target}?",
        ),
        (re.compile(r"\b(?:press|hold|push)\b", re.I), "When do I press {target}?"),
        (re.compile(r"\bopen\b", re.I), "How do I open {target}?"),
        (re.compile(r"\b(?:enter|type|set|change)\b", re.I), "What do I enter in {target}?"),
    ),
    target_form=_target_form,
    verb_after_target=False,
    result=_result,
    caution_verb="What should I watch out for when I {verb}?",
    caution_noun="What should I watch out for with {noun}?",
    sentence=_sentence,
    generic_verb=("What are the steps to {verb}?", "What do I need before I {verb}?", "Can I {verb}?"),
    generic_noun=("What is {noun}?", "What are the steps for {noun}?", "What should I know about {noun}?"),
    generic_headings=frozenset(
        {"overview", "introduction", "prerequisites", "requirements", "next steps", "notes"}
    ),
    join_parent="{noun} of {parent}",
    fallback_noun="this document",
    imperative=lambda action: (
        not _NOT_IMPERATIVE.match(action.strip())
        and not (action[:1].islower() and _NOT_IMPERATIVE.match(action.split(",")[0]))
    ),
)

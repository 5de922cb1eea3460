"""Hypothetical questions a chunk answers, built from its own structure.

The section heading gives the task ("ハード再起動の手順" -> 「ハード再起動の手順は？」,
"Connecting to Wi-Fi after setup" -> "How do I connect to Wi-Fi after setup?"); each
step field gives one kind of question: the target where to operate, the condition what
to do when it holds, the result what happens after, the caution what to watch out for.
Prose chunks add questions from their first sentences.

Everything that knows words sits in one :class:`QuestionWords` value per language.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from procedure_rag._language.lexicons import JAPANESE
from procedure_rag._language.numbering import match_heading_number, match_step_marker
from procedure_rag._representations.offline.keywords import IMPERATIVE_VERBS, japanese_tokenizer
from procedure_rag._representations.offline.summary import body_text, lexicon_for, sentences
from procedure_rag._types import Chunk, ChunkType, ProcedureStep

__all__ = ["MAX_QUESTIONS", "MIN_QUESTIONS", "QuestionWords", "Task", "questions"]

MIN_QUESTIONS = 3
MAX_QUESTIONS = 8

_NUMBERING = re.compile(
    r"^\s*(?:第\s*\d+\s*[章節]|\d+(?:[-‐‑.．]\d+)*[.．)]?|[（(]\d+[)）]|Step\s+\d+[:.]?)\s*"
)
_BRACKETS = re.compile(r"[《》【】〈〉]")
_TRAIL = re.compile(r"[\s。．.:：、,]+$")
_ADMONITION = re.compile(
    r"^(?:※|(?:Note|Important|Warning|Caution|Tip|注意|重要|警告|注|メモ)\s*[:：])\s*", re.I
)


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


# --- Japanese -------------------------------------------------------------------------------

_JA_TASK_SUFFIX = re.compile(r"(?:の)?(?:手順|方法|やり方|仕方|操作)$")
_JA_POLITE_END = re.compile(r"(?:してください|ください|します|しましょう|する)$")


def _ja_plain_form(text: str) -> str:
    """Text ending in its last verb's dictionary form ("…を押します。" -> "…を押す"), or ""."""
    text = _TRAIL.sub("", text)
    last = None
    for m in japanese_tokenizer().tokenize(text):
        pos = m.part_of_speech()
        if pos[0] == "動詞" and (pos[1] != "非自立可能" or m.normalized_form() in ("為る", "出来る")):
            last = m
    if last is None or len(text) - last.end() > 12:
        return ""
    return text[: last.begin()] + str(last.dictionary_form())


def _ja_is_sahen(noun: str) -> bool:
    morphemes = list(japanese_tokenizer().tokenize(noun))
    return bool(morphemes) and "サ変可能" in morphemes[-1].part_of_speech()


def _ja_task(heading: str) -> Task:
    text = clean_heading(heading)
    stripped = _JA_TASK_SUFFIX.sub("", text).strip()
    if stripped != text:  # "ハード再起動の手順": a noun phrase naming a procedure
        verb = stripped + "する" if "の" not in stripped and _ja_is_sahen(stripped) else ""
        return Task(verb=verb, noun=stripped or text)
    verb = _ja_plain_form(text)
    if verb:
        return Task(verb=verb, noun="")
    head, sep, tail = text.rpartition("の")
    if sep and head and tail and " " not in tail and _ja_is_sahen(tail):  # "地域情報の登録"
        return Task(verb=f"{head}を{tail}する", noun="")
    return Task(verb="", noun=text)


_JA_CONDITION = (
    (
        re.compile(r"(?:場合|とき|時|際)$"),
        "{condition}はどうすればよいですか？",
        "{condition}はどうなりますか？",
    ),
    (
        re.compile(r"(?:たら|れば|なら|ならば)$"),
        "{condition}どうすればよいですか？",
        "{condition}どうなりますか？",
    ),
    (re.compile(r"[るた]と$"), "{condition}どうなりますか？", "{condition}どうなりますか？"),
)
_JA_VAGUE_CONDITION = re.compile(
    r"^(?:次|以下|下記|その|この|それ|これ)(?:の)?(?:場合|とき)$|^.{0,3}$|^(?:可能であれば|必要に応じて)$"
)


def _ja_condition(condition: str, *, happens: bool) -> str:
    condition = condition.strip("、， ")
    if _JA_VAGUE_CONDITION.match(condition):
        return ""
    for pattern, do, happen in _JA_CONDITION:
        if pattern.search(condition):
            return (happen if happens else do).format(condition=condition)
    return ""


def _ja_result(action: str) -> str:
    plain = _ja_plain_form(action)
    return f"{plain}とどうなりますか？" if plain else ""


_JA_STATEMENT = re.compile(r"(?:でき|あり)ます[。．]?$")


def _ja_sentence(sentence: str) -> str:
    sentence = sentence.strip()
    if not 8 <= len(sentence) <= 80 or JAPANESE.caution.search(sentence):
        return ""
    if _JA_STATEMENT.search(sentence):
        return _TRAIL.sub("", sentence) + "か？"
    return ""


def _ja_target_form(target: str, text: str) -> str:
    labelled = any(w in text for w in (f"[{target}]", f"「{target}」", f"**{target}**"))
    label = f"[{target}]" if labelled else target
    suffix = re.search(re.escape(target) + r"[\]」*]*\s?(ボタン|タブ|キー|アイコン|メニュー)", text)
    if suffix and not target.endswith(suffix.group(1)):
        return f"{label} {suffix.group(1)}"
    return label if labelled else ""


JAPANESE_QUESTIONS = QuestionWords(
    task=_ja_task,
    direct=lambda heading: heading if heading.endswith(("？", "?")) else "",
    how_verb="{verb}には？",
    how_noun="{noun}の手順は？",
    about_noun="{noun}について教えてください。",
    condition=lambda c: _ja_condition(c, happens=False),
    outcome=lambda c: _ja_condition(c, happens=True),
    target=(
        (re.compile(r"選択|クリック|タップ|オンに|オフに|チェック"), "{target}はどこで選択しますか？"),
        (re.compile(r"押"), "{target}はいつ押しますか？"),
        (re.compile(r"開"), "{target}はどうやって開きますか？"),
        (re.compile(r"入力|設定|変更"), "{target}には何を設定しますか？"),
    ),
    target_form=_ja_target_form,
    verb_after_target=True,
    result=_ja_result,
    caution_verb="{verb}ときの注意点は？",
    caution_noun="{noun}の注意点は？",
    sentence=_ja_sentence,
    generic_verb=("{verb}方法は？", "{verb}前に確認することは？", "{verb}ときの注意点は？"),
    generic_noun=("{noun}とは何ですか？", "{noun}の手順は？", "{noun}で注意することは？"),
    generic_headings=frozenset({"概要", "はじめに", "前提条件", "注意事項", "関連項目", "次の手順", "要件"}),
    join_parent="{parent}の{noun}",
    fallback_noun="この文書",
    imperative=lambda action: (
        bool(_JA_POLITE_END.search(_TRAIL.sub("", action))) and not JAPANESE.result.search(action)
    ),
)


# --- English --------------------------------------------------------------------------------

_EN_TASK_SUFFIX = re.compile(r"\s+(?:procedures?|steps|instructions|process|workflow)$", re.IGNORECASE)
_EN_DIRECT = (
    (re.compile(r"^How to (.+)$", re.IGNORECASE), "How do I {0}?"),
    (re.compile(r"^What you (?:can|need to) (.+)$", re.IGNORECASE), "What can I {0}?"),
    (re.compile(r"^(?:Why|When|Where|What|Which|How|Can|Do|Does|Is|Are)\b.*\?$", re.IGNORECASE), "{whole}"),
)
# Gerund endings back to the base form, most specific first (after the known verbs:
# "deleting" -> "delete", "diagnosing" -> "diagnose", "sharing" -> "share").
_EN_GERUND = (
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
_EN_KNOWN_VERBS = IMPERATIVE_VERBS | frozenset(("cancel", "control", "label", "model", "travel", "signal"))
# Words ending in "ing" that are no gerund.
_EN_NOT_GERUNDS = frozenset(
    "anything ceiling during evening everything morning nothing something spring string thing".split()  # noqa: SIM905
)
_EN_SWAP = (
    (re.compile(r"\byou are\b", re.IGNORECASE), "I am"),
    (re.compile(r"\byou're\b", re.IGNORECASE), "I'm"),
    (re.compile(r"\byour\b", re.IGNORECASE), "my"),
    (re.compile(r"\byours\b", re.IGNORECASE), "mine"),
    (re.compile(r"\byou\b", re.IGNORECASE), "I"),
)
_EN_CONNECTIVE = re.compile(
    r"^(If|When|Whenever|Once|Unless|After|Before|While|In case|In the event)\b", re.I
)
_EN_NOT_IMPERATIVE = re.compile(r"^(?:the|a|an|one|your|it|this|that|these|those|you|there|all)\b", re.I)


def _en_lower_first(text: str) -> str:
    first, _, rest = text.partition(" ")
    keep = (first.isupper() and len(first) > 1) or any(c.isupper() for c in first[1:])
    return text if keep else (first[:1].lower() + first[1:] + (" " + rest if rest else ""))


def _en_swap(text: str) -> str:
    for pattern, repl in _EN_SWAP:
        text = pattern.sub(repl, text)
    return text


def _en_verb(word: str) -> str:
    """The base form when ``word`` is an imperative verb or a gerund, else ""."""
    low = word.lower()
    last = low.rsplit("-", 1)[-1]
    if last in IMPERATIVE_VERBS:
        return low
    if not low.endswith("ing") or last in _EN_NOT_GERUNDS:
        return ""
    if len(low) > 4:
        stem = low[:-3]
        for known in (stem, stem + "e", stem[:-1] if stem[-1:] == stem[-2:-1] else ""):
            if known and known.rsplit("-", 1)[-1] in _EN_KNOWN_VERBS:
                return known
    if len(low) > 5:
        for pattern, repl in _EN_GERUND:
            base, n = pattern.subn(repl, low)
            if n:
                return base
    return ""


def _en_task(heading: str) -> Task:
    text = clean_heading(heading)
    noun = _EN_TASK_SUFFIX.sub("", text).strip()
    if noun != text:  # "Hard-restart procedure" names a procedure
        return Task(verb="", noun=_en_lower_first(noun or text))
    first, _, rest = text.partition(" ")
    base = _en_verb(first.rstrip(",;:"))
    if base:
        return Task(verb=_en_swap(f"{base}{first[len(first.rstrip(',;:')) :]} {rest}".strip()), noun="")
    return Task(verb="", noun=_en_lower_first(text))


def _en_direct(heading: str) -> str:
    text = clean_heading(heading) if not heading.rstrip().endswith("?") else heading.strip()
    for pattern, template in _EN_DIRECT:
        m = pattern.match(text)
        if m:
            return template.format(*(_en_swap(g) for g in m.groups()), whole=text)
    return ""


def _en_condition(condition: str, *, happens: bool) -> str:
    condition = condition.strip(" ,;:")
    if len(condition.split()) < 3 or not _EN_CONNECTIVE.match(condition):
        return ""
    clause = _en_swap(_en_lower_first(condition))
    return f"What happens {clause}?" if happens else f"What should I do {clause}?"


def _en_short_action(action: str) -> str:
    action = action.strip().rstrip(".")
    words = action.split()
    if len(words) > 14:
        action = re.split(r",|\band then\b|\(", action, maxsplit=1)[0].strip()
    return _en_swap(_en_lower_first(action))


def _en_result(action: str) -> str:
    return f"What happens after I {_en_short_action(action)}?" if action else ""


_EN_SENTENCE = (
    (re.compile(r"^You can (.+?)\.?$"), "Can I {0}?"),
    (re.compile(r"^You (?:must|need to|have to|should) (.+?)\.?$"), "Do I need to {0}?"),
    (re.compile(r"^(?:There are|There is) (.+?)\.?$"), "What are the {0}?"),
)


def _en_sentence(sentence: str) -> str:
    if len(sentence.split()) > 25:
        return ""
    for pattern, template in _EN_SENTENCE:
        m = pattern.match(sentence.strip())
        if m:
            return template.format(_en_swap(m.group(1)))
    return ""


def _en_target_form(target: str, text: str) -> str:
    # Targets are labels or UI noun phrases already; only a trailing UI word is added.
    m = re.search(re.escape(target) + r"\s+(button|tab|key|icon|menu|link|page)s?\b", text)
    return f"the {target} {m.group(1)}" if m else target


ENGLISH_QUESTIONS = QuestionWords(
    task=_en_task,
    direct=_en_direct,
    how_verb="How do I {verb}?",
    how_noun="What is the {noun} procedure?",
    about_noun="What is {noun}?",
    condition=lambda c: _en_condition(c, happens=False),
    outcome=lambda c: _en_condition(c, happens=True),
    target=(
        (
            re.compile(r"\b(?:select|click|tap|choose|check|turn (?:on|off)|toggle)\b", re.I),
            "Where do I select {target}?",
        ),
        (re.compile(r"\b(?:press|hold|push)\b", re.I), "When do I press {target}?"),
        (re.compile(r"\bopen\b", re.I), "How do I open {target}?"),
        (re.compile(r"\b(?:enter|type|set|change)\b", re.I), "What do I enter in {target}?"),
    ),
    target_form=_en_target_form,
    verb_after_target=False,
    result=_en_result,
    caution_verb="What should I watch out for when I {verb}?",
    caution_noun="What should I watch out for with {noun}?",
    sentence=_en_sentence,
    generic_verb=("What are the steps to {verb}?", "What do I need before I {verb}?", "Can I {verb}?"),
    generic_noun=("What is {noun}?", "What are the steps for {noun}?", "What should I know about {noun}?"),
    generic_headings=frozenset(
        {"overview", "introduction", "prerequisites", "requirements", "next steps", "notes"}
    ),
    join_parent="{noun} of {parent}",
    fallback_noun="this document",
    imperative=lambda action: (
        not _EN_NOT_IMPERATIVE.match(action.strip())
        and not (action[:1].islower() and _EN_NOT_IMPERATIVE.match(action.split(",")[0]))
    ),
)

QUESTION_WORDS: dict[str, QuestionWords] = {"ja": JAPANESE_QUESTIONS, "en": ENGLISH_QUESTIONS}


def question_words(language: str) -> QuestionWords:
    """The question rules of ``language`` (English for unknown languages)."""
    return QUESTION_WORDS.get(language, ENGLISH_QUESTIONS)


# --- Assembly -------------------------------------------------------------------------------


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
        # English names a thing before operating it ("for Windows 10, press the Windows key"):
        # the last mention is the operated one; Japanese operates right after the first.
        find = step.action.find if words.verb_after_target else step.action.rfind
        at = find(step.target) if step.target else -1
        form = words.target_form(step.target, step.action) if at >= 0 else ""
        # The verb that operates the target sits next to it: before it in English, after in Japanese.
        end = at + len(step.target)
        near = step.action[end : end + 30] if words.verb_after_target else step.action[max(at - 25, 0) : at]
        hits = [(m.start(), t) for pattern, t in words.target for m in pattern.finditer(near)]
        # The verb closest to the target operates it.
        pick = min(hits, default=None) if words.verb_after_target else max(hits, default=None)
        template = pick[1] if pick else ""
        if form and template:
            yield template.format(target=form)
    for step in steps:
        if step.result and words.imperative(step.action):
            yield words.result(step.action)


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

"""Steps whose numbers the extraction lost: Word's automatic numbering read as text.

Word numbers a list by itself (``numbering.xml``); the number is no character of the
paragraph. Text extractors that read only the paragraphs' characters (``docx2txt``, which
LangChain's ``Docx2txtLoader`` and LlamaIndex's ``DocxReader`` use) give a procedure as
paragraphs with nothing to tell a step from a sentence::

    To install a certificate:

    Connect your HoloLens 2 to a PC.

    Place the certificate file you want to install in a location on your HoloLens 2.

A paragraph is such a step when it reads as an instruction in one of the lexicons'
terms (an English sentence that opens with an imperative, a condition before it or not;
a Japanese one that asks politely and states nothing: 「…を選択します。」, not 「…されて
います。」 or 「…できます。」, or tersely ends on what it operates: 「手動セットアップに変更」;
an action with its result: 「…をクリックすると、…が表示されます。」; never a note or a
caution, which stays with the step before it: 「…に注意してください。」, "Do not …") and
it follows a lead-in (its last line ends with a colon, or reads as one in the lexicons'
terms: "the following steps", 「次の手順」), the step before it, or opens a run of two
steps. A title right over two steps ("Setup" / "Upload an app…" /
"Assign your app…") heads a new list and is no step; a title-like step ("Click Save")
has a step or its result after it. Between a lead-in and its first step a caution may
stand ("Warning …", 「注意: …」); between two steps up to five paragraphs that are
neither (a result, a note under the step, its sub-items) keep the list open, a short
title-like line does not.
The steps are numbered ``1.``, ``2.``… from the first of their run.

:func:`unmarked_steps` finds them in a text before the plain-text reader reads it, and
the reader takes each as a list item numbered so (style :data:`UNMARKED_STYLE`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from procedure_rag._language.lexicons import Lexicon
from procedure_rag._language.sentences import split_sentences
from procedure_rag._language.step_fields import is_instruction
from procedure_rag._readers.furniture_rules import is_navigation
from procedure_rag._readers.headings import title_like
from procedure_rag._readers.text_lines import Line, iter_lines

__all__ = ["MAX_GAP", "UNMARKED_STYLE", "unmarked_steps"]

#: The numbering style of a step whose number the extraction lost.
UNMARKED_STYLE = "unmarked"
#: Most paragraphs that are no step (a step's note, its sub-items, its result) between two steps
#: of one list; the plain-text reader holds as many back in such text to see whether a list goes on.
MAX_GAP = 5


def unmarked_steps(
    text: str, lexicons: Iterable[Lexicon], *, marked: Callable[[Line], bool]
) -> Mapping[int, int]:
    """The paragraphs of ``text`` that are unnumbered steps: ``{first line's body offset: ordinal}``.

    Args:
        text: The text, its paragraphs set apart by blank lines.
        lexicons: The languages' rules (lead-ins, instructions, cautions); a paragraph
            reads as a lead-in or a step in any of them.
        marked: Whether a line opens with a marker the reader recognises (a numbered or
            bulleted item, which the reader reads as such): it ends an unmarked list.
    """
    rules = tuple(lexicons)
    found: dict[int, int] = {}
    count = 0  # steps of the open list; 0: none open
    armed = False  # the paragraphs before were a lead-in (and cautions)
    gap = 0  # paragraphs that are no step after the open list's last step
    paragraphs = [
        (first, " ".join(text[ln.body : ln.end] for ln in lines)) for first, lines in _paragraphs(text)
    ]
    opens = [marked(first) for first, _ in paragraphs]
    steps = [not opened and _step(para, rules) for opened, (_, para) in zip(opens, paragraphs, strict=True)]

    def step_at(j: int) -> bool:
        return j < len(steps) and steps[j]

    def result_at(j: int) -> bool:
        return j < len(paragraphs) and any(lex.result.search(paragraphs[j][1]) for lex in rules)

    for i, (first, para) in enumerate(paragraphs):
        if opens[i] or is_navigation(para):
            count, armed, gap = 0, False, 0
            continue
        titled = title_like(para)
        step = steps[i]
        # A title right over two steps heads a new list ("Setup" / "Upload…" / "Assign…"), one
        # over a paragraph a section ("Rotate an app" / "To rotate…, …"); but in an open list a
        # step written as a title goes on with it ("Scroll down to Proxy" / "Change to Manual
        # Setup" / "Enter the IP address…").
        over_steps = titled and not (count and step) and step_at(i + 1) and step_at(i + 2)
        # A lead-in that instructs (「…するには、次の手順を実行します。」) is the list's, not its step;
        # in an open list a lead-in that does not ("WiFi proxy (21H1 or higher):") starts a new one.
        lead = over_steps or ((not count or not step) and _lead_in(para, rules, then_step=step_at(i + 1)))
        # A step written without a full stop ("Click Save") has a step or its result after it.
        if (
            not lead
            and (count or armed or step_at(i + 1))
            and step
            and (not titled or step_at(i + 1) or result_at(i + 1))
        ):
            count += 1
            found[first.body] = count
            armed, gap = False, 0
            continue
        if count and gap < MAX_GAP and not lead and not titled:
            gap += 1
            continue
        caution = any(lex.caution.search(para) for lex in rules)
        armed = lead or (armed and caution)
        count, gap = 0, 0
    return found


def _paragraphs(text: str) -> Iterable[tuple[Line, list[Line]]]:
    """The paragraphs of ``text``: runs of lines, a blank line (or a page break) before each."""
    run: list[Line] = []
    for line in iter_lines(text):
        if line.blank_before and run:
            yield run[0], run
            run = []
        run.append(line)
    if run:
        yield run[0], run


_FIRST_WORD = re.compile(r"[^\s:：]+")


def _step(para: str, rules: tuple[Lexicon, ...]) -> bool:
    """Whether the paragraph reads as a step: its first sentence instructs in one language's terms.

    A step opens with what to do (English at the start of the sentence, Japanese at its
    end: 「…場合は、…を選択します。」); what follows may report its result
    (「…を開きます。…が表示されます。」).
    """
    sentences = [s.strip() for s in split_sentences(para) if s.strip()]
    if not sentences:
        return False
    return any(_instructs(sentences[0], lex) for lex in rules)


def _instructs(sentence: str, lexicon: Lexicon) -> bool:
    """Whether ``sentence`` tells the reader what to do, not what they can do, in ``lexicon``'s terms.

    A condition may open it ("If the folder was moved, enter…"), and an action may come
    with its result (「[追加] をクリックすると、…が表示されます。」).
    """
    words = lexicon.step_words
    label = _FIRST_WORD.match(sentence)
    labelled = label is not None and label.group().lower() in lexicon.caution_labels
    if labelled or words.note_opener.match(sentence) or lexicon.caution.search(sentence):
        # "Note …", "Also note that…", 「なお、…」, 「…に注意してください」: a note, the step's
        # before it (English notes open with a verb); "Do not unplug…" its caution.
        return False
    if words.act_then_result.search(sentence):
        return words.statement.search(sentence) is None
    condition = lexicon.condition.match(sentence)
    if condition is not None and condition.end() < len(sentence):
        sentence = sentence[condition.end() :].lstrip(" ,、，")
    return (
        is_instruction(sentence, lexicon)
        and words.modal.search(sentence) is None
        and words.stands_alone.search(sentence) is not None
    )


def _lead_in(para: str, rules: tuple[Lexicon, ...], *, then_step: bool) -> bool:
    """Whether the paragraph introduces a list: ends with a colon, or its last sentence is a lead-in.

    A lead-in that instructs itself ("To reset the device, select…", 「…するには、次の手順を
    実行します。」) introduces a list only when a step follows it.
    """
    if para[-1] in ":：":
        return True
    sentences = [s.strip() for s in split_sentences(para) if s.strip()]
    last = sentences[-1] if sentences else para
    return any(lex.lead_in.search(last) for lex in rules) and (then_step or not _step(last, rules))

"""Procedure steps: a list item's text parsed into action, target, condition, result, caution.

The fields follow the step-field annotation guide (``benchmarks/step_fields.py``
measures them against it):

- **action**: what the reader does, from the first sentence that instructs through the
  instructions right after it; a purpose clause before it ("To reset the device, ",
  「〜するには、」), its condition and a trailing reference ("(see …)") are not part of it.
  A step that only reports what the system does has none.
- **condition**: the first condition the step states, as its clause (「〜場合は」, "If
  the device is on", "when prompted"), never its marker and never a delay ("After
  1 second").
- **result**: what the system does or shows after the action (「…をクリックすると、
  画面が表示されます」 gives the action 「…をクリックする」 and that result).
- **caution**: notes bound to the step and notes inside its text (※, 注：, ``Note:``,
  ``However,``, 「ただし、」, 「なお、」), conditional or not, each without the label
  word that only marks it (※, ``Note:``, ``Note that``, 「なお、」); a tip is no caution.
- **target**: see :mod:`procedure_rag._language.targets`.

Every word these rules know is data in the document's lexicon.
"""

from __future__ import annotations

import html
import re
import sys
import unicodedata
from dataclasses import dataclass, field

from procedure_rag._language.labels import leading_label
from procedure_rag._language.lexicons import Lexicon, split_sentences
from procedure_rag._language.targets import plain_markup, step_target, ui_targets
from procedure_rag._types import LayoutElement, ProcedureStep

__all__ = [
    "CAUTION_LABELS",
    "is_instruction",
    "lead_in_condition",
    "opening_condition",
    "parse_step",
    "ui_targets",
    "unlabelled",
]

#: Note labels that make a note a caution (a tip, ヒント or ポイント is none).
CAUTION_LABELS = frozenset(
    {"note", "caution", "warning", "important", "注意", "重要", "警告", "注", "※", "メモ", "補足"}
)

# Link targets and tags go; emphasis, quotes and brackets stay (they mark UI labels).
_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\([^)\n]*\)")
_PICTURE = re.compile(r"!\[[^\]\n]*\](?:\([^)\n]*\))?")  # a picture is not the step's text
_TAG = re.compile(r"<[^>\n]{0,200}>")
_BREAK = re.compile(r"[ \t\u3000]*\n[ \t\u3000]*")
_SPACE = re.compile(r"[ \t\u3000]{2,}")
# A first line that titles the item (「サインアップ⏎新規に…」): short, no sentence end.
_TITLE_LINE = re.compile(r"^[^。．.!?！？:：\n]{1,30}$")
# A ※ note inside a step's text: at its start or after a space or a sentence end, not a
# reference mark right after a word (「…を実行してください※。」).
_NOTE_MARK = re.compile(r"(?:(?<=\s)|(?<=[。．]))※(?=[ \t\u3000]*[^\s。、※])")
# A parenthetical closing a sentence, split off to be read on its own.
_TRAILING_ASIDE = re.compile(r"\s*(?:\(([^()\n]{2,300})\)|（([^（）\n]{2,300})）)(?P<end>[。．.]?)\s*$")
_WHOLE_ASIDE = re.compile(r"^(?:\(([^()\n]{2,300})\)|（([^（）\n]{2,300})）)[。．.]?$")
# A bold title opening an item: "**Resume**: …", "**Option 1:** …".
_TITLE = re.compile(r"^\*\*(?P<title>[^*\n]{1,40}?)(?:\*\*\s*[:：]|[:：]\*\*)\s*(?=\S)")


# Kangxi and supplementary radicals that PDF text extraction gives for look-alike kanji
# (「表⽰」 for 「表示」): read as those kanji, so the rules' words match.
_RADICALS = {
    c: unicodedata.normalize("NFKC", chr(c))
    for c in (*range(0x2E80, 0x2EF4), *range(0x2F00, 0x2FD6))
    if unicodedata.normalize("NFKC", chr(c)) != chr(c)
}
_HAS_RADICAL = re.compile("[\u2e80-\u2ef3\u2f00-\u2fd5]")


def _light(text: str) -> str:
    """Text with link targets and tags dropped, spaces collapsed, emphasis and labels kept."""
    if _HAS_RADICAL.search(text):
        text = text.translate(_RADICALS)
    if "![" in text:
        text = _PICTURE.sub("", text)
    if "](" in text:
        text = _LINK.sub(r"\1", text)
    if "<" in text:
        text = _TAG.sub("", text)
    if "&" in text:
        text = html.unescape(text)
    if "\n" in text:
        text = _BREAK.sub("\n", text)
    if "\t" in text or "\u3000" in text or "  " in text:  # what _SPACE needs: two such characters
        text = _SPACE.sub(" ", text)
    return text.strip()


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
    if lexicon.step_words.not_condition.match(cond):
        return "", sentence
    if sentence[m.end() - 1] in ",:、，":  # the author marked where it ends
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


def _trailing_condition(clause: str, lexicon: Lexicon) -> tuple[str, str]:
    """Split ``(clause without it, condition)`` where a condition closes the clause ("… when prompted")."""
    m = lexicon.step_words.trailing_condition.search(clause)
    if m is None or m.start() == 0:
        return clause, ""
    return clause[: m.start()].rstrip(" ,"), m.group("cond").strip()


def lead_in_condition(text: str, lexicon: Lexicon) -> str:
    """Return the condition a list's lead-in sentence sets, or ``""``.

    ``"If the standard reset didn't work, use the hard-restart procedure:"`` gives
    ``"If the standard reset didn't work"``.
    """
    for sentence in split_sentences(plain_markup(text)):
        cond, _ = _condition(sentence, lexicon)
        if cond:
            return cond
    return ""


def opening_condition(text: str, lexicon: Lexicon) -> str:
    """Return the condition the first sentence of ``text`` opens with, or ``""``.

    ``"If the option is not shown, update the device first."`` gives
    ``"If the option is not shown"``; a paragraph whose condition comes later gives ``""``.
    """
    for sentence in split_sentences(plain_markup(text)):
        if sentence.strip():
            return _condition(sentence, lexicon)[0]
    return ""


@dataclass
class _Fields:
    """The fields of one step as they are found, sentence by sentence."""

    action: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    cautions: list[str] = field(default_factory=list)
    early_results: list[str] = field(default_factory=list)  # reports before any action
    fallback: str = ""  # the first sentence that is neither a note nor a report
    state: int = 0  # 0 before the action, 1 in it, 2 after it

    def condition(self, cond: str) -> None:
        if cond:
            self.conditions.append(cond)


def is_instruction(text: str, lexicon: Lexicon) -> bool:
    """Whether the sentence tells the reader to do something, in ``lexicon``'s terms (and states nothing)."""
    words = lexicon.step_words
    return words.instruction.search(text) is not None and words.statement.search(text) is None


def _is_report(text: str, lexicon: Lexicon) -> bool:
    """A sentence saying what the system does, not telling the reader to do something."""
    if lexicon.result.search(text) is None or lexicon.step_words.operates.search(text):
        return False
    # "Open Settings" holds "open": an English instruction is no report, whatever it holds.
    return not (lexicon.step_words.instruction_outranks_result and is_instruction(text, lexicon))


def _note(sentence: str, lexicon: Lexicon) -> str | None:
    """The caution a sentence opening a note gives (its marking label dropped), or ``None``."""
    m = lexicon.step_words.note_opener.match(sentence)
    if m is None:
        return None
    return sentence[m.end("label") :].strip() if m.group("label") else sentence.strip()


@dataclass(frozen=True, slots=True)
class _Parts:
    """One sentence taken apart.

    Its leading condition, the rest, the rest without a closing condition, and that
    closing condition.
    """

    sentence: str
    lead: str
    rest: str
    clause: str
    trailing: str
    set_off: bool  # the closing condition is set off by a comma ("…, if it is necessary")


def _parts(sentence: str, lexicon: Lexicon, *, opens_action: bool) -> _Parts:
    lead, rest = _condition(sentence, lexicon)
    if opens_action:  # a purpose clause before the action is not part of it
        purpose = lexicon.step_words.purpose.match(rest)
        if purpose is not None and purpose.end() < len(rest):
            rest = rest[purpose.end() :]
    clause, trailing = _trailing_condition(rest, lexicon) if not lead else (rest, "")
    set_off = bool(trailing) and "," in rest[len(clause) : rest.find(trailing, len(clause))]
    return _Parts(sentence.strip(), lead, rest, clause, trailing, set_off)


def _sentence(fields: _Fields, sentence: str, lexicon: Lexicon) -> None:
    """Read one sentence of a step into ``fields``."""
    if fields.state == 0:
        split = lexicon.step_words.act_then_result.match(sentence)
        if split is not None and _is_report(split.group("rest"), lexicon):
            lead, act = _condition(split.group("act"), lexicon)
            fields.condition(lead)
            fields.action.append(act)
            fields.results.append(split.group("rest"))
            fields.state = 2
            return
        _before_action(fields, _parts(sentence, lexicon, opens_action=True), lexicon)
        return
    parts = _parts(sentence, lexicon, opens_action=False)
    if fields.state == 1 and _continues(parts, lexicon):
        fields.action.append(parts.clause)
        if parts.trailing:
            fields.condition(parts.trailing)
            fields.state = 2
        return
    fields.state = 2
    if _is_report(parts.rest, lexicon):
        # A result keeps its lead ("After you remove the space, HoloLens starts…") unless
        # that lead is the step's first condition.
        if parts.lead and not fields.conditions:
            fields.condition(parts.lead)
            fields.results.append(parts.rest)
        else:
            fields.results.append(parts.sentence)
        return
    fields.condition(parts.lead)
    # "Select Done when the scan is complete", "The option is not there, if the device…".
    if parts.set_off or is_instruction(parts.rest, lexicon):
        fields.condition(parts.trailing)


def _before_action(fields: _Fields, parts: _Parts, lexicon: Lexicon) -> None:
    """A sentence before any action: a report, the action's first sentence, or neither."""
    if _is_report(parts.rest, lexicon):
        if fields.fallback:  # a statement, then what the system does: its result
            fields.condition(parts.lead)
            fields.results.append(parts.rest if parts.lead else parts.sentence)
        elif parts.lead:  # "Once enrolled, you should receive the app": a condition and its result
            fields.condition(parts.lead)
            fields.early_results.append(parts.rest)
        else:
            fields.condition(parts.trailing)
            fields.early_results.append(parts.sentence)
        return
    fields.condition(parts.lead)
    if is_instruction(parts.rest, lexicon):
        fields.condition(parts.trailing)
        fields.action.append(parts.clause)
        fields.state = 2 if parts.trailing else 1  # a condition ends the action
    elif not fields.fallback:
        fields.fallback = parts.rest


def _continues(parts: _Parts, lexicon: Lexicon) -> bool:
    """Whether a sentence right after the action is another instruction of it."""
    return (
        not parts.lead
        and is_instruction(parts.rest, lexicon)
        and not _is_report(parts.rest, lexicon)
        and not lexicon.step_words.modal.search(parts.rest)
        and lexicon.step_words.continuation.search(parts.rest) is not None
    )


def _aside(fields: _Fields, aside: str, lexicon: Lexicon) -> bool:
    """Read a parenthetical closing the action's last sentence; ``False`` when it belongs to the action."""
    lead, _ = _condition(aside, lexicon)
    if lead:
        fields.condition(lead)
        return True
    if _is_report(aside, lexicon) and not is_instruction(aside, lexicon):
        fields.results.append(aside)
        return True
    return False


def _split_notes(text: str) -> tuple[str, list[str]]:
    """The step's own text and the ※ notes written inside it (「…を行う ※メールアドレスで…」)."""
    if "※" not in text:
        return text, []
    pieces = _NOTE_MARK.split(text)
    if len(pieces) == 1:
        return text, []
    return pieces[0].strip(), [p.strip() for p in pieces[1:] if p.strip()]


def _sentence_with_aside(fields: _Fields, sentence: str, lexicon: Lexicon) -> None:
    """Read a sentence and the parenthetical closing it, if any.

    The parenthetical is left out when it is a reference, read as a condition or a
    result when it is one, and kept with the sentence otherwise.
    """
    aside = _TRAILING_ASIDE.search(sentence) if ")" in sentence or "）" in sentence else None
    if aside is None or aside.start() == 0:
        _sentence(fields, sentence, lexicon)
        return
    head = sentence[: aside.start()] + aside.group("end")
    reference = lexicon.step_words.aside_reference.search(sentence)
    before, fallback = list(fields.action), fields.fallback
    _sentence(fields, head, lexicon)
    if reference is not None and reference.start() == aside.start():
        return
    if _aside(fields, aside.group(1) or aside.group(2) or "", lexicon):
        return
    if fields.action != before:
        fields.action[-1] = fields.action[-1].rstrip("。．.") + sentence[aside.start() :]
    elif fields.fallback != fallback:
        fields.fallback = fields.fallback.rstrip("。．.") + sentence[aside.start() :]


def _read(text: str, lexicon: Lexicon) -> _Fields:
    """The fields of a step's text (notes split off, link targets dropped, labels kept)."""
    fields = _Fields()
    for raw in (s for line in text.split("\n") for s in split_sentences(line)):
        sentence = raw.strip()
        if not sentence:
            continue
        note = _note(sentence, lexicon)
        if note is not None:
            if note:
                fields.cautions.append(note)
            fields.state = max(fields.state, 2 if fields.action else 0)
            continue
        whole = _WHOLE_ASIDE.match(sentence)
        if whole is not None and fields.action:
            # A sentence that is all parenthetical is an aside: a condition or a result at
            # most, never more of the action ("(Look for a file that has the extension .ffu.)").
            _aside(fields, whole.group(1) or whole.group(2) or "", lexicon)
            fields.state = 2
            continue
        _sentence_with_aside(fields, sentence, lexicon)
    return fields


def parse_step(
    element: LayoutElement, lexicon: Lexicon, *, parent_number: str = "", extra_caution: str = ""
) -> ProcedureStep:
    """Parse one list item into a :class:`ProcedureStep`.

    Args:
        element: A list item (or a pseudo-item split from a paragraph).
        lexicon: The document's language rules.
        parent_number: Number of the enclosing step, for nested steps.
        extra_caution: Text of a note or caution bound to this step from outside it
            (a label opening it, ``Note:`` or ※, is dropped).

    Returns:
        The step, its fields read by the rules of the module docstring. A field the
        source states itself (the element's hints ``step_action``, ``step_result``,
        ``step_caution``, ``step_condition``: a procedure sheet's columns) is taken
        as given, and the text rules fill only the others.
    """
    given = {key.removeprefix("step_"): value for key, value in element.hints if key in _GIVEN_FIELDS}
    if given:
        return _given_step(
            element, given, parent_number=parent_number, extra_caution=extra_caution, lexicon=lexicon
        )
    body, notes = _split_notes(_light(element.text))
    title = ""
    m = _TITLE.match(body)
    if m is not None:
        title, body = m.group("title"), body[m.end() :]
    else:
        first, _, rest = body.partition("\n")
        if rest and _TITLE_LINE.match(first) and not lexicon.condition.match(first):
            title, body = first, rest
    fields = _read(body, lexicon)
    action = " ".join(fields.action)
    results = fields.results
    if not action:
        # A step that states something and reports what the system does has no action.
        action = "" if fields.early_results else fields.fallback
        if not action:
            results = [*fields.early_results, *results]
    if not action and not results and fields.cautions:
        action = fields.cautions.pop(0)
    cautions = [*fields.cautions, *notes]
    if extra_caution:
        cautions.append(unlabelled(extra_caution))
    return _step(
        element,
        parent_number,
        action=plain_markup(action),
        target=step_target(action, lexicon, title=title),
        condition=plain_markup(fields.conditions[0]) if fields.conditions else "",
        result=plain_markup(" ".join(results)),
        caution=plain_markup(" ".join(c for c in cautions if c)),
    )


def unlabelled(note: str) -> str:
    """A note's text without the label that opens it (``"Note: x"`` → ``"x"``, ``"※ x"`` → ``"x"``)."""
    label, rest = leading_label(note)
    return rest.strip() if label else note.strip()


#: Element hints that state a step's fields outright.
_GIVEN_FIELDS = frozenset({"step_action", "step_result", "step_caution", "step_condition"})


def _given_step(
    element: LayoutElement, given: dict[str, str], *, parent_number: str, extra_caution: str, lexicon: Lexicon
) -> ProcedureStep:
    """A step whose fields its source gives (see :func:`parse_step`); the target comes from the action."""
    action = given.get("action", "")
    cautions = [
        c for c in (given.get("caution", ""), unlabelled(extra_caution) if extra_caution else "") if c
    ]
    return _step(
        element,
        parent_number,
        action=action,
        target=step_target(action, lexicon) if action else "",
        condition=given.get("condition", ""),
        result=given.get("result", ""),
        caution=" ".join(cautions),
    )


#: Targets up to this many characters are interned by :func:`_step`.
_INTERNED_TARGET = 40


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
    """The step of ``element`` with these fields; number, text, depth and place come from the element.

    Equal strings are shared rather than held twice (the steps were a quarter of what a
    kept chunk list holds): an action that is the whole text is the text,
    and numbers and short targets (「1.」, 「OK」), which recur all through a manual,
    are interned.
    """
    text = element.text
    return ProcedureStep(
        number=sys.intern(element.number),
        text=text,
        action=text if action == text else action,
        target=sys.intern(target) if len(target) <= _INTERNED_TARGET else target,
        condition=condition,
        result=result,
        caution=caution,
        depth=element.level,
        parent_number=parent_number,
        element_id=element.element_id,
        page=element.page,
        bbox=element.bbox,
    )

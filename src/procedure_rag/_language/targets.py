"""A step's target: the UI element or object its action operates, as its label.

The rules follow the step-field annotation guide: the last element the action actually
operates (a menu path gives its last item), the first of alternatives ("Wi-Fi or your
ethernet connection"), the field typed into rather than the value typed, the label a
numbered item is titled with ("**Resume**: Restore…", 「サインアップ」 over 「このボタン」),
and always the label itself: no quotes, brackets, bold, determiners or generic suffix
(「複製ボタン」 → 「複製」, "Microsoft HoloLens tile" → "Microsoft HoloLens") unless the
label is only that word ("slider switch"). A step that only checks or waits has none.
The words are the lexicon's (:class:`~procedure_rag._language.step_words.StepWords`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from procedure_rag._language.lexicons import Lexicon, ui_nouns

__all__ = ["clean_label", "plain_markup", "step_target", "ui_targets"]

_MARKUP = re.compile(r"\*\*|__|`|\[(?=[^\]]*\]\()|\]\([^)]*\)|!\[|<[^>\n]{0,200}>")
# A character every match of _MARKUP holds: a text without any has no markup.
_MARKUP_CHARS = re.compile(r"[*_`\[\]<]")
_ASIDE = re.compile(r"\([^()\n]{0,300}\)|（[^（）\n]{0,300}）")
# Between the items of a menu path: "Settings > System", "A -> B", 「A ⇒ B」.
_PATH_SEP = re.compile(r"\s*(?:-{1,2}>|>|→|⇒|＞|\\\\?)\s*")
_PATH_JOIN = re.compile(r"^\s*(?:-{1,2}>|>|→|⇒|＞)\s*$")
_TRAILING_PAREN = re.compile(r"\s*(?:\([^()]*\)|（[^（）]*）)$")
_CLAUSE_BREAK = re.compile(r"[、，,。;]")
# A parenthetical between a label and the words that operate it (「「A」（B では「C」）をクリック」).
_SKIP_ASIDE = re.compile(r"\s*(?:\([^()\n]{0,80}\)|（[^（）\n]{0,80}）)")
_EDGE = " \t\u3000\"'“”‘’「」『』[]()（）【】*_:：,、.。"


def plain_markup(text: str) -> str:
    """Drop inline Markdown markup (emphasis marks, link targets, tags) and collapse spaces."""
    if _MARKUP_CHARS.search(text) is not None:
        text = _MARKUP.sub("", text)
    # What ``\s+`` matches is what str.split() splits at: runs of spaces become one.
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class _Mention:
    """A possible target: where it sits in the action, its label, what kind of mention it is."""

    start: int
    end: int
    label: str
    operated: bool
    aside: bool
    marked: bool  # quoted, bracketed or bold: the author marked it as a label


def clean_label(label: str, lexicon: Lexicon, *, marked: bool = False) -> str:
    """``label`` as a target: its last menu item, its first alternative, without generic suffix.

    ``"Settings > System"`` gives ``"System"``, ``"**Save** button"`` ``"Save"``,
    「複製ボタン」 「複製」; a label that is only the suffix stays (``"slider switch"``).
    """
    words = lexicon.step_words
    label = plain_markup(label)
    parts = [p for p in _PATH_SEP.split(label) if p.strip(_EDGE)]
    if len(parts) > 1 and not label.startswith(("http", "/")):
        label = parts[-1]
    label = words.alternative.split(label, maxsplit=1)[0]
    label = _TRAILING_PAREN.sub("", label)  # 「トークン (ghp_***)」
    label = label.strip(_EDGE)
    label = words.determiner.sub("", label).strip(_EDGE)
    label = words.modifier.sub("", label)
    suffix = words.marked_suffix if marked else words.generic_suffix
    bare = suffix.sub("", label).strip(_EDGE)
    if bare and bare != label and not words.generic_suffix.fullmatch(" " + bare):
        if words.place.search(bare):  # 「編集画面左上入力欄」 is the 入力欄
            return label[len(bare) :].strip(_EDGE + "の")
        label = words.determiner.sub("", bare).strip(_EDGE)
    return label


def _asides(text: str) -> tuple[list[int], list[int]]:
    starts: list[int] = []
    ends: list[int] = []
    for m in _ASIDE.finditer(text):
        starts.append(m.start())
        ends.append(m.end())
    return starts, ends


def _inside(asides: tuple[list[int], list[int]], position: int) -> bool:
    starts, ends = asides
    i = bisect_right(starts, position) - 1
    return i >= 0 and position < ends[i]


def _label_mentions(text: str, lexicon: Lexicon, asides: tuple[list[int], list[int]]) -> list[_Mention]:
    """The quoted, bracketed and bold labels of ``text``, a menu path joined into one mention."""
    found: list[tuple[int, int, str]] = []
    for m in lexicon.ui_label.finditer(text):
        label = next((g for g in m.groups() if g), "").strip()
        if label:
            found.append((m.start(), m.end(), label))
    # Labels joined by ">" are one menu path: its last item is what is operated.
    merged: list[tuple[int, int, str, int]] = []  # start, end, label, end of the path's first label
    for start, end, label in found:
        if merged and _PATH_JOIN.match(text[merged[-1][1] : start]):
            first = merged[-1]
            merged[-1] = (first[0], end, label, first[3])
        else:
            merged.append((start, end, label, end))
    out = []
    for start, end, label, _ in merged:
        before = text[max(0, start - 40) : start]
        skip = _SKIP_ASIDE.match(text, end)
        operated = bool(
            lexicon.operate_before.search(before)
            or lexicon.operate_after.match(text, end)
            or (skip is not None and lexicon.operate_after.match(text, skip.end()))
        )
        out.append(_Mention(start, end, label, operated, _inside(asides, start), marked=True))
    return out


def _object_mentions(text: str, lexicon: Lexicon, asides: tuple[list[int], list[int]]) -> list[_Mention]:
    """The objects the action's operating verbs take (「パスワードを入力」, "Enter your password")."""
    words = lexicon.step_words
    out: list[_Mention] = []
    if words.object_marker not in text:
        return out
    for m in words.object_np.finditer(text):
        start = m.start("np")
        np = m.group("np")
        while (last := np.rfind(" ")) > 0 and words.determiner.fullmatch(np[last + 1 :] + " "):
            np = np[:last]  # "hold the" is no object
        if np and not words.pronoun.match(np) and not words.determiner.fullmatch(np + " "):
            out.append(_Mention(start, start + len(np), np, True, _inside(asides, start), marked=False))
    return out


def _noun_mentions(text: str, lexicon: Lexicon, asides: tuple[list[int], list[int]]) -> list[_Mention]:
    """Noun phrases ending in a UI word ("the Save button", 「保存ボタン」)."""
    out = []
    for m in ui_nouns(lexicon, text):
        label = next((g for g in m.groupdict().values() if g), "").strip()
        if not label:
            continue
        start = m.start()
        before = text[max(0, start - 40) : start]
        operated = bool(lexicon.operate_before.search(before) or lexicon.operate_after.match(text, m.end()))
        out.append(_Mention(start, m.end(), label, operated, _inside(asides, start), marked=False))
    return out


def _mentions(text: str, lexicon: Lexicon) -> list[_Mention]:
    asides = _asides(text)
    labels = _label_mentions(text, lexicon, asides)
    objects = _object_mentions(text, lexicon, asides)
    # A label inside an operated object is operated ("select the **Settings** app",
    # 「「作成」ボタンをクリック」), and the object is that label.
    labels = [
        _Mention(lab.start, lab.end, lab.label, True, lab.aside, True)
        if not lab.operated and any(o.start <= lab.start and lab.end <= o.end for o in objects)
        else lab
        for lab in labels
    ]
    # "the **Volume Down** and **Power** buttons": a label joined to an operated one is operated.
    for i in range(1, len(labels)):
        prev, lab = labels[i - 1], labels[i]
        joined = lexicon.step_words.coordination.match(text[prev.end : lab.start])
        if prev.operated and not lab.operated and joined:
            labels[i] = _Mention(lab.start, lab.end, lab.label, True, lab.aside, True)
    # A phrase that overlaps a label, or starts right after it, is that label's
    # (「「独自ドメインを利用する」トグルボタン」 is the label's toggle).
    others = [
        m
        for m in (*objects, *_noun_mentions(text, lexicon, asides), *_path_mentions(text, lexicon, asides))
        if not any(
            (lab.start < m.end and m.start < lab.end)
            or (m.start >= lab.end and not text[lab.end : m.start].strip())
            for lab in labels
        )
    ]
    # Of overlapping unmarked mentions, the one that ends last (the longer path) stands.
    return sorted([*labels, *others], key=lambda m: (m.end, m.marked))


# A menu path written without markup: "Settings > Network & Internet > Wi-Fi", 「A -> B の」.
_PATH = re.compile(
    r"(?P<path>[^\s>、。,，(（)）]+(?:[ \u3000][^\s>、。,，(（)）]+){0,3}"
    r"(?:\s*(?:-{1,2}>|>|→|⇒)\s*[^\s>、。,，(（)）]+(?:[ \u3000][^\s>、。,，(（)）]+){0,3})+)"
)
# What every separator of such a path holds ("->" and "-->" end with ">").
_PATH_MARKS = (">", "→", "⇒")
# Where the last item of an unmarked path ends.
_PATH_END = re.compile(r",|\s(?:to|and|or|then|for)\s|\s*(?:を|に|の|から|で)")


def _path_mentions(text: str, lexicon: Lexicon, asides: tuple[list[int], list[int]]) -> list[_Mention]:
    """Menu paths written without markup; the mention is the path, cut where its last item ends."""
    out: list[_Mention] = []
    if not any(sep in text for sep in _PATH_MARKS):
        return out  # no separator, no path: _PATH would try every word of the text in vain
    for m in _PATH.finditer(text):
        start = m.start()
        path = m.group("path")
        first = min(
            (i for i in (path.find(">"), path.find("→"), path.find("⇒")) if i >= 0), default=len(path)
        )
        for space in [i for i, ch in enumerate(path[:first]) if ch == " "]:
            if lexicon.operate_before.search(text[: start + space + 1]):
                path, start = path[space + 1 :], start + space + 1  # "select Settings > …": from Settings
        last_sep = max(path.rfind(">"), path.rfind("→"), path.rfind("⇒"))
        cut = _PATH_END.search(path, last_sep + 1)
        end = start + (cut.start() if cut else len(path))
        before = text[max(0, start - 40) : start]
        operated = bool(lexicon.operate_before.search(before) or lexicon.operate_after.match(text, end))
        out.append(_Mention(start, end, text[start:end], operated, _inside(asides, start), marked=False))
    return out


def ui_targets(text: str, lexicon: Lexicon) -> list[str]:
    """Every UI element or object ``text`` names, the one :func:`step_target` picks first."""
    chosen = step_target(text, lexicon)
    rest = [clean_label(m.label, lexicon, marked=m.marked) for m in _mentions(text, lexicon)]
    return list(dict.fromkeys(label for label in (chosen, *rest) if label))


def step_target(action: str, lexicon: Lexicon, *, title: str = "") -> str:
    """The target of a step whose action is ``action`` (inline markup kept), or ``""``.

    Args:
        action: The action's text, with its quotes, brackets and bold.
        lexicon: The document's language rules.
        title: The label the step is titled with (``"**Resume**: …"``), if any: it
            names the element the step is about.

    Returns:
        The label (see the module docstring).
    """
    words = lexicon.step_words
    if title and not words.generic_label.match(plain_markup(title)):
        label = clean_label(title, lexicon)
        if label:
            return label
    mentions = _mentions(action, lexicon)
    plain = plain_markup(action)
    for pool in (
        [m for m in mentions if m.operated and not m.aside],
        [m for m in mentions if m.operated],
    ):
        if pool:
            last = max(pool, key=lambda m: (m.end, m.marked, -m.start))  # the last; of two, the longer
            chosen = _typed_into(action, last, mentions, lexicon) or last
            label = clean_label(chosen.label, lexicon, marked=chosen.marked)
            if label:
                return label
    named = field_target(plain, lexicon)
    if named:
        return named
    if words.state_check.search(plain):
        return ""  # "Make sure Wi-Fi is on": nothing is operated
    unoperated = [m for m in mentions if m.marked and not m.aside] or [m for m in mentions if not m.aside]
    return clean_label(unoperated[0].label, lexicon, marked=unoperated[0].marked) if unoperated else ""


def _typed_into(action: str, typed: _Mention, mentions: list[_Mention], lexicon: Lexicon) -> _Mention | None:
    """The field ``typed`` is typed into, when it is typed data and a field is named.

    Typed data is the target only when no field is named ("Enter your password"): a
    field word in a mention, or right after it ("the **Feedback** search box", 「入力欄」).
    """
    words = lexicon.step_words
    verbs = list(words.input_verb.finditer(action))
    # Right after the verb ("enter **X**", "enter your password") or right before it (「名前を入力」).
    if not any(
        (0 <= typed.start - v.end() <= 6 and not _CLAUSE_BREAK.search(action, v.end(), typed.start))
        or 0 <= v.start() - typed.end <= 3
        for v in verbs
    ):
        return None
    fields = [
        m
        for m in mentions
        if m is not typed
        and (words.input_field.search(m.label) or words.input_field.search(action, m.end, m.end + 15))
    ]
    return fields[-1] if fields else None


def field_target(plain: str, lexicon: Lexicon) -> str:
    """The field of a step that is a field and its value (「チャネル名： 任意のチャネル名」), or ``""``."""
    words = lexicon.step_words
    m = words.field_label.match(plain)
    if m is None or words.instruction.search(m.group("label")):  # "Navigate to: …" names no field
        return ""
    return clean_label(m.group("label"), lexicon)

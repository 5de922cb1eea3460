"""Words that the rules know, Japanese and English side by side.

Each language is one :class:`Lexicon` value. Nothing else in the package
branches on the language: stages take a lexicon and apply its patterns.
Users who need other words build their own ``Lexicon`` with
:func:`dataclasses.replace`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from procedure_rag._language.sentences import split_sentences
from procedure_rag._language.step_words import (
    EN_ACTION_VERB,
    EN_CONDITION,
    EN_OPERATE_BEFORE,
    EN_RESULT,
    ENGLISH_STEP_WORDS,
    JA_CONDITION,
    JA_OPERATE_AFTER,
    JA_RESULT,
    JAPANESE_STEP_WORDS,
    NO_STEP_WORDS,
    StepWords,
)

__all__ = [
    "ENGLISH",
    "JAPANESE",
    "LANGUAGE_SAMPLE",
    "LEXICONS",
    "Lexicon",
    "by_language",
    "detect_language",
    "split_sentences",
    "ui_nouns",
]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Lexicon:
    """The language-specific rules of the chunker, as data.

    Attributes:
        language: ISO 639-1 code.
        section_label: Label for the heading path line of a chunk.
        condition_label / caution_label / result_label / target_label: Labels
            used when a step's fields are rendered.
        continued_label: Marks a chunk that continues a split list or step.
        condition: Clause at the start of a sentence that states a condition; group
            ``cond`` is the condition, with the particle that closes it (「〜場合は」).
        caution: Sentence that warns (matched anywhere in the sentence).
        caution_labels: Admonition and note labels that mark a caution block.
        result: Sentence that states what happens after a step.
        lead_in: Sentence before a list that introduces it.
        ui_label: Quoted or bracketed UI labels; group ``label``.
        ui_noun: A noun phrase naming a UI element; group ``label`` is the whole phrase.
        operate_before: Words that operate the label right after them ("select", "click").
        operate_after: Words that operate the label right before them (「を選択」「をクリック」).
        action_verb: Imperative verbs a step's action starts with, for finding where a
            condition without a comma ends ("If prompted type it" → "If prompted").
        step_words: The rest of the rules that parse a step into its fields (purpose
            clauses, inline notes, instructions, objects, generic UI words…; see
            :class:`~procedure_rag._language.step_words.StepWords`).
    """

    language: str
    section_label: str
    condition_label: str
    caution_label: str
    result_label: str
    target_label: str
    continued_label: str
    condition: re.Pattern[str]
    caution: re.Pattern[str]
    caution_labels: frozenset[str]
    result: re.Pattern[str]
    lead_in: re.Pattern[str]
    ui_label: re.Pattern[str]
    ui_noun: re.Pattern[str]
    operate_before: re.Pattern[str] = re.compile(r"(?!)")
    operate_after: re.Pattern[str] = re.compile(r"(?!)")
    action_verb: re.Pattern[str] = re.compile(r"(?!)")
    step_words: StepWords = NO_STEP_WORDS


_UI_LABEL = re.compile(
    r"「(?P<l1>[^」\n]{1,60})」"
    r"|\*\*\[?(?P<l2>[^*\]\n]{1,60}?)\]?\*\*"
    r"|\[(?P<l3>[^\[\]\n]{1,60})\](?![(\[:])"
    r"|:(?:kbd|menuselection|guilabel):`(?P<l4>[^`\n]{1,60})`"
    r"|『(?P<l5>[^』\n]{1,60})』"
    r"|“(?P<l6>[^”\n]{1,60})”"
    # A code span names a label only when a UI word follows it (`Google で登録` ボタン).
    r"|`(?P<l7>[^`\n]{1,40})`(?=\s?(?:ボタン|タブ|メニュー|アイコン|リンク|キー|button|tab|menu|icon|link|key))"
)

# The UI words a ``ui_noun`` match ends with; a text without any of them has no match.
_JA_UI_WORDS = (
    "ボタン|欄|画面|タブ|メニュー|チェックボックス|ダイアログ|"
    "アイコン|リンク|ウィンドウ|ページ|フィールド|プルダウン|ラジオボタン|スイッチ"
)
_EN_UI_WORDS = (
    "button|field|screen|tab|menu|checkbox|check box|dialog box|dialog|textbox|text box|"
    "page|pane|link|icon|window|toggle|switch|tile|folder"
)

JAPANESE = Lexicon(
    language="ja",
    section_label="関連見出し",
    condition_label="条件",
    caution_label="注意",
    result_label="結果",
    target_label="操作対象",
    continued_label="（続き）",
    condition=JA_CONDITION,
    caution=re.compile(
        r"^[\s>]*(?:※|注意|ご注意|ただし|但し|重要|警告|注[:：)）])"
        r"|注意(?:して|が必要)|ないでください|ご注意|できません|必ず"
    ),
    caution_labels=frozenset(
        {
            "注意",
            "重要",
            "警告",
            "注",
            "ヒント",
            "メモ",
            "補足",
            "ポイント",
            "caution",
            "warning",
            "important",
            "note",
            "tip",
        }
    ),
    result=JA_RESULT,
    lead_in=re.compile(
        r"(?:次の|以下の|下記の|次に示す)(?:手順|操作|方法|とおり|通り|ように|ステップ|項目)"
        r"|手順(?:は|を|で)|次のように|[:：]\s*$"
        # "〜するには、…" (in order to …) opens most Japanese procedures.
        r"|^[^。]{1,80}(?:するには|ためには)[、，,]"
    ),
    ui_label=_UI_LABEL,
    ui_noun=re.compile(
        # The phrase runs back to a particle (に, の, を…) or punctuation, not across it.
        rf"(?P<label>[^\sをにのでがはへともや、。，．「」『』()（）\[\]:：]{{1,30}}?\s?(?:{_JA_UI_WORDS}))"
        # A button named by what it does: 「元に戻すボタン」.
        r"|(?<![^\s、。，．「」『』()（）])(?P<verb_label>[^\s、。，．「」『』()（）\[\]:：]{1,12}?[うくすつぬぶむる]\s?(?:ボタン|アイコン|リンク))"
    ),
    operate_after=JA_OPERATE_AFTER,
    step_words=JAPANESE_STEP_WORDS,
)

ENGLISH = Lexicon(
    language="en",
    section_label="Section",
    condition_label="Condition",
    caution_label="Caution",
    result_label="Result",
    target_label="Target",
    continued_label="(continued)",
    condition=EN_CONDITION,
    caution=re.compile(
        r"^[\s>]*(?:Note|Important|Caution|Warning|Tip|Notice)\b"
        r"|\b(?:be careful|do not|never|must not|cannot be undone|at your own risk)\b",
        re.IGNORECASE,
    ),
    caution_labels=frozenset({"note", "important", "caution", "warning", "tip", "notice", "danger"}),
    result=EN_RESULT,
    lead_in=re.compile(
        r"\b(?:following|these steps|the steps|as follows|this procedure|the procedure)\b|:\s*$"
        # "To reset the device, …" (in order to …) opens many English procedures.
        r"|^To\s+[a-z]+\b[^.]{0,120},",
        re.IGNORECASE,
    ),
    ui_label=_UI_LABEL,
    ui_noun=re.compile(
        # "the sign in screen", "the Save button", "Settings tab": after a determiner any
        # words, otherwise capitalised ones.
        rf"(?:\b(?:the|a|an|your)\s+(?P<label>(?:[\w&'-]+\s){{0,3}}?(?:{_EN_UI_WORDS}))\b)"
        rf"|(?P<label2>(?:[A-Z][\w&'-]*\s){{1,4}}(?:{_EN_UI_WORDS}))\b"
    ),
    operate_before=EN_OPERATE_BEFORE,
    action_verb=EN_ACTION_VERB,
    step_words=ENGLISH_STEP_WORDS,
)

#: The built-in lexicons by language code.
LEXICONS: dict[str, Lexicon] = {"ja": JAPANESE, "en": ENGLISH}


def by_language(table: Mapping[str, _T], language: str) -> _T:
    """The entry of ``table`` for ``language``; English (``"en"``) for a language it lacks.

    The wording tables of the representations and prompts are read through this, so
    that an unknown language falls back the same way in each.
    """
    return table.get(language, table["en"])


#: For the built-in ``ui_noun`` patterns: a cheap pattern that every match of theirs
#: contains, so that texts without a UI word skip the costly scan. Keyed by the pattern
#: itself, so a lexicon with another ``ui_noun`` (``dataclasses.replace``) has none.
_UI_NOUN_PREFILTERS: dict[re.Pattern[str], re.Pattern[str]] = {
    JAPANESE.ui_noun: re.compile(_JA_UI_WORDS),
    ENGLISH.ui_noun: re.compile(_EN_UI_WORDS),
}


def ui_nouns(lexicon: Lexicon, text: str) -> Iterator[re.Match[str]]:
    """``lexicon.ui_noun.finditer(text)``, skipped when ``text`` has no UI word at all."""
    prefilter = _UI_NOUN_PREFILTERS.get(lexicon.ui_noun)
    if prefilter is not None and prefilter.search(text) is None:
        return iter(())
    return lexicon.ui_noun.finditer(text)


# Runs, not single characters: one string per run instead of one per letter.
_JA_CHARS = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uff66-\uff9f]+")
_LETTERS = re.compile(r"[A-Za-z\u3040-\u30ff\u4e00-\u9fff\uff66-\uff9f]+")


#: How much of a text's start :func:`detect_language` reads.
LANGUAGE_SAMPLE = 4_000


def detect_language(text: str, *, sample: int = LANGUAGE_SAMPLE) -> str:
    """Return ``"ja"`` when Japanese script is a real share of the letters, else ``"en"``.

    Japanese manuals are full of English product and UI names, so the threshold is
    low: one letter in ten being kana or kanji is already a Japanese page.
    """
    head = text[:sample]
    if head.isascii():  # no kana or kanji: English, without scanning the letters
        return "en"
    letters = sum(map(len, _LETTERS.findall(head)))
    if letters == 0:
        return "en"
    return "ja" if sum(map(len, _JA_CHARS.findall(head))) * 10 >= letters else "en"

"""Japanese question forms: how a heading, a step field or a sentence becomes a question.

Verbs are found with SudachiPy (their dictionary form makes "…を押します。" -> "…を押す"),
and a noun that takes する (サ変) makes a task out of a heading such as "地域情報の登録".
"""

from __future__ import annotations

import re

from procedure_rag._language.lexicons import JAPANESE
from procedure_rag._language.words import japanese_tokenizer
from procedure_rag._representations.offline.question_words import (
    QuestionWords,
    Task,
    clean_heading,
    strip_trailing,
)

__all__ = ["JAPANESE_QUESTIONS"]

_TASK_SUFFIX = re.compile(r"(?:の)?(?:手順|方法|やり方|仕方|操作)$")
_POLITE_END = re.compile(r"(?:してください|ください|します|しましょう|する)$")


def _plain_form(text: str) -> str:
    """Text ending in its last verb's dictionary form ("…を押します。" -> "…を押す"), or ""."""
    text = strip_trailing(text)
    last = None
    for m in japanese_tokenizer().tokenize(text):
        pos = m.part_of_speech()
        if pos[0] == "動詞" and (pos[1] != "非自立可能" or m.normalized_form() in ("為る", "出来る")):
            last = m
    if last is None or len(text) - last.end() > 12:
        return ""
    return text[: last.begin()] + str(last.dictionary_form())


def _is_sahen(noun: str) -> bool:
    morphemes = list(japanese_tokenizer().tokenize(noun))
    return bool(morphemes) and "サ変可能" in morphemes[-1].part_of_speech()


def _task(heading: str) -> Task:
    text = clean_heading(heading)
    stripped = _TASK_SUFFIX.sub("", text).strip()
    if stripped != text:  # "ハード再起動の手順": a noun phrase naming a procedure
        verb = stripped + "する" if "の" not in stripped and _is_sahen(stripped) else ""
        return Task(verb=verb, noun=stripped or text)
    verb = _plain_form(text)
    if verb:
        return Task(verb=verb, noun="")
    head, sep, tail = text.rpartition("の")
    if sep and head and tail and " " not in tail and _is_sahen(tail):  # "地域情報の登録"
        return Task(verb=f"{head}を{tail}する", noun="")
    return Task(verb="", noun=text)


_CONDITION = (
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
_VAGUE_CONDITION = re.compile(
    r"^(?:次|以下|下記|その|この|それ|これ)(?:の)?(?:場合|とき)$|^.{0,3}$|^(?:可能であれば|必要に応じて)$"
)


# The particle that closes a condition clause (「〜場合は」): the question adds its own.
_CLOSING_PARTICLE = re.compile(r"(?:(?<=場合)|(?<=とき)|(?<=時)|(?<=際))(?:には|では|でも|は|も)$")


def _condition(condition: str, *, happens: bool) -> str:
    condition = _CLOSING_PARTICLE.sub("", condition.strip("、， "))
    if _VAGUE_CONDITION.match(condition):
        return ""
    for pattern, do, happen in _CONDITION:
        if pattern.search(condition):
            return (happen if happens else do).format(condition=condition)
    return ""


def _result(action: str) -> str:
    plain = _plain_form(action)
    return f"{plain}とどうなりますか？" if plain else ""


_STATEMENT = re.compile(r"(?:でき|あり)ます[。．]?$")


def _sentence(sentence: str) -> str:
    sentence = sentence.strip()
    if not 8 <= len(sentence) <= 80 or JAPANESE.caution.search(sentence):
        return ""
    if _STATEMENT.search(sentence):
        return strip_trailing(sentence) + "か？"
    return ""


def _target_form(target: str, text: str) -> str:
    labelled = any(w in text for w in (f"[{target}]", f"「{target}」", f"**{target}**"))
    label = f"[{target}]" if labelled else target
    suffix = re.search(re.escape(target) + r"[\]」*]*\s?(ボタン|タブ|キー|アイコン|メニュー)", text)
    if suffix and not target.endswith(suffix.group(1)):
        return f"{label} {suffix.group(1)}"
    return label if labelled else ""


JAPANESE_QUESTIONS = QuestionWords(
    task=_task,
    direct=lambda heading: heading if heading.endswith(("？", "?")) else "",
    how_verb="{verb}には？",
    how_noun="{noun}の手順は？",
    about_noun="{noun}について教えてください。",
    condition=lambda c: _condition(c, happens=False),
    outcome=lambda c: _condition(c, happens=True),
    target=(
        (re.compile(r"選択|クリック|タップ|オンに|オフに|チェック"), "{target}はどこで選択しますか？"),
        (re.compile(r"押"), "{target}はいつ押しますか？"),
        (re.compile(r"開"), "{target}はどうやって開きますか？"),
        (re.compile(r"入力|設定|変更"), "{target}には何を設定しますか？"),
    ),
    target_form=_target_form,
    verb_after_target=True,
    result=_result,
    caution_verb="{verb}ときの注意点は？",
    caution_noun="{noun}の注意点は？",
    sentence=_sentence,
    generic_verb=("{verb}方法は？", "{verb}前に確認することは？", "{verb}ときの注意点は？"),
    generic_noun=("{noun}とは何ですか？", "{noun}の手順は？", "{noun}で注意することは？"),
    generic_headings=frozenset({"概要", "はじめに", "前提条件", "注意事項", "関連項目", "次の手順", "要件"}),
    join_parent="{parent}の{noun}",
    fallback_noun="この文書",
    imperative=lambda action: (
        bool(_POLITE_END.search(strip_trailing(action))) and not JAPANESE.result.search(action)
    ),
)

"""The offline generator over real chunks: every default kind, stable ids, and speed."""

from __future__ import annotations

import re
import time
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from procedure_rag import Chunk, ChunkerOptions, ChunkType, chunk
from procedure_rag._language.words import japanese_tokenizer
from procedure_rag._metadata import chunk_from_metadata, chunk_metadata
from procedure_rag._representations.offline.generator import (
    DeterministicGenerator,
    generate_representations,
    iter_representations,
)
from procedure_rag._representations.offline.sentences import (
    MIN_SENTENCE_CHARS,
    paragraphs,
    sentence_texts,
    sentences_cover,
)
from procedure_rag._representations.offline.steps import SECTION_LEVELS, step_texts
from procedure_rag._representations.offline.summary import body_text
from procedure_rag._representations.types import (
    DEFAULT_KINDS,
    OFFLINE_KINDS,
    OFFLINE_STEP_KINDS,
    SENTENCE_LANGUAGES,
    RepresentationKind,
    kinds_for,
    offline_kinds,
)

DATA = Path(__file__).resolve().parent / "data"
K = RepresentationKind

SOURCES = [
    *sorted(str(p.relative_to(DATA)) for p in (DATA / "hololens").glob("*/*.md")),
    "ja-native/areamanagement-dashboard-tool/markdown/manual/userMan.md",
    "ja-native/areamanagement-dashboard-tool/_license_evidence/README.md",
    "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md",
    "emanual/galaxy-s10-sections-57-65.txt",
    "emanual/samsung-tv-sections-10-28.txt",
]


@cache
def _chunks(relative: str) -> tuple[Chunk, ...]:
    return tuple(chunk((DATA / relative).read_text(encoding="utf-8"), source_id=relative))


@pytest.mark.parametrize("table", ["offline", "model"])
@pytest.mark.parametrize("relative", SOURCES)
def test_every_default_kind_is_produced(relative: str, table: str) -> None:
    # Its own defaults, and a model's (questions and summaries too), asked for by table.
    kinds = OFFLINE_KINDS if table == "offline" else DEFAULT_KINDS
    generator = (
        DeterministicGenerator() if table == "offline" else DeterministicGenerator(defaults=DEFAULT_KINDS)
    )
    made = Counter(r.kind for c in _chunks(relative) for r in generator.generate(c))
    if table == "offline" and relative.startswith(("hololens/ja/", "ja-native/")):
        assert made[K.SENTENCE] == 0  # Japanese text keeps its raw vector
    if table == "offline" and relative.startswith("emanual/"):
        assert made[K.SENTENCE] > made[K.RAW] > 0  # English prose, searched by its sentences
    for c in _chunks(relative):
        reps = generator.generate(c)
        assert {r.chunk_id for r in reps} == {c.chunk_id}
        expected = set(kinds_for(c.chunk_type, defaults=kinds))
        if K.SENTENCE in expected and not (c.language in SENTENCE_LANGUAGES and sentences_cover(c)):
            expected = (expected - {K.SENTENCE}) | {K.RAW}  # its raw vector in their place
        assert expected <= {r.kind for r in reps}, (
            c.chunk_type,
            c.section_path,
        )
        assert all(r.text.strip() and r.generator == "deterministic" and not r.fallback for r in reps)
        per_kind = Counter(r.kind for r in reps)
        for kind, count in per_kind.items():
            assert sorted(r.index for r in reps if r.kind is kind) == list(range(count))
        raw = [r for r in reps if r.kind is K.RAW]
        assert all(r.text == c.text for r in raw)


@pytest.mark.parametrize(
    ("relative", "contains", "kind"),
    [
        ("hololens/en/hololens-recovery.md", "dism /online", K.CODE_DOCSTRING),
        (
            "hololens/en/hololens-recovery.md",
            "![HoloLens 2 MicrosoftHoloLensRecovery device manager.]",
            K.IMAGE_CAPTION,
        ),
        (
            "hololens/ja/hololens-recovery.md",
            "![HoloLens 2 MicrosoftHoloLensRecovery デバイス",
            K.IMAGE_CAPTION,
        ),
    ],
)
def test_procedures_get_kinds_for_what_they_hold(
    relative: str, contains: str, kind: RepresentationKind
) -> None:
    # With a model's table only: offline, descriptions of what a chunk holds changed no figure.
    procedure = next(
        c for c in _chunks(relative) if c.chunk_type is ChunkType.PROCEDURE and contains in c.text
    )
    assert kind not in kinds_for(ChunkType.PROCEDURE)
    assert kind in {r.kind for r in DeterministicGenerator(defaults=DEFAULT_KINDS).generate(procedure)}
    assert kind not in {r.kind for r in DeterministicGenerator().generate(procedure)}
    # A table of one's own made from the model's keeps them only when it says so.
    own = {**DEFAULT_KINDS, ChunkType.TEXT: (K.RAW,)}
    assert kind not in {r.kind for r in DeterministicGenerator(defaults=own).generate(procedure)}
    asked = DeterministicGenerator(defaults=own, content_kinds=True)
    assert kind in {r.kind for r in asked.generate(procedure)}
    # ... and the offline table gets them when asked, or the model's table loses them when told.
    assert kind in {r.kind for r in DeterministicGenerator(content_kinds=True).generate(procedure)}
    told = DeterministicGenerator(defaults=DEFAULT_KINDS, content_kinds=False)
    assert kind not in {r.kind for r in told.generate(procedure)}


def test_content_kinds_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="content_kinds must be a bool or None, got str"):
        DeterministicGenerator(content_kinds="yes")  # type: ignore[arg-type]


def test_offline_chunks_are_searched_by_their_own_text() -> None:
    # Summaries, docstrings and captions beside the raw text changed no figure of any dev
    # set: offline, a table or code chunk gets its raw text alone, and a procedure holding a
    # table, a command or a screenshot gets its raw text and keywords; a picture chunk keeps
    # its caption beside its raw text.
    chunks = [c for relative in SOURCES for c in _chunks(relative)]
    tables = [c for c in chunks if c.chunk_type is ChunkType.TABLE]
    code = [c for c in chunks if c.chunk_type is ChunkType.CODE]
    holding = [
        c
        for c in chunks
        if c.chunk_type is ChunkType.PROCEDURE and ("dism /online" in c.text or "![" in c.text)
    ]
    assert tables
    assert code
    assert holding
    made = generate_representations([*tables, *code, *holding])
    assert {r.kind for r in made} == {K.RAW, K.KEYWORDS}
    assert {r.chunk_id for r in made if r.kind is K.RAW} == {c.chunk_id for c in [*tables, *code, *holding]}
    # A model's table keeps them, and the deterministic generator makes them when asked.
    every = generate_representations([*tables, *code, *holding], defaults=DEFAULT_KINDS)
    assert {K.TABLE_SUMMARY, K.CODE_DOCSTRING, K.IMAGE_CAPTION} <= {r.kind for r in every}


def test_ids_are_stable_and_unique() -> None:
    chunks = _chunks("hololens/ja/hololens-recovery.md")
    first = [r.representation_id for r in generate_representations(chunks)]
    again = [r.representation_id for r in iter_representations(list(chunks))]
    assert first == again
    assert len(set(first)) == len(first)


def test_explicit_kinds() -> None:
    c = _chunks("hololens/en/hololens-recovery.md")[0]
    reps = DeterministicGenerator().generate(c, [K.SUMMARY, K.TABLE_SUMMARY, K.SUMMARY])
    assert [r.kind for r in reps] == [K.SUMMARY]  # no table in it; the repeat is dropped


def test_offline_defaults_are_raw_and_keywords_for_procedures() -> None:
    chunks = _chunks("hololens/en/hololens-recovery.md")
    by_type: dict[ChunkType, set[RepresentationKind]] = {}
    for c in chunks:
        by_type.setdefault(c.chunk_type, set()).update(r.kind for r in DeterministicGenerator().generate(c))
    assert by_type[ChunkType.PROCEDURE] >= {K.RAW, K.KEYWORDS}
    assert not (by_type[ChunkType.PROCEDURE] | by_type[ChunkType.TEXT]) & {K.QUESTION, K.SUMMARY}
    assert K.KEYWORDS not in by_type[ChunkType.TEXT]


def test_kinds_override_per_type() -> None:
    chunks = _chunks("hololens/en/hololens-recovery.md")
    reps = generate_representations(chunks, kinds={ChunkType.PROCEDURE: (K.RAW,)})
    procedure_ids = {c.chunk_id for c in chunks if c.chunk_type is ChunkType.PROCEDURE}
    assert {r.kind for r in reps if r.chunk_id in procedure_ids} == {K.RAW}


#: The first line of a step text of the recovery pages' hard restart: its three headings.
EN_HARD_RESTART = "Restart, reset, or recover HoloLens 2 > Restart the device > Hard-restart procedure\n"
JA_HARD_RESTART = (
    "HoloLens 2 を再起動、リセット、または回復する > デバイスを再起動します > ハード再起動の手順\n"
)


@pytest.mark.parametrize(
    ("relative", "section", "expected"),
    [
        (
            "hololens/en/hololens-recovery.md",
            "Hard-restart procedure",
            [
                EN_HARD_RESTART
                + "Unplug the Type-C cable to disconnect the device from the power supply or the host PC.",
                EN_HARD_RESTART + "Hold down the volume down + power buttons for 15 seconds.",
                EN_HARD_RESTART + "Connect the device to the host PC.",
                EN_HARD_RESTART + "for Windows 10 Open Device Manager. Make sure the device "
                "enumerates correctly as *Microsoft HoloLens* as shown in the following image:",
            ],
        ),
        (
            "hololens/ja/hololens-recovery.md",
            "ハード再起動の手順",
            [
                JA_HARD_RESTART + "Type-C ケーブルを抜いて、デバイスを電源またはホスト PC から切断します。",
                JA_HARD_RESTART + "[ボリューム ダウン] ボタン + [電源] ボタンを 15 秒間押したままにします。",
                JA_HARD_RESTART + "デバイスをホスト PC に接続します。",
                JA_HARD_RESTART + "Windows 10 の場合はデバイス マネージャーを開きます。",
            ],
        ),
        (
            "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md",
            "グループの作成",
            [
                "グループ管理 > グループの作成\n管理メニューの「グループ管理」に移動します。",
                "グループ管理 > グループの作成\n「新規グループの作成」ボタンをクリックします。",
                "グループ管理 > グループの作成\n"
                "「グループ名」と「説明」を記入して、「Create」ボタンをクリックします。",
            ],
        ),
    ],
)
def test_step_kind_gives_each_step_its_section_and_action(
    relative: str, section: str, expected: list[str]
) -> None:
    # The page's own steps: the three innermost headings, then the step's condition and
    # instruction (its markup, result sentence and aside left out).
    children = [c for c in _chunks(relative) if c.level.value == "child"]
    held = [c for c in children if c.section_path[-1] == section and c.chunk_type is ChunkType.PROCEDURE]
    reps = [r for c in held for r in DeterministicGenerator().generate(c, [K.STEP])]
    assert [r.text for r in reps] == expected
    assert all(r.kind is K.STEP for r in reps)
    for c in children:
        # Per chunk, its own ids and indexes; the same texts from the chunk a store gives
        # back (its metadata keeps the actions, not the steps' raw text).
        mine = DeterministicGenerator().generate(c, [K.STEP])
        assert {r.chunk_id for r in mine} <= {c.chunk_id}
        assert [r.index for r in mine] == list(range(len(mine)))
        back = chunk_from_metadata(c.text, chunk_metadata(c))
        assert [r.text for r in DeterministicGenerator().generate(back, [K.STEP])] == [r.text for r in mine]
    # Opt-in: in no default table; OFFLINE_STEP_KINDS adds it to procedures only.
    assert all(K.STEP not in kinds for kinds in (*OFFLINE_KINDS.values(), *DEFAULT_KINDS.values()))
    made = generate_representations(children, defaults=OFFLINE_STEP_KINDS)
    stepped = {r.chunk_id for r in made if r.kind is K.STEP}
    assert stepped >= {c.chunk_id for c in held}
    assert stepped <= {c.chunk_id for c in children if c.chunk_type is ChunkType.PROCEDURE}


def test_a_step_repeated_above_a_part_gets_no_vector_of_its_own() -> None:
    # The Japanese recovery page's long lists are cut into parts, and a part that opens
    # inside a step repeats that step: each step of the page gets one vector, in its own part.
    children = [c for c in _chunks("hololens/ja/hololens-recovery.md") if c.level.value == "child"]
    assert any(s.is_continuation for c in children for s in c.steps)
    steps = {s.element_id for c in children for s in c.steps if s.action.strip()}
    reps = [r for c in children for r in DeterministicGenerator().generate(c, [K.STEP])]
    assert len(reps) == len(steps)


def test_throughput_on_hololens_ja(record_property: pytest.RecordProperty) -> None:
    """Recorded, not asserted: wall-clock limits make flaky tests."""
    chunks = [c for p in SOURCES if p.startswith("hololens/ja/") for c in _chunks(p)]
    japanese_tokenizer()  # the dictionary loads once per process; measure the steady state
    start = time.perf_counter()
    reps = generate_representations(chunks)
    elapsed = time.perf_counter() - start
    rate = len(chunks) / elapsed if elapsed else float("inf")
    record_property("chunks_per_second", round(rate))
    print(f"deterministic representations: {len(chunks)} ja chunks, {len(reps)} reps, {rate:.0f} chunks/s")  # noqa: T201
    assert reps


def test_sentence_kind_gives_each_sentence_of_a_pdf_text_chunk_its_section() -> None:
    # E-Manual's text comes from a PDF: lines are wrapped mid-sentence and the menu path is a
    # run of short lines. Each text is the section's headings and one sentence of 120
    # characters or more, the wrapped lines joined again; a shorter one goes on with the next.
    children = [c for c in _chunks("emanual/samsung-tv-sections-10-28.txt") if c.level.value == "child"]
    held = [c for c in children if c.section_path[-1] == "Updating through a USB device"]
    reps = [r for c in held for r in DeterministicGenerator().generate(c, [K.SENTENCE])]
    head = "Updating the TV's software to the latest version > Updating through a USB device\n"
    assert [r.text for r in reps] == [
        head + "Settings > Support > Software Update > Update Now After downloading the update file "
        "from the Samsung website and storing it on a USB device, "
        "connect the USB device to the TV to update.",
        head + "To update using a USB flash drive, download the update package from Samsung.com to your "
        "computer. Then, save the update package in the USB device's top-level folder. "
        "Otherwise, the TV will not be able to locate the update package.",
    ]
    assert all(r.kind is K.SENTENCE for r in reps)


@pytest.mark.parametrize("relative", SOURCES)
def test_sentence_texts_hold_a_text_chunks_prose_whole_in_long_enough_parts(relative: str) -> None:
    children = [c for c in _chunks(relative) if c.level.value == "child"]
    for c in children:
        mine = DeterministicGenerator().generate(c, [K.SENTENCE])
        if c.chunk_type is not ChunkType.TEXT or not mine:
            continue
        head = " > ".join(c.section_path[-SECTION_LEVELS:])
        units = [r.text.removeprefix(f"{head}\n") for r in mine]
        assert len(units) >= 2  # a chunk of one sentence has its raw vector for it
        assert all(len(u) >= MIN_SENTENCE_CHARS for u in units)
        # Nothing of the prose lost or added: the parts are its sentences, in order.
        prose = "".join(paragraphs(body_text(c)))
        assert re.sub(r"\s", "", "".join(units)) == re.sub(r"\s", "", prose)
        back = chunk_from_metadata(c.text, chunk_metadata(c))
        assert [r.text for r in DeterministicGenerator().generate(back, [K.SENTENCE])] == [
            r.text for r in mine
        ]
    # The offline default puts it in place of a text chunk's raw vector (which default_kinds
    # gives back where the sentences do not cover it, or the chunk's language is not one of
    # SENTENCE_LANGUAGES); offline_kinds(sentences=False) gives the raw vector; a model's
    # table has none.
    assert all(K.SENTENCE not in kinds for kinds in DEFAULT_KINDS.values())
    assert OFFLINE_KINDS[ChunkType.TEXT] == (K.SENTENCE,)
    assert offline_kinds() == OFFLINE_KINDS
    plain = offline_kinds(sentences=False)
    assert plain[ChunkType.TEXT] == (K.RAW,)
    assert {t: k for t, k in plain.items() if t is not ChunkType.TEXT} == {
        t: k for t, k in OFFLINE_KINDS.items() if t is not ChunkType.TEXT
    }


def test_sentence_texts_join_wrapped_japanese_without_spaces_and_leave_code_and_tables_out() -> None:
    # A manual of another kind than the ones measured on: an admin guide as PDF-extracted text,
    # its lines wrapped mid-sentence.
    text = (
        "夜間バックアップの設定\n\n"
        "夜間バックアップは管理画面の「バックアップ」タブで設定します。設定を変えると、次の深夜\n"
        "零時から新しい時刻で動きます。保存先のディスクに十分な空きがあることを、設定の前に必ず確認\n"
        "してください。空きが足りないと、その夜のバックアップは途中で止まり、管理者にメールで知らされます。\n"
        "保存期間を過ぎたバックアップは、毎朝の点検のときに古いものから順に自動で削除されます。"
        "削除されたバックアップは元に戻せないので、必要なものは別の場所へ事前にコピーしてください。"
        "コピーの手順は、このガイドの「バックアップの持ち出し」を参照してください。\n"
    )
    options = ChunkerOptions(source_format="text")
    children = [c for c in chunk(text, source_id="backup.txt", options=options) if c.level.value == "child"]
    texts = [t for c in children for t in sentence_texts(c)]
    assert [t.split("\n", 1)[0] for t in texts] == ["夜間バックアップの設定"] * 2
    # Japanese sentences are short: four make the first text's 120 characters, three the second's.
    assert texts[0] == (
        "夜間バックアップの設定\n夜間バックアップは管理画面の「バックアップ」タブで設定します。"
        "設定を変えると、次の深夜零時から新しい時刻で動きます。"
        "保存先のディスクに十分な空きがあることを、設定の前に必ず確認してください。"
        "空きが足りないと、その夜のバックアップは途中で止まり、管理者にメールで知らされます。"
    )
    assert texts[1].startswith("夜間バックアップの設定\n保存期間を過ぎたバックアップは")
    # Code, table rows and images are not prose; list items and headings start a paragraph.
    body = (
        "Back up the wiki every night.\n```sh\nbackup --nightly --at 02:00\n```\n"
        "| Setting | Default |\n|---|---|\n| Keep | 14 days |\n![Backup tab](tab.png)\n"
        "- Keep at least\n  two copies.\n- Check the log.\n## Restore\nRestore from the newest copy."
    )
    assert paragraphs(body) == [
        "Back up the wiki every night.",
        "Keep at least two copies.",
        "Check the log.",
        "Restore",
        "Restore from the newest copy.",
    ]
    one = [
        c
        for c in chunk("# One\n\nA single short paragraph.\n", source_id="one.md")
        if c.level.value == "child"
    ]
    assert [sentence_texts(c) for c in one] == [[]]


def test_sentences_stand_in_for_the_raw_vector_only_where_they_hold_all_of_a_chunk() -> None:
    # An admin guide unlike the E-Manual pages the kind was measured on: a Markdown page of
    # prose, one section with a screenshot, one of a single sentence, and the same prose as
    # plain text with a table's rows under it.
    prose = (
        "The nightly job copies every project to the archive server and keeps fourteen copies, "
        "the oldest one removed first when a new copy is written. "
        "A copy that fails is tried again an hour later, and after the third failure the job "
        "stops and mails the administrators of the projects it could not copy."
    )
    text = (
        f"# Backups\n\n## Schedule\n\n{prose}\n\n## Screens\n\n{prose}\n\n![The archive tab](tab.png)\n\n"
        "## Contact\n\nMail the administrators.\n"
    )
    children = {c.section_path[-1]: c for c in chunk(text, source_id="backup.md") if c.level.value == "child"}
    rows = f"Backups\n\n{prose}\n\nSetting | Default | Note\nKeep | 14 copies | oldest removed first\n"
    options = ChunkerOptions(source_format="text")
    plain_children = chunk(rows, source_id="backup.txt", options=options)
    (children["Rows"],) = (c for c in plain_children if c.level.value == "child")
    assert all(c.chunk_type is ChunkType.TEXT for c in children.values())
    assert {name: sentences_cover(c) for name, c in children.items()} == {
        "Schedule": True,  # prose cut into two sentence texts: they hold it all
        "Screens": False,  # the screenshot's line is in the raw text only
        "Contact": False,  # one sentence: its raw vector is that sentence already
        "Rows": False,  # the table's rows are in the raw text only
    }
    asked = DeterministicGenerator(defaults=offline_kinds(sentences=True))
    made = {name: [r.kind for r in asked.generate(c)] for name, c in children.items()}
    assert made["Schedule"] == [K.SENTENCE, K.SENTENCE]
    assert made["Screens"][:3] == [K.RAW, K.SENTENCE, K.SENTENCE]
    assert made["Rows"][:3] == [K.RAW, K.SENTENCE, K.SENTENCE]
    assert made["Contact"] == [K.RAW]
    # Asking for both keeps both; the default is the same as asking for sentences (English
    # text), and without them the raw vector alone.
    both = DeterministicGenerator(kinds={ChunkType.TEXT: (K.RAW, K.SENTENCE)})
    assert [r.kind for r in both.generate(children["Schedule"])] == [K.RAW, K.SENTENCE, K.SENTENCE]
    default = DeterministicGenerator()
    assert {name: [r.kind for r in default.generate(c)] for name, c in children.items()} == made
    without = DeterministicGenerator(defaults=offline_kinds(sentences=False))
    assert [r.kind for r in without.generate(children["Schedule"])] == [K.RAW]


def test_sentences_are_searched_by_default_only_in_the_sentence_languages() -> None:
    # A Japanese admin guide of prose (not one of the measured sets): its text chunk is cut
    # into two sentence texts that hold all of it, yet by default it keeps its raw vector;
    # English prose of the same shape gets its sentences. Every language is one argument.
    ja = (
        "# バックアップ\n\n## 保存期間\n\n"
        "夜間バックアップは管理画面の「バックアップ」タブで設定します。設定を変えると、次の深夜"
        "零時から新しい時刻で動きます。保存先のディスクに十分な空きがあることを、設定の前に必ず確認"
        "してください。空きが足りないと、その夜のバックアップは途中で止まり、管理者にメールで知らされます。"
        "保存期間を過ぎたバックアップは、毎朝の点検のときに古いものから順に自動で削除されます。"
        "削除されたバックアップは元に戻せないので、必要なものは別の場所へ事前にコピーしてください。"
        "コピーの手順は、このガイドの「バックアップの持ち出し」を参照してください。\n"
    )
    en = (
        "# Backups\n\n## Keeping copies\n\n"
        "The nightly job copies every project to the archive server and keeps fourteen copies, "
        "the oldest one removed first when a new copy is written. "
        "A copy that fails is tried again an hour later, and after the third failure the job "
        "stops and mails the administrators of the projects it could not copy.\n"
    )
    (ja_chunk,) = (c for c in chunk(ja, source_id="backup-ja.md") if c.level.value == "child")
    (en_chunk,) = (c for c in chunk(en, source_id="backup-en.md") if c.level.value == "child")
    assert (ja_chunk.language, en_chunk.language) == ("ja", "en")
    assert sentences_cover(ja_chunk)
    assert sentences_cover(en_chunk)
    assert frozenset({"en"}) == SENTENCE_LANGUAGES

    def kinds(generator: DeterministicGenerator, c: Chunk) -> list[K]:
        return [r.kind for r in generator.generate(c)]

    default = DeterministicGenerator()
    assert kinds(default, ja_chunk) == [K.RAW]
    assert kinds(default, en_chunk) == [K.SENTENCE, K.SENTENCE]
    every = DeterministicGenerator(sentence_languages=None)
    assert kinds(every, ja_chunk) == [K.SENTENCE, K.SENTENCE]
    only_ja = DeterministicGenerator(sentence_languages={"ja"})
    assert (kinds(only_ja, ja_chunk), kinds(only_ja, en_chunk)) == ([K.SENTENCE, K.SENTENCE], [K.RAW])
    # The language rule applies to a table asking for raw and sentences too (no duplicate raw),
    # but a kind asked for by name is made whatever the language.
    both = DeterministicGenerator(kinds={ChunkType.TEXT: (K.RAW, K.SENTENCE)})
    assert kinds(both, ja_chunk) == [K.RAW]
    assert [r.kind for r in default.generate(ja_chunk, [K.SENTENCE])] == [K.SENTENCE, K.SENTENCE]
    # The module functions pass it through.
    assert [r.kind for r in generate_representations([ja_chunk], sentence_languages=None)] == [
        K.SENTENCE,
        K.SENTENCE,
    ]
    assert [r.kind for r in generate_representations([ja_chunk])] == [K.RAW]
    # A language code written as a bare string is a mistake the generator names.
    with pytest.raises(TypeError, match=r"sentence_languages .*the string 'ja'"):
        DeterministicGenerator(sentence_languages="ja")


def test_step_text_holds_the_steps_condition_and_caution_but_not_its_result() -> None:
    # An admin guide unlike the HoloLens pages the fields were chosen on: the condition says
    # when a step applies, the ※ note what goes wrong; a question about the step asks that.
    text = (
        "# バックアップ\n\n## 手動で実行する\n\n"
        "1. 管理画面を開きます。\n"
        "2. 夜間ジョブが動いている場合は、[停止] をクリックします。"
        "※ 実行中に停止するとその夜のコピーは失われます。\n"
        "3. [今すぐ実行] をクリックします。完了するとメールが届きます。\n"
    )
    (held,) = (c for c in chunk(text, source_id="backup.md") if c.level.value == "child")
    assert [(s.condition, s.caution, s.result) for s in held.steps] == [
        ("", "", ""),
        ("夜間ジョブが動いている場合は", "実行中に停止するとその夜のコピーは失われます。", ""),
        ("", "", "完了するとメールが届きます。"),
    ]
    head = "バックアップ > 手動で実行する\n"
    assert [r.text for r in DeterministicGenerator().generate(held, [K.STEP])] == [
        head + "管理画面を開きます。",
        head + "夜間ジョブが動いている場合は [停止] をクリックします。"
        "実行中に停止するとその夜のコピーは失われます。",
        head + "[今すぐ実行] をクリックします。",
    ]
    back = chunk_from_metadata(held.text, chunk_metadata(held))
    assert step_texts(back) == step_texts(held)

"""The offline generator over real chunks: every default kind, stable ids, and speed."""

from __future__ import annotations

import time
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from procedure_rag import Chunk, ChunkType, chunk
from procedure_rag._language.words import japanese_tokenizer
from procedure_rag._metadata import chunk_from_metadata, chunk_metadata
from procedure_rag._representations.offline.generator import (
    DeterministicGenerator,
    generate_representations,
    iter_representations,
)
from procedure_rag._representations.types import (
    DEFAULT_KINDS,
    OFFLINE_KINDS,
    OFFLINE_STEP_KINDS,
    RepresentationKind,
    kinds_for,
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
    for c in _chunks(relative):
        reps = generator.generate(c)
        assert {r.chunk_id for r in reps} == {c.chunk_id}
        assert set(kinds_for(c.chunk_type, defaults=kinds)) <= {r.kind for r in reps}, (
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
    procedure = next(
        c for c in _chunks(relative) if c.chunk_type is ChunkType.PROCEDURE and contains in c.text
    )
    assert kind not in kinds_for(ChunkType.PROCEDURE)
    assert kind in {r.kind for r in DeterministicGenerator().generate(procedure)}


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


@pytest.mark.parametrize(
    ("relative", "section", "expected"),
    [
        (
            "hololens/en/hololens-recovery.md",
            "Hard-restart procedure",
            [
                "Restart the device > Hard-restart procedure\n"
                "Unplug the Type-C cable to disconnect the device from the power supply or the host PC.",
                "Restart the device > Hard-restart procedure\n"
                "Hold down the volume down + power buttons for 15 seconds.",
                "Restart the device > Hard-restart procedure\nConnect the device to the host PC.",
                "Restart the device > Hard-restart procedure\nOpen Device Manager. Make sure the device "
                "enumerates correctly as *Microsoft HoloLens* as shown in the following image:",
            ],
        ),
        (
            "hololens/ja/hololens-recovery.md",
            "ハード再起動の手順",
            [
                "デバイスを再起動します > ハード再起動の手順\n"
                "Type-C ケーブルを抜いて、デバイスを電源またはホスト PC から切断します。",
                "デバイスを再起動します > ハード再起動の手順\n"
                "[ボリューム ダウン] ボタン + [電源] ボタンを 15 秒間押したままにします。",
                "デバイスを再起動します > ハード再起動の手順\nデバイスをホスト PC に接続します。",
                "デバイスを再起動します > ハード再起動の手順\nデバイス マネージャーを開きます。",
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
    # The page's own steps: the two innermost headings, then the step's instruction (its
    # markup, result sentence and aside left out).
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

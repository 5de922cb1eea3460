"""The chunker: invariants over every document in tests/data, behaviour on real pages, goldens, bad input.

Invariants (DESIGN.md, "Blocks" and "Chunks"): no source text lost, children within the budget,
reading order kept, stable distinct ids, parents made of exactly their children. Behaviour tests
use the HoloLens pages (en and ja translations of one another). Golden cases sit in
tests/golden: ``<name>.input.*`` beside ``<name>.expected.json``; they are rewritten only when
``PROCEDURE_RAG_REGENERATE_GOLDEN=1``, and a test fails whenever that flag is on.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _invariants import (
    WORD,
    assert_ids_distinct,
    assert_parent_reads_its_children,
    assert_parents_hold_exactly_their_children,
    assert_reading_order,
    body_lines,
    children_of,
    dropped_spans,
    label_free,
    lost_characters,
    missing_words,
    over_budget,
    parents_of,
)
from procedure_rag import (
    LEXICONS,
    Chunk,
    ChunkerOptions,
    ChunkLevel,
    ChunkType,
    ProcedureChunker,
    Span,
    chunk_metadata,
    read_metadata,
)
from procedure_rag._chunking.assembly import merge_spans
from procedure_rag._chunking.lengths import tiktoken_length
from procedure_rag._metadata import _dumps_spans, _dumps_strs
from procedure_rag._readers.text_window import TextWindow

TESTS = Path(__file__).resolve().parent
TESTS_DATA = TESTS / "data"
GOLDEN = TESTS / "golden"
REGENERATE = "PROCEDURE_RAG_REGENERATE_GOLDEN"

DATA_FILES = sorted(
    p.relative_to(TESTS_DATA).as_posix() for p in TESTS_DATA.rglob("*") if p.suffix in (".md", ".txt")
)
TOKENS = tiktoken_length()
LENGTHS: dict[str, Callable[[str], int]] = {"tokens": TOKENS, "chars": len}
BUDGETS = [("tokens", 100), ("tokens", 400), ("chars", 400), ("chars", 2000)]

HARD_RESTART = {
    "en": (
        "hololens/en/hololens-recovery.md",
        ("Restart, reset, or recover HoloLens 2", "Restart the device", "Hard-restart procedure"),
        "If the standard reset procedure didn't work, use the hard-restart procedure:",
        "If the standard reset procedure didn't work",
    ),
    "ja": (
        "hololens/ja/hololens-recovery.md",
        ("HoloLens 2 を再起動、リセット、または回復する", "デバイスを再起動します", "ハード再起動の手順"),
        "標準のリセット手順が機能しない場合は、ハード再起動の手順を使用してください。",
        "標準のリセット手順が機能しない場合は",
    ),
}


@dataclass(frozen=True)
class Run:
    text: str
    chunks: list[Chunk]
    dropped: list[tuple[int, int]]
    length: Callable[[str], int]
    budget: int

    @property
    def children(self) -> list[Chunk]:
        return children_of(self.chunks)

    @property
    def parents(self) -> list[Chunk]:
        return parents_of(self.chunks)


_RUNS: dict[tuple[str, str, int], Run] = {}


def run(path: str, measure: str, budget: int) -> Run:
    """Chunk one data file once per (measure, budget); the invariant tests share the result."""
    key = (path, measure, budget)
    if key not in _RUNS:
        text = (TESTS_DATA / path).read_text(encoding="utf-8")
        chunker = ProcedureChunker(ChunkerOptions(chunk_size=budget, length_function=LENGTHS[measure]))
        dropped = dropped_spans(chunker, text, path)
        _RUNS[key] = Run(text, chunker.chunk(text, source_id=path), dropped, LENGTHS[measure], budget)
    return _RUNS[key]


def children(text: str | bytes, budget: int = 400, **kwargs: Any) -> list[Chunk]:
    options = ChunkerOptions(chunk_size=budget, emit_parents=False, **kwargs)
    return ProcedureChunker(options).chunk(text, source_id="doc")


def section_children(lang: str, budget: int) -> list[Chunk]:
    path, section, _, _ = HARD_RESTART[lang]
    text = (TESTS_DATA / path).read_text(encoding="utf-8")
    return [c for c in children(text, budget) if c.section_path == section]


def grid(*params: str) -> list[Any]:
    return [pytest.param(p, m, b, id=f"{p}-{m}{b}") for p in params for m, b in BUDGETS]


# ----- invariants over every data file --------------------------------------------------------


@pytest.mark.parametrize(("path", "measure", "budget"), grid(*DATA_FILES))
def test_no_source_character_is_lost(path: str, measure: str, budget: int) -> None:
    r = run(path, measure, budget)
    lost = lost_characters(r.text, r.chunks, r.dropped)
    assert lost == [], f"{len(lost)} characters lost, first at {lost[0]}: {r.text[lost[0] : lost[0] + 40]!r}"


@pytest.mark.parametrize(("path", "measure", "budget"), grid(*DATA_FILES))
def test_no_word_is_lost(path: str, measure: str, budget: int) -> None:
    """Every word of the source shows in the children, however its markup is rendered."""
    r = run(path, measure, budget)
    missing, words = missing_words(r.text, r.chunks, r.dropped)
    assert missing == []
    assert len(words) > 20


@pytest.mark.parametrize(("path", "measure", "budget"), grid(*DATA_FILES))
def test_children_fit_the_budget(path: str, measure: str, budget: int) -> None:
    """A child may pass the budget only when it holds one sentence, or a lead-in and one step."""
    r = run(path, measure, budget)
    assert over_budget(r.chunks, r.length, budget) == []


@pytest.mark.parametrize(("path", "measure", "budget"), grid(*DATA_FILES))
def test_reading_order_is_kept(path: str, measure: str, budget: int) -> None:
    assert_reading_order(run(path, measure, budget).chunks)


@pytest.mark.parametrize(("path", "measure", "budget"), grid(*DATA_FILES))
def test_ids_are_stable_and_distinct(path: str, measure: str, budget: int) -> None:
    r = run(path, measure, budget)
    again = ProcedureChunker(ChunkerOptions(chunk_size=budget, length_function=LENGTHS[measure])).chunk(
        r.text, source_id=path
    )
    assert [c.chunk_id for c in r.chunks] == [c.chunk_id for c in again]
    assert_ids_distinct(r.chunks)


@pytest.mark.parametrize(("path", "measure", "budget"), grid(*DATA_FILES))
def test_parents_hold_exactly_their_children(path: str, measure: str, budget: int) -> None:
    r = run(path, measure, budget)
    assert r.parents
    assert_parents_hold_exactly_their_children(r.chunks, r.text)


# ----- behaviour on real pages ------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_hard_restart_lead_in_stays_with_its_steps(lang: str) -> None:
    _, section, lead_in, condition = HARD_RESTART[lang]
    (child,) = section_children(lang, 400)
    label = LEXICONS[lang].section_label
    assert child.text.startswith(f"{label}: {' > '.join(section)}\n{lead_in}\n1. ")
    assert child.chunk_type is ChunkType.PROCEDURE
    assert (child.lead_in, child.condition) == (lead_in, condition)
    assert [s.number for s in child.steps] == ["1.", "2.", "3.", "4."]
    assert not child.continued
    meta = read_metadata(chunk_metadata(child))
    assert (meta["condition"], meta["has_condition"], meta["section_path"]) == (
        condition,
        True,
        list(section),
    )


@pytest.mark.parametrize(
    ("lang", "number", "field", "expected"),
    [
        ("en", "2.", "target", "power"),  # the last element operated (volume down + power)
        ("en", "2.", "result", "The device will automatically restart."),
        (
            "en",
            "1.",
            "action",
            "Unplug the Type-C cable to disconnect the device from the power supply or the host PC.",
        ),
        ("ja", "2.", "target", "電源"),
        ("ja", "2.", "result", "デバイスが自動的に再起動します。"),
        ("ja", "3.", "action", "デバイスをホスト PC に接続します。"),
    ],
)
def test_hard_restart_step_fields(lang: str, number: str, field: str, expected: str) -> None:
    (child,) = section_children(lang, 400)
    (step,) = [s for s in child.steps if s.number == number]
    assert getattr(step, field) == expected


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_picture_inside_a_step_is_related(lang: str) -> None:
    (child,) = section_children(lang, 400)
    pictures = [r for r in child.related_elements if r[1] == "picture"]
    assert len(pictures) == 1
    assert pictures[0][2] == ""  # the picture sits in this same chunk
    assert "images/MicrosoftHoloLens_DeviceManager.png" in child.text


@pytest.mark.parametrize(("lang", "budget"), [("en", 80), ("en", 100), ("en", 120), ("ja", 150), ("ja", 200)])
def test_list_over_budget_splits_between_steps(lang: str, budget: int) -> None:
    _, section, lead_in, condition = HARD_RESTART[lang]
    parts = [c for c in section_children(lang, budget) if c.steps]
    assert len(parts) > 1
    label = LEXICONS[lang]
    first, *later = parts
    assert not first.continued
    assert first.text.startswith(f"{label.section_label}: {' > '.join(section)}\n{lead_in}\n")
    for part in later:
        assert part.continued
        head, repeated = part.text.split("\n")[:2]
        assert head == f"{label.section_label}: {' > '.join(section)} {label.continued_label}"
        assert repeated in (lead_in, condition)
    for part in parts:
        assert part.condition == condition
        assert TOKENS(part.text) <= budget
    # a step starts in exactly one part: parts break between steps
    starts = [s.number for part in parts for s in part.steps if not s.is_continuation]
    assert starts == ["1.", "2.", "3.", "4."]


CERTIFICATES = {
    "en": (
        "hololens/en/hololens2-corp-connected-configure.md",
        "Deploy certificates and Wi-Fi profiles",
        "If there are issues with Wi-Fi profiles, reference Troubleshoot Wi-Fi device configuration "
        "profiles in Intune.",
    ),
    "ja": (
        "hololens/ja/hololens2-corp-connected-configure.md",
        "証明書と証明書プロファイルWi-Fi展開する",
        "デバイス プロファイルに問題がある場合はWi-Fi Intune でのデバイス構成 プロファイルWi-Fiの"
        "トラブルシューティングに関するページを参照してください。",
    ),
}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_cut_list_ends_its_parts_with_the_condition_paragraph_after_it(lang: str) -> None:
    """「…場合は」/ "If …" right after a cut list speaks of its steps: the parts repeat it where it fits."""
    path, section, tail = CERTIFICATES[lang]
    text = (TESTS_DATA / path).read_text(encoding="utf-8")
    parts = [c for c in children(text, 400) if c.section_path[-1] == section and c.steps]
    assert len(parts) > 1
    # The list is cut keeping room for it: every part ends with it.
    ending = [part for part in parts if part.text.endswith(f"\n{tail}")]
    assert ending == parts
    start = text.index(tail[:20])
    # Where it stands in the source it is the part's own text; elsewhere it is repeated context.
    own = [p for p in parts if any(s.start <= start < s.end for s in p.source_spans)]
    shown = [p for p in parts if any(s.start <= start < s.end for s in p.context_spans)]
    assert len(own) == 1
    assert shown == [p for p in ending if p not in own]
    assert all(TOKENS(part.text) <= 400 for part in parts)


# Sections whose list is cut into parts that repeat context (a lead-in, the step a part
# opens inside, the condition paragraph after the list), each under one parent.
REPEATING_SECTIONS = [
    ("hololens/en/hololens2-corp-connected-configure.md", "Deploy certificates and Wi-Fi profiles"),
    ("hololens/ja/hololens2-corp-connected-configure.md", "証明書と証明書プロファイルWi-Fi展開する"),
    (
        "ja-native/areamanagement-dashboard-tool/markdown/manual/userMan.md",
        "7-2-2\u3000グラフ・リストを追加する",
    ),
]


@pytest.mark.parametrize(("path", "section"), REPEATING_SECTIONS)
def test_a_parent_shows_what_its_children_repeat_once(path: str, section: str) -> None:
    """Joined into a parent, a cut list reads as the section does: the repeats are left out."""
    text = (TESTS_DATA / path).read_text(encoding="utf-8")
    chunks = ProcedureChunker().chunk(text, source_id=path)
    kids_of = {
        p.chunk_id: [c for c in children_of(chunks) if c.parent_id == p.chunk_id] for p in parents_of(chunks)
    }
    parents = [
        p
        for p in parents_of(chunks)
        if p.section_path and p.section_path[-1] == section and len(kids_of[p.chunk_id]) > 1
    ]
    assert parents
    for parent in parents:
        kids = kids_of[parent.chunk_id]
        joined = [line for c in kids for line in c.text.split("\n")[1:]]
        lines = parent.text.split("\n")[1:]
        assert len(set(joined)) < len(joined)  # the children repeat lines...
        assert len(set(lines)) == len(lines)  # ...the parent shows each once
        assert set(lines) == set(joined)
        assert_parent_reads_its_children(parent, kids)  # in the children's order
    tail = CERTIFICATES.get(path.split("/")[1], ("", "", ""))[2] if path.startswith("hololens/") else ""
    if tail:  # the condition paragraph after the list stands where the source has it: last
        assert parents[-1].text.endswith(f"\n{tail}")


def test_a_parent_of_later_parts_keeps_one_repeat_of_the_lead_in() -> None:
    steps = "\n".join(
        f"{n}. Select **Option {n}** on the **Settings** page and confirm it." for n in range(1, 13)
    )
    lead = "To reset the device, do the following:"
    text = f"# Reset\n\n{lead}\n\n{steps}\n"
    options = ChunkerOptions(chunk_size=60, max_children_per_parent=2, parent_chunk_size=4000)
    chunks = ProcedureChunker(options).chunk(text, source_id="doc")
    parents = parents_of(chunks)
    assert len(parents) > 1
    for parent in parents:
        kids = [c for c in children_of(chunks) if c.parent_id == parent.chunk_id]
        assert all(lead in c.text for c in kids)
        assert parent.text.count(lead) == 1  # its own in the first parent, one repeat in the others
    for n in range(1, 13):
        assert sum(f"{n}. Select **Option {n}**" in p.text for p in parents) == 1


def test_a_parent_of_one_child_holds_the_childs_own_text_and_steps() -> None:
    """A section that fits one chunk: its parent keeps the child's objects, not copies of them."""
    text = "# Reset\n\nTo reset it:\n\n1. Open **Settings**.\n2. Select **Reset**.\n\n# Other\n\nWords.\n"
    chunks = ProcedureChunker().chunk(text, source_id="doc")
    for parent in parents_of(chunks):
        (child,) = [c for c in children_of(chunks) if c.parent_id == parent.chunk_id]
        assert parent.text == child.text
        assert parent.text is child.text
        assert parent.steps is child.steps
        assert parent.source_spans is child.source_spans
    assert any(p.steps for p in parents_of(chunks))


@pytest.mark.parametrize(
    ("after", "repeated"),
    [
        ("If the device does not restart, hold the power button for 15 seconds.", True),
        ("The device restarts and shows the Start menu.", False),
        # a note after a list is bound to its last step
        ("> [!NOTE]\n> If the device does not restart, hold the power button.", False),
    ],
    ids=["condition", "result", "note"],
)
def test_only_a_paragraph_opening_with_a_condition_is_repeated(after: str, repeated: bool) -> None:
    steps = "\n".join(
        f"{n}. Select **Option {n}** in the **Settings** page of the device and confirm the change."
        for n in range(1, 9)
    )
    text = f"# Reset\n\nTo reset the device:\n\n{steps}\n\n{after}\n"
    for budget in (60, 80):  # at 60 the parts are full: they are cut keeping room for it
        parts = [c for c in children(text, budget) if c.steps]
        assert len(parts) > 2
        words = after.removeprefix("> [!NOTE]\n> ")[:30]
        assert all((words in part.text) is repeated for part in parts[:-1])
        if repeated:  # the list's last part has room for it where it stands in the source
            assert parts[-1].text.count(words) == 1
        assert all(TOKENS(part.text) <= budget for part in parts)


@pytest.mark.parametrize(
    ("lang", "sentences"),
    [
        (
            "en",
            [
                "Open Device Manager on the host PC.",
                "Expand the Universal Serial Bus devices node.",
                "Make sure the device shows as Microsoft HoloLens.",
                "If it does not, unplug the cable and plug it in again.",
            ],
        ),
        (
            "ja",
            [
                "ホスト PC でデバイス マネージャーを開きます。",
                "ユニバーサル シリアル バス デバイスを展開します。",
                "デバイスが Microsoft HoloLens と表示されることを確認します。",
                "表示されない場合は、ケーブルを抜き差しします。",
            ],
        ),
    ],
)
def test_single_step_over_budget_splits_at_sentence_ends(lang: str, sentences: list[str]) -> None:
    lex = LEXICONS[lang]
    sep = " " if lang == "en" else ""
    source = f"# Setup\n\n1. {sep.join(sentences)}\n"
    parts = [c for c in children(source, 130, length_function=len, source_format="markdown") if c.steps]
    pieces = [c for c in parts if c.steps[0].number == "1."]
    assert len(pieces) > 1
    for i, piece in enumerate(pieces):
        (line,) = body_lines(piece)
        assert line.rstrip()[-1] in "。．！？.!?"
        assert piece.continued == (i > 0)
        assert line.startswith(lex.continued_label) == (i > 0)
        assert piece.steps[0].is_continuation == (i > 0)
        assert read_metadata(chunk_metadata(piece))["steps"][0].get("continued", False) == (i > 0)
    rebuilt = "".join(label_free(body_lines(p)[0], lang).removeprefix("1. ") for p in pieces)
    assert re.sub(r"\s", "", rebuilt) == re.sub(r"\s", "", "".join(sentences))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_split_step_piece_holds_more_than_its_number(lang: str) -> None:
    """A step whose one sentence is over budget is cut inside the sentence, not after "1."."""
    sentence = (
        "デバイスをホストPCに接続してからデバイスマネージャーを開き正しく列挙されていることを確認します。"
        if lang == "ja"
        else "Connect_the_device_to_the_host_PC_and_open_Device_Manager_and_check_that_it_enumerates."
    )
    source = f"# Setup\n\n1. {sentence}\n2. Close it.\n"
    parts = [c for c in children(source, 40, length_function=len, source_format="markdown") if c.steps]
    for part in parts:
        lines = [label_free(line, lang) for line in body_lines(part)]
        assert all(re.sub(r"^\d+\.\s*", "", line) for line in lines), part.text


@pytest.mark.parametrize(("lang", "header"), [("en", "| Setting | Description |"), ("ja", "| 設定 | 説明 |")])
def test_table_over_budget_splits_by_rows_with_header(lang: str, header: str) -> None:
    text = (TESTS_DATA / f"hololens/{lang}/hololens-provisioning.md").read_text(encoding="utf-8")
    source_rows = {line.strip() for line in text.splitlines() if line.startswith("|")}
    tables = [c for c in children(text, 400, length_function=len) if c.chunk_type is ChunkType.TABLE]
    assert len(tables) > 1
    for i, table in enumerate(tables):
        rows = body_lines(table)
        assert rows[0] == header
        assert rows[1].replace(" ", "") == "|---|---|"
        assert set(rows) <= source_rows | {""}
        assert table.continued == (i > 0)
    data_rows = [row for t in tables for row in body_lines(t)[2:]]
    assert len(data_rows) == len(set(data_rows)) == 4


@pytest.mark.parametrize(
    ("source", "code"),
    [
        (
            "# Build\n\nRun this command:\n\n```console\ndism /online\n```\n\nThen restart.\n",
            "```console\ndism /online\n```",
        ),
        (
            "# ビルド\n\n次のコマンドを実行します。\n\n```sh\nmake all\n```\n\n再起動します。\n",
            "```sh\nmake all\n```",
        ),
    ],
)
def test_code_is_its_own_chunk(source: str, code: str) -> None:
    chunks = children(source)
    (code_chunk,) = [c for c in chunks if c.chunk_type is ChunkType.CODE]
    assert "\n".join(body_lines(code_chunk)) == code
    assert all(code not in c.text for c in chunks if c is not code_chunk)


NOTES = {
    "en": (
        "# Settings\n\nTo change the password, follow these steps:\n\n"
        "1. Open the **Settings** screen.\n   > [!NOTE]\n   > Only administrators can open this screen.\n"
        "2. Select the **Password** tab.\n\n> [!WARNING]\n> Do not turn off the device.\n\n"
        "![The Password tab.](pw.png)\n"
    ),
    "ja": (
        "# 設定\n\nパスワードを変更する場合は、次の手順を実行します。\n\n"
        "1. **[設定]** 画面を開きます。\n   > **注意**\n   > 管理者だけが開けます。\n"
        "2. **[パスワード]** タブを選択します。\n\n> [!WARNING]\n> 電源を切らないでください。\n\n"
        "![パスワード タブ](pw.png)\n"
    ),
}


@pytest.mark.parametrize(
    ("lang", "number", "caution"),
    [
        ("en", "1.", "Only administrators can open this screen."),
        ("en", "2.", "Do not turn off the device."),
        ("ja", "1.", "管理者だけが開けます。"),
        ("ja", "2.", "電源を切らないでください。"),
    ],
)
def test_notes_bind_to_their_step(lang: str, number: str, caution: str) -> None:
    (child,) = children(NOTES[lang])
    (step,) = [s for s in child.steps if s.number == number]
    assert step.caution == caution  # the note's text; the label only marked it
    assert chunk_metadata(child)["has_caution"] is True
    label = {"en": "Note: Only", "ja": "注意"}[lang]
    assert label in child.text  # the chunk text keeps the label


@pytest.mark.parametrize(
    ("source", "caution"),
    [
        (
            "# 設定\n\n1. [保存] を選択します。\n2. [閉じる] を選択します。\n\n"
            "※ 電源を切らないでください。\n",
            "電源を切らないでください。",
        ),
        (
            "# 設定\n\n1. [保存] を選択します。\n2. [閉じる] を選択します。\n\n"
            "注意: 電源を切らないでください。\n",
            "電源を切らないでください。",
        ),
        (
            "# Setup\n\n1. Select Save.\n2. Select Close.\n\nNote: Do not turn off the device.\n",
            "Do not turn off the device.",
        ),
    ],
)
def test_plain_caution_paragraph_after_a_step_binds_to_it(source: str, caution: str) -> None:
    (child,) = children(source, source_format="markdown")
    assert child.steps[-1].caution == caution
    assert not child.steps[0].caution


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_picture_after_steps_is_related(lang: str) -> None:
    (child,) = children(NOTES[lang])
    assert [(kind, where) for _, kind, where in child.related_elements] == [("picture", "")]


def test_related_picture_in_another_chunk_names_it() -> None:
    steps = "".join(f"{i}. Select item number {i} in the list.\n" for i in range(1, 6))
    source = f"# Setup\n\nFollow these steps:\n\n{steps}\n![The list of items.](items.png)\n"
    chunks = children(source, 70, source_format="markdown")
    ids = {c.chunk_id for c in chunks}
    with_picture = [c for c in chunks if "items.png" in c.text]
    related = [r for c in chunks if c.steps for r in c.related_elements if r[1] == "picture"]
    assert with_picture
    assert related
    assert all(where in ids | {""} for _, _, where in related)
    assert any(where == with_picture[0].chunk_id for _, _, where in related) or any(
        where == "" for _, _, where in related
    )


@pytest.mark.parametrize(
    ("path", "label"),
    [("hololens/en/hololens-recovery.md", "Section"), ("hololens/ja/hololens-recovery.md", "関連見出し")],
)
def test_chunk_text_begins_with_the_heading_path(path: str, label: str) -> None:
    r = run(path, "tokens", 400)
    for c in r.chunks:
        assert c.section_path
        first = c.text.split("\n", 1)[0]
        assert first.startswith(f"{label}: {' > '.join(c.section_path)}")


@pytest.mark.parametrize("path", ["hololens/en/hololens-recovery.md", "hololens/ja/hololens-network.md"])
def test_metadata_is_flat_json_and_round_trips(path: str) -> None:
    r = run(path, "tokens", 400)
    document = {"source": path, "title": "doc", "chunk_type": "overwritten"}
    for c in r.chunks:
        meta = chunk_metadata(c, document)
        assert all(isinstance(v, str | int | float | bool) for v in meta.values())
        assert json.loads(json.dumps(meta)) == meta
        assert (meta["source"], meta["title"], meta["chunk_type"]) == (path, "doc", c.chunk_type.value)
        back = read_metadata(meta)
        assert back["section_path"] == list(c.section_path)
        assert back["steps"] == [s.to_dict() for s in c.steps]
        assert back["child_ids"] == list(c.child_ids)
        assert back["source_spans"] == [[s.start, s.end] for s in c.source_spans]
        assert meta["start_index" if "start_index" in meta else "chunk_id"] is not None
        assert read_metadata(back) == back


@given(
    strings=st.lists(st.text()),
    ends=st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 2**40)).map(sorted)),
)
def test_metadata_lists_are_written_as_json_dumps_writes_them(
    strings: list[str], ends: list[list[int]]
) -> None:
    # Strings (quotes, backslashes, control characters, lone surrogates) and spans are
    # written without the JSON encoder; the text must be what json.dumps gives.
    def dumps(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    assert _dumps_strs(strings) == dumps(strings)
    assert _dumps_strs(tuple(strings)) == dumps(strings)
    assert _dumps_spans(Span(a, b) for a, b in ends) == dumps(ends)


# ----- golden cases -------------------------------------------------------------------------------


GOLDEN_CASES = {
    "hololens-en-recovery": ".md",
    "growi-ja-group": ".md",
    "growi-ja-page-operation": ".md",
    "emanual-en-galaxy-s10-security": ".txt",
    "hololens-ja-recovery": ".md",
    "emanual-en-samsung-tv-update": ".txt",
}


def golden_view(chunks: list[Chunk]) -> list[dict[str, Any]]:
    return [
        {
            "section_path": list(c.section_path),
            "chunk_type": c.chunk_type.value,
            "condition": c.condition,
            "continued": c.continued,
            "steps": [
                {k: getattr(s, k) for k in ("number", "action", "target", "condition", "result", "caution")}
                for s in c.steps
            ],
            "text": c.text,
        }
        for c in chunks
        if c.level is ChunkLevel.CHILD
    ]


GOLDEN_ORIGINS = {
    "hololens-en-recovery": "hololens/en/hololens-recovery.md",
    "growi-ja-group": "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md",
    "growi-ja-page-operation": "ja-native/growi-docs/docs/ja/guide/features/page_operation.md",
    "emanual-en-galaxy-s10-security": "emanual/galaxy-s10-sections-57-65.txt",
    "hololens-ja-recovery": "hololens/ja/hololens-recovery.md",
    "emanual-en-samsung-tv-update": "emanual/samsung-tv-sections-10-28.txt",
}


@pytest.mark.parametrize("name", GOLDEN_CASES)
def test_golden_inputs_are_copies_of_tests_data(name: str) -> None:
    copy = GOLDEN / f"{name}.input{GOLDEN_CASES[name]}"
    assert copy.read_bytes() == (TESTS_DATA / GOLDEN_ORIGINS[name]).read_bytes()
    assert f"`{copy.name}`" in (GOLDEN / "SOURCES.md").read_text(encoding="utf-8")


def test_golden_regeneration_flag_is_off() -> None:
    assert os.environ.get(REGENERATE, "") in ("", "0"), (
        f"{REGENERATE} must be off outside a deliberate rewrite"
    )


@pytest.mark.parametrize(("name", "suffix"), GOLDEN_CASES.items())
def test_golden(name: str, suffix: str) -> None:
    source = (GOLDEN / f"{name}.input{suffix}").read_text(encoding="utf-8")
    got = golden_view(ProcedureChunker(ChunkerOptions(chunk_size=400)).chunk(source, source_id=name))
    expected_path = GOLDEN / f"{name}.expected.json"
    if os.environ.get(REGENERATE) == "1":
        expected_path.write_text(json.dumps(got, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    assert got == json.loads(expected_path.read_text(encoding="utf-8"))


# ----- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\n", "\u3000\n", b"", b" \n "])
def test_blank_input_gives_nothing(text: str | bytes) -> None:
    assert ProcedureChunker(ChunkerOptions(chunk_size=50)).chunk(text) == []


def test_utf8_bytes_give_the_same_chunks_as_str() -> None:
    text = (TESTS_DATA / "hololens/ja/hololens-recovery.md").read_text(encoding="utf-8")
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=300))
    as_str = chunker.chunk(text, source_id="r")
    assert chunker.chunk(text.encode("utf-8"), source_id="r") == as_str
    assert chunker.chunk(text.encode("utf-8")) == chunker.chunk(text)  # the derived source id agrees too


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfe\x00broken", "not valid UTF-8"),
        ("設定".encode("shift_jis"), "not valid UTF-8"),
        ("手順".encode() + b"\xe3\x81", "not valid UTF-8"),
        (b"PK\x03\x04\x00\x00binary", "looks binary"),
        ("text with a NUL \x00 inside", "looks binary"),
        ("\x01\x02\x03\x04\x05\x06\x07\x08" * 10, "looks binary"),
    ],
)
def test_unusable_input_raises(data: str | bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ProcedureChunker(ChunkerOptions(chunk_size=50)).chunk(data)


@pytest.mark.parametrize(
    ("text", "measure"),
    [("word " * 200_000, "tokens"), ("word " * 200_000, "chars"), ("設定を確認します。" * 110_000, "tokens")],
    ids=["en-tokens", "en-chars", "ja-tokens"],
)
def test_one_megabyte_single_line(text: str, measure: str) -> None:
    started = time.perf_counter()
    chunks = children(text, 256, length_function=LENGTHS[measure])
    assert time.perf_counter() - started < 20
    assert chunks
    assert all(LENGTHS[measure](c.text) <= 256 for c in chunks)
    assert merge_spans([s for c in chunks for s in c.source_spans])[0].end >= len(text.rstrip())


def test_spans_join_over_whitespace_but_not_over_text_or_a_page_break() -> None:
    text = "Step one.\n\n  \nStep two.\nA word\fStep three."
    one, two = Span(0, 9), Span(14, 23)
    three = Span(text.index("Step three"), len(text))
    word = Span(24, 30)
    assert merge_spans([two, one], text) == (Span(0, 23),)
    assert merge_spans([one, two]) == (one, two)  # without the source nothing is known
    assert merge_spans([one, three], text) == (one, three)  # text between them
    assert merge_spans([word, three], text) == (word, three)  # a page break between them
    window = TextWindow()
    window.append(text)
    assert merge_spans([one, two], window) == (Span(0, 23),)
    window.release(12)
    assert merge_spans([one, two], window) == (one, two)  # the gap is gone: not known


def test_a_run_of_paragraphs_is_one_span() -> None:
    text = "# Reset\n\nFirst paragraph.\n\nSecond paragraph.\n\n\n1. Open it.\n2. Close it.\n"
    (chunk,) = children(text, source_format="markdown")
    assert chunk.source_spans == (Span(0, len(text.rstrip())),)


@pytest.mark.parametrize("marker", ["-", "1."])
def test_thousand_deep_nested_list(marker: str) -> None:
    indent = len(marker) + 1
    text = "".join(" " * (indent * i) + f"{marker} item {i}\n" for i in range(1000))
    chunks = children(text, 256, source_format="markdown")
    steps = [s for c in chunks for s in c.steps if not s.is_continuation]
    assert len(steps) == 1000
    assert max(s.depth for s in steps) == 999
    assert all(TOKENS(c.text) <= 256 for c in chunks)


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("# Build\n\n```python\nx = 1\ny = 2\n", ChunkType.CODE),
        ("# Table\n\n| a | b |\n|---|\n| 1 | 2 | 3 |\n| only\n", ChunkType.TABLE),
        ("# 表\n\n| 設定 | 説明 |\n| --- | --- |\n| 証明書\n", ChunkType.TABLE),
    ],
    ids=["unclosed-fence", "broken-table", "broken-table-ja"],
)
def test_malformed_blocks_keep_their_text(source: str, kind: ChunkType) -> None:
    chunks = children(source, source_format="markdown")
    assert kind in {c.chunk_type for c in chunks} or all(c.chunk_type is ChunkType.TEXT for c in chunks)
    joined = "\n".join(c.text for c in chunks)
    assert all(word in joined for word in WORD.findall(source))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"chunk_size": 0}, ValueError, "chunk_size must be > 0, got 0"),
        ({"chunk_size": -1}, ValueError, "chunk_size must be > 0, got -1"),
        ({"chunk_size": 1.5}, TypeError, "chunk_size must be an int, got float"),
        ({"chunk_size": True}, TypeError, "chunk_size must be an int, got bool"),
        (
            {"chunk_size": 100, "parent_chunk_size": 50},
            ValueError,
            "parent_chunk_size must be >= chunk_size (100), got 50",
        ),
        ({"language": "fr"}, ValueError, "language must be one of auto, ja, en, got 'fr'"),
        (
            {"source_format": "pdf"},
            ValueError,
            "source_format must be one of auto, markdown, text, html, rst, got 'pdf'",
        ),
    ],
)
def test_bad_options_raise_pinned_messages(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        ChunkerOptions(**kwargs)


# ----- rules found broken on the golden pages ---------------------------------------------------


@pytest.mark.parametrize(
    ("source", "budget"),
    [
        (
            "# Fix\n\n1. Ensure your device is charged to 40% or more before attempting to flash it.\n"
            "2. If your device is not showing as a HoloLens device, check:\n"
            "   1. Ports, as a Qualcomm HS-USB device.\n   2. Other Devices, as a QUSB_BULK device.\n",
            170,
        ),
        (
            "# 対処\n\n1. フラッシュを試みる前に、デバイスが 40% 以上に充電されるようにしてください。\n"
            "2. デバイスが HoloLens と表示されない場合は、次のことを確認します。\n"
            "   1. [ポート] (Qualcomm HS-USB デバイスの場合)\n"
            "   2. [その他のデバイス] (QUSB_BULK デバイスの場合)\n",
            130,
        ),
    ],
    ids=["en", "ja"],
)
def test_a_step_that_fits_a_chunk_is_not_split_from_its_sub_steps(source: str, budget: int) -> None:
    """Step 2 and its sub-steps fit one chunk: they move together rather than being cut apart."""
    chunks = children(source, budget, length_function=len, source_format="markdown")
    assert all(len(c.text) <= budget for c in chunks)
    (holder,) = [c for c in chunks if any(st.number == "2." and not st.depth for st in c.steps)]
    assert [(st.parent_number, st.number) for st in holder.steps if st.depth or st.number == "2."] == [
        ("", "2."),
        ("2.", "1."),
        ("2.", "2."),
    ]


@pytest.mark.parametrize(
    "source",
    [
        "# Reflash\n\n- Display color uniformity\n- OS crashes\n\n"
        "There are two ways to reflash the device.\n\n"
        "> [!WARNING]\n> All your personal data will be erased.\n",
        "# 再フラッシュ\n\n- ディスプレイの色の均一性\n- OS のクラッシュ\n\n"
        "再フラッシュするには 2 つの方法があります。\n\n"
        "> [!WARNING]\n> すべての個人データが消去されます。\n",
    ],
    ids=["en", "ja"],
)
def test_a_note_after_an_intervening_paragraph_binds_to_no_step(source: str) -> None:
    (child,) = children(source)
    assert [s.caution for s in child.steps] == ["", ""]


# ----- a step over budget: cut between its sub-procedures, the steps above repeated -------------

_PROXY = {
    "en": (
        "# Proxy\n\nThere are two ways to set a proxy:\n\n"
        "1. **Settings app:**\n"
        "    1. Per-user proxy (20H2 and earlier):\n"
        "        1. Open the Start menu and select Settings.\n"
        "        2. Select Network and Internet, then Proxy in the left menu.\n"
        "        3. Scroll down to Manual proxy setup and turn on Use a proxy server.\n"
        "        4. Enter the IP address of the proxy server.\n"
        "    2. Wi-Fi proxy (21H1 and later):\n"
        "        1. Open the Start menu and go to the Wi-Fi network's properties page.\n"
        "        2. Scroll down to Proxy.\n"
        "        3. Change to Manual setup.\n"
        "        4. Enter the IP address of the proxy server.\n"
        "2. **MDM:** follow your MDM's Wi-Fi profile steps.\n",
        "2. Wi-Fi proxy (21H1 and later):",
    ),
    "ja": (
        "# プロキシ\n\nプロキシを設定するには、次の 2 つの方法があります。\n\n"
        "1. **設定 UI:**\n"
        "    1. ユーザーごとのプロキシ (20H2 以前):\n"
        "        1. スタート メニューを開き、[設定] を選択します。\n"
        "        2. [ネットワークとインターネット] を選択して左のメニューでプロキシを選択します。\n"
        "        3. [手動プロキシの設定] まで下にスクロールし、[プロキシ サーバーの使用] をオンにします。\n"
        "        4. プロキシ サーバーの IP アドレスを入力します。\n"
        "    2. WiFi プロキシ (21H1 以降):\n"
        "        1. スタート メニューを開き、Wi-Fi ネットワークのプロパティ ページにアクセスします。\n"
        "        2. プロキシまで下方向へスクロールします。\n"
        "        3. 手動セットアップに変更します。\n"
        "        4. プロキシ サーバーの IP アドレスを入力します。\n"
        "2. **MDM:** MDM の Wi-Fi プロファイルの手順に従います。\n",
        "2. WiFi プロキシ (21H1 以降):",
    ),
}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_step_over_budget_keeps_each_sub_procedure_whole_under_its_step(lang: str) -> None:
    """Step 1 does not fit a chunk: it is cut between its two sub-procedures, not inside one,
    and the part holding the second repeats step 1's line, so "21H1 and later" stays with its
    sub-steps and their numbers keep their parent."""
    source, second = _PROXY[lang]
    budget = 420 if lang == "en" else 230
    chunks = children(source, budget, length_function=len, source_format="markdown")
    assert all(len(c.text) <= budget for c in chunks)
    (holder,) = [c for c in chunks if second in c.text]
    lines = body_lines(holder)
    first_step = "1. **Settings app:**" if lang == "en" else "1. **設定 UI:**"
    assert first_step in lines
    assert lines.index(first_step) < lines.index(f"  {second}")
    # the four sub-steps of the second sub-procedure are all here, numbered under it
    nested = [(st.parent_number, st.number) for st in holder.steps if st.depth == 2]
    assert nested == [("2.", "1."), ("2.", "2."), ("2.", "3."), ("2.", "4.")]
    # step 1's repeated line is context: not a step of this chunk, not in its source spans,
    # but in its context spans
    assert [st.number for st in holder.steps if st.depth == 0] in ([], ["2."])
    start = source.index(first_step.split("**")[1])
    assert not any(s.start <= start < s.end for s in holder.source_spans)
    assert any(s.start <= start < s.end for s in holder.context_spans)
    # nothing was cut inside a sub-procedure: each sub-step appears in exactly one chunk
    sub_steps = [c for c in chunks for st in c.steps if st.depth == 2]
    assert len(sub_steps) == 8


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_note_that_must_leave_its_step_takes_the_step_line_along(lang: str) -> None:
    note = (
        "If you progress past the Wi-Fi step and later need to switch networks while still in setup, "
        "press Volume Down and Power together to return to this step."
        if lang == "en"
        else "Wi-Fi の手順よりも先に進んでいて、後でセットアップ中に別のネットワークに"
        "切り替える必要がある場合は、[ボリューム ダウン] と [電源] を同時に押して、"
        "この手順に戻ることができます。"
    )
    step = "Connect to the internet." if lang == "en" else "インターネットに接続します。"
    detail = (
        "HoloLens sets your time zone from the Wi-Fi network; you can change it later in Settings."
        if lang == "en"
        else "Wi-Fi ネットワークの情報に基づいて、タイム ゾーンが自動的に設定されます。"
        "後で設定アプリから変更できます。"
    )
    note_block = f"    > [!NOTE]\n    > {note}\n"
    source = f"# Setup\n\n1. Put it on.\n2. {step}\n\n    {detail}\n\n{note_block}3. Sign in.\n"
    budget = 260 if lang == "en" else 150
    chunks = children(source, budget, length_function=len, source_format="markdown")
    assert all(len(c.text) <= budget for c in chunks)
    (holder,) = [c for c in chunks if note[:20] in c.text]
    assert f"2. {step}" in body_lines(holder), holder.text
    assert not holder.source_spans[0].start <= source.index(step) < holder.source_spans[-1].end
    # the note's step is a step of this chunk too: a continuation that carries the note
    assert [(st.number, st.is_continuation) for st in holder.steps][:1] == [("2.", True)]
    assert note[:20] in holder.steps[0].caution


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_note_that_does_not_fit_takes_the_paragraph_before_it_along(lang: str) -> None:
    intro, command, note = (
        (
            "Dash modules are not in the Anaconda repository; name the channel by hand.",
            "Only dash-table is installed with pip: pip install dash-table",
            "Note: pip can install any module, but it may break the virtual environment.",
        )
        if lang == "en"
        else (
            "Anaconda のリポジトリには Dash 関連のモジュールがありません。チャネルを手動で指定します。",
            "dash-table のみ pip でのインストールにだけ対応しています。pip install dash-table",
            "※ pip install でもインストールできますが、仮想環境に不具合が生じる可能性があります。",
        )
    )
    source = f"# Modules\n\n{intro}\n\n{command}\n\n{note}\n"
    # Room for the header line (under 30 characters) and the command with the note, or the
    # intro with the command; not for all three.
    budget = 32 + max(len(intro), len(note)) + len(command)
    chunks = children(source, budget, length_function=len, source_format="markdown")
    assert len(chunks) == 2
    first, second = chunks
    assert intro in first.text
    assert command not in first.text
    assert command in second.text
    assert note.split(" ", 1)[1][:20] in second.text
    # A run of notes keeps its first note with the paragraph: the second does not pull it away.
    two = f"# Modules\n\n{intro}\n\n{command}\n\n{note}\n\n{note}\n"
    budget = 32 + max(len(intro), len(note)) + len(command) + len(note)
    held = list(children(two, budget, length_function=len, source_format="markdown"))
    assert command in held[0].text
    assert note.split(" ", 1)[1][:20] in held[0].text


def test_a_command_line_that_moves_with_a_note_takes_the_sentence_that_introduces_it() -> None:
    intro = "Dash modules are not in the Anaconda repository; name the channel by hand each time."
    lead = "Only dash-table is installed with pip."
    command = "$ pip install dash-table"
    note = "Note: pip can install any module, but it may break the virtual environment."
    source = f"# Modules\n\n{intro}\n\n{lead}\n\n{command}\n\n{note}\n"
    # Room for the header line (under 30 characters) and either the intro with the lead and
    # the command, or the lead, the command and the note; not for all four.
    budget = 36 + max(len(intro), len(note)) + len(lead) + len(command)
    chunks = children(source, budget, length_function=len, source_format="markdown")
    assert len(chunks) == 2
    assert lead not in chunks[0].text
    for text in (lead, command, note[6:30]):
        assert text in chunks[1].text

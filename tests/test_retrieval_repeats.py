"""Repeats: a result whose lines a better result already shows moves below the others.

The rule on small hand-worked lists (the share of lines, the section-path line, a repeat
of a repeat), through ``retrieve`` (order, ``repeat_of``, the option), and over real
Chroma with the bundled model: a page of our own writing whose tabs repeat one procedure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from procedure_rag import ProcedureChunker, chunk_metadata
from procedure_rag._chroma.index import ChromaIndex
from procedure_rag._retrieval.fusion import Hit
from procedure_rag._retrieval.repeats import REPEAT_KEY, REPEAT_SHARE, demote_repeats, shown_lines
from procedure_rag._retrieval.retrieve import Found, RetrievalOptions, retrieve
from procedure_rag._store.writer import stored_chunk

STEPS = [
    "1. Open Settings.",
    "2. Select Printers.",
    "3. Click Add.",
    "4. Enter the address.",
    "5. Click Save.",
]


def _lines(*lines: str) -> frozenset[str]:
    return frozenset(lines)


def test_a_result_sharing_most_lines_with_a_better_one_goes_after_the_others() -> None:
    a = _lines(*STEPS)
    b = _lines(*STEPS[:3], "4. Enter the queue name.", "5. Click Save.")  # 4 of 5 lines shown by a
    c = _lines("Something else entirely.")
    assert demote_repeats(["a", "b", "c"], {"a": a, "b": b, "c": c}.__getitem__) == [
        ("a", None),
        ("c", None),
        ("b", 0),
    ]


@pytest.mark.parametrize(("shared", "repeat"), [(3, True), (2, False)])
def test_the_share_of_lines_decides(shared: int, repeat: bool) -> None:
    # Five lines, three shown by the better result: 60%, a repeat; two: 40%, not.
    assert REPEAT_SHARE == 0.6
    mine = _lines(*STEPS[:shared], *(f"{i}. Other step." for i in range(shared, 5)))
    order = demote_repeats(["a", "b", "c"], {"a": _lines(*STEPS), "b": mine, "c": _lines("x")}.__getitem__)
    assert [item for item, _ in order] == (["a", "c", "b"] if repeat else ["a", "b", "c"])


def test_a_repeat_of_a_repeat_names_the_first_it_repeats_and_order_is_kept() -> None:
    same = _lines(*STEPS)
    order = demote_repeats(
        ["a", "b", "c", "d"], {"a": same, "b": same, "c": same, "d": _lines("x")}.__getitem__
    )
    assert order == [("a", None), ("d", None), ("b", 0), ("c", 0)]


def test_no_lines_is_no_repeat() -> None:
    assert demote_repeats(["a", "b"], {"a": frozenset(), "b": frozenset()}.__getitem__) == [
        ("a", None),
        ("b", None),
    ]


def test_the_section_path_line_is_left_out_and_spaces_do_not_count() -> None:
    text = "Section: Setup > Windows\n1.  Open   Settings.\n\n2. Select Printers."
    assert shown_lines(text, {"section": "Windows"}) == {"1. Open Settings.", "2. Select Printers."}
    # A chunk without a section opens with its own text.
    assert "Section: Setup > Windows" in shown_lines(text, {})


TEXTS = {
    "win": "Section: Windows\n" + "\n".join(STEPS),
    "mac": "Section: macOS\n" + "\n".join(STEPS),
    "other": "Section: Toner\n1. Open the front cover.\n2. Pull the cartridge out.",
}


def _retrieve(**options: object) -> list[tuple[str, str | float | None]]:
    hits = [
        Hit(doc_id=d, kind="raw", text=d, score=s, representation_id=d)
        for d, s in (("win", 0.9), ("mac", 0.89), ("other", 0.7))
    ]
    result = retrieve(
        "How do I add a printer?",
        search=lambda n, kinds: Found(hits[:n], exhausted=True),
        lookup=lambda ids: [{"id": i, "section": i} for i in ids],
        metadata_of=lambda item: item,
        options=RetrievalOptions(k=3, **options),  # type: ignore[arg-type]
        text_of=lambda item: TEXTS[str(item["id"])],
    )
    return [(r.doc_id, r.metadata.get(REPEAT_KEY)) for r in result.items]


def test_retrieve_demotes_a_repeat_and_says_which_result_it_repeats() -> None:
    assert _retrieve() == [("win", None), ("other", None), ("mac", "win")]


def test_retrieve_keeps_the_order_when_asked_to() -> None:
    assert _retrieve(demote_repeats=False) == [("win", None), ("mac", None), ("other", None)]


PAGE = """# Printer pool

The office printers are shared through the print server.

## Add a printer on Windows

1. Open Settings and select Bluetooth & devices.
2. Select Printers & scanners, then Add device.
3. Enter the printer's address, 10.0.8.20, and select Add.
4. Print a test page to check the queue.

## Add a printer on Windows Server

1. Open Settings and select Bluetooth & devices.
2. Select Printers & scanners, then Add device.
3. Enter the printer's address, 10.0.8.20, and select Add.
4. Print a test page to check the queue.

## Replace the toner

1. Open the front cover of the printer.
2. Pull the old cartridge out and push the new one in until it clicks.
3. Close the cover; the printer calibrates for a minute.
"""


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("repeats")
    chunks = [
        stored_chunk(c.text, chunk_metadata(c, {"source": "printers.md"}))
        for c in ProcedureChunker().chunk(PAGE, source_id="printers.md")
    ]
    with ChromaIndex.open(path) as index:
        index.add(chunks)
    return path


def _sections(path: Path, **options: object) -> list[tuple[str, str | float | None]]:
    with ChromaIndex.open(path) as index:
        found = index.query("How do I add a printer on Windows?", RetrievalOptions(k=4, **options))  # type: ignore[arg-type]
        return [
            (str(r.item.metadata["section"]).split(" > ")[-1], r.metadata.get(REPEAT_KEY))
            for r in found.items
        ]


def test_over_real_chroma_the_copied_tab_comes_after_the_other_sections(pool: Path) -> None:
    # The bundled model ranks the two copies of one procedure first and second; the copy
    # adds nothing, so the page's other sections, which do, come before it.
    copies = {"Add a printer on Windows", "Add a printer on Windows Server"}
    plain = _sections(pool, demote_repeats=False)
    assert {s for s, _ in plain[:2]} == copies
    assert all(repeat is None for _, repeat in plain)
    demoted = _sections(pool)
    assert demoted[0] == (plain[0][0], None)
    assert {s for s, _ in demoted[1:3]} == {"Printer pool", "Replace the toner"}
    assert demoted[3][0] == plain[1][0]
    assert isinstance(demoted[3][1], str)  # the id of the first copy


def test_langchain_retriever_demotes_the_copy_and_can_keep_it(tmp_path: Path) -> None:
    from langchain_core.documents import Document  # noqa: PLC0415

    from langchain_procedures import OfflineEmbeddings, ProcedureMultiVectorRetriever, ProcedureTextSplitter  # noqa: PLC0415

    chunks = ProcedureTextSplitter.from_tiktoken_encoder().split_documents(
        [Document(page_content=PAGE, metadata={"source": "printers.md"})]
    )
    embeddings = OfflineEmbeddings()
    with ProcedureMultiVectorRetriever.from_persist_directory(tmp_path, embedding=embeddings) as writer:
        writer.add_documents(chunks)

    def found(**options: object) -> list[tuple[str, object]]:
        retriever = ProcedureMultiVectorRetriever.from_persist_directory(
            tmp_path, embedding=embeddings, k=4, **options
        )
        with retriever:
            docs = retriever.invoke("How do I add a printer on Windows?")
        return [(d.metadata["section"].split(" > ")[-1], d.metadata.get(REPEAT_KEY)) for d in docs]

    plain, demoted = found(demote_repeats=False), found()
    assert {s for s, _ in plain[:2]} == {"Add a printer on Windows", "Add a printer on Windows Server"}
    assert demoted[0] == (plain[0][0], None)
    assert demoted[-1][0] == plain[1][0]
    assert isinstance(demoted[-1][1], str)


def test_llama_index_retriever_demotes_the_copy_and_can_keep_it(tmp_path: Path) -> None:
    from llama_index.core import Document  # noqa: PLC0415

    from llama_index_procedures import OfflineEmbedding, ProcedureMultiVectorRetriever, ProcedureNodeParser  # noqa: PLC0415

    nodes = ProcedureNodeParser().get_nodes_from_documents(
        [Document(text=PAGE, metadata={"source": "printers.md"})]
    )
    embed = OfflineEmbedding()
    ProcedureMultiVectorRetriever.from_persist_directory(tmp_path, embed_model=embed).add_nodes(nodes)

    def found(**options: object) -> list[tuple[str, object]]:
        retriever = ProcedureMultiVectorRetriever.from_persist_directory(
            tmp_path, embed_model=embed, k=4, **options
        )
        hits = retriever.retrieve("How do I add a printer on Windows?")
        return [
            (str(h.node.metadata["section"]).split(" > ")[-1], h.node.metadata.get(REPEAT_KEY)) for h in hits
        ]

    plain, demoted = found(demote_repeats=False), found()
    assert {s for s, _ in plain[:2]} == {"Add a printer on Windows", "Add a printer on Windows Server"}
    assert demoted[0] == (plain[0][0], None)
    assert demoted[-1][0] == plain[1][0]
    assert isinstance(demoted[-1][1], str)
    retriever = ProcedureMultiVectorRetriever.from_persist_directory(
        tmp_path, embed_model=embed, demote_repeats=False
    )
    assert retriever.to_dict()["demote_repeats"] is False

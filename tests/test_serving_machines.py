"""One index on servers (a Chroma server and a PostgreSQL docstore) served from several machines.

Each "machine" is a process of its own with its own connections to the two servers: a
real ``chroma run`` and the session's throwaway PostgreSQL cluster. Two reader machines,
one querying through the LangChain retriever and one through the LlamaIndex retriever
(both opened with ``from_servers``), run while a third machine re-indexes through
``ChromaIndex.from_servers``, going round the load test's cycle (tests/load_check.py: a
page changed, a source deleted, the page changed back, the source added again). The
readers never fail; every result is a complete raw chunk, none stale once a write call
returned (the checks of tests/test_load.py); and every read of the docstore, a reader's
threads reading every chunk id the corpus ever had in one call between their queries,
sees each source whole: as one of its versions the index held meanwhile, never half of
one. When the writer is done the index equals the one it started from.

Before that, both adapters' ``from_servers`` directly: an index written through one
framework on the servers is read through the other, and a bad docstore URL is a
one-line error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings
from langchain_core.documents import Document as LCDocument
from llama_index.core import Document as LIDocument

from index_state import assert_same_index, read_state
from langchain_procedures import OfflineEmbeddings, ProcedureTextSplitter
from langchain_procedures import ProcedureMultiVectorRetriever as LangChainRetriever
from llama_index_procedures import OfflineEmbedding, ProcedureNodeParser
from llama_index_procedures import ProcedureMultiVectorRetriever as LlamaIndexRetriever
from load_check import (
    CHANGED,
    CYCLE,
    START,
    Load,
    Snapshot,
    all_states,
    assert_load_was_clean,
    digest,
    half_sources,
    load_corpus,
    log_from_json,
    overlapping,
)
from load_processes import ReaderProcess, WriterProcess, on_servers
from procedure_rag import DocstoreError
from procedure_rag._store.pg_chunk_store import PostgresChunkStore

DATA = Path(__file__).resolve().parent / "data"
MODEL = "usem3"
PAGE = "hololens/en/hololens-recovery.md"
OTHER = "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md"
QUESTIONS = ("How do I hard-restart HoloLens 2?", "ハード再起動の方法は？")
#: Threads per reader machine.
THREADS = 2
#: Seconds the writer machine goes round its cycle (at least once).
SHORT = 3.0
LONG = 150.0


def _langchain(server: tuple[str, int], url: str, collection: str) -> LangChainRetriever:
    host, port = server
    return LangChainRetriever.from_servers(
        host,
        port,
        docstore_url=url,
        embedding=OfflineEmbeddings(model=MODEL),
        collection_name=collection,
        k=4,
    )


def _llamaindex(server: tuple[str, int], url: str, collection: str) -> LlamaIndexRetriever:
    host, port = server
    return LlamaIndexRetriever.from_servers(
        host,
        port,
        docstore_url=url,
        embed_model=OfflineEmbedding(model_name=MODEL),
        collection_name=collection,
        k=4,
    )


# ----- from_servers in both adapters ------------------------------------------------------------


@pytest.mark.integration
def test_both_adapters_serve_one_index_from_the_servers(
    postgres_cluster: Any, chroma_server: tuple[str, int]
) -> None:
    url, collection = postgres_cluster.fresh_url(), "from-servers"
    langchain = _langchain(chroma_server, url, collection)
    llamaindex = _llamaindex(chroma_server, url, collection)
    try:
        text = (DATA / PAGE).read_text(encoding="utf-8")
        chunks = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400).split_documents(
            [LCDocument(page_content=text, metadata={"source": PAGE})]
        )
        written = langchain.add_documents(chunks)
        assert written.vectors_added > 0
        for question in QUESTIONS:
            through_langchain = [(str(d.id), d.metadata["score"]) for d in langchain.invoke(question)]
            through_llamaindex = [(n.node.node_id, n.score) for n in llamaindex.retrieve(question)]
            assert [i for i, _ in through_llamaindex] == [i for i, _ in through_langchain], question
            assert [s for _, s in through_llamaindex] == pytest.approx(
                [s for _, s in through_langchain], abs=1e-4
            )
            assert len(through_langchain) == 4
        # Written through LlamaIndex, found through LangChain.
        other = (DATA / OTHER).read_text(encoding="utf-8")
        llamaindex.add_nodes(
            ProcedureNodeParser().get_nodes_from_documents(
                [LIDocument(text=other, metadata={"source": OTHER})]
            )
        )
        assert langchain.invoke("グループを作成するには？")[0].metadata["source_id"] == OTHER
    finally:
        langchain.close()
        llamaindex.close()
    # Everything is on the two servers: the chunks and the ledger in PostgreSQL, the vectors in Chroma.
    with PostgresChunkStore(url, create=False) as store:
        assert store.sources() == sorted([PAGE, OTHER])
        live = store.vector_ids()
    host, port = chroma_server
    client = chromadb.HttpClient(host=host, port=port, settings=Settings(anonymized_telemetry=False))
    assert sorted(client.get_collection(collection).get(include=[])["ids"]) == live


@pytest.mark.integration
def test_from_servers_refuses_a_docstore_that_is_not_postgresql(
    postgres_cluster: Any, chroma_server: tuple[str, int], tmp_path: Path
) -> None:
    sqlite = str(tmp_path / "docstore.sqlite3")
    for open_retriever in (_langchain, _llamaindex):
        with pytest.raises(DocstoreError) as raised:
            open_retriever(chroma_server, sqlite, "refused")
        assert str(raised.value) == f"docstore_url must be a postgresql:// URL, got {sqlite!r}"
        missing = postgres_cluster.url("no_such_database")
        with pytest.raises(DocstoreError) as raised:
            open_retriever(chroma_server, missing, "refused")
        message = str(raised.value)
        assert "\n" not in message
        assert message.startswith(
            "cannot connect to the docstore at 'postgresql://postgres@/no_such_database?"
        )
        assert 'database "no_such_database" does not exist' in message


# ----- two reader machines while a third re-indexes ------------------------------------------


def test_a_snapshot_of_half_a_source_is_caught() -> None:
    corpus = load_corpus()
    states = all_states(corpus)
    whole = {chunk.chunk_id: digest(chunk.metadata) for chunk in corpus.chunks(START)}
    log = log_from_json([])  # no write: the index is at the start all along
    assert half_sources(Snapshot("r", 0.0, 1.0, whole), corpus, states, log) == []
    changed = corpus.ids_of(CHANGED)
    half = dict(whole)
    del half[min(set(whole) & changed)]
    assert half_sources(Snapshot("r", 0.0, 1.0, half), corpus, states, log) == [
        f"r: {CHANGED} read as {len(set(whole) & changed) - 1} chunks, none of its versions then "
        f"({len(set(whole) & changed)} chunks)"
    ]


def _three_machines(
    postgres_cluster: Any, chroma_server: tuple[str, int], work: Path, seconds: float
) -> dict[str, int]:
    """Build the start, run the two readers and the writer, check everything; counts for the record."""
    corpus = load_corpus()
    layout = on_servers(chroma_server, postgres_cluster.fresh_url(), f"machines-{int(seconds)}")
    target = layout.target
    with layout.open_index() as index:
        index.add(corpus.chunks(START))
    started_from = read_state(target)
    readers = [
        ReaderProcess(target, front_end, work / front_end, THREADS, name=f"{front_end}, machine {n}")
        for n, front_end in enumerate(("langchain", "llamaindex"), start=1)
    ]
    writer = WriterProcess(target, work / "writer", seconds=seconds)
    load = Load()
    try:
        for machine in (*readers, writer):
            machine.wait_ready()
        writer.go()
        log = writer.log_when_done(timeout=seconds + 600)
        for reader in readers:
            reader.collect(load)
    finally:
        for machine in (*readers, writer):
            machine.stop()
    per_reader = assert_load_was_clean(load, corpus, log)
    assert sorted(per_reader) == sorted(reader.name for reader in readers)
    assert len(log.steps) >= len(CYCLE)
    for reader in readers:
        mine = Load(answers=[a for a in load.answers if a.reader == reader.name])
        assert overlapping(mine, log) > 0, f"{reader.name}: no query ran during a write"
        during = [
            s
            for s in load.snapshots
            if s.reader == reader.name
            and any(w.began < s.finished and w.ended > s.started for w in log.steps)
        ]
        assert during, f"{reader.name}: no docstore read ran during a write"
    assert_same_index(read_state(target), started_from)
    return {
        "queries": len(load.answers),
        "queries_during_writes": overlapping(load, log),
        "docstore_reads": len(load.snapshots),
        "write_calls": len(log.steps),
    }


@pytest.mark.integration
def test_two_reader_machines_while_a_third_reindexes(
    postgres_cluster: Any, chroma_server: tuple[str, int], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    counts = _three_machines(postgres_cluster, chroma_server, tmp_path, SHORT)
    request.node.user_properties.extend(counts.items())


@pytest.mark.stress
@pytest.mark.integration
def test_stress_two_reader_machines_while_a_third_reindexes(
    postgres_cluster: Any, chroma_server: tuple[str, int], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    counts = _three_machines(postgres_cluster, chroma_server, tmp_path, LONG)
    request.node.user_properties.extend(counts.items())

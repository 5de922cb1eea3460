"""Where a load test's index lives, and its readers and writer in processes of their own.

:class:`Layout` opens one index through each front end (embedded; a Chroma server with
a SQLite docstore; or a Chroma server with a PostgreSQL docstore, ``from_servers``);
:class:`ReaderProcess` and :class:`WriterProcess` run tests/load_reader.py and
tests/load_writer.py on a :class:`~index_writer.Target`, as separate machines would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from index_writer import MODEL, Target
from langchain_procedures import OfflineEmbeddings
from langchain_procedures import ProcedureMultiVectorRetriever as LangChainRetriever
from llama_index_procedures import OfflineEmbedding
from llama_index_procedures import ProcedureMultiVectorRetriever as LlamaIndexRetriever
from load_check import (
    Answer,
    Ask,
    K,
    Load,
    Readers,
    Snapshot,
    WriterLog,
    core_reader,
    langchain_reader,
    llamaindex_reader,
    log_from_json,
    reopening_reader,
)
from procedure_rag import load_offline_model
from procedure_rag._chroma.index import ChromaIndex
from procedure_rag._store.opening import is_postgres_url

TESTS = Path(__file__).resolve().parent
READER = TESTS / "load_reader.py"
WRITER = TESTS / "load_writer.py"


# ----- where the index lives ----------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Where the index lives, and how each front end opens it there."""

    target: Target
    open_index: Callable[[], ChromaIndex]
    open_langchain: Callable[[], LangChainRetriever]
    open_llamaindex: Callable[[], LlamaIndexRetriever]

    def front_end(self, name: str) -> tuple[Ask, Callable[[], None]]:
        """One reader, ``"core"``, ``"langchain"`` or ``"llamaindex"``, and what closes it."""
        if name == "core":
            index = self.open_index()
            return core_reader(index), index.close
        if name == "langchain":
            langchain = self.open_langchain()
            return langchain_reader(langchain), langchain.close
        if name == "llamaindex":
            llamaindex = self.open_llamaindex()
            return llamaindex_reader(llamaindex), llamaindex.close
        msg = f"unknown front end {name!r}"
        raise ValueError(msg)

    def readers(self) -> Readers:
        opened = {name: self.front_end(name) for name in ("core", "langchain", "llamaindex")}

        def close() -> None:
            for _, closer in opened.values():
                closer()

        shared = {name: ask for name, (ask, _) in opened.items()}
        return Readers(shared, {"core, opened per query": reopening_reader(self.open_index)}, close)

    @property
    def docstore(self) -> str:
        """The docstore's location: a ``postgresql://`` URL or a SQLite file."""
        target = self.target
        return target.docstore if target.docstore is not None else str(target.docstore_file)


def embedded(folder: Path) -> Layout:
    return Layout(
        Target(persist=str(folder)),
        lambda: ChromaIndex.open(folder, embedder=load_offline_model(MODEL)),
        lambda: LangChainRetriever.from_persist_directory(
            folder, embedding=OfflineEmbeddings(model=MODEL), k=K
        ),
        lambda: LlamaIndexRetriever.from_persist_directory(
            folder, embed_model=OfflineEmbedding(model_name=MODEL), k=K
        ),
    )


def on_server(server: tuple[str, int], docstore: Path, collection: str) -> Layout:
    """A Chroma server and a SQLite docstore on this machine."""
    host, port = server
    return Layout(
        Target(server=server, docstore=str(docstore), collection=collection),
        lambda: ChromaIndex.open(
            host=host,
            port=port,
            docstore_file=docstore,
            embedder=load_offline_model(MODEL),
            collection_name=collection,
        ),
        lambda: LangChainRetriever.from_chroma_server(
            host,
            port,
            embedding=OfflineEmbeddings(model=MODEL),
            docstore_file=docstore,
            collection_name=collection,
            k=K,
        ),
        lambda: LlamaIndexRetriever.from_chroma_server(
            host,
            port,
            embed_model=OfflineEmbedding(model_name=MODEL),
            docstore=docstore,
            collection_name=collection,
            k=K,
        ),
    )


def on_servers(server: tuple[str, int], url: str, collection: str) -> Layout:
    """A Chroma server and a PostgreSQL docstore: the whole index on servers (``from_servers``)."""
    host, port = server
    return Layout(
        Target(server=server, docstore=url, collection=collection),
        lambda: ChromaIndex.from_servers(
            host, port, docstore_url=url, embedder=load_offline_model(MODEL), collection_name=collection
        ),
        lambda: LangChainRetriever.from_servers(
            host,
            port,
            docstore_url=url,
            embedding=OfflineEmbeddings(model=MODEL),
            collection_name=collection,
            k=K,
        ),
        lambda: LlamaIndexRetriever.from_servers(
            host,
            port,
            docstore_url=url,
            embed_model=OfflineEmbedding(model_name=MODEL),
            collection_name=collection,
            k=K,
        ),
    )


def layout_of(target: Target) -> Layout:
    """The layout ``target`` names (what a reader or writer process is handed)."""
    if target.server is None:
        assert target.persist is not None
        return embedded(Path(target.persist))
    assert target.docstore is not None
    if is_postgres_url(target.docstore):
        return on_servers(target.server, target.docstore, target.collection)
    return on_server(target.server, Path(target.docstore), target.collection)


# ----- processes of their own ----------------------------------------------------------------

#: What a process started for the tests runs with: no telemetry, numpy's BLAS on one thread.
_PROCESS_ENV = {"ANONYMIZED_TELEMETRY": "False", "OPENBLAS_NUM_THREADS": "1"}
_START_SECONDS = 180.0


class _Child:
    """A tests/ script run with a JSON spec, its output in ``work``."""

    def __init__(self, script: Path, spec: Mapping[str, Any], work: Path, what: str) -> None:
        work.mkdir(parents=True, exist_ok=True)
        self.what = what
        self.out = work / "out.json"
        self.log = work / "process.log"
        spec_path = work / "spec.json"
        spec_path.write_text(json.dumps({**spec, "out": str(self.out)}), encoding="utf-8")
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(  # noqa: S603 - this venv's interpreter, fixed arguments
                [sys.executable, str(script), str(spec_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **_PROCESS_ENV},
            )

    def wait_ready(self) -> None:
        """Return once it wrote ``OUT.ready`` (fail the test if it dies or takes too long)."""
        deadline = time.monotonic() + _START_SECONDS
        while not self.out.with_suffix(".ready").exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"{self.what} did not start:\n{self.tail()}")
            time.sleep(0.05)

    def stop(self) -> None:
        """Tidy up after a failure: end it if it still runs (harmless once it exited)."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def finish(self, timeout: float) -> dict[str, Any]:
        """Wait for the process; its output, once it exited cleanly."""
        try:
            self.process.wait(timeout=timeout)
        finally:
            self.stop()
        code = self.process.returncode
        assert code == 0, f"{self.what} exited with {code}:\n{self.tail()}"
        found: dict[str, Any] = json.loads(self.out.read_text(encoding="utf-8"))
        return found


class ReaderProcess(_Child):
    """tests/load_reader.py querying the index through one front end from a process of its own.

    Its threads take turns asking a question and reading every chunk id in one docstore
    call (a :class:`Snapshot`), from :meth:`wait_ready` until :meth:`collect`.
    """

    def __init__(self, target: Target, front_end: str, work: Path, threads: int, *, name: str) -> None:
        self.name = name
        spec = {"target": target.to_json(), "front_end": front_end, "threads": threads, "name": name}
        super().__init__(READER, spec, work, f"the reader process {name!r}")

    def collect(self, load: Load) -> None:
        """Stop the process and add its answers, snapshots and failures to ``load``."""
        self.out.with_suffix(".stop").touch()
        found = self.finish(timeout=120)
        load.errors.extend(f"{self.name}: {error}" for error in found["errors"])
        load.answers.extend(
            Answer(self.name, question, started, finished, tuple(tuple(result) for result in results))
            for question, started, finished, results in found["answers"]
        )
        load.snapshots.extend(
            Snapshot(self.name, started, finished, chunks) for started, finished, chunks in found["snapshots"]
        )


class WriterProcess(_Child):
    """tests/load_writer.py: the writer's cycle (``ChromaIndex``) for ``seconds``, from :meth:`go`."""

    def __init__(self, target: Target, work: Path, *, seconds: float) -> None:
        super().__init__(WRITER, {"target": target.to_json(), "seconds": seconds}, work, "the writer process")

    def go(self) -> None:
        """Start the cycle (it opened the index and loaded its model before: :meth:`wait_ready`)."""
        self.out.with_suffix(".go").touch()

    def log_when_done(self, timeout: float) -> WriterLog:
        """Wait for the cycle to end; the calls it made."""
        return log_from_json(self.finish(timeout=timeout)["steps"])

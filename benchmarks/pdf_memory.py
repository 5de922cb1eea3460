"""Memory and speed of the PDF reader on long PDFs: does memory stay bounded as pages grow?

A real PDF's pages (by default the browser-printed 40-page Yamagata manual of the shared
real documents) are repeated by pypdf into 100-, 300- and 1,000-page PDFs
(``benchmarks/.cache/pdf_memory``, gitignored). For each size, in a fresh subprocess each:

* **heap**: tracemalloc's peak of Python allocations while ``iter_pdf`` is consumed and
  its elements dropped (the streamed way), while ``read_pdf`` returns the whole
  result (elements and text), and while ``ProcedureChunker().iter_chunks_from_source(path)``
  is consumed and its chunks dropped (*chunked*: reading and chunking the file, as the
  splitters' and the CLI's file path does);
* **rss**: the resident memory's peak (``VmHWM``, reset before reading) above the resident
  memory before reading, streamed, without tracemalloc (PDFium's own allocations count);
* **speed**: pages per CPU second of reading (streamed), best of ``--repeats``, beside
  pypdf's ``PdfReader(path).pages[i].extract_text()`` on the same file.

With ``--old-src DIR`` (a ``src`` folder of another commit, e.g. from ``git archive``) the
same is measured for that code, in the same run.

Command (from the repository root)::

    python benchmarks/pdf_memory.py                       # ~10 min on the 2-core machine
    python benchmarks/pdf_memory.py --old-src /tmp/base/src --pages 100 1000

Output: ``benchmarks/results/pdf_memory.json`` and ``benchmarks/results/pdf_memory.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "benchmarks" / ".cache" / "pdf_memory"
SOURCE = ROOT.parent / "shared" / "data" / "real-docs" / "ja_yamagata-u_sapphire_app-manual.pdf"
MB = 1_000_000


def build(source: Path, pages: int) -> Path:
    """A PDF of ``pages`` pages: ``source``'s pages over and over (cached)."""
    from pypdf import PdfReader, PdfWriter  # noqa: PLC0415 - a test dependency

    CACHE.mkdir(parents=True, exist_ok=True)
    out = CACHE / f"{source.stem}.{pages}.pdf"
    if out.exists():
        return out
    reader = PdfReader(source)
    writer = PdfWriter()
    for i in range(pages):
        writer.add_page(reader.pages[i % len(reader.pages)])
    tmp = out.with_suffix(".tmp")
    with tmp.open("wb") as f:
        writer.write(f)
    tmp.replace(out)
    return out


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def worker(mode: str, path: str, warm: str) -> dict[str, Any]:
    """Measure one thing in this process (a fresh one per measurement).

    ``warm``, a one-page PDF, is read first, so that the imports (pypdfium2's library, the
    reader's modules) and caches filled on first use are not counted as reading's memory.
    """
    import warnings  # noqa: PLC0415

    warnings.simplefilter("ignore")
    if mode == "pypdf":
        from pypdf import PdfReader  # noqa: PLC0415

        start = time.process_time()
        for page in PdfReader(path).pages:
            page.extract_text()
        return {"cpu": time.process_time() - start}
    from procedure_rag import ProcedureChunker  # noqa: PLC0415
    from procedure_rag._readers.pdf import iter_pdf, read_pdf  # noqa: PLC0415

    read_pdf(warm, source_id="warm")
    chunker = ProcedureChunker()
    if mode == "heap-chunked":  # the chunker's modules and its token encoding
        list(chunker.iter_chunks_from_source(Path(warm)))
    if mode == "rss":
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        before = _rss_kb("VmRSS")
        count = sum(1 for _ in iter_pdf(path, source_id="doc"))
        return {"rss_growth": (_rss_kb("VmHWM") - before) * 1000, "elements": count}
    if mode == "speed":
        start = time.process_time()
        count = sum(1 for _ in iter_pdf(path, source_id="doc"))
        return {"cpu": time.process_time() - start, "elements": count}
    tracemalloc.start()
    if mode == "heap-streamed":
        count = sum(1 for _ in iter_pdf(path, source_id="doc"))
    elif mode == "heap-chunked":
        count = sum(1 for _ in chunker.iter_chunks_from_source(Path(path)))
    else:
        result = read_pdf(path, source_id="doc")
        count = len(result.elements)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"heap_peak": peak, "elements": count}


def measure(mode: str, path: Path, src: Path) -> dict[str, Any]:
    warm = CACHE / f"{path.name.split('.')[0]}.1.pdf"
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_WAIT_POLICY": "PASSIVE"}
    done = subprocess.run(
        [sys.executable, __file__, "--worker", mode, str(path), str(warm)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--old-src", type=Path, default=None, help="a src folder of the code to compare with")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "pdf_memory.json")
    parser.add_argument("--worker", nargs=3, metavar=("MODE", "PATH", "WARM"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    codes = {"new": ROOT / "src"}
    if args.old_src is not None:
        codes["old"] = args.old_src.resolve()
    rows = []
    build(args.source, 1)
    for pages in args.pages:
        path = build(args.source, pages)
        pypdf_cpu = min(measure("pypdf", path, ROOT / "src")["cpu"] for _ in range(args.repeats))
        for code, src in codes.items():
            row: dict[str, Any] = {"code": code, "pages": pages}
            row["heap_streamed"] = measure("heap-streamed", path, src)["heap_peak"]
            row["heap_whole"] = measure("heap-whole", path, src)["heap_peak"]
            chunked = measure("heap-chunked", path, src)
            row["heap_chunked"], row["chunks"] = chunked["heap_peak"], chunked["elements"]
            row["rss_growth"] = measure("rss", path, src)["rss_growth"]
            cpu = min(measure("speed", path, src)["cpu"] for _ in range(args.repeats))
            row["pages_per_cpu_s"] = pages / cpu
            row["pypdf_pages_per_cpu_s"] = pages / pypdf_cpu
            row["vs_pypdf"] = pypdf_cpu / cpu
            rows.append(row)
            print(json.dumps(row), flush=True)
    report = {
        "source": args.source.name,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(report))


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# PDF reader (and chunker) memory and speed on long PDFs",
        "",
        f"`{report['source']}`'s pages repeated by pypdf; each figure from a fresh process "
        "(`python benchmarks/pdf_memory.py`),\n"
        "after a one-page PDF was read in it (imports not counted). "
        "Heap: tracemalloc's peak of Python allocations, "
        "*streamed* (`iter_pdf` consumed, elements dropped) and *whole* (`read_pdf`: every element "
        "and the text kept) and *chunked* (`ProcedureChunker().iter_chunks_from_source(path)` consumed, "
        "chunks dropped). RSS: peak resident memory above the memory before reading, streamed. "
        "Speed: pages per CPU second, best of the repeats, beside pypdf's `extract_text`.",
        "",
        "| code | pages | heap streamed MB | heap whole MB | heap chunked MB | RSS growth MB | pages/CPU s "
        "| pypdf pages/CPU s | x pypdf |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["rows"]:
        lines.append(
            f"| {r['code']} | {r['pages']} | {r['heap_streamed'] / MB:.2f} | {r['heap_whole'] / MB:.2f} | "
            f"{r['heap_chunked'] / MB:.2f} | "
            f"{r['rss_growth'] / MB:.1f} | {r['pages_per_cpu_s']:.0f} | {r['pypdf_pages_per_cpu_s']:.0f} | "
            f"{r['vs_pypdf']:.2f} |"
        )
    by_code: dict[str, dict[int, dict[str, Any]]] = {}
    for r in report["rows"]:
        by_code.setdefault(r["code"], {})[r["pages"]] = r
    lines.append("")
    for code, rows in by_code.items():
        sizes = sorted(rows)
        if len(sizes) >= 2:
            low, high = rows[sizes[0]], rows[sizes[-1]]
            lines.append(
                f"- {code}: streamed heap peak at {sizes[-1]} pages / at {sizes[0]} pages = "
                f"{high['heap_streamed'] / low['heap_streamed']:.2f}; chunked "
                f"{high['heap_chunked'] / low['heap_chunked']:.2f}"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

"""Deterministic representation generation speed: chunks per second, no model.

Chunks the given manuals once (not timed), then times the offline generators
(questions, summary, keywords through SudachiPy, table summaries, code docstrings,
image captions) over every chunk, children and parents alike.

    python benchmarks/representations.py [--docs-root ../shared/data] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from procedure_rag import DEFAULT_KINDS, ChunkerOptions, ProcedureChunker, generate_representations

SETS = {
    "hololens-en": "hololens/en/*.md",
    "hololens-ja": "hololens/ja/*.md",
    "ja-native": "ja-native/**/*.md",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--docs-root", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per set; the best is reported")
    args = parser.parse_args()
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400))
    generate_representations([])  # load nothing yet; Sudachi loads on first Japanese text
    rows = []
    for name, pattern in SETS.items():
        files = sorted(p for p in args.docs_root.glob(pattern) if "_license_evidence" not in p.parts)
        chunks = [c for f in files for c in chunker.chunk(f.read_text(encoding="utf-8"), source_id=str(f))]
        generate_representations(chunks[:5])  # warm-up: dictionaries and patterns
        best = float("inf")
        count = 0
        for _ in range(args.repeat):
            start = time.perf_counter()
            # Every kind (a model's table): the generators' speed, not the offline defaults' count.
            count = len(generate_representations(chunks, defaults=DEFAULT_KINDS))
            best = min(best, time.perf_counter() - start)
        rows.append(
            {
                "set": name,
                "chunks": len(chunks),
                "representations": count,
                "seconds": round(best, 3),
                "chunks_per_second": round(len(chunks) / best),
            }
        )
    print(json.dumps(rows, ensure_ascii=False, indent=1))
    print("\n| set | chunks | representations | chunks/s |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['set']} | {r['chunks']} | {r['representations']} | {r['chunks_per_second']} |")


if __name__ == "__main__":
    main()

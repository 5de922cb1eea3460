"""Import time of the adapters over their framework: each statement in a fresh interpreter.

The framework's own modules a user of each adapter has loaded anyway are imported
first (LangChain: documents, retrievers, embeddings, language models, stores, vector
stores, runnables, callbacks and langchain-text-splitters; LlamaIndex: ``llama_index.core``
with its node parsers and retrievers); then the statement is timed alone. Median of
``--repeats`` runs, the statements interleaved so that load drifts hit them alike.

    python benchmarks/import_time.py [--repeats 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

PRELOAD = {
    "langchain": (
        "import langchain_core.documents, langchain_core.retrievers, langchain_core.embeddings, "
        "langchain_core.language_models, langchain_core.stores, langchain_core.vectorstores, "
        "langchain_core.runnables, langchain_core.callbacks, langchain_text_splitters"
    ),
    "llama-index": "import llama_index.core, llama_index.core.node_parser, llama_index.core.retrievers",
}
STATEMENTS = (
    ("langchain", "import langchain_procedures"),
    ("langchain", "from langchain_procedures import ProcedureTextSplitter"),
    ("langchain", "from langchain_procedures import ProcedureMultiVectorRetriever"),
    ("llama-index", "import llama_index_procedures"),
    ("llama-index", "from llama_index_procedures import ProcedureNodeParser"),
    ("llama-index", "from llama_index_procedures import ProcedureMultiVectorRetriever"),
)


def seconds(framework: str, statement: str) -> float:
    """The time ``statement`` takes in a fresh interpreter after the framework's modules."""
    timed = f"import time\nt = time.perf_counter()\n{statement}\nprint(time.perf_counter() - t)"
    code = f"{PRELOAD[framework]}\n{timed}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args(argv)
    runs: dict[str, list[float]] = {statement: [] for _, statement in STATEMENTS}
    for _ in range(args.repeats):
        for framework, statement in STATEMENTS:
            runs[statement].append(seconds(framework, statement))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"median of {args.repeats} runs; load average {load:.1f} on {os.cpu_count()} CPUs")
    print("| statement (after the framework's own modules) | seconds |")
    print("|---|---|")
    for statement, values in runs.items():
        print(f"| `{statement}` | {statistics.median(values):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

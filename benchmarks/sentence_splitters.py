"""Should step text be cut into sentences by a maintained library? Ours beside pysbd and blingfire.

Two measurements, in one run:

1. **Step fields** (``benchmarks/step_fields.py`` on the annotated gold steps) with the
   package's sentence splitter swapped for each candidate everywhere the package cuts
   sentences (step fields, chunk units, cuts inside a long paragraph): mean F1 per field
   and language.
2. **Agreement and speed** on every line of the shared Markdown manuals (over 20
   characters): how many lines a candidate cuts differently from ours, examples of each,
   and the time to cut them all.

The candidates are optional; one that is not installed is reported as missing
(``pip install pysbd blingfire``). Neither is a dependency of the package.

    python benchmarks/sentence_splitters.py [--docs-root ../shared/data]
        [--out benchmarks/results/sentence_splitters.json]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DOCS_ROOT = HERE.parents[1] / "shared" / "data"
#: Every module that imported the package's splitter by name (each holds its own reference).
SPLITTER_USERS = (
    "procedure_rag._language.sentences",
    "procedure_rag._language.lexicons",
    "procedure_rag._chunking.cutting",
    "procedure_rag._chunking.units",
    "procedure_rag._language.step_fields",
)
FIELDS = ("action", "target", "condition", "result", "caution")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")

Splitter = Callable[[str], list[str]]


def candidates() -> dict[str, Splitter | str]:
    """Each splitter by name, or the reason it cannot run here."""
    from procedure_rag._language.sentences import split_sentences  # noqa: PLC0415

    out: dict[str, Splitter | str] = {"procedure-rag": split_sentences}
    try:
        import pysbd  # type: ignore[import-not-found]  # noqa: PLC0415
    except ImportError:
        out["pysbd"] = "not installed: pip install pysbd"
    else:
        segmenters = {lang: pysbd.Segmenter(language=lang, clean=False) for lang in ("en", "ja")}

        def split_pysbd(text: str) -> list[str]:
            lang = "ja" if _JAPANESE.search(text) else "en"
            return list(segmenters[lang].segment(text)) or [text]

        out["pysbd"] = split_pysbd
    try:
        import blingfire  # type: ignore[import-not-found]  # noqa: PLC0415
    except ImportError:
        out["blingfire"] = "not installed: pip install blingfire"
    else:

        def split_blingfire(text: str) -> list[str]:
            return blingfire.text_to_sentences(text).split("\n") if text.strip() else [text]

        out["blingfire"] = split_blingfire
    return out


@contextlib.contextmanager
def swapped(split: Splitter) -> Iterator[None]:
    """The package cutting sentences with ``split`` for the duration of the block."""
    modules = [importlib.import_module(name) for name in SPLITTER_USERS]
    saved = [getattr(module, "split_sentences") for module in modules]  # noqa: B009
    try:
        for module in modules:
            setattr(module, "split_sentences", split)  # noqa: B010
        yield
    finally:
        for module, own in zip(modules, saved, strict=True):
            setattr(module, "split_sentences", own)  # noqa: B010


def step_field_scores(split: Splitter, gold: Path, docs_root: Path) -> dict[str, float]:
    """Mean F1 per field and language on the gold steps, with ``split`` cutting sentences."""
    sys.path.insert(0, str(HERE))
    import _step_fields_eval as ev  # noqa: PLC0415 - the step-field benchmark beside this one
    import step_fields  # noqa: PLC0415

    from procedure_rag import ChunkerOptions, ProcedureChunker  # noqa: PLC0415

    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400, emit_parents=False))
    with swapped(split):
        table = ev.report(step_fields.run(ev.load_gold(gold), docs_root, chunker))
    return {f"{field} {lang}": table[lang][field]["mean"] for field in FIELDS for lang in ("en", "ja")}


def manual_lines(docs_root: Path) -> list[str]:
    """Every line of the shared Markdown manuals longer than 20 characters."""
    lines: list[str] = []
    for path in sorted(docs_root.rglob("*.md")):
        if path.name == "README.md":
            continue
        lines.extend(line for line in path.read_text(encoding="utf-8").split("\n") if len(line.strip()) > 20)
    return lines


def cut(split: Splitter, lines: list[str]) -> tuple[list[list[str]], float]:
    """Each line's sentences, stripped, and the seconds it took."""
    start = time.perf_counter()
    out = [[s.strip() for s in split(line) if s.strip()] for line in lines]
    return out, time.perf_counter() - start


def step_field_keys(rows: list[dict[str, object]]) -> list[str]:
    """The field/language columns of the table, in the order the first row has them."""
    scores = rows[0]["step_fields_mean_f1"]
    assert isinstance(scores, dict)
    return list(scores)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--docs-root", type=Path, default=DEFAULT_DOCS_ROOT)
    parser.add_argument("--gold", type=Path, default=None, help="default: DOCS_ROOT/step-fields/dev.jsonl")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "sentence_splitters.json")
    args = parser.parse_args(argv)
    gold = args.gold or args.docs_root / "step-fields" / "dev.jsonl"
    found = candidates()
    runnable = {name: split for name, split in found.items() if callable(split)}
    missing = {name: why for name, why in found.items() if isinstance(why, str)}
    lines = manual_lines(args.docs_root)
    ours, _ = cut(runnable["procedure-rag"], lines)
    report: dict[str, object] = {"lines": len(lines), "characters": sum(map(len, lines)), "missing": missing}
    rows: list[dict[str, object]] = []
    rng = random.Random(1)
    for name, split in runnable.items():
        sentences, seconds = cut(split, lines)
        differ = [i for i in range(len(lines)) if sentences[i] != ours[i]]
        rows.append(
            {
                "splitter": name,
                "step_fields_mean_f1": step_field_scores(split, gold, args.docs_root),
                "sentences": sum(map(len, sentences)),
                "seconds": round(seconds, 3),
                "lines_cut_differently": len(differ),
                "examples": [
                    {"line": lines[i], "ours": ours[i], "theirs": sentences[i]}
                    for i in rng.sample(differ, min(8, len(differ)))
                ],
            }
        )
    report["rows"] = rows
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    keys = list(step_field_keys(rows))
    print(f"{len(lines):,} lines, {report['characters']:,} characters of the shared Markdown manuals")
    print("| splitter | " + " | ".join(keys) + " | lines cut differently | seconds |")
    print("|---|" + "---|" * (len(keys) + 2))
    for row in rows:
        scores = row["step_fields_mean_f1"]
        assert isinstance(scores, dict)
        cells = " | ".join(f"{scores[k]:.2f}" for k in keys)
        count = row["lines_cut_differently"]
        assert isinstance(count, int)
        share = f"{count} ({count / max(len(lines), 1):.1%})"
        print(f"| {row['splitter']} | {cells} | {share} | {row['seconds']} |")
    for name, why in missing.items():
        print(f"{name}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

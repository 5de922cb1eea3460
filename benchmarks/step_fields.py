"""Step fields against the annotated gold steps: exact match, F1, found, where missed text went.

Chunks every document the gold set names with the product's defaults (400-token children,
no parents), takes each document's steps in reading order (a step repeated as context in a
later chunk counts once), finds each gold step among them by its line, and scores the
fields by the gold set's rule (``benchmarks/_step_fields_eval.py`` states it). Prints, per
field and language, exact match, mean F1, mean F1 where the gold field is set, found
(gold set → ours set) and spurious (gold empty → ours set), then the confusion of where
the missed text went, and checks the issue's targets.

    python benchmarks/step_fields.py [--gold ../shared/data/step-fields/dev.jsonl]
        [--docs-root ../shared/data] [--out benchmarks/results/step_fields.json]
        [--misses FIELD] [--check-targets]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import _step_fields_eval as ev

from procedure_rag import ChunkerOptions, ProcedureChunker, ProcedureStep

DEFAULT_DOCS_ROOT = Path(__file__).resolve().parents[2] / "shared" / "data"
DEFAULT_GOLD = DEFAULT_DOCS_ROOT / "step-fields" / "dev.jsonl"

#: The issue's targets: (field, statistic) → least value, in each language.
TARGETS = {
    **{
        (name, stat): floor
        for name in ("action", "target", "condition", "caution")
        for stat, floor in (("found", 0.90), ("mean", 0.85))
    },
    ("number_norm", "exact"): 0.98,
}


def predicted_steps(path: Path, chunker: ProcedureChunker) -> list[tuple[ProcedureStep, ev.Predicted]]:
    """The steps of one document in reading order, each once, with the fields scored."""
    seen: dict[str, int] = {}
    out: list[tuple[ProcedureStep, ev.Predicted]] = []
    for chunk in chunker.iter_chunks_from_source(path, source_id=str(path)):
        for step in chunk.steps:
            key = step.element_id or f"{len(out)}"
            if key in seen:
                continue  # the same step again: the context of a later part, or a piece of a long step
            seen[key] = len(out)
            out.append((step, as_predicted(step)))
    return out


def as_predicted(step: ProcedureStep) -> ev.Predicted:
    """A product step as the scorer reads it (bullets have no number)."""
    number = getattr(step, "step_number", None)
    if number is None:  # before step numbers were normalised: the printed marker
        number = "" if step.number in {"-", "*", "+", "・", "•"} else step.number
    return ev.Predicted(
        text=step.text,
        fields={name: getattr(step, name) for name in ev.FIELDS},
        number_norm=number,
        depth=step.depth,
    )


def run(gold: Sequence[ev.GoldStep], docs_root: Path, chunker: ProcedureChunker) -> list[ev.Aligned]:
    """Every gold step aligned with the product's steps of its document (and page, for PDFs)."""
    aligned: list[ev.Aligned] = []
    for (doc, page), steps in _grouped(gold):
        path = docs_root / doc
        if not path.is_file():
            msg = f"gold document not found: {path}"
            raise FileNotFoundError(msg)
        found = predicted_steps(path, chunker)
        candidates = [p for s, p in found if page is None or s.page is None or s.page == page]
        aligned.extend(ev.align(steps, candidates))
    return sorted(aligned, key=lambda a: a.gold.sid)


def _grouped(gold: Iterable[ev.GoldStep]) -> Iterator[tuple[tuple[str, int | None], list[ev.GoldStep]]]:
    groups: dict[tuple[str, int | None], list[ev.GoldStep]] = {}
    for g in gold:
        groups.setdefault((g.doc, g.page), []).append(g)
    yield from groups.items()


Table = dict[str, dict[str, dict[str, float | int]]]
Matrix = dict[str, dict[str, dict[str, int]]]


def markdown(table: Table, matrix: Matrix) -> str:
    """The report as Markdown tables: scores per field and language, then the confusion."""
    langs = [lang for lang in table if lang != "all"]
    lines = [
        "| field | lang | exact | mean F1 | mean F1, gold set | found | spurious | gold set |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ev.SCORED:
        for lang in langs:
            c = table[lang][name]
            if name in ev.FIELDS:
                lines.append(
                    f"| {name} | {lang} | {c['exact']:.2f} | {c['mean']:.2f} | {c['mean_gold']:.2f} | "
                    f"{c['found']:.2f} | {c['spurious']:.2f} | {c['gold_set']} |"
                )
            else:
                lines.append(f"| {name} | {lang} | {c['exact']:.2f} | | | | | {c['n']} |")
    counts = " / ".join(f"{lang} {table[lang]['matched']['n']}" for lang in langs)
    matched = " / ".join(f"{lang} {table[lang]['matched']['mean']:.2f}" for lang in langs)
    lines += ["", f"Gold steps: {counts}; found among the product's steps: {matched}.", ""]
    columns = [*ev.DESTINATIONS, ev.EMPTY, ev.OTHER_TEXT, ev.NO_STEP]
    lines += [
        "Where the text of a missed field went (a set gold field scoring under 0.5):",
        "",
        "| gold field | lang | " + " | ".join(columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for name in ev.FIELDS:
        for lang in langs:
            row = matrix.get(lang, {}).get(name, {})
            cells = " | ".join("—" if c == name else str(row.get(c, 0)) for c in columns)
            lines.append(f"| {name} | {lang} | {cells} |")
    return "\n".join(lines)


def unmet_targets(table: Table) -> list[str]:
    """The issue's targets the table misses, one line each."""
    return [
        f"{lang} {name} {stat} {table[lang][name][stat]:.2f} < {floor:.2f}"
        for lang in table
        if lang != "all"
        for (name, stat), floor in TARGETS.items()
        if float(table[lang][name][stat]) < floor
    ]


def print_misses(aligned: Iterable[ev.Aligned], name: str) -> None:
    """Each step whose field ``name`` scored under 1: gold, ours, score (for looking, not for the table)."""
    for a in aligned:
        if a.scores[name] >= 1.0:
            continue
        ours = (
            ""
            if a.predicted is None
            else str(
                a.predicted.fields.get(name, "")
                if name in ev.FIELDS
                else (a.predicted.number_norm if name == "number_norm" else a.predicted.depth)
            )
        )
        gold = (
            a.gold.fields[name]
            if name in ev.FIELDS
            else (a.gold.number_norm if name == "number_norm" else a.gold.depth)
        )
        print(f"{a.gold.sid} {a.scores[name]:.2f}\n  line: {a.gold.line}\n  gold: {gold}\n  ours: {ours}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, default=DEFAULT_GOLD)
    parser.add_argument("--docs-root", type=Path, default=DEFAULT_DOCS_ROOT)
    parser.add_argument("--chunk-size", type=int, default=400)
    parser.add_argument("--out", type=Path, help="write the figures as JSON here (and Markdown beside it)")
    parser.add_argument("--misses", choices=ev.SCORED, help="also print every step that field misses")
    parser.add_argument("--check-targets", action="store_true", help="exit 1 when a target is not met")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    gold = ev.load_gold(args.gold)
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=args.chunk_size, emit_parents=False))
    aligned = run(gold, args.docs_root, chunker)
    table, matrix = ev.report(aligned), ev.confusion(aligned)
    text = markdown(table, matrix)
    print(text)
    unmet = unmet_targets(table)
    print("\nTargets (issue 19): " + ("all met" if not unmet else "not met: " + "; ".join(unmet)))
    if args.misses:
        print_misses(aligned, args.misses)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        result = {
            "gold": str(args.gold.name),
            "steps": len(gold),
            "chunk_size": args.chunk_size,
            "python": platform.python_version(),
            "scores": table,
            "confusion": matrix,
            "unmet_targets": unmet,
        }
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        args.out.with_suffix(".md").write_text(text + "\n", encoding="utf-8")
    return 1 if args.check_targets and unmet else 0


if __name__ == "__main__":
    sys.exit(main())

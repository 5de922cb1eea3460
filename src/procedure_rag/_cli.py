"""The ``procedure-rag`` command line.

Subcommands:

- ``split FILE...``: chunk files and print the chunks, readably or as JSON lines;
- ``demo``: chunk the bundled sample manuals and show their procedure blocks.

Each subcommand is one ``_add_*`` function that declares its arguments and names its
handler; :func:`main` parses, builds nothing global, runs the handler and turns input
errors into one line on stderr. Standard library only: the core imports no framework.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import NoReturn, TextIO

from procedure_rag._chunker import ProcedureChunker
from procedure_rag._metadata import chunk_metadata, read_metadata
from procedure_rag._options import ChunkerOptions
from procedure_rag._readers import FORMATS
from procedure_rag._types import Chunk, ChunkLevel, ChunkType, ProcedureStep

__all__ = ["main"]

PROG = "procedure-rag"

#: Exit codes: input errors (missing, unreadable or unusable files) and usage errors
#: (argparse's own code, also used for option values the core rejects).
EXIT_INPUT = 1
EXIT_USAGE = 2

#: Suffixes of the bundled sample manuals; licences and SOURCES.md are not manuals.
_SAMPLE_SUFFIXES = (".md", ".txt")
_SAMPLE_SKIP = frozenset({"SOURCES.md"})

#: Step fields shown after the action, in this order.
_STEP_FIELDS = ("target", "condition", "result", "caution")

_TEXT_INDENT = "      "

#: Source id and display name of standard input (given as ``-``).
STDIN_NAME = "<stdin>"


class CliError(Exception):
    """An error the user can fix; shown as one line, never as a traceback (unless --verbose).

    Attributes:
        exit_code: ``EXIT_INPUT`` or ``EXIT_USAGE``.
    """

    def __init__(self, message: str, *, exit_code: int = EXIT_INPUT) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (argparse prints usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


# ----- colour ---------------------------------------------------------------------------


def use_colour(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Whether to colour output: only on a terminal, and never when ``NO_COLOR`` is set.

    ``NO_COLOR`` counts when present and not empty (https://no-color.org).
    """
    if environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


@dataclass(frozen=True, slots=True)
class Style:
    """ANSI styling that turns into plain text when ``enabled`` is false."""

    enabled: bool = False

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled and text else text

    def header(self, text: str) -> str:
        """Bold cyan: a chunk's header line."""
        return self._wrap("1;36", text)

    def label(self, text: str) -> str:
        """Dim: field labels."""
        return self._wrap("2", text)

    def condition(self, text: str) -> str:
        """Yellow: conditions."""
        return self._wrap("33", text)

    def caution(self, text: str) -> str:
        """Red: cautions."""
        return self._wrap("31", text)

    def strong(self, text: str) -> str:
        """Bold: file banners and summary titles."""
        return self._wrap("1", text)


# ----- readable rendering ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChunkView:
    """What the readable renderer needs besides the chunk itself."""

    source: str
    number: int
    tokens: int
    child_numbers: tuple[int, ...] = ()


def _step_line(step: ProcedureStep, style: Style) -> str:
    parts = [step.action or step.text]
    if step.is_continuation:
        parts[0] += " (continued)"
    for name in _STEP_FIELDS:
        value = getattr(step, name)
        if not value:
            continue
        if name == "condition":
            value = style.condition(value)
        elif name == "caution":
            value = style.caution(value)
        parts.append(f"{style.label(name + ':')} {value}")
    indent = "  " * step.depth
    return f"    {indent}{style.label('step')} {step.number}  " + style.label(" | ").join(parts)


def render_chunk(chunk: Chunk, view: ChunkView, style: Style) -> Iterator[str]:
    """Yield the lines that show ``chunk`` to a person.

    A header (file, chunk number, type, page when known, tokens), the section path,
    the condition when set, one line per step with its set fields, then the text,
    indented. A parent chunk shows the chunk numbers of its children instead of the
    steps and text, which its children already show.
    """
    head = [view.source, f"chunk {view.number}", chunk.chunk_type.value]
    if chunk.level is ChunkLevel.PARENT:
        head.append("parent")
    if chunk.page is not None:
        head.append(f"page {chunk.page}")
    head.append(f"{view.tokens} tokens")
    if chunk.continued:
        head.append("continued")
    yield style.header("== " + " | ".join(head))
    section = " > ".join(chunk.section_path) if chunk.section_path else "(none)"
    yield f"  {style.label('section:')}   {section}"
    if chunk.condition:
        yield f"  {style.label('condition:')} {style.condition(chunk.condition)}"
    if chunk.level is ChunkLevel.PARENT:
        numbers = ", ".join(str(n) for n in view.child_numbers) or "(none)"
        yield f"  {style.label('children:')}  chunks {numbers}"
        return
    if chunk.steps:
        yield f"  {style.label('steps:')}"
        for step in chunk.steps:
            yield _step_line(step, style)
    yield f"  {style.label('text:')}"
    for line in chunk.text.splitlines():
        yield (_TEXT_INDENT + line).rstrip()


def _views(
    chunks: Iterable[Chunk], source: str, length: Callable[[str], int]
) -> Iterator[tuple[Chunk, ChunkView]]:
    """Number chunks in output order and tell each parent its children's numbers."""
    numbers: dict[str, int] = {}
    for number, chunk in enumerate(chunks, start=1):
        numbers[chunk.chunk_id] = number
        children = tuple(numbers[c] for c in chunk.child_ids if c in numbers)
        tokens = length(chunk.text)
        yield chunk, ChunkView(source=source, number=number, tokens=tokens, child_numbers=children)


# ----- input ----------------------------------------------------------------------------


def _read_input(path: str, stdin: TextIO) -> bytes:
    """Read ``path`` (``-`` for stdin) as bytes; the core decodes and validates them."""
    if path == "-":
        buffer = getattr(stdin, "buffer", None)
        if buffer is not None:
            data: bytes = buffer.read()
            return data
        return stdin.read().encode("utf-8", errors="surrogateescape")
    file = Path(path)
    try:
        return file.read_bytes()
    except FileNotFoundError:
        raise CliError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise CliError(f"not a file: {path}") from None
    except PermissionError:
        raise CliError(f"permission denied: {path}") from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _chunks_of(
    chunker: ProcedureChunker, data: bytes, source: str, source_format: str = "auto"
) -> Iterator[Chunk]:
    """Chunk one input with the reader its format (or its suffix) names.

    Raises:
        CliError: Naming the file, when the core finds the input unusable.
    """
    try:
        yield from chunker.iter_chunks_from_source(
            data, source_id=source, source_format=source_format, suffix=Path(source).suffix or None
        )
    except ValueError as exc:
        raise CliError(f"{source}: {exc}") from exc


def _build_chunker(options: Callable[[], ChunkerOptions]) -> ProcedureChunker:
    try:
        built = options()
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc), exit_code=EXIT_USAGE) from exc
    try:
        return ProcedureChunker(built)
    except ValueError as exc:  # the token encoding could not be loaded offline
        raise CliError(str(exc)) from exc


# ----- split ----------------------------------------------------------------------------


def _add_split(commands: argparse._SubParsersAction[_Parser], common: _Parser) -> None:
    parser = commands.add_parser(
        "split",
        parents=[common],
        help="chunk files and print the chunks",
        description="Chunk each FILE into procedure blocks and print them, readably or as JSON lines.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 file to chunk; '-' reads stdin")
    parser.add_argument(
        "--chunk-size", type=int, default=400, metavar="N", help="child chunk budget in tokens (default 400)"
    )
    parser.add_argument(
        "--language", default="auto", metavar="auto|ja|en", help="document language (default auto)"
    )
    parser.add_argument(
        "--format",
        dest="source_format",
        default="auto",
        metavar="FORMAT",
        help=(
            f"source format: auto (from the suffix and content, the default) or one of {', '.join(FORMATS)};"
            " text is plain or PDF-extracted text, the last five read a layout parser's JSON"
        ),
    )
    parser.add_argument(
        "--parents", action="store_true", help="also emit parent chunks (a section or a run of children)"
    )
    parser.add_argument(
        "--jsonl", action="store_true", help="print one JSON object per chunk: chunk_id, text, metadata"
    )
    parser.set_defaults(handler=_run_split)


def _run_split(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    if args.source_format != "auto" and args.source_format not in FORMATS:
        raise CliError(
            f"--format must be auto or one of {', '.join(FORMATS)}, got {args.source_format!r}",
            exit_code=EXIT_USAGE,
        )
    chunker = _build_chunker(
        lambda: ChunkerOptions(chunk_size=args.chunk_size, language=args.language, emit_parents=args.parents)
    )
    style = Style(enabled=not args.jsonl and use_colour(out, os.environ))
    first = True
    for path in args.files:
        source = STDIN_NAME if path == "-" else path
        chunks = _chunks_of(chunker, _read_input(path, stdin), source, args.source_format)
        if args.jsonl:
            for chunk in chunks:
                record = {
                    "chunk_id": chunk.chunk_id,
                    "text": chunk.text,
                    "metadata": read_metadata(chunk_metadata(chunk, {"source": source})),
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
            continue
        for chunk, view in _views(chunks, source, chunker.length):
            if not first:
                out.write("\n")
            first = False
            out.writelines(line + "\n" for line in render_chunk(chunk, view, style))
    return 0


# ----- demo -----------------------------------------------------------------------------


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
    shown: list[tuple[Chunk, ChunkView]] = field(default_factory=list)

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


def _non_negative(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {value!r}") from None
    if number < 0:
        msg = f"must be an integer >= 0, got {number}"
        raise argparse.ArgumentTypeError(msg)
    return number


def _add_demo(commands: argparse._SubParsersAction[_Parser], common: _Parser) -> None:
    parser = commands.add_parser(
        "demo",
        parents=[common],
        help="chunk the bundled sample manuals and show their procedure blocks",
        description=(
            "Chunk every bundled sample manual (offline, default options), print its procedure "
            "blocks and a summary line per file. A step counts as under a condition when it, "
            "or the lead-in of its list, states one."
        ),
    )
    parser.add_argument(
        "--limit",
        type=_non_negative,
        default=3,
        metavar="N",
        help="show at most N procedure blocks per file (default 3); the summary counts all",
    )
    parser.set_defaults(handler=_run_demo)


def _run_demo(args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
    chunker = _build_chunker(ChunkerOptions)
    style = Style(enabled=use_colour(out, os.environ))
    summaries: list[tuple[str, Summary]] = []
    for rel, sample in iter_samples():
        name = "samples/" + rel
        summary = Summary()
        for chunk, view in _views(_chunks_of(chunker, sample.read_bytes(), name), name, chunker.length):
            summary.add(chunk)
            if (
                chunk.level is ChunkLevel.CHILD
                and chunk.chunk_type is ChunkType.PROCEDURE
                and len(summary.shown) < args.limit
            ):
                summary.shown.append((chunk, view))
        summaries.append((name, summary))
        out.write(style.strong(f"#### {name}") + "\n\n")
        for chunk, view in summary.shown:
            out.writelines(line + "\n" for line in render_chunk(chunk, view, style))
            out.write("\n")
        if not summary.procedure_blocks:
            out.write("(no procedure blocks)\n\n")
        hidden = summary.procedure_blocks - len(summary.shown)
        if hidden:
            out.write(f"... {hidden} more procedure blocks (--limit {args.limit})\n\n")
    out.write(style.strong("Summary") + "\n")
    out.writelines(summary.line(name) + "\n" for name, summary in summaries)
    return 0


# ----- entry point ----------------------------------------------------------------------

_SUBCOMMANDS = (_add_split, _add_demo)


def _version() -> str:
    try:
        return version("procedure-rag")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``procedure-rag`` and its subcommands."""
    common = _Parser(add_help=False)
    common.add_argument("--verbose", action="store_true", help="show the traceback of an error")
    parser = _Parser(prog=PROG, description="Procedure-aware chunking of manuals, runbooks and admin guides.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in _SUBCOMMANDS:
        add(commands, common)
    return parser


def _utf8_safe(stream: TextIO) -> TextIO:
    """Keep a non-UTF-8 terminal from crashing on Japanese text: escape what it cannot show."""
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("_", "-")
    if encoding not in ("utf-8", "utf8") and isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(errors="backslashreplace")
    return stream


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: Arguments without the program name; ``None`` reads ``sys.argv``.

    Returns:
        The exit code: 0 on success, 1 for an input error, 2 for a usage error.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors; argparse already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    out = _utf8_safe(sys.stdout)
    handler: Callable[[argparse.Namespace, TextIO, TextIO], int] = args.handler
    try:
        code = handler(args, out, sys.stdin)
        out.flush()
    except CliError as exc:
        if args.verbose:
            traceback.print_exc()
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130  # 128 + SIGINT, as shells report it
    except BrokenPipeError:
        # The reader went away (`procedure-rag demo | head`): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_INPUT
    return code

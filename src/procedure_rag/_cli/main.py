"""The ``procedure-rag`` command line.

Subcommands:

- ``split FILE...``: chunk files and print the chunks, readably or as JSON lines;
- ``show FILE --html OUT.html``: draw a file with its chunks as coloured blocks;
- ``index FILE_OR_DIR... --persist DIR``: build the multi-vector index
  (:mod:`procedure_rag._cli.index`);
- ``query QUESTION --persist DIR``: print the chunks the index finds;
- ``demo``: index the bundled sample manuals and answer questions in both languages
  (:mod:`procedure_rag._cli.demo`).

Each subcommand is one ``add_*`` function that declares its arguments and names its
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
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TextIO

from procedure_rag._chunking.options import ChunkerOptions
from procedure_rag._cli.common import (
    EXIT_INPUT,
    EXIT_USAGE,
    PROG,
    STDIN_NAME,
    CliError,
    Commands,
    Parser,
    Streams,
    Style,
    add_command,
    build_chunker,
    chunk_input,
    chunks_of,
    read_input,
    render_chunk,
    use_colour,
    views,
)
from procedure_rag._cli.demo import add_demo
from procedure_rag._cli.index import add_index, add_query
from procedure_rag._cli.migrate import add_migrate
from procedure_rag._metadata import chunk_metadata, read_metadata
from procedure_rag._readers.registry import FORMATS, LAYOUT_FORMATS, detect_format, source_text
from procedure_rag._types import ChunkLevel

__all__ = ["build_parser", "main"]


# ----- split ----------------------------------------------------------------------------


def _add_format(parser: argparse.ArgumentParser) -> None:
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
            " text is plain or PDF-extracted text;"
            f" {', '.join(LAYOUT_FORMATS)} read a layout parser's JSON"
        ),
    )


def _check_format(source_format: str) -> None:
    if source_format != "auto" and source_format not in FORMATS:
        raise CliError(
            f"--format must be auto or one of {', '.join(FORMATS)}, got {source_format!r}",
            exit_code=EXIT_USAGE,
        )


def _add_split(commands: Commands, common: Parser) -> None:
    parser = add_command(
        commands,
        common,
        "split",
        summary="chunk files and print the chunks",
        description="Chunk each FILE into procedure blocks and print them, readably or as JSON lines.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 file to chunk; '-' reads stdin")
    _add_format(parser)
    parser.add_argument(
        "--parents", action="store_true", help="also emit parent chunks (a section or a run of children)"
    )
    parser.add_argument(
        "--jsonl", action="store_true", help="print one JSON object per chunk: chunk_id, text, metadata"
    )
    parser.set_defaults(handler=_run_split)


def _run_split(args: argparse.Namespace, streams: Streams) -> int:
    _check_format(args.source_format)
    chunker = build_chunker(
        lambda: ChunkerOptions(chunk_size=args.chunk_size, language=args.language, emit_parents=args.parents)
    )
    out = streams.out
    style = Style(enabled=not args.jsonl and use_colour(out, os.environ))
    first = True
    for path in args.files:
        source = STDIN_NAME if path == "-" else path
        chunks = chunks_of(
            chunker, chunk_input(path, streams.stdin, args.source_format), source, args.source_format
        )
        if args.jsonl:
            for chunk in chunks:
                record = {
                    "chunk_id": chunk.chunk_id,
                    "text": chunk.text,
                    "metadata": read_metadata(chunk_metadata(chunk, {"source": source})),
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
            continue
        for chunk, view in views(chunks, source, chunker.length):
            if not first:
                out.write("\n")
            first = False
            out.writelines(line + "\n" for line in render_chunk(chunk, view, style))
    return 0


# ----- show -----------------------------------------------------------------------------


def _add_show(commands: Commands, common: Parser) -> None:
    parser = add_command(
        commands,
        common,
        "show",
        summary="draw a file with its chunks as coloured blocks, in an HTML page",
        description=(
            "Chunk FILE and write a self-contained HTML page that draws the document with each "
            "chunk as a coloured block and each step's fields visible."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="the file to chunk; '-' reads stdin")
    parser.add_argument("--html", required=True, metavar="OUT.html", help="the page to write")
    _add_format(parser)
    parser.set_defaults(handler=_run_show)


def _run_show(args: argparse.Namespace, streams: Streams) -> int:
    from procedure_rag._cli.html_view import render_document_html  # noqa: PLC0415 - only this command draws

    _check_format(args.source_format)
    chunker = build_chunker(lambda: ChunkerOptions(chunk_size=args.chunk_size, language=args.language))
    source = STDIN_NAME if args.file == "-" else args.file
    data = read_input(args.file, streams.stdin)
    chunks = list(chunks_of(chunker, data, source, args.source_format))
    try:
        text = _document_text(data, source, args.source_format)
        page = render_document_html(
            text, chunks, title=Path(source).name, length=chunker.length, budget=args.chunk_size
        )
    except ValueError as exc:
        raise CliError(f"{source}: {exc}") from exc
    out = Path(args.html)
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {args.html}: {exc.strerror or exc}") from exc
    children = sum(1 for c in chunks if c.level is ChunkLevel.CHILD)
    streams.out.write(f"wrote {out} ({children} chunks of {source})\n")
    return 0


def _document_text(data: bytes, source: str, source_format: str) -> str:
    """The text the chunks' spans point into: the file's text, or a PDF's extracted text."""
    fmt = (
        detect_format(data, suffix=Path(source).suffix or None) if source_format == "auto" else source_format
    )
    return source_text(data, fmt=fmt, source_id=source)


# ----- entry point ----------------------------------------------------------------------

_SUBCOMMANDS: tuple[Callable[[Commands, Parser], None], ...] = (
    _add_split,
    _add_show,
    add_index,
    add_query,
    add_migrate,
    add_demo,
)


def _version() -> str:
    try:
        return version("procedure-rag")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``procedure-rag`` and its subcommands."""
    common = Parser(add_help=False)
    common.add_argument("--verbose", action="store_true", help="show the traceback of an error")
    parser = Parser(prog=PROG, description="Procedure-aware chunking and retrieval for manuals and runbooks.")
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
    streams = Streams(out=_utf8_safe(sys.stdout), err=_utf8_safe(sys.stderr), stdin=sys.stdin)
    handler: Callable[[argparse.Namespace, Streams], int] = args.handler
    try:
        code = handler(args, streams)
        streams.out.flush()
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

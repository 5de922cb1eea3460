"""What every ``procedure-rag`` subcommand shares: errors, streams, colour, input, chunk rendering.

Standard library only: the core imports no framework.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TextIO, TypeAlias

from procedure_rag._chunking.chunker import ProcedureChunker
from procedure_rag._chunking.options import ChunkerOptions
from procedure_rag._types import Chunk, ChunkLevel, ProcedureStep

__all__ = [
    "EXIT_INPUT",
    "EXIT_USAGE",
    "PROG",
    "STDIN_NAME",
    "ChunkView",
    "CliError",
    "Commands",
    "Parser",
    "Streams",
    "Style",
    "add_command",
    "build_chunker",
    "chunk_input",
    "chunks_of",
    "display_path",
    "positive_int",
    "read_input",
    "render_chunk",
    "use_colour",
    "views",
]

PROG = "procedure-rag"

#: Exit codes: input errors (missing, unreadable or unusable files, an unusable index)
#: and usage errors (argparse's own code, also used for option values the core rejects).
EXIT_INPUT = 1
EXIT_USAGE = 2

#: Source id and display name of standard input (given as ``-``).
STDIN_NAME = "<stdin>"

#: Step fields shown after the action, in this order.
_STEP_FIELDS = ("target", "condition", "result", "caution")

_TEXT_INDENT = "      "

#: Labels of the lines under a chunk's header are padded to this width.
_LABEL_WIDTH = 11


class CliError(Exception):
    """An error the user can fix; shown as one line, never as a traceback (unless --verbose).

    Attributes:
        exit_code: ``EXIT_INPUT`` or ``EXIT_USAGE``.
    """

    def __init__(self, message: str, *, exit_code: int = EXIT_INPUT) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (argparse prints usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


#: What each ``add_*`` function registers its subcommand with.
Commands: TypeAlias = "argparse._SubParsersAction[Parser]"


def add_command(commands: Commands, common: Parser, name: str, *, summary: str, description: str) -> Parser:
    """Register the subcommand ``name`` with the options every subcommand shares.

    Args:
        commands: The subcommands of the top-level parser.
        common: The parent parser holding the shared options.
        name: The subcommand's name.
        summary: One line for the top-level ``--help``.
        description: The subcommand's own ``--help`` text.

    Returns:
        The subcommand's parser, for its own arguments.
    """
    return commands.add_parser(name, parents=[common], help=summary, description=description)


@dataclass(frozen=True, slots=True)
class Streams:
    """The streams a handler reads and writes (the process's, or a test's)."""

    out: TextIO
    err: TextIO
    stdin: TextIO


def positive_int(value: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value!r}") from None
    if number < 1:
        msg = f"must be an integer >= 1, got {number}"
        raise argparse.ArgumentTypeError(msg)
    return number


def display_path(path: str) -> str:
    """``path`` relative to the working folder when it lies inside it, else as it is."""
    if not os.path.isabs(path):
        return path
    try:
        relative = Path(path).relative_to(Path.cwd())
    except ValueError:
        return path
    return relative.as_posix()


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
    """What the readable renderer needs besides the chunk itself.

    Attributes:
        source: The file shown in the header.
        number: The chunk's number in the output.
        tokens: Its size, when known.
        child_numbers: A parent's children, by number.
        label: What the number counts (``chunk``, ``result``…).
        score: A retrieval score, shown in the header when set.
        notes: ``(label, value)`` lines shown under the header.
    """

    source: str
    number: int
    tokens: int | None = None
    child_numbers: tuple[int, ...] = ()
    label: str = "chunk"
    score: float | None = None
    notes: tuple[tuple[str, str], ...] = ()


def _field(label: str, value: str, style: Style) -> str:
    return f"  {style.label(label + ':')}{' ' * max(1, _LABEL_WIDTH - len(label) - 1)}{value}"


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


def render_chunk(chunk: Chunk, view: ChunkView, style: Style, *, text: bool = True) -> Iterator[str]:
    """Yield the lines that show ``chunk`` to a person.

    A header (file, number, score when set, type, page when known, tokens when known),
    the view's notes, the section path, the condition when set, one line per step with
    its set fields, then the text, indented (unless ``text`` is false). A parent chunk
    shows the chunk numbers of its children instead of the steps and text, which its
    children already show.
    """
    head = [view.source, f"{view.label} {view.number}"]
    if view.score is not None:
        head.append(f"score {view.score:.3f}")
    head.append(chunk.chunk_type.value)
    if chunk.level is ChunkLevel.PARENT:
        head.append("parent")
    if chunk.page is not None:
        head.append(f"page {chunk.page}")
    if view.tokens is not None:
        head.append(f"{view.tokens} tokens")
    if chunk.continued:
        head.append("continued")
    yield style.header("== " + " | ".join(head))
    for label, value in view.notes:
        yield _field(label, value, style)
    yield _field("section", " > ".join(chunk.section_path) if chunk.section_path else "(none)", style)
    if chunk.condition:
        yield _field("condition", style.condition(chunk.condition), style)
    if chunk.level is ChunkLevel.PARENT:
        numbers = ", ".join(str(n) for n in view.child_numbers) or "(none)"
        yield _field("children", f"chunks {numbers}", style)
        return
    if chunk.steps:
        yield f"  {style.label('steps:')}"
        for step in chunk.steps:
            yield _step_line(step, style)
    if not text:
        return
    yield f"  {style.label('text:')}"
    for line in chunk.text.splitlines():
        yield (_TEXT_INDENT + line).rstrip()


def views(
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


def read_input(path: str, stdin: TextIO) -> bytes:
    """Read ``path`` (``-`` for stdin) as bytes; the core decodes and validates them.

    Raises:
        CliError: When the file is missing, a folder, or unreadable.
    """
    if path == "-":
        buffer = getattr(stdin, "buffer", None)
        if buffer is not None:
            data: bytes = buffer.read()
            return data
        return stdin.read().encode("utf-8", errors="surrogateescape")
    return _reading(path, Path(path).read_bytes)


def chunk_input(path: str, stdin: TextIO, source_format: str = "auto") -> bytes | Path:
    """What the chunker reads for ``path`` (``-`` for stdin): its bytes, or a PDF file's path.

    A PDF file is given as its path: PDFium reads it page by page, so a long or
    image-heavy PDF is never held in memory as bytes. Anything else is read whole
    (:func:`read_input`), its format told from its content and suffix as before.

    Raises:
        CliError: When the file is missing, a folder, or unreadable.
    """
    if path != "-" and source_format in ("auto", "pdf"):
        file = Path(path)

        def head() -> bytes:
            with file.open("rb") as f:
                return f.read(5)

        if _reading(path, head) == b"%PDF-":
            return file
    return read_input(path, stdin)


def _reading(path: str, read: Callable[[], bytes]) -> bytes:
    """``read()``, its ``OSError`` told as a :class:`CliError` naming ``path``."""
    try:
        return read()
    except FileNotFoundError:
        raise CliError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise CliError(f"not a file: {path}") from None
    except PermissionError:
        raise CliError(f"permission denied: {path}") from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from exc


def chunks_of(
    chunker: ProcedureChunker, data: bytes | Path, source: str, source_format: str = "auto"
) -> Iterator[Chunk]:
    """Chunk one input (its bytes, or a PDF's path: :func:`chunk_input`) with the reader its format names.

    Raises:
        CliError: Naming the file, when the core finds the input unusable, a reader
            needs a package that is not installed, or the file cannot be read.
    """
    if isinstance(data, Path) and source_format == "auto":
        source_format = "pdf"  # chunk_input gives a path only for a file that starts as a PDF does
    try:
        yield from chunker.iter_chunks_from_source(
            data, source_id=source, source_format=source_format, suffix=Path(source).suffix or None
        )
    except ValueError as exc:
        raise CliError(f"{display_path(source)}: {exc}") from exc
    except ImportError as exc:  # an optional reader (pypdf, docling-core…) is missing
        raise CliError(f"{display_path(source)}: {exc}") from exc
    except OSError as exc:  # a PDF read through its path, gone or unreadable since it was opened
        raise CliError(f"cannot read {display_path(source)}: {exc.strerror or exc}") from exc


def build_chunker(options: Callable[[], ChunkerOptions]) -> ProcedureChunker:
    """A chunker over ``options()``, with the core's messages as usage errors.

    Raises:
        CliError: When an option value is rejected, or the token encoding cannot load.
    """
    try:
        built = options()
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc), exit_code=EXIT_USAGE) from exc
    try:
        return ProcedureChunker(built)
    except ValueError as exc:  # the token encoding could not be loaded offline
        raise CliError(str(exc)) from exc

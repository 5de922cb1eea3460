"""Where the command line's index lives: a folder, or a Chroma server and a docstore.

``--persist DIR`` is the embedded default (Chroma and ``docstore.sqlite3`` in DIR);
``--chroma HOST:PORT --docstore URL`` is an index kept on servers (a Chroma server and a
PostgreSQL docstore, or a SQLite file on this machine), which several machines can serve.
``index``, ``query`` and ``migrate`` read these options through :func:`add_target` and
:func:`target_of`.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path

from procedure_rag._chroma.collection import DEFAULT_COLLECTION, ChromaTarget, docstore_path
from procedure_rag._cli.common import EXIT_USAGE, CliError
from procedure_rag._store.opening import is_postgres_url, open_docstore

__all__ = ["IndexTarget", "add_collection", "add_target", "parse_host_port", "target_of"]

_DEFAULT_CHROMA_PORT = 8000
#: Chroma's rule for a collection's name.
_COLLECTION_NAME = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9._-]{1,510})[a-zA-Z0-9]")


@dataclass(frozen=True, slots=True)
class IndexTarget:
    """An index's place: ``persist`` (embedded), or ``chroma`` (a server), and its docstore.

    Attributes:
        persist: The index folder, for embedded Chroma.
        chroma: ``(host, port)`` of a Chroma server.
        docstore: A ``postgresql://`` URL or a SQLite file; ``None``: the folder's own.
        collection: The representations collection (several indexes can share a server).
    """

    persist: Path | None = None
    chroma: tuple[str, int] | None = None
    docstore: str | None = None
    collection: str = DEFAULT_COLLECTION

    @property
    def docstore_location(self) -> str:
        """The docstore: the one given, or ``docstore.sqlite3`` in the folder."""
        if self.docstore is not None:
            return self.docstore
        if self.persist is None:  # pragma: no cover - target_of never builds one
            msg = "an index on a Chroma server needs --docstore"
            raise CliError(msg, exit_code=EXIT_USAGE)
        return str(docstore_path(self.persist))

    @property
    def chroma_target(self) -> ChromaTarget:
        """Where the collection lives, as the index opens it."""
        if self.chroma is not None:
            return ChromaTarget(host=self.chroma[0], port=self.chroma[1])
        return ChromaTarget(persist_directory=os.fspath(self.persist or "."))

    def describe(self) -> str:
        """The index's place in a message: the folder, or the two servers."""
        if self.chroma is None:
            where = str(self.persist)
            return where if self.docstore is None else f"{where} (docstore {self._shown_docstore()})"
        host, port = self.chroma
        return f"Chroma {host}:{port} + {self._shown_docstore()}"

    def _shown_docstore(self) -> str:
        location = self.docstore_location
        if is_postgres_url(location):
            from procedure_rag._store.postgres import parse_url  # noqa: PLC0415 - optional

            return parse_url(location).shown
        return location

    def has_docstore(self) -> bool:
        """Whether the docstore exists (a PostgreSQL one is asked when opened: ``create=False``)."""
        location = self.docstore_location
        return is_postgres_url(location) or Path(location).is_file()

    def recorded_model(self) -> str | None:
        """The embedding model the docstore records (``None``: none yet, or no docstore)."""
        if not self.has_docstore():
            return None
        with open_docstore(self.docstore_location, create=False) as store:
            return store.index_info().embedding_model


def parse_host_port(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``HOST``, port 8000) as argparse's type for ``--chroma``."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = value, str(_DEFAULT_CHROMA_PORT)
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        msg = f"expected HOST:PORT (a Chroma server, e.g. localhost:8000), got {value!r}"
        raise argparse.ArgumentTypeError(msg)
    return host.strip("[]"), int(port)


def collection_name(value: str) -> str:
    """A Chroma collection name, as argparse's type for ``--collection``."""
    if not _COLLECTION_NAME.fullmatch(value):
        msg = (
            f"expected 3-512 letters, digits, '.', '_' or '-', starting and ending with a letter "
            f"or digit (a Chroma collection name), got {value!r}"
        )
        raise argparse.ArgumentTypeError(msg)
    return value


def add_target(parser: argparse.ArgumentParser, *, persist_help: str) -> None:
    """``--persist DIR``, or ``--chroma HOST:PORT`` with ``--docstore URL``."""
    parser.add_argument("--persist", metavar="DIR", help=persist_help)
    parser.add_argument(
        "--chroma",
        type=parse_host_port,
        metavar="HOST:PORT",
        help="a Chroma server (chroma run) instead of a folder; needs --docstore",
    )
    parser.add_argument(
        "--docstore",
        metavar="URL",
        help="the docstore: postgresql://user:password@host:port/db (?schema=NAME), or a SQLite file",
    )
    add_collection(parser)


def add_collection(parser: argparse.ArgumentParser) -> None:
    """``--collection NAME``: the representations collection (default ``procedure_rag``)."""
    parser.add_argument(
        "--collection",
        type=collection_name,
        default=DEFAULT_COLLECTION,
        metavar="NAME",
        help=f"the representations collection in DIR or on the server (default {DEFAULT_COLLECTION})",
    )


def target_of(args: argparse.Namespace) -> IndexTarget:
    """The target the options name.

    Raises:
        CliError: (usage) When neither ``--persist`` nor ``--chroma`` is given, both are,
            or ``--chroma`` comes without ``--docstore``.
    """
    persist, chroma, docstore = args.persist, args.chroma, args.docstore
    if (persist is None) == (chroma is None):
        msg = "give either --persist DIR (an index folder) or --chroma HOST:PORT with --docstore URL"
        raise CliError(msg, exit_code=EXIT_USAGE)
    if chroma is not None and docstore is None:
        msg = "--chroma needs --docstore: postgresql://user@host:port/database (or a SQLite file)"
        raise CliError(msg, exit_code=EXIT_USAGE)
    return IndexTarget(
        persist=None if persist is None else Path(persist),
        chroma=chroma,
        docstore=docstore,
        collection=args.collection,
    )

"""``procedure-rag migrate``: copy an index folder's docstore into PostgreSQL (and its vectors to a server).

``migrate --persist DIR --docstore postgresql://…`` copies the folder's ``docstore.sqlite3``
(chunks, vector ledger, lexical words, embedding model) into the database; with
``--chroma HOST:PORT`` the folder's representations collection goes to that Chroma server
too, so the whole index then lives on the two servers (``query --chroma HOST:PORT
--docstore URL``). The folder is only read. Running it again completes a copy that
stopped part way.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from procedure_rag._chroma.collection import ChromaTarget, copy_collection, docstore_path
from procedure_rag._cli.common import EXIT_USAGE, CliError, Commands, Parser, Streams, add_command
from procedure_rag._cli.target import add_collection, parse_host_port
from procedure_rag._store.chunk_store import ChunkStore
from procedure_rag._store.migrate import copy_docstore
from procedure_rag._store.opening import is_postgres_url, open_docstore

__all__ = ["add_migrate", "run_migrate"]


def add_migrate(commands: Commands, common: Parser) -> None:
    """Register ``migrate``."""
    parser = add_command(
        commands,
        common,
        "migrate",
        summary="copy an index folder's docstore into PostgreSQL (and its vectors to a Chroma server)",
        description=(
            "Copy the docstore of the index in DIR (chunks, vector ledger, lexical words, the "
            "embedding model) into the PostgreSQL database URL; with --chroma, copy its "
            "representations collection to that Chroma server as well. DIR is only read."
        ),
    )
    parser.add_argument("--persist", metavar="DIR", required=True, help="the index folder to copy")
    parser.add_argument(
        "--docstore",
        metavar="URL",
        required=True,
        help="postgresql://user:password@host:port/db (?schema=NAME)",
    )
    parser.add_argument(
        "--chroma",
        type=parse_host_port,
        metavar="HOST:PORT",
        help="also copy the vectors to this Chroma server (chroma run)",
    )
    add_collection(parser)
    parser.set_defaults(handler=run_migrate)


def run_migrate(args: argparse.Namespace, streams: Streams) -> int:
    """Copy the docstore (and the collection); print what was copied."""
    persist = Path(args.persist)
    store_file = docstore_path(persist)
    if not store_file.is_file():
        raise CliError(f"no index in {persist}: nothing to migrate")
    if not is_postgres_url(args.docstore):
        raise CliError(f"--docstore must be a postgresql:// URL, got {args.docstore!r}", exit_code=EXIT_USAGE)
    if args.chroma is not None:
        _check_collection(persist, args.collection)
    lines = []
    try:
        with ChunkStore(store_file) as source, open_docstore(args.docstore) as target:
            report = copy_docstore(source, target)
            where = target.location
    except ImportError as exc:
        raise CliError(str(exc)) from exc
    except ValueError as exc:  # DocstoreError, EmbeddingMismatchError, another schema version
        raise CliError(str(exc)) from exc
    lines.append(
        f"Copied {report.sources} documents, {report.chunks} chunks and {report.vectors} vectors "
        f"from {store_file} to {where}"
        + (f" ({report.leftovers} vectors still to delete)" if report.leftovers else "")
    )
    if args.chroma is not None:
        host, port = args.chroma
        local = ChromaTarget(persist_directory=str(persist)).client()
        try:
            remote = ChromaTarget(host=host, port=port).client()
        except Exception as exc:
            local.close()
            raise CliError(f"cannot reach the Chroma server at {host}:{port}: {exc}") from exc
        try:
            copied = copy_collection(local.get_collection(args.collection), remote, name=args.collection)
        except ValueError as exc:
            raise CliError(str(exc)) from exc
        finally:
            local.close()
            remote.close()
        lines.append(f"Copied {copied} vectors from {persist} to the Chroma server at {host}:{port}")
    streams.out.writelines(line + "\n" for line in lines)
    return 0


def _check_collection(persist: Path, name: str) -> None:
    """Refuse a collection the folder does not hold, before anything is copied."""
    local = ChromaTarget(persist_directory=str(persist)).client()
    try:
        names = sorted(collection.name for collection in local.list_collections())
    finally:
        local.close()
    if name not in names:
        held = ", ".join(map(repr, names)) or "none"
        raise CliError(f"no collection {name!r} in {persist} (it holds {held})")

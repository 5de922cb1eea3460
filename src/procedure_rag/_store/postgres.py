"""The PostgreSQL plumbing of the docstore: the URL, a connection pool, the schema, one-line errors.

A docstore on PostgreSQL is named by one URL, ``postgresql://user:password@host:port/db``,
with libpq's own query options (``sslmode``, ``connect_timeout``, ``host=/run/postgresql``
for a Unix socket…) and one of ours, ``schema`` (default ``procedure_rag``): the
PostgreSQL schema that holds the index's tables, so one database can hold several indexes
beside other tables. :class:`PostgresConnection` opens it: one connection first, so a
wrong URL, a refused password or a missing database fails at once with a one-line
:class:`~procedure_rag._errors.DocstoreError`; then the schema (created when missing, with
``create``; its version checked, :data:`~procedure_rag._store.records.STORE_SCHEMA_VERSION`);
then a pool (psycopg_pool) whose connections are checked before use when they were idle
for a second or more, so a server that restarted is reconnected to (a connection cut
within that second fails its call, is dropped, and the next call gets a good one). An
error of the server mid-call is a ``DocstoreError`` too.

Ids and keys are ``COLLATE "C"``: ordered by code point, as SQLite and Python order them.
"""

from __future__ import annotations

import json
import re
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from procedure_rag._errors import DocstoreError
from procedure_rag._language.words import SUDACHI, default_analyser
from procedure_rag._store.lexical_index import LEXICAL_ANALYSER_KEY
from procedure_rag._store.records import SCHEMA_VERSION_KEY, STORE_SCHEMA_VERSION, dumps, schema_version_error

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

__all__ = [
    "DEFAULT_SCHEMA",
    "INSTALL_HINT",
    "PostgresConnection",
    "PostgresURL",
    "is_postgres_url",
    "parse_url",
]

DEFAULT_SCHEMA = "procedure_rag"
INSTALL_HINT = (
    "the PostgreSQL docstore needs psycopg 3 and psycopg_pool: pip install 'procedure-rag[postgres]'"
)

_SCHEMES = ("postgresql", "postgres")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")
#: Seconds to wait for a pooled connection before the store says the server is unreachable.
_POOL_TIMEOUT = 15.0
#: A pooled connection idle this long is checked (a round trip) before it is handed out; one
#: returned sooner is not: checking every one doubled the round trips of a query.
_CHECK_IDLE_SECONDS = 1.0
_CONNECT_TIMEOUT = 10

#: The tables of a docstore, in its schema (``{schema}`` is formatted in, an identifier).
_TABLES = (
    'CREATE TABLE {schema}.info (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL)',
    "CREATE SEQUENCE {schema}.chunk_seq",
    """
    CREATE TABLE {schema}.chunks (
        chunk_id TEXT COLLATE "C" PRIMARY KEY,
        source_id TEXT COLLATE "C" NOT NULL,
        text TEXT NOT NULL,
        metadata TEXT NOT NULL,
        seq BIGINT NOT NULL
    )
    """,
    "CREATE INDEX chunks_by_source ON {schema}.chunks (source_id, seq)",
    """
    CREATE TABLE {schema}.vectors (
        vector_id TEXT COLLATE "C" PRIMARY KEY,
        chunk_id TEXT COLLATE "C" NOT NULL,
        source_id TEXT COLLATE "C" NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'live', 'stale')),
        kind TEXT NOT NULL DEFAULT '',
        text TEXT NOT NULL DEFAULT '',
        embedding BYTEA
    )
    """,
    "CREATE INDEX vectors_by_source ON {schema}.vectors (source_id, state)",
    "CREATE INDEX vectors_by_chunk ON {schema}.vectors (chunk_id)",
    # The lexical index: one row per child chunk, its words as the SQLite store keeps
    # them; row order is the order words were indexed in (ties keep the first rows).
    """
    CREATE TABLE {schema}.lexical (
        row BIGSERIAL PRIMARY KEY,
        chunk_id TEXT COLLATE "C" NOT NULL UNIQUE,
        terms TEXT NOT NULL
    )
    """,
    # Raised by every transaction that changes the lexical table (the last statement of
    # the writer's transaction: its row lock is held only until the commit).
    "CREATE TABLE {schema}.lexical_generation (id INTEGER PRIMARY KEY CHECK (id = 0), n BIGINT NOT NULL)",
    "INSERT INTO {schema}.lexical_generation VALUES (0, 0)",
)


def is_postgres_url(value: object) -> bool:
    """Whether ``value`` is a string naming a PostgreSQL docstore (``postgresql://…``)."""
    return isinstance(value, str) and value.split("://", 1)[0].lower() in _SCHEMES and "://" in value


class PostgresURL:
    """A docstore URL taken apart: what libpq is given, our schema, and a form safe to print.

    Attributes:
        conninfo: The URL as libpq reads it (without ``schema``).
        schema: The PostgreSQL schema of the index's tables.
        shown: The URL with its password replaced by ``***``, for messages.
    """

    __slots__ = ("conninfo", "schema", "shown")

    def __init__(self, conninfo: str, schema: str, shown: str) -> None:
        self.conninfo = conninfo
        self.schema = schema
        self.shown = shown


def parse_url(url: str) -> PostgresURL:
    """Take a docstore URL apart.

    Raises:
        DocstoreError: When it is not a ``postgresql://`` URL, its ``schema`` is not a
            lower-case identifier, or libpq cannot read it (the message says which).
    """
    if not is_postgres_url(url):
        msg = f"not a PostgreSQL URL: {_redact(url)!r} (expected postgresql://user@host:port/database)"
        raise DocstoreError(msg)
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [value for key, value in query if key == "schema"]
    schema = schemas[-1] if schemas else DEFAULT_SCHEMA
    shown = _redact(url)
    if not _IDENTIFIER.fullmatch(schema):
        msg = (
            f"the docstore URL {shown!r} names schema {schema!r}: use a lower-case identifier "
            "(letters, digits, underscores; at most 63)"
        )
        raise DocstoreError(msg)
    rest = urlencode([(key, value) for key, value in query if key != "schema"])
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment))
    psycopg = _import_psycopg()
    try:
        psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError as exc:
        msg = f"the docstore URL {shown!r} is not valid: {one_line(exc)}"
        raise DocstoreError(msg) from exc
    return PostgresURL(conninfo, schema, shown)


def _redact(url: str) -> str:
    parts = urlsplit(url) if "://" in url else None
    if parts is None or parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def one_line(exc: BaseException) -> str:
    """A database error's message on one line (libpq's run over several)."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return text or type(exc).__name__


def _import_psycopg() -> Any:  # noqa: ANN401 - the psycopg module
    try:
        import psycopg  # noqa: PLC0415 - optional: only for a PostgreSQL docstore
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return psycopg


class PostgresConnection:
    """A pool of connections to one docstore schema, opened and checked.

    Args:
        url: The docstore URL.
        create: Create the schema and its tables when the database has none; with
            ``False`` a database without them is an error.
        max_connections: The pool's largest size (a writer holding a source's lock
            takes one more than its transactions).

    Raises:
        DocstoreError: When the server cannot be reached or refuses the login, the
            schema is missing (with ``create=False``) or of another version.
        ImportError: When psycopg or psycopg_pool is not installed.
    """

    #: When each pooled connection was last handed back (see :meth:`_check`).
    _idle_since: weakref.WeakKeyDictionary[psycopg.Connection[Any], float]

    def __init__(self, url: str, *, create: bool = True, max_connections: int = 8) -> None:
        self.url = parse_url(url)
        psycopg = _import_psycopg()
        try:
            import psycopg_pool  # noqa: PLC0415 - optional, as psycopg
        except ImportError as exc:
            raise ImportError(INSTALL_HINT) from exc
        self._psycopg = psycopg
        with self._direct() as conn:
            #: What cuts the lexical index's Japanese words (``words.SUDACHI`` or ``BIGRAMS``).
            self.lexical_analyser = _open_schema(conn, self.url, create=create)
        self._closed = False
        self._close_lock = threading.Lock()
        self._idle_since = weakref.WeakKeyDictionary()
        self._pool: psycopg_pool.ConnectionPool[Any] = psycopg_pool.ConnectionPool(
            self.url.conninfo,
            min_size=1,
            max_size=max_connections,
            kwargs={"autocommit": True, "connect_timeout": _CONNECT_TIMEOUT},
            configure=self._configure,
            check=self._check,
            reset=self._returned,
            timeout=_POOL_TIMEOUT,
            name=f"procedure-rag docstore {self.url.schema}",
            open=True,
        )

    @property
    def schema(self) -> str:
        """The PostgreSQL schema of the tables."""
        return self.url.schema

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def close(self) -> None:
        """Close the pool; closing twice is harmless."""
        with self._close_lock:
            if not self._closed:
                self._closed = True
                self._pool.close()

    def _returned(self, conn: psycopg.Connection[Any]) -> None:
        self._idle_since[conn] = time.monotonic()

    def _check(self, conn: psycopg.Connection[Any]) -> None:
        """The pool's check: a connection idle a while must answer (a server restart cut it)."""
        import psycopg_pool  # noqa: PLC0415 - imported by __init__ already

        since = self._idle_since.get(conn)
        if since is None or time.monotonic() - since >= _CHECK_IDLE_SECONDS:
            psycopg_pool.ConnectionPool.check_connection(conn)

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        from psycopg import sql  # noqa: PLC0415 - optional, imported by __init__ already

        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.url.schema)))

    @contextmanager
    def connection(self, what: str) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection (autocommit; ``with conn.transaction()`` for a write).

        Args:
            what: The store's name in messages, such as ``"chunk store"``.

        Raises:
            ValueError: When the store is closed.
            DocstoreError: When the server is unreachable or fails the call.
        """
        if self._closed:
            msg = f"the {what} at {self.url.shown!r} is closed"
            raise ValueError(msg)
        psycopg = self._psycopg
        import psycopg_pool  # noqa: PLC0415 - imported by __init__ already

        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg_pool.PoolTimeout as exc:
            raise DocstoreError(self._unreachable()) from exc
        except psycopg_pool.PoolClosed as exc:
            msg = f"the {what} at {self.url.shown!r} is closed"
            raise ValueError(msg) from exc
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            msg = f"the docstore at {self.url.shown!r} failed: {one_line(exc)}"
            raise DocstoreError(msg) from exc

    def _unreachable(self) -> str:
        """Why no connection could be had: the server's own reason, when a direct connect gets one."""
        try:
            with self._direct():
                pass
        except DocstoreError as exc:
            return str(exc)
        return f"the docstore at {self.url.shown!r} gave no connection within {_POOL_TIMEOUT:.0f} s"

    @contextmanager
    def _direct(self) -> Iterator[psycopg.Connection[Any]]:
        psycopg = self._psycopg
        try:
            conn = psycopg.connect(self.url.conninfo, autocommit=True, connect_timeout=_CONNECT_TIMEOUT)
        except psycopg.Error as exc:
            raise DocstoreError(_connect_message(self.url.shown, exc)) from exc
        try:
            yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            msg = f"the docstore at {self.url.shown!r} failed: {one_line(exc)}"
            raise DocstoreError(msg) from exc
        finally:
            conn.close()


def _connect_message(shown: str, exc: BaseException) -> str:
    text = one_line(exc)
    if "password authentication failed" in text or "no password supplied" in text:
        return f"the PostgreSQL server refused the login to {shown!r}: {text}"
    return f"cannot connect to the docstore at {shown!r}: {text}"


def _open_schema(conn: psycopg.Connection[Any], url: PostgresURL, *, create: bool) -> str:
    """Check (or create) the schema's tables and version, in one transaction under a lock.

    Returns:
        The lexical analyser the schema records (a schema older than the key: SudachiPy's).
    """
    from psycopg import sql  # noqa: PLC0415 - optional, imported by the caller already

    schema = url.schema
    where = f"the docstore at {url.shown!r} (schema {schema!r})"
    with conn.transaction():
        encoding = conn.execute("SHOW server_encoding").fetchone()
        if encoding is None or str(encoding[0]).upper() not in ("UTF8", "UTF-8"):
            msg = f"{where} has server encoding {encoding and encoding[0]!r}; the docstore needs UTF8"
            raise DocstoreError(msg)
        # Two processes opening a fresh database at once: one creates, the other waits.
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext('procedure_rag:schema'), hashtext(%s))", (schema,)
        )
        found = conn.execute("SELECT to_regclass(%s)", (f"{schema}.info",)).fetchone()
        if found is None or found[0] is None:
            tables = conn.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s", (schema,)
            ).fetchone()
            if tables is not None and tables[0]:
                msg = f"{where} holds tables but no procedure-rag info table: not a procedure-rag docstore"
                raise DocstoreError(msg)
            if not create:
                msg = (
                    f"{where} has no procedure-rag docstore: index into it first, or copy one "
                    "there with 'procedure-rag migrate'"
                )
                raise DocstoreError(msg)
            name = sql.Identifier(schema)
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(name))
            for statement in _TABLES:
                conn.execute(sql.SQL(statement).format(schema=name))
            conn.execute(
                sql.SQL("INSERT INTO {}.info VALUES (%s, %s), (%s, %s)").format(name),
                (
                    SCHEMA_VERSION_KEY,
                    dumps(STORE_SCHEMA_VERSION),
                    LEXICAL_ANALYSER_KEY,
                    dumps(analyser := default_analyser()),
                ),
            )
            return analyser
        row = conn.execute(
            sql.SQL("SELECT value FROM {}.info WHERE key = %s").format(sql.Identifier(schema)),
            (SCHEMA_VERSION_KEY,),
        ).fetchone()
        version = _json_value(row[0]) if row is not None else None
        error = schema_version_error(version, where)
        if error is not None:
            raise DocstoreError(str(error))
        row = conn.execute(
            sql.SQL("SELECT value FROM {}.info WHERE key = %s").format(sql.Identifier(schema)),
            (LEXICAL_ANALYSER_KEY,),
        ).fetchone()
        return str(_json_value(row[0])) if row is not None else SUDACHI


def _json_value(text: object) -> object:
    try:
        return json.loads(str(text))
    except json.JSONDecodeError:
        return text

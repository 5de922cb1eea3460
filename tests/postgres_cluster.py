"""A throwaway PostgreSQL cluster for the tests: Debian's binaries, ``initdb`` in a temporary folder.

:class:`Cluster` makes a cluster in a fresh folder under the system's temporary folder,
runs ``postgres`` on a Unix socket there (by default no TCP port: nothing to collide with,
nothing reachable from elsewhere), and stops it and removes the folder at the end. PostgreSQL
refuses to run as root, and CI runs as root: then the folder belongs to ``nobody`` and
``initdb`` and ``postgres`` run as that user (``subprocess``'s ``user=``/``group=``); as
any other user they run as that user.

The cluster trusts local connections by ``postgres`` (the superuser the tests use) and
asks ``alice`` for a password (``scram-sha-256``), for the refused-password test.
Durability is off (``fsync``, ``synchronous_commit``): the tests kill clients, never the
machine. The benchmarks (benchmarks/_servers.py) ask for TCP on localhost as well
(``tcp_port``) and their own settings (``settings``: durability back on).
:func:`find_binaries` says where Debian put the binaries (``/usr/lib/postgresql/<major>/bin``),
or ``None``.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

STARTUP_SECONDS = 60.0
PASSWORD_USER = "alice"  # noqa: S105 - a role name
PASSWORD = "correct horse"  # noqa: S105 - a throwaway test cluster's role
_HBA = f"""\
local all {PASSWORD_USER} scram-sha-256
local all all trust
host all all 127.0.0.1/32 trust
"""
#: Server settings for the tests: no durability (the tests kill clients, never the machine).
TEST_SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "32MB",
    "max_connections": "200",
}


def find_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``postgres``: on ``PATH``, or Debian's newest major."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("postgres"):
        return Path(on_path).resolve().parent
    majors = sorted(
        (p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").is_file()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    return majors[-1] if majors else None


class Cluster:
    """One running cluster; :meth:`url` names a database (and a schema) in it."""

    def __init__(
        self, binaries: Path, *, tcp_port: int | None = None, settings: Mapping[str, str] | None = None
    ) -> None:
        self.binaries = binaries
        self.tcp_port = tcp_port
        self.settings = {**TEST_SETTINGS, **(settings or {})}
        self.folder = Path(tempfile.mkdtemp(prefix="procedure-rag-pg-"))
        self.data = self.folder / "data"
        self.socket_dir = self.folder  # the socket is <folder>/.s.PGSQL.<port, 5432 by default>
        self.log_path = self.folder / "server.log"
        self._user: dict[str, Any] = {}
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.folder, nobody.pw_uid, nobody.pw_gid)
            group = grp.getgrgid(nobody.pw_gid).gr_gid
            self._user = {"user": nobody.pw_uid, "group": group, "extra_groups": []}
        self.folder.chmod(0o700)
        self._process: subprocess.Popen[bytes] | None = None
        try:
            self._run(
                "initdb",
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            )
            (self.data / "pg_hba.conf").write_text(_HBA, encoding="utf-8")
            if self._user:
                os.chown(self.data / "pg_hba.conf", self._user["user"], self._user["group"])
            self.start()
            self.execute(f"CREATE ROLE {PASSWORD_USER} LOGIN PASSWORD '{PASSWORD}'")
        except BaseException:
            self.stop()
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    # -- naming databases ---------------------------------------------------------

    def url(self, database: str = "postgres", *, schema: str | None = None, user: str = "postgres") -> str:
        """A docstore URL: the socket folder (or localhost's port) as libpq's ``host``, and ``schema``."""
        if self.tcp_port is None:
            query = f"host={quote(str(self.socket_dir), safe='')}"
        else:
            query = f"host=127.0.0.1&port={self.tcp_port}"
        if schema is not None:
            query += f"&schema={schema}"
        return f"postgresql://{user}@/{database}?{query}"

    def fresh_url(self) -> str:
        """A URL naming a schema no test has used: an empty docstore, every time."""
        return self.url(schema=f"t_{uuid.uuid4().hex[:16]}")

    def create_database(self) -> str:
        """A new, empty database (for the command line's default schema); returns its name."""
        name = f"db_{uuid.uuid4().hex[:16]}"
        self.execute(f"CREATE DATABASE {name}")
        return name

    def execute(self, statement: str, database: str = "postgres") -> list[tuple[Any, ...]]:
        """Run one statement as the superuser; returns its rows (none for a command)."""
        import psycopg  # noqa: PLC0415 - the tests' extra

        with psycopg.connect(
            f"host={self.socket_dir} port={self.tcp_port or 5432} dbname={database} user=postgres",
            autocommit=True,
        ) as conn:
            cursor = conn.execute(statement)  # type: ignore[arg-type] # the tests' own statements
            return cursor.fetchall() if cursor.description else []

    # -- the server ---------------------------------------------------------------

    def start(self) -> None:
        """Start ``postgres`` and wait until it accepts connections."""
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(  # noqa: S603 - Debian's binary, fixed arguments
                [
                    str(self.binaries / "postgres"),
                    "-D",
                    str(self.data),
                    "-k",
                    str(self.socket_dir),
                    "-c",
                    "listen_addresses=" + ("" if self.tcp_port is None else "127.0.0.1"),
                    *(["-p", str(self.tcp_port)] if self.tcp_port is not None else []),
                    *(arg for key, value in self.settings.items() for arg in ("-c", f"{key}={value}")),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=self.folder,
                **self._user,
            )
        self._wait_ready()

    def stop(self) -> None:
        """Stop the server (fast shutdown: clients are disconnected); harmless when stopped."""
        process, self._process = self._process, None
        if process is None:
            return
        for sig, grace in ((signal.SIGINT, 30.0), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            try:
                process.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue

    def restart(self) -> None:
        """Stop and start again: every client connection is cut."""
        self.stop()
        self.start()

    def close(self) -> None:
        """Stop the server and remove the folder."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                break
            try:
                self.execute("SELECT 1")
            except Exception:  # any failure means "not up yet"
                time.sleep(0.1)
            else:
                return
        log = self.log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
        msg = f"postgres in {self.folder} did not start; its log ends:\n{log}"
        raise RuntimeError(msg)

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(  # noqa: S603 - Debian's binary, fixed arguments
            [str(self.binaries / program), *args],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            check=False,
            cwd=self.folder,
            **self._user,
        )
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode("utf-8", errors="replace")[-2000:]
            msg = f"{program} failed with status {done.returncode}:\n{output}"
            raise RuntimeError(msg)

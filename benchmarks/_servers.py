"""Throwaway servers for the benchmarks: a ``chroma run`` and a PostgreSQL cluster on this machine.

:func:`throwaway_servers` starts both (and stops them at the end): the Chroma server of
this venv on a free localhost port, data in a temporary folder, telemetry off; and a
PostgreSQL cluster made by tests/postgres_cluster.py (Debian's binaries, ``initdb`` in a
temporary folder) listening on a free localhost TCP port, with durability as a server
would keep it (``fsync`` on; ``synchronous_commit`` off, which loses at most the last
commits on a crash, as the SQLite docstore's WAL with ``synchronous=NORMAL`` does).
Both run on the same 2 cores as the benchmark: no network between them, but their CPU is
shared with the client.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
STARTUP_SECONDS = 60.0
#: PostgreSQL as a server would run: durable (fsync), commits not waited for (as WAL NORMAL).
SERVER_SETTINGS = {
    "fsync": "on",
    "full_page_writes": "on",
    "synchronous_commit": "off",
    "shared_buffers": "256MB",
    "max_connections": "100",
}


@dataclass(frozen=True)
class Servers:
    """Where the servers listen; :meth:`url` names a docstore schema on the PostgreSQL one."""

    chroma: tuple[str, int]
    cluster: Any  # tests/postgres_cluster.Cluster

    def url(self, schema: str) -> str:
        return str(self.cluster.url(schema=schema))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def throwaway_servers() -> Iterator[Servers]:
    """A Chroma server and a PostgreSQL cluster for the run; both stopped and removed after."""
    sys.path.insert(0, str(TESTS))
    from postgres_cluster import (  # type: ignore[import-not-found]  # noqa: PLC0415 - tests/ is no package
        Cluster,
        find_binaries,
    )

    binaries = find_binaries()
    if binaries is None:
        msg = "PostgreSQL binaries (initdb, postgres) not found: apt-get install -y postgresql"
        raise SystemExit(msg)
    # A SIGTERM (kill) unwinds the run, so the servers stop and their folders go with it.
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    cluster = Cluster(binaries, tcp_port=free_port(), settings=SERVER_SETTINGS)
    try:
        with chroma_run() as chroma:
            yield Servers(chroma, cluster)
    finally:
        cluster.close()
        signal.signal(signal.SIGTERM, previous)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def chroma_run() -> Iterator[tuple[str, int]]:
    """``chroma run`` of this venv on a free localhost port, its data in a temporary folder."""
    executable = Path(sys.executable).parent / "chroma"
    if not executable.is_file():
        msg = f"no chroma executable beside {sys.executable} (chromadb provides it)"
        raise SystemExit(msg)
    host, port = "127.0.0.1", free_port()
    with tempfile.TemporaryDirectory(prefix="bench-chroma-") as folder:
        log_path = Path(folder) / "server.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [
                    str(executable),
                    "run",
                    "--path",
                    str(Path(folder) / "data"),
                    "--host",
                    host,
                    "--port",
                    str(port),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
                start_new_session=True,
            )
        try:
            _wait_for_heartbeat(process, host, port, log_path)
            yield host, port
        finally:
            _stop(process)


def _wait_for_heartbeat(process: subprocess.Popen[bytes], host: str, port: int, log_path: Path) -> None:
    import chromadb  # noqa: PLC0415 - heavy
    from chromadb.config import Settings  # noqa: PLC0415

    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        try:
            chromadb.HttpClient(
                host=host, port=port, settings=Settings(anonymized_telemetry=False)
            ).heartbeat()
        except Exception:  # any failure means "not up yet"
            time.sleep(0.25)
        else:
            return
    _stop(process)
    log = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
    msg = f"chroma run on {host}:{port} did not answer; its log ends:\n{log}"
    raise SystemExit(msg)


def _stop(process: subprocess.Popen[bytes]) -> None:
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue

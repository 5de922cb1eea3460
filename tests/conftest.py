"""Test-wide setup: no network for unit tests, localhost only for integration tests.

Every test runs with ``socket.socket`` guarded by pytest-socket. Unit tests cannot
create an internet socket at all; tests marked ``integration`` may connect to this
machine only (a Chroma server, a local model server). Unix domain sockets stay allowed
because asyncio builds its event loop's wake-up pipe from a socket pair. A test that
really needs more can say so with pytest-socket's own ``enable_socket`` or
``allow_hosts`` markers, which win over the defaults set here.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

# Set before anything imports chromadb: its embedded client otherwise starts a
# telemetry client that tries to reach the internet.
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import pytest
from pytest_socket import disable_socket, socket_allow_hosts

LOCAL_HOSTS = ["127.0.0.1", "localhost", "::1"]
TESTS_DATA = Path(__file__).resolve().parent / "data"
CHROMA_STARTUP_SECONDS = 60.0


# tryfirst: pytest-socket's own hook runs after this one, so its markers
# (enable_socket, allow_hosts) and --force-enable-socket override these defaults.
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("integration"):
        socket_allow_hosts(LOCAL_HOSTS, allow_unix_socket=True)
    else:
        disable_socket(allow_unix_socket=True)


@pytest.fixture(scope="session")
def tests_data() -> Path:
    """The test data bundled with this repo (see tests/data/SOURCES.md)."""
    return TESTS_DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The project's shared real-data folder, ``../shared/data`` beside the repo.

    ``PROCEDURE_RAG_SHARED_DATA`` points elsewhere; tests that use this fixture are
    skipped when the folder is absent (a clone outside the project workspace), and
    fail instead under CI, where it is always laid out.
    """
    default = Path(__file__).resolve().parents[2] / "shared" / "data"
    path = Path(os.environ.get("PROCEDURE_RAG_SHARED_DATA", default))
    if not (path / "README.md").is_file():
        message = f"shared data folder not found at {path}"
        if os.environ.get("CI"):  # CI lays shared/ beside the clone: its absence is a failure there
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def layout_checks() -> ModuleType:
    """The checks shared by the layout JSON reader tests, ``tests/data/layout_json/checks.py``.

    Loaded once per session, so its caches (the generator's build, each fixture's chunks)
    are shared by every test that reads a layout JSON fixture.
    """
    spec = importlib.util.spec_from_file_location("layout_checks", TESTS_DATA / "layout_json" / "checks.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def one_blas_thread() -> Iterator[None]:
    """numpy's OpenBLAS on one thread for the test, as before it (restored after).

    Tests with dozens of threads embedding queries at once need it: OpenBLAS's own
    worker threads then fight the callers for the cores. On the 2-core test machine
    one re-indexing cycle under 32 querying threads took 88 s with OpenBLAS's default
    (a thread per core) and 6.5 s with one. A service that embeds in many threads
    should start with ``OPENBLAS_NUM_THREADS=1``; this does the same for a running
    process, through OpenBLAS's own setter (as threadpoolctl does). A no-op where
    numpy's BLAS is not an OpenBLAS this can find (outside Linux, another BLAS).
    """
    library = _openblas()
    if library is None:
        yield
        return
    get_threads, set_threads = library
    before = int(get_threads())
    set_threads(1)
    try:
        yield
    finally:
        set_threads(before)


def _openblas() -> tuple[Any, Any] | None:
    """The loaded OpenBLAS's ``get_num_threads`` and ``set_num_threads``, when there is one."""
    import numpy  # noqa: F401, PLC0415 - loads the BLAS library numpy links

    maps = Path("/proc/self/maps")
    if not maps.is_file():
        return None
    paths = sorted(
        {line.split()[-1] for line in maps.read_text().splitlines() if "openblas" in line and ".so" in line}
    )
    for path in paths:
        library = ctypes.CDLL(path)
        for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "64_"), ("openblas", "")):
            get_threads = getattr(library, f"{prefix}_get_num_threads{suffix}", None)
            set_threads = getattr(library, f"{prefix}_set_num_threads{suffix}", None)
            if get_threads is not None and set_threads is not None:
                return get_threads, set_threads
    return None


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Any]:
    """A throwaway PostgreSQL cluster (``tests/postgres_cluster.py``), one per test session.

    Debian's binaries, ``initdb`` in a temporary folder, the server on a Unix socket there,
    run as ``nobody`` when the tests run as root. Skipped when the binaries or psycopg are
    missing, except under CI, where ``.ci/run`` installs them and their absence fails.
    """
    from postgres_cluster import Cluster, find_binaries  # noqa: PLC0415 - only for these tests

    binaries = find_binaries()
    missing = None if binaries is not None else "PostgreSQL binaries (initdb, postgres) not found"
    if missing is None and importlib.util.find_spec("psycopg_pool") is None:
        missing = "psycopg_pool is not installed (pip install 'procedure-rag[postgres]')"
    if missing is not None or binaries is None:
        message = f"{missing}: install Debian's server with 'apt-get install -y postgresql'"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    cluster = Cluster(binaries)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A real Chroma server (``chroma run`` of this venv) on localhost: yields ``(host, port)``.

    Started once per session on a free port with its data in a temporary folder and
    telemetry off; stopped (its whole process group) at the end. Only tests marked
    ``integration`` may use it, since only they may open sockets. Skipped when the venv
    has no ``chroma`` executable, except under CI, where that and a server that does not
    answer its heartbeat within :data:`CHROMA_STARTUP_SECONDS` fail the test.
    """
    executable = _chroma_executable()
    if executable is None:
        message = f"no chroma executable beside {sys.executable} (chromadb provides it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    folder = tmp_path_factory.mktemp("chroma-server")
    host, port = "127.0.0.1", _free_port()
    log_path = folder / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 - a fixed executable and arguments
            [executable, "run", "--path", str(folder / "data"), "--host", host, "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
            # Its own process group, so the teardown stops whatever the CLI spawned too.
            start_new_session=True,
        )
    try:
        _wait_for_heartbeat(process, host, port, log_path)
        yield host, port
    finally:
        _stop(process)


def _chroma_executable() -> str | None:
    bin_dir = Path(sys.executable).parent
    for name in ("chroma", "chroma.exe"):
        if (bin_dir / name).is_file():
            return str(bin_dir / name)
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_for_heartbeat(process: subprocess.Popen[bytes], host: str, port: int, log_path: Path) -> None:
    """Return once the server answers; otherwise stop it and fail (never skip: the executable is there)."""
    import chromadb  # noqa: PLC0415 - heavy; only for tests that use the server
    from chromadb.config import Settings  # noqa: PLC0415

    deadline = time.monotonic() + CHROMA_STARTUP_SECONDS
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            chromadb.HttpClient(
                host=host, port=port, settings=Settings(anonymized_telemetry=False)
            ).heartbeat()
        except Exception as exc:  # any failure means "not up yet"
            last_error = exc
            time.sleep(0.25)
        else:
            return
    returncode = process.poll()
    _stop(process)
    log = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
    status = (
        f"did not answer within {CHROMA_STARTUP_SECONDS:.0f} s (last error: {last_error!r})"
        if returncode is None
        else f"exited with status {returncode}"
    )
    pytest.fail(f"chroma run on {host}:{port} {status}; its log ends:\n{log}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server's whole process group: SIGTERM, SIGKILL if it lingers, then reap it."""
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:  # the group is gone already
            break
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
        # The CLI has exited; anything it left in its group goes with it.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        break
    process.wait()

"""Test-wide setup: no network for unit tests, localhost only for integration tests.

Every test runs with ``socket.socket`` guarded by pytest-socket. Unit tests cannot
create an internet socket at all; tests marked ``integration`` may connect to this
machine only (a Chroma server, a local model server). Unix domain sockets stay allowed
because asyncio builds its event loop's wake-up pipe from a socket pair. A test that
really needs more can say so with pytest-socket's own ``enable_socket`` or
``allow_hosts`` markers, which win over the defaults set here.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

# Set before anything imports chromadb: its embedded client otherwise starts a
# telemetry client that tries to reach the internet.
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import pytest
from pytest_socket import disable_socket, socket_allow_hosts

LOCAL_HOSTS = ["127.0.0.1", "localhost", "::1"]
TESTS_DATA = Path(__file__).resolve().parent / "data"


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

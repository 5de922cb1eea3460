"""The socket rules of conftest.py hold, and the embedded Chroma client lives with them."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from pathlib import Path

import pytest
from pytest_socket import SocketBlockedError, SocketConnectBlockedError

# pytest-socket warns as it raises; here the raise is the expected outcome.
pytestmark = pytest.mark.filterwarnings("ignore:A test tried to use socket")


def test_unit_tests_cannot_open_internet_sockets() -> None:
    with pytest.raises(SocketBlockedError):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)


def test_unit_tests_can_run_an_event_loop() -> None:
    async def answer() -> int:
        return 42

    assert asyncio.run(answer()) == 42


@pytest.mark.integration
def test_integration_tests_reach_localhost_only() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]

        def accept_one() -> None:
            connection, _ = server.accept()
            connection.close()

        accepted = threading.Thread(target=accept_one, daemon=True)
        accepted.start()
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        accepted.join(timeout=5)
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as outside,
        pytest.raises(SocketConnectBlockedError),
    ):
        outside.connect(("192.0.2.1", 80))  # TEST-NET-1: never routed


def test_chroma_embedded_client_works_offline(tmp_path: Path) -> None:
    chromadb = pytest.importorskip("chromadb")
    assert os.environ["ANONYMIZED_TELEMETRY"] == "False"
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    collection = client.create_collection("guard", embedding_function=None)
    collection.add(
        ids=["a", "b"],
        embeddings=[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        documents=["step one", "step two"],
        metadatas=[{"doc_id": "a"}, {"doc_id": "b"}],
    )
    hits = collection.query(query_embeddings=[[0.9, 0.1, 0.0]], n_results=1)
    assert hits["ids"] == [["a"]]

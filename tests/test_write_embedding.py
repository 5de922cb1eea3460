"""What the writer asks the model for: each distinct text once, nothing the index holds.

Real chunks of the bundled pages and E-Manual sections, a real embedded Chroma
collection and docstore, written through ``ChromaIndex`` and the core writer. The model
is a hashed bag of characters that records its calls: these tests check which texts are
embedded and which vectors end up stored, not retrieval quality.
"""

from __future__ import annotations

import json
import math
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pytest

from procedure_rag import DEFAULT_KINDS, Chunk, ProcedureChunker, Representation, chunk_metadata
from procedure_rag._chroma.collection import UPSERT_BATCH
from procedure_rag._chroma.index import ChromaIndex, CollectionBackend
from procedure_rag._metadata import chunk_from_metadata
from procedure_rag._models.identity import PROBE_TEXT
from procedure_rag._representations.offline.generator import generate_representations
from procedure_rag._store.records import StoredChunk
from procedure_rag._store.writer import WRITE_GROUP, VectorRecord, stored_chunk, vector_records, write_chunks

RECOVERY = "hololens/en/hololens-recovery.md"
NETWORK = "hololens/ja/hololens-network.md"
DIMENSION = 64


def embed(text: str) -> list[float]:
    """A hashed bag of characters, never zero."""
    vector = [0.0] * DIMENSION
    vector[0] = 1.0
    for char in text:
        vector[zlib.crc32(char.encode("utf-8")) % DIMENSION] += 1.0
    return vector


class Recorder:
    """The hashed model, with the texts of every ``embed_documents`` call kept."""

    identity = "hashed-characters-64"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if texts != [PROBE_TEXT]:  # opening an index fingerprints the model
            self.calls.append(list(texts))
        return [embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return embed(text)

    def asked(self) -> list[str]:
        return [text for call in self.calls for text in call]


def split(text: str, source_id: str) -> list[StoredChunk]:
    chunks = ProcedureChunker().chunk(text, source_id=source_id)
    return [stored_chunk(c.text, chunk_metadata(c), position=i) for i, c in enumerate(chunks)]


def every_kind(chunks: Sequence[Chunk]) -> list[Representation]:
    """Every deterministic kind: questions repeat within a section, so texts repeat across chunks."""
    return generate_representations(chunks, defaults=DEFAULT_KINDS)


def records_of(chunks: Sequence[StoredChunk]) -> list[VectorRecord]:
    children = [
        chunk_from_metadata(c.text, c.metadata) for c in chunks if c.metadata["chunk_level"] != "parent"
    ]
    return vector_records(every_kind(children), {c.chunk_id: c for c in chunks})


def stored(index: ChromaIndex) -> dict[str, tuple[str, Any]]:
    """``id -> (document, vector)`` of everything the collection holds."""
    got = index._collection.get(include=["documents", "embeddings"])
    return {i: (d, v) for i, d, v in zip(got["ids"], got["documents"], got["embeddings"], strict=True)}


def assert_vectors_are_their_texts(index: ChromaIndex, records: Sequence[VectorRecord]) -> None:
    held = stored(index)
    assert set(held) == {r.vector_id for r in records}
    for document, vector in held.values():
        assert np.allclose(vector, embed(document))


@pytest.fixture(scope="module")
def pages(tests_data: Path) -> dict[str, list[StoredChunk]]:
    return {
        path: split((tests_data / path).read_text(encoding="utf-8"), path) for path in (RECOVERY, NETWORK)
    }


def test_each_distinct_text_is_embedded_once(tmp_path: Path, pages: dict[str, list[StoredChunk]]) -> None:
    chunks = pages[RECOVERY] + pages[NETWORK]
    records = records_of(chunks)
    model = Recorder()
    with ChromaIndex.open(tmp_path, embedder=model) as index:
        report = index.add(chunks, every_kind)
        assert report.vectors_added == len(records)
        asked = model.asked()
        texts = Counter(r.text for r in records)
        assert max(texts.values()) > 1, "the pages repeat texts (a section's questions)"
        assert Counter(asked) == Counter(set(texts))
        # Within a call, the shortest texts first.
        for call in model.calls:
            assert call == sorted(call, key=lambda text: (len(text), text))
        assert_vectors_are_their_texts(index, records)


def test_moved_chunks_are_not_embedded_again(
    tmp_path: Path, pages: dict[str, list[StoredChunk]], tests_data: Path
) -> None:
    old = pages[RECOVERY]
    text = (tests_data / RECOVERY).read_text(encoding="utf-8")
    # A longer title moves every chunk: every chunk id and vector id is new.
    new = split(
        text.replace("# Restart, reset, or recover HoloLens 2", "# Restart, reset or recover a HoloLens 2"),
        RECOVERY,
    )
    assert not {c.chunk_id for c in new} & {c.chunk_id for c in old}
    model = Recorder()
    with ChromaIndex.open(tmp_path, embedder=model) as index:
        index.add(old, every_kind)
        model.calls.clear()

        report = index.add(new, every_kind)

        new_records = records_of(new)
        assert report.vectors_added == len(new_records)
        fresh = {r.text for r in new_records} - {r.text for r in records_of(old)}
        assert fresh, "the title is in the chunk texts"
        assert sorted(model.asked()) == sorted(fresh)
        assert_vectors_are_their_texts(index, new_records)


def die(*_args: object, **_kwargs: object) -> NoReturn:
    msg = "died before the commit"
    raise RuntimeError(msg)


def test_what_a_killed_run_stored_is_not_embedded_again(
    tmp_path: Path, pages: dict[str, list[StoredChunk]], monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = pages[RECOVERY]
    model = Recorder()
    with ChromaIndex.open(tmp_path, embedder=model) as index:
        monkeypatch.setattr(index.store, "commit_source", die)
        with pytest.raises(RuntimeError, match="died before the commit"):
            index.add(chunks, every_kind)
        monkeypatch.undo()
        assert model.calls
        model.calls.clear()

        report = index.add(chunks, every_kind)

        assert model.calls == []
        assert report.vectors_added == len(records_of(chunks))
        assert index.store.stale_vectors() == []
        assert_vectors_are_their_texts(index, records_of(chunks))


class CountingCollection:
    """A collection whose upserts are counted."""

    def __init__(self, collection: Any) -> None:
        self.collection = collection
        self.upserts: list[int] = []

    def get(self, **kwargs: Any) -> Any:
        return self.collection.get(**kwargs)

    def upsert(self, **kwargs: Any) -> None:
        self.upserts.append(len(kwargs["ids"]))
        self.collection.upsert(**kwargs)

    def update(self, **kwargs: Any) -> None:
        self.collection.update(**kwargs)

    def delete(self, **kwargs: Any) -> None:
        self.collection.delete(**kwargs)


def sections(tests_data: Path) -> list[StoredChunk]:
    """Each E-Manual section of the TV excerpt as a source of its own, as the benchmark reads them."""
    text = (tests_data / "emanual" / "samsung-tv-sections-10-28.txt").read_text(encoding="utf-8")
    lines = (tests_data / "emanual" / "samsung-tv-sections-10-28.sections.jsonl").read_text(encoding="utf-8")
    out: list[StoredChunk] = []
    for line in lines.splitlines():
        section = json.loads(line)
        out += split(text[section["start"] : section["end"]], section["doc_id"])
    return out


def test_small_sources_share_vector_store_calls(tmp_path: Path, tests_data: Path) -> None:
    chunks = sections(tests_data)
    records = records_of(chunks)
    sources = {c.source_id for c in chunks}
    assert len(sources) > 10
    model = Recorder()
    with ChromaIndex.open(tmp_path, embedder=model) as index:
        counting = CountingCollection(index._collection)
        backend = CollectionBackend(counting, model)

        report = write_chunks(chunks, store=index.store, backend=backend, representations=every_kind)

        # Groups of WRITE_GROUP vectors, each written UPSERT_BATCH at a time; one per
        # source would make a call per section.
        assert (
            len(counting.upserts)
            <= math.ceil(len(records) / WRITE_GROUP) * math.ceil(WRITE_GROUP / UPSERT_BATCH) + 1
        )
        assert len(counting.upserts) < len(sources)
        assert report.sources == tuple(dict.fromkeys(c.source_id for c in chunks))
        assert report.vectors_added == len(records)
        assert index.store.sources() == sorted(sources)
        assert index.store.stale_vectors() == []
        assert_vectors_are_their_texts(index, records)

"""embed_texts: each distinct text embedded once, shortest first, known vectors reused.

The model here is the bundled offline one (its vectors are what an index would hold);
the calls it gets are recorded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from procedure_rag import OfflineEmbedder
from procedure_rag._models.embedding_batches import embed_texts

TEXTS = [
    "How do I hard-restart HoloLens 2?",
    "Hold down the volume down + power buttons for 15 seconds. The device restarts.",
    "ハード再起動するには？",
    "How do I hard-restart HoloLens 2?",
    "Unplug the Type-C cable.",
    "ハード再起動するには？",
    "Connect the device to the host PC, then open Device Manager and make sure it enumerates.",
]


class Recording:
    """The offline model's passage embedding, with every call's texts kept."""

    def __init__(self) -> None:
        self.model = OfflineEmbedder()
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return self.model.embed_documents(texts)


@pytest.fixture(scope="module")
def alone() -> dict[str, list[float]]:
    """Each text embedded on its own."""
    model = OfflineEmbedder()
    return {text: model.embed_documents([text])[0] for text in set(TEXTS)}


def test_each_distinct_text_once_shortest_first(alone: dict[str, list[float]]) -> None:
    model = Recording()
    progress: list[int] = []

    vectors = embed_texts(TEXTS, model, batch_size=2, on_batch=progress.append)

    asked = [text for call in model.calls for text in call]
    assert sorted(asked) == sorted(set(TEXTS))
    assert asked == sorted(asked, key=lambda text: (len(text), text))
    assert [len(call) for call in model.calls] == [2, 2, 1]
    # Repeats count in the progress: every position gets its vector.
    assert sum(progress) == len(TEXTS)
    assert progress == [sum(TEXTS.count(t) for t in call) for call in model.calls]
    assert len(vectors) == len(TEXTS)
    for text, vector in zip(TEXTS, vectors, strict=True):
        assert vector == pytest.approx(alone[text], abs=1e-5)


def test_known_texts_are_not_embedded(alone: dict[str, list[float]]) -> None:
    model = Recording()
    progress: list[int] = []
    known = {TEXTS[0]: alone[TEXTS[0]], "not asked for": [0.0] * len(alone[TEXTS[0]])}

    vectors = embed_texts(TEXTS, model, known=known, batch_size=64, on_batch=progress.append)

    assert len(model.calls) == 1
    assert sorted(model.calls[0]) == sorted(set(TEXTS) - {TEXTS[0]})
    assert progress == [2, len(TEXTS) - 2]  # the known text twice first, then the call
    assert vectors[0] == vectors[3] == alone[TEXTS[0]]


def test_everything_known_asks_nothing() -> None:
    def refuse(texts: list[str]) -> Sequence[Sequence[float]]:
        msg = f"asked for {texts}"
        raise AssertionError(msg)

    assert embed_texts(["a", "b", "a"], refuse, known={"a": [1.0], "b": [2.0]}) == [[1.0], [2.0], [1.0]]
    assert embed_texts([], refuse) == []


@pytest.mark.parametrize(
    ("batch_size", "embed", "message"),
    [
        (0, lambda texts: [[1.0] for _ in texts], "batch_size must be >= 1, got 0"),
        (8, lambda texts: [[1.0]], "the embedding model returned 1 vectors for 2 texts"),
    ],
)
def test_refused(batch_size: int, embed: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        embed_texts(["a", "b"], embed, batch_size=batch_size)  # type: ignore[arg-type]

"""Embedding many texts at once: each distinct text once, shortest first, known vectors reused.

What users wait for when they index is the model. Representations repeat (a section's
questions are asked of every chunk in it, a boilerplate summary recurs), a re-indexed
document brings texts its index holds already, and a batch of texts of very different
lengths makes a padding model pay for the longest one in every row.
:func:`embed_texts` is the one place that knows this; the writer's backends call it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

__all__ = ["embed_texts"]

#: ``texts -> one vector per text``, in order: a model's ``embed_documents``.
EmbedBatch = Callable[[list[str]], Sequence[Sequence[float]]]


def embed_texts(
    texts: Sequence[str],
    embed: EmbedBatch,
    *,
    known: Mapping[str, Sequence[float]] | None = None,
    batch_size: int = 64,
    on_batch: Callable[[int], None] | None = None,
) -> list[list[float]]:
    """One vector per text, in order, asking ``embed`` only for what is not known.

    A text in ``known`` takes that vector (the same model gave it for the same text).
    Every other distinct text is embedded once, in calls of at most ``batch_size`` texts
    sorted by length (then by text, so a run is reproducible), so a call holds texts of
    similar lengths.

    Args:
        texts: The texts; repeats are embedded once.
        embed: The model's passage embedding, called with each batch.
        known: Vectors by text, reused.
        batch_size: Texts per call of ``embed``; at least 1.
        on_batch: Called with how many of ``texts`` (counting repeats) got their vectors,
            once for the known ones (when there are any) and after each call of ``embed``.

    Returns:
        The vectors, as lists of floats, one per text.

    Raises:
        ValueError: When ``batch_size`` is below 1, or ``embed`` returns another number of
            vectors than it was given texts.
    """
    if batch_size < 1:
        msg = f"batch_size must be >= 1, got {batch_size}"
        raise ValueError(msg)
    given = known or {}
    uses = Counter(texts)
    vectors = {text: [float(x) for x in given[text]] for text in uses if text in given}
    if on_batch is not None and vectors:
        on_batch(sum(uses[text] for text in vectors))
    missing = sorted((text for text in uses if text not in vectors), key=lambda text: (len(text), text))
    for start in range(0, len(missing), batch_size):
        batch = missing[start : start + batch_size]
        made = embed(batch)
        if len(made) != len(batch):
            msg = f"the embedding model returned {len(made)} vectors for {len(batch)} texts"
            raise ValueError(msg)
        vectors.update((text, [float(x) for x in vector]) for text, vector in zip(batch, made, strict=True))
        if on_batch is not None:
            on_batch(sum(uses[text] for text in batch))
    return [vectors[text] for text in texts]

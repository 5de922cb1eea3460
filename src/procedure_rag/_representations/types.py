"""Search representations of a raw chunk: the value types and which kinds a chunk gets.

A representation is a text that is embedded and searched in place of (or besides)
the raw chunk. Every representation points at exactly one raw chunk (``chunk_id``);
a hit on any of them returns that raw chunk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from procedure_rag._types import ChunkType

__all__ = [
    "DEFAULT_KINDS",
    "OFFLINE_KINDS",
    "OFFLINE_STEP_KINDS",
    "SENTENCE_LANGUAGES",
    "Representation",
    "RepresentationKind",
    "kinds_for",
    "offline_kinds",
    "representation_id",
]


class RepresentationKind(StrEnum):
    """What a representation is."""

    RAW = "raw"
    SUMMARY = "summary"
    QUESTION = "question"
    KEYWORDS = "keywords"
    TABLE_SUMMARY = "table_summary"
    CODE_DOCSTRING = "code_docstring"
    IMAGE_CAPTION = "image_caption"
    #: One per step of a procedure (the section's last headings and the step's condition, action and caution),
    #: offline only; a step's hit counts as its chunk's raw text (small-to-big retrieval).
    STEP = "step"
    #: One per sentence of a text chunk's prose (the section's last headings and the
    #: sentence), offline only; a sentence's hit counts as its chunk's raw text, as a step's.
    SENTENCE = "sentence"


_K = RepresentationKind

#: Kinds each chunk type gets from a model (``LLMGenerator``) by default. A picture gets its
#: raw text beside its caption: the default fusion gives a caption no weight, so a picture
#: chunk searched by its caption alone is found by the lexical index only.
DEFAULT_KINDS: Mapping[ChunkType, tuple[RepresentationKind, ...]] = MappingProxyType(
    {
        ChunkType.PROCEDURE: (_K.RAW, _K.QUESTION, _K.SUMMARY, _K.KEYWORDS),
        ChunkType.TEXT: (_K.RAW, _K.SUMMARY, _K.QUESTION),
        ChunkType.TABLE: (_K.TABLE_SUMMARY, _K.RAW),
        ChunkType.CODE: (_K.CODE_DOCSTRING, _K.RAW),
        ChunkType.PICTURE: (_K.RAW, _K.IMAGE_CAPTION),
    }
)

#: Kinds each chunk type gets from the deterministic (offline) generator by default: the
#: kinds that earned their cost on the dev sets (``benchmarks/results/retrieval_kinds.md``).
#: Its questions and summaries come from the chunk's own heading, steps and sentences:
#: beside the raw text (and the lexical index) each lowered answered@1 on HoloLens and
#: E-Manual's answered@5, at four fifths of all vectors. A procedure's keywords added 5-7
#: points of answered@1 on HoloLens, 3 on the Japanese-native set, and lowered no metric of
#: any set. Table summaries, code docstrings and captions beside the raw text changed no
#: figure of the default on any set, text or file, for 9-17% of the vectors, so offline a table
#: or code chunk is searched by its raw text, and a chunk holding a table, code or screenshots
#: gets none of them (``default_kinds``). A picture gets its raw text (the alt text or
#: caption line under its headings) and a caption, as from a model: with the caption alone, a
#: screenshot chunk ranked 7th for its own alt text on its page, first with its raw vector.
#: A text chunk is searched by its sentences, a vector each, where they hold all of its text
#: and it is in one of :data:`SENTENCE_LANGUAGES`; by its raw text otherwise.
OFFLINE_KINDS: Mapping[ChunkType, tuple[RepresentationKind, ...]] = MappingProxyType(
    {
        ChunkType.PROCEDURE: (_K.RAW, _K.KEYWORDS),
        ChunkType.TEXT: (_K.SENTENCE,),
        ChunkType.TABLE: (_K.RAW,),
        ChunkType.CODE: (_K.RAW,),
        ChunkType.PICTURE: (_K.RAW, _K.IMAGE_CAPTION),
    }
)

#: The chunk languages (:attr:`~procedure_rag.Chunk.language`) whose text chunks a table's
#: ``sentence`` kind searches by their sentences; a chunk in another language gets its raw
#: vector instead. Measured on every dev set and the made files (README, *A vector per
#: sentence*): sentences lift or keep every English set (E-Manual answered@1 .53 -> .58) and
#: keep or lower every Japanese one (the real PDFs answered@1 .80 -> .76; a Japanese chunk of
#: the same cl100k budget holds about half the text). The generators take
#: ``sentence_languages=None`` for every language.
SENTENCE_LANGUAGES: frozenset[str] = frozenset({"en"})


def offline_kinds(
    *, steps: bool = False, sentences: bool = True
) -> Mapping[ChunkType, tuple[RepresentationKind, ...]]:
    """:data:`OFFLINE_KINDS` with or without the small-to-big kinds.

    ``steps`` adds a vector per step of each procedure (``procedure-rag index
    --step-vectors``; the README's *A vector per step*). ``sentences`` (the default, as in
    :data:`OFFLINE_KINDS`) searches each text chunk by its sentences, a vector each, in
    place of its raw vector where they hold all of its text (*A vector per sentence*; which
    languages is the generator's ``sentence_languages``); ``False`` gives every text chunk
    its raw vector (``--sentence-vectors none``).
    """
    table = dict(OFFLINE_KINDS)
    if steps:
        table[ChunkType.PROCEDURE] = (*table[ChunkType.PROCEDURE], _K.STEP)
    if not sentences:
        text = table[ChunkType.TEXT]
        table[ChunkType.TEXT] = tuple(dict.fromkeys(_K.RAW if kind is _K.SENTENCE else kind for kind in text))
    return MappingProxyType(table)


#: :data:`OFFLINE_KINDS` with a vector per step of each procedure (the opt-in ``step`` kind).
OFFLINE_STEP_KINDS: Mapping[ChunkType, tuple[RepresentationKind, ...]] = offline_kinds(steps=True)


def kinds_for(
    chunk_type: ChunkType,
    kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
    *,
    defaults: Mapping[ChunkType, tuple[RepresentationKind, ...]] = DEFAULT_KINDS,
) -> tuple[RepresentationKind, ...]:
    """The kinds a chunk of ``chunk_type`` gets (``kinds`` overrides ``defaults`` per type)."""
    table = defaults if kinds is None else {**defaults, **kinds}
    return table.get(chunk_type, (_K.RAW,))


def representation_id(chunk_id: str, kind: RepresentationKind, index: int, text: str) -> str:
    """A stable id: the same chunk, kind, position and text give the same id."""
    digest = hashlib.sha1(f"{chunk_id}\x1f{kind.value}\x1f{index}\x1f{text}".encode())  # noqa: S324 - an id
    return digest.hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Representation:
    """One search representation of one raw chunk.

    Attributes:
        chunk_id: The raw chunk it points at (stored as ``doc_id`` in vector stores).
        kind: What it is.
        text: The text to embed.
        index: Its position among the chunk's representations of the same kind
            (questions come several to a chunk).
        generator: Who made it: ``"deterministic"``, or the model's identity.
        fallback: True when a model was asked and failed, so the deterministic
            generator filled in.
        metadata: Extra scalar facts (``is_table``, ``columns``…), store-ready.
    """

    chunk_id: str
    kind: RepresentationKind
    text: str
    index: int = 0
    generator: str = "deterministic"
    fallback: bool = False
    metadata: Mapping[str, str | int | float | bool] = field(default_factory=dict)

    @property
    def representation_id(self) -> str:
        """Stable id of this representation."""
        return representation_id(self.chunk_id, self.kind, self.index, self.text)

    def store_metadata(self, shared: Mapping[str, object] | None = None) -> dict[str, object]:
        """The metadata a vector store keeps with this representation, in both frameworks.

        ``shared`` (a tenant, a corpus name) comes first, the representation's own
        metadata over it, then ``doc_id`` (the raw chunk id, the key langchain-classic's
        ``MultiVectorRetriever`` reads), ``representation`` (the kind),
        ``representation_index``, ``generator`` and ``fallback``.
        """
        return {
            **(shared or {}),
            **self.metadata,
            "doc_id": self.chunk_id,
            "representation": self.kind.value,
            "representation_index": self.index,
            "generator": self.generator,
            "fallback": self.fallback,
        }

"""procedure-rag core: procedure-aware chunking of manuals, framework-neutral.

This package imports neither LangChain nor LlamaIndex; the adapters in
``langchain_procedures`` and ``llama_index_procedures`` build on it.
"""

from procedure_rag._chroma.index import ChromaIndex
from procedure_rag._chunking.chunker import ProcedureChunker, chunk, iter_chunks
from procedure_rag._chunking.options import DEFAULT_DROP_KINDS, ChunkerOptions
from procedure_rag._errors import DocstoreError, ReaderError
from procedure_rag._language.lexicons import ENGLISH, JAPANESE, LEXICONS, Lexicon, detect_language
from procedure_rag._language.numbering import (
    DEFAULT_HEADING_STYLES,
    DEFAULT_STEP_STYLES,
    HeadingStyle,
    StepStyle,
    match_step_marker,
)
from procedure_rag._metadata import STRUCTURAL_KEYS, chunk_from_metadata, chunk_metadata, read_metadata
from procedure_rag._models.embeddings import OfflineEmbedder, load_offline_model
from procedure_rag._models.text_model import ImagePart, Message, ModelReply, TextModel
from procedure_rag._readers.registry import FORMATS, detect_format
from procedure_rag._representations.cache import RepresentationCache
from procedure_rag._representations.llm.generator import GenerationStats, LLMGenerator
from procedure_rag._representations.offline.generator import (
    DeterministicGenerator,
    generate_representations,
    iter_representations,
)
from procedure_rag._representations.types import (
    DEFAULT_KINDS,
    OFFLINE_KINDS,
    Representation,
    RepresentationKind,
)
from procedure_rag._types import (
    SCHEMA_VERSION,
    BBox,
    Chunk,
    ChunkLevel,
    ChunkType,
    ElementKind,
    LayoutElement,
    ProcedureStep,
    Span,
)

__all__ = [
    "DEFAULT_DROP_KINDS",
    "DEFAULT_HEADING_STYLES",
    "DEFAULT_KINDS",
    "DEFAULT_STEP_STYLES",
    "ENGLISH",
    "FORMATS",
    "JAPANESE",
    "LEXICONS",
    "OFFLINE_KINDS",
    "SCHEMA_VERSION",
    "STRUCTURAL_KEYS",
    "BBox",
    "ChromaIndex",
    "Chunk",
    "ChunkLevel",
    "ChunkType",
    "ChunkerOptions",
    "DeterministicGenerator",
    "DocstoreError",
    "ElementKind",
    "GenerationStats",
    "HeadingStyle",
    "ImagePart",
    "LLMGenerator",
    "LayoutElement",
    "Lexicon",
    "Message",
    "ModelReply",
    "OfflineEmbedder",
    "ProcedureChunker",
    "ProcedureStep",
    "ReaderError",
    "Representation",
    "RepresentationCache",
    "RepresentationKind",
    "Span",
    "StepStyle",
    "TextModel",
    "chunk",
    "chunk_from_metadata",
    "chunk_metadata",
    "detect_format",
    "detect_language",
    "generate_representations",
    "iter_chunks",
    "iter_representations",
    "load_offline_model",
    "match_step_marker",
    "read_metadata",
]

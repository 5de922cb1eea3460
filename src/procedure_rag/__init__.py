"""procedure-rag core: procedure-aware chunking of manuals, framework-neutral.

This package imports neither LangChain nor LlamaIndex; the adapters in
``langchain_procedures`` and ``llama_index_procedures`` build on it.
"""

from typing import TYPE_CHECKING

from procedure_rag._lazy import load_export

if TYPE_CHECKING:
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
    from procedure_rag._models.token_length import model_token_length
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
        SENTENCE_LANGUAGES,
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

# Where each name lives: imported on first use (PEP 562), so importing the package stays cheap.
_EXPORTS = {
    "ChromaIndex": "procedure_rag._chroma.index",
    "ProcedureChunker": "procedure_rag._chunking.chunker",
    "chunk": "procedure_rag._chunking.chunker",
    "iter_chunks": "procedure_rag._chunking.chunker",
    "DEFAULT_DROP_KINDS": "procedure_rag._chunking.options",
    "ChunkerOptions": "procedure_rag._chunking.options",
    "DocstoreError": "procedure_rag._errors",
    "ReaderError": "procedure_rag._errors",
    "ENGLISH": "procedure_rag._language.lexicons",
    "JAPANESE": "procedure_rag._language.lexicons",
    "LEXICONS": "procedure_rag._language.lexicons",
    "Lexicon": "procedure_rag._language.lexicons",
    "detect_language": "procedure_rag._language.lexicons",
    "DEFAULT_HEADING_STYLES": "procedure_rag._language.numbering",
    "DEFAULT_STEP_STYLES": "procedure_rag._language.numbering",
    "HeadingStyle": "procedure_rag._language.numbering",
    "StepStyle": "procedure_rag._language.numbering",
    "match_step_marker": "procedure_rag._language.numbering",
    "STRUCTURAL_KEYS": "procedure_rag._metadata",
    "chunk_from_metadata": "procedure_rag._metadata",
    "chunk_metadata": "procedure_rag._metadata",
    "read_metadata": "procedure_rag._metadata",
    "OfflineEmbedder": "procedure_rag._models.embeddings",
    "load_offline_model": "procedure_rag._models.embeddings",
    "ImagePart": "procedure_rag._models.text_model",
    "Message": "procedure_rag._models.text_model",
    "ModelReply": "procedure_rag._models.text_model",
    "TextModel": "procedure_rag._models.text_model",
    "model_token_length": "procedure_rag._models.token_length",
    "FORMATS": "procedure_rag._readers.registry",
    "detect_format": "procedure_rag._readers.registry",
    "RepresentationCache": "procedure_rag._representations.cache",
    "GenerationStats": "procedure_rag._representations.llm.generator",
    "LLMGenerator": "procedure_rag._representations.llm.generator",
    "DeterministicGenerator": "procedure_rag._representations.offline.generator",
    "generate_representations": "procedure_rag._representations.offline.generator",
    "iter_representations": "procedure_rag._representations.offline.generator",
    "DEFAULT_KINDS": "procedure_rag._representations.types",
    "OFFLINE_KINDS": "procedure_rag._representations.types",
    "SENTENCE_LANGUAGES": "procedure_rag._representations.types",
    "Representation": "procedure_rag._representations.types",
    "RepresentationKind": "procedure_rag._representations.types",
    "SCHEMA_VERSION": "procedure_rag._types",
    "BBox": "procedure_rag._types",
    "Chunk": "procedure_rag._types",
    "ChunkLevel": "procedure_rag._types",
    "ChunkType": "procedure_rag._types",
    "ElementKind": "procedure_rag._types",
    "LayoutElement": "procedure_rag._types",
    "ProcedureStep": "procedure_rag._types",
    "Span": "procedure_rag._types",
}


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
    "SENTENCE_LANGUAGES",
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
    "model_token_length",
    "read_metadata",
]


def __getattr__(name: str) -> object:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted(__all__)

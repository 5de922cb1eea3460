"""The core surface the framework adapters build on: one declared seam, private to this project.

``langchain_procedures`` and ``llama_index_procedures`` import the core from
:mod:`procedure_rag` (its public names) or from here, and from nowhere else (a test
parses their sources to hold them to it). These names are not public API: they may
change with the adapters in one commit. docs/CORE_API.md says what each is for.
"""

from typing import TYPE_CHECKING

from procedure_rag._lazy import load_export

if TYPE_CHECKING:
    # Index layout on Chroma: where an index lives, its collection, writes and reads.
    from procedure_rag._chroma.collection import (
        DEFAULT_COLLECTION,
        ChromaTarget,
        check_dimension,
        docstore_path,
        open_collection,
        read_retrying,
        upsert,
    )
    from procedure_rag._chroma.index import CollectionBackend
    from procedure_rag._chroma.queries import chroma_search, cosine_from_relevance

    # Chunking: framework documents (element lists such as Unstructured's) grouped into sources,
    # the token length, and the input bounds the splitter and node parser check.
    from procedure_rag._chunking.chunker import check_source_format
    from procedure_rag._chunking.framework_documents import (
        DocumentChunk,
        RecordGroup,
        RunningLineMemory,
        SourceIds,
        iter_document_chunks,
        iter_record_groups,
    )
    from procedure_rag._chunking.lengths import TiktokenCount, ordinary_first, tiktoken_encoding
    from procedure_rag._chunking.options import DEFAULT_MAX_INPUT_CHARS, DEFAULT_MAX_JSON_DEPTH

    # What holds something open: the context-manager half of the retrievers.
    from procedure_rag._closing import Closing

    # Metadata: whether a framework document is one of our chunks already (passed through).
    from procedure_rag._metadata import is_chunk_metadata

    # Embedding models: many texts embedded at once (each distinct text once, known ones reused),
    # the default offline model, the identity an index records, and the error for another model.
    from procedure_rag._models.embedding_batches import embed_texts
    from procedure_rag._models.embeddings import default_model_name
    from procedure_rag._models.identity import (
        PROBE_TEXT,
        EmbeddingIdentity,
        EmbeddingMismatchError,
        describe_model,
    )

    # Representations: an LLM's representations of chunks, through the adapters' models.
    from procedure_rag._representations.llm.generator import arepresent, represent

    # Retrieval: ranking, and which optional passes an index allows.
    from procedure_rag._retrieval.fusion import FusionMethod, Hit
    from procedure_rag._retrieval.passes import VectorFilter, lexical_pass, rescore_pass
    from procedure_rag._retrieval.retrieve import (
        ALL_KINDS,
        LEXICAL_WEIGHT,
        Found,
        Rescore,
        RetrievalOptions,
        Retrieved,
        Search,
        check_query,
        retrieve,
    )

    # Store: the docstore and ledger, where raw chunks live, and the index writer.
    from procedure_rag._store.chunk_store import ChunkStore, StoredChunk
    from procedure_rag._store.docstore import Docstore
    from procedure_rag._store.opening import DocstoreLocation, is_postgres_url, open_docstore
    from procedure_rag._store.raw_chunks import ForeignDocstore, RawChunks
    from procedure_rag._store.sqlite import MEMORY
    from procedure_rag._store.writer import (
        IndexReport,
        RepresentationSource,
        VectorBackend,
        VectorRecord,
        stored_chunk,
    )

# Where each name lives: imported on first use (PEP 562), so importing the package stays cheap.
_EXPORTS = {
    "DEFAULT_COLLECTION": "procedure_rag._chroma.collection",
    "ChromaTarget": "procedure_rag._chroma.collection",
    "check_dimension": "procedure_rag._chroma.collection",
    "docstore_path": "procedure_rag._chroma.collection",
    "open_collection": "procedure_rag._chroma.collection",
    "read_retrying": "procedure_rag._chroma.collection",
    "upsert": "procedure_rag._chroma.collection",
    "CollectionBackend": "procedure_rag._chroma.index",
    "chroma_search": "procedure_rag._chroma.queries",
    "cosine_from_relevance": "procedure_rag._chroma.queries",
    "check_source_format": "procedure_rag._chunking.chunker",
    "DocumentChunk": "procedure_rag._chunking.framework_documents",
    "RecordGroup": "procedure_rag._chunking.framework_documents",
    "RunningLineMemory": "procedure_rag._chunking.framework_documents",
    "SourceIds": "procedure_rag._chunking.framework_documents",
    "iter_document_chunks": "procedure_rag._chunking.framework_documents",
    "iter_record_groups": "procedure_rag._chunking.framework_documents",
    "TiktokenCount": "procedure_rag._chunking.lengths",
    "ordinary_first": "procedure_rag._chunking.lengths",
    "tiktoken_encoding": "procedure_rag._chunking.lengths",
    "DEFAULT_MAX_INPUT_CHARS": "procedure_rag._chunking.options",
    "DEFAULT_MAX_JSON_DEPTH": "procedure_rag._chunking.options",
    "Closing": "procedure_rag._closing",
    "embed_texts": "procedure_rag._models.embedding_batches",
    "default_model_name": "procedure_rag._models.embeddings",
    "PROBE_TEXT": "procedure_rag._models.identity",
    "EmbeddingIdentity": "procedure_rag._models.identity",
    "EmbeddingMismatchError": "procedure_rag._models.identity",
    "describe_model": "procedure_rag._models.identity",
    "arepresent": "procedure_rag._representations.llm.generator",
    "represent": "procedure_rag._representations.llm.generator",
    "FusionMethod": "procedure_rag._retrieval.fusion",
    "Hit": "procedure_rag._retrieval.fusion",
    "VectorFilter": "procedure_rag._retrieval.passes",
    "lexical_pass": "procedure_rag._retrieval.passes",
    "rescore_pass": "procedure_rag._retrieval.passes",
    "ALL_KINDS": "procedure_rag._retrieval.retrieve",
    "LEXICAL_WEIGHT": "procedure_rag._retrieval.retrieve",
    "Found": "procedure_rag._retrieval.retrieve",
    "Rescore": "procedure_rag._retrieval.retrieve",
    "RetrievalOptions": "procedure_rag._retrieval.retrieve",
    "Retrieved": "procedure_rag._retrieval.retrieve",
    "Search": "procedure_rag._retrieval.retrieve",
    "check_query": "procedure_rag._retrieval.retrieve",
    "retrieve": "procedure_rag._retrieval.retrieve",
    "is_chunk_metadata": "procedure_rag._metadata",
    "ChunkStore": "procedure_rag._store.chunk_store",
    "StoredChunk": "procedure_rag._store.chunk_store",
    "Docstore": "procedure_rag._store.docstore",
    "DocstoreLocation": "procedure_rag._store.opening",
    "is_postgres_url": "procedure_rag._store.opening",
    "open_docstore": "procedure_rag._store.opening",
    "ForeignDocstore": "procedure_rag._store.raw_chunks",
    "RawChunks": "procedure_rag._store.raw_chunks",
    "MEMORY": "procedure_rag._store.sqlite",
    "IndexReport": "procedure_rag._store.writer",
    "RepresentationSource": "procedure_rag._store.writer",
    "VectorBackend": "procedure_rag._store.writer",
    "VectorRecord": "procedure_rag._store.writer",
    "stored_chunk": "procedure_rag._store.writer",
}


__all__ = [
    "ALL_KINDS",
    "DEFAULT_COLLECTION",
    "DEFAULT_MAX_INPUT_CHARS",
    "DEFAULT_MAX_JSON_DEPTH",
    "LEXICAL_WEIGHT",
    "MEMORY",
    "PROBE_TEXT",
    "ChromaTarget",
    "ChunkStore",
    "Closing",
    "CollectionBackend",
    "Docstore",
    "DocstoreLocation",
    "DocumentChunk",
    "EmbeddingIdentity",
    "EmbeddingMismatchError",
    "ForeignDocstore",
    "Found",
    "FusionMethod",
    "Hit",
    "IndexReport",
    "RawChunks",
    "RecordGroup",
    "RepresentationSource",
    "Rescore",
    "RetrievalOptions",
    "Retrieved",
    "RunningLineMemory",
    "Search",
    "SourceIds",
    "StoredChunk",
    "TiktokenCount",
    "VectorBackend",
    "VectorFilter",
    "VectorRecord",
    "arepresent",
    "check_dimension",
    "check_query",
    "check_source_format",
    "chroma_search",
    "cosine_from_relevance",
    "default_model_name",
    "describe_model",
    "docstore_path",
    "embed_texts",
    "is_chunk_metadata",
    "is_postgres_url",
    "iter_document_chunks",
    "iter_record_groups",
    "lexical_pass",
    "load_export",
    "open_collection",
    "open_docstore",
    "ordinary_first",
    "read_retrying",
    "represent",
    "rescore_pass",
    "retrieve",
    "stored_chunk",
    "tiktoken_encoding",
    "upsert",
]


def __getattr__(name: str) -> object:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted(__all__)

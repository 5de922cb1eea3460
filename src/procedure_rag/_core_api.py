"""The core surface the framework adapters build on: one declared seam, private to this project.

``langchain_procedures`` and ``llama_index_procedures`` import the core from
:mod:`procedure_rag` (its public names) or from here, and from nowhere else (a test
parses their sources to hold them to it). These names are not public API: they may
change with the adapters in one commit. docs/CORE_API.md says what each is for.
"""

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
from procedure_rag._chunking.framework_documents import (
    DocumentChunk,
    RecordGroup,
    SourceIds,
    iter_document_chunks,
    iter_record_groups,
)
from procedure_rag._chunking.lengths import TiktokenCount, ordinary_first, tiktoken_encoding
from procedure_rag._chunking.options import DEFAULT_MAX_INPUT_CHARS, DEFAULT_MAX_JSON_DEPTH

# What holds something open: the context-manager half of the retrievers.
from procedure_rag._closing import Closing

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
    FETCH_PER_K,
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

__all__ = [
    "ALL_KINDS",
    "DEFAULT_COLLECTION",
    "DEFAULT_MAX_INPUT_CHARS",
    "DEFAULT_MAX_JSON_DEPTH",
    "FETCH_PER_K",
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
    "chroma_search",
    "cosine_from_relevance",
    "default_model_name",
    "describe_model",
    "docstore_path",
    "embed_texts",
    "is_postgres_url",
    "iter_document_chunks",
    "iter_record_groups",
    "lexical_pass",
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

"""LlamaIndex adapters for procedure-rag.

``ProcedureNodeParser`` turns documents into procedure-block nodes with parent
nodes, ready for ``AutoMergingRetriever``; ``ProcedureReader`` reads files (Word,
Excel, PowerPoint, PDF…) with the core's own readers into chunk documents that the
parser passes through; ``representations_to_index_nodes`` turns search
representations into ``IndexNode``s for ``RecursiveRetriever``;
``LlamaIndexModel`` lets any LlamaIndex LLM write those representations;
``OfflineEmbedding`` embeds them with the core's offline models;
``ProcedureMultiVectorRetriever`` searches the representations and returns each raw
node once, with its score and what matched, and ``ProcedureIndexer`` indexes nodes
from an ``IngestionPipeline``.
"""

from typing import TYPE_CHECKING

from procedure_rag._core_api import load_export

if TYPE_CHECKING:
    from llama_index_procedures._embeddings import OfflineEmbedding
    from llama_index_procedures._models import LlamaIndexModel
    from llama_index_procedures._node_parser import ProcedureNodeParser
    from llama_index_procedures._reader import ProcedureReader
    from llama_index_procedures._representations import (
        agenerate_representation_nodes,
        generate_representation_nodes,
        representations_to_index_nodes,
    )
    from llama_index_procedures._retriever import ProcedureIndexer, ProcedureMultiVectorRetriever

# Where each name lives: imported on first use (PEP 562), so importing the package stays cheap.
_EXPORTS = {
    "OfflineEmbedding": "llama_index_procedures._embeddings",
    "LlamaIndexModel": "llama_index_procedures._models",
    "ProcedureNodeParser": "llama_index_procedures._node_parser",
    "ProcedureReader": "llama_index_procedures._reader",
    "agenerate_representation_nodes": "llama_index_procedures._representations",
    "generate_representation_nodes": "llama_index_procedures._representations",
    "representations_to_index_nodes": "llama_index_procedures._representations",
    "ProcedureIndexer": "llama_index_procedures._retriever",
    "ProcedureMultiVectorRetriever": "llama_index_procedures._retriever",
}


__all__ = [
    "LlamaIndexModel",
    "OfflineEmbedding",
    "ProcedureIndexer",
    "ProcedureMultiVectorRetriever",
    "ProcedureNodeParser",
    "ProcedureReader",
    "agenerate_representation_nodes",
    "generate_representation_nodes",
    "representations_to_index_nodes",
]


def __getattr__(name: str) -> object:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted(__all__)

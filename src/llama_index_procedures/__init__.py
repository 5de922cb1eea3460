"""LlamaIndex adapters for procedure-rag.

``ProcedureNodeParser`` turns documents into procedure-block nodes with parent
nodes, ready for ``AutoMergingRetriever``; ``representations_to_index_nodes`` turns
search representations into ``IndexNode``s for ``RecursiveRetriever``;
``LlamaIndexModel`` lets any LlamaIndex LLM write those representations;
``OfflineEmbedding`` embeds them with the core's offline models;
``ProcedureMultiVectorRetriever`` searches the representations and returns each raw
node once, with its score and what matched, and ``ProcedureIndexer`` indexes nodes
from an ``IngestionPipeline``.
"""

from llama_index_procedures._embeddings import OfflineEmbedding
from llama_index_procedures._models import LlamaIndexModel
from llama_index_procedures._node_parser import ProcedureNodeParser
from llama_index_procedures._representations import (
    agenerate_representation_nodes,
    generate_representation_nodes,
    representations_to_index_nodes,
)
from llama_index_procedures._retriever import ProcedureIndexer, ProcedureMultiVectorRetriever

__all__ = [
    "LlamaIndexModel",
    "OfflineEmbedding",
    "ProcedureIndexer",
    "ProcedureMultiVectorRetriever",
    "ProcedureNodeParser",
    "agenerate_representation_nodes",
    "generate_representation_nodes",
    "representations_to_index_nodes",
]

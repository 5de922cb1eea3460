"""LlamaIndex adapters for procedure-rag.

``ProcedureNodeParser`` turns documents into procedure-block nodes with parent
nodes, ready for ``AutoMergingRetriever``; ``representations_to_index_nodes`` turns
search representations into ``IndexNode``s for ``RecursiveRetriever``;
``LlamaIndexModel`` lets any LlamaIndex LLM write those representations.
"""

from llama_index_procedures._models import LlamaIndexModel
from llama_index_procedures._node_parser import ProcedureNodeParser
from llama_index_procedures._representations import (
    agenerate_representation_nodes,
    generate_representation_nodes,
    representations_to_index_nodes,
)

__all__ = [
    "LlamaIndexModel",
    "ProcedureNodeParser",
    "agenerate_representation_nodes",
    "generate_representation_nodes",
    "representations_to_index_nodes",
]

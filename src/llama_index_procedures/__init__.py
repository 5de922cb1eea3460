"""LlamaIndex adapters for procedure-rag.

``ProcedureNodeParser`` turns documents into procedure-block nodes with parent
nodes, ready for ``AutoMergingRetriever``.
"""

from llama_index_procedures._node_parser import ProcedureNodeParser

__all__ = ["ProcedureNodeParser"]

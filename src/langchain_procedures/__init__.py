"""LangChain adapters for procedure-rag.

Thin wrappers around the framework-neutral ``procedure_rag`` core: they translate
its chunks into LangChain documents, its search representations into documents for
``MultiVectorRetriever``, and LangChain chat models into the core's ``TextModel``.
``OfflineEmbeddings`` wraps the core's offline embedding models. They hold no
chunking, generation or embedding logic of their own.
"""

from langchain_procedures._docstore import ProcedureDocStore
from langchain_procedures._embeddings import OfflineEmbeddings
from langchain_procedures._models import LangChainModel
from langchain_procedures._representations import (
    agenerate_representation_documents,
    generate_representation_documents,
    representations_to_documents,
)
from langchain_procedures._retriever import ProcedureMultiVectorRetriever
from langchain_procedures._splitter import ProcedureTextSplitter

__all__ = [
    "LangChainModel",
    "OfflineEmbeddings",
    "ProcedureDocStore",
    "ProcedureMultiVectorRetriever",
    "ProcedureTextSplitter",
    "agenerate_representation_documents",
    "generate_representation_documents",
    "representations_to_documents",
]

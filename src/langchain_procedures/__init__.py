"""LangChain adapters for procedure-rag.

Thin wrappers around the framework-neutral ``procedure_rag`` core: they translate
its chunks into LangChain documents, its search representations into documents for
``MultiVectorRetriever``, and LangChain chat models into the core's ``TextModel``.
They hold no chunking or generation logic of their own.
"""

from langchain_procedures._models import LangChainModel
from langchain_procedures._representations import (
    agenerate_representation_documents,
    generate_representation_documents,
    representations_to_documents,
)
from langchain_procedures._splitter import ProcedureTextSplitter

__all__ = [
    "LangChainModel",
    "ProcedureTextSplitter",
    "agenerate_representation_documents",
    "generate_representation_documents",
    "representations_to_documents",
]

"""LangChain adapters for procedure-rag.

Thin wrappers around the framework-neutral ``procedure_rag`` core: they translate
its chunks into LangChain documents (from text a loader gave, or from a file read by
the core's own readers: ``ProcedureLoader``), its search representations into documents for
``MultiVectorRetriever``, and LangChain chat models into the core's ``TextModel``.
``OfflineEmbeddings`` wraps the core's offline embedding models. They hold no
chunking, generation or embedding logic of their own.
"""

from typing import TYPE_CHECKING

from procedure_rag._core_api import load_export

if TYPE_CHECKING:
    from langchain_procedures._docstore import ProcedureDocStore
    from langchain_procedures._embeddings import OfflineEmbeddings
    from langchain_procedures._loader import ProcedureLoader
    from langchain_procedures._models import LangChainModel
    from langchain_procedures._representations import (
        agenerate_representation_documents,
        generate_representation_documents,
        representations_to_documents,
    )
    from langchain_procedures._retriever import ProcedureMultiVectorRetriever
    from langchain_procedures._splitter import ProcedureTextSplitter

# Where each name lives: imported on first use (PEP 562), so importing the package stays cheap.
_EXPORTS = {
    "ProcedureDocStore": "langchain_procedures._docstore",
    "OfflineEmbeddings": "langchain_procedures._embeddings",
    "ProcedureLoader": "langchain_procedures._loader",
    "LangChainModel": "langchain_procedures._models",
    "agenerate_representation_documents": "langchain_procedures._representations",
    "generate_representation_documents": "langchain_procedures._representations",
    "representations_to_documents": "langchain_procedures._representations",
    "ProcedureMultiVectorRetriever": "langchain_procedures._retriever",
    "ProcedureTextSplitter": "langchain_procedures._splitter",
}


__all__ = [
    "LangChainModel",
    "OfflineEmbeddings",
    "ProcedureDocStore",
    "ProcedureLoader",
    "ProcedureMultiVectorRetriever",
    "ProcedureTextSplitter",
    "agenerate_representation_documents",
    "generate_representation_documents",
    "representations_to_documents",
]


def __getattr__(name: str) -> object:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted(__all__)

"""LangChain adapters for procedure-rag.

Thin wrappers around the framework-neutral ``procedure_rag`` core: they translate
its chunks into LangChain documents and hold no chunking logic of their own.
"""

from langchain_procedures._splitter import ProcedureTextSplitter

__all__ = ["ProcedureTextSplitter"]

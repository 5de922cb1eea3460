"""Do the framework adapters give what an earlier commit gave? Every shared-corpus document, both adapters.

The earlier commit's ``src`` is exported (``git archive``) to a temporary folder with its three
packages renamed (``procedure_rag`` -> ``procedure_rag_base``, ...), so that both versions run in
one process on the same inputs. Compared, document by document:

* ``ProcedureNodeParser``: every node's id, text, metadata, excluded keys, templates, char
  indexes, hash and rendered content (embed and LLM), the relationships' kinds and order, and
  each related node's id, type and hash; ``SOURCE`` in full, metadata included. The metadata of
  the other relationships is counted, not compared (it was dropped on purpose: see
  ``ProcedureNodeParser``'s docstring).
  Three parser configurations, with and without document metadata.
* ``ProcedureTextSplitter.from_tiktoken_encoder(...).split_documents``: ids, texts and metadata,
  children only and with parents and ``start_index``.

Inputs: every document of the shared corpora (HoloLens en/ja and Japanese-native Markdown, the
E-Manual sections as text) plus one 1 MB concatenated Markdown document.

    python benchmarks/adapter_output_diff.py --base 8e54588

Prints a JSON summary; exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from io import BytesIO
from pathlib import Path
from types import ModuleType
from typing import Any

from langchain_core.documents import Document as LangChainDocument
from llama_index.core import Document as LlamaIndexDocument
from llama_index.core.schema import MetadataMode, NodeRelationship
from speed import DEFAULT_DOCS_ROOT, MB, Doc, concatenate, interleave, load_corpora

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("procedure_rag", "langchain_procedures", "llama_index_procedures")
_IMPORT_NAME = re.compile(r"\b(" + "|".join(PACKAGES) + r")\b")

#: Parser options and the document metadata each is run with.
LLAMA_INDEX_CASES: tuple[tuple[dict[str, Any], tuple[dict[str, Any], ...]], ...] = (
    ({"chunk_size": 400}, ({}, {"source": "x.md", "tags": ["a"], "n": 1})),
    (
        {"chunk_size": 400, "include_metadata": False, "include_prev_next_rel": False},
        ({"file_path": "m.md"},),
    ),
    ({"chunk_size": 400, "emit_parents": False}, ({},)),
)
LANGCHAIN_CASES: tuple[dict[str, Any], ...] = ({}, {"emit_parents": True, "add_start_index": True})


def export_base(ref: str, dest: Path) -> Path:
    """Write ``ref``'s packages under ``dest`` with ``_base`` names; return the folder to import from."""
    archive = subprocess.run(["git", "archive", ref, "src"], cwd=ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    src = dest / "src"
    for package in PACKAGES:
        (src / package).rename(src / f"{package}_base")
    for path in src.rglob("*.py"):
        path.write_text(_IMPORT_NAME.sub(r"\1_base", path.read_text(encoding="utf-8")), encoding="utf-8")
    return src


def documents(root: Path) -> list[Doc]:
    corpora = load_corpora(root)
    return [d for docs in corpora.values() for d in docs] + [concatenate(interleave(corpora), MB)]


def _infos(value: Any) -> list[Any]:  # noqa: ANN401 - a RelatedNodeInfo or a list of them
    return value if isinstance(value, list) else [value]


def node_view(node: Any) -> tuple[Any, ...]:  # noqa: ANN401 - a LlamaIndex TextNode
    """What a user reads of a node, relationship metadata aside (``SOURCE``'s included)."""
    relationships = [
        (
            kind,
            [
                (r.node_id, r.node_type, r.hash, r.metadata if kind is NodeRelationship.SOURCE else None)
                for r in _infos(value)
            ],
        )
        for kind, value in node.relationships.items()
    ]
    return (
        node.node_id,
        node.text,
        node.metadata,
        relationships,
        node.excluded_embed_metadata_keys,
        node.excluded_llm_metadata_keys,
        node.metadata_template,
        node.metadata_separator,
        node.text_template,
        node.start_char_idx,
        node.end_char_idx,
        node.hash,
        sorted(node.model_fields_set),
        node.get_content(MetadataMode.EMBED),
        node.get_content(MetadataMode.LLM),
    )


def related_metadata(nodes: Sequence[Any]) -> int:
    """How many relationships other than ``SOURCE`` carry metadata."""
    return sum(
        1
        for node in nodes
        for kind, value in node.relationships.items()
        if kind is not NodeRelationship.SOURCE
        for info in _infos(value)
        if info.metadata
    )


def compare_llama_index(new: ModuleType, old: ModuleType, docs: Sequence[Doc]) -> dict[str, Any]:
    out: dict[str, Any] = {"nodes": 0, "differing": [], "related_metadata": {"base": 0, "now": 0}}
    for options, metadatas in LLAMA_INDEX_CASES:
        parsers = new.ProcedureNodeParser(**options), old.ProcedureNodeParser(**options)
        for doc in docs:
            for metadata in metadatas:
                now, base = (
                    p.get_nodes_from_documents(
                        [LlamaIndexDocument(text=doc.text, metadata=dict(metadata), doc_id=doc.name)]
                    )
                    for p in parsers
                )
                out["nodes"] += len(now)
                out["related_metadata"]["base"] += related_metadata(base)
                out["related_metadata"]["now"] += related_metadata(now)
                if [node_view(n) for n in now] != [node_view(n) for n in base]:
                    out["differing"].append([options, doc.name])
    return out


def compare_langchain(new: ModuleType, old: ModuleType, docs: Sequence[Doc]) -> dict[str, Any]:
    out: dict[str, Any] = {"documents": 0, "differing": []}
    for options in LANGCHAIN_CASES:
        splitters = (
            module.ProcedureTextSplitter.from_tiktoken_encoder(
                encoding_name="cl100k_base", chunk_size=400, **options
            )
            for module in (new, old)
        )
        split: list[Callable[[list[LangChainDocument]], list[LangChainDocument]]] = [
            s.split_documents for s in splitters
        ]
        for doc in docs:
            for metadata in ({}, {"source": doc.name, "tags": ["a", "b"], "n": 1}):
                now, base = (
                    [
                        (d.id, d.page_content, d.metadata)
                        for d in f([LangChainDocument(doc.text, metadata=dict(metadata))])
                    ]
                    for f in split
                )
                out["documents"] += len(now)
                if now != base:
                    out["differing"].append([options, doc.name])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--docs-root", type=Path, default=DEFAULT_DOCS_ROOT)
    args = parser.parse_args(argv)
    docs = documents(args.docs_root)
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, str(export_base(args.base, Path(tmp))))
        li_new, li_old, lc_new, lc_old = (
            importlib.import_module(f"{name}{suffix}")
            for name in ("llama_index_procedures", "langchain_procedures")
            for suffix in ("", "_base")
        )
        result = {
            "base": args.base,
            "inputs": len(docs),
            "llama_index": compare_llama_index(li_new, li_old, docs),
            "langchain": compare_langchain(lc_new, lc_old, docs),
        }
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 1 if result["llama_index"]["differing"] or result["langchain"]["differing"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""The adapters reach the core through one seam: ``procedure_rag`` or ``procedure_rag._core_api``.

Their sources are parsed (not imported), so an import in a function body, under
``TYPE_CHECKING`` or behind ``importlib`` counts as much as one at the top.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ("langchain_procedures", "llama_index_procedures")
SEAM = "procedure_rag._core_api"
ALLOWED = frozenset({"procedure_rag", SEAM})


def core_imports(source: str) -> list[tuple[int, str]]:
    """``(line, module)`` of every core module ``source`` imports that is not the seam."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            if node.module == "procedure_rag":
                # ``from procedure_rag import _store`` imports a private module too.
                modules += [f"procedure_rag.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                modules = [node.args[0].value]
        found += [
            (node.lineno, module)
            for module in modules
            if module.split(".")[0] == "procedure_rag" and module not in ALLOWED
        ]
    return found


@pytest.mark.parametrize("package", ADAPTERS)
def test_adapters_import_the_core_only_through_the_seam(package: str) -> None:
    violations = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in sorted((ROOT / "src" / package).rglob("*.py"))
        for line, module in core_imports(path.read_text(encoding="utf-8"))
    ]
    assert violations == []


PLANTED = [
    ("from procedure_rag._store.chunk_store import ChunkStore", [(1, "procedure_rag._store.chunk_store")]),
    ("import procedure_rag._chroma.index", [(1, "procedure_rag._chroma.index")]),
    ("def f():\n    from procedure_rag._retrieval import retrieve\n", [(2, "procedure_rag._retrieval")]),
    ("from procedure_rag import Chunk, _types", [(1, "procedure_rag._types")]),
    ("importlib.import_module('procedure_rag._metadata')", [(1, "procedure_rag._metadata")]),
    ("from procedure_rag import Chunk\nfrom procedure_rag._core_api import Hit\nimport procedure_rag", []),
    ("from langchain_core.documents import Document\nfrom ._docstore import ProcedureDocStore", []),
]


@pytest.mark.parametrize(("source", "expected"), PLANTED)
def test_the_check_catches_a_private_core_import(source: str, expected: list[tuple[int, str]]) -> None:
    assert core_imports(source) == expected


def test_seam_names_resolve_once_each() -> None:
    seam = importlib.import_module(SEAM)
    assert len(set(seam.__all__)) == len(seam.__all__)
    assert [name for name in seam.__all__ if not hasattr(seam, name)] == []


def test_every_seam_name_is_documented() -> None:
    seam = importlib.import_module(SEAM)
    doc = (ROOT / "docs" / "CORE_API.md").read_text(encoding="utf-8")
    assert [name for name in seam.__all__ if f"`{name}`" not in doc] == []

"""Package-level contracts: framework-free core, pinned public names, typing markers."""

from __future__ import annotations

import importlib
import importlib.resources
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FRAMEWORKS = (
    "langchain_core",
    "langchain",
    "langchain_text_splitters",
    "langchain_community",
    "langchain_classic",
    "llama_index",
)

# The import blocker answers find_spec for a framework with a spec whose loader
# refuses to run: looking a package up is allowed, importing it is not, and every
# attempt is recorded even when the caller swallows the ImportError.
_CORE_WITHOUT_FRAMEWORKS = textwrap.dedent(
    """
    import importlib.abc
    import importlib.machinery
    import sys

    BLOCKED = {frameworks!r}
    attempts = []

    class _Refuse(importlib.abc.Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            attempts.append(module.__name__)
            raise ImportError(f"framework import blocked: {{module.__name__}}")

    class _Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname.split(".")[0] in BLOCKED:
                return importlib.machinery.ModuleSpec(fullname, _Refuse())
            return None

    sys.meta_path.insert(0, _Blocker())

    import procedure_rag as pr

    options = pr.ChunkerOptions(chunk_size=50)
    chunker = pr.ProcedureChunker(options)
    assert pr.detect_language("設定画面でパスワード変更を選択します。") == "ja"
    assert pr.detect_language("Select Settings, then Change password.") == "en"
    assert pr.match_step_marker("1. Select Settings.") is not None
    assert pr.read_metadata({{"section_path": '["Restart the device"]'}})["section_path"] == [
        "Restart the device"
    ]
    text = "# Restart\\n\\nIf it hangs, do this:\\n\\n1. Hold Power.\\n2. Release it.\\n"
    try:
        chunks = chunker.chunk(text, source_id="a.md")
    except NotImplementedError:
        chunks = None  # the chunker is still a stub; the imports above are what count
    if chunks is not None:
        assert chunks, "no chunks for a two-step procedure"
        pr.chunk_metadata(chunks[0], {{"source": "a.md"}})

    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    assert not attempts, f"core tried to import {{attempts}}"
    assert not loaded, f"framework modules loaded: {{loaded}}"
    print("core ok")
    """
).format(frameworks=FRAMEWORKS)


def test_core_imports_no_framework() -> None:
    # Earlier tests in this process may have set TIKTOKEN_CACHE_DIR; the child must
    # take the default path, which is the one that locates the offline cache.
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    result = subprocess.run(  # noqa: S603 - our own interpreter and a fixed script
        [sys.executable, "-c", _CORE_WITHOUT_FRAMEWORKS],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "core ok"


PUBLIC_NAMES = {
    "procedure_rag": [
        "BBox",
        "ChromaIndex",
        "Chunk",
        "ChunkLevel",
        "ChunkType",
        "ChunkerOptions",
        "DEFAULT_DROP_KINDS",
        "DEFAULT_HEADING_STYLES",
        "DEFAULT_KINDS",
        "DEFAULT_STEP_STYLES",
        "DeterministicGenerator",
        "DocstoreError",
        "ENGLISH",
        "ElementKind",
        "FORMATS",
        "GenerationStats",
        "HeadingStyle",
        "ImagePart",
        "JAPANESE",
        "LEXICONS",
        "LLMGenerator",
        "LayoutElement",
        "Lexicon",
        "Message",
        "ModelReply",
        "OFFLINE_KINDS",
        "OfflineEmbedder",
        "ProcedureChunker",
        "ProcedureStep",
        "ReaderError",
        "Representation",
        "RepresentationCache",
        "RepresentationKind",
        "SCHEMA_VERSION",
        "STRUCTURAL_KEYS",
        "Span",
        "StepStyle",
        "TextModel",
        "chunk",
        "chunk_from_metadata",
        "chunk_metadata",
        "detect_format",
        "detect_language",
        "generate_representations",
        "iter_chunks",
        "iter_representations",
        "load_offline_model",
        "match_step_marker",
        "read_metadata",
    ],
    "langchain_procedures": [
        "LangChainModel",
        "OfflineEmbeddings",
        "ProcedureDocStore",
        "ProcedureMultiVectorRetriever",
        "ProcedureTextSplitter",
        "agenerate_representation_documents",
        "generate_representation_documents",
        "representations_to_documents",
    ],
    "llama_index_procedures": [
        "LlamaIndexModel",
        "OfflineEmbedding",
        "ProcedureIndexer",
        "ProcedureMultiVectorRetriever",
        "ProcedureNodeParser",
        "agenerate_representation_nodes",
        "generate_representation_nodes",
        "representations_to_index_nodes",
    ],
}

PACKAGES = ("procedure_rag", "langchain_procedures", "llama_index_procedures")


@pytest.mark.parametrize("package", sorted(PUBLIC_NAMES))
def test_public_names_are_pinned(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == PUBLIC_NAMES[package]
    assert len(set(module.__all__)) == len(module.__all__)


@pytest.mark.parametrize("package", sorted(PUBLIC_NAMES))
def test_every_public_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []


def test_every_package_has_pinned_names() -> None:
    assert sorted(PUBLIC_NAMES) == sorted(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_package_ships_py_typed(package: str) -> None:
    assert importlib.resources.files(package).joinpath("py.typed").is_file()
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"
    ]
    assert "py.typed" in package_data[package]


def test_samples_ship_as_package_data() -> None:
    samples = importlib.resources.files("procedure_rag").joinpath("samples")
    assert samples.joinpath("SOURCES.md").is_file()
    assert samples.joinpath("hololens", "en", "hololens-recovery.md").is_file()
    assert samples.joinpath("hololens", "ja", "hololens-recovery.md").is_file()

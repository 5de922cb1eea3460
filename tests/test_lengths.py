"""Token budgets offline: encodings built from their files, the environment left alone."""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import os
import pickle
import subprocess
import sys
import textwrap

import pytest
import tiktoken

from procedure_rag._chunking import lengths
from procedure_rag._chunking.lengths import TiktokenCount, llama_index_tiktoken_cache, tiktoken_encoding

SAMPLES = [
    "Press **OK**, then select Settings > Update & Security.",
    "設定画面を開き、[パスワード変更] を選択します。",
    "  indented\n\n\ttabs and 1234567 numbers — dashes… “quotes”",
    "a <|endoftext|> b <|fim_prefix|>",
]


def test_bundled_cl100k_file_is_the_one_tiktoken_checks() -> None:
    bundled = (
        importlib.resources.files("procedure_rag") / "_chunking" / "encodings" / "cl100k_base.tiktoken.gz"
    )
    digest = hashlib.sha256(gzip.decompress(bundled.read_bytes())).hexdigest()
    # tiktoken_ext.openai_public.cl100k_base's expected_hash
    assert digest == "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_encoding_from_the_file_is_tiktokens_own(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ours = tiktoken_encoding(name)
    # tiktoken's own, through its cache (llama-index-core's folder holds both files).
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(llama_index_tiktoken_cache()))
    theirs = tiktoken.get_encoding(name)
    assert ours is not theirs
    assert ours._pat_str == theirs._pat_str
    assert ours._special_tokens == theirs._special_tokens
    assert ours.n_vocab == theirs.n_vocab
    for text in SAMPLES:
        assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_tiktoken_count_is_langchains_count_and_pickles() -> None:
    count = TiktokenCount("cl100k_base", {"<|endoftext|>"}, ())
    encoding = tiktoken_encoding("cl100k_base")
    assert count(SAMPLES[3]) == len(
        encoding.encode(SAMPLES[3], allowed_special={"<|endoftext|>"}, disallowed_special=())
    )
    copy = pickle.loads(pickle.dumps(count))  # noqa: S301 - our own object
    assert [copy(t) for t in SAMPLES] == [count(t) for t in SAMPLES]
    strict = TiktokenCount("cl100k_base", set(), "all")
    with pytest.raises(ValueError, match="disallowed special token"):
        strict(SAMPLES[3])


def test_damaged_bundled_file_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lengths, "_ranks_file", lambda name, spec: b"AAAA 0\n")
    lengths._encoding.cache_clear()
    try:
        with pytest.raises(
            ValueError, match=r"^the bundled file of tiktoken encoding 'cl100k_base' is damaged"
        ):
            lengths._encoding("cl100k_base")
    finally:
        lengths._encoding.cache_clear()


_NO_GLOBAL_STATE = textwrap.dedent(
    """
    import os, sys
    before = dict(os.environ)
    from langchain_procedures import ProcedureTextSplitter
    from procedure_rag import ProcedureChunker
    splitter = ProcedureTextSplitter.from_tiktoken_encoder(chunk_size=50)
    assert splitter.split_text("# Restart\\n\\n1. Hold Power.\\n2. Release it.\\n")
    assert ProcedureChunker().chunk("# Restart\\n\\n1. Hold Power.\\n", source_id="a.md")
    assert ProcedureTextSplitter.from_tiktoken_encoder(encoding_name="o200k_base").split_text("1. Go.\\n")
    assert dict(os.environ) == before, set(os.environ) ^ set(before)
    import tiktoken.registry
    assert not tiktoken.registry.ENCODINGS, "tiktoken's registry was asked"
    print("environment untouched")
    """
)


def test_token_budgets_leave_the_environment_alone() -> None:
    # In a fresh process: TIKTOKEN_CACHE_DIR unset, as for a user who never set it.
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    result = subprocess.run(  # noqa: S603 - our own interpreter and a fixed script
        [sys.executable, "-c", _NO_GLOBAL_STATE],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "environment untouched"

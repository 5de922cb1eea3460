"""Length functions: tiktoken encodings loaded offline, and :class:`Measure`, the packer's view of one.

tiktoken downloads its encoding files on first use. llama-index-core ships the
``cl100k_base`` and ``o200k_base`` files in its package data, so we point
``TIKTOKEN_CACHE_DIR`` there (unless the user already set it) and never touch
the network.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "OFFLINE_ENCODINGS",
    "Measure",
    "OrdinaryFirst",
    "TiktokenLength",
    "char_length",
    "ensure_offline_tiktoken_cache",
    "ordinary_first",
    "tiktoken_encoding",
    "tiktoken_length",
]

#: Encodings whose files ship with llama-index-core.
OFFLINE_ENCODINGS = ("cl100k_base", "o200k_base")


def _bundled_cache_dir() -> Path | None:
    """llama-index-core's tiktoken cache folder, found without importing llama_index.

    Importing llama_index here would break the core's promise to import no framework,
    so the folder is located through the distribution's file list.
    """
    try:
        dist = importlib.metadata.distribution("llama-index-core")
    except importlib.metadata.PackageNotFoundError:
        return None
    cache_dir = Path(str(dist.locate_file("llama_index/core/_static/tiktoken_cache")))
    return cache_dir if cache_dir.is_dir() else None


def ensure_offline_tiktoken_cache() -> str | None:
    """Point ``TIKTOKEN_CACHE_DIR`` at llama-index-core's bundled cache if unset.

    Returns:
        The cache directory in effect, or ``None`` when none could be found.
    """
    current = os.environ.get("TIKTOKEN_CACHE_DIR")
    if current:
        return current
    cache_dir = _bundled_cache_dir()
    if cache_dir is None:
        return None
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return str(cache_dir)


@cache
def _encoding(name: str) -> tiktoken.Encoding:
    current = ensure_offline_tiktoken_cache()
    bundled = _bundled_cache_dir()
    # Only the bundled encodings are known to load offline; another one is allowed
    # when the user points TIKTOKEN_CACHE_DIR at a cache of their own.
    if name not in OFFLINE_ENCODINGS and (current is None or (bundled and Path(current) == bundled)):
        msg = f"encoding {name!r} is not available offline; use one of {', '.join(OFFLINE_ENCODINGS)}"
        raise ValueError(msg)
    try:
        import tiktoken  # noqa: PLC0415 - heavy, imported on first use
    except ImportError as exc:  # pragma: no cover - tiktoken is a dependency
        msg = "tiktoken is required for token budgets: pip install tiktoken"
        raise ImportError(msg) from exc
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:
        msg = f"could not load tiktoken encoding {name!r} offline: {exc}"
        raise ValueError(msg) from exc


@cache
def _max_token_bytes(name: str) -> int:
    """The longest token of encoding ``name``, in bytes (special tokens included: a bound)."""
    encoding = _encoding(name)
    longest = 1
    for token in range(encoding.n_vocab):
        try:
            longest = max(longest, len(encoding.decode_single_token_bytes(token)))
        except KeyError:  # ids between the ordinary and the special tokens
            continue
    return longest


class TiktokenLength:
    """Counts tokens of a tiktoken encoding loaded offline; picklable by encoding name.

    Attributes:
        encoding_name: The tiktoken encoding.
        max_token_bytes: The longest token in UTF-8 bytes, so that a text of ``n``
            characters has at least ``n / max_token_bytes`` tokens: a text far over a
            budget is known to be over it without counting.
    """

    def __init__(self, encoding_name: str = "cl100k_base") -> None:
        self.encoding_name = encoding_name
        self._encode = _encoding(encoding_name).encode_ordinary
        self.max_token_bytes = _max_token_bytes(encoding_name)

    def __call__(self, text: str) -> int:
        return len(self._encode(text))

    def __reduce__(self) -> tuple[type[TiktokenLength], tuple[str]]:
        return (TiktokenLength, (self.encoding_name,))

    def __repr__(self) -> str:
        return f"TiktokenLength({self.encoding_name!r})"


def tiktoken_length(encoding_name: str = "cl100k_base") -> Callable[[str], int]:
    """Return a (picklable) function counting tokens of ``encoding_name``, loaded offline.

    Special-token text such as ``<|endoftext|>`` is counted as ordinary text.

    Raises:
        ValueError: When the encoding cannot be loaded without a download.
    """
    return TiktokenLength(encoding_name)


def tiktoken_encoding(encoding_name: str = "cl100k_base") -> tiktoken.Encoding:
    """Return the tiktoken encoding ``encoding_name``, loaded offline (once per process).

    Raises:
        ValueError: When the encoding cannot be loaded without a download.
    """
    return _encoding(encoding_name)


class OrdinaryFirst:
    """A token count through ``encode_ordinary`` wherever no special token can be in the text.

    Every special token of the encodings this applies to starts with ``<|``: a text
    without it encodes to the same tokens whatever ``allowed_special`` and
    ``disallowed_special`` say, and tiktoken's search of the text for special tokens is
    skipped. Other texts go to ``fallback``, which counts or refuses them as it would.
    """

    def __init__(self, encode_ordinary: Callable[[str], list[int]], fallback: Callable[[str], int]) -> None:
        self._encode_ordinary = encode_ordinary
        self._fallback = fallback

    def __call__(self, text: str) -> int:
        if "<|" in text:
            return self._fallback(text)
        return len(self._encode_ordinary(text))


def ordinary_first(encoding: tiktoken.Encoding, fallback: Callable[[str], int]) -> Callable[[str], int]:
    """``fallback`` (a token count of ``encoding``) with the :class:`OrdinaryFirst` shortcut.

    ``fallback`` itself when some special token of ``encoding`` does not start with ``<|``.
    """
    if not all(token.startswith("<|") for token in encoding.special_tokens_set):
        return fallback
    return OrdinaryFirst(encoding.encode_ordinary, fallback)


def char_length(text: str) -> int:
    """Count characters (the default length of LangChain's splitters)."""
    return len(text)


class Measure:
    """The length function, plus the size of a line break and of labels, measured once."""

    def __init__(self, length: Callable[[str], int]) -> None:
        self.length = length
        self.newline = max(length("\n"), 0)
        self._labels: dict[str, int] = {}
        # Tokens are at most this many bytes (and a character is at least one byte), so a
        # text of n characters has at least n / chars_per_unit tokens. Known only for our
        # own token counter; 0 means unknown.
        bound = getattr(length, "max_token_bytes", None)
        self.chars_per_unit: int = bound if isinstance(bound, int) and bound > 0 else 0

    def line(self, text: str) -> int:
        """Size of ``text`` as one line of a chunk."""
        return self.length(text) + self.newline

    def surely_over(self, text: str, limit: int, *, line: bool = False) -> bool:
        """Whether ``text`` (as a line when ``line``) is over ``limit`` by its length in characters alone.

        ``False`` means "not known": the text must be measured. Saves counting the
        tokens of a huge paragraph only to learn that it must be cut.
        """
        if not self.chars_per_unit:
            return False
        return len(text) > self.chars_per_unit * (limit - (self.newline if line else 0))

    def label(self, text: str) -> int:
        """Size of a short label line, measured once per label."""
        cost = self._labels.get(text)
        if cost is None:
            cost = self._labels[text] = self.line(text)
        return cost

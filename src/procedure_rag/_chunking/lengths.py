"""Length functions: tiktoken encodings loaded offline, and :class:`Measure`, the packer's view of one.

tiktoken downloads its encoding files on first use. This package ships the
``cl100k_base`` file (the default budget's) and llama-index-core ships it and
``o200k_base``: an encoding is built from such a file directly
(``tiktoken.Encoding`` from its ranks, pattern and special tokens), so neither the
network nor the process environment (``TIKTOKEN_CACHE_DIR``) is touched. Another
encoding loads through tiktoken's own cache when the user points
``TIKTOKEN_CACHE_DIR`` at one.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.metadata
import importlib.resources
import os
from collections.abc import Callable, Collection
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "OFFLINE_ENCODINGS",
    "Measure",
    "OrdinaryFirst",
    "TiktokenCount",
    "TiktokenLength",
    "char_length",
    "llama_index_tiktoken_cache",
    "ordinary_first",
    "tiktoken_encoding",
    "tiktoken_length",
]


@dataclass(frozen=True)
class _EncodingFile:
    """What tiktoken's ``tiktoken_ext.openai_public`` builds an encoding from, but its download.

    The pattern and special tokens are tiktoken's (``tests/test_lengths.py`` checks them
    against tiktoken's own encoding); ``sha256`` is the hash tiktoken checks the file by,
    and ``cache_key`` the name of the file in a tiktoken cache (SHA-1 of its URL).
    """

    pat_str: str
    special_tokens: dict[str, int]
    sha256: str
    cache_key: str


_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"

_FILES = {
    "cl100k_base": _EncodingFile(
        pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501 - tiktoken's pattern
        special_tokens={
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            _ENDOFPROMPT: 100276,
        },
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        cache_key="9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
    ),
    "o200k_base": _EncodingFile(
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        cache_key="fb374d419588a4632f3f557e76b4b70aebbca790",
    ),
}

#: Encodings that load offline: ``cl100k_base`` always (it ships here), ``o200k_base``
#: where llama-index-core is installed.
OFFLINE_ENCODINGS = tuple(_FILES)


def llama_index_tiktoken_cache() -> Path | None:
    """llama-index-core's tiktoken cache folder, found without importing llama_index.

    Importing llama_index here would break the core's promise to import no framework,
    so the folder is located through the distribution's file list. ``None`` when
    llama-index-core is not installed.
    """
    try:
        dist = importlib.metadata.distribution("llama-index-core")
    except importlib.metadata.PackageNotFoundError:
        return None
    cache_dir = Path(str(dist.locate_file("llama_index/core/_static/tiktoken_cache")))
    return cache_dir if cache_dir.is_dir() else None


def _ranks_file(name: str, spec: _EncodingFile) -> bytes | None:
    """The ranks file of encoding ``name``: this package's copy, else llama-index-core's."""
    bundled = importlib.resources.files("procedure_rag") / "_chunking" / "encodings" / f"{name}.tiktoken.gz"
    if bundled.is_file():
        return gzip.decompress(bundled.read_bytes())
    cache_dir = llama_index_tiktoken_cache()
    path = cache_dir / spec.cache_key if cache_dir is not None else None
    return path.read_bytes() if path is not None and path.is_file() else None


@cache
def _encoding(name: str) -> tiktoken.Encoding:
    try:
        import tiktoken  # noqa: PLC0415 - heavy, imported on first use
    except ImportError as exc:  # pragma: no cover - tiktoken is a dependency of the core
        msg = "tiktoken is required for token budgets: pip install tiktoken"
        raise ImportError(msg) from exc
    spec = _FILES.get(name)
    data = _ranks_file(name, spec) if spec is not None else None
    if spec is not None and data is not None:
        if hashlib.sha256(data).hexdigest() != spec.sha256:
            msg = f"the bundled file of tiktoken encoding {name!r} is damaged (its hash differs)"
            raise ValueError(msg)
        ranks = {
            base64.b64decode(token): int(rank)
            for token, rank in (line.split() for line in data.splitlines() if line)
        }
        return tiktoken.Encoding(
            name, pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=dict(spec.special_tokens)
        )
    # Not shipped: only the user's own tiktoken cache can hold it without a download.
    if not os.environ.get("TIKTOKEN_CACHE_DIR"):
        where = "with llama-index-core installed" if name in _FILES else "without a download"
        usable = "cl100k_base" + (", o200k_base" if llama_index_tiktoken_cache() else "")
        msg = (
            f"encoding {name!r} is not available offline ({where}); use one of {usable}, "
            "or set TIKTOKEN_CACHE_DIR to a tiktoken cache holding it"
        )
        raise ValueError(msg)
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


class TiktokenCount:
    """Counts tokens as ``encoding.encode(text, allowed_special=…, disallowed_special=…)`` does.

    LangChain's ``from_tiktoken_encoder`` length, over an encoding loaded offline;
    picklable by encoding name.
    """

    def __init__(
        self,
        encoding_name: str,
        allowed_special: Literal["all"] | AbstractSet[str],
        disallowed_special: Literal["all"] | Collection[str],
    ) -> None:
        self.encoding_name = encoding_name
        self.allowed_special = allowed_special
        self.disallowed_special = disallowed_special
        self._encode = _encoding(encoding_name).encode

    def __call__(self, text: str) -> int:
        return len(
            self._encode(
                text, allowed_special=self.allowed_special, disallowed_special=self.disallowed_special
            )
        )

    def __reduce__(self) -> tuple[type[TiktokenCount], tuple[object, ...]]:
        return (TiktokenCount, (self.encoding_name, self.allowed_special, self.disallowed_special))


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


#: How many line sizes :class:`Measure` remembers before it starts again: a few sections' lines.
_LINE_MEMO = 1024


class Measure:
    """The length function, plus the size of a line break, measured once.

    The sizes of the last lines measured are remembered (``length`` must give the same
    size for the same text, as a token count does): a section whose size decides
    whether it joins the one before it is measured line by line, then packed, which
    measures the same lines again.
    """

    def __init__(self, length: Callable[[str], int]) -> None:
        self.length = length
        self.newline = max(length("\n"), 0)
        self._lines: dict[str, int] = {}
        # Tokens are at most this many bytes (and a character is at least one byte), so a
        # text of n characters has at least n / chars_per_unit tokens. Known only for our
        # own token counter; 0 means unknown.
        bound = getattr(length, "max_token_bytes", None)
        self.chars_per_unit: int = bound if isinstance(bound, int) and bound > 0 else 0

    def line(self, text: str) -> int:
        """Size of ``text`` as one line of a chunk."""
        lines = self._lines
        cost = lines.get(text)
        if cost is None:
            if len(lines) >= _LINE_MEMO:
                lines.clear()
            cost = lines[text] = self.length(text) + self.newline
        return cost

    def surely_over(self, text: str, limit: int, *, line: bool = False) -> bool:
        """Whether ``text`` (as a line when ``line``) is over ``limit`` by its length in characters alone.

        ``False`` means "not known": the text must be measured. Saves counting the
        tokens of a huge paragraph only to learn that it must be cut.
        """
        if not self.chars_per_unit:
            return False
        return len(text) > self.chars_per_unit * (limit - (self.newline if line else 0))

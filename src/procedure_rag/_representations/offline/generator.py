"""Offline representations: every kind, from the chunk alone, with no model.

:class:`DeterministicGenerator` turns one chunk into its representations;
:func:`iter_representations` and :func:`generate_representations` do it for many.
The same chunk always gives the same representations, with the same ids.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from types import MappingProxyType

from procedure_rag._representations.offline.code import code_docstring, has_code
from procedure_rag._representations.offline.images import has_images, image_caption
from procedure_rag._representations.offline.keywords import keyword_words, keywords
from procedure_rag._representations.offline.questions import questions
from procedure_rag._representations.offline.sentences import sentence_texts, sentences_cover
from procedure_rag._representations.offline.steps import step_texts
from procedure_rag._representations.offline.summary import body_text, summary
from procedure_rag._representations.offline.tables import parse_pipe_table, table_summary
from procedure_rag._representations.types import (
    DEFAULT_KINDS,
    OFFLINE_KINDS,
    SENTENCE_LANGUAGES,
    Representation,
    RepresentationKind,
    kinds_for,
)
from procedure_rag._types import Chunk, ChunkType

__all__ = ["DeterministicGenerator", "generate_representations", "iter_representations"]

_K = RepresentationKind
Metadata = dict[str, str | int | float | bool]


def _texts(kind: RepresentationKind) -> Callable[[Chunk], list[tuple[str, Metadata]]]:
    """The generator of ``kind`` as chunk -> [(text, metadata)], empty texts dropped."""

    def one(make: Callable[[Chunk], str]) -> Callable[[Chunk], list[tuple[str, Metadata]]]:
        return lambda chunk: [(t, {}) for t in [make(chunk)] if t.strip()]

    def table(chunk: Chunk) -> list[tuple[str, Metadata]]:
        text, meta = table_summary(chunk)
        return [(text, meta)] if text else []

    table_of: dict[RepresentationKind, Callable[[Chunk], list[tuple[str, Metadata]]]] = {
        _K.RAW: one(lambda c: c.text),
        _K.QUESTION: lambda chunk: [(q, {}) for q in questions(chunk)],
        _K.SUMMARY: one(summary),
        _K.KEYWORDS: one(lambda c: keyword_words(c.language).joiner.join(keywords(c))),
        _K.TABLE_SUMMARY: table,
        _K.CODE_DOCSTRING: one(code_docstring),
        _K.IMAGE_CAPTION: one(image_caption),
        _K.STEP: lambda chunk: [(text, {}) for text in step_texts(chunk)],
        _K.SENTENCE: lambda chunk: [(text, {}) for text in sentence_texts(chunk)],
    }
    return table_of[kind]


_GENERATORS: Mapping[RepresentationKind, Callable[[Chunk], list[tuple[str, Metadata]]]] = MappingProxyType(
    {kind: _texts(kind) for kind in RepresentationKind}
)

# Kinds a chunk gets for what it holds, beside those of its type: a procedure with a
# screenshot gets a caption, one with a command gets a docstring. Only with a model's
# table (DEFAULT_KINDS): offline, the deterministic summaries, docstrings and captions of
# what a chunk holds, beside its raw text, changed no figure of any dev set, text or file
# (README, *Table summaries and docstrings*), for 9-17% of the vectors on the procedure dev sets.
_CONTENT_KINDS: tuple[tuple[RepresentationKind, Callable[[Chunk], bool]], ...] = (
    (_K.TABLE_SUMMARY, lambda c: parse_pipe_table(body_text(c)) is not None),
    (_K.CODE_DOCSTRING, has_code),
    (_K.IMAGE_CAPTION, has_images),
)


def default_kinds(
    chunk: Chunk,
    kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
    *,
    defaults: Mapping[ChunkType, tuple[RepresentationKind, ...]] = DEFAULT_KINDS,
    content_kinds: bool | None = None,
    sentence_languages: Collection[str] | None = SENTENCE_LANGUAGES,
) -> tuple[RepresentationKind, ...]:
    """The kinds ``chunk`` gets: its type's kinds, plus those its content calls for.

    The type's kinds are ``kinds``' for the types it names, else ``defaults``'
    (:data:`DEFAULT_KINDS`, a model's; the deterministic generator passes
    :data:`OFFLINE_KINDS`). ``sentence`` applies to a chunk whose language is one of
    ``sentence_languages`` (:data:`SENTENCE_LANGUAGES`, English; ``None`` for every
    language): a chunk in another language gets ``raw`` in its place. Kinds that hold
    ``sentence`` but not ``raw`` make the sentences stand in for the raw text: a chunk
    they do not cover
    (:func:`~procedure_rag._representations.offline.sentences.sentences_cover`) gets
    ``raw`` first. Content kinds (a table summary, a code docstring, an image
    caption for a chunk holding a table, code or pictures) are added when
    ``content_kinds`` is true, and only when ``kinds`` does not set the chunk's type
    explicitly. ``None`` (the default) means true with a model's table (``defaults``
    equal to :data:`DEFAULT_KINDS`, as a model and ``defaults=DEFAULT_KINDS`` have it)
    and false otherwise: offline a procedure holding a table, a command or a
    screenshot is searched by its own kinds. A table of one's own made from
    :data:`DEFAULT_KINDS` says ``content_kinds=True`` to keep them.
    """
    base = kinds_for(chunk.chunk_type, kinds, defaults=defaults)
    if _K.SENTENCE in base and sentence_languages is not None and chunk.language not in sentence_languages:
        base = tuple(dict.fromkeys(_K.RAW if kind is _K.SENTENCE else kind for kind in base))
    if _K.SENTENCE in base and _K.RAW not in base and not sentences_cover(chunk):
        # Sentences stand in for the raw text only where they hold all of it.
        base = (_K.RAW, *base)
    if kinds is not None and chunk.chunk_type in kinds:
        return base
    if content_kinds is None:
        content_kinds = defaults == DEFAULT_KINDS
    if not content_kinds:
        return base
    return base + tuple(kind for kind, holds in _CONTENT_KINDS if kind not in base and holds(chunk))


class DeterministicGenerator:
    """Makes every representation kind from the chunk alone, offline.

    By default a chunk gets the kinds :data:`OFFLINE_KINDS` gives its type (a procedure
    its raw text and keywords, an English text chunk its sentences), plus those its content
    calls for; every kind can be asked for by name.

    Args:
        kinds: Kinds per chunk type, overriding ``defaults`` for the types it names.
        defaults: The kinds per type before ``kinds``: :data:`OFFLINE_KINDS`, or
            :data:`DEFAULT_KINDS` for every kind a model would write (questions and
            summaries too).
        content_kinds: Whether a chunk holding a table, code or pictures also gets
            their kind (table summary, code docstring, image caption); ``None`` (the
            default): only with ``defaults`` equal to :data:`DEFAULT_KINDS` (see
            :func:`default_kinds`).
        sentence_languages: The chunk languages whose text the ``sentence`` kind of a
            table searches by its sentences (:data:`SENTENCE_LANGUAGES`: ``{"en"}``);
            ``None`` for every language. A chunk in another language gets its raw text
            instead. A kind asked for by name in :meth:`generate` is made whatever the
            language.

    Raises:
        TypeError: When ``content_kinds`` is not a bool or ``None``, or
            ``sentence_languages`` is a string rather than a collection of them.
    """

    identity = "deterministic"

    def __init__(
        self,
        *,
        kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
        defaults: Mapping[ChunkType, tuple[RepresentationKind, ...]] = OFFLINE_KINDS,
        content_kinds: bool | None = None,
        sentence_languages: Collection[str] | None = SENTENCE_LANGUAGES,
    ) -> None:
        if content_kinds is not None and not isinstance(content_kinds, bool):
            msg = f"content_kinds must be a bool or None, got {type(content_kinds).__name__}"
            raise TypeError(msg)
        if isinstance(sentence_languages, str):
            msg = (
                f"sentence_languages must be a collection of language codes or None, "
                f"got the string {sentence_languages!r} (write {{{sentence_languages!r}}})"
            )
            raise TypeError(msg)
        self._kinds = dict(kinds) if kinds is not None else None
        self._defaults = defaults
        self._content_kinds = content_kinds
        self._sentence_languages = None if sentence_languages is None else frozenset(sentence_languages)

    def kinds(self, chunk: Chunk) -> tuple[RepresentationKind, ...]:
        """The kinds :meth:`generate` makes for ``chunk`` when none are asked for."""
        return default_kinds(
            chunk,
            self._kinds,
            defaults=self._defaults,
            content_kinds=self._content_kinds,
            sentence_languages=self._sentence_languages,
        )

    def generate(
        self, chunk: Chunk, kinds: Iterable[RepresentationKind] | None = None
    ) -> list[Representation]:
        """Return the representations of ``chunk``.

        Args:
            chunk: Any chunk, child or parent.
            kinds: The kinds to make, in order; ``None`` for the chunk's defaults
                (:meth:`kinds`). A kind that does not apply (a table summary of a chunk
                without a table) gives nothing.

        Returns:
            The representations, kind by kind; ``index`` counts within one kind.

        Raises:
            ImportError: For Japanese chunks when SudachiPy is not installed.
        """
        wanted = (
            self.kinds(chunk) if kinds is None else tuple(dict.fromkeys(RepresentationKind(k) for k in kinds))
        )
        out: list[Representation] = []
        for kind in wanted:
            for index, (text, meta) in enumerate(_GENERATORS[kind](chunk)):
                out.append(
                    Representation(
                        chunk_id=chunk.chunk_id,
                        kind=kind,
                        text=text,
                        index=index,
                        generator=self.identity,
                        metadata=meta,
                    )
                )
        return out


def iter_representations(
    chunks: Iterable[Chunk],
    *,
    kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
    defaults: Mapping[ChunkType, tuple[RepresentationKind, ...]] = OFFLINE_KINDS,
    content_kinds: bool | None = None,
    sentence_languages: Collection[str] | None = SENTENCE_LANGUAGES,
) -> Iterator[Representation]:
    """Yield the deterministic representations of each chunk, chunk by chunk.

    Args:
        chunks: Chunks, children and parents alike.
        kinds: Kinds per chunk type, overriding ``defaults`` for the types it names.
        defaults: :data:`OFFLINE_KINDS`, or :data:`DEFAULT_KINDS` for every kind a model
            would write.
        content_kinds: Whether chunks holding a table, code or pictures also get their
            kind (see :func:`default_kinds`).
        sentence_languages: The languages whose text chunks are searched by their
            sentences (:data:`SENTENCE_LANGUAGES`; ``None`` for every language).
    """
    generator = DeterministicGenerator(
        kinds=kinds, defaults=defaults, content_kinds=content_kinds, sentence_languages=sentence_languages
    )
    for chunk in chunks:
        yield from generator.generate(chunk)


def generate_representations(
    chunks: Iterable[Chunk],
    *,
    kinds: Mapping[ChunkType, tuple[RepresentationKind, ...]] | None = None,
    defaults: Mapping[ChunkType, tuple[RepresentationKind, ...]] = OFFLINE_KINDS,
    content_kinds: bool | None = None,
    sentence_languages: Collection[str] | None = SENTENCE_LANGUAGES,
) -> list[Representation]:
    """Return :func:`iter_representations` as a list."""
    return list(
        iter_representations(
            chunks,
            kinds=kinds,
            defaults=defaults,
            content_kinds=content_kinds,
            sentence_languages=sentence_languages,
        )
    )

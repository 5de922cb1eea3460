"""Chunker options, validated once when they are built."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields

from procedure_rag._language.lexicons import LEXICONS, Lexicon
from procedure_rag._language.numbering import (
    DEFAULT_HEADING_STYLES,
    DEFAULT_STEP_STYLES,
    HeadingStyle,
    StepStyle,
)
from procedure_rag._readers.options import (
    DEFAULT_MAX_INPUT_CHARS,
    DEFAULT_MAX_JSON_DEPTH,
    DEFAULT_MAX_UNCOMPRESSED_BYTES,
    ReaderOptions,
)
from procedure_rag._readers.registry import TEXT_FORMATS
from procedure_rag._types import ElementKind

__all__ = ["DEFAULT_DROP_KINDS", "DEFAULT_MAX_INPUT_CHARS", "DEFAULT_MAX_JSON_DEPTH", "ChunkerOptions"]

#: Element kinds left out of chunks unless the user asks for them: running page
#: furniture, and front matter, whose title is kept as ``document_title`` metadata.
DEFAULT_DROP_KINDS: frozenset[ElementKind] = frozenset(
    {ElementKind.PAGE_HEADER, ElementKind.PAGE_FOOTER, ElementKind.FRONT_MATTER}
)

_LANGUAGES = ("auto", "ja", "en")
_FORMATS = ("auto", *TEXT_FORMATS)


@dataclass(frozen=True, slots=True)
class ChunkerOptions:
    """Everything that changes how documents are chunked.

    Attributes:
        chunk_size: Size budget of a child chunk, in units of ``length_function``.
        length_function: Measures a piece of text. ``None`` means tokens of the
            ``cl100k_base`` encoding, loaded offline.
        language: ``"ja"``, ``"en"`` or ``"auto"`` (detected per document).
        source_format: How :meth:`ProcedureChunker.iter_chunks` reads text:
            ``"markdown"``, ``"text"`` (plain or PDF-extracted text), ``"html"``,
            ``"rst"`` (reStructuredText) or ``"auto"`` (told from the text itself).
        emit_parents: Whether parent chunks are produced besides the children.
        parent_chunk_size: Budget of a parent chunk; ``None`` means four child budgets.
        max_children_per_parent: Most children one parent groups.
        drop_kinds: Element kinds left out of chunks.
        step_styles: Step numbering styles recognised in text.
        heading_styles: Heading numbering styles recognised in plain text.
        lexicons: Lexicon per language code; must hold ``"ja"`` and ``"en"``.
        max_input_chars: Most characters one document may have (after decoding, or the
            JSON text of a parser's output); a longer one is refused with a
            ``ValueError`` naming its size and this option. ``None`` means no limit.
        max_json_depth: Deepest nesting of a parser's JSON output (objects and arrays);
            deeper JSON is refused with a :class:`~procedure_rag.ReaderError`. ``None``
            means no limit beyond what Python's JSON parser reads.
        max_uncompressed_bytes: Most bytes an Office file (.xlsx, a zip) may unpack
            to; a larger one (a zip bomb) is refused with a
            :class:`~procedure_rag.ReaderError` naming its size and this option.
            ``None`` means no limit.
        include_hidden_sheets: Whether the Excel reader reads hidden sheets too
            (by default it skips them).
        include_hidden_slides: Whether the PowerPoint reader reads hidden slides too
            (by default it skips them).
        include_speaker_notes: Whether the PowerPoint reader reads the slides' speaker
            notes (by default it does, after the content of their section).
        combine_small_sections: Whether consecutive sections of one parent that fit one
            chunk together are chunked as one (a procedure written as short headed
            sections; see :mod:`procedure_rag._chunking.combining`). ``None`` (the
            default) combines only where the next section's heading was inferred from
            the print: a PDF without tags or outline (headings by font size, weight or
            an underline rule) or page texts a loader extracted (headings by the shape
            of a line). Such a heading may be a step set large or a label above a
            screenshot; headings a Markdown, HTML or Word author or a PDF's tags and
            outline declare keep their sections apart. ``True`` combines everywhere
            (measured on the development sets: lowers Japanese-native Markdown
            answered@5 .85 -> .82 and HoloLens English answered@1 .76 -> .72),
            ``False`` nowhere.
    """

    chunk_size: int = 400
    length_function: Callable[[str], int] | None = None
    language: str = "auto"
    source_format: str = "auto"
    emit_parents: bool = True
    parent_chunk_size: int | None = None
    max_children_per_parent: int = 8
    drop_kinds: frozenset[ElementKind] = DEFAULT_DROP_KINDS
    step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES
    heading_styles: tuple[HeadingStyle, ...] = DEFAULT_HEADING_STYLES
    lexicons: Mapping[str, Lexicon] = field(default_factory=lambda: dict(LEXICONS))
    max_input_chars: int | None = DEFAULT_MAX_INPUT_CHARS
    max_json_depth: int | None = DEFAULT_MAX_JSON_DEPTH
    max_uncompressed_bytes: int | None = DEFAULT_MAX_UNCOMPRESSED_BYTES
    include_hidden_sheets: bool = False
    include_hidden_slides: bool = False
    include_speaker_notes: bool = True
    combine_small_sections: bool | None = None

    def __post_init__(self) -> None:
        if isinstance(self.chunk_size, bool) or not isinstance(self.chunk_size, int):
            msg = f"chunk_size must be an int, got {type(self.chunk_size).__name__}"
            raise TypeError(msg)
        if self.chunk_size <= 0:
            msg = f"chunk_size must be > 0, got {self.chunk_size}"
            raise ValueError(msg)
        if self.parent_chunk_size is not None and self.parent_chunk_size < self.chunk_size:
            msg = f"parent_chunk_size must be >= chunk_size ({self.chunk_size}), got {self.parent_chunk_size}"
            raise ValueError(msg)
        if self.max_children_per_parent < 1:
            msg = f"max_children_per_parent must be >= 1, got {self.max_children_per_parent}"
            raise ValueError(msg)
        if self.language not in _LANGUAGES:
            msg = f"language must be one of {', '.join(_LANGUAGES)}, got {self.language!r}"
            raise ValueError(msg)
        if self.source_format not in _FORMATS:
            msg = f"source_format must be one of {', '.join(_FORMATS)}, got {self.source_format!r}"
            raise ValueError(msg)
        missing = [code for code in ("ja", "en") if code not in self.lexicons]
        if missing:
            msg = f"lexicons must hold 'ja' and 'en', missing {', '.join(missing)}"
            raise ValueError(msg)
        unknown = [k for k in self.drop_kinds if not isinstance(k, ElementKind)]
        if unknown:
            msg = f"drop_kinds must be ElementKind values, got {unknown!r}"
            raise ValueError(msg)
        if not self.step_styles:
            msg = "step_styles must not be empty"
            raise ValueError(msg)
        _check_limit("max_input_chars", self.max_input_chars)
        _check_limit("max_json_depth", self.max_json_depth)
        _check_limit("max_uncompressed_bytes", self.max_uncompressed_bytes)
        for name in ("include_hidden_sheets", "include_hidden_slides", "include_speaker_notes"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                msg = f"{name} must be a bool, got {type(value).__name__}"
                raise TypeError(msg)
        combine = self.combine_small_sections
        if combine is not None and not isinstance(combine, bool):
            msg = f"combine_small_sections must be a bool or None, got {type(combine).__name__}"
            raise TypeError(msg)

    @property
    def reader_options(self) -> ReaderOptions:
        """What the readers take of these options (styles, lexicons, limits): each field of the same name.

        The reader options no chunker option names (the running lines of a framework
        adapter's input) keep their defaults.
        """
        named = (f.name for f in fields(ReaderOptions) if hasattr(self, f.name))
        return ReaderOptions(**{name: getattr(self, name) for name in named})

    @property
    def effective_parent_chunk_size(self) -> int:
        """The parent budget actually used."""
        return self.parent_chunk_size or 4 * self.chunk_size


def _check_limit(name: str, value: object) -> None:
    """A limit is a positive int or ``None``."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{name} must be an int or None, got {type(value).__name__}"
        raise TypeError(msg)
    if value <= 0:
        msg = f"{name} must be > 0 (or None for no limit), got {value}"
        raise ValueError(msg)

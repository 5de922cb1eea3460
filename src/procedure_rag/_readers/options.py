"""What every reader is given: the part of :class:`~procedure_rag.ChunkerOptions` readers use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from procedure_rag._language.lexicons import LEXICONS, Lexicon
from procedure_rag._language.numbering import (
    DEFAULT_HEADING_STYLES,
    DEFAULT_STEP_STYLES,
    HeadingStyle,
    StepStyle,
)
from procedure_rag._readers.ooxml import DEFAULT_MAX_UNCOMPRESSED_BYTES

__all__ = [
    "DEFAULT_MAX_INPUT_CHARS",
    "DEFAULT_MAX_JSON_DEPTH",
    "DEFAULT_MAX_UNCOMPRESSED_BYTES",
    "DEFAULT_READER_OPTIONS",
    "ReaderOptions",
]

#: Default most characters one document may have: 100 million (a few hundred MB of
#: UTF-8), far past any manual, short of what would exhaust a worker's memory.
DEFAULT_MAX_INPUT_CHARS = 100_000_000
#: Default deepest nesting of a parser's JSON output. Real layouts nest a few dozen
#: levels; Python's own JSON parser gives up near a thousand.
DEFAULT_MAX_JSON_DEPTH = 256


@dataclass(frozen=True, slots=True)
class ReaderOptions:
    """The options every reader takes, the same for every format.

    Built from validated :class:`~procedure_rag.ChunkerOptions`
    (:attr:`~procedure_rag.ChunkerOptions.reader_options`); the defaults are the
    chunker's. Attributes mean what the chunker's attributes of the same name mean:

    Attributes:
        step_styles: Step numbering styles a reader recognises in text (paragraphs
            that open with a marker, and markers a parser left in an item's text).
        heading_styles: Heading numbering styles (plain-text headings, and heading
            levels a layout parser does not give).
        lexicons: Lexicon per language code (the Unstructured reader's list lead-ins).
        max_input_chars: Most characters a source may have; enforced by
            :func:`procedure_rag._readers.registry.read_source` for every format.
        max_json_depth: Deepest nesting of a layout parser's JSON; enforced there too.
        max_uncompressed_bytes: Most bytes an Office file (a zip) may unpack to;
            enforced by the Office readers before they read a part.
        include_hidden_sheets: Whether the Excel reader reads hidden sheets too.
        include_hidden_slides: Whether the PowerPoint reader reads hidden slides too.
        include_speaker_notes: Whether the PowerPoint reader reads the slides' speaker notes.
        batch_running_lines: Running headers and footers found in other page documents of
            the same input, as ``("top" | "bottom", shape)`` pairs (the line normalised,
            digits as ``#``: :func:`procedure_rag._readers.furniture_rules.shape`): the
            plain-text reader takes a line of that shape at that edge of a page as running
            too, which a one-page document cannot show by repetition. Set by the framework
            adapters (:mod:`procedure_rag._chunking.framework_documents`), empty otherwise.
        slides: Whether the text's pages (joined by form feeds) are a presentation's slides:
            the plain-text reader then takes the first line of each page, when it can be a
            title, as the slide's title. Set by the framework adapters from the loader's
            metadata (a PDF a presentation program wrote), ``False`` otherwise.
        numbering_lost: Whether the text is a Word file's paragraphs read without their
            automatic numbers (``Docx2txtLoader``, LlamaIndex's ``DocxReader``): the
            plain-text reader then takes the instructions after a lead-in for the steps they
            were (:mod:`procedure_rag._readers.unmarked_steps`). Set by the framework adapters
            from the document's source (a ``.docx`` file's text), ``False`` otherwise.
    """

    step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES
    heading_styles: tuple[HeadingStyle, ...] = DEFAULT_HEADING_STYLES
    lexicons: Mapping[str, Lexicon] = field(default_factory=lambda: dict(LEXICONS))
    max_input_chars: int | None = DEFAULT_MAX_INPUT_CHARS
    max_json_depth: int | None = DEFAULT_MAX_JSON_DEPTH
    max_uncompressed_bytes: int | None = DEFAULT_MAX_UNCOMPRESSED_BYTES
    include_hidden_sheets: bool = False
    include_hidden_slides: bool = False
    include_speaker_notes: bool = True
    batch_running_lines: frozenset[tuple[str, str]] = frozenset()
    slides: bool = False
    numbering_lost: bool = False


#: The options a reader uses when it is given none.
DEFAULT_READER_OPTIONS = ReaderOptions()

"""A text per sentence of a text chunk: small vectors that point at the chunk holding it.

A text chunk's raw vector averages every sentence it holds; a question about one of them
(E-Manual's "How do I change the background color of Ambient Mode?") matches that
sentence's own words better. The chunk's prose is read paragraph by paragraph, lines
wrapped by a PDF or an editor joined again (no space between two Japanese characters),
and cut into sentences; code, table rows and image lines are not prose and give none.
A sentence shorter than :data:`MIN_SENTENCE_CHARS` goes on with the next one ("To enter
Ambient Mode, press the button." alone matches too many questions, and short Japanese
sentences more so), and each text opens with the last three headings of the section, as a
step's does. A chunk that is one sentence gets none: its raw vector is that sentence
already. Retrieval counts a
sentence's hit as its chunk's raw text (:func:`~procedure_rag._retrieval.fusion.fuse`),
so the chunk comes back once, with the sentence that matched.

Sentences can also stand in for the raw vector: a chunk type whose kinds hold
``sentence`` without ``raw`` gets sentence vectors alone for a chunk that is all prose and
cut into two sentences or more (:func:`sentences_cover`), and its raw vector otherwise
(:func:`~procedure_rag._representations.offline.generator.default_kinds`). A raw vector
beside the sentences repeats their words in one text: on the dev sets leaving it out moved
two questions (one of E-Manual's 734 lower at rank 1, one of HoloLens en higher) and saved a
second embedding of the whole chunk (1.03x the default's e5 tokens instead of 1.18x).
"""

from __future__ import annotations

import re

from procedure_rag._language.lexicons import split_sentences
from procedure_rag._language.text import join_lines
from procedure_rag._representations.offline.steps import SECTION_LEVELS
from procedure_rag._representations.offline.summary import FENCE, body_text, not_prose, plain
from procedure_rag._types import Chunk

__all__ = ["MIN_SENTENCE_CHARS", "paragraphs", "sentence_texts", "sentences_cover"]

#: The fewest characters of a sentence text (after its headings); a shorter sentence is
#: joined with the next one. Measured at 40, 80, 120 and 160 on the dev sets: at 120
#: HoloLens and Japanese-native lose nothing at rank 1 and the real PDFs one question of 25
#: (at 80: HoloLens ja 2 and the real PDFs 2), and E-Manual keeps most of its gain, in four
#: fifths of the vectors of 80.
MIN_SENTENCE_CHARS = 120

# A line that starts a new paragraph: a list item, a heading, a quote.
_STARTS_BLOCK = re.compile(r"^\s*(?:[-*+•・]\s|\d{1,3}[.)]\s|#{1,6}\s|>)")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_ITEM_MARKER = re.compile(r"^\s*(?:[-*+•・]|\d{1,3}[.)])\s+|^\s*(?:#{1,6}|>+)\s*")


def paragraphs(text: str) -> list[str]:
    """The prose of ``text`` as paragraphs: wrapped lines joined, list markers dropped.

    A blank line, a list item, a heading or a quote starts a paragraph, and a heading is
    one by itself; fenced code, table rows and images are left out.
    """
    out: list[str] = []
    lines: list[str] = []
    in_code = False

    def close() -> None:
        if lines:
            out.append(join_lines(lines))
            lines.clear()

    for raw in text.splitlines():
        if FENCE.match(raw):
            close()
            in_code = not in_code
            continue
        if in_code or not_prose(raw.strip()):
            close()
            continue
        if _STARTS_BLOCK.match(raw):
            close()
        line = plain(_ITEM_MARKER.sub("", raw))
        if line:
            lines.append(line)
        if _HEADING.match(raw):
            close()  # a heading is a paragraph of its own
    close()
    return out


def _units(paragraph_texts: list[str]) -> list[str]:
    """Sentences of the paragraphs, each short one joined with the ones after it."""
    out: list[str] = []
    pending: list[str] = []
    for paragraph in paragraph_texts:
        for piece in split_sentences(paragraph):
            sentence = piece.strip()
            if not sentence:
                continue
            pending.append(sentence)
            joined = join_lines(pending)
            if len(joined) >= MIN_SENTENCE_CHARS:
                out.append(joined)
                pending = []
    if pending:
        rest = join_lines(pending)
        # The short tail goes with the sentence before it rather than alone.
        if out:
            out[-1] = join_lines([out[-1], rest])
        else:
            out.append(rest)
    return out


def sentence_texts(chunk: Chunk) -> list[str]:
    """One text per sentence of ``chunk``'s prose, in order (none for a single sentence)."""
    units = _units(paragraphs(body_text(chunk)))
    if len(units) < 2:
        return []
    head = " > ".join(chunk.section_path[-SECTION_LEVELS:])
    return [f"{head}\n{unit}" if head else unit for unit in units]


def sentences_cover(chunk: Chunk) -> bool:
    """Whether ``chunk``'s sentence texts hold all of its text, so they can stand in for its raw one.

    True when the chunk is cut into two sentence texts or more and every line of it is
    prose: code, a table row or an image line is in the raw text only.
    """
    body = body_text(chunk)
    for raw in body.splitlines():
        line = raw.strip()
        if line and (FENCE.match(line) or not_prose(line)):
            return False
    return len(_units(paragraphs(body))) >= 2

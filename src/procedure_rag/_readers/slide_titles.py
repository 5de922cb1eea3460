"""Slide titles in the text of a presentation's pages.

A PDF that PowerPoint, Impress or Keynote wrote is a deck: each page is a slide, and a
slide opens with its title. Its extracted text shows none of the size that sets the
title apart, and a slide's few lines give the rules of :mod:`procedure_rag._readers.headings`
little to go on: a title over a single paragraph, a Japanese title ending like a sentence
(「デバイスを再起動します」), a slide holding nothing but a section's title. When the
reader is told the pages are slides (``ReaderOptions.slides``):

- the first line of each page, running lines aside, is the slide's title when it can be a
  title: short, no sentence, no label, not numbered (a numbered title is left to the
  heading-number rules), and not the first line of a paragraph the wrapping broke (the next
  line's first word would not have fit on it); or such a title wrapped over two lines (the first
  ending mid-phrase, 「…の」 or "… of", the second going on from it, 「…また」「は回復する」,
  or both in capitals);
- a slide with nothing but its title is a section slide: the titles of the slides with
  content after it are one level below it;
- a slide whose title is the one before it again, marked as going on or not
  (``(continued)``, 「（続き）」, ``(2/2)``), goes on from that slide: its title is printed
  again as a running header is, and the section and its list go on;
- a page break ends whatever block the page before left open: a slide's text never goes
  on from the slide before it;
- inside a slide no title is guessed from the shape of a line
  (:meth:`~procedure_rag._readers.headings.HeadingRules.try_inferred_heading`): a slide's
  text is wrapped narrow with no blank line between its paragraphs, and the first line of a
  paragraph looks like a title over a body; numbered headings stay.
"""

from __future__ import annotations

from abc import abstractmethod

from procedure_rag._language.numbering import match_heading_number
from procedure_rag._language.text import title_key
from procedure_rag._readers.headings import HeadingRules, title_like
from procedure_rag._readers.text_lines import CONTINUES_JA, Line, ends_with_connector, is_cjk
from procedure_rag._types import ElementKind

__all__ = ["SlideTitles"]

#: What the second line of a wrapped Japanese title opens with: what never starts a word,
#: and the particles (「…リセット、また」「は回復する」, 「… COMPANION」「のトラブルシューティング」).
_GOES_ON_JA = CONTINUES_JA | frozenset("はがのにでとへもや")
#: Widest a slide title may be, in display columns (a wrapped one: both lines together).
_TITLE_WIDTH = 80
_WRAPPED_WIDTH = 100


class SlideTitles(HeadingRules):
    """The slide-title rule, a mixin of the plain-text reader (see the module docstring)."""

    slide_top: bool = True  # no line of the current page read yet, running lines aside
    section_slides: bool = False  # a slide holding only its title has been read
    slide_title: str = ""  # the last slide title read (title_key)

    @abstractmethod
    def close_cur(self) -> None:
        """Close the open block."""

    def at_slide_top(self, line: Line) -> bool:
        """Whether ``line`` opens a slide; a page break then ends the block the page before left open."""
        if not (self.slides and self.slide_top):
            return False
        self.slide_top = False
        self.close_cur()
        self.prev_closed = True
        return True

    def try_slide_title(self, line: Line) -> bool:
        """``line``, the first of a slide, as the slide's title (see the module docstring)."""
        if self.marker(line) is not None or match_heading_number(line.head, self.heading_styles) is not None:
            return False
        found = self._title(line)
        if found is None:
            return False
        title, rest = found
        if rest is not None:
            self.take()
        key = title_key(title)
        if key == self.slide_title:
            # The slide before goes on: its title printed again, as a running header is.
            last = rest or line
            self.new_block(ElementKind.PAGE_HEADER, line, [(line.body, last.end)], done=True)
            self.queue[-1].last = last
            self.prev_closed = True
            return True
        self.slide_title = key
        style, level = self._level()  # the title's lines taken: what follows it
        self.heading(line, line, rest=0, number="", level=level, style=style, last=rest)
        if rest is not None:
            self.queue[-1].pieces.append((rest.body, rest.end))
        self.queue[-1].hints += (("inferred", "true"), ("inferred_by", "slide"))
        return True

    def _title(self, line: Line) -> tuple[str, Line | None] | None:
        """The title ``line`` opens and its second line (``None``: one line); ``None`` for no title."""
        s = self.s(line)
        nxt = self.peek(0)
        if (
            nxt is not None
            and not nxt.page_top
            and not self.pages.apart(nxt.body)
            and self.marker(nxt) is None
        ):
            s2 = self.s(nxt)
            if (
                ends_with_connector(s)
                or s2[0].islower()
                or s2[0] in _GOES_ON_JA
                or (s.isupper() and s2.isupper())
            ):
                # The line goes on: a title wrapped over two lines, or a paragraph's first line.
                joined = s + ("" if is_cjk(s[-1]) or is_cjk(s2[0]) else " ") + s2
                return (joined, nxt) if title_like(joined, _WRAPPED_WIDTH) else None
            if not self.hard_break(line, nxt, self.wrap):
                return None  # the wrapping broke the line: a paragraph's first line
        return (s, None) if title_like(s, _TITLE_WIDTH) else None

    def _level(self) -> tuple[str, int]:
        """The title's style and level: a section slide's (nothing after it on its page) or a slide's."""
        k = 0
        while (after := self.peek(k)) is not None and not after.page_top and self.pages.apart(after.body):
            k += 1
        if after is None or after.page_top:
            self.section_slides = True
            return "slide-section", 1
        return "slide", 2 if self.section_slides else 1

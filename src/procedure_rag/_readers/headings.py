"""Heading inference for the plain-text reader.

Plain text marks headings only by numbering, underlines and layout. These rules
decide, line by line and with bounded look-ahead, whether a line is a heading:
heading numbers (``第1章``, ``1.1``, ``【…】``, ``■``), underlined (setext) titles,
numbered lines that introduce a body rather than a procedure, and, conservatively,
short title-like lines told apart by what follows them (see :meth:`HeadingRules.evidence`):
a paragraph, a menu path, a repeat of the line, or the first step of a numbered procedure.

:class:`HeadingRules` is a mixin of the plain-text reader
(:class:`procedure_rag._readers.plaintext._Reader`): it reads lines through the
reader's cursor and writes headings as the reader's blocks; the reader provides the
state annotated here and the block and list methods declared abstract.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections import deque

from procedure_rag._language.numbering import (
    FULLWIDTH_DIGITS,
    HeadingStyle,
    StepMarker,
    StepStyle,
    marker_ordinal,
    match_heading_number,
    match_step_marker,
)
from procedure_rag._language.text import title_case
from procedure_rag._readers.text_lines import (
    CAPTION,
    CONTINUES_JA,
    CONTINUES_LINE,
    MATCH_PREFIX,
    RULE,
    Block,
    Line,
    OpenItem,
    Pages,
    display_width,
    ends_sentence,
    ends_with_connector,
    is_cjk,
)
from procedure_rag._types import ElementKind

__all__ = ["HeadingRules", "short_title", "title_like"]

_DEFINITION = re.compile(r"[^:：.。]{1,40}[:：]\s")
# Step styles whose single-level numbers ("1.", "(1)", "1)") may also number headings.
_HEADING_CAPABLE = frozenset({"dotted", "dotted-fullwidth", "close-paren", "paren"})
_LOOKAHEAD = 40  # lines a numbered heading candidate may look ahead
_MAX_PATH = 8  # labels a menu path under a heading may have
_STRONG = frozenset({"repeat", "path"})  # evidence that closes a list left open
_LABEL_PUNCTUATION = frozenset('.,;:!?"“”。、，．：；！？「」『』')
# Kanji on both sides of a space: cells of a table row in page text (「項目 入力内容」). A
# Japanese title spaces words only beside Latin text or between katakana words
# (「Sapphire の利用」, 「デバイス ポータル」).
_CELL_GAP = re.compile(r"[\u3400-\u9fff][ \u3000]+[\u3400-\u9fff]")
# A Japanese title may open with a lowercase Latin word: a file, command or product name
# (「make_CF_signal.py を使ってシグナルを作成」, 「iPhone の設定」).
_JA_AFTER_WORD = re.compile(r"[a-z][A-Za-z0-9_.\-/]*[ \u3000]?[\u3040-\u30ff\u3400-\u9fff]")


def short_title(s: str, max_width: int) -> bool:
    """Whether ``s`` can be heading text: short, and not a sentence."""
    return (
        bool(s)
        and display_width(s, max_width + 1) <= max_width
        and not ends_sentence(s)
        and s[-1] not in ",、，;；:："
        and "。" not in s
        and ". " not in s
    )


def title_like(s: str, max_width: int = 60) -> bool:
    """Whether ``s`` may be an unnumbered heading: short, no sentence, no label, no dangling word."""
    first = s[0]
    return (
        short_title(s, max_width)
        and ":" not in s
        and "：" not in s
        and not ends_with_connector(s)
        and len(s.split()) <= 10
        and sum(c.isalpha() for c in s) >= 2
        and (
            first.isupper()
            or first.isdigit()
            or (is_cjk(first) and first not in "（、。・〜")
            or _JA_AFTER_WORD.match(s) is not None
        )
        and CAPTION.match(s) is None
        and _CELL_GAP.search(s) is None
    )


def _ui_label(s: str) -> bool:
    """Whether ``s`` may be one label of a menu path: a few words, no punctuation, capitalised."""
    first = s[0]
    return (
        display_width(s, 31) <= 30
        and len(s.split()) <= 4
        and not any(c in _LABEL_PUNCTUATION for c in s)
        and (first.isupper() or first.isdigit() or (is_cjk(first) and first not in "（、。・〜「『"))
        and not ends_with_connector(s)
    )


class HeadingRules(ABC):
    """The heading rules, as methods of the plain-text reader (see the module docstring)."""

    text: str
    pages: Pages
    step_styles: tuple[StepStyle, ...]
    heading_styles: tuple[HeadingStyle, ...]
    queue: deque[Block]
    stack: list[OpenItem]
    pending: list[Block]
    prev_closed: bool
    broke: bool
    whole: bool
    col: int
    wrap: int
    prev_line: Line | None
    heading_levels: dict[str, int]
    last_level: int
    block_inferred: bool
    opening: bool
    term_body: int | None = None  # where the last definition term's description starts
    slides: bool = False  # the text's pages are a presentation's slides (see ``slide_titles``)
    paragraph_lines: bool = False  # a word processor's paragraphs, a blank line after each

    # ----- what the reader provides ----------------------------------------------------------
    @abstractmethod
    def peek(self, k: int = 0) -> Line | None:
        """Look-ahead line ``k`` (0 = the next line), or ``None`` past the end."""

    @abstractmethod
    def take(self) -> Line | None:
        """Consume the next line."""

    @abstractmethod
    def s(self, line: Line) -> str:
        """The text of ``line``, leading and trailing whitespace left out."""

    @abstractmethod
    def tail(self, line: Line) -> str:
        """The last characters of ``line``."""

    @abstractmethod
    def marker(self, line: Line) -> StepMarker | None:
        """The step marker ``line`` opens with, if any."""

    @abstractmethod
    def new_block(
        self, kind: ElementKind, line: Line, pieces: list[tuple[int, int]], *, done: bool = False
    ) -> Block:
        """Close the open block and start a new one at ``line``."""

    @abstractmethod
    def resolve_pending(self, *, inside: bool) -> None:
        """Settle the paragraphs held back after a list: inside it or after it."""

    @abstractmethod
    def place(self, indent: int, style: str, ordinal: int | None) -> tuple[int, str]:
        """Where a new list item would go: ``(entries kept on the stack, relation)``."""

    @abstractmethod
    def hard_break(self, a: Line, b: Line, column: int) -> bool:
        """Whether the writer, not the wrapping, broke the text between ``a`` and ``b``."""

    def broke_off(self, line: Line) -> bool:
        """Whether the line before ``line`` ended short of its own block's width."""
        prev = self.prev_line
        return self.broke and prev is not None and self.hard_break(prev, line, min(self.wrap, self.col))

    # ----- headings ------------------------------------------------------------------------------
    def heading(
        self,
        first: Line,
        title: Line,
        *,
        rest: int,
        number: str,
        level: int,
        style: str,
        last: Line | None = None,
    ) -> None:
        self.resolve_pending(inside=False)
        raw = self.s(title)
        # A heading keeps its number in its text ("1.2 Setup", "第1章 設定"), as a Markdown
        # heading does, so that it reaches the section path; symbols ("■", "【") do not.
        skip = 0 if number else rest + (len(raw[rest:]) - len(raw[rest:].lstrip()))
        text_start = title.body + skip
        block = self.new_block(ElementKind.SECTION_HEADER, first, [(text_start, title.end)], done=True)
        block.last = last or title
        block.level = level
        block.number = number
        hints: list[tuple[str, str]] = [("raw", raw), ("style", style)]
        block.hints = tuple(hints)
        self.heading_levels.setdefault(style, level)
        self.last_level = level
        self.prev_closed = True

    def closed_before(self, line: Line) -> bool:
        """Whether ``line`` starts a block: after a blank line or a sentence.

        A page break alone is no such gap: the page before may stop mid-paragraph, and a
        table's rows or a figure's labels go on at the top of the next. Nor is a lead-in's
        colon: what it introduces are items, even when nothing marks them.
        """
        return (line.blank_before and not line.page_top) or self.prev_closed

    def try_setext(self, line: Line) -> bool:
        over = RULE.fullmatch(line.head)
        title = self.peek(0) if over else line
        under = self.peek(1) if over else self.peek(0)
        if title is None or under is None or (title.blank_before and over) or under.blank_before:
            return False
        m = RULE.fullmatch(under.head)
        if m is None or (over is not None and over.group(1) != m.group(1)) or RULE.fullmatch(title.head):
            return False
        if not (over or line.blank_before) or display_width(self.s(title), 121) > 120:
            return False
        key = f"underline{'+over' if over else ''}:{m.group(1)}"
        level = self.heading_levels.get(key) or len({k for k in self.heading_levels if "underline" in k}) + 1
        number, rest = self.title_number(title)
        if over:
            self.take()
        self.take()
        self.heading(line, title, rest=rest, number=number, level=level, style=key, last=under)
        return True

    def title_number(self, line: Line) -> tuple[str, int]:
        head = line.head
        hm = match_heading_number(head, self.heading_styles)
        if hm is not None and any(c.isalnum() for c in hm[0]):
            return hm[0], hm[2]
        sm = match_step_marker(head, self.step_styles)
        if sm is not None and sm.ordered:
            return sm.marker, sm.rest_start
        return "", 0

    def try_heading_number(self, line: Line) -> bool:
        s = line.head
        hm = match_heading_number(s, self.heading_styles)
        if hm is None or line.end - line.body > MATCH_PREFIX:
            return False
        marker, level, rest = hm
        title = s[rest:].strip()
        symbol = not any(c.isalnum() for c in marker)
        if marker == "【":
            title = title.removesuffix("】").strip()
        if not title and not symbol:  # "第1章" alone: the number is the whole heading
            title, rest = marker, 0
        if not short_title(title, 80) or (not symbol and level > 1 and not self.closed_before(line)):
            return False
        style = next((st.name for st in self.heading_styles if st.pattern.match(s)), "heading")
        self.heading(line, line, rest=rest, number="" if symbol else marker, level=level, style=style)
        if marker == "【":  # the heading text leaves out the closing bracket too
            block = self.queue[-1]
            block.pieces = [(block.pieces[0][0], line.body + s.rstrip().rfind("】"))]
        return True

    def numbered_heading(self, line: Line, m: StepMarker, ordinal: int | None) -> bool:
        """Whether a ``1.`` / ``(1)`` / ``1)`` line numbers a heading rather than a step.

        Conservative on purpose: the line must be short, no sentence, flush left, not the
        next item of an open list, and introduce either sub-sections (``1.`` → ``1.1``, also
        after a page's running header; a question only so) or a body of at least two
        paragraphs before its next sibling.
        """
        rest = self.s(line)[m.rest_start :].strip()
        # A question may title a section over its numbered sub-sections (「4. こんなときは？」).
        question = rest[-1:] in ("?", "？") and short_title(rest[:-1], 80)
        if m.style not in _HEADING_CAPABLE or line.indent > 1 or not (question or short_title(rest, 80)):
            return False
        if self.stack and self.place(line.indent, m.style, ordinal)[1] == "sibling":
            return False
        nxt = self.peek(0)
        if nxt is None or not self.closed_before(line):
            return False
        digits = re.sub(r"[^0-9０-９]", "", m.marker).translate(FULLWIDTH_DIGITS)
        k = 0  # the first sub-section may be on the next page, under its running header
        while (sub := self.peek(k)) is not None and self.pages.apart(sub.body) and k < 4:
            k += 1
        hm = match_heading_number(sub.head, self.heading_styles) if sub is not None else None
        if digits and hm is not None and hm[0].translate(FULLWIDTH_DIGITS).startswith(digits + "."):
            return True
        if question or not nxt.blank_before or self.marker(nxt) is not None:
            return False
        return self.has_long_body(m.style)

    def has_long_body(self, style: str) -> bool:
        lines = paragraphs = 0
        sentence = False
        for k in range(_LOOKAHEAD):
            ln = self.peek(k)
            if ln is None:
                break
            sm = self.marker(ln) if ln.indent <= 1 else None
            if sm is not None and sm.style == style:
                break
            lines += 1
            paragraphs += ln.blank_before
            sentence = sentence or ends_sentence(self.tail(ln))
        return lines >= 3 and paragraphs >= 2 and sentence

    def try_inferred_heading(self, line: Line) -> bool:
        """A short title-like line, told apart from text by what follows it (see :meth:`evidence`).

        Never in a presentation's text, whose titles are its slides' (``slides``).
        """
        if self.slides or not self.closed_before(line):
            return False
        if self.paragraph_lines and self.prev_line is not None and not self.prev_closed:
            return False  # a word processor's table is a run of short cells: a title follows a sentence
        s = self.s(line)
        rest = self.wrapped_title(line, s)
        if rest is None and not title_like(s):
            return False
        if rest is not None:
            evidence = self.evidence(line, 1, display_width(s, 61), chain=False)
        else:
            evidence = self.evidence(line, 0, display_width(s, 61), chain=True)
        if evidence is None or (evidence == "body" and rest is None and self.definition_term(line)):
            return False
        # Under an open list: a line after one the writer broke off, by the item's own width,
        # not deeper than the list (hard-wrapped text has no indentation to tell a heading
        # from an item's paragraph; a title's own width proves nothing), a
        # title over a new procedure, or, while a paragraph level with the items keeps the
        # list open, strong evidence: a repeated title, a title over a menu path, or a body
        # under an English title in title case ("VPN via UI", "Web Installer"), which a line
        # of a step's paragraph seldom is.
        if (
            self.stack
            and not (
                (self.paragraph_lines or self.broke_off(line)) and line.indent <= self.stack[0].indent + 1
            )
            and evidence not in ("steps", "bullets")
            and not (
                self.pending
                and line.indent <= self.pending[0].first.indent
                and (evidence in _STRONG or (evidence == "body" and title_case(s)))
            )
        ):
            return False
        style, level = self.inferred_level(line)
        repeat = self.take() if evidence == "repeat" or rest is not None else None
        self.heading(line, line, rest=0, number="", level=level, style=style, last=repeat)
        if rest is not None:
            self.queue[-1].pieces.append((rest.body, rest.end))
        self.queue[-1].hints += (("inferred", "true"), ("inferred_by", evidence))
        if evidence == "path":
            self.ui_path()
        return True

    def definition_term(self, line: Line) -> bool:
        """Whether ``line`` is a term of a definition list: each short term over its one-line description.

        An option list ("Dynamic" / "Makes the picture brighter…" / "Standard" / "Is the
        default mode…") has the shape of titles over bodies, a line each. A term right over
        a description of one line that ends a sentence, followed by another such pair, or
        following the description of the term before it, is text, not a section. A term
        found records where its description starts (``term_body``), for the next one.
        """
        described, after = self.peek(0), self.peek(1)
        one_line = after is None or after.blank_before or title_like(self.s(after))
        if (
            described is None
            or described.blank_before
            or not one_line
            or not ends_sentence(self.tail(described))
        ):
            return False
        if (
            self.term_body is not None
            and self.prev_line is not None
            and self.prev_line.body == self.term_body
        ):
            self.term_body = described.body
            return True
        term, description = self.peek(1), self.peek(2)
        if (
            term is None
            or description is None
            or term.blank_before != line.blank_before
            or not title_like(self.s(term))
            or description.blank_before
            or not ends_sentence(self.tail(description))
        ):
            return False
        self.term_body = described.body
        return True

    def wrapped_title(self, line: Line, s: str) -> Line | None:
        """The second line of a title the print wrapped over two lines, if ``line`` opens one.

        A title set larger than the body wraps sooner: its last word, or the end of a
        Japanese word, goes on alone on the next line ("…to HoloLens after" / "setup",
        「…削除HoloLen」「sする」). That line goes on from ``line`` (lower case, a particle
        or small kana), is less than half as wide, ends no sentence, and the title they
        make together is title-like.
        """
        nxt = self.peek(0)
        if nxt is None or nxt.blank_before or self.pages.apart(nxt.body) or self.marker(nxt) is not None:
            return None
        s2 = self.s(nxt)
        if not (s2[0].islower() or s2[0] in CONTINUES_JA) or ends_sentence(s2):
            return None
        if display_width(s2, 61) * 2 > display_width(s, 121):
            return None
        joiner = "" if is_cjk(s[-1]) or is_cjk(s2[0]) or not s.isascii() else " "
        return nxt if title_like(s + joiner + s2, 100) else None

    def set_apart(self, line: Line) -> bool:
        """Whether a blank line, or the start of a whole text, is before ``line``.

        A running header is no text: the first line under it, before anything else, opens
        the text as the first line of a text without one does.
        """
        return line.blank_before or (self.whole and self.opening)

    def inferred_level(self, line: Line) -> tuple[str, int]:
        """``(style, level)`` of an inferred heading."""
        block = self.heading_levels.get("inferred")
        # A page break is no gap here: a page may break anywhere in a section.
        apart = self.set_apart(line) and not line.page_top
        sub = block is not None and self.block_inferred and not apart
        self.block_inferred = self.block_inferred or apart
        if block is None:
            return "inferred", self.last_level + 1
        # PDF text keeps a blank line before a section title but not before the
        # sub-headings inside it; without that gap the heading is one level deeper.
        return ("inferred-sub", block + 1) if sub else ("inferred", block)

    def evidence(self, line: Line, k: int, width: int, *, chain: bool) -> str | None:
        """Why the title-like ``line`` (followed by look-ahead line ``k``) is a heading, if it is.

        * ``"repeat"``: the next line repeats it verbatim (a title printed twice, as
          PDF extraction gives a heading that is also the first line of the body);
        * ``"path"``: a run of very short labels (a menu path whose ``>`` glyphs were
          lost, e.g. "Settings / General / Network") and then a body paragraph; a single
          label is enough only when a blank line sets the title apart;
        * ``"body"``: a longer paragraph follows straight away;
        * ``"steps"``: the first step of a numbered procedure follows (a new list, or one
          that starts over), the line before the title ending a sentence;
        * ``"bullets"``: a new bulleted list of sentences follows, on the same terms;
        * ``"heading"``: a blank line sets it apart and the next line is a heading by
          one of the rules above (a section title right above its first sub-heading).
        """
        nxt = self.peek(k)
        if nxt is None or self.pages.apart(nxt.body):
            return None
        if not nxt.blank_before and self.s(nxt) == self.s(line):
            return "repeat" if self.repeat_ends(line, k + 1) else None
        run = self.path_run(k)
        if (
            run
            and (run >= 2 or line.blank_before)
            and self.above_labels(line, k, run)
            and self.body_follows(width, k + run, attached=True)
        ):
            return "path"
        if self.body_follows(width, k, lead=line.blank_before):
            return "body"
        if (kind := self.list_follows(nxt)) is not None:
            return kind
        s = self.s(nxt)
        chained = (
            chain
            and self.set_apart(line)
            and not nxt.blank_before
            and title_like(s)
            and self.evidence(nxt, k + 1, display_width(s, 61), chain=False) is not None
        )
        return "heading" if chained else None

    def steps_follow(self, nxt: Line) -> bool:
        """Whether ``nxt`` opens a numbered procedure (``1.``, ``(1)``, ``①``) under a title after text.

        The line before the title must end a sentence or a lead-in: a label or caption under
        another one ("Screenshot: Main tab" over "Screenshot: Mask tab") is no title. Only in a
        whole text: a run inside a Word file or a PDF has its headings from the file itself,
        and a bold label over a sub-procedure there is no section.
        """
        prev = self.prev_line
        if not self.whole or (
            prev is not None and not (ends_sentence(tail := self.tail(prev)) or tail[-1] in ":：")
        ):
            return False
        m = self.marker(nxt)
        if m is None or not m.ordered or marker_ordinal(m.marker) != 1:
            return False
        # not the open list going on: a new list, one that starts over, or another style
        return not self.stack or self.place(nxt.indent, m.style, 1)[1] != "sibling"

    def list_follows(self, nxt: Line) -> str | None:
        """``"steps"`` or ``"bullets"`` where such a list opens at ``nxt`` under a title, else ``None``."""
        if self.steps_follow(nxt):
            return "steps"
        return "bullets" if self.bullets_follow(nxt) else None

    def bullets_follow(self, nxt: Line) -> bool:
        """Whether ``nxt`` opens a bulleted list of sentences under a title after text.

        As for :meth:`steps_follow`, the line before the title ends a sentence, in a whole
        text, and the list is a new one, not the open list going on; its first item must be
        a sentence or wrap (a column of short bulleted labels under a short line is a list,
        not a section).
        """
        prev = self.prev_line
        if not self.whole or prev is None or not ends_sentence(self.tail(prev)):
            return False
        m = self.marker(nxt)
        if m is None or m.ordered:
            return False
        # A paragraph after the open list's last item may have ended it (page text shows no indent).
        return (
            not self.stack or bool(self.pending) or self.place(nxt.indent, m.style, None)[1] != "sibling"
        ) and (ends_sentence(item := self.s(nxt)) or display_width(item, 61) > 60)

    def repeat_ends(self, title: Line, k: int) -> bool:
        """Whether look-ahead line ``k``, after a title and its repeat, may follow a heading.

        Not a continuation, and, unless a blank line sets the title apart, not another
        short label either ("Yes / Yes / No" are repeated cells, not a title).
        """
        after = self.peek(k)
        if after is None or after.blank_before:
            return True
        s = self.s(after)
        return not (s[0].islower() or s[0] in CONTINUES_LINE or (not title.blank_before and _ui_label(s)))

    def above_labels(self, line: Line, k: int, run: int) -> bool:
        """Whether ``line`` reads as a title over the labels: more than one word, wider than each."""
        s = self.s(line)
        if len(s.split()) < 2 and not any(is_cjk(c) for c in s[:8]):
            return False  # "Settings / General / Network": the first label, not a title
        width = display_width(s, 61)
        labels = (self.peek(i) for i in range(k, k + run))
        return all(display_width(self.s(ln), 31) <= width for ln in labels if ln is not None)

    def path_run(self, k: int) -> int:
        """How many short UI labels start at look-ahead line ``k`` (0 past :data:`_MAX_PATH`)."""
        n = 0
        while (ln := self.peek(k + n)) is not None and not ln.blank_before and _ui_label(self.s(ln)):
            if self.pages.apart(ln.body) or self.marker(ln) is not None:
                break
            n += 1
            if n > _MAX_PATH:  # a column of labels, not a path
                return 0
        return n

    def ui_path(self) -> None:
        """Emit the menu path under a heading as one text element, its labels joined by ``>``."""
        first = self.peek(0)
        if first is None:
            return
        block = self.new_block(ElementKind.TEXT, first, [], done=True)
        for _ in range(self.path_run(0)):
            ln = self.take()
            if ln is None:
                break
            block.pieces.append((ln.body, ln.end))
            block.last = ln
        block.join = "path"
        block.hints = (("ui_path", "true"),)
        self.prev_closed = True

    def body_follows(self, width: int, k: int = 0, *, attached: bool = False, lead: bool = False) -> bool:
        """Whether a paragraph starts at look-ahead line ``k``, under a title ``width`` wide.

        ``attached``: the paragraph may not be set apart by a blank line. ``lead``: the
        title starts a block, so one whole sentence wider than the title is body enough.
        """
        b1 = self.peek(k)
        if b1 is None or (attached and b1.blank_before) or not self.opens_paragraph(b1, k, width):
            return False
        s1 = self.s(b1)
        if lead and not b1.blank_before and ends_sentence(s1) and display_width(s1, 200) > max(width, 30):
            return True
        total, sentence = 0, False
        for i in range(k, k + 3):
            ln = self.peek(i)
            if ln is None or (i > k and ln.blank_before) or self.pages.apart(ln.body):
                break
            total += display_width(self.s(ln), 200)
            sentence = sentence or ends_sentence(self.tail(ln))
        return (sentence or total >= 100) and total >= max(40, width * 3 // 2)

    def row_like(self, s: str) -> bool:
        """Whether ``s`` may be a table row of page text: title-like and under half the column."""
        return title_like(s) and display_width(s, self.wrap) * 2 < self.wrap

    def opens_paragraph(self, b1: Line, k: int, width: int) -> bool:
        """Whether look-ahead line ``k`` (``b1``) can be the first line of a body paragraph."""
        if self.pages.apart(b1.body) or self.marker(b1) is not None:
            return False
        s1 = self.s(b1)
        if s1[0].islower() or s1[0] in CONTINUES_LINE:
            return False
        b1_width = display_width(s1, 31)
        b2 = self.peek(k + 1)
        # "In the / Guide / , move to…": a paragraph whose first line breaks at a UI label
        wraps_on = (
            ends_with_connector(s1)
            and b2 is not None
            and not b2.blank_before
            and not (b2.head[0].islower() or b2.head[0] in CONTINUES_LINE)
        )
        if not (b1_width >= 30 or (b1_width > width and ends_sentence(s1)) or wraps_on):
            return False
        # short title-like lines under each other: a table's rows, not a body
        rows = b2 is not None and not b1.blank_before and not b2.blank_before
        if rows and not wraps_on and self.row_like(s1) and b2 is not None and self.row_like(self.s(b2)):
            return False
        before = self.peek(k - 1) if k else self.prev_line
        # a short line inside a "Label: text" list is one of its labels
        return before is None or not (_DEFINITION.match(self.s(before)) and _DEFINITION.match(s1))

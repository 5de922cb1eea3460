"""Markdown reader: CommonMark + GFM events from pyromark, turned into layout elements.

pyromark (a binding of the Rust ``pulldown-cmark`` parser) gives every event a
byte range into the source. :class:`_Walker` reads the events once, keeps a
small stack of list and item contexts, and emits one :class:`LayoutElement` per
block with its exact character span, so that chunks can point back at their
evidence. Sub-steps on the continuation lines of a list item's first paragraph
(``1. Open.`` then ``   a. Cut.``), which CommonMark leaves in the item's text,
become items nested under it (see :mod:`procedure_rag._language.substeps`).

Block quotes, tables, code blocks, HTML blocks, definition lists, footnote
definitions and front matter are kept whole: their inner events are skipped.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from procedure_rag._language.labels import leading_label
from procedure_rag._language.numbering import StepStyle, match_step_marker
from procedure_rag._language.substeps import SubStep, find_substeps
from procedure_rag._language.text import join_lines
from procedure_rag._readers.draft import ElementDraft, element_id_for, list_id_for
from procedure_rag._readers.furniture_rules import CONTENTS_HINTS, NAVIGATION_HINTS, is_navigation
from procedure_rag._readers.markdown_events import CharIndex, segment_events
from procedure_rag._readers.options import DEFAULT_READER_OPTIONS, ReaderOptions
from procedure_rag._types import ElementKind, LayoutElement, Span

if TYPE_CHECKING:
    from pyromark.event import Range

__all__ = ["bears_markdown", "iter_markdown", "looks_like_markdown", "read_markdown"]

#: Containers kept whole, and the element kind each becomes.
_OPAQUE = {
    "BlockQuote": ElementKind.TEXT,
    "Table": ElementKind.TABLE,
    "CodeBlock": ElementKind.CODE,
    "HtmlBlock": ElementKind.TEXT,
    "DefinitionList": ElementKind.TEXT,
    "FootnoteDefinition": ElementKind.FOOTNOTE,
    "MetadataBlock": ElementKind.FRONT_MATTER,
}
_INLINE_CONTAINERS = frozenset(
    {"Emphasis", "Strong", "Strikethrough", "Link", "Image", "Superscript", "Subscript"}
)
_BREAKS = frozenset({"SoftBreak", "HardBreak"})
_MD_MARKER = re.compile(r"[ \t]*(?P<m>[-*+]|\d{1,9}[.)])")
_QUOTE_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
_GFM_ALERT = re.compile(r"^\s*\[!(?P<label>[A-Za-z]+)\]\s*$")
# DocFX's presentation wrapper in a quote (Microsoft Learn pages: ``> [!div class="checklist"]``,
# ``> [!div class="mx-imgBorder"]``): a styling line, not content; the quote's other lines are.
_DOCFX_DIV = re.compile(r"^\s*\[!div\b[^\]\n]*\]\s*$", re.IGNORECASE)
# A list item whose own text is nothing but links to places on the same page
# (``- [Install](#install)``, ``1. [初期設定](#初期設定) / [接続](#接続)``): an entry of the page's
# table of contents, not a step.
_CONTENTS_ITEM = re.compile(
    r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[^\]\n]+\]\(#[^)\s]*\)[ \t]*[,、・|/]?[ \t]*)+\s*"
)
# A paragraph that is only a link to a place on the page ("[Back to list](#list)").
_IN_PAGE_LINK = re.compile(r"\s*\[(?P<label>[^\]\n]{1,40})\]\(#[^)\s]*\)\s*")
# A list item inside a quote (``> - Charge the device.``): it starts a line of its own.
_QUOTE_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_HTML_IMG = re.compile(r"<img\b[^>]{0,2000}>", re.IGNORECASE)
_HTML_ALT = re.compile(r"""\balt\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
_IMAGE_PATH = re.compile(r"[\w./~%-]+\.(?:png|jpe?g|gif|svg|webp|bmp)\b", re.IGNORECASE)
_HTML_SRC = re.compile(r"""\bsrc\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
_FM_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
# Known HTML tags only: "<device name>"-style placeholders in prose are words, not markup.
_HTML_TAG = re.compile(
    r"</?(?:a|br|span|div|img|sup|sub|b|i|u|em|strong|p|kbd|code|font|center|small|big|ul|ol|li|"
    r"table|thead|tbody|tr|td|th|details|summary|hr|h[1-6]|section|figure|figcaption|video|iframe)"
    r"(?:\s[^>\n]{0,500})?/?>",
    re.IGNORECASE,
)
_LINK = re.compile(
    r"(!?)\[([^\]\n]{0,300})\]\((?:[^()\s]|\([^()\s]{0,200}\)){0,2000}(?:\s+\"[^\"\n]{0,200}\")?\)"
)
_MARKUP_ONLY = re.compile(r"[\s\-*_=#|:>`~+]*")
_ATX_FIRST = re.compile(r"\s*#{1,6}[ \t]+\S")
# Lines that only Markdown writes; "- 17 -" page numbers of PDF text are not bullets.
_MARKDOWN_SIGNS = re.compile(
    r"^(?:#{1,6}\s|```|~~~|>\s|\s*[-*+]\s(?!\s*\d{1,4}\s*-\s*$)|\s*\d{1,9}[.)]\s|\|.*\|\s*$|---\s*$)",
    re.MULTILINE,
)
# Inline Markdown: a link or picture target, a code span, strong emphasis.
_INLINE_SIGN = re.compile(r"\]\([^)\s]+\)|`[^`\n]+`|\*\*[^*\n]+\*\*|__[^_\n]+__")
_LINE_INDENT = " \t\u3000"


def looks_like_markdown(text: str, *, sample: int = 10_000) -> bool:
    """Guess whether ``text`` is Markdown (headings, fences, lists, tables, quotes)."""
    head = text[:sample]
    if _ATX_FIRST.match(head):  # a document that opens with "# Title" is Markdown, however short
        return True
    signs = len(_MARKDOWN_SIGNS.findall(head))
    lines = head.count("\n") + 1
    return signs >= 2 and signs * 20 >= min(lines, 2000) // 10


def bears_markdown(text: str, *, sample: int = 10_000) -> bool:
    """Whether ``text`` holds any sign of Markdown: a Markdown-only line, a link, a code span, emphasis.

    Weaker evidence than :func:`looks_like_markdown`, for text whose file name already
    says Markdown (``.md``): one sign confirms it.
    """
    head = text[:sample]
    return _MARKDOWN_SIGNS.search(head) is not None or _INLINE_SIGN.search(head) is not None


# A line that ends in a hard break: two or more spaces (a tab counts as one) after text.
_HARD_BREAK = re.compile(r"\S(?: {2,}|\t| \t)$")


def _clean_block(raw: str) -> str:
    """Join a block's wrapped lines; keep inline markup as written.

    A hard line break (two spaces at a line's end) stays a line break: 「サインアップ␣␣⏎新規に…」
    is a label and its description, never the one word 「サインアップ新規に…」.
    """
    if "  \n" not in raw and " \t\n" not in raw:
        return join_lines([line for ln in raw.splitlines() if (line := ln.strip())])
    parts: list[list[str]] = [[]]
    for ln in raw.splitlines():
        line = ln.strip()
        if line:
            parts[-1].append(line)
            if _HARD_BREAK.search(ln):
                parts.append([])
    return "\n".join(join_lines(part) for part in parts if part)


def _prose(raw: str) -> str:
    """A block's text for reading and embedding: link targets and inline HTML tags dropped.

    ``[Settings](settings.md)`` reads ``Settings``; ``![alt](a.png)`` keeps ``![alt]``
    so a picture stays visible. Emphasis (``**Settings**``) is kept: it marks UI labels.
    """
    text = _clean_block(raw)
    if "](" in text:  # the regexes only when their markup can be there: most blocks have none
        text = _LINK.sub(_link_text, text)
    if "<" in text:
        text = _HTML_TAG.sub("", text)
    return text.strip()


def _link_text(m: re.Match[str]) -> str:
    return f"![{m.group(2)}]" if m.group(1) else m.group(2)


def _dedent(line: str, column: int) -> str:
    """Remove up to ``column`` leading spaces from ``line``."""
    stripped = line.lstrip(" ")
    return line[min(column, len(line) - len(stripped)) :]


def _quote_text(raw: str) -> tuple[str, str]:
    """Strip ``>`` prefixes; return ``(admonition label, text)``.

    Wrapped lines are joined, but a list item in the quote starts a line of its own, with
    its marker, as the author wrote it: a note listing three conditions reads as a list,
    not as one line holding ``* a * b * c``.
    """
    lines = [ln for ln in _QUOTE_PREFIX.sub("", raw).splitlines() if ln.strip() and not _DOCFX_DIV.match(ln)]
    label = ""
    if lines:
        alert = _GFM_ALERT.match(lines[0])
        if alert:
            label = alert.group("label").lower()
            lines = lines[1:]
        else:
            label, rest = leading_label(lines[0])
            if label:
                lines = ([rest.strip()] if rest.strip() else []) + lines[1:]
    groups: list[list[str]] = []
    for line in lines:
        if not groups or _QUOTE_ITEM.match(line):
            groups.append([])
        groups[-1].append(line)
    return label, "\n".join(text for group in groups if (text := _prose("\n".join(group))))


@dataclass
class _Item:
    start: int
    marker: str
    level: int
    parent_id: str | None
    list_id: str
    ordered: bool
    element_id: str = ""
    flushed: bool = False
    inline_start: int = -1
    inline_end: int = -1


@dataclass
class _List:
    list_id: str
    ordered: bool
    depth: int
    next_number: int = 1


@dataclass
class _Paragraph:
    name: str  # "Paragraph" or "Heading"
    start: int
    level: int = 0
    parts: list[str] = field(default_factory=list)
    image_url: str | None = None
    image_alt: str = ""
    image_depth: int = 0
    has_other: bool = False

    def add_text(self, text: str) -> None:
        """Take a text event: a heading keeps its words, a paragraph notes whether it has text."""
        if self.name == "Heading":
            self.parts.append(text)
        elif self.image_depth:
            self.image_alt += text
        elif not self.has_other and text.strip():
            self.has_other = True


class _Walker:
    """Turns pyromark events into layout elements; one instance per document."""

    def __init__(self, text: str, source_id: str, step_styles: tuple[StepStyle, ...]) -> None:
        self.text = text
        self.source_id = source_id
        self.step_styles = step_styles
        self.char = CharIndex("")  # replaced for each parsed segment (see iter_markdown)
        self.order = 0
        self.lists: list[_List] = []
        self.items: list[_Item] = []
        self.last_end = 0  # everything before this offset belongs to some element
        self.opaque: tuple[str, int, int] | None = None  # (name, nesting, start)
        self.para: _Paragraph | None = None
        self.out: list[LayoutElement] = []  # elements completed by the current event

    # -- emitting -------------------------------------------------------------
    def emit(
        self, draft: ElementDraft, start: int, end: int, *, inside: bool = True, element_id: str = ""
    ) -> LayoutElement:
        """Place the next element and queue it in :attr:`out`; ``inside`` puts it under the open list item."""
        if inside and self.items:
            draft.parent_id = draft.parent_id or self.items[-1].element_id
            draft.list_id = draft.list_id or self.items[-1].list_id
        el = draft.build(
            element_id or element_id_for(self.source_id, self.order),
            self.order,
            span=Span(start, max(start, end)),
        )
        self.order += 1
        self.last_end = max(self.last_end, end)
        self.out.append(el)
        return el

    def fill_gap(self, upto: int) -> None:
        """Emit text the parser gave no block to (rules, reference definitions)."""
        gap = self.text[self.last_end : upto]
        stripped = gap.strip()
        if stripped:
            lead = self.last_end + len(gap) - len(gap.lstrip())
            body = "" if _MARKUP_ONLY.fullmatch(stripped) else _clean_block(stripped)
            self.emit(
                ElementDraft(ElementKind.TEXT, body, hints=(("markup", "1"),)), lead, lead + len(stripped)
            )
        self.last_end = max(self.last_end, upto)

    def flush_item(self, item: _Item, end: int) -> None:
        """Emit the item's own element (marker plus its first text) once."""
        if item.flushed:
            return
        item.flushed = True
        item.element_id = element_id_for(self.source_id, self.order)
        substeps: list[tuple[int, int, SubStep]] = []
        if item.inline_start >= 0:
            stop, substeps = self._substeps(item.inline_start, item.inline_end)
            text = _prose(self.text[item.inline_start : stop])
        else:
            text, stop = "", min(end, item.start + len(item.marker) + 1)
        own = ElementDraft(
            ElementKind.LIST_ITEM,
            text,
            level=item.level,
            number=item.marker,
            ordered=item.ordered,
            parent_id=item.parent_id,
            list_id=item.list_id,
        )
        self.emit(own, item.start, stop, inside=False, element_id=item.element_id)
        parents = [item.element_id]  # the enclosing step of each depth
        for start, stop, sub in substeps:
            body = self.text[start:stop]
            del parents[sub.depth :]
            draft = ElementDraft(
                ElementKind.LIST_ITEM,
                _prose(body[sub.marker.rest_start :]),
                level=item.level + sub.depth,
                number=sub.marker.marker,
                ordered=sub.marker.ordered,
                parent_id=parents[-1],
                list_id=item.list_id,
            )
            el = self.emit(draft, start, stop, inside=False)
            parents.append(el.element_id)

    def _substeps(self, start: int, end: int) -> tuple[int, list[tuple[int, int, SubStep]]]:
        """Where an item's own first text ends, and the sub-steps on its continuation lines.

        Each sub-step comes as ``(start, end, sub-step)``: from its marker to the end of
        its last line (the lines up to the next sub-step).
        """
        lines = self.text[start:end].splitlines(keepends=True)
        if len(lines) < 2:  # a sub-step needs a line of its own
            return end, []
        bodies = [ln.lstrip(_LINE_INDENT) for ln in lines]
        found = find_substeps(bodies, self.step_styles)
        if not found:
            return end, []
        offsets = list(itertools.accumulate((len(ln) for ln in lines), initial=start))

        def line_end(i: int) -> int:  # the end of line ``i``'s text, its line break left out
            return offsets[i] + len(lines[i].rstrip(" \t\r\n"))

        out = []
        for sub, nxt in zip(found, [*found[1:], None], strict=True):
            last = (nxt.line if nxt is not None else len(lines)) - 1
            first = offsets[sub.line] + len(lines[sub.line]) - len(bodies[sub.line])
            out.append((first, line_end(last), sub))
        return line_end(found[0].line - 1), out

    # -- events ---------------------------------------------------------------
    def walk(self, events: Iterable[tuple[Any, Range]]) -> Iterator[LayoutElement]:  # noqa: PLR0912
        """Handle the events in order; yield the elements they complete.

        The loop runs once per event (about one per 20 bytes of Markdown), so the
        decoding is written out here rather than in helpers: most events are text
        inside a paragraph or inside a kept-whole block, settled in a few steps.
        """
        out = self.out
        for ev, rng in events:
            if out:
                yield from out
                out.clear()
            opaque, para = self.opaque, self.para
            if type(ev) is str:  # SoftBreak, HardBreak, Rule
                if opaque is not None or (para is not None and ev in _BREAKS):
                    continue
                phase, name, payload = "leaf", ev, None
            else:
                ((key, body),) = ev.items()  # a pyromark event is a one-key dict
                if key == "Start" or key == "End":  # noqa: PLR1714 - two compares beat a set lookup here
                    phase = key
                    if type(body) is str:
                        name, payload = body, None
                    else:
                        ((name, payload),) = body.items()
                    if opaque is not None:
                        if name == opaque[0]:  # the block's own end, or a nested twin
                            self._in_opaque(phase, name, rng)
                        continue
                elif opaque is not None:
                    continue
                elif key == "Text" and para is not None:
                    para.add_text(body)
                    continue
                else:
                    phase, name, payload = "leaf", key, body
            if para is not None and not (phase == "End" and name == para.name):
                self._in_paragraph(phase, name, payload)
            elif phase == "leaf" or name in _INLINE_CONTAINERS:
                self._tight_inline(rng)
            elif phase == "Start":
                self._start(name, payload, self.char(rng["start"]))
            else:
                self._end(name, self.char(rng["end"]))
        yield from out
        out.clear()

    def _tight_inline(self, rng: Range) -> None:
        """Inline content straight inside a tight list item extends the item's own text."""
        if not self.items or self.items[-1].flushed:
            return
        item = self.items[-1]
        start, end = self.char(rng["start"]), self.char(rng["end"])
        if item.inline_start < 0:
            item.inline_start = start
        item.inline_end = max(item.inline_end, end)
        self.last_end = max(self.last_end, end)

    def _in_opaque(self, phase: str, name: str, rng: Range) -> None:
        assert self.opaque is not None  # noqa: S101 - caller checks
        kind, nesting, start = self.opaque
        if name != kind:
            return
        if phase == "Start":
            self.opaque = (kind, nesting + 1, start)
        elif phase == "End" and nesting:
            self.opaque = (kind, nesting - 1, start)
        elif phase == "End":
            self.opaque = None
            self._opaque_element(kind, start, self.char(rng["end"]))

    def _in_paragraph(self, phase: str, name: str, payload: object) -> None:
        para = self.para
        assert para is not None  # noqa: S101 - caller checks
        if para.name == "Heading":
            if phase == "leaf" and name in ("Text", "Code"):
                para.parts.append(str(payload))
        elif name == "Image" and phase == "Start" and para.image_depth == 0:
            para.image_url = str(payload.get("dest_url", "")) if isinstance(payload, dict) else ""
            para.image_depth = 1
            para.has_other = para.has_other or bool(para.parts)
        elif name == "Image" and phase == "End":
            para.image_depth = 0
        elif para.image_depth and phase == "leaf" and name == "Text":
            para.image_alt += str(payload)
        elif not para.image_depth and name not in _BREAKS:
            # Whitespace between an image and the paragraph end does not make it a text paragraph.
            para.has_other = para.has_other or name != "Text" or bool(str(payload).strip())

    def _start(self, name: str, payload: object, start: int) -> None:
        if self.items and not self.items[-1].flushed and name != "Paragraph":
            self.flush_item(self.items[-1], start)
        self.fill_gap(start)
        if name in _OPAQUE:
            self.opaque = (name, 0, start)
        elif name == "List":
            first = payload if isinstance(payload, int) and not isinstance(payload, bool) else 1
            list_id = self.items[-1].list_id if self.items else list_id_for(self.source_id, self.order)
            self.lists.append(_List(list_id, payload is not None, len(self.lists), first))
        elif name == "Item":
            self._start_item(start)
        elif name in ("Paragraph", "Heading"):
            level = int(str(payload["level"])[1:]) if isinstance(payload, dict) else 0
            self.para = _Paragraph(name, start, level)

    def _start_item(self, start: int) -> None:
        lst = self.lists[-1]
        m = _MD_MARKER.match(self.text, start)
        marker = m.group("m") if m else ""
        if lst.ordered and marker:
            # Markdown renumbers lists ("1. 1. 1." reads 1, 2, 3): keep what a reader sees.
            marker = f"{lst.next_number}{marker[-1]}"
            lst.next_number += 1
        parent = self.items[-1].element_id if self.items else None
        self.items.append(_Item(start, marker, lst.depth, parent, lst.list_id, lst.ordered))
        if m:
            self.last_end = max(self.last_end, m.end())

    def _end(self, name: str, end: int) -> None:
        if name == "List":
            self.lists.pop()
        elif name == "Item":
            self.flush_item(self.items.pop(), end)
        elif self.para is not None and name == self.para.name:
            para, self.para = self.para, None
            self._paragraph(para, end)
        self.last_end = max(self.last_end, end)

    def _paragraph(self, para: _Paragraph, end: int) -> None:
        if para.name == "Heading":
            title = _HTML_TAG.sub("", "".join(para.parts)).strip()
            heading = ElementDraft(ElementKind.SECTION_HEADER, title, level=para.level)
            self.emit(heading, para.start, end, inside=False)
            return
        item = self.items[-1] if self.items else None
        if item is not None and not item.flushed:
            item.inline_start, item.inline_end = para.start, end
            self.flush_item(item, end)
        elif para.image_url is not None and not para.has_other:
            picture = ElementDraft(ElementKind.PICTURE, para.image_alt, hints=(("url", para.image_url),))
            self.emit(picture, para.start, end)
        else:
            self._plain_paragraph(para.start, end)

    def _plain_paragraph(self, start: int, end: int) -> None:
        """A paragraph, split into items when its lines start with step markers (①, （1）, 手順1, ・)."""
        lines = self.text[start:end].splitlines(keepends=True)
        marks = [match_step_marker(ln.lstrip(_LINE_INDENT), self.step_styles) for ln in lines]
        first_mark = next((mk for mk in marks if mk is not None), None)
        link = _IN_PAGE_LINK.fullmatch(self.text, start, end)
        if link is not None and is_navigation(link.group("label")):
            # The page's link back up ("Back to list", 「一覧に戻る」): furniture, as in page text.
            draft = ElementDraft(ElementKind.PAGE_FOOTER, link.group("label"), hints=NAVIGATION_HINTS)
            self.emit(draft, start, end)
            return
        if first_mark is None or (len(lines) == 1 and first_mark.style.startswith("bullet")):
            admonition, _ = leading_label(self.text[start:end])
            self.emit(
                ElementDraft(ElementKind.TEXT, _prose(self.text[start:end]), admonition=admonition),
                start,
                end,
            )
            return
        nested = bool(self.items)
        own_list = self.items[-1].list_id if nested else list_id_for(self.source_id, self.order)
        pos = start
        group: list[tuple[int, int, str]] = []
        marker: tuple[str, bool] | None = None
        for line, mark in zip(lines, marks, strict=True):
            body = line.lstrip(_LINE_INDENT)
            line_end = pos + len(line.rstrip("\r\n"))
            if mark is not None:
                self._close_group(group, marker, own_list, nested)
                marker = (mark.marker, mark.ordered)
                body = body[mark.rest_start :]
            hard_break = "  " if _HARD_BREAK.search(line.rstrip("\r\n")) else ""  # kept for _clean_block
            group.append(
                (pos + len(line) - len(line.lstrip(_LINE_INDENT)), line_end, body.strip() + hard_break)
            )
            pos += len(line)
        self._close_group(group, marker, own_list, nested)

    def _close_group(
        self, group: list[tuple[int, int, str]], marker: tuple[str, bool] | None, list_id: str, nested: bool
    ) -> None:
        if not group:
            return
        text = _prose("\n".join(t for _, _, t in group))
        start, end = group[0][0], group[-1][1]
        group.clear()
        if marker is None:
            self.emit(ElementDraft(ElementKind.TEXT, text), start, end)
            return
        level = len(self.lists) if nested else 0
        item = ElementDraft(
            ElementKind.LIST_ITEM, text, level=level, number=marker[0], ordered=marker[1], list_id=list_id
        )
        self.emit(item, start, end)

    def _opaque_element(self, name: str, start: int, end: int) -> LayoutElement:
        raw = self.text[start:end]
        kind = _OPAQUE[name]
        if name == "BlockQuote":
            label, body = _quote_text(raw)
            return self.emit(ElementDraft(kind, body, admonition=label, hints=(("quote", "1"),)), start, end)
        if name == "MetadataBlock":
            m = _FM_TITLE.search(raw)
            title = m.group(1).strip().strip("'\"") if m else ""
            front = ElementDraft(kind, raw.strip(), hints=(("title", title),) if title else ())
            return self.emit(front, start, end, inside=False)
        if name in ("Table", "CodeBlock"):
            # The range starts at the block's first character; later lines carry the
            # indentation of the enclosing list item, removed up to that column.
            column = start - (self.text.rfind("\n", 0, start) + 1)
            first, *rest = raw.splitlines() or [""]
            body = "\n".join([first, *(_dedent(ln, column) for ln in rest)]).strip("\n")
            fence = first.strip()
            lang = fence.lstrip("`~").strip() if name == "CodeBlock" and fence[:3] in ("```", "~~~") else ""
            return self.emit(
                ElementDraft(kind, body, hints=(("language", lang),) if lang else ()), start, end
            )
        if name == "HtmlBlock":
            image = _HTML_IMG.fullmatch(raw.strip())
            if image is not None:  # an <img> on its own is a picture, as ![alt](src) would be
                alt = _HTML_ALT.search(image.group(0))
                # The image path itself, also inside templating (Vue's :src="$withBase('/a.png')").
                src = _IMAGE_PATH.search(image.group(0)) or _HTML_SRC.search(image.group(0))
                hints = (("url", src.group(src.lastindex or 0)),) if src else ()
                return self.emit(
                    ElementDraft(ElementKind.PICTURE, alt.group(1) if alt else "", hints=hints), start, end
                )
            html = ElementDraft(kind, _clean_block(_HTML_TAG.sub(" ", raw)), hints=(("html", "1"),))
            return self.emit(html, start, end)
        return self.emit(ElementDraft(kind, _clean_block(raw)), start, end)


def iter_markdown(
    text: str, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a Markdown document in reading order.

    Args:
        text: The Markdown source.
        source_id: Id of the document; element ids start with it.
        options: The reader options; their step styles are recognised in paragraphs
            that are not Markdown lists (``①``, ``（1）``, ``手順1``, ``・``…) and in
            sub-steps on an item's continuation lines.

    Yields:
        One element per block. Every non-whitespace character of ``text`` lies in
        the span of some element: markup between blocks (rules, reference
        definitions) becomes an element with empty text.
    """
    yield from _contents_lists(_walk(text, source_id, options), text)


def _walk(text: str, source_id: str, options: ReaderOptions) -> Iterator[LayoutElement]:
    walker = _Walker(text, source_id, options.step_styles)
    for start, end, events in segment_events(text):
        walker.char = CharIndex(text[start:end] if end - start < len(text) else text, start)
        yield from walker.walk(events)
    walker.fill_gap(len(text))
    yield from walker.out


def _contents_lists(elements: Iterable[LayoutElement], text: str) -> Iterator[LayoutElement]:
    """Make each list whose items are all in-page links (a table of contents) text, not steps.

    A page's own contents list (``- [Install](#install)`` …) names its sections; taken as
    a list it would be a procedure whose steps are section titles. Its items become text
    elements marked ``contents``, as a PDF's contents list does (their link texts kept).
    Elements are held back only while a list runs.
    """
    held: list[LayoutElement] = []
    for el in elements:
        if el.list_id is not None:
            held.append(el)
            continue
        if held:
            yield from _contents_made_text(held, text)
            held = []
        yield el
    if held:
        yield from _contents_made_text(held, text)


def _contents_made_text(run: list[LayoutElement], text: str) -> list[LayoutElement]:
    """``run`` (the elements of one or more lists) with its contents lists made text.

    A list is contents when each of its items is only in-page links and nothing but its
    items is in it (a paragraph, a picture or code inside an item makes it a list).
    """
    entries: dict[str, bool] = {}
    for el in run:
        if el.list_id is None:
            continue
        link_only = (
            el.kind is ElementKind.LIST_ITEM
            and el.span is not None
            and _CONTENTS_ITEM.fullmatch(text, el.span.start, el.span.end) is not None
        )
        entries[el.list_id] = entries.get(el.list_id, True) and link_only
    contents = {list_id for list_id, all_links in entries.items() if all_links}
    if not contents:
        return run
    entry_ids = {el.element_id for el in run if el.list_id in contents and el.kind is ElementKind.LIST_ITEM}
    out = []
    for el in run:
        if el.element_id in entry_ids:
            el = replace(  # noqa: PLW2901 - the element, made text
                el,
                kind=ElementKind.TEXT,
                level=0,
                number="",
                ordered=False,
                parent_id=None,
                list_id=None,
                hints=(*el.hints, *CONTENTS_HINTS),
            )
        elif el.list_id in contents or el.parent_id in entry_ids:
            el = replace(el, parent_id=None, list_id=None if el.list_id in contents else el.list_id)  # noqa: PLW2901
        out.append(el)
    return out


def read_markdown(
    text: str, *, source_id: str, options: ReaderOptions = DEFAULT_READER_OPTIONS
) -> list[LayoutElement]:
    """Return :func:`iter_markdown` as a list."""
    return list(iter_markdown(text, source_id=source_id, options=options))

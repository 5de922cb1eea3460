"""Markdown reader: CommonMark + GFM events from pyromark, turned into layout elements.

pyromark (a binding of the Rust ``pulldown-cmark`` parser) gives every event a
byte range into the source. We walk the events once, keep a small stack of list
and item contexts, and emit one :class:`LayoutElement` per block with its exact
character span, so that chunks can point back at their evidence.

Block quotes, tables, code blocks, HTML blocks, definition lists and footnote
definitions are kept whole (opaque): their inner events are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from procedure_rag._numbering import DEFAULT_STEP_STYLES, StepStyle, match_step_marker
from procedure_rag._text import join_lines
from procedure_rag._types import ElementKind, LayoutElement, Span

__all__ = ["iter_markdown", "looks_like_markdown", "read_markdown"]

_OPTIONS: Any = None


def _options() -> Any:
    global _OPTIONS  # noqa: PLW0603 - the parser options are computed once, lazily
    if _OPTIONS is None:
        import pyromark  # noqa: PLC0415 - compiled extension, imported on first use

        o = pyromark.Options
        _OPTIONS = (
            o.ENABLE_TABLES
            | o.ENABLE_GFM
            | o.ENABLE_YAML_STYLE_METADATA_BLOCKS
            | o.ENABLE_STRIKETHROUGH
            | o.ENABLE_TASKLISTS
            | o.ENABLE_FOOTNOTES
            | o.ENABLE_DEFINITION_LIST
            | o.ENABLE_MATH
        )
    return _OPTIONS


_OPAQUE = {
    "BlockQuote": ElementKind.TEXT,
    "Table": ElementKind.TABLE,
    "CodeBlock": ElementKind.CODE,
    "HtmlBlock": ElementKind.TEXT,
    "DefinitionList": ElementKind.TEXT,
    "FootnoteDefinition": ElementKind.FOOTNOTE,
    "MetadataBlock": ElementKind.FRONT_MATTER,
}
_INLINE_CONTAINERS = {
    "Emphasis",
    "Strong",
    "Strikethrough",
    "Link",
    "Image",
    "Superscript",
    "Subscript",
}
_MD_MARKER = re.compile(r"[ \t]*(?P<m>[-*+]|\d{1,9}[.)])")
_QUOTE_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
_GFM_ALERT = re.compile(r"^\s*\[!(?P<label>[A-Za-z]+)\]\s*$")
_LABEL_LINE = re.compile(
    r"^\s*(?:\*\*|__)?\s*(?P<label>注意|重要|警告|注|ヒント|メモ|補足|ポイント|Note|NOTE|Important|IMPORTANT|"
    r"Caution|CAUTION|Warning|WARNING|Tip|TIP)\s*(?:\*\*|__)?\s*[:：]?\s*(?:\*\*|__)?"
)
_FM_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_HTML_TAG = re.compile(r"<[^>\n]{0,500}>")
_MARKUP_ONLY = re.compile(r"[\s\-*_=#|:>`~]*")
_MARKDOWN_SIGNS = re.compile(
    r"^(?:#{1,6}\s|```|~~~|>\s|\s*[-*+]\s|\s*\d{1,9}[.)]\s|\|.*\|\s*$|---\s*$)", re.MULTILINE
)


def looks_like_markdown(text: str, *, sample: int = 50_000) -> bool:
    """Guess whether ``text`` is Markdown (headings, fences, lists, tables, quotes)."""
    head = text[:sample]
    signs = len(_MARKDOWN_SIGNS.findall(head))
    lines = head.count("\n") + 1
    return signs >= 2 and signs * 20 >= min(lines, 2000) // 10


class _CharIndex:
    """Maps UTF-8 byte offsets to character offsets in O(1) after one O(n) pass."""

    def __init__(self, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        if len(data) == len(text):
            self._prefix: np.ndarray[Any, Any] | None = None
        else:
            arr = np.frombuffer(data, dtype=np.uint8)
            starts = (arr & 0xC0) != 0x80
            self._prefix = np.concatenate(([0], np.cumsum(starts, dtype=np.int64)))

    def __call__(self, byte_offset: int) -> int:
        if self._prefix is None:
            return byte_offset
        return int(self._prefix[byte_offset])


@dataclass
class _Item:
    element_id: str
    start: int
    marker: str
    level: int
    parent_id: str | None
    list_id: str
    ordered: bool
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
class _State:
    text: str
    source_id: str
    char: _CharIndex
    step_styles: tuple[StepStyle, ...]
    order: int = 0
    lists: list[_List] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    root_list: str | None = None
    last_end: int = 0

    def next_id(self) -> str:
        return f"{self.source_id}#e{self.order}"


def _event_name(ev: Any) -> tuple[str, str, Any]:
    """Return ``(phase, name, payload)`` for a pyromark event."""
    if type(ev) is str:
        return "leaf", ev, None
    for phase, body in ev.items():
        if phase == "Start" or phase == "End":
            if type(body) is str:
                return phase, body, None
            for name, payload in body.items():
                return phase, name, payload
        return "leaf", phase, body
    return "leaf", "", None


def _clean_block(raw: str) -> str:
    lines = [ln.strip() for ln in raw.splitlines()]
    return join_lines([ln for ln in lines if ln])


def _quote_text(raw: str) -> tuple[str, str]:
    """Strip ``>`` prefixes; return ``(admonition label, text)``."""
    body = _QUOTE_PREFIX.sub("", raw)
    lines = [ln for ln in body.splitlines() if ln.strip()]
    label = ""
    if lines:
        alert = _GFM_ALERT.match(lines[0])
        if alert:
            label = alert.group("label").lower()
            lines = lines[1:]
        else:
            m = _LABEL_LINE.match(lines[0])
            if m:
                label = m.group("label")
                label = label.lower() if label.isascii() else label
                rest = lines[0][m.end() :].strip()
                lines = ([rest] if rest else []) + lines[1:]
    return label, join_lines([ln.strip() for ln in lines])


def _front_matter_title(raw: str) -> str:
    """The ``title:`` of YAML front matter, read without a YAML parser (a plain scalar suffices)."""
    m = _FM_TITLE.search(raw)
    return m.group(1).strip().strip("'\"") if m else ""


def _emit(
    st: _State,
    kind: ElementKind,
    text: str,
    start: int,
    end: int,
    *,
    level: int = 0,
    number: str = "",
    ordered: bool = False,
    parent_id: str | None = None,
    list_id: str | None = None,
    admonition: str = "",
    hints: tuple[tuple[str, str], ...] = (),
    element_id: str | None = None,
) -> LayoutElement:
    el = LayoutElement(
        element_id=element_id or st.next_id(),
        kind=kind,
        text=text,
        order=st.order,
        span=Span(start, end),
        level=level,
        number=number,
        ordered=ordered,
        parent_id=parent_id,
        list_id=list_id,
        admonition=admonition,
        hints=hints,
    )
    st.order += 1
    return el


def _context(st: _State) -> tuple[str | None, str | None]:
    """Return ``(parent item id, root list id)`` for a block opening now."""
    if not st.items:
        return None, None
    return st.items[-1].element_id, st.root_list


def _flush_item(st: _State, item: _Item, end: int | None = None) -> Iterator[LayoutElement]:
    """Emit the item's own element (marker plus tight text) once."""
    if item.flushed:
        return
    item.flushed = True
    item.element_id = st.next_id()
    if item.inline_start >= 0:
        text = _clean_block(st.text[item.inline_start : item.inline_end])
        stop = item.inline_end
    else:
        text = ""
        stop = end if end is not None else item.start + len(item.marker)
    parent = item.parent_id
    yield _emit(
        st,
        ElementKind.LIST_ITEM,
        text,
        item.start,
        max(stop, item.start),
        level=item.level,
        number=item.marker,
        ordered=item.ordered,
        parent_id=parent,
        list_id=item.list_id,
        element_id=item.element_id,
    )


def _split_pseudo_list(
    st: _State, start: int, end: int, parent_id: str | None, list_id: str | None
) -> list[LayoutElement] | None:
    """Split a paragraph whose lines start with step markers (①, （1）, 手順1, ・…) into items."""
    raw = st.text[start:end]
    lines = raw.splitlines(keepends=True)
    if len(lines) < 1:
        return None
    marks = [match_step_marker(ln.lstrip(" \t\u3000"), st.step_styles) for ln in lines]
    if not any(marks):
        return None
    if len(lines) == 1 and marks[0] is not None and marks[0].style == "bullet":
        return None
    out: list[LayoutElement] = []
    own_list = list_id or f"{st.source_id}#l{st.order}"
    pos = start
    group: list[tuple[int, int, str]] = []  # (line start, line end, text)
    current: tuple[int, str, bool] | None = None  # (start, marker, ordered)

    def close() -> None:
        if not group:
            return
        g_start, g_end = group[0][0], group[-1][1]
        if current is None:
            out.append(
                _emit(st, ElementKind.TEXT, join_lines([t for _, _, t in group]), g_start, g_end,
                      parent_id=parent_id, list_id=list_id)
            )
        else:
            out.append(
                _emit(st, ElementKind.LIST_ITEM, join_lines([t for _, _, t in group]), g_start, g_end,
                      number=current[1], ordered=current[2], parent_id=parent_id, list_id=own_list,
                      level=1 if parent_id else 0)
            )
        group.clear()

    for ln, mark in zip(lines, marks, strict=True):
        line_end = pos + len(ln.rstrip("\r\n"))
        stripped = ln.lstrip(" \t\u3000")
        lead = len(ln) - len(stripped)
        if mark is not None:
            close()
            current = (pos, mark.marker, mark.ordered)
            group.append((pos, line_end, stripped[mark.rest_start :].strip()))
        else:
            group.append((pos, line_end, ln[lead:].strip()))
        pos += len(ln)
    close()
    return out


def iter_markdown(
    text: str, *, source_id: str, step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES
) -> Iterator[LayoutElement]:
    """Yield the layout elements of a Markdown document in reading order.

    Args:
        text: The Markdown source.
        source_id: Id of the document; element ids start with it.
        step_styles: Step numbering styles recognised in paragraphs that are not
            Markdown lists (``①``, ``（1）``, ``手順1``, ``・``…).

    Yields:
        One element per block. Every non-whitespace character of ``text`` lies in
        the span of some element: markup between blocks (rules, reference
        definitions) becomes an element with empty text.
    """
    import pyromark  # noqa: PLC0415 - compiled extension, imported on first use

    st = _State(text=text, source_id=source_id, char=_CharIndex(text), step_styles=step_styles)
    opaque: tuple[str, int, int] | None = None  # (name, nesting, start)
    block: tuple[str, int, Any] | None = None  # (name, start, payload)
    heading_parts: list[str] = []
    image: tuple[str, str] | None = None  # (url, alt) when a paragraph holds only an image
    para_has_other = False
    inline_depth = 0

    def gap_filler(upto: int) -> Iterator[LayoutElement]:
        gap = text[st.last_end : upto]
        if gap.strip():
            stripped = gap.strip()
            lead = st.last_end + (len(gap) - len(gap.lstrip()))
            end = lead + len(stripped)
            body = "" if _MARKUP_ONLY.fullmatch(stripped) else _clean_block(stripped)
            parent, root = _context(st)
            yield _emit(st, ElementKind.TEXT, body, lead, end, parent_id=parent, list_id=root,
                        hints=(("markup", "1"),))
        st.last_end = max(st.last_end, upto)

    for ev, rng in pyromark.events_with_range(text, options=_options()):
        phase, name, payload = _event_name(ev)

        # Fast paths first: events inside an opaque block or a paragraph need no offsets.
        if opaque is not None:
            if name == opaque[0]:
                if phase == "Start":
                    opaque = (opaque[0], opaque[1] + 1, opaque[2])
                elif phase == "End":
                    if opaque[1] > 0:
                        opaque = (opaque[0], opaque[1] - 1, opaque[2])
                    else:
                        end = st.char(rng["end"])
                        o_start = opaque[2]
                        opaque = None
                        yield from _emit_opaque(st, name, o_start, end)
                        st.last_end = max(st.last_end, end)
            continue

        if block is not None and not (phase == "End" and name == block[0]):
            if block[0] == "Heading":
                if phase == "leaf" and name in ("Text", "Code"):
                    heading_parts.append(str(payload))
            elif name == "Image" and phase == "Start" and inline_depth == 0:
                image = (str(payload.get("dest_url", "")), "")
                inline_depth += 1
            elif name == "Image" and phase == "End":
                inline_depth -= 1
            elif phase == "leaf" and name == "Text" and image is not None and inline_depth > 0:
                image = (image[0], image[1] + str(payload))
            elif phase == "Start" and name in _INLINE_CONTAINERS:
                para_has_other = para_has_other or inline_depth == 0
            elif phase == "leaf" and inline_depth == 0 and name not in ("SoftBreak", "HardBreak"):
                if not (name == "Text" and not str(payload).strip()):
                    para_has_other = True
            continue

        start, end = st.char(rng["start"]), st.char(rng["end"])

        if phase == "Start" and block is None and name not in _INLINE_CONTAINERS:
            if st.items and not st.items[-1].flushed and name != "Paragraph":
                yield from _flush_item(st, st.items[-1], start)
            yield from gap_filler(start)

        if phase == "Start" and name in _OPAQUE and block is None:
            opaque = (name, 0, start)
            continue

        if name == "List" and block is None:
            if phase == "Start":
                depth = len(st.lists)
                lid = f"{source_id}#l{st.order}"
                if depth == 0:
                    st.root_list = lid
                first = int(payload) if isinstance(payload, int) and not isinstance(payload, bool) else 1
                st.lists.append(_List(lid, payload is not None, depth, first))
            elif phase == "End":
                st.lists.pop()
                if not st.lists:
                    st.root_list = None
                st.last_end = max(st.last_end, end)
            continue

        if name == "Item" and block is None:
            if phase == "Start":
                lst = st.lists[-1]
                m = _MD_MARKER.match(text, start)
                marker = m.group("m") if m else ""
                if lst.ordered and marker:
                    # Markdown renumbers lists ("1. 1. 1." reads as 1, 2, 3): keep what a reader sees.
                    marker = f"{lst.next_number}{marker[-1]}"
                    lst.next_number += 1
                parent = st.items[-1].element_id if st.items else None
                # The item's id is given when its own element is emitted (see _flush_item).
                st.items.append(
                    _Item("", start, marker, lst.depth, parent, st.root_list or lst.list_id, lst.ordered)
                )
                st.last_end = max(st.last_end, start + len(m.group(0)) if m else start)
            elif phase == "End":
                item = st.items.pop()
                yield from _flush_item(st, item, end)
                st.last_end = max(st.last_end, end)
            continue

        if phase == "Start" and name in ("Paragraph", "Heading") and block is None:
            block = (name, start, payload)
            heading_parts = []
            image = None
            para_has_other = False
            inline_depth = 0
            continue

        if phase == "End" and block is not None and name == block[0]:
            b_name, b_start, b_payload = block
            block = None
            st.last_end = max(st.last_end, end)
            if b_name == "Heading":
                level = int(str(b_payload["level"])[1:]) if isinstance(b_payload, dict) else 1
                title = _HTML_TAG.sub("", "".join(heading_parts)).strip()
                yield _emit(st, ElementKind.SECTION_HEADER, title, b_start, end, level=level)
                continue
            item = st.items[-1] if st.items else None
            if item is not None and not item.flushed:
                item.inline_start, item.inline_end = b_start, end
                yield from _flush_item(st, item, end)
                continue
            parent, root = _context(st)
            if image is not None and not para_has_other:
                yield _emit(st, ElementKind.PICTURE, image[1], b_start, end, parent_id=parent,
                            list_id=root, hints=(("url", image[0]),))
                continue
            split = _split_pseudo_list(st, b_start, end, parent, root)
            if split is not None:
                yield from split
                continue
            yield _emit(st, ElementKind.TEXT, _clean_block(text[b_start:end]), b_start, end,
                        parent_id=parent, list_id=root)
            continue

        # Inline content directly inside a tight list item.
        if st.items and not st.items[-1].flushed and phase in ("leaf", "Start", "End"):
            item = st.items[-1]
            if item.inline_start < 0:
                item.inline_start = start
            item.inline_end = max(item.inline_end, end)
            st.last_end = max(st.last_end, end)
            continue

        if phase == "leaf" and name == "Rule":
            continue

    yield from gap_filler(len(text))


def _dedent(line: str, column: int) -> str:
    """Remove up to ``column`` leading spaces from ``line``."""
    stripped = line.lstrip(" ")
    return line[min(column, len(line) - len(stripped)) :]


def _emit_opaque(st: _State, name: str, start: int, end: int) -> Iterator[LayoutElement]:
    raw = st.text[start:end]
    parent, root = _context(st)
    kind = _OPAQUE[name]
    if name == "BlockQuote":
        label, body = _quote_text(raw)
        yield _emit(st, kind, body, start, end, parent_id=parent, list_id=root, admonition=label,
                    hints=(("quote", "1"),))
    elif name == "MetadataBlock":
        title = _front_matter_title(raw)
        yield _emit(st, kind, raw.strip(), start, end, hints=(("title", title),) if title else ())
    elif name in ("Table", "CodeBlock"):
        # The range starts at the block's first character; later lines carry the
        # indentation of the enclosing list item, which is removed up to that column.
        column = start - (st.text.rfind("\n", 0, start) + 1)
        first, *rest = raw.splitlines() or [""]
        body = "\n".join([first, *(_dedent(ln, column) for ln in rest)]).strip("\n")
        lang = ""
        if name == "CodeBlock":
            first = body.split("\n", 1)[0].strip()
            lang = first.lstrip("`~").strip() if first[:3] in ("```", "~~~") else ""
        yield _emit(st, kind, body, start, end, parent_id=parent, list_id=root,
                    hints=(("language", lang),) if lang else ())
    elif name == "HtmlBlock":
        body = _clean_block(_HTML_TAG.sub(" ", raw))
        yield _emit(st, kind, body, start, end, parent_id=parent, list_id=root, hints=(("html", "1"),))
    else:
        yield _emit(st, kind, _clean_block(raw), start, end, parent_id=parent, list_id=root)


def read_markdown(
    text: str, *, source_id: str, step_styles: tuple[StepStyle, ...] = DEFAULT_STEP_STYLES
) -> list[LayoutElement]:
    """Return :func:`iter_markdown` as a list."""
    return list(iter_markdown(text, source_id=source_id, step_styles=step_styles))

"""The Markdown parser's events, a segment at a time, with their byte offsets made characters.

pyromark (a binding of the Rust ``pulldown-cmark`` parser) builds every event of its
input at once, about four times the input in memory. :func:`segment_events` parses a
long document in segments that parse as they would within the whole (see its
docstring); :class:`CharIndex` maps an event's UTF-8 byte range in its segment to
character offsets in the document. The Markdown reader
(:mod:`procedure_rag._readers.markdown`) walks the events.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable, Iterator
from functools import cache, partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyromark import Options
    from pyromark.event import Range

__all__ = ["SEGMENT_CHARS", "CharIndex", "parser_options", "segment_events"]


@cache
def parser_options() -> Options:
    import pyromark  # noqa: PLC0415 - compiled extension, imported on first use

    o = pyromark.Options
    return (
        o.ENABLE_TABLES
        | o.ENABLE_GFM
        | o.ENABLE_YAML_STYLE_METADATA_BLOCKS
        | o.ENABLE_STRIKETHROUGH
        | o.ENABLE_TASKLISTS
        | o.ENABLE_FOOTNOTES
        | o.ENABLE_DEFINITION_LIST
        | o.ENABLE_MATH
    )


class CharIndex:
    """Maps UTF-8 byte offsets to character offsets with little memory.

    It keeps the UTF-8 bytes and the character count at the start of every
    block of ``_BLOCK`` bytes, so memory stays near the size of the input and a
    lookup counts the characters of at most one block. Lookups come in nearly
    increasing order, so the last answer is the starting point when it is near.
    """

    _BLOCK = 4096
    #: UTF-8 continuation bytes: every other byte starts a character.
    _CONTINUATION = bytes(range(0x80, 0xC0))

    def __init__(self, text: str, base: int = 0) -> None:
        self._base = base  # character offset of ``text`` in the whole document
        data = text.encode("utf-8")
        self._data = data if len(data) != len(text) else b""  # ASCII: offsets are the same
        self._starts = [0]
        drop = self._CONTINUATION
        for pos in range(0, len(self._data), self._BLOCK):
            block = data[pos : pos + self._BLOCK]
            self._starts.append(self._starts[-1] + len(block.translate(None, drop)))
        self._last = (0, 0)

    def __call__(self, byte_offset: int) -> int:
        data = self._data
        if not data:
            return self._base + byte_offset
        near, chars = self._last
        if near <= byte_offset < near + self._BLOCK:
            chars += len(data[near:byte_offset].translate(None, self._CONTINUATION))
        elif byte_offset < near and near - byte_offset < self._BLOCK:
            chars -= len(data[byte_offset:near].translate(None, self._CONTINUATION))
        else:
            near = byte_offset - byte_offset % self._BLOCK
            chars = self._starts[near // self._BLOCK]
            chars += len(data[near:byte_offset].translate(None, self._CONTINUATION))
        self._last = (byte_offset, chars)
        return self._base + chars


#: Documents longer than this many characters are parsed in segments of about this size.
SEGMENT_CHARS = 1 << 19
# A top-level ATX heading: where a segment may start (it closes every open block but a few).
_SEGMENT_START = re.compile(r"^#{1,6}(?:[ \t]|$)", re.MULTILINE)
# Lines that may open a block a heading line does not close: a fence or an HTML block.
_MAY_SPAN = re.compile(r"^[ \t]{0,3}(?:```|~~~|<)", re.MULTILINE)
_FRONT_MATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
#: Top-level blocks that a heading line does not close: a segment must not end in one.
_SPANNING = frozenset({"CodeBlock", "HtmlBlock", "MetadataBlock"})
# Every "[" that opens a bracketed label (overlapping: "[a [b]" holds "[b]" too).
_BRACKETED = re.compile(r"(?=(\[[^\]]{1,999}\]))")
# A link reference or footnote definition (its label may wrap), inside quotes and lists too.
_DEFINITION = re.compile(r"^[ \t>*+\-0-9.)]*\[([^\]]{1,999})\]:", re.MULTILINE)


def segment_events(text: str) -> Iterator[tuple[int, int, Iterable[tuple[Any, Range]]]]:
    """The parser's events of ``text``, as ``(start, end, events)`` per segment.

    pyromark builds every event of its input at once (about four times the input in
    memory), so a long document is parsed in segments that start at top-level ATX
    headings: a heading line closes every open block (lists, quotes, tables,
    paragraphs), so each segment parses as it does within the whole document. Not
    where that could differ: no cut falls between a reference or footnote definition
    and a use of its label, and a segment whose last top-level block is code, HTML or
    front matter (which a heading line does not close) runs on to the next start.
    ``start`` and ``end`` are character offsets; event ranges are UTF-8 bytes of
    their own segment.
    """
    import pyromark  # noqa: PLC0415 - compiled extension, imported on first use

    options = parser_options()
    if len(text) <= SEGMENT_CHARS:
        yield 0, len(text), pyromark.events_with_range(text, options=options)
        return
    blocked = _definition_ranges(text)
    if text.startswith("---"):  # front matter: a "# comment" line in it is no heading
        closing = _FRONT_MATTER_END.search(text, 3)
        blocked.append((0, closing.end() if closing else len(text)))
    start = 0
    for m in itertools.chain(_SEGMENT_START.finditer(text, SEGMENT_CHARS), [None]):
        end = len(text) if m is None else m.start()
        if m is not None and (end - start < SEGMENT_CHARS or any(a < end <= b for a, b in blocked)):
            continue
        segment = text[start:end]
        if m is not None and (_MAY_SPAN.search(segment) or segment.startswith("---")):
            # A first parse only to see the last block: the events come one at a time,
            # and keeping them all to yield them after would undo what segments save.
            last = deque(pyromark.events_with_range(segment, options=options), maxlen=1)
            if last and _block_name(last[0][0]) in _SPANNING:
                continue  # the block may run past the heading: cut at a later one
        yield start, end, pyromark.events_with_range(segment, options=options)
        start = end


def _definition_ranges(text: str) -> list[tuple[int, int]]:
    """Ranges no cut may fall in: each use of a defined label to its nearest definition.

    A definition applies anywhere in the document (the first one of a label wins), so
    a segment needs one of its own for each label it uses; that holds when all the
    definitions of the label read the same. When they do not, the cut may fall
    nowhere between the first and the last of the label's definitions and uses.
    """
    defs: dict[str, list[tuple[int, str]]] = {}
    for m in _DEFINITION.finditer(text):
        body_end = text.find("\n", text.find("\n", m.end()) + 1)  # its line and the next (a title)
        body = text[m.end() : body_end if body_end >= 0 else len(text)]
        defs.setdefault(m.group(1).casefold(), []).append((m.start(), body))
    if not defs:
        return []
    uses = _label_uses(text, [f"[{label}]" for label in defs])
    if uses is None:
        return [(0, len(text))]
    out = []
    for label, found in defs.items():
        needle = f"[{label}]"
        starts = [start for start, _ in found]
        if len({body for _, body in found}) > 1:
            every = starts + uses[needle]
            out.append((min(every), max(every) + len(needle)))
            continue
        for use in uses[needle]:
            i = bisect_left(starts, use)  # the definitions around the use; the nearer one counts
            nearest = min(starts[max(0, i - 1) : i + 1], key=partial(_distance, use))
            out.append((min(use, nearest), max(use, nearest) + len(needle)))
    return out


def _distance(a: int, b: int) -> int:
    return abs(a - b)


def _label_uses(text: str, needles: list[str], window: int = 1 << 16) -> dict[str, list[int]] | None:
    """Offsets of each (casefolded) needle in ``text`` casefolded, a window at a time.

    One pass over the text whatever the number of needles: every ``[`` that opens a
    bracketed label is looked up among them. ``None`` when folding changes the length
    of some window (offsets would move). A window holds a slice of the text and its
    folded copy, so it is kept small: at a million characters the two copies were the
    highest memory of chunking a long document (8.4x the input on 2 MB, 5.4x since).
    """
    found: dict[str, list[int]] = {needle: [] for needle in needles}
    overlap = max(map(len, needles))
    for base in range(0, len(text), window):
        raw = text[base : base + window + overlap]
        folded = raw.casefold()
        if len(folded) != len(raw):
            return None
        for m in _BRACKETED.finditer(folded):
            if m.start() >= window:
                break  # the next window finds it
            positions = found.get(m.group(1))
            if positions is not None:
                positions.append(base + m.start())
    return found


def _block_name(event: Any) -> str:  # noqa: ANN401 - a pyromark event
    """The block an ``End`` event closes, or ``""`` for any other event."""
    if type(event) is str:
        return ""
    ((key, body),) = event.items()
    if key != "End":
        return ""
    return body if type(body) is str else next(iter(body))

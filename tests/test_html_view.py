"""The ``show`` page: a document drawn with its chunks as coloured blocks.

Unit tests read the page with the standard library's HTML parser; the integration tests
open it in Debian's headless Chromium, take a screenshot and decode the PNG here.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from procedure_rag import Chunk, ChunkLevel, ChunkType, ProcedureChunker, ProcedureStep, Span
from procedure_rag._chunking.options import ChunkerOptions
from procedure_rag._cli.html_view import _PALETTE, render_document_html

DOCUMENTS = {
    "ja": "hololens/ja/hololens-recovery.md",
    "en": "hololens/en/hololens-recovery.md",
}
BUDGET = 400


# ----- a small DOM, enough to ask where things sit ----------------------------------------


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    parent: Node | None = None
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, cls: str) -> list[Node]:
        return [n for n in self.iter() if cls in n.classes()]

    def ancestors(self) -> Iterator[Node]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent


_VOID = {"meta", "br", "img", "link", "hr", "input"}


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        if tag not in _VOID:
            self.current = node

    def handle_endtag(self, tag: str) -> None:
        assert self.current.tag == tag, f"</{tag}> closes <{self.current.tag}>"
        assert self.current.parent is not None
        self.current = self.current.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(page: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(page)
    builder.close()
    assert builder.current is builder.root, f"<{builder.current.tag}> left open"
    return builder.root


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


# ----- fixtures -------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    text: str
    chunks: list[Chunk]
    page: str

    @property
    def children(self) -> list[Chunk]:
        return [c for c in self.chunks if c.level is ChunkLevel.CHILD]


def render_file(path: Path) -> Rendered:
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=BUDGET))
    text = path.read_text(encoding="utf-8")
    chunks = list(chunker.iter_chunks_from_source(text, source_id=path.name, suffix=path.suffix))
    page = render_document_html(text, chunks, title=path.name, length=chunker.length, budget=BUDGET)
    return Rendered(text, chunks, page)


@pytest.fixture(scope="module", params=sorted(DOCUMENTS))
def rendered(request: pytest.FixtureRequest, tests_data: Path) -> Rendered:
    return render_file(tests_data / DOCUMENTS[request.param])


def child(chunk_id: str, spans: tuple[Span, ...], **kwargs: object) -> Chunk:
    values: dict[str, object] = {
        "chunk_id": chunk_id,
        "text": "text of " + chunk_id,
        "chunk_type": ChunkType.TEXT,
        "level": ChunkLevel.CHILD,
        "section_path": (),
        "source_id": "doc",
        "language": "en",
        "source_spans": spans,
    }
    values.update(kwargs)
    return Chunk(**values)  # type: ignore[arg-type]


# ----- what the page holds --------------------------------------------------------------


def test_every_chunk_and_every_step_is_on_the_page(rendered: Rendered) -> None:
    root = parse(rendered.page)
    drawn = {n.attrs["data-chunk-id"]: n for n in root.iter() if "data-chunk-id" in n.attrs}
    assert set(drawn) == {c.chunk_id for c in rendered.chunks}
    for chunk in rendered.children:
        card_text = drawn[chunk.chunk_id].find_all("card")[0].text()
        for step in chunk.steps:
            assert (step.action or step.text) in card_text
    assert sum(len(c.steps) for c in rendered.children) > 10  # the document has procedures


def test_blocks_hold_exactly_the_covered_text_in_order(rendered: Rendered) -> None:
    root = parse(rendered.page)
    blocks = [n for n in root.iter() if n.attrs.get("data-level") == "child"]
    assert [b.attrs["data-chunk-id"] for b in blocks] == [c.chunk_id for c in rendered.children]
    for block, chunk in zip(blocks, rendered.children, strict=True):
        covered = [n.text() for n in block.find_all("in")]
        assert covered == [rendered.text[s.start : s.end] for s in chunk.source_spans]


def test_no_text_is_lost(rendered: Rendered) -> None:
    """Blocks and uncovered rows, read top to bottom, give back the whole document."""
    root = parse(rendered.page)
    shown = "".join(n.text() for n in root.find_all("src"))
    assert squash(shown) == squash(rendered.text)


def test_uncovered_text_is_marked(rendered: Rendered) -> None:
    # Both documents open with YAML front matter that no chunk covers.
    root = parse(rendered.page)
    uncovered = [n for n in root.iter() if "data-uncovered" in n.attrs]
    assert uncovered
    assert "title:" in uncovered[0].text()
    assert rendered.text.startswith("---\ntitle:")
    assert all(n.attrs.get("data-level") != "child" for u in uncovered for n in u.ancestors())


def test_children_sit_inside_their_parent_outline(rendered: Rendered) -> None:
    root = parse(rendered.page)
    parents = {c.chunk_id for c in rendered.chunks if c.level is ChunkLevel.PARENT}
    checked = 0
    for block in (n for n in root.iter() if n.attrs.get("data-level") == "child"):
        chunk = next(c for c in rendered.children if c.chunk_id == block.attrs["data-chunk-id"])
        outline = [a for a in block.ancestors() if a.attrs.get("data-level") == "parent"]
        if chunk.parent_id in parents:
            assert [a.attrs["data-chunk-id"] for a in outline] == [chunk.parent_id]
            checked += 1
        else:
            assert outline == []
    assert checked == len(rendered.children)


def test_why_a_chunk_starts_where_it_does(rendered: Rendered) -> None:
    root = parse(rendered.page)
    cards = {
        n.attrs["data-chunk-id"]: n.find_all("card")[0].text()
        for n in root.iter()
        if n.attrs.get("data-level") == "child"
    }
    continued = [c for c in rendered.children if c.continued]
    assert continued
    for chunk in continued:
        assert "continues the block above, which went over the budget" in cards[chunk.chunk_id]
    for before, chunk in zip(rendered.children, rendered.children[1:], strict=False):
        if not chunk.continued and chunk.section_path != before.section_path:
            assert f"new section: {chunk.section_path[-1]}" in cards[chunk.chunk_id]
    for chunk in rendered.children:
        assert f" / {BUDGET} tokens" in cards[chunk.chunk_id]


def test_conditions_are_highlighted(rendered: Rendered) -> None:
    root = parse(rendered.page)
    marked = {n.text() for n in root.iter() if n.tag == "mark" and "cond" in n.classes()}
    expected = {s.condition for c in rendered.children for s in c.steps if s.condition}
    expected |= {c.condition for c in rendered.children if c.condition}
    assert expected
    assert expected <= marked


def test_cautions_are_highlighted(tests_data: Path) -> None:
    result = render_file(tests_data / "hololens/en/hololens-provisioning.md")
    root = parse(result.page)
    marked = {n.text() for n in root.iter() if n.tag == "mark" and "caut" in n.classes()}
    expected = {s.caution for c in result.children for s in c.steps if s.caution}
    assert expected
    assert expected <= marked


def test_japanese_renders_as_text_with_japanese_fonts(tests_data: Path) -> None:
    result = render_file(tests_data / DOCUMENTS["ja"])
    assert '<meta charset="utf-8">' in result.page
    assert '<html lang="ja">' in result.page
    assert "ハード再起動の手順" in result.page  # as characters, not character references
    assert re.search(r"--sans:[^;]*\"Noto Sans CJK JP\"[^;]*\"IPAPGothic\"", result.page)
    assert "IPAGothic" in result.page.split("--mono:", 1)[1].split(";", 1)[0]


# ----- escaping and isolation -----------------------------------------------------------

HOSTILE = """# Setup <script>alert(1)</script>

Read this first <img src=x onerror="alert(2)"> and "quotes" & ampersands.

If the light is <b>red</b>, do the following:

1. Press the <script>alert(3)</script> button.
2. Close the lid.
"""


def test_untrusted_text_is_escaped_everywhere() -> None:
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=BUDGET))
    chunks = chunker.chunk(HOSTILE, source_id='doc"><script>alert(4)</script>')
    page = render_document_html(HOSTILE, chunks, title="<script>alert(5)</script>", length=chunker.length)
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;script&gt;alert(5)&lt;/script&gt;" in page
    root = parse(page)
    tags = {n.tag for n in root.iter()}
    assert not tags & {"script", "img", "iframe", "object", "embed", "link"}
    assert "&lt;b&gt;red&lt;/b&gt;" in page
    assert not [n for n in root.iter() if n.tag == "b" and n.text() == "red"]
    for node in root.iter():
        assert not any(name.startswith("on") for name in node.attrs), node
        assert node.attrs.get("href", "#").startswith("#")
    assert squash("".join(n.text() for n in root.find_all("src"))) == squash(HOSTILE)


def test_nothing_can_be_fetched() -> None:
    text = "Intro ![x](http://example.com/x.png) and [y](https://example.com/)."
    page = render_document_html(text, [child("a", (Span(0, len(text)),))], title="t")
    assert "default-src 'none'" in page
    root = parse(page)
    for node in root.iter():
        assert "src" not in node.attrs
        assert node.tag not in {"link", "script", "img"}
    assert "url(" not in page
    assert "@import" not in page


# ----- hand-made chunks: coverage, overlaps, leftovers, errors ---------------------------


def test_uncovered_stretches_and_gaps_inside_a_block() -> None:
    text = "Alpha covered.\nDropped line.\nBeta covered.   \n\nNever chunked tail."
    a = child("a", (Span(0, 14),))
    b = child("b", (Span(29, 33), Span(34, 42)))
    root = parse(render_document_html(text, [a, b], title="t"))
    rows = [n for n in root.iter() if "row" in n.classes()]
    kinds = [("uncovered" if "data-uncovered" in r.attrs else r.attrs["data-chunk-id"]) for r in rows]
    assert kinds == ["a", "uncovered", "b", "uncovered"]
    assert rows[1].find_all("src")[0].text() == "Dropped line."
    assert rows[3].find_all("src")[0].text() == "Never chunked tail."
    assert [n.text() for n in rows[2].find_all("skip")] == [" "]
    assert [n.text() for n in rows[2].find_all("in")] == ["Beta", "covered."]


def test_whitespace_between_chunks_draws_no_row() -> None:
    text = "One.\n\n\nTwo."
    root = parse(
        render_document_html(text, [child("a", (Span(0, 4),)), child("b", (Span(7, 11),))], title="t")
    )
    assert not [n for n in root.iter() if "data-uncovered" in n.attrs]


def test_long_uncovered_text_folds() -> None:
    text = "x\n" * 50 + "covered"
    page = render_document_html(text, [child("a", (Span(100, 107),))], title="t")
    folded = [n for n in parse(page).iter() if "folded" in n.classes()]
    assert len(folded) == 1
    assert folded[0].iter().__next__().tag == "div"
    assert any(n.tag == "details" for n in folded[0].iter())


def test_overlapping_chunks_are_flagged() -> None:
    text = "0123456789abcdef"
    page = render_document_html(text, [child("a", (Span(0, 10),)), child("b", (Span(6, 16),))], title="t")
    assert "overlaps C1 by 4 characters" in page


def test_chunks_without_spans_and_childless_parents_are_listed() -> None:
    text = "Body."
    lone = child("nospan", ())
    parent = Chunk(
        chunk_id="orphan-parent",
        text="p",
        chunk_type=ChunkType.TEXT,
        level=ChunkLevel.PARENT,
        section_path=("S",),
        source_id="doc",
        language="en",
        child_ids=("gone",),
    )
    page = render_document_html(text, [child("a", (Span(0, 5),)), lone, parent], title="t")
    assert "Chunks with no position in the text" in page
    assert "Parents with no child drawn" in page
    root = parse(page)
    ids = [n.attrs["data-chunk-id"] for n in root.iter() if "data-chunk-id" in n.attrs]
    assert ids == ["a", "nospan", "orphan-parent"]


def test_steps_table_shows_only_fields_that_are_set() -> None:
    text = "1. Press it."
    step = ProcedureStep(number="1.", text="Press it.", action="Press it.", caution="Hot <surface>")
    chunk = child("a", (Span(0, len(text)),), chunk_type=ChunkType.PROCEDURE, steps=(step,))
    root = parse(render_document_html(text, [chunk], title="t"))
    table = next(n for n in root.iter() if n.tag == "table")
    headers = [n.text() for n in table.iter() if n.tag == "th"]
    assert headers == ["#", "action", "caution"]
    assert "Hot <surface>" in table.text()


def test_sizes_are_shown_only_with_a_length_function() -> None:
    text = "Some words here."
    chunk = child("a", (Span(0, len(text)),))
    assert "tokens" not in render_document_html(text, [chunk], title="t")
    assert len(chunk.text) == 9
    assert '<span class="size">9 tokens</span>' in render_document_html(text, [chunk], title="t", length=len)
    with_length = render_document_html(text, [chunk], title="t", length=len, budget=5)
    assert "9 / 5 tokens" in with_length
    assert 'class="bar over"' in with_length


def test_a_span_past_the_text_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"^chunk a has span \[0, 9\) past the end of the text \(3 characters\): "
    ):
        render_document_html("abc", [child("a", (Span(0, 9),))], title="t")


# ----- in a real browser ----------------------------------------------------------------

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)
WINDOW = (1280, 2000)


def _require(what: str, found: str | None, hint: str) -> str:
    """Return ``found``; without it, fail under CI (which must install it) and skip elsewhere."""
    if found:
        return found
    message = f"{what} not found: {hint}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def chromium() -> str:
    return _require(
        "chromium",
        shutil.which("chromium") or shutil.which("/usr/bin/chromium"),
        "install Debian's browser with 'apt-get install -y chromium'",
    )


def run_chromium(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    command = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, timeout=120, check=True)  # noqa: S603 - fixed argv


@dataclass(frozen=True)
class Png:
    width: int
    height: int
    rows: list[bytes]
    channels: int

    def colours(self, step: int = 2) -> Counter[bytes]:
        """Colours of every ``step``-th pixel on every ``step``-th row, as RGB bytes."""
        counts: Counter[bytes] = Counter()
        n = self.channels
        for row in self.rows[::step]:
            for x in range(0, len(row), n * step):
                counts[row[x : x + 3]] += 1
        return counts


def decode_png(data: bytes) -> Png:
    """Decode an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, [], b""
    while pos < len(data):
        (size,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + size]
        pos += size + 12
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat.append(body)
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, interlace) == (8, 0)
    channels = {2: 3, 6: 4}[colour_type]
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    assert len(raw) == height * (stride + 1)
    previous = bytearray(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(kind, line, previous, channels)
        rows.append(bytes(line))
        previous = line
    return Png(width, height, rows, channels)


def _unfilter(kind: int, line: bytearray, up: bytearray, bpp: int) -> None:
    if kind == 1:
        for i in range(bpp, len(line)):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif kind == 2:
        for i in range(len(line)):
            line[i] = (line[i] + up[i]) & 0xFF
    elif kind == 3:
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + (left + up[i]) // 2) & 0xFF
    elif kind == 4:
        for i in range(len(line)):
            a = line[i - bpp] if i >= bpp else 0
            b, c = up[i], (up[i - bpp] if i >= bpp else 0)
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    else:
        assert kind == 0, f"unknown PNG filter {kind}"


def test_png_decoder_reads_a_known_image() -> None:
    """Two rows, Sub then Paeth filtered, decoded by hand."""
    rows = b"\x01" + bytes([10, 20, 30, 5, 5, 5]) + b"\x04" + bytes([1, 1, 1, 0, 0, 0])
    ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    png = decode_png(data)
    assert png.rows == [bytes([10, 20, 30, 15, 25, 35]), bytes([11, 21, 31, 15, 25, 35])]


@pytest.mark.integration
@pytest.mark.parametrize("language", sorted(DOCUMENTS))
def test_page_renders_in_headless_chromium(
    language: str, chromium: str, tests_data: Path, tmp_path: Path
) -> None:
    result = render_file(tests_data / DOCUMENTS[language])
    page = tmp_path / "page.html"
    page.write_text(result.page, encoding="utf-8")
    shot = tmp_path / "page.png"
    run_chromium(
        chromium,
        tmp_path / "profile",
        f"--screenshot={shot}",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        page.as_uri(),
    )

    png = decode_png(shot.read_bytes())
    assert (png.width, png.height) == WINDOW
    colours = png.colours()
    total = sum(colours.values())
    assert colours.most_common(1)[0][1] < 0.8 * total, "the screenshot is mostly one colour"
    assert len(colours) > 500, "too few colours for rendered text"
    # The first screen holds at least as many blocks as the palette has colours: every band shows.
    for band, *_ in _PALETTE:
        assert colours[bytes.fromhex(band[1:])] > 50, f"no block drawn in {band}"

    dom = run_chromium(chromium, tmp_path / "profile", "--dump-dom", page.as_uri()).stdout.decode("utf-8")
    root = parse(dom)
    blocks = [n.attrs["data-chunk-id"] for n in root.iter() if n.attrs.get("data-level") == "child"]
    assert blocks == [c.chunk_id for c in result.children]
    assert not [n for n in root.iter() if n.tag == "script"]


@pytest.mark.integration
def test_a_font_covers_japanese() -> None:
    """Chromium draws Japanese with what fontconfig offers; without a Japanese font it draws boxes."""
    fc_list = _require("fc-list", shutil.which("fc-list"), "install fontconfig (Chromium depends on it)")
    families = subprocess.run(  # noqa: S603 - fixed argv
        [fc_list, ":lang=ja", "family"], capture_output=True, text=True, check=True
    ).stdout
    _require(
        "a Japanese font", families.strip() or None, "install 'fonts-ipafont-gothic' (or fonts-noto-cjk)"
    )


def test_a_parent_cut_in_two_keeps_one_anchor() -> None:
    text = "aaaa bbbb cccc"

    def parent(chunk_id: str, kids: tuple[str, ...]) -> Chunk:
        return Chunk(
            chunk_id=chunk_id,
            text=chunk_id,
            chunk_type=ChunkType.TEXT,
            level=ChunkLevel.PARENT,
            section_path=(),
            source_id="doc",
            language="en",
            child_ids=kids,
        )

    chunks = [
        child("a1", (Span(0, 4),), parent_id="A"),
        child("b1", (Span(5, 9),), parent_id="B"),
        child("a2", (Span(10, 14),), parent_id="A"),
        parent("A", ("a1", "a2")),
        parent("B", ("b1",)),
    ]
    root = parse(render_document_html(text, chunks, title="t"))
    outlines = [n for n in root.iter() if n.attrs.get("data-level") == "parent"]
    assert [n.attrs["data-chunk-id"] for n in outlines] == ["A", "B", "A"]
    ids = [n.attrs["id"] for n in root.iter() if "id" in n.attrs]
    assert len(ids) == len(set(ids))

"""Every reader against malformed and hostile input: only documented errors, each naming the problem.

Text readers (Markdown, plain text, HTML, reStructuredText) go through
``ProcedureChunker.iter_chunks_from_source``: they may refuse input with a ``ValueError``
(:class:`~procedure_rag.ReaderError` for what a reader itself cannot read) or a ``TypeError``
for what is not text, never anything else. The parser JSON readers (Azure Document Intelligence,
Textract, Google Document AI, Docling, Unstructured) may only raise ``ReaderError``, whose message
names the format and the record. Hand-written cases cover the classics (truncated JSON, wrong
types, huge numbers, NaN, negative and overlapping offsets, 10k-deep nesting, invalid UTF-8,
NUL, lone surrogates, BOMs, CR/CRLF mixes, zero-width and bidi characters); hypothesis mutates
the committed parser fixtures and stirs markup soup.

Time is bounded too: for the non-Markdown readers, a document four times larger takes no
more than a generous multiple of four times as long (a 10 MB paragraph, 100k list items, 10k
heading levels, deeply nested tables at full size under the ``stress`` marker). Markdown's own
scaling is tests/test_scaling.py's.

Size limits (``ChunkerOptions.max_input_chars``, ``max_json_depth``) are tested here too, with
the adapters that pass them through.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from _invariants import dropped_spans, lost_characters
from procedure_rag import Chunk, ChunkerOptions, ProcedureChunker, ReaderError
from procedure_rag._readers.registry import LAYOUT_FORMATS, TEXT_FORMATS

DATA = Path(__file__).resolve().parent / "data"
FIXTURES = {
    "azure": DATA / "layout_json/azure/hololens-recovery-en.json",
    "google": DATA / "layout_json/google/hololens-recovery-ja.json",
    "textract": DATA / "layout_json/textract/hololens-recovery-en.json",
    "docling": DATA / "docling/hololens-recovery-en.docling.json",
    "unstructured": DATA / "unstructured/group.ja.json",
}
CHUNKER = ProcedureChunker(ChunkerOptions(chunk_size=120, length_function=len))

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "database": None,
}
DEFAULT = settings(max_examples=60, derandomize=True, **_COMMON)  # type: ignore[arg-type]
STRESS = settings(max_examples=1500, derandomize=False, **_COMMON)  # type: ignore[arg-type]


def test_every_parser_format_has_a_fixture() -> None:
    assert set(FIXTURES) == set(LAYOUT_FORMATS)


def lost(text: str, chunks: list[Chunk], fmt: str) -> list[int]:
    """Offsets of characters of ``text`` no chunk covers (page furniture, left out by design, aside)."""
    reader = ProcedureChunker(ChunkerOptions(chunk_size=120, length_function=len, source_format=fmt))
    return lost_characters(text, chunks, dropped_spans(reader, text, "fuzz"))


def run(source: object, fmt: str, chunker: ProcedureChunker = CHUNKER) -> list[Chunk] | Exception:
    """Chunk ``source`` as ``fmt``; return the chunks or the documented error it raised."""
    try:
        return list(chunker.iter_chunks_from_source(source, source_id="fuzz", source_format=fmt))
    except (ValueError, TypeError) as exc:
        return exc


def assert_documented(outcome: list[Chunk] | Exception, fmt: str) -> None:
    """The outcome is chunks, or an error of the format's documented type with a useful message."""
    if not isinstance(outcome, Exception):
        return
    message = str(outcome)
    assert len(message) > 10, f"{type(outcome).__name__} without a message that names the problem"
    if fmt in LAYOUT_FORMATS:
        assert isinstance(outcome, ReaderError), f"{type(outcome).__name__}: {message}"
        assert message.startswith(f"{fmt} record "), message
        assert outcome.problem.strip()
    # Text formats: any ValueError (ReaderError is one) or TypeError; run() let nothing else by.


# ----- text readers: hand-written hostile cases -------------------------------------------------

DEEP = 10_000
HOSTILE_TEXT: dict[str, str | bytes] = {
    "empty": "",
    "blank": " \t\r\n\u3000\n",
    "bom-str": "\ufeff# Title\n\n1. Open the box.\n",
    "bom-bytes": b"\xef\xbb\xbf# Title\n\n1. Open the box.\n",
    "utf16-bom-bytes": "# Title\n".encode("utf-16"),
    "invalid-utf8": b"# Title\n\n\xff\xfe broken \xc3\x28\n",
    "truncated-utf8": "手順".encode() + b"\xe3\x81",
    "shift-jis": "設定を開きます。".encode("shift_jis"),
    "nul-first": "\x00# Title\n",
    "nul-late": "# Title\n\n" + "Open the box. " * 700 + "\x00 after the sniffed head\n",
    "lone-surrogate": "# Title\n\nOpen \ud800 the box.\n",
    "lone-low-surrogate": "1. Open \udfff.\n",
    "crlf-cr-mix": "# Title\r\n\r\n1. Open the box.\r2. Lift the lid.\n3. Take it out.\r\n\rNote: Hot.\r",
    "zero-width-bidi": "# Ti\u200btle\u200d\n\n1. \u202eOpen\u202c \u2066box\u2069.\n2. \ufeffLift\u200e.\n",
    "controls": "# Title\x0b\n\n1. Open\x0c the box.\x1c\n\x85 2. Lift\u2028 the lid.\u2029\n",
    "huge-marker": "99999999999999999999999. Open the box.\n" + "1" * 5000 + ". Lift the lid.\n",
    "long-line": "Open the box and wait. " * 20_000,
    "footer-only": "- 12 -",
    "only-markers": "1.\n2.\n-\n*\n①\n手順1\n#\n>\n|\n```\n",
    "deep-quote": ">" * DEEP + " deep\n",
    "deep-list": "".join("  " * i + "- item\n" for i in range(300)),
    "deep-brackets": "[" * DEEP + "x" + "]" * DEEP,
    "deep-emphasis": "*" * DEEP + "x" + "*" * DEEP,
    "deep-html": "<div>" * DEEP + "x" + "</div>" * DEEP,
    "deep-table": "<table><tr><td>" * 1000 + "x" + "</td></tr></table>" * 1000,
    "html-entities": "<p>&#0; &#xD800; &#1114112; &#x110000; &bogus; &amp&lt</p>",
    "html-odd-lists": (
        "<ol start='-5' type='i'><li value='99999999999999999999'>a</li></ol>"
        "<ol start='1e309'><li>b</li></ol><table><tr><td colspan='99999999' rowspan='-1'>c</td></tr></table>"
    ),
    "html-unclosed": "<html><body><h1>Title<ol><li>Open<li>Lift<table><tr><td>cell<!-- never closed",
    "html-script-cdata": (
        "<script>alert(1)</script><![CDATA[x]]><?xml version='1.0' encoding='latin-1'?><p>ok</p>"
    ),
    "html-unknown-charset": b"<meta charset='x-no-such-charset'><p>text</p>",
    "html-bad-charset-bytes": b"<meta charset='shift_jis'><p>\x81\x20 broken</p>",
    "rst-include": "Title\n=====\n\n.. include:: /etc/passwd\n\n.. raw:: html\n   :file: /etc/passwd\n",
    "rst-csv-url": "Title\n=====\n\n.. csv-table::\n   :url: http://127.0.0.1:1/x.csv\n",
    "rst-substitution-loop": "Title\n=====\n\n.. |a| replace:: |b|\n.. |b| replace:: |a|\n\n|a|\n",
    "rst-broken-table": "Title\n=====\n\n+---+---+\n| a | b\n+---+\n| c |\n",
    "rst-deep-quote": "Title\n=====\n\n" + "".join(" " * i + "para\n\n" for i in range(1000)),
    "rst-unknown-directive": "Title\n=====\n\n.. no-such-directive:: arg\n   :opt: 1\n\n   body text\n",
}
HOSTILE_BY_FORMAT = [(name, fmt) for name in HOSTILE_TEXT for fmt in TEXT_FORMATS]


@pytest.mark.parametrize(("name", "fmt"), HOSTILE_BY_FORMAT, ids=[f"{f}-{n}" for n, f in HOSTILE_BY_FORMAT])
def test_hostile_text_gives_chunks_or_a_documented_error(name: str, fmt: str) -> None:
    outcome = run(HOSTILE_TEXT[name], fmt)
    assert_documented(outcome, fmt)
    text = HOSTILE_TEXT[name]
    if fmt in ("markdown", "text") and isinstance(text, str) and not isinstance(outcome, Exception):
        assert lost(text, outcome, fmt) == []


@pytest.mark.parametrize(
    ("name", "fmt", "message"),
    [
        ("invalid-utf8", "markdown", "input is not valid UTF-8: invalid start byte at byte 9"),
        ("truncated-utf8", "text", "input is not valid UTF-8: unexpected end of data at byte 6"),
        ("nul-first", "markdown", "input looks binary: NUL character at offset 0"),
        ("lone-surrogate", "text", "input holds an unpaired surrogate at offset 14"),
        ("deep-html", "html", "html record 'document': the page nests too deeply to read"),
        ("deep-table", "html", "html record 'document': the page nests too deeply to read"),
        ("html-unknown-charset", "html", "html record 'charset': unknown charset 'x-no-such-charset'"),
        ("html-bad-charset-bytes", "html", "html record 'charset': bytes are not valid cp932"),
        ("rst-deep-quote", "rst", "rst record 'document': the document nests too deeply to read"),
    ],
)
def test_hostile_text_errors_name_the_problem(name: str, fmt: str, message: str) -> None:
    outcome = run(HOSTILE_TEXT[name], fmt)
    assert isinstance(outcome, ValueError)
    assert str(outcome).startswith(message)


@pytest.mark.parametrize("fmt", ["markdown", "text", "rst"])
def test_a_line_longer_than_docutils_reads_is_not_lost(fmt: str) -> None:
    """docutils replaced a document with one line over 10,000 characters by an error message."""
    text = "Title\n=====\n\n" + "Open the box and wait. " * 1000 + "\n"
    chunks = run(text, fmt)
    assert not isinstance(chunks, Exception)
    assert sum(c.text.count("Open the box") for c in chunks if c.level.value == "child") == 1000


def test_a_page_nested_past_what_libxml2_reads_is_refused_not_cut() -> None:
    """libxml2 stops at 2048 levels and returns what it read so far: that lost the rest silently."""
    text = "<html><body>" + "<div>" * 3000 + "deep words" + "</div>" * 3000 + "<p>after</p></body></html>"
    outcome = run(text, "html")
    assert isinstance(outcome, ReaderError)
    assert "nests too deeply" in outcome.problem
    shallow = text.replace("<div>" * 3000, "<div>" * 1000).replace("</div>" * 3000, "</div>" * 1000)
    chunks = run(shallow, "html")
    assert not isinstance(chunks, Exception)
    assert any("deep words" in c.text for c in chunks)


def test_a_paragraph_docutils_would_read_in_quadratic_time_is_refused() -> None:
    text = "Title\n=====\n\n" + "Open the *box* and ``wait``. " * 100_000
    started = time.perf_counter()
    outcome = run(text, "rst")
    assert time.perf_counter() - started < 30  # the refusal is a scan, not a parse
    assert isinstance(outcome, ReaderError)
    assert outcome.record == "line 4"
    assert "read the file as plain text (source_format='text')" in outcome.problem


def test_non_text_sources_raise_type_error() -> None:
    for fmt in TEXT_FORMATS:
        outcome = run(12345, fmt)
        assert isinstance(outcome, TypeError)
        assert "must be text, bytes or a path, got int" in str(outcome)


# ----- text readers: markup soup ------------------------------------------------------------------

SOUP = {
    "markdown": (
        "# ", "## ", "###### ", "####### ", "Title\n===\n", "---\n", "1. ", "1) ", "(1) ", "① ", "手順1 ",
        "Step 1 ", "a. ", "iv. ", "１．", "- ", "* ", "> ", "> [!WARNING]\n", "```\n", "~~~", "    ",
        "| a | b |\n|---|---|\n", "|", "![alt](x.png)", "[x](", "<div>", "</div>", "<!--", "Note: ",
        "注意", "If it fails:", "の場合は、次の手順を実行します。", "\n", "\n\n", "\r\n", "\r", "  ", "\t",
        "[^1]", "[^1]: note\n", "$$", "- [ ] ", "***", "___", "\\", "`",
    ),
    "text": (
        "第1章 ", "1.1 ", "1.2.3 ", "1. ", "(2) ", "① ", "・", "Step 3 ", "【注意】", "Note: ", "※", "■ ",
        "- 12 -", "Page 3 of 9", "\f", "=====", "Name    Value\n", "\t", "    ", "\n", "\n\n", "\r\n",
        "Open Settings", "設定画面を開きます。", "Title Line\n",
    ),
    "html": (
        "<html>", "<body>", "</body>", "<h1>", "</h1>", "<h3 >", "<ol>", "</ol>", "<ul>", "<li>", "</li>",
        "<table>", "<tr>", "<td>", "</td>", "<th colspan='99999999'>", "<td rowspan=-1>",
        "<ol start='-5' type='i'>", "<ol start='1e309'>", "<li value='99999999999999999999'>", "<pre>",
        "</pre>", "<img src=x alt='a'>", "<div class='note'>", "</div>", "<p>", "</p>", "<script>",
        "</script>", "<!--", "-->", "<![CDATA[", "]]>", "&amp;", "&#0;", "&#xD800;", "&#1114112;", "<br>",
        "<?xml version='1.0'?>", "<meta charset='shift_jis'>", "<dl><dt>x<dd>y", "<details><summary>s",
        "<code>", "<section>", "<svg><text>t</text></svg>", "<math>", "<template>", "<noscript>",
        "<ruby>漢<rt>かん</rt></ruby>", "<style>", "<caption>", "<figure>", "<figcaption>", "<aside>",
        "<div role='alert'>",
    ),
    "rst": (
        "Title\n=====\n", "\n", "\n\n", "-----\n", ".. note::\n", ".. warning::\n   ", "   ", "#. ", "1. ",
        "(a) ", "* ", "- ", ":ref:`x`", ":menuselection:`A --> B`", ":kbd:`Ctrl`",
        ".. code-block:: python\n\n   ", "::\n\n    ", "+---+---+\n| a | b |\n+---+---+\n",
        "=== ===\na   b\n=== ===\n", ".. image:: x.png\n   :alt: y\n", ".. |sub| replace:: z\n", "|sub|",
        "`link <http://x>`_", ".. include:: /etc/passwd\n", ".. raw:: html\n\n   <b>x</b>\n",
        ".. list-table::\n   :header-rows: 1\n\n   * - a\n     - b\n", ".. toctree::\n", ".. only:: html\n",
        ".. figure:: x.png\n", "**", "``", "`", "_", ":", ".. ", "..\n", "\t", "Title\n", "~~~~~\n",
        ".. [1] foot\n", "[1]_", ".. _target:\n", ".. math::\n",
    ),
}  # fmt: skip
ODD_CHARS = (
    "\ufeff", "\u200b", "\u200d", "\u202e", "\u2066", "\x0b", "\x0c", "\x85", "\u2028", "\u2029",
    "\x1b[31m", "\x7f", "\ufffd", "𝕏", "👨‍👩‍👧", "e\u0301", "\uff10", "設定", "word", "Open Settings.",
    "。", ".", " ", "\u3000", "\U0010ffff", "\uffff",
)  # fmt: skip
RARE_CHARS = ("\x00", "\ud800", "\udfff")


@st.composite
def soups(draw: st.DrawFn, fmt: str) -> str | bytes:
    """Markup pieces of ``fmt`` with odd characters between them, as text or (sometimes) bytes."""
    piece = st.one_of(
        st.sampled_from(SOUP[fmt]),
        st.sampled_from(ODD_CHARS),
        st.sampled_from(RARE_CHARS).filter(lambda _: draw(st.integers(0, 30)) == 0),
        st.text(max_size=8),
    )
    text = "".join(draw(st.lists(piece, max_size=60)))
    if draw(st.integers(0, 4)) == 0:
        return text.encode("utf-8", "surrogatepass")
    return text


def check_soup(source: str | bytes, fmt: str) -> None:
    outcome = run(source, fmt)
    assert_documented(outcome, fmt)
    if fmt in ("markdown", "text") and isinstance(source, str) and not isinstance(outcome, Exception):
        assert lost(source, outcome, fmt) == []


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
@given(data=st.data())
@DEFAULT
def test_markup_soup_gives_chunks_or_a_documented_error(fmt: str, data: st.DataObject) -> None:
    check_soup(data.draw(soups(fmt)), fmt)


@pytest.mark.stress
@pytest.mark.parametrize("fmt", TEXT_FORMATS)
@given(data=st.data())
@STRESS
def test_markup_soup_gives_chunks_or_a_documented_error_stress(fmt: str, data: st.DataObject) -> None:
    check_soup(data.draw(soups(fmt)), fmt)


# ----- parser JSON: hand-written hostile cases ----------------------------------------------------


@cache
def fixture_text(fmt: str) -> str:
    return FIXTURES[fmt].read_text(encoding="utf-8")


def fixture(fmt: str) -> Any:
    return json.loads(fixture_text(fmt))


def test_the_fixtures_read_cleanly() -> None:
    for fmt in LAYOUT_FORMATS:
        chunks = run(fixture(fmt), fmt)
        assert not isinstance(chunks, Exception), chunks
        assert chunks


DEEP_ARRAY = "[" * DEEP + "]" * DEEP
JSON_TEXT_CASES: dict[str, str | bytes] = {
    "empty": "",
    "truncated": '{"analyzeResult": {"paragraphs": [',
    "not-json": "{this is not json}",
    "null": "null",
    "number": "42",
    "string": '"text"',
    "huge-integer": "1" * 5000,
    "nan-infinity": '{"Blocks": [NaN, Infinity, -Infinity], "analyzeResult": NaN}',
    "huge-float": '{"Blocks": [1e400, -1e400]}',
    "deep-array": DEEP_ARRAY,
    "deep-object": '{"a":' * DEEP + "1" + "}" * DEEP,
    "invalid-utf8-bytes": b'{"Blocks": ["\xff\xfe"]}',
    "utf8-bom-bytes": b'\xef\xbb\xbf{"Blocks": []}',
    "utf16-bytes": '{"Blocks": []}'.encode("utf-16"),
    "lone-surrogate-escape": '{"Blocks": [{"Id": "\\ud800", "BlockType": "PAGE"}]}',
    "nul-in-string": '{"Blocks": [{"Id": "a\\u0000b", "BlockType": "LINE", "Text": "x\\u0000"}]}',
}
JSON_TEXT_BY_FORMAT = [(name, fmt) for name in JSON_TEXT_CASES for fmt in LAYOUT_FORMATS]


@pytest.mark.parametrize(
    ("name", "fmt"), JSON_TEXT_BY_FORMAT, ids=[f"{f}-{n}" for n, f in JSON_TEXT_BY_FORMAT]
)
def test_hostile_json_text_gives_a_reader_error(name: str, fmt: str) -> None:
    assert_documented(run(JSON_TEXT_CASES[name], fmt), fmt)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("truncated", "not valid JSON: Expecting value at line 1 column 35"),
        ("huge-integer", "not valid JSON: Exceeds the limit (4300 digits)"),
        ("deep-array", "JSON nests too deeply for Python's JSON parser (max_json_depth is 256)"),
        ("deep-object", "JSON nests too deeply for Python's JSON parser (max_json_depth is 256)"),
        ("invalid-utf8-bytes", "JSON is not valid UTF-8: invalid start byte at byte 13"),
        ("lone-surrogate-escape", "JSON string '\\ud800' holds an unpaired surrogate at offset 0"),
    ],
)
def test_hostile_json_errors_name_the_problem(name: str, problem: str) -> None:
    outcome = run(JSON_TEXT_CASES[name], "textract")
    assert isinstance(outcome, ReaderError)
    assert (outcome.record, outcome.problem[: len(problem)]) == ("document", problem)


WRONG_TYPES: tuple[object, ...] = (
    None, True, 0, -1, 1.5, math.nan, math.inf, -math.inf, 10**40, "", "x", [], {}, [None], ["x"],
    [[[]]], {"a": {"b": None}}, "/paragraphs/-1", "#/texts/999999", "\u202e\u200b", -0.0, 1e-300,
    10**400,
)  # fmt: skip


def json_paths(value: Any, path: tuple[Any, ...] = (), *, most_items: int = 4) -> list[tuple[Any, ...]]:
    """Paths to every node of parsed JSON (the first few items of each array)."""
    out = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            out.extend(json_paths(child, (*path, key), most_items=most_items))
    elif isinstance(value, list):
        for i, child in enumerate(value[:most_items]):
            out.extend(json_paths(child, (*path, i), most_items=most_items))
    return out


@cache
def fixture_paths(fmt: str) -> tuple[tuple[Any, ...], ...]:
    return tuple(p for p in json_paths(fixture(fmt)) if p)


def mutate(doc: Any, path: tuple[Any, ...], value: object, *, delete: bool) -> None:
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value


@st.composite
def mutated(draw: st.DrawFn, fmt: str) -> Any:
    """A parser fixture with one to four nodes replaced by a wrong type or deleted."""
    doc = fixture(fmt)
    paths = fixture_paths(fmt)
    for _ in range(draw(st.integers(1, 4))):
        path = paths[draw(st.integers(0, len(paths) - 1))]
        delete = draw(st.integers(0, 4)) == 0
        value = draw(st.sampled_from(WRONG_TYPES))
        try:
            mutate(doc, path, value, delete=delete)
        except (KeyError, IndexError, TypeError):  # an earlier mutation removed the path
            continue
    return doc


# Failing examples found by the fuzzer, kept so that they run every time: what escaped before.
FINDINGS = [
    pytest.param("docling", ("pictures", 3, "parent"), None, True, id="docling-orphan-AttributeError"),
    pytest.param(
        "docling", ("pictures", 2, "image", "mimetype"), "\ud800", False, id="docling-surrogate-UnicodeError"
    ),
    pytest.param("docling", ("texts", 1, "prov", 0, "bbox", "l"), 10**400, False, id="docling-OverflowError"),
    pytest.param(
        "azure",
        ("analyzeResult", "paragraphs", 1, "boundingRegions", 0, "polygon", 1),
        10**400,
        False,
        id="azure-OverflowError",
    ),
    pytest.param(
        "azure", ("analyzeResult", "pages", 0, "width"), math.nan, False, id="azure-nan-page-accepted"
    ),
]


@pytest.mark.parametrize(("fmt", "path", "value", "delete"), FINDINGS)
def test_fuzzer_findings_give_reader_errors(
    fmt: str, path: tuple[Any, ...], value: object, delete: bool
) -> None:
    doc = fixture(fmt)
    mutate(doc, path, value, delete=delete)
    outcome = run(doc, fmt)
    assert isinstance(outcome, ReaderError)
    assert_documented(outcome, fmt)


@pytest.mark.parametrize("fmt", LAYOUT_FORMATS)
@given(data=st.data())
@settings(max_examples=25, derandomize=True, **_COMMON)  # type: ignore[arg-type]
def test_mutated_parser_output_gives_chunks_or_a_reader_error(fmt: str, data: st.DataObject) -> None:
    assert_documented(run(data.draw(mutated(fmt)), fmt), fmt)


@pytest.mark.stress
@pytest.mark.parametrize("fmt", LAYOUT_FORMATS)
@given(data=st.data())
@STRESS
def test_mutated_parser_output_gives_chunks_or_a_reader_error_stress(fmt: str, data: st.DataObject) -> None:
    assert_documented(run(data.draw(mutated(fmt)), fmt), fmt)


@pytest.mark.parametrize("fmt", LAYOUT_FORMATS)
@given(cut=st.integers(min_value=1))
@settings(max_examples=10, derandomize=True, **_COMMON)  # type: ignore[arg-type]
@example(cut=1)
def test_truncated_parser_json_names_the_problem(fmt: str, cut: int) -> None:
    text = fixture_text(fmt).rstrip()
    outcome = run(text[: cut % (len(text) - 1) + 1], fmt)
    assert isinstance(outcome, ReaderError)
    assert outcome.problem.startswith("not valid JSON: ")


# An empty list is Unstructured output with no elements; every other top level is wrong everywhere.
TOP_LEVELS = [(f, v) for f in LAYOUT_FORMATS for v in WRONG_TYPES if not (f == "unstructured" and v == [])]


@pytest.mark.parametrize(("fmt", "value"), TOP_LEVELS, ids=[f"{f}-{v!r}" for f, v in TOP_LEVELS])
def test_wrong_top_level_type_gives_a_reader_error(fmt: str, value: object) -> None:
    outcome = run(value, fmt)
    assert isinstance(outcome, ReaderError)
    assert_documented(outcome, fmt)


def test_deep_json_text_is_told_as_text_not_a_crash() -> None:
    from procedure_rag import detect_format  # noqa: PLC0415 - only this test needs it

    assert detect_format(DEEP_ARRAY) == "text"
    assert_documented(run(DEEP_ARRAY, "auto"), "text")


@cache
def pdf_bytes() -> bytes:
    return (DATA / "pdf/samsung-tv-17-19.pdf").read_bytes()


@given(flips=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=30))
@settings(max_examples=20, derandomize=True, **_COMMON)  # type: ignore[arg-type]
@example(flips=[(0, 0)])  # no longer starts with %PDF-
def test_damaged_pdf_gives_chunks_or_a_reader_error(flips: list[tuple[int, int]]) -> None:
    data = bytearray(pdf_bytes())
    for at, byte in flips:
        data[at % len(data)] = byte
    outcome = run(bytes(data), "pdf")
    if isinstance(outcome, Exception):
        assert isinstance(outcome, ReaderError), outcome
        assert str(outcome).startswith("pdf record ")


#: A real file of each Office format, for the damage and truncation cases.
OFFICE_FILES = {
    "xlsx": "xlsx/ja_neos21_sagyo-tejunsho-template.xlsx",
    "docx": "docx/ja_osaka-u_cf-libs_python-manual.docx",
    "pptx": "pptx/hololens-troubleshoot-libreoffice-ja.pptx",
}


@cache
def office_bytes(fmt: str) -> bytes:
    return (DATA / OFFICE_FILES[fmt]).read_bytes()


@pytest.mark.parametrize("fmt", sorted(OFFICE_FILES))
@given(flips=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=30))
@settings(max_examples=30, derandomize=True, **_COMMON)  # type: ignore[arg-type]
@example(flips=[(0, 0)])  # no longer starts with PK
@example(flips=[(3000, 0), (3001, 255), (3002, 7)])  # inside a deflated part
def test_damaged_office_file_gives_chunks_or_a_reader_error(fmt: str, flips: list[tuple[int, int]]) -> None:
    data = bytearray(office_bytes(fmt))
    for at, byte in flips:
        data[at % len(data)] = byte
    outcome = run(bytes(data), fmt)
    if isinstance(outcome, Exception):
        assert isinstance(outcome, ReaderError), outcome
        assert str(outcome).startswith(f"{fmt} record "), outcome


@pytest.mark.parametrize("fmt", sorted(OFFICE_FILES))
@given(removed=st.integers(min_value=1, max_value=100_000))
@settings(max_examples=30, derandomize=True, **_COMMON)  # type: ignore[arg-type]
@example(removed=100_000)  # nothing left
@example(removed=27)  # the central directory cut off
def test_truncated_office_file_gives_a_reader_error(fmt: str, removed: int) -> None:
    data = office_bytes(fmt)
    outcome = run(data[: max(0, len(data) - removed)], fmt)
    assert isinstance(outcome, ReaderError), outcome
    assert str(outcome).startswith(f"{fmt} record 'file': fuzz "), outcome


@pytest.mark.parametrize("fmt", sorted(OFFICE_FILES))
@pytest.mark.parametrize(
    ("field", "value"),
    [(6, 0xFF), (10, 99), (8, 1)],
    ids=["zip-version", "compression-method", "encrypted-entry"],
)
def test_a_zip_header_zipfile_cannot_read_is_a_reader_error(fmt: str, field: int, value: int) -> None:
    # zipfile raises NotImplementedError for a version or method it does not know, RuntimeError for an
    # entry flagged as encrypted (found by fuzzing decks).
    data = bytearray(office_bytes(fmt))
    data[data.index(b"PK\x01\x02") + field] |= value  # the first central directory entry
    outcome = run(bytes(data), fmt)
    assert isinstance(outcome, ReaderError), outcome
    assert str(outcome).startswith(f"{fmt} record "), outcome


# ----- parser JSON: synthetic documents -----------------------------------------------------------


def azure(paragraphs: list[tuple[str, str]], *, nested_sections: bool = False) -> dict[str, Any]:
    """An Azure layout result: paragraphs ``(role, text)`` on one page, one section per heading."""
    records, offset, content = [], 0, []
    for role, text in paragraphs:
        record: dict[str, Any] = {"content": text, "spans": [{"offset": offset, "length": len(text)}]}
        if role:
            record["role"] = role
        records.append(record)
        content.append(text)
        offset += len(text) + 1
    heads = [i for i, (role, _) in enumerate(paragraphs) if role == "sectionHeading"]
    sections = [
        {
            "elements": [f"/paragraphs/{i}"]
            + ([f"/sections/{n + 1}"] if nested_sections and n + 1 < len(heads) else [])
        }
        for n, i in enumerate(heads)
    ]
    page = {"pageNumber": 1, "width": 8.5, "height": 11, "unit": "inch"}
    return {
        "analyzeResult": {
            "content": "\n".join(content),
            "pages": [page],
            "paragraphs": records,
            "sections": sections,
        }
    }


def textract(lines: list[str], *, as_list: bool = False) -> dict[str, Any]:
    """A Textract response: one LAYOUT_TEXT (or one LAYOUT_LIST of them) per line."""
    blocks: list[dict[str, Any]] = [{"BlockType": "PAGE", "Id": "page", "Page": 1}]
    items = []
    for i, text in enumerate(lines):
        blocks.append({"BlockType": "LINE", "Id": f"l{i}", "Page": 1, "Text": text})
        blocks.append(
            {
                "BlockType": "LAYOUT_TEXT",
                "Id": f"t{i}",
                "Page": 1,
                "Relationships": [{"Type": "CHILD", "Ids": [f"l{i}"]}],
            }
        )
        items.append(f"t{i}")
    if as_list:
        blocks.append(
            {
                "BlockType": "LAYOUT_LIST",
                "Id": "list",
                "Page": 1,
                "Relationships": [{"Type": "CHILD", "Ids": items}],
            }
        )
    return {"Blocks": blocks}


def google(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"document": {"documentLayout": {"blocks": blocks}}}


def google_text(
    i: int, text: str, kind: str = "paragraph", children: list[Any] | None = None
) -> dict[str, Any]:
    return {"blockId": str(i), "textBlock": {"text": text, "type": kind, "blocks": children or []}}


def unstructured(elements: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [
        {"type": kind, "element_id": f"e{i}", "text": text, "metadata": metadata}
        for i, (kind, text, metadata) in enumerate(elements)
    ]


def docling(items: list[tuple[str, str, int]]) -> dict[str, Any]:
    """A Docling document of ``(kind, text, level)`` items: heading, text or list item."""
    from docling_core.types.doc import DocItemLabel, DoclingDocument  # noqa: PLC0415 - optional

    doc = DoclingDocument(name="synthetic")
    group = None
    for kind, text, level in items:
        if kind == "heading":
            doc.add_heading(text, level=level)
            group = None
        elif kind == "item":
            group = group or doc.add_list_group()
            doc.add_list_item(text, enumerated=True, marker=f"{level}.", parent=group)
        else:
            doc.add_text(label=DocItemLabel.TEXT, text=text)
            group = None
    dumped: dict[str, Any] = doc.export_to_dict()
    return dumped


@pytest.mark.parametrize(
    ("fmt", "source", "problem"),
    [
        (
            "azure",
            lambda: _patched(
                azure([("", "a")]), ["analyzeResult", "paragraphs", 0, "spans", 0, "offset"], -5
            ),
            "'offset' must be at least 0",
        ),
        (
            "azure",
            lambda: _patched(azure([("", "a")]), ["analyzeResult", "pages", 0, "width"], math.nan),
            "'width' must be a finite number, got nan",
        ),
        (
            "textract",
            lambda: _patched(textract(["a"]), ["Blocks", 1, "Id"], "page"),
            "Id is used by more than one block",
        ),
        (
            "unstructured",
            lambda: unstructured([("Title", "a", {"parent_id": "e1"}), ("Title", "b", {"parent_id": "e0"})]),
            "parent_id cycle",
        ),
        (
            "unstructured",
            lambda: unstructured([("NarrativeText", "a", {"page_number": -3})]),
            "page_number -3 is not a page",
        ),
    ],
    ids=[
        "azure-negative-offset",
        "azure-nan-page",
        "textract-duplicate-id",
        "unstructured-cycle",
        "negative-page",
    ],
)
def test_bad_values_name_the_record(fmt: str, source: Callable[[], object], problem: str) -> None:
    outcome = run(source(), fmt)
    assert isinstance(outcome, ReaderError)
    assert problem in outcome.problem


def _patched(doc: Any, path: list[Any], value: object) -> Any:
    mutate(doc, tuple(path), value, delete=False)
    return doc


def test_overlapping_azure_spans_lose_no_paragraph() -> None:
    doc = azure([("", "Open the box."), ("", "Lift the lid."), ("", "Take it out.")])
    for record in doc["analyzeResult"]["paragraphs"]:
        record["spans"] = [{"offset": 0, "length": 40}]  # every paragraph claims the same text
    chunks = run(doc, "azure")
    assert not isinstance(chunks, Exception)
    text = "\n".join(c.text for c in chunks)
    assert all(words in text for words in ("Open the box.", "Lift the lid.", "Take it out."))


@pytest.mark.parametrize("fmt", ["azure", "textract", "google", "unstructured"])
def test_deep_structures_are_read_or_refused_by_name(fmt: str) -> None:
    """10k-deep nesting of the parsers' own structure (sections, CHILD links, blocks, parent ids)."""
    n = DEEP
    if fmt == "azure":
        source: object = azure([("sectionHeading", f"Heading {i}") for i in range(n)], nested_sections=True)
    elif fmt == "textract":
        blocks = textract([f"Line {i}." for i in range(n)])["Blocks"]
        for i in range(n - 1):  # each layout block the child of the one before
            blocks[2 + 2 * i]["Relationships"][0]["Ids"].append(f"t{i + 1}")
        source = {"Blocks": blocks}
    elif fmt == "google":
        root = node = google_text(0, "Heading 0", "heading-1")
        for i in range(1, n):
            child = google_text(i, f"Heading {i}", "heading-1")
            node["textBlock"]["blocks"].append(child)
            node = child
        source = google([root])
    else:
        source = unstructured(
            [("Title", f"Heading {i}", {"parent_id": f"e{i - 1}"} if i else {}) for i in range(n)]
        )
    outcome = run(source, fmt, ProcedureChunker(ChunkerOptions(chunk_size=120, max_json_depth=None)))
    assert_documented(outcome, fmt)
    if fmt in ("textract", "google"):
        assert isinstance(outcome, ReaderError)
        assert "nest" in outcome.problem
    else:
        assert not isinstance(outcome, Exception)
        levels = {len(c.section_path) for c in outcome}
        assert max(levels) <= 64  # MAX_HEADING_LEVEL: deeper parser nesting is read flat


@pytest.mark.parametrize("fmt", ["azure", "textract", "docling"])
def test_shared_structure_is_not_read_once_per_path(fmt: str) -> None:
    """Each level listing the next twice: read once per path, 30 levels are 2**30 reads (a hang)."""
    n = 30
    if fmt == "azure":
        source: Any = azure([("sectionHeading", f"Heading {i}") for i in range(n)])
        for i in range(n - 1):
            source["analyzeResult"]["sections"][i]["elements"] += [f"/sections/{i + 1}"] * 2
    elif fmt == "textract":
        source = textract([f"Line {i}." for i in range(n)])
        for i in range(n - 1):
            source["Blocks"][2 + 2 * i]["Relationships"][0]["Ids"] += [f"t{i + 1}"] * 2
    else:
        from docling_core.types.doc import DocItemLabel, DoclingDocument  # noqa: PLC0415 - optional

        doc, parent = DoclingDocument(name="shared"), None
        for i in range(n):
            parent = doc.add_group(parent=parent)
            doc.add_text(label=DocItemLabel.TEXT, text=f"Text {i}", parent=parent)
        source = doc.export_to_dict()
        for i in range(n - 1):
            source["groups"][i]["children"].append({"$ref": f"#/groups/{i + 1}"})
    started = time.perf_counter()
    outcome = run(source, fmt)
    assert time.perf_counter() - started < 10
    assert_documented(outcome, fmt)
    if fmt == "textract":  # each line once, however many paths reach it
        assert not isinstance(outcome, Exception)
        text = "\n".join(c.text for c in outcome if c.level.value == "child")
        assert all(text.count(f"Line {i}.") == 1 for i in range(n))
    else:
        assert isinstance(outcome, ReaderError)


# ----- bounded time ---------------------------------------------------------------------------------

#: How much longer than linear the larger of two inputs may take (quadratic time at four
#: times the size takes sixteen times as long; linear four). Generous for a shared machine.
SLACK = 3.0


def _seconds(build: Callable[[int], object], fmt: str, n: int, runs: int = 3) -> float:
    """The fastest of ``runs`` runs of chunking ``build(n)``, in this process's CPU time.

    CPU time, not wall-clock time: on a shared machine another process's load stretches
    the wall clock of one run and not the other, and the ratio then means nothing.
    """
    source = build(n)
    chunker = ProcedureChunker(ChunkerOptions(chunk_size=400, length_function=len, max_json_depth=None))
    best = math.inf
    for _ in range(runs):
        started = time.process_time()
        outcome = run(source, fmt, chunker)
        best = min(best, time.process_time() - started)
        assert not isinstance(outcome, Exception), outcome
    return best


#: The smaller input is doubled until it takes this long, so that the ratio means something.
MIN_SECONDS = 0.08


def assert_linear(build: Callable[[int], object], fmt: str, small: int, most: int) -> None:
    """Four times the input takes at most ``SLACK`` times four times as long (plus a little).

    The smaller size starts at ``small`` and doubles (up to ``most``) until it takes
    :data:`MIN_SECONDS`: a ratio of two timings of a few milliseconds is noise.
    """
    n = small
    while _seconds(build, fmt, n, runs=1) < MIN_SECONDS and 2 * n <= most:
        n *= 2
    t_small = _seconds(build, fmt, n)
    t_large = _seconds(build, fmt, 4 * n, runs=2)
    assert t_large <= 4 * SLACK * t_small + 0.1, (
        f"{fmt}: {n} took {t_small:.2f}s, {4 * n} took {t_large:.2f}s"
    )


def _paragraph(n: int) -> str:
    return "Open the cover and wait for the light. " * n


def _list_html(n: int) -> str:
    return "<html><body><ol>" + "".join(f"<li>Open item {i}.</li>\n" for i in range(n)) + "</ol>"


def _list_google(n: int) -> dict[str, Any]:
    entries = [{"blocks": [google_text(i, f"Open item {i}.")]} for i in range(n)]
    return google([{"blockId": "l", "listBlock": {"listEntries": entries, "type": "ordered"}}])


def _headings_text(n: int) -> str:
    return "".join(f"{'.'.join(['1'] * (i % 8 + 1))} Heading {i}\nBody {i}.\n\n" for i in range(n))


def _headings_html(n: int) -> str:
    return "<html><body>" + "".join(f"<h{i % 6 + 1}>H {i}</h{i % 6 + 1}><p>t {i}</p>" for i in range(n))


def _headings_rst(n: int) -> str:
    return "".join(f"H {i}\n{'=-~^+*#'[i % 7] * (len(str(i)) + 2)}\n\nt {i}\n\n" for i in range(n))


SCALING: dict[str, dict[str, Callable[[int], object]]] = {
    "paragraph": {
        "text": _paragraph,
        "html": lambda n: f"<html><body><p>{_paragraph(n)}</p></body></html>",
        "rst": lambda n: f"Title\n=====\n\n{_paragraph(n)}\n",
        "azure": lambda n: azure([("", _paragraph(n))]),
        "textract": lambda n: textract([_paragraph(n)]),
        "google": lambda n: google([google_text(0, _paragraph(n))]),
        "unstructured": lambda n: unstructured([("NarrativeText", _paragraph(n), {})]),
        "docling": lambda n: docling([("text", _paragraph(n), 0)]),
    },
    "list-items": {
        "text": lambda n: "".join(f"{i + 1}. Open item {i}.\n" for i in range(n)),
        "html": _list_html,
        "rst": lambda n: "Title\n=====\n\n" + "".join(f"#. Open item {i}.\n" for i in range(n)),
        "azure": lambda n: azure([("", f"{i + 1}. Open item {i}.") for i in range(n)]),
        "textract": lambda n: textract([f"{i + 1}. Open item {i}." for i in range(n)], as_list=True),
        "google": _list_google,
        "unstructured": lambda n: unstructured(
            [("ListItem", f"{i + 1}. Open item {i}.", {}) for i in range(n)]
        ),
        "docling": lambda n: docling([("item", f"Open item {i}.", i + 1) for i in range(n)]),
    },
    "heading-levels": {
        "text": _headings_text,
        "html": _headings_html,
        "rst": _headings_rst,
        "azure": lambda n: azure(
            [("sectionHeading", f"Heading {i}") for i in range(n)], nested_sections=True
        ),
        "unstructured": lambda n: unstructured(
            [("Title", f"H {i}", {"category_depth": i}) for i in range(n)]
        ),
        "docling": lambda n: docling([("heading", f"Heading {i}", i % 100 + 1) for i in range(n)]),
    },
    "nested-tables": {
        "html": lambda n: "<html><body>" + "<table><tr><td>cell " * n + "</td></tr></table>" * n,
    },
}
# The smaller size of each pair; the larger is four times it. Full sizes (10 MB, 100k items,
# 10k levels, 500 nested tables: libxml2 stops at 2048 elements) run under the stress marker.
SMALL = {"paragraph": 6_000, "list-items": 1_500, "heading-levels": 600, "nested-tables": 30}
FULL = {"paragraph": 65_000, "list-items": 25_000, "heading-levels": 2_500, "nested-tables": 125}
SCALING_CASES = [(shape, fmt) for shape, builders in SCALING.items() for fmt in builders]


@pytest.mark.parametrize(("shape", "fmt"), SCALING_CASES, ids=[f"{s}-{f}" for s, f in SCALING_CASES])
def test_time_grows_linearly(shape: str, fmt: str) -> None:
    assert_linear(SCALING[shape][fmt], fmt, SMALL[shape], FULL[shape])


@pytest.mark.stress
@pytest.mark.parametrize(("shape", "fmt"), SCALING_CASES, ids=[f"{s}-{f}" for s, f in SCALING_CASES])
def test_time_grows_linearly_at_full_size(shape: str, fmt: str) -> None:
    assert_linear(SCALING[shape][fmt], fmt, FULL[shape], FULL[shape])


# ----- input size limits ----------------------------------------------------------------------------

LIMITED = ProcedureChunker(ChunkerOptions(chunk_size=120, max_input_chars=1000, max_json_depth=8))
OVER_CHARS = "input is 1,001 characters, over the limit of 1,000"
OPTION_HINT = "(ChunkerOptions.max_input_chars: raise it, or set it to None for no limit)"


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_text_over_the_limit_is_refused_naming_size_limit_and_option(fmt: str) -> None:
    with pytest.raises(ValueError, match=r"^") as caught:
        list(LIMITED.iter_chunks_from_source("a" * 1001, source_id="big", source_format=fmt))
    assert str(caught.value) == f"{OVER_CHARS} {OPTION_HINT}"
    assert list(LIMITED.iter_chunks_from_source("a" * 1000, source_id="ok", source_format=fmt))


def test_the_limit_counts_characters_not_bytes() -> None:
    text = "設" * 1000  # 3,000 bytes of UTF-8
    assert LIMITED.chunk(text.encode("utf-8"))
    with pytest.raises(ValueError, match=r"^input is 1,001 characters, over the limit of 1,000 "):
        LIMITED.chunk((text + "定").encode("utf-8"))


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_bytes_that_cannot_fit_are_refused_before_decoding(fmt: str) -> None:
    with pytest.raises(
        ValueError, match=r"^input is 4,001 bytes, more than the limit of 1,000 characters can take"
    ):
        list(LIMITED.iter_chunks_from_source(b"a" * 4001, source_id="big", source_format=fmt))


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_bytes(b"# T\n\n" + b"a" * 5000)
    with pytest.raises(
        ValueError, match=r"^input is 5,005 bytes, more than the limit of 1,000 characters can take"
    ):
        list(LIMITED.iter_chunks_from_source(big))


@pytest.mark.parametrize("fmt", LAYOUT_FORMATS)
def test_parser_json_over_the_limits_is_refused(fmt: str) -> None:
    with pytest.raises(ReaderError) as too_long:
        list(LIMITED.iter_chunks_from_source(fixture_text(fmt), source_id="big", source_format=fmt))
    assert too_long.value.record == "document"
    assert too_long.value.problem.startswith("input is ")
    assert too_long.value.problem.endswith(OPTION_HINT)
    deep: Any = {"Blocks": []}
    for _ in range(10):
        deep = {"nested": [deep]}
    with pytest.raises(ReaderError) as too_deep:
        list(LIMITED.iter_chunks_from_source(deep, source_id="deep", source_format=fmt))
    assert too_deep.value.problem == (
        "JSON nests more than 8 levels deep "
        "(ChunkerOptions.max_json_depth: raise it, or set it to None for no limit)"
    )


def test_no_limit_reads_what_the_default_refuses() -> None:
    text = "Open the box. " * 10
    small = ProcedureChunker(ChunkerOptions(max_input_chars=100))
    with pytest.raises(ValueError, match="over the limit of 100"):
        small.chunk(text)
    assert ProcedureChunker(ChunkerOptions(max_input_chars=None)).chunk(text)


def test_the_default_limits_are_generous() -> None:
    options = ChunkerOptions()
    assert options.max_input_chars == 100_000_000
    assert options.max_json_depth == 256
    for fmt in LAYOUT_FORMATS:  # the committed fixtures nest far less than the default allows
        assert not isinstance(run(fixture(fmt), fmt, ProcedureChunker(options)), Exception)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"max_input_chars": 0}, ValueError, "max_input_chars must be > 0 (or None for no limit), got 0"),
        ({"max_input_chars": -1}, ValueError, "max_input_chars must be > 0 (or None for no limit), got -1"),
        ({"max_input_chars": 1.5}, TypeError, "max_input_chars must be an int or None, got float"),
        ({"max_input_chars": True}, TypeError, "max_input_chars must be an int or None, got bool"),
        ({"max_json_depth": 0}, ValueError, "max_json_depth must be > 0 (or None for no limit), got 0"),
        ({"max_json_depth": "9"}, TypeError, "max_json_depth must be an int or None, got str"),
        (
            {"max_uncompressed_bytes": 0},
            ValueError,
            "max_uncompressed_bytes must be > 0 (or None for no limit), got 0",
        ),
        (
            {"max_uncompressed_bytes": 1.0},
            TypeError,
            "max_uncompressed_bytes must be an int or None, got float",
        ),
        ({"include_hidden_sheets": 1}, TypeError, "include_hidden_sheets must be a bool, got int"),
        ({"include_hidden_slides": "yes"}, TypeError, "include_hidden_slides must be a bool, got str"),
        ({"include_speaker_notes": None}, TypeError, "include_speaker_notes must be a bool, got NoneType"),
        (
            {"combine_small_sections": "yes"},
            TypeError,
            "combine_small_sections must be a bool or None, got str",
        ),
        ({"combine_small_sections": 1}, TypeError, "combine_small_sections must be a bool or None, got int"),
    ],
)
def test_bad_limits_raise_pinned_messages(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        ChunkerOptions(**kwargs)
    assert str(caught.value) == message


def test_unstructured_element_documents_count_together() -> None:
    from langchain_core.documents import Document  # noqa: PLC0415 - the core runs without it

    from langchain_procedures import ProcedureTextSplitter  # noqa: PLC0415

    elements = [
        Document(page_content="Open the box. " * 4, metadata={"category": "NarrativeText", "source": "a.pdf"})
        for _ in range(3)
    ]  # 168 characters in all, each element 56
    assert ProcedureTextSplitter(max_input_chars=168).split_documents(elements)
    with pytest.raises(ValueError, match=r"^input is 168 characters, over the limit of 100 "):
        ProcedureTextSplitter(max_input_chars=100).split_documents(elements)


def test_langchain_splitter_passes_the_limits_through() -> None:
    from langchain_core.documents import Document  # noqa: PLC0415 - the core runs without it

    from langchain_procedures import ProcedureTextSplitter  # noqa: PLC0415

    splitter = ProcedureTextSplitter(chunk_size=100, max_input_chars=50, max_json_depth=3)
    assert (splitter.options.max_input_chars, splitter.options.max_json_depth) == (50, 3)
    with pytest.raises(ValueError, match=r"^input is 51 characters, over the limit of 50 "):
        splitter.split_text("a" * 51)
    with pytest.raises(ReaderError, match="JSON nests more than 3 levels deep"):
        splitter.split_documents(
            [Document(page_content='{"Blocks": [[[[1]]]]}', metadata={"source": "x.json"})]
        )
    assert ProcedureTextSplitter(max_input_chars=None).options.max_input_chars is None
    with pytest.raises(ValueError, match="max_input_chars must be > 0"):
        ProcedureTextSplitter(max_input_chars=0)


def test_llama_index_parser_passes_the_limits_through() -> None:
    from llama_index.core.schema import Document  # noqa: PLC0415 - the core runs without it

    from llama_index_procedures import ProcedureNodeParser  # noqa: PLC0415

    parser = ProcedureNodeParser(chunk_size=100, tokenizer=list, max_input_chars=50, max_json_depth=3)
    assert (parser.options.max_input_chars, parser.options.max_json_depth) == (50, 3)
    with pytest.raises(ValueError, match=r"^input is 51 characters, over the limit of 50 "):
        parser.get_nodes_from_documents([Document(text="a" * 51, doc_id="big")])
    with pytest.raises(ReaderError, match="JSON nests more than 3 levels deep"):
        parser.get_nodes_from_documents([Document(text='{"Blocks": [[[[1]]]]}', doc_id="deep")])
    assert ProcedureNodeParser(max_input_chars=None).options.max_input_chars is None
    with pytest.raises(ValueError, match="max_input_chars must be > 0"):
        ProcedureNodeParser(max_input_chars=0)

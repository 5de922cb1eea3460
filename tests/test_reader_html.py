"""The HTML reader: Tera Term help pages (Shift_JIS), numbering, notes, tables, spans, bad input."""

from __future__ import annotations

import re
from pathlib import Path

import lxml.html
import pytest

from procedure_rag import ChunkerOptions, ElementKind, LayoutElement, ProcedureChunker
from procedure_rag._errors import ReaderError
from procedure_rag._readers.html import decode_html, read_html
from procedure_rag._readers.registry import detect_format
from procedure_rag._types import Chunk

K = ElementKind
HTML_DATA = Path(__file__).resolve().parent / "data" / "html"
TERATERM = HTML_DATA / "ja-native" / "teraterm" / "doc" / "ja" / "html" / "usage"
PAGES = {
    "cygwin": TERATERM / "cygwin.html",
    "loging_howto": TERATERM / "tips" / "loging_howto.html",
    "data_drop": TERATERM / "tips" / "data_drop.html",
}
WORD = re.compile(r"[A-Za-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]+")


def page(name: str) -> str:
    return decode_html(PAGES[name].read_bytes())


def chunks_of(source: object, **options: object) -> list[Chunk]:
    chunker = ProcedureChunker(ChunkerOptions(emit_parents=False, **options))  # type: ignore[arg-type]
    return list(chunker.iter_chunks_from_source(source, source_id="doc", source_format="html"))


def steps_of(chunks: list[Chunk]) -> list[tuple[tuple[str, ...], str, int]]:
    return [(c.section_path, s.number, s.depth) for c in chunks for s in c.steps if not s.is_continuation]


# ----- real pages ------------------------------------------------------------------------------

HEADINGS = {
    "cygwin": [
        (1, "Cygwin接続"),
        (2, "Cygterm+"),
        (3, "設定の保存"),
        (3, "Cygwin の探し方"),
        (3, "32bit Cygwin と 64bit Cygwin"),
        (3, "CygTerm+をビルドする"),
        (2, "Cygterm Here"),
    ],
    "loging_howto": [(1, "ログの取り方、ログの再生機能"), (2, "ログの取りかた"), (2, "ログの再生のしかた")],
    "data_drop": [
        (1, "送受信データのドロップ"),
        (2, "1. データ送信"),
        (2, "2. データ受信"),
        (2, "3. 対処方法"),
    ],
}


@pytest.mark.parametrize("name", PAGES)
def test_pages_are_shift_jis_and_decode_by_their_meta_charset(name: str) -> None:
    raw = PAGES[name].read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    assert HEADINGS[name][0][1] in page(name)


@pytest.mark.parametrize(("name", "headings"), HEADINGS.items())
def test_headings_and_section_paths(name: str, headings: list[tuple[int, str]]) -> None:
    elements = read_html(page(name), source_id="doc")
    assert [(e.level, e.text) for e in elements if e.kind is K.SECTION_HEADER] == headings
    paths = {c.section_path for c in chunks_of(page(name))}
    titles = {text for _, text in headings}
    assert paths
    assert all(set(path) <= titles for path in paths)
    assert all(path[0] == headings[0][1] for path in paths)


STEPS = {
    "loging_howto": [
        ((("ログの取り方、ログの再生機能", "ログの取りかた")), n, 0) for n in ("1.", "2.", "3.", "4.")
    ],
    "cygwin": [
        (("Cygwin接続", "Cygterm+", "Cygwin の探し方"), number, depth)
        for number, depth in [
            ("1.", 0),
            ("1.", 1),
            ("2.", 1),
            ("3.", 1),
            ("4.", 1),
            ("2.", 0),
            ("1.", 1),
            ("2.", 1),
            ("3.", 0),
            ("1.", 1),
            ("2.", 1),
            ("3.", 1),
        ]
    ],
    "data_drop": [(("送受信データのドロップ", "3. 対処方法"), n, 0) for n in ("1.", "2.", "3.", "4.")],
}


@pytest.mark.parametrize(("name", "steps"), STEPS.items())
def test_numbered_steps_in_order(name: str, steps: list[tuple[tuple[str, ...], str, int]]) -> None:
    assert steps_of(chunks_of(page(name))) == steps


def test_lead_in_and_the_paragraph_inside_a_step_stay_with_the_steps() -> None:
    procedure = next(c for c in chunks_of(page("loging_howto")) if c.steps)
    assert procedure.lead_in == "以下の手順にしたがってください。"
    assert "File Name: に入力する" in procedure.text  # a <p> inside step 2
    assert [s.target for s in procedure.steps][:1] == ["File"]


def test_caution_paragraph_and_table_caption() -> None:
    elements = read_html(page("cygwin"), source_id="doc")
    caution = next(e for e in elements if e.admonition)
    assert (caution.admonition, caution.text[:6]) == ("※", "※注意：Cy")
    kinds = [e.kind for e in elements]
    table = elements[kinds.index(K.TABLE)]
    assert kinds[kinds.index(K.TABLE) - 1] is K.CAPTION
    assert table.text.splitlines()[:2] == [
        "| 32bit Cygwin | Build 64bit Cygwin binary on 32bit Cygwin | 64bit Cygwin "
        "| Build 32bit Cygwin binary on 64bit Cygwin |",
        "|---|---|---|---|",
    ]
    assert "| Devel/make |  |  |  |" in table.text  # colspan keeps the columns


def visible_words(text: str) -> set[str]:
    root = lxml.html.document_fromstring(text)
    for bad in root.xpath("//script|//style|//head"):
        bad.drop_tree()
    return set(WORD.findall(" ".join(root.body.itertext())))


@pytest.mark.parametrize("name", PAGES)
def test_no_visible_word_is_lost(name: str) -> None:
    text = page(name)
    joined = "\n".join(c.text for c in chunks_of(text))
    assert sorted(w for w in visible_words(text) if w not in joined) == []


@pytest.mark.parametrize("name", PAGES)
def test_spans_are_ordered_line_ranges_holding_their_text(name: str) -> None:
    text = page(name)
    elements = read_html(text, source_id="doc")
    assert [e.order for e in elements] == list(range(len(elements)))
    ends = 0
    for e in elements:
        assert e.span is not None
        assert ends <= e.span.start <= e.span.end <= len(text)
        ends = e.span.end
        word = WORD.search(e.text)
        if word and e.kind not in (K.TABLE, K.CODE):
            assert word.group() in text[e.span.start : e.span.end], (e.text[:40], e.span)
    # everything after the first block of the body is covered
    body = text[elements[0].span.start if elements[0].span else 0 :]
    covered = sum(e.span.end - e.span.start for e in elements if e.span)
    assert covered >= len(body.rstrip()) - sum(ch.isspace() for ch in body)


@pytest.mark.parametrize("name", PAGES)
def test_detected_as_html_by_suffix_and_by_content(name: str) -> None:
    assert detect_format(PAGES[name]) == "html"
    assert detect_format(page(name)) == "html"


def test_bytes_are_decoded_by_the_reader() -> None:
    from_bytes = read_html(PAGES["cygwin"].read_bytes(), source_id="doc")
    from_text = read_html(page("cygwin"), source_id="doc")
    assert [e.text for e in from_bytes] == [e.text for e in from_text]


def test_a_utf8_file_goes_through_its_path(tmp_path: Path) -> None:
    path = tmp_path / "help.html"
    path.write_text("<html><body><h1>Help</h1><ol><li>Open it.</li><li>Close it.</li></ol></body></html>")
    chunks = chunks_of(path)
    assert steps_of(chunks) == [(("Help",), "1.", 0), (("Help",), "2.", 0)]


# ----- rules ------------------------------------------------------------------------------------


def read(body: str) -> list[LayoutElement]:
    return read_html(f"<html><body>{body}</body></html>", source_id="doc")


@pytest.mark.parametrize(
    ("body", "numbers"),
    [
        ("<ol><li>a</li><li>b</li></ol>", ["1.", "2."]),
        ('<ol start="3"><li>a</li><li>b</li></ol>', ["3.", "4."]),
        ('<ol type="a"><li>a</li><li>b</li></ol>', ["a.", "b."]),
        ('<ol type="I" start="4"><li>a</li><li>b</li></ol>', ["IV.", "V."]),
        ("<ol reversed><li>a</li><li>b</li><li>c</li></ol>", ["3.", "2.", "1."]),
        ('<ol><li>a</li><li value="7">b</li><li>c</li></ol>', ["1.", "7.", "8."]),
        ('<ol style="list-style-type: lower-roman"><li>a</li><li>b</li></ol>', ["i.", "ii."]),
        ("<ul><li>a</li><li>b</li></ul>", ["-", "-"]),
        ("<p>① 開く<br>② 閉じる</p>", ["①", "②"]),
        ("<p>（1）開く</p><p>（2）閉じる</p>", ["（1）", "（2）"]),
        ("<p>手順1 開く</p>", ["手順1"]),
        ("<p>1. の設定は無視されます。<br>次の行。</p>", []),  # prose, not a step
    ],
)
def test_list_numbers(body: str, numbers: list[str]) -> None:
    assert [e.number for e in read(body) if e.kind is K.LIST_ITEM] == numbers


@pytest.mark.parametrize(
    ("body", "entries"),
    [
        (
            '<h2>目次</h2><ol><li><a href="#a">インストール</a></li><li><a href="#b">初期設定</a>'
            '<ul><li><a href="#c">ネットワーク</a></li></ul></li></ol>',
            ["インストール", "初期設定", "ネットワーク"],
        ),
        ('<ul><li><a href="#x">Install</a>, <a href="#y">Upgrade</a></li></ul>', ["Install Upgrade"]),
    ],
)
def test_a_list_of_in_page_links_is_the_pages_contents_not_steps(body: str, entries: list[str]) -> None:
    # A help page's own contents list names its sections: text marked contents, never steps.
    elements = [e for e in read(body) if e.kind is not K.SECTION_HEADER]
    assert [e.text for e in elements] == entries
    assert all(e.kind is K.TEXT and e.hint("contents") == "true" and e.list_id is None for e in elements)
    chunks = ProcedureChunker().chunk(f"<html><body>{body}</body></html>", source_id="toc.html")
    assert all(not c.steps for c in chunks)


@pytest.mark.parametrize(
    "body",
    [
        '<ol><li><a href="#prep">Prepare the device</a></li><li>Restart the device.</li></ol>',
        '<ul><li><a href="install.html">Install</a></li><li><a href="#c">Configure</a></li></ul>',
        '<ol><li>Open <a href="#s">Settings</a>.</li><li>Select <b>Reset</b>.</li></ol>',
    ],
)
def test_a_list_with_any_item_that_is_more_than_an_in_page_link_stays_a_list(body: str) -> None:
    assert {e.kind for e in read(body)} == {K.LIST_ITEM}


def test_nesting_parents_and_list_ids() -> None:
    a, b, c, more = read("<ol><li>a<ol><li>b</li></ol></li><li><p>c</p><p>more</p></li></ol>")
    assert (a.level, b.level, c.level) == (0, 1, 0)
    assert (b.parent_id, more.parent_id) == (a.element_id, c.element_id)
    assert {a.list_id, b.list_id, c.list_id, more.list_id} == {"doc#l0"}
    assert (c.text, more.kind) == ("c", K.TEXT)


@pytest.mark.parametrize(
    ("body", "label"),
    [
        ('<div class="note"><p>Back up first.</p></div>', "note"),
        (
            '<div class="admonition warning"><p class="admonition-title">Warning</p><p>Hot.</p></div>',
            "warning",
        ),
        ('<div class="admonition"><p class="admonition-title">Caution</p><p>Hot.</p></div>', "caution"),
        ('<div class="admonition hint"><p>Hot.</p></div>', "tip"),
        ("<aside><p>Hot.</p></aside>", "note"),
        ("<p>注意：熱いです。</p>", "注意"),
        ("<p><b>Note:</b> hot.</p>", "note"),
    ],
)
def test_admonitions(body: str, label: str) -> None:
    (note,) = read(body)
    assert (note.kind, note.admonition) == (K.TEXT, label)
    assert note.text.lower().count("warning") == 0 or label != "warning"


@pytest.mark.parametrize(
    ("body", "kind", "text"),
    [
        ("<h2>A</h2><pre>  x = 1\n  y = 2</pre>", K.CODE, "  x = 1\n  y = 2"),
        (
            '<figure><img src="a.png" alt="Screen"><figcaption>The screen</figcaption></figure>',
            K.PICTURE,
            "Screen",
        ),
        ('<figure><img src="a.png"><figcaption>The screen</figcaption></figure>', K.PICTURE, "The screen"),
        ('<p><img src="a.png" alt="Icon"></p>', K.PICTURE, "Icon"),
        ("<dl><dt>Term</dt><dd>Meaning.</dd></dl>", K.TEXT, "Term"),
        (
            "<p>Press <kbd>Ctrl</kbd>+<strong>S</strong> in <code>vi</code>.</p>",
            K.TEXT,
            "Press **Ctrl**+**S** in `vi`.",
        ),
        (
            "<table><tr><td>a|b</td><td>c</td></tr><tr><td>1</td></tr></table>",
            K.TABLE,
            "| a\\|b | c |\n|---|---|\n| 1 |  |",
        ),
    ],
)
def test_block_kinds(body: str, kind: ElementKind, text: str) -> None:
    assert next(e.text for e in read(body) if e.kind is kind) == text


def test_title_only_without_h1_and_ignored_parts() -> None:
    html = (
        "<html><head><title>Page</title><style>p{}</style></head><body><nav>Menu</nav>"
        "<script>var x</script><h2>Part</h2><p>Body</p></body></html>"
    )
    elements = read_html(html, source_id="doc")
    assert [(e.kind, e.text) for e in elements] == [
        (K.TITLE, "Page"),
        (K.SECTION_HEADER, "Part"),
        (K.TEXT, "Body"),
    ]
    assert [e.kind for e in read_html("<title>T</title><h1>H</h1>", source_id="d")] == [K.SECTION_HEADER]


def test_condition_steps_target_and_bound_caution() -> None:
    html = (
        "<h1>Reset</h1><p>If the device is enrolled, do the following:</p>"
        "<ol><li>Open <b>Settings</b>.</li><li>Select <b>Reset</b>.</li></ol>"
        '<div class="warning"><p>Do not unplug the device.</p></div>'
    )
    (chunk,) = chunks_of(html, language="en")
    assert chunk.condition == "If the device is enrolled"
    assert [(s.number, s.target) for s in chunk.steps] == [("1.", "Settings"), ("2.", "Reset")]
    assert "Do not unplug" in chunk.steps[-1].caution


# ----- bad input ----------------------------------------------------------------------------------

NESTED = "<ol><li>step" * 1000 + "</li></ol>" * 1000


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("<h1>Open<p>Click <b>Save<li>Done", ["Open", "Save", "Done"]),  # unclosed tags
        (NESTED, ["step"]),  # 1000 nested lists
        ("<ol><ol><ol><li>deep</li></ol></ol></ol>", ["deep"]),  # lists straight in lists
        ("<table><tr><td><table><tr><td>in</td></tr></table></td></tr></table>", ["in"]),
        ("<b>" * 500 + "bold", ["bold"]),
        ('<?xml version="1.0" encoding="utf-8"?><html><body><p>xhtml</p></body></html>', ["xhtml"]),
        ("</p></div></ol>text after stray closers", ["text"]),
    ],
    ids=["unclosed", "nested-1000", "list-in-list", "nested-table", "bold-500", "xml-declaration", "stray"],
)
def test_malformed_pages_still_read(source: str, words: list[str]) -> None:
    joined = "\n".join(c.text for c in chunks_of(source))
    assert all(w in joined for w in words)
    elements = read_html(source, source_id="doc")
    assert all(e.span is not None and e.span.end <= len(source) for e in elements)


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        (b"<meta charset='utf-8'><p>\xff\xfe\xfa</p>", "not valid utf-8"),
        (b"<meta charset='shift_jis'><p>\x82</p>", "not valid cp932"),
        (b"<meta charset='klingon'><p>x</p>", "unknown charset"),
        (b"<p>\x82\xa0\x82\xa2</p>", "no declared charset"),
        (12, "expected str or bytes"),
    ],
    ids=["bad-utf8", "truncated-sjis", "unknown-charset", "undeclared", "not-text"],
)
def test_unreadable_input_raises_reader_error(source: object, problem: str) -> None:
    with pytest.raises(ReaderError, match="html record") as info:
        read_html(source, source_id="doc")  # type: ignore[arg-type]
    assert problem in str(info.value).lower()


@pytest.mark.parametrize("source", ["", "   \n", "<html></html>", "<!-- only a comment -->"])
def test_empty_pages_yield_nothing(source: str) -> None:
    assert read_html(source, source_id="doc") == []


def test_binary_text_is_refused_before_the_reader() -> None:
    with pytest.raises(ValueError, match="binary"):
        chunks_of(b"\x00\x01\x02\x03" * 100)


@pytest.mark.parametrize(("lang", "link"), [("en", "Back to list"), ("ja", "一覧に戻る")])
def test_a_pages_link_back_up_is_furniture(tests_data: Path, lang: str, link: str) -> None:
    # pandoc's HTML of the enterprise troubleshooting page: each answer ends with
    # <p><a href="#list">Back to list</a></p>, the page's link, not the answer's text.
    html = (tests_data / "html" / "hololens" / f"hololens2-enterprise-troubleshooting-{lang}.html").read_text(
        encoding="utf-8"
    )
    assert html.count(f'<a href="#list">{link}</a>') == 7
    elements = read_html(html, source_id="doc")
    navigation = [e for e in elements if ("navigation", "true") in e.hints]
    assert [(e.kind, e.text) for e in navigation] == [(ElementKind.PAGE_FOOTER, link)] * 7
    chunks = ProcedureChunker(ChunkerOptions(chunk_size=400)).chunk(html)
    assert chunks
    assert not [c for c in chunks if link in c.text]
    # Any other link alone in a paragraph stays its text.
    other = read_html('<p>Intro.</p><p><a href="#setup">Set up the device</a></p>', source_id="d")
    assert [e.text for e in other if e.kind is ElementKind.TEXT] == ["Intro.", "Set up the device"]

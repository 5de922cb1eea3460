"""The Markdown reader: blocks, lists, quotes and admonitions, pseudo-lists, spans and coverage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from procedure_rag import ChunkerOptions, ElementKind, LayoutElement, ProcedureChunker
from procedure_rag._chunking.sections import iter_with_section_paths
from procedure_rag._readers.markdown import read_markdown

K = ElementKind
TESTS_DATA = Path(__file__).resolve().parent / "data"
MARKDOWN_FILES = sorted(p.relative_to(TESTS_DATA).as_posix() for p in TESTS_DATA.rglob("*.md"))
LINK = re.compile(r"!?\[([^\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)")
FIRST_WORD = re.compile(r"[A-Za-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]+")


def read(text: str) -> list[LayoutElement]:
    return read_markdown(text, source_id="doc")


def with_paths(text: str) -> list[LayoutElement]:
    return list(iter_with_section_paths(read(text)))


def by_kind(elements: list[LayoutElement], kind: ElementKind) -> list[LayoutElement]:
    return [e for e in elements if e.kind is kind]


def assert_spans_cover(text: str, elements: list[LayoutElement]) -> None:
    """Every non-whitespace source character lies in some element span; spans start in order."""
    covered = bytearray(len(text))
    starts = []
    for e in elements:
        assert e.span is not None, e
        assert 0 <= e.span.start <= e.span.end <= len(text)
        covered[e.span.start : e.span.end] = b"\x01" * (e.span.end - e.span.start)
        starts.append(e.span.start)
    lost = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert lost == [], f"not covered: {[text[i - 10 : i + 10] for i in lost[:5]]}"
    assert starts == sorted(starts)
    assert [e.order for e in elements] == list(range(len(elements)))


def assert_spans_hold_text(text: str, elements: list[LayoutElement]) -> None:
    """The first word of an element's text sits inside the element's span of the source."""
    for e in elements:
        assert e.span is not None
        word = FIRST_WORD.search(e.text)
        if word is None or (e.kind is K.SECTION_HEADER and "&" in text[e.span.start : e.span.end]):
            continue
        source = text[e.span.start : e.span.end]
        shown = LINK.sub(r"\1", source)  # a link's text runs on into the words after it
        assert word.group() in source or word.group() in shown, (e.kind, e.text[:60], e.span)


# ----- headings and section paths -------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "paths"),
    [
        ("# A\n\ntext a\n\n## B\n\ntext b\n", [("A",), ("A", "B")]),
        # a level jump: ### right after #
        ("# A\n\n### C\n\ntext c\n", [("A", "C")]),
        # a reset: # after ###
        ("# A\n\n### C\n\ntext c\n\n# D\n\ntext d\n", [("A", "C"), ("D",)]),
        # a sibling closes its sibling, not the parent
        ("# A\n\n## B\n\nb\n\n## C\n\nc\n", [("A", "B"), ("A", "C")]),
        # setext headings
        ("Title\n=====\n\nintro\n\nPart\n----\n\nbody\n", [("Title",), ("Title", "Part")]),
        # inline markup and HTML anchors in headings are not part of the title
        ('## <a name="x"></a>The **Settings** `app`\n\nbody\n', [("The Settings app",)]),
        # text before any heading has an empty path
        ("intro\n\n# A\n\nbody\n", [(), ("A",)]),
    ],
)
def test_section_paths(source: str, paths: list[tuple[str, ...]]) -> None:
    texts = [e for e in with_paths(source) if e.kind is K.TEXT]
    assert [e.section_path for e in texts] == paths


@pytest.mark.parametrize(
    ("source", "levels"),
    [
        ("# A\n", [1]),
        ("###### F\n", [6]),
        ("A\n===\n", [1]),
        ("A\n---\n", [2]),
        ("# A\n### C\n## B\n", [1, 3, 2]),
    ],
)
def test_heading_levels(source: str, levels: list[int]) -> None:
    assert [e.level for e in by_kind(read(source), K.SECTION_HEADER)] == levels


def test_heading_path_of_real_page(tests_data: Path) -> None:
    text = (tests_data / "hololens/en/hololens-recovery.md").read_text(encoding="utf-8")
    steps = [e for e in with_paths(text) if e.kind is K.LIST_ITEM and e.text.startswith("Hold down")]
    assert [e.section_path for e in steps] == [
        ("Restart, reset, or recover HoloLens 2", "Restart the device", "Hard-restart procedure")
    ]


# ----- lists ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "numbers", "ordered"),
    [
        ("1. a\n2. b\n3. c\n", ["1.", "2.", "3."], True),
        # Markdown renumbers: "1. 1. 1." reads 1, 2, 3
        ("1. a\n1. b\n1. c\n", ["1.", "2.", "3."], True),
        ("3. a\n3. b\n", ["3.", "4."], True),
        ("1) a\n1) b\n", ["1)", "2)"], True),
        ("- a\n- b\n", ["-", "-"], False),
        ("* a\n* b\n", ["*", "*"], False),
        ("+ a\n+ b\n", ["+", "+"], False),
    ],
)
def test_list_numbers(source: str, numbers: list[str], ordered: bool) -> None:
    items = read(source)
    assert [e.kind for e in items] == [K.LIST_ITEM] * len(numbers)
    assert [e.number for e in items] == numbers
    assert {e.ordered for e in items} == {ordered}
    assert len({e.list_id for e in items}) == 1
    assert [e.text for e in items] == ["a", "b", "c"][: len(numbers)]


def test_nested_lists_keep_parent_and_level() -> None:
    source = "1. Open.\n   - Check A.\n     1. Deep.\n   - Check B.\n2. Close.\n"
    items = read(source)
    assert [(e.text, e.level, e.number) for e in items] == [
        ("Open.", 0, "1."),
        ("Check A.", 1, "-"),
        ("Deep.", 2, "1."),
        ("Check B.", 1, "-"),
        ("Close.", 0, "2."),
    ]
    ids = [e.element_id for e in items]
    assert [e.parent_id for e in items] == [None, ids[0], ids[1], ids[0], None]
    assert len({e.list_id for e in items}) == 1


def test_separate_lists_get_separate_ids() -> None:
    items = read("- a\n- b\n\ntext\n\n1. x\n2. y\n")
    lists = [e.list_id for e in items if e.kind is K.LIST_ITEM]
    assert lists[0] == lists[1] != lists[2] == lists[3]


def test_loose_item_blocks_belong_to_their_item() -> None:
    source = (
        "1. Connect the device.\n\n"
        "   The device will be detected.\n\n"
        "   ![Device Manager.](images/dm.png)\n\n"
        "   ```console\n   dism /online\n   ```\n\n"
        "2. Select the device.\n"
    )
    elements = read(source)
    assert [e.kind for e in elements] == [K.LIST_ITEM, K.TEXT, K.PICTURE, K.CODE, K.LIST_ITEM]
    first, para, pic, code, second = elements
    assert (first.text, first.number, second.number) == ("Connect the device.", "1.", "2.")
    assert {para.parent_id, pic.parent_id, code.parent_id} == {first.element_id}
    assert {para.list_id, pic.list_id, code.list_id, second.list_id} == {first.list_id}
    assert second.parent_id is None
    assert (pic.text, pic.hint("url")) == ("Device Manager.", "images/dm.png")
    # the list item's indentation is removed from the code block
    assert code.text == "```console\ndism /online\n```"
    assert code.hint("language") == "console"


@pytest.mark.parametrize(
    "source",
    [
        "## 目次\n\n1. [インストール](#インストール)\n2. [初期設定](#初期設定)\n"
        "   - [ネットワーク](#ネットワーク)\n3. [バックアップ](#バックアップ)\n",
        "- [Install](#install), [Upgrade](#upgrade)\n- [Configure](#configure)\n",
        "* [Can't sign in?](#cant-sign-in)\n\n* [Why is the screen dark?](#why-is-the-screen-dark)\n",
    ],
)
def test_a_list_of_in_page_links_is_the_pages_contents_not_steps(source: str) -> None:
    # A page's own table of contents names its sections; as a list it would be a
    # procedure whose steps are section titles. Its entries are text, marked contents.
    elements = read(source)
    entries = [e for e in elements if e.kind is not K.SECTION_HEADER]
    assert entries
    assert all(e.kind is K.TEXT and e.hint("contents") == "true" for e in entries)
    assert all(e.parent_id is None and e.list_id is None and not e.number for e in entries)
    assert "#" not in " ".join(e.text for e in entries)  # the link texts, their targets dropped
    assert_spans_cover(source, elements)
    chunks = ProcedureChunker().chunk(source, source_id="toc.md")
    assert all(not c.steps and c.chunk_type.value != "procedure" for c in chunks)


@pytest.mark.parametrize(
    "source",
    [
        # One item that is not a link: a list of steps, some pointing at their section.
        "1. [Prepare the device](#prepare)\n2. Restart the device.\n3. [Enroll it](#enroll)\n",
        # Links to other pages: a list of related pages, read as a list as before.
        "- [Install](install.md)\n- [Configure](https://example.com/configure)\n",
        # The link is part of the step's words.
        "1. Open [Settings](#settings).\n2. Select **Reset**.\n",
        # An item holding more than its link: a paragraph under it.
        "1. [Install](#install)\n\n   Run the installer from the DVD.\n\n2. [Run](#run)\n",
    ],
)
def test_a_list_with_any_item_that_is_more_than_an_in_page_link_stays_a_list(source: str) -> None:
    elements = read(source)
    assert [e.kind for e in elements].count(K.LIST_ITEM) >= 2
    assert not any(e.hint("contents") for e in elements)


def test_a_contents_list_and_the_procedure_after_it_on_one_page() -> None:
    source = (
        "# 管理ガイド\n\n- [ユーザーの追加](#ユーザーの追加)\n- [ユーザーの削除](#ユーザーの削除)\n\n"
        "## ユーザーの追加\n\n1. 管理画面を開きます。\n2. [追加] を選択します。\n"
    )
    chunks = [c for c in ProcedureChunker().chunk(source, source_id="guide.md") if c.level.value == "child"]
    procedures = [c for c in chunks if c.steps]
    assert [s.action for c in procedures for s in c.steps] == [
        "管理画面を開きます。",
        "[追加] を選択します。",
    ]
    assert any("ユーザーの削除" in c.text and not c.steps for c in chunks)


# ----- tables, images, code -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "kind", "text", "hints"),
    [
        ("| Key | Value |\n|---|---|\n| a | 1 |\n", K.TABLE, "| Key | Value |\n|---|---|\n| a | 1 |", ()),
        (
            "![A HoloLens 2 screen.](images/a.png)\n",
            K.PICTURE,
            "A HoloLens 2 screen.",
            (("url", "images/a.png"),),
        ),
        ("```sh\necho hi\n```\n", K.CODE, "```sh\necho hi\n```", (("language", "sh"),)),
        ("~~~\nplain\n~~~\n", K.CODE, "~~~\nplain\n~~~", ()),
        ("    indented code\n", K.CODE, "indented code", ()),
        # an unclosed fence runs to the end of the document
        ("```python\nx = 1\ny = 2\n", K.CODE, "```python\nx = 1\ny = 2", (("language", "python"),)),
    ],
)
def test_block_kinds(source: str, kind: ElementKind, text: str, hints: tuple[tuple[str, str], ...]) -> None:
    (el,) = read(source)
    assert (el.kind, el.text.strip(), el.hints) == (kind, text, hints)
    assert_spans_cover(source, [el])


def test_image_inside_text_stays_text() -> None:
    (el,) = read("Select ![icon](i.png) to open the menu.\n")
    assert el.kind is K.TEXT


# ----- block quotes and admonitions -----------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "label", "text"),
    [
        ("> [!NOTE]\n> If possible, avoid using a PC.\n", "note", "If possible, avoid using a PC."),
        ("> [!IMPORTANT]\n> Charge the device.\n", "important", "Charge the device."),
        (">[!WARNING]\n>All data will be erased.\n", "warning", "All data will be erased."),
        ("> [!TIP]\n> Say Go to Start.\n", "tip", "Say Go to Start."),
        ("> [!CAUTION]\n> Hot surface.\n", "caution", "Hot surface."),
        ("> **注意**\n> 電源を切らないでください。\n", "注意", "電源を切らないでください。"),
        ("> **重要**: データが消去されます。\n", "重要", "データが消去されます。"),
        ("> **Note:** Be careful.\n", "note", "Be careful."),
        ("> Just a quote.\n", "", "Just a quote."),
        # DocFX's styling wrapper (Microsoft Learn pages) is no content; what it wraps is.
        ('> [!div class="nextstepaction"]\n> [Configure it](configure.md)\n', "", "Configure it"),
        ("> [!DIV class='op_single_selector']\n> Windows\n", "", "Windows"),
        # A list in a quote keeps a line per item (wrapped lines of an item joined), not one line.
        (
            "> [!NOTE]\n> 作業の前に:\n> - 保存先のディスクの\n>   空きを確認する。\n"
            "> - 管理者でログインする。\n",
            "note",
            "作業の前に:\n- 保存先のディスクの空きを確認する。\n- 管理者でログインする。",
        ),
        (
            "> **Warning:** Before you flash:\n> 1. Charge the device.\n> 2. Back up your files.\n",
            "warning",
            "Before you flash:\n1. Charge the device.\n2. Back up your files.",
        ),
        ("> * first\n> * second\n", "", "* first\n* second"),
    ],
)
def test_quotes_and_admonitions(source: str, label: str, text: str) -> None:
    (el,) = read(source)
    assert (el.kind, el.admonition, el.text) == (K.TEXT, label, text)
    assert_spans_cover(source, [el])


def test_docfx_div_lines_leave_no_trace_in_the_chunks_of_a_page_that_uses_them(tests_data: Path) -> None:
    # The Autopilot page wraps its screenshots in ``> [!div class="mx-imgBorder"]``.
    for language, alt in (
        ("en", "Use the Import command to import the hardware hash."),
        ("ja", "インポート コマンドを使用して、ハードウェア ハッシュをインポートします。"),
    ):
        text = (tests_data / "hololens" / language / "hololens2-autopilot.md").read_text(encoding="utf-8")
        assert text.count("[!div") >= 3
        chunks = ProcedureChunker().chunk(text, source_id=language)
        assert [c.chunk_id for c in chunks if "!div" in c.text or "mx-imgBorder" in c.text] == []
        assert any(alt in c.text for c in chunks)  # the wrapped screenshot's alt text stays


# ----- front matter -----------------------------------------------------------------------------


def test_front_matter_is_its_own_kind_and_dropped_by_default() -> None:
    source = "---\ntitle: Restart HoloLens\nms.date: 10/15/2021\n---\n\n# Restart\n\nHold the button.\n"
    elements = read(source)
    assert elements[0].kind is K.FRONT_MATTER
    assert elements[0].hint("title") == "Restart HoloLens"
    assert_spans_cover(source, elements)
    chunks = ProcedureChunker(ChunkerOptions(chunk_size=200, length_function=len)).chunk(source)
    assert chunks
    assert not any("ms.date" in c.text for c in chunks)
    assert all(s.start >= elements[0].span.end for c in chunks for s in c.source_spans)  # type: ignore[union-attr]


# ----- pseudo-lists inside paragraphs -------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "numbers", "texts", "ordered"),
    [
        (
            "①電源を入れます。\n②待ちます。\n③サインインします。\n",
            ["①", "②", "③"],
            ["電源を入れます。", "待ちます。", "サインインします。"],
            True,
        ),
        (
            "（1）設定します。\n（2）保存します。\n",
            ["（1）", "（2）"],
            ["設定します。", "保存します。"],
            True,
        ),
        ("(1) Open it.\n(2) Close it.\n", ["(1)", "(2)"], ["Open it.", "Close it."], True),
        ("・りんご\n・みかん\n", ["・", "・"], ["りんご", "みかん"], False),
        (
            "手順1 電源を入れます。\n手順2 待ちます。\n",
            ["手順1", "手順2"],
            ["電源を入れます。", "待ちます。"],
            True,
        ),
        # a wrapped line joins the item before it
        ("①電源を\n入れます。\n②待ちます。\n", ["①", "②"], ["電源を入れます。", "待ちます。"], True),
    ],
)
def test_pseudo_lists_in_paragraphs(source: str, numbers: list[str], texts: list[str], ordered: bool) -> None:
    items = read(source)
    assert [e.kind for e in items] == [K.LIST_ITEM] * len(numbers)
    assert [e.number for e in items] == numbers
    assert [e.text for e in items] == texts
    assert {e.ordered for e in items} == {ordered}
    assert len({e.list_id for e in items}) == 1
    assert_spans_cover(source, items)


def test_pseudo_list_after_lead_in_line() -> None:
    items = read("次の手順で設定します。\n①設定画面を開きます。\n②保存します。\n")
    assert [(e.kind, e.number) for e in items] == [(K.TEXT, ""), (K.LIST_ITEM, "①"), (K.LIST_ITEM, "②")]
    assert items[0].text == "次の手順で設定します。"


@pytest.mark.parametrize(
    ("source", "text"),
    [
        # a wrapped line that starts with bold text or a negative number is not a bullet
        ("Select the app.\n**Settings** opens next.\n", "Select the app. **Settings** opens next."),
        (
            "Keep the device above\n-5 degrees at all times.\n",
            "Keep the device above -5 degrees at all times.",
        ),
        ("+5 V is supplied\nby the port.\n", "+5 V is supplied by the port."),
    ],
)
def test_paragraph_lines_that_are_not_items(source: str, text: str) -> None:
    elements = read(source)
    assert [(e.kind, e.text) for e in elements] == [(K.TEXT, text)]


# ----- sub-steps on a step's continuation lines ---------------------------------------------------


@pytest.mark.parametrize(
    ("source", "steps"),
    [
        (
            "1. Open the box.\n   a. Cut the tape.\n   b. Lift the lid.\n2. Take it out.\n",
            [
                ("1.", 0, "Open the box."),
                ("a.", 1, "Cut the tape."),
                ("b.", 1, "Lift the lid."),
                ("2.", 0, "Take it out."),
            ],
        ),
        # a sub-step's wrapped line is its own; sub-steps flush left (lazy lines) count too
        (
            "1. Open the box\n(1) Cut the tape\ncarefully.\n(2) Lift the lid.\n",
            [("1.", 0, "Open the box"), ("(1)", 1, "Cut the tape carefully."), ("(2)", 1, "Lift the lid.")],
        ),
        # a change of style nests; a marker of the outer sequence closes the inner one
        (
            "1. 箱を開けます。\n   (1) テープを切ります。\n     ① 確認します。\n     ② 取り出します。\n"
            "   (2) 閉じます。\n",
            [
                ("1.", 0, "箱を開けます。"),
                ("(1)", 1, "テープを切ります。"),
                ("①", 2, "確認します。"),
                ("②", 2, "取り出します。"),
                ("(2)", 1, "閉じます。"),
            ],
        ),
        # one sub-step alone, after a full stop; i. ii. count as roman numerals
        ("- 設定します。\n  手順1 開きます。\n", [("-", 0, "設定します。"), ("手順1", 1, "開きます。")]),
        (
            "1. Choose one:\n   i. Wi-Fi\n   ii. Ethernet\n",
            [("1.", 0, "Choose one:"), ("i.", 1, "Wi-Fi"), ("ii.", 1, "Ethernet")],
        ),
        (
            "* Check:\n  ・電源\n  ・ケーブル\n",
            [("*", 0, "Check:"), ("・", 1, "電源"), ("・", 1, "ケーブル")],
        ),
    ],
)
def test_substeps_on_continuation_lines(source: str, steps: list[tuple[str, int, str]]) -> None:
    items = read(source)
    assert [(e.number, e.level, e.text) for e in items] == steps
    # each sub-step's parent is the nearest step before it one level up
    parents = [
        next((p.element_id for p in reversed(items[:i]) if p.level == e.level - 1), None)
        for i, e in enumerate(items)
    ]
    assert [e.parent_id for e in items] == parents
    assert len({e.list_id for e in items}) == 1
    assert_spans_cover(source, items)


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("1. Make sure that\n   1.5 GB is free.\n", "Make sure that 1.5 GB is free."),
        ("1. Set the alarm for 9\n   a. m. and press Start.\n", "Set the alarm for 9 a. m. and press Start."),
        # a wrapped sentence: a position other than the first starts nothing
        ("1. Hold the button for\n   2. seconds.\n", "Hold the button for 2. seconds."),
        ("1. Open the box.\n   (2) shows the lid.\n", "Open the box. (2) shows the lid."),
        ("1. See the lid, that\n   i. e. the top.\n", "See the lid, that i. e. the top."),
        ("1. Find the button\n   ① in the figure.\n", "Find the button ① in the figure."),
        ("1. Press **Start\n   a.** to begin.\n", "Press **Start a.** to begin."),
    ],
)
def test_continuation_lines_that_are_not_substeps(source: str, text: str) -> None:
    (item,) = read(source)
    assert (item.kind, item.text) == (K.LIST_ITEM, text)


# ----- spans and coverage -------------------------------------------------------------------------


@pytest.mark.parametrize("path", MARKDOWN_FILES)
def test_real_pages_spans_cover_and_hold_text(tests_data: Path, path: str) -> None:
    text = (tests_data / path).read_text(encoding="utf-8")
    elements = read(text)
    assert elements
    assert_spans_cover(text, elements)
    assert_spans_hold_text(text, elements)


@pytest.mark.parametrize(
    "source",
    [
        "Text\n\n---\n\n[ref]: https://example.com\n\nMore [text][ref].\n",
        "<div>html <b>block</b></div>\n\nafter\n",
        "Term\n: Definition\n",
        "Text[^1]\n\n[^1]: The footnote.\n",
        "- [ ] task one\n- [x] task two\n",
        "1. a\n\n\n\n   b\n",
        "```\nunclosed\n",
        "| a | b |\n|---|\n| 1 |\n",
    ],
)
def test_odd_blocks_are_covered(source: str) -> None:
    assert_spans_cover(source, read(source))


@pytest.mark.parametrize(("lang", "link"), [("en", "Back to list"), ("ja", "一覧に戻る")])
def test_a_pages_link_back_up_is_furniture(tests_data: Path, lang: str, link: str) -> None:
    # The enterprise troubleshooting page ends each answer with "[Back to list](#list)": the
    # page's link, not the section's text (as in the page text of a PDF print).
    page = tests_data / "hololens" / lang / "hololens2-enterprise-troubleshooting.md"
    text = page.read_text(encoding="utf-8")
    assert text.count(f"[{link}](#list)") == 7
    navigation = [e for e in read(text) if ("navigation", "true") in e.hints]
    assert [(e.kind, e.text) for e in navigation] == [(ElementKind.PAGE_FOOTER, link)] * 7
    chunks = ProcedureChunker(ChunkerOptions(chunk_size=400)).chunk(text)
    assert not [c for c in chunks if link in c.text]
    # A link of another kind stays the paragraph's text.
    kept = read("# Setup\n\n[Set up the device](#setup)\n\nThen restart it.\n")
    assert next(e.text for e in kept if e.kind is ElementKind.TEXT) == "Set up the device"

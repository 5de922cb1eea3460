"""The PowerPoint reader on decks made by pandoc and LibreOffice Impress (tests/data/pptx), and on bad input.

The decks come from HoloLens pages in both languages (tests/data/pptx/make_pptx.py): the
recovery page as pandoc lays it out (a title slide, a section slide per ``##``, a slide
per ``###``), a restart deck written from it (a procedure over two slides, speaker
notes, a note, a table) as pandoc writes it and as LibreOffice saves it again, and a
troubleshooting deck LibreOffice writes from ODF (sub-steps, alt text, grouped shapes,
a merged cell, a hidden slide). Numbering schemes, master bullets, sections and damage
are tested by editing the parts of those files.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _invariants import assert_ids_distinct, assert_reading_order, lost_characters
from procedure_rag import ChunkerOptions, ChunkLevel, ProcedureChunker, ReaderError, chunk_metadata
from procedure_rag._readers.pptx import NOTES_HINT, read_pptx
from procedure_rag._readers.pptx_bullets import format_autonumber
from procedure_rag._readers.registry import detect_format, read_source
from procedure_rag._types import ElementKind, LayoutElement

DATA = Path(__file__).resolve().parent / "data"
PPTX = DATA / "pptx"
DECKS = {
    "en": PPTX / "hololens-restart-deck-en.pptx",
    "ja": PPTX / "hololens-restart-deck-ja.pptx",
    "ja-libreoffice": PPTX / "hololens-restart-deck-ja-libreoffice.pptx",
}
TROUBLESHOOT = PPTX / "hololens-troubleshoot-libreoffice-ja.pptx"
# Each slide's section alone (no combining of small sections), so that chunks show the reader's titles.
CHUNKER = ProcedureChunker(ChunkerOptions(length_function=len, chunk_size=400, combine_small_sections=False))

#: What each restart deck says, by language: title, sections, the slides' titles, the note's label.
DECK_TEXT = {
    "en": {
        "title": "Restart HoloLens 2",
        "section": "Restart the device",
        "standard": "Standard restart procedure",
        "hard": "Hard-restart procedure",
        "battery": ("Check the battery", "Battery indicator lights"),
        "condition": "If the standard reset procedure didn’t work",  # pandoc's smart quotes
        "continued": "Hard-restart procedure (continued)",
        "step3": "Connect the device to the host PC.",
        "note": "If possible, avoid using a PC to charge the device over USB, which is slow.",
        "notes": ("Under certain circumstances", "If the device can’t boot to the startup menu"),
        "table": "| Battery indicator | What it means |",
    },
    "ja": {
        "title": "HoloLens 2 を再起動する",
        "section": "デバイスを再起動します",
        "standard": "標準の再起動手順",
        "hard": "ハード再起動の手順",
        "battery": ("バッテリを確認する", "バッテリ インジケーター ライト"),
        "condition": "標準のリセット手順が機能しない場合は",  # with its particle (issue 19)
        "continued": "ハード再起動の手順（続き）",
        "step3": "デバイスをホスト PC に接続します。",
        "note": "可能であれば、PC を使用してデバイスを USB 経由で充電することは避けてください。遅いです。",
        "notes": ("状況によっては", "デバイスが起動メニューから起動できない場合は"),
        "table": "| バッテリ インジケーター | 意味 |",
    },
}


def children(source: object, chunker: ProcedureChunker = CHUNKER) -> list:  # type: ignore[type-arg]
    return [
        c for c in chunker.iter_chunks_from_source(source, source_id="deck") if c.level == ChunkLevel.CHILD
    ]


def texts(deck: str) -> dict[str, object]:
    return DECK_TEXT[deck.split("-", maxsplit=1)[0]]


# ----- the restart decks: sections, a procedure over two slides, notes, a table -----------------------


@pytest.mark.parametrize("deck", DECKS)
def test_slide_titles_are_the_section_paths(deck: str) -> None:
    t = texts(deck)
    paths = {c.section_path for c in children(DECKS[deck])}
    assert paths == {
        (t["title"], t["section"], t["standard"]),
        (t["title"], t["section"], t["hard"]),
        (t["title"], *t["battery"]),  # type: ignore[misc]
    }


@pytest.mark.parametrize("deck", DECKS)
def test_a_procedure_over_two_slides_is_one_list_with_its_condition_and_caution(deck: str) -> None:
    t = texts(deck)
    hard = [c for c in children(DECKS[deck]) if c.section_path[-1] == t["hard"] and c.steps]
    steps = [s for c in hard for s in c.steps if not s.is_continuation]
    assert [s.number for s in steps] == ["1.", "2.", "3.", "4."]  # the second slide starts at 3
    assert hard[0].condition == t["condition"]
    assert steps[2].action == t["step3"]
    assert steps[3].caution == t["note"]  # the note under the list, on the second slide
    # The title again, marked "(continued)" / "（続き）": a running header (left out), no new section.
    elements = read_source(DECKS[deck], source_id="d", fmt="pptx").elements
    running = [(e.page, e.text) for e in elements if e.kind is ElementKind.PAGE_HEADER]
    assert running == [(5, t["continued"])]
    pages = [json.loads(chunk_metadata(c)["pages"]) for c in hard]
    assert sorted({p for ps in pages for p in ps}) == [4, 5]


@pytest.mark.parametrize("deck", DECKS)
def test_speaker_notes_follow_their_sections_content(deck: str) -> None:
    t = texts(deck)
    elements = read_source(DECKS[deck], source_id="d", fmt="pptx").elements
    notes = [e for e in elements if NOTES_HINT in e.hints]
    assert [(e.page, e.text[: len(n)]) for e, n in zip(notes, t["notes"], strict=True)] == [  # type: ignore[arg-type]
        (3, t["notes"][0]),  # type: ignore[index]
        (4, t["notes"][1]),  # type: ignore[index]
    ]
    # The hard restart's notes (slide 4) come after its steps on slide 5: the list is not cut.
    last_step = max(e.order for e in elements if e.kind is ElementKind.LIST_ITEM and e.page == 5)
    assert notes[1].order > last_step
    without = ChunkerOptions(length_function=len, include_speaker_notes=False)
    quiet = read_source(DECKS[deck], source_id="d", fmt="pptx", options=without.reader_options)
    assert not any(NOTES_HINT in e.hints for e in quiet.elements)
    assert t["notes"][0] not in quiet.text  # type: ignore[index]


@pytest.mark.parametrize("deck", DECKS)
def test_the_table_is_a_markdown_table(deck: str) -> None:
    t = texts(deck)
    tables = [c for c in children(DECKS[deck]) if c.chunk_type == "table"]
    assert tables
    assert all(c.section_path[-1] == t["battery"][1] for c in tables)  # type: ignore[index]
    assert all(t["table"] in c.text for c in tables)  # the header repeated in every part


@pytest.mark.parametrize("deck", DECKS)
def test_spans_point_into_the_text_and_every_element_has_its_slide(deck: str) -> None:
    source = read_source(DECKS[deck], source_id="d", fmt="pptx")
    for el in source.elements:
        assert el.span is not None
        shown = source.text[el.span.start : el.span.end]
        assert shown.startswith(el.number) if el.number else True
        assert el.text.split()[0] in shown
        assert el.page in range(1, 8)
        if NOTES_HINT not in el.hints:
            assert el.bbox is not None
            assert el.bbox.unit == "pt"
            assert 0 <= el.bbox.left < el.bbox.right <= 1


def test_libreoffice_saves_the_deck_pandoc_wrote_as_the_same_chunks() -> None:
    # LibreOffice writes its own layouts and every paragraph's bullet: the chunks do not change.
    def chunks(path: Path) -> list[tuple[str, tuple[str, ...], list[tuple[str, str, str]]]]:
        return [
            (c.text, c.section_path, [(s.number, s.action, s.caution) for s in c.steps])
            for c in children(path)
        ]

    assert chunks(DECKS["ja-libreoffice"]) == chunks(DECKS["ja"])


# ----- the page as pandoc lays it out: the Markdown's sections and steps ----------------------------------

Step = tuple[str, tuple[str, ...], str, str, str]


def steps_of(source: Path) -> list[Step]:
    """(action, section path, number, condition, caution) of every step; emphasis marks dropped."""
    return [
        (" ".join(re.sub(r"[*_]", "", s.action).split()), c.section_path, s.number, s.condition, s.caution)
        for c in children(source)
        for s in c.steps
    ]


def same_step(pptx: Step, md: Step) -> bool:
    number_ok = pptx[2] == md[2] if md[2][:1].isalnum() else not pptx[2][:1].isalnum()
    return number_ok and pptx[1:2] == md[1:2] and pptx[3:] == md[3:]


CLEAN_REFLASH = {"en": "Clean-reflash the device", "ja": "デバイスをきれいに再フラッシュする"}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_pandoc_pptx_gives_the_markdown_pages_sections_and_steps(lang: str) -> None:
    wanted = steps_of(DATA / f"hololens/{lang}/hololens-recovery.md")
    by_action: dict[str, list[Step]] = {}
    for step in steps_of(PPTX / f"hololens-recovery-{lang}.pptx"):
        by_action.setdefault(step[0], []).append(step)
    missed = [m for m in wanted if not any(same_step(d, m) for d in by_action.get(m[0], []))]
    rate = 1 - len(missed) / len(wanted)
    print(f"hololens-recovery {lang}: {rate:.1%} of the Markdown page's steps")  # noqa: T201
    # pandoc puts the five bullets of "Clean-reflash the device" in the caption placeholder of
    # its "Content with Caption" layout, whose list style shows no bullets: PowerPoint shows
    # five lines, and so do we. (ja: one more, where the Markdown reader keeps "[_[" markup.)
    bullets = [m for m in missed if m[2] == "-"]
    assert len(bullets) == 5
    assert {m[1][-1] for m in bullets} == {CLEAN_REFLASH[lang]}
    # Beyond those, at most a few steps whose fields the two readers split differently (ja).
    assert len(missed) - len(bullets) <= (3 if lang == "ja" else 0)
    assert rate >= (0.85 if lang == "ja" else 0.88)  # ja: two steps split differently since issue 19


# ----- the LibreOffice troubleshooting deck: sub-steps, alt text, groups, merged cells, a hidden slide -----


def test_sub_steps_alt_text_grouped_shapes_and_a_merged_cell() -> None:
    elements = read_source(TROUBLESHOOT, source_id="t", fmt="pptx").elements
    items = [(e.number, e.level) for e in elements if e.kind is ElementKind.LIST_ITEM]
    assert items == [("1.", 0), ("2.", 0), ("3.", 0), ("4.", 0), ("a)", 1), ("b)", 1)]
    fourth = next(e for e in elements if e.number == "4.")
    assert all(e.parent_id == fourth.element_id for e in elements if e.number in ("a)", "b)"))
    assert [e.text for e in elements if e.kind is ElementKind.PICTURE] == [
        "HoloLens 2 MicrosoftHoloLensRecovery デバイス マネージャー。"
    ]
    shown = [e.text for e in elements if e.kind is ElementKind.TEXT and NOTES_HINT not in e.hints]
    assert shown == ["[ボリューム ダウン] ボタン", "[電源] ボタン"]  # the group's shapes, in its order
    group = [e.bbox for e in elements if e.text in shown]
    assert group[0] is not None
    assert group[1] is not None
    assert group[0].right <= group[1].left + 1e-6
    table = next(e for e in elements if e.kind is ElementKind.TABLE)
    assert table.text.splitlines()[0] == "| バッテリ インジケーター ライト |  |"


def test_hidden_slides_are_skipped_unless_asked_for() -> None:
    shown = read_source(TROUBLESHOOT, source_id="t", fmt="pptx")
    assert sorted({e.page for e in shown.elements}) == [1, 3]  # slide 3 keeps its number
    assert "社内向けメモ" not in shown.text
    options = ChunkerOptions(include_hidden_slides=True).reader_options
    everything = read_source(TROUBLESHOOT, source_id="t", fmt="pptx", options=options)
    assert sorted({e.page for e in everything.elements}) == [1, 2, 3]
    assert "社内向けメモ" in everything.text


# ----- PresentationML edited in the test: numbering schemes, bullets, sections ------------------------------

NS = (
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
)
SLIDE = "ppt/slides/slide3.xml"  # a "Title and Content" slide of the English restart deck


def edited(path: Path, parts: dict[str, str]) -> bytes:
    """The package at ``path`` with ``parts`` replaced (or added)."""
    out = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename not in parts:
                dst.writestr(info, src.read(info))
        for name, text in parts.items():
            dst.writestr(name, text)
    return out.getvalue()


def para(text: str, *, lvl: int = 0, bullet: str = "") -> str:
    return f'<a:p><a:pPr lvl="{lvl}">{bullet}</a:pPr><a:r><a:t>{escape(text)}</a:t></a:r></a:p>'


def auto(scheme: str, start: int | None = None) -> str:
    at = f' startAt="{start}"' if start is not None else ""
    return f'<a:buAutoNum type="{scheme}"{at}/>'


def slide(body: str, *, title: str = "Steps") -> str:
    def shape(ph: str, paragraphs: str) -> str:
        return (
            f'<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr>{ph}</p:nvPr></p:nvSpPr>'
            f"<p:spPr/><p:txBody><a:bodyPr/>{paragraphs}</p:txBody></p:sp>"
        )

    title_xml = shape('<p:ph type="title"/>', f"<a:p><a:r><a:t>{title}</a:t></a:r></a:p>")
    body_xml = shape('<p:ph idx="1"/>', body)
    return f"<p:sld {NS}><p:cSld><p:spTree>{title_xml}{body_xml}</p:spTree></p:cSld></p:sld>"


def on_slide(body: str) -> list[LayoutElement]:
    """The elements of slide 3 of the English restart deck, its body replaced by ``body``."""
    data = edited(DECKS["en"], {SLIDE: slide(body)})
    return [e for e in read_pptx(data, source_id="n").elements if e.page == 3 and NOTES_HINT not in e.hints]


@pytest.mark.parametrize(
    ("scheme", "expected"),
    [
        ("arabicPeriod", ["1.", "2.", "3."]),
        ("arabicParenBoth", ["(1)", "(2)", "(3)"]),
        ("alphaLcParenR", ["a)", "b)", "c)"]),
        ("romanUcPeriod", ["I.", "II.", "III."]),
        ("romanLcParenBoth", ["(i)", "(ii)", "(iii)"]),
        ("circleNumDbPlain", ["①", "②", "③"]),
        ("arabicDbPeriod", ["１．", "２．", "３．"]),
        ("ea1JpnChsDbPeriod", ["一．", "二．", "三．"]),
    ],
)
def test_auto_numbers_are_rendered_as_powerpoint_shows_them(scheme: str, expected: list[str]) -> None:
    body = "".join(para(f"Step {i}.", bullet=auto(scheme)) for i in range(3))
    assert [e.number for e in on_slide(body) if e.kind is ElementKind.LIST_ITEM] == expected


def test_numbering_starts_restarts_and_goes_on_under_deeper_paragraphs() -> None:
    body = (
        para("a", bullet=auto("arabicPeriod", 5))
        + para("b", lvl=1, bullet=auto("alphaLcPeriod"))
        + para("under b", lvl=2, bullet="<a:buNone/>")  # a paragraph of b: b's list goes on
        + para("c", lvl=1, bullet=auto("alphaLcPeriod"))
        + para("d", bullet=auto("arabicPeriod", 5))
        + para("e", lvl=1, bullet=auto("alphaLcPeriod"))  # a shallower paragraph restarted level 1
        + para("plain", bullet="<a:buNone/>")  # ends the sequence
        + para("f", bullet=auto("arabicPeriod", 5))
    )
    elements = on_slide(body)
    numbered = [(e.number, e.text) for e in elements if e.kind is ElementKind.LIST_ITEM]
    assert numbered == [("5.", "a"), ("a.", "b"), ("b.", "c"), ("6.", "d"), ("a.", "e"), ("5.", "f")]
    under = next(e for e in elements if e.text == "under b")
    assert under.parent_id == next(e.element_id for e in elements if e.text == "b")


def test_bullets_come_from_the_master_and_symbol_fonts_show_their_glyph() -> None:
    body = (
        para("inherits the master's first level")
        + para("and its second", lvl=1)
        + para("wingdings", bullet='<a:buFont typeface="Wingdings"/><a:buChar char="§"/>')
        + para("no bullet", bullet="<a:buNone/>")
    )
    elements = on_slide(body)
    assert [(e.kind, e.number) for e in elements[1:]] == [
        (ElementKind.LIST_ITEM, "•"),  # pandoc's master: bodyStyle lvl1 •, lvl2 –
        (ElementKind.LIST_ITEM, "–"),
        (ElementKind.LIST_ITEM, "▪"),
        (ElementKind.TEXT, ""),
    ]
    assert all(not e.ordered for e in elements[1:4])


def test_typed_numbers_in_unbulleted_paragraphs_go_through_the_text_rules() -> None:
    body = "".join(para(t, bullet="<a:buNone/>") for t in ("① 電源を切ります。", "② ケーブルを抜きます。"))
    assert [(e.kind, e.number) for e in on_slide(body)[1:]] == [
        (ElementKind.LIST_ITEM, "①"),
        (ElementKind.LIST_ITEM, "②"),
    ]


def test_powerpoint_sections_sit_above_the_slides() -> None:
    with zipfile.ZipFile(DECKS["en"]) as zf:
        presentation = zf.read("ppt/presentation.xml").decode()
    ids = re.findall(r'<p:sldId id="(\d+)"', presentation)
    p14 = "http://schemas.microsoft.com/office/powerpoint/2010/main"

    def section(name: str, members: list[str]) -> str:
        listed = "".join(f'<p14:sldId id="{i}"/>' for i in members)
        return f'<p14:section name="{name}" id="{{0}}"><p14:sldIdLst>{listed}</p14:sldIdLst></p14:section>'

    ext = (
        f'<p:extLst><p:ext uri="{{521415D9-36F7-43E2-AB2F-B90AF26B5E84}}"><p14:sectionLst xmlns:p14="{p14}">'
        f"{section('Restart', ids[:5])}{section('Battery', ids[5:])}</p14:sectionLst></p:ext></p:extLst>"
    )
    data = edited(
        DECKS["en"],
        {"ppt/presentation.xml": presentation.replace("</p:presentation>", ext + "</p:presentation>")},
    )
    paths = [c.section_path for c in children(data) if c.steps]
    assert paths[0] == ("Restart HoloLens 2", "Restart", "Restart the device", "Standard restart procedure")
    battery = [c.section_path for c in children(data) if c.chunk_type == "table"]
    assert battery[0] == ("Restart HoloLens 2", "Battery", "Check the battery", "Battery indicator lights")


def test_format_autonumber_edges() -> None:
    assert format_autonumber(11, "circleNumDbPlain") == "11"  # circles go to 10
    assert format_autonumber(3, "circleNumWdBlackPlain") == "❸"
    assert format_autonumber(27, "alphaUcPeriod") == "AA."
    assert format_autonumber(4, "thaiNumPeriod") == "4."  # a scheme not rendered: digits, its punctuation


# ----- generated slides: nothing lost, numbers counted as the rule says -------------------------------------

SCHEMES = ("arabicPeriod", "alphaLcParenR", "romanUcPeriod", "circleNumDbPlain", "ea1JpnChsDbPeriod")
PARAGRAPH = st.tuples(
    st.integers(0, 2),  # level
    st.sampled_from([*SCHEMES, "char", "none", "inherit"]),  # bullet
    st.text(alphabet=st.sampled_from("ab 設定を開く。1.①(注意:Note)\n"), min_size=0, max_size=24),
)


def _bullet(kind: str) -> str:
    fixed = {"char": '<a:buChar char="•"/>', "none": "<a:buNone/>", "inherit": ""}
    return fixed[kind] if kind in fixed else auto(kind)


def _level0_runs(paragraphs: list[tuple[int, str, str]]) -> list[tuple[str, int]]:
    """(scheme, place in its run) of each numbered level-0 paragraph, by the rule in pptx_bullets."""
    out, run, scheme = [], 0, ""
    for level, kind, text in paragraphs:
        if not text.strip() or level > 0:
            continue
        run = run + 1 if kind in SCHEMES and kind == scheme else 1
        scheme = kind if kind in SCHEMES else ""
        if kind in SCHEMES:
            out.append((kind, run))
    return out


@given(paragraphs=st.lists(PARAGRAPH, max_size=14), continued=st.booleans(), size=st.integers(60, 400))
@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
def test_generated_slides_lose_nothing_and_count_as_powerpoint_does(
    paragraphs: list[tuple[int, str, str]], continued: bool, size: int
) -> None:
    half = len(paragraphs) // 2
    body = "".join(para(text, lvl=level, bullet=_bullet(kind)) for level, kind, text in paragraphs[:half])
    rest = "".join(para(text, lvl=level, bullet=_bullet(kind)) for level, kind, text in paragraphs[half:])
    second = slide(rest, title="Steps (continued)" if continued else "Other steps")
    data = edited(DECKS["en"], {SLIDE: slide(body), "ppt/slides/slide4.xml": second})
    source = read_source(data, source_id="g", fmt="pptx")
    chunker = ProcedureChunker(ChunkerOptions(length_function=len, chunk_size=size))
    chunks = list(chunker.iter_chunks_from_source(data, source_id="g", source_format="pptx"))
    dropped = [
        (e.span.start, e.span.end) for e in source.elements if e.kind in chunker.options.drop_kinds and e.span
    ]
    assert lost_characters(source.text, chunks, dropped) == []
    assert_reading_order(chunks)
    assert_ids_distinct(chunks)
    for page, part in ((3, paragraphs[:half]), (4, paragraphs[half:])):
        items = [e for e in source.elements if e.page == page and e.kind is ElementKind.LIST_ITEM]
        # PowerPoint's numbers (numbers typed by hand are read by the text rules, which name their style)
        top = [
            e.number
            for e in items
            if e.level == 0 and e.ordered and not any(k == "style" for k, _ in e.hints)
        ]
        assert top == [format_autonumber(n, scheme) for scheme, n in _level0_runs(part)]


# ----- detection and bad input ----------------------------------------------------------------------


def test_told_by_suffix_and_by_content_type() -> None:
    assert detect_format(DECKS["en"]) == "pptx"
    assert detect_format(Path("x.ppsx")) == "pptx"
    assert detect_format(Path("x.pptm")) == "pptx"
    assert detect_format(DECKS["ja-libreoffice"].read_bytes()) == "pptx"


def test_legacy_ppt_says_how_to_convert() -> None:
    ole = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
        + b"\0" * 64
        + "PowerPoint Document".encode("utf-16-le")
        + b"\0" * 64
    )
    with pytest.raises(ReaderError, match=r"soffice --headless --convert-to pptx"):
        read_source(ole, source_id="old.ppt", fmt="pptx")
    with pytest.raises(ReaderError, match=r"convert-to pptx"):
        detect_format(ole)


def _without(path: Path, part: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename != part:
                dst.writestr(info, src.read(info))
    return out.getvalue()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not a zip", r"pptx record 'file': bad is not an Office Open XML file"),
        (DECKS["en"].read_bytes()[:5000], r"pptx record 'file': bad is a damaged or truncated zip"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + "EncryptedPackage".encode("utf-16-le"), r"password-protected"),
        (
            _without(DECKS["en"], SLIDE),
            r"pptx record 'ppt/slides/slide3.xml': bad: slide 3 has no part in the file",
        ),
        (
            edited(DECKS["en"], {SLIDE: "<p:sld"}),
            r"pptx record 'ppt/slides/slide3.xml': bad: the part is damaged",
        ),
        (
            edited(DECKS["en"], {SLIDE: '<?xml version="1.0" encoding="UTx-8"?><p:sld/>'}),
            r"pptx record 'ppt/slides/slide3.xml': bad: the part is damaged: unknown encoding",
        ),
        (
            edited(DECKS["en"], {"ppt/slideLayouts/slideLayout2.xml": "<p:sldLayout"}),
            r"pptx record 'ppt/slideLayouts/slideLayout2.xml': bad: the part is damaged",
        ),
        (
            (DATA / "xlsx/ja_neos21_sagyo-tejunsho-template.xlsx").read_bytes(),
            r"pptx record 'xl/workbook.xml': bad is not a PowerPoint deck: its main part is application/vnd",
        ),
    ],
    ids=[
        "not-zip",
        "truncated",
        "encrypted",
        "missing-slide",
        "damaged-slide",
        "unknown-encoding",
        "damaged-layout",
        "workbook",
    ],
)
def test_bad_input_is_a_reader_error_naming_file_and_part(data: bytes, message: str) -> None:
    with pytest.raises(ReaderError, match=message):
        read_source(data, source_id="bad", fmt="pptx")


def test_zip_bomb_limit() -> None:
    small = ProcedureChunker(ChunkerOptions(length_function=len, max_uncompressed_bytes=1000))
    with pytest.raises(ReaderError, match=r"over the limit of 1,000 \(ChunkerOptions.max_uncompressed_bytes"):
        list(small.iter_chunks_from_source(DECKS["en"], source_id="bomb"))


# ----- the command line --------------------------------------------------------------------------


def test_cli_splits_a_deck(capsys: pytest.CaptureFixture[str]) -> None:
    from procedure_rag._cli.main import main  # noqa: PLC0415 - only these tests need it

    assert main(["split", "--jsonl", str(DECKS["ja"])]) == 0
    chunks = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    hard = [
        c
        for c in chunks
        if c["metadata"]["section_path"][-1] == "ハード再起動の手順" and c["metadata"]["steps"]
    ]
    assert [s["number"] for c in hard for s in c["metadata"]["steps"]] == ["1.", "2.", "3.", "4."]
    assert hard[0]["metadata"]["page"] == 4


def test_cli_indexes_and_finds_a_deck(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from procedure_rag._cli.main import main  # noqa: PLC0415 - only these tests need it

    assert main(["index", str(DECKS["ja"]), "--persist", str(tmp_path / "index")]) == 0
    capsys.readouterr()
    question = "ハード再起動で、音量ダウンと電源ボタンを押したあとは何をしますか？"
    assert main(["query", question, "--persist", str(tmp_path / "index"), "-k", "1", "--jsonl"]) == 0
    (best,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert best["metadata"]["section_path"][-1] == "ハード再起動の手順"
    assert "デバイスをホスト PC に接続します。" in best["text"]


def test_a_numbered_heading_in_a_slides_text_nests_once_under_its_title() -> None:
    none = "<a:buNone/>"
    elements = on_slide(
        para("第1章 準備", bullet=none)
        + para(
            "デバイスを充電します。ケーブルを USB-C ポートに差し込み、ランプが白くなるまで待ちます。",
            bullet=none,
        )
    )
    headings = [(e.level, e.text) for e in elements if e.kind is ElementKind.SECTION_HEADER]
    title_level = headings[0][0]
    assert headings == [(title_level, "Steps"), (title_level + 1, "第1章 準備")]

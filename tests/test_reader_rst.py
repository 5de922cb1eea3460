"""The reStructuredText reader: freee a11y guidelines, Sphinx roles, lists, notes, tables, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from procedure_rag import ChunkerOptions, ElementKind, LayoutElement, ProcedureChunker
from procedure_rag._errors import ReaderError
from procedure_rag._readers.registry import detect_format
from procedure_rag._readers.rst import read_rst
from procedure_rag._types import Chunk

K = ElementKind
RST_DATA = Path(__file__).resolve().parent / "data" / "rst"
EXPLANATIONS = RST_DATA / "ja-native" / "a11y-guidelines" / "ja" / "source" / "explanations"
DOCS = {"grayscale": EXPLANATIONS / "grayscale.rst", "magnification": EXPLANATIONS / "magnification.rst"}
WORD = re.compile(r"[A-Za-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]+")
# Markup a reader never sees: directive and option names, role names, targets, URLs, raw HTML tags.
MARKUP = re.compile(
    r"^\s*\.\. [\w:-]+::.*$|^\s*:[\w-]+:.*$|^\.\. _[^:]+:$|:[\w:]+:(?=`)|<https?://[^>]+>|<[^<>]+>",
    re.MULTILINE,
)


def chunks_of(source: object, **options: object) -> list[Chunk]:
    chunker = ProcedureChunker(ChunkerOptions(emit_parents=False, **options))  # type: ignore[arg-type]
    return list(chunker.iter_chunks_from_source(source, source_id="doc", source_format="rst"))


def steps_of(chunks: list[Chunk]) -> list[tuple[str, str]]:
    return [(c.section_path[-1], s.number) for c in chunks for s in c.steps if not s.is_continuation]


# ----- real documents -----------------------------------------------------------------------------

HEADINGS = {
    "grayscale": [
        (1, "グレースケール表示への切り替え方"),
        (2, "Windows 10、Windows 11"),
        (2, "macOS"),
        (2, "iOS"),
        (2, "Android"),
        (3, "Android 13以降の場合"),
        (3, "Android 11以前の場合"),
        (3, "参考：開発者向けオプションの有効化"),
        (2, "参考：ブックマークレットの利用"),
    ],
    "magnification": [
        (1, "拡大表示時のアクセシビリティー"),
        (2, "Webブラウザーの拡大表示"),
        (3, "参考：ズーム機能と文字サイズ変更機能"),
        (2, "モバイル・アプリケーションにおける拡大表示"),
        (3, "iOSの場合"),
        (3, "Androidの場合"),
    ],
}


def numbered(section: str, count: int) -> list[tuple[str, str]]:
    return [(section, f"{i}.") for i in range(1, count + 1)]


STEPS = {
    "grayscale": [
        *numbered("Windows 10、Windows 11", 4),
        *numbered("macOS", 5),
        *numbered("iOS", 3),
        *numbered("Android 13以降の場合", 3),
        *numbered("Android 11以前の場合", 4),
        *numbered("参考：開発者向けオプションの有効化", 3),
        *numbered("参考：ブックマークレットの利用", 2),
    ],
    "magnification": [
        *numbered("Webブラウザーの拡大表示", 2),
        *numbered("iOSの場合", 3),
        *numbered("Androidの場合", 2),
        *numbered("Androidの場合", 2),
    ],
}


@pytest.mark.parametrize(("name", "headings"), HEADINGS.items())
def test_headings_and_section_paths(name: str, headings: list[tuple[int, str]]) -> None:
    elements = read_rst(DOCS[name].read_text(encoding="utf-8"), source_id="doc")
    assert [(e.level, e.text) for e in elements if e.kind is K.SECTION_HEADER] == headings
    titles = {text for _, text in headings}
    paths = {c.section_path for c in chunks_of(DOCS[name])}
    assert paths
    assert all(set(p) <= titles and p[0] == headings[0][1] for p in paths)


@pytest.mark.parametrize(("name", "steps"), STEPS.items())
def test_auto_numbered_steps_in_order(name: str, steps: list[tuple[str, str]]) -> None:
    assert steps_of(chunks_of(DOCS[name])) == steps


def test_ui_roles_become_step_targets() -> None:
    steps = {(c.section_path[-1], s.number): s for c in chunks_of(DOCS["grayscale"]) for s in c.steps}
    assert steps["macOS", "1."].target == "システム設定"  # a menu path's last item
    assert "**Win+U**" in steps["Windows 10、Windows 11", "1."].text
    assert steps["Android 11以前の場合", "3."].target == "色空間シミュレート"


def test_note_inside_a_step_is_its_caution_and_lead_in_sets_the_condition() -> None:
    chunks = chunks_of(DOCS["grayscale"])
    android = next(c for c in chunks if c.section_path[-1] == "Android 13以降の場合" and c.steps)
    assert "「テキストと表示」をタップ" in android.steps[0].caution
    enable = next(c for c in chunks if c.section_path[-1] == "参考：開発者向けオプションの有効化" and c.steps)
    assert enable.condition == "「開発者向けオプション」が表示されない場合は"
    windows = next(c for c in chunks if c.section_path[-1] == "Windows 10、Windows 11" and c.steps)
    assert {kind for _, kind, _ in windows.related_elements} == {"picture"}


@pytest.mark.parametrize("name", DOCS)
def test_no_visible_word_is_lost(name: str) -> None:
    text = DOCS[name].read_text(encoding="utf-8")
    joined = "\n".join(c.text for c in chunks_of(DOCS[name]))
    words = set(WORD.findall(MARKUP.sub(" ", text)))
    assert sorted(w for w in words if w not in joined) == []


@pytest.mark.parametrize("name", DOCS)
def test_spans_are_ordered_line_ranges_holding_their_text(name: str) -> None:
    text = DOCS[name].read_text(encoding="utf-8")
    elements = read_rst(text, source_id="doc")
    end = 0
    for e in elements:
        assert e.span is not None
        assert end <= e.span.start <= e.span.end <= len(text)
        end = e.span.end
        word = WORD.search(e.text)
        if word:
            assert word.group() in text[e.span.start : e.span.end], (e.text[:40], e.span)


def test_question_spans_are_covered_by_one_chunk(shared_data: Path) -> None:
    lines = (shared_data / "questions" / "ja_native_dev.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [q for q in map(json.loads, lines) if (RST_DATA / q["doc"]).is_file()]
    assert len(questions) >= 2
    for q in questions:
        path = RST_DATA / q["doc"]
        assert path.read_bytes() == (shared_data / q["doc"]).read_bytes()
        chunks = chunks_of(path)
        steps = [s for s in q["gold_spans"] if s["role"] == "step"]

        def covers(chunk: Chunk, span: dict[str, int]) -> bool:
            inside = sum(
                max(0, min(s.end, span["end"]) - max(s.start, span["start"])) for s in chunk.source_spans
            )
            return inside >= 0.9 * (span["end"] - span["start"])

        assert any(all(covers(c, s) for s in steps) for c in chunks), q["qid"]
        assert any(c.section_path == tuple(q["section_path"]) and c.steps for c in chunks), q["qid"]


@pytest.mark.parametrize("name", DOCS)
def test_detected_as_rst_by_suffix_and_by_content(name: str) -> None:
    assert detect_format(DOCS[name]) == "rst"
    assert detect_format(DOCS[name].read_text(encoding="utf-8")) == "rst"


# ----- rules ---------------------------------------------------------------------------------------


def read(source: str) -> list[LayoutElement]:
    return read_rst(source, source_id="doc")


@pytest.mark.parametrize(
    ("source", "numbers"),
    [
        ("#. a\n#. b\n", ["1.", "2."]),
        ("1. a\n2. b\n", ["1.", "2."]),
        ("3. a\n4. b\n", ["3.", "4."]),
        ("(a) a\n(b) b\n", ["(a)", "(b)"]),
        ("i) a\nii) b\n", ["i)", "ii)"]),
        ("A. a\nB. b\n", ["A.", "B."]),
        ("- a\n- b\n", ["-", "-"]),
        ("* a\n* b\n", ["*", "*"]),
        ("① 開く\n② 閉じる\n", ["①", "②"]),
    ],
)
def test_list_numbers(source: str, numbers: list[str]) -> None:
    assert [e.number for e in read(source) if e.kind is K.LIST_ITEM] == numbers


def test_nesting_parents_and_list_ids() -> None:
    a, b, c, more = read("#. a\n\n   #. b\n\n#. c\n\n   more\n")
    assert (a.level, b.level, c.level) == (0, 1, 0)
    assert (b.parent_id, more.parent_id) == (a.element_id, c.element_id)
    assert {a.list_id, b.list_id, c.list_id, more.list_id} == {"doc#l0"}


@pytest.mark.parametrize(
    ("source", "label", "text"),
    [
        (".. note:: Back up first.\n", "note", "Back up first."),
        (".. warning::\n\n   Hot.\n", "warning", "Hot."),
        (".. caution:: Hot.\n", "caution", "Hot."),
        (".. important:: Hot.\n", "important", "Hot."),
        (".. tip:: Hot.\n", "tip", "Hot."),
        (".. hint:: Hot.\n", "tip", "Hot."),
        (".. admonition:: 注意\n\n   熱い。\n", "注意", "熱い。"),
        (".. admonition:: Windows only\n\n   Hot.\n", "note", "Windows only\nHot."),
        (".. seealso:: Other page.\n", "note", "Other page."),
        (".. note::\n\n   #. one\n   #. two\n", "note", "1. one\n2. two"),
        ("注意：熱いです。\n", "注意", "注意：熱いです。"),
    ],
)
def test_admonitions(source: str, label: str, text: str) -> None:
    (note,) = read(source)
    assert (note.kind, note.admonition, note.text) == (K.TEXT, label, text)


GRID = "+---+---+\n| A | B |\n+===+===+\n| 1 | 2 |\n+---+---+\n"
SIMPLE = "=  =\nA  B\n=  =\n1  2\n=  =\n"
LIST_TABLE = ".. list-table:: Ports\n   :header-rows: 1\n\n   * - A\n     - B\n   * - 1\n     - 2\n"


@pytest.mark.parametrize(
    ("source", "kind", "text"),
    [
        (GRID, K.TABLE, "| A | B |\n|---|---|\n| 1 | 2 |"),
        (SIMPLE, K.TABLE, "| A | B |\n|---|---|\n| 1 | 2 |"),
        (LIST_TABLE, K.TABLE, "| A | B |\n|---|---|\n| 1 | 2 |"),
        (LIST_TABLE, K.CAPTION, "Ports"),
        (".. code-block:: bash\n\n   ls -l\n", K.CODE, "ls -l"),
        ("Run::\n\n   make\n", K.CODE, "make"),
        (".. image:: a.png\n   :alt: Screen\n", K.PICTURE, "Screen"),
        (".. figure:: a.png\n\n   The screen.\n", K.PICTURE, "The screen."),
        (".. figure:: a.png\n\n   The screen.\n", K.CAPTION, "The screen."),
        (".. math:: e = mc^2\n", K.FORMULA, "e = mc^2"),
        ("Press :kbd:`Ctrl+S` in :guilabel:`&File`.\n", K.TEXT, "Press **Ctrl+S** in [File]."),
        ("See :ref:`the setup <setup>` and :doc:`intro`.\n", K.TEXT, "See the setup and intro."),
        ("Use :py:func:`os.walk` and ``ls``.\n", K.TEXT, "Use os.walk and `ls`."),
        ("term\n   definition\n", K.TEXT, "term"),
        (".. mystery:: arg\n   :opt: 1\n\n   Hidden words.\n", K.TEXT, "Hidden words."),
        (".. versionadded:: 2.0 The thing.\n", K.TEXT, "New in version 2.0 The thing."),
        (".. raw:: html\n\n   <a href='x'>Link &amp; text</a>\n", K.TEXT, "Link & text"),
    ],
)
def test_block_kinds(source: str, kind: ElementKind, text: str) -> None:
    assert next(e.text for e in read(source) if e.kind is kind) == text


def test_condition_steps_target_and_bound_caution() -> None:
    source = (
        "Reset\n=====\n\nIf the device is enrolled, do the following:\n\n"
        "#. Open :guilabel:`Settings`.\n#. Select :menuselection:`System --> Reset`.\n\n"
        ".. warning:: Do not unplug the device.\n"
    )
    (chunk,) = chunks_of(source, language="en")
    assert chunk.condition == "If the device is enrolled"
    assert [(s.number, s.target) for s in chunk.steps] == [("1.", "Settings"), ("2.", "Reset")]
    assert "Do not unplug" in chunk.steps[-1].caution


# ----- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "words"),
    [
        (".. note::\n", []),  # a directive without content
        (".. image::\n", []),  # without its argument
        (".. list-table::\n\n   * - a\n   * b\n", ["a"]),  # malformed list table
        ("+---+\n| a |\n+--\n", ["a"]),  # broken grid table
        ("Title\n===\n\n.. include:: /etc/passwd\n\ntext\n", ["Title", "text"]),  # no file access
        (".. csv-table::\n   :url: http://example.invalid/a.csv\n\ntext\n", ["text"]),  # no network
        ("*unclosed emphasis and `unclosed literal\n", ["unclosed", "emphasis"]),
        ("Title\n=====\n\nSub\n###\n\nback\n=====\n\nx\n", ["Title", "Sub", "back"]),  # inconsistent levels
    ],
    ids=["note-empty", "image-no-uri", "list-table", "grid", "include", "csv-url", "inline", "levels"],
)
def test_broken_markup_still_reads_quietly(
    source: str, words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    joined = "\n".join(c.text for c in chunks_of(source))
    assert all(w in joined for w in words)
    assert "root:" not in joined
    assert capsys.readouterr().err == ""


def nested_bullets(levels: int) -> str:
    return "".join(" " * (2 * i) + "- level\n\n" for i in range(levels))


def test_deep_lists_read_flat_below_the_depth_limit() -> None:
    elements = read(nested_bullets(100))
    assert max(e.level for e in elements) < 100
    assert "".join(e.text for e in elements).count("level") == 100


def test_lists_too_deep_for_docutils_raise_reader_error() -> None:
    with pytest.raises(ReaderError, match="nests too deeply"):
        read(nested_bullets(1000))


@pytest.mark.parametrize(
    ("source", "problem"),
    [(b"\xff\xfe\x00bad", "not valid UTF-8"), (3.5, "expected str or bytes")],
    ids=["bytes", "not-text"],
)
def test_unreadable_input_raises_reader_error(source: object, problem: str) -> None:
    with pytest.raises(ReaderError, match="rst record 'document'") as info:
        read_rst(source, source_id="doc")  # type: ignore[arg-type]
    assert problem in info.value.problem


@pytest.mark.parametrize("source", ["", "  \n\n", ".. a comment\n", ".. _target:\n"])
def test_empty_documents_yield_nothing(source: str) -> None:
    assert read(source) == []

